// FaultInjectionEnv: error injection per FaultKind, and the crash model,
// over both MemEnv and PosixEnv.
#include "env/fault_injection_env.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "env/posix_direct_random_access_file.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

enum class BaseKind { kPosix, kMem };

class FaultInjectionEnvTest : public ::testing::TestWithParam<BaseKind> {
 protected:
  void SetUp() override {
    if (GetParam() == BaseKind::kPosix) {
      base_ = Env::Default();
      dir_ = tmp_.path();
    } else {
      mem_ = NewMemEnv(Env::Default());
      base_ = mem_.get();
      dir_ = "/db";
      ASSERT_TRUE(base_->CreateDir(dir_).ok());
    }
    env_ = std::make_unique<FaultInjectionEnv>(base_);
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string Contents(const std::string& fname) {
    std::string data;
    Status s = ReadFileToString(base_, fname, &data);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return data;
  }

  std::unique_ptr<WritableFile> Open(const std::string& name) {
    std::unique_ptr<WritableFile> w;
    Status s = env_->NewWritableFile(Path(name), &w);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return w;
  }

  static bool IsInjected(const Status& s) {
    return s.IsIOError() && s.ToString().find("injected fault") != std::string::npos;
  }

  test::TempDir tmp_;
  std::unique_ptr<Env> mem_;
  Env* base_ = nullptr;
  std::string dir_;
  std::unique_ptr<FaultInjectionEnv> env_;
};

TEST_P(FaultInjectionEnvTest, PassesThroughWithoutFaults) {
  ASSERT_TRUE(WriteStringToFile(env_.get(), "abc", Path("f"), true).ok());
  std::string data;
  ASSERT_TRUE(ReadFileToString(env_.get(), Path("f"), &data).ok());
  EXPECT_EQ("abc", data);
  ASSERT_TRUE(env_->RenameFile(Path("f"), Path("g")).ok());
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  ASSERT_TRUE(env_->RemoveFile(Path("g")).ok());
  EXPECT_EQ(1u, env_->OpCount(FaultKind::kOpenWritable));
  EXPECT_EQ(1u, env_->OpCount(FaultKind::kWrite));  // one Append
  EXPECT_EQ(1u, env_->OpCount(FaultKind::kSync));
  EXPECT_EQ(1u, env_->OpCount(FaultKind::kOpenReadable));
  EXPECT_EQ(1u, env_->OpCount(FaultKind::kRead));  // one short read: end of file
  EXPECT_EQ(1u, env_->OpCount(FaultKind::kRename));
  EXPECT_EQ(1u, env_->OpCount(FaultKind::kSyncDir));
  EXPECT_EQ(1u, env_->OpCount(FaultKind::kRemove));
  for (int k = 0; k < kNumFaultKinds; k++) {
    EXPECT_EQ(0u, env_->InjectedCount(static_cast<FaultKind>(k)));
  }
}

TEST_P(FaultInjectionEnvTest, WriteFaultAfterNOpsOneShot) {
  auto w = Open("w.log");
  env_->SetFailure(FaultKind::kWrite, 2, /*one_shot=*/true);
  EXPECT_TRUE(w->Append("a").ok());
  EXPECT_TRUE(w->Flush().ok());
  EXPECT_TRUE(IsInjected(w->Append("b")));  // the third write op
  EXPECT_TRUE(w->Append("c").ok());         // one shot: disarmed
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ("ac", Contents(Path("w.log")));  // the failed Append never reached the base
  EXPECT_EQ(1u, env_->InjectedCount(FaultKind::kWrite));
  EXPECT_EQ(4u, env_->OpCount(FaultKind::kWrite));
}

TEST_P(FaultInjectionEnvTest, PersistentFaultUntilCleared) {
  auto w = Open("p");
  env_->SetFailure(FaultKind::kSync, 0, /*one_shot=*/false);
  ASSERT_TRUE(w->Append("x").ok());
  EXPECT_TRUE(IsInjected(w->Sync()));
  EXPECT_TRUE(IsInjected(w->Sync()));
  EXPECT_EQ(2u, env_->InjectedCount(FaultKind::kSync));
  env_->ClearFailures();
  EXPECT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Close().ok());
}

TEST_P(FaultInjectionEnvTest, PathFilterSelectsFiles) {
  env_->SetFailure(FaultKind::kOpenWritable, 0, /*one_shot=*/false, ".log");
  std::unique_ptr<WritableFile> w;
  EXPECT_TRUE(IsInjected(env_->NewWritableFile(Path("000001.log"), &w)));
  EXPECT_EQ(nullptr, w);
  EXPECT_FALSE(base_->FileExists(Path("000001.log")));
  EXPECT_TRUE(env_->NewWritableFile(Path("000002.sst"), &w).ok());
  EXPECT_TRUE(IsInjected(env_->NewAppendableFile(Path("000003.log"), &w)));
  EXPECT_EQ(2u, env_->InjectedCount(FaultKind::kOpenWritable));
  EXPECT_EQ(3u, env_->OpCount(FaultKind::kOpenWritable));
}

TEST_P(FaultInjectionEnvTest, ReadFaults) {
  ASSERT_TRUE(WriteStringToFile(base_, "0123456789", Path("r"), false).ok());
  std::unique_ptr<RandomAccessFile> ra;
  ASSERT_TRUE(env_->NewRandomAccessFile(Path("r"), &ra).ok());
  std::unique_ptr<SequentialFile> seq;
  ASSERT_TRUE(env_->NewSequentialFile(Path("r"), &seq).ok());
  env_->SetFailure(FaultKind::kRead, 1, /*one_shot=*/false);
  char scratch[16];
  Slice r;
  ASSERT_TRUE(ra->Read(2, 3, &r, scratch).ok());
  EXPECT_EQ("234", r.ToString());
  EXPECT_TRUE(IsInjected(ra->Read(0, 3, &r, scratch)));
  EXPECT_EQ(0u, r.size());
  EXPECT_TRUE(IsInjected(seq->Read(3, &r, scratch)));
  EXPECT_TRUE(IsInjected(seq->Skip(1)));
  env_->SetFailure(FaultKind::kOpenReadable, 0, /*one_shot=*/true, "r");
  EXPECT_TRUE(IsInjected(env_->NewRandomAccessFile(Path("r"), &ra)));
  EXPECT_EQ(nullptr, ra);
}

TEST_P(FaultInjectionEnvTest, MmapReadsReachTheBaseAndStillFault) {
  ASSERT_TRUE(WriteStringToFile(base_, "0123456789", Path("m"), false).ok());
  RandomAccessFileOptions options;
  options.use_mmap_reads = true;
  std::unique_ptr<RandomAccessFile> ra;
  ASSERT_TRUE(env_->NewRandomAccessFile(Path("m"), options, &ra).ok());
  char scratch[16];
  Slice r;
  ASSERT_TRUE(ra->Read(4, 16, &r, scratch).ok());
  EXPECT_EQ("456789", r.ToString());
  // PosixEnv maps the file (reads return its memory); MemEnv ignores the option.
  EXPECT_EQ(GetParam() == BaseKind::kPosix, r.data() != scratch);
  env_->SetFailure(FaultKind::kRead, 0, /*one_shot=*/true);
  EXPECT_TRUE(IsInjected(ra->Read(0, 3, &r, scratch)));
  EXPECT_EQ(0u, r.size());
  env_->SetFailure(FaultKind::kOpenReadable, 0, /*one_shot=*/true, "m");
  EXPECT_TRUE(IsInjected(env_->NewRandomAccessFile(Path("m"), options, &ra)));
  EXPECT_EQ(nullptr, ra);
}

// use_direct_reads reaches the base Env (PosixEnv: an O_DIRECT file where
// the file system takes it, whose reads the counts show), and injected
// faults still strike such a file's opens and reads.
TEST_P(FaultInjectionEnvTest, DirectReadsReachTheBaseAndStillFault) {
  Random rnd(test::TestSeed());
  const std::string data = test::RandomString(&rnd, 3 * 4096 + 10);
  ASSERT_TRUE(WriteStringToFile(base_, data, Path("d"), false).ok());
  std::unique_ptr<RandomAccessFile> probe;
  const bool direct = GetParam() == BaseKind::kPosix &&
                      NewPosixDirectRandomAccessFile(Path("d"), IOPriority::kHigh, &probe).ok();
  probe.reset();
  RandomAccessFileOptions options;
  options.use_direct_reads = true;
  std::unique_ptr<RandomAccessFile> ra;
  ASSERT_TRUE(env_->NewRandomAccessFile(Path("d"), options, &ra).ok());
  std::string scratch(8192, '\0');
  Slice r;
  const DirectReadCounts before = GetDirectReadCounts();
  ASSERT_TRUE(ra->Read(4090, 8192, &r, scratch.data()).ok());
  EXPECT_TRUE(data.substr(4090, 8192) == r.ToString());
  const DirectReadCounts after = GetDirectReadCounts();
  EXPECT_EQ(direct ? 1u : 0u, after.bounced - before.bounced);
  env_->SetFailure(FaultKind::kRead, 0, /*one_shot=*/true);
  EXPECT_TRUE(IsInjected(ra->Read(0, 3, &r, scratch.data())));
  EXPECT_EQ(0u, r.size());
  env_->SetFailure(FaultKind::kOpenReadable, 0, /*one_shot=*/true, "d");
  EXPECT_TRUE(IsInjected(env_->NewRandomAccessFile(Path("d"), options, &ra)));
  EXPECT_EQ(nullptr, ra);
}

TEST_P(FaultInjectionEnvTest, RenameRemoveSyncDirFaults) {
  ASSERT_TRUE(WriteStringToFile(env_.get(), "v", Path("a"), true).ok());
  env_->SetFailure(FaultKind::kRename, 0, true, "CURRENT");  // matches the target
  EXPECT_TRUE(IsInjected(env_->RenameFile(Path("a"), Path("CURRENT"))));
  EXPECT_TRUE(base_->FileExists(Path("a")));
  EXPECT_FALSE(base_->FileExists(Path("CURRENT")));
  env_->SetFailure(FaultKind::kRemove, 0, true);
  EXPECT_TRUE(IsInjected(env_->RemoveFile(Path("a"))));
  EXPECT_TRUE(base_->FileExists(Path("a")));
  env_->SetFailure(FaultKind::kSyncDir, 0, true);
  EXPECT_TRUE(IsInjected(env_->SyncDir(dir_)));
  uint64_t synced = 0;
  bool durable = true;
  ASSERT_TRUE(env_->GetTrackedState(Path("a"), &synced, &durable));
  EXPECT_FALSE(durable);  // the failed SyncDir made nothing durable
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  ASSERT_TRUE(env_->GetTrackedState(Path("a"), &synced, &durable));
  EXPECT_TRUE(durable);
  EXPECT_EQ(1u, synced);
}

TEST_P(FaultInjectionEnvTest, WriteStringToFileRemovesFileOnFailure) {
  env_->SetFailure(FaultKind::kSync, 0, true);
  Status s = WriteStringToFile(env_.get(), "data", Path("ws"), /*sync=*/true);
  EXPECT_TRUE(IsInjected(s)) << s.ToString();
  EXPECT_FALSE(base_->FileExists(Path("ws")));
}

TEST_P(FaultInjectionEnvTest, DropUnsyncedDataTruncatesToSyncedSize) {
  auto w = Open("d.log");
  ASSERT_TRUE(w->Append(std::string(100, 'a')).ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Append(std::string(50, 'b')).ok());
  ASSERT_TRUE(w->Flush().ok());
  auto never = Open("never");  // never synced
  ASSERT_TRUE(never->Append("lost").ok());
  ASSERT_TRUE(never->Close().ok());
  // A file the Env did not write counts as durable.
  ASSERT_TRUE(WriteStringToFile(base_, "untouched", Path("old"), false).ok());
  env_->SetFilesystemActive(false);
  EXPECT_FALSE(w->Append("c").ok());
  ASSERT_TRUE(env_->DropUnsyncedData().ok());
  EXPECT_EQ(std::string(100, 'a'), Contents(Path("d.log")));
  EXPECT_EQ("", Contents(Path("never")));
  EXPECT_EQ("untouched", Contents(Path("old")));
  w->Close();
}

// Positioned writes: each PrepareWriteAt and WriteAt is a kWrite operation
// (and fails as one); the prepared size is durable at the next Sync, and a
// crash before it loses the file's bytes.
TEST_P(FaultInjectionEnvTest, PositionedWritesFaultAndCountAsSyncedAtSync) {
  auto w = Open("p");
  ASSERT_TRUE(w->PrepareWriteAt(6).ok());
  ASSERT_TRUE(w->WriteAt(3, "def").ok());
  env_->SetFailure(FaultKind::kWrite, 0, /*one_shot=*/true);
  EXPECT_TRUE(IsInjected(w->WriteAt(0, "abc")));
  ASSERT_TRUE(w->WriteAt(0, "abc").ok());
  EXPECT_EQ(4u, env_->OpCount(FaultKind::kWrite));
  EXPECT_EQ(1u, env_->InjectedCount(FaultKind::kWrite));
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Close().ok());

  auto unsynced = Open("u");
  ASSERT_TRUE(unsynced->PrepareWriteAt(4).ok());
  ASSERT_TRUE(unsynced->WriteAt(0, "lost").ok());
  ASSERT_TRUE(unsynced->Close().ok());
  env_->SetFailure(FaultKind::kWrite, 0, /*one_shot=*/true);
  auto refused = Open("r");
  EXPECT_TRUE(IsInjected(refused->PrepareWriteAt(4)));
  ASSERT_TRUE(refused->Close().ok());
  ASSERT_TRUE(env_->DropUnsyncedData().ok());
  EXPECT_EQ("abcdef", Contents(Path("p")));
  EXPECT_EQ("", Contents(Path("u")));
  EXPECT_EQ("", Contents(Path("r")));
}

TEST_P(FaultInjectionEnvTest, AppendableFileKeepsExistingDataDurable) {
  ASSERT_TRUE(WriteStringToFile(base_, "base", Path("app"), false).ok());
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewAppendableFile(Path("app"), &w).ok());
  ASSERT_TRUE(w->Append("+1").ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Append("+2").ok());
  ASSERT_TRUE(w->Close().ok());
  ASSERT_TRUE(env_->SimulateCrash().ok());
  EXPECT_EQ("base+1", Contents(Path("app")));
}

TEST_P(FaultInjectionEnvTest, CreationNeedsSyncDir) {
  ASSERT_TRUE(WriteStringToFile(env_.get(), "synced", Path("early1"), true).ok());
  ASSERT_TRUE(WriteStringToFile(env_.get(), "unsynced", Path("early2"), false).ok());
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  ASSERT_TRUE(WriteStringToFile(env_.get(), "late", Path("late"), true).ok());
  ASSERT_TRUE(env_->RemoveFilesCreatedAfterLastDirSync().ok());
  EXPECT_TRUE(base_->FileExists(Path("early1")));  // created before the SyncDir
  EXPECT_TRUE(base_->FileExists(Path("early2")));  // (its data is another matter)
  EXPECT_FALSE(base_->FileExists(Path("late")));
}

TEST_P(FaultInjectionEnvTest, SyncDirOfAnotherDirectoryDoesNotHelp) {
  const std::string sub = Path("sub");
  ASSERT_TRUE(env_->CreateDir(sub).ok());
  ASSERT_TRUE(WriteStringToFile(env_.get(), "x", sub + "/f", true).ok());
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  ASSERT_TRUE(env_->SimulateCrash().ok());
  EXPECT_FALSE(base_->FileExists(sub + "/f"));
  ASSERT_TRUE(WriteStringToFile(env_.get(), "x", sub + "/f", true).ok());
  ASSERT_TRUE(env_->SyncDir(sub + "/").ok());  // trailing slash names the same directory
  ASSERT_TRUE(env_->SimulateCrash().ok());
  EXPECT_TRUE(base_->FileExists(sub + "/f"));
}

TEST_P(FaultInjectionEnvTest, UnsyncedRenameOverDurableTargetIsUndone) {
  // The CURRENT update protocol: write+sync a temp file, rename over CURRENT.
  ASSERT_TRUE(WriteStringToFile(env_.get(), "MANIFEST-1\n", Path("CURRENT"), true).ok());
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  ASSERT_TRUE(WriteStringToFile(env_.get(), "MANIFEST-2\n", Path("000002.dbtmp"), true).ok());
  ASSERT_TRUE(env_->RenameFile(Path("000002.dbtmp"), Path("CURRENT")).ok());
  EXPECT_EQ("MANIFEST-2\n", Contents(Path("CURRENT")));
  ASSERT_TRUE(env_->SimulateCrash().ok());  // before SyncDir
  EXPECT_EQ("MANIFEST-1\n", Contents(Path("CURRENT")));
  EXPECT_FALSE(base_->FileExists(Path("000002.dbtmp")));

  // Same again, now with the SyncDir: the new CURRENT survives.
  ASSERT_TRUE(WriteStringToFile(env_.get(), "MANIFEST-3\n", Path("000003.dbtmp"), true).ok());
  ASSERT_TRUE(env_->RenameFile(Path("000003.dbtmp"), Path("CURRENT")).ok());
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  ASSERT_TRUE(env_->SimulateCrash().ok());
  EXPECT_EQ("MANIFEST-3\n", Contents(Path("CURRENT")));
}

TEST_P(FaultInjectionEnvTest, UnsyncedRenameOfDurableFileMovesItBack) {
  ASSERT_TRUE(WriteStringToFile(base_, "payload", Path("orig"), false).ok());  // untracked
  ASSERT_TRUE(env_->RenameFile(Path("orig"), Path("moved")).ok());
  ASSERT_TRUE(env_->RenameFile(Path("moved"), Path("moved2")).ok());
  ASSERT_TRUE(env_->SimulateCrash().ok());
  EXPECT_EQ("payload", Contents(Path("orig")));
  EXPECT_FALSE(base_->FileExists(Path("moved")));
  EXPECT_FALSE(base_->FileExists(Path("moved2")));
}

TEST_P(FaultInjectionEnvTest, RenameKeepsSyncedSizeAndOpenWriter) {
  auto w = Open("t");
  ASSERT_TRUE(w->Append("12345").ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(env_->RenameFile(Path("t"), Path("u")).ok());
  ASSERT_TRUE(w->Append("678").ok());
  ASSERT_TRUE(w->Sync().ok());  // updates the record now named "u"
  ASSERT_TRUE(w->Append("9").ok());
  ASSERT_TRUE(w->Close().ok());
  uint64_t synced = 0;
  bool durable = true;
  ASSERT_TRUE(env_->GetTrackedState(Path("u"), &synced, &durable));
  EXPECT_EQ(8u, synced);
  EXPECT_FALSE(durable);
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  ASSERT_TRUE(env_->SimulateCrash().ok());
  EXPECT_EQ("12345678", Contents(Path("u")));
}

TEST_P(FaultInjectionEnvTest, InactiveFilesystemFailsWritesButNotReads) {
  ASSERT_TRUE(WriteStringToFile(env_.get(), "r", Path("f"), true).ok());
  auto w = Open("g");
  env_->SetFilesystemActive(false);
  EXPECT_FALSE(env_->IsFilesystemActive());
  EXPECT_TRUE(w->Append("x").IsIOError());
  EXPECT_TRUE(w->Flush().IsIOError());
  EXPECT_TRUE(w->Sync().IsIOError());
  std::unique_ptr<WritableFile> w2;
  EXPECT_TRUE(env_->NewWritableFile(Path("h"), &w2).IsIOError());
  EXPECT_TRUE(env_->NewAppendableFile(Path("f"), &w2).IsIOError());
  EXPECT_TRUE(env_->RenameFile(Path("f"), Path("h")).IsIOError());
  EXPECT_TRUE(env_->RemoveFile(Path("f")).IsIOError());
  EXPECT_TRUE(env_->SyncDir(dir_).IsIOError());
  EXPECT_TRUE(env_->CreateDir(Path("d")).IsIOError());
  std::string data;
  EXPECT_TRUE(ReadFileToString(env_.get(), Path("f"), &data).ok());
  EXPECT_EQ("r", data);
  EXPECT_TRUE(w->Close().ok());
  env_->SetFilesystemActive(true);
  EXPECT_TRUE(env_->RemoveFile(Path("f")).ok());
}

// Random appends/syncs/flushes on several files; after the crash every file
// holds exactly the bytes up to its last successful Sync.
TEST_P(FaultInjectionEnvTest, RandomizedDropMatchesLastSync) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  constexpr int kFiles = 4;
  std::unique_ptr<WritableFile> files[kFiles];
  std::string written[kFiles], synced[kFiles];
  for (int i = 0; i < kFiles; i++) files[i] = Open("r" + std::to_string(i));
  for (int op = 0; op < 400; op++) {
    int i = static_cast<int>(rnd.Uniform(kFiles));
    switch (rnd.Uniform(4)) {
      case 0:
      case 1: {
        std::string piece = test::RandomString(&rnd, rnd.Skewed(14));
        ASSERT_TRUE(files[i]->Append(piece).ok());
        written[i] += piece;
        break;
      }
      case 2:
        ASSERT_TRUE(files[i]->Flush().ok());
        break;
      case 3:
        ASSERT_TRUE(files[i]->Sync().ok());
        synced[i] = written[i];
        break;
    }
  }
  env_->SetFilesystemActive(false);
  for (auto& f : files) f->Close();
  ASSERT_TRUE(env_->SyncDir(dir_).IsIOError());
  env_->SetFilesystemActive(true);
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  ASSERT_TRUE(env_->SimulateCrash().ok());
  for (int i = 0; i < kFiles; i++) {
    EXPECT_EQ(synced[i], Contents(Path("r" + std::to_string(i)))) << "file " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Bases, FaultInjectionEnvTest,
                         ::testing::Values(BaseKind::kPosix, BaseKind::kMem),
                         [](const ::testing::TestParamInfo<BaseKind>& info) {
                           return info.param == BaseKind::kPosix ? "Posix" : "Mem";
                         });

}  // namespace
}  // namespace accelkv
