// TouchMappedPages: reads one byte of every page of [p, p + n) inside a
// SIGBUS guard, so that a media error (or a file truncated under its
// mapping) while a mapped file's pages are first read becomes a false return
// (an IOError for the caller) instead of killing the process. The pages are
// resident once it returns true; the bytes are then read within microseconds
// by the caller (checksum, binary search), so the window left unguarded is
// that of a page evicted and failing to come back in between.
//
// The process-wide SIGBUS handler is installed on first use. It jumps back
// only for a thread inside TouchMappedPages; for any other SIGBUS it restores
// the disposition it replaced and raises the signal again, so an
// application's own handler (or the default action) still applies.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <cstddef>

namespace accelkv {

bool TouchMappedPages(const char* p, size_t n);

}  // namespace accelkv
