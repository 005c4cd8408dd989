// Unit tests of the CLI's pieces that need no database: argument parsing,
// numbers, byte formatting, the load workload, and usage errors (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tools/cli_args.h"
#include "tools/cli_format.h"
#include "tools/cli_test_util.h"
#include "tools/load_workload.h"

namespace accelkv {
namespace {

using cli::Args;
using test::RunTool;

bool Parse(std::vector<std::string> words, Args* args, std::string* error) {
  words.insert(words.begin(), "accelkv");
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  return cli::ParseArgs(static_cast<int>(argv.size()), argv.data(), args, error);
}

TEST(CliArgsTest, OptionsBeforeAndAfterTheCommand) {
  Args args;
  std::string error;
  ASSERT_TRUE(Parse({"--db", "/x", "scan", "--limit=5", "--reverse", "--from", "a"}, &args, &error))
      << error;
  EXPECT_EQ("scan", args.command());
  EXPECT_TRUE(args.positional().empty());
  EXPECT_EQ("/x", args.String("db", ""));
  EXPECT_EQ(5u, args.Number("limit", 0));
  EXPECT_TRUE(args.Flag("reverse", false));
  EXPECT_EQ("a", args.String("from", ""));
  EXPECT_FALSE(args.Has("to"));
  EXPECT_EQ("dflt", args.String("to", "dflt"));
  EXPECT_EQ((std::vector<std::string>{"db", "from", "limit", "reverse"}), args.OptionNames());
}

TEST(CliArgsTest, FlagValuesAndDoubleDash) {
  Args args;
  std::string error;
  ASSERT_TRUE(
      Parse({"--create-if-missing=false", "--sync=1", "put", "--", "-k", "--v"}, &args, &error))
      << error;
  EXPECT_FALSE(args.Flag("create-if-missing", true));
  EXPECT_TRUE(args.Flag("sync", false));
  EXPECT_EQ("put", args.command());
  EXPECT_EQ((std::vector<std::string>{"-k", "--v"}), args.positional());
  // Empty words and a lone "-" are positional.
  ASSERT_TRUE(Parse({"put", "", "-"}, &args, &error));
  EXPECT_EQ((std::vector<std::string>{"", "-"}), args.positional());
  ASSERT_TRUE(Parse({"-h"}, &args, &error));
  EXPECT_TRUE(args.Flag("help", false));
}

TEST(CliArgsTest, RejectsBadOptions) {
  Args args;
  std::string error;
  EXPECT_FALSE(Parse({"--bogus", "get"}, &args, &error));
  EXPECT_NE(std::string::npos, error.find("--bogus")) << error;
  EXPECT_FALSE(Parse({"-x", "get"}, &args, &error));
  EXPECT_FALSE(Parse({"get", "--db"}, &args, &error));
  EXPECT_NE(std::string::npos, error.find("needs a value")) << error;
  EXPECT_FALSE(Parse({"scan", "--limit", "ten"}, &args, &error));
  EXPECT_FALSE(Parse({"scan", "--limit=-1"}, &args, &error));
  EXPECT_FALSE(Parse({"scan", "--limit=4K"}, &args, &error));  // counts take no suffix
  EXPECT_FALSE(Parse({"--sync=maybe", "get"}, &args, &error));
  EXPECT_FALSE(Parse({"--block-size=", "get"}, &args, &error));
}

TEST(CliArgsTest, ParseNumber) {
  uint64_t v = 0;
  EXPECT_TRUE(cli::ParseNumber("0", false, &v));
  EXPECT_EQ(0u, v);
  EXPECT_TRUE(cli::ParseNumber("18446744073709551615", false, &v));
  EXPECT_EQ(UINT64_MAX, v);
  EXPECT_FALSE(cli::ParseNumber("18446744073709551616", false, &v));
  EXPECT_TRUE(cli::ParseNumber("4k", true, &v));
  EXPECT_EQ(4096u, v);
  EXPECT_TRUE(cli::ParseNumber("64M", true, &v));
  EXPECT_EQ(64u << 20, v);
  EXPECT_TRUE(cli::ParseNumber("2G", true, &v));
  EXPECT_EQ(2ull << 30, v);
  EXPECT_FALSE(cli::ParseNumber("17179869184G", true, &v));  // overflows after the multiply
  EXPECT_FALSE(cli::ParseNumber("4k", false, &v));
  EXPECT_FALSE(cli::ParseNumber("K", true, &v));
  EXPECT_FALSE(cli::ParseNumber("", false, &v));
  EXPECT_FALSE(cli::ParseNumber("1.5", false, &v));
  EXPECT_FALSE(cli::ParseNumber(" 1", false, &v));
  EXPECT_FALSE(cli::ParseNumber("4T", true, &v));
}

TEST(CliFormatTest, EscapeAndHex) {
  const std::string bytes("a b\\\x00\xff~\x7f\n", 9);
  EXPECT_EQ("a b\\x5c\\x00\\xff~\\x7f\\x0a", cli::EscapeBytes(bytes));
  EXPECT_EQ("6120625c00ff7e7f0a", cli::HexBytes(bytes));
  std::string decoded;
  ASSERT_TRUE(cli::DecodeHex("6120625C00FF7e7f0a", &decoded));
  EXPECT_EQ(bytes, decoded);
  EXPECT_TRUE(cli::DecodeHex("", &decoded));
  EXPECT_EQ("", decoded);
  EXPECT_FALSE(cli::DecodeHex("abc", &decoded));
  EXPECT_FALSE(cli::DecodeHex("zz", &decoded));
  EXPECT_EQ("abc", cli::TruncatedForm("abc", 3, false));
  EXPECT_EQ("ab...(3 bytes)", cli::TruncatedForm("abc", 2, false));
  EXPECT_EQ("6162...(3 bytes)", cli::TruncatedForm("abc", 2, true));
  EXPECT_EQ("1.250", cli::FormatDouble(1.25, 3));
}

TEST(LoadWorkloadTest, KeysValuesAndOrders) {
  const cli::LoadWorkload w(1000, 8, 37, 7);
  std::string key, value, again;
  w.Key(42, &key);
  EXPECT_EQ("00000042", key);
  w.Key(999, &key);
  EXPECT_EQ("00000999", key);
  w.Value(42, &value);
  ASSERT_EQ(37u, value.size());
  for (char c : value) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c);
  w.Value(42, &again);
  EXPECT_EQ(value, again);
  w.Value(43, &again);
  EXPECT_NE(value, again);
  const cli::LoadWorkload other_seed(1000, 8, 37, 8);
  other_seed.Value(42, &again);
  EXPECT_NE(value, again);

  const std::vector<uint32_t> writes = w.Order(0);
  const std::vector<uint32_t> reads = w.Order(1);
  EXPECT_EQ(writes, w.Order(0));
  EXPECT_NE(writes, reads);
  for (const auto& order : {writes, reads}) {
    std::vector<uint32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(1000u, sorted.size());
    for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(i, sorted[i]);
  }
  EXPECT_FALSE(std::is_sorted(writes.begin(), writes.end()));

  EXPECT_TRUE(cli::LoadWorkload::KeySizeFits(1000, 3));
  EXPECT_FALSE(cli::LoadWorkload::KeySizeFits(1001, 3));
  EXPECT_TRUE(cli::LoadWorkload::KeySizeFits(1, 1));
}

TEST(CliUsageTest, HelpGoesToStdoutWithExitZero) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"help"}, {"--help"}, {"-h"}, {"--db", "/nonexistent", "get", "k", "--help"}}) {
    const test::CliResult r = RunTool(args);
    EXPECT_EQ(0, r.code) << args[0];
    EXPECT_NE(std::string::npos, r.out.find("usage: accelkv")) << r.out;
    EXPECT_NE(std::string::npos, r.out.find("sst-dump FILE")) << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
  }
}

TEST(CliUsageTest, UsageErrorsExitTwoWithUsageOnStderr) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"--db", "/tmp/x"},
      {"--db", "/tmp/x", "frobnicate"},
      {"--db", "/tmp/x", "--bogus", "get", "k"},
      {"--db", "/tmp/x", "get"},
      {"--db", "/tmp/x", "get", "k", "extra"},
      {"--db", "/tmp/x", "put", "k"},
      {"--db", "/tmp/x", "delete"},
      {"--db", "/tmp/x", "stats", "extra"},
      {"--db", "/tmp/x", "get", "k", "--from", "a"},  // option of another command
      {"--db", "/tmp/x", "scan", "--limit", "x"},
      {"--db", "/tmp/x", "scan", "--limit"},
      {"--db", "/tmp/x", "--hex", "get", "xyz"},  // not hex
      {"--db", "/tmp/x", "--hex", "scan", "--from", "1"},
      {"--db", "/tmp/x", "--block-size", "0", "get", "k"},
      {"--db", "/tmp/x", "--bloom-bits", "65", "get", "k"},
      {"--db", "/tmp/x", "--write-buffer-size", "2G2", "get", "k"},
      {"get", "k"},  // no --db
      {"verify"},
      {"sst-dump"},
      {"sst-dump", "a", "b"},
      {"--db", "/tmp/x", "load"},  // no --num
      {"--db", "/tmp/x", "load", "--num", "0"},
      {"--db", "/tmp/x", "load", "--num", "5000000000"},
      {"--db", "/tmp/x", "load", "--num", "1001", "--key-size", "3"},
      {"--db", "/tmp/x", "load", "--num", "10", "--batch", "0"},
      {"--db", "/tmp/x", "load", "--num", "10", "--value-size", "1G"},
  };
  for (const auto& args : cases) {
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    const test::CliResult r = RunTool(args);
    EXPECT_EQ(2, r.code) << joined;
    EXPECT_NE(std::string::npos, r.err.find("accelkv: ")) << joined << "\n" << r.err;
    EXPECT_NE(std::string::npos, r.err.find("usage: accelkv")) << joined << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << joined << "\n" << r.out;
  }
}

}  // namespace
}  // namespace accelkv
