#include "util/arena.h"

#include <sys/mman.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "util/huge_pages.h"

namespace accelkv {
namespace {

// Huge blocks of memtables that are gone, kept for the next memtables: a
// fresh mapping is zeroed by the kernel when first touched, on the write
// path (clear_page was 4.8% of a fillrandom writer's samples). Up to one
// default memtable's worth (64 MiB) is kept, for the whole process, and only
// while some huge arena lives (an open DB always has a memtable): once the
// last one dies (the last DB closed), the cached blocks are unmapped. The
// arena treats a block's bytes as uninitialized either way.
class HugeBlockCache {
 public:
  static HugeBlockCache& Get() {
    static HugeBlockCache* cache = new HugeBlockCache;  // never destroyed
    return *cache;
  }
  void ArenaBorn() {
    std::lock_guard<std::mutex> l(mu_);
    ++live_arenas_;
  }
  // A dying arena's block: kept, or false when the cache is full (the
  // caller unmaps it).
  bool Keep(char* p) {
    std::lock_guard<std::mutex> l(mu_);
    if (blocks_.size() >= kMaxBlocks) return false;
    blocks_.push_back(p);
    return true;
  }
  // After the dying arena's blocks were offered: when no huge arena is left,
  // every cached block is unmapped.
  void ArenaDied() {
    std::lock_guard<std::mutex> l(mu_);
    if (--live_arenas_ > 0) return;
    for (char* p : blocks_) munmap(p, kHugePageSize);
    blocks_.clear();
  }
  char* Take() {
    std::lock_guard<std::mutex> l(mu_);
    if (blocks_.empty()) return nullptr;
    char* p = blocks_.back();
    blocks_.pop_back();
    return p;
  }
  size_t Cached() {
    std::lock_guard<std::mutex> l(mu_);
    return blocks_.size();
  }

 private:
  static constexpr size_t kMaxBlocks = (size_t{64} << 20) / kHugePageSize;
  HugeBlockCache() { blocks_.reserve(kMaxBlocks); }
  std::mutex mu_;
  std::vector<char*> blocks_;
  size_t live_arenas_ = 0;
};

// One huge block: from the cache, or mapped now; nullptr if mmap fails.
char* MapHugeBlock() {
  if (char* p = HugeBlockCache::Get().Take()) return p;
  return MapHugePages(kHugePageSize);
}

}  // namespace

Arena::Arena(bool huge_blocks)
    : block_size_(huge_blocks ? kHugeBlockSize : kDefaultBlockSize), huge_(huge_blocks) {
  if (huge_) HugeBlockCache::Get().ArenaBorn();
}

Arena::~Arena() {
  for (const Block& b : blocks_) {
    if (!b.mapped) {
      delete[] b.data;
    } else if (!HugeBlockCache::Get().Keep(b.data)) {
      munmap(b.data, b.size);  // every mapped block is one kHugeBlockSize block
    }
  }
  if (huge_) HugeBlockCache::Get().ArenaDied();
}

size_t Arena::CachedHugeBlocks() { return HugeBlockCache::Get().Cached(); }

char* Arena::AllocateFallback(size_t bytes) {
  if (bytes > block_size_ / 4) {
    // Large objects get their own block so the current block is not wasted.
    return AllocateNewBlock(bytes);
  }
  alloc_ptr_ = AllocateNewBlock(block_size_);
  alloc_bytes_remaining_ = block_size_;
  char* result = alloc_ptr_;
  alloc_ptr_ += bytes;
  alloc_bytes_remaining_ -= bytes;
  return result;
}

char* Arena::AllocateAligned(size_t bytes) {
  constexpr size_t kAlign = alignof(std::max_align_t) > 8 ? alignof(std::max_align_t) : 8;
  static_assert((kAlign & (kAlign - 1)) == 0, "alignment must be a power of 2");
  size_t mod = reinterpret_cast<uintptr_t>(alloc_ptr_) & (kAlign - 1);
  size_t slop = (mod == 0 ? 0 : kAlign - mod);
  size_t needed = bytes + slop;
  if (needed <= alloc_bytes_remaining_) {
    char* result = alloc_ptr_ + slop;
    alloc_ptr_ += needed;
    alloc_bytes_remaining_ -= needed;
    return result;
  }
  return AllocateFallback(bytes);  // new blocks are malloc- or 2 MiB-aligned
}

char* Arena::AllocateNewBlock(size_t block_bytes) {
  blocks_.reserve(blocks_.size() + 1);  // a push_back that throws leaks nothing
  char* p = nullptr;
  bool mapped = false;
  if (huge_ && block_bytes == block_size_) {
    p = MapHugeBlock();
    mapped = p != nullptr;
  }
  if (p == nullptr) p = new char[block_bytes];  // small, large or unmappable blocks
  blocks_.push_back(Block{p, block_bytes, mapped});
  memory_usage_.fetch_add(block_bytes + sizeof(Block), std::memory_order_relaxed);
  return p;
}

}  // namespace accelkv
