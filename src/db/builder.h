// BuildTable: writes the entries of an internal-key iterator (a memtable) to a
// new, synced table file and describes it in *meta. Used by flushes and
// recovery. Versions no live snapshot can see (an older version of a key in
// the same snapshot stripe as a newer one, ObsoleteVersionFilter's rule) are
// not written, as RocksDB's flush does; tombstones are always kept. On
// failure nothing is left behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accelkv/env.h"
#include "accelkv/iterator.h"
#include "table/table_options.h"
#include "util/internal_key.h"
#include "version/file_meta.h"

namespace accelkv {

// REQUIRES: meta->number is set; snapshots are the live snapshot sequences,
// ascending and distinct; ucmp orders user keys. meta->file_size is 0 if iter
// was empty (and no file is created). *dropped (if not null) counts the
// versions not written.
Status BuildTable(const std::string& dbname, Env* env, const TableOptions& options,
                  const Comparator* ucmp, std::vector<SequenceNumber> snapshots, Iterator* iter,
                  FileMetaData* meta, uint64_t* dropped = nullptr);

}  // namespace accelkv
