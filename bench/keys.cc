#include "keys.h"

#include <cstring>

#include "distributions.h"

namespace accelkv_bench {

namespace {

// Writes value in decimal right-aligned in out[0, width), zero-padded (its
// lowest width digits if it has more). The padding is filled at once: a
// 16-byte key of an index below 10^9 has 7 or more zeros, and a digit costs a
// division (a benchmark put formats a key every op).
void PutPadded(uint64_t value, size_t width, char* out) {
  size_t i = width;
  for (; i > 0 && value != 0; i--) {
    out[i - 1] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  std::memset(out, '0', i);
}

}  // namespace

size_t MinDbBenchKeySize(uint64_t count) {
  size_t digits = 1;
  for (uint64_t max = count > 0 ? count - 1 : 0; max >= 10; max /= 10) digits++;
  return digits + 1;
}

void DbBenchKey(uint64_t index, size_t key_size, std::string* out) {
  out->resize(key_size);
  PutPadded(index, key_size, out->data());
}

void MissingKey(uint64_t index, size_t key_size, std::string* out) {
  out->resize(key_size);
  PutPadded(index, key_size - 1, out->data());
  (*out)[key_size - 1] = '.';
}

bool ParseDbBenchKey(std::string_view key, size_t key_size, uint64_t* index) {
  if (key.size() != key_size || key.empty()) return false;
  uint64_t v = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *index = v;
  return true;
}

void YcsbKey(uint64_t index, std::string* out) {
  const int64_t hashed = static_cast<int64_t>(YcsbFnvHash64(index));
  *out = "user";
  *out += std::to_string(hashed);
}

}  // namespace accelkv_bench
