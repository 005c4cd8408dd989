// A two-level iterator: an index iterator whose values each name a second-level
// iterator (an index block over data blocks, or a level's file list over
// tables). Takes ownership of index_iter.
#pragma once

#include <functional>

#include "accelkv/iterator.h"
#include "accelkv/options.h"

namespace accelkv {

using BlockFunction = std::function<Iterator*(const ReadOptions&, const Slice& index_value)>;

Iterator* NewTwoLevelIterator(Iterator* index_iter, BlockFunction block_function,
                              const ReadOptions& options);

}  // namespace accelkv
