// The properties block's entries (docs/FORMAT.md, "Properties block"):
// their names, in the order they are stored (bytewise), and which hold
// numbers. One definition for the table code (table_properties.cc) and the
// GPU encoder's table tails (src/gpu/tail_common.h), so the device writes
// the block byte-identical to EncodePropertiesBlock.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ACCELKV_PROPS_HD __host__ __device__
#else
#define ACCELKV_PROPS_HD
#endif

namespace accelkv {

// The stored entries, in order.
enum TableProperty : int {
  kPropertyComparator = 0,
  kPropertyDataBytes,
  kPropertyLargestKey,
  kPropertyLargestSeqno,
  kPropertyNumDataBlocks,
  kPropertyNumDeletions,
  kPropertyNumEntries,
  kPropertyRawKeyBytes,
  kPropertyRawValueBytes,
  kPropertySmallestKey,
  kPropertySmallestSeqno,
  kNumTableProperties
};

ACCELKV_PROPS_HD inline const char* TablePropertyName(int property) {
  switch (property) {
    case kPropertyComparator:
      return "accelkv.comparator";
    case kPropertyDataBytes:
      return "accelkv.data-bytes";
    case kPropertyLargestKey:
      return "accelkv.largest-key";
    case kPropertyLargestSeqno:
      return "accelkv.largest-seqno";
    case kPropertyNumDataBlocks:
      return "accelkv.num-data-blocks";
    case kPropertyNumDeletions:
      return "accelkv.num-deletions";
    case kPropertyNumEntries:
      return "accelkv.num-entries";
    case kPropertyRawKeyBytes:
      return "accelkv.raw-key-bytes";
    case kPropertyRawValueBytes:
      return "accelkv.raw-value-bytes";
    case kPropertySmallestKey:
      return "accelkv.smallest-key";
    case kPropertySmallestSeqno:
      return "accelkv.smallest-seqno";
    default:
      return "";
  }
}

ACCELKV_PROPS_HD inline uint32_t TablePropertyNameSize(int property) {
  const char* name = TablePropertyName(property);
  uint32_t n = 0;
  while (name[n] != '\0') ++n;
  return n;
}

// Whether the entry's value is raw bytes (the comparator name, the two
// keys); every other value is a fixed64.
ACCELKV_PROPS_HD inline bool TablePropertyIsBytes(int property) {
  return property == kPropertyComparator || property == kPropertyLargestKey ||
         property == kPropertySmallestKey;
}

// The bytes every name starts with ("accelkv."), so the block's shared
// prefix: the names differ right after it.
inline constexpr uint32_t kTablePropertyPrefix = 8;

}  // namespace accelkv
