// TableProperties: facts about one table, stored in its properties block
// (docs/FORMAT.md, "Properties block").
#pragma once

#include <cstdint>
#include <string>

#include "accelkv/slice.h"
#include "accelkv/status.h"

namespace accelkv {

struct TableProperties {
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;  // tombstones
  uint64_t raw_key_bytes = 0;  // sum of internal key sizes
  uint64_t raw_value_bytes = 0;
  uint64_t num_data_blocks = 0;
  uint64_t data_bytes = 0;  // on-disk bytes of all data blocks incl. trailers
  uint64_t smallest_seqno = 0;
  uint64_t largest_seqno = 0;
  std::string smallest_key;  // internal key
  std::string largest_key;   // internal key
  std::string comparator_name;

  std::string ToString() const;  // one "name: value" per line
};

}  // namespace accelkv
