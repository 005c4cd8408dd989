#include "compaction/file_list_iterator.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "table/two_level_iterator.h"
#include "util/coding.h"

namespace accelkv {

namespace {

// The index level: one entry per file, key = the file's largest key, value =
// the file's position in the list (fixed64).
class FileIndexIterator final : public Iterator {
 public:
  FileIndexIterator(const InternalKeyComparator* icmp, std::shared_ptr<const LevelFiles> files)
      : icmp_(icmp), files_(std::move(files)), index_(files_->size()) {}

  bool Valid() const override { return index_ < files_->size(); }
  void SeekToFirst() override { index_ = 0; }
  void SeekToLast() override { index_ = files_->empty() ? 0 : files_->size() - 1; }
  void Seek(const Slice& target) override {
    // The first file whose largest key >= target.
    auto it = std::lower_bound(files_->begin(), files_->end(), target,
                               [this](const FileMetaPtr& f, const Slice& t) {
                                 return icmp_->Compare(f->largest.Encode(), t) < 0;
                               });
    index_ = static_cast<size_t>(it - files_->begin());
  }
  void SeekForPrev(const Slice& target) override {
    // The last file whose smallest key <= target.
    auto it = std::upper_bound(files_->begin(), files_->end(), target,
                               [this](const Slice& t, const FileMetaPtr& f) {
                                 return icmp_->Compare(t, f->smallest.Encode()) < 0;
                               });
    index_ = it == files_->begin() ? files_->size() : static_cast<size_t>(it - files_->begin()) - 1;
  }
  void Next() override { index_++; }
  void Prev() override { index_ = index_ == 0 ? files_->size() : index_ - 1; }
  Slice key() const override { return (*files_)[index_]->largest.Encode(); }
  Slice value() const override {
    EncodeFixed64(value_buf_, index_);
    return Slice(value_buf_, sizeof(value_buf_));
  }
  Status status() const override { return Status::OK(); }

 private:
  const InternalKeyComparator* const icmp_;
  const std::shared_ptr<const LevelFiles> files_;
  size_t index_;  // == files_->size(): not valid
  mutable char value_buf_[8];
};

}  // namespace

Iterator* NewFileListIterator(TableCache* table_cache, const ReadOptions& options,
                              const InternalKeyComparator* icmp, std::vector<FileMetaPtr> files) {
  auto list = std::make_shared<const LevelFiles>(std::move(files));
  BlockFunction open_file = [table_cache, list](const ReadOptions& opts,
                                                const Slice& value) -> Iterator* {
    if (value.size() != 8) return NewErrorIterator(Status::Corruption("bad file list index"));
    const uint64_t i = DecodeFixed64(value.data());
    if (i >= list->size()) return NewErrorIterator(Status::Corruption("bad file list index"));
    const FileMetaData& f = *(*list)[i];
    return table_cache->NewIterator(opts, f.number, f.file_size);
  };
  return NewTwoLevelIterator(new FileIndexIterator(icmp, list), std::move(open_file), options);
}

}  // namespace accelkv
