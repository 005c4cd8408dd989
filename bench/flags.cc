#include "flags.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>

#include "keys.h"
#include "values.h"
#include "workload.h"

namespace accelkv_bench {

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::vector<std::string> BenchFlags::EngineOptionsFor(const std::string& engine) const {
  std::vector<std::string> out;
  for (const std::string& opt : engine_opts) {
    const size_t colon = opt.find(':');
    const size_t eq = opt.find('=');
    if (colon != std::string::npos && (eq == std::string::npos || colon < eq)) {
      if (opt.substr(0, colon) == engine) out.push_back(opt.substr(colon + 1));
    } else {
      out.push_back(opt);
    }
  }
  return out;
}

namespace {

bool ParseUint(const std::string& text, uint64_t* out) { return ParseSize(text, out); }

bool ParseInt(const std::string& text, int min, int max, int* out) {
  uint64_t v = 0;
  if (!ParseUint(text, &v) || v < static_cast<uint64_t>(min) || v > static_cast<uint64_t>(max)) {
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

bool ParseDouble(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  // At most 1e9 (seconds, 31 years): larger ones (and inf, nan) would
  // overflow the clock's durations they become.
  if (errno != 0 || *end != '\0' || !(v >= 0 && v <= 1e9)) return false;
  *out = v;
  return true;
}

bool ParseBool(const std::string& text, bool* out) {
  if (text == "true" || text == "1" || text.empty()) {
    *out = true;
  } else if (text == "false" || text == "0") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

using Setter = std::function<bool(const std::string&)>;
struct FlagSpec {
  bool is_bool;
  Setter set;
};

}  // namespace

std::string Usage() {
  return R"(accelkv-bench: AccelKV beside RocksDB and LevelDB, verified reads, one binary.

usage: accelkv-bench [--engine=accelkv,rocksdb,leveldb] [--workload=fillseq,readrandom,...] [flags]

workloads (run in order on one database per engine):
  fillseq fillrandom overwrite readrandom readseq readmissing seekrandom
  readwhilewriting deleterandom ycsb-load ycsb-a ycsb-b ycsb-c ycsb-d ycsb-e ycsb-f
  compact: one compaction job in memory (or on disk, --compact-dir), run by each
           --executor (runs alone; no engine)

flags:
  --engine LIST           engines to run (default: every engine built in)
  --workload LIST         workloads, in order (default: fillrandom,readrandom)
  --threads N             worker threads (default 1)
  --num N                 keys in the key space / YCSB records (default 1000000)
  --ops N                 operations per read/mixed workload (default: --num)
  --duration SEC          run each workload for SEC seconds instead of --ops
  --time-limit SEC        stop a workload whose ops (--num or --ops) are not done after
                          SEC seconds; its result covers the ops done (JSON time_limited,
                          the table's ops column marked *) and skips --compaction-wait;
                          0 = none (default)
  --key-size N            db_bench key bytes (default 16; YCSB keys are "user"+hash)
  --value-size N          value bytes (default 100, at least 8)
  --seed N                seed of keys, values and distributions (default 301)
  --sync                  fsync the WAL on every write
  --db PATH               parent directory; each engine uses PATH/<engine> (default /tmp/accelkv-bench)
  --use-existing          reuse the databases at PATH instead of starting empty
  --stress-cpu N          N busy threads competing for the CPU during the run
  --partitions N          N instances of each engine under PATH/<engine>/p0..., keys
                          routed by a hash of the key (p2KVS's set-up); each instance
                          gets the whole profile (memtable, cache, background threads);
                          a batch spanning partitions is refused (default 1)
  --engine-opt OPT        engine option passthrough, "name=value" (all engines) or
                          "engine:name=value" (one engine); repeatable
  --write-buffer-size B   comparable profile: memtable bytes (default 64M)
  --block-size B          comparable profile: data block bytes (default 4K)
  --bloom-bits N          comparable profile: bloom bits per key (default 10, 0 = none)
  --cache-size B          comparable profile: block cache bytes (default 32M)
  --bg-threads N          comparable profile: background flush+compaction threads (default 2)
  --target-file-size B    comparable profile: table file bytes (default 64M)
  --seek-nexts N          seekrandom: Next calls after each Seek (default 10)
  --ycsb-field-count N    YCSB fields per record (default 10)
  --ycsb-field-length N   YCSB bytes per field (default: value-size / field-count)
  --ycsb-max-scan-length N  YCSB-E scan lengths, uniform in 1..N (default 100)
  --compaction-wait BOOL  after a writing workload, wait (untimed) for compactions so
                          write amplification includes the debt it created (default true)
  --stats                 print each engine's own statistics after its run
  --progress-interval SEC progress line period (default 5; 0 = none)
  --quiet                 no progress lines, no option dump
  --json FILE             append one JSON object per workload run to FILE ("-" = stdout)
  --executor LIST         compact: executors, cpu,gpu (default both; gpu needs CUDA and a
                          GPU, or ACCELKV_GPU_DEVICE=host for the host reference device)
  --l0-files N            compact: overlapping L0 input files (default 8)
  --l1-files N            compact: L1 input files (default 16; 0 = none)
  --compact-warmup BOOL   compact: one untimed GPU run before the timed one (default true)
  --compact-value-size-max N
                          compact: each value's size drawn from --value-size to N bytes
                          by a hash of its key and version (default 0: every value
                          --value-size bytes)
  --compact-direct-writes BOOL
                          compact: both executors write the output tables with direct
                          I/O (Options::use_direct_io_for_flush_and_compaction; O_DIRECT
                          on a file system that takes it, with --compact-dir) (default false)
  --compact-direct-reads BOOL
                          compact: the GPU executor reads its input tables with direct I/O,
                          straight into its pinned arena (TableOptions::
                          direct_compaction_reads, as the database sets it from
                          Options::use_direct_io_for_flush_and_compaction; O_DIRECT on a
                          file system that takes it, with --compact-dir; the CPU executor
                          reads buffered either way) (default false)
  --compact-pinned-mem BOOL
                          compact, in memory: the in-memory Env keeps its files in
                          page-locked memory, in 16 MiB chunks (MemEnvOptions), and lends
                          them (RandomAccessFile::Lend, WritableFile::LendPrepared): the GPU
                          executor copies its input tables to the device from there and its
                          output tables back into them, as direct I/O on a disk goes by
                          DMA, rather than through its pinned buffers; the CPU executor
                          reads and writes them as any memory (default false)
  --compact-mem-chunk-bytes N
                          compact, in memory: the in-memory Env's chunk size (default 0:
                          64 KiB, with --compact-pinned-mem 16 MiB)
  --compact-dir PATH      compact: the job's input and output files on the file system
                          under PATH (made if missing; it must hold no table files), the
                          inputs dropped from the page cache before each run, outputs
                          fsynced; every file the job made is removed at the end
                          (default: in memory)
  --compact-drop-cache BOOL
                          compact, with --compact-dir: drop the inputs from the page
                          cache before each run, so they are read from the disk (default
                          true); false leaves them cached, as a flush's or compaction's
                          just-written outputs are (buffered reads then come from memory;
                          the JSON's input_cached_bytes says how much was cached)
                          (compact: --threads = subcompactions, default all cores;
                          --num = L0 entries; --target-file-size = output file bytes)
  --help
)";
}

bool IsCompactRun(const BenchFlags& flags) {
  return flags.workloads.size() == 1 && flags.workloads[0] == "compact";
}

bool ParseFlags(int argc, const char* const* argv, BenchFlags* flags, std::string* error) {
  BenchFlags& f = *flags;
  std::string engines_text, workloads_text, executors_text;
  auto size_setter = [](auto* field) {
    return [field](const std::string& v) {
      uint64_t n = 0;
      if (!ParseSize(v, &n)) return false;
      *field = static_cast<std::remove_pointer_t<decltype(field)>>(n);
      return true;
    };
  };
  auto int_setter = [](int* field, int min, int max) {
    return [field, min, max](const std::string& v) { return ParseInt(v, min, max, field); };
  };
  auto bool_setter = [](bool* field) {
    return [field](const std::string& v) { return ParseBool(v, field); };
  };
  std::map<std::string, FlagSpec> specs = {
      {"engine",
       {false,
        [&](const std::string& v) {
          engines_text = v;
          return true;
        }}},
      {"workload",
       {false,
        [&](const std::string& v) {
          workloads_text = v;
          return true;
        }}},
      {"threads",
       {false,
        [&](const std::string& v) {
          f.threads_given = true;
          return ParseInt(v, 1, 1024, &f.threads);
        }}},
      {"executor",
       {false,
        [&](const std::string& v) {
          executors_text = v;
          return true;
        }}},
      {"l0-files", {false, int_setter(&f.l0_files, 1, 4096)}},
      {"l1-files", {false, int_setter(&f.l1_files, 0, 1 << 20)}},
      {"compact-warmup", {true, bool_setter(&f.compact_warmup)}},
      {"compact-value-size-max", {false, size_setter(&f.compact_value_size_max)}},
      {"compact-direct-writes", {true, bool_setter(&f.compact_direct_writes)}},
      {"compact-direct-reads", {true, bool_setter(&f.compact_direct_reads)}},
      {"compact-drop-cache", {true, bool_setter(&f.compact_drop_cache)}},
      {"compact-pinned-mem", {true, bool_setter(&f.compact_pinned_mem)}},
      {"compact-mem-chunk-bytes", {false, size_setter(&f.compact_mem_chunk_bytes)}},
      {"compact-dir",
       {false,
        [&](const std::string& v) {
          f.compact_dir = v;
          return !v.empty();
        }}},
      {"num", {false, size_setter(&f.num)}},
      {"ops", {false, size_setter(&f.ops)}},
      {"duration", {false, [&](const std::string& v) { return ParseDouble(v, &f.duration); }}},
      {"time-limit", {false, [&](const std::string& v) { return ParseDouble(v, &f.time_limit); }}},
      {"key-size", {false, size_setter(&f.key_size)}},
      {"value-size", {false, size_setter(&f.value_size)}},
      {"seed", {false, size_setter(&f.seed)}},
      {"sync", {true, bool_setter(&f.sync)}},
      {"db",
       {false,
        [&](const std::string& v) {
          f.db = v;
          return !v.empty();
        }}},
      {"use-existing", {true, bool_setter(&f.use_existing)}},
      {"stress-cpu", {false, int_setter(&f.stress_cpu, 0, 4096)}},
      {"partitions", {false, int_setter(&f.partitions, 1, 1024)}},
      {"engine-opt",
       {false,
        [&](const std::string& v) {
          f.engine_opts.push_back(v);
          return v.find('=') != std::string::npos;
        }}},
      {"write-buffer-size", {false, size_setter(&f.profile.write_buffer_size)}},
      {"block-size", {false, size_setter(&f.profile.block_size)}},
      {"bloom-bits", {false, int_setter(&f.profile.bloom_bits_per_key, 0, 64)}},
      {"cache-size", {false, size_setter(&f.profile.block_cache_size)}},
      {"bg-threads", {false, int_setter(&f.profile.background_threads, 1, 256)}},
      {"target-file-size", {false, size_setter(&f.profile.target_file_size)}},
      {"seek-nexts", {false, int_setter(&f.seek_nexts, 0, 1 << 20)}},
      {"ycsb-field-count", {false, int_setter(&f.ycsb_field_count, 1, 1 << 16)}},
      {"ycsb-field-length", {false, int_setter(&f.ycsb_field_length, 0, 1 << 24)}},
      {"ycsb-max-scan-length", {false, int_setter(&f.ycsb_max_scan_length, 1, 1 << 20)}},
      {"compaction-wait", {true, bool_setter(&f.compaction_wait)}},
      {"stats", {true, bool_setter(&f.print_stats)}},
      {"progress-interval",
       {false, [&](const std::string& v) { return ParseDouble(v, &f.progress_interval); }}},
      {"quiet", {true, bool_setter(&f.quiet)}},
      {"json",
       {false,
        [&](const std::string& v) {
          f.json = v;
          return !v.empty();
        }}},
      {"help", {true, bool_setter(&f.help)}},
  };

  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      *error = "unexpected argument '" + arg + "' (flags start with --)";
      return false;
    }
    arg = arg.substr(2);
    std::string name = arg, value;
    bool has_value = false;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    std::replace(name.begin(), name.end(), '_', '-');
    auto it = specs.find(name);
    if (it == specs.end()) {
      *error = "unknown flag --" + name + " (see --help)";
      return false;
    }
    if (!has_value && !it->second.is_bool) {
      if (i + 1 >= argc) {
        *error = "flag --" + name + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (!it->second.set(value)) {
      *error = "bad value '" + value + "' for --" + name;
      return false;
    }
  }
  if (f.help) return true;

  f.engines = engines_text.empty() ? AvailableEngines() : SplitList(engines_text);
  const std::vector<std::string> known = AvailableEngines();
  for (const std::string& e : f.engines) {
    if (std::find(known.begin(), known.end(), e) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ",") + k;
      *error = "unknown or not built-in engine '" + e + "' (available: " + list + ")";
      return false;
    }
  }
  f.workloads = SplitList(workloads_text.empty() ? "fillrandom,readrandom" : workloads_text);
  const bool compact =
      std::find(f.workloads.begin(), f.workloads.end(), "compact") != f.workloads.end();
  if (compact && f.workloads.size() != 1) {
    *error = "workload 'compact' runs alone (it takes no engine)";
    return false;
  }
  f.executors = SplitList(executors_text.empty() ? "cpu,gpu" : executors_text);
  for (const std::string& e : f.executors) {
    if (e != "cpu" && e != "gpu") {
      *error = "unknown executor '" + e + "' (cpu, gpu)";
      return false;
    }
  }
  for (const std::string& w : f.workloads) {
    if (!compact && !IsWorkloadName(w)) {
      *error = "unknown workload '" + w + "' (see --help)";
      return false;
    }
  }
  if (f.num == 0) {
    *error = "--num must be at least 1";
    return false;
  }
  if (!(f.time_limit >= 0) || (f.time_limit > 0 && f.duration > 0)) {
    *error = "--time-limit must be >= 0 and cannot be combined with --duration";
    return false;
  }
  if (f.time_limit > 0 &&
      std::find(f.workloads.begin(), f.workloads.end(), "ycsb-load") != f.workloads.end()) {
    *error = "--time-limit cannot stop ycsb-load (the YCSB workloads after it need every record)";
    return false;
  }
  if (f.value_size < kMinValueSize) {
    *error = "--value-size must be at least " + std::to_string(kMinValueSize) +
             " (values carry a version header)";
    return false;
  }
  if (f.compact_value_size_max != 0 && f.compact_value_size_max < f.value_size) {
    *error = "--compact-value-size-max must be 0 or at least --value-size";
    return false;
  }
  if (f.key_size < MinDbBenchKeySize(f.num)) {
    *error = "--key-size must be at least " + std::to_string(MinDbBenchKeySize(f.num)) +
             " to hold " + std::to_string(f.num) + " keys";
    return false;
  }
  if (f.ycsb_field_length == 0) {
    f.ycsb_field_length = static_cast<int>(
        std::max<size_t>(1, f.value_size / static_cast<size_t>(f.ycsb_field_count)));
  }
  if (f.YcsbValueSize() < kMinValueSize) {
    *error = "YCSB records must have at least " + std::to_string(kMinValueSize) +
             " bytes (--ycsb-field-count x --ycsb-field-length)";
    return false;
  }
  if (f.ops == 0) f.ops = f.num;
  f.profile.sync = f.sync;
  f.profile.use_existing = f.use_existing;
  return true;
}

}  // namespace accelkv_bench
