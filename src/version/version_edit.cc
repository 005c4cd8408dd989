#include "version/version_edit.h"

#include "util/coding.h"
#include "version/key_debug.h"

namespace accelkv {

namespace {

// Field tags of the encoding (docs/format/manifest.md). Embedded in every
// MANIFEST: never renumber, never reuse.
enum Tag : uint32_t {
  kComparator = 1,
  kLogNumber = 2,
  kNextFileNumber = 3,
  kLastSequence = 4,
  kCompactPointer = 5,
  kDeletedFile = 6,
  kNewFile = 7,
};

bool GetLevel(Slice* input, int* level) {
  uint32_t v;
  if (!GetVarint32(input, &v) || v > kMaxEncodedLevel) return false;
  *level = static_cast<int>(v);
  return true;
}

// A length-prefixed internal key: at least the 8-byte trailer.
bool GetInternalKey(Slice* input, InternalKey* key) {
  Slice s;
  if (!GetLengthPrefixedSlice(input, &s) || s.size() < kInternalKeyTrailerSize) return false;
  key->DecodeFrom(s);
  return true;
}

bool GetSequence(Slice* input, SequenceNumber* seq) {
  return GetVarint64(input, seq) && *seq <= kMaxSequenceNumber;
}

}  // namespace

void VersionEdit::EncodeTo(std::string* dst) const {
  if (has_comparator_) {
    PutVarint32(dst, kComparator);
    PutLengthPrefixedSlice(dst, comparator_);
  }
  if (has_log_number_) {
    PutVarint32(dst, kLogNumber);
    PutVarint64(dst, log_number_);
  }
  if (has_next_file_number_) {
    PutVarint32(dst, kNextFileNumber);
    PutVarint64(dst, next_file_number_);
  }
  if (has_last_sequence_) {
    PutVarint32(dst, kLastSequence);
    PutVarint64(dst, last_sequence_);
  }
  for (const auto& [level, key] : compact_pointers_) {
    PutVarint32(dst, kCompactPointer);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutLengthPrefixedSlice(dst, key.Encode());
  }
  for (const auto& [level, number] : deleted_files_) {
    PutVarint32(dst, kDeletedFile);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, number);
  }
  for (const auto& [level, f] : new_files_) {
    PutVarint32(dst, kNewFile);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, f.number);
    PutVarint64(dst, f.file_size);
    PutLengthPrefixedSlice(dst, f.smallest.Encode());
    PutLengthPrefixedSlice(dst, f.largest.Encode());
    PutVarint64(dst, f.smallest_seqno);
    PutVarint64(dst, f.largest_seqno);
    PutVarint64(dst, f.num_entries);
    PutVarint64(dst, f.num_deletions);
  }
}

Status VersionEdit::DecodeFrom(const Slice& src) {
  Clear();
  Slice input = src;
  const char* msg = nullptr;
  uint32_t tag;
  while (msg == nullptr && !input.empty()) {
    if (!GetVarint32(&input, &tag)) {
      msg = "tag";
      break;
    }
    switch (tag) {
      case kComparator: {
        Slice name;
        if (GetLengthPrefixedSlice(&input, &name)) {
          SetComparatorName(name);
        } else {
          msg = "comparator name";
        }
        break;
      }
      case kLogNumber:
        if (GetVarint64(&input, &log_number_)) {
          has_log_number_ = true;
        } else {
          msg = "log number";
        }
        break;
      case kNextFileNumber:
        if (GetVarint64(&input, &next_file_number_)) {
          has_next_file_number_ = true;
        } else {
          msg = "next file number";
        }
        break;
      case kLastSequence:
        if (GetSequence(&input, &last_sequence_)) {
          has_last_sequence_ = true;
        } else {
          msg = "last sequence";
        }
        break;
      case kCompactPointer: {
        int level;
        InternalKey key;
        if (GetLevel(&input, &level) && GetInternalKey(&input, &key)) {
          compact_pointers_.emplace_back(level, std::move(key));
        } else {
          msg = "compact pointer";
        }
        break;
      }
      case kDeletedFile: {
        int level;
        uint64_t number;
        if (GetLevel(&input, &level) && GetVarint64(&input, &number)) {
          deleted_files_.emplace(level, number);
        } else {
          msg = "deleted file";
        }
        break;
      }
      case kNewFile: {
        int level;
        FileMetaData f;
        if (GetLevel(&input, &level) && GetVarint64(&input, &f.number) &&
            GetVarint64(&input, &f.file_size) && GetInternalKey(&input, &f.smallest) &&
            GetInternalKey(&input, &f.largest) && GetSequence(&input, &f.smallest_seqno) &&
            GetSequence(&input, &f.largest_seqno) && GetVarint64(&input, &f.num_entries) &&
            GetVarint64(&input, &f.num_deletions) && f.smallest_seqno <= f.largest_seqno &&
            f.num_deletions <= f.num_entries) {
          new_files_.emplace_back(level, std::move(f));
        } else {
          msg = "new-file entry";
        }
        break;
      }
      default:
        msg = "unknown tag";
        break;
    }
  }
  if (msg != nullptr) return Status::Corruption("malformed VersionEdit", msg);
  return Status::OK();
}

std::string VersionEdit::DebugString() const {
  std::string r = "VersionEdit {";
  if (has_comparator_) r += "\n  Comparator: " + comparator_;
  if (has_log_number_) r += "\n  LogNumber: " + std::to_string(log_number_);
  if (has_next_file_number_) r += "\n  NextFile: " + std::to_string(next_file_number_);
  if (has_last_sequence_) r += "\n  LastSeq: " + std::to_string(last_sequence_);
  for (const auto& [level, key] : compact_pointers_) {
    r += "\n  CompactPointer: L" + std::to_string(level) + " " +
         InternalKeyDebugString(key.Encode());
  }
  for (const auto& [level, number] : deleted_files_) {
    r += "\n  RemoveFile: L" + std::to_string(level) + " #" + std::to_string(number);
  }
  for (const auto& [level, f] : new_files_) {
    r += "\n  AddFile: L" + std::to_string(level) + " #" + std::to_string(f.number) + " " +
         std::to_string(f.file_size) + " bytes [" + InternalKeyDebugString(f.smallest.Encode()) +
         " .. " + InternalKeyDebugString(f.largest.Encode()) + "] seq [" +
         std::to_string(f.smallest_seqno) + ", " + std::to_string(f.largest_seqno) + "] " +
         std::to_string(f.num_entries) + " entries, " + std::to_string(f.num_deletions) +
         " deletions";
  }
  r += "\n}\n";
  return r;
}

}  // namespace accelkv
