#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "table/merging_iterator.h"
#include "table/table_test_util.h"
#include "table/two_level_iterator.h"
#include "util/random.h"

namespace accelkv {
namespace {

using KVs = std::vector<std::pair<std::string, std::string>>;

// An iterator over a sorted vector (duplicates allowed), bytewise order.
class VectorIterator final : public Iterator {
 public:
  explicit VectorIterator(std::vector<std::pair<std::string, std::string>> kvs)
      : kvs_(std::move(kvs)), pos_(kvs_.size()) {}
  bool Valid() const override { return pos_ < kvs_.size(); }
  void SeekToFirst() override { pos_ = 0; }
  void SeekToLast() override { pos_ = kvs_.empty() ? 0 : kvs_.size() - 1; }
  void Seek(const Slice& t) override {
    pos_ = std::lower_bound(kvs_.begin(), kvs_.end(), t.ToString(),
                            [](const auto& kv, const std::string& x) { return kv.first < x; }) -
           kvs_.begin();
  }
  void SeekForPrev(const Slice& t) override {
    const size_t ub =
        std::upper_bound(kvs_.begin(), kvs_.end(), t.ToString(),
                         [](const std::string& x, const auto& kv) { return x < kv.first; }) -
        kvs_.begin();
    pos_ = ub == 0 ? kvs_.size() : ub - 1;
  }
  void Next() override { ++pos_; }
  void Prev() override { pos_ = pos_ == 0 ? kvs_.size() : pos_ - 1; }
  Slice key() const override { return kvs_[pos_].first; }
  Slice value() const override { return kvs_[pos_].second; }
  Status status() const override { return Status::OK(); }

 private:
  std::vector<std::pair<std::string, std::string>> kvs_;
  size_t pos_;
};

// Model entry: (key, child, position in child) is the merged total order.
using Entry = std::tuple<std::string, int, int>;

std::string RandomKey(Random* rnd) {
  std::string k(1 + rnd->Uniform(3), '\0');
  for (char& c : k) c = static_cast<char>('a' + rnd->Uniform(4));
  return k;
}

TEST(MergingIteratorTest, MatchesModelInBothDirections) {
  Random rnd(test::TestSeed());
  for (int trial = 0; trial < 50; ++trial) {
    const int num_children = static_cast<int>(rnd.Uniform(6));
    std::vector<Iterator*> children;
    std::vector<Entry> model;
    const bool allow_dups = rnd.OneIn(2);  // equal keys across and within children
    std::vector<std::string> used;
    for (int c = 0; c < num_children; ++c) {
      std::vector<std::string> keys;
      const int n = static_cast<int>(rnd.Uniform(20));
      for (int i = 0; i < n; ++i) {
        std::string k = RandomKey(&rnd);
        if (!allow_dups && std::find(used.begin(), used.end(), k) != used.end()) continue;
        used.push_back(k);
        keys.push_back(k);
      }
      std::sort(keys.begin(), keys.end());
      std::vector<std::pair<std::string, std::string>> kvs;
      for (size_t i = 0; i < keys.size(); ++i) {
        kvs.push_back({keys[i], std::to_string(c) + "/" + std::to_string(i)});
        model.emplace_back(keys[i], c, static_cast<int>(i));
      }
      children.push_back(new VectorIterator(std::move(kvs)));
    }
    std::sort(model.begin(), model.end());
    std::unique_ptr<Iterator> it(NewMergingIterator(BytewiseComparator(), children));

    auto check = [&](size_t pos) {
      ASSERT_EQ(pos < model.size(), it->Valid()) << "trial " << trial;
      if (pos < model.size()) {
        const auto& [k, c, i] = model[pos];
        ASSERT_EQ(k, it->key().ToString());
        ASSERT_EQ(std::to_string(c) + "/" + std::to_string(i), it->value().ToString());
      }
    };
    size_t pos = model.size();  // model.size() == invalid
    for (int op = 0; op < 300; ++op) {
      const std::string t = RandomKey(&rnd);
      switch (rnd.Uniform(6)) {
        case 0:
          it->SeekToFirst();
          pos = 0;
          break;
        case 1:
          it->SeekToLast();
          pos = model.empty() ? 0 : model.size() - 1;
          break;
        case 2:
          it->Seek(t);
          pos = std::lower_bound(model.begin(), model.end(), Entry(t, -1, -1)) - model.begin();
          break;
        case 3: {
          const size_t ub =
              std::upper_bound(model.begin(), model.end(), Entry(t, 1 << 30, 0)) - model.begin();
          it->SeekForPrev(t);
          pos = ub == 0 ? model.size() : ub - 1;
          break;
        }
        case 4:
          if (pos < model.size()) {
            it->Next();
            ++pos;
          }
          break;
        case 5:
          if (pos < model.size()) {
            it->Prev();
            pos = pos == 0 ? model.size() : pos - 1;
          }
          break;
      }
      check(pos);
    }
    ASSERT_TRUE(it->status().ok());
  }
}

TEST(MergingIteratorTest, ReportsChildErrors) {
  std::vector<Iterator*> children = {new VectorIterator(KVs{{"a", "1"}}),
                                     NewErrorIterator(Status::Corruption("bad child"))};
  std::unique_ptr<Iterator> it(NewMergingIterator(BytewiseComparator(), children));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
}

// Two-level iteration over blocks given as an index of "last key -> block id",
// including empty blocks, which must be skipped in both directions.
TEST(TwoLevelIteratorTest, SkipsEmptyBlocksBothWays) {
  const std::vector<std::vector<std::pair<std::string, std::string>>> blocks = {
      {{"a", "1"}, {"b", "2"}}, {}, {{"c", "3"}}, {}, {}, {{"d", "4"}, {"e", "5"}}, {}};
  // Index keys: >= every key of the block and < every key of the next.
  std::vector<std::pair<std::string, std::string>> index = {
      {"b", "0"}, {"bb", "1"}, {"c", "2"}, {"cc", "3"}, {"cd", "4"}, {"e", "5"}, {"f", "6"}};
  int opened = 0;
  BlockFunction fn = [&](const ReadOptions&, const Slice& v) -> Iterator* {
    ++opened;
    return new VectorIterator(blocks[std::stoi(v.ToString())]);
  };
  std::unique_ptr<Iterator> it(NewTwoLevelIterator(new VectorIterator(index), fn, ReadOptions()));
  std::string fwd, bwd;
  for (it->SeekToFirst(); it->Valid(); it->Next()) fwd += it->key().ToString();
  for (it->SeekToLast(); it->Valid(); it->Prev()) bwd += it->key().ToString();
  EXPECT_EQ("abcde", fwd);
  EXPECT_EQ("edcba", bwd);
  it->Seek("bz");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("c", it->key().ToString());
  it->SeekForPrev("cz");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("c", it->key().ToString());
  it->Next();
  EXPECT_EQ("d", it->key().ToString());
  it->SeekForPrev("a");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("a", it->key().ToString());
  it->SeekForPrev("0");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("zzz");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("e", it->key().ToString());
  it->Seek("zzz");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  EXPECT_GT(opened, 0);
}

TEST(TwoLevelIteratorTest, StopsAtABlockError) {
  std::vector<std::pair<std::string, std::string>> index = {{"a", "0"}, {"b", "1"}};
  BlockFunction fn = [](const ReadOptions&, const Slice& v) -> Iterator* {
    if (v == Slice("0")) return NewErrorIterator(Status::Corruption("bad block"));
    return new VectorIterator(KVs{{"b", "2"}});
  };
  std::unique_ptr<Iterator> it(NewTwoLevelIterator(new VectorIterator(index), fn, ReadOptions()));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());  // does not silently skip the corrupt block
  EXPECT_TRUE(it->status().IsCorruption());
}

}  // namespace
}  // namespace accelkv
