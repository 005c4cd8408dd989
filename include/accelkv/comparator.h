// Comparator: a total order over user keys. The order of a database is fixed
// at creation: its Name() is recorded in the MANIFEST and checked at open.
//
// Thread safety: implementations must be safe for concurrent use.
#pragma once

#include <string>

#include "accelkv/slice.h"

namespace accelkv {

class Comparator {
 public:
  virtual ~Comparator() = default;

  // <0 if a < b, 0 if a == b, >0 if a > b.
  virtual int Compare(const Slice& a, const Slice& b) const = 0;

  // Stored in the MANIFEST; opening with a comparator of another name fails
  // with InvalidArgument. Names starting with "accelkv." are reserved.
  virtual const char* Name() const = 0;

  // True when Compare is plain bytewise memcmp order. Only such databases can
  // run compaction on the GPU (the GPU sorts bytes); others stay on the CPU.
  virtual bool IsBytewise() const { return false; }
};

// The default: lexicographic unsigned-byte order. A process-wide singleton
// that must not be deleted.
const Comparator* BytewiseComparator();

}  // namespace accelkv
