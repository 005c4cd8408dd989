// The compact workload: its flags, the job's expected output, a small run
// of both executors (the GPU one on its host reference device) whose outputs
// must verify, and a run on the file system (--compact-dir).
#if defined(ACCELKV_BENCH_TESTLIB) && defined(ACCELKV_BENCH_WITH_ACCELKV)

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compact_job.h"
#include "compact_workload.h"
#include "flags.h"

namespace accelkv_bench {
namespace {

bool Parse(std::vector<const char*> args, BenchFlags* flags, std::string* error) {
  args.insert(args.begin(), "accelkv-bench");
  return ParseFlags(static_cast<int>(args.size()), args.data(), flags, error);
}

TEST(CompactFlags, RunsAloneWithKnownExecutors) {
  BenchFlags f;
  std::string error;
  ASSERT_TRUE(Parse({"--workload=compact", "--threads=3", "--executor=cpu"}, &f, &error)) << error;
  EXPECT_TRUE(IsCompactRun(f));
  EXPECT_TRUE(f.threads_given);
  EXPECT_EQ(std::vector<std::string>{"cpu"}, f.executors);
  BenchFlags g;
  EXPECT_FALSE(Parse({"--workload=compact,readrandom"}, &g, &error));
  BenchFlags h;
  EXPECT_FALSE(Parse({"--workload=compact", "--executor=tpu"}, &h, &error));
  BenchFlags d;
  ASSERT_TRUE(Parse({"--workload=fillrandom"}, &d, &error)) << error;
  EXPECT_FALSE(IsCompactRun(d));
  EXPECT_FALSE(d.threads_given);
  BenchFlags m;
  ASSERT_TRUE(
      Parse({"--workload=compact", "--value-size=64", "--compact-value-size-max=64"}, &m, &error))
      << error;
  EXPECT_EQ(64u, m.compact_value_size_max);
  BenchFlags n;
  EXPECT_FALSE(
      Parse({"--workload=compact", "--value-size=64", "--compact-value-size-max=63"}, &n, &error));
}

// --compact-value-size-max: sizes spread over the range, the same for a key
// and version every time (the outputs are checked against them).
TEST(CompactJob, ValueSizesSpreadOverTheRange) {
  CompactJobShape shape;
  shape.value_size = 100;
  EXPECT_EQ(100u, shape.ValueSize(7, 3));
  shape.value_size_max = 1100;
  size_t low = 0, high = 0;
  for (uint64_t k = 0; k < 2000; ++k) {
    const size_t size = shape.ValueSize(k, k % 5);
    ASSERT_GE(size, 100u);
    ASSERT_LE(size, 1100u);
    EXPECT_EQ(size, shape.ValueSize(k, k % 5));
    low += size < 350 ? 1 : 0;
    high += size > 850 ? 1 : 0;
  }
  EXPECT_GT(low, 300u);  // about a quarter each
  EXPECT_GT(high, 300u);
}

TEST(CompactJob, ExpectedOutputFollowsTheGcRule) {
  std::unique_ptr<accelkv::Env> env(accelkv::NewMemEnv(accelkv::Env::Default()));
  CompactJobShape shape;
  shape.num = 4000;
  shape.value_size = 32;
  shape.l0_files = 4;
  shape.l1_files = 4;
  shape.max_subcompactions = 3;
  std::unique_ptr<CompactJob> job;
  ASSERT_TRUE(CompactJob::Build(shape, env.get(), "/j", &job).ok());
  EXPECT_EQ(8u, job->input_files());
  EXPECT_EQ(2u, job->compaction().subcompaction_boundaries().size());
  ASSERT_EQ(1u, job->snapshots().size());
  // Some versions are dropped, and some kept only for the snapshot.
  EXPECT_LT(job->expected().size(), job->input_entries());
  size_t same_key = 0;
  for (size_t i = 1; i < job->expected().size(); i++) {
    const CompactExpectedEntry& a = job->expected()[i - 1];
    const CompactExpectedEntry& b = job->expected()[i];
    ASSERT_TRUE(a.key_index < b.key_index || (a.key_index == b.key_index && a.seq > b.seq));
    if (a.key_index == b.key_index) {
      same_key++;
      // Two versions of a key survive only on both sides of the snapshot.
      EXPECT_GT(a.seq, job->snapshots()[0]);
      EXPECT_LE(b.seq, job->snapshots()[0]);
    }
  }
  EXPECT_GT(same_key, 0u);
  EXPECT_FALSE(
      CompactJob::Build(CompactJobShape{.num = 10, .l0_files = 0}, env.get(), "/k", &job).ok());
}

// Runs the compact workload in memory with args (the GPU executor on the
// host reference device): *results, and the JSON lines in *json.
void RunInMemory(std::vector<const char*> args, std::vector<CompactResult>* results,
                 std::string* json) {
  BenchFlags f;
  std::string error;
  ASSERT_TRUE(Parse(std::move(args), &f, &error)) << error;
  ::setenv("ACCELKV_GPU_DEVICE", "host", 1);
  std::ostringstream human, lines;
  EXPECT_EQ(0, RunCompactWorkload(f, human, &lines, results)) << human.str();
  ::unsetenv("ACCELKV_GPU_DEVICE");
  *json = lines.str();
}

TEST(CompactWorkload, BothExecutorsVerify) {
  std::vector<CompactResult> results;
  std::string lines;
  RunInMemory({"--workload=compact", "--num=20000", "--value-size=64", "--threads=3",
               "--target-file-size=262144", "--quiet"},
              &results, &lines);
  ASSERT_EQ(2u, results.size());
  for (const CompactResult& r : results) {
    EXPECT_TRUE(r.skipped.empty()) << r.skipped;
    EXPECT_TRUE(r.verified) << r.executor << ": " << r.error;
    EXPECT_EQ(3, r.subcompactions);
    EXPECT_GT(r.output_files, 3u);
    EXPECT_EQ(results[0].output_bytes, r.output_bytes);
    EXPECT_EQ(results[0].output_entries, r.output_entries);
    EXPECT_GT(r.input_gb_per_sec, 0.0);
  }
  EXPECT_EQ("host-reference", results[1].device);
  for (const char* field :
       {"\"workload\":\"compact\"", "\"executor\":\"gpu\"", "\"env\":\"mem\"", "\"stage_us\":{",
        "\"cpu_sec_per_gb\":", "\"output_gb_per_sec\":", "\"verified\":true"}) {
    EXPECT_NE(std::string::npos, lines.find(field)) << field;
  }
  EXPECT_EQ(std::string::npos, lines.find("\"cache_dropped\":")) << "in memory: no page cache";
  EXPECT_NE(std::string::npos, FormatCompactTable(results).find("host-reference"));
}

// Values of mixed sizes (small, and large enough for blocks of their own):
// both executors verify against the generator.
TEST(CompactWorkload, MixedValueSizesVerify) {
  std::vector<CompactResult> results;
  std::string lines;
  RunInMemory({"--workload=compact", "--num=3000", "--value-size=16",
               "--compact-value-size-max=40000", "--threads=2", "--quiet"},
              &results, &lines);
  ASSERT_EQ(2u, results.size());
  for (const CompactResult& r : results) {
    EXPECT_TRUE(r.verified) << r.executor << ": " << r.error;
    EXPECT_EQ(40000u, r.value_size_max);
  }
  EXPECT_NE(std::string::npos, lines.find("\"value_size_max\":40000"));
}

// --compact-dir: the job's files on the file system, the outputs verified,
// the JSON saying where it ran, everything it made removed afterwards.
TEST(CompactWorkload, OnDiskVerifiesAndCleansUp) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("accelkv-compact-disk-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string dir_flag = "--compact-dir=" + dir.string();
  BenchFlags f;
  std::string error;
  ASSERT_TRUE(Parse({"--workload=compact", "--executor=cpu", "--num=6000", "--value-size=32",
                     "--threads=2", "--target-file-size=65536", dir_flag.c_str(), "--quiet"},
                    &f, &error))
      << error;
  EXPECT_EQ(dir.string(), f.compact_dir);
  std::ostringstream human, json;
  std::vector<CompactResult> results;
  ASSERT_EQ(0, RunCompactWorkload(f, human, &json, &results)) << human.str();
  ASSERT_EQ(1u, results.size());
  const CompactResult& r = results[0];
  EXPECT_EQ("disk:" + dir.string(), r.env);
  EXPECT_TRUE(r.verified) << r.error;
  EXPECT_EQ(2, r.subcompactions);
  EXPECT_GT(r.input_bytes, 0u);
  EXPECT_GT(r.output_files, 1u);
  EXPECT_GT(r.output_gb_per_sec, 0.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(r.output_bytes) / 1e9 / r.seconds, r.output_gb_per_sec);
  EXPECT_FALSE(r.fs_type.empty());
  // A dropped cache leaves no input page resident (tmpfs keeps them all).
  if (r.cache_dropped) {
    EXPECT_EQ(0u, r.input_cached_bytes);
  }
  const std::string line = json.str();
  for (const std::string& field :
       {"\"env\":\"disk:" + dir.string() + "\"", std::string("\"cache_dropped\":"),
        std::string("\"input_cached_bytes\":"), std::string("\"output_gb_per_sec\":"),
        std::string("\"verified\":true")}) {
    EXPECT_NE(std::string::npos, line.find(field)) << field << " in " << line;
  }
  // The workload made the directory, so it removes it with every file.
  EXPECT_FALSE(fs::exists(dir));

  // An existing directory is kept, and so are its other files; one that
  // holds table files already is refused (the job would overwrite them).
  fs::create_directories(dir);
  std::ofstream(dir / "keep.txt") << "x";
  std::vector<CompactResult> again;
  std::ostringstream human2;
  EXPECT_EQ(0, RunCompactWorkload(f, human2, nullptr, &again)) << human2.str();
  EXPECT_TRUE(fs::exists(dir / "keep.txt"));
  EXPECT_EQ(1, std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
  std::ofstream(dir / "000007.sst") << "not a table";
  std::vector<CompactResult> refused;
  std::ostringstream human3;
  EXPECT_EQ(1, RunCompactWorkload(f, human3, nullptr, &refused));
  EXPECT_NE(std::string::npos, human3.str().find("holds table files")) << human3.str();
  EXPECT_TRUE(fs::exists(dir / "000007.sst"));
  fs::remove_all(dir);

  // A directory that cannot be made fails the run: the files go there.
  BenchFlags bad = f;
  bad.compact_dir = (dir / "missing-parent" / "job").string();
  std::ostringstream human4;
  EXPECT_EQ(1, RunCompactWorkload(bad, human4, nullptr, &refused));
  EXPECT_NE(std::string::npos, human4.str().find("--compact-dir")) << human4.str();
}

// --compact-direct-reads and --compact-direct-writes on the file system:
// the GPU executor (host reference device) reads its inputs with direct
// I/O, both executors write theirs with it, and the outputs verify; the
// JSON says so.
TEST(CompactWorkload, DirectReadsAndWritesOnDiskVerify) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("accelkv-compact-direct-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string dir_flag = "--compact-dir=" + dir.string();
  BenchFlags f;
  std::string error;
  ASSERT_TRUE(Parse({"--workload=compact", "--executor=cpu,gpu", "--num=6000", "--value-size=32",
                     "--threads=2", "--target-file-size=65536", "--compact-direct-reads=true",
                     "--compact-direct-writes=true", dir_flag.c_str(), "--quiet"},
                    &f, &error))
      << error;
  EXPECT_TRUE(f.compact_direct_reads);
  EXPECT_TRUE(f.compact_direct_writes);
  ::setenv("ACCELKV_GPU_DEVICE", "host", 1);
  std::ostringstream human, json;
  std::vector<CompactResult> results;
  const int status = RunCompactWorkload(f, human, &json, &results);
  ::unsetenv("ACCELKV_GPU_DEVICE");
  ASSERT_EQ(0, status) << human.str();
  ASSERT_EQ(2u, results.size());
  for (const CompactResult& r : results) {
    EXPECT_TRUE(r.skipped.empty()) << r.skipped;
    EXPECT_TRUE(r.verified) << r.executor << ": " << r.error;
    EXPECT_TRUE(r.direct_reads);
    EXPECT_TRUE(r.direct_writes);
  }
  const std::string lines = json.str();
  EXPECT_NE(std::string::npos, lines.find("\"direct_reads\":true")) << lines;
  EXPECT_NE(std::string::npos, lines.find("\"direct_writes\":true")) << lines;
  EXPECT_FALSE(fs::exists(dir));
  BenchFlags d;
  ASSERT_TRUE(Parse({"--workload=compact"}, &d, &error)) << error;
  EXPECT_FALSE(d.compact_direct_reads);
}

}  // namespace
}  // namespace accelkv_bench

#endif
