// log::Reader reads the logical records of a WAL-format file (log_format.h,
// docs/format/wal.md) written by log::Writer. Used for WAL replay and
// MANIFEST recovery.
//
// Damage policy:
// - A torn tail (the file ends inside a record's header or payload, or in
//   the middle of a fragmented record, as a crash mid-append leaves it) ends
//   the log silently: that record was never acknowledged.
// - A bad checksum, a length that runs past the end of its block, an
//   unknown record type, or fragments out of order are reported to the
//   Reporter with the number of bytes dropped; reading resumes at the next
//   block (or at the next record start, for misplaced fragments).
// - A zero header (type 0, length 0: zero-filled/preallocated space) drops
//   the rest of its block, reported unless it lies in the file's last block.
// The reader never reads outside the bytes the file returned, whatever they are.
//
// Thread safety: none; one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "accelkv/env.h"
#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "wal/log_format.h"

namespace accelkv::log {

class Reader {
 public:
  // Receives reports of dropped bytes.
  class Reporter {
   public:
    virtual ~Reporter();
    // bytes: approximate number of bytes dropped; status: why.
    virtual void Corruption(size_t bytes, const Status& status) = 0;
  };

  // Reads records from *file (positioned at its start). reporter may be
  // nullptr. checksum: verify CRCs (if false, CRC damage goes undetected).
  // Records that start before initial_offset are skipped. file and reporter
  // must outlive the Reader.
  Reader(SequentialFile* file, Reporter* reporter, bool checksum, uint64_t initial_offset);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Reads the next record into *record; true on success, false at the end
  // of the log. *record points into *scratch or into the reader's buffer and
  // is valid until the next call or until *scratch changes.
  bool ReadRecord(Slice* record, std::string* scratch);

  // File offset of the header of the first fragment of the last record
  // returned by ReadRecord. Undefined before the first successful ReadRecord.
  uint64_t LastRecordOffset() const { return last_record_offset_; }

 private:
  // Extended record types returned by ReadPhysicalRecord.
  // Above every on-disk type byte, so no record on disk can be mistaken for them.
  enum : unsigned int {
    kEof = 256,
    // An invalid physical record: bad CRC, bad length or a zero header.
    kBadRecord = 257,
  };

  // Skips to the block holding initial_offset_. False on a Skip error.
  bool SkipToInitialBlock();
  // The next physical record's type and payload, or kEof/kBadRecord.
  unsigned int ReadPhysicalRecord(Slice* result);
  // Reads the next block into buffer_. False (eof_ set) on a read error,
  // which is reported.
  bool ReadBlock();
  // Drops zero bytes from buffer_ on up to the first non-zero one or the
  // end of the file, adding their count to *dropped. A non-zero byte in the
  // current block drops that block's rest too (no record boundary is known
  // inside it); one in a later block leaves buffer_ at that block's start.
  // True if only zeros ran to the end of the file.
  bool DropZeros(size_t* dropped);
  // Reports a drop of bytes ending at the current position, unless it lies
  // before initial_offset_.
  void ReportCorruption(uint64_t bytes, const char* reason);
  // Reports an I/O error of the file (always).
  void ReportIOError(uint64_t bytes, const Status& reason);

  SequentialFile* const file_;
  Reporter* const reporter_;
  const bool checksum_;
  const std::unique_ptr<char[]> backing_store_;
  Slice buffer_;             // unread part of the current block
  const char* block_start_;  // first byte of the current block (in the last Read's result)
  bool eof_ = false;         // the last Read returned less than a block
  uint64_t last_record_offset_ = 0;
  // File offset of the first byte after buffer_.
  uint64_t end_of_buffer_offset_ = 0;
  const uint64_t initial_offset_;
  // Skipping MIDDLE/LAST fragments after starting at initial_offset_ > 0.
  bool resyncing_;
};

}  // namespace accelkv::log
