// Randomized model test: a random mix of puts, deletes, batches, gets,
// MultiGets, bounded iterators (both directions), snapshots, flushes,
// CompactRange and reopen, each result checked against an in-memory oracle
// (a std::map, plus a saved copy per live snapshot). Small buffers and files
// make flushes and multi-level compactions happen during the run.
//
// Runs over the POSIX Env (a TempDir) and the in-memory Env.
// ACCELKV_SEED=<n> replays a run; ACCELKV_MODEL_OPS=<n> sets the operations
// per seed (default 3000) and ACCELKV_MODEL_SEEDS=<n> the seeds (default 8).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/db.h"
#include "accelkv/env.h"
#include "db/db_test_util.h"
#include "gpu/gpu_executor.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

using Model = std::map<std::string, std::string>;
using test::S;

int EnvInt(const char* name, int def) {
  const char* v = std::getenv(name);
  if (v == nullptr || v[0] == '\0') return def;
  return std::atoi(v);
}

// The expected behaviour of a DB iterator over `model` with bounds.
class ModelIterator {
 public:
  ModelIterator(const Model* model, const std::string* lower, const std::string* upper)
      : m_(model), lower_(lower), upper_(upper), pos_(model->end()) {}

  bool Valid() const { return pos_ != m_->end(); }
  const std::string& key() const { return pos_->first; }
  const std::string& value() const { return pos_->second; }

  void SeekToFirst() { Seek(lower_ != nullptr ? *lower_ : std::string()); }
  void SeekToLast() {
    pos_ = upper_ != nullptr ? m_->lower_bound(*upper_) : m_->end();
    StepBack();
  }
  void Seek(const std::string& target) {
    const std::string& t = (lower_ != nullptr && target < *lower_) ? *lower_ : target;
    pos_ = m_->lower_bound(t);
    ClampUpper();
  }
  void SeekForPrev(const std::string& target) {
    pos_ = m_->upper_bound(target);  // first > target
    if (upper_ != nullptr) {
      auto hi = m_->lower_bound(*upper_);  // first >= upper
      if (hi != m_->end() && (pos_ == m_->end() || hi->first < pos_->first)) pos_ = hi;
    }
    StepBack();
  }
  void Next() {
    ++pos_;
    ClampUpper();
  }
  void Prev() { StepBack(); }

 private:
  // Moves to the entry before pos_ (which may be end()), honouring the
  // lower bound.
  void StepBack() {
    if (pos_ == m_->begin()) {
      pos_ = m_->end();
      return;
    }
    --pos_;
    if (lower_ != nullptr && pos_->first < *lower_) pos_ = m_->end();
  }
  void ClampUpper() {
    if (pos_ != m_->end() && upper_ != nullptr && !(pos_->first < *upper_)) pos_ = m_->end();
  }

  const Model* m_;
  const std::string* lower_;
  const std::string* upper_;
  Model::const_iterator pos_;
};

enum class EnvKind { kPosix, kMem };

class DBModelTest : public ::testing::TestWithParam<EnvKind> {
 protected:
  void SetUp() override {
    if (GetParam() == EnvKind::kMem) {
      mem_env_ = NewMemEnv(Env::Default());
      env_ = mem_env_.get();
    } else {
      env_ = Env::Default();
    }
  }

  test::TempDir tmp_;
  std::unique_ptr<Env> mem_env_;
  Env* env_ = nullptr;
};

// One seed's run: owns the DB, the oracle and the snapshots.
class ModelRun {
 public:
  ModelRun(Env* env, std::string dbname, uint64_t seed)
      : env_(env), dbname_(std::move(dbname)), rnd_(seed), options_(test::SmallTreeOptions(env)) {
    // One to four subcompactions, by the seed: ranges balanced by the
    // inputs' indexes (DBImpl::RunCompaction), each on its own thread.
    options_.max_subcompactions = 1 + static_cast<int>(seed % 4);
  }

  ~ModelRun() {
    ReleaseAllSnapshots();
    db_.reset();
  }

  void Open() {
    Status s = DB::Open(options_, dbname_, &db_);
    ASSERT_TRUE(s.ok()) << S(s);
  }

  void Run(int ops) {
    ASSERT_NO_FATAL_FAILURE(Open());
    for (op_ = 0; op_ < ops; op_++) {
      ASSERT_NO_FATAL_FAILURE(Step()) << "at op " << op_;
    }
    ASSERT_NO_FATAL_FAILURE(CheckAll(model_, nullptr)) << "final check";
    Status s = test::WaitForBackgroundWork(db_.get());
    ASSERT_TRUE(s.ok()) << S(s);
    ASSERT_NO_FATAL_FAILURE(CheckAll(model_, nullptr)) << "after background work";
    ReleaseAllSnapshots();
    // Compaction really ran: tables below level 0.
    EXPECT_GE(test::NumFilesBelowLevel0(db_.get(), options_.num_levels), 1);
    for (int level = 2; level < options_.num_levels; level++) {
      if (test::NumFilesAtLevel(db_.get(), level) > 0) reached_level2_ = true;
    }
    std::string json;
    ASSERT_TRUE(db_->GetProperty("accelkv.stats.json", &json));
    if (options_.gpu_compaction == GpuCompaction::kForce &&
        json.find("\"gpu\":\"gpu compaction: on") != std::string::npos) {
      // Forced onto a present GPU executor: since the last open no job ran on
      // the CPU executor (no fallback, nothing refused).
      EXPECT_EQ(std::string::npos, json.find("\"cpu\":{")) << json;
      if (json.find("\"gpu\":{\"jobs\":") != std::string::npos &&
          json.find("\"gpu\":{\"jobs\":0,") == std::string::npos) {
        gpu_jobs_seen_ = true;
      }
    }
    ASSERT_NO_FATAL_FAILURE(Reopen());
    ASSERT_NO_FATAL_FAILURE(CheckAll(model_, nullptr)) << "after final reopen";
  }

  bool reached_level2() const { return reached_level2_; }
  bool gpu_jobs_seen() const { return gpu_jobs_seen_; }

 private:
  struct SavedSnapshot {
    const Snapshot* snap;
    Model model;
  };

  std::string RandomKey() {
    if (rnd_.OneIn(200)) return std::string();
    return test::KeyOf(rnd_.Uniform(kKeySpace), 4);
  }
  std::string RandomValue() {
    const size_t len = rnd_.OneIn(10) ? rnd_.Uniform(4000) : rnd_.Uniform(400);
    std::string v = "v" + std::to_string(op_) + ".";
    v.append(len, static_cast<char>('a' + op_ % 26));
    return v;
  }
  // A key for reads: present ones most of the time.
  std::string ReadKey() {
    if (!model_.empty() && rnd_.OneIn(2)) {
      auto it = model_.lower_bound(RandomKey());
      if (it != model_.end()) return it->first;
    }
    return RandomKey();
  }

  // Picks the latest state (nullptr) or a live snapshot.
  const SavedSnapshot* PickView() {
    if (snapshots_.empty() || rnd_.OneIn(2)) return nullptr;
    return &snapshots_[rnd_.Uniform(snapshots_.size())];
  }

  void Step() {
    const uint64_t r = rnd_.Uniform(1000);
    if (r < 330) {
      std::string k = RandomKey(), v = RandomValue();
      ASSERT_TRUE(db_->Put(RandomWriteOptions(), k, v).ok());
      model_[k] = v;
    } else if (r < 420) {
      std::string k = ReadKey();
      ASSERT_TRUE(db_->Delete(RandomWriteOptions(), k).ok());
      model_.erase(k);
    } else if (r < 500) {
      WriteBatch batch;
      Model after = model_;
      const int n = 1 + static_cast<int>(rnd_.Uniform(12));
      for (int i = 0; i < n; i++) {
        std::string k = rnd_.OneIn(3) ? ReadKey() : RandomKey();
        if (rnd_.OneIn(4)) {
          batch.Delete(k);
          after.erase(k);
        } else {
          std::string v = RandomValue();
          batch.Put(k, v);
          after[k] = v;
        }
      }
      ASSERT_TRUE(db_->Write(RandomWriteOptions(), batch).ok());
      model_ = std::move(after);
    } else if (r < 650) {
      CheckGet(ReadKey(), PickView());
    } else if (r < 700) {
      ASSERT_NO_FATAL_FAILURE(CheckMultiGet(PickView()));
    } else if (r < 840) {
      ASSERT_NO_FATAL_FAILURE(CheckIterator(PickView()));
    } else if (r < 880) {
      if (snapshots_.size() < 4) snapshots_.push_back({db_->GetSnapshot(), model_});
    } else if (r < 910) {
      if (!snapshots_.empty()) {
        const size_t i = rnd_.Uniform(snapshots_.size());
        db_->ReleaseSnapshot(snapshots_[i].snap);
        snapshots_.erase(snapshots_.begin() + static_cast<long>(i));
      }
    } else if (r < 940) {
      FlushOptions fo;
      fo.wait = !rnd_.OneIn(4);
      Status s = db_->Flush(fo);
      ASSERT_TRUE(s.ok()) << S(s);
    } else if (r < 955) {
      std::string a = RandomKey(), b = RandomKey();
      if (b < a) std::swap(a, b);
      Slice sa(a), sb(b);
      const bool full = rnd_.OneIn(3);
      Status s = db_->CompactRange(full ? nullptr : &sa, full ? nullptr : &sb);
      ASSERT_TRUE(s.ok()) << S(s);
    } else if (r < 960) {
      ASSERT_NO_FATAL_FAILURE(Reopen());
      if (rnd_.OneIn(3)) {
        ASSERT_NO_FATAL_FAILURE(CheckAll(model_, nullptr));
      }
    } else if (r < 970) {
      const SavedSnapshot* view = PickView();
      ASSERT_NO_FATAL_FAILURE(CheckAll(view ? view->model : model_, view ? view->snap : nullptr));
    } else {
      // A run of puts to fill the memtable and trigger background work.
      for (int i = 0; i < 20; i++) {
        std::string k = RandomKey(), v = RandomValue();
        ASSERT_TRUE(db_->Put(WriteOptions(), k, v).ok());
        model_[k] = v;
      }
    }
  }

  WriteOptions RandomWriteOptions() {
    WriteOptions wo;
    wo.sync = rnd_.OneIn(50);
    return wo;
  }

  void CheckGet(const std::string& key, const SavedSnapshot* view) {
    const Model& m = view ? view->model : model_;
    ReadOptions ro;
    ro.snapshot = view ? view->snap : nullptr;
    std::string value;
    Status s = db_->Get(ro, key, &value);
    auto it = m.find(key);
    if (it == m.end()) {
      EXPECT_TRUE(s.IsNotFound()) << "key " << key << ": " << S(s) << " value "
                                  << value.substr(0, 20);
    } else {
      ASSERT_TRUE(s.ok()) << "key " << key << ": " << S(s);
      EXPECT_EQ(it->second, value) << "key " << key;
    }
  }

  void CheckMultiGet(const SavedSnapshot* view) {
    const Model& m = view ? view->model : model_;
    ReadOptions ro;
    ro.snapshot = view ? view->snap : nullptr;
    std::vector<std::string> key_strings;
    const int n = 1 + static_cast<int>(rnd_.Uniform(20));
    for (int i = 0; i < n; i++) key_strings.push_back(ReadKey());
    std::vector<Slice> keys(key_strings.begin(), key_strings.end());
    std::vector<std::string> values;
    std::vector<Status> st = db_->MultiGet(ro, keys, &values);
    ASSERT_EQ(keys.size(), st.size());
    ASSERT_EQ(keys.size(), values.size());
    for (size_t i = 0; i < keys.size(); i++) {
      auto it = m.find(key_strings[i]);
      if (it == m.end()) {
        EXPECT_TRUE(st[i].IsNotFound()) << "key " << key_strings[i] << ": " << S(st[i]);
      } else {
        ASSERT_TRUE(st[i].ok()) << "key " << key_strings[i] << ": " << S(st[i]);
        EXPECT_EQ(it->second, values[i]) << "key " << key_strings[i];
      }
    }
  }

  void CheckIterator(const SavedSnapshot* view) {
    const Model& m = view ? view->model : model_;
    ReadOptions ro;
    ro.snapshot = view ? view->snap : nullptr;
    std::string lower, upper;
    Slice lower_slice, upper_slice;
    const bool has_lower = rnd_.OneIn(3), has_upper = rnd_.OneIn(3);
    if (has_lower) {
      lower = RandomKey();
      lower_slice = lower;
      ro.iterate_lower_bound = &lower_slice;
    }
    if (has_upper) {
      upper = RandomKey();
      upper_slice = upper;
      ro.iterate_upper_bound = &upper_slice;
    }
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    // Writes after the iterator's creation must not show through it. The
    // state the iterator must show is m, copied first if m is model_.
    const bool write_after = rnd_.OneIn(4);
    Model copy;
    if (write_after && view == nullptr) copy = m;
    const Model& frozen = (write_after && view == nullptr) ? copy : m;
    ModelIterator frozen_expect(&frozen, has_lower ? &lower : nullptr,
                                has_upper ? &upper : nullptr);
    if (write_after) {
      std::string k = RandomKey();
      ASSERT_TRUE(db_->Put(WriteOptions(), k, "after-iterator").ok());
      model_[k] = "after-iterator";
    }
    std::string trace;
    const int moves = 5 + static_cast<int>(rnd_.Uniform(30));
    for (int i = 0; i < moves; i++) {
      const uint64_t r = rnd_.Uniform(10);
      if (r == 0 || (!frozen_expect.Valid() && r < 6)) {
        if (rnd_.OneIn(2)) {
          it->SeekToFirst();
          frozen_expect.SeekToFirst();
          trace += " SeekToFirst";
        } else {
          it->SeekToLast();
          frozen_expect.SeekToLast();
          trace += " SeekToLast";
        }
      } else if (r == 1) {
        std::string t = RandomKey();
        it->Seek(t);
        frozen_expect.Seek(t);
        trace += " Seek(" + t + ")";
      } else if (r == 2) {
        std::string t = RandomKey();
        it->SeekForPrev(t);
        frozen_expect.SeekForPrev(t);
        trace += " SeekForPrev(" + t + ")";
      } else if (!frozen_expect.Valid()) {
        continue;
      } else if (r < 7) {
        it->Next();
        frozen_expect.Next();
        trace += " Next";
      } else {
        it->Prev();
        frozen_expect.Prev();
        trace += " Prev";
      }
      ASSERT_EQ(frozen_expect.Valid(), it->Valid())
          << "bounds [" << (has_lower ? lower : "-") << ", " << (has_upper ? upper : "-")
          << ") moves:" << trace << " status " << S(it->status());
      if (it->Valid()) {
        ASSERT_EQ(frozen_expect.key(), it->key().ToString()) << "moves:" << trace;
        ASSERT_EQ(frozen_expect.value(), it->value().ToString()) << "moves:" << trace;
      }
    }
    ASSERT_TRUE(it->status().ok()) << S(it->status());
  }

  // Full scan in both directions against m.
  void CheckAll(const Model& m, const Snapshot* snap) {
    ReadOptions ro;
    ro.snapshot = snap;
    Model got;
    Status s = test::ReadAll(db_.get(), ro, &got);
    ASSERT_TRUE(s.ok()) << S(s);
    ASSERT_EQ(m.size(), got.size());
    ASSERT_TRUE(m == got) << "forward scan differs from the model";
    s = test::ReadAllBackward(db_.get(), ro, &got);
    ASSERT_TRUE(s.ok()) << S(s);
    ASSERT_TRUE(m == got) << "backward scan differs from the model";
  }

  void ReleaseAllSnapshots() {
    if (db_) {
      for (const SavedSnapshot& s : snapshots_) db_->ReleaseSnapshot(s.snap);
    }
    snapshots_.clear();
  }

  void Reopen() {
    ReleaseAllSnapshots();
    Status s = db_->Close();
    ASSERT_TRUE(s.ok()) << S(s);
    db_.reset();
    options_.create_if_missing = false;
    ASSERT_NO_FATAL_FAILURE(Open());
  }

  static constexpr uint64_t kKeySpace = 1500;

  Env* const env_;
  const std::string dbname_;
  Random rnd_;
  Options options_;
  std::unique_ptr<DB> db_;
  Model model_;
  std::vector<SavedSnapshot> snapshots_;
  int op_ = 0;
  bool reached_level2_ = false;
  bool gpu_jobs_seen_ = false;
};

TEST_P(DBModelTest, RandomOpsMatchOracle) {
  const uint64_t base_seed = test::TestSeed();
  const int seeds = EnvInt("ACCELKV_MODEL_SEEDS", 8);
  const int ops = EnvInt("ACCELKV_MODEL_OPS", 3000);
  bool reached_level2 = false;
  bool gpu_jobs_seen = false;
  for (int i = 0; i < seeds; i++) {
    const uint64_t seed = base_seed + static_cast<uint64_t>(i);
    SCOPED_TRACE("seed " + std::to_string(seed) + " (ACCELKV_SEED=" + std::to_string(base_seed) +
                 ", run " + std::to_string(i) + ")");
    const std::string dbname = GetParam() == EnvKind::kMem ? "/model-db" + std::to_string(i)
                                                           : tmp_.File("db" + std::to_string(i));
    {
      ModelRun run(env_, dbname, seed);
      ASSERT_NO_FATAL_FAILURE(run.Run(ops));
      reached_level2 = reached_level2 || run.reached_level2();
      gpu_jobs_seen = gpu_jobs_seen || run.gpu_jobs_seen();
    }
    ASSERT_TRUE(DestroyDB(dbname, test::SmallTreeOptions(env_)).ok());
  }
  // Over all seeds the tree grew beyond level 1: multi-level compactions ran.
  if (ops >= 3000) {
    EXPECT_TRUE(reached_level2);
    // Forced onto a present GPU executor: some seed's final stats show its jobs.
    Options probe = test::SmallTreeOptions(env_);
    std::string line;
    if (probe.gpu_compaction == GpuCompaction::kForce &&
        NewDatabaseGpuExecutor(probe, &line) != nullptr) {
      EXPECT_TRUE(gpu_jobs_seen) << line;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Envs, DBModelTest, ::testing::Values(EnvKind::kPosix, EnvKind::kMem),
                         [](const ::testing::TestParamInfo<EnvKind>& info) {
                           return info.param == EnvKind::kPosix ? "Posix" : "Mem";
                         });

}  // namespace
}  // namespace accelkv
