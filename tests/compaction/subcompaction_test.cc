// Parallel subcompactions: GenSubcompactionBoundaries as a pure function,
// OutputSplitter's cut at each boundary, and the CPU executor running a job
// as several ranges: the same entries as one range, the same bytes as the
// ranges run one after another and as one pass over the whole job (what the
// GPU executor does), and failures in one range.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "compaction/cpu_compaction_executor.h"
#include "compaction/executor_test_util.h"
#include "compaction/subcompaction_boundaries.h"
#include "table/table_builder.h"
#include "table/table_cache.h"
#include "testutil/test_util.h"
#include "util/filename.h"

namespace accelkv {
namespace {

using test::Key;
using test::KVs;
using test::MakeFile;
using test::Oracle;
using test::RandomEntries;

std::vector<std::string> Boundaries(const Compaction::Params& p, int k) {
  return GenSubcompactionBoundaries(p, BytewiseComparator(), k);
}

TEST(GenSubcompactionBoundariesTest, OneSubcompactionHasNoBoundary) {
  Compaction::Params p;
  p.inputs[0] = {MakeFile(1, Key(0), Key(500), 1000), MakeFile(2, Key(100), Key(900), 1000)};
  EXPECT_TRUE(Boundaries(p, 1).empty());
  EXPECT_TRUE(Boundaries(p, 0).empty());
  EXPECT_TRUE(Boundaries(p, -3).empty());
  EXPECT_FALSE(Boundaries(p, 2).empty());
  EXPECT_TRUE(Boundaries(Compaction::Params(), 8).empty());
}

// One level-1 file over the whole range, 1600 bytes, and 16 level-2 files
// of 1000 bytes each: the intervals alternate between a level-2 file's
// range and the gap to the next one.
Compaction::Params SixteenUnderOne() {
  Compaction::Params p;
  p.level = 1;
  p.output_level = 2;
  p.inputs[0] = {MakeFile(1, Key(0), Key(1599), 1600)};
  for (uint64_t i = 0; i < 16; i++) {
    p.inputs[1].push_back(MakeFile(10 + i, Key(i * 100), Key(i * 100 + 99), 1000));
  }
  return p;
}

TEST(GenSubcompactionBoundariesTest, BalancesFileBytes) {
  // Worked out by the rule in the header. From the metadata the level-1
  // file's 1600 bytes spread evenly over its 31 intervals (51 each, 19 more
  // in the first), the gaps' too: the sum reaches the first quarter (4400)
  // in the gap after the 4th level-2 file (4376 before it, 4427 after), and
  // the cut before the gap is nearer.
  Compaction::Params p = SixteenUnderOne();
  const std::vector<std::string> expected = {Key(399), Key(799), Key(1199)};
  EXPECT_EQ(expected, Boundaries(p, 4));
  // The order the files are listed in does not matter.
  std::reverse(p.inputs[1].begin(), p.inputs[1].end());
  std::swap(p.inputs[0], p.inputs[1]);
  EXPECT_EQ(expected, Boundaries(p, 4));
  // One boundary halves the bytes.
  EXPECT_EQ(std::vector<std::string>{Key(799)}, Boundaries(p, 2));
}

TEST(GenSubcompactionBoundariesTest, OffsetsSpreadAFileByItsIndex) {
  // With the files' offsets (here the level-1 file's bytes below Key(j) are
  // j, as an index of one key per byte would give) a gap holds 1 byte of
  // it and a level-2 file's interval 99: the first quarter is reached
  // exactly after the gap behind the 4th level-2 file (4 x 1099 + 3 + 1).
  const Compaction::Params p = SixteenUnderOne();
  int calls = 0;
  size_t keys = 0;
  const FileOffsetFn offsets = [&calls, &keys](const FileMetaData& f,
                                               const std::vector<Slice>& user_keys,
                                               uint64_t* offset) {
    ++calls;
    EXPECT_EQ(1u, f.number);  // level-2 files cover one interval: no lookup
    for (size_t i = 0; i < user_keys.size(); i++) {
      if (i > 0) {
        EXPECT_LT(user_keys[i - 1].compare(user_keys[i]), 0);
      }
      offset[i] = std::stoull(user_keys[i].ToString().substr(3));
    }
    keys += user_keys.size();
    return true;
  };
  const std::vector<std::string> expected = {Key(400), Key(800), Key(1200)};
  EXPECT_EQ(expected, GenSubcompactionBoundaries(p, BytewiseComparator(), 4, offsets));
  EXPECT_EQ(1, calls);   // one call for the level-1 file
  EXPECT_EQ(30u, keys);  // with its 30 inner candidates, ascending
  // Offsets past the file's end are clamped to it: all of the level-1 file
  // in its first interval (2600 bytes there, 1000 in each level-2 file's,
  // none in the gaps), so the quarters are reached in the 3rd level-2 file
  // (3600 before, 4600 after: after is nearer), the 8th (8600 before:
  // nearer) and the 12th (12600 before, 13600 after: after).
  const FileOffsetFn past_end = [](const FileMetaData&, const std::vector<Slice>& user_keys,
                                   uint64_t* offset) {
    std::fill(offset, offset + user_keys.size(), uint64_t{1} << 20);
    return true;
  };
  EXPECT_EQ((std::vector<std::string>{Key(299), Key(700), Key(1199)}),
            GenSubcompactionBoundaries(p, BytewiseComparator(), 4, past_end));
  // A file whose offsets cannot be read is spread evenly, as without them.
  const FileOffsetFn unreadable = [](const FileMetaData&, const std::vector<Slice>&, uint64_t*) {
    return false;
  };
  EXPECT_EQ(Boundaries(p, 4), GenSubcompactionBoundaries(p, BytewiseComparator(), 4, unreadable));
}

TEST(GenSubcompactionBoundariesTest, NeverMoreRangesThanIntervals) {
  Compaction::Params p;
  p.inputs[0] = {MakeFile(1, "a", "z", 1000)};
  EXPECT_TRUE(Boundaries(p, 8).empty());  // one interval
  // Files of one user key count toward the interval they start: [a, m]
  // holds 500 + 5000 bytes, [m, z] 500 + 1000.
  p.inputs[0].push_back(MakeFile(2, "m", "m", 1000));
  p.inputs[0].push_back(MakeFile(3, "a", "a", 5000));
  EXPECT_EQ(std::vector<std::string>{"m"}, Boundaries(p, 8));
  // Intervals of 500, 1000 and 500 bytes, so k = 3: the middle interval
  // reaches both thirds, and the cuts nearest them are its two ends.
  p.inputs[0] = {MakeFile(4, "a", "c", 1000), MakeFile(5, "b", "d", 1000)};
  EXPECT_EQ((std::vector<std::string>{"b", "c"}), Boundaries(p, 64));
  // Intervals of 1500 and 500 bytes: the first reaches the half, but no cut
  // can come before it, and none after the last interval.
  p.inputs[0] = {MakeFile(6, "a", "b", 1500), MakeFile(7, "b", "c", 500)};
  EXPECT_EQ(std::vector<std::string>{"b"}, Boundaries(p, 64));
}

TEST(GenSubcompactionBoundariesTest, RandomShapesGiveValidBoundaries) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 200; round++) {
    Compaction::Params p;
    std::set<std::string> ends;
    const int files = 1 + static_cast<int>(rnd.Uniform(12));
    for (int f = 0; f < files; f++) {
      uint64_t lo = rnd.Uniform(1000), hi = rnd.Uniform(1000);
      if (lo > hi) std::swap(lo, hi);
      p.inputs[f % 2].push_back(MakeFile(f + 1, Key(lo), Key(hi), rnd.Uniform(1 << 20)));
      ends.insert(Key(lo));
      ends.insert(Key(hi));
    }
    const int k = static_cast<int>(rnd.Uniform(20));
    // Any offsets (here a hash of the file and key, anywhere in or past the
    // file) give valid boundaries too.
    const FileOffsetFn offsets = [](const FileMetaData& f, const std::vector<Slice>& user_keys,
                                    uint64_t* offset) {
      for (size_t i = 0; i < user_keys.size(); i++) {
        offset[i] =
            (std::hash<std::string>()(user_keys[i].ToString()) ^ f.number) % (2 * f.file_size + 1);
      }
      return true;
    };
    for (const bool with_offsets : {false, true}) {
      SCOPED_TRACE(with_offsets ? "offsets" : "metadata");
      const auto gen = [&] {
        return GenSubcompactionBoundaries(p, BytewiseComparator(), k,
                                          with_offsets ? offsets : FileOffsetFn());
      };
      const std::vector<std::string> b = gen();
      EXPECT_LE(b.size() + 1, static_cast<size_t>(std::max(k, 1)));
      // Strictly inside the candidates: at most all but the first and last.
      EXPECT_LE(b.size() + 2, std::max<size_t>(ends.size(), 2));
      for (size_t i = 0; i < b.size(); i++) {
        EXPECT_EQ(1u, ends.count(b[i])) << b[i];
        EXPECT_LT(*ends.begin(), b[i]);
        EXPECT_LT(b[i], *ends.rbegin());
        if (i > 0) {
          EXPECT_LT(b[i - 1], b[i]);
        }
      }
      EXPECT_EQ(b, gen());  // deterministic
    }
  }
}

TEST(OutputSplitterBoundaryTest, CutsBeforeTheFirstKeyOfEachRange) {
  const InternalKeyComparator icmp(BytewiseComparator());
  Compaction::Params p;
  p.inputs[0] = {MakeFile(1, "a", "h", 1000)};
  p.subcompaction_boundaries = {"c", "e", "f"};
  const Compaction c(std::move(p), &icmp);
  OutputSplitter splitter(&c);
  auto stop = [&](const char* user_key, SequenceNumber seq) {
    return splitter.ShouldStopBefore(InternalKey(user_key, seq, ValueType::kValue).Encode(), 1);
  };
  EXPECT_FALSE(stop("a", 5));
  EXPECT_FALSE(stop("b", 4));
  EXPECT_TRUE(stop("c", 9));   // first key of range [c, e)
  EXPECT_FALSE(stop("c", 3));  // an older version of c stays with it
  EXPECT_FALSE(stop("d", 7));
  EXPECT_TRUE(stop("g", 2));  // past e and f at once: one cut
  EXPECT_FALSE(stop("h", 1));
}

// A job's outputs as one pass of OutputSplitter + TableBuilder over the
// kept entries, what an executor that does not cut the job into ranges
// (the GPU executor) writes.
std::vector<std::string> WholeJobTables(Env* env, const TableOptions& topt, const Compaction& c,
                                        const KVs& kept) {
  std::vector<std::string> tables;
  OutputSplitter splitter(&c);
  std::unique_ptr<WritableFile> file;
  std::unique_ptr<TableBuilder> builder;
  auto finish = [&] {
    EXPECT_TRUE(builder->Finish().ok());
    EXPECT_TRUE(file->Close().ok());
    std::string data;
    EXPECT_TRUE(ReadFileToString(env, "/db/whole.tmp", &data).ok());
    tables.push_back(std::move(data));
    builder.reset();
    file.reset();
  };
  for (const auto& [key, value] : kept) {
    const uint64_t current = builder != nullptr ? builder->EstimatedFileSize() : 0;
    if (splitter.ShouldStopBefore(key, current) && builder != nullptr) finish();
    if (builder == nullptr) {
      EXPECT_TRUE(env->NewWritableFile("/db/whole.tmp", &file).ok());
      builder = std::make_unique<TableBuilder>(topt, file.get());
    }
    builder->Add(key, value);
  }
  if (builder != nullptr) finish();
  env->RemoveFile("/db/whole.tmp");
  return tables;
}

using SubcompactionTest = test::ExecutorTest;

TEST_F(SubcompactionTest, RandomizedRangesMatchOneRange) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 18; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    test::RandomJob job = MakeRandomJob(&rnd, round);
    const KVs expected = Oracle(job.all, job.snapshots, job.deeper_ranges);
    CompactionJobResult one;
    ASSERT_TRUE(RunJob(*job.compaction, job.snapshots, &one).ok());
    ASSERT_EQ(expected, ReadOutputs(one));
    RemoveOutputs(one);

    for (int k : {2, 3, 5, 8}) {
      SCOPED_TRACE("k " + std::to_string(k));
      Compaction::Params p = job.compaction->params();
      if (round % 2 == 0) {
        p.subcompaction_boundaries = Boundaries(p, k);
      } else {
        // Any ascending user keys will do, present in the input or not.
        std::set<std::string> keys;
        for (int i = 0; i < k - 1; i++) {
          keys.insert(Key(rnd.Uniform(500)) + (rnd.OneIn(2) ? "5" : ""));
        }
        p.subcompaction_boundaries.assign(keys.begin(), keys.end());
      }
      const Compaction c(p, &icmp_);
      CompactionJobResult parallel, serial;
      ASSERT_TRUE(RunJob(c, job.snapshots, &parallel).ok());
      // Exactly the entries of the one-range run: keys, values, sequence
      // numbers, and the same drops.
      ASSERT_EQ(expected, ReadOutputs(parallel));
      EXPECT_EQ(one.input_entries, parallel.input_entries);
      EXPECT_EQ(one.output_entries, parallel.output_entries);
      EXPECT_EQ(one.dropped_entries, parallel.dropped_entries);
      EXPECT_EQ(one.bytes_read, parallel.bytes_read);
      // No output straddles a boundary.
      for (const FileMetaData& f : parallel.outputs) {
        for (const std::string& b : c.subcompaction_boundaries()) {
          EXPECT_FALSE(f.smallest.user_key().ToString() < b && b <= f.largest.user_key().ToString())
              << "output " << f.number << " straddles " << b;
        }
      }
      const std::vector<std::string> bytes = OutputBytes(parallel);
      EXPECT_EQ(Listed(parallel), NonInputTables());
      RemoveOutputs(parallel);

      CpuCompactionExecutor one_thread(1);
      ASSERT_TRUE(RunJob(c, job.snapshots, &serial, 1000, &one_thread).ok());
      EXPECT_TRUE(bytes == OutputBytes(serial)) << "parallel and serial runs differ";
      RemoveOutputs(serial);
      EXPECT_TRUE(bytes == WholeJobTables(env_, topt_, c, expected))
          << "ranges differ from one pass over the whole job";
    }
  }
}

// TableCacheOffsets over real tables, in the shape of an L0 -> L1 job (the
// compact benchmark's): six level-0 files, each every sixth key of
// 0..1599 (so their ends cluster at 0..5 and 1594..1599), over 16 level-1
// files of 100 keys each. By the metadata the narrow intervals at the ends
// get as much of each level-0 file as a whole level-1 file's interval, and
// the 16 ranges are uneven (two almost empty, two double); by the tables'
// indexes each range holds one level-1 file's keys in both levels.
TEST_F(SubcompactionTest, TableCacheOffsetsBalanceRealTables) {
  SequenceNumber seq = 1;
  const std::string value(100, 'v');
  auto entries = [&](uint64_t from, uint64_t to, uint64_t step) {
    std::vector<test::Entry> e;
    for (uint64_t i = from; i <= to; i += step) {
      e.emplace_back(Key(i), seq++, ValueType::kValue, value);
    }
    return e;
  };
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  for (uint64_t f = 0; f < 6; f++) p.inputs[0].push_back(Write(entries(f, 1599, 6)));
  for (uint64_t from = 0; from < 1600; from += 100) {
    p.inputs[1].push_back(Write(entries(from, from + 99, 1)));
  }
  TableCache cache(dbname_, env_, topt_, 100);
  const FileOffsetFn offsets = TableCacheOffsets(&cache);
  // Offsets are the data blocks', scaled to the file's size.
  const FileMetaData& first = *p.inputs[0][0];
  const std::string k0 = Key(0), k800 = Key(800);
  uint64_t at[2] = {~uint64_t{0}, ~uint64_t{0}};
  ASSERT_TRUE(offsets(first, {Slice(k0), Slice(k800)}, at));
  EXPECT_EQ(0u, at[0]);
  EXPECT_GT(at[1], first.file_size * 45 / 100);
  EXPECT_LT(at[1], first.file_size * 55 / 100);
  FileMetaData missing = first;
  missing.number = 999;  // no such table
  EXPECT_FALSE(offsets(missing, {Slice(k800)}, at));

  // Each range's entries over every input file, for boundaries b: two per key.
  const auto range_entries = [](const std::vector<std::string>& b) {
    std::vector<uint64_t> n(b.size() + 1, 0);
    for (uint64_t i = 0; i < 1600; i++) {
      n[std::upper_bound(b.begin(), b.end(), Key(i)) - b.begin()] += 2;
    }
    return n;
  };
  const std::vector<std::string> by_index =
      GenSubcompactionBoundaries(p, BytewiseComparator(), 16, offsets);
  const std::vector<uint64_t> even(16, 200);
  EXPECT_EQ(even, range_entries(by_index)) << testing::PrintToString(by_index);
  const std::vector<uint64_t> by_metadata = range_entries(Boundaries(p, 16));
  ASSERT_EQ(16u, by_metadata.size());
  EXPECT_GT(*std::max_element(by_metadata.begin(), by_metadata.end()), 300u);
  EXPECT_LT(*std::min_element(by_metadata.begin(), by_metadata.end()), 50u);
}

TEST_F(SubcompactionTest, CpuSecondsAndStagesSumOverRanges) {
  Random rnd(test::TestSeed());
  // A random job can have one input file with too few distinct keys to
  // split: draw until one splits (nearly always the first).
  test::RandomJob job = MakeRandomJob(&rnd, 0);
  Compaction::Params p = job.compaction->params();
  p.subcompaction_boundaries = Boundaries(p, 4);
  for (int tries = 0; tries < 100 && p.subcompaction_boundaries.empty(); ++tries) {
    job = MakeRandomJob(&rnd, 0);
    p = job.compaction->params();
    p.subcompaction_boundaries = Boundaries(p, 4);
  }
  ASSERT_FALSE(p.subcompaction_boundaries.empty());
  const Compaction c(p, &icmp_);
  CompactionJobResult result;
  ASSERT_TRUE(RunJob(c, job.snapshots, &result).ok());
  for (const char* stage : {"read", "merge", "drop", "encode", "write"}) {
    EXPECT_EQ(1u, result.stage_micros.count(stage)) << stage;
  }
  uint64_t written = 0;
  for (const FileMetaData& f : result.outputs) written += f.file_size;
  EXPECT_EQ(written, result.bytes_written);
  EXPECT_EQ(c.TotalInputBytes(), result.bytes_read);
}

TEST_F(SubcompactionTest, BoundariesOutOfOrderAreInvalidArgument) {
  Random rnd(test::TestSeed());
  SequenceNumber seq = 1;
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  p.inputs[0] = {Write(RandomEntries(&rnd, 100, 100, &seq))};
  p.subcompaction_boundaries = {Key(50), Key(20)};
  const Compaction c(p, &icmp_);
  CompactionJobResult result;
  EXPECT_TRUE(RunJob(c, {}, &result).IsInvalidArgument());
  EXPECT_TRUE(result.outputs.empty());
  p.subcompaction_boundaries = {Key(50), Key(50)};
  const Compaction dup(p, &icmp_);
  EXPECT_TRUE(RunJob(dup, {}, &result).IsInvalidArgument());
  EXPECT_TRUE(NonInputTables().empty());
}

// The fault job (one L0 file over 2000 keys, small outputs) cut into 4 ranges.
using SubcompactionFaultTest = test::ExecutorTest;
const std::vector<std::string> kFaultBoundaries = {Key(500), Key(1000), Key(1500)};

TEST_F(SubcompactionFaultTest, SyncFailureInOneRangeFailsTheJob) {
  auto c = MakeFaultJob(kFaultBoundaries);
  fault_env_.SetFailure(FaultKind::kSync, 5, true);
  ExpectIOErrorListsFiles(*c, 5);
  EXPECT_EQ(1u, fault_env_.InjectedCount(FaultKind::kSync));
}

TEST_F(SubcompactionFaultTest, OpenFailureListsEveryCreatedFile) {
  auto c = MakeFaultJob(kFaultBoundaries);
  fault_env_.SetFailure(FaultKind::kOpenWritable, 3, true);
  ExpectIOErrorListsFiles(*c, 3);
}

TEST_F(SubcompactionFaultTest, CorruptionInTheLastRangeIsReported) {
  auto c = MakeFaultJob(kFaultBoundaries);
  env_ = mem_env_.get();
  // Flip a byte near the end of the data: only the last range reads it.
  const std::string fname = TableFileName(dbname_, c->input(0, 0)->number);
  std::string data;
  ASSERT_TRUE(ReadFileToString(env_, fname, &data).ok());
  data[data.size() * 4 / 5] ^= 0x40;
  ASSERT_TRUE(WriteStringToFile(env_, data, fname, true).ok());
  CompactionJobResult result;
  CpuCompactionExecutor one_thread(1);  // the earlier ranges finish first
  Status s = RunJob(*c, {}, &result, 1000, &one_thread);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_GT(result.outputs.size(), 3u);
  EXPECT_EQ(Listed(result), NonInputTables());
  RemoveOutputs(result);
  CompactionJobResult parallel;
  EXPECT_TRUE(RunJob(*c, {}, &parallel).IsCorruption());
  EXPECT_EQ(Listed(parallel), NonInputTables());
}

}  // namespace
}  // namespace accelkv
