// NewLRUCache (include/accelkv/cache.h): a cache split into 2^bits shards by
// key hash; each shard is an LRU list plus a chained hash table under one
// mutex, bounded in charged bytes. As in LevelDB, an entry is on exactly one
// of two lists: in_use_ (pinned by a caller) or lru_ (only the cache refers to
// it); only lru_ entries are evicted, so pinned entries are never freed.
#include <atomic>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "accelkv/cache.h"
#include "util/hash.h"
#include "util/thread_annotations.h"

namespace accelkv {

namespace {

struct LRUHandle : Cache::Handle {
  void* value;
  Cache::Deleter deleter;
  LRUHandle* next_hash;
  LRUHandle* next;
  LRUHandle* prev;
  size_t charge;
  size_t key_length;
  bool in_cache;  // whether the cache holds a reference
  uint32_t refs;  // the cache's reference (if in_cache) plus pins
  uint32_t hash;
  char key_data[1];  // key_length bytes

  Slice key() const { return Slice(key_data, key_length); }
};

// A chained hash table of LRUHandle*, grown to keep about one entry per bucket.
class HandleTable {
 public:
  HandleTable() { Resize(); }
  ~HandleTable() { delete[] list_; }

  LRUHandle* Lookup(const Slice& key, uint32_t hash) { return *FindPointer(key, hash); }

  // Inserts h; returns the entry it replaced (same key), or nullptr.
  LRUHandle* Insert(LRUHandle* h) {
    LRUHandle** ptr = FindPointer(h->key(), h->hash);
    LRUHandle* old = *ptr;
    h->next_hash = (old == nullptr ? nullptr : old->next_hash);
    *ptr = h;
    if (old == nullptr) {
      ++elems_;
      if (elems_ > length_) Resize();
    }
    return old;
  }

  LRUHandle* Remove(const Slice& key, uint32_t hash) {
    LRUHandle** ptr = FindPointer(key, hash);
    LRUHandle* result = *ptr;
    if (result != nullptr) {
      *ptr = result->next_hash;
      --elems_;
    }
    return result;
  }

 private:
  LRUHandle** FindPointer(const Slice& key, uint32_t hash) {
    LRUHandle** ptr = &list_[hash & (length_ - 1)];
    while (*ptr != nullptr && ((*ptr)->hash != hash || key != (*ptr)->key())) {
      ptr = &(*ptr)->next_hash;
    }
    return ptr;
  }

  void Resize() {
    uint32_t new_length = 4;
    while (new_length < elems_) new_length *= 2;
    auto** new_list = new LRUHandle*[new_length];
    std::memset(new_list, 0, sizeof(new_list[0]) * new_length);
    for (uint32_t i = 0; i < length_; i++) {
      LRUHandle* h = list_[i];
      while (h != nullptr) {
        LRUHandle* next = h->next_hash;
        LRUHandle** ptr = &new_list[h->hash & (new_length - 1)];
        h->next_hash = *ptr;
        *ptr = h;
        h = next;
      }
    }
    delete[] list_;
    list_ = new_list;
    length_ = new_length;
  }

  uint32_t length_ = 0;
  uint32_t elems_ = 0;
  LRUHandle** list_ = nullptr;
};

class LRUShard {
 public:
  LRUShard() {
    lru_.next = lru_.prev = &lru_;
    in_use_.next = in_use_.prev = &in_use_;
  }
  ~LRUShard() {
    assert(in_use_.next == &in_use_);  // no handle may be pinned at destruction
    for (LRUHandle* e = lru_.next; e != &lru_;) {
      LRUHandle* next = e->next;
      assert(e->in_cache && e->refs == 1);
      e->in_cache = false;
      Unref(e);
      e = next;
    }
  }

  void SetCapacity(size_t capacity) { capacity_ = capacity; }

  Cache::Handle* Insert(const Slice& key, uint32_t hash, void* value, size_t charge,
                        Cache::Deleter deleter) {
    auto* e = static_cast<LRUHandle*>(std::malloc(sizeof(LRUHandle) - 1 + key.size()));
    e->value = value;
    e->deleter = deleter;
    e->charge = charge;
    e->key_length = key.size();
    e->hash = hash;
    e->in_cache = false;
    e->refs = 1;  // the returned handle
    e->next_hash = e->next = e->prev = nullptr;
    if (!key.empty()) std::memcpy(e->key_data, key.data(), key.size());

    std::lock_guard<std::mutex> l(mu_);
    if (capacity_ > 0) {
      e->refs++;
      e->in_cache = true;
      Append(&in_use_, e);
      usage_ += charge;
      FinishErase(table_.Insert(e));
    }
    EvictToCapacity();
    return e;
  }

  Cache::Handle* Lookup(const Slice& key, uint32_t hash) {
    std::lock_guard<std::mutex> l(mu_);
    LRUHandle* e = table_.Lookup(key, hash);
    if (e != nullptr) Ref(e);
    return e;
  }

  void Release(Cache::Handle* handle) {
    std::lock_guard<std::mutex> l(mu_);
    Unref(static_cast<LRUHandle*>(handle));
    EvictToCapacity();
  }

  void Erase(const Slice& key, uint32_t hash) {
    std::lock_guard<std::mutex> l(mu_);
    FinishErase(table_.Remove(key, hash));
  }

  size_t TotalCharge() {
    std::lock_guard<std::mutex> l(mu_);
    return usage_;
  }

 private:
  static void Append(LRUHandle* list, LRUHandle* e) {
    e->next = list;
    e->prev = list->prev;
    e->prev->next = e;
    e->next->prev = e;
  }
  static void Remove(LRUHandle* e) {
    e->next->prev = e->prev;
    e->prev->next = e->next;
  }

  void Ref(LRUHandle* e) REQUIRES(mu_) {
    if (e->refs == 1 && e->in_cache) {  // leaving lru_ for in_use_
      Remove(e);
      Append(&in_use_, e);
    }
    e->refs++;
  }

  void Unref(LRUHandle* e) REQUIRES(mu_) {
    assert(e->refs > 0);
    e->refs--;
    if (e->refs == 0) {
      assert(!e->in_cache);
      e->deleter(e->key(), e->value);
      std::free(e);
    } else if (e->in_cache && e->refs == 1) {  // no longer pinned
      Remove(e);
      Append(&lru_, e);
    }
  }

  // e was removed from table_; drops the cache's reference.
  void FinishErase(LRUHandle* e) REQUIRES(mu_) {
    if (e == nullptr) return;
    assert(e->in_cache);
    Remove(e);
    e->in_cache = false;
    usage_ -= e->charge;
    Unref(e);
  }

  void EvictToCapacity() REQUIRES(mu_) {
    while (usage_ > capacity_ && lru_.next != &lru_) {
      LRUHandle* old = lru_.next;
      assert(old->refs == 1);
      FinishErase(table_.Remove(old->key(), old->hash));
    }
  }

  size_t capacity_ = 0;
  std::mutex mu_;
  size_t usage_ GUARDED_BY(mu_) = 0;
  LRUHandle lru_ GUARDED_BY(mu_);     // oldest first; refs == 1 and in_cache
  LRUHandle in_use_ GUARDED_BY(mu_);  // pinned; refs >= 2 and in_cache
  HandleTable table_ GUARDED_BY(mu_);
};

class ShardedLRUCache final : public Cache {
 public:
  ShardedLRUCache(size_t capacity, int num_shard_bits)
      : capacity_(capacity),
        shard_bits_(num_shard_bits),
        shards_(new LRUShard[size_t{1} << num_shard_bits]) {
    const size_t n = size_t{1} << num_shard_bits;
    // Split exactly, so the shards' capacities add up to capacity.
    for (size_t i = 0; i < n; ++i) shards_[i].SetCapacity(capacity / n + (i < capacity % n));
  }

  Handle* Insert(const Slice& key, void* value, size_t charge, Deleter deleter) override {
    const uint32_t h = HashOf(key);
    return shards_[Shard(h)].Insert(key, h, value, charge, deleter);
  }
  Handle* Lookup(const Slice& key) override {
    const uint32_t h = HashOf(key);
    return shards_[Shard(h)].Lookup(key, h);
  }
  void Release(Handle* handle) override {
    auto* e = static_cast<LRUHandle*>(handle);
    shards_[Shard(e->hash)].Release(handle);
  }
  void* Value(Handle* handle) override { return static_cast<LRUHandle*>(handle)->value; }
  void Erase(const Slice& key) override {
    const uint32_t h = HashOf(key);
    shards_[Shard(h)].Erase(key, h);
  }
  uint64_t NewId() override { return last_id_.fetch_add(1, std::memory_order_relaxed) + 1; }
  size_t TotalCharge() const override {
    size_t total = 0;
    for (size_t i = 0; i < (size_t{1} << shard_bits_); ++i) total += shards_[i].TotalCharge();
    return total;
  }
  size_t Capacity() const override { return capacity_; }

 private:
  static uint32_t HashOf(const Slice& key) {
    return static_cast<uint32_t>(Hash64(key.data(), key.size()));
  }
  uint32_t Shard(uint32_t hash) const { return shard_bits_ == 0 ? 0 : hash >> (32 - shard_bits_); }

  const size_t capacity_;
  const int shard_bits_;
  std::unique_ptr<LRUShard[]> shards_;
  std::atomic<uint64_t> last_id_{0};
};

}  // namespace

std::shared_ptr<Cache> NewLRUCache(size_t capacity_bytes, int num_shard_bits) {
  constexpr int kMaxShardBits = 6;
  constexpr size_t kMinShardBytes = 512 << 10;
  if (num_shard_bits < 0) {
    num_shard_bits = 0;
    while (num_shard_bits < kMaxShardBits &&
           (capacity_bytes >> (num_shard_bits + 1)) >= kMinShardBytes) {
      ++num_shard_bits;
    }
  }
  if (num_shard_bits > 20) num_shard_bits = 20;
  return std::make_shared<ShardedLRUCache>(capacity_bytes, num_shard_bits);
}

}  // namespace accelkv
