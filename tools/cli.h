// The accelkv command-line tool: `accelkv --db PATH [options] <command>
// [args]` (docs/cli.md). RunCli is main() without the process: it writes to
// the given streams and returns the exit code, so tests can drive it.
//
// Exit codes: 0 success; 1 a failed operation (its Status on err), a key not
// found, or bad data found by verify/sst-dump/load; 2 a usage error (usage
// text on err). Never crashes on bad input.
//
// Thread safety: RunCli may be called from several threads at once on
// different databases (it keeps no global state).
#pragma once

#include <ostream>

namespace accelkv::cli {

int RunCli(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace accelkv::cli
