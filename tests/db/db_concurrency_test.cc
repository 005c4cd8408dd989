// Concurrency: writers on disjoint key ranges, readers checking monotonic
// visibility, snapshot readers checking that a snapshot never changes, a
// maintenance thread calling Flush/CompactRange, and background compaction
// with small buffers, all at once. CI runs these tests under TSan
// (ctest -R "Concurren|SkipList"), so they are time-bounded:
// ACCELKV_CONCURRENCY_MS sets the busy period (default 1500 ms).
//
// Values are "<key>:<seq>:<padding>" where seq is the writer's counter, so a
// reader can tell which write it sees and that the bytes belong to the key.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accelkv/db.h"
#include "db/db_test_util.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

using test::S;

constexpr int kWriters = 3;
constexpr int kKeysPerWriter = 200;

std::string KeyFor(int writer, int k) {
  return "w" + std::to_string(writer) + "-" + test::KeyOf(static_cast<uint64_t>(k), 4);
}

std::string ValueFor(const std::string& key, uint64_t seq, size_t pad) {
  return key + ":" + std::to_string(seq) + ":" + std::string(pad, 'p');
}

// Parses "<key>:<seq>:..." and checks that the key matches. False if the
// value is not one a writer could have written for key.
bool ParseValue(const std::string& key, const std::string& value, uint64_t* seq) {
  if (value.size() < key.size() + 3 || value.compare(0, key.size(), key) != 0 ||
      value[key.size()] != ':') {
    return false;
  }
  const size_t start = key.size() + 1;
  const size_t colon = value.find(':', start);
  if (colon == std::string::npos || colon == start) return false;
  uint64_t n = 0;
  for (size_t i = start; i < colon; i++) {
    if (value[i] < '0' || value[i] > '9') return false;
    n = n * 10 + static_cast<uint64_t>(value[i] - '0');
  }
  for (size_t i = colon + 1; i < value.size(); i++) {
    if (value[i] != 'p') return false;
  }
  *seq = n;
  return true;
}

int BusyMillis() {
  const char* v = std::getenv("ACCELKV_CONCURRENCY_MS");
  return (v != nullptr && v[0] != '\0') ? std::atoi(v) : 1500;
}

// Parameters: Options::allow_concurrent_memtable_write (the group's writers
// link their own entries into the memtable, or the leader links all), how
// queued writers wait for their leader (Options::write_thread_*), and
// Options::enable_pipelined_write (the lead passes on before the links;
// sequences are published in order, which the snapshot reader checks: a
// snapshot's view must not change).
enum class WriterWait { kDefault, kSpin, kBlockAtOnce, kLongYield };
struct ConcurrencyParam {
  bool concurrent_links;
  WriterWait wait;
  bool pipelined = false;
};

class DBConcurrencyTest : public ::testing::TestWithParam<ConcurrencyParam> {
 protected:
  void SetUp() override {
    options_ = test::SmallTreeOptions(Env::Default());
    options_.allow_concurrent_memtable_write = GetParam().concurrent_links;
    options_.enable_pipelined_write = GetParam().pipelined;
    switch (GetParam().wait) {
      case WriterWait::kDefault:
        break;
      case WriterWait::kSpin:  // spin 200 us, then block (no yield phase)
        options_.write_thread_spin_usec = 200;
        options_.enable_write_thread_adaptive_yield = false;
        break;
      case WriterWait::kBlockAtOnce:  // the 200 pauses only, then block
        options_.write_thread_max_yield_usec = 0;
        break;
      case WriterWait::kLongYield:  // yield up to 1 ms, never cut short
        options_.write_thread_max_yield_usec = 1000;
        options_.write_thread_slow_yield_usec = 0;
        break;
    }
    Status s = DB::Open(options_, tmp_.File("db"), &db_);
    ASSERT_TRUE(s.ok()) << S(s);
    for (auto& row : acked_) {
      for (auto& a : row) a.store(0);
    }
    for (auto& i : issued_) i.store(0);
  }

  // Checks one read result of (writer, k) against what was acknowledged
  // before the read began (min_seq) and issued when it ended; updates the
  // reader's last-seen map. Returns false (and records a failure) on error.
  bool CheckRead(int w, int k, const Status& s, const std::string& value, uint64_t min_seq,
                 std::map<std::pair<int, int>, uint64_t>* last_seen) {
    const std::string key = KeyFor(w, k);
    if (s.IsNotFound()) {
      const uint64_t seen = (*last_seen)[std::make_pair(w, k)];
      EXPECT_EQ(0u, min_seq) << key << " not found after an acknowledged write";
      EXPECT_EQ(0u, seen) << key << " vanished after being seen";
      return min_seq == 0 && seen == 0;
    }
    if (!s.ok()) {
      ADD_FAILURE() << key << ": " << S(s);
      return false;
    }
    uint64_t seq = 0;
    if (!ParseValue(key, value, &seq)) {
      ADD_FAILURE() << key << ": a value never written: " << value.substr(0, 40);
      return false;
    }
    const uint64_t issued = issued_[w].load(std::memory_order_acquire);
    uint64_t& seen = (*last_seen)[std::make_pair(w, k)];
    bool ok = true;
    if (seq < min_seq) {
      ADD_FAILURE() << key << ": saw seq " << seq << ", older than acknowledged " << min_seq;
      ok = false;
    }
    if (seq > issued) {
      ADD_FAILURE() << key << ": saw seq " << seq << ", never issued (issued " << issued << ")";
      ok = false;
    }
    if (seq < seen) {
      ADD_FAILURE() << key << ": went back from seq " << seen << " to " << seq;
      ok = false;
    }
    if (seq > seen) seen = seq;
    return ok;
  }

  void Writer(int w, uint64_t seed) {
    Random rnd(seed);
    uint64_t seq = 0;
    while (!stop_.load(std::memory_order_acquire)) {
      WriteOptions wo;
      wo.sync = rnd.OneIn(30);
      if (rnd.OneIn(5)) {
        // A batch over several keys of this writer, all with one seq.
        seq++;
        issued_[w].store(seq, std::memory_order_release);
        WriteBatch batch;
        std::vector<int> ks;
        const int n = 2 + static_cast<int>(rnd.Uniform(6));
        for (int i = 0; i < n; i++) {
          const int k = static_cast<int>(rnd.Uniform(kKeysPerWriter));
          const std::string key = KeyFor(w, k);
          batch.Put(key, ValueFor(key, seq, rnd.Uniform(300)));
          ks.push_back(k);
        }
        Status s = db_->Write(wo, batch);
        if (!s.ok()) {
          ADD_FAILURE() << "Write: " << S(s);
          return;
        }
        for (int k : ks) acked_[w][k].store(seq, std::memory_order_release);
      } else {
        const int k = static_cast<int>(rnd.Uniform(kKeysPerWriter));
        const std::string key = KeyFor(w, k);
        seq++;
        issued_[w].store(seq, std::memory_order_release);
        Status s = db_->Put(wo, key, ValueFor(key, seq, rnd.Uniform(300)));
        if (!s.ok()) {
          ADD_FAILURE() << "Put: " << S(s);
          return;
        }
        acked_[w][k].store(seq, std::memory_order_release);
      }
      writes_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void Reader(uint64_t seed) {
    Random rnd(seed);
    std::map<std::pair<int, int>, uint64_t> last_seen;
    while (!stop_.load(std::memory_order_acquire)) {
      const int w = static_cast<int>(rnd.Uniform(kWriters));
      const uint64_t choice = rnd.Uniform(10);
      if (choice < 6) {
        const int k = static_cast<int>(rnd.Uniform(kKeysPerWriter));
        const uint64_t min_seq = acked_[w][k].load(std::memory_order_acquire);
        std::string value;
        Status s = db_->Get(ReadOptions(), KeyFor(w, k), &value);
        if (!CheckRead(w, k, s, value, min_seq, &last_seen)) return;
      } else if (choice < 8) {
        std::vector<int> ks;
        std::vector<uint64_t> mins;
        std::vector<std::string> key_strings;
        for (int i = 0; i < 8; i++) {
          ks.push_back(static_cast<int>(rnd.Uniform(kKeysPerWriter)));
          mins.push_back(acked_[w][ks.back()].load(std::memory_order_acquire));
          key_strings.push_back(KeyFor(w, ks.back()));
        }
        std::vector<Slice> keys(key_strings.begin(), key_strings.end());
        std::vector<std::string> values;
        std::vector<Status> st = db_->MultiGet(ReadOptions(), keys, &values);
        for (size_t i = 0; i < ks.size(); i++) {
          if (!CheckRead(w, ks[i], st[i], values[i], mins[i], &last_seen)) return;
        }
      } else {
        // A bounded scan over one writer's range, forward or backward.
        std::vector<uint64_t> mins(kKeysPerWriter);
        for (int k = 0; k < kKeysPerWriter; k++) {
          mins[k] = acked_[w][k].load(std::memory_order_acquire);
        }
        const std::string lo = "w" + std::to_string(w) + "-";
        const std::string hi = "w" + std::to_string(w) + ".";  // '.' follows '-'
        Slice lo_s(lo), hi_s(hi);
        ReadOptions ro;
        ro.iterate_lower_bound = &lo_s;
        ro.iterate_upper_bound = &hi_s;
        std::unique_ptr<Iterator> it = db_->NewIterator(ro);
        const bool forward = rnd.OneIn(2);
        std::vector<bool> present(kKeysPerWriter, false);
        std::string prev;
        bool first = true;
        for (forward ? it->SeekToFirst() : it->SeekToLast(); it->Valid();
             forward ? it->Next() : it->Prev()) {
          const std::string key = it->key().ToString();
          if (!first && (forward ? !(prev < key) : !(key < prev))) {
            ADD_FAILURE() << "iterator out of order: " << prev << " then " << key;
            return;
          }
          first = false;
          prev = key;
          const size_t dash = key.find('-');
          if (dash == std::string::npos || key.compare(0, dash + 1, lo) != 0 ||
              key.size() != dash + 6) {
            ADD_FAILURE() << "iterator returned a key out of bounds: " << key;
            return;
          }
          const int k = std::atoi(key.c_str() + dash + 2);
          present[k] = true;
          if (!CheckRead(w, k, Status::OK(), it->value().ToString(), mins[k], &last_seen)) return;
        }
        if (!it->status().ok()) {
          ADD_FAILURE() << "iterator: " << S(it->status());
          return;
        }
        for (int k = 0; k < kKeysPerWriter; k++) {
          if (!present[k] && mins[k] != 0) {
            ADD_FAILURE() << KeyFor(w, k) << " missing from an iterator";
            return;
          }
        }
      }
      reads_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // Takes a snapshot, records what it shows for some keys, and re-reads
  // them through Get, MultiGet and an iterator while writes go on.
  void SnapshotReader(uint64_t seed) {
    Random rnd(seed);
    while (!stop_.load(std::memory_order_acquire)) {
      const Snapshot* snap = db_->GetSnapshot();
      ReadOptions ro;
      ro.snapshot = snap;
      const int w = static_cast<int>(rnd.Uniform(kWriters));
      std::map<std::string, std::string> first;
      {
        std::unique_ptr<Iterator> it = db_->NewIterator(ro);
        const std::string lo = "w" + std::to_string(w) + "-";
        for (it->Seek(lo); it->Valid() && it->key().starts_with(lo); it->Next()) {
          first[it->key().ToString()] = it->value().ToString();
        }
        if (!it->status().ok()) {
          ADD_FAILURE() << S(it->status());
          db_->ReleaseSnapshot(snap);
          return;
        }
      }
      bool ok = true;
      for (int round = 0; round < 3 && ok && !stop_.load(); round++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::vector<std::string> key_strings;
        for (int i = 0; i < 10; i++) {
          key_strings.push_back(KeyFor(w, static_cast<int>(rnd.Uniform(kKeysPerWriter))));
        }
        for (const std::string& key : key_strings) {
          std::string v;
          Status s = db_->Get(ro, key, &v);
          auto f = first.find(key);
          if (f == first.end() ? !s.IsNotFound() : (!s.ok() || v != f->second)) {
            ADD_FAILURE() << "snapshot changed for " << key << ": " << S(s);
            ok = false;
          }
        }
        std::vector<Slice> keys(key_strings.begin(), key_strings.end());
        std::vector<std::string> values;
        std::vector<Status> st = db_->MultiGet(ro, keys, &values);
        for (size_t i = 0; i < keys.size(); i++) {
          auto f = first.find(key_strings[i]);
          if (f == first.end() ? !st[i].IsNotFound() : (!st[i].ok() || values[i] != f->second)) {
            ADD_FAILURE() << "snapshot MultiGet changed for " << key_strings[i];
            ok = false;
          }
        }
        std::map<std::string, std::string> again;
        std::unique_ptr<Iterator> it = db_->NewIterator(ro);
        const std::string lo = "w" + std::to_string(w) + "-";
        for (it->Seek(lo); it->Valid() && it->key().starts_with(lo); it->Next()) {
          again[it->key().ToString()] = it->value().ToString();
        }
        if (!it->status().ok() || again != first) {
          ADD_FAILURE() << "snapshot iterator changed: " << S(it->status()) << " " << first.size()
                        << " vs " << again.size() << " keys";
          ok = false;
        }
      }
      db_->ReleaseSnapshot(snap);
      if (!ok) return;
    }
  }

  void Maintenance(uint64_t seed) {
    Random rnd(seed);
    while (!stop_.load(std::memory_order_acquire)) {
      Status s;
      const uint64_t r = rnd.Uniform(4);
      if (r == 0) {
        s = db_->Flush(FlushOptions());
      } else if (r == 1) {
        FlushOptions fo;
        fo.wait = false;
        s = db_->Flush(fo);
      } else {
        const std::string a = KeyFor(static_cast<int>(rnd.Uniform(kWriters)),
                                     static_cast<int>(rnd.Uniform(kKeysPerWriter)));
        const std::string b = KeyFor(static_cast<int>(rnd.Uniform(kWriters)),
                                     static_cast<int>(rnd.Uniform(kKeysPerWriter)));
        const std::string lo = std::min(a, b), hi = std::max(a, b);
        Slice sa(lo), sb(hi);
        s = rnd.OneIn(4) ? db_->CompactRange(nullptr, nullptr) : db_->CompactRange(&sa, &sb);
      }
      if (!s.ok()) {
        ADD_FAILURE() << "maintenance: " << S(s);
        return;
      }
      std::string stats;
      EXPECT_TRUE(db_->GetProperty("accelkv.stats", &stats));
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
  }

  // After the threads stop: every key holds exactly its last acknowledged
  // value.
  void CheckFinal() {
    for (int w = 0; w < kWriters; w++) {
      for (int k = 0; k < kKeysPerWriter; k++) {
        const uint64_t want = acked_[w][k].load();
        std::string value;
        Status s = db_->Get(ReadOptions(), KeyFor(w, k), &value);
        if (want == 0) {
          ASSERT_TRUE(s.IsNotFound()) << KeyFor(w, k) << ": " << S(s);
          continue;
        }
        ASSERT_TRUE(s.ok()) << KeyFor(w, k) << ": " << S(s);
        uint64_t seq = 0;
        ASSERT_TRUE(ParseValue(KeyFor(w, k), value, &seq)) << value.substr(0, 40);
        ASSERT_EQ(want, seq) << KeyFor(w, k);
      }
    }
  }

  test::TempDir tmp_;
  Options options_;
  std::unique_ptr<DB> db_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> acked_[kWriters][kKeysPerWriter];
  std::atomic<uint64_t> issued_[kWriters];
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> reads_{0};
};

TEST_P(DBConcurrencyTest, ConcurrentWritersReadersSnapshotsAndCompaction) {
  const uint64_t seed = test::TestSeed();
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([this, w, seed] { Writer(w, seed + 1 + static_cast<uint64_t>(w)); });
  }
  for (int r = 0; r < 2; r++) {
    threads.emplace_back([this, r, seed] { Reader(seed + 100 + static_cast<uint64_t>(r)); });
  }
  threads.emplace_back([this, seed] { SnapshotReader(seed + 200); });
  threads.emplace_back([this, seed] { Maintenance(seed + 300); });
  std::this_thread::sleep_for(std::chrono::milliseconds(BusyMillis()));
  stop_.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();
  std::fprintf(stderr, "writes %llu, reads %llu\n", static_cast<unsigned long long>(writes_.load()),
               static_cast<unsigned long long>(reads_.load()));
  EXPECT_GT(writes_.load(), 0u);
  EXPECT_GT(reads_.load(), 0u);

  ASSERT_NO_FATAL_FAILURE(CheckFinal());
  Status s = test::WaitForBackgroundWork(db_.get());
  ASSERT_TRUE(s.ok()) << S(s);
  ASSERT_NO_FATAL_FAILURE(CheckFinal());
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  options_.create_if_missing = false;
  s = DB::Open(options_, tmp_.File("db"), &db_);
  ASSERT_TRUE(s.ok()) << S(s);
  ASSERT_NO_FATAL_FAILURE(CheckFinal());
}

// Many threads writing at once exercise group commit: every write is
// acknowledged exactly once and none is lost, sync or not.
TEST_P(DBConcurrencyTest, ConcurrentGroupCommitLosesNothing) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kPerThread; i++) {
        WriteOptions wo;
        wo.sync = (i % 16 == 0);
        const std::string key = "g" + std::to_string(t) + "-" + test::KeyOf(i, 4);
        Status s = db_->Put(wo, key, ValueFor(key, static_cast<uint64_t>(i), 50));
        if (!s.ok()) {
          ADD_FAILURE() << S(s);
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  auto check = [&] {
    std::map<std::string, std::string> all;
    ASSERT_TRUE(test::ReadAll(db_.get(), ReadOptions(), &all).ok());
    ASSERT_EQ(static_cast<size_t>(kThreads * kPerThread), all.size());
    for (const auto& [key, value] : all) {
      uint64_t seq;
      ASSERT_TRUE(ParseValue(key, value, &seq)) << key;
    }
  };
  check();
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  Status s = DB::Open(options_, tmp_.File("db"), &db_);
  ASSERT_TRUE(s.ok()) << S(s);
  check();
}

// A write is visible to its writer as soon as Put returns, also when
// another thread wrote its group (group commit, and the flat combining of
// later groups by a finishing leader): the leader publishes the group's
// sequence before it wakes the group's writers.
TEST_P(DBConcurrencyTest, WriterReadsItsOwnWriteUnderGroupCommit) {
  constexpr int kThreads = 12;
  constexpr int kPerThread = 400;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kPerThread; i++) {
        const std::string key = "own" + std::to_string(t) + "-" + test::KeyOf(i, 4);
        const std::string value = ValueFor(key, static_cast<uint64_t>(i), 30);
        Status s = db_->Put(WriteOptions(), key, value);
        if (!s.ok()) {
          ADD_FAILURE() << S(s);
          return;
        }
        std::string got;
        s = db_->Get(ReadOptions(), key, &got);
        if (!s.ok() || got != value) {
          ADD_FAILURE() << "thread " << t << " write " << i << ": " << S(s);
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
}

INSTANTIATE_TEST_SUITE_P(MemtableWrites, DBConcurrencyTest,
                         ::testing::Values(ConcurrencyParam{true, WriterWait::kDefault},
                                           ConcurrencyParam{false, WriterWait::kDefault},
                                           ConcurrencyParam{true, WriterWait::kSpin},
                                           ConcurrencyParam{true, WriterWait::kBlockAtOnce},
                                           ConcurrencyParam{true, WriterWait::kLongYield},
                                           ConcurrencyParam{true, WriterWait::kDefault, true},
                                           ConcurrencyParam{false, WriterWait::kDefault, true},
                                           ConcurrencyParam{true, WriterWait::kBlockAtOnce, true}),
                         [](const ::testing::TestParamInfo<ConcurrencyParam>& info) {
                           std::string name = info.param.pipelined ? "Pipelined" : "";
                           name += info.param.concurrent_links ? "ConcurrentLinks" : "LeaderLinks";
                           switch (info.param.wait) {
                             case WriterWait::kDefault:
                               break;
                             case WriterWait::kSpin:
                               name += "Spin";
                               break;
                             case WriterWait::kBlockAtOnce:
                               name += "BlockAtOnce";
                               break;
                             case WriterWait::kLongYield:
                               name += "LongYield";
                               break;
                           }
                           return name;
                         });

}  // namespace
}  // namespace accelkv
