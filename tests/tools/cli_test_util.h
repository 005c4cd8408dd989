// Test helpers for tests/tools: run the CLI in-process and capture its
// output, and write or damage files for the table-level commands.
//
// Thread safety: each helper touches only its own arguments.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace accelkv::test {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs accelkv::cli::RunCli with argv = {"accelkv", args...}.
CliResult RunTool(const std::vector<std::string>& args);

// Writes a table file at `path` holding (user key, sequence, is_put, value)
// entries, which must be in internal-key order. Aborts the test on error.
struct TableEntry {
  std::string user_key;
  uint64_t sequence;
  bool is_put;
  std::string value;
};
void WriteTableFile(const std::string& path, const std::vector<TableEntry>& entries,
                    size_t block_size);

std::string ReadFileBytes(const std::string& path);
void WriteFileBytes(const std::string& path, const std::string& bytes);

// The names of the *.sst files in dir, sorted.
std::vector<std::string> TableFiles(const std::string& dir);

}  // namespace accelkv::test
