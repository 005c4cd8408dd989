// SkipList: a sorted set of byte keys stored inline in arena-allocated nodes,
// the index of a memtable.
//
// A key lives in the same arena allocation as its node (the next pointers sit
// in front of the node, the key bytes right behind it), so an insert costs one
// arena allocation. Keys are never removed; memory is freed with the arena.
//
// The order is given by Cmp, which must provide
//   using DecodedKey = ...;                             // a cheap search target
//   DecodedKey Decode(const char* key) const;           // a stored key as a target
//   int operator()(const char* key, const DecodedKey& target) const;  // <0, 0, >0
// and be consistent: cmp(a, Decode(b)) orders a and b.
//
// Thread safety: one writer at a time (AllocateKey and Insert need external
// synchronization), any number of readers concurrently with it and with each
// other, without locks. A node's key and its lower links are written before
// the node is published with a release store; readers load links with acquire
// loads, so they see either the whole node or not the node. A reader therefore
// always observes a sorted prefix-closed snapshot of every level. The arena
// (and so the list) must outlive every reader and iterator.
//
// Concurrent inserts: InsertConcurrently may run on many threads at once (and
// beside readers), for keys allocated beforehand by the one writer; it links
// each level with a compare-and-swap, bottom-up, and on a lost race searches
// on from its predecessor on that level (RocksDB's InlineSkipList). It must
// not overlap Insert; the one writer may AllocateKey meanwhile (a key not yet
// inserted is reachable by no one).
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <new>

#include "util/arena.h"
#include "util/random.h"

namespace accelkv {

template <class Cmp>
class SkipList {
 private:
  struct Node;

 public:
  using DecodedKey = typename Cmp::DecodedKey;

  // The list allocates its nodes (and a head node now) from *arena, which
  // must outlive it.
  SkipList(Cmp cmp, Arena* arena);
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;

  // Writer only. Returns key_size writable bytes for the next key; fill them,
  // then pass the pointer to Insert. A buffer that is never inserted is only
  // wasted arena space.
  char* AllocateKey(size_t key_size);

  // Writer only. Publishes a key returned by AllocateKey and filled since.
  // REQUIRES: no key comparing equal to it is in the list.
  void Insert(const char* key);

  // Any number of threads at once, but not during Insert: publishes a key returned by AllocateKey
  // and filled since. REQUIRES: no key comparing equal to it is in the list or being inserted.
  void InsertConcurrently(const char* key);

  // True if a key comparing equal to target is in the list.
  bool Contains(const DecodedKey& target) const;

  // The first key >= target, or nullptr. The point-lookup fast path.
  const char* FindFirstAtLeast(const DecodedKey& target) const {
    Node* x = FindGreaterOrEqual(target, nullptr);
    return x == nullptr ? nullptr : x->Key();
  }

  // A cursor over the list. Keys inserted while it is used may or may not be
  // seen. One thread at a time per Iterator.
  class Iterator {
   public:
    explicit Iterator(const SkipList* list) : list_(list), node_(nullptr) {}

    bool Valid() const { return node_ != nullptr; }
    // REQUIRES: Valid()
    const char* key() const {
      assert(Valid());
      return node_->Key();
    }
    // REQUIRES: Valid()
    void Next() {
      assert(Valid());
      node_ = node_->Next(0);
    }
    // REQUIRES: Valid(). O(log n): searches for the predecessor.
    void Prev() {
      assert(Valid());
      node_ = list_->Real(list_->FindLessThan(list_->cmp_.Decode(node_->Key())));
    }
    // First key >= target.
    void Seek(const DecodedKey& target) { node_ = list_->FindGreaterOrEqual(target, nullptr); }
    // Last key <= target.
    void SeekForPrev(const DecodedKey& target) {
      node_ = list_->Real(list_->FindLastAtMost(target));
    }
    void SeekToFirst() { node_ = list_->head_->Next(0); }
    void SeekToLast() { node_ = list_->Real(list_->FindLast()); }

   private:
    const SkipList* list_;
    Node* node_;
  };

 private:
  static constexpr int kMaxHeight = 12;
  static constexpr unsigned kBranching = 4;
  using Link = std::atomic<Node*>;

  // The level-0 link; links of levels 1..height-1 are at addresses below it
  // (level n at &next0 - n), the key bytes right after the node.
  struct Node {
    Link next0;

    const char* Key() const { return reinterpret_cast<const char*>(this + 1); }
    char* MutableKey() { return reinterpret_cast<char*>(this + 1); }
    Link* Slot(int n) { return &next0 - n; }
    Node* Next(int n) { return Slot(n)->load(std::memory_order_acquire); }
    void SetNext(int n, Node* x) { Slot(n)->store(x, std::memory_order_release); }
    Node* NoBarrierNext(int n) { return Slot(n)->load(std::memory_order_relaxed); }
    void NoBarrierSetNext(int n, Node* x) { Slot(n)->store(x, std::memory_order_relaxed); }
    bool CasNext(int n, Node* expected, Node* x) {
      return Slot(n)->compare_exchange_strong(expected, x, std::memory_order_release,
                                              std::memory_order_relaxed);
    }
  };

  Node* NewNode(int height, size_t key_size);
  int RandomHeight();
  int GetMaxHeight() const { return max_height_.load(std::memory_order_relaxed); }
  Node* Real(Node* x) const { return x == head_ ? nullptr : x; }

  // The first node >= target, or nullptr; fills prev[level] with the last
  // node < target on each level below GetMaxHeight() when prev != nullptr.
  Node* FindGreaterOrEqual(const DecodedKey& target, Node** prev) const;
  // On level: the last node < target at or after before (which is < target
  // or head_) into *prev, its successor into *next.
  void FindSpliceForLevel(const DecodedKey& target, Node* before, int level, Node** prev,
                          Node** next) const;
  // The last node < target, or head_.
  Node* FindLessThan(const DecodedKey& target) const;
  // The last node <= target, or head_.
  Node* FindLastAtMost(const DecodedKey& target) const;
  // The last node, or head_.
  Node* FindLast() const;

  Cmp const cmp_;
  Arena* const arena_;
  Node* const head_;
  std::atomic<int> max_height_;  // only grows; stale reads are harmless
  Random rnd_;                   // writer only
};

template <class Cmp>
SkipList<Cmp>::SkipList(Cmp cmp, Arena* arena)
    : cmp_(cmp), arena_(arena), head_(NewNode(kMaxHeight, 0)), max_height_(1), rnd_(0xdeadbeef) {}

template <class Cmp>
typename SkipList<Cmp>::Node* SkipList<Cmp>::NewNode(int height, size_t key_size) {
  const size_t upper_links = sizeof(Link) * static_cast<size_t>(height - 1);
  char* raw = arena_->AllocateAligned(upper_links + sizeof(Node) + key_size);
  for (int i = 0; i < height; i++) {
    new (raw + sizeof(Link) * static_cast<size_t>(i)) Link(nullptr);
  }
  return reinterpret_cast<Node*>(raw + upper_links);
}

template <class Cmp>
int SkipList<Cmp>::RandomHeight() {
  int height = 1;
  while (height < kMaxHeight && rnd_.Next() % kBranching == 0) height++;
  return height;
}

template <class Cmp>
char* SkipList<Cmp>::AllocateKey(size_t key_size) {
  const int height = RandomHeight();
  Node* x = NewNode(height, key_size);
  // The height rides in the unpublished level-0 link until Insert.
  x->NoBarrierSetNext(0, reinterpret_cast<Node*>(static_cast<uintptr_t>(height)));
  return x->MutableKey();
}

template <class Cmp>
void SkipList<Cmp>::Insert(const char* key) {
  Node* x = reinterpret_cast<Node*>(const_cast<char*>(key)) - 1;
  const int height = static_cast<int>(reinterpret_cast<uintptr_t>(x->NoBarrierNext(0)));
  assert(height >= 1 && height <= kMaxHeight);

  Node* prev[kMaxHeight];
  [[maybe_unused]] Node* next = FindGreaterOrEqual(cmp_.Decode(key), prev);
  assert(next == nullptr || cmp_(next->Key(), cmp_.Decode(key)) != 0);

  const int max_height = GetMaxHeight();
  if (height > max_height) {
    for (int i = max_height; i < height; i++) prev[i] = head_;
    // A reader that sees the new height before the links finds head_'s
    // nullptr links on the new levels and just drops down a level.
    max_height_.store(height, std::memory_order_relaxed);
  }
  for (int i = 0; i < height; i++) {
    // x is not yet reachable: its own links need no barrier; the release
    // store into prev[i] publishes x together with its key and lower links.
    x->NoBarrierSetNext(i, prev[i]->NoBarrierNext(i));
    prev[i]->SetNext(i, x);
  }
}

template <class Cmp>
void SkipList<Cmp>::InsertConcurrently(const char* key) {
  Node* x = reinterpret_cast<Node*>(const_cast<char*>(key)) - 1;
  const int height = static_cast<int>(reinterpret_cast<uintptr_t>(x->NoBarrierNext(0)));
  assert(height >= 1 && height <= kMaxHeight);
  const DecodedKey target = cmp_.Decode(key);

  int max_height = GetMaxHeight();
  while (height > max_height &&
         !max_height_.compare_exchange_weak(max_height, height, std::memory_order_relaxed)) {
  }
  // The splice, top-down from the highest level this insert or any before it
  // uses: a node found on level i + 1 is linked on level i too (links go in
  // bottom-up), so it is a valid start there.
  Node* prev[kMaxHeight];
  Node* next[kMaxHeight];
  Node* before = head_;
  for (int i = std::max(height, max_height) - 1; i >= 0; --i) {
    Node* p = nullptr;
    Node* n = nullptr;
    FindSpliceForLevel(target, before, i, &p, &n);
    if (i < height) {
      prev[i] = p;
      next[i] = n;
    }
    before = p;
  }
  for (int i = 0; i < height; ++i) {
    while (true) {
      assert(next[i] == nullptr || cmp_(next[i]->Key(), target) != 0);
      // x is unreachable on level i until the CAS: its own link needs no
      // barrier; the release CAS publishes x with its key and lower links.
      x->NoBarrierSetNext(i, next[i]);
      if (prev[i]->CasNext(i, next[i], x)) break;
      // Another insert linked a node after prev[i]: search on from there.
      FindSpliceForLevel(target, prev[i], i, &prev[i], &next[i]);
    }
  }
}

template <class Cmp>
void SkipList<Cmp>::FindSpliceForLevel(const DecodedKey& target, Node* before, int level,
                                       Node** prev, Node** next) const {
  while (true) {
    Node* n = before->Next(level);
    if (n != nullptr) __builtin_prefetch(n->NoBarrierNext(level));  // as in FindGreaterOrEqual
    if (n == nullptr || cmp_(n->Key(), target) >= 0) {
      *prev = before;
      *next = n;
      return;
    }
    before = n;
  }
}

template <class Cmp>
bool SkipList<Cmp>::Contains(const DecodedKey& target) const {
  Node* x = FindGreaterOrEqual(target, nullptr);
  return x != nullptr && cmp_(x->Key(), target) == 0;
}

template <class Cmp>
typename SkipList<Cmp>::Node* SkipList<Cmp>::FindGreaterOrEqual(const DecodedKey& target,
                                                                Node** prev) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  Node* known_not_less = nullptr;  // skips re-comparing the node that stopped the level above
  while (true) {
    Node* next = x->Next(level);
    // The node after next, the one compared with if next < target, is
    // fetched while next's key is compared (RocksDB's InlineSkipList): the
    // search is a chain of cache misses, and this overlaps two of them.
    if (next != nullptr) __builtin_prefetch(next->NoBarrierNext(level));
    if (next != known_not_less && next != nullptr && cmp_(next->Key(), target) < 0) {
      x = next;
    } else {
      if (prev != nullptr) prev[level] = x;
      if (level == 0) return next;
      known_not_less = next;
      level--;
    }
  }
}

template <class Cmp>
typename SkipList<Cmp>::Node* SkipList<Cmp>::FindLessThan(const DecodedKey& target) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  Node* known_not_less = nullptr;
  while (true) {
    Node* next = x->Next(level);
    if (next != known_not_less && next != nullptr && cmp_(next->Key(), target) < 0) {
      x = next;
    } else {
      if (level == 0) return x;
      known_not_less = next;
      level--;
    }
  }
}

template <class Cmp>
typename SkipList<Cmp>::Node* SkipList<Cmp>::FindLastAtMost(const DecodedKey& target) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  Node* known_greater = nullptr;
  while (true) {
    Node* next = x->Next(level);
    if (next != known_greater && next != nullptr && cmp_(next->Key(), target) <= 0) {
      x = next;
    } else {
      if (level == 0) return x;
      known_greater = next;
      level--;
    }
  }
}

template <class Cmp>
typename SkipList<Cmp>::Node* SkipList<Cmp>::FindLast() const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (next != nullptr) {
      x = next;
    } else {
      if (level == 0) return x;
      level--;
    }
  }
}

}  // namespace accelkv
