// The accelkv commands that work on an open database: put, get, delete,
// scan, stats and compact. Each opens ctx.db_path, does its work, closes
// the database and returns an exit code (cli_command.h). The dispatcher has
// checked the number of positional arguments and the allowed options.
//
// Thread safety: each call uses only its own context.
#pragma once

#include "tools/cli_command.h"

namespace accelkv::cli {

// put KEY VALUE: prints "OK".
int RunPut(const CommandContext& ctx);
// get KEY: prints the value; exit 1 with "NotFound" on stderr if absent.
int RunGet(const CommandContext& ctx);
// delete KEY: prints "OK" (also when the key did not exist).
int RunDelete(const CommandContext& ctx);
// scan [--from K] [--to K] [--limit N] [--reverse]: one "key => value" line
// per entry with from <= key < to, ascending (descending with --reverse).
int RunScan(const CommandContext& ctx);
// stats: the "accelkv.stats" and "accelkv.sstables" properties.
int RunStats(const CommandContext& ctx);
// compact [--from K] [--to K]: CompactRange over [from, to]; prints "OK".
int RunCompact(const CommandContext& ctx);

}  // namespace accelkv::cli
