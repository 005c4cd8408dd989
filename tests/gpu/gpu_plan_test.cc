// The plan inputs the device computes per kept entry (plan_common.h) and
// the XXH64 it hashes user keys with (xxh64_common.h), checked on the host
// against libxxhash (util/hash.h) and brute force. The executor tests check
// the whole plan byte for byte against the CPU executor on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/key_sort_device.h"
#include "gpu/plan_common.h"
#include "gpu/xxh64_common.h"
#include "util/hash.h"
#include "util/internal_key.h"
#include "util/random.h"

namespace accelkv {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(GpuXxh64Test, MatchesLibxxhashForEveryLengthAndAlignment) {
  Random rnd(17);
  std::string buf(300, '\0');
  for (char& c : buf) c = static_cast<char>(rnd.Uniform(256));
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; n + offset <= buf.size(); ++n) {
      ASSERT_EQ(Hash64(buf.data() + offset, n), gpu::Xxh64(Bytes(buf) + offset, n))
          << offset << " " << n;
    }
  }
}

std::string IKey(const std::string& user, SequenceNumber seq, ValueType type) {
  std::string k;
  AppendInternalKey(&k, ParsedInternalKey(user, seq, type));
  return k;
}

TEST(GpuPlanTest, PlanEntriesMatchBruteForce) {
  Random rnd(29);
  for (int round = 0; round < 20; ++round) {
    // Entries in internal-key order: user keys from a small alphabet
    // (prefixes of each other, shared prefixes, 0x00 bytes), versions.
    std::vector<std::string> users;
    for (int i = 0; i < 60; ++i) {
      std::string u;
      const int len = static_cast<int>(rnd.Uniform(12));
      for (int j = 0; j < len; ++j) u.push_back("ab\0z"[rnd.Uniform(4)]);
      users.push_back(u);
    }
    std::sort(users.begin(), users.end());
    users.erase(std::unique(users.begin(), users.end()), users.end());
    std::vector<std::string> keys;
    for (const std::string& u : users) {
      const int versions = 1 + static_cast<int>(rnd.Uniform(3));
      for (int v = versions; v > 0; --v) {
        keys.push_back(IKey(u, 100 + v, rnd.OneIn(4) ? ValueType::kDeletion : ValueType::kValue));
      }
    }
    // Arena in reverse order, so kept indices differ from positions.
    std::string arena;
    std::vector<uint64_t> offset(keys.size());
    std::vector<uint32_t> size(keys.size()), value_size(keys.size());
    std::vector<uint32_t> kept;
    for (size_t i = keys.size(); i-- > 0;) {
      offset[i] = arena.size();
      size[i] = static_cast<uint32_t>(keys[i].size());
      value_size[i] = rnd.Uniform(1000);
      arena += keys[i];
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!rnd.OneIn(5)) kept.push_back(static_cast<uint32_t>(i));
    }
    gpu::KeyList gp, bounds;
    for (size_t i = 0; i < users.size(); i += 1 + rnd.Uniform(9)) {
      const std::string largest = IKey(users[i], 100 + rnd.Uniform(4), ValueType::kValue);
      gp.Add(Bytes(largest), largest.size());
      if (rnd.OneIn(2)) bounds.Add(Bytes(users[i]), users[i].size());
    }
    const gpu::KeyArrays arrays{Bytes(arena), offset.data(), size.data()};
    const InternalKeyComparator icmp(BytewiseComparator());
    for (uint64_t k = 0; k < kept.size(); ++k) {
      const gpu::PlanEntry e =
          gpu::MakePlanEntry(arrays, value_size.data(), kept.data(), k, gp.View(), bounds.View());
      const std::string& key = keys[kept[k]];
      const Slice user = ExtractUserKey(key);
      ASSERT_EQ(key.size(), e.key_size);
      ASSERT_EQ(offset[kept[k]], e.key_offset);
      ASSERT_EQ(value_size[kept[k]], e.value_size);
      ASSERT_EQ(ExtractTrailer(key), e.trailer);
      size_t shared = 0;
      bool same = false;
      if (k > 0) {
        const std::string& prev = keys[kept[k - 1]];
        while (shared < std::min(prev.size(), key.size()) && prev[shared] == key[shared]) ++shared;
        same = ExtractUserKey(prev) == user;
      }
      ASSERT_EQ(shared, e.shared) << round << " " << k;
      ASSERT_EQ(same, (e.flags & gpu::kPlanSameUserKey) != 0) << round << " " << k;
      uint32_t below = 0;
      for (uint32_t g = 0; g < gp.size(); ++g) {
        const Slice largest(reinterpret_cast<const char*>(gp.bytes.data()) + gp.offsets[g],
                            gp.offsets[g + 1] - gp.offsets[g]);
        below += icmp.Compare(largest, key) < 0;
      }
      ASSERT_EQ(below, e.grandparents) << round << " " << k;
      uint32_t at_or_below = 0;
      for (uint32_t b = 0; b < bounds.size(); ++b) {
        const Slice bound(reinterpret_cast<const char*>(bounds.bytes.data()) + bounds.offsets[b],
                          bounds.offsets[b + 1] - bounds.offsets[b]);
        at_or_below += bound.compare(user) <= 0;
      }
      ASSERT_EQ(at_or_below, e.boundaries) << round << " " << k;
    }
  }
}

}  // namespace
}  // namespace accelkv
