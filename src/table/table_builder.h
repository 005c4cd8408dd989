// TableBuilder: writes a sorted run of internal keys as one table file
// (docs/FORMAT.md, "Table"). Output bytes are a pure function of the added
// entries and the TableOptions: the GPU executor must reproduce them exactly.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>

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
  const TableProperties& properties() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace accelkv
