// Iterator: an ordered cursor over key/value pairs.
//
// Thread safety: an Iterator may be used by one thread at a time. The data an
// iterator yields is a consistent snapshot taken when it was created (or the
// ReadOptions::snapshot it was given); later writes are not visible.
#pragma once

#include <functional>
#include <vector>

#include "accelkv/slice.h"
#include "accelkv/status.h"

namespace accelkv {

class Iterator {
 public:
  Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  // Runs the registered cleanup functions in reverse order of registration.
  virtual ~Iterator();

  // True when positioned at an entry. False after stepping past either end,
  // or on error (check status()).
  virtual bool Valid() const = 0;

  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // Positions at the first entry with key >= target.
  virtual void Seek(const Slice& target) = 0;
  // Positions at the last entry with key <= target.
  virtual void SeekForPrev(const Slice& target) = 0;

  // REQUIRES: Valid()
  virtual void Next() = 0;
  // REQUIRES: Valid()
  virtual void Prev() = 0;

  // REQUIRES: Valid(). The returned bytes stay valid until the iterator moves.
  virtual Slice key() const = 0;
  // REQUIRES: Valid(). The returned bytes stay valid until the iterator moves.
  virtual Slice value() const = 0;

  // OK, or the first error met (for example a Corruption in a block).
  virtual Status status() const = 0;

  // Registers a function run when this iterator is destroyed.
  void RegisterCleanup(std::function<void()> fn) { cleanups_.push_back(std::move(fn)); }

 private:
  std::vector<std::function<void()>> cleanups_;
};

// An iterator over nothing, with the given status.
Iterator* NewEmptyIterator();
Iterator* NewErrorIterator(const Status& status);

}  // namespace accelkv
