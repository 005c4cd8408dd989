// --partitions: N instances of one engine behind a hash router. Keys spread
// over every instance, a cursor merges them in key order, a batch spanning
// instances is refused, and every workload still verifies through it.
#ifdef ACCELKV_BENCH_TESTLIB

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine_factories.h"
#include "flags.h"
#include "report.h"
#include "runner.h"
#include "testutil/test_util.h"

namespace accelkv_bench {
namespace {

constexpr int kParts = 4;

std::string Key(int i) { return "key" + std::to_string(100000 + i); }

TEST(PartitionedEngine, SpreadsKeysAndMergesThemInOrder) {
  accelkv::test::TempDir dir;
  for (const std::string& name : AvailableEngines()) {
    SCOPED_TRACE(name);
    const std::string path = dir.path() + "/" + name;
    std::unique_ptr<Engine> engine = NewPartitionedEngine(name, kParts);
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(engine->Name(), name);
    ASSERT_TRUE(engine->Open(path, EngineProfile()).ok());
    std::map<std::string, std::string> model;
    for (int i = 0; i < 2000; i++) {
      const std::string v = "v" + std::to_string(i * 7);
      ASSERT_TRUE(engine->Put(Key(i), v).ok());
      model[Key(i)] = v;
    }
    for (int i = 0; i < 2000; i += 5) {
      ASSERT_TRUE(engine->Delete(Key(i)).ok());
      model.erase(Key(i));
    }
    // Every instance got a share of the keys: each directory holds a store.
    for (int p = 0; p < kParts; p++) {
      EXPECT_TRUE(std::filesystem::is_directory(path + "/p" + std::to_string(p))) << p;
    }
    std::string value;
    ASSERT_TRUE(engine->Get(Key(1), &value).ok());
    EXPECT_EQ(value, model[Key(1)]);
    EXPECT_TRUE(engine->Get(Key(0), &value).IsNotFound());

    // A full scan returns the model in order; a Seek lands on the first key >= target.
    std::unique_ptr<Cursor> c = engine->NewCursor();
    auto it = model.begin();
    for (c->SeekToFirst(); c->Valid(); c->Next(), ++it) {
      ASSERT_NE(it, model.end());
      ASSERT_EQ(c->key(), it->first);
      ASSERT_EQ(c->value(), it->second);
    }
    EXPECT_EQ(it, model.end());
    EXPECT_TRUE(c->status().ok());
    c->Seek(Key(500));  // deleted: the next key is 501
    ASSERT_TRUE(c->Valid());
    EXPECT_EQ(c->key(), Key(501));
    c.reset();

    // Keys of different partitions cannot go into one atomic batch; keys of
    // one partition can.
    std::vector<std::pair<std::string, std::string>> batch;
    for (int i = 0; i < 64; i++) batch.emplace_back(Key(5000 + i), "b");
    EXPECT_FALSE(engine->Write(batch).ok()) << "64 random keys over 4 partitions";
    EXPECT_TRUE(engine->Get(Key(5000), &value).IsNotFound()) << "nothing of it applied";
    ASSERT_TRUE(engine->Write({{Key(5000), "b"}}).ok());
    ASSERT_TRUE(engine->Get(Key(5000), &value).ok());
    EXPECT_EQ(value, "b");

    EXPECT_TRUE(engine->WaitForCompactions().ok());
    EXPECT_NE(engine->EffectiveOptions().find("partitions: 4"), std::string::npos);
    ASSERT_TRUE(engine->Close().ok());
    ASSERT_TRUE(engine->DestroyStore(path).ok());
  }
  EXPECT_EQ(NewPartitionedEngine("no-such-engine", 2), nullptr);
  EXPECT_EQ(NewPartitionedEngine(AvailableEngines()[0], 0), nullptr);
}

TEST(PartitionedEngine, WorkloadsVerifyThroughTheRunner) {
  accelkv::test::TempDir dir;
  const std::vector<std::string> args = {
      "accelkv-bench",
      "--db=" + dir.path(),
      "--quiet",
      "--num=3000",
      "--threads=3",
      "--partitions=3",
      "--workload=fillrandom,readrandom,readseq,seekrandom,deleterandom,readrandom,ycsb-load,"
      "ycsb-e"};
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  BenchFlags flags;
  std::string error;
  ASSERT_TRUE(ParseFlags(static_cast<int>(argv.size()), argv.data(), &flags, &error)) << error;
  ASSERT_EQ(flags.partitions, 3);
  Runner runner(flags, nullptr, nullptr);
  for (const std::string& engine : AvailableEngines()) {
    std::vector<WorkloadResult> results;
    ASSERT_TRUE(runner.RunEngine(engine, &results, &error)) << engine << ": " << error;
    for (const WorkloadResult& r : results) {
      EXPECT_TRUE(r.verified) << r.engine << " " << r.workload;
      EXPECT_EQ(r.partitions, 3);
      EXPECT_NE(ResultToJson(r, false).find("\"partitions\":3"), std::string::npos);
    }
    EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/" + engine + "/p2")) << engine;
  }
}

}  // namespace
}  // namespace accelkv_bench

#endif  // ACCELKV_BENCH_TESTLIB
