#include "version/level_file_iterator.h"

#include "util/coding.h"

namespace accelkv {

size_t FindFile(const InternalKeyComparator& icmp, const LevelFiles& files, const Slice& key) {
  size_t left = 0;
  size_t right = files.size();
  while (left < right) {
    const size_t mid = left + (right - left) / 2;
    if (icmp.Compare(files[mid]->largest.Encode(), key) < 0) {
      left = mid + 1;  // every file at or before mid ends before key
    } else {
      right = mid;
    }
  }
  return right;
}

bool LevelFileIterator::DecodeValue(const Slice& value, uint64_t* number, uint64_t* size) {
  if (value.size() != 16) return false;
  *number = DecodeFixed64(value.data());
  *size = DecodeFixed64(value.data() + 8);
  return true;
}

void LevelFileIterator::SeekForPrev(const Slice& target) {
  // The last file whose largest key is <= target.
  const size_t index = FindFile(*icmp_, *files_, target);
  if (index < files_->size() && icmp_->Compare((*files_)[index]->largest.Encode(), target) == 0) {
    index_ = index;
  } else {
    index_ = index == 0 ? files_->size() : index - 1;
  }
}

Slice LevelFileIterator::value() const {
  EncodeFixed64(value_buf_, (*files_)[index_]->number);
  EncodeFixed64(value_buf_ + 8, (*files_)[index_]->file_size);
  return Slice(value_buf_, sizeof(value_buf_));
}

}  // namespace accelkv
