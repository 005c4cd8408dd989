// Env: every file-system access and clock read of AccelKV goes through an Env,
// so tests can run on an in-memory file system and inject faults.
//
// Thread safety: Env methods are safe for concurrent use. A file object is
// used by one thread at a time, except RandomAccessFile::Read, which is safe
// for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "accelkv/slice.h"
#include "accelkv/status.h"

namespace accelkv {

// A file read from its start to its end.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to n bytes. *result points into scratch or into the file's own
  // memory. A short read (result->size() < n) means end of file.
  virtual Status Read(size_t n, Slice* result, char* scratch) = 0;
  virtual Status Skip(uint64_t n) = 0;
};

// A file read at arbitrary offsets. Read is safe for concurrent use.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to n bytes at offset. *result points into scratch or into the
  // file's own memory (a memory-mapped file), which stays valid while the file
  // object lives. Fewer than n bytes only at end of file.
  virtual Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const = 0;
  // A hint that [offset, offset + n) will be read soon, so that the file
  // system can start reading it in the background (RocksDB's Prefetch; the
  // POSIX Env: posix_fadvise WILLNEED). Returns at once. OK promises
  // nothing about the bytes; the default does nothing.
  virtual Status Prefetch(uint64_t /*offset*/, size_t /*n*/) const { return Status::OK(); }
  // Lends the bytes [offset, offset + n) in place, for a reader that would
  // otherwise copy them out (the GPU executor copies them to the device from
  // there): *pieces, in file order, cover exactly that range in the file's
  // own memory. They stay valid and unchanged while this file object lives,
  // unless the file is truncated or written over (table files never are).
  // InvalidArgument if the range passes the end of the file. The default,
  // for Envs whose files are not in memory, returns NotSupported: the
  // caller reads.
  virtual Status Lend(uint64_t /*offset*/, uint64_t /*n*/, std::vector<Slice>* pieces) const {
    pieces->clear();
    return Status::NotSupported("lending a file's bytes");
  }
};

// A part of a file's bytes lent for writing in place (WritableFile::LendPrepared).
struct WritablePiece {
  char* data = nullptr;
  size_t size = 0;
};

// A file written sequentially. Appended data is durable only after Sync().
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(const Slice& data) = 0;
  // Hands buffered data to the operating system (no durability).
  virtual Status Flush() = 0;
  // Makes all appended data durable (fdatasync/fsync).
  virtual Status Sync() = 0;
  virtual Status Close() = 0;

  // Positioned writes, for a writer that holds a file's whole content and
  // writes it on several threads (the GPU executor's output tables; RocksDB's
  // RandomRWFile::Write). PrepareWriteAt(size), on a file nothing was
  // appended to, makes the file `size` bytes long, its bytes unspecified
  // until written. WriteAt then writes data at offset, inside [0, size);
  // calls for disjoint ranges are safe for concurrent use (the one exception
  // to "one thread at a time"). Sync and Close, once every WriteAt has
  // returned, work as after appends; Append is an error after
  // PrepareWriteAt. The default, for Envs that cannot (and files opened for
  // direct or mapped writes), returns NotSupported, leaving the file as it
  // was: the caller appends instead.
  virtual Status PrepareWriteAt(uint64_t /*size*/) {
    return Status::NotSupported("positioned writes");
  }
  virtual Status WriteAt(uint64_t /*offset*/, const Slice& /*data*/) {
    return Status::NotSupported("positioned writes");
  }
  // After PrepareWriteAt(size): lends the file's bytes [0, size) in place,
  // *pieces in file order, for a writer that fills them itself (the GPU
  // executor's copies back from the device): what it puts there is the
  // file's content, as if written by WriteAt, and the same rules hold
  // (disjoint ranges from several threads, then Sync and Close). Valid
  // until Close. The default, for Envs whose files are not in memory,
  // returns NotSupported: the caller writes.
  virtual Status LendPrepared(std::vector<WritablePiece>* pieces) {
    pieces->clear();
    return Status::NotSupported("lending a file's bytes");
  }
};

// A lock on a file, held by a process (DB::Open takes one on LOCK).
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// Whose I/O a file carries, where an Env orders requests to one device
// (RocksDB's Env::IOPriority). PosixEnv orders only direct I/O: while a
// kHigh direct-write file is open (the database opens its flushes' tables
// so), kLow direct requests (its compactions' reads and writes) go out at
// most two at a time, so a flush's writes do not queue behind a
// compaction's. Other files, and other Envs, ignore it.
enum class IOPriority : uint8_t {
  kHigh,  // foreground and flushes (the default)
  kLow,   // compactions
};

// How a RandomAccessFile is opened (RocksDB's EnvOptions, the part that
// applies to reads).
struct RandomAccessFileOptions {
  // Map the whole file read-only into memory where the Env can (PosixEnv: on
  // 64-bit, within its limit of live mappings; else it falls back to pread).
  // Read then returns pointers into the mapping: no system call, no copy.
  // The file must not be truncated while open (a read past the new end would
  // fault). Default false.
  bool use_mmap_reads = false;
  // Read with direct I/O where the Env can (PosixEnv: O_DIRECT, falling back
  // to pread through the page cache on a file system that refuses it; Envs
  // that cannot, such as the in-memory one, ignore it): bytes go from the
  // device to the caller's memory without a copy through the page cache.
  // A read whose offset, length and scratch address are all multiples of
  // 4 KiB lands straight in scratch; any other read is still served (through
  // an aligned bounce buffer and a copy). Prefetch does nothing (there is
  // no page cache to fill). Takes precedence over use_mmap_reads (a mapping
  // reads through the page cache). Default false.
  bool use_direct_reads = false;
  // The reads' priority (see IOPriority). Default kHigh.
  IOPriority io_priority = IOPriority::kHigh;
};

// The alignment of direct I/O (RandomAccessFileOptions::use_direct_reads,
// WritableFileOptions::use_direct_writes) on the POSIX Env: file offsets,
// lengths and memory addresses that are multiples of it go to and from the
// device with no copy (it covers 512-byte and 4 KiB sectors).
inline constexpr size_t kDirectIoAlignment = 4096;

// How a WritableFile is opened (the part of RocksDB's EnvOptions that
// applies to writes).
struct WritableFileOptions {
  // Write with direct I/O where the Env can (PosixEnv: O_DIRECT, falling back
  // to buffered writes on a file system that refuses it): bytes go to the
  // device without a copy into the page cache, and without one at all for
  // data handed to Append at a 4 KiB-aligned address while the file's size
  // is a multiple of 4 KiB. The file holds exactly the bytes appended either
  // way; they are not in the page cache afterwards. Default false.
  bool use_direct_writes = false;
  // Append into a shared writable mapping of the file where the Env can
  // (PosixEnv: mmap, the file grown ahead in fallocate'd windows; Envs that
  // cannot ignore it): no system call per Append or Flush, and the bytes are
  // in the page cache at once, so they survive a crash of the process as
  // after a Flush. Until Close the file may end in zero bytes past the data
  // (a process that dies leaves them there); Close truncates them. For
  // append-only logs whose reader ends at zeros (the WAL). use_direct_writes
  // takes precedence. Default false.
  bool use_mmap_writes = false;
  // The writes' priority (see IOPriority). Default kHigh.
  IOPriority io_priority = IOPriority::kHigh;
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide POSIX Env. Never deleted.
  static Env* Default();

  virtual Status NewSequentialFile(const std::string& fname,
                                   std::unique_ptr<SequentialFile>* result) = 0;
  virtual Status NewRandomAccessFile(const std::string& fname,
                                     std::unique_ptr<RandomAccessFile>* result) = 0;
  // As above, with options. The default ignores them (Envs that can neither
  // map nor read with direct I/O, such as the in-memory one).
  virtual Status NewRandomAccessFile(const std::string& fname,
                                     const RandomAccessFileOptions& options,
                                     std::unique_ptr<RandomAccessFile>* result) {
    return NewRandomAccessFile(fname, result);
  }
  // Creates or truncates fname.
  virtual Status NewWritableFile(const std::string& fname,
                                 std::unique_ptr<WritableFile>* result) = 0;
  // As above, with options. The default ignores them (Envs without direct
  // I/O, such as the in-memory one).
  virtual Status NewWritableFile(const std::string& fname, const WritableFileOptions& options,
                                 std::unique_ptr<WritableFile>* result) {
    (void)options;
    return NewWritableFile(fname, result);
  }
  // Opens fname for appending, creating it if it does not exist.
  virtual Status NewAppendableFile(const std::string& fname,
                                   std::unique_ptr<WritableFile>* result) = 0;

  virtual bool FileExists(const std::string& fname) = 0;
  // Names (not paths) of the entries of dir.
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* result) = 0;
  virtual Status RemoveFile(const std::string& fname) = 0;
  // OK if the directory already exists.
  virtual Status CreateDir(const std::string& dirname) = 0;
  virtual Status RemoveDir(const std::string& dirname) = 0;
  virtual Status GetFileSize(const std::string& fname, uint64_t* file_size) = 0;
  // Atomically replaces target with src.
  virtual Status RenameFile(const std::string& src, const std::string& target) = 0;
  // Makes the directory's entries (creations, renames, removals) durable.
  virtual Status SyncDir(const std::string& dirname) = 0;

  // Busy if another process or Env user holds the lock.
  virtual Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) = 0;
  virtual Status UnlockFile(std::unique_ptr<FileLock> lock) = 0;

  // Microseconds since some fixed point; monotonic.
  virtual uint64_t NowMicros() = 0;
  virtual void SleepForMicroseconds(int micros) = 0;
};

// An Env that forwards every call to another Env, its target (LevelDB's and
// RocksDB's EnvWrapper): derive from it and override only what you change,
// e.g. to count, delay or fail some calls. The calls with options forward
// with them (Env's own defaults for those drop the options). The target is
// not owned and must outlive the wrapper.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}

  Env* target() const { return target_; }

  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override {
    return target_->NewSequentialFile(fname, result);
  }
  Status NewRandomAccessFile(const std::string& fname,
                             std::unique_ptr<RandomAccessFile>* result) override {
    return target_->NewRandomAccessFile(fname, result);
  }
  Status NewRandomAccessFile(const std::string& fname, const RandomAccessFileOptions& options,
                             std::unique_ptr<RandomAccessFile>* result) override {
    return target_->NewRandomAccessFile(fname, options, result);
  }
  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) override {
    return target_->NewWritableFile(fname, result);
  }
  Status NewWritableFile(const std::string& fname, const WritableFileOptions& options,
                         std::unique_ptr<WritableFile>* result) override {
    return target_->NewWritableFile(fname, options, result);
  }
  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override {
    return target_->NewAppendableFile(fname, result);
  }
  bool FileExists(const std::string& fname) override { return target_->FileExists(fname); }
  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    return target_->GetChildren(dir, result);
  }
  Status RemoveFile(const std::string& fname) override { return target_->RemoveFile(fname); }
  Status CreateDir(const std::string& dirname) override { return target_->CreateDir(dirname); }
  Status RemoveDir(const std::string& dirname) override { return target_->RemoveDir(dirname); }
  Status GetFileSize(const std::string& fname, uint64_t* file_size) override {
    return target_->GetFileSize(fname, file_size);
  }
  Status RenameFile(const std::string& src, const std::string& target) override {
    return target_->RenameFile(src, target);
  }
  Status SyncDir(const std::string& dirname) override { return target_->SyncDir(dirname); }
  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override {
    return target_->LockFile(fname, lock);
  }
  Status UnlockFile(std::unique_ptr<FileLock> lock) override {
    return target_->UnlockFile(std::move(lock));
  }
  uint64_t NowMicros() override { return target_->NowMicros(); }
  void SleepForMicroseconds(int micros) override { target_->SleepForMicroseconds(micros); }

 private:
  Env* const target_;
};

// Memory for an in-memory Env's file bytes.
class HostMemory {
 public:
  virtual ~HostMemory() = default;
  // At least `bytes` bytes, 64-byte aligned; throws std::bad_alloc when none
  // is left.
  virtual void* Allocate(size_t bytes) = 0;
  // Frees what Allocate(bytes) returned.
  virtual void Free(void* p, size_t bytes) = 0;
};

struct MemEnvOptions {
  // A file's bytes live in chunks of this many bytes (at least 4 KiB).
  size_t chunk_bytes = 64 << 10;
  // The chunks of removed and truncated files are kept for the next files'
  // bytes, up to this many bytes (at least one chunk); the rest are freed.
  size_t max_free_bytes = size_t{512} << 20;
  // The chunks' memory; nullptr: the heap. A GPU executor copies lent bytes
  // (RandomAccessFile::Lend) straight to the device when they are
  // page-locked.
  std::shared_ptr<HostMemory> memory;
};

// An Env that keeps files in memory and delegates clocks to base_env.
// Files not Sync()ed are kept too (it models no crash; see the test Env for that).
// Its RandomAccessFiles lend their bytes (RandomAccessFile::Lend).
std::unique_ptr<Env> NewMemEnv(Env* base_env);
std::unique_ptr<Env> NewMemEnv(Env* base_env, const MemEnvOptions& options);

// Reads or writes a whole file through env.
Status ReadFileToString(Env* env, const std::string& fname, std::string* data);
Status WriteStringToFile(Env* env, const Slice& data, const std::string& fname, bool sync);

}  // namespace accelkv
