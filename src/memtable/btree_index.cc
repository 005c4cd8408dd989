#include "memtable/btree_index.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>

#include "memtable/memtable.h"
#include "util/align.h"
#include "util/cpu_relax.h"
#include "util/internal_key.h"

namespace accelkv {
namespace {

constexpr uint8_t kLongKey = 17;  // length code of user keys over 16 bytes
constexpr size_t kNodeAlign = 64;
// Huge-page arenas hand out node memory in 64-byte aligned chunks of this
// size (a 2 MiB block is counted whole anyway); 4 KiB-block arenas node by
// node (8-byte aligned), so a small memtable's accounting grows with its
// nodes.
constexpr size_t kChunkBytes = 64 << 10;

// n <= 8 bytes of p as a big-endian word, zero-padded on the right.
uint64_t LoadBigEndian(const char* p, size_t n) {
  unsigned char buf[8] = {};
  if (n > 0) std::memcpy(buf, p, n);
  uint64_t w;
  std::memcpy(&w, buf, 8);
  return __builtin_bswap64(w);
}

// Starts loading the first 512 bytes of a node (a leaf, or an inner node's
// keys) at once, so that a search's probes, which need the version, the
// prefix words and the lengths, do not each wait for their own miss.
inline void PrefetchNode(const void* node) {
  const char* p = static_cast<const char*>(node);
  for (int line = 0; line < 8; line++) __builtin_prefetch(p + line * 64);
}

// How many entries ahead a scan loads: entries lie in the arena in
// insertion order, so consecutive keys are usually cache misses apart.
constexpr uint32_t kScanAhead = 4;

// The first 256 bytes: an entry of a 16-byte key and a 128-byte value (154
// bytes) spans three or four cache lines, and a flush copies all of it
// (two lines left the rest of the copy waiting on memory).
inline void PrefetchEntry(const char* entry) {
  __builtin_prefetch(entry);
  __builtin_prefetch(entry + 64);
  __builtin_prefetch(entry + 128);
  __builtin_prefetch(entry + 192);
}

}  // namespace

// Node fields are atomics: readers read them while a writer may change them,
// and discard what they read when the version moved (Validate). Fields are
// stored with release and loaded with acquire (plain moves on x86, and no
// fences, which ThreadSanitizer does not model): a reader that loads a value
// a locked writer stored also sees that writer's odd version when it
// validates, and a reader that follows a pointer sees what it points to.
struct BTreeIndex::Node {
  std::atomic<uint64_t> version;
  std::atomic<uint32_t> count;
  const bool leaf;
  std::atomic<uint8_t> len_code[kSlots];
  std::atomic<uint64_t> hi[kSlots];
  std::atomic<uint64_t> lo[kSlots];
  std::atomic<const char*> entry[kSlots];

  explicit Node(bool is_leaf) : version(0), count(0), leaf(is_leaf) {
    for (uint32_t i = 0; i < kSlots; i++) {
      len_code[i].store(0, std::memory_order_release);
      hi[i].store(0, std::memory_order_release);
      lo[i].store(0, std::memory_order_release);
      entry[i].store(nullptr, std::memory_order_release);
    }
  }
};

struct BTreeIndex::Leaf : Node {
  std::atomic<Leaf*> next;  // the leaf to the right, or nullptr
  Leaf() : Node(true), next(nullptr) {}
};

// Child i holds the keys in [slot i-1, slot i).
struct BTreeIndex::Inner : Node {
  std::atomic<Node*> child[kSlots + 1];
  Inner() : Node(false) {
    for (auto& c : child) c.store(nullptr, std::memory_order_release);
  }
};

BTreeIndex::BTreeIndex(bool huge_pages)
    : chunk_bytes_(huge_pages ? kChunkBytes : 0), nodes_(huge_pages), root_(nullptr) {
  static_assert(sizeof(Leaf) <= 512, "kSlots is chosen so that a leaf fills 512 bytes");
  root_.store(NewLeaf(), std::memory_order_release);
}

// --- Keys and slots -----------------------------------------------------

BTreeIndex::SearchKey BTreeIndex::MakeSearchKey(const Slice& ikey) {
  assert(ikey.size() >= kInternalKeyTrailerSize);
  SearchKey s;
  s.user_key = ExtractUserKey(ikey);
  s.trailer = ExtractTrailer(ikey);
  const size_t n = s.user_key.size();
  s.hi = LoadBigEndian(s.user_key.data(), std::min<size_t>(n, 8));
  s.lo = n > 8 ? LoadBigEndian(s.user_key.data() + 8, std::min<size_t>(n - 8, 8)) : 0;
  s.len_code = n > 16 ? kLongKey : static_cast<uint32_t>(n);
  return s;
}

BTreeIndex::SearchKey BTreeIndex::EntryKey(const char* entry) {
  return MakeSearchKey(MemTable::KeyComparator::Decode(entry));
}

BTreeIndex::Slot BTreeIndex::MakeSlot(const SearchKey& s, const char* entry) {
  return Slot{s.hi, s.lo, entry, static_cast<uint8_t>(s.len_code)};
}

// LoadSlot and StoreSlot are inlined where an insert shifts a node's slots
// (about 6 of each a put; called, they took 103 and 101 instructions a put
// in fillrandom: bench/results/2026-11-28-dev-single-record-batch.md).
[[gnu::always_inline]] inline BTreeIndex::Slot BTreeIndex::LoadSlot(const Node* n, uint32_t i) {
  return Slot{n->hi[i].load(std::memory_order_acquire), n->lo[i].load(std::memory_order_acquire),
              n->entry[i].load(std::memory_order_acquire),
              n->len_code[i].load(std::memory_order_acquire)};
}

[[gnu::always_inline]] inline void BTreeIndex::StoreSlot(Node* n, uint32_t i, const Slot& slot) {
  n->hi[i].store(slot.hi, std::memory_order_release);
  n->lo[i].store(slot.lo, std::memory_order_release);
  n->len_code[i].store(slot.len_code, std::memory_order_release);
  n->entry[i].store(slot.entry, std::memory_order_release);
}

// Inlined into CountBelow's binary search: called there, a compare took
// 27.5 instructions and a put about 17 of them; inlined, a fillrandom of
// 300K keys ran 9.4% fewer instructions in all (callgrind;
// bench/results/2026-11-28-dev-single-record-batch.md). The prefixes
// decide almost every compare among distinct keys; the rest stays a call.
[[gnu::always_inline]] inline int BTreeIndex::CompareSlot(const Node* n, uint32_t i,
                                                          const SearchKey& s) {
  const uint64_t hi = n->hi[i].load(std::memory_order_acquire);
  if (hi != s.hi) return hi < s.hi ? -1 : 1;
  const uint64_t lo = n->lo[i].load(std::memory_order_acquire);
  if (lo != s.lo) return lo < s.lo ? -1 : 1;
  return CompareSlotTie(n, i, s);
}

// Equal 16-byte prefixes and different length codes: the shorter key is a
// prefix of the longer (zero padding equals the longer key's bytes), so it
// sorts first. Equal codes up to 16: equal user keys.
int BTreeIndex::CompareSlotTie(const Node* n, uint32_t i, const SearchKey& s) {
  const uint32_t len_code = n->len_code[i].load(std::memory_order_acquire);
  if (len_code != s.len_code) return len_code < s.len_code ? -1 : 1;
  const char* entry = n->entry[i].load(std::memory_order_acquire);
  if (entry == nullptr) return 1;  // a slot being written: the version check fails
  const Slice ikey = MemTable::KeyComparator::Decode(entry);
  if (len_code == kLongKey) {
    const int r = ExtractUserKey(ikey).compare(s.user_key);
    if (r != 0) return r;
  }
  const uint64_t trailer = ExtractTrailer(ikey);
  return trailer > s.trailer ? -1 : (trailer < s.trailer ? 1 : 0);
}

uint32_t BTreeIndex::CountBelow(const Node* n, uint32_t count, const SearchKey& s, bool or_equal) {
  uint32_t lo = 0;
  uint32_t hi = count;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    const int c = CompareSlot(n, mid, s);
    if (c < 0 || (or_equal && c == 0)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

uint32_t BTreeIndex::Count(const Node* n) {
  return std::min(n->count.load(std::memory_order_acquire), kSlots);
}

// --- Versions (a seqlock per node) ---------------------------------------

bool BTreeIndex::ReadVersion(const Node* n, uint64_t* v) {
  *v = n->version.load(std::memory_order_acquire);
  return (*v & 1) == 0;
}

bool BTreeIndex::Validate(const Node* n, uint64_t v) {
  return n->version.load(std::memory_order_acquire) == v;
}

bool BTreeIndex::TryLock(Node* n, uint64_t v) {
  // The stores made under the lock are release stores, so a reader that
  // loads (acquire) any of them also sees the odd version when it validates.
  return n->version.compare_exchange_strong(v, v + 1, std::memory_order_acquire,
                                            std::memory_order_relaxed);
}

void BTreeIndex::Unlock(Node* n) {
  n->version.store(n->version.load(std::memory_order_acquire) + 1, std::memory_order_release);
}

// --- Lookups --------------------------------------------------------------

bool BTreeIndex::ReadRoot(Node** n, uint64_t* v) const {
  *n = root_.load(std::memory_order_acquire);
  // A root that split is still a node, but no longer the root.
  return ReadVersion(*n, v) && root_.load(std::memory_order_acquire) == *n;
}

bool BTreeIndex::Descend(const Inner* in, uint64_t v, uint32_t idx, Node** child,
                         uint64_t* child_version) {
  Node* c = in->child[idx].load(std::memory_order_acquire);
  PrefetchNode(c);
  if (!Validate(in, v)) return false;
  // The parent is checked again after the child's version is read, so the
  // child did not split between the two.
  if (!ReadVersion(c, child_version) || !Validate(in, v)) return false;
  *child = c;
  return true;
}

const char* BTreeIndex::FindFirstAtLeast(const Slice& ikey) const {
  return Find(MakeSearchKey(ikey), Bound::kAtLeast).entry;
}

BTreeIndex::Position BTreeIndex::Find(const SearchKey& s, Bound bound) const {
  Position pos;
  while (!TryFind(s, bound, &pos)) CpuRelax();
  return pos;
}

// Inner nodes route a key equal to a separator right (the separator is the
// first key of the subtree after it), except for kLess, whose answer lies
// left of it.
bool BTreeIndex::TryFind(const SearchKey& s, Bound bound, Position* pos) const {
  Node* n;
  uint64_t v;
  if (!ReadRoot(&n, &v)) return false;
  while (!n->leaf) {
    const Inner* in = static_cast<const Inner*>(n);
    if (!Descend(in, v, CountBelow(in, Count(in), s, bound != Bound::kLess), &n, &v)) return false;
  }
  const Leaf* leaf = static_cast<const Leaf*>(n);
  const uint32_t count = Count(leaf);
  const bool upward = bound == Bound::kAtLeast || bound == Bound::kGreater;
  const bool or_equal = bound == Bound::kGreater || bound == Bound::kAtMost;
  const uint32_t i = CountBelow(leaf, count, s, or_equal);
  if (upward) {
    if (i >= count) return TryNextLeaf(leaf, v, pos);
    const char* entry = leaf->entry[i].load(std::memory_order_acquire);
    if (!Validate(leaf, v)) return false;
    *pos = Position{leaf, i, v, entry};
    return true;
  }
  // Every leaf but the leftmost starts with a key <= s (its subtree's
  // separator), so the last key below s is in this leaf, if anywhere.
  const char* entry = i == 0 ? nullptr : leaf->entry[i - 1].load(std::memory_order_acquire);
  if (!Validate(leaf, v)) return false;
  *pos = entry == nullptr ? Position{} : Position{leaf, i - 1, v, entry};
  return true;
}

bool BTreeIndex::TryNextLeaf(const Leaf* leaf, uint64_t v, Position* pos) {
  const Leaf* next = leaf->next.load(std::memory_order_acquire);
  if (!Validate(leaf, v)) return false;
  if (next == nullptr) {
    *pos = Position{};
    return true;
  }
  uint64_t next_version;
  if (!ReadVersion(next, &next_version)) return false;
  const uint32_t count = Count(next);
  const char* entry = next->entry[0].load(std::memory_order_acquire);
  if (!Validate(next, next_version)) return false;
  if (count == 0) return false;  // never: only an empty tree's root leaf is empty
  *pos = Position{next, 0, next_version, entry};
  return true;
}

BTreeIndex::Position BTreeIndex::Edge(bool last) const {
  Position pos;
  while (!TryEdge(last, &pos)) CpuRelax();
  return pos;
}

bool BTreeIndex::TryEdge(bool last, Position* pos) const {
  Node* n;
  uint64_t v;
  if (!ReadRoot(&n, &v)) return false;
  while (!n->leaf) {
    const Inner* in = static_cast<const Inner*>(n);
    if (!Descend(in, v, last ? Count(in) : 0, &n, &v)) return false;
  }
  const Leaf* leaf = static_cast<const Leaf*>(n);
  const uint32_t count = Count(leaf);
  const uint32_t i = last ? count - 1 : 0;
  const char* entry = count == 0 ? nullptr : leaf->entry[i].load(std::memory_order_acquire);
  if (!Validate(leaf, v)) return false;
  *pos = entry == nullptr ? Position{} : Position{leaf, i, v, entry};
  return true;
}

// --- Inserts --------------------------------------------------------------

void BTreeIndex::Insert(const char* entry) {
  const SearchKey s = EntryKey(entry);
  while (!TryInsert(s, entry)) CpuRelax();
}

bool BTreeIndex::TryInsert(const SearchKey& s, const char* entry) {
  Node* n;
  uint64_t v;
  if (!ReadRoot(&n, &v)) return false;
  Inner* parent = nullptr;
  uint64_t parent_version = 0;
  while (!n->leaf) {
    Inner* in = static_cast<Inner*>(n);
    const uint32_t count = Count(in);
    if (count == kSlots) {
      // Split a full inner node on the way down, so that a node's parent
      // always has room for a separator; then start over.
      if (!LockForSplit(in, v, parent, parent_version)) return false;
      SplitInner(in, parent);
      UnlockSplit(in, parent);
      return false;
    }
    parent = in;
    parent_version = v;
    if (!Descend(in, v, CountBelow(in, count, s, true), &n, &v)) return false;
  }
  Leaf* leaf = static_cast<Leaf*>(n);
  const uint32_t count = Count(leaf);
  if (count < kSlots) {
    if (!TryLock(leaf, v)) return false;
    // Unchanged since the version was read: count and the order hold.
    const uint32_t pos = CountBelow(leaf, count, s, false);
    for (uint32_t i = count; i > pos; i--) StoreSlot(leaf, i, LoadSlot(leaf, i - 1));
    StoreSlot(leaf, pos, MakeSlot(s, entry));
    leaf->count.store(count + 1, std::memory_order_release);
    Unlock(leaf);
    return true;
  }
  if (!LockForSplit(leaf, v, parent, parent_version)) return false;
  SplitLeafAndInsert(leaf, parent, s, entry);
  UnlockSplit(leaf, parent);
  return true;
}

bool BTreeIndex::LockForSplit(Node* n, uint64_t v, Inner* parent, uint64_t parent_version) const {
  if (parent != nullptr && !TryLock(parent, parent_version)) return false;
  if (!TryLock(n, v)) {
    if (parent != nullptr) Unlock(parent);
    return false;
  }
  // A parentless node that is no longer the root split meanwhile: its new
  // parent is not locked.
  if (parent == nullptr && root_.load(std::memory_order_acquire) != n) {
    Unlock(n);
    return false;
  }
  return true;
}

void BTreeIndex::UnlockSplit(Node* n, Inner* parent) {
  Unlock(n);
  if (parent != nullptr) Unlock(parent);
}

void BTreeIndex::SplitInner(Inner* n, Inner* parent) {
  constexpr uint32_t kMid = kSlots / 2;
  const Slot sep = LoadSlot(n, kMid);
  Inner* right = NewInner();
  for (uint32_t i = kMid + 1; i < kSlots; i++) StoreSlot(right, i - kMid - 1, LoadSlot(n, i));
  for (uint32_t i = kMid + 1; i <= kSlots; i++) {
    right->child[i - kMid - 1].store(n->child[i].load(std::memory_order_acquire),
                                     std::memory_order_release);
  }
  right->count.store(kSlots - kMid - 1, std::memory_order_release);
  n->count.store(kMid, std::memory_order_release);
  AddToParent(parent, n, right, sep);
}

void BTreeIndex::SplitLeafAndInsert(Leaf* leaf, Inner* parent, const SearchKey& s,
                                    const char* entry) {
  constexpr uint32_t kTotal = kSlots + 1;
  Slot all[kTotal];
  const uint32_t pos = CountBelow(leaf, kSlots, s, false);
  for (uint32_t i = 0; i < pos; i++) all[i] = LoadSlot(leaf, i);
  all[pos] = MakeSlot(s, entry);
  for (uint32_t i = pos; i < kSlots; i++) all[i + 1] = LoadSlot(leaf, i);
  Leaf* next = leaf->next.load(std::memory_order_acquire);
  // An append past the last leaf (ascending inserts) leaves the old leaf
  // full rather than half empty.
  const uint32_t keep = (pos == kSlots && next == nullptr) ? kSlots : kTotal / 2;
  Leaf* right = NewLeaf();
  for (uint32_t i = keep; i < kTotal; i++) StoreSlot(right, i - keep, all[i]);
  right->count.store(kTotal - keep, std::memory_order_release);
  right->next.store(next, std::memory_order_release);
  for (uint32_t i = pos; i < keep; i++) StoreSlot(leaf, i, all[i]);
  leaf->count.store(keep, std::memory_order_release);
  leaf->next.store(right, std::memory_order_release);
  AddToParent(parent, leaf, right, all[keep]);
}

void BTreeIndex::AddToParent(Inner* parent, Node* left, Node* right, const Slot& sep) {
  if (parent == nullptr) {
    Inner* root = NewInner();
    StoreSlot(root, 0, sep);
    root->child[0].store(left, std::memory_order_release);
    root->child[1].store(right, std::memory_order_release);
    root->count.store(1, std::memory_order_release);
    root_.store(root, std::memory_order_release);
    return;
  }
  const uint32_t count = Count(parent);
  assert(count < kSlots);
  uint32_t at = 0;
  while (parent->child[at].load(std::memory_order_acquire) != left) at++;
  assert(at <= count);
  for (uint32_t i = count; i > at; i--) {
    StoreSlot(parent, i, LoadSlot(parent, i - 1));
    parent->child[i + 1].store(parent->child[i].load(std::memory_order_acquire),
                               std::memory_order_release);
  }
  StoreSlot(parent, at, sep);
  parent->child[at + 1].store(right, std::memory_order_release);
  parent->count.store(count + 1, std::memory_order_release);
}

// --- Node memory ------------------------------------------------------------

char* BTreeIndex::AllocateNode(size_t bytes) {
  std::lock_guard<std::mutex> lock(alloc_mu_);
  if (chunk_bytes_ == 0) return nodes_.AllocateAligned(bytes);
  if (bytes > chunk_left_) {
    const uintptr_t raw =
        reinterpret_cast<uintptr_t>(nodes_.Allocate(chunk_bytes_ + kNodeAlign - 1));
    chunk_ = reinterpret_cast<char*>(AlignUp(raw, kNodeAlign));
    chunk_left_ = chunk_bytes_;
  }
  char* result = chunk_;
  chunk_ += bytes;
  chunk_left_ -= bytes;
  return result;
}

BTreeIndex::Leaf* BTreeIndex::NewLeaf() {
  constexpr size_t kBytes = AlignUp(sizeof(Leaf), kNodeAlign);
  return new (AllocateNode(kBytes)) Leaf();
}

BTreeIndex::Inner* BTreeIndex::NewInner() {
  constexpr size_t kBytes = AlignUp(sizeof(Inner), kNodeAlign);
  return new (AllocateNode(kBytes)) Inner();
}

// --- Iterator ---------------------------------------------------------------

void BTreeIndex::Iterator::Set(const Position& pos) {
  leaf_ = pos.leaf;
  slot_ = pos.slot;
  version_ = pos.version;
  entry_ = pos.entry;
}

void BTreeIndex::Iterator::Next() {
  assert(Valid());
  const uint32_t count = Count(leaf_);
  if (slot_ + 1 < count) {
    const char* entry = leaf_->entry[slot_ + 1].load(std::memory_order_acquire);
    if (Validate(leaf_, version_)) {
      slot_++;
      entry_ = entry;
      // A hint only: a pointer read without validation is some entry, or null.
      if (slot_ + kScanAhead < count) {
        PrefetchEntry(leaf_->entry[slot_ + kScanAhead].load(std::memory_order_acquire));
      } else if (slot_ + kScanAhead == count) {
        // Near the leaf's end: start loading the next leaf, which the scan
        // reaches in kScanAhead steps.
        if (const Leaf* next = leaf_->next.load(std::memory_order_acquire)) PrefetchNode(next);
      }
      return;
    }
  } else {
    Position pos;
    if (TryNextLeaf(leaf_, version_, &pos)) {
      Set(pos);
      if (leaf_ != nullptr) {  // nullptr: past the last entry
        const uint32_t next_count = Count(leaf_);
        for (uint32_t i = 1; i <= kScanAhead && i < next_count; i++) {
          PrefetchEntry(leaf_->entry[i].load(std::memory_order_acquire));
        }
      }
      return;
    }
  }
  // The leaf changed: search for the successor.
  Set(tree_->Find(EntryKey(entry_), Bound::kGreater));
}

void BTreeIndex::Iterator::Prev() {
  assert(Valid());
  if (slot_ > 0) {
    const char* entry = leaf_->entry[slot_ - 1].load(std::memory_order_acquire);
    if (Validate(leaf_, version_)) {
      slot_--;
      entry_ = entry;
      return;
    }
  }
  Set(tree_->Find(EntryKey(entry_), Bound::kLess));
}

void BTreeIndex::Iterator::Seek(const Slice& target) {
  Set(tree_->Find(MakeSearchKey(target), Bound::kAtLeast));
}

void BTreeIndex::Iterator::SeekForPrev(const Slice& target) {
  Set(tree_->Find(MakeSearchKey(target), Bound::kAtMost));
}

void BTreeIndex::Iterator::SeekToFirst() { Set(tree_->Edge(false)); }

void BTreeIndex::Iterator::SeekToLast() { Set(tree_->Edge(true)); }

}  // namespace accelkv
