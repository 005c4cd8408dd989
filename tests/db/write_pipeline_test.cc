// WritePipeline: groups are published in sequence order, whatever order
// their links finish in; each group's writers come back exactly once.
#include "db/write_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

namespace accelkv {
namespace {

struct FakeWriter {
  int id = 0;
  FakeWriter* next_done = nullptr;
};

struct FakeVersions {
  std::atomic<SequenceNumber> last{0};
  SequenceNumber LastSequence() const { return last.load(); }
  void SetLastSequence(SequenceNumber s) {
    EXPECT_GE(s, last.load()) << "published sequence went back";
    last.store(s);
  }
};

using Pipeline = WritePipeline<FakeWriter, FakeVersions>;

std::vector<int> Ids(FakeWriter* list) {
  std::vector<int> ids;
  for (; list != nullptr; list = list->next_done) ids.push_back(list->id);
  return ids;
}

// A group of n writers ending at sequence last.
void MakeGroup(Pipeline::Group* g, std::vector<FakeWriter>* writers, SequenceNumber last) {
  g->last_sequence = last;
  g->first = &writers->front();
  for (size_t i = 0; i + 1 < writers->size(); i++) (*writers)[i].next_done = &(*writers)[i + 1];
  writers->back().next_done = nullptr;
  g->last = &writers->back();
}

TEST(WritePipelineTest, PublishesInSequenceOrder) {
  FakeVersions versions;
  versions.last = 10;
  Pipeline pipeline(&versions);
  EXPECT_EQ(10u, pipeline.LastAllocated());

  std::vector<FakeWriter> a(2), b(1), c(3);
  a[0].id = 1, a[1].id = 2, b[0].id = 3, c[0].id = 4, c[1].id = 5, c[2].id = 6;
  Pipeline::Group ga, gb, gc;
  MakeGroup(&ga, &a, 12);
  MakeGroup(&gb, &b, 13);
  MakeGroup(&gc, &c, 16);
  pipeline.Add(&ga);
  pipeline.Add(&gb);
  pipeline.Add(&gc);
  EXPECT_EQ(16u, pipeline.LastAllocated());

  // The newest and the middle group finish first: nothing is published.
  EXPECT_EQ(nullptr, pipeline.MarkLinked(&gc));
  EXPECT_EQ(nullptr, pipeline.MarkLinked(&gb));
  EXPECT_EQ(10u, versions.LastSequence());
  // The oldest finishes: all three are published, their writers in order.
  EXPECT_EQ((std::vector<int>{1, 2, 3, 4, 5, 6}), Ids(pipeline.MarkLinked(&ga)));
  EXPECT_EQ(16u, versions.LastSequence());
  EXPECT_EQ(16u, pipeline.LastAllocated());
}

TEST(WritePipelineTest, PublishesOnlyTheLinkedPrefix) {
  FakeVersions versions;
  Pipeline pipeline(&versions);
  std::vector<FakeWriter> a(1), b(1), c(1);
  a[0].id = 1, b[0].id = 2, c[0].id = 3;
  Pipeline::Group ga, gb, gc;
  MakeGroup(&ga, &a, 1);
  MakeGroup(&gb, &b, 2);
  MakeGroup(&gc, &c, 3);
  pipeline.Add(&ga);
  pipeline.Add(&gb);
  pipeline.Add(&gc);
  EXPECT_EQ((std::vector<int>{1}), Ids(pipeline.MarkLinked(&ga)));
  EXPECT_EQ(1u, versions.LastSequence());
  EXPECT_EQ(nullptr, pipeline.MarkLinked(&gc));
  EXPECT_EQ(1u, versions.LastSequence());
  EXPECT_EQ((std::vector<int>{2, 3}), Ids(pipeline.MarkLinked(&gb)));
  EXPECT_EQ(3u, versions.LastSequence());
}

// Groups added in order and marked linked by many threads in random order:
// every writer comes back exactly once, the published sequence never goes
// back and never passes a group that is not linked, and WaitUntilEmpty
// returns once all are published.
TEST(WritePipelineTest, ConcurrentMarksPublishEveryGroupOnce) {
  constexpr int kGroups = 2000;
  constexpr int kThreads = 4;
  FakeVersions versions;
  Pipeline pipeline(&versions);
  std::vector<std::vector<FakeWriter>> writers(kGroups);
  std::vector<Pipeline::Group> groups(kGroups);
  std::vector<std::atomic<bool>> linked(kGroups);
  for (int i = 0; i < kGroups; i++) {
    writers[i].resize(1 + i % 3);
    for (FakeWriter& w : writers[i]) w.id = i;
    MakeGroup(&groups[i], &writers[i], static_cast<SequenceNumber>(i + 1));
    pipeline.Add(&groups[i]);
    linked[i] = false;
  }
  std::vector<int> order(kGroups);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(301));

  std::vector<std::vector<int>> returned(kThreads);
  std::atomic<int> next{0};
  std::atomic<bool> ahead{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int k = next.fetch_add(1); k < kGroups; k = next.fetch_add(1)) {
        const int g = order[k];
        linked[g] = true;
        for (int id : Ids(pipeline.MarkLinked(&groups[g]))) returned[t].push_back(id);
        // Every group up to the published sequence was marked linked.
        const SequenceNumber published = versions.LastSequence();
        for (SequenceNumber s = 1; s <= published; s++) {
          if (!linked[s - 1]) ahead = true;
        }
      }
    });
  }
  pipeline.WaitUntilEmpty();
  for (auto& th : threads) th.join();
  EXPECT_FALSE(ahead.load()) << "a sequence was published before an older group was linked";
  EXPECT_EQ(static_cast<SequenceNumber>(kGroups), versions.LastSequence());
  std::vector<int> count(kGroups, 0);
  for (const auto& r : returned) {
    for (int id : r) count[id]++;
  }
  for (int i = 0; i < kGroups; i++) {
    ASSERT_EQ(static_cast<int>(writers[i].size()), count[i]) << "group " << i;
  }
}

}  // namespace
}  // namespace accelkv
