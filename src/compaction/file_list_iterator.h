// A concatenating iterator over a sorted, non-overlapping list of table files
// (the inputs of one level >= 1 of a compaction): yields every entry of the
// first file, then of the second, and so on. Tables are opened through the
// table cache lazily, when the iterator reaches them.
//
// Thread safety: like any Iterator, one thread at a time.
#pragma once

#include <vector>

#include "accelkv/iterator.h"
#include "accelkv/options.h"
#include "table/table_cache.h"
#include "util/internal_key.h"
#include "version/file_meta.h"

namespace accelkv {

// REQUIRES: files sorted by smallest key, each file's largest key < the next
// file's smallest key (icmp order). table_cache and icmp outlive the iterator;
// the list is copied. A table that cannot be opened makes the iterator stop
// there with that table's error status.
Iterator* NewFileListIterator(TableCache* table_cache, const ReadOptions& options,
                              const InternalKeyComparator* icmp, std::vector<FileMetaPtr> files);

}  // namespace accelkv
