// Compaction micro-benchmark, CPU executor vs GPU executor on the same job
// (input tables in a MemEnv, output to the MemEnv), run by
// scripts/gpu_all.sh with --gtest_also_run_disabled_tests. 16-byte keys,
// value sizes from ACCELKV_GPU_BENCH_VALUES (default "32,128,1024,4096"),
// ACCELKV_GPU_BENCH_MB of input (default 256) spread over 8 overlapping L0
// files. Prints one "BENCH {json}" line per value size; fails if the two
// executors' outputs differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "compaction/cpu_compaction_executor.h"
#include "gpu/gpu_executor.h"
#include "gpu/gpu_test_util.h"
#include "gpu/key_sort_device.h"
#include "table/table_builder.h"
#include "testutil/test_util.h"
#include "util/filename.h"

namespace accelkv {
namespace {

uint64_t EnvOr(const char* name, uint64_t def) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : def;
}

TEST(GpuBench, DISABLED_CompactCpuVsGpu) {
  std::string reason;
  GpuExecutorOptions options;
  options.min_input_bytes = 0;
  std::unique_ptr<GpuCompactionExecutor> gpu = GpuCompactionExecutor::Create(options, &reason);
  if (gpu == nullptr) {
    // ACCELKV_GPU_DEVICE=host: the host reference device (profiling the
    // CPU-side stages on a machine without a GPU; not a GPU number).
    const char* device = std::getenv("ACCELKV_GPU_DEVICE");
    if (device == nullptr || std::string(device) != "host") GTEST_SKIP() << reason;
    gpu = std::make_unique<GpuCompactionExecutor>(options, gpu::NewHostKeySortDevice(8ull << 30));
  }
  const uint64_t total_bytes = EnvOr("ACCELKV_GPU_BENCH_MB", 256) << 20;
  std::vector<uint64_t> value_sizes;
  {
    const char* v = std::getenv("ACCELKV_GPU_BENCH_VALUES");
    std::stringstream ss(v != nullptr ? v : "32,128,1024,4096");
    std::string item;
    while (std::getline(ss, item, ',')) value_sizes.push_back(std::stoull(item));
  }
  std::unique_ptr<Env> env(NewMemEnv(Env::Default()));
  const std::string dbname = "/bench";
  ASSERT_TRUE(env->CreateDir(dbname).ok());
  InternalKeyComparator icmp(BytewiseComparator());
  TableOptions topt;
  topt.comparator = &icmp;
  topt.user_comparator = BytewiseComparator();
  Random rnd(test::TestSeed());
  constexpr int kFiles = 8;
  for (uint64_t value_size : value_sizes) {
    const uint64_t per_file = total_bytes / kFiles / (16 + 8 + value_size + 8);
    Compaction::Params p;
    p.level = 0;
    p.output_level = 1;
    SequenceNumber seq = 1;
    for (int f = 0; f < kFiles; ++f) {
      std::vector<std::string> keys(per_file);
      for (std::string& k : keys) k = test::RandomString(&rnd, 16);
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      auto meta = std::make_shared<FileMetaData>();
      meta->number = f + 1;
      std::unique_ptr<WritableFile> file;
      ASSERT_TRUE(env->NewWritableFile(TableFileName(dbname, meta->number), &file).ok());
      TableBuilder builder(topt, file.get());
      const std::string value = test::RandomString(&rnd, value_size);
      std::string ikey;
      for (const std::string& k : keys) {
        ikey.clear();
        AppendInternalKey(&ikey, ParsedInternalKey(k, seq++, ValueType::kValue));
        builder.Add(ikey, value);
      }
      ASSERT_TRUE(builder.Finish().ok());
      ASSERT_TRUE(file->Close().ok());
      meta->file_size = builder.FileSize();
      meta->smallest.DecodeFrom(builder.properties().smallest_key);
      meta->largest.DecodeFrom(builder.properties().largest_key);
      meta->num_entries = builder.NumEntries();
      p.inputs[0].push_back(meta);
    }
    test::GpuJob job;
    job.compaction = std::make_unique<Compaction>(p, &icmp);
    CpuCompactionExecutor cpu;
    // cpu; gpu cold (the default encode mode); then warm, keys-only (the CPU
    // assembles the blocks) and device-encode (the GPU builds them).
    constexpr int kRuns = 4;
    CompactionJobResult results[kRuns];
    std::map<uint64_t, std::string> files[kRuns];
    double wall[kRuns];
    CompactionExecutor* executors[kRuns] = {&cpu, gpu.get(), gpu.get(), gpu.get()};
    const char* modes[kRuns] = {nullptr, nullptr, "cpu", "device"};
    for (int e = 0; e < kRuns; ++e) {
      if (modes[e] != nullptr) {
        ::setenv("ACCELKV_GPU_ENCODE", modes[e], 1);
      } else {
        ::unsetenv("ACCELKV_GPU_ENCODE");
      }
      const auto t0 = std::chrono::steady_clock::now();
      Status s = test::RunAndCapture(executors[e], env.get(), dbname, topt, &icmp, job, &results[e],
                                     &files[e]);
      wall[e] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    ::unsetenv("ACCELKV_GPU_ENCODE");
    for (int e = 1; e < kRuns; ++e) {
      EXPECT_TRUE(files[0] == files[e]) << "GPU output differs from CPU output (run " << e << ")";
    }
    const double in_gb = static_cast<double>(job.compaction->TotalInputBytes()) / 1e9;
    std::ostringstream json;
    json << "{\"value_size\":" << value_size
         << ",\"input_bytes\":" << job.compaction->TotalInputBytes()
         << ",\"entries\":" << results[0].input_entries;
    const char* names[kRuns] = {"cpu", "gpu_cold", "gpu_keys_only", "gpu_device_encode"};
    for (int e = 0; e < kRuns; ++e) {
      json << ",\"" << names[e] << "\":{\"wall_s\":" << wall[e]
           << ",\"gb_per_s\":" << in_gb / wall[e] << ",\"cpu_s\":" << results[e].cpu_seconds
           << ",\"stage_us\":{";
      bool first = true;
      for (const auto& [stage, us] : results[e].stage_micros) {
        json << (first ? "" : ",") << "\"" << stage << "\":" << us;
        first = false;
      }
      json << "}}";
    }
    json << "}";
    std::printf("BENCH %s\n", json.str().c_str());
    std::fflush(stdout);
    for (int f = 1; f <= kFiles; ++f) env->RemoveFile(TableFileName(dbname, f));
  }
}

}  // namespace
}  // namespace accelkv
