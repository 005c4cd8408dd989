// DB: a persistent ordered map from keys to values.
//
// Thread safety: a DB may be used by many threads at once without external
// synchronization. Writes are ordered by sequence number; a read sees every
// write acknowledged before it began.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/iterator.h"
#include "accelkv/options.h"
#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "accelkv/write_batch.h"

namespace accelkv {

// A consistent, read-only view of the database at one sequence number.
class Snapshot {
 protected:
  virtual ~Snapshot() = default;
};

class DB {
 public:
  // Opens the database in directory `name`. On success *dbptr holds it; on
  // failure *dbptr is reset and the Status says why.
  static Status Open(const Options& options, const std::string& name, std::unique_ptr<DB>* dbptr);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  // Closes the database if Close() was not called (its Status is lost).
  virtual ~DB() = default;

  virtual Status Put(const WriteOptions& options, const Slice& key, const Slice& value) = 0;
  // It is not an error if the key did not exist.
  virtual Status Delete(const WriteOptions& options, const Slice& key) = 0;
  // Applies the batch atomically.
  virtual Status Write(const WriteOptions& options, const WriteBatch& batch) = 0;

  // OK and *value set if found; NotFound if absent.
  virtual Status Get(const ReadOptions& options, const Slice& key, std::string* value) = 0;
  // Looks up many keys at one snapshot; result i is the Status of keys[i]
  // (values->at(i) set when OK). Lookups are batched per table.
  virtual std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                                       std::vector<std::string>* values) = 0;

  // An iterator over the database (or the snapshot in options). The iterator
  // must be destroyed before the DB.
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) = 0;

  // A handle to the current state. Release it with ReleaseSnapshot.
  virtual const Snapshot* GetSnapshot() = 0;
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // Writes the memtable to a level-0 table.
  virtual Status Flush(const FlushOptions& options) = 0;
  // Compacts the key range [*begin, *end] (nullptr: unbounded) down to the
  // bottom level it reaches, waiting for the result.
  virtual Status CompactRange(const Slice* begin, const Slice* end) = 0;

  // Properties: "accelkv.stats" (human-readable), "accelkv.num-files-at-level<N>",
  // "accelkv.sstables", "accelkv.approximate-memory-usage",
  // "accelkv.write-amplification", "accelkv.stats.json". False if unknown.
  virtual bool GetProperty(const Slice& property, std::string* value) = 0;

  // Waits for background work, flushes nothing, releases files and the lock.
  // Returns the first background error, if any. Further calls fail.
  virtual Status Close() = 0;
};

// Deletes the database's files and its directory (if then empty).
Status DestroyDB(const std::string& name, const Options& options);

}  // namespace accelkv
