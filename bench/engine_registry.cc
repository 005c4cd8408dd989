// Engine factory and small option helpers shared by the adapters.
#include <cctype>

#include "engine.h"
#include "engine_factories.h"

namespace accelkv_bench {

std::vector<std::string> AvailableEngines() {
  std::vector<std::string> names;
#ifdef ACCELKV_BENCH_WITH_ACCELKV
  names.push_back("accelkv");
#endif
  names.push_back("rocksdb");
  names.push_back("leveldb");
  return names;
}

std::unique_ptr<Engine> CreateEngine(const std::string& name) {
#ifdef ACCELKV_BENCH_WITH_ACCELKV
  if (name == "accelkv") return NewAccelKVEngine();
#endif
  if (name == "rocksdb") return NewRocksDBEngine();
  if (name == "leveldb") return NewLevelDBEngine();
  return nullptr;
}

bool SplitOption(const std::string& option, std::string* name, std::string* value) {
  const size_t eq = option.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  *name = option.substr(0, eq);
  *value = option.substr(eq + 1);
  return true;
}

bool ParseSize(const std::string& text, uint64_t* out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  uint64_t v = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); i++) {
    const uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  uint64_t mult = 1;
  if (i < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
      case 'K':
        mult = 1ull << 10;
        break;
      case 'M':
        mult = 1ull << 20;
        break;
      case 'G':
        mult = 1ull << 30;
        break;
      default:
        return false;
    }
    i++;
    if (i < text.size() && std::toupper(static_cast<unsigned char>(text[i])) == 'B') i++;
    if (i != text.size()) return false;
  }
  if (mult != 1 && v > UINT64_MAX / mult) return false;
  *out = v * mult;
  return true;
}

}  // namespace accelkv_bench
