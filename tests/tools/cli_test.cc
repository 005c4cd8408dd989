// The CLI's commands on a real database in a TempDir: put/get/delete, scan,
// stats, compact, verify (clean and damaged), sst-dump of the DB's tables,
// and load.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testutil/test_util.h"
#include "tools/cli_format.h"
#include "tools/cli_test_util.h"
#include "tools/load_workload.h"

namespace accelkv {
namespace {

using test::CliResult;
using test::RunTool;

class CliTest : public testing::Test {
 protected:
  CliTest() : db_(dir_.File("db")) {}

  CliResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), {"--db", db_});
    return RunTool(args);
  }

  void Put(const std::string& key, const std::string& value) {
    const CliResult r = Run({"put", key, value});
    ASSERT_EQ(0, r.code) << r.err;
    ASSERT_EQ("OK\n", r.out);
  }

  // Loads `num` keys (this flushes them into table files).
  void Load(int num) {
    const CliResult r = Run({"load", "--num", std::to_string(num), "--value-size", "100",
                             "--write-buffer-size", "64K", "--seed", "5"});
    ASSERT_EQ(0, r.code) << r.out << r.err;
  }

  test::TempDir dir_;
  std::string db_;
};

TEST_F(CliTest, PutGetDelete) {
  Put("hello", "world");
  Put("k2", "v2");
  CliResult r = Run({"get", "hello"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ("world\n", r.out);

  Put("hello", "again");  // overwrite
  r = Run({"get", "hello"});
  EXPECT_EQ("again\n", r.out);

  r = Run({"delete", "hello"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ("OK\n", r.out);
  r = Run({"get", "hello"});
  EXPECT_EQ(1, r.code);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(std::string::npos, r.err.find("NotFound")) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("usage:")) << "not a usage error";

  r = Run({"delete", "never-there"});
  EXPECT_EQ(0, r.code) << r.err;
  r = Run({"get", "k2"});
  EXPECT_EQ("v2\n", r.out);
}

TEST_F(CliTest, GetOnMissingDatabaseFailsWithoutCreatingIt) {
  const CliResult r = Run({"get", "k"});
  EXPECT_EQ(1, r.code);
  EXPECT_NE(std::string::npos, r.err.find("open")) << r.err;
  // put creates by default, unless told not to.
  EXPECT_EQ(1, Run({"--create-if-missing=false", "put", "k", "v"}).code);
  EXPECT_EQ(0, Run({"put", "k", "v"}).code);
}

TEST_F(CliTest, BinaryKeysEscapedAndHex) {
  // 00 ff 5c 0a as key, "a\b" as value, written through --hex.
  CliResult r = Run({"--hex", "put", "00ff5c0a", "615c62"});
  ASSERT_EQ(0, r.code) << r.err;
  r = Run({"get", "--hex", "00FF5C0A"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ("615c62\n", r.out);
  r = Run({"scan"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ("\\x00\\xff\\x5c\\x0a => a\\x5cb\n", r.out);
  r = Run({"scan", "--hex"});
  EXPECT_EQ("00ff5c0a => 615c62\n", r.out);
  // A key that starts with '-' needs "--".
  r = Run({"put", "--", "-neg", "x"});
  EXPECT_EQ(0, r.code) << r.err;
  r = Run({"get", "--", "-neg"});
  EXPECT_EQ("x\n", r.out);
}

TEST_F(CliTest, ScanRangesLimitsAndReverse) {
  for (char c = 'a'; c <= 'f'; ++c) Put(std::string(1, c), std::string("v") + c);
  CliResult r = Run({"scan"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ("a => va\nb => vb\nc => vc\nd => vd\ne => ve\nf => vf\n", r.out);
  r = Run({"scan", "--from", "b", "--to", "e"});
  EXPECT_EQ("b => vb\nc => vc\nd => vd\n", r.out);
  r = Run({"scan", "--from", "bb", "--limit", "2"});
  EXPECT_EQ("c => vc\nd => vd\n", r.out);
  r = Run({"scan", "--reverse"});
  EXPECT_EQ("f => vf\ne => ve\nd => vd\nc => vc\nb => vb\na => va\n", r.out);
  r = Run({"scan", "--reverse", "--from", "b", "--to", "e", "--limit", "2"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ("d => vd\nc => vc\n", r.out);
  r = Run({"scan", "--limit", "0"});
  EXPECT_EQ("", r.out);
  r = Run({"scan", "--from", "x"});
  EXPECT_EQ(0, r.code);
  EXPECT_EQ("", r.out);
}

TEST_F(CliTest, StatsAndCompact) {
  for (int i = 0; i < 50; ++i) Put("key" + std::to_string(i), std::string(100, 'x'));
  CliResult r = Run({"compact"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ("OK\n", r.out);
  r = Run({"compact", "--from", "key1", "--to", "key3"});
  EXPECT_EQ(0, r.code) << r.err;
  r = Run({"stats"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("** accelkv.stats **")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("** accelkv.sstables **")) << r.out;
  EXPECT_FALSE(test::TableFiles(db_).empty()) << "compact wrote no table";
  r = Run({"get", "key42"});
  EXPECT_EQ(std::string(100, 'x') + "\n", r.out);
}

TEST_F(CliTest, LoadWritesAndVerifiesEveryKey) {
  const CliResult r = Run({"load", "--num", "2000", "--value-size", "100", "--key-size", "12",
                           "--seed", "9", "--batch", "7", "--write-buffer-size", "64K"});
  ASSERT_EQ(0, r.code) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("fillrandom : 2000 ops in ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("readrandom : 2000 ops in ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find(" ops/s, ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find(" MB/s")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("verified   : 2000 of 2000 keys\n")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("AccelKV stats")) << r.out;
  EXPECT_FALSE(test::TableFiles(db_).empty()) << "load flushes";

  // The values are the workload's, readable through get.
  const cli::LoadWorkload w(2000, 12, 100, 9);
  for (uint64_t i : {uint64_t{0}, uint64_t{777}, uint64_t{1999}}) {
    std::string key, value;
    w.Key(i, &key);
    w.Value(i, &value);
    const CliResult g = Run({"get", key});
    EXPECT_EQ(0, g.code) << g.err;
    EXPECT_EQ(cli::EscapeBytes(value) + "\n", g.out) << key;  // printable but '\' escaped
  }
  const CliResult s = Run({"scan", "--limit", "3"});
  EXPECT_EQ(0u, s.out.find("000000000000 => ")) << s.out;
}

TEST_F(CliTest, VerifyCleanDatabase) {
  Load(2000);
  Put("extra", "in the WAL only");
  // Listed before verify: opening the DB may write the WAL's contents to a
  // new table after the files were checked.
  const std::vector<std::string> tables = test::TableFiles(db_);
  ASSERT_FALSE(tables.empty());
  const CliResult r = Run({"verify"});
  EXPECT_EQ(0, r.code) << r.out << r.err;
  for (const std::string& name : tables) {
    EXPECT_NE(std::string::npos, r.out.find(name + ": OK (")) << r.out;
  }
  EXPECT_NE(std::string::npos, r.out.find("db: OK (2001 keys)")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("verify: OK (")) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(CliTest, VerifyFindsAFlippedByte) {
  Load(2000);
  const std::vector<std::string> tables = test::TableFiles(db_);
  ASSERT_FALSE(tables.empty());
  const std::string path = db_ + "/" + tables.back();
  std::string bytes = test::ReadFileBytes(path);
  ASSERT_GT(bytes.size(), 1000u);
  bytes[bytes.size() / 4] ^= 0x40;  // inside a data block
  test::WriteFileBytes(path, bytes);

  const CliResult r = Run({"verify"});
  EXPECT_EQ(1, r.code) << r.out;
  EXPECT_NE(std::string::npos, r.out.find(tables.back() + ": Corruption")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("verify: FAILED: " + tables.back())) << r.out;
  EXPECT_NE(std::string::npos, r.err.find("Corruption")) << r.err;
}

TEST_F(CliTest, VerifyMissingDatabaseFails) {
  const CliResult r = Run({"verify"});
  EXPECT_EQ(1, r.code) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("verify: FAILED")) << r.out;
}

TEST_F(CliTest, SstDumpOfTheDatabasesTables) {
  Load(500);
  const std::vector<std::string> tables = test::TableFiles(db_);
  ASSERT_FALSE(tables.empty());
  const CliResult r = RunTool({"sst-dump", db_ + "/" + tables[0], "--entries", "--limit", "5"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("verify: OK")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find(" : PUT => ")) << r.out;
}

}  // namespace
}  // namespace accelkv
