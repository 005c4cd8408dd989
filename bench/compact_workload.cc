#include "compact_workload.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "compact_job.h"
#include "compaction/cpu_compaction_executor.h"
#include "gpu/gpu_executor.h"
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
using accelkv::Status;

namespace {

constexpr const char* kDbName = "/compact";

// Runs the job once on executor; *files gets the outputs' bytes in key
// order, and the output files are removed (the next run reuses numbers).
Status RunOnce(accelkv::CompactionExecutor* executor, const CompactJob& job, accelkv::Env* env,
               CompactionJobResult* result, std::vector<std::string>* files, double* seconds,
               double* cpu_sec) {
  accelkv::TableCache cache(kDbName, env, job.table_options(), 1000);
  std::mutex mu;
  uint64_t next = job.first_output_number();
  accelkv::CompactionJobSpec spec;
  spec.dbname = kDbName;
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
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  Status s = executor->Run(spec, result);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *cpu_sec = CpuSeconds() - cpu0;
  files->clear();
  for (const FileMetaData& f : result->outputs) {
    const std::string name = accelkv::TableFileName(kDbName, f.number);
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
        values.Make(key, static_cast<uint32_t>(e.seq), job.shape().value_size, &value);
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

CompactResult BaseResult(const BenchFlags& flags, const CompactJob& job) {
  CompactResult r;
  r.subcompactions = static_cast<int>(job.compaction().subcompaction_boundaries().size() + 1);
  r.num = flags.num;
  r.key_size = flags.key_size;
  r.value_size = flags.value_size;
  r.seed = flags.seed;
  r.input_files = job.input_files();
  r.input_bytes = job.compaction().TotalInputBytes();
  r.input_entries = job.input_entries();
  return r;
}

void FillMeasured(const CompactionJobResult& jr, const std::vector<std::string>& files,
                  double seconds, double cpu_sec, CompactResult* r) {
  r->output_files = files.size();
  for (const std::string& f : files) r->output_bytes += f.size();
  r->output_entries = jr.output_entries;
  r->dropped_entries = jr.dropped_entries;
  r->seconds = seconds;
  const double gb = static_cast<double>(r->input_bytes) / 1e9;
  r->input_gb_per_sec = seconds > 0 ? gb / seconds : 0;
  r->cpu_sec = cpu_sec;
  r->executor_cpu_sec = jr.cpu_seconds;
  r->cpu_sec_per_gb = gb > 0 ? cpu_sec / gb : 0;
  r->stage_us = jr.stage_micros;
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
  shape.l0_files = flags.l0_files;
  shape.l1_files = flags.l1_files;
  shape.seed = flags.seed;
  shape.target_file_size = flags.profile.target_file_size;
  shape.block_size = flags.profile.block_size;
  shape.bloom_bits_per_key = flags.profile.bloom_bits_per_key;
  shape.max_subcompactions = threads;

  std::unique_ptr<accelkv::Env> env(accelkv::NewMemEnv(accelkv::Env::Default()));
  const auto build_start = std::chrono::steady_clock::now();
  std::unique_ptr<CompactJob> job;
  Status s = CompactJob::Build(shape, env.get(), kDbName, &job);
  if (!s.ok()) {
    human << "compact: cannot build the input: " << s.ToString() << "\n";
    return 1;
  }
  const double build_sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();
  if (!flags.quiet) {
    char line[256];
    std::snprintf(
        line, sizeof(line),
        "compact: %zu input files, %.1f MB, %llu entries, %d subcompactions, "
        "built in %.1f s\n",
        job->input_files(), static_cast<double>(job->compaction().TotalInputBytes()) / 1e6,
        static_cast<unsigned long long>(job->input_entries()),
        static_cast<int>(job->compaction().subcompaction_boundaries().size() + 1), build_sec);
    human << line;
  }

  // The reference: one thread, the same boundaries, checked entry by entry.
  accelkv::CpuCompactionExecutor serial(1);
  CompactionJobResult ref_result;
  std::vector<std::string> reference;
  double ref_seconds = 0, ref_cpu = 0;
  s = RunOnce(&serial, *job, env.get(), &ref_result, &reference, &ref_seconds, &ref_cpu);
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
    CompactResult r = BaseResult(flags, *job);
    r.executor = name;
    std::unique_ptr<accelkv::CompactionExecutor> owned;
    accelkv::CompactionExecutor* executor = nullptr;
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
        probe.compaction = &job->compaction();
        probe.internal_comparator = job->icmp();
        probe.snapshots = job->snapshots();
        if (!gpu->ShouldOffload(probe)) {
          r.skipped = "the job does not fit the device budget of " +
                      std::to_string(gpu->MemoryBudget() >> 20) + " MiB";
        } else {
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
      if (!reuse_reference) {
        if (name == "gpu" && flags.compact_warmup) {
          s = RunOnce(executor, *job, env.get(), &jr, &files, &seconds, &cpu_sec);
        }
        if (s.ok()) s = RunOnce(executor, *job, env.get(), &jr, &files, &seconds, &cpu_sec);
      }
      FillMeasured(jr, files, seconds, cpu_sec, &r);
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
      .Add("device", r.device);
  if (!r.skipped.empty()) j.Add("skipped", r.skipped);
  j.Add("threads", r.threads)
      .Add("subcompactions", r.subcompactions)
      .Add("num", r.num)
      .Add("key_size", r.key_size)
      .Add("value_size", r.value_size)
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
      .Add("cpu_sec", r.cpu_sec)
      .Add("executor_cpu_sec", r.executor_cpu_sec)
      .Add("cpu_sec_per_gb", r.cpu_sec_per_gb);
  JsonLine stages;
  for (const auto& [stage, us] : r.stage_us) stages.Add(stage, us);
  j.AddObject("stage_us", stages).Add("verified", r.verified);
  if (!r.error.empty()) j.Add("error", r.error);
  return j.str();
}

std::string FormatCompactTable(const std::vector<CompactResult>& results) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%-8s %-22s %7s %7s %10s %10s %9s %9s %9s %10s %s\n", "executor",
                "device", "threads", "ranges", "input MB", "output MB", "wall s", "in GB/s",
                "cpu s", "cpu s/GB", "verified");
  out += buf;
  for (const CompactResult& r : results) {
    if (!r.skipped.empty()) {
      std::snprintf(buf, sizeof(buf), "%-8s skipped: %s\n", r.executor.c_str(), r.skipped.c_str());
    } else {
      std::snprintf(
          buf, sizeof(buf), "%-8s %-22.22s %7d %7d %10.1f %10.1f %9.3f %9.3f %9.3f %10.3f %s\n",
          r.executor.c_str(), r.device.c_str(), r.threads, r.subcompactions,
          static_cast<double>(r.input_bytes) / 1e6, static_cast<double>(r.output_bytes) / 1e6,
          r.seconds, r.input_gb_per_sec, r.cpu_sec, r.cpu_sec_per_gb, r.verified ? "yes" : "NO");
    }
    out += buf;
  }
  return out;
}

}  // namespace accelkv_bench
