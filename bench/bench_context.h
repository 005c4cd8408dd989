// The state one engine's run shares between workloads and worker threads:
// the engine, the value factory, the two key spaces (db_bench keys and YCSB
// keys) with their per-key write state, the YCSB insert counters, and the
// run's failure flag. ThreadStats is what one worker thread counts.
//
// Thread safety: BenchContext's members are safe for concurrent use by the
// workers (KeyState and atomics); Fail may be called from any thread; the
// first failure wins and stops the run.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "engine.h"
#include "flags.h"
#include "histogram.h"
#include "key_state.h"
#include "values.h"

namespace accelkv_bench {

class KeySpace {
 public:
  enum class Format { kDbBench, kYcsb };
  KeySpace(Format format, uint64_t capacity, size_t key_size, size_t value_size)
      : format_(format), key_size_(key_size), value_size_(value_size), state_(capacity) {}

  Format format() const { return format_; }
  size_t value_size() const { return value_size_; }
  uint64_t capacity() const { return state_.capacity(); }
  KeyState* state() { return &state_; }
  void Key(uint64_t index, std::string* out) const;
  // True and *index set if key belongs to this key space (db_bench keys
  // only: YCSB keys are hashed and do not parse back).
  bool Parse(std::string_view key, uint64_t* index) const;
  // Bytes (key + value) of the keys whose last write was a put. Quiescent only.
  uint64_t LiveBytes() const;

 private:
  Format format_;
  size_t key_size_;
  size_t value_size_;
  KeyState state_;
};

struct ThreadStats {
  Histogram latency;  // nanoseconds per operation
  uint64_t ops = 0;
  uint64_t bytes = 0;             // key+value bytes written or read (MB/s)
  uint64_t user_write_bytes = 0;  // key+value of puts, key of deletes (write amp)
  uint64_t reads_checked = 0;     // values and absences verified
  uint64_t reads_found = 0;
  uint64_t reads_not_found = 0;

  void Merge(const ThreadStats& other);
};

class BenchContext {
 public:
  BenchContext(const BenchFlags& flags, Engine* engine, uint64_t ycsb_capacity);

  const BenchFlags& flags() const { return flags_; }
  Engine* engine() const { return engine_; }
  const ValueFactory& values() const { return values_; }
  KeySpace* db_keys() { return &db_keys_; }
  KeySpace* ycsb_keys() { return &ycsb_keys_; }

  // YCSB records [0, ycsb_records) are loaded (or being inserted); inserts
  // take ycsb_next_insert++.
  std::atomic<uint64_t> ycsb_records;
  std::atomic<uint64_t> ycsb_next_insert;

  // Records the first failure (wrong data, missing key, engine error) and
  // asks every worker to stop.
  void Fail(const std::string& message);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  std::string failure() const;

  // Set by the runner to end the current workload's workers (duration over,
  // readers done, or failure).
  std::atomic<bool> stop{false};

 private:
  const BenchFlags& flags_;
  Engine* engine_;
  ValueFactory values_;
  KeySpace db_keys_;
  KeySpace ycsb_keys_;
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  std::string failure_;
};

}  // namespace accelkv_bench
