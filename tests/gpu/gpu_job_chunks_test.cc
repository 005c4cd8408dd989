// job_chunks.h over synthetic table indexes: PlanJobChunks covers every
// range exactly once, in key order, each chunk fitting, with every block
// that can hold a key of its range; ChunkBoundaries keeps the job's
// boundaries and adds ascending ones. With direct reads a chunk's file
// arena counts each part's padding to its 4 KiB-aligned cover.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gpu/job_chunks.h"
#include "gpu/job_input.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

std::string Key(Random* rnd) {
  std::string k;
  const int n = 1 + static_cast<int>(rnd->Uniform(3));
  for (int i = 0; i < n; ++i) k.push_back(static_cast<char>('a' + rnd->Uniform(6)));
  return k;
}

// Tables of 0..12 blocks with random ascending last keys (repeats allowed:
// versions of one key across blocks), consecutive in the file.
std::vector<gpu::TableIndex> RandomIndexes(Random* rnd) {
  std::vector<gpu::TableIndex> out(1 + rnd->Uniform(5));
  for (size_t t = 0; t < out.size(); ++t) {
    gpu::TableIndex& ti = out[t];
    ti.number = t + 1;
    const int nb = static_cast<int>(rnd->Uniform(13));
    std::vector<std::string> keys;
    for (int b = 0; b < nb + 1; ++b) keys.push_back(Key(rnd));
    std::sort(keys.begin(), keys.end());
    ti.smallest_user_key = keys[0];
    uint64_t offset = 0;
    for (int b = 0; b < nb; ++b) {
      BlockHandle h;
      h.offset = offset;
      h.size = 100 + rnd->Uniform(900);
      offset += h.size + kBlockTrailerSize;
      ti.blocks.push_back(h);
      ti.last_user_keys.push_back(keys[b + 1]);
    }
    ti.num_entries = 10 * static_cast<uint64_t>(nb);
  }
  return out;
}

// Whether block b of t can hold a user key in range: its keys lie between
// the previous block's last key (or the table's smallest) and its own.
bool CanHold(const gpu::TableIndex& t, size_t b, const gpu::UserKeyRange& r) {
  const std::string& first = b == 0 ? t.smallest_user_key : t.last_user_keys[b - 1];
  const std::string& last = t.last_user_keys[b];
  return (!r.has_hi || first < r.hi) && (!r.has_lo || last >= r.lo);
}

// The file-arena bytes of a part read with direct reads: its aligned cover.
uint64_t AlignedCover(uint64_t file_offset, uint64_t size) {
  return (file_offset + size + 4095) / 4096 * 4096 - file_offset / 4096 * 4096;
}

TEST(GpuJobChunksTest, ChunksCoverEveryRangeInOrderAndFit) {
  Random rnd(test::TestSeed());
  for (int iter = 0; iter < 300; ++iter) {
    const bool direct = iter % 2 == 1;
    SCOPED_TRACE("iteration " + std::to_string(iter) + (direct ? ", direct reads" : ""));
    const std::vector<gpu::TableIndex> indexes = RandomIndexes(&rnd);
    std::set<std::string> bset;
    const int nb = static_cast<int>(rnd.Uniform(8));
    for (int i = 0; i < nb; ++i) bset.insert(Key(&rnd));
    const std::vector<std::string> bounds(bset.begin(), bset.end());
    const uint64_t limit = 2000 + rnd.Uniform(20000);
    auto fits = [limit](uint64_t bytes, uint64_t, uint64_t) { return bytes <= limit; };
    std::vector<gpu::JobChunk> chunks;
    const Status s = gpu::PlanJobChunks(indexes, bounds, direct, fits, &chunks);
    if (!s.ok()) {
      // Only when a single range does not fit.
      EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
      continue;
    }
    ASSERT_FALSE(chunks.empty());
    // In key order, contiguous, from the first key to the last, each range
    // of the boundaries in exactly one chunk.
    EXPECT_FALSE(chunks.front().range.has_lo);
    EXPECT_FALSE(chunks.back().range.has_hi);
    for (size_t i = 0; i + 1 < chunks.size(); ++i) {
      ASSERT_TRUE(chunks[i].range.has_hi);
      ASSERT_TRUE(chunks[i + 1].range.has_lo);
      EXPECT_EQ(chunks[i].range.hi, chunks[i + 1].range.lo);
      EXPECT_TRUE(std::binary_search(bounds.begin(), bounds.end(), chunks[i].range.hi));
    }
    for (const gpu::JobChunk& chunk : chunks) {
      // fits is asked about the file arena: the bytes, or with direct reads
      // the parts' aligned covers.
      EXPECT_LE(chunk.arena_bytes, limit);
      uint64_t bytes = 0;
      uint64_t arena = 0;
      for (const gpu::TablePart& p : chunk.parts) {
        bytes += p.size;
        arena += direct ? AlignedCover(p.file_offset, p.size) : p.size;
      }
      EXPECT_EQ(chunk.bytes, bytes);
      EXPECT_EQ(chunk.arena_bytes, arena);
      if (direct) {
        EXPECT_EQ(0u, chunk.arena_bytes % 4096);
      }
      // Every block that can hold a key of the range is in the part of its
      // table, and the part is one contiguous byte range.
      for (const gpu::TableIndex& t : indexes) {
        const gpu::TablePart* part = nullptr;
        for (const gpu::TablePart& p : chunk.parts) {
          if (p.number == t.number) part = &p;
        }
        for (size_t b = 0; b < t.blocks.size(); ++b) {
          if (!CanHold(t, b, chunk.range)) continue;
          ASSERT_NE(nullptr, part) << "table " << t.number << " block " << b;
          const BlockHandle& h = t.blocks[b];
          EXPECT_LE(part->file_offset, h.offset);
          EXPECT_LE(h.offset + h.size + kBlockTrailerSize, part->file_offset + part->size);
          EXPECT_TRUE(std::any_of(part->blocks.begin(), part->blocks.end(),
                                  [&h](const BlockHandle& x) { return x.offset == h.offset; }));
        }
      }
    }
  }
}

TEST(GpuJobChunksTest, ARangeTooLargeIsNotSupported) {
  Random rnd(test::TestSeed());
  std::vector<gpu::TableIndex> indexes;
  do {
    indexes = RandomIndexes(&rnd);
  } while (indexes[0].blocks.empty());
  std::vector<gpu::JobChunk> chunks;
  const Status s = gpu::PlanJobChunks(
      indexes, {}, /*direct_reads=*/false,
      [](uint64_t bytes, uint64_t, uint64_t) { return bytes < 100; }, &chunks);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
}

gpu::ChunkFits BytesAtMost(uint64_t limit) {
  return [limit](uint64_t bytes, uint64_t, uint64_t) { return bytes <= limit; };
}

TEST(GpuJobChunksTest, BoundariesKeepTheJobsAscendAndPlan) {
  Random rnd(test::TestSeed());
  int planned = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const bool direct = iter % 2 == 1;
    SCOPED_TRACE("iteration " + std::to_string(iter) + (direct ? ", direct reads" : ""));
    const std::vector<gpu::TableIndex> indexes = RandomIndexes(&rnd);
    std::set<std::string> existing_set;
    for (int i = 0; i < static_cast<int>(rnd.Uniform(3)); ++i) existing_set.insert(Key(&rnd));
    const std::vector<std::string> existing(existing_set.begin(), existing_set.end());
    std::string smallest = "~";
    std::set<std::string> last_keys;
    uint64_t bytes = 0;
    for (const gpu::TableIndex& t : indexes) {
      if (!t.blocks.empty()) smallest = std::min(smallest, t.smallest_user_key);
      last_keys.insert(t.last_user_keys.begin(), t.last_user_keys.end());
      uint64_t table_bytes = 0;
      for (const BlockHandle& h : t.blocks) table_bytes += h.size + kBlockTrailerSize;
      // The whole job's arena (every block of every table, in one part each).
      bytes +=
          direct && !t.blocks.empty() ? AlignedCover(t.blocks[0].offset, table_bytes) : table_bytes;
    }
    // Everything fits: nothing is added.
    EXPECT_EQ(existing, gpu::ChunkBoundaries(indexes, existing, direct, BytesAtMost(bytes)));
    // Direct reads: room for each table's part's padding (up to 5 tables,
    // their blocks from file offset 0: at most 4095 bytes each).
    const gpu::ChunkFits fits = BytesAtMost((direct ? 5 * 4096 : 0) + 1000 + rnd.Uniform(5000));
    const std::vector<std::string> b = gpu::ChunkBoundaries(indexes, existing, direct, fits);
    EXPECT_TRUE(std::adjacent_find(b.begin(), b.end(), std::greater_equal<>()) == b.end());
    for (const std::string& e : existing) {
      EXPECT_TRUE(std::binary_search(b.begin(), b.end(), e)) << e;
    }
    for (const std::string& k : b) {
      if (std::binary_search(existing.begin(), existing.end(), k)) continue;
      EXPECT_LT(smallest, k);
      EXPECT_TRUE(last_keys.count(k)) << k;  // a block's last key
    }
    // The ranges fit, unless one cannot be cut smaller.
    std::vector<gpu::JobChunk> chunks;
    if (gpu::PlanJobChunks(indexes, b, direct, fits, &chunks).ok()) ++planned;
  }
  EXPECT_LT(150, planned);
  // Ten bytes per block, ten per range: a range [b, c) holds the blocks of
  // last keys b, b and c, more than fits, but cannot be cut smaller.
  std::vector<gpu::TableIndex> one(1);
  one[0].number = 1;
  one[0].smallest_user_key = "a";
  for (const char* k : {"b", "b", "c", "d"}) {
    BlockHandle h;
    h.offset = one[0].blocks.empty() ? 0 : one[0].blocks.back().offset + 10;
    h.size = 5;
    one[0].blocks.push_back(h);
    one[0].last_user_keys.push_back(k);
  }
  EXPECT_EQ((std::vector<std::string>{"b", "c", "d"}),
            gpu::ChunkBoundaries(one, {}, /*direct_reads=*/false, BytesAtMost(10)));
  EXPECT_EQ((std::vector<std::string>{"c"}),
            gpu::ChunkBoundaries(one, {}, /*direct_reads=*/false, BytesAtMost(30)));
}

}  // namespace
}  // namespace accelkv
