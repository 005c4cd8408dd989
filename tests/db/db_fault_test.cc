// Fault injection: failing WAL appends and syncs, failing table writes and
// syncs in flushes and compactions, a failing MANIFEST, and simulated power
// losses (FaultInjectionEnv's crash model), over the in-memory and the POSIX
// Env. The rules checked:
//   - an error in the write path fails that write and every later one
//     (the background error is sticky); reads keep working;
//   - after reopening on a fresh Env view of the same files, everything
//     acknowledged before the fault is there;
//   - after a simulated power loss, every write acknowledged with sync=true
//     is there (or a later value of the same key).
#include "env/fault_injection_env.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accelkv/db.h"
#include "accelkv/env.h"
#include "db/db_test_util.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

using test::S;

enum class BaseKind { kMem, kPosix };

class DBFaultTest : public ::testing::TestWithParam<BaseKind> {
 protected:
  void SetUp() override {
    if (GetParam() == BaseKind::kMem) {
      mem_ = NewMemEnv(Env::Default());
      base_ = mem_.get();
      dbname_ = "/faultdb";
    } else {
      base_ = Env::Default();
      dbname_ = tmp_.File("db");
    }
    env_ = std::make_unique<FaultInjectionEnv>(base_);
    options_ = test::SmallTreeOptions(env_.get());
  }

  void TearDown() override { db_.reset(); }

  void Open() {
    Status s = DB::Open(options_, dbname_, &db_);
    ASSERT_TRUE(s.ok()) << S(s);
  }

  // Closes the DB (its status may be the background error) and reopens on a
  // fresh FaultInjectionEnv over the same base files, with no faults.
  void ReopenFresh() {
    if (db_) db_->Close();
    db_.reset();
    env_ = std::make_unique<FaultInjectionEnv>(base_);
    options_.env = env_.get();
    options_.create_if_missing = false;
    ASSERT_NO_FATAL_FAILURE(Open());
  }

  Status Put(const std::string& k, const std::string& v, bool sync = false) {
    WriteOptions wo;
    wo.sync = sync;
    Status s = db_->Put(wo, k, v);
    if (s.ok()) acked_[k] = v;
    return s;
  }

  // Writes n acknowledged keys "<prefix><i>" with ~200-byte values.
  void PutMany(const std::string& prefix, int n, bool sync = false) {
    for (int i = 0; i < n; i++) {
      Status s = Put(prefix + test::KeyOf(i, 5), "value-" + prefix + std::string(200, 'x'), sync);
      ASSERT_TRUE(s.ok()) << S(s);
    }
  }

  // Every acknowledged write is readable with its value, through Get and a
  // scan.
  void ExpectAcked() {
    for (const auto& [k, v] : acked_) {
      std::string got;
      Status s = db_->Get(ReadOptions(), k, &got);
      ASSERT_TRUE(s.ok()) << k << ": " << S(s);
      ASSERT_EQ(v, got) << k;
    }
    std::map<std::string, std::string> all;
    Status s = test::ReadAll(db_.get(), ReadOptions(), &all);
    ASSERT_TRUE(s.ok()) << S(s);
    for (const auto& [k, v] : acked_) {
      auto it = all.find(k);
      ASSERT_TRUE(it != all.end()) << k;
      ASSERT_EQ(v, it->second) << k;
    }
  }

  // After a fault: this write fails, and so does every later one, even
  // with the fault cleared.
  void ExpectWritesFail() {
    EXPECT_FALSE(db_->Put(WriteOptions(), "later", "x").ok());
    env_->ClearFailures();
    EXPECT_FALSE(db_->Put(WriteOptions(), "later", "x").ok());
    WriteOptions sync;
    sync.sync = true;
    EXPECT_FALSE(db_->Put(sync, "later", "x").ok());
    WriteBatch b;
    b.Put("later", "x");
    EXPECT_FALSE(db_->Write(WriteOptions(), b).ok());
    EXPECT_FALSE(db_->Delete(WriteOptions(), "later").ok());
  }

  test::TempDir tmp_;
  std::unique_ptr<Env> mem_;
  Env* base_ = nullptr;
  std::string dbname_;
  std::unique_ptr<FaultInjectionEnv> env_;
  Options options_;
  std::unique_ptr<DB> db_;
  std::map<std::string, std::string> acked_;
};

TEST_P(DBFaultTest, WalAppendFailureIsStickyAndLosesNothingAcknowledged) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 4; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    if (round == 0) {
      ASSERT_NO_FATAL_FAILURE(Open());
    } else {
      ASSERT_NO_FATAL_FAILURE(ReopenFresh());
    }
    ASSERT_NO_FATAL_FAILURE(PutMany("r" + std::to_string(round) + "-", 100 + round * 200));
    // Fail an Append or Flush of the WAL after a few succeed: the failing
    // write may leave part of a record behind.
    env_->SetFailure(FaultKind::kWrite, static_cast<int64_t>(rnd.Uniform(4)), /*one_shot=*/true,
                     ".log");
    Status s;
    for (int i = 0; i < 10 && s.ok(); i++) s = Put("victim" + std::to_string(i), "v");
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(s.IsIOError()) << S(s);
    ASSERT_NO_FATAL_FAILURE(ExpectWritesFail());
    ASSERT_NO_FATAL_FAILURE(ExpectAcked());  // reads keep working
    EXPECT_FALSE(db_->Flush(FlushOptions()).ok());
    EXPECT_FALSE(db_->Close().ok()) << "Close reports the background error";
    ASSERT_NO_FATAL_FAILURE(ReopenFresh());
    ASSERT_NO_FATAL_FAILURE(ExpectAcked());
  }
}

TEST_P(DBFaultTest, WalSyncFailureIsSticky) {
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(PutMany("a", 300, /*sync=*/true));
  env_->SetFailure(FaultKind::kSync, 0, /*one_shot=*/true, ".log");
  Status s = Put("victim", "v", /*sync=*/true);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsIOError()) << S(s);
  ASSERT_NO_FATAL_FAILURE(ExpectWritesFail());
  ASSERT_NO_FATAL_FAILURE(ExpectAcked());
  ASSERT_NO_FATAL_FAILURE(ReopenFresh());
  ASSERT_NO_FATAL_FAILURE(ExpectAcked());
  ASSERT_NO_FATAL_FAILURE(PutMany("b", 100));  // the reopened database writes again
  ASSERT_NO_FATAL_FAILURE(ReopenFresh());
  ASSERT_NO_FATAL_FAILURE(ExpectAcked());
}

// Faults that hit flushes and compactions: table files and the MANIFEST.
struct BackgroundFault {
  FaultKind kind;
  const char* filter;
  const char* name;
};

const BackgroundFault kBackgroundFaults[] = {
    {FaultKind::kWrite, ".sst", "table-write"},
    {FaultKind::kSync, ".sst", "table-sync"},
    {FaultKind::kOpenWritable, ".sst", "table-create"},
    {FaultKind::kWrite, "MANIFEST", "manifest-write"},
    {FaultKind::kSync, "MANIFEST", "manifest-sync"},
};

TEST_P(DBFaultTest, FlushFailureReportedReadsServedNothingLost) {
  for (const BackgroundFault& f : kBackgroundFaults) {
    SCOPED_TRACE(f.name);
    if (db_) {
      ASSERT_NO_FATAL_FAILURE(ReopenFresh());
    } else {
      ASSERT_NO_FATAL_FAILURE(Open());
    }
    ASSERT_NO_FATAL_FAILURE(PutMany(std::string(f.name) + "-a", 200));
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    ASSERT_NO_FATAL_FAILURE(PutMany(std::string(f.name) + "-b", 100));
    env_->SetFailure(f.kind, 0, /*one_shot=*/false, f.filter);
    Status s = db_->Flush(FlushOptions());
    EXPECT_FALSE(s.ok()) << "a failed flush must be reported";
    EXPECT_GT(env_->InjectedCount(f.kind), 0u);
    s = test::WaitForBackgroundWork(db_.get());
    EXPECT_FALSE(s.ok()) << "the background error is kept";
    ASSERT_NO_FATAL_FAILURE(ExpectAcked());  // from the memtable and tables
    ASSERT_NO_FATAL_FAILURE(ExpectWritesFail());
    ASSERT_NO_FATAL_FAILURE(ExpectAcked());
    ASSERT_NO_FATAL_FAILURE(ReopenFresh());
    ASSERT_NO_FATAL_FAILURE(ExpectAcked());
  }
}

TEST_P(DBFaultTest, BackgroundFlushFailureStopsWrites) {
  ASSERT_NO_FATAL_FAILURE(Open());
  env_->SetFailure(FaultKind::kWrite, 5, /*one_shot=*/false, ".sst");
  // Keep writing: the memtable fills, the flush fails in the background, and
  // writes start failing instead of piling up.
  Status s;
  int i = 0;
  for (; i < 20000 && s.ok(); i++) {
    s = Put(test::KeyOf(i), std::string(300, 'v'));
  }
  ASSERT_FALSE(s.ok()) << "writes kept succeeding after the flush failed";
  ASSERT_NO_FATAL_FAILURE(ExpectWritesFail());
  ASSERT_NO_FATAL_FAILURE(ExpectAcked());
  ASSERT_NO_FATAL_FAILURE(ReopenFresh());
  ASSERT_NO_FATAL_FAILURE(ExpectAcked());
}

TEST_P(DBFaultTest, CompactionFailureReportedReadsServedNothingLost) {
  for (const BackgroundFault& f : kBackgroundFaults) {
    SCOPED_TRACE(f.name);
    options_.level0_file_num_compaction_trigger = 100;  // no automatic compaction
    if (db_) {
      ASSERT_NO_FATAL_FAILURE(ReopenFresh());
    } else {
      ASSERT_NO_FATAL_FAILURE(Open());
    }
    for (int j = 0; j < 3; j++) {
      ASSERT_NO_FATAL_FAILURE(PutMany(std::string(f.name) + std::to_string(j), 150));
      ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    }
    ASSERT_TRUE(test::WaitForBackgroundWork(db_.get()).ok());
    env_->SetFailure(f.kind, 0, /*one_shot=*/false, f.filter);
    Status s = db_->CompactRange(nullptr, nullptr);
    EXPECT_FALSE(s.ok()) << "a failed compaction must be reported";
    EXPECT_GT(env_->InjectedCount(f.kind), 0u);
    ASSERT_NO_FATAL_FAILURE(ExpectAcked());
    env_->ClearFailures();
    ASSERT_NO_FATAL_FAILURE(ReopenFresh());
    ASSERT_NO_FATAL_FAILURE(ExpectAcked());
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    ASSERT_NO_FATAL_FAILURE(ExpectAcked());
  }
}

// Power loss: what a machine finds after a crash (unsynced bytes and
// unsynced directory entries gone), then recovery.
class DBCrashModelTest : public DBFaultTest {
 protected:
  struct Write {
    std::string value;
    bool sync;
  };

  // Crashes the "machine": stops the file system, closes the DB, drops
  // everything not durable, and reopens on a fresh view.
  void PowerLoss() {
    env_->SetFilesystemActive(false);
    if (db_) db_->Close();
    db_.reset();
    Status s = env_->SimulateCrash();
    ASSERT_TRUE(s.ok()) << S(s);
    env_->SetFilesystemActive(true);
    ASSERT_NO_FATAL_FAILURE(ReopenFresh());
  }

  // Each key's value is one written at or after its last acknowledged
  // synced write; a key with a synced write is present.
  void ExpectSyncedSurvived(const std::map<std::string, std::vector<Write>>& history) {
    std::map<std::string, std::string> all;
    Status s = test::ReadAll(db_.get(), ReadOptions(), &all);
    ASSERT_TRUE(s.ok()) << S(s);
    for (const auto& [k, writes] : history) {
      size_t last_sync = writes.size();
      for (size_t i = 0; i < writes.size(); i++) {
        if (writes[i].sync) last_sync = i;
      }
      auto it = all.find(k);
      if (last_sync == writes.size()) {
        if (it == all.end()) continue;  // only unsynced writes: may be lost
        bool known = false;
        for (const Write& w : writes) known = known || w.value == it->second;
        ASSERT_TRUE(known) << k << " has a value never written";
        continue;
      }
      ASSERT_TRUE(it != all.end()) << k << ": a synced write was lost";
      bool ok = false;
      for (size_t i = last_sync; i < writes.size(); i++) ok = ok || writes[i].value == it->second;
      ASSERT_TRUE(ok) << k << ": value older than its last synced write";
    }
    for (const auto& [k, v] : all) {
      ASSERT_TRUE(history.count(k) > 0) << "a key never written: " << k;
    }
  }
};

TEST_P(DBCrashModelTest, SyncedWritesSurvivePowerLoss) {
  Random rnd(test::TestSeed());
  std::map<std::string, std::vector<Write>> history;
  ASSERT_NO_FATAL_FAILURE(Open());
  for (int round = 0; round < 6; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Enough data for several memtable switches, flushes and compactions.
    const int n = 200 + static_cast<int>(rnd.Uniform(1500));
    for (int i = 0; i < n; i++) {
      const std::string k = test::KeyOf(rnd.Uniform(3000));
      const bool sync = rnd.OneIn(8);
      const std::string v = "r" + std::to_string(round) + "." + std::to_string(i) +
                            std::string(rnd.Uniform(300), 'v');
      WriteOptions wo;
      wo.sync = sync;
      ASSERT_TRUE(db_->Put(wo, k, v).ok());
      history[k].push_back({v, sync});
    }
    if (rnd.OneIn(3)) {
      ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    }
    ASSERT_NO_FATAL_FAILURE(PowerLoss());
    ASSERT_NO_FATAL_FAILURE(ExpectSyncedSurvived(history));
    // What survived is now the durable past: keep only it as history.
    std::map<std::string, std::string> all;
    ASSERT_TRUE(test::ReadAll(db_.get(), ReadOptions(), &all).ok());
    history.clear();
    for (const auto& [k, v] : all) history[k].push_back({v, true});
  }
}

TEST_P(DBCrashModelTest, SyncedWritesSurviveFlushCompactionAndPowerLoss) {
  ASSERT_NO_FATAL_FAILURE(Open());
  // Synced writes, then a flush that moves them into a table and retires
  // their WAL: the table (file and directory entry) must be durable before
  // the WAL is deleted.
  ASSERT_NO_FATAL_FAILURE(PutMany("a", 150, /*sync=*/true));
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(test::WaitForBackgroundWork(db_.get()).ok());
  ASSERT_NO_FATAL_FAILURE(PowerLoss());
  ASSERT_NO_FATAL_FAILURE(ExpectAcked());
  // Nothing written since the reopen: crash again right away.
  ASSERT_NO_FATAL_FAILURE(PowerLoss());
  ASSERT_NO_FATAL_FAILURE(ExpectAcked());
  // A compaction replaces tables: its outputs must be durable before its
  // inputs are deleted.
  ASSERT_NO_FATAL_FAILURE(PutMany("b", 150, /*sync=*/true));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(PowerLoss());
  ASSERT_NO_FATAL_FAILURE(ExpectAcked());
}

// Flush() is a durability point (as in RocksDB): what it wrote to a table
// survives a power loss even if it was written without sync.
TEST_P(DBCrashModelTest, FlushedDataSurvivesPowerLoss) {
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(PutMany("a", 500));
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(test::WaitForBackgroundWork(db_.get()).ok());
  ASSERT_NO_FATAL_FAILURE(PowerLoss());
  ASSERT_NO_FATAL_FAILURE(ExpectAcked());
}

// Power loss at a random moment while a writer and CompactRange run.
TEST_P(DBCrashModelTest, PowerLossDuringBackgroundWork) {
  const uint64_t seed = test::TestSeed();
  std::map<std::string, std::vector<Write>> history;
  ASSERT_NO_FATAL_FAILURE(Open());
  for (int round = 0; round < 4; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    Random rnd(seed + static_cast<uint64_t>(round));
    std::mutex mu;
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      Random wr(seed * 31 + static_cast<uint64_t>(round));
      for (int i = 0; !stop.load(); i++) {
        const std::string k = test::KeyOf(wr.Uniform(2000));
        const std::string v = "r" + std::to_string(round) + "." + std::to_string(i) +
                              std::string(wr.Uniform(400), 'w');
        WriteOptions wo;
        wo.sync = wr.OneIn(5);
        // Record the attempt first: an unacknowledged write may still land.
        {
          std::lock_guard<std::mutex> l(mu);
          history[k].push_back({v, false});
        }
        if (!db_->Put(wo, k, v).ok()) break;  // the file system died
        std::lock_guard<std::mutex> l(mu);
        history[k].back().sync = wo.sync;
      }
    });
    std::thread compactor([&] {
      while (!stop.load()) {
        if (!db_->CompactRange(nullptr, nullptr).ok()) break;
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rnd.Uniform(150)));
    env_->SetFilesystemActive(false);
    stop.store(true);
    writer.join();
    compactor.join();
    ASSERT_NO_FATAL_FAILURE(PowerLoss());
    ASSERT_NO_FATAL_FAILURE(ExpectSyncedSurvived(history));
    std::map<std::string, std::string> all;
    ASSERT_TRUE(test::ReadAll(db_.get(), ReadOptions(), &all).ok());
    history.clear();
    for (const auto& [k, v] : all) history[k].push_back({v, true});
  }
}

const auto kBases = ::testing::Values(BaseKind::kMem, BaseKind::kPosix);
std::string BaseName(const ::testing::TestParamInfo<BaseKind>& info) {
  return info.param == BaseKind::kMem ? "Mem" : "Posix";
}
INSTANTIATE_TEST_SUITE_P(Bases, DBFaultTest, kBases, BaseName);
INSTANTIATE_TEST_SUITE_P(Bases, DBCrashModelTest, kBases, BaseName);

}  // namespace
}  // namespace accelkv
