// The GPU compaction executor inside a database (docs/GPU.md, "Decision
// policy" and "Faults"): forced GPU compactions produce what the oracle
// says, a failure at any GPU stage reruns the job on the CPU and loses
// nothing (also a failed encode after some outputs were written: jobs are
// encoded one table per chunk here), and Open reports the GPU status in LOG and accelkv.stats.
//
// Where no CUDA GPU is usable the tests set ACCELKV_GPU_DEVICE=host, so the
// executor runs its stages on the CPU reference device: the DB wiring, the
// decision and the fallback are covered everywhere; on the GPU machine the
// same tests drive the CUDA device. Reaches below the public API only for
// the failure-injection hook (GpuCompactionExecutor::SetInjectedFailure).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "accelkv/db.h"
#include "accelkv/write_batch.h"
#include "db/db_test_util.h"
#include "env/posix_direct_random_access_file.h"
#include "gpu/gpu_executor.h"
#include "gpu/key_sort_device.h"
#include "testutil/test_util.h"

namespace accelkv {
namespace {

using test::S;

// Uses the CUDA device when one works, else the host reference device.
void ChooseGpuDevice() {
  if (std::getenv("ACCELKV_GPU_DEVICE") != nullptr) return;
  Options probe;
  probe.gpu_compaction = GpuCompaction::kForce;
  std::string line;
  if (NewDatabaseGpuExecutor(probe, &line) == nullptr) {
    std::fprintf(stderr, "db_gpu_test: %s; using ACCELKV_GPU_DEVICE=host\n", line.c_str());
    ::setenv("ACCELKV_GPU_DEVICE", "host", 1);
  }
}

// A JSON number after "key": in the stats JSON's "gpu" executor object; 0 if absent.
uint64_t GpuExecutorCounter(DB* db, const std::string& key) {
  std::string json;
  if (!db->GetProperty("accelkv.stats.json", &json)) return 0;
  const size_t gpu = json.find("\"executors\":{");
  if (gpu == std::string::npos) return 0;
  const size_t obj = json.find("\"gpu\":{", gpu);
  if (obj == std::string::npos) return 0;
  const size_t at = json.find("\"" + key + "\":", obj);
  if (at == std::string::npos) return 0;
  return std::strtoull(json.c_str() + at + key.size() + 3, nullptr, 10);
}

class DBGpuTest : public testing::Test {
 protected:
  // Device-encode jobs are encoded one output table per chunk, so a failed
  // encode can follow written files, which the fallback must remove.
  void SetUp() override {
    ChooseGpuDevice();
    GpuCompactionExecutor::SetInjectedFailure(GpuStage::kNone);
    ::setenv("ACCELKV_GPU_ENCODE_CHUNK_BYTES", "1", 1);
  }
  void TearDown() override {
    GpuCompactionExecutor::SetInjectedFailure(GpuStage::kNone);
    ::unsetenv("ACCELKV_GPU_ENCODE_CHUNK_BYTES");
  }

  Options GpuOptions() {
    Options options = test::SmallTreeOptions(Env::Default());
    options.gpu_compaction = GpuCompaction::kForce;
    return options;
  }

  // Puts, overwrites and deletes over `keys` keys, mirrored in model_, with
  // a snapshot held over part of it; then compacts everything.
  void Load(DB* db, uint64_t seed, int ops, int keys) {
    Random rnd(seed);
    const Snapshot* snap = nullptr;
    for (int i = 0; i < ops; i++) {
      const std::string key = test::KeyOf(rnd.Uniform(keys), 6);
      if (rnd.OneIn(5)) {
        ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
        model_.erase(key);
      } else {
        const std::string value = test::RandomString(&rnd, 1 + rnd.Uniform(300));
        ASSERT_TRUE(db->Put(WriteOptions(), key, value).ok());
        model_[key] = value;
      }
      if (i == ops / 3) snap = db->GetSnapshot();
      if (i == 2 * ops / 3) db->ReleaseSnapshot(snap);
    }
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE(test::WaitForBackgroundWork(db).ok());
  }

  // Matches the model, then closes the database, reopens it with options
  // and matches again.
  void ExpectMatchesModelAcrossReopen(const Options& options, const std::string& dbname,
                                      std::unique_ptr<DB>* db) {
    ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(db->get()));
    ASSERT_TRUE((*db)->Close().ok());
    db->reset();
    ASSERT_TRUE(DB::Open(options, dbname, db).ok());
    ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(db->get()));
  }

  void ExpectMatchesModel(DB* db) {
    std::map<std::string, std::string> all;
    Status s = test::ReadAll(db, ReadOptions(), &all);
    ASSERT_TRUE(s.ok()) << S(s);
    EXPECT_EQ(model_.size(), all.size());
    EXPECT_TRUE(all == model_) << "database contents differ from the model";
  }

  test::TempDir tmp_;
  std::map<std::string, std::string> model_;
};

TEST_F(DBGpuTest, ForcedCompactionsRunOnTheGpuAndMatchTheModel) {
  const std::string dbname = tmp_.File("db");
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(GpuOptions(), dbname, &db).ok());
  ASSERT_NO_FATAL_FAILURE(Load(db.get(), test::TestSeed(), 20000, 3000));
  EXPECT_GT(GpuExecutorCounter(db.get(), "jobs"), 0u);
  EXPECT_EQ(0u, GpuExecutorCounter(db.get(), "fallbacks"));
  // The device worked on those jobs (the host reference device reports its
  // stages as the GPU does).
  EXPECT_GT(GpuExecutorCounter(db.get(), "device_busy_micros"), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesModelAcrossReopen(GpuOptions(), dbname, &db));
}

// A device budget below what the compactions need whole: they run on the
// GPU in chunks at boundaries from their inputs' indexes (docs/GPU.md,
// "Chunked jobs"), lose nothing, and are counted as chunked.
// With max_subcompactions > 1 the jobs bring boundaries of their own, which
// ChunkBoundaries keeps and refines.
TEST_F(DBGpuTest, JobsLargerThanTheDeviceBudgetRunInChunks) {
  const uint64_t slack = gpu::KeySortDevice::BytesNeeded(0, 0, 0, 0);
  for (const int subcompactions : {1, 4}) {
    SCOPED_TRACE("max_subcompactions " + std::to_string(subcompactions));
    model_.clear();
    ::setenv("ACCELKV_GPU_MEMORY_LIMIT", std::to_string(slack + (256 << 10)).c_str(), 1);
    const std::string dbname = tmp_.File("db-" + std::to_string(subcompactions));
    Options options = GpuOptions();
    options.max_subcompactions = subcompactions;
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dbname, &db);
    ::unsetenv("ACCELKV_GPU_MEMORY_LIMIT");
    ASSERT_TRUE(s.ok()) << S(s);
    ASSERT_NO_FATAL_FAILURE(Load(db.get(), test::TestSeed(), 30000, 6000));
    EXPECT_GT(GpuExecutorCounter(db.get(), "chunked_jobs"), 0u);
    EXPECT_EQ(0u, GpuExecutorCounter(db.get(), "fallbacks"));
    std::string stats;
    ASSERT_TRUE(db->GetProperty("accelkv.stats", &stats));
    EXPECT_NE(std::string::npos, stats.find("chunked jobs")) << stats;
    ASSERT_NO_FATAL_FAILURE(ExpectMatchesModelAcrossReopen(options, dbname, &db));
  }
}

// Options::use_direct_io_for_flush_and_compaction: flushes and compactions
// (on the GPU executor, whole and in chunks, and with gpu_compaction off on
// the CPU executor) write their tables with O_DIRECT on the POSIX Env, and
// the GPU executor reads its input tables (or a chunk's parts of them) with
// O_DIRECT too, every read aligned and straight into its arena; the
// database matches its model, also after reopening.
TEST_F(DBGpuTest, DirectIoForFlushAndCompactionLosesNothing) {
  // Whether the file system under the test directory takes O_DIRECT (else
  // the Env falls back to buffered files, which must lose nothing either).
  const std::string probe_file = tmp_.File("probe");
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "probe", probe_file, false).ok());
  std::unique_ptr<RandomAccessFile> probe;
  const bool direct = NewPosixDirectRandomAccessFile(probe_file, IOPriority::kHigh, &probe).ok();
  probe.reset();
  const uint64_t slack = gpu::KeySortDevice::BytesNeeded(0, 0, 0, 0);
  const struct {
    const char* name;
    bool gpu;
    bool chunked;
  } configs[] = {{"gpu executor", true, false},
                 {"gpu executor in chunks", true, true},
                 {"cpu executor", false, false}};
  for (const auto& config : configs) {
    SCOPED_TRACE(config.name);
    model_.clear();
    const std::string dbname = tmp_.File(std::string("db-") + config.name);
    Options options = GpuOptions();
    options.use_direct_io_for_flush_and_compaction = true;
    if (!config.gpu) options.gpu_compaction = GpuCompaction::kOff;
    if (config.chunked) {
      // 1 MiB beyond the slack (JobsLargerThanTheDeviceBudgetRunInChunks
      // has 256 KiB): a chunk's parts are read as their aligned covers, up
      // to 8 KiB more each, and a range over many tables needs that room.
      ::setenv("ACCELKV_GPU_MEMORY_LIMIT", std::to_string(slack + (1 << 20)).c_str(), 1);
    }
    std::unique_ptr<DB> db;
    const Status s = DB::Open(options, dbname, &db);
    ::unsetenv("ACCELKV_GPU_MEMORY_LIMIT");
    ASSERT_TRUE(s.ok()) << S(s);
    const DirectReadCounts before = GetDirectReadCounts();
    ASSERT_NO_FATAL_FAILURE(Load(db.get(), test::TestSeed(), 20000, 3000));
    const DirectReadCounts after = GetDirectReadCounts();
    EXPECT_EQ(config.gpu, GpuExecutorCounter(db.get(), "jobs") > 0);
    EXPECT_EQ(0u, GpuExecutorCounter(db.get(), "fallbacks"));
    EXPECT_EQ(config.chunked, GpuExecutorCounter(db.get(), "chunked_jobs") > 0);
    // Only the GPU executor reads with O_DIRECT, and only aligned reads.
    EXPECT_EQ(config.gpu && direct, after.aligned > before.aligned);
    EXPECT_EQ(before.bounced, after.bounced);
    ASSERT_NO_FATAL_FAILURE(ExpectMatchesModelAcrossReopen(options, dbname, &db));
  }
}

TEST_F(DBGpuTest, FailureAtEachStageFallsBackToTheCpuAndLosesNothing) {
  const GpuStage stages[] = {GpuStage::kAlloc, GpuStage::kCopyIn, GpuStage::kVerify,
                             GpuStage::kSort,  GpuStage::kDedup,  GpuStage::kCopyOut,
                             GpuStage::kEncode};
  int round = 0;
  for (GpuStage stage : stages) {
    SCOPED_TRACE(std::string("stage ") + GpuStageName(stage));
    model_.clear();
    const std::string dbname = tmp_.File("db-" + std::to_string(round));
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(GpuOptions(), dbname, &db).ok());
    GpuCompactionExecutor::SetInjectedFailure(stage);
    ASSERT_NO_FATAL_FAILURE(Load(db.get(), test::TestSeed() + round, 6000, 1500));
    GpuCompactionExecutor::SetInjectedFailure(GpuStage::kNone);
    EXPECT_GT(GpuExecutorCounter(db.get(), "fallbacks"), 0u);
    EXPECT_EQ(0u, GpuExecutorCounter(db.get(), "jobs"));
    std::string value;
    ASSERT_TRUE(db->GetProperty("accelkv.stats", &value));
    EXPECT_NE(std::string::npos, value.find("Executor cpu:")) << value;
    ASSERT_NO_FATAL_FAILURE(ExpectMatchesModelAcrossReopen(GpuOptions(), dbname, &db));
    round++;
  }
}

TEST_F(DBGpuTest, OpenWritesTheGpuStatusToLogAndStats) {
  for (GpuCompaction mode : {GpuCompaction::kOff, GpuCompaction::kForce}) {
    const std::string dbname = tmp_.File("db-log-" + std::to_string(static_cast<int>(mode)));
    Options options = test::SmallTreeOptions(Env::Default());
    options.gpu_compaction = mode;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dbname, &db).ok());
    std::string log;
    ASSERT_TRUE(ReadFileToString(Env::Default(), dbname + "/LOG", &log).ok());
    std::string stats;
    ASSERT_TRUE(db->GetProperty("accelkv.stats", &stats));
    const size_t at = log.find("gpu compaction: ");
    ASSERT_NE(std::string::npos, at) << log;
    const std::string line = log.substr(at, log.find('\n', at) - at);
    EXPECT_NE(std::string::npos, stats.find(line)) << stats;
    if (mode == GpuCompaction::kOff) {
      EXPECT_EQ(0u, line.find("gpu compaction: off")) << line;
    } else {
      EXPECT_EQ(0u, line.find("gpu compaction: on, device ")) << line;
    }
  }
}

}  // namespace
}  // namespace accelkv
