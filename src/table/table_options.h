// The subset of Options a table builder/reader needs, so src/table/ does not
// depend on the DB layer.
#pragma once

#include <cstddef>
#include <memory>

#include "accelkv/cache.h"
#include "accelkv/comparator.h"
#include "accelkv/options.h"

namespace accelkv {

struct TableOptions {
  // Orders internal keys; must be an InternalKeyComparator over the user comparator.
  const Comparator* comparator = nullptr;
  // The user comparator (for the bloom filter and properties).
  const Comparator* user_comparator = nullptr;
  size_t block_size = 4096;
  int bloom_bits_per_key = 10;  // 0: no filter
  CompressionType compression = CompressionType::kNone;
  Cache* block_cache = nullptr;  // may be nullptr (no caching)
  // Open table files with RandomAccessFileOptions::use_mmap_reads (the table
  // cache does; Options::allow_mmap_reads).
  bool use_mmap_reads = false;
  // Write table files (flush and compaction outputs) with
  // WritableFileOptions::use_direct_writes (Options::
  // use_direct_io_for_flush_and_compaction).
  bool use_direct_writes = false;
  // The GPU compaction executor reads its input table files (or a chunk's
  // byte ranges of them) with RandomAccessFileOptions::use_direct_reads
  // (O_DIRECT on the POSIX Env), straight into its page-aligned file arena,
  // each table's read aligned to 4 KiB (src/gpu/job_input.cc). Set by the
  // database from Options::use_direct_io_for_flush_and_compaction. Nothing
  // else reads with it: the table cache (user reads, and the CPU executor's
  // per-block reads) keeps its buffered or mapped reads.
  bool direct_compaction_reads = false;
};

}  // namespace accelkv
