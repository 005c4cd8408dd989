#include "wal/log_reader.h"

#include <algorithm>
#include <cstdio>

#include "util/coding.h"
#include "util/crc32c.h"

namespace accelkv::log {
namespace {

bool AllZero(const char* begin, const char* end) {
  return std::all_of(begin, end, [](char c) { return c == 0; });
}

}  // namespace

Reader::Reporter::~Reporter() = default;

Reader::Reader(SequentialFile* file, Reporter* reporter, bool checksum, uint64_t initial_offset)
    : file_(file),
      reporter_(reporter),
      checksum_(checksum),
      backing_store_(new char[kBlockSize]),
      block_start_(backing_store_.get()),
      initial_offset_(initial_offset),
      resyncing_(initial_offset > 0) {}

bool Reader::SkipToInitialBlock() {
  const uint64_t offset_in_block = initial_offset_ % kBlockSize;
  uint64_t block_start_location = initial_offset_ - offset_in_block;
  // No record starts in a block's last kHeaderSize - 1 bytes (the padding).
  if (offset_in_block > kBlockSize - kHeaderSize + 1) block_start_location += kBlockSize;
  end_of_buffer_offset_ = block_start_location;
  if (block_start_location > 0) {
    Status s = file_->Skip(block_start_location);
    if (!s.ok()) {
      ReportIOError(block_start_location, s);
      return false;
    }
  }
  return true;
}

bool Reader::ReadRecord(Slice* record, std::string* scratch) {
  if (last_record_offset_ < initial_offset_) {
    if (!SkipToInitialBlock()) return false;
  }
  scratch->clear();
  record->clear();
  bool in_fragmented_record = false;
  uint64_t prospective_record_offset = 0;  // start of the record being assembled

  Slice fragment;
  while (true) {
    const unsigned int record_type = ReadPhysicalRecord(&fragment);
    // Offset of the fragment's header (meaningful for real records only).
    const uint64_t physical_record_offset =
        end_of_buffer_offset_ - buffer_.size() - kHeaderSize - fragment.size();

    if (resyncing_) {
      if (record_type == kMiddleType) continue;
      if (record_type == kLastType) {
        resyncing_ = false;
        continue;
      }
      resyncing_ = false;
    }

    switch (record_type) {
      case kFullType:
        if (in_fragmented_record && !scratch->empty()) {
          ReportCorruption(scratch->size(), "partial record without end(1)");
        }
        scratch->clear();
        *record = fragment;
        last_record_offset_ = physical_record_offset;
        return true;

      case kFirstType:
        if (in_fragmented_record && !scratch->empty()) {
          ReportCorruption(scratch->size(), "partial record without end(2)");
        }
        prospective_record_offset = physical_record_offset;
        scratch->assign(fragment.data(), fragment.size());
        in_fragmented_record = true;
        break;

      case kMiddleType:
        if (!in_fragmented_record) {
          ReportCorruption(fragment.size(), "missing start of fragmented record(1)");
        } else {
          scratch->append(fragment.data(), fragment.size());
        }
        break;

      case kLastType:
        if (!in_fragmented_record) {
          ReportCorruption(fragment.size(), "missing start of fragmented record(2)");
        } else {
          scratch->append(fragment.data(), fragment.size());
          *record = Slice(*scratch);
          last_record_offset_ = prospective_record_offset;
          return true;
        }
        break;

      case kEof:
        // A fragmented record cut off by the end of the file is a torn tail:
        // the writer died before finishing it. Not a corruption.
        scratch->clear();
        return false;

      case kBadRecord:
        if (in_fragmented_record) {
          ReportCorruption(scratch->size(), "error in middle of record");
          in_fragmented_record = false;
          scratch->clear();
        }
        break;

      default: {
        char buf[40];
        std::snprintf(buf, sizeof(buf), "unknown record type %u", record_type);
        ReportCorruption(fragment.size() + (in_fragmented_record ? scratch->size() : 0), buf);
        in_fragmented_record = false;
        scratch->clear();
        break;
      }
    }
  }
}

unsigned int Reader::ReadPhysicalRecord(Slice* result) {
  while (true) {
    if (buffer_.size() < kHeaderSize) {
      if (!eof_) {
        // The rest of this block is padding (or empty): read the next block.
        if (!ReadBlock()) return kEof;
        continue;
      }
      // At the end of the file. A partial header is a torn tail: the writer
      // died while appending it.
      buffer_.clear();
      return kEof;
    }

    const char* header = buffer_.data();
    const uint32_t length = static_cast<uint32_t>(static_cast<unsigned char>(header[4])) |
                            (static_cast<uint32_t>(static_cast<unsigned char>(header[5])) << 8);
    const unsigned int type = static_cast<unsigned char>(header[6]);
    const size_t room_in_block = kBlockSize - static_cast<size_t>(header - block_start_);

    if (kHeaderSize + length > buffer_.size()) {
      const size_t drop_size = buffer_.size();
      buffer_.clear();
      if (kHeaderSize + length > room_in_block) {
        // No writer emits a fragment that crosses its block's end.
        ReportCorruption(drop_size, "bad record length");
        return kBadRecord;
      }
      // The record fits in its block but runs past the end of the file
      // (only the last block can be short): a torn tail.
      return kEof;
    }

    if (type == kZeroType && length == 0) {
      // Zero-filled space: a memory-mapped WAL's allocated window past its
      // data, or a file system that extended the file without its data
      // before a crash. Zeros to the end of the file end the log like a
      // torn tail; zeros followed by data lost what they hide. The CRC
      // field may hold bytes: a memory-mapped writer killed while copying
      // the header.
      buffer_.remove_prefix(kHeaderSize);
      size_t dropped = kHeaderSize;
      if (DropZeros(&dropped)) return kEof;
      ReportCorruption(dropped, "zero-filled record header");
      return kBadRecord;
    }

    if (checksum_) {
      const uint32_t expected_crc = crc32c::Unmask(DecodeFixed32(header));
      const uint32_t actual_crc = crc32c::Value(header + 6, 1 + length);
      if (actual_crc != expected_crc) {
        // A memory-mapped writer killed while copying this record leaves
        // its header, part of its payload and zeros to the end of the file
        // (its window's allocated tail): a torn tail, as a short file is
        // for write(2). Its signature (the writer stores a record's last 8
        // bytes last): the payload's last min(8, length) bytes are zero,
        // and only zeros follow it.
        const size_t record = kHeaderSize + length;
        const char* tail = header + record - std::min<size_t>(8, length);
        if (length > 0 && AllZero(tail, header + record)) {
          buffer_.remove_prefix(record);
          size_t dropped = record;
          if (DropZeros(&dropped)) return kEof;
          ReportCorruption(dropped, "checksum mismatch");
          return kBadRecord;
        }
        // The length itself may be damaged, so nothing after the header in
        // this block can be trusted: drop the block's rest.
        const size_t drop_size = buffer_.size();
        buffer_.clear();
        ReportCorruption(drop_size, "checksum mismatch");
        return kBadRecord;
      }
    }

    buffer_.remove_prefix(kHeaderSize + length);

    // Skip records that start before initial_offset_ (silently, and without
    // ending a resync: fragments of a skipped record may follow).
    if (end_of_buffer_offset_ - buffer_.size() - kHeaderSize - length < initial_offset_) {
      continue;
    }
    *result = Slice(header + kHeaderSize, length);
    return type;
  }
}

bool Reader::ReadBlock() {
  buffer_.clear();
  Status s = file_->Read(kBlockSize, &buffer_, backing_store_.get());
  if (s.ok() && buffer_.size() > kBlockSize) {
    s = Status::Corruption("file returned more bytes than requested");
  }
  if (!s.ok()) {
    buffer_.clear();
    ReportIOError(kBlockSize, s);
    eof_ = true;
    return false;
  }
  end_of_buffer_offset_ += buffer_.size();
  block_start_ = buffer_.data();
  if (buffer_.size() < kBlockSize) eof_ = true;
  return true;
}

bool Reader::DropZeros(size_t* dropped) {
  bool header_block = true;
  while (true) {
    const size_t n = buffer_.size();
    if (!AllZero(buffer_.data(), buffer_.data() + n)) {
      if (header_block) {
        *dropped += n;
        buffer_.clear();
      }
      return false;
    }
    *dropped += n;
    buffer_.clear();
    if (eof_) return true;
    if (!ReadBlock()) return false;
    header_block = false;
  }
}

void Reader::ReportCorruption(uint64_t bytes, const char* reason) {
  // Drops before initial_offset_ are not the caller's business.
  const uint64_t position = end_of_buffer_offset_ - buffer_.size();
  if (reporter_ != nullptr && (initial_offset_ == 0 || position >= initial_offset_ + bytes)) {
    reporter_->Corruption(static_cast<size_t>(bytes), Status::Corruption(reason));
  }
}

void Reader::ReportIOError(uint64_t bytes, const Status& reason) {
  if (reporter_ != nullptr) reporter_->Corruption(static_cast<size_t>(bytes), reason);
}

}  // namespace accelkv::log
