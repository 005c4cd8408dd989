#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "table/block.h"
#include "table/block_builder.h"
#include "table/table_test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace accelkv {
namespace {

BlockContents Copy(const Slice& s) {
  BlockContents c;
  c.data.reset(new char[s.size() == 0 ? 1 : s.size()]);
  if (!s.empty()) std::memcpy(c.data.get(), s.data(), s.size());
  c.size = s.size();
  return c;
}

std::unique_ptr<Block> BuildBlock(const std::vector<std::pair<std::string, std::string>>& kvs) {
  BlockBuilder b;
  for (const auto& [k, v] : kvs) b.Add(k, v);
  const uint64_t estimate = b.CurrentSizeEstimate();
  const Slice contents = b.Finish();
  EXPECT_EQ(estimate, contents.size());
  std::unique_ptr<Block> block;
  EXPECT_TRUE(Block::Parse(Copy(contents), &block).ok());
  return block;
}

// Sorted, distinct keys covering the edge cases of the format.
std::vector<std::pair<std::string, std::string>> EdgeCaseEntries() {
  std::map<std::string, std::string> m;
  m[""] = "empty key";
  m["a"] = "";
  m["ab"] = "";
  m["abc"] = "prefix chain";
  m[std::string("a\0", 2)] = std::string("\0\0\0", 3);
  m[std::string("\0", 1)] = "zero byte key";
  m[std::string(1024, 'k')] = std::string(300, 'v');
  for (int len = 0; len <= 1024; len += 97) m["len" + std::string(len, 'x')] = std::to_string(len);
  return {m.begin(), m.end()};
}

void PutFooter(std::string* dst, uint32_t n, uint32_t prefix, uint32_t kw, uint32_t vw) {
  for (uint32_t v : {n, prefix, kw, vw}) PutFixed32(dst, v);
}

void PutFixed16(std::string* dst, uint16_t v) {
  dst->push_back(static_cast<char>(v));
  dst->push_back(static_cast<char>(v >> 8));
}

constexpr uint32_t kVar = BlockLayout::kVariable;

TEST(BlockTest, ExactLayoutVariableWidths) {
  BlockBuilder b;
  b.Add("ab", "X");
  b.Add("c", "");
  const Slice got = b.Finish();
  std::string want =
      "abc"  // no shared prefix: suffixes are the keys
      "X";
  for (uint16_t v : {2, 3}) PutFixed16(&want, v);  // key_ends
  for (uint16_t v : {1, 1}) PutFixed16(&want, v);  // value_ends
  PutFooter(&want, 2, 0, kVar, kVar);
  EXPECT_EQ(want, got.ToString());
}

TEST(BlockTest, ExactLayoutSharedPrefixFixedWidths) {
  BlockBuilder b;
  b.Add("key1", "aa");
  b.Add("key2", "bb");
  b.Add("key3", "cc");
  EXPECT_EQ(28u, b.CurrentSizeEstimate());
  const Slice got = b.Finish();
  std::string want =
      "key"
      "123"
      "aabbcc";  // prefix, suffixes, values; no arrays
  PutFooter(&want, 3, 3, 1, 2);
  EXPECT_EQ(want, got.ToString());
  std::unique_ptr<Block> block;
  ASSERT_TRUE(Block::Parse(Copy(got), &block).ok());
  std::string scratch;
  EXPECT_EQ("key2", block->key(1, &scratch).ToString());
  EXPECT_EQ("bb", block->value(1).ToString());
}

// ValueIndex maps a value slice the block returned back to its entry, only
// for fixed-width values and only for the block's own bytes.
TEST(BlockTest, ValueIndexFindsTheBlocksOwnFixedWidthValues) {
  std::unique_ptr<Block> fixed = BuildBlock({{"key1", "aa"}, {"key2", "bb"}, {"key3", "cc"}});
  ASSERT_NE(nullptr, fixed);
  for (uint32_t i = 0; i < fixed->num_entries(); ++i) {
    uint32_t got = 99;
    ASSERT_TRUE(fixed->ValueIndex(fixed->value(i), &got));
    EXPECT_EQ(i, got);
  }
  uint32_t got = 99;
  const std::string copy = fixed->value(1).ToString();
  EXPECT_FALSE(fixed->ValueIndex(Slice(copy), &got));                           // elsewhere
  EXPECT_FALSE(fixed->ValueIndex(Slice(fixed->value(1).data() + 1, 2), &got));  // misaligned
  EXPECT_FALSE(fixed->ValueIndex(Slice(fixed->value(1).data(), 1), &got));      // wrong size
  EXPECT_FALSE(fixed->ValueIndex(Slice(fixed->value(2).data() + 2, 2), &got));  // past the end
  EXPECT_EQ(99u, got);
  std::unique_ptr<Block> variable = BuildBlock({{"a", "x"}, {"b", "yy"}});
  ASSERT_NE(nullptr, variable);
  EXPECT_FALSE(variable->ValueIndex(variable->value(0), &got));
  EXPECT_EQ(99u, got);
}

TEST(BlockTest, ExactLayoutOneEntryIsAllPrefix) {
  BlockBuilder b;
  b.Add("hello", "v");
  std::string want =
      "hello"
      "v";
  PutFooter(&want, 1, 5, 0, 1);
  EXPECT_EQ(want, b.Finish().ToString());
}

TEST(BlockTest, MixedWidthsAndPrefixOnlyKeys) {
  // Keys fixed-width, values variable; one key is exactly the prefix.
  BlockBuilder b;
  b.Add("ab", "");
  b.Add("ac", "xyz");
  std::string want =
      "a"
      "bc"
      "xyz";
  for (uint16_t v : {0, 3}) PutFixed16(&want, v);  // value_ends only
  PutFooter(&want, 2, 1, 1, kVar);
  EXPECT_EQ(want, b.Finish().ToString());
  b.Reset();
  b.Add("a", "1");
  b.Add("ab", "2");  // "a" is the whole prefix of both
  want =
      "a"
      "b"
      "12";
  PutFixed16(&want, 0);  // key_ends: suffix "" then "b"
  PutFixed16(&want, 1);
  PutFooter(&want, 2, 1, kVar, 1);
  EXPECT_EQ(want, b.Finish().ToString());
}

TEST(BlockTest, WideOffsetsPastSixtyFourKiB) {
  BlockBuilder b;
  b.Add("k1", std::string(40000, 'a'));
  b.Add("k2", std::string(30000, 'b'));
  b.Add("k3", "c");
  const uint64_t estimate = b.CurrentSizeEstimate();
  const std::string got = b.Finish().ToString();
  ASSERT_EQ(estimate, got.size());
  // 1 prefix + 3 suffixes + 70001 values + 3 x 4-byte value_ends + footer.
  ASSERT_EQ(1u + 3 + 70001 + 12 + 16, got.size());
  EXPECT_EQ(70001u, DecodeFixed32(got.data() + 1 + 3 + 70001 + 8));
  std::unique_ptr<Block> block;
  ASSERT_TRUE(Block::Parse(Copy(got), &block).ok());
  EXPECT_EQ(4u, block->layout().offset_width);
  EXPECT_EQ(std::string(30000, 'b'), block->value(1).ToString());
  EXPECT_EQ("c", block->value(2).ToString());
}

TEST(BlockTest, SizeWithPredictsEveryAdd) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 200; ++round) {
    BlockBuilder b;
    std::string last;
    const int n = 1 + static_cast<int>(rnd.Uniform(40));
    for (int i = 0; i < n; ++i) {
      std::string k = last.substr(0, rnd.Uniform(static_cast<uint32_t>(last.size()) + 1));
      k += static_cast<char>('b' + rnd.Uniform(20));
      k.append(rnd.Uniform(3), static_cast<char>(rnd.Uniform(256)));
      const std::string v(rnd.OneIn(3) ? rnd.Uniform(3000) : 7, 'v');
      const uint64_t predicted = b.SizeWith(k, v);
      EXPECT_LE(predicted, b.SizeBoundWith(k, v));
      b.Add(k, v);
      ASSERT_EQ(predicted, b.CurrentSizeEstimate());
      last = k;
    }
    ASSERT_EQ(b.CurrentSizeEstimate(), b.Finish().size());
  }
}

// Every field of two layouts equal, or which differs.
testing::AssertionResult SameLayout(const BlockLayout& a, const BlockLayout& b) {
  const std::pair<const char*, std::pair<uint64_t, uint64_t>> fields[] = {
      {"n", {a.n, b.n}},
      {"prefix_size", {a.prefix_size, b.prefix_size}},
      {"key_width", {a.key_width, b.key_width}},
      {"value_width", {a.value_width, b.value_width}},
      {"offset_width", {a.offset_width, b.offset_width}},
      {"key_bytes", {a.key_bytes, b.key_bytes}},
      {"value_bytes", {a.value_bytes, b.value_bytes}},
      {"size", {a.size, b.size}}};
  for (const auto& [name, values] : fields) {
    if (values.first != values.second) {
      return testing::AssertionFailure()
             << name << ": " << values.first << " against " << values.second;
    }
  }
  return testing::AssertionSuccess();
}

// AddSized with the common prefix of adjacent keys (what the GPU planner
// knows) tracks the same layout as Add (which keeps the first key), keys in
// any order; SizeWithSized matches SizeWith; CurrentSizeBound bounds the size.
TEST(BlockTest, AddSizedTracksTheSameLayoutAsAdd) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 300; ++round) {
    BlockBuilder builder;
    BlockLayoutTracker by_key, by_size;
    std::string last;
    const int n = 1 + static_cast<int>(rnd.Uniform(40));
    for (int i = 0; i < n; ++i) {
      std::string k = last.substr(0, rnd.Uniform(static_cast<uint32_t>(last.size()) + 1));
      if (!rnd.OneIn(4)) k += static_cast<char>('a' + rnd.Uniform(20));
      k.append(rnd.Uniform(3), static_cast<char>(rnd.Uniform(256)));
      const std::string v(rnd.OneIn(3) ? rnd.Uniform(3000) : 7, 'v');
      const uint64_t shared =
          CommonPrefixLength(last.data(), k.data(), std::min(last.size(), k.size()));
      ASSERT_EQ(by_key.SizeWith(k, v), by_size.SizeWithSized(k.size(), v.size(), shared));
      by_key.Add(k, v);
      by_size.AddSized(k.size(), v.size(), shared);
      builder.Add(k, v);
      ASSERT_TRUE(SameLayout(by_key.Layout(), by_size.Layout()));
      ASSERT_LE(builder.CurrentSizeEstimate(), builder.CurrentSizeBound());
      last = k;
    }
  }
}

// AddSizedRun (the GPU planner's runs) leaves the same layout as the
// AddSized calls it sums.
TEST(BlockTest, AddSizedRunTracksTheSameLayoutAsAddSized) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 300; ++round) {
    BlockLayoutTracker one_by_one, in_runs;
    const uint64_t fixed_key = 1 + rnd.Uniform(30);
    const uint64_t fixed_value = rnd.Uniform(50);
    const int n = 1 + static_cast<int>(rnd.Uniform(60));
    uint64_t run = 0, key_bytes = 0, value_bytes = 0, min_shared = ~uint64_t{0};
    bool keys_same = true, values_same = true;
    for (int i = 0; i < n; ++i) {
      const uint64_t k = rnd.OneIn(8) ? rnd.Uniform(40) : fixed_key;
      const uint64_t v = rnd.OneIn(8) ? rnd.Uniform(3000) : fixed_value;
      const uint64_t shared = rnd.Uniform(static_cast<uint32_t>(k + 1));
      one_by_one.AddSized(k, v, shared);
      if (in_runs.empty()) {
        in_runs.AddSized(k, v, shared);
        continue;
      }
      ++run;
      key_bytes += k;
      value_bytes += v;
      min_shared = std::min(min_shared, shared);
      keys_same &= k == in_runs.first_key_size();
      values_same &= v == in_runs.first_value_size();
      if (rnd.OneIn(5) || i + 1 == n) {
        in_runs.AddSizedRun(run, key_bytes, value_bytes, min_shared, keys_same, values_same);
        run = key_bytes = value_bytes = 0;
        min_shared = ~uint64_t{0};
        keys_same = values_same = true;
        ASSERT_TRUE(SameLayout(one_by_one.Layout(), in_runs.Layout()));
        ASSERT_EQ(one_by_one.Size(), in_runs.Size());
      }
    }
  }
}

TEST(BlockTest, EmptyBlockIsSixteenBytes) {
  BlockBuilder b;
  const Slice got = b.Finish();
  ASSERT_EQ(16u, got.size());
  EXPECT_EQ(std::string(16, '\0'), got.ToString());
  std::unique_ptr<Block> block;
  ASSERT_TRUE(Block::Parse(Copy(got), &block).ok());
  EXPECT_EQ(0u, block->num_entries());
  std::unique_ptr<Iterator> it(block->NewIterator(BytewiseComparator()));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek("a");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("a");
  EXPECT_FALSE(it->Valid());
}

TEST(BlockTest, RoundTripEdgeCases) {
  const auto kvs = EdgeCaseEntries();
  auto block = BuildBlock(kvs);
  ASSERT_EQ(kvs.size(), block->num_entries());
  std::string scratch;
  for (uint32_t i = 0; i < kvs.size(); ++i) {
    EXPECT_EQ(kvs[i].first, block->key(i, &scratch).ToString());
    EXPECT_EQ(kvs[i].second, block->value(i).ToString());
  }
  std::unique_ptr<Iterator> it(block->NewIterator(BytewiseComparator()));
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    EXPECT_EQ(kvs[i].first, it->key().ToString());
    EXPECT_EQ(kvs[i].second, it->value().ToString());
  }
  EXPECT_EQ(kvs.size(), i);
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    --i;
    EXPECT_EQ(kvs[i].first, it->key().ToString());
  }
  EXPECT_EQ(0u, i);
  EXPECT_TRUE(it->status().ok());
}

TEST(BlockTest, SeeksMatchModel) {
  Random rnd(test::TestSeed());
  std::map<std::string, std::string> m;
  for (int i = 0; i < 300; ++i) {
    std::string k(rnd.Uniform(6), '\0');
    for (char& c : k) c = static_cast<char>('a' + rnd.Uniform(4));
    m[k] = std::to_string(i);
  }
  const std::vector<std::pair<std::string, std::string>> kvs(m.begin(), m.end());
  auto block = BuildBlock(kvs);
  std::unique_ptr<Iterator> it(block->NewIterator(BytewiseComparator()));
  for (int round = 0; round < 2000; ++round) {
    std::string target(rnd.Uniform(7), '\0');
    for (char& c : target) c = static_cast<char>('a' + rnd.Uniform(5));
    it->Seek(target);
    auto lb = m.lower_bound(target);
    ASSERT_EQ(lb != m.end(), it->Valid()) << target;
    if (lb != m.end()) {
      ASSERT_EQ(lb->first, it->key().ToString());
      // One step in each direction from the seek position.
      it->Prev();
      if (lb == m.begin()) {
        ASSERT_FALSE(it->Valid());
      } else {
        ASSERT_EQ(std::prev(lb)->first, it->key().ToString());
      }
    }
    it->SeekForPrev(target);
    auto ub = m.upper_bound(target);
    ASSERT_EQ(ub != m.begin(), it->Valid()) << target;
    if (ub != m.begin()) {
      ASSERT_EQ(std::prev(ub)->first, it->key().ToString());
      it->Next();
      if (ub == m.end()) {
        ASSERT_FALSE(it->Valid());
      } else {
        ASSERT_EQ(ub->first, it->key().ToString());
      }
    }
  }
}

// Parses bytes that may be corrupt; if they parse, touches every entry and
// seeks, which must stay in bounds (checked by ASan in sanitizer builds).
bool ParseAndWalk(const std::string& bytes) {
  std::unique_ptr<Block> block;
  Status s = Block::Parse(Copy(bytes), &block);
  if (!s.ok()) {
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    return false;
  }
  size_t total = block->prefix().size();
  for (uint32_t i = 0; i < block->num_entries(); ++i) {
    total += block->key_suffix(i).size() + block->value(i).size();
  }
  EXPECT_LE(total, bytes.size());
  std::unique_ptr<Iterator> it(block->NewIterator(BytewiseComparator()));
  it->Seek("len");
  it->SeekForPrev("abc");
  for (it->SeekToLast(); it->Valid(); it->Prev()) total += it->key().size();
  return true;
}

TEST(BlockTest, EveryTruncationIsCorruptionOrValid) {
  BlockBuilder b;
  for (const auto& [k, v] : EdgeCaseEntries()) b.Add(k, v);
  const std::string full = b.Finish().ToString();
  ASSERT_TRUE(ParseAndWalk(full));
  int valid = 0;
  for (size_t len = 0; len < full.size(); ++len) {
    valid += ParseAndWalk(full.substr(0, len));             // tail cut
    valid += ParseAndWalk(full.substr(full.size() - len));  // head cut
  }
  // Dropping the head shifts every offset: no strict truncation should parse.
  EXPECT_EQ(0, valid);
}

TEST(BlockTest, RandomByteFlipsNeverCrash) {
  Random rnd(test::TestSeed());
  BlockBuilder b;
  for (const auto& [k, v] : EdgeCaseEntries()) b.Add(k, v);
  const std::string full = b.Finish().ToString();
  int corrupt = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = full;
    const int flips = 1 + static_cast<int>(rnd.Uniform(4));
    for (int f = 0; f < flips; ++f) {
      // Favour the end-offset arrays and footer, where flips change the structure.
      const size_t tail = 4 * EdgeCaseEntries().size() + BlockLayout::kFooterSize;
      const size_t pos =
          rnd.OneIn(2) ? bytes.size() - 1 - rnd.Uniform(tail) : rnd.Uniform(bytes.size());
      bytes[pos] = static_cast<char>(bytes[pos] ^ (1 + rnd.Uniform(255)));
    }
    corrupt += !ParseAndWalk(bytes);
  }
  EXPECT_GT(corrupt, 0);
}

TEST(BlockTest, ValidatorRejectsEachStructuralError) {
  BlockBuilder b;
  b.Add("a", "1");
  b.Add("bb", "22");
  // "abb" "122" key_ends[1,3] value_ends[1,3] footer(2, 0, var, var): 30 bytes
  const std::string good = b.Finish().ToString();
  ASSERT_EQ(30u, good.size());
  BlockLayout layout;
  ASSERT_TRUE(Block::Validate(good, &layout).ok());
  EXPECT_EQ(3u, layout.key_bytes);
  EXPECT_EQ(3u, layout.value_bytes);
  auto with32 = [&](size_t pos, uint32_t v) {
    std::string s = good;
    EncodeFixed32(s.data() + pos, v);
    return s;
  };
  auto with16 = [&](size_t pos, uint16_t v) {
    std::string s = good;
    s[pos] = static_cast<char>(v);
    s[pos + 1] = static_cast<char>(v >> 8);
    return s;
  };
  const size_t ke = 6, ve = 10, f = 14;
  EXPECT_TRUE(Block::Validate(std::string(15, '\0')).IsCorruption());   // size < 16
  EXPECT_TRUE(Block::Validate(with32(f, 3)).IsCorruption());            // n too large
  EXPECT_TRUE(Block::Validate(with32(f, 0xffffffffu)).IsCorruption());  // n overflow
  EXPECT_TRUE(Block::Validate(with32(f, 0)).IsCorruption());            // n = 0, widths set
  EXPECT_TRUE(Block::Validate(with32(f + 4, 1)).IsCorruption());        // prefix too long
  EXPECT_TRUE(Block::Validate(with32(f + 4, 0xffffffffu)).IsCorruption());
  EXPECT_TRUE(Block::Validate(with32(f + 8, 1)).IsCorruption());  // fixed keys: sizes off
  EXPECT_TRUE(Block::Validate(with32(f + 12, 0xfffffffeu)).IsCorruption());
  EXPECT_TRUE(Block::Validate(with16(ke, 4)).IsCorruption());      // keys not monotonic
  EXPECT_TRUE(Block::Validate(with16(ke + 2, 2)).IsCorruption());  // key bytes short
  EXPECT_TRUE(Block::Validate(with16(ve, 4)).IsCorruption());      // values not monotonic
  EXPECT_TRUE(Block::Validate(with16(ve + 2, 4)).IsCorruption());  // past the arrays
  EXPECT_TRUE(Block::Validate(with16(ve + 2, 0xffff)).IsCorruption());
  // Which check each case fails (CheckBlockLayout, shared with the GPU),
  // and the message Validate gives for it.
  auto check = [](const std::string& s) {
    BlockLayout l;
    return CheckBlockLayout(reinterpret_cast<const uint8_t*>(s.data()), s.size(), &l);
  };
  EXPECT_EQ(BlockCheck::kOk, check(good));
  EXPECT_EQ(BlockCheck::kTooSmall, check(std::string(15, '\0')));
  EXPECT_EQ(BlockCheck::kCountTooLarge, check(with32(f, 0xffffffffu)));
  EXPECT_EQ(BlockCheck::kBadEmpty, check(with32(f, 0)));
  EXPECT_EQ(BlockCheck::kSectionsDoNotFill, check(with32(f + 4, 1)));
  EXPECT_EQ(BlockCheck::kKeyEndsNotMonotonic, check(with16(ke, 4)));
  EXPECT_EQ(BlockCheck::kValueEndsNotMonotonic, check(with16(ve, 4)));
  EXPECT_EQ("Corruption: block end offsets not monotonic: keys",
            Block::Validate(with16(ke, 4)).ToString());
  EXPECT_EQ("Corruption: block too small", Block::Validate(std::string(15, '\0')).ToString());
  EXPECT_EQ("Corruption: block sections do not fill the block",
            Block::Validate(with32(f + 4, 1)).ToString());
}

}  // namespace
}  // namespace accelkv
