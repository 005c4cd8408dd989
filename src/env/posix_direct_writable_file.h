// The POSIX Env's direct-I/O writable file (WritableFileOptions::
// use_direct_writes): the file is opened with O_DIRECT, so written bytes go
// from memory to the device without a copy into the page cache. O_DIRECT
// needs the memory address, the length and the file offset of each write
// aligned (kDirectIoAlignment covers 512-byte and 4 KiB sectors):
// - an Append whose data starts at an aligned address while the file's
//   size is aligned (nothing staged) writes its aligned prefix directly
//   from the caller's memory, in pwrites of at most kDirectWriteMaxBytes
//   (the zero-copy path: the GPU executor's pinned output buffer holds each
//   table at an aligned offset);
// - everything else goes through aligned 1 MiB staging buffers: a full one
//   is written behind the appender by a helper thread while the next fills
//   (up to three writes in flight; the first failed one is returned by the
//   next call), and Flush waits for those, then writes the staged whole
//   blocks;
// - Sync and Close wait for the writes in flight, write the last partial
//   block padded with zeros, then ftruncate the file to its true size (and
//   Sync fdatasyncs). A later Append rewrites that block whole.
// The file's bytes are exactly the bytes appended, as with a buffered file.
// Internal to src/env/.
//
// Thread safety: one writer, as every WritableFile (the helper threads
// touch only the buffers handed to them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "accelkv/env.h"

namespace accelkv {

// The most bytes one pwrite writes (a multiple of kDirectIoAlignment): a
// longer zero-copy Append takes several. A whole output table in one pwrite
// (64 MiB) queues at the device ahead of every later request, and a flush's
// 1 MiB writes then waited behind the compaction writer threads' tables
// (the GPU executor writes up to 16 at once); in pieces, each thread has at
// most this much queued at a time, as its reads have (job_input.cc).
inline constexpr size_t kDirectWriteMaxBytes = 4 << 20;

// The direct-write files' pwrite calls, process-wide (tests).
struct DirectWriteCounts {
  uint64_t writes = 0;   // pwrite calls
  uint64_t largest = 0;  // the most bytes one of them asked to write
};
DirectWriteCounts GetDirectWriteCounts();

// Creates or truncates fname for direct writes. InvalidArgument (the file
// system refuses O_DIRECT: EINVAL, e.g. tmpfs) lets the caller fall back to
// a buffered file; other failures are the open's IOError. priority: a
// kHigh file counts as open at DirectIoPriorityGate::Get() until closed; a
// kLow file's pwrites are each admitted by it (env/direct_io_priority.h).
Status NewPosixDirectWritableFile(const std::string& fname, IOPriority priority,
                                  std::unique_ptr<WritableFile>* result);

}  // namespace accelkv
