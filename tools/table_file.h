// Opens one table file by path for the tool's verify and sst-dump commands:
// no block cache, so every block is read (and its CRC32C checked) from the
// file.
//
// Thread safety: OpenTableFile is safe for concurrent use; see table/table.h
// for the Table.
#pragma once

#include <memory>
#include <string>

#include "accelkv/env.h"
#include "accelkv/status.h"
#include "table/table.h"
#include "util/internal_key.h"

namespace accelkv::cli {

// Opens `path` through env, ordering internal keys with *icmp, which must
// outlive the table. *file_size is set once the size is known.
Status OpenTableFile(Env* env, const std::string& path, const InternalKeyComparator* icmp,
                     std::unique_ptr<Table>* table, uint64_t* file_size);

}  // namespace accelkv::cli
