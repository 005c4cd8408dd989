// DBIter: turns an iterator over internal keys (memtables + tables, merged)
// into the user-visible iterator: for each user key, the newest entry with
// sequence <= the read sequence, hiding tombstones and shadowed versions, and
// clamped to the ReadOptions bounds.
//
// Thread safety: one thread at a time, like every Iterator.
#pragma once

#include <cstdint>

#include "accelkv/comparator.h"
#include "accelkv/iterator.h"
#include "accelkv/options.h"
#include "util/internal_key.h"

namespace accelkv {

// Takes ownership of internal_iter. The bound slices in options must outlive
// the returned iterator.
Iterator* NewDBIterator(const Comparator* user_comparator, Iterator* internal_iter,
                        SequenceNumber sequence, const ReadOptions& options);

}  // namespace accelkv
