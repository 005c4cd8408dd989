#include "compact_workload.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#endif

#include "compact_job.h"
#include "compaction/cpu_compaction_executor.h"
#include "gpu/gpu_executor.h"
#include "gpu/pinned_file_memory.h"
#include "json_writer.h"
#include "keys.h"
#include "process_metrics.h"
#include "table/table.h"
#include "table/table_cache.h"
#include "util/filename.h"
#include "values.h"

namespace accelkv_bench {

using accelkv::CompactionJobResult;
using accelkv::FileMetaData;
using accelkv::FileMetaPtr;
using accelkv::Status;

namespace {

constexpr const char* kMemDbName = "/compact";
// --compact-pinned-mem's chunks: a 250 MB input is about 30 pieces, each
// one copy to the device, each chunk one region of huge pages
// (gpu/pinned_buffer.h). With 1 MiB chunks the 250 copy calls, made one
// after another, kept the read stage at 3.4-5.4 ms; 16 MiB against 4 MiB:
// the GPU job 1.06x-1.09x faster, its copies in 47.7-50.0 against
// 40.6-48.0 GB/s (bench/results/2026-11-27-h100-lent-files.md, call 5).
constexpr size_t kPinnedChunkBytes = size_t{16} << 20;

// Where the job's files live: the in-memory Env, or the file system under
// --compact-dir.
struct JobPlace {
  accelkv::Env* env = nullptr;
  std::string dbname;
  bool disk = false;
  bool created_dir = false;  // disk: the workload made the directory
  bool drop_cache = true;    // disk: inputs dropped from the page cache before each run
};

// The outcome of dropping the inputs from the page cache before a run.
struct CacheDrop {
  bool dropped = false;
  uint64_t resident_bytes = 0;  // input bytes still cached afterwards
};

#if defined(__linux__)
// Writes the file's dirty pages back (fdatasync; the inputs are written
// without a sync, dirty pages cannot be dropped, and their write-back would
// otherwise share the disk with the timed job), asks the kernel to drop its
// cached pages when drop is set (posix_fadvise DONTNEED, advice the kernel
// may ignore: tmpfs does), then counts the bytes resident with mincore over
// a read-only mapping (mapping faults nothing in). False on a failed call.
bool SyncFileCache(const std::string& fname, bool drop, uint64_t* resident) {
  const int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fdatasync(fd) == 0 && (!drop || ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ok = false;
  } else if (st.st_size > 0) {
    const size_t len = static_cast<size_t>(st.st_size);
    void* base = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      ok = false;
    } else {
      const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
      std::vector<unsigned char> pages((len + page - 1) / page);
      if (::mincore(base, len, pages.data()) == 0) {
        for (size_t i = 0; i < pages.size(); i++) {
          if (pages[i] & 1) *resident += std::min(page, len - i * page);
        }
      } else {
        ok = false;
      }
      ::munmap(base, len);
    }
  }
  ::close(fd);
  return ok;
}

// The file system type of path, by statfs magic ("" when statfs fails).
std::string FileSystemType(const std::string& path) {
  struct statfs st;
  if (::statfs(path.c_str(), &st) != 0) return "";
  switch (static_cast<unsigned long>(st.f_type)) {
    case 0xEF53:
      return "ext2/3/4";  // one magic for the three
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x01021994:
      return "tmpfs";
    case 0x794C7630:
      return "overlayfs";
    case 0x6969:
      return "nfs";
    case 0x2FC12FC1:
      return "zfs";
    case 0xF2F52010:
      return "f2fs";
    default:
      break;
  }
  char hex[32];
  std::snprintf(hex, sizeof(hex), "0x%lx", static_cast<unsigned long>(st.f_type));
  return hex;
}
#else
bool SyncFileCache(const std::string&, bool, uint64_t*) { return false; }
std::string FileSystemType(const std::string&) { return ""; }
#endif

// Syncs every input file of job and, when place.drop_cache is set, drops it
// from the page cache (disk only).
CacheDrop SyncInputCache(const CompactJob& job, const JobPlace& place) {
  CacheDrop drop;
  bool ok = true;
  for (int which = 0; which < 2; which++) {
    for (const FileMetaPtr& f : job.compaction().inputs(which)) {
      const std::string fname = accelkv::TableFileName(place.dbname, f->number);
      if (!SyncFileCache(fname, place.drop_cache, &drop.resident_bytes)) ok = false;
    }
  }
  drop.dropped = place.drop_cache && ok && drop.resident_bytes == 0;
  return drop;
}

// Disk: makes the directory, or checks that an existing one holds no table
// files (the job's would overwrite them, and the cleanup removes every
// table file there). False and *why when it cannot be used.
bool PrepareDir(JobPlace* place, std::string* why) {
  accelkv::Env* env = place->env;
  if (env->FileExists(place->dbname)) {
    std::vector<std::string> children;
    Status s = env->GetChildren(place->dbname, &children);
    if (!s.ok()) {
      *why = s.ToString();
      return false;
    }
    for (const std::string& child : children) {
      uint64_t number = 0;
      accelkv::FileType type;
      if (accelkv::ParseFileName(child, &number, &type) && type == accelkv::FileType::kTableFile) {
        *why = place->dbname + " holds table files already (" + child +
               "); remove them or choose another --compact-dir";
        return false;
      }
    }
    return true;
  }
  Status s = env->CreateDir(place->dbname);
  if (!s.ok()) {
    *why = s.ToString();
    return false;
  }
  place->created_dir = true;
  return true;
}

// Disk: removes every table file under the directory (PrepareDir saw none
// before the job), and the directory when the workload made it.
void CleanUpDir(const JobPlace& place) {
  std::vector<std::string> children;
  if (!place.env->GetChildren(place.dbname, &children).ok()) return;
  for (const std::string& child : children) {
    uint64_t number = 0;
    accelkv::FileType type;
    if (accelkv::ParseFileName(child, &number, &type) && type == accelkv::FileType::kTableFile) {
      place.env->RemoveFile(place.dbname + "/" + child);
    }
  }
  if (place.created_dir) place.env->RemoveDir(place.dbname);
}

void ReportThreadCpu(const std::map<int, ThreadCpu>& before, double process_sec,
                     double executor_sec) {
  double live = 0;
  for (const auto& [tid, t] : ThreadCpuTable()) {
    const auto it = before.find(tid);
    const double d = t.seconds - (it == before.end() ? 0.0 : it->second.seconds);
    live += d;
    if (d >= 0.0005) std::fprintf(stderr, "thread-cpu: %d %s %.4f s\n", tid, t.name.c_str(), d);
  }
  std::fprintf(stderr,
               "thread-cpu: process %.4f s, live threads %.4f s, exited threads %.4f s, "
               "executor reports %.4f s\n",
               process_sec, live, process_sec - live, executor_sec);
}

// Runs the job once on executor; *files gets the outputs' bytes in key
// order, and the output files are removed (the next run reuses numbers).
// On disk the inputs are first synced and, unless place.drop_cache is unset,
// dropped from the page cache (*drop).
Status RunOnce(accelkv::CompactionExecutor* executor, const CompactJob& job, const JobPlace& place,
               CompactionJobResult* result, std::vector<std::string>* files, double* seconds,
               double* cpu_sec, CacheDrop* drop) {
  accelkv::Env* const env = place.env;
  const std::string& dbname = place.dbname;
  if (place.disk) *drop = SyncInputCache(job, place);
  accelkv::TableCache cache(dbname, env, job.table_options(), 1000);
  std::mutex mu;
  uint64_t next = job.first_output_number();
  accelkv::CompactionJobSpec spec;
  spec.dbname = dbname;
  spec.env = env;
  spec.table_options = job.table_options();
  spec.table_cache = &cache;
  spec.compaction = &job.compaction();
  spec.snapshots = job.snapshots();
  spec.internal_comparator = job.icmp();
  spec.new_file_number = [&] {
    std::lock_guard<std::mutex> l(mu);
    return next++;
  };
  // ACCELKV_BENCH_THREAD_CPU=1: where the process's CPU seconds went
  // during the run, per live thread, to stderr (a diagnostic).
  const bool thread_cpu = std::getenv("ACCELKV_BENCH_THREAD_CPU") != nullptr;
  std::map<int, ThreadCpu> threads0;
  if (thread_cpu) threads0 = ThreadCpuTable();
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  Status s = executor->Run(spec, result);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *cpu_sec = CpuSeconds() - cpu0;
  if (thread_cpu) ReportThreadCpu(threads0, *cpu_sec, result->cpu_seconds);
  files->clear();
  for (const FileMetaData& f : result->outputs) {
    const std::string name = accelkv::TableFileName(dbname, f.number);
    if (s.ok()) {
      std::string data;
      s = accelkv::ReadFileToString(env, name, &data);
      files->push_back(std::move(data));
    }
    env->RemoveFile(name);
  }
  return s;
}

// Checks the outputs entry by entry against the job's expected entries:
// keys, sequence numbers, types and values, in order, nothing more.
bool VerifyOutputs(const CompactJob& job, const std::vector<std::string>& files, std::string* why) {
  const std::vector<CompactExpectedEntry>& expected = job.expected();
  const ValueFactory values(job.shape().seed);
  std::unique_ptr<accelkv::Env> env(accelkv::NewMemEnv(accelkv::Env::Default()));
  size_t next = 0;
  std::string key, value;
  for (size_t i = 0; i < files.size(); i++) {
    Status s = accelkv::WriteStringToFile(env.get(), files[i], "/verify.sst", false);
    std::unique_ptr<accelkv::RandomAccessFile> file;
    if (s.ok()) s = env->NewRandomAccessFile("/verify.sst", &file);
    std::unique_ptr<accelkv::Table> table;
    if (s.ok())
      s = accelkv::Table::Open(job.table_options(), std::move(file), files[i].size(), &table);
    if (!s.ok()) {
      *why = "output " + std::to_string(i) + ": " + s.ToString();
      return false;
    }
    accelkv::ReadOptions ro;
    ro.verify_checksums = true;
    std::unique_ptr<accelkv::Iterator> it(table->NewIterator(ro));
    for (it->SeekToFirst(); it->Valid(); it->Next(), next++) {
      accelkv::ParsedInternalKey ikey;
      if (next >= expected.size() || !accelkv::ParseInternalKey(it->key(), &ikey)) {
        *why = "output " + std::to_string(i) + ": an entry more than expected";
        return false;
      }
      const CompactExpectedEntry& e = expected[next];
      DbBenchKey(e.key_index, job.shape().key_size, &key);
      const bool deletion = ikey.type == accelkv::ValueType::kDeletion;
      value.clear();
      if (!e.deletion)
        values.Make(key, static_cast<uint32_t>(e.seq), job.shape().ValueSize(e.key_index, e.seq),
                    &value);
      if (ikey.user_key.view() != key || ikey.sequence != e.seq || deletion != e.deletion ||
          it->value().view() != value) {
        *why = "output entry " + std::to_string(next) + " is not key " + key + " @" +
               std::to_string(e.seq) + (e.deletion ? " (deletion)" : "") + " with its value";
        return false;
      }
    }
    if (!it->status().ok()) {
      *why = "output " + std::to_string(i) + ": " + it->status().ToString();
      return false;
    }
  }
  if (next != expected.size()) {
    *why = std::to_string(next) + " output entries, expected " + std::to_string(expected.size());
    return false;
  }
  return true;
}

CompactResult BaseResult(const BenchFlags& flags, const CompactJob& job, const JobPlace& place,
                         const std::string& fs_type) {
  CompactResult r;
  r.env = place.disk ? "disk:" + place.dbname : flags.compact_pinned_mem ? "mem-pinned" : "mem";
  r.direct_writes = flags.compact_direct_writes;
  r.direct_reads = flags.compact_direct_reads;
  r.fs_type = fs_type;
  r.subcompactions = static_cast<int>(job.compaction().subcompaction_boundaries().size() + 1);
  r.num = flags.num;
  r.key_size = flags.key_size;
  r.value_size = flags.value_size;
  r.value_size_max = flags.compact_value_size_max;
  r.seed = flags.seed;
  r.input_files = job.input_files();
  r.input_bytes = job.compaction().TotalInputBytes();
  r.input_entries = job.input_entries();
  return r;
}

void FillMeasured(const CompactionJobResult& jr, const std::vector<std::string>& files,
                  double seconds, double cpu_sec, const CacheDrop& drop, CompactResult* r) {
  r->output_files = files.size();
  for (const std::string& f : files) r->output_bytes += f.size();
  r->output_entries = jr.output_entries;
  r->dropped_entries = jr.dropped_entries;
  r->seconds = seconds;
  const double gb = static_cast<double>(r->input_bytes) / 1e9;
  r->input_gb_per_sec = seconds > 0 ? gb / seconds : 0;
  r->output_gb_per_sec = seconds > 0 ? static_cast<double>(r->output_bytes) / 1e9 / seconds : 0;
  r->cache_dropped = drop.dropped;
  r->input_cached_bytes = drop.resident_bytes;
  r->cpu_sec = cpu_sec;
  r->executor_cpu_sec = jr.cpu_seconds;
  r->device_busy_us = jr.device_busy_micros;
  r->cpu_sec_per_gb = gb > 0 ? cpu_sec / gb : 0;
  r->stage_us = jr.stage_micros;
  r->stage_cpu = jr.stage_cpu_seconds;
}

// The GPU executor: CUDA when built with it and a GPU is present, the host
// reference device with ACCELKV_GPU_DEVICE=host; null and *why otherwise.
std::unique_ptr<accelkv::GpuCompactionExecutor> MakeGpuExecutor(std::string* why) {
  accelkv::Options options;
  options.gpu_compaction = accelkv::GpuCompaction::kForce;  // no size threshold
  std::string line;
  std::unique_ptr<accelkv::GpuCompactionExecutor> gpu =
      accelkv::NewDatabaseGpuExecutor(options, &line);
  if (gpu == nullptr) *why = line;
  return gpu;
}

}  // namespace

int RunCompactWorkload(const BenchFlags& flags, std::ostream& human, std::ostream* json,
                       std::vector<CompactResult>* results) {
  const int threads = flags.threads_given
                          ? flags.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CompactJobShape shape;
  shape.num = flags.num;
  shape.key_size = flags.key_size;
  shape.value_size = flags.value_size;
  shape.value_size_max = flags.compact_value_size_max;
  shape.l0_files = flags.l0_files;
  shape.l1_files = flags.l1_files;
  shape.seed = flags.seed;
  shape.target_file_size = flags.profile.target_file_size;
  shape.block_size = flags.profile.block_size;
  shape.bloom_bits_per_key = flags.profile.bloom_bits_per_key;
  shape.max_subcompactions = threads;
  shape.direct_writes = flags.compact_direct_writes;
  shape.direct_reads = flags.compact_direct_reads;

  std::unique_ptr<accelkv::Env> mem_env;
  JobPlace place;
  std::string fs_type;
  if (flags.compact_dir.empty()) {
    accelkv::MemEnvOptions mem_options;
    // Every removed output's chunks kept for the next run's outputs, with
    // either memory: past the default 512 MiB a 1 GB job's outputs took
    // fresh chunks in its timed run, which page-locked memory pays for
    // dearly (pinning: the GPU job 95 against 70 ms).
    mem_options.max_free_bytes = std::numeric_limits<size_t>::max();
    if (flags.compact_pinned_mem) {
      mem_options.chunk_bytes = kPinnedChunkBytes;
      mem_options.memory = accelkv::gpu::NewPinnedFileMemory();
    }
    if (flags.compact_mem_chunk_bytes != 0) mem_options.chunk_bytes = flags.compact_mem_chunk_bytes;
    mem_env = accelkv::NewMemEnv(accelkv::Env::Default(), mem_options);
    place.env = mem_env.get();
    place.dbname = kMemDbName;
  } else {
    place.env = accelkv::Env::Default();
    place.dbname = flags.compact_dir;
    place.disk = true;
    place.drop_cache = flags.compact_drop_cache;
    std::string why;
    if (!PrepareDir(&place, &why)) {
      human << "compact: cannot use --compact-dir: " << why << "\n";
      return 1;
    }
    fs_type = FileSystemType(place.dbname);
  }
  // Disk: the inputs and any output left by a failure go on every return.
  struct Cleanup {
    const JobPlace& place;
    ~Cleanup() {
      if (place.disk) CleanUpDir(place);
    }
  } cleanup{place};

  const auto build_start = std::chrono::steady_clock::now();
  std::unique_ptr<CompactJob> job;
  Status s = CompactJob::Build(shape, place.env, place.dbname, &job);
  if (!s.ok()) {
    human << "compact: cannot build the input: " << s.ToString() << "\n";
    return 1;
  }
  const double build_sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();
  if (!flags.quiet) {
    const std::string where =
        place.disk ? "on disk under " + place.dbname + (fs_type.empty() ? "" : " (" + fs_type + ")")
                   : "in memory";
    char line[512];
    std::snprintf(line, sizeof(line),
                  "compact: %zu input files, %.1f MB, %llu entries, %d subcompactions, "
                  "built in %.1f s, files %s\n",
                  job->input_files(),
                  static_cast<double>(job->compaction().TotalInputBytes()) / 1e6,
                  static_cast<unsigned long long>(job->input_entries()),
                  static_cast<int>(job->compaction().subcompaction_boundaries().size() + 1),
                  build_sec, where.c_str());
    human << line;
  }

  // The reference: one thread, the same boundaries, checked entry by entry.
  accelkv::CpuCompactionExecutor serial(1);
  CompactionJobResult ref_result;
  std::vector<std::string> reference;
  double ref_seconds = 0, ref_cpu = 0;
  CacheDrop ref_drop;
  s = RunOnce(&serial, *job, place, &ref_result, &reference, &ref_seconds, &ref_cpu, &ref_drop);
  std::string why;
  if (!s.ok()) {
    human << "compact: the reference run failed: " << s.ToString() << "\n";
    return 1;
  }
  if (!VerifyOutputs(*job, reference, &why)) {
    human << "compact: VERIFICATION FAILED: cpu executor (1 thread): " << why << "\n";
    return 2;
  }

  int status = 0;
  for (const std::string& name : flags.executors) {
    CompactResult r = BaseResult(flags, *job, place, fs_type);
    r.executor = name;
    std::unique_ptr<accelkv::CompactionExecutor> owned;
    accelkv::CompactionExecutor* executor = nullptr;
    accelkv::GpuCompactionExecutor* gpu_executor = nullptr;
    bool reuse_reference = false;
    if (name == "cpu") {
      r.device = "cpu";
      r.threads = threads;
      reuse_reference = threads == 1;
      owned = std::make_unique<accelkv::CpuCompactionExecutor>(threads);
      executor = owned.get();
    } else {
      std::unique_ptr<accelkv::GpuCompactionExecutor> gpu = MakeGpuExecutor(&r.skipped);
      r.threads = 1;
      if (gpu != nullptr) {
        r.device = gpu->DeviceName();
        accelkv::CompactionJobSpec probe;
        probe.table_options = job->table_options();  // direct reads: the arena's padding
        probe.compaction = &job->compaction();
        probe.internal_comparator = job->icmp();
        probe.snapshots = job->snapshots();
        if (!gpu->ShouldOffload(probe)) {
          r.skipped = "the job does not fit the device budget of " +
                      std::to_string(gpu->MemoryBudget() >> 20) + " MiB";
        } else {
          gpu_executor = gpu.get();
          owned = std::move(gpu);
          executor = owned.get();
        }
      }
    }
    if (executor == nullptr) {
      human << "compact: " << name << ": skipped: " << r.skipped << "\n";
    } else {
      CompactionJobResult jr = ref_result;
      std::vector<std::string> files = reference;
      double seconds = ref_seconds, cpu_sec = ref_cpu;
      CacheDrop drop = ref_drop;
      if (!reuse_reference) {
        if (name == "gpu" && flags.compact_warmup) {
          s = RunOnce(executor, *job, place, &jr, &files, &seconds, &cpu_sec, &drop);
        }
        const uint64_t chunks_before = gpu_executor ? gpu_executor->GetStats().chunks : 0;
        if (s.ok()) s = RunOnce(executor, *job, place, &jr, &files, &seconds, &cpu_sec, &drop);
        if (gpu_executor != nullptr) r.gpu_chunks = gpu_executor->GetStats().chunks - chunks_before;
      }
      FillMeasured(jr, files, seconds, cpu_sec, drop, &r);
      if (place.disk && place.drop_cache && !drop.dropped && !flags.quiet) {
        human << "compact: " << name << ": the inputs' page cache was not dropped ("
              << drop.resident_bytes << " bytes still cached): reads may not come from the disk\n";
      }
      if (!s.ok()) {
        r.error = s.ToString();
        status = std::max(status, 1);
      } else if (files != reference) {
        r.error = "output differs from the single-threaded CPU executor's";
        status = 2;
      } else {
        r.verified = true;
      }
      if (!r.error.empty()) human << "compact: " << name << ": FAILED: " << r.error << "\n";
    }
    if (json != nullptr) *json << CompactResultToJson(r) << "\n" << std::flush;
    results->push_back(std::move(r));
  }
  return status;
}

std::string CompactResultToJson(const CompactResult& r) {
  JsonLine j;
  j.Add("workload", "compact")
      .Add("engine", "accelkv")
      .Add("executor", r.executor)
      .Add("device", r.device)
      .Add("env", r.env)
      .Add("direct_writes", r.direct_writes)
      .Add("direct_reads", r.direct_reads);
  if (!r.fs_type.empty()) j.Add("fs_type", r.fs_type);
  if (!r.skipped.empty()) j.Add("skipped", r.skipped);
  j.Add("threads", r.threads)
      .Add("subcompactions", r.subcompactions)
      .Add("num", r.num)
      .Add("key_size", r.key_size)
      .Add("value_size", r.value_size)
      .Add("value_size_max", r.value_size_max)
      .Add("seed", r.seed)
      .Add("input_files", r.input_files)
      .Add("input_bytes", r.input_bytes)
      .Add("input_entries", r.input_entries)
      .Add("output_files", r.output_files)
      .Add("output_bytes", r.output_bytes)
      .Add("output_entries", r.output_entries)
      .Add("dropped_entries", r.dropped_entries)
      .Add("seconds", r.seconds)
      .Add("input_gb_per_sec", r.input_gb_per_sec)
      .Add("output_gb_per_sec", r.output_gb_per_sec);
  if (r.env.rfind("disk:", 0) == 0) {
    j.Add("cache_dropped", r.cache_dropped).Add("input_cached_bytes", r.input_cached_bytes);
  }
  j.Add("cpu_sec", r.cpu_sec)
      .Add("executor_cpu_sec", r.executor_cpu_sec)
      .Add("device_busy_us", r.device_busy_us)
      .Add("gpu_chunks", r.gpu_chunks)
      .Add("cpu_sec_per_gb", r.cpu_sec_per_gb);
  JsonLine stages;
  for (const auto& [stage, us] : r.stage_us) stages.Add(stage, us);
  j.AddObject("stage_us", stages);
  JsonLine stage_cpu;
  for (const auto& [stage, cpu] : r.stage_cpu) stage_cpu.Add(stage, cpu);
  j.AddObject("stage_cpu_sec", stage_cpu).Add("verified", r.verified);
  if (!r.error.empty()) j.Add("error", r.error);
  return j.str();
}

std::string FormatCompactTable(const std::vector<CompactResult>& results) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%-8s %-22s %7s %7s %10s %10s %9s %9s %9s %9s %10s %s\n",
                "executor", "device", "threads", "ranges", "input MB", "output MB", "wall s",
                "in GB/s", "out GB/s", "cpu s", "cpu s/GB", "verified");
  out += buf;
  for (const CompactResult& r : results) {
    if (!r.skipped.empty()) {
      std::snprintf(buf, sizeof(buf), "%-8s skipped: %s\n", r.executor.c_str(), r.skipped.c_str());
    } else {
      std::snprintf(buf, sizeof(buf),
                    "%-8s %-22.22s %7d %7d %10.1f %10.1f %9.3f %9.3f %9.3f %9.3f %10.3f %s\n",
                    r.executor.c_str(), r.device.c_str(), r.threads, r.subcompactions,
                    static_cast<double>(r.input_bytes) / 1e6,
                    static_cast<double>(r.output_bytes) / 1e6, r.seconds, r.input_gb_per_sec,
                    r.output_gb_per_sec, r.cpu_sec, r.cpu_sec_per_gb, r.verified ? "yes" : "NO");
    }
    out += buf;
  }
  return out;
}

}  // namespace accelkv_bench
