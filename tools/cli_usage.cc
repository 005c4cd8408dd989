#include "tools/cli_usage.h"

#include "tools/cli_args.h"

namespace accelkv::cli {

std::string UsageText() {
  std::string text =
      "usage: accelkv --db PATH [options] <command> [args]\n"
      "\n"
      "commands:\n"
      "  put KEY VALUE                 store VALUE under KEY\n"
      "  get KEY                       print KEY's value (exit 1 if not found)\n"
      "  delete KEY                    delete KEY\n"
      "  scan [--from K] [--to K] [--limit N] [--reverse]\n"
      "                                print 'key => value' for keys in [from, to)\n"
      "  stats                         print the store's stats and its table files\n"
      "  compact [--from K] [--to K]   compact keys in [from, to] (default: all)\n"
      "  verify                        check every table file and read the whole DB\n"
      "  sst-dump FILE [--entries] [--limit N]\n"
      "                                print a table's properties and check its blocks\n"
      "                                (no --db needed)\n"
      "  load --num N [--value-size B] [--key-size K] [--seed S] [--batch N]\n"
      "                                write N keys in random order, read them back\n"
      "                                verified, print throughput and stats\n"
      "  help                          print this text\n"
      "\n"
      "options:\n";
  for (const OptionSpec& spec : AllOptions()) {
    std::string left = std::string("  --") + spec.name;
    if (spec.value_name != nullptr) left += std::string(" ") + spec.value_name;
    if (left.size() < 32)
      left.resize(32, ' ');
    else
      left += ' ';
    text += left + spec.help + "\n";
  }
  text +=
      "\n"
      "Sizes take a K, M or G suffix (powers of 1024). Keys and values are printed\n"
      "with non-printable bytes and '\\' as \\xNN. '--' ends the options.\n"
      "Exit codes: 0 success, 1 failure (not found, corruption, I/O error),\n"
      "2 usage error.\n";
  return text;
}

}  // namespace accelkv::cli
