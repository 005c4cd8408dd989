// The data of the `load` benchmark, a pure function of (num, key size,
// value size, seed): key i is i in decimal, zero-padded to the key size;
// its value is value_size printable bytes from a generator seeded by
// (i, seed); keys are written and read in two different random
// permutations of [0, num) (each key exactly once per phase).
//
// Thread safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace accelkv::cli {

class LoadWorkload {
 public:
  // REQUIRES: KeySizeFits(num, key_size); num fits in uint32_t.
  LoadWorkload(uint64_t num, size_t key_size, size_t value_size, uint64_t seed);

  // Whether key_size bytes can hold the decimal digits of every index < num.
  static bool KeySizeFits(uint64_t num, size_t key_size);

  uint64_t num() const { return num_; }
  size_t key_size() const { return key_size_; }
  size_t value_size() const { return value_size_; }

  void Key(uint64_t index, std::string* key) const;
  void Value(uint64_t index, std::string* value) const;

  // A random permutation of [0, num), the same for the same (num, seed, phase).
  std::vector<uint32_t> Order(uint64_t phase) const;

 private:
  uint64_t num_;
  size_t key_size_;
  size_t value_size_;
  uint64_t seed_;
};

}  // namespace accelkv::cli
