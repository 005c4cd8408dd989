#include "tools/cli.h"

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cli_args.h"
#include "tools/cli_command.h"
#include "tools/cli_usage.h"
#include "tools/db_commands.h"
#include "tools/load_command.h"
#include "tools/sst_dump_command.h"
#include "tools/verify_command.h"

namespace accelkv::cli {

namespace {

// Options every command accepts.
constexpr std::string_view kGlobalOptions[] = {
    "db",         "create-if-missing", "sync",       "write-buffer-size",
    "block-size", "bloom-bits",        "cache-size", "hex",
    "help",
};

struct Command {
  const char* name;
  size_t positional;  // exact number of positional arguments
  const char* positional_usage;
  std::vector<std::string_view> options;  // beyond the global ones
  bool needs_db;
  bool create_default;  // default of --create-if-missing
  int (*run)(const CommandContext& ctx);
};

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"put", 2, "KEY VALUE", {}, true, true, &RunPut},
      {"get", 1, "KEY", {}, true, false, &RunGet},
      {"delete", 1, "KEY", {}, true, false, &RunDelete},
      {"scan", 0, "", {"from", "to", "limit", "reverse"}, true, false, &RunScan},
      {"stats", 0, "", {}, true, false, &RunStats},
      {"compact", 0, "", {"from", "to"}, true, false, &RunCompact},
      {"verify", 0, "", {}, true, false, &RunVerify},
      {"sst-dump", 1, "FILE", {"entries", "limit"}, false, false, &RunSstDump},
      {"load", 0, "", {"num", "value-size", "key-size", "seed", "batch"}, true, true, &RunLoad},
  };
  return kCommands;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

bool Allowed(const Command& command, std::string_view option) {
  for (std::string_view o : kGlobalOptions) {
    if (o == option) return true;
  }
  for (std::string_view o : command.options) {
    if (o == option) return true;
  }
  return false;
}

int Dispatch(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Args args;
  std::string error;
  if (!ParseArgs(argc, argv, &args, &error)) return UsageError(err, error);
  if (args.Flag("help", false) || args.command() == "help") {
    out << UsageText();
    return kExitOk;
  }
  if (args.command().empty()) return UsageError(err, "no command given");
  const Command* command = FindCommand(args.command());
  if (command == nullptr) return UsageError(err, "unknown command '" + args.command() + "'");
  for (const std::string& option : args.OptionNames()) {
    if (!Allowed(*command, option)) {
      return UsageError(err, "option --" + option + " does not apply to " + command->name);
    }
  }
  if (args.positional().size() != command->positional) {
    std::string expected = command->positional == 0
                               ? std::string("no arguments")
                               : std::string("arguments ") + command->positional_usage;
    return UsageError(err, std::string(command->name) + " takes " + expected);
  }
  CommandContext ctx{args, args.String("db", ""), Options(), WriteOptions(), false, out, err};
  ctx.hex = args.Flag("hex", false);
  if (command->needs_db && ctx.db_path.empty()) {
    return UsageError(err, std::string(command->name) + " needs --db PATH");
  }
  if (!BuildDbOptions(args, command->create_default, &ctx.options, &ctx.write_options, &error)) {
    return UsageError(err, error);
  }
  return command->run(ctx);
}

}  // namespace

int RunCli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  try {
    return Dispatch(argc, argv, out, err);
  } catch (const std::exception& e) {
    // Only allocation failures can get here (the library reports errors
    // through Status); report instead of terminating.
    err << "accelkv: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace accelkv::cli
