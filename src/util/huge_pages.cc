#include "util/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

#include "util/align.h"

namespace accelkv {

char* MapHugePages(size_t size) {
  void* raw = mmap(nullptr, size + kHugePageSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  // Keep [base, base + size), base aligned; give back the rest.
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t base = AlignUp(begin, kHugePageSize);
  const uintptr_t end = begin + size + kHugePageSize;
  if (base > begin) munmap(raw, base - begin);
  if (end > base + size) munmap(reinterpret_cast<void*>(base + size), end - (base + size));
  char* p = reinterpret_cast<char*>(base);
  (void)madvise(p, size, MADV_HUGEPAGE);  // a hint; without it, ordinary pages
  return p;
}

}  // namespace accelkv
