// Table: an open, immutable table file. Blocks are read through the block
// cache; every block's CRC32C is checked when read from the file.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "accelkv/env.h"
#include "accelkv/iterator.h"
#include "accelkv/options.h"
#include "table/table_options.h"
#include "table/table_properties.h"

namespace accelkv {

class Table {
 public:
  // Reads footer, index, filter and properties. Corruption on any malformed byte.
  static Status Open(const TableOptions& options, std::unique_ptr<RandomAccessFile> file,
                     uint64_t file_size, std::unique_ptr<Table>* table);
  ~Table();

  // An iterator over internal keys -> values, in internal-key order.
  Iterator* NewIterator(const ReadOptions& options) const;

  // Calls handle_result(internal_key, value) for the first entry with internal
  // key >= ikey, unless the bloom filter rules the user key out. The callback
  // is not called when no such entry exists in the table.
  Status InternalGet(
      const ReadOptions& options, const Slice& ikey,
      const std::function<void(const Slice& k, const Slice& v)>& handle_result) const;

  // False only when the filter proves user_key is absent.
  bool KeyMayMatch(const Slice& user_key) const;

  // Approximate file offset of the data for ikey.
  uint64_t ApproximateOffsetOf(const Slice& ikey) const;

  const TableProperties& properties() const;

  // Verifies every block's checksum and the entries' order; for `verify` and
  // `sst-dump`.
  Status VerifyAllBlocks() const;

 private:
  struct Rep;
  explicit Table(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

}  // namespace accelkv
