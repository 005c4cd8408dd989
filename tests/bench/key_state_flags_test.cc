// KeyState's read judgements and the command-line parser.
#ifdef ACCELKV_BENCH_TESTLIB

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flags.h"
#include "key_state.h"

namespace accelkv_bench {
namespace {

bool Read(const KeyState& state, uint64_t index, bool found, uint32_t version) {
  std::string why;
  return state.CheckRead(index, state.BeginRead(index), found, version, &why);
}

TEST(KeyState, FreshKeysMustBeAbsent) {
  KeyState state(10);
  EXPECT_TRUE(Read(state, 3, /*found=*/false, 0));
  EXPECT_FALSE(Read(state, 3, /*found=*/true, 1)) << "a value nobody wrote";
}

TEST(KeyState, ReadsMustSeeTheLatestAcknowledgedVersion) {
  KeyState state(10);
  for (uint32_t v = 1; v <= 3; v++) {
    KeyState::WriteGuard g(&state, 5, /*is_delete=*/false);
    EXPECT_EQ(g.version(), v);
    g.Commit();
  }
  EXPECT_TRUE(Read(state, 5, true, 3));
  EXPECT_FALSE(Read(state, 5, true, 2)) << "stale version";
  EXPECT_FALSE(Read(state, 5, true, 4)) << "version from the future";
  EXPECT_FALSE(Read(state, 5, false, 0)) << "lost write";
  EXPECT_EQ(state.LiveKeys(), 1u);
}

TEST(KeyState, DeletedKeysMustBeAbsent) {
  KeyState state(10);
  {
    KeyState::WriteGuard g(&state, 1, false);
    g.Commit();
  }
  {
    KeyState::WriteGuard g(&state, 1, true);
    g.Commit();
  }
  EXPECT_TRUE(Read(state, 1, false, 0));
  EXPECT_FALSE(Read(state, 1, true, 1)) << "delete lost";
  EXPECT_EQ(state.LiveKeys(), 0u);
}

TEST(KeyState, AWriteInFlightAllowsBothOutcomes) {
  KeyState state(10);
  {
    KeyState::WriteGuard g(&state, 2, false);
    g.Commit();
  }
  const KeyState::ReadTicket ticket = state.BeginRead(2);
  std::string why;
  KeyState::WriteGuard in_flight(&state, 2, /*is_delete=*/false);
  EXPECT_TRUE(state.CheckRead(2, ticket, true, 1, &why));
  EXPECT_TRUE(state.CheckRead(2, ticket, true, 2, &why));
  EXPECT_FALSE(state.CheckRead(2, ticket, false, 0, &why)) << "an update cannot make it absent";
}

TEST(KeyState, PreexistingKeysAreUnknownUntilWritten) {
  KeyState state(10);
  state.SetPreexisting(true);
  EXPECT_TRUE(Read(state, 4, true, 7));
  EXPECT_TRUE(Read(state, 4, false, 0));
  {
    KeyState::WriteGuard g(&state, 4, false);
    g.Commit();
  }
  EXPECT_TRUE(Read(state, 4, true, 1));
  EXPECT_FALSE(Read(state, 4, false, 0));
}

// The state of a key space larger than one 2 MiB huge page (8 bytes a key):
// every key, the last included, starts absent and keeps its own words.
TEST(KeyState, EveryKeyOfALargeSpaceIsItsOwn) {
  const uint64_t n = (uint64_t{5} << 20) / 8 + 3;
  KeyState state(n);
  EXPECT_EQ(state.LiveKeys(), 0u);
  for (uint64_t i : {uint64_t{0}, n / 2, n - 2, n - 1}) {
    KeyState::WriteGuard g(&state, i, /*is_delete=*/i == n - 2);
    g.Commit();
  }
  EXPECT_EQ(state.LiveKeys(), 3u);
  EXPECT_TRUE(state.IsLive(n - 1));
  EXPECT_FALSE(state.IsLive(n - 2));
  EXPECT_FALSE(state.IsLive(n - 3));
  EXPECT_TRUE(Read(state, n - 1, true, 1));
  EXPECT_FALSE(Read(state, n - 3, true, 1));
}

bool Parse(std::vector<const char*> args, BenchFlags* flags, std::string* error) {
  args.insert(args.begin(), "accelkv-bench");
  return ParseFlags(static_cast<int>(args.size()), args.data(), flags, error);
}

TEST(Flags, ParsesListsSizesAndBooleans) {
  BenchFlags f;
  std::string error;
  ASSERT_TRUE(Parse(
      {"--engine=rocksdb,leveldb", "--workload", "fillseq,ycsb-a", "--num=2M", "--threads=4",
       "--sync", "--value-size", "1K", "--cache-size=8M", "--engine-opt",
       "rocksdb:max_background_jobs=4", "--engine-opt=paranoid_checks=1", "--json=-", "--quiet"},
      &f, &error))
      << error;
  EXPECT_EQ(f.engines, (std::vector<std::string>{"rocksdb", "leveldb"}));
  EXPECT_EQ(f.workloads, (std::vector<std::string>{"fillseq", "ycsb-a"}));
  EXPECT_EQ(f.num, 2u << 20);
  EXPECT_EQ(f.ops, f.num) << "--ops defaults to --num";
  EXPECT_EQ(f.threads, 4);
  EXPECT_TRUE(f.sync);
  EXPECT_TRUE(f.profile.sync);
  EXPECT_EQ(f.value_size, 1024u);
  EXPECT_EQ(f.profile.block_cache_size, 8u << 20);
  EXPECT_EQ(f.ycsb_field_length, 102) << "value-size / field-count";
  EXPECT_EQ(f.json, "-");
  EXPECT_TRUE(f.quiet);
  EXPECT_EQ(f.EngineOptionsFor("rocksdb"),
            (std::vector<std::string>{"max_background_jobs=4", "paranoid_checks=1"}));
  EXPECT_EQ(f.EngineOptionsFor("leveldb"), (std::vector<std::string>{"paranoid_checks=1"}));
}

TEST(Flags, RejectsBadInput) {
  const std::vector<std::vector<const char*>> bad = {
      {"--workload=fillseq,nosuch"},
      {"--engine=nosuch"},
      {"--threads=0"},
      {"--num=0"},
      {"--value-size=4"},
      {"--key-size=4", "--num=1000000"},
      {"--bogus=1"},
      {"--sync=maybe"},
      {"--num"},
      {"positional"},
      {"--duration=-1"},
      {"--time-limit=-1"},
      {"--time-limit=inf"},
      {"--duration=1e300"},
      {"--time-limit=5", "--duration=5"},
      {"--time-limit=5", "--workload=ycsb-load,ycsb-a"},
      {"--engine-opt=novalue"},
  };
  for (const auto& args : bad) {
    BenchFlags f;
    std::string error;
    EXPECT_FALSE(Parse(args, &f, &error)) << args[0];
    EXPECT_FALSE(error.empty());
  }
}

TEST(Flags, SplitListDropsEmptyItems) {
  EXPECT_EQ(SplitList("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(SplitList("").empty());
}

}  // namespace
}  // namespace accelkv_bench

#endif  // ACCELKV_BENCH_TESTLIB
