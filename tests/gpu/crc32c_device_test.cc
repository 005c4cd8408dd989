// The cooperative CRC32C of gpu/crc32c_device.h, on the host (the lanes in
// a loop) against the byte-wise Crc32cUpdate and util's crc32c: tables,
// shifts by zero bytes, the combine step, lane chunks, every lane count on
// buffers of many lengths and alignments, and the block check and trailer
// writer. With CUDA and a GPU, the same on the device (warp per block).
#include "gpu/crc32c_device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpu/key_sort_common.h"
#include "util/crc32c.h"
#include "util/random.h"

#if defined(ACCELKV_WITH_CUDA)
#include "gpu/crc32c_device_kernel.h"
#endif

namespace accelkv {
namespace gpu {
namespace {

constexpr uint32_t kLaneCounts[] = {1, 2, 7, 32};

class Crc32cDeviceTest : public testing::Test {
 protected:
  void SetUp() override {
    tables_ = std::make_unique<Crc32cTables>();
    InitCrc32cTables(tables_.get());
    for (uint32_t i = 0; i < 256; ++i) byte_table_[i] = Crc32cTableEntry(i);
  }

  // The reference: the byte-wise CRC of key_sort_common.h.
  uint32_t Bytewise(const uint8_t* p, uint64_t n) const {
    return ~Crc32cUpdate(byte_table_, 0xffffffffu, p, n);
  }

  static std::vector<uint8_t> RandomBytes(Random* rnd, size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(rnd->Next());
    return v;
  }

  // Checks every way to CRC p[0, n) against both references.
  void CheckBuffer(const uint8_t* p, uint64_t n) {
    const uint32_t want = Bytewise(p, n);
    ASSERT_EQ(want, crc32c::Value(reinterpret_cast<const char*>(p), n)) << n;
    ASSERT_EQ(want, ~Crc32cUpdateSliced(*tables_, 0xffffffffu, p, n)) << n;
    for (uint32_t lanes : kLaneCounts) {
      // The device's way: XOR of the parts shifted to the end.
      ASSERT_EQ(want, CooperativeCrc32c(*tables_, p, n, lanes))
          << "n=" << n << " lanes=" << lanes << " misalign=" << (uintptr_t(p) & 15);
      // The standard fold: crc32c_combine of the parts, left to right.
      uint32_t reg = CrcPart(*tables_, p, n, 0, lanes);
      for (uint32_t lane = 1; lane < lanes; ++lane) {
        const CrcChunk c = CrcLaneChunk(p, n, lane, lanes);
        reg = Crc32cCombine(*tables_, reg, CrcPart(*tables_, p, n, lane, lanes), c.end - c.begin);
      }
      ASSERT_EQ(want, ~reg) << "n=" << n << " lanes=" << lanes;
    }
    ASSERT_EQ(want, WarpCrc32c(*tables_, p, n, 0)) << n;
  }

  std::unique_ptr<Crc32cTables> tables_;
  uint32_t byte_table_[256];
};

TEST_F(Crc32cDeviceTest, Tables) {
  for (uint32_t i = 0; i < 256; ++i) {
    ASSERT_EQ(tables_->slice[0][i], byte_table_[i]) << i;
    // slice[k][i]: byte i then k zero bytes.
    uint8_t buf[8] = {static_cast<uint8_t>(i)};
    for (uint32_t k = 0; k < 8; ++k) {
      ASSERT_EQ(tables_->slice[k][i], Crc32cUpdate(byte_table_, 0, buf, k + 1)) << k << " " << i;
    }
    // shift[j][i] = x^(8 * i * 256^j) mod P, by square and multiply.
    for (int j = 0; j < 3; ++j) {
      ASSERT_EQ(tables_->shift[j][i], Crc32cX8nModP(uint64_t{i} << (8 * j))) << j << " " << i;
    }
  }
  // x^(8n) is the register 1 (x^0) after n zero bytes.
  const std::vector<uint8_t> zeros(3000, 0);
  for (uint64_t n : {0, 1, 2, 3, 4, 5, 100, 255, 256, 2999}) {
    ASSERT_EQ(Crc32cX8nModP(n), Crc32cUpdate(byte_table_, kCrcOne, zeros.data(), n)) << n;
  }
  ASSERT_EQ(Crc32cMulModP(kCrcOne, 0x12345678u), 0x12345678u);
  ASSERT_EQ(Crc32cMulModP(0x9abcdef0u, kCrcOne), 0x9abcdef0u);
}

TEST_F(Crc32cDeviceTest, ShiftIsZeroBytes) {
  Random rnd(301);
  const std::vector<uint8_t> zeros((1u << 24) + 70000, 0);
  for (uint64_t m :
       {0ull, 1ull, 3ull, 8ull, 255ull, 256ull, 257ull, 4096ull, 65535ull, 65536ull, 65537ull,
        70000ull, (1ull << 20) + 3, (1ull << 24) - 1, 1ull << 24, (1ull << 24) + 69999}) {
    const uint32_t reg = rnd.Next();
    ASSERT_EQ(Crc32cShift(*tables_, reg, m), Crc32cUpdate(byte_table_, reg, zeros.data(), m)) << m;
  }
  ASSERT_EQ(Crc32cShift(*tables_, 0, 12345), 0u);
  // Over 16 MiB the shift squares and multiplies: x^(2^32) mod P is x^2
  // (P = x^32 + 0x1EDC6F41 is not irreducible; computed unreflected with
  // Python), so the shift by 2^29 bytes multiplies by x^2.
  ASSERT_EQ(Crc32cShift(*tables_, kCrcOne, 1ull << 29), kCrcOne >> 2);
  // Shifts compose: Shift_a(Shift_b(r)) == Shift_{a+b}(r), across both paths.
  for (int iter = 0; iter < 50; ++iter) {
    const uint32_t reg = rnd.Next();
    const uint64_t a = rnd.Skewed(40);
    const uint64_t b = rnd.Skewed(40);
    ASSERT_EQ(Crc32cShift(*tables_, Crc32cShift(*tables_, reg, a), b),
              Crc32cShift(*tables_, reg, a + b))
        << a << " " << b;
  }
}

TEST_F(Crc32cDeviceTest, Combine) {
  Random rnd(302);
  for (int iter = 0; iter < 200; ++iter) {
    const auto a = RandomBytes(&rnd, rnd.Uniform(5000));
    const auto b = RandomBytes(&rnd, rnd.Skewed(17));
    std::vector<uint8_t> ab = a;
    ab.insert(ab.end(), b.begin(), b.end());
    const uint32_t ra = Crc32cUpdate(byte_table_, 0xffffffffu, a.data(), a.size());
    const uint32_t rb = Crc32cUpdate(byte_table_, 0, b.data(), b.size());
    ASSERT_EQ(~Crc32cCombine(*tables_, ra, rb, b.size()), Bytewise(ab.data(), ab.size()));
  }
}

TEST_F(Crc32cDeviceTest, LaneChunksTileTheBuffer) {
  std::vector<uint8_t> buf(70000 + 16);
  for (uint64_t n : {0, 1, 15, 16, 17, 31, 32, 33, 100, 511, 512, 513, 4095, 4096, 4101, 70000}) {
    for (uint32_t misalign = 0; misalign < 16; ++misalign) {
      const uint8_t* p = buf.data() + misalign;
      for (uint32_t lanes : kLaneCounts) {
        uint64_t next = 0;
        uint64_t longest = 0;
        for (uint32_t lane = 0; lane < lanes; ++lane) {
          const CrcChunk c = CrcLaneChunk(p, n, lane, lanes);
          ASSERT_EQ(c.begin, next) << n << " " << lane << "/" << lanes;
          ASSERT_LE(c.begin, c.end);
          if (lane > 0 && c.begin < n) {
            ASSERT_EQ(reinterpret_cast<uintptr_t>(p + c.begin) % 16, 0u) << n << " " << lane;
          }
          longest = std::max(longest, c.end - c.begin);
          next = c.end;
        }
        ASSERT_EQ(next, n);
        // Balanced: no chunk over its share by more than a unit, a head and a tail.
        ASSERT_LE(longest, n / lanes + 16 + 15 + 15) << n << " " << lanes;
      }
    }
  }
}

TEST_F(Crc32cDeviceTest, MatchesBytewiseAndUtil) {
  Random rnd(303);
  std::vector<uint8_t> buf = RandomBytes(&rnd, 70000 + 64);
  // Every length up to 600 at a misalignment that varies with it.
  for (uint64_t n = 0; n <= 600; ++n) {
    ASSERT_NO_FATAL_FAILURE(CheckBuffer(buf.data() + (n * 7) % 16, n));
  }
  // Notable lengths at every alignment (1, 3, 5, ... bytes past 16).
  for (uint64_t n : {1,    31,   32,   33,   63,   64,    65,    1023,  1024,  1025, 4095,
                     4096, 4097, 4101, 8191, 8192, 65535, 65536, 65537, 69999, 70000}) {
    for (uint32_t misalign = 0; misalign < 16; ++misalign) {
      ASSERT_NO_FATAL_FAILURE(CheckBuffer(buf.data() + misalign, n));
    }
  }
  // Random lengths and offsets, fresh bytes.
  for (int iter = 0; iter < 100; ++iter) {
    const uint64_t n = rnd.Uniform(70001);
    const uint64_t off = rnd.Uniform(64);
    for (uint64_t k = 0; k < n; ++k) buf[off + k] = static_cast<uint8_t>(rnd.Next());
    ASSERT_NO_FATAL_FAILURE(CheckBuffer(buf.data() + off, n));
  }
  // Degenerate contents.
  std::fill(buf.begin(), buf.end(), 0);
  ASSERT_NO_FATAL_FAILURE(CheckBuffer(buf.data() + 3, 5000));
  std::fill(buf.begin(), buf.end(), 0xff);
  ASSERT_NO_FATAL_FAILURE(CheckBuffer(buf.data() + 5, 5000));
}

TEST_F(Crc32cDeviceTest, PartsLocateErrors) {
  // A single flipped bit anywhere changes the result for every lane count.
  Random rnd(304);
  std::vector<uint8_t> buf = RandomBytes(&rnd, 4101 + 16);
  const uint8_t* p = buf.data() + 9;
  const uint32_t good = Bytewise(p, 4101);
  for (int iter = 0; iter < 300; ++iter) {
    const uint64_t at = rnd.Uniform(4101);
    const uint8_t bit = static_cast<uint8_t>(1u << rnd.Uniform(8));
    buf[9 + at] ^= bit;
    for (uint32_t lanes : kLaneCounts) {
      ASSERT_NE(CooperativeCrc32c(*tables_, p, 4101, lanes), good) << at << " " << lanes;
    }
    buf[9 + at] ^= bit;
  }
  ASSERT_EQ(CooperativeCrc32c(*tables_, p, 4101, 32), good);
}

// Stored blocks: contents ++ type ++ fixed32 masked CRC, at odd offsets.
struct Arena {
  std::vector<uint8_t> bytes;
  std::vector<BlockSpan> spans;
};

Arena MakeArena(Random* rnd, int blocks) {
  Arena a;
  for (int b = 0; b < blocks; ++b) {
    for (uint64_t gap = rnd->Uniform(20); gap > 0; --gap) a.bytes.push_back(0xee);
    const uint64_t size = rnd->OneIn(3) ? rnd->Uniform(70000) : 4000 + rnd->Uniform(200);
    const BlockSpan span{a.bytes.size(), size};
    for (uint64_t k = 0; k <= size; ++k) a.bytes.push_back(static_cast<uint8_t>(rnd->Next()));
    const uint32_t masked = crc32c::Mask(
        crc32c::Value(reinterpret_cast<const char*>(a.bytes.data() + span.offset), size + 1));
    for (int k = 0; k < 4; ++k) a.bytes.push_back(static_cast<uint8_t>(masked >> (8 * k)));
    a.spans.push_back(span);
  }
  return a;
}

TEST_F(Crc32cDeviceTest, WarpBlockChecksumOk) {
  Random rnd(305);
  Arena a = MakeArena(&rnd, 40);
  a.spans.push_back(BlockSpan{a.bytes.size(), 0});  // an empty block: just type and CRC
  a.bytes.push_back(1);
  const uint32_t masked = crc32c::Mask(crc32c::Value("\x01", 1));
  for (int k = 0; k < 4; ++k) a.bytes.push_back(static_cast<uint8_t>(masked >> (8 * k)));
  for (const BlockSpan& s : a.spans) {
    ASSERT_TRUE(BlockChecksumOk(byte_table_, a.bytes.data(), s));
    ASSERT_TRUE(WarpBlockChecksumOk(*tables_, a.bytes.data(), s, 0));
    ASSERT_TRUE(WarpBlockChecksumOk(*tables_, a.bytes.data(), s, 17));
    // Any flipped bit of contents, type or trailer fails it.
    for (int iter = 0; iter < 20; ++iter) {
      const uint64_t at = s.offset + rnd.Uniform(s.size + 5);
      const uint8_t bit = static_cast<uint8_t>(1u << rnd.Uniform(8));
      a.bytes[at] ^= bit;
      ASSERT_FALSE(BlockChecksumOk(byte_table_, a.bytes.data(), s));
      ASSERT_FALSE(WarpBlockChecksumOk(*tables_, a.bytes.data(), s, 0)) << at - s.offset;
      a.bytes[at] ^= bit;
    }
  }
}

TEST_F(Crc32cDeviceTest, WarpWriteBlockCrc) {
  Random rnd(306);
  const Arena a = MakeArena(&rnd, 40);
  std::vector<uint8_t> out = a.bytes;
  for (const BlockSpan& s : a.spans) std::memset(&out[s.offset + s.size + 1], 0, 4);
  // Lanes other than 0 write nothing.
  for (const BlockSpan& s : a.spans) WarpWriteBlockCrc(*tables_, out.data(), s.offset, s.size, 5);
  for (const BlockSpan& s : a.spans) {
    ASSERT_EQ(LoadFixed32(&out[s.offset + s.size + 1]), 0u);
  }
  for (const BlockSpan& s : a.spans) WarpWriteBlockCrc(*tables_, out.data(), s.offset, s.size, 0);
  ASSERT_TRUE(out == a.bytes);
}

#if defined(ACCELKV_WITH_CUDA)

TEST_F(Crc32cDeviceTest, CudaWarpKernels) {
  Random rnd(307);
  Arena a = MakeArena(&rnd, 300);
  // Corrupt some blocks: the device must flag exactly those.
  std::vector<bool> bad(a.spans.size(), false);
  for (size_t b = 0; b < a.spans.size(); b += 7) {
    const BlockSpan& s = a.spans[b];
    a.bytes[s.offset + rnd.Uniform(s.size + 5)] ^= 0x10;
    bad[b] = true;
  }
  test::WarpCrcKernelOutput got;
  std::string reason;
  if (!test::RunWarpCrcKernels(a.bytes, a.spans, &got, &reason)) GTEST_SKIP() << reason;
  EXPECT_TRUE(got.tables_match) << "FillCrc32cTables on the device";
  ASSERT_EQ(got.crc.size(), a.spans.size());
  ASSERT_EQ(got.ok.size(), a.spans.size());
  for (size_t b = 0; b < a.spans.size(); ++b) {
    const BlockSpan& s = a.spans[b];
    ASSERT_EQ(got.crc[b], Bytewise(&a.bytes[s.offset], s.size + 1)) << b;
    ASSERT_EQ(got.ok[b] != 0, !bad[b]) << b;
    ASSERT_EQ(got.ok[b] != 0, BlockChecksumOk(byte_table_, a.bytes.data(), s)) << b;
  }
  // The device rewrote every trailer (zeroed first) from the bytes as given.
  std::vector<uint8_t> want = a.bytes;
  for (const BlockSpan& s : a.spans) WarpWriteBlockCrc(*tables_, want.data(), s.offset, s.size, 0);
  ASSERT_TRUE(got.written == want);
}

// Not a check: the verify stage's old kernel (a thread per block, byte-wise)
// against a warp per block, over ~200 MB of 4 KiB blocks, for the record.
TEST_F(Crc32cDeviceTest, CudaWarpVerifyTiming) {
  test::WarpCrcTiming t;
  std::string reason;
  if (!test::TimeWarpCrcKernels(50000, 4096, &t, &reason)) GTEST_SKIP() << reason;
  EXPECT_TRUE(t.all_ok);
  std::printf(
      "verify %llu blocks of %llu B: thread per block %.3f ms; warp per block %.3f ms (resident "
      "grid), %.3f ms (flat grid), %.3f ms (tables filled per thread block)\n",
      static_cast<unsigned long long>(t.blocks), static_cast<unsigned long long>(t.block_size),
      t.thread_ms, t.warp_ms, t.warp_flat_ms, t.warp_fill_ms);
  RecordProperty("thread_per_block_ms", std::to_string(t.thread_ms));
  RecordProperty("warp_per_block_ms", std::to_string(t.warp_ms));
  RecordProperty("warp_flat_grid_ms", std::to_string(t.warp_flat_ms));
  RecordProperty("warp_fill_tables_ms", std::to_string(t.warp_fill_ms));
}

#else

TEST_F(Crc32cDeviceTest, CudaWarpKernels) {
  GTEST_SKIP() << "built without CUDA (ACCELKV_WITH_CUDA off): device kernels not tested";
}

#endif

}  // namespace
}  // namespace gpu
}  // namespace accelkv
