// The output-table split rule the device runs (split_common.h), checked on
// the host against TableBuilder itself: at every entry of a table the
// estimate the rule computes from block sums and plan entries must be
// TableBuilder::EstimatedFileSize, so that a limit equal to any entry's
// estimate stops the table at the first entry reaching it. The keys are
// chosen so that their bytes are not in their order (user keys that are
// prefixes of the next, bytes equal to the trailer's), where the least
// PlanEntry::shared between two index keys is below their common prefix.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "accelkv/comparator.h"
#include "accelkv/env.h"
#include "gpu/key_sort_device.h"
#include "gpu/split_common.h"
#include "table/table_builder.h"
#include "util/internal_key.h"
#include "util/random.h"

namespace accelkv {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

class NullSink final : public WritableFile {
 public:
  Status Append(const Slice&) override { return Status::OK(); }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
};

// The first table split of plan[0, n) by the rule, blocks walked in order
// as the host reference does (HostKeySortDevice::SplitRange).
uint64_t FirstSplit(const std::vector<gpu::PlanEntry>& plan, const std::string& arena,
                    uint64_t block_size, const gpu::TableSplitRule& rule,
                    const std::vector<uint64_t>& gp_bytes) {
  const uint64_t n = plan.size();
  gpu::SplitSums closed = gpu::EmptySplitSums();
  uint64_t split = ~uint64_t{0};
  gpu::ForEachBlock(plan.data(), 0, n, block_size, [&](uint64_t first, uint64_t end) {
    const gpu::SplitBlock b{first, end, 0, n};
    split = gpu::FirstSplitInBlock(plan.data(), Bytes(arena), b, closed, rule, gp_bytes.data());
    closed =
        gpu::CombineSplitSums(closed, gpu::MakeSplitSums(plan.data(), Bytes(arena), first, end, 0));
    return split == ~uint64_t{0};
  });
  return split;
}

TEST(GpuSplitTest, EstimateIsTableBuildersAtEveryEntry) {
  Random rnd(41);
  const InternalKeyComparator icmp(BytewiseComparator());
  int dips = 0;  // index keys whose common prefix exceeds the least shared between them
  for (int round = 0; round < 80; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // User keys over bytes that a trailer's first bytes take (the type
    // 0x00 or 0x01, a small sequence), of 1-5 bytes after a common prefix,
    // many prefixes of others; one to three versions each.
    // A prefix every key has keeps the index block's prefix long, so that
    // an index key's common prefix with the one before decides it.
    std::string stem(rnd.Uniform(12), 'p');
    if (round % 2 == 1) stem += '\x01';  // the type byte of a trailer after a shorter key
    std::vector<std::string> users;
    for (int i = 0; i < 400; ++i) {
      std::string u(1 + rnd.Uniform(5), '\0');
      for (char& c : u) c = "\x00\x01\x02\x03"[rnd.Uniform(4)];
      users.push_back(stem + u);
    }
    std::sort(users.begin(), users.end());
    users.erase(std::unique(users.begin(), users.end()), users.end());
    std::vector<std::string> keys;
    std::vector<std::string> values;
    for (const std::string& u : users) {
      const int versions = 1 + static_cast<int>(rnd.Uniform(3));
      for (int v = versions; v > 0; --v) {
        std::string k;
        AppendInternalKey(
            &k, ParsedInternalKey(u, static_cast<SequenceNumber>(v + rnd.Uniform(3)),
                                  rnd.OneIn(5) ? ValueType::kDeletion : ValueType::kValue));
        keys.push_back(k);
        values.push_back(std::string(rnd.Uniform(40), 'v'));
      }
    }
    std::sort(keys.begin(), keys.end(),
              [&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; });
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    values.resize(keys.size());
    std::string arena;
    std::vector<uint64_t> offset(keys.size());
    std::vector<uint32_t> size(keys.size()), value_size(keys.size()), kept(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      offset[i] = arena.size();
      size[i] = static_cast<uint32_t>(keys[i].size());
      value_size[i] = static_cast<uint32_t>(values[i].size());
      kept[i] = static_cast<uint32_t>(i);
      arena += keys[i];
    }
    const gpu::KeyArrays arrays{Bytes(arena), offset.data(), size.data()};
    const gpu::KeyList none;
    std::vector<gpu::PlanEntry> plan(keys.size());
    for (uint64_t k = 0; k < keys.size(); ++k) {
      plan[k] =
          gpu::MakePlanEntry(arrays, value_size.data(), kept.data(), k, none.View(), none.View());
    }
    TableOptions topt;
    topt.comparator = &icmp;
    topt.user_comparator = BytewiseComparator();
    topt.block_size = 16 + rnd.Uniform(200);  // many blocks: many index keys
    topt.bloom_bits_per_key = rnd.OneIn(2) ? 10 : 0;
    // TableBuilder's estimate before each entry but the first.
    std::vector<uint64_t> estimate(keys.size(), 0);
    {
      NullSink sink;
      TableBuilder builder(topt, &sink);
      for (size_t i = 0; i < keys.size(); ++i) {
        if (i > 0) estimate[i] = builder.EstimatedFileSize();
        builder.Add(keys[i], values[i]);
      }
      builder.Abandon();
    }
    // The blocks of a table cut from 0: each one's index key's common
    // prefix with the one before (SplitSums::index_shared) against the
    // keys' bytes, and the dips the keys hold.
    gpu::ForEachBlock(
        plan.data(), 0, keys.size(), topt.block_size, [&](uint64_t first, uint64_t end) {
          const gpu::SplitSums sums = gpu::MakeSplitSums(plan.data(), Bytes(arena), first, end, 0);
          if (first == 0) {
            EXPECT_EQ(~uint32_t{0}, sums.index_shared);
            return true;
          }
          const std::string& a = keys[first - 1];
          const std::string& b = keys[end - 1];
          uint32_t common = 0;
          while (common < std::min(a.size(), b.size()) && a[common] == b[common]) ++common;
          EXPECT_EQ(common, sums.index_shared) << "block at " << first;
          uint32_t least = ~uint32_t{0};
          for (uint64_t j = first; j < end; ++j) least = std::min(least, plan[j].shared);
          dips += common > least;
          return true;
        });
    if (HasFailure()) return;
    gpu::TableSplitRule rule{};
    rule.max_grandparent_overlap = ~uint64_t{0};
    rule.comparator_size = static_cast<uint32_t>(std::string(BytewiseComparator()->Name()).size());
    rule.bloom_bits = topt.bloom_bits_per_key;
    const std::vector<uint64_t> gp_bytes{0};
    for (uint64_t e = 1; e < keys.size(); e += 1 + rnd.Uniform(7)) {
      for (const uint64_t limit : {estimate[e], estimate[e] + 1}) {
        rule.max_output_file_size = limit;
        // The CPU executor's split: the first entry of a new user key whose
        // estimate reaches the limit.
        uint64_t expected = ~uint64_t{0};
        for (uint64_t j = 1; j < keys.size() && expected == ~uint64_t{0}; ++j) {
          const bool same = (plan[j].flags & gpu::kPlanSameUserKey) != 0;
          if (!same && estimate[j] >= limit) expected = j;
        }
        ASSERT_EQ(expected, FirstSplit(plan, arena, topt.block_size, rule, gp_bytes))
            << "limit " << limit << " (entry " << e << ")";
      }
    }
  }
  EXPECT_LE(20, dips);  // the case the rule must read keys for
}

}  // namespace
}  // namespace accelkv
