// load --num N [--value-size B] [--key-size K] [--seed S] [--batch N]: the
// benchmark of scripts/main.sh. Opens (by default creates) the database,
// writes the N keys of a LoadWorkload in random order (--batch keys per
// WriteBatch), flushes and waits, reads every key back in another random
// order verifying each value, and prints per phase "ops, elapsed, ops/s,
// MB/s" (MB = 10^6 bytes of key + value), then the "accelkv.stats"
// property. Exit 1 if a write fails or any read is missing or wrong (the
// first few are listed on stderr); 2 on bad sizes.
//
// Thread safety: each call uses only its own context.
#pragma once

#include "tools/cli_command.h"

namespace accelkv::cli {

int RunLoad(const CommandContext& ctx);

}  // namespace accelkv::cli
