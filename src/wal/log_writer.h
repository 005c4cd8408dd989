// log::Writer appends logical records to a WAL-format file (log_format.h,
// docs/format/wal.md). Used for the WAL and the MANIFEST.
//
// AddRecord only Appends: it neither flushes nor syncs, the caller decides
// (Flush for the OS, Sync for durability). Records up to kBlockSize - 7
// bytes that fit in the current block are written with a single Append of
// header and payload; larger fragments are appended as header then payload
// so the payload is never copied.
//
// Thread safety: none; one thread at a time (the DB serializes WAL writes).
#pragma once

#include <cstdint>
#include <string>

#include "accelkv/env.h"
#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "wal/log_format.h"

namespace accelkv::log {

class Writer {
 public:
  // Appends to *dest, which must be empty. dest must outlive the Writer.
  explicit Writer(WritableFile* dest);
  // Appends to *dest, which already holds dest_length bytes of a log.
  Writer(WritableFile* dest, uint64_t dest_length);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Appends slice as one logical record (possibly several fragments). After
  // an error the log's tail is of unknown shape: stop writing to it.
  Status AddRecord(const Slice& slice);

 private:
  Status EmitPhysicalRecord(RecordType type, const char* ptr, size_t length);

  WritableFile* const dest_;
  size_t block_offset_;  // bytes already written into the current block
  // crc32c of each one-byte type, extended with the payload per record.
  uint32_t type_crc_[kMaxRecordType + 1];
  // Reused buffer for the single-Append path (no allocation once grown).
  std::string buf_;
};

}  // namespace accelkv::log
