// Encoding of TableProperties as a block (docs/format/table.md, "Properties
// block"): ASCII names sorted bytewise -> values (numbers as fixed64).
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "table/block.h"
#include "table/table_properties.h"

namespace accelkv {

// Appends the block_contents of the properties block of props to dst.
void EncodePropertiesBlock(const TableProperties& props, std::string* dst);

// Exact size of the properties block's contents for a comparator name, a
// smallest and a largest key of these sizes (every other value is 8 bytes),
// without building it.
uint64_t PropertiesBlockSize(uint64_t comparator_name_size, uint64_t smallest_key_size,
                             uint64_t largest_key_size);

// Reads known names from block (unknown names are ignored). Corruption if a
// known name is missing or a number is not exactly 8 bytes.
Status DecodePropertiesBlock(const Block& block, TableProperties* props);

}  // namespace accelkv
