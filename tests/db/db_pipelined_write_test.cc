// Options::enable_pipelined_write: a memtable switch waits for the groups
// still linking into the memtable it makes immutable, so a flush never
// misses an acknowledged write (and the WAL holding it is not dropped).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "accelkv/db.h"
#include "db/db_impl.h"
#include "db/db_test_util.h"
#include "testutil/test_util.h"

namespace accelkv {
namespace {

using test::S;

TEST(DBPipelinedWriteTest, MemtableSwitchWaitsForLinksInFlight) {
  test::TempDir tmp;
  Options options = test::SmallTreeOptions(Env::Default());
  options.enable_pipelined_write = true;
  options.write_buffer_size = 1 << 20;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, tmp.File("db"), &db);
  ASSERT_TRUE(s.ok()) << S(s);
  ASSERT_TRUE(db->Put(WriteOptions(), "before", "b").ok());

  // The first pipelined link after `armed` is held until `release`.
  std::mutex mu;
  std::condition_variable cv;
  bool armed = true, holding = false, release = false;
  static_cast<DBImpl*>(db.get())->TEST_SetBeforePipelinedLink([&] {
    std::unique_lock<std::mutex> l(mu);
    if (!armed) return;
    armed = false;
    holding = true;
    cv.notify_all();
    cv.wait(l, [&] { return release; });
  });
  std::thread writer([&] {
    Status ws = db->Put(WriteOptions(), "held", "v");
    EXPECT_TRUE(ws.ok()) << S(ws);
  });
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return holding; });
  }
  // The group's WAL record is written and the lead handed on; its entry is
  // not linked yet. A flush must wait for it.
  std::atomic<bool> flushed{false};
  std::thread flusher([&] {
    Status fs = db->Flush(FlushOptions());
    EXPECT_TRUE(fs.ok()) << S(fs);
    flushed.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(flushed.load()) << "the memtable was switched while a group was still linking";
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  writer.join();
  flusher.join();
  ASSERT_TRUE(flushed.load());

  std::string value;
  s = db->Get(ReadOptions(), "held", &value);
  ASSERT_TRUE(s.ok()) << S(s);
  EXPECT_EQ("v", value);
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  options.create_if_missing = false;
  s = DB::Open(options, tmp.File("db"), &db);
  ASSERT_TRUE(s.ok()) << S(s);
  for (const char* key : {"before", "held"}) {
    s = db->Get(ReadOptions(), key, &value);
    EXPECT_TRUE(s.ok()) << key << ": " << S(s);
  }
}

}  // namespace
}  // namespace accelkv
