// Engine: the one interface accelkv-bench drives every store through.
//
// Ownership: CreateEngine returns a std::unique_ptr the caller owns. Open
// must succeed before any other call; Close releases the store (the
// destructor closes it too if Close was not called).
//
// Thread safety: after Open returns OK, Put/Get/Delete/Write/NewCursor/Stats
// may be called concurrently from many threads. Open, SetOption,
// WaitForCompactions and Close need external synchronization (the runner
// calls them from one thread while no workload runs). A Cursor is used by
// one thread at a time and must be destroyed before Close.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace accelkv_bench {

// Result of an engine call. NotFound is an ordinary outcome of Get.
struct EngineStatus {
  enum class Code { kOk, kNotFound, kError };
  Code code = Code::kOk;
  std::string message;

  static EngineStatus Ok() { return EngineStatus{}; }
  static EngineStatus NotFound() { return EngineStatus{Code::kNotFound, ""}; }
  static EngineStatus Error(std::string msg) { return EngineStatus{Code::kError, std::move(msg)}; }
  bool ok() const { return code == Code::kOk; }
  bool IsNotFound() const { return code == Code::kNotFound; }
};

// The "comparable" profile: the settings every engine is given, so numbers
// compare stores rather than configurations (docs/bench.md lists how each
// field maps onto every engine).
struct EngineProfile {
  size_t write_buffer_size = 64ull << 20;  // memtable bytes before a flush
  size_t block_size = 4096;                // target data block bytes
  int bloom_bits_per_key = 10;             // 0: no filter
  size_t block_cache_size = 32ull << 20;   // LRU block cache bytes
  int background_threads = 2;              // flush + compaction threads
  uint64_t target_file_size = 64ull << 20;
  int max_open_files = 1000;
  bool sync = false;  // fsync the WAL on every write
  bool use_existing = false;
  // Engine-specific overrides, "name=value", applied after the profile.
  std::vector<std::string> extra_options;
};

// A cursor over the store: Seek then Next, as in every LSM iterator.
class Cursor {
 public:
  virtual ~Cursor() = default;
  virtual void Seek(std::string_view target) = 0;
  virtual void SeekToFirst() = 0;
  virtual bool Valid() const = 0;
  // REQUIRES: Valid()
  virtual void Next() = 0;
  // REQUIRES: Valid(). Bytes stay valid until the cursor moves.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  // Error met while iterating, if any.
  virtual EngineStatus status() const = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;

  // The engine's name as given to --engine ("rocksdb", ...).
  virtual std::string Name() const = 0;

  // Opens (creating unless profile.use_existing) the store at path. A fresh
  // run destroys what was at path first (DestroyStore).
  virtual EngineStatus Open(const std::string& path, const EngineProfile& profile) = 0;
  // Deletes the store at path (not an error if absent). REQUIRES: not open.
  virtual EngineStatus DestroyStore(const std::string& path) = 0;

  // The options the engine actually runs with, one "name: value" per line.
  virtual std::string EffectiveOptions() const = 0;

  virtual EngineStatus Put(std::string_view key, std::string_view value) = 0;
  virtual EngineStatus Get(std::string_view key, std::string* value) = 0;
  virtual EngineStatus Delete(std::string_view key) = 0;
  // Applies all pairs atomically.
  virtual EngineStatus Write(const std::vector<std::pair<std::string, std::string>>& puts) = 0;
  virtual std::unique_ptr<Cursor> NewCursor() = 0;

  // Flushes memtables and waits until background compaction is idle.
  virtual EngineStatus WaitForCompactions() = 0;
  // The engine's own statistics (compaction stats), human-readable; empty if
  // it exposes none.
  virtual std::string Stats() = 0;

  virtual EngineStatus Close() = 0;
};

// Names CreateEngine accepts, in the order a suite runs them.
std::vector<std::string> AvailableEngines();
// nullptr if name is unknown or the engine was not built in.
std::unique_ptr<Engine> CreateEngine(const std::string& name);

// Splits "name=value"; false if there is no '='.
bool SplitOption(const std::string& option, std::string* name, std::string* value);
// Parses a byte count with an optional K/M/G suffix (powers of 1024).
bool ParseSize(const std::string& text, uint64_t* out);

}  // namespace accelkv_bench
