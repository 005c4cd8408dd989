// verify: checks a database end to end.
//   1. Every table file in the directory (ParseFileName, *.sst, in name
//      order) is opened and Table::VerifyAllBlocks'ed; one line per file,
//      "<name>: OK (<entries> entries, <blocks> blocks, <bytes> bytes)" or
//      "<name>: <error>".
//   2. The database is opened (replaying MANIFEST and WAL; never created)
//      and iterated from first to last key: "db: OK (<keys> keys)" or
//      "db: <error>".
//   3. A summary: "verify: OK (<files> table files, <keys> keys)" or
//      "verify: FAILED: <first error>".
// Exit 0 only if everything was clean; else 1, with the first error also on
// stderr.
//
// Thread safety: each call uses only its own context.
#pragma once

#include "tools/cli_command.h"

namespace accelkv::cli {

int RunVerify(const CommandContext& ctx);

}  // namespace accelkv::cli
