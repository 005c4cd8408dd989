// Progress lines, CPU stress threads and the process counters the metrics
// come from.
#ifdef ACCELKV_BENCH_TESTLIB

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "cpu_stress.h"
#include "engine.h"
#include "process_metrics.h"
#include "progress.h"
#include "testutil/test_util.h"

namespace accelkv_bench {
namespace {

TEST(Progress, LinesShowCountRateElapsedAndTimeLeft) {
  EXPECT_EQ(ProgressReporter::FormatLine("rocksdb fillseq", 500, 2000, 0, 5.0, 120.4),
            "[rocksdb fillseq] 500/2000 ops (25.0%)  120 ops/s now  5.0 s elapsed  15.0 s left");
  EXPECT_EQ(ProgressReporter::FormatLine("leveldb ycsb-a", 700, 0, 30, 10.0, 70),
            "[leveldb ycsb-a] 700 ops  70 ops/s now  10.0 s elapsed  20.0 s left");
  EXPECT_EQ(ProgressReporter::FormatLine("x", 0, 0, 0, 1.0, 0),
            "[x] 0 ops  0 ops/s now  1.0 s elapsed");
}

TEST(Progress, ReporterPrintsPeriodicallyAndStops) {
  std::ostringstream out;
  std::atomic<uint64_t> done{0};
  {
    ProgressReporter reporter(
        "t", 1000, 0, 0.02, [&] { return done.load(); }, &out);
    for (int i = 0; i < 10; i++) {
      done += 10;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    reporter.Stop();
  }
  const std::string text = out.str();
  EXPECT_NE(text.find("[t] "), std::string::npos) << text;
  EXPECT_NE(text.find("/1000 ops"), std::string::npos) << text;
  std::ostringstream silent;
  ProgressReporter quiet(
      "q", 10, 0, 0, [] { return uint64_t{1}; }, &silent);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  quiet.Stop();
  EXPECT_TRUE(silent.str().empty());
}

TEST(CpuStress, ThreadsBurnCpuAndAccountForIt) {
  CpuStress stress;
  stress.Start(1);
  EXPECT_EQ(stress.running(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  stress.Stop();
  EXPECT_EQ(stress.running(), 0);
  EXPECT_GT(stress.iterations(), 0u);
  // On a loaded 2-core machine the thread gets at least some of 200 ms.
  EXPECT_GT(stress.CpuSeconds(), 0.005);
  EXPECT_LT(stress.CpuSeconds(), 1.0);
}

TEST(ProcessMetrics, DirectoryBytesSumsFilesRecursively) {
  accelkv::test::TempDir dir;
  EXPECT_EQ(DirectoryBytes(dir.path()), 0u);
  EXPECT_EQ(DirectoryBytes(dir.File("absent")), 0u);
  { std::ofstream(dir.File("a")) << std::string(1000, 'a'); }
  ASSERT_EQ(::mkdir(dir.File("sub").c_str(), 0755), 0);
  { std::ofstream(dir.File("sub/b")) << std::string(234, 'b'); }
  EXPECT_EQ(DirectoryBytes(dir.path()), 1234u);
}

TEST(ProcessMetrics, WriteBytesCountWhatTheProcessWrites) {
  const IoCounters before = ReadIoCounters();
  if (!before.available) GTEST_SKIP() << "/proc/self/io is not readable here";
  accelkv::test::TempDir dir;
  const std::string data(4 << 20, 'x');
  FILE* f = std::fopen(dir.File("f").c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), f), data.size());
  ASSERT_EQ(std::fflush(f), 0);
  ASSERT_EQ(::fsync(fileno(f)), 0);
  std::fclose(f);
  const IoCounters after = ReadIoCounters();
  EXPECT_GE(after.wchar - before.wchar, data.size());
  // tmpfs has no block device: nothing reaches storage there.
  if (after.write_bytes != before.write_bytes) {
    EXPECT_GE(after.write_bytes - before.write_bytes, data.size());
  }
}

TEST(ProcessMetrics, CpuAndPeakRssAreMeasured) {
  const double cpu0 = CpuSeconds();
  volatile double x = 1;
  for (int i = 0; i < 20000000; i++) x = x * 1.0000001 + 1e-9;
  EXPECT_GT(CpuSeconds(), cpu0);
  ResetPeakRss();
  const uint64_t base = PeakRssBytes();
  EXPECT_GT(base, 0u);
  {
    // Fresh pages from the kernel, touched: resident. (A 64 MiB std::string
    // could reuse heap memory earlier tests freed, already resident, and
    // leave the peak where it was: 1 run in 4 of the whole binary.)
    const size_t size = size_t{64} << 20;
    void* big = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, big);
    std::memset(big, 'r', size);
    EXPECT_GE(PeakRssBytes(), base + (60u << 20));
    ASSERT_EQ(0, ::munmap(big, size));
  }
  EXPECT_GE(PeakRssBytes(), base + (60u << 20)) << "a peak stays until the next reset";
}

TEST(ParseSize, SuffixesAndOverflow) {
  uint64_t v = 0;
  ASSERT_TRUE(ParseSize("64M", &v));
  EXPECT_EQ(v, 64u << 20);
  ASSERT_TRUE(ParseSize("4kb", &v));
  EXPECT_EQ(v, 4096u);
  ASSERT_TRUE(ParseSize("123", &v));
  EXPECT_EQ(v, 123u);
  EXPECT_FALSE(ParseSize("", &v));
  EXPECT_FALSE(ParseSize("12X", &v));
  EXPECT_FALSE(ParseSize("-1", &v));
  EXPECT_FALSE(ParseSize("99999999999999999999", &v));
  EXPECT_FALSE(ParseSize("17179869184G", &v));
}

}  // namespace
}  // namespace accelkv_bench

#endif  // ACCELKV_BENCH_TESTLIB
