// LevelFileIterator: the index half of a level's concatenating iterator. It
// walks the file list of one sorted level (>= 1): key() is a file's largest
// internal key, value() encodes the file as fixed64 number ++ fixed64 size
// (16 bytes, decoded by DecodeValue), so a two-level iterator can open each
// table through the table cache.
//
// Thread safety: one thread at a time. The LevelFiles must outlive the
// iterator (the Version holding them stays referenced).
#pragma once

#include <cstddef>
#include <cstdint>

#include "accelkv/iterator.h"
#include "util/internal_key.h"
#include "version/file_meta.h"

namespace accelkv {

// Index of the first file of a sorted level whose largest internal key is
// >= key; files.size() if there is none. Binary search.
size_t FindFile(const InternalKeyComparator& icmp, const LevelFiles& files, const Slice& key);

class LevelFileIterator final : public Iterator {
 public:
  LevelFileIterator(const InternalKeyComparator* icmp, const LevelFiles* files)
      : icmp_(icmp), files_(files), index_(files->size()) {}

  // Decodes a value(); false unless it is exactly 16 bytes.
  static bool DecodeValue(const Slice& value, uint64_t* number, uint64_t* size);

  bool Valid() const override { return index_ < files_->size(); }
  void SeekToFirst() override { index_ = 0; }
  void SeekToLast() override { index_ = files_->empty() ? 0 : files_->size() - 1; }
  void Seek(const Slice& target) override { index_ = FindFile(*icmp_, *files_, target); }
  void SeekForPrev(const Slice& target) override;
  void Next() override { ++index_; }
  void Prev() override { index_ = index_ == 0 ? files_->size() : index_ - 1; }
  Slice key() const override { return (*files_)[index_]->largest.Encode(); }
  Slice value() const override;
  Status status() const override { return Status::OK(); }

 private:
  const InternalKeyComparator* const icmp_;
  const LevelFiles* const files_;
  size_t index_;  // files_->size() when not valid
  mutable char value_buf_[16];
};

}  // namespace accelkv
