#include "table/two_level_iterator.h"

#include <memory>
#include <string>

namespace accelkv {

namespace {

// Index entries name second-level iterators; the index key of an entry must
// be >= every key of its second-level iterator and < every key of the next
// one (for tables: the block's last key).
class TwoLevelIterator final : public Iterator {
 public:
  TwoLevelIterator(Iterator* index_iter, BlockFunction block_function, const ReadOptions& options)
      : block_function_(std::move(block_function)), options_(options), index_iter_(index_iter) {}

  bool Valid() const override { return data_iter_ != nullptr && data_iter_->Valid(); }
  Slice key() const override { return data_iter_->key(); }
  Slice value() const override { return data_iter_->value(); }

  void SeekToFirst() override {
    index_iter_->SeekToFirst();
    InitDataBlock();
    if (data_iter_ != nullptr) data_iter_->SeekToFirst();
    SkipEmptyDataBlocksForward();
  }
  void SeekToLast() override {
    index_iter_->SeekToLast();
    InitDataBlock();
    if (data_iter_ != nullptr) data_iter_->SeekToLast();
    SkipEmptyDataBlocksBackward();
  }
  void Seek(const Slice& target) override {
    index_iter_->Seek(target);
    InitDataBlock();
    if (data_iter_ != nullptr) data_iter_->Seek(target);
    SkipEmptyDataBlocksForward();
  }
  void SeekForPrev(const Slice& target) override {
    // The first index entry >= target names the only block that can hold both
    // keys <= target and keys > target; if none, the last block.
    index_iter_->Seek(target);
    if (!index_iter_->Valid() && index_iter_->status().ok()) index_iter_->SeekToLast();
    InitDataBlock();
    if (data_iter_ != nullptr) data_iter_->SeekForPrev(target);
    SkipEmptyDataBlocksBackward();
  }
  void Next() override {
    data_iter_->Next();
    SkipEmptyDataBlocksForward();
  }
  void Prev() override {
    data_iter_->Prev();
    SkipEmptyDataBlocksBackward();
  }

  Status status() const override {
    Status s = index_iter_->status();
    if (!s.ok()) return s;
    if (data_iter_ != nullptr) {
      s = data_iter_->status();
      if (!s.ok()) return s;
    }
    return status_;
  }

 private:
  void SaveError(const Status& s) {
    if (status_.ok() && !s.ok()) status_ = s;
  }
  void SetDataIterator(Iterator* iter) {
    if (data_iter_ != nullptr) SaveError(data_iter_->status());
    data_iter_.reset(iter);
  }
  void InitDataBlock() {
    if (!index_iter_->Valid()) {
      SetDataIterator(nullptr);
      return;
    }
    const Slice handle = index_iter_->value();
    if (data_iter_ != nullptr && handle == Slice(data_block_handle_)) return;
    data_block_handle_.assign(handle.data(), handle.size());
    SetDataIterator(block_function_(options_, handle));
  }
  void SkipEmptyDataBlocksForward() {
    while (data_iter_ == nullptr || !data_iter_->Valid()) {
      if (!index_iter_->Valid()) {
        SetDataIterator(nullptr);
        return;
      }
      if (data_iter_ != nullptr && !data_iter_->status().ok()) return;  // stop at an error
      index_iter_->Next();
      InitDataBlock();
      if (data_iter_ != nullptr) data_iter_->SeekToFirst();
    }
  }
  void SkipEmptyDataBlocksBackward() {
    while (data_iter_ == nullptr || !data_iter_->Valid()) {
      if (!index_iter_->Valid()) {
        SetDataIterator(nullptr);
        return;
      }
      if (data_iter_ != nullptr && !data_iter_->status().ok()) return;
      index_iter_->Prev();
      InitDataBlock();
      if (data_iter_ != nullptr) data_iter_->SeekToLast();
    }
  }

  BlockFunction block_function_;
  const ReadOptions options_;
  std::unique_ptr<Iterator> index_iter_;
  std::unique_ptr<Iterator> data_iter_;  // may be nullptr
  std::string data_block_handle_;        // index value data_iter_ was made from
  Status status_;                        // first error of a discarded data iterator
};

}  // namespace

Iterator* NewTwoLevelIterator(Iterator* index_iter, BlockFunction block_function,
                              const ReadOptions& options) {
  return new TwoLevelIterator(index_iter, std::move(block_function), options);
}

}  // namespace accelkv
