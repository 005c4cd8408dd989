// VersionSet: LogAndApply + Recover round trips, MANIFEST failures through
// FaultInjectionEnv, CURRENT/MANIFEST damage, comparator mismatch, torn
// final records, invalid edits, live files and crash durability.
#include "version/version_set.h"

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "accelkv/env.h"
#include "env/fault_injection_env.h"
#include "testutil/test_util.h"
#include "util/filename.h"
#include "version/current_file.h"
#include "wal/log_writer.h"

namespace accelkv {
namespace {

class ReverseComparator final : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return -a.compare(b); }
  const char* Name() const override { return "test.ReverseComparator"; }
};

FileMetaData MakeFile(uint64_t number, const std::string& smallest, const std::string& largest,
                      SequenceNumber lo, SequenceNumber hi) {
  FileMetaData f;
  f.number = number;
  f.file_size = 1000 + number;
  f.smallest = InternalKey(smallest, lo, ValueType::kValue);
  f.largest = InternalKey(largest, hi, ValueType::kValue);
  f.smallest_seqno = lo;
  f.largest_seqno = hi;
  f.num_entries = 10 * number;
  f.num_deletions = number;
  return f;
}

class VersionSetTest : public ::testing::Test {
 protected:
  VersionSetTest()
      : mem_(NewMemEnv(Env::Default())),
        env_(std::make_unique<FaultInjectionEnv>(mem_.get())),
        icmp_(BytewiseComparator()) {
    EXPECT_TRUE(env_->CreateDir(kDb).ok());
    options_.env = env_.get();
    options_.num_levels = 7;
    TableOptions topts;
    topts.comparator = &icmp_;
    topts.user_comparator = BytewiseComparator();
    cache_ = std::make_unique<TableCache>(kDb, env_.get(), topts, 10);
  }

  // What DBImpl::NewDB writes: MANIFEST-1 with the counters, CURRENT -> it.
  void NewDB() {
    VersionEdit edit;
    edit.SetComparatorName(BytewiseComparator()->Name());
    edit.SetLogNumber(0);
    edit.SetNextFile(2);
    edit.SetLastSequence(0);
    WriteManifest(1, {edit});
    ASSERT_TRUE(SetCurrentFile(env_.get(), kDb, 1).ok());
  }

  void WriteManifest(uint64_t number, const std::vector<VersionEdit>& edits) {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(env_->NewWritableFile(DescriptorFileName(kDb, number), &file).ok());
    log::Writer writer(file.get());
    for (const VersionEdit& e : edits) {
      std::string record;
      e.EncodeTo(&record);
      ASSERT_TRUE(writer.AddRecord(record).ok());
    }
    ASSERT_TRUE(file->Sync().ok());
    ASSERT_TRUE(file->Close().ok());
  }

  std::unique_ptr<VersionSet> Open(Status* status, const Options* options = nullptr) {
    auto vs = std::make_unique<VersionSet>(kDb, options != nullptr ? options : &options_,
                                           cache_.get(), &icmp_);
    bool save_manifest = false;
    *status = vs->Recover(&save_manifest);
    if (status->ok()) {
      EXPECT_TRUE(save_manifest);
    }
    return vs;
  }

  std::unique_ptr<VersionSet> OpenOk() {
    Status s;
    auto vs = Open(&s);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return vs;
  }

  Status Apply(VersionSet* vs, VersionEdit* edit) {
    std::unique_lock<std::mutex> lock(mu_);
    Status s = vs->LogAndApply(edit, &mu_);
    EXPECT_TRUE(lock.owns_lock());
    return s;
  }

  // A textual digest of a version set's state, to compare two sets.
  static std::string State(const VersionSet& vs) {
    std::string r = vs.current()->DebugString();
    for (int level = 0; level < vs.NumLevels(); level++) {
      for (const FileMetaPtr& f : vs.current()->files(level)) {
        r += "#" + std::to_string(f->number) + " seq " + std::to_string(f->smallest_seqno) + "-" +
             std::to_string(f->largest_seqno) + " n " + std::to_string(f->num_entries) + "/" +
             std::to_string(f->num_deletions) + "\n";
      }
      r += "ptr" + std::to_string(level) + "=" + vs.compact_pointer(level) + "\n";
    }
    r += "log " + std::to_string(vs.LogNumber()) + " last " + std::to_string(vs.LastSequence());
    return r;
  }

  // Applies a sequence of typical edits (flushes, a compaction, a move).
  void ApplyHistory(VersionSet* vs) {
    VersionEdit e1;  // flush #2 and #3 into L0, WAL 4 is next
    vs->MarkFileNumberUsed(4);
    e1.SetLogNumber(4);
    e1.AddFile(0, MakeFile(2, "a", "m", 1, 50));
    e1.AddFile(0, MakeFile(3, "c", "z", 51, 90));
    vs->SetLastSequence(90);
    ASSERT_TRUE(Apply(vs, &e1).ok());

    VersionEdit e2;  // compact both into L1 as #5 and #6
    const uint64_t n5 = vs->NewFileNumber();
    const uint64_t n6 = vs->NewFileNumber();
    e2.RemoveFile(0, 2);
    e2.RemoveFile(0, 3);
    e2.AddFile(1, MakeFile(n5, "a", "k", 1, 90));
    e2.AddFile(1, MakeFile(n6, "l", "z", 3, 88));
    e2.SetCompactPointer(0, InternalKey("z", 51, ValueType::kValue));
    ASSERT_TRUE(Apply(vs, &e2).ok());

    VersionEdit e3;  // trivial move of #6 to L2, another flush
    const uint64_t n7 = vs->NewFileNumber();
    e3.RemoveFile(1, n6);
    e3.AddFile(2, MakeFile(n6, "l", "z", 3, 88));
    e3.AddFile(0, MakeFile(n7, "b", "d", 91, 120));
    e3.SetCompactPointer(1, InternalKey("k", 1, ValueType::kValue));
    vs->SetLastSequence(120);
    ASSERT_TRUE(Apply(vs, &e3).ok());
  }

  static constexpr const char* kDb = "/db";
  std::unique_ptr<Env> mem_;
  std::unique_ptr<FaultInjectionEnv> env_;
  InternalKeyComparator icmp_;
  Options options_;
  std::unique_ptr<TableCache> cache_;
  std::mutex mu_;
};

TEST_F(VersionSetTest, RecoverNewDB) {
  NewDB();
  auto vs = OpenOk();
  EXPECT_EQ(vs->LogNumber(), 0u);
  EXPECT_EQ(vs->LastSequence(), 0u);
  EXPECT_EQ(vs->ManifestFileNumber(), 1u);
  EXPECT_GE(vs->NewFileNumber(), 2u);
  for (int level = 0; level < vs->NumLevels(); level++) EXPECT_EQ(vs->NumLevelFiles(level), 0);
}

TEST_F(VersionSetTest, LogAndApplyThenRecoverGivesSameState) {
  NewDB();
  std::string state;
  uint64_t next_file;
  {
    auto vs = OpenOk();
    ApplyHistory(vs.get());
    EXPECT_EQ(vs->NumLevelFiles(0), 1);
    EXPECT_EQ(vs->NumLevelFiles(1), 1);
    EXPECT_EQ(vs->NumLevelFiles(2), 1);
    EXPECT_EQ(vs->LogNumber(), 4u);
    EXPECT_EQ(vs->LastSequence(), 120u);
    EXPECT_GT(vs->ManifestFileNumber(), 1u);  // a fresh MANIFEST was started
    state = State(*vs);
    next_file = vs->NewFileNumber();
  }
  auto vs = OpenOk();
  EXPECT_EQ(State(*vs), state);
  // Every number handed out before is above what recovery hands out next,
  // except the one allocated after the last edit (never logged).
  EXPECT_GE(vs->NewFileNumber(), next_file);

  // Recovering again after more edits on the recovered set still matches.
  VersionEdit more;
  more.AddFile(3, MakeFile(vs->NewFileNumber(), "p", "q", 5, 6));
  vs->SetLastSequence(200);
  ASSERT_TRUE(Apply(vs.get(), &more).ok());
  const std::string state2 = State(*vs);
  vs.reset();
  EXPECT_EQ(State(*OpenOk()), state2);
}

TEST_F(VersionSetTest, LevelsAreOrdered) {
  NewDB();
  auto vs = OpenOk();
  VersionEdit e;
  e.AddFile(0, MakeFile(10, "a", "b", 1, 5));
  e.AddFile(0, MakeFile(11, "a", "b", 6, 9));
  e.AddFile(0, MakeFile(12, "a", "b", 6, 9));  // same seqnos: higher number first
  e.AddFile(1, MakeFile(13, "x", "y", 1, 1));
  e.AddFile(1, MakeFile(14, "c", "d", 1, 1));
  vs->MarkFileNumberUsed(14);
  ASSERT_TRUE(Apply(vs.get(), &e).ok());
  const LevelFiles& l0 = vs->current()->files(0);
  ASSERT_EQ(l0.size(), 3u);
  EXPECT_EQ(l0[0]->number, 12u);
  EXPECT_EQ(l0[1]->number, 11u);
  EXPECT_EQ(l0[2]->number, 10u);
  const LevelFiles& l1 = vs->current()->files(1);
  ASSERT_EQ(l1.size(), 2u);
  EXPECT_EQ(l1[0]->number, 14u);
  EXPECT_EQ(l1[1]->number, 13u);
}

TEST_F(VersionSetTest, InvalidEditsLeaveCurrentUnchanged) {
  NewDB();
  auto vs = OpenOk();
  ApplyHistory(vs.get());
  Version* before = vs->current();
  const std::string state = State(*vs);

  VersionEdit remove_missing;
  remove_missing.RemoveFile(1, 999);
  EXPECT_TRUE(Apply(vs.get(), &remove_missing).IsCorruption());

  VersionEdit overlap;  // L1 holds [a..k]; this overlaps it
  overlap.AddFile(1, MakeFile(vs->NewFileNumber(), "j", "l", 1, 1));
  EXPECT_TRUE(Apply(vs.get(), &overlap).IsCorruption());

  VersionEdit duplicate;  // #7 is live (in L2)
  duplicate.AddFile(3, MakeFile(7, "a", "b", 1, 1));
  EXPECT_TRUE(Apply(vs.get(), &duplicate).IsCorruption());

  VersionEdit bad_level;
  bad_level.AddFile(7, MakeFile(vs->NewFileNumber(), "a", "b", 1, 1));
  EXPECT_FALSE(Apply(vs.get(), &bad_level).ok());

  VersionEdit bad_log;
  bad_log.SetLogNumber(1);  // below the current log number 4
  EXPECT_TRUE(Apply(vs.get(), &bad_log).IsInvalidArgument());

  EXPECT_EQ(vs->current(), before);
  EXPECT_EQ(State(*vs), state);
  vs.reset();
  EXPECT_EQ(State(*OpenOk()), state);  // nothing of them reached the MANIFEST
}

TEST_F(VersionSetTest, ManifestFailuresKeepCurrentAndNextCallStartsNewManifest) {
  struct Case {
    FaultKind kind;
    const char* filter;
  };
  for (const Case& c : {Case{FaultKind::kSync, "MANIFEST"}, Case{FaultKind::kWrite, "MANIFEST"},
                        Case{FaultKind::kOpenWritable, "MANIFEST"},
                        Case{FaultKind::kRename, "CURRENT"}, Case{FaultKind::kSyncDir, ""}}) {
    SCOPED_TRACE(FaultKindName(c.kind));
    for (bool first_call : {true, false}) {
      SCOPED_TRACE(first_call ? "first LogAndApply" : "later LogAndApply");
      // Fresh database each time.
      env_.reset();
      mem_ = NewMemEnv(Env::Default());
      env_ = std::make_unique<FaultInjectionEnv>(mem_.get());
      options_.env = env_.get();
      ASSERT_TRUE(env_->CreateDir(kDb).ok());
      NewDB();
      auto vs = OpenOk();
      if (!first_call) ApplyHistory(vs.get());
      // Opening, renaming and dir syncs happen only for a new MANIFEST.
      const bool applies = first_call || c.kind == FaultKind::kSync || c.kind == FaultKind::kWrite;
      Version* before = vs->current();
      const std::string state = State(*vs);
      const uint64_t manifest_before = vs->ManifestFileNumber();

      env_->SetFailure(c.kind, 0, /*one_shot=*/true, c.filter);
      VersionEdit e;
      e.AddFile(4, MakeFile(vs->NewFileNumber(), "f", "g", 1, 1));
      Status s = Apply(vs.get(), &e);
      if (!applies) {
        EXPECT_TRUE(s.ok()) << s.ToString();
        continue;
      }
      ASSERT_FALSE(s.ok());
      EXPECT_EQ(vs->current(), before);
      EXPECT_EQ(State(*vs), state);
      EXPECT_EQ(vs->ManifestFileNumber(), manifest_before);
      // A failed fresh MANIFEST that CURRENT does not name is gone. (After a
      // failed directory sync CURRENT may already name it: it stays.)
      std::vector<std::string> children;
      ASSERT_TRUE(env_->GetChildren(kDb, &children).ok());
      int manifests = 0;
      for (const std::string& name : children) manifests += name.rfind("MANIFEST-", 0) == 0;
      if (c.kind != FaultKind::kSyncDir) {
        EXPECT_EQ(manifests, first_call ? 1 : 2) << "leftover MANIFEST";
      }
      // The failed record's fate is unknown; after a crash, what is durable
      // recovers to the old state.
      ASSERT_TRUE(env_->SimulateCrash().ok());
      {
        auto again = OpenOk();
        EXPECT_EQ(State(*again), state);
      }

      // The next call succeeds, with a new MANIFEST.
      env_->ClearFailures();
      VersionEdit e2;
      e2.AddFile(5, MakeFile(vs->NewFileNumber(), "f", "g", 1, 1));
      s = Apply(vs.get(), &e2);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_GT(vs->ManifestFileNumber(), manifest_before);
      EXPECT_EQ(vs->NumLevelFiles(4), 0);
      EXPECT_EQ(vs->NumLevelFiles(5), 1);
      const std::string after = State(*vs);
      vs.reset();
      EXPECT_EQ(State(*OpenOk()), after);
    }
  }
}

TEST_F(VersionSetTest, SurvivesCrashAfterLogAndApply) {
  NewDB();
  std::string state;
  {
    auto vs = OpenOk();
    ApplyHistory(vs.get());
    state = State(*vs);
    // Crash with the MANIFEST still open: only synced data and dir entries survive.
    ASSERT_TRUE(env_->SimulateCrash().ok());
  }
  EXPECT_EQ(State(*OpenOk()), state);
}

TEST_F(VersionSetTest, ComparatorMismatchIsInvalidArgument) {
  NewDB();
  ReverseComparator reverse;
  Options other = options_;
  other.comparator = &reverse;
  Status s;
  auto vs = Open(&s, &other);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("test.ReverseComparator"), std::string::npos);
}

TEST_F(VersionSetTest, MissingOrBadCurrent) {
  Status s;
  Open(&s);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();  // no CURRENT at all
  EXPECT_NE(s.ToString().find("CURRENT"), std::string::npos);

  NewDB();
  const std::string current = CurrentFileName(kDb);
  for (const char* contents :
       {"", "MANIFEST-000001", "garbage\n", "000001.log\n", "MANIFEST-000009\n", "MANIFEST-\n"}) {
    ASSERT_TRUE(WriteStringToFile(env_.get(), contents, current, true).ok());
    Open(&s);
    EXPECT_TRUE(s.IsCorruption()) << "CURRENT = '" << contents << "': " << s.ToString();
  }
  ASSERT_TRUE(WriteStringToFile(env_.get(), "MANIFEST-000001\n", current, true).ok());
  OpenOk();
}

TEST_F(VersionSetTest, TornLastManifestRecordRecoversPreviousState) {
  NewDB();
  std::string previous;
  std::string manifest;
  {
    auto vs = OpenOk();
    ApplyHistory(vs.get());
    previous = State(*vs);
    manifest = DescriptorFileName(kDb, vs->ManifestFileNumber());
    VersionEdit last;
    last.AddFile(3, MakeFile(vs->NewFileNumber(), "q", "r", 7, 8));
    vs->SetLastSequence(500);
    ASSERT_TRUE(Apply(vs.get(), &last).ok());
  }
  std::string full;
  ASSERT_TRUE(ReadFileToString(env_.get(), manifest, &full).ok());
  uint64_t last_size = 0;
  {
    VersionEdit probe;  // the size of the final record
    probe.AddFile(3, MakeFile(1, "q", "r", 7, 8));
    std::string rec;
    probe.EncodeTo(&rec);
    last_size = rec.size();
  }
  ASSERT_GT(full.size(), last_size + log::kHeaderSize);
  for (size_t cut = full.size() - last_size - log::kHeaderSize; cut < full.size(); cut++) {
    ASSERT_TRUE(WriteStringToFile(env_.get(), Slice(full.data(), cut), manifest, true).ok());
    Status s;
    auto vs = Open(&s);
    ASSERT_TRUE(s.ok()) << "cut at " << cut << ": " << s.ToString();
    ASSERT_EQ(State(*vs), previous) << "cut at " << cut;
  }
}

TEST_F(VersionSetTest, CorruptManifestIsCorruption) {
  NewDB();
  std::string manifest;
  {
    auto vs = OpenOk();
    ApplyHistory(vs.get());
    manifest = DescriptorFileName(kDb, vs->ManifestFileNumber());
  }
  std::string full;
  ASSERT_TRUE(ReadFileToString(env_.get(), manifest, &full).ok());
  // Flip a byte in the first record (the snapshot): a checksum mismatch in
  // the middle of the MANIFEST.
  std::string damaged = full;
  damaged[log::kHeaderSize + 3] ^= 0x40;
  ASSERT_TRUE(WriteStringToFile(env_.get(), damaged, manifest, true).ok());
  Status s;
  Open(&s);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("MANIFEST"), std::string::npos);
}

TEST_F(VersionSetTest, ManifestMissingCountersOrWithBadEditsIsCorruption) {
  VersionEdit only_comparator;
  only_comparator.SetComparatorName(BytewiseComparator()->Name());
  VersionEdit counters;
  counters.SetLogNumber(0);
  counters.SetNextFile(10);
  counters.SetLastSequence(0);
  VersionEdit no_next;
  no_next.SetLogNumber(0);
  no_next.SetLastSequence(0);
  VersionEdit remove_missing;
  remove_missing.RemoveFile(2, 5);

  struct Case {
    const char* name;
    std::vector<VersionEdit> edits;
  };
  for (const Case& c :
       {Case{"no counters", {only_comparator}}, Case{"no next file", {only_comparator, no_next}},
        Case{"removes a missing file", {only_comparator, counters, remove_missing}},
        Case{"empty", {}}}) {
    WriteManifest(3, c.edits);
    ASSERT_TRUE(SetCurrentFile(env_.get(), kDb, 3).ok());
    Status s;
    Open(&s);
    EXPECT_TRUE(s.IsCorruption()) << c.name << ": " << s.ToString();
  }
  // A MANIFEST that is not a log at all.
  ASSERT_TRUE(
      WriteStringToFile(env_.get(), std::string(100, 'x'), DescriptorFileName(kDb, 3), true).ok());
  Status s;
  Open(&s);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

TEST_F(VersionSetTest, LiveFilesIncludeReferencedOldVersions) {
  NewDB();
  auto vs = OpenOk();
  VersionEdit add;
  add.AddFile(0, MakeFile(vs->NewFileNumber(), "a", "b", 1, 1));
  ASSERT_TRUE(Apply(vs.get(), &add).ok());
  const uint64_t old_file = vs->current()->files(0)[0]->number;

  Version* pinned = vs->current();
  pinned->Ref();
  VersionEdit replace;
  replace.RemoveFile(0, old_file);
  replace.AddFile(1, MakeFile(vs->NewFileNumber(), "a", "b", 1, 1));
  ASSERT_TRUE(Apply(vs.get(), &replace).ok());

  std::set<uint64_t> live;
  vs->AddLiveFiles(&live);
  EXPECT_EQ(live.count(old_file), 1u);  // the pinned version still names it
  EXPECT_EQ(live.size(), 2u);
  pinned->Unref();
  live.clear();
  vs->AddLiveFiles(&live);
  EXPECT_EQ(live.count(old_file), 0u);
  EXPECT_EQ(live.size(), 1u);
}

}  // namespace
}  // namespace accelkv
