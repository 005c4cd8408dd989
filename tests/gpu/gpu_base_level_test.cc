// The dedup's base-level test of tombstones on the device (IsBaseLevelKey,
// key_sort_common.h, over the lists SetDeeperLevels fills) against
// Compaction::IsBaseLevelForKey on random levels and keys: keys that are
// prefixes of others, keys with 0x00 bytes, the empty key, files of one key.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "accelkv/comparator.h"
#include "compaction/compaction.h"
#include "gpu/job_input.h"
#include "gpu/key_sort_common.h"
#include "util/internal_key.h"
#include "util/random.h"

namespace accelkv {
namespace {

std::string RandomKey(Random* rnd) {
  static const char kAlphabet[] = {'\0', 'a', 'b', 'c', '\xff'};
  std::string k(rnd->Uniform(5), '\0');
  for (char& c : k) c = kAlphabet[rnd->Uniform(5)];
  return k;
}

TEST(GpuBaseLevelTest, IsBaseLevelKeyMatchesTheCompaction) {
  const InternalKeyComparator icmp(BytewiseComparator());
  Random rnd(301);
  int base = 0;
  int not_base = 0;
  for (int round = 0; round < 300; ++round) {
    Compaction::Params p;
    const int levels = static_cast<int>(rnd.Uniform(4));  // 0: every key is at its base level
    for (int l = 0; l < levels; ++l) {
      // Ascending distinct bounds paired into disjoint files; a file of one
      // key now and then.
      std::set<std::string> set;
      const int n = static_cast<int>(rnd.Uniform(12));
      for (int i = 0; i < n; ++i) set.insert(RandomKey(&rnd));
      std::vector<std::string> bounds(set.begin(), set.end());
      LevelFiles files;
      for (size_t i = 0; i < bounds.size();) {
        auto f = std::make_shared<FileMetaData>();
        f->number = 100 * (l + 1) + i;
        const bool single = i + 1 == bounds.size() || rnd.OneIn(4);
        f->smallest = InternalKey(bounds[i], 7, ValueType::kValue);
        f->largest = InternalKey(bounds[single ? i : i + 1], 3, ValueType::kDeletion);
        files.push_back(f);
        i += single ? 1 : 2;
      }
      p.deeper_levels.push_back(files);
    }
    const Compaction c(p, &icmp);
    gpu::KeySortInput keys;
    gpu::SetDeeperLevels(c, &keys);
    const gpu::DeeperLevelsView view = keys.DeeperView();
    ASSERT_EQ(static_cast<uint32_t>(levels), view.levels);
    std::vector<std::string> probes;
    for (int i = 0; i < 20; ++i) probes.push_back(RandomKey(&rnd));
    for (const LevelFiles& files : p.deeper_levels) {
      for (const FileMetaPtr& f : files) {
        probes.push_back(f->smallest.user_key().ToString());
        probes.push_back(f->largest.user_key().ToString());
      }
    }
    for (const std::string& k : probes) {
      const bool want = c.IsBaseLevelForKey(k);
      ASSERT_EQ(want,
                gpu::IsBaseLevelKey(view, reinterpret_cast<const uint8_t*>(k.data()), k.size()))
          << "round " << round << ", key of " << k.size() << " bytes";
      (want ? base : not_base)++;
    }
  }
  // Both answers were asked for often.
  EXPECT_LT(1000, base);
  EXPECT_LT(1000, not_base);
}

}  // namespace
}  // namespace accelkv
