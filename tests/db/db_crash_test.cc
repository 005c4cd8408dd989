// Crash test: a child process writes to the database (sync and non-sync,
// single writes and batches, from two threads, with a third compacting) and
// is SIGKILLed at a random moment; the parent reopens the database and
// checks what survived. Repeated over one database, so recovery of a
// recovered database is exercised too. ACCELKV_CRASH_ITERS sets the number
// of crashes (default 20); ACCELKV_SEED replays a run.
//
// What the parent knows. Each child writer thread t generates its operations
// deterministically from (seed, iteration, t); before issuing operation i it
// appends an intent record (i, hash of the operation) to its side file and
// fdatasyncs it, and after the DB acknowledged it, it appends an ack record.
// So after the kill the parent knows, per thread, the last operation issued
// (L) and the last acknowledged (A, which is L or L - 1), and regenerates
// the operations.
//
// What it checks, per thread (the threads write disjoint keys): the
// recovered keys of the thread equal the state after applying exactly its
// operations 0..P for some P <= L (no value that was never written, no
// write visible without every earlier write of the thread, batches atomic);
// P is at least the last acknowledged sync=true operation (durability of
// synced writes); and P >= A, because a write acknowledged without sync
// survives a process crash (WriteOptions::sync contract). Every key of
// earlier iterations keeps the value verified after its crash, and a full
// scan of the database succeeds.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "accelkv/db.h"
#include "db/db_test_util.h"
#include "testutil/test_util.h"
#include "util/helper_threads.h"
#include "util/random.h"

namespace accelkv {
namespace {

using test::S;

constexpr int kWriterThreads = 2;
constexpr int kKeysPerThread = 300;
constexpr uint32_t kRecordMagic = 0x43525348;  // "CRSH"
constexpr uint32_t kIntent = 1;
constexpr uint32_t kAck = 2;

struct SideRecord {
  uint32_t magic;
  uint32_t type;
  uint64_t index;
  uint64_t op_hash;
};
static_assert(sizeof(SideRecord) == 24);

struct Op {
  struct Entry {
    bool del;
    std::string key;
    std::string value;
  };
  std::vector<Entry> entries;
  bool sync = false;

  uint64_t Hash() const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    auto mix = [&h](const std::string& s) {
      for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
      h = (h ^ 0xff) * 1099511628211ull;
    };
    for (const Entry& e : entries) {
      mix(e.del ? "D" : "P");
      mix(e.key);
      mix(e.value);
    }
    mix(sync ? "S" : "N");
    return h;
  }
};

std::string KeyPrefix(int iter, int thread) {
  return "i" + std::to_string(1000 + iter) + "-t" + std::to_string(thread) + "-";
}

// The deterministic operation stream of one writer thread.
class OpGenerator {
 public:
  OpGenerator(uint64_t seed, int iter, int thread)
      : rnd_(seed * 1000003 + static_cast<uint64_t>(iter) * 131 + static_cast<uint64_t>(thread)),
        prefix_(KeyPrefix(iter, thread)) {}

  Op Next() {
    Op op;
    op.sync = rnd_.OneIn(3);
    const int n = rnd_.OneIn(4) ? 2 + static_cast<int>(rnd_.Uniform(4)) : 1;
    for (int i = 0; i < n; i++) {
      Op::Entry e;
      e.del = rnd_.OneIn(6);
      e.key = prefix_ + test::KeyOf(rnd_.Uniform(kKeysPerThread), 4);
      if (!e.del) {
        e.value = "n" + std::to_string(count_) + "." + std::to_string(i) + ":";
        e.value.append(rnd_.Uniform(1500), static_cast<char>('a' + count_ % 26));
      }
      op.entries.push_back(std::move(e));
    }
    count_++;
    return op;
  }

 private:
  Random rnd_;
  const std::string prefix_;
  uint64_t count_ = 0;
};

bool WriteRecord(int fd, uint32_t type, uint64_t index, uint64_t hash, bool sync) {
  SideRecord r{kRecordMagic, type, index, hash};
  if (::write(fd, &r, sizeof(r)) != static_cast<ssize_t>(sizeof(r))) return false;
  return !sync || ::fdatasync(fd) == 0;
}

[[noreturn]] void ChildFail(const char* what, const Status& s) {
  std::fprintf(stderr, "crash child: %s: %s\n", what, s.ToString().c_str());
  std::fflush(stderr);
  ::_exit(3);
}

// The child: never returns.
[[noreturn]] void RunChild(const std::string& dbname, const std::string& side_prefix, uint64_t seed,
                           int iter, int ready_fd) {
  Options options = test::SmallTreeOptions(Env::Default());
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dbname, &db);
  if (!s.ok()) ChildFail("open", s);
  char byte = 'r';
  if (::write(ready_fd, &byte, 1) != 1) ::_exit(4);
  ::close(ready_fd);

  std::vector<std::thread> threads;
  for (int t = 0; t < kWriterThreads; t++) {
    threads.emplace_back([&, t] {
      const std::string side = side_prefix + std::to_string(t);
      int fd = ::open(side.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
      if (fd < 0) ChildFail("side file", Status::IOError(side, std::strerror(errno)));
      OpGenerator gen(seed, iter, t);
      for (uint64_t i = 0; i < 1000000; i++) {
        Op op = gen.Next();
        if (!WriteRecord(fd, kIntent, i, op.Hash(), /*sync=*/true)) {
          ChildFail("intent", Status::IOError(side, std::strerror(errno)));
        }
        WriteOptions wo;
        wo.sync = op.sync;
        Status ws;
        if (op.entries.size() == 1) {
          const Op::Entry& e = op.entries[0];
          ws = e.del ? db->Delete(wo, e.key) : db->Put(wo, e.key, e.value);
        } else {
          WriteBatch batch;
          for (const Op::Entry& e : op.entries) {
            if (e.del) {
              batch.Delete(e.key);
            } else {
              batch.Put(e.key, e.value);
            }
          }
          ws = db->Write(wo, batch);
        }
        if (!ws.ok()) ChildFail("write", ws);
        // A process crash keeps what write() handed to the kernel.
        if (!WriteRecord(fd, kAck, i, 0, /*sync=*/false)) {
          ChildFail("ack", Status::IOError(side, std::strerror(errno)));
        }
      }
      ::pause();
    });
  }
  threads.emplace_back([&] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      Status cs = db->CompactRange(nullptr, nullptr);
      if (!cs.ok()) ChildFail("compact", cs);
    }
  });
  for (auto& t : threads) t.join();
  ::_exit(0);
}

// What one side file says.
struct SideLog {
  int64_t last_intent = -1;
  int64_t last_ack = -1;
  std::vector<uint64_t> hashes;  // by operation index
};

::testing::AssertionResult ReadSideLog(const std::string& path, SideLog* log) {
  std::string data;
  Status s = ReadFileToString(Env::Default(), path, &data);
  if (s.IsNotFound()) return ::testing::AssertionSuccess();  // killed before it started
  if (!s.ok()) return ::testing::AssertionFailure() << S(s);
  const size_t n = data.size() / sizeof(SideRecord);  // a torn last record is ignored
  for (size_t i = 0; i < n; i++) {
    SideRecord r;
    std::memcpy(&r, data.data() + i * sizeof(SideRecord), sizeof(r));
    if (r.magic != kRecordMagic) return ::testing::AssertionFailure() << "bad side record";
    if (r.type == kIntent) {
      if (static_cast<int64_t>(r.index) != log->last_intent + 1 ||
          log->last_ack != log->last_intent) {
        return ::testing::AssertionFailure() << "side log out of sequence at intent " << r.index;
      }
      log->last_intent = static_cast<int64_t>(r.index);
      log->hashes.push_back(r.op_hash);
    } else if (r.type == kAck) {
      if (static_cast<int64_t>(r.index) != log->last_intent ||
          log->last_ack + 1 != log->last_intent) {
        return ::testing::AssertionFailure() << "side log out of sequence at ack " << r.index;
      }
      log->last_ack = static_cast<int64_t>(r.index);
    } else {
      return ::testing::AssertionFailure() << "bad side record type";
    }
  }
  return ::testing::AssertionSuccess();
}

int CrashIterations() {
  const char* v = std::getenv("ACCELKV_CRASH_ITERS");
  return (v != nullptr && v[0] != '\0') ? std::atoi(v) : 20;
}

int ThreadCount() {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    n++;
  }
  return n;
}

// TSan runs a background thread of its own (named as the process is),
// which does not stop a forked child from starting threads; it is not
// counted. Were it not running and a thread of ours left, TSan would stop
// the child (exit 66), and the test would say the child failed.
#if defined(__SANITIZE_THREAD__)
constexpr int kRuntimeThreads = 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int kRuntimeThreads = 1;
#else
constexpr int kRuntimeThreads = 0;
#endif
#else
constexpr int kRuntimeThreads = 0;
#endif

// The process's thread count once idle helper threads (left by the WAL's
// window mapping or the GPU executor of a DB closed before) have ended:
// they are released at once, then waited for, up to 5 s.
int ThreadCountWithoutIdleHelpers() {
  HelperThreads::Get()->ReleaseIdle();
  for (int i = 0; i < 500 && ThreadCount() > 1 + kRuntimeThreads; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::max(1, ThreadCount() - kRuntimeThreads);
}

class DBCrashTest : public ::testing::Test {
 protected:
  // Checks thread t of iteration iter against the recovered database;
  // records the recovered values in verified_. Returns the number of
  // acknowledged operations.
  int64_t VerifyThread(DB* db, uint64_t seed, int iter, int t) {
    SideLog log;
    const std::string side = tmp_.File("side-" + std::to_string(iter) + "-" + std::to_string(t));
    EXPECT_TRUE(ReadSideLog(side, &log));
    const std::string prefix = KeyPrefix(iter, t);

    // The thread's keys as recovered, by iterator, cross-checked with Get.
    std::map<std::string, std::string> recovered;
    {
      std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
      for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
        recovered[it->key().ToString()] = it->value().ToString();
      }
      EXPECT_TRUE(it->status().ok()) << S(it->status());
    }
    for (int k = 0; k < kKeysPerThread; k++) {
      const std::string key = prefix + test::KeyOf(k, 4);
      std::string value;
      Status s = db->Get(ReadOptions(), key, &value);
      auto r = recovered.find(key);
      if (r == recovered.end()) {
        EXPECT_TRUE(s.IsNotFound()) << key << ": " << S(s);
      } else {
        EXPECT_TRUE(s.ok() && value == r->second) << key << ": Get and iterator disagree";
      }
    }

    // Replay the operations; track how many keys differ from recovered.
    std::map<std::string, std::string> state;
    std::map<std::string, std::vector<std::string>> ever_written;
    size_t mismatches = recovered.size();  // state is empty
    auto differs = [&](const std::string& key) {
      auto a = state.find(key);
      auto b = recovered.find(key);
      if (a == state.end() || b == recovered.end()) return a != state.end() || b != recovered.end();
      return a->second != b->second;
    };
    std::vector<int64_t> matching;  // prefixes P (P = -1: nothing) equal to recovered
    if (mismatches == 0) matching.push_back(-1);
    int64_t last_synced_ack = -1;
    OpGenerator gen(seed, iter, t);
    for (int64_t i = 0; i <= log.last_intent; i++) {
      Op op = gen.Next();
      EXPECT_EQ(log.hashes[static_cast<size_t>(i)], op.Hash()) << "generator drift at op " << i;
      if (op.sync && i <= log.last_ack) last_synced_ack = i;
      for (const Op::Entry& e : op.entries) {
        if (differs(e.key)) mismatches--;
        if (e.del) {
          state.erase(e.key);
        } else {
          state[e.key] = e.value;
          ever_written[e.key].push_back(e.value);
        }
        if (differs(e.key)) mismatches++;
      }
      if (mismatches == 0) matching.push_back(i);
    }

    if (matching.empty()) {
      // Explain: a value never written, or writes visible out of order.
      for (const auto& [key, value] : recovered) {
        const auto& w = ever_written[key];
        if (std::find(w.begin(), w.end(), value) == w.end()) {
          ADD_FAILURE() << "thread " << t << ": " << key
                        << " has a value never written: " << value.substr(0, 30);
          return 0;
        }
      }
      ADD_FAILURE() << "thread " << t << ": recovered state is no prefix of the thread's writes "
                    << "(out of order or a torn batch); issued " << log.last_intent + 1
                    << ", acknowledged " << log.last_ack + 1;
      return 0;
    }
    const int64_t best = matching.back();
    EXPECT_GE(best, last_synced_ack)
        << "thread " << t << ": an acknowledged sync write was lost: recovered prefix " << best
        << ", last acknowledged synced op " << last_synced_ack;
    EXPECT_GE(best, log.last_ack)
        << "thread " << t << ": an acknowledged write was lost in a process crash: recovered "
        << "prefix " << best << ", last acknowledged op " << log.last_ack;
    for (const auto& [key, value] : recovered) verified_[key] = value;
    for (int k = 0; k < kKeysPerThread; k++) {
      const std::string key = prefix + test::KeyOf(k, 4);
      if (recovered.count(key) == 0) verified_[key] = std::string(1, '\0') + "absent";
    }
    return log.last_ack + 1;
  }

  // Every key verified after an earlier crash still has that value; the
  // whole database scans cleanly.
  void VerifyEarlier(DB* db, int iter) {
    std::map<std::string, std::string> all;
    Status s = test::ReadAll(db, ReadOptions(), &all);
    ASSERT_TRUE(s.ok()) << S(s);
    const std::string current = "i" + std::to_string(1000 + iter);
    for (const auto& [key, value] : verified_) {
      if (key.compare(0, current.size(), current) >= 0) continue;  // this iteration's
      auto it = all.find(key);
      if (value == std::string(1, '\0') + "absent") {
        ASSERT_TRUE(it == all.end()) << key << " reappeared";
      } else {
        ASSERT_TRUE(it != all.end()) << key << " lost after a later crash";
        ASSERT_EQ(value, it->second) << key << " changed after a later crash";
      }
    }
  }

  test::TempDir tmp_;
  std::map<std::string, std::string> verified_;
};

TEST_F(DBCrashTest, KilledWriterLosesNoAcknowledgedWrite) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  const std::string dbname = tmp_.File("db");
  const int iterations = CrashIterations();
  int64_t total_acked = 0;
  for (int iter = 0; iter < iterations; iter++) {
    SCOPED_TRACE("crash iteration " + std::to_string(iter));
    ASSERT_EQ(1, ThreadCountWithoutIdleHelpers()) << "fork needs a single-threaded parent";
    int pipefd[2];
    ASSERT_EQ(0, ::pipe(pipefd));
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (pid == 0) {
      ::close(pipefd[0]);
      RunChild(dbname, tmp_.File("side-" + std::to_string(iter) + "-"), seed, iter, pipefd[1]);
    }
    ::close(pipefd[1]);
    char byte;
    const bool opened = ::read(pipefd[0], &byte, 1) == 1;
    ::close(pipefd[0]);
    const int delay_ms = 50 + static_cast<int>(rnd.Uniform(351));
    if (opened) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(pid, ::waitpid(pid, &wstatus, 0));
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
        << "the child failed before the kill (exit status "
        << (WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) << "); see its stderr";
    ASSERT_TRUE(opened);

    Options options = test::SmallTreeOptions(Env::Default());
    options.create_if_missing = false;
    // A kill leaves at most a torn or zero-filled WAL tail, which recovery
    // reads as the log's end: anything it would report is a bug.
    options.paranoid_checks = true;
    // The parent forks again: it must not start CUDA (or its threads).
    options.gpu_compaction = GpuCompaction::kOff;
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dbname, &db);
    ASSERT_TRUE(s.ok()) << "reopen after kill at " << delay_ms << " ms: " << S(s);
    for (int t = 0; t < kWriterThreads; t++) {
      total_acked += VerifyThread(db.get(), seed, iter, t);
    }
    ASSERT_NO_FATAL_FAILURE(VerifyEarlier(db.get(), iter));
    if (HasFailure()) break;
    s = db->Close();
    ASSERT_TRUE(s.ok()) << S(s);
  }
  std::fprintf(stderr, "%d crashes, %lld acknowledged operations checked\n", iterations,
               static_cast<long long>(total_acked));
  EXPECT_GT(total_acked, 0);
}

}  // namespace
}  // namespace accelkv
