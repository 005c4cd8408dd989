// The POSIX random-access files (src/env/posix_random_access_file.h): mmap'd
// reads, their bounds, and the limit on live mappings with its pread fallback.
#include "env/posix_random_access_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <memory>
#include <string>

#include "env/mapped_page_guard.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

class PosixRandomAccessFileTest : public testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& data) {
    const std::string fname = dir_.File(name);
    EXPECT_TRUE(WriteStringToFile(Env::Default(), data, fname, /*sync=*/false).ok());
    return fname;
  }

  // Opens fname; *mapped says whether reads return the file's own memory.
  std::unique_ptr<RandomAccessFile> Open(const std::string& fname, bool use_mmap,
                                         MmapLimiter* limiter, bool* mapped) {
    std::unique_ptr<RandomAccessFile> f;
    Status s = NewPosixRandomAccessFile(fname, use_mmap, limiter, &f);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (f == nullptr) return f;
    char scratch[1];
    Slice r;
    EXPECT_TRUE(f->Read(0, 1, &r, scratch).ok());
    *mapped = r.data() != scratch;
    return f;
  }

  test::TempDir dir_;
};

// Prefetch (posix_fadvise on a descriptor, madvise on a mapping from the
// page holding the offset) accepts any range, unaligned or past the end, and
// reads after it return the file's bytes.
TEST_F(PosixRandomAccessFileTest, PrefetchAcceptsAnyRangeOfBothKinds) {
  Random rnd(test::TestSeed());
  const std::string data = test::RandomString(&rnd, 3 * 4096 + 123);
  const std::string fname = Write("prefetch", data);
  for (bool use_mmap : {false, true}) {
    SCOPED_TRACE(use_mmap ? "mmap" : "pread");
    MmapLimiter limiter(1);
    bool mapped = false;
    std::unique_ptr<RandomAccessFile> f = Open(fname, use_mmap, &limiter, &mapped);
    ASSERT_NE(nullptr, f);
    EXPECT_EQ(use_mmap, mapped);
    for (uint64_t offset : {0ull, 1ull, 4095ull, 4097ull, 12000ull, 20000ull}) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{5000}, size_t{1} << 20}) {
        Status s = f->Prefetch(offset, n);
        EXPECT_TRUE(s.ok()) << offset << "+" << n << ": " << s.ToString();
      }
    }
    std::string scratch(data.size(), '\0');
    Slice r;
    ASSERT_TRUE(f->Read(0, data.size(), &r, scratch.data()).ok());
    EXPECT_EQ(data, r.ToString());
  }
}

TEST_F(PosixRandomAccessFileTest, LimiterHandsOutAtMostItsSlots) {
  MmapLimiter limiter(2);
  EXPECT_TRUE(limiter.Acquire());
  EXPECT_TRUE(limiter.Acquire());
  EXPECT_FALSE(limiter.Acquire());
  EXPECT_EQ(0, limiter.available());
  limiter.Release();
  EXPECT_TRUE(limiter.Acquire());
  MmapLimiter none(0);
  EXPECT_FALSE(none.Acquire());
  EXPECT_EQ(sizeof(void*) >= 8 ? 1000 : 0, DefaultMmapLimit());
}

TEST_F(PosixRandomAccessFileTest, MappedReadsPointIntoTheFileAndStopAtItsEnd) {
  Random rnd(test::TestSeed());
  const std::string data = test::RandomString(&rnd, 10000);
  MmapLimiter limiter(1);
  bool mapped = false;
  auto f = Open(Write("f", data), /*use_mmap=*/true, &limiter, &mapped);
  ASSERT_TRUE(mapped);
  EXPECT_EQ(0, limiter.available());
  char scratch[256];
  Slice r;
  ASSERT_TRUE(f->Read(1234, 200, &r, scratch).ok());
  EXPECT_EQ(data.substr(1234, 200), r.ToString());
  const char* base = r.data() - 1234;
  ASSERT_TRUE(f->Read(0, 10, &r, scratch).ok());
  EXPECT_EQ(base, r.data());                          // one mapping, no copies
  ASSERT_TRUE(f->Read(9950, 200, &r, scratch).ok());  // short read at the end
  EXPECT_EQ(data.substr(9950), r.ToString());
  ASSERT_TRUE(f->Read(10000, 10, &r, scratch).ok());  // at the end
  EXPECT_EQ(0u, r.size());
  ASSERT_TRUE(f->Read(uint64_t{1} << 40, 10, &r, scratch).ok());  // far past the end
  EXPECT_EQ(0u, r.size());
  f.reset();
  EXPECT_EQ(1, limiter.available());  // the slot comes back with the mapping
}

TEST_F(PosixRandomAccessFileTest, FileTruncatedUnderItsMappingIsIOErrorNotACrash) {
  Random rnd(test::TestSeed());
  const std::string data = test::RandomString(&rnd, 4 * 4096);
  MmapLimiter limiter(1);
  bool mapped = false;
  const std::string fname = Write("f", data);
  auto f = Open(fname, /*use_mmap=*/true, &limiter, &mapped);
  ASSERT_TRUE(mapped);
  // Every page of the mapping is now past the end of the file: touching one
  // raises SIGBUS, as a media error on a mapped page does.
  ASSERT_EQ(0, ::truncate(fname.c_str(), 0));
  std::string scratch(4096, '\0');
  for (uint64_t offset : {uint64_t{8192}, uint64_t{0}, uint64_t{100}}) {  // again and again
    Slice r;
    Status s = f->Read(offset, 1000, &r, scratch.data());
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("SIGBUS")) << s.ToString();
    EXPECT_TRUE(r.empty());
  }
  // Other files still read normally afterwards.
  MmapLimiter other(1);
  auto g = Open(Write("g", data), /*use_mmap=*/true, &other, &mapped);
  ASSERT_TRUE(mapped);
  Slice r;
  ASSERT_TRUE(g->Read(5000, 3000, &r, scratch.data()).ok());
  EXPECT_EQ(data.substr(5000, 3000), r.ToString());
}

TEST_F(PosixRandomAccessFileTest, SigbusOutsideAGuardedReadStillKills) {
  Random rnd(test::TestSeed());
  const std::string data = test::RandomString(&rnd, 2 * 4096);
  MmapLimiter limiter(1);
  bool mapped = false;
  const std::string fname = Write("f", data);
  auto f = Open(fname, /*use_mmap=*/true, &limiter, &mapped);
  ASSERT_TRUE(mapped);
  Slice r;
  char scratch[1];
  ASSERT_TRUE(f->Read(4096, 1, &r, scratch).ok());  // installs the handler
  const char* page = r.data();
  ASSERT_EQ(0, ::truncate(fname.c_str(), 0));
  // An unguarded access (not a Read) gets the disposition the handler replaced.
  EXPECT_DEATH({ [[maybe_unused]] volatile char c = *page; }, "");
  EXPECT_FALSE(TouchMappedPages(page, 1));  // a guarded one is reported
}

TEST_F(PosixRandomAccessFileTest, FullLimiterFallsBackToPread) {
  const std::string data(5000, 'x');
  const std::string a = Write("a", data + "a");
  const std::string b = Write("b", data + "b");
  MmapLimiter limiter(1);
  bool mapped_a = false;
  bool mapped_b = true;
  auto fa = Open(a, /*use_mmap=*/true, &limiter, &mapped_a);
  auto fb = Open(b, /*use_mmap=*/true, &limiter, &mapped_b);
  EXPECT_TRUE(mapped_a);
  EXPECT_FALSE(mapped_b);  // over the limit: pread
  char scratch[16];
  Slice r;
  ASSERT_TRUE(fa->Read(4998, 16, &r, scratch).ok());
  EXPECT_EQ("xxa", r.ToString());
  ASSERT_TRUE(fb->Read(4998, 16, &r, scratch).ok());
  EXPECT_EQ("xxb", r.ToString());
  EXPECT_EQ(scratch, r.data());
  fa.reset();
  bool mapped_c = false;
  auto fc = Open(b, /*use_mmap=*/true, &limiter, &mapped_c);
  EXPECT_TRUE(mapped_c);  // the freed slot is reused
  fb.reset();
  EXPECT_EQ(0, limiter.available());  // the pread file never held a slot
}

TEST_F(PosixRandomAccessFileTest, EmptyFileAndMmapOffDoNotMap) {
  MmapLimiter limiter(4);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(NewPosixRandomAccessFile(Write("empty", ""), true, &limiter, &f).ok());
  EXPECT_EQ(4, limiter.available());
  char scratch[8];
  Slice r;
  ASSERT_TRUE(f->Read(0, 8, &r, scratch).ok());
  EXPECT_EQ(0u, r.size());
  bool mapped = true;
  auto g = Open(Write("g", "data"), /*use_mmap=*/false, &limiter, &mapped);
  EXPECT_FALSE(mapped);
  EXPECT_EQ(4, limiter.available());
}

TEST_F(PosixRandomAccessFileTest, MissingFileIsNotFoundAndTakesNoSlot) {
  MmapLimiter limiter(1);
  std::unique_ptr<RandomAccessFile> f;
  Status s = NewPosixRandomAccessFile(dir_.File("missing"), true, &limiter, &f);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("missing"));
  EXPECT_EQ(nullptr, f);
  EXPECT_EQ(1, limiter.available());
}

TEST_F(PosixRandomAccessFileTest, MappingOutlivesTheFileName) {
  MmapLimiter limiter(1);
  bool mapped = false;
  const std::string fname = Write("gone", "mapped bytes");
  auto f = Open(fname, /*use_mmap=*/true, &limiter, &mapped);
  ASSERT_TRUE(mapped);
  ASSERT_TRUE(Env::Default()->RemoveFile(fname).ok());
  Write("gone", "replacement!");
  char scratch[32];
  Slice r;
  ASSERT_TRUE(f->Read(0, sizeof(scratch), &r, scratch).ok());
  EXPECT_EQ("mapped bytes", r.ToString());
}

TEST_F(PosixRandomAccessFileTest, DefaultEnvMapsOnlyWhenAsked) {
  const std::string fname = Write("env", "abc");
  char scratch[8];
  Slice r;
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(Env::Default()->NewRandomAccessFile(fname, &f).ok());
  ASSERT_TRUE(f->Read(0, 8, &r, scratch).ok());
  EXPECT_EQ(scratch, r.data());
  RandomAccessFileOptions options;
  options.use_mmap_reads = true;
  ASSERT_TRUE(Env::Default()->NewRandomAccessFile(fname, options, &f).ok());
  ASSERT_TRUE(f->Read(0, 8, &r, scratch).ok());
  EXPECT_EQ("abc", r.ToString());
  if (DefaultMmapLimit() > 0) {
    EXPECT_NE(scratch, r.data());
  }
}

}  // namespace
}  // namespace accelkv
