// KeySortDevice::DecodeKeys (decode_common.h) on each device: every entry's
// key materialized at the CPU decoder's offsets, values located, the lowest
// malformed internal key reported; blocks of every layout (prefix or none,
// fixed or variable keys and values, 2- and 4-byte end offsets).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/job_input.h"
#include "gpu/key_sort_device.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "testutil/test_util.h"
#include "util/coding.h"
#include "util/internal_key.h"
#include "util/random.h"

namespace accelkv {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

class GpuDecodeTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "host") {
      device_ = gpu::NewHostKeySortDevice(1ull << 30);
    } else {
      std::string reason;
      device_ = gpu::NewCudaKeySortDevice(GpuExecutorOptions(), &reason);
      if (device_ == nullptr) GTEST_SKIP() << reason;
    }
  }

  // Random entries of one block, in one of five layouts.
  static Entries RandomBlock(Random* rnd, int shape) {
    Entries e;
    const int n = 1 + static_cast<int>(rnd->Uniform(shape == 4 ? 400 : 60));
    const std::string prefix = shape == 1 ? "" : std::string(rnd->Uniform(12), 'p');
    const uint32_t fixed_user = 1 + rnd->Uniform(20);
    const uint32_t fixed_value = rnd->Uniform(40);
    for (int i = 0; i < n; ++i) {
      std::string user = prefix;
      const uint32_t len = shape == 2 || shape == 3 ? fixed_user : rnd->Uniform(30);
      for (uint32_t k = 0; k < len; ++k) user.push_back(static_cast<char>(rnd->Uniform(256)));
      const ValueType t = rnd->OneIn(4) ? ValueType::kDeletion : ValueType::kValue;
      std::string value = shape == 3   ? std::string(fixed_value, 'v')
                          : shape == 4 ? std::string(200 + rnd->Uniform(200), 'w')
                                       : std::string(rnd->Uniform(50), 'x');
      if (shape != 3) {
        for (char& c : value) c = static_cast<char>(rnd->Uniform(256));
      }
      e.emplace_back(InternalKey(user, 1 + rnd->Uniform(1000), t).Encode().ToString(), value);
    }
    return e;
  }

  std::unique_ptr<gpu::KeySortDevice> device_;
};

TEST_P(GpuDecodeTest, MaterializesEveryKeyAtTheCpuOffsets) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Blocks back to back in one arena (with a gap, as trailers make).
    std::vector<Entries> blocks;
    std::string arena_bytes;
    gpu::DecodeInput in;
    std::string expected_keys;
    std::vector<uint64_t> expected_value_offset;
    gpu::HostVector<gpu::BlockSpan> spans;  // for CheckBlocks (key-first rounds)
    const int nb = 1 + static_cast<int>(rnd.Uniform(12));
    for (int b = 0; b < nb; ++b) {
      blocks.push_back(RandomBlock(&rnd, static_cast<int>(rnd.Uniform(5))));
      BlockBuilder builder;
      for (const auto& [k, v] : blocks.back()) builder.Add(k, v);
      const Slice contents = builder.Finish();
      BlockLayout l;
      ASSERT_TRUE(Block::Validate(contents, &l).ok());
      const gpu::DecodeBlock d =
          gpu::MakeDecodeBlock(arena_bytes.size(), l, expected_keys.size(), in.entries);
      in.blocks.push_back(d);
      spans.push_back(gpu::BlockSpan{arena_bytes.size(), contents.size()});
      arena_bytes.append(contents.data(), contents.size());
      arena_bytes.push_back('\0');  // the trailer: no compression, a checksum's place
      arena_bytes.append(4, 't');
      uint64_t value_at = d.offset + l.values_offset();
      for (const auto& [k, v] : blocks.back()) {
        expected_keys += k;
        expected_value_offset.push_back(value_at);
        value_at += v.size();
      }
      in.entries += l.n;
    }
    uint8_t* arena = nullptr;
    uint8_t* key_arena = nullptr;
    ASSERT_TRUE(device_->HostArena(arena_bytes.size(), &arena).ok());
    ASSERT_TRUE(device_->HostKeyArena(std::max<size_t>(expected_keys.size(), 1), &key_arena).ok());
    std::memcpy(arena, arena_bytes.data(), arena_bytes.size());
    in.arena = arena;
    in.arena_size = arena_bytes.size();
    in.key_arena = key_arena;
    in.key_arena_size = expected_keys.size();
    // Corrupt one entry's type byte (in the arena: as the bytes on disk)
    // every other round; the lowest bad entry must come back.
    uint64_t corrupt = ~uint64_t{0};
    if (round % 2 == 1) {
      corrupt = rnd.Uniform(static_cast<uint32_t>(in.entries));
      const gpu::DecodeBlock& b = in.blocks[gpu::BlockOfEntry(in.blocks.data(), nb, corrupt)];
      const gpu::DecodedEntry d =
          gpu::LocateEntry(arena, b, static_cast<uint32_t>(corrupt - b.first_entry));
      const uint64_t type_at = d.key_size - 8;
      if (type_at >= b.prefix_size) {  // in its own suffix: no other entry has the byte
        arena[d.suffix_src + (type_at - b.prefix_size)] = 7;
      } else {
        corrupt = ~uint64_t{0};
      }
    }
    // The arena staged on the device in pieces (BeginStaging, StageRange)
    // every third round, with a gap (so uploaded whole after all) every
    // third; DecodeKeys takes the staged arena only when every byte was
    // staged (copy_in_wait), and the keys are the same either way.
    // From round 6 the rounds staging every byte go key-first (SetKeyFirst):
    // CheckBlocks gathers the blocks' keys from the staged host memory and
    // DecodeKeys decodes them from there, the copies still running.
    const int staging = round % 3;  // 0: none, 1: every byte, 2: a gap
    const bool key_first = staging == 1 && round >= 6;
    device_->SetKeyFirst(key_first);
    if (staging != 0) {
      ASSERT_TRUE(device_->BeginStaging(arena, in.arena_size).ok());
      const uint64_t cut = 1 + rnd.Uniform(static_cast<uint32_t>(in.arena_size - 1));
      EXPECT_TRUE(device_->StageRange(cut, in.arena_size - cut).ok());  // out of order
      EXPECT_TRUE(device_->StageRange(0, staging == 2 ? cut - 1 : cut).ok());
      EXPECT_TRUE(device_->StageRange(cut, in.arena_size - cut + 1).IsInvalidArgument());
    }
    gpu::HostVector<uint64_t> key_offset, value_offset;
    gpu::HostVector<uint32_t> key_size, value_size;
    gpu::DecodeOutput out;
    out.key_offset = &key_offset;
    out.key_size = &key_size;
    out.value_offset = &value_offset;
    out.value_size = &value_size;
    if (key_first) {
      gpu::HostVector<gpu::DecodeBlock> checked;
      gpu::BlockCheckResult result;
      std::map<std::string, uint64_t> check_stages;
      ASSERT_TRUE(
          device_->CheckBlocks(arena, in.arena_size, spans, &checked, &result, &check_stages).ok());
      ASSERT_EQ(~uint64_t{0}, result.bad_block);
      ASSERT_EQ(in.blocks.size(), checked.size());
      for (size_t i = 0; i < checked.size(); ++i) {
        ASSERT_EQ(0, std::memcmp(&in.blocks[i], &checked[i], sizeof(gpu::DecodeBlock))) << i;
      }
    }
    std::map<std::string, uint64_t> stages;
    ASSERT_TRUE(device_->DecodeKeys(in, &out, &stages).ok());
    device_->SetKeyFirst(false);
    EXPECT_EQ(staging == 1, stages.count("copy_in_wait") > 0);
    EXPECT_TRUE(device_->StageRange(0, 0).IsInvalidArgument());  // DecodeKeys ended it
    EXPECT_EQ(corrupt, out.bad_entry);
    ASSERT_EQ(in.entries, key_offset.size());
    // The keys and arrays may still be on their way back (the CUDA device
    // copies them into pinned memory while the caller goes on).
    ASSERT_TRUE(device_->WaitDecodedKeys(&stages).ok());
    EXPECT_EQ(1u, stages.count("keys_wait"));
    if (GetParam() == "cuda") {
      EXPECT_TRUE(gpu::HostBytesPinned(key_offset.data()));
      EXPECT_TRUE(gpu::HostBytesPinned(value_size.data()));
    }
    uint64_t e = 0, key_at = 0;
    for (const Entries& block : blocks) {
      for (const auto& [k, v] : block) {
        ASSERT_EQ(key_at, key_offset[e]) << e;
        ASSERT_EQ(k.size(), key_size[e]) << e;
        if (corrupt == ~uint64_t{0}) {
          ASSERT_EQ(k, std::string(reinterpret_cast<const char*>(key_arena) + key_at, k.size()))
              << e;
        }
        ASSERT_EQ(expected_value_offset[e], value_offset[e]) << e;
        ASSERT_EQ(v.size(), value_size[e]) << e;
        ASSERT_EQ(v, std::string(reinterpret_cast<const char*>(arena) + value_offset[e], v.size()));
        key_at += k.size();
        ++e;
      }
    }
  }
}

TEST(GpuDecodeCommonTest, BlockOfEntryFindsTheLastBlockStartingAtOrBefore) {
  std::vector<gpu::DecodeBlock> blocks(4);
  const uint64_t first[] = {0, 3, 4, 10};
  for (int i = 0; i < 4; ++i) blocks[i].first_entry = first[i];
  const uint64_t expected[] = {0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 3, 3};
  for (uint64_t e = 0; e < 12; ++e) {
    EXPECT_EQ(expected[e], gpu::BlockOfEntry(blocks.data(), blocks.size(), e)) << e;
  }
  EXPECT_EQ(0u, gpu::BlockOfEntry(blocks.data(), 1, 7));
}

TEST(GpuDecodeCommonTest, LanesPerEntryGiveEachLaneAtMostEightBytesOfTheLargestAverageKey) {
  auto block = [](uint32_t n, uint32_t prefix, uint64_t key_bytes) {
    gpu::DecodeBlock b{};
    b.n = n;
    b.prefix_size = prefix;
    b.key_bytes = key_bytes;
    return b;
  };
  std::vector<gpu::DecodeBlock> blocks;
  EXPECT_EQ(1u, gpu::DecodeLanesPerEntry(blocks.data(), 0));
  blocks.push_back(block(10, 0, 80));  // 8-byte keys
  EXPECT_EQ(1u, gpu::DecodeLanesPerEntry(blocks.data(), blocks.size()));
  blocks.push_back(block(10, 4, 201));  // 4 + ceil(20.1) = 25 bytes
  EXPECT_EQ(4u, gpu::DecodeLanesPerEntry(blocks.data(), blocks.size()));
  blocks.push_back(block(0, 0, 100000));  // no entries: not counted
  EXPECT_EQ(4u, gpu::DecodeLanesPerEntry(blocks.data(), blocks.size()));
  blocks.push_back(block(3, 0, 3 * 1024));
  EXPECT_EQ(32u, gpu::DecodeLanesPerEntry(blocks.data(), blocks.size()));
}

// KeySortDevice::CheckBlocks over blocks of every layout, some empty,
// each followed by its trailer, against the CPU's CheckDataBlock on each:
// the records of the blocks with entries (key bases and first entries the
// running sums), the sums, the fixed key size, and, with malformed blocks
// (a footer word or a byte of the end offsets flipped, a compressed
// trailer, a block of more entries than key bytes), the lowest failing
// block and its code. The arena is staged whole first in odd rounds; in
// even rounds the check stages it itself.
TEST_P(GpuDecodeTest, CheckBlocksAgreesWithTheCpuOnEveryBlock) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::string arena_bytes;
    gpu::HostVector<gpu::BlockSpan> spans;
    const int nb = 1 + static_cast<int>(rnd.Uniform(round % 4 == 0 ? 3000 : 40));
    // Every block of a round has fixed keys of one size in rounds 5, 10, ...
    const bool fixed_round = round % 5 == 0;
    // Odd rounds spoil one block of each kind in turn (a count of kinds met
    // by chance fell short for a seed), and others at random.
    const int spoiled = round % 2 == 1 ? static_cast<int>(rnd.Uniform(nb)) : -1;
    for (int b = 0; b < nb; ++b) {
      BlockBuilder builder;
      if (fixed_round) {  // internal keys of 16 bytes, ascending
        const int n = 1 + static_cast<int>(rnd.Uniform(30));
        for (int i = 0; i < n; ++i) {
          std::string user(8, '\0');
          EncodeFixed64(user.data(), static_cast<uint64_t>(b) << 32 | static_cast<uint64_t>(i));
          std::reverse(user.begin(), user.end());  // big-endian: bytewise order
          builder.Add(InternalKey(user, 7, ValueType::kValue).Encode(), "v");
        }
      } else if (!rnd.OneIn(8)) {  // else empty: n == 0
        const Entries e = RandomBlock(&rnd, static_cast<int>(rnd.Uniform(5)));
        for (const auto& [k, v] : e) builder.Add(k, v);
      }
      std::string contents = builder.Finish().ToString();
      const bool bad = b == spoiled || (round % 2 == 1 && rnd.OneIn(static_cast<uint32_t>(nb)));
      char trailer = 0;
      if (bad) {
        switch (b == spoiled ? round / 2 % 4 : rnd.Uniform(4)) {
          case 0:  // a footer word (n, P, key width or value width)
            contents[contents.size() - 16 + rnd.Uniform(16)] ^= static_cast<char>(0x81);
            break;
          case 1:  // a byte of the end offsets, or a section's (an empty block: its n)
            contents[contents.size() == 16
                         ? 0
                         : rnd.Uniform(static_cast<uint32_t>(contents.size() - 16))] ^= 0x7f;
            break;
          case 2:
            trailer = 1;
            break;
          default: {  // five entries of empty keys and values: no array, no byte
            contents.assign(16, '\0');
            contents[0] = 5;
            break;
          }
        }
      }
      spans.push_back(gpu::BlockSpan{arena_bytes.size(), contents.size()});
      arena_bytes += contents;
      arena_bytes.push_back(trailer);
      arena_bytes.append(4, 'c');  // the checksum's place
    }
    // The CPU's answer.
    uint64_t bad_block = ~uint64_t{0};
    uint32_t bad_code = gpu::kDataBlockOk;
    std::vector<gpu::DecodeBlock> expected;
    gpu::BlockSums sums{0, 0, 0};
    uint64_t fixed = gpu::BlockCheckResult::kNoEntries;
    for (size_t i = 0; i < spans.size() && bad_block == ~uint64_t{0}; ++i) {
      BlockLayout l;
      const uint32_t code = gpu::CheckDataBlock(
          reinterpret_cast<const uint8_t*>(arena_bytes.data()) + spans[i].offset, spans[i].size,
          &l);
      if (code != gpu::kDataBlockOk) {
        bad_block = i;
        bad_code = code;
      } else if (l.n > 0) {
        expected.push_back(gpu::MakeDecodeBlock(spans[i].offset, l, sums.key_bytes, sums.entries));
        sums = gpu::AddBlockSums()(sums, gpu::BlockShare(code, l));
        const uint64_t f = gpu::FixedKeySize(l);
        fixed = gpu::TableBlocks::MergeFixedKeySize(fixed, f);
      }
    }
    // The spoiled block or one before it fails, but for a flipped end
    // offset: offsets still ascending and in range describe a block (its
    // checksum, not its layout, finds that).
    if (spoiled >= 0 && round / 2 % 4 != 1) {
      EXPECT_GE(static_cast<uint64_t>(spoiled), bad_block) << "kind " << round / 2 % 4;
    }
    if (fixed_round && bad_block == ~uint64_t{0}) {
      EXPECT_EQ(16u, fixed);
    }
    uint8_t* arena = nullptr;
    ASSERT_TRUE(device_->HostArena(arena_bytes.size(), &arena).ok());
    std::memcpy(arena, arena_bytes.data(), arena_bytes.size());
    // Rounds 1, 5, 9, ... go key-first (SetKeyFirst): the check reads the
    // blocks' footers, end offsets and keys from the staged host memory,
    // staged here in three ranges cut anywhere (blocks across them).
    const bool key_first = round % 4 == 1;
    device_->SetKeyFirst(key_first);
    if (round % 2 == 1) {
      ASSERT_TRUE(device_->BeginStaging(arena, arena_bytes.size()).ok());
      if (key_first && arena_bytes.size() > 2) {
        const auto size = static_cast<uint32_t>(arena_bytes.size());
        uint64_t cut[2] = {1 + rnd.Uniform(size - 1), 1 + rnd.Uniform(size - 1)};
        if (cut[0] > cut[1]) std::swap(cut[0], cut[1]);
        ASSERT_TRUE(device_->StageRange(cut[1], size - cut[1]).ok());
        ASSERT_TRUE(device_->StageRange(0, cut[0]).ok());
        ASSERT_TRUE(device_->StageRange(cut[0], cut[1] - cut[0]).ok());
      } else {
        ASSERT_TRUE(device_->StageRange(0, arena_bytes.size()).ok());
      }
    }
    gpu::HostVector<gpu::DecodeBlock> blocks;
    gpu::BlockCheckResult result;
    std::map<std::string, uint64_t> stages;
    ASSERT_TRUE(
        device_->CheckBlocks(arena, arena_bytes.size(), spans, &blocks, &result, &stages).ok());
    device_->SetKeyFirst(false);
    EXPECT_EQ(1u, stages.count("copy_in_wait"));
    EXPECT_EQ(1u, stages.count("gpu_check"));
    ASSERT_EQ(bad_block, result.bad_block);
    if (bad_block != ~uint64_t{0}) {
      EXPECT_EQ(bad_code, result.bad_code);
      device_->CancelStaging();
      continue;
    }
    EXPECT_EQ(sums.blocks, result.sums.blocks);
    EXPECT_EQ(sums.entries, result.sums.entries);
    EXPECT_EQ(sums.key_bytes, result.sums.key_bytes);
    EXPECT_EQ(fixed, result.fixed_key_size);
    ASSERT_EQ(expected.size(), blocks.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(0, std::memcmp(&expected[i], &blocks[i], sizeof(gpu::DecodeBlock))) << i;
    }
    device_->CancelStaging();
  }
}

// The checks beyond the layout, and their order: a compressed trailer
// before the layout, more entries than key-suffix bytes after it.
TEST(GpuDecodeCommonTest, CheckDataBlockCodes) {
  BlockBuilder builder;
  builder.Add(InternalKey("k", 1, ValueType::kValue).Encode(), "v");
  std::string block = builder.Finish().ToString();
  block.push_back('\0');
  BlockLayout l;
  const auto* p = reinterpret_cast<const uint8_t*>(block.data());
  EXPECT_EQ(gpu::kDataBlockOk, gpu::CheckDataBlock(p, block.size() - 1, &l));
  EXPECT_EQ(1u, l.n);
  block.back() = 1;
  EXPECT_EQ(gpu::kDataBlockCompressed, gpu::CheckDataBlock(p, block.size() - 1, &l));
  std::string footer_only(17, '\0');  // five entries of empty keys and values, trailer 0
  footer_only[0] = 5;
  p = reinterpret_cast<const uint8_t*>(footer_only.data());
  EXPECT_EQ(gpu::kDataBlockTooManyKeys, gpu::CheckDataBlock(p, 16, &l));
  footer_only[16] = 2;  // compression is checked first
  EXPECT_EQ(gpu::kDataBlockCompressed, gpu::CheckDataBlock(p, 16, &l));
  footer_only[16] = 0;
  footer_only[4] = 1;  // a prefix byte the block has not: the layout fails
  EXPECT_EQ(static_cast<uint32_t>(BlockCheck::kSectionsDoNotFill), gpu::CheckDataBlock(p, 16, &l));
}

INSTANTIATE_TEST_SUITE_P(Devices, GpuDecodeTest, testing::Values("host", "cuda"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// Keys-only mode uploads each block's prefix and key suffixes and its end
// offsets (ForEachKeySpan), merged into one copy across gaps under the
// limit (ForEachKeyRun): every span is covered, runs are disjoint and
// ascending, and a gap of the limit or more separates two runs.
TEST(GpuDecodeTest, KeySpansAndRunsCoverEveryKeyAndSkipLargeValues) {
  gpu::HostVector<gpu::DecodeBlock> blocks;
  uint64_t offset = 0;
  const uint32_t values[] = {10, 100000, 0, 70000, 65535, 5, 1 << 20};
  for (uint32_t v : values) {
    gpu::DecodeBlock b{};
    b.offset = offset;
    b.n = 2;
    b.prefix_size = 3;
    b.key_bytes = 20;
    b.key_width = v % 2 == 0 ? gpu::kVariableWidth : 10;
    b.value_width = gpu::kVariableWidth;
    b.offset_width = 2;
    b.value_bytes = v;
    blocks.push_back(b);
    offset += 3 + 20 + v + 2 * 2 * (b.key_width == gpu::kVariableWidth ? 2 : 1) + 16 + 5;
  }
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const gpu::DecodeBlock& b : blocks) {
    gpu::ForEachKeySpan(b, [&](uint64_t o, uint64_t n) { spans.emplace_back(o, n); });
    const uint64_t arrays = (b.key_width == gpu::kVariableWidth ? 2u : 1u) * 2 * 2;
    EXPECT_EQ(std::make_pair(b.offset, uint64_t{23}), spans[spans.size() - 2]);
    EXPECT_EQ(std::make_pair(b.offset + 23 + b.value_bytes, arrays), spans.back());
  }
  const uint64_t limit = 65536;
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  gpu::ForEachKeyRun(blocks, limit, [&](uint64_t o, uint64_t n) { runs.emplace_back(o, n); });
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_GE(runs[i].first - (runs[i - 1].first + runs[i - 1].second), limit) << i;
  }
  for (const auto& [o, n] : spans) {
    bool covered = false;
    for (const auto& [ro, rn] : runs) covered |= o >= ro && o + n <= ro + rn;
    EXPECT_TRUE(covered) << o;
  }
  // Values of 100000, 70000 and 1 MiB split runs; 10, 0, 5 and 65535 (just
  // under the limit) and the 21 bytes of footer and trailer between blocks
  // do not: four runs.
  EXPECT_EQ(4u, runs.size());
}

}  // namespace
}  // namespace accelkv
