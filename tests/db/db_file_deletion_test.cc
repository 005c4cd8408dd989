// Obsolete files are deleted without the DB mutex (DBImpl::RemoveObsoleteFiles,
// as LevelDB does): a write, a read and a property query complete while a
// background thread is stuck in RemoveFile, and every write is there after.
// Under the mutex, a slow unlink on a busy disk held up every writer (a
// lone writer beside 15 busy threads slept on futexes 23% of its time:
// bench/results/2026-11-26-h100-unlink-outside-mutex.md). CI runs this
// under TSan ("Concurren").
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "accelkv/db.h"
#include "accelkv/env.h"
#include "db/db_test_util.h"

namespace accelkv {
namespace {

using test::S;

// Forwards everything to a base Env; once armed, the next RemoveFile blocks
// until Release.
class BlockingRemoveEnv final : public EnvWrapper {
 public:
  explicit BlockingRemoveEnv(Env* base) : EnvWrapper(base) {}

  void Arm() {
    std::lock_guard<std::mutex> l(mu_);
    armed_ = true;
  }
  // Waits up to `timeout` for a RemoveFile to block; its file name.
  bool WaitBlocked(std::chrono::milliseconds timeout, std::string* fname) {
    std::unique_lock<std::mutex> l(mu_);
    if (!cv_.wait_for(l, timeout, [this] { return !blocked_.empty(); })) return false;
    *fname = blocked_;
    return true;
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }

  Status RemoveFile(const std::string& fname) override {
    {
      std::unique_lock<std::mutex> l(mu_);
      if (armed_ && blocked_.empty()) {
        blocked_ = fname;
        cv_.notify_all();
        cv_.wait(l, [this] { return released_; });
      }
    }
    return target()->RemoveFile(fname);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool released_ = false;
  std::string blocked_;
};

TEST(DBConcurrentFileDeletionTest, WritesAndReadsGoOnWhileAFileIsBeingDeleted) {
  std::unique_ptr<Env> mem = NewMemEnv(Env::Default());
  BlockingRemoveEnv env(mem.get());
  Options options = test::SmallTreeOptions(&env);
  options.create_if_missing = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, "/db", &db).ok());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(db->Put(WriteOptions(), test::KeyOf(i), "v").ok());

  // The flush retires the WAL it covers: its RemoveObsoleteFiles blocks in
  // RemoveFile on a background thread.
  env.Arm();
  FlushOptions no_wait;
  no_wait.wait = false;
  ASSERT_TRUE(db->Flush(no_wait).ok());
  std::string blocked;
  ASSERT_TRUE(env.WaitBlocked(std::chrono::seconds(30), &blocked)) << "no file was deleted";

  // A write, a read and a property query need the DB mutex; they must not
  // wait for the deletion.
  std::future<bool> done = std::async(std::launch::async, [&db] {
    std::string value;
    std::string files;
    return db->Put(WriteOptions(), "during", "deletion").ok() &&
           db->Get(ReadOptions(), test::KeyOf(7), &value).ok() && value == "v" &&
           db->GetProperty("accelkv.num-files-at-level0", &files);
  });
  const bool finished = done.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  env.Release();
  EXPECT_TRUE(finished) << "a write or read waited for the deletion of " << blocked;
  EXPECT_TRUE(done.get());

  ASSERT_TRUE(test::WaitForBackgroundWork(db.get()).ok());
  EXPECT_FALSE(mem->FileExists(blocked)) << blocked << " was not deleted";
  std::string value;
  ASSERT_TRUE(db->Get(ReadOptions(), "during", &value).ok());
  EXPECT_EQ("deletion", value);
  for (int i = 0; i < 100; ++i) {
    Status s = db->Get(ReadOptions(), test::KeyOf(i), &value);
    ASSERT_TRUE(s.ok()) << S(s);
  }
  ASSERT_TRUE(db->Close().ok());
}

}  // namespace
}  // namespace accelkv
