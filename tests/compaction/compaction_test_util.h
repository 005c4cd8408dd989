// Helpers for tests/compaction: hand-built file metadata, level lists and
// compactions (the picker and the filter are tested as pure functions), and
// input tables written to an Env for the executor tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "accelkv/env.h"
#include "compaction/compaction.h"
#include "table/table_options.h"
#include "util/internal_key.h"
#include "version/file_meta.h"

namespace accelkv::test {

// A file of user keys [smallest, largest]: smallest carries smallest_seq,
// largest carries largest_seq (both kValue), size `bytes`.
FileMetaPtr MakeFile(uint64_t number, const std::string& smallest, const std::string& largest,
                     uint64_t bytes, SequenceNumber smallest_seq = 1,
                     SequenceNumber largest_seq = 1);

// The file numbers of a list, e.g. "3,5,7" ("" when empty).
std::string Numbers(const std::vector<FileMetaPtr>& files);

// One entry of a table: internal key fields and a value.
struct Entry {
  Entry() = default;
  Entry(std::string k, SequenceNumber s, ValueType t, std::string v = std::string())
      : user_key(std::move(k)), seq(s), type(t), value(std::move(v)) {}

  std::string user_key;
  SequenceNumber seq = 0;
  ValueType type = ValueType::kValue;
  std::string value;

  std::string InternalKeyString() const {
    return InternalKey(user_key, seq, type).Encode().ToString();
  }
};

// Sorts entries into internal-key order under the bytewise comparator.
void SortEntries(std::vector<Entry>* entries);

// Writes `entries` (internal-key order, distinct keys) as table `number` of
// dbname through env; returns its metadata (file_size 0 and a failed status
// through *s on error).
FileMetaPtr WriteTable(Env* env, const std::string& dbname, const TableOptions& options,
                       uint64_t number, const std::vector<Entry>& entries, Status* s);

// Reads every entry of table `number` of dbname (verifying checksums).
Status ReadTable(Env* env, const std::string& dbname, const TableOptions& options, uint64_t number,
                 std::vector<std::pair<std::string, std::string>>* entries);

}  // namespace accelkv::test
