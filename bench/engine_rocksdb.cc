// RocksDB adapter (Debian librocksdb-dev, linked statically).
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <chrono>
#include <thread>

#include "engine.h"
#include "engine_factories.h"

namespace accelkv_bench {
namespace {

EngineStatus FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return EngineStatus::Ok();
  if (s.IsNotFound()) return EngineStatus::NotFound();
  return EngineStatus::Error("rocksdb: " + s.ToString());
}

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

class RocksCursor : public Cursor {
 public:
  explicit RocksCursor(rocksdb::Iterator* it) : it_(it) {}
  void Seek(std::string_view target) override { it_->Seek(ToSlice(target)); }
  void SeekToFirst() override { it_->SeekToFirst(); }
  bool Valid() const override { return it_->Valid(); }
  void Next() override { it_->Next(); }
  std::string_view key() const override { return it_->key().ToStringView(); }
  std::string_view value() const override { return it_->value().ToStringView(); }
  EngineStatus status() const override { return FromRocks(it_->status()); }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;
};

class RocksDBEngine : public Engine {
 public:
  ~RocksDBEngine() override { Close(); }

  std::string Name() const override { return "rocksdb"; }

  EngineStatus Open(const std::string& path, const EngineProfile& profile) override {
    rocksdb::Options options;
    options.create_if_missing = !profile.use_existing;
    options.write_buffer_size = profile.write_buffer_size;
    options.max_write_buffer_number = 2;
    options.level0_file_num_compaction_trigger = 4;
    options.level0_slowdown_writes_trigger = 20;
    options.level0_stop_writes_trigger = 36;
    options.target_file_size_base = profile.target_file_size;
    options.max_bytes_for_level_base = 256ull << 20;
    options.max_bytes_for_level_multiplier = 10;
    options.num_levels = 7;
    options.max_background_jobs = profile.background_threads;
    options.max_open_files = profile.max_open_files;
    options.compression = rocksdb::kNoCompression;
    options.bottommost_compression = rocksdb::kNoCompression;
    rocksdb::BlockBasedTableOptions table;
    table.block_size = profile.block_size;
    table.block_cache = rocksdb::NewLRUCache(profile.block_cache_size);
    if (profile.bloom_bits_per_key > 0) {
      table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(profile.bloom_bits_per_key, false));
    }
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

    std::string extra;
    for (const std::string& opt : profile.extra_options) {
      std::string name, value;
      if (!SplitOption(opt, &name, &value)) {
        return EngineStatus::Error("rocksdb: option is not name=value: " + opt);
      }
      extra += opt + ";";
    }
    if (!extra.empty()) {
      rocksdb::ConfigOptions config;
      config.ignore_unknown_options = false;
      config.input_strings_escaped = false;
      rocksdb::Options merged;
      rocksdb::Status s = rocksdb::GetOptionsFromString(config, options, extra, &merged);
      if (!s.ok()) return FromRocks(s);
      options = merged;
    }
    write_options_.sync = profile.sync;
    write_options_.disableWAL = false;
    options_ = options;

    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, path, &db);
    if (!s.ok()) return FromRocks(s);
    db_.reset(db);
    return EngineStatus::Ok();
  }

  EngineStatus DestroyStore(const std::string& path) override {
    return FromRocks(rocksdb::DestroyDB(path, rocksdb::Options()));
  }

  std::string EffectiveOptions() const override {
    if (db_ == nullptr) return "";
    rocksdb::ConfigOptions config;
    config.delimiter = "\n";
    std::string db_opts, cf_opts;
    rocksdb::DBOptions dbo = db_->GetDBOptions();
    rocksdb::ColumnFamilyOptions cfo = db_->GetOptions();
    rocksdb::GetStringFromDBOptions(config, dbo, &db_opts);
    rocksdb::GetStringFromColumnFamilyOptions(config, cfo, &cf_opts);
    std::string out = "sync_writes=" + std::string(write_options_.sync ? "true" : "false") + "\n";
    out += db_opts + "\n" + cf_opts;
    return out;
  }

  EngineStatus Put(std::string_view key, std::string_view value) override {
    return FromRocks(db_->Put(write_options_, ToSlice(key), ToSlice(value)));
  }
  EngineStatus Get(std::string_view key, std::string* value) override {
    return FromRocks(db_->Get(rocksdb::ReadOptions(), ToSlice(key), value));
  }
  EngineStatus Delete(std::string_view key) override {
    return FromRocks(db_->Delete(write_options_, ToSlice(key)));
  }
  EngineStatus Write(const std::vector<std::pair<std::string, std::string>>& puts) override {
    rocksdb::WriteBatch batch;
    for (const auto& [k, v] : puts) {
      rocksdb::Status s = batch.Put(k, v);
      if (!s.ok()) return FromRocks(s);
    }
    return FromRocks(db_->Write(write_options_, &batch));
  }
  std::unique_ptr<Cursor> NewCursor() override {
    return std::make_unique<RocksCursor>(db_->NewIterator(rocksdb::ReadOptions()));
  }

  EngineStatus WaitForCompactions() override {
    rocksdb::FlushOptions flush;
    flush.wait = true;
    rocksdb::Status s = db_->Flush(flush);
    if (!s.ok()) return FromRocks(s);
    // RocksDB 7.8 has no WaitForCompact: poll until nothing runs or is pending.
    static const char* const kBusy[] = {"rocksdb.num-running-compactions",
                                        "rocksdb.compaction-pending", "rocksdb.num-running-flushes",
                                        "rocksdb.mem-table-flush-pending"};
    for (;;) {
      bool busy = false;
      for (const char* prop : kBusy) {
        uint64_t v = 0;
        if (db_->GetIntProperty(prop, &v) && v != 0) busy = true;
      }
      if (!busy) return EngineStatus::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::string Stats() override {
    std::string out;
    if (db_ != nullptr) db_->GetProperty("rocksdb.stats", &out);
    return out;
  }

  EngineStatus Close() override {
    if (db_ == nullptr) return EngineStatus::Ok();
    rocksdb::Status s = db_->Close();
    db_.reset();
    return FromRocks(s);
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::Options options_;
  rocksdb::WriteOptions write_options_;
};

}  // namespace

std::unique_ptr<Engine> NewRocksDBEngine() { return std::make_unique<RocksDBEngine>(); }

}  // namespace accelkv_bench
