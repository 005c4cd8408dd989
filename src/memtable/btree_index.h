// BTreeIndex: a B+-tree over memtable entries, the memtable's index when its
// user comparator is bytewise (the skiplist serves any other comparator).
//
// Entries are MemTable's encoding (memtable.h): varint32 internal_key_length
// | internal key | ...; the tree orders them by internal key (user key
// bytewise ascending, then sequence and type descending). It stores entry
// pointers, never copies of entries; entries must outlive the tree.
//
// A node holds up to kSlots keys. Each slot keeps the first 16 bytes of its
// user key inline (zero-padded, as two big-endian words) and a length code
// (the length, or 17 for longer keys), which order any two user keys whose
// first 16 bytes differ or one of which has at most 16 bytes (see
// CompareSlot); only ties are compared through the entry. A lookup therefore
// visits a few 512-byte nodes instead of the skiplist's dozens of scattered
// nodes (an estimate on db_bench keys: inserts 2.9x, lookups 2.8x faster:
// bench/results/2026-11-25-dev-memtable-btree-estimate.md).
//
// Concurrency (optimistic lock coupling, Leis et al., DaMoN 2016): every
// node has a version word, odd while a writer holds the node. Readers take
// no locks: they read a node's version, its fields (atomics), then
// check the version again, and start over from the root when it changed.
// Writers lock only the nodes they change (the leaf; a full node and its
// parent for a split, done on the way down for inner nodes so a parent always
// has room), so any number of Insert calls may run at once, beside readers.
// Nodes are never freed or merged before the tree dies, and a split keeps the
// lower half in place, so a stale pointer is still a node and entries only
// ever move right; the first key of every subtree but the leftmost is the
// separator in front of it in its parent.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "accelkv/slice.h"
#include "util/arena.h"

namespace accelkv {

class BTreeIndex {
 private:
  struct Node;
  struct Leaf;
  struct Inner;
  struct Position;

 public:
  // huge_pages: node memory in 2 MiB huge-page blocks (Arena).
  explicit BTreeIndex(bool huge_pages);
  BTreeIndex(const BTreeIndex&) = delete;
  BTreeIndex& operator=(const BTreeIndex&) = delete;

  // Any number of threads at once, beside readers: indexes an encoded entry
  // (written before the call). REQUIRES: no entry with an equal internal key
  // is in the tree or being inserted.
  void Insert(const char* entry);

  // The first entry whose internal key is >= ikey, or nullptr.
  // REQUIRES: ikey.size() >= 8.
  const char* FindFirstAtLeast(const Slice& ikey) const;

  // Bytes of node memory (whole arena blocks).
  size_t MemoryUsage() const { return nodes_.MemoryUsage(); }

  // A cursor over the entries. Entries inserted while it is used may or may
  // not be seen; every entry inserted before a positioning call is. One
  // thread at a time per Iterator.
  class Iterator {
   public:
    explicit Iterator(const BTreeIndex* tree) : tree_(tree) {}

    bool Valid() const { return entry_ != nullptr; }
    // REQUIRES: Valid(). The entry.
    const char* key() const { return entry_; }
    // REQUIRES: Valid(). O(1) unless the leaf changed since it was read.
    void Next();
    // REQUIRES: Valid(). O(log n) when the leaf changed or at a leaf's first
    // entry.
    void Prev();
    // First entry >= target (an internal key).
    void Seek(const Slice& target);
    // Last entry <= target (an internal key).
    void SeekForPrev(const Slice& target);
    void SeekToFirst();
    void SeekToLast();

   private:
    void Set(const Position& pos);

    const BTreeIndex* const tree_;
    const Leaf* leaf_ = nullptr;  // holds entry_ at slot_ as of version_
    uint32_t slot_ = 0;
    uint64_t version_ = 0;
    const char* entry_ = nullptr;
  };

  static constexpr uint32_t kSlots = 19;  // a leaf fills 512 bytes

 private:
  // An internal key prepared for comparison with slots.
  struct SearchKey {
    uint64_t hi, lo;  // user key bytes 0-7 and 8-15, big-endian, zero-padded
    uint32_t len_code;
    Slice user_key;
    uint64_t trailer;  // sequence << 8 | type
  };
  // One slot's contents.
  struct Slot {
    uint64_t hi, lo;
    const char* entry;
    uint8_t len_code;
  };
  // Where a search lands in a leaf.
  struct Position {
    const Leaf* leaf = nullptr;
    uint32_t slot = 0;
    uint64_t version = 0;
    const char* entry = nullptr;  // nullptr: none
  };
  enum class Bound { kAtLeast, kGreater, kLess, kAtMost };

  static SearchKey MakeSearchKey(const Slice& ikey);
  static SearchKey EntryKey(const char* entry);
  static Slot MakeSlot(const SearchKey& s, const char* entry);
  static Slot LoadSlot(const Node* n, uint32_t i);
  static void StoreSlot(Node* n, uint32_t i, const Slot& slot);
  // <0, 0, >0: slot i of n against s. Any result (never a crash) when n
  // changes meanwhile; the caller's version check then fails.
  static int CompareSlot(const Node* n, uint32_t i, const SearchKey& s);
  // CompareSlot's rest once the 16-byte prefixes are equal (inlined where
  // CountBelow compares; this part is rare among distinct keys).
  static int CompareSlotTie(const Node* n, uint32_t i, const SearchKey& s);
  // The number of slots (of the first count) that compare < s, or <= s
  // when or_equal.
  static uint32_t CountBelow(const Node* n, uint32_t count, const SearchKey& s, bool or_equal);
  // The node's slot count, at most kSlots.
  static uint32_t Count(const Node* n);

  // Version words. ReadVersion: false while a writer holds n. Validate: n
  // is still at version v (everything read from n since is consistent).
  static bool ReadVersion(const Node* n, uint64_t* v);
  static bool Validate(const Node* n, uint64_t v);
  // Takes n's write lock if n is still at version v.
  static bool TryLock(Node* n, uint64_t v);
  static void Unlock(Node* n);

  // The entry at the bound of s (entry nullptr if none), found without locks.
  Position Find(const SearchKey& s, Bound bound) const;
  // One attempt of Find; false if a node changed under it.
  bool TryFind(const SearchKey& s, Bound bound, Position* pos) const;
  // The first or last entry.
  Position Edge(bool last) const;
  bool TryEdge(bool last, Position* pos) const;
  // The first entry of the leaf after leaf (whose version is v), or none.
  static bool TryNextLeaf(const Leaf* leaf, uint64_t v, Position* pos);
  // Moves from inner node in (at version v) to its child idx and that
  // child's version; false if either changed meanwhile.
  static bool Descend(const Inner* in, uint64_t v, uint32_t idx, Node** child,
                      uint64_t* child_version);
  // The root and its version, consistent with root_.
  bool ReadRoot(Node** n, uint64_t* v) const;

  bool TryInsert(const SearchKey& s, const char* entry);
  // Locks parent (if any) at parent_version, then n at v, for a split of n;
  // false, holding neither, if either changed or n has no parent and is no
  // longer the root. UnlockSplit releases both.
  bool LockForSplit(Node* n, uint64_t v, Inner* parent, uint64_t parent_version) const;
  static void UnlockSplit(Node* n, Inner* parent);
  // Splits full inner node n under locked parent (nullptr: n is the root).
  void SplitInner(Inner* n, Inner* parent);
  // Splits full leaf under locked parent and inserts s -> entry.
  void SplitLeafAndInsert(Leaf* leaf, Inner* parent, const SearchKey& s, const char* entry);
  // Links right (a new sibling of left whose first key is sep) into locked
  // parent, or grows a new root.
  void AddToParent(Inner* parent, Node* left, Node* right, const Slot& sep);

  Leaf* NewLeaf();
  Inner* NewInner();
  char* AllocateNode(size_t bytes);

  const size_t chunk_bytes_;  // node memory taken from nodes_ at a time (0: a node)
  std::mutex alloc_mu_;       // guards nodes_ and chunk_ (inserts run on many threads)
  Arena nodes_;
  char* chunk_ = nullptr;  // 64-byte aligned space for nodes, from nodes_ (huge pages)
  size_t chunk_left_ = 0;
  std::atomic<Node*> root_;
};

}  // namespace accelkv
