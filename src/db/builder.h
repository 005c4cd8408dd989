// BuildTable: writes the entries of an internal-key iterator (a memtable) to a
// new, synced table file and describes it in *meta. Used by flushes and
// recovery. On failure nothing is left behind.
#pragma once

#include <string>

#include "accelkv/env.h"
#include "accelkv/iterator.h"
#include "table/table_options.h"
#include "version/file_meta.h"

namespace accelkv {

// REQUIRES: meta->number is set. meta->file_size is 0 if iter was empty (and
// no file is created).
Status BuildTable(const std::string& dbname, Env* env, const TableOptions& options,
                  Iterator* iter, FileMetaData* meta);

}  // namespace accelkv
