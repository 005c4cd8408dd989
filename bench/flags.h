// BenchFlags: accelkv-bench's command line. Flags take "--name=value" or
// "--name value"; boolean flags also take a bare "--name". Lists are
// comma-separated. ParseFlags validates ranges and names; `Usage()` is the
// --help text.
//
// Thread safety: plain data and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine.h"

namespace accelkv_bench {

struct BenchFlags {
  std::vector<std::string> engines;    // --engine (default: all built in)
  std::vector<std::string> workloads;  // --workload (default: fillrandom,readrandom)
  int threads = 1;
  bool threads_given = false;  // --threads appeared (compact: default all cores)
  uint64_t num = 1000000;      // keys in the key space / records loaded
  uint64_t ops = 0;            // per read/mixed workload; 0: num
  double duration = 0;         // seconds; > 0 limits each workload by time instead
  double time_limit = 0;       // seconds; > 0 stops a workload whose ops are not done by then
  size_t key_size = 16;
  size_t value_size = 100;
  uint64_t seed = 301;
  bool sync = false;
  std::string db = "/tmp/accelkv-bench";
  bool use_existing = false;
  int stress_cpu = 0;
  int partitions = 1;  // --partitions: instances per engine, keys routed by hash
  // "name=value" for every engine or "engine:name=value" for one.
  std::vector<std::string> engine_opts;
  bool quiet = false;
  std::string json;  // "" none, "-" stdout, else a file (appended)
  double progress_interval = 5.0;
  int seek_nexts = 10;        // seekrandom: Next calls after each Seek
  int ycsb_field_count = 10;  // YCSB fieldcount
  int ycsb_field_length = 0;  // YCSB fieldlength; 0: value_size / field_count
  int ycsb_max_scan_length = 100;
  bool compaction_wait = true;  // after writing workloads, wait (untimed) for compactions
  bool print_stats = false;     // print each engine's own stats after its run
  EngineProfile profile;        // the comparable profile (+ --sync, --use-existing)
  // The compact workload (docs/bench.md): executors, input shape.
  std::vector<std::string> executors;  // --executor (default cpu,gpu)
  int l0_files = 8;
  int l1_files = 16;
  bool compact_warmup = true;          // one untimed GPU run first
  size_t compact_value_size_max = 0;   // values of value_size..this bytes (0: value_size)
  bool compact_direct_writes = false;  // --compact-direct-writes: outputs with direct I/O
  bool compact_direct_reads = false;   // --compact-direct-reads: GPU inputs with direct I/O
  bool compact_drop_cache = true;      // --compact-drop-cache: inputs read from the disk
  bool compact_pinned_mem = false;     // --compact-pinned-mem: the in-memory files page-locked
  size_t compact_mem_chunk_bytes = 0;  // --compact-mem-chunk-bytes (0: the Env's default)
  std::string compact_dir;  // --compact-dir: the job's files on disk there ("": in memory)
  bool help = false;

  // Bytes of a YCSB record's value.
  size_t YcsbValueSize() const {
    return static_cast<size_t>(ycsb_field_count) * static_cast<size_t>(ycsb_field_length);
  }
  // Options passed to `engine` (engine-scoped ones with the scope removed).
  std::vector<std::string> EngineOptionsFor(const std::string& engine) const;
};

// True when the workload list is the compact micro-benchmark, which takes
// no engine and runs alone (ParseFlags refuses it beside other workloads).
bool IsCompactRun(const BenchFlags& flags);

// Parses argv[1..argc). False and *error set on a bad flag or value.
bool ParseFlags(int argc, const char* const* argv, BenchFlags* flags, std::string* error);
std::string Usage();
std::vector<std::string> SplitList(const std::string& text);

}  // namespace accelkv_bench
