#include "table/table_cache.h"

#include "util/coding.h"
#include "util/filename.h"

namespace accelkv {

namespace {

void DeleteTable(const Slice& /*key*/, void* value) { delete static_cast<Table*>(value); }

// Small caches are not sharded, so the bound on open files is exact per cache
// and not split into tiny per-shard budgets.
int TableCacheShardBits(int entries) { return entries < 64 ? 0 : 4; }

}  // namespace

TableCache::TableCache(std::string dbname, Env* env, const TableOptions& table_options, int entries)
    : dbname_(std::move(dbname)),
      env_(env),
      table_options_(table_options),
      cache_(NewLRUCache(entries > 0 ? static_cast<size_t>(entries) : 0,
                         TableCacheShardBits(entries))) {}

TableCache::~TableCache() = default;

Status TableCache::FindTable(uint64_t file_number, uint64_t file_size, Cache::Handle** handle) {
  char buf[8];
  EncodeFixed64(buf, file_number);
  const Slice key(buf, sizeof(buf));
  *handle = cache_->Lookup(key);
  if (*handle != nullptr) return Status::OK();
  std::unique_ptr<RandomAccessFile> file;
  RandomAccessFileOptions file_options;
  file_options.use_mmap_reads = table_options_.use_mmap_reads;
  Status s = env_->NewRandomAccessFile(TableFileName(dbname_, file_number), file_options, &file);
  std::unique_ptr<Table> table;
  if (s.ok()) s = Table::Open(table_options_, std::move(file), file_size, &table);
  // Errors are not cached: a transient failure (or a file being repaired)
  // may succeed on the next call.
  if (!s.ok()) return s;
  *handle = cache_->Insert(key, table.release(), 1, &DeleteTable);
  return Status::OK();
}

Iterator* TableCache::NewIterator(const ReadOptions& options, uint64_t file_number,
                                  uint64_t file_size, const Table** tableptr) {
  if (tableptr != nullptr) *tableptr = nullptr;
  Cache::Handle* handle = nullptr;
  Status s = FindTable(file_number, file_size, &handle);
  if (!s.ok()) return NewErrorIterator(s);
  const Table* table = static_cast<const Table*>(cache_->Value(handle));
  Iterator* result = table->NewIterator(options);
  std::shared_ptr<Cache> cache = cache_;
  result->RegisterCleanup([cache, handle] { cache->Release(handle); });
  if (tableptr != nullptr) *tableptr = table;
  return result;
}

Status TableCache::Get(const ReadOptions& options, uint64_t file_number, uint64_t file_size,
                       const Slice& ikey,
                       const std::function<void(const Slice& k, const Slice& v)>& handle_result) {
  Cache::Handle* handle = nullptr;
  Status s = FindTable(file_number, file_size, &handle);
  if (!s.ok()) return s;
  const Table* table = static_cast<const Table*>(cache_->Value(handle));
  s = table->InternalGet(options, ikey, handle_result);
  cache_->Release(handle);
  return s;
}

Status TableCache::WithTable(uint64_t file_number, uint64_t file_size,
                             const std::function<void(const Table&)>& fn) {
  Cache::Handle* handle = nullptr;
  Status s = FindTable(file_number, file_size, &handle);
  if (!s.ok()) return s;
  fn(*static_cast<const Table*>(cache_->Value(handle)));
  cache_->Release(handle);
  return Status::OK();
}

void TableCache::Evict(uint64_t file_number) {
  char buf[8];
  EncodeFixed64(buf, file_number);
  cache_->Erase(Slice(buf, sizeof(buf)));
}

}  // namespace accelkv
