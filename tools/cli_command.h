// What every accelkv command gets (CommandContext), the exit codes, and the
// helpers commands share: usage errors, reporting a failed Status, key text
// in and out (escaped or --hex), opening and closing the database.
//
// Thread safety: a CommandContext is used by the one thread running the
// command.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "accelkv/db.h"
#include "accelkv/options.h"
#include "accelkv/status.h"
#include "tools/cli_args.h"

namespace accelkv::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // an operation failed or found bad data
inline constexpr int kExitUsage = 2;    // bad command line

struct CommandContext {
  const Args& args;
  std::string db_path;  // --db; empty for commands that need none
  Options options;      // from the global options
  WriteOptions write_options;
  bool hex = false;  // --hex
  std::ostream& out;
  std::ostream& err;
};

// Fills *options and *write_options from the global options (--sync,
// --write-buffer-size, --block-size, --bloom-bits, --cache-size,
// --create-if-missing, whose default is create_default). False with *error
// set when a value is out of range.
bool BuildDbOptions(const Args& args, bool create_default, Options* options,
                    WriteOptions* write_options, std::string* error);

// Prints "accelkv: <message>" and the usage text to err; returns kExitUsage.
int UsageError(std::ostream& err, const std::string& message);
// Prints "accelkv: <what>: <status>" to err; returns kExitFailure.
int Fail(std::ostream& err, const std::string& what, const Status& status);

// Decodes a key or value given on the command line: as is, or hex with
// --hex. False (after printing a usage error) on bad hex.
bool InputBytes(const CommandContext& ctx, const std::string& text, std::string* bytes);
// The printed form of stored bytes: escaped, or hex with --hex.
std::string OutputBytes(const CommandContext& ctx, const Slice& bytes);

// Opens ctx.db_path with ctx.options.
Status OpenDb(const CommandContext& ctx, std::unique_ptr<DB>* db);
// Closes *db, then returns `result` if it is a failure code, else the exit
// code for Close's status (reported on ctx.err).
int CloseDb(const CommandContext& ctx, std::unique_ptr<DB> db, int result);

}  // namespace accelkv::cli
