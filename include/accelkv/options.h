// Options for opening a database, reading and writing. Every field documents
// its default and the reason for it; defaults follow RocksDB's where one
// exists so that side-by-side comparisons start from the same place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "accelkv/slice.h"

namespace accelkv {

class Cache;
class Comparator;
class Env;
class Snapshot;

enum class CompressionType : unsigned char {
  // Stored in every block trailer: do not renumber (on-disk format).
  kNone = 0,
};

// Where compactions run (docs/GPU.md, "Decision policy").
enum class GpuCompaction : unsigned char {
  // Every compaction runs on the CPU; no GPU is probed.
  kOff = 0,
  // A compaction runs on the GPU when one is present and healthy, the user
  // comparator is bytewise, the job has at least gpu_min_compaction_bytes of
  // input and fits the device-memory budget; otherwise on the CPU.
  kAuto = 1,
  // As kAuto with no size threshold: every compaction the GPU can take runs
  // there (tests; measuring the GPU path).
  kForce = 2,
};

struct Options {
  // --- Behaviour ---
  // Order of user keys. Default: bytewise. Must match the one the database was
  // created with (checked by name at open).
  const Comparator* comparator;
  // Create the database if it is missing. Default false, as in LevelDB/RocksDB.
  bool create_if_missing = false;
  // Fail Open if the database exists. Default false.
  bool error_if_exists = false;
  // Fail Open on a corrupt WAL record in the middle of a log instead of
  // stopping replay at it. Default false (a torn tail is always tolerated).
  bool paranoid_checks = false;
  // File system and clock. Default: Env::Default() (POSIX).
  Env* env;

  // --- Write path ---
  // Bytes of a memtable before it is made immutable and flushed. Default
  // 64 MiB (RocksDB's write_buffer_size).
  size_t write_buffer_size = 64 << 20;
  // Allocate a memtable's entries in 2 MiB blocks backed by transparent huge
  // pages (a hint to the kernel: ordinary pages where it has none) when
  // write_buffer_size is at least 32 MiB, so a block is at most 1/16 of the
  // buffer; smaller buffers use 4 KiB blocks. The skiplist search, the
  // larger part of a write, visits nodes scattered over the buffer; huge
  // pages spare it most TLB misses (one writer 1.49x on the H100 machine,
  // bench/results/2026-11-25-h100-memtable-huge-pages.md). Default true.
  bool memtable_huge_pages = true;
  // Index a memtable's entries with a B+-tree (512-byte nodes, 16-byte user
  // key prefixes inline, readers without locks) instead of a skiplist when
  // the comparator is bytewise; other comparators always use the skiplist.
  // A write's memtable insert is a few node visits instead of the
  // skiplist's dozens of scattered ones (one writer 1.35x on the H100
  // machine, bench/results/2026-11-25-h100-btree-memtable.md), for about
  // 15% more memory per entry, counted in write_buffer_size. Default true.
  bool memtable_btree_index = true;
  // Let the writers of a write group link their own entries into the
  // memtable in parallel, after the group's leader has written the WAL and
  // encoded the entries (RocksDB's option of this name): with many writers
  // the memtable insert, mostly cache misses in the skiplist search, is then
  // no longer done by one thread for all. Default true (RocksDB).
  bool allow_concurrent_memtable_write = true;
  // Hand the write lead to the next writer as soon as a group's WAL record
  // is written and its entries are encoded, and link the entries into the
  // memtable after that (RocksDB's option of this name): the next group's
  // WAL write then overlaps this group's memtable insert instead of waiting
  // for it. A write still returns only once it and every earlier write are
  // visible; a group's sequences are published in order. Groups are not
  // combined by one leader in this mode. Default false (RocksDB). Measured
  // on 16 cores (bench/results/2026-11-25-h100-pipelined-write.md): up to
  // 1.13x with 4-16 writers, 0.87x with one, and about half the throughput
  // when other busy threads take the cores (a write waits for older
  // groups' links, whose threads may have lost their core;
  // bench/results/2026-11-25-h100-stress-writers.md).
  bool enable_pipelined_write = false;
  // How a writer queued behind its group's leader waits (RocksDB's
  // write-thread options, with their meanings, and one of AccelKV's): it
  // spins on the CPU for write_thread_spin_usec (0: 200 pause instructions,
  // a few microseconds), then, with enable_write_thread_adaptive_yield,
  // yields the CPU for up to write_thread_max_yield_usec while yielding has
  // lately paid off (a yield phase that ends in three yields slower than
  // write_thread_slow_yield_usec, i.e. other threads had the core, counts
  // against it; 0 disables that check), and then blocks on a condition
  // variable until it is woken. enable_write_thread_adaptive_yield false or
  // write_thread_max_yield_usec 0: no yield phase. Defaults 0, 100, 3 and
  // true (RocksDB's for the last three). A longer spin trades CPU for fewer
  // sleeps and wake-ups, which pays only when the writers have cores to
  // spin on. Each is clipped to at most 1,000,000 (a second).
  uint64_t write_thread_spin_usec = 0;
  uint64_t write_thread_max_yield_usec = 100;
  uint64_t write_thread_slow_yield_usec = 3;
  bool enable_write_thread_adaptive_yield = true;
  // Memtables (active + immutable) kept before writers stop. Default 2 (RocksDB).
  int max_write_buffer_number = 2;
  // L0 file count that starts a compaction. Default 4 (RocksDB).
  int level0_file_num_compaction_trigger = 4;
  // L0 file count at which each write is delayed by 1 ms. Default 20 (RocksDB).
  int level0_slowdown_writes_trigger = 20;
  // L0 file count at which writes stop until compaction catches up. Default 36.
  int level0_stop_writes_trigger = 36;
  // Estimated bytes still to compact at which writes are delayed / stopped.
  // Defaults 64 GiB / 256 GiB (RocksDB).
  uint64_t soft_pending_compaction_bytes_limit = 64ull << 30;
  uint64_t hard_pending_compaction_bytes_limit = 256ull << 30;

  // --- Tables ---
  // Target uncompressed bytes of a data block. Default 4 KiB (RocksDB, LevelDB).
  size_t block_size = 4096;
  // Bloom filter bits per user key; 0 disables filters. Default 10 (~1% false
  // positives), the common RocksDB setting.
  int bloom_bits_per_key = 10;
  // Block compression. Default none (LZ4 is planned).
  CompressionType compression = CompressionType::kNone;
  // Block cache; nullptr means a private cache of block_cache_size bytes.
  std::shared_ptr<Cache> block_cache;
  // Size of the private block cache. Default 32 MiB (RocksDB's default).
  size_t block_cache_size = 32 << 20;
  // Open table files kept in the table cache. Default 1000 (LevelDB).
  int max_open_files = 1000;
  // Read table files through a read-only mmap (as LevelDB does on 64-bit)
  // instead of pread: a block read is a pointer into the mapping, with no
  // system call and no copy, and such blocks bypass the block cache (the
  // page cache holds them). The POSIX Env maps at most 1000 files at once and
  // preads the rest; Envs that cannot map ignore it. Default true: readrandom
  // on a database much larger than the block cache is about 1.7x faster
  // (docs/env.md). Caveat: an I/O error on a mapped page raises SIGBUS in the
  // reading thread instead of returning IOError; set false to get a Status
  // for every media error (RocksDB's default).
  bool allow_mmap_reads = true;
  // Append to the WAL through a shared writable mapping of its file instead
  // of a write(2) per write group (RocksDB's allow_mmap_writes, LevelDB's
  // old mmap writes; here it applies to the WAL only: tables and the
  // MANIFEST are written as without it). An unsynced write is in the page
  // cache when it is acknowledged either way, so it survives a crash of the
  // process; WriteOptions::sync still fdatasyncs. The file grows in
  // fallocate'd windows (a full disk is an IOError, not a SIGBUS), each
  // mapped and faulted in ahead by a helper thread, and a
  // WAL left by a crash may end in zero bytes, which recovery reads as its
  // end (docs/FORMAT.md). A file system that cannot map a file shared and
  // writable gets the write(2) path. Default true: one writer's fillrandom
  // ran 1.4x faster with it on the 2-core dev machine
  // (bench/results/2026-11-25-dev-mmap-wal.md); RocksDB's default is false.
  bool allow_mmap_writes = true;
  // Write the table files of flushes and compactions with direct I/O
  // (O_DIRECT where the file system takes it; RocksDB's option of this name):
  // no copy into the page cache, so less CPU per byte written (the GPU
  // compaction executor writes its outputs from its pinned buffer with no
  // copy at all), and new tables do not push other data out of the page
  // cache; reads of a new table then come from the disk. The GPU compaction
  // executor also reads its input tables with direct I/O, straight from the
  // disk into its pinned buffer (no copy out of the page cache); the CPU
  // executor's and user reads stay buffered (or mapped). The WAL and the
  // MANIFEST stay buffered. Default false.
  bool use_direct_io_for_flush_and_compaction = false;

  // --- Levels and compaction ---
  // Number of levels. Default 7 (RocksDB, LevelDB).
  int num_levels = 7;
  // Target size of an output table file. Default 64 MiB (RocksDB target_file_size_base).
  uint64_t target_file_size = 64ull << 20;
  // Target bytes of level 1; level n+1 targets multiplier times level n.
  // Defaults 256 MiB and 10 (RocksDB).
  uint64_t max_bytes_for_level_base = 256ull << 20;
  double max_bytes_for_level_multiplier = 10.0;
  // Threads running flushes and compactions. Default 2 (RocksDB max_background_jobs).
  int max_background_jobs = 2;
  // Key ranges one compaction is cut into, each run on its own thread by
  // the CPU executor (RocksDB max_subcompactions). The ranges balance the
  // input files' bytes (by the files' indexes, read when the job starts),
  // with boundaries at input files' smallest/largest user keys; the output
  // files are cut at every boundary, so the output is the same with or
  // without the threads. Default 1 (one thread per job); clamped to
  // [1, 256].
  int max_subcompactions = 1;

  // --- GPU compaction (docs/GPU.md) ---
  // Default kAuto: use a GPU when one is present. Without one (or without
  // CUDA in the build) every compaction runs on the CPU and Open writes one
  // line saying why to the LOG file. A job that fails on the GPU for any
  // reason is rerun on the CPU with its inputs untouched; repeated failures
  // mark the GPU unhealthy for a minute.
  GpuCompaction gpu_compaction = GpuCompaction::kAuto;
  // kAuto: jobs with less input than this run on the CPU. Default 4 MiB,
  // where the GPU overtook one CPU thread at every value size measured
  // (docs/GPU.md, "Decision policy").
  uint64_t gpu_min_compaction_bytes = 4ull << 20;
  // Fraction of the device's free memory (at open) one job may use; larger
  // jobs run on the CPU. Default 0.5; clamped to [0.05, 0.95].
  double gpu_memory_fraction = 0.5;

  Options();
};

struct ReadOptions {
  // Verify block checksums on every read (they are always verified when a
  // block enters the cache). A data block of a memory-mapped table
  // (Options::allow_mmap_reads), which never enters the cache, counts as
  // cached once a read with verify_checksums and fill_cache has verified it:
  // later such reads through the same open table skip its CRC, as a cache hit
  // does; reads without fill_cache (compaction's) verify every time.
  // Default true.
  bool verify_checksums = true;
  // Put blocks read by this operation into the block cache. Default true;
  // long scans may turn it off.
  bool fill_cache = true;
  // Read as of this snapshot; nullptr means the latest state.
  const Snapshot* snapshot = nullptr;
  // Iterator bounds: keys < lower bound or >= upper bound are not returned.
  // The pointed-to slices must outlive the iterator. nullptr: unbounded.
  const Slice* iterate_lower_bound = nullptr;
  const Slice* iterate_upper_bound = nullptr;
};

struct WriteOptions {
  // fsync the WAL before acknowledging. A write acknowledged with sync=true
  // survives a crash of the process or machine. Default false: the write
  // survives a process crash but may be lost if the machine fails.
  bool sync = false;
};

struct FlushOptions {
  // Wait until the flush is done. Default true.
  bool wait = true;
};

}  // namespace accelkv
