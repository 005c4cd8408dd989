// Command-line parsing for the accelkv tool: options and positional
// arguments, with numbers validated at parse time so that commands read them
// without further checks.
//
// Syntax: `accelkv [options] <command> [args]`. Options may appear before or
// after the command: `--name VALUE`, `--name=VALUE`, `--flag` or
// `--flag=true|false`; `--` ends the options (later words are positional,
// so keys may start with '-'); `-h` means `--help`. The first positional word
// is the command.
//
// Thread safety: ParseArgs and ParseNumber are pure; an Args is a plain value.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace accelkv::cli {

enum class OptionKind {
  kFlag,    // no value, or =true / =false
  kString,  // any text
  kCount,   // decimal uint64
  kSize,    // decimal uint64 with an optional K, M or G suffix (powers of 1024)
};

struct OptionSpec {
  const char* name;  // without the leading "--"
  OptionKind kind;
  const char* value_name;  // for usage text; nullptr for flags
  const char* help;
};

// Every option the tool knows, global and per-command.
const std::vector<OptionSpec>& AllOptions();
// The spec of `name` (without "--"), or nullptr if unknown.
const OptionSpec* FindOption(std::string_view name);

// Parses a kCount (suffixes false) or kSize (suffixes true) value. False on
// empty text, non-digits, an unknown suffix or overflow.
bool ParseNumber(std::string_view text, bool suffixes, uint64_t* value);

class Args {
 public:
  // The command word, empty if none was given.
  const std::string& command() const { return command_; }
  // The positional words after the command.
  const std::vector<std::string>& positional() const { return positional_; }
  // Names of the options given (without "--"), sorted.
  std::vector<std::string> OptionNames() const;

  bool Has(std::string_view name) const;
  // A flag's value; `default_value` when not given.
  bool Flag(std::string_view name, bool default_value) const;
  std::string String(std::string_view name, const std::string& default_value) const;
  // A kCount or kSize option's value (validated by ParseArgs).
  uint64_t Number(std::string_view name, uint64_t default_value) const;

 private:
  friend bool ParseArgs(int argc, const char* const* argv, Args* args, std::string* error);
  std::string command_;
  std::vector<std::string> positional_;
  std::map<std::string, std::string, std::less<>> options_;  // name -> value text
};

// Parses argv[1..argc-1]. False with *error set on an unknown option, a
// missing option value, a bad number or a bad flag value. The last
// occurrence of a repeated option wins.
bool ParseArgs(int argc, const char* const* argv, Args* args, std::string* error);

}  // namespace accelkv::cli
