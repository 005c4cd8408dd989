// The POSIX Env's direct-I/O random-access file (RandomAccessFileOptions::
// use_direct_reads): the file is opened with O_DIRECT, so read bytes go
// from the device to memory without a copy through the page cache. O_DIRECT
// needs the memory address, the length and the file offset of each read
// aligned (kDirectIoAlignment, posix_direct_writable_file.h, covers
// 512-byte and 4 KiB sectors), but Read keeps the RandomAccessFile
// contract for any request:
// - a read whose offset, length and scratch address are all aligned is
//   pread straight into scratch (the zero-copy path: the GPU executor reads
//   its input tables' aligned covers into its page-aligned pinned arena);
// - any other read goes through an aligned bounce buffer (per call, at
//   most kDirectReadBounceSize, in several preads for a longer request):
//   the aligned cover of the requested bytes is read, then the requested
//   bytes copied out.
// At the end of the file O_DIRECT returns a short count (the bytes up to
// the end): Read returns those, and nothing past the end, as the pread
// file does. Prefetch does nothing (the page cache is bypassed). Internal
// to src/env/; tests reach it for the counts of each path.
//
// Thread safety: Read is safe for concurrent use (pread, per-call buffers;
// the counters are atomic).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "accelkv/env.h"

namespace accelkv {

// The largest bounce buffer one unaligned Read allocates (a multiple of
// kDirectIoAlignment); longer unaligned reads take several preads.
inline constexpr size_t kDirectReadBounceSize = 1 << 20;

// How the direct-read files' Read calls were served, process-wide (tests).
struct DirectReadCounts {
  uint64_t aligned = 0;  // straight into the caller's scratch
  uint64_t bounced = 0;  // through a bounce buffer
};
DirectReadCounts GetDirectReadCounts();

// Opens fname for direct reads. InvalidArgument (the file system refuses
// O_DIRECT: EINVAL, e.g. tmpfs) lets the caller fall back to a pread file;
// other failures are the open's error (PosixError: NotFound for a missing
// file). priority: a kLow file's preads are each admitted by
// DirectIoPriorityGate::Get() (env/direct_io_priority.h).
Status NewPosixDirectRandomAccessFile(const std::string& fname, IOPriority priority,
                                      std::unique_ptr<RandomAccessFile>* result);

}  // namespace accelkv
