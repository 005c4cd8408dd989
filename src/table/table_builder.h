// TableBuilder: writes a sorted run of internal keys as one table file
// (docs/FORMAT.md, "Table"). Output bytes are a pure function of the added
// entries and the TableOptions: the GPU executor must reproduce them exactly.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "accelkv/env.h"
#include "accelkv/status.h"
#include "table/table_options.h"
#include "table/table_properties.h"

namespace accelkv {

// What TableBuilder::EstimatedFileSize depends on, so a planner that tracks
// sizes without building blocks (the GPU executor's device encoder) computes
// the same number, and so splits outputs where the CPU executor does. The
// estimate is the exact size the file would have if Finish() were called now.
struct TableSizeState {
  uint64_t offset = 0;  // bytes of the finished data blocks with trailers
  // The index block's exact size once the open data block is flushed:
  // BlockBuilder::SizeWith(last key, 16-byte handle) while a data block is
  // open, else its CurrentSizeEstimate().
  uint64_t index_block_size = 0;
  uint64_t data_block_size = 0;      // the open data block's exact size; 0: none open
  uint64_t last_key_size = 0;        // the last added key
  uint64_t filter_encoded_size = 0;  // FilterBuilder::EncodedSize(); 0: no filter block
  uint64_t comparator_name_size = 0;
  uint64_t smallest_key_size = 0;
};
uint64_t EstimateTableFileSize(const TableSizeState& state);
// EstimateTableFileSize(st) is the sum of these two parts: what depends on
// the key sizes only (the properties block, the index and properties
// trailers, the footer), which a planner can cache while the sizes stay the
// same, and the rest.
uint64_t TableSizeFixedPart(uint64_t comparator_name_size, uint64_t smallest_key_size,
                            uint64_t last_key_size);
inline uint64_t TableSizeVariablePart(const TableSizeState& st) {
  constexpr uint64_t kTrailer = 5;  // kBlockTrailerSize (table/format.h)
  uint64_t size = st.offset + st.index_block_size;
  if (st.data_block_size > 0) size += st.data_block_size + kTrailer;
  if (st.filter_encoded_size > 0) size += st.filter_encoded_size + kTrailer;
  return size;
}
// EstimateTableFileSize is non-decreasing in every field but last_key_size
// and smallest_key_size, so a state whose index_block_size and
// data_block_size are upper bounds gives an upper bound.

// Creates (or truncates) a table file to write, with direct writes when
// options.use_direct_writes (WritableFileOptions), at priority (kHigh for
// flushes, kLow for compactions: IOPriority).
Status NewTableFile(Env* env, const std::string& fname, const TableOptions& options,
                    IOPriority priority, std::unique_ptr<WritableFile>* file);

class TableBuilder {
 public:
  // Does not take ownership of file; the caller Syncs and Closes it after Finish().
  TableBuilder(const TableOptions& options, WritableFile* file);
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;
  // REQUIRES: Finish() or Abandon() was called.
  ~TableBuilder();

  // REQUIRES: key is an internal key greater than every key added before.
  void Add(const Slice& key, const Slice& value);
  // Writes the filter, properties, index blocks and footer.
  Status Finish();
  // The file content will be discarded.
  void Abandon();

  Status status() const;
  uint64_t NumEntries() const;
  // Bytes written so far (the file size after Finish()).
  uint64_t FileSize() const;
  // Size of the file if Finish() were called now (for output splitting).
  uint64_t EstimatedFileSize() const;
  // An upper bound of EstimatedFileSize() in O(1): the open data block and
  // the index entry it will add counted with no shared prefix and 4-byte end
  // offsets (BlockBuilder::CurrentSizeBound, SizeBoundWith). For
  // OutputSplitter::OutputBytes, which needs the exact estimate only once
  // this bound reaches the output size limit.
  uint64_t EstimatedFileSizeBound() const;
  const TableProperties& properties() const;

 private:
  struct Rep;
  // EstimatedFileSize's state, or with bound EstimatedFileSizeBound's.
  TableSizeState SizeState(bool bound) const;

  std::unique_ptr<Rep> rep_;
};

}  // namespace accelkv
