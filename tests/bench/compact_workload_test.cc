// The compact workload: its flags, the job's expected output, and a small
// run of both executors (the GPU one on its host reference device) whose
// outputs must verify.
#if defined(ACCELKV_BENCH_TESTLIB) && defined(ACCELKV_BENCH_WITH_ACCELKV)

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
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
  EXPECT_FALSE(CompactJob::Build(CompactJobShape{.num = 10, .l0_files = 0}, env.get(), "/k", &job)
                   .ok());
}

TEST(CompactWorkload, BothExecutorsVerify) {
  ::setenv("ACCELKV_GPU_DEVICE", "host", 1);
  BenchFlags f;
  std::string error;
  ASSERT_TRUE(Parse({"--workload=compact", "--num=20000", "--value-size=64", "--threads=3",
                     "--target-file-size=262144", "--quiet"},
                    &f, &error))
      << error;
  std::ostringstream human, json;
  std::vector<CompactResult> results;
  EXPECT_EQ(0, RunCompactWorkload(f, human, &json, &results)) << human.str();
  ::unsetenv("ACCELKV_GPU_DEVICE");
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
  const std::string lines = json.str();
  for (const char* field : {"\"workload\":\"compact\"", "\"executor\":\"gpu\"", "\"stage_us\":{",
                            "\"cpu_sec_per_gb\":", "\"verified\":true"}) {
    EXPECT_NE(std::string::npos, lines.find(field)) << field;
  }
  EXPECT_NE(std::string::npos, FormatCompactTable(results).find("host-reference"));
}

}  // namespace
}  // namespace accelkv_bench

#endif
