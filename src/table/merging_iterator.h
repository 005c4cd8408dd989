// A merging iterator: the union of n sorted child iterators, in comparator
// order. Duplicates are not removed. Takes ownership of the children.
#pragma once

#include <vector>

#include "accelkv/comparator.h"
#include "accelkv/iterator.h"

namespace accelkv {

Iterator* NewMergingIterator(const Comparator* comparator, std::vector<Iterator*> children);

}  // namespace accelkv
