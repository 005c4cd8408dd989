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

// Reads known names from block (unknown names are ignored). Corruption if a
// known name is missing or a number is not exactly 8 bytes.
Status DecodePropertiesBlock(const Block& block, TableProperties* props);

}  // namespace accelkv
