// FileMetaData: what the version set knows about one live table file.
// Shared (std::shared_ptr) between the versions that contain the file.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "table/table_properties.h"
#include "util/internal_key.h"

namespace accelkv {

struct FileMetaData {
  uint64_t number = 0;
  uint64_t file_size = 0;  // bytes
  InternalKey smallest;    // smallest internal key in the table
  InternalKey largest;     // largest internal key in the table
  SequenceNumber smallest_seqno = 0;
  SequenceNumber largest_seqno = 0;
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;
};

// Sets everything but meta->number from a finished table's properties.
void SetFromTableProperties(const TableProperties& props, uint64_t file_size, FileMetaData* meta);

using FileMetaPtr = std::shared_ptr<const FileMetaData>;
// Files of one level. Level 0: newest file first (by largest_seqno, then
// number); levels >= 1: sorted by smallest key, non-overlapping.
using LevelFiles = std::vector<FileMetaPtr>;

}  // namespace accelkv
