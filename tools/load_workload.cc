#include "tools/load_workload.h"

#include <cassert>
#include <limits>
#include <utility>

#include "util/random.h"

namespace accelkv::cli {

namespace {

// SplitMix64's finalizer: a bijective mix, so nearby inputs give unrelated
// generator seeds.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

LoadWorkload::LoadWorkload(uint64_t num, size_t key_size, size_t value_size, uint64_t seed)
    : num_(num), key_size_(key_size), value_size_(value_size), seed_(seed) {
  assert(KeySizeFits(num, key_size));
  assert(num <= std::numeric_limits<uint32_t>::max());
}

bool LoadWorkload::KeySizeFits(uint64_t num, size_t key_size) {
  size_t digits = 1;
  for (uint64_t largest = num == 0 ? 0 : num - 1; largest >= 10; largest /= 10) ++digits;
  return key_size >= digits;
}

void LoadWorkload::Key(uint64_t index, std::string* key) const {
  key->assign(key_size_, '0');
  for (size_t pos = key_size_; index > 0 && pos > 0; index /= 10) {
    (*key)[--pos] = static_cast<char>('0' + index % 10);
  }
}

void LoadWorkload::Value(uint64_t index, std::string* value) const {
  Random rnd(Mix(index ^ Mix(seed_)));
  value->resize(value_size_);
  char* p = value->data();
  for (size_t i = 0; i < value_size_; i += 8) {
    uint64_t r = rnd.Next64();
    for (size_t j = i; j < value_size_ && j < i + 8; ++j, r >>= 8) {
      p[j] = static_cast<char>(' ' + (r & 0xff) % 95);  // printable ASCII
    }
  }
}

std::vector<uint32_t> LoadWorkload::Order(uint64_t phase) const {
  std::vector<uint32_t> order(num_);
  for (uint64_t i = 0; i < num_; ++i) order[i] = static_cast<uint32_t>(i);
  Random rnd(Mix(seed_ ^ Mix(phase + 1)));
  for (uint64_t i = num_; i > 1; --i) {
    std::swap(order[i - 1], order[rnd.Uniform(i)]);
  }
  return order;
}

}  // namespace accelkv::cli
