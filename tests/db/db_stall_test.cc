// Write stalls by cause (MakeRoomForWrite; "Stall causes" in accelkv.stats,
// "stall_causes" in accelkv.stats.json): a flush or compaction is held at
// its output table's creation, so that exactly one stop condition holds
// when the writer fills its memtable; the stats must name that condition,
// count the wait and time it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "accelkv/db.h"
#include "accelkv/env.h"
#include "db/db_test_util.h"
#include "testutil/test_util.h"

namespace accelkv {
namespace {

using test::S;

// Lets the first `allowed` table files be created, then holds every later
// creation until Release().
class TableHoldingEnv : public EnvWrapper {
 public:
  TableHoldingEnv(Env* base, int allowed) : EnvWrapper(base), allowed_(allowed) {}

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) override {
    Hold(fname);
    return EnvWrapper::NewWritableFile(fname, result);
  }
  Status NewWritableFile(const std::string& fname, const WritableFileOptions& options,
                         std::unique_ptr<WritableFile>* result) override {
    Hold(fname);
    return EnvWrapper::NewWritableFile(fname, options, result);
  }

  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }
  int held() const { return held_.load(); }

 private:
  void Hold(const std::string& fname) {
    if (fname.size() < 4 || fname.compare(fname.size() - 4, 4, ".sst") != 0) return;
    std::unique_lock<std::mutex> l(mu_);
    if (created_++ < allowed_) return;
    held_++;
    cv_.wait(l, [this] { return released_; });
  }

  const int allowed_;
  std::mutex mu_;
  std::condition_variable cv_;
  int created_ = 0;
  bool released_ = false;
  std::atomic<int> held_{0};
};

struct Cause {
  uint64_t stops = 0;
  uint64_t stop_micros = 0;
  uint64_t slowdowns = 0;
  uint64_t slowdown_micros = 0;
};

// The number after `"key":` at or after `from` in json (0 when missing).
uint64_t NumberAfter(const std::string& json, const std::string& key, size_t from = 0) {
  const std::string k = "\"" + key + "\":";
  const size_t at = json.find(k, from);
  EXPECT_NE(std::string::npos, at) << key << " in " << json;
  return at == std::string::npos ? 0 : std::stoull(json.substr(at + k.size()));
}

Cause CauseStats(DB* db, const std::string& name) {
  std::string json;
  EXPECT_TRUE(db->GetProperty("accelkv.stats.json", &json));
  const size_t at = json.find("\"" + name + "\":{");
  EXPECT_NE(std::string::npos, at) << name << " in " << json;
  if (at == std::string::npos) return Cause();
  return Cause{NumberAfter(json, "stops", at), NumberAfter(json, "stop_micros", at),
               NumberAfter(json, "slowdowns", at), NumberAfter(json, "slowdown_micros", at)};
}

constexpr const char* kCauses[] = {"memtables", "level0_files", "pending_compaction_bytes"};

class DBStallTest : public ::testing::Test {
 protected:
  void Open(const Options& options) {
    Status s = DB::Open(options, tmp_.File("db"), &db_);
    ASSERT_TRUE(s.ok()) << S(s);
  }

  // Writes about 150 KiB (two and a bit 64 KiB memtables) on a thread. Once
  // the stats show a stop of `cause`, waits 20 ms and releases env's held
  // table files; the writes must then all succeed.
  void WriteUntilStopped(const std::string& cause) {
    std::atomic<bool> done{false};
    std::thread writer([&] {
      const std::string value(1000, 'v');
      for (int i = 0; i < 150; i++) {
        Status ws = db_->Put(WriteOptions(), test::KeyOf(i), value);
        EXPECT_TRUE(ws.ok()) << i << ": " << S(ws);
      }
      done = true;
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (CauseStats(db_.get(), cause).stops == 0 && !done &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_FALSE(done.load()) << "the writes were never stopped";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    env_->Release();
    writer.join();
    EXPECT_GE(env_->held(), 1);
  }

  // The causes' stops add up to the total, and the text names each.
  void ExpectTotals() {
    std::string json;
    ASSERT_TRUE(db_->GetProperty("accelkv.stats.json", &json));
    uint64_t stops = 0, slowdowns = 0;
    for (const char* c : kCauses) {
      stops += CauseStats(db_.get(), c).stops;
      slowdowns += CauseStats(db_.get(), c).slowdowns;
    }
    EXPECT_EQ(stops, NumberAfter(json, "stall_count"));
    EXPECT_EQ(slowdowns, NumberAfter(json, "slowdown_count"));
    std::string text;
    ASSERT_TRUE(db_->GetProperty("accelkv.stats", &text));
    const Cause m = CauseStats(db_.get(), "memtables");
    EXPECT_NE(std::string::npos,
              text.find("Stall causes: memtables " + std::to_string(m.stops) + " stops"))
        << text;
    for (const char* c : {"level0_files", "pending_compaction_bytes"}) {
      EXPECT_NE(std::string::npos,
                text.find(std::string("; ") + c + " " +
                          std::to_string(CauseStats(db_.get(), c).stops) + " stops"))
          << c << " in " << text;
    }
  }

  // `cause` stopped the writer, for at least the 20 ms its table was held
  // after the stop was seen, and (slowed) slowed it by 1 ms at a time; no
  // other cause stopped or slowed it.
  void ExpectOnly(const std::string& cause, bool slowed) {
    for (const char* c : kCauses) {
      const Cause st = CauseStats(db_.get(), c);
      if (c != cause) {
        EXPECT_EQ(0u, st.stops) << c;
        EXPECT_EQ(0u, st.slowdowns) << c;
        continue;
      }
      EXPECT_GE(st.stops, 1u) << c;
      EXPECT_GE(st.stop_micros, 20000u) << c;
      if (slowed) {
        EXPECT_GE(st.slowdowns, 1u) << c;
        EXPECT_GE(st.slowdown_micros, 1000u * st.slowdowns) << c;
      } else {
        EXPECT_EQ(0u, st.slowdowns) << c;
      }
    }
    ExpectTotals();
  }

  // Opens the database (level-0 compaction trigger 2, room for 4
  // memtables) and writes two overlapping level-0 tables (the same keys),
  // flushed one by one; the env lets their tables through and holds their
  // compaction's output.
  void OpenWithHeldCompaction(Options options) {
    options.level0_file_num_compaction_trigger = 2;
    options.max_write_buffer_number = 4;
    ASSERT_NO_FATAL_FAILURE(Open(options));
    ASSERT_NO_FATAL_FAILURE(TwoLevel0Tables());
  }

  // Two overlapping level-0 tables (the same keys), flushed one by one.
  void TwoLevel0Tables() {
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < 10; i++) {
        ASSERT_TRUE(db_->Put(WriteOptions(), test::KeyOf(i), "r" + std::to_string(round)).ok());
      }
      Status s = db_->Flush(FlushOptions());
      ASSERT_TRUE(s.ok()) << S(s);
    }
    ASSERT_EQ(2, test::NumFilesAtLevel(db_.get(), 0));
  }

  // Options over a TableHoldingEnv (env_) that lets `allowed` tables
  // through.
  Options HoldingOptions(int allowed) {
    env_ = std::make_unique<TableHoldingEnv>(mem_.get(), allowed);
    return test::SmallTreeOptions(env_.get());
  }

  void TearDown() override {
    if (env_ != nullptr) env_->Release();  // a failed test may hold a table
    if (db_ != nullptr) {
      EXPECT_TRUE(db_->Close().ok());
    }
    db_.reset();
  }

  test::TempDir tmp_;
  std::unique_ptr<Env> mem_ = NewMemEnv(Env::Default());
  std::unique_ptr<TableHoldingEnv> env_;
  std::unique_ptr<DB> db_;  // closed before env_ goes
};

// No flush can finish: with two memtables, the second one full stops the
// writer on the memtables, and on nothing else.
TEST_F(DBStallTest, MemtablesStopWritesWhileTheFlushIsHeld) {
  Options options = HoldingOptions(0);
  options.max_write_buffer_number = 2;
  ASSERT_NO_FATAL_FAILURE(Open(options));
  ASSERT_NO_FATAL_FAILURE(WriteUntilStopped("memtables"));
  ExpectOnly("memtables", /*slowed=*/false);
}

// Two level-0 tables reach the slowdown and stop triggers (both 2) while
// their compaction's output is held: each write is slowed once, and the
// full memtable stops the writer on the level-0 files.
TEST_F(DBStallTest, Level0FilesSlowThenStopWritesWhileTheCompactionIsHeld) {
  Options options = HoldingOptions(2);
  options.level0_slowdown_writes_trigger = 2;
  options.level0_stop_writes_trigger = 2;
  ASSERT_NO_FATAL_FAILURE(OpenWithHeldCompaction(options));
  ASSERT_NO_FATAL_FAILURE(WriteUntilStopped("level0_files"));
  ExpectOnly("level0_files", /*slowed=*/true);
}

// The same held compaction with the level-0 triggers out of reach and the
// pending-bytes limits at one byte: the pending bytes slow and stop.
TEST_F(DBStallTest, PendingCompactionBytesSlowThenStopWritesWhileTheCompactionIsHeld) {
  Options options = HoldingOptions(2);
  options.level0_slowdown_writes_trigger = 100;
  options.level0_stop_writes_trigger = 100;
  options.soft_pending_compaction_bytes_limit = 1;
  options.hard_pending_compaction_bytes_limit = 1;
  ASSERT_NO_FATAL_FAILURE(OpenWithHeldCompaction(options));
  ASSERT_NO_FATAL_FAILURE(WriteUntilStopped("pending_compaction_bytes"));
  ExpectOnly("pending_compaction_bytes", /*slowed=*/true);
}

}  // namespace
}  // namespace accelkv
