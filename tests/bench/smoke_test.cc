// CI smoke test: every workload on every engine at tiny size through the
// runner, checking the JSON lines; and the benchmark's own correctness
// checks: engines that return wrong data, lose writes or resurrect deletes
// make the run fail.
#ifdef ACCELKV_BENCH_TESTLIB

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cpu_stress.h"
#include "flags.h"
#include "report.h"
#include "runner.h"
#include "testutil/test_util.h"
#include "workload.h"

namespace accelkv_bench {
namespace {

std::string AllWorkloadNames() {
  std::string list;
  for (const WorkloadInfo& w : AllWorkloads()) list += (list.empty() ? "" : ",") + w.name;
  return list;
}

// One seed per test binary run: a database written under one seed only
// verifies under the same seed.
uint64_t RunSeed() {
  static const uint64_t seed = accelkv::test::TestSeed();
  return seed;
}

BenchFlags MakeFlags(const std::string& dir, std::vector<std::string> extra) {
  std::vector<std::string> args = {"accelkv-bench", "--db=" + dir, "--quiet", "--num=2000",
                                   "--seed=" + std::to_string(RunSeed())};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  BenchFlags flags;
  std::string error;
  EXPECT_TRUE(ParseFlags(static_cast<int>(argv.size()), argv.data(), &flags, &error)) << error;
  return flags;
}

// The raw text of field `name` in a one-line JSON object ("" if absent).
std::string JsonField(const std::string& line, const std::string& name) {
  const std::string needle = "\"" + name + "\":";
  const size_t at = line.find(needle);
  if (at == std::string::npos) return "";
  size_t start = at + needle.size();
  size_t end = start;
  if (line[start] == '"') {
    for (end = start + 1; end < line.size() && line[end] != '"'; end++) {
      if (line[end] == '\\') end++;
    }
    return line.substr(start, end + 1 - start);
  }
  while (end < line.size() && line[end] != ',' && line[end] != '}') end++;
  return line.substr(start, end - start);
}

// The --stress-cpu threads' CPU over a workload is reported apart from the
// process's (stress_cpu_sec; cpu_sec excludes it), 0 without them.
TEST(Smoke, StressThreadsCpuIsReportedApart) {
  accelkv::test::TempDir dir;
  const BenchFlags flags =
      MakeFlags(dir.path(), {"--workload=fillrandom", "--engine=accelkv", "--num=20000"});
  CpuStress stress;
  stress.Start(1);
  Runner stressed(flags, nullptr, &stress);
  std::vector<WorkloadResult> results;
  std::string error;
  ASSERT_TRUE(stressed.RunEngine("accelkv", &results, &error)) << error;
  stress.Stop();
  ASSERT_EQ(1u, results.size());
  EXPECT_GT(results[0].stress_cpu_sec, 0.0);
  EXPECT_LE(results[0].stress_cpu_sec, stress.CpuSeconds());
  Runner plain(flags, nullptr, nullptr);
  results.clear();
  ASSERT_TRUE(plain.RunEngine("accelkv", &results, &error)) << error;
  ASSERT_EQ(1u, results.size());
  EXPECT_EQ(0.0, results[0].stress_cpu_sec);
}

TEST(Smoke, EveryWorkloadOnEveryEngine) {
  accelkv::test::TempDir dir;
  const BenchFlags flags = MakeFlags(dir.path(), {"--workload=" + AllWorkloadNames()});
  Runner runner(flags, nullptr, nullptr);
  std::vector<std::string> lines;
  runner.SetResultCallback([&](const WorkloadResult& r) {
    lines.push_back(ResultToJson(r, /*include_engine_stats=*/false));
  });
  for (const std::string& engine : AvailableEngines()) {
    std::vector<WorkloadResult> results;
    std::string error;
    ASSERT_TRUE(runner.RunEngine(engine, &results, &error)) << error;
    ASSERT_EQ(results.size(), AllWorkloads().size());
  }
  ASSERT_EQ(lines.size(), AvailableEngines().size() * AllWorkloads().size());
  const std::vector<std::string> required = {
      "engine",      "workload",       "num",        "threads",    "key_size",      "value_size",
      "ops_per_sec", "mb_per_sec",     "lat_us_p50", "lat_us_p99", "lat_us_p999",   "write_amp",
      "cpu_sec",     "peak_rss_bytes", "verified",   "space_amp",  "stress_cpu_sec"};
  std::map<std::string, std::string> by_run;
  for (const std::string& line : lines) {
    SCOPED_TRACE(line);
    ASSERT_EQ(line.front(), '{');
    ASSERT_EQ(line.back(), '}');
    for (const std::string& field : required) EXPECT_NE(JsonField(line, field), "") << field;
    EXPECT_EQ(JsonField(line, "verified"), "true");
    EXPECT_EQ(JsonField(line, "num"), "2000");
    EXPECT_EQ(JsonField(line, "threads"), "1");
    EXPECT_GT(std::strtod(JsonField(line, "ops_per_sec").c_str(), nullptr), 0.0);
    EXPECT_GT(std::strtoull(JsonField(line, "peak_rss_bytes").c_str(), nullptr, 10), 0u);
    by_run[JsonField(line, "engine") + JsonField(line, "workload")] = line;
  }
  for (const std::string& engine : AvailableEngines()) {
    const std::string fill = by_run["\"" + engine + "\"\"fillseq\""];
    const std::string read = by_run["\"" + engine + "\"\"readrandom\""];
    const std::string missing = by_run["\"" + engine + "\"\"readmissing\""];
    // Writes are measured, reads after fillseq all find their key.
    EXPECT_GT(std::strtod(JsonField(fill, "write_amp").c_str(), nullptr), 0.0) << fill;
    EXPECT_EQ(JsonField(read, "reads_found"), "2000") << read;
    EXPECT_EQ(JsonField(missing, "reads_not_found"), "2000") << missing;
  }
}

TEST(Smoke, ConcurrentMixedWorkloadsVerify) {
  accelkv::test::TempDir dir;
  const BenchFlags flags =
      MakeFlags(dir.path(), {"--threads=3", "--ops=3000",
                             "--workload=fillrandom,readwhilewriting,deleterandom,readrandom,"
                             "ycsb-load,ycsb-a,ycsb-d,ycsb-e,ycsb-f"});
  Runner runner(flags, nullptr, nullptr);
  for (const std::string& engine : AvailableEngines()) {
    std::vector<WorkloadResult> results;
    std::string error;
    ASSERT_TRUE(runner.RunEngine(engine, &results, &error)) << error;
    for (const WorkloadResult& r : results) {
      EXPECT_TRUE(r.verified) << r.engine << " " << r.workload;
      EXPECT_GT(r.ops, 0u);
    }
  }
}

TEST(Smoke, DurationModeAndReuseOfAnExistingDatabase) {
  accelkv::test::TempDir dir;
  {
    const BenchFlags flags = MakeFlags(dir.path(), {"--engine=leveldb", "--workload=fillseq"});
    Runner runner(flags, nullptr, nullptr);
    std::vector<WorkloadResult> results;
    std::string error;
    ASSERT_TRUE(runner.RunEngine("leveldb", &results, &error)) << error;
  }
  const BenchFlags flags = MakeFlags(dir.path(), {"--engine=leveldb", "--workload=readrandom",
                                                  "--use-existing", "--duration=0.3"});
  Runner runner(flags, nullptr, nullptr);
  std::vector<WorkloadResult> results;
  std::string error;
  ASSERT_TRUE(runner.RunEngine("leveldb", &results, &error)) << error;
  ASSERT_EQ(results.size(), 1u);
  EXPECT_GT(results[0].ops, 0u);
  EXPECT_GE(results[0].seconds, 0.3);
  EXPECT_EQ(results[0].reads_found, results[0].ops) << "the first run's keys are there";

  // The same database read under another seed holds values this run cannot
  // have written: verification must say so.
  const BenchFlags other =
      MakeFlags(dir.path(), {"--engine=leveldb", "--workload=readrandom", "--use-existing",
                             "--ops=100", "--seed=" + std::to_string(RunSeed() + 1)});
  Runner other_runner(other, nullptr, nullptr);
  results.clear();
  EXPECT_FALSE(other_runner.RunEngine("leveldb", &results, &error));
  EXPECT_NE(error.find("wrong value"), std::string::npos) << error;
}

// --time-limit stops a load that is not done, reports the ops it did (and
// says so), skips the compaction wait, and the keys it wrote read back.
TEST(Smoke, TimeLimitStopsALoadAndItsKeysVerify) {
  accelkv::test::TempDir dir;
  const std::string engine = AvailableEngines().front();
  const BenchFlags flags =
      MakeFlags(dir.path(), {"--engine=" + engine, "--workload=fillrandom,readrandom",
                             "--num=3000000", "--ops=2000", "--time-limit=0.2"});
  Runner runner(flags, nullptr, nullptr);
  std::vector<std::string> lines;
  runner.SetResultCallback([&](const WorkloadResult& r) {
    lines.push_back(ResultToJson(r, /*include_engine_stats=*/false));
  });
  std::vector<WorkloadResult> results;
  std::string error;
  ASSERT_TRUE(runner.RunEngine(engine, &results, &error)) << error;
  ASSERT_EQ(results.size(), 2u);
  const WorkloadResult& fill = results[0];
  EXPECT_TRUE(fill.time_limited);
  EXPECT_GT(fill.ops, 0u);
  EXPECT_LT(fill.ops, 3000000u);
  EXPECT_GE(fill.seconds, 0.2);
  EXPECT_LT(fill.seconds, 30.0);
  EXPECT_EQ(fill.compaction_wait_sec, 0.0);
  EXPECT_TRUE(fill.verified);
  EXPECT_EQ(JsonField(lines[0], "time_limited"), "true");
  EXPECT_EQ(JsonField(lines[0], "ops"), std::to_string(fill.ops));
  const WorkloadResult& read = results[1];  // 2000 reads finish well within the limit
  EXPECT_FALSE(read.time_limited);
  EXPECT_EQ(read.ops, 2000u);
  EXPECT_TRUE(read.verified);
  EXPECT_EQ(JsonField(lines[1], "time_limited"), "false");
  EXPECT_NE(FormatTable(results).find('*'), std::string::npos);
}

// An engine that forwards to a real one and misbehaves as told.
class FaultyEngine : public Engine {
 public:
  enum class Fault { kCorruptGet, kDropPut, kIgnoreDelete, kCorruptScan, kFailPut };
  FaultyEngine(std::unique_ptr<Engine> base, Fault fault) : base_(std::move(base)), fault_(fault) {}

  std::string Name() const override { return base_->Name(); }
  EngineStatus Open(const std::string& p, const EngineProfile& prof) override {
    return base_->Open(p, prof);
  }
  EngineStatus DestroyStore(const std::string& p) override { return base_->DestroyStore(p); }
  std::string EffectiveOptions() const override { return base_->EffectiveOptions(); }
  EngineStatus Put(std::string_view k, std::string_view v) override {
    const uint64_t n = ++puts_;
    if (fault_ == Fault::kDropPut && n % 10 == 0) return EngineStatus::Ok();
    if (fault_ == Fault::kFailPut && n == 700) return EngineStatus::Error("injected I/O error");
    return base_->Put(k, v);
  }
  EngineStatus Get(std::string_view k, std::string* v) override {
    EngineStatus s = base_->Get(k, v);
    if (fault_ == Fault::kCorruptGet && s.ok() && ++gets_ == 100) (*v)[v->size() / 2] ^= 1;
    return s;
  }
  EngineStatus Delete(std::string_view k) override {
    if (fault_ == Fault::kIgnoreDelete) return EngineStatus::Ok();
    return base_->Delete(k);
  }
  EngineStatus Write(const std::vector<std::pair<std::string, std::string>>& puts) override {
    return base_->Write(puts);
  }
  std::unique_ptr<Cursor> NewCursor() override {
    std::unique_ptr<Cursor> c = base_->NewCursor();
    if (fault_ != Fault::kCorruptScan) return c;
    return std::make_unique<CorruptCursor>(std::move(c));
  }
  EngineStatus WaitForCompactions() override { return base_->WaitForCompactions(); }
  std::string Stats() override { return base_->Stats(); }
  EngineStatus Close() override { return base_->Close(); }

 private:
  class CorruptCursor : public Cursor {
   public:
    explicit CorruptCursor(std::unique_ptr<Cursor> c) : c_(std::move(c)) {}
    void Seek(std::string_view t) override { c_->Seek(t); }
    void SeekToFirst() override { c_->SeekToFirst(); }
    bool Valid() const override { return c_->Valid(); }
    void Next() override { c_->Next(); }
    std::string_view key() const override { return c_->key(); }
    std::string_view value() const override {
      const std::string_view v = c_->value();
      return v.substr(0, v.size() - 1);  // one byte short
    }
    EngineStatus status() const override { return c_->status(); }

   private:
    std::unique_ptr<Cursor> c_;
  };

  std::unique_ptr<Engine> base_;
  Fault fault_;
  std::atomic<uint64_t> puts_{0}, gets_{0};
};

struct FaultCase {
  FaultyEngine::Fault fault;
  const char* workloads;
  const char* expected_error;
};

class FaultTest : public ::testing::TestWithParam<FaultCase> {};

TEST_P(FaultTest, TheRunFailsLoudly) {
  const FaultCase& c = GetParam();
  accelkv::test::TempDir dir;
  const BenchFlags flags =
      MakeFlags(dir.path(), {"--engine=leveldb", std::string("--workload=") + c.workloads});
  Runner runner(flags, nullptr, nullptr);
  std::vector<WorkloadResult> results;
  std::string error;
  auto engine = std::make_unique<FaultyEngine>(CreateEngine("leveldb"), c.fault);
  EXPECT_FALSE(runner.RunEngine("leveldb", std::move(engine), &results, &error));
  EXPECT_NE(error.find(c.expected_error), std::string::npos) << error;
  ASSERT_FALSE(results.empty());
  EXPECT_FALSE(results.back().verified);
  EXPECT_EQ(JsonField(ResultToJson(results.back(), false), "verified"), "false");
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FaultTest,
    ::testing::Values(
        FaultCase{FaultyEngine::Fault::kCorruptGet, "fillseq,readrandom", "wrong value"},
        FaultCase{FaultyEngine::Fault::kDropPut, "fillseq,readseq,readrandom", "not found"},
        FaultCase{FaultyEngine::Fault::kIgnoreDelete, "fillseq,deleterandom,readrandom",
                  "expected one in"},
        FaultCase{FaultyEngine::Fault::kCorruptScan, "fillseq,seekrandom",
                  "scan returned a wrong value"},
        FaultCase{FaultyEngine::Fault::kFailPut, "fillseq", "injected I/O error"}));

}  // namespace
}  // namespace accelkv_bench

#endif  // ACCELKV_BENCH_TESTLIB
