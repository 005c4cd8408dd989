// Behaviour shared by PosixEnv (Env::Default()) and MemEnv: one suite,
// parameterized over both, over PosixEnv with mmap reads and with direct
// reads (random-access files opened with RandomAccessFileOptions::
// use_mmap_reads, use_direct_reads), and over an EnvWrapper around PosixEnv
// with direct reads (every call forwarded).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "accelkv/env.h"
#include "testutil/test_util.h"
#include "util/random.h"
#include "util/streaming_copy.h"

namespace accelkv {
namespace {

enum class EnvKind { kPosix, kPosixMmap, kPosixDirect, kMem, kWrappedPosixDirect };

class EnvTest : public ::testing::TestWithParam<EnvKind> {
 protected:
  void SetUp() override {
    if (GetParam() == EnvKind::kWrappedPosixDirect) {
      wrapper_ = std::make_unique<EnvWrapper>(Env::Default());
      env_ = wrapper_.get();
      dir_ = tmp_.path();
    } else if (GetParam() != EnvKind::kMem) {
      env_ = Env::Default();
      dir_ = tmp_.path();
    } else {
      mem_ = NewMemEnv(Env::Default());
      env_ = mem_.get();
      dir_ = "/mem/envtest";
      ASSERT_TRUE(env_->CreateDir("/mem").ok());
      ASSERT_TRUE(env_->CreateDir(dir_).ok());
    }
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  Status OpenRandom(const std::string& fname, std::unique_ptr<RandomAccessFile>* f) {
    RandomAccessFileOptions options;
    options.use_mmap_reads = GetParam() == EnvKind::kPosixMmap;
    options.use_direct_reads =
        GetParam() == EnvKind::kPosixDirect || GetParam() == EnvKind::kWrappedPosixDirect;
    return env_->NewRandomAccessFile(fname, options, f);
  }

  std::string Read(const std::string& fname) {
    std::string data;
    Status s = ReadFileToString(env_, fname, &data);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return data;
  }

  void Write(const std::string& fname, const std::string& data) {
    Status s = WriteStringToFile(env_, data, fname, /*sync=*/true);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  test::TempDir tmp_;
  std::unique_ptr<Env> mem_;
  std::unique_ptr<Env> wrapper_;
  Env* env_ = nullptr;
  std::string dir_;
};

TEST_P(EnvTest, WriteThenReadSequentially) {
  Random rnd(301);
  // Small appends, one append larger than the 64 KiB write buffer, and an
  // append that straddles the buffer boundary.
  std::string expected;
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewWritableFile(Path("f"), &w).ok());
  for (size_t len : {0, 1, 100, 65000, 200000, 3, 70000, 65536, 7}) {
    std::string piece = test::RandomString(&rnd, len);
    ASSERT_TRUE(w->Append(piece).ok());
    expected += piece;
  }
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Close().ok());

  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(Path("f"), &size).ok());
  EXPECT_EQ(expected.size(), size);

  std::unique_ptr<SequentialFile> r;
  ASSERT_TRUE(env_->NewSequentialFile(Path("f"), &r).ok());
  std::string got;
  std::vector<char> scratch(10000);
  Slice chunk;
  ASSERT_TRUE(r->Read(1000, &chunk, scratch.data()).ok());
  got.append(chunk.data(), chunk.size());
  ASSERT_TRUE(r->Skip(5000).ok());
  do {
    ASSERT_TRUE(r->Read(scratch.size(), &chunk, scratch.data()).ok());
    got.append(chunk.data(), chunk.size());
  } while (chunk.size() == scratch.size());
  EXPECT_EQ(expected.substr(0, 1000) + expected.substr(6000), got);
  // At end of file: empty reads.
  ASSERT_TRUE(r->Read(10, &chunk, scratch.data()).ok());
  EXPECT_EQ(0u, chunk.size());
  EXPECT_EQ(expected, Read(Path("f")));
}

TEST_P(EnvTest, RandomAccessReads) {
  Random rnd(17);
  const std::string data = test::RandomString(&rnd, 100000);
  Write(Path("ra"), data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(OpenRandom(Path("ra"), &f).ok());
  char scratch[4096];
  Slice r;
  ASSERT_TRUE(f->Read(12345, 1000, &r, scratch).ok());
  EXPECT_EQ(data.substr(12345, 1000), r.ToString());
  ASSERT_TRUE(f->Read(0, 10, &r, scratch).ok());
  EXPECT_EQ(data.substr(0, 10), r.ToString());
  ASSERT_TRUE(f->Read(99990, 100, &r, scratch).ok());  // short read at end
  EXPECT_EQ(data.substr(99990), r.ToString());
  ASSERT_TRUE(f->Read(100000, 100, &r, scratch).ok());  // at end
  EXPECT_EQ(0u, r.size());
  ASSERT_TRUE(f->Read(500000, 100, &r, scratch).ok());  // past end
  EXPECT_EQ(0u, r.size());
}

// Lend: the in-memory Env hands out its chunks' parts of a range in place
// (they cover it exactly, in order, and survive the file's removal while
// the reader lives); the file-backed Envs lend nothing (NotSupported).
TEST_P(EnvTest, LendGivesTheBytesInPlaceOrNotSupported) {
  Random rnd(23);
  const std::string data = test::RandomString(&rnd, 200000);  // four 64 KiB chunks
  Write(Path("lend"), data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(OpenRandom(Path("lend"), &f).ok());
  std::vector<Slice> pieces;
  const Status s = f->Lend(1000, 150000, &pieces);
  if (GetParam() != EnvKind::kMem) {
    EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
    EXPECT_TRUE(pieces.empty());
    return;
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(env_->RemoveFile(Path("lend")).ok());  // the reader keeps the bytes
  std::string joined;
  for (const Slice& p : pieces) joined.append(p.data(), p.size());
  EXPECT_EQ(data.substr(1000, 150000), joined);
  // Chunk boundaries at multiples of 64 KiB of the file: 1000..65536,
  // ..131072, ..151000.
  ASSERT_EQ(3u, pieces.size());
  EXPECT_EQ(65536u - 1000u, pieces[0].size());
  // Lending reads nothing: the pieces are the bytes Read copies from.
  char scratch[16];
  Slice r;
  ASSERT_TRUE(f->Read(65536, 16, &r, scratch).ok());
  EXPECT_EQ(0, std::memcmp(pieces[1].data(), r.data(), 16));
  EXPECT_TRUE(f->Lend(0, 200000, &pieces).ok());  // all of it
  EXPECT_TRUE(f->Lend(200000, 0, &pieces).ok());  // nothing, at the end
  EXPECT_TRUE(pieces.empty());
  EXPECT_TRUE(f->Lend(199999, 2, &pieces).IsInvalidArgument());  // past the end
  EXPECT_TRUE(pieces.empty());
}

TEST_P(EnvTest, ConcurrentRandomAccessReads) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  const std::string data = test::RandomString(&rnd, 1 << 20);
  Write(Path("conc"), data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(OpenRandom(Path("conc"), &f).ok());
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      Random r(seed + t + 1);
      std::vector<char> scratch(8192);
      for (int i = 0; i < 2000; i++) {
        uint64_t off = r.Uniform(data.size());
        size_t n = static_cast<size_t>(r.Uniform(scratch.size()) + 1);
        Slice got;
        Status s = f->Read(off, n, &got, scratch.data());
        size_t expect_n = std::min<size_t>(n, data.size() - off);
        if (!s.ok() || got.size() != expect_n ||
            std::memcmp(got.data(), data.data() + off, expect_n) != 0) {
          mismatches++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, mismatches.load());
}

// Appends and reads on both sides of the size from which the in-memory Env
// copies by streaming stores (util/streaming_copy.h), at offsets inside and
// across its 64 KiB chunks.
TEST_P(EnvTest, LargeAppendsAndReadsAtOddOffsets) {
  Random rnd(23);
  const size_t big = kStreamingCopyMinBytes;
  std::string data;
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewWritableFile(Path("big"), &w).ok());
  for (size_t n : {size_t{1}, big + 3, size_t{70000}, big - 1, big, size_t{1} << 20}) {
    const std::string piece = test::RandomString(&rnd, n);
    ASSERT_TRUE(w->Append(piece).ok());
    data += piece;
  }
  ASSERT_TRUE(w->Close().ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(OpenRandom(Path("big"), &f).ok());
  std::vector<char> scratch((1 << 20) + 100);
  for (size_t n : {big - 1, big, big + 1, size_t{1} << 20}) {
    for (uint64_t at : {uint64_t{0}, uint64_t{3}, uint64_t{65535}, uint64_t{65536 * 3 + 17},
                        data.size() - n / 2}) {
      Slice got;
      ASSERT_TRUE(f->Read(at, n, &got, scratch.data()).ok());
      const size_t expect_n = std::min<size_t>(n, data.size() - at);
      ASSERT_EQ(expect_n, got.size()) << "at " << at << " n " << n;
      ASSERT_EQ(0, std::memcmp(got.data(), data.data() + at, expect_n)) << "at " << at;
    }
  }
  EXPECT_EQ(data, Read(Path("big")));
}

TEST_P(EnvTest, PositionedWritesFromSeveralThreads) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  // Across 64 KiB boundaries (MemEnv's chunks) and not a multiple of any.
  const std::string data = test::RandomString(&rnd, (3 << 20) + 12345);
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewWritableFile(Path("pw"), &w).ok());
  ASSERT_TRUE(w->PrepareWriteAt(data.size()).ok());
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(Path("pw"), &size).ok());
  EXPECT_EQ(data.size(), size);
  // Pieces of random lengths, taken by 4 threads in an order of their own.
  std::vector<std::pair<uint64_t, size_t>> pieces;
  for (uint64_t at = 0; at < data.size();) {
    const size_t n = std::min<size_t>(data.size() - at, rnd.Uniform(300000) + 1);
    pieces.emplace_back(at, n);
    at += n;
  }
  std::atomic<size_t> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < pieces.size();) {
        const size_t k = pieces.size() - 1 - i;  // back to front
        const auto [at, n] = pieces[k];
        if (!w->WriteAt(at, Slice(data.data() + at, n)).ok()) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, failures.load());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(data, Read(Path("pw")));
}

// LendPrepared: the in-memory Env lends a prepared file's chunks for
// writing in place; what is put there is the file's content after Close.
// The file-backed Envs lend nothing (NotSupported), and the file then
// takes WriteAt as before.
TEST_P(EnvTest, LendPreparedFillsTheFileInPlaceOrNotSupported) {
  Random rnd(29);
  const std::string data = test::RandomString(&rnd, 150000);  // three 64 KiB chunks
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewWritableFile(Path("lp"), &w).ok());
  std::vector<WritablePiece> pieces;
  const Status early = w->LendPrepared(&pieces);
  EXPECT_FALSE(early.ok());  // before PrepareWriteAt (or not at all)
  EXPECT_TRUE(pieces.empty());
  ASSERT_TRUE(w->PrepareWriteAt(data.size()).ok());
  const Status s = w->LendPrepared(&pieces);
  if (GetParam() != EnvKind::kMem) {
    EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
    EXPECT_TRUE(pieces.empty());
    ASSERT_TRUE(w->WriteAt(0, data).ok());
  } else {
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(3u, pieces.size());
    EXPECT_EQ(65536u, pieces[0].size);
    size_t at = 0;
    for (const WritablePiece& p : pieces) {
      std::memcpy(p.data, data.data() + at, p.size);
      at += p.size;
    }
    EXPECT_EQ(data.size(), at);
  }
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(data, Read(Path("lp")));
  EXPECT_FALSE(w->LendPrepared(&pieces).ok());  // closed
}

TEST_P(EnvTest, PositionedWriteMisuse) {
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewWritableFile(Path("pm"), &w).ok());
  EXPECT_TRUE(w->WriteAt(0, "x").IsInvalidArgument());  // before PrepareWriteAt
  ASSERT_TRUE(w->Append("abc").ok());
  EXPECT_TRUE(w->PrepareWriteAt(10).IsInvalidArgument());  // something appended
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ("abc", Read(Path("pm")));

  ASSERT_TRUE(env_->NewWritableFile(Path("pm2"), &w).ok());
  ASSERT_TRUE(w->PrepareWriteAt(4).ok());
  EXPECT_TRUE(w->PrepareWriteAt(4).IsInvalidArgument());  // twice
  EXPECT_TRUE(w->Append("x").IsInvalidArgument());
  EXPECT_TRUE(w->WriteAt(2, "abc").IsInvalidArgument());  // past the size
  EXPECT_TRUE(w->WriteAt(5, "").IsInvalidArgument());
  ASSERT_TRUE(w->WriteAt(1, "bcd").ok());
  ASSERT_TRUE(w->WriteAt(0, "a").ok());
  ASSERT_TRUE(w->WriteAt(4, "").ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ("abcd", Read(Path("pm2")));
  EXPECT_TRUE(w->WriteAt(0, "z").IsIOError());  // closed

  // Files opened for direct or mapped writes (where the file system takes
  // them: else the POSIX Env writes buffered) and appendable files take no
  // positioned writes on the POSIX Env; the in-memory Env ignores those
  // options. A file that takes none stays appendable.
  for (int mode = 0; mode < 3; mode++) {
    WritableFileOptions options;
    options.use_direct_writes = mode == 0;
    options.use_mmap_writes = mode == 1;
    ASSERT_TRUE((mode == 2 ? env_->NewAppendableFile(Path("pm3"), &w)
                           : env_->NewWritableFile(Path("pm3"), options, &w))
                    .ok());
    const Status s = w->PrepareWriteAt(3);
    if (s.ok()) {
      EXPECT_TRUE(GetParam() == EnvKind::kMem || mode != 2)
          << "an appendable POSIX file (O_APPEND) appends at every offset";
      ASSERT_TRUE(w->WriteAt(0, "xyz").ok());
    } else {
      EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
      EXPECT_NE(EnvKind::kMem, GetParam());
      ASSERT_TRUE(w->Append("xyz").ok());
    }
    ASSERT_TRUE(w->Close().ok());
    EXPECT_EQ("xyz", Read(Path("pm3")));
    ASSERT_TRUE(env_->RemoveFile(Path("pm3")).ok());
  }
}

TEST_P(EnvTest, FlushMakesDataVisibleToReaders) {
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewWritableFile(Path("fl"), &w).ok());
  ASSERT_TRUE(w->Append("hello").ok());
  ASSERT_TRUE(w->Flush().ok());
  EXPECT_EQ("hello", Read(Path("fl")));
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(Path("fl"), &size).ok());
  EXPECT_EQ(5u, size);
  ASSERT_TRUE(w->Append(" world").ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ("hello world", Read(Path("fl")));
  EXPECT_TRUE(w->Close().ok());  // closing twice is harmless
  EXPECT_FALSE(w->Append("x").ok());
}

TEST_P(EnvTest, NewWritableFileTruncates) {
  Write(Path("t"), "old contents");
  Write(Path("t"), "new");
  EXPECT_EQ("new", Read(Path("t")));
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewWritableFile(Path("t"), &w).ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ("", Read(Path("t")));
}

TEST_P(EnvTest, AppendableFile) {
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewAppendableFile(Path("a"), &w).ok());  // creates
  ASSERT_TRUE(w->Append("one").ok());
  ASSERT_TRUE(w->Close().ok());
  ASSERT_TRUE(env_->NewAppendableFile(Path("a"), &w).ok());  // appends
  ASSERT_TRUE(w->Append("two").ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ("onetwo", Read(Path("a")));
}

TEST_P(EnvTest, MissingFiles) {
  const std::string missing = Path("missing");
  EXPECT_FALSE(env_->FileExists(missing));
  std::unique_ptr<SequentialFile> sf;
  Status s = env_->NewSequentialFile(missing, &sf);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(missing));
  EXPECT_EQ(nullptr, sf);
  std::unique_ptr<RandomAccessFile> rf;
  EXPECT_TRUE(OpenRandom(missing, &rf).IsNotFound());
  uint64_t size = 7;
  EXPECT_TRUE(env_->GetFileSize(missing, &size).IsNotFound());
  EXPECT_TRUE(env_->RemoveFile(missing).IsNotFound());
  EXPECT_TRUE(env_->RenameFile(missing, Path("x")).IsNotFound());
  EXPECT_FALSE(env_->FileExists(Path("x")));
  std::string data = "junk";
  EXPECT_TRUE(ReadFileToString(env_, missing, &data).IsNotFound());
  EXPECT_EQ("", data);
  std::vector<std::string> children;
  EXPECT_TRUE(env_->GetChildren(Path("nodir"), &children).IsNotFound());
  EXPECT_FALSE(env_->RemoveDir(Path("nodir")).ok());
}

TEST_P(EnvTest, RemoveFile) {
  Write(Path("r"), "x");
  EXPECT_TRUE(env_->FileExists(Path("r")));
  ASSERT_TRUE(env_->RemoveFile(Path("r")).ok());
  EXPECT_FALSE(env_->FileExists(Path("r")));
}

TEST_P(EnvTest, RenameReplacesTarget) {
  Write(Path("src"), "new");
  Write(Path("dst"), "old");
  ASSERT_TRUE(env_->RenameFile(Path("src"), Path("dst")).ok());
  EXPECT_FALSE(env_->FileExists(Path("src")));
  EXPECT_EQ("new", Read(Path("dst")));
  ASSERT_TRUE(env_->RenameFile(Path("dst"), Path("fresh")).ok());
  EXPECT_EQ("new", Read(Path("fresh")));
  EXPECT_FALSE(env_->FileExists(Path("dst")));
}

TEST_P(EnvTest, OpenReaderSurvivesRemoveAndRename) {
  Write(Path("keep"), "contents");
  std::unique_ptr<RandomAccessFile> ra;
  std::unique_ptr<SequentialFile> seq;
  ASSERT_TRUE(OpenRandom(Path("keep"), &ra).ok());
  ASSERT_TRUE(env_->NewSequentialFile(Path("keep"), &seq).ok());
  ASSERT_TRUE(env_->RemoveFile(Path("keep")).ok());
  Write(Path("keep"), "replacement");
  char scratch[64];
  Slice r;
  ASSERT_TRUE(ra->Read(0, sizeof(scratch), &r, scratch).ok());
  EXPECT_EQ("contents", r.ToString());
  ASSERT_TRUE(seq->Read(sizeof(scratch), &r, scratch).ok());
  EXPECT_EQ("contents", r.ToString());
}

// Files of several 64 KiB chunks (MemEnv's unit; its removed and truncated
// files' chunks are reused by later appends): a reader opened before the
// removal still reads the old bytes while new files are written, and files
// written into reused chunks, or truncated and rewritten shorter, read back
// exactly, with nothing past their end.
TEST_P(EnvTest, LargeFilesReadBackExactlyAfterRemoveAndTruncate) {
  Random rnd(301);
  auto random_bytes = [&rnd](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rnd.Uniform(256));
    return s;
  };
  const std::string old_bytes = random_bytes((200 << 10) + 17);
  Write(Path("old"), old_bytes);
  std::unique_ptr<RandomAccessFile> reader;
  ASSERT_TRUE(OpenRandom(Path("old"), &reader).ok());
  ASSERT_TRUE(env_->RemoveFile(Path("old")).ok());
  std::vector<std::string> files;
  for (int i = 0; i < 3; ++i) {
    files.push_back(random_bytes((300 << 10) + 5 - i * (70 << 10)));
    Write(Path("new" + std::to_string(i)), files.back());
  }
  std::string got(old_bytes.size() + 100, '\0');
  Slice r;
  ASSERT_TRUE(reader->Read(0, got.size(), &r, got.data()).ok());
  EXPECT_TRUE(r.ToString() == old_bytes);
  reader.reset();
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(Read(Path("new" + std::to_string(i))) == files[i]) << i;
    ASSERT_TRUE(env_->RemoveFile(Path("new" + std::to_string(i))).ok());
  }
  // Truncated by a new writer, then written shorter than before.
  Write(Path("t"), random_bytes(150 << 10));
  const std::string shorter = random_bytes((64 << 10) + 1);
  Write(Path("t"), shorter);
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(Path("t"), &size).ok());
  EXPECT_EQ(shorter.size(), size);
  EXPECT_TRUE(Read(Path("t")) == shorter);
}

TEST_P(EnvTest, DirectoriesAndChildren) {
  ASSERT_TRUE(env_->CreateDir(Path("sub")).ok());
  ASSERT_TRUE(env_->CreateDir(Path("sub")).ok());  // already exists: OK
  EXPECT_TRUE(env_->FileExists(Path("sub")));
  Write(Path("sub/inner"), "i");
  Write(Path("a.log"), "1");
  Write(Path("b.sst"), "2");
  std::vector<std::string> children;
  ASSERT_TRUE(env_->GetChildren(dir_, &children).ok());
  std::sort(children.begin(), children.end());
  EXPECT_EQ((std::vector<std::string>{"a.log", "b.sst", "sub"}), children);
  ASSERT_TRUE(env_->GetChildren(Path("sub"), &children).ok());
  EXPECT_EQ(std::vector<std::string>{"inner"}, children);
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  EXPECT_FALSE(env_->RemoveDir(Path("sub")).ok());  // not empty
  ASSERT_TRUE(env_->RemoveFile(Path("sub/inner")).ok());
  ASSERT_TRUE(env_->GetChildren(Path("sub"), &children).ok());
  EXPECT_TRUE(children.empty());
  ASSERT_TRUE(env_->RemoveDir(Path("sub")).ok());
  EXPECT_FALSE(env_->FileExists(Path("sub")));
  EXPECT_FALSE(env_->SyncDir(Path("sub")).ok());
}

TEST_P(EnvTest, LockFile) {
  const std::string lockname = Path("LOCK");
  std::unique_ptr<FileLock> lock;
  ASSERT_TRUE(env_->LockFile(lockname, &lock).ok());
  ASSERT_NE(nullptr, lock);
  EXPECT_TRUE(env_->FileExists(lockname));
  std::unique_ptr<FileLock> second;
  Status s = env_->LockFile(lockname, &second);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_EQ(nullptr, second);
  // Another path is independent.
  std::unique_ptr<FileLock> other;
  ASSERT_TRUE(env_->LockFile(Path("LOCK2"), &other).ok());
  ASSERT_TRUE(env_->UnlockFile(std::move(lock)).ok());
  ASSERT_TRUE(env_->LockFile(lockname, &lock).ok());
  // Destroying a lock releases it.
  lock.reset();
  ASSERT_TRUE(env_->LockFile(lockname, &lock).ok());
  ASSERT_TRUE(env_->UnlockFile(std::move(lock)).ok());
  ASSERT_TRUE(env_->UnlockFile(std::move(other)).ok());
  EXPECT_TRUE(env_->UnlockFile(nullptr).IsInvalidArgument());
}

TEST_P(EnvTest, WholeFileHelpers) {
  Write(Path("w"), std::string(20000, 'z'));  // larger than ReadFileToString's buffer
  EXPECT_EQ(std::string(20000, 'z'), Read(Path("w")));
  ASSERT_TRUE(WriteStringToFile(env_, "", Path("empty"), /*sync=*/false).ok());
  EXPECT_EQ("", Read(Path("empty")));
  ASSERT_TRUE(WriteStringToFile(env_, std::string(8192, 'e'), Path("exact"), false).ok());
  EXPECT_EQ(std::string(8192, 'e'), Read(Path("exact")));  // exactly one buffer
}

TEST_P(EnvTest, Clock) {
  uint64_t t0 = env_->NowMicros();
  env_->SleepForMicroseconds(2000);
  uint64_t t1 = env_->NowMicros();
  EXPECT_GE(t1 - t0, 2000u);
  EXPECT_GE(env_->NowMicros(), t1);
}

// MemEnvOptions: the chunks come from the given HostMemory, chunk_bytes
// each; every one is freed through it by the time the Env and its files
// are gone, removed files' chunks (up to max_free_bytes) being reused first.
TEST(MemEnvOptionsTest, ChunksFromTheGivenMemoryAndAllFreed) {
  struct CountingMemory final : HostMemory {
    std::atomic<int> live{0};
    std::atomic<int> made{0};
    std::atomic<size_t> wrong_size{0};
    size_t chunk = 0;
    void* Allocate(size_t bytes) override {
      if (bytes != chunk) ++wrong_size;
      ++live;
      ++made;
      return ::operator new[](bytes, std::align_val_t{64});
    }
    void Free(void* p, size_t bytes) override {
      if (bytes != chunk) ++wrong_size;
      --live;
      ::operator delete[](p, std::align_val_t{64});
    }
  };
  auto memory = std::make_shared<CountingMemory>();
  memory->chunk = 8192;
  MemEnvOptions options;
  options.chunk_bytes = 8192;
  options.memory = memory;
  {
    std::unique_ptr<Env> env = NewMemEnv(Env::Default(), options);
    Random rnd(5);
    const std::string data = test::RandomString(&rnd, 50000);  // 7 chunks
    ASSERT_TRUE(WriteStringToFile(env.get(), data, "/a", false).ok());
    EXPECT_EQ(7, memory->made.load());
    std::unique_ptr<RandomAccessFile> f;
    ASSERT_TRUE(env->NewRandomAccessFile("/a", &f).ok());
    std::vector<Slice> pieces;
    ASSERT_TRUE(f->Lend(0, 50000, &pieces).ok());
    EXPECT_EQ(7u, pieces.size());
    EXPECT_EQ(8192u, pieces[0].size());
    f.reset();
    ASSERT_TRUE(env->RemoveFile("/a").ok());
    // The removed file's chunks serve the next file: none made.
    ASSERT_TRUE(WriteStringToFile(env.get(), data, "/b", false).ok());
    EXPECT_EQ(7, memory->made.load());
    std::string back;
    ASSERT_TRUE(ReadFileToString(env.get(), "/b", &back).ok());
    EXPECT_EQ(data, back);
  }
  EXPECT_EQ(0, memory->live.load());
  // max_free_bytes: of a removed file's 7 chunks 2 are kept, 5 freed at
  // once, and the next file takes the 2 and makes 5.
  options.max_free_bytes = 2 * 8192;
  {
    std::unique_ptr<Env> env = NewMemEnv(Env::Default(), options);
    const std::string data(50000, 'x');
    const int made = memory->made.load();
    ASSERT_TRUE(WriteStringToFile(env.get(), data, "/a", false).ok());
    ASSERT_TRUE(env->RemoveFile("/a").ok());
    EXPECT_EQ(2, memory->live.load());
    ASSERT_TRUE(WriteStringToFile(env.get(), data, "/b", false).ok());
    EXPECT_EQ(made + 12, memory->made.load());
    EXPECT_EQ(7, memory->live.load());
  }
  EXPECT_EQ(0, memory->live.load());
  EXPECT_EQ(0u, memory->wrong_size.load());
}

INSTANTIATE_TEST_SUITE_P(Envs, EnvTest,
                         ::testing::Values(EnvKind::kPosix, EnvKind::kPosixMmap,
                                           EnvKind::kPosixDirect, EnvKind::kMem,
                                           EnvKind::kWrappedPosixDirect),
                         [](const ::testing::TestParamInfo<EnvKind>& info) {
                           switch (info.param) {
                             case EnvKind::kPosix:
                               return "Posix";
                             case EnvKind::kPosixMmap:
                               return "PosixMmap";
                             case EnvKind::kPosixDirect:
                               return "PosixDirect";
                             case EnvKind::kWrappedPosixDirect:
                               return "WrappedPosixDirect";
                             case EnvKind::kMem:
                               break;
                           }
                           return "Mem";
                         });

}  // namespace
}  // namespace accelkv
