// The POSIX Env's memory-mapped writable file (WritableFileOptions::
// use_mmap_writes; LevelDB's old PosixMmapFile, RocksDB's allow_mmap_writes):
// Append copies into a shared, writable mapping of the file, so the bytes
// are in the page cache (and survive a crash of the process, as after a
// write(2)) with no system call per Append. Flush has nothing to do.
//
// - The file grows in windows of 64 KiB doubling to 1 MiB: each window is
//   first allocated with fallocate(2), so a full disk is an IOError from
//   Append and never a SIGBUS on a store into the mapping (a file system
//   without fallocate gets ftruncate, which does not reserve the blocks).
// - A helper thread (util/helper_threads.h) allocates, maps and faults in
//   (MADV_POPULATE_WRITE) the next window while Append fills the current
//   one, and unmaps the windows left behind, so Append takes no page fault
//   and no mapping call; without a helper, Append does it all itself. An
//   error mapping ahead is reported by Append when it maps that window.
// - Sync: fdatasync(2), which on Linux writes the pages stores into the
//   mapping dirtied (Linux only, as the rest of the POSIX Env's durability).
// - Close: unmap, then ftruncate the file to the bytes appended.
// - A process that dies before Close leaves its last window's unwritten
//   tail as zero bytes after the data; the WAL reader treats zeros that run
//   to the end of the file as the end of the log (docs/FORMAT.md). Each
//   Append stores its first 8 bytes first and its last 8 last, so a record
//   cut short by the kill keeps its header and ends in zeros.
// Internal to src/env/.
//
// Thread safety: one writer, as every WritableFile.
#pragma once

#include <memory>
#include <string>

#include "accelkv/env.h"

namespace accelkv {

// Creates or truncates fname for memory-mapped appends. NotSupported: the
// file system cannot map it shared and writable (the file is left, empty,
// for the caller to write buffered).
Status NewPosixMmapWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result);

}  // namespace accelkv
