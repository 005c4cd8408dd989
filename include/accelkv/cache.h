// Cache: a sharded LRU cache bounded in charged bytes, used for table blocks.
// A Cache may be shared by several databases (Options::block_cache).
//
// Thread safety: all methods are safe for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "accelkv/slice.h"

namespace accelkv {

class Cache {
 public:
  struct Handle {};
  using Deleter = void (*)(const Slice& key, void* value);

  virtual ~Cache() = default;

  // Inserts key -> value charged `charge` bytes; returns a pinned handle that
  // the caller must Release(). deleter runs when the entry leaves the cache
  // and is no longer pinned.
  virtual Handle* Insert(const Slice& key, void* value, size_t charge, Deleter deleter) = 0;
  // A pinned handle, or nullptr on a miss.
  virtual Handle* Lookup(const Slice& key) = 0;
  virtual void Release(Handle* handle) = 0;
  virtual void* Value(Handle* handle) = 0;
  virtual void Erase(const Slice& key) = 0;
  // A fresh id for callers that share the cache and prefix their keys with it.
  virtual uint64_t NewId() = 0;
  virtual size_t TotalCharge() const = 0;
  virtual size_t Capacity() const = 0;
};

// An LRU cache of `capacity_bytes`, split into 2^num_shard_bits shards
// (-1: chosen from the capacity).
std::shared_ptr<Cache> NewLRUCache(size_t capacity_bytes, int num_shard_bits = -1);

}  // namespace accelkv
