// sst-dump FILE [--entries] [--limit N] [--hex]: prints a table file's
// properties and block count, verifies every block (checksums, key order,
// properties), and with --entries prints its entries as
// "<user key> @ <sequence> : <PUT|DEL> => <value>" (values truncated).
// Reads through Env::Default() with a bytewise InternalKeyComparator; needs
// no --db. Exit 0 when the table is clean, 1 on any error (a malformed file
// reports Corruption, never crashes).
//
// Thread safety: each call uses only its own context.
#pragma once

#include "tools/cli_command.h"

namespace accelkv::cli {

int RunSstDump(const CommandContext& ctx);

}  // namespace accelkv::cli
