#include "tools/cli_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "accelkv/comparator.h"
#include "accelkv/env.h"
#include "table/table_builder.h"
#include "tools/cli.h"
#include "util/filename.h"
#include "util/internal_key.h"

namespace accelkv::test {

CliResult RunTool(const std::vector<std::string>& args) {
  std::vector<std::string> storage;
  storage.reserve(args.size() + 1);
  storage.push_back("accelkv");
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  CliResult r;
  r.code = cli::RunCli(static_cast<int>(storage.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

void WriteTableFile(const std::string& path, const std::vector<TableEntry>& entries,
                    size_t block_size) {
  const InternalKeyComparator icmp(BytewiseComparator());
  TableOptions options;
  options.comparator = &icmp;
  options.user_comparator = BytewiseComparator();
  options.block_size = block_size;
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(Env::Default()->NewWritableFile(path, &file).ok());
  TableBuilder builder(options, file.get());
  for (const TableEntry& e : entries) {
    const InternalKey key(e.user_key, e.sequence,
                          e.is_put ? ValueType::kValue : ValueType::kDeletion);
    builder.Add(key.Encode(), e.value);
  }
  ASSERT_TRUE(builder.Finish().ok());
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Close().ok());
}

std::string ReadFileBytes(const std::string& path) {
  std::string data;
  EXPECT_TRUE(ReadFileToString(Env::Default(), path, &data).ok()) << path;
  return data;
}

void WriteFileBytes(const std::string& path, const std::string& bytes) {
  EXPECT_TRUE(WriteStringToFile(Env::Default(), bytes, path, true).ok()) << path;
}

std::vector<std::string> TableFiles(const std::string& dir) {
  std::vector<std::string> children, tables;
  EXPECT_TRUE(Env::Default()->GetChildren(dir, &children).ok()) << dir;
  for (const std::string& name : children) {
    uint64_t number = 0;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kTableFile) {
      tables.push_back(name);
    }
  }
  std::sort(tables.begin(), tables.end());
  return tables;
}

}  // namespace accelkv::test
