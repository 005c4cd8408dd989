// Hashes. Hash64 is the bloom-filter hash of docs/FORMAT.md: XXH64 with seed 0
// (from libxxhash, inlined), chosen because it is specified byte for byte and
// simple to reproduce on the GPU.
#pragma once

#include <cstddef>
#include <cstdint>

namespace accelkv {

uint64_t Hash64(const char* data, size_t n);

}  // namespace accelkv
