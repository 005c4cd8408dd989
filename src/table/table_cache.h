// TableCache: open Table objects keyed by file number, bounded in the number
// of open files (Options::max_open_files), LRU-evicted.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "accelkv/cache.h"
#include "accelkv/env.h"
#include "accelkv/iterator.h"
#include "accelkv/options.h"
#include "table/table.h"
#include "table/table_options.h"

namespace accelkv {

class TableCache {
 public:
  TableCache(std::string dbname, Env* env, const TableOptions& table_options, int entries);
  ~TableCache();

  // An iterator over the table (internal keys). If tableptr is not null it is
  // set to the Table, owned by the cache and valid while the iterator lives.
  Iterator* NewIterator(const ReadOptions& options, uint64_t file_number, uint64_t file_size,
                        const Table** tableptr = nullptr);

  // See Table::InternalGet.
  Status Get(const ReadOptions& options, uint64_t file_number, uint64_t file_size,
             const Slice& ikey,
             const std::function<void(const Slice& k, const Slice& v)>& handle_result);

  // Pins the table for the duration of fn (e.g. to read properties).
  Status WithTable(uint64_t file_number, uint64_t file_size,
                   const std::function<void(const Table&)>& fn);

  // Drops the cached table of a deleted file.
  void Evict(uint64_t file_number);

 private:
  Status FindTable(uint64_t file_number, uint64_t file_size, Cache::Handle** handle);

  const std::string dbname_;
  Env* const env_;
  const TableOptions table_options_;
  std::shared_ptr<Cache> cache_;
};

}  // namespace accelkv
