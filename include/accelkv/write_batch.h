// WriteBatch: a list of updates applied atomically, in order, by DB::Write.
//
// Thread safety: const methods may be called concurrently; non-const methods
// need external synchronization.
//
// The byte layout of a batch (Rep()) is also the WAL record payload; it is
// specified in docs/FORMAT.md ("WriteBatch").
#pragma once

#include <cstdint>
#include <string>

#include "accelkv/slice.h"
#include "accelkv/status.h"

namespace accelkv {

class WriteBatch {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual void Put(const Slice& key, const Slice& value) = 0;
    virtual void Delete(const Slice& key) = 0;
  };

  WriteBatch();
  WriteBatch(const WriteBatch&) = default;
  WriteBatch& operator=(const WriteBatch&) = default;
  WriteBatch(WriteBatch&&) noexcept = default;
  WriteBatch& operator=(WriteBatch&&) noexcept = default;
  ~WriteBatch() = default;

  void Put(const Slice& key, const Slice& value);
  // It is not an error if the key does not exist.
  void Delete(const Slice& key);
  // Appends every operation of src after those of this batch.
  void Append(const WriteBatch& src);
  void Clear();

  // Number of operations.
  uint32_t Count() const;
  // Bytes of the serialized batch.
  size_t ApproximateSize() const { return rep_.size(); }

  // Calls handler for each operation, in order. Corruption on malformed bytes.
  Status Iterate(Handler* handler) const;

  // The serialized form (docs/FORMAT.md).
  const std::string& Rep() const { return rep_; }

 private:
  friend class WriteBatchInternal;
  std::string rep_;
};

}  // namespace accelkv
