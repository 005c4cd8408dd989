// AccelKV adapter: one DB instance, through the public API only
// (include/accelkv/db.h). Built when the CMake option
// ACCELKV_BENCH_WITH_ACCELKV is on (the default when the DB layer exists).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "accelkv/db.h"
#include "accelkv/iterator.h"
#include "accelkv/options.h"
#include "accelkv/write_batch.h"
#include "engine.h"
#include "engine_factories.h"

namespace accelkv_bench {
namespace {

// The number text after the n-th occurrence (0-based) of `name` in json, or
// "" if there is none.
std::string JsonNumberAfter(const std::string& json, const std::string& name, int n) {
  size_t at = 0;
  for (int i = 0; i <= n; i++) {
    at = json.find(name, i == 0 ? 0 : at + name.size());
    if (at == std::string::npos) return "";
  }
  const size_t start = at + name.size();
  const size_t end = json.find_first_of(",}]", start);
  return json.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The largest "score" of any level in accelkv.stats.json.
double MaxScore(const std::string& json) {
  double max = 0;
  for (int i = 0;; i++) {
    const std::string score = JsonNumberAfter(json, "\"score\":", i);
    if (score.empty()) return max;
    max = std::max(max, std::strtod(score.c_str(), nullptr));
  }
}

EngineStatus FromAccel(const accelkv::Status& s) {
  if (s.ok()) return EngineStatus::Ok();
  if (s.IsNotFound()) return EngineStatus::NotFound();
  return EngineStatus::Error("accelkv: " + s.ToString());
}

accelkv::Slice ToSlice(std::string_view s) { return accelkv::Slice(s.data(), s.size()); }

class AccelCursor : public Cursor {
 public:
  explicit AccelCursor(std::unique_ptr<accelkv::Iterator> it) : it_(std::move(it)) {}
  void Seek(std::string_view target) override { it_->Seek(ToSlice(target)); }
  void SeekToFirst() override { it_->SeekToFirst(); }
  bool Valid() const override { return it_->Valid(); }
  void Next() override { it_->Next(); }
  std::string_view key() const override { return it_->key().view(); }
  std::string_view value() const override { return it_->value().view(); }
  EngineStatus status() const override { return FromAccel(it_->status()); }

 private:
  std::unique_ptr<accelkv::Iterator> it_;
};

class AccelKVEngine : public Engine {
 public:
  ~AccelKVEngine() override { Close(); }

  std::string Name() const override { return "accelkv"; }

  EngineStatus Open(const std::string& path, const EngineProfile& profile) override {
    options_ = accelkv::Options();
    options_.create_if_missing = !profile.use_existing;
    options_.write_buffer_size = profile.write_buffer_size;
    options_.max_write_buffer_number = 2;
    options_.block_size = profile.block_size;
    options_.bloom_bits_per_key = profile.bloom_bits_per_key;
    options_.block_cache_size = profile.block_cache_size;
    options_.max_background_jobs = profile.background_threads;
    options_.target_file_size = profile.target_file_size;
    options_.max_open_files = profile.max_open_files;
    options_.compression = accelkv::CompressionType::kNone;
    for (const std::string& opt : profile.extra_options) {
      EngineStatus s = Apply(opt);
      if (!s.ok()) return s;
    }
    write_options_.sync = profile.sync;
    accelkv::Status s = accelkv::DB::Open(options_, path, &db_);
    return FromAccel(s);
  }

  EngineStatus DestroyStore(const std::string& path) override {
    return FromAccel(accelkv::DestroyDB(path, accelkv::Options()));
  }

  std::string EffectiveOptions() const override {
    std::ostringstream o;
    o << "write_buffer_size=" << options_.write_buffer_size << "\n"
      << "allow_concurrent_memtable_write="
      << (options_.allow_concurrent_memtable_write ? "true" : "false") << "\n"
      << "enable_pipelined_write=" << (options_.enable_pipelined_write ? "true" : "false") << "\n"
      << "write_thread_spin_usec=" << options_.write_thread_spin_usec << "\n"
      << "write_thread_max_yield_usec=" << options_.write_thread_max_yield_usec << "\n"
      << "write_thread_slow_yield_usec=" << options_.write_thread_slow_yield_usec << "\n"
      << "enable_write_thread_adaptive_yield="
      << (options_.enable_write_thread_adaptive_yield ? "true" : "false") << "\n"
      << "max_write_buffer_number=" << options_.max_write_buffer_number << "\n"
      << "level0_file_num_compaction_trigger=" << options_.level0_file_num_compaction_trigger
      << "\n"
      << "level0_slowdown_writes_trigger=" << options_.level0_slowdown_writes_trigger << "\n"
      << "level0_stop_writes_trigger=" << options_.level0_stop_writes_trigger << "\n"
      << "block_size=" << options_.block_size << "\n"
      << "bloom_bits_per_key=" << options_.bloom_bits_per_key << "\n"
      << "block_cache_size=" << options_.block_cache_size << "\n"
      << "max_open_files=" << options_.max_open_files << "\n"
      << "num_levels=" << options_.num_levels << "\n"
      << "target_file_size=" << options_.target_file_size << "\n"
      << "max_bytes_for_level_base=" << options_.max_bytes_for_level_base << "\n"
      << "max_bytes_for_level_multiplier=" << options_.max_bytes_for_level_multiplier << "\n"
      << "max_background_jobs=" << options_.max_background_jobs << "\n"
      << "max_subcompactions=" << options_.max_subcompactions << "\n"
      << "compression=none\n"
      << "gpu_compaction="
      << (options_.gpu_compaction == accelkv::GpuCompaction::kOff    ? "off"
          : options_.gpu_compaction == accelkv::GpuCompaction::kAuto ? "auto"
                                                                     : "force")
      << "\n"
      << "gpu_min_compaction_bytes=" << options_.gpu_min_compaction_bytes << "\n"
      << "use_direct_io_for_flush_and_compaction="
      << (options_.use_direct_io_for_flush_and_compaction ? "true" : "false") << "\n"
      << "allow_mmap_reads=" << (options_.allow_mmap_reads ? "true" : "false") << "\n"
      << "allow_mmap_writes=" << (options_.allow_mmap_writes ? "true" : "false") << "\n"
      << "memtable_huge_pages=" << (options_.memtable_huge_pages ? "true" : "false") << "\n"
      << "memtable_btree_index=" << (options_.memtable_btree_index ? "true" : "false") << "\n"
      << "sync_writes=" << (write_options_.sync ? "true" : "false") << "\n";
    return o.str();
  }

  EngineStatus Put(std::string_view key, std::string_view value) override {
    return FromAccel(db_->Put(write_options_, ToSlice(key), ToSlice(value)));
  }
  EngineStatus Get(std::string_view key, std::string* value) override {
    return FromAccel(db_->Get(accelkv::ReadOptions(), ToSlice(key), value));
  }
  EngineStatus Delete(std::string_view key) override {
    return FromAccel(db_->Delete(write_options_, ToSlice(key)));
  }
  EngineStatus Write(const std::vector<std::pair<std::string, std::string>>& puts) override {
    accelkv::WriteBatch batch;
    for (const auto& [k, v] : puts) batch.Put(k, v);
    return FromAccel(db_->Write(write_options_, batch));
  }
  std::unique_ptr<Cursor> NewCursor() override {
    return std::make_unique<AccelCursor>(db_->NewIterator(accelkv::ReadOptions()));
  }

  // Flush, then wait until no compaction is due: "accelkv.compaction-pending"
  // when the DB has it, else every level's score in "accelkv.stats.json" below
  // 1 (the picker's threshold) and the bytes compactions wrote unchanged over
  // one poll (so a running job is seen finishing).
  EngineStatus WaitForCompactions() override {
    accelkv::FlushOptions flush;
    flush.wait = true;
    accelkv::Status s = db_->Flush(flush);
    if (!s.ok()) return FromAccel(s);
    std::string last_written;
    for (;;) {
      std::string v;
      bool busy = false;
      if (db_->GetProperty("accelkv.compaction-pending", &v)) {
        busy = std::strtoull(v.c_str(), nullptr, 10) != 0;
      } else if (db_->GetProperty("accelkv.stats.json", &v)) {
        const std::string written = JsonNumberAfter(v, "\"compaction_bytes_written\":", 0);
        busy = MaxScore(v) >= 1.0 || written != last_written;
        last_written = written;
      } else {
        return EngineStatus::Error("accelkv: no compaction progress property");
      }
      if (!busy) return EngineStatus::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::string Stats() override {
    std::string out;
    if (db_ != nullptr) db_->GetProperty("accelkv.stats", &out);
    return out;
  }

  EngineStatus Close() override {
    if (db_ == nullptr) return EngineStatus::Ok();
    accelkv::Status s = db_->Close();
    db_.reset();
    return FromAccel(s);
  }

 private:
  EngineStatus Apply(const std::string& opt) {
    std::string name, value;
    if (!SplitOption(opt, &name, &value)) {
      return EngineStatus::Error("accelkv: option is not name=value: " + opt);
    }
    if (name == "max_bytes_for_level_multiplier") {
      char* end = nullptr;
      const double d = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || d <= 1.0) {
        return EngineStatus::Error("accelkv: bad multiplier " + value);
      }
      options_.max_bytes_for_level_multiplier = d;
      return EngineStatus::Ok();
    }
    bool* flag = nullptr;
    if (name == "use_direct_io_for_flush_and_compaction") {
      flag = &options_.use_direct_io_for_flush_and_compaction;
    } else if (name == "allow_mmap_reads") {
      flag = &options_.allow_mmap_reads;
    } else if (name == "allow_mmap_writes") {
      flag = &options_.allow_mmap_writes;
    } else if (name == "memtable_huge_pages") {
      flag = &options_.memtable_huge_pages;
    } else if (name == "memtable_btree_index") {
      flag = &options_.memtable_btree_index;
    } else if (name == "allow_concurrent_memtable_write") {
      flag = &options_.allow_concurrent_memtable_write;
    } else if (name == "enable_pipelined_write") {
      flag = &options_.enable_pipelined_write;
    } else if (name == "enable_write_thread_adaptive_yield") {
      flag = &options_.enable_write_thread_adaptive_yield;
    }
    if (flag != nullptr) {
      if (value != "true" && value != "false") {
        return EngineStatus::Error("accelkv: " + name + " must be true or false: " + value);
      }
      *flag = value == "true";
      return EngineStatus::Ok();
    }
    if (name == "gpu_compaction") {
      if (value == "off") {
        options_.gpu_compaction = accelkv::GpuCompaction::kOff;
      } else if (value == "auto") {
        options_.gpu_compaction = accelkv::GpuCompaction::kAuto;
      } else if (value == "force") {
        options_.gpu_compaction = accelkv::GpuCompaction::kForce;
      } else {
        return EngineStatus::Error("accelkv: gpu_compaction must be off, auto or force: " + value);
      }
      return EngineStatus::Ok();
    }
    uint64_t n = 0;
    if (!ParseSize(value, &n)) return EngineStatus::Error("accelkv: option needs a number: " + opt);
    const int i = static_cast<int>(n);
    if (name == "write_buffer_size") {
      options_.write_buffer_size = n;
    } else if (name == "max_write_buffer_number") {
      options_.max_write_buffer_number = i;
    } else if (name == "level0_file_num_compaction_trigger") {
      options_.level0_file_num_compaction_trigger = i;
    } else if (name == "level0_slowdown_writes_trigger") {
      options_.level0_slowdown_writes_trigger = i;
    } else if (name == "level0_stop_writes_trigger") {
      options_.level0_stop_writes_trigger = i;
    } else if (name == "block_size") {
      options_.block_size = n;
    } else if (name == "bloom_bits_per_key") {
      options_.bloom_bits_per_key = i;
    } else if (name == "block_cache_size") {
      options_.block_cache_size = n;
    } else if (name == "max_open_files") {
      options_.max_open_files = i;
    } else if (name == "num_levels") {
      options_.num_levels = i;
    } else if (name == "target_file_size") {
      options_.target_file_size = n;
    } else if (name == "max_bytes_for_level_base") {
      options_.max_bytes_for_level_base = n;
    } else if (name == "max_background_jobs") {
      options_.max_background_jobs = i;
    } else if (name == "max_subcompactions") {
      options_.max_subcompactions = i;
    } else if (name == "gpu_min_compaction_bytes") {
      options_.gpu_min_compaction_bytes = n;
    } else if (name == "write_thread_spin_usec") {
      options_.write_thread_spin_usec = n;
    } else if (name == "write_thread_max_yield_usec") {
      options_.write_thread_max_yield_usec = n;
    } else if (name == "write_thread_slow_yield_usec") {
      options_.write_thread_slow_yield_usec = n;
    } else if (name == "paranoid_checks") {
      options_.paranoid_checks = n != 0;
    } else {
      return EngineStatus::Error("accelkv: unknown option " + name);
    }
    return EngineStatus::Ok();
  }

  accelkv::Options options_;
  accelkv::WriteOptions write_options_;
  std::unique_ptr<accelkv::DB> db_;
};

}  // namespace

std::unique_ptr<Engine> NewAccelKVEngine() { return std::make_unique<AccelKVEngine>(); }

}  // namespace accelkv_bench
