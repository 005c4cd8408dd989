// The classic write path's group commit: a leader that finds writers queued
// behind its group writes their group too (flat combining), and a combined
// group's failure reaches only its own writers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "accelkv/db.h"
#include "db/db_impl.h"
#include "db/db_test_util.h"
#include "env/fault_injection_env.h"
#include "testutil/test_util.h"

namespace accelkv {
namespace {

using test::S;

// Flat combining (the classic write path): a leader that finds writers
// queued behind its group writes their group too, instead of waking the
// queue's front to lead. The first group's WAL append is held until three
// more writers sleep in the queue; the leader then writes their group (one,
// since they queue behind one another) on their behalf. (Pipelined groups
// are not combined: bench/results/2026-11-25-h100-stress-writers.md.)
class DBCombiningTest : public ::testing::Test {
 protected:
  Options CombiningOptions(Env* env) {
    Options options = test::SmallTreeOptions(env);
    options.enable_pipelined_write = false;
    options.write_buffer_size = 4 << 20;  // no memtable switch in the test
    // Queued writers sleep after their short spin.
    options.write_thread_max_yield_usec = 0;
    return options;
  }

  // Holds the first WAL append until `sleepers` writers sleep in db's
  // queue; calls then_hook for every later append.
  void HoldFirstAppend(DB* db, int sleepers, std::function<void()> then_hook = nullptr) {
    auto* impl = static_cast<DBImpl*>(db);
    auto appends = appends_;
    impl->TEST_SetBeforeWalAppend([impl, sleepers, appends, then_hook] {
      if (appends->fetch_add(1) > 0) {
        if (then_hook) then_hook();
        return;
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (impl->TEST_BlockedWriters() < sleepers &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }

  // Returns once the first append is held: its writer leads.
  void WaitForFirstAppend() {
    while (appends_->load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  static uint64_t CombinedGroups(DB* db) {
    std::string json;
    EXPECT_TRUE(db->GetProperty("accelkv.stats.json", &json));
    const std::string key = "\"combined_groups\":";
    const size_t at = json.find(key);
    EXPECT_NE(std::string::npos, at) << json;
    return at == std::string::npos ? 0 : std::stoull(json.substr(at + key.size()));
  }

  std::shared_ptr<std::atomic<int>> appends_ = std::make_shared<std::atomic<int>>(0);
};

TEST_F(DBCombiningTest, LeaderWritesTheGroupOfSleepingWriters) {
  test::TempDir tmp;
  Options options = CombiningOptions(Env::Default());
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, tmp.File("db"), &db);
  ASSERT_TRUE(s.ok()) << S(s);
  HoldFirstAppend(db.get(), 3);

  std::thread leader([&] { EXPECT_TRUE(db->Put(WriteOptions(), "a", "1").ok()); });
  WaitForFirstAppend();
  std::vector<std::thread> followers;
  for (const char* key : {"b", "c", "d"}) {
    followers.emplace_back([&db, key] {
      Status ws = db->Put(WriteOptions(), key, std::string(key) + "v");
      EXPECT_TRUE(ws.ok()) << key << ": " << S(ws);
    });
  }
  leader.join();
  for (std::thread& t : followers) t.join();

  EXPECT_EQ(1u, CombinedGroups(db.get()));
  std::string value;
  for (const char* key : {"b", "c", "d"}) {
    s = db->Get(ReadOptions(), key, &value);
    ASSERT_TRUE(s.ok()) << key << ": " << S(s);
    EXPECT_EQ(std::string(key) + "v", value);
  }
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  options.create_if_missing = false;
  s = DB::Open(options, tmp.File("db"), &db);
  ASSERT_TRUE(s.ok()) << S(s);
  for (const char* key : {"a", "b", "c", "d"}) {
    s = db->Get(ReadOptions(), key, &value);
    EXPECT_TRUE(s.ok()) << key << ": " << S(s);
  }
}

// The combined group's WAL append fails: its writers get the error, the
// leader's own write (appended before) stays acknowledged and durable, and
// later writes are refused (the sticky background error).
TEST_F(DBCombiningTest, FailedCombinedGroupFailsOnlyItsWriters) {
  test::TempDir tmp;
  FaultInjectionEnv env(Env::Default());
  Options options = CombiningOptions(&env);
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, tmp.File("db"), &db);
  ASSERT_TRUE(s.ok()) << S(s);
  HoldFirstAppend(db.get(), 3,
                  [&env] { env.SetFailure(FaultKind::kWrite, 0, /*one_shot=*/false, ".log"); });

  std::thread leader([&] {
    Status ws = db->Put(WriteOptions(), "a", "1");
    EXPECT_TRUE(ws.ok()) << S(ws);
  });
  WaitForFirstAppend();
  std::vector<std::thread> followers;
  for (const char* key : {"b", "c", "d"}) {
    followers.emplace_back([&db, key] {
      Status ws = db->Put(WriteOptions(), key, "v");
      EXPECT_TRUE(ws.IsIOError()) << key << ": " << S(ws);
    });
  }
  leader.join();
  for (std::thread& t : followers) t.join();
  EXPECT_EQ(1u, CombinedGroups(db.get()));
  EXPECT_FALSE(db->Put(WriteOptions(), "e", "v").ok());

  env.ClearFailures();
  (void)db->Close();
  db.reset();
  options.create_if_missing = false;
  s = DB::Open(options, tmp.File("db"), &db);
  ASSERT_TRUE(s.ok()) << S(s);
  std::string value;
  s = db->Get(ReadOptions(), "a", &value);
  ASSERT_TRUE(s.ok()) << S(s);
  EXPECT_EQ("1", value);
}

}  // namespace
}  // namespace accelkv
