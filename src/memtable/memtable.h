// MemTable: the in-memory, sorted buffer of recent writes, keyed by internal
// key (util/internal_key.h); flushed to an L0 table when full.
//
// Each entry is one arena allocation (behind a skiplist node when the
// skiplist indexes it):
//
//   varint32 internal_key_length | user_key | fixed64 (sequence << 8 | type)
//   varint32 value_length | value                  (value empty for deletions)
//
// ordered by internal key (user key ascending, then sequence descending).
// The index is a B+-tree (btree_index.h) when the user comparator is
// bytewise and the caller asks for it, else a skiplist (skiplist.h).
// Entries are never removed or changed; memory is freed when the last
// reference goes.
//
// Thread safety: one writer at a time (Add and Prepare need external
// synchronization; the DB's write leader), any number of concurrent readers
// (Get, iterators, ApproximateMemoryUsage, NumEntries, NumDeletions) without
// locks. Entries the writer prepared may be linked by any number of threads
// at once (Link; the write group's writers, see MemTableLinkJob), but not
// while Add runs. Ref and Unref need external synchronization (the DB mutex).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "accelkv/iterator.h"
#include "accelkv/status.h"
#include "memtable/btree_index.h"
#include "memtable/skiplist.h"
#include "util/arena.h"
#include "util/internal_key.h"

namespace accelkv {

class MemTable {
 public:
  // The comparator must outlive the memtable. Starts with zero references.
  // huge_arena: the entries (and B+-tree nodes) live in 2 MiB huge-page
  // blocks (Arena). btree: index the entries with a B+-tree when the user
  // comparator is bytewise (Options::memtable_btree_index); a skiplist
  // otherwise.
  explicit MemTable(const InternalKeyComparator& cmp, bool huge_arena = false, bool btree = true);
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  void Ref() { ++refs_; }
  // Deletes the memtable when the last reference goes.
  void Unref();

  // Bytes held by the arenas (entries and index nodes).
  size_t ApproximateMemoryUsage() const {
    return arena_.MemoryUsage() + (btree_ ? btree_->MemoryUsage() : 0);
  }
  // True if a B+-tree indexes the entries.
  bool UsesBTree() const { return btree_ != nullptr; }
  // Entries added (values and deletions).
  uint64_t NumEntries() const { return num_entries_.load(std::memory_order_relaxed); }
  uint64_t NumDeletions() const { return num_deletions_.load(std::memory_order_relaxed); }

  // An iterator over internal keys -> values in internal-key order. The
  // memtable must stay referenced while the iterator lives; key() and
  // value() stay valid for as long as the memtable does. Its status() is
  // always OK. Seek targets must be internal keys (>= 8 bytes).
  Iterator* NewIterator();

  // Adds (key, seq, type) -> value (value ignored for deletions).
  // REQUIRES: seq <= kMaxSequenceNumber; no entry with the same key and seq.
  void Add(SequenceNumber seq, ValueType type, const Slice& key, const Slice& value);

  // The writer role: encodes (key, seq, type) -> value into the arena and
  // counts it, without making it visible; Link makes it visible. Add is
  // Prepare followed by a single-writer link.
  // REQUIRES: as Add.
  const char* Prepare(SequenceNumber seq, ValueType type, const Slice& key, const Slice& value);
  // Any number of threads at once, beside readers, Prepare and one another,
  // but not beside Add: makes an entry returned by Prepare visible.
  void Link(const char* entry) {
    if (btree_) {
      btree_->Insert(entry);
    } else {
      table_->InsertConcurrently(entry);
    }
  }

  // Looks up key.user_key() as of key's sequence. True if the memtable
  // decides the key: its newest visible entry is a value (copied to *value,
  // *s = OK) or a deletion (*s = NotFound). False, with *value and *s
  // untouched, if no entry for the user key is visible at that sequence.
  bool Get(const LookupKey& key, std::string* value, Status* s);

  // The skiplist order over encoded entries; search targets are internal keys.
  // Bytewise user comparators are compared inline, without virtual calls.
  struct KeyComparator {
    using DecodedKey = Slice;  // an internal key

    const Comparator* user_comparator;
    bool bytewise;

    // The internal key of an encoded entry.
    static Slice Decode(const char* entry) {
      const auto first = static_cast<unsigned char>(entry[0]);
      if (first < 128) return Slice(entry + 1, first);
      uint32_t len = 0;
      const char* p = GetVarint32Ptr(entry, entry + 5, &len);
      return Slice(p, len);
    }
    int operator()(const char* entry, const Slice& ikey) const {
      return CompareInternalKeys(Decode(entry), ikey);
    }
    int CompareUserKeys(const Slice& a, const Slice& b) const {
      return bytewise ? a.compare(b) : user_comparator->Compare(a, b);
    }
    // REQUIRES: a.size() >= 8 and b.size() >= 8
    int CompareInternalKeys(const Slice& a, const Slice& b) const {
      int r = CompareUserKeys(ExtractUserKey(a), ExtractUserKey(b));
      if (r == 0) {
        const uint64_t anum = ExtractTrailer(a);
        const uint64_t bnum = ExtractTrailer(b);
        r = anum > bnum ? -1 : (anum < bnum ? 1 : 0);
      }
      return r;
    }
  };

 private:
  using Table = SkipList<KeyComparator>;
  template <class IndexIterator>
  class MemTableIterator;

  ~MemTable() = default;  // via Unref

  const KeyComparator comparator_;
  int refs_ = 0;
  Arena arena_;
  std::optional<Table> table_;         // the index, unless btree_ is set
  std::unique_ptr<BTreeIndex> btree_;  // the index, if not the skiplist
  std::atomic<uint64_t> num_entries_{0};
  std::atomic<uint64_t> num_deletions_{0};
};

}  // namespace accelkv
