// WriteBatchInternal: the DB's access to a WriteBatch's serialized form
// (docs/format/write_batch.md): the header's sequence and count, raw contents
// (the WAL record payload) and application to a memtable.
//
// Thread safety: as WriteBatch: functions taking a const batch may run
// concurrently; the others need external synchronization. InsertInto and
// PrepareInto need the memtable's writer role (one writer at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "accelkv/write_batch.h"
#include "util/internal_key.h"

namespace accelkv {

class MemTable;

class WriteBatchInternal {
 public:
  // fixed64 sequence, fixed32 count.
  static constexpr size_t kHeaderSize = 12;

  // The count field of the header (0 for a batch without a header).
  static uint32_t Count(const WriteBatch* batch);
  static void SetCount(WriteBatch* batch, uint32_t n);

  // The sequence of the first operation (0 for a batch without a header).
  static SequenceNumber Sequence(const WriteBatch* batch);
  static void SetSequence(WriteBatch* batch, SequenceNumber seq);

  // The serialized bytes; valid until the batch changes.
  static Slice Contents(const WriteBatch* batch) { return Slice(batch->rep_); }
  static size_t ByteSize(const WriteBatch* batch) { return batch->rep_.size(); }

  // Replaces the batch with a copy of contents (for instance a WAL record).
  // Corruption, leaving the batch unchanged, if contents is shorter than the
  // header; the records are checked when used (Iterate, InsertInto).
  static Status SetContents(WriteBatch* batch, const Slice& contents);

  // Adds every operation to mem, the i-th (from 0) with sequence
  // Sequence(batch) + i. Checks the whole batch first: Corruption, with
  // nothing inserted, if a record is malformed or truncated, the count in
  // the header does not match the records, or the sequences would pass
  // kMaxSequenceNumber.
  static Status InsertInto(const WriteBatch* batch, MemTable* mem);

  // As InsertInto, but only prepares the entries (MemTable::Prepare, with
  // the same checks first) and appends them to *entries, for MemTable::Link.
  static Status PrepareInto(const WriteBatch* batch, MemTable* mem,
                            std::vector<const char*>* entries);

  // Appends src's operations to dst; dst keeps its sequence. src may be dst.
  static void Append(WriteBatch* dst, const WriteBatch* src);
};

}  // namespace accelkv
