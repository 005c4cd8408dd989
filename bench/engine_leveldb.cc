// LevelDB adapter (Debian libleveldb-dev, linked statically).
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "engine.h"
#include "engine_factories.h"

namespace accelkv_bench {
namespace {

EngineStatus FromLevel(const leveldb::Status& s) {
  if (s.ok()) return EngineStatus::Ok();
  if (s.IsNotFound()) return EngineStatus::NotFound();
  return EngineStatus::Error("leveldb: " + s.ToString());
}

leveldb::Slice ToSlice(std::string_view s) { return leveldb::Slice(s.data(), s.size()); }

class LevelCursor : public Cursor {
 public:
  explicit LevelCursor(leveldb::Iterator* it) : it_(it) {}
  void Seek(std::string_view target) override { it_->Seek(ToSlice(target)); }
  void SeekToFirst() override { it_->SeekToFirst(); }
  bool Valid() const override { return it_->Valid(); }
  void Next() override { it_->Next(); }
  std::string_view key() const override {
    leveldb::Slice k = it_->key();
    return std::string_view(k.data(), k.size());
  }
  std::string_view value() const override {
    leveldb::Slice v = it_->value();
    return std::string_view(v.data(), v.size());
  }
  EngineStatus status() const override { return FromLevel(it_->status()); }

 private:
  std::unique_ptr<leveldb::Iterator> it_;
};

// LevelDB's fixed level targets (version_set.cc): 10 MiB for level 1, times
// 10 per level; level 0 compacts at 4 files.
double LevelTarget(int level) {
  double bytes = 10.0 * 1048576.0;
  for (int i = 1; i < level; i++) bytes *= 10;
  return bytes;
}

class LevelDBEngine : public Engine {
 public:
  ~LevelDBEngine() override { Close(); }

  std::string Name() const override { return "leveldb"; }

  EngineStatus Open(const std::string& path, const EngineProfile& profile) override {
    options_ = leveldb::Options();
    options_.create_if_missing = !profile.use_existing;
    options_.write_buffer_size = profile.write_buffer_size;
    options_.block_size = profile.block_size;
    options_.max_open_files = profile.max_open_files;
    options_.max_file_size = profile.target_file_size;
    options_.compression = leveldb::kNoCompression;
    cache_size_ = profile.block_cache_size;
    cache_.reset(leveldb::NewLRUCache(cache_size_));
    options_.block_cache = cache_.get();
    bloom_bits_ = profile.bloom_bits_per_key;
    for (const std::string& opt : profile.extra_options) {
      EngineStatus s = Apply(opt);
      if (!s.ok()) return s;
    }
    if (bloom_bits_ > 0) filter_.reset(leveldb::NewBloomFilterPolicy(bloom_bits_));
    options_.filter_policy = filter_.get();
    write_options_.sync = profile.sync;
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(options_, path, &db);
    if (!s.ok()) return FromLevel(s);
    db_.reset(db);
    return EngineStatus::Ok();
  }

  EngineStatus DestroyStore(const std::string& path) override {
    return FromLevel(leveldb::DestroyDB(path, leveldb::Options()));
  }

  std::string EffectiveOptions() const override {
    std::ostringstream o;
    o << "write_buffer_size=" << options_.write_buffer_size << "\n"
      << "block_size=" << options_.block_size << "\n"
      << "block_restart_interval=" << options_.block_restart_interval << "\n"
      << "max_file_size=" << options_.max_file_size << "\n"
      << "max_open_files=" << options_.max_open_files << "\n"
      << "block_cache_size=" << cache_size_ << "\n"
      << "bloom_bits_per_key=" << bloom_bits_ << "\n"
      << "compression=" << (options_.compression == leveldb::kNoCompression ? "none" : "snappy")
      << "\n"
      << "paranoid_checks=" << options_.paranoid_checks << "\n"
      << "reuse_logs=" << options_.reuse_logs << "\n"
      << "background_threads=1 (fixed by LevelDB)\n"
      << "level_targets=L0:4 files, L1:10MiB x10 per level (fixed by LevelDB)\n"
      << "sync_writes=" << (write_options_.sync ? "true" : "false") << "\n";
    return o.str();
  }

  EngineStatus Put(std::string_view key, std::string_view value) override {
    return FromLevel(db_->Put(write_options_, ToSlice(key), ToSlice(value)));
  }
  EngineStatus Get(std::string_view key, std::string* value) override {
    return FromLevel(db_->Get(leveldb::ReadOptions(), ToSlice(key), value));
  }
  EngineStatus Delete(std::string_view key) override {
    return FromLevel(db_->Delete(write_options_, ToSlice(key)));
  }
  EngineStatus Write(const std::vector<std::pair<std::string, std::string>>& puts) override {
    leveldb::WriteBatch batch;
    for (const auto& [k, v] : puts) batch.Put(k, v);
    return FromLevel(db_->Write(write_options_, &batch));
  }
  std::unique_ptr<Cursor> NewCursor() override {
    return std::make_unique<LevelCursor>(db_->NewIterator(leveldb::ReadOptions()));
  }

  // LevelDB has neither Flush nor a pending-compaction property.
  // CompactRange over the empty key (which no table overlaps) flushes the
  // memtable and compacts nothing; then poll "leveldb.sstables" until no
  // level is over LevelDB's own compaction threshold (score >= 1).
  EngineStatus WaitForCompactions() override {
    leveldb::Slice empty;
    db_->CompactRange(&empty, &empty);
    for (;;) {
      std::string tables;
      if (!db_->GetProperty("leveldb.sstables", &tables)) {
        return EngineStatus::Error("leveldb: no leveldb.sstables property");
      }
      if (!OverThreshold(tables)) return EngineStatus::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::string Stats() override {
    std::string out;
    if (db_ != nullptr) db_->GetProperty("leveldb.stats", &out);
    return out;
  }

  EngineStatus Close() override {
    db_.reset();
    return EngineStatus::Ok();
  }

 private:
  EngineStatus Apply(const std::string& opt) {
    std::string name, value;
    if (!SplitOption(opt, &name, &value)) {
      return EngineStatus::Error("leveldb: option is not name=value: " + opt);
    }
    uint64_t n = 0;
    const bool numeric = ParseSize(value, &n);
    if (name == "compression") {
      if (value == "none") {
        options_.compression = leveldb::kNoCompression;
      } else if (value == "snappy") {
        options_.compression = leveldb::kSnappyCompression;
      } else {
        return EngineStatus::Error("leveldb: compression must be none or snappy");
      }
      return EngineStatus::Ok();
    }
    if (!numeric) return EngineStatus::Error("leveldb: option needs a number: " + opt);
    if (name == "write_buffer_size") {
      options_.write_buffer_size = n;
    } else if (name == "block_size") {
      options_.block_size = n;
    } else if (name == "block_restart_interval") {
      options_.block_restart_interval = static_cast<int>(n);
    } else if (name == "max_file_size") {
      options_.max_file_size = n;
    } else if (name == "max_open_files") {
      options_.max_open_files = static_cast<int>(n);
    } else if (name == "bloom_bits_per_key") {
      bloom_bits_ = static_cast<int>(n);
    } else if (name == "paranoid_checks") {
      options_.paranoid_checks = n != 0;
    } else if (name == "reuse_logs") {
      options_.reuse_logs = n != 0;
    } else {
      return EngineStatus::Error("leveldb: unknown option " + name);
    }
    return EngineStatus::Ok();
  }

  // Parses "--- level N ---" sections of " num:size[smallest .. largest]".
  static bool OverThreshold(const std::string& tables) {
    std::istringstream in(tables);
    std::string line;
    int level = -1;
    double bytes[8] = {0};
    int files[8] = {0};
    while (std::getline(in, line)) {
      if (line.rfind("--- level ", 0) == 0) {
        level = std::atoi(line.c_str() + 10);
        if (level < 0 || level > 7) level = -1;
        continue;
      }
      const size_t colon = line.find(':');
      if (level < 0 || colon == std::string::npos) continue;
      files[level]++;
      bytes[level] += std::strtod(line.c_str() + colon + 1, nullptr);
    }
    if (files[0] >= 4) return true;
    for (int l = 1; l < 6; l++) {
      if (bytes[l] >= LevelTarget(l)) return true;
    }
    return false;
  }

  leveldb::Options options_;
  leveldb::WriteOptions write_options_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  int bloom_bits_ = 10;
  size_t cache_size_ = 0;
  std::unique_ptr<leveldb::DB> db_;
};

}  // namespace

std::unique_ptr<Engine> NewLevelDBEngine() { return std::make_unique<LevelDBEngine>(); }

}  // namespace accelkv_bench
