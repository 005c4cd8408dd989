#include "util/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace accelkv {

uint64_t Hash64(const char* data, size_t n) { return XXH64(data, n, 0); }

}  // namespace accelkv
