#include "tools/cli_args.h"

#include <limits>

namespace accelkv::cli {

const std::vector<OptionSpec>& AllOptions() {
  static const std::vector<OptionSpec> kOptions = {
      // Global.
      {"db", OptionKind::kString, "PATH", "database directory"},
      {"create-if-missing", OptionKind::kFlag, nullptr,
       "create the database if missing (default: true for put and load)"},
      {"sync", OptionKind::kFlag, nullptr, "fsync the WAL on every write"},
      {"write-buffer-size", OptionKind::kSize, "BYTES", "memtable size (default 64M)"},
      {"block-size", OptionKind::kSize, "BYTES", "table data block size (default 4K)"},
      {"bloom-bits", OptionKind::kCount, "N", "bloom filter bits per key, 0: none (default 10)"},
      {"cache-size", OptionKind::kSize, "BYTES", "block cache size (default 32M)"},
      {"hex", OptionKind::kFlag, nullptr, "keys and values in hex, on input and output"},
      {"help", OptionKind::kFlag, nullptr, "print usage"},
      // Per command.
      {"from", OptionKind::kString, "KEY", "first key of the range (inclusive)"},
      {"to", OptionKind::kString, "KEY", "end of the range"},
      {"limit", OptionKind::kCount, "N", "print at most N entries"},
      {"reverse", OptionKind::kFlag, nullptr, "scan from the last key backwards"},
      {"entries", OptionKind::kFlag, nullptr, "print the table's entries"},
      {"num", OptionKind::kCount, "N", "number of keys to load"},
      {"value-size", OptionKind::kSize, "BYTES", "value size (default 100)"},
      {"key-size", OptionKind::kCount, "BYTES", "key size (default 16)"},
      {"seed", OptionKind::kCount, "S", "seed of key order and values (default 301)"},
      {"batch", OptionKind::kCount, "N", "keys per WriteBatch (default 1)"},
  };
  return kOptions;
}

const OptionSpec* FindOption(std::string_view name) {
  for (const OptionSpec& spec : AllOptions()) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

bool ParseNumber(std::string_view text, bool suffixes, uint64_t* value) {
  uint64_t multiplier = 1;
  if (suffixes && !text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        multiplier = uint64_t{1} << 10;
        break;
      case 'm':
      case 'M':
        multiplier = uint64_t{1} << 20;
        break;
      case 'g':
      case 'G':
        multiplier = uint64_t{1} << 30;
        break;
      default:
        break;
    }
    if (multiplier != 1) text.remove_suffix(1);
  }
  if (text.empty()) return false;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (kMax - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (v > kMax / multiplier) return false;
  *value = v * multiplier;
  return true;
}

namespace {

bool ParseFlagValue(std::string_view text, bool* value) {
  if (text == "true" || text == "1") {
    *value = true;
    return true;
  }
  if (text == "false" || text == "0") {
    *value = false;
    return true;
  }
  return false;
}

// Checks `value` against the kind of `spec`.
bool ValidateValue(const OptionSpec& spec, const std::string& value, std::string* error) {
  bool ok = true;
  uint64_t number = 0;
  bool flag = false;
  switch (spec.kind) {
    case OptionKind::kFlag:
      ok = ParseFlagValue(value, &flag);
      break;
    case OptionKind::kString:
      break;
    case OptionKind::kCount:
      ok = ParseNumber(value, false, &number);
      break;
    case OptionKind::kSize:
      ok = ParseNumber(value, true, &number);
      break;
  }
  if (!ok) *error = "bad value for --" + std::string(spec.name) + ": '" + value + "'";
  return ok;
}

}  // namespace

std::vector<std::string> Args::OptionNames() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : options_) names.push_back(name);
  return names;
}

bool Args::Has(std::string_view name) const { return options_.find(name) != options_.end(); }

bool Args::Flag(std::string_view name, bool default_value) const {
  auto it = options_.find(name);
  if (it == options_.end()) return default_value;
  bool value = default_value;
  ParseFlagValue(it->second, &value);
  return value;
}

std::string Args::String(std::string_view name, const std::string& default_value) const {
  auto it = options_.find(name);
  return it == options_.end() ? default_value : it->second;
}

uint64_t Args::Number(std::string_view name, uint64_t default_value) const {
  auto it = options_.find(name);
  if (it == options_.end()) return default_value;
  const OptionSpec* spec = FindOption(name);
  uint64_t value = default_value;
  ParseNumber(it->second, spec != nullptr && spec->kind == OptionKind::kSize, &value);
  return value;
}

bool ParseArgs(int argc, const char* const* argv, Args* args, std::string* error) {
  *args = Args();
  bool options_ended = false;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i] == nullptr ? std::string() : std::string(argv[i]);
    const bool is_option = !options_ended && word.size() > 1 && word[0] == '-';
    if (!is_option) {
      if (args->command_.empty()) {
        args->command_ = word;
      } else {
        args->positional_.push_back(word);
      }
      continue;
    }
    if (word == "--") {
      options_ended = true;
      continue;
    }
    if (word == "-h") {
      args->options_["help"] = "true";
      continue;
    }
    if (word[1] != '-') {
      *error = "unknown option '" + word + "'";
      return false;
    }
    const size_t eq = word.find('=');
    const std::string name = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const OptionSpec* spec = FindOption(name);
    if (spec == nullptr) {
      *error = "unknown option '--" + name + "'";
      return false;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = word.substr(eq + 1);
    } else if (spec->kind == OptionKind::kFlag) {
      value = "true";
    } else if (i + 1 < argc && argv[i + 1] != nullptr) {
      value = argv[++i];
    } else {
      *error = "option --" + name + " needs a value";
      return false;
    }
    if (!ValidateValue(*spec, value, error)) return false;
    args->options_[name] = value;
  }
  return true;
}

}  // namespace accelkv::cli
