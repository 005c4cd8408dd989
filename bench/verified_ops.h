// The benchmark's engine operations, each checked: writes go through the
// key space's KeyState (so later reads know what to expect), reads verify
// the value against its key and the key's write history, scans verify every
// entry they return. A wrong value, a missing key or an engine error calls
// BenchContext::Fail and returns false.
//
// Thread safety: safe for concurrent use from worker threads (each passes its
// own ThreadStats and scratch strings).
#pragma once

#include <cstdint>
#include <string>

#include "bench_context.h"

namespace accelkv_bench {

// Scratch buffers a worker reuses so the hot path does not allocate.
struct OpScratch {
  std::string key;
  std::string value;
  std::string read;
  // A put prepared one op ahead (DbBenchThread): `key` holds the key of
  // prepared_index, and prepared_hash is ValueFactory::Hash of it at
  // prepared_version and the space's value size. VerifiedPut of that index
  // uses them (the hash only if its version is still prepared_version) and
  // clears `prepared`; any other op leaves them unused.
  bool prepared = false;
  uint64_t prepared_index = 0;
  uint32_t prepared_version = 0;
  uint64_t prepared_hash = 0;
};

// Puts a new version of space's key index (value size: the space's).
bool VerifiedPut(BenchContext* ctx, KeySpace* space, uint64_t index, ThreadStats* stats,
                 OpScratch* scratch);
bool VerifiedDelete(BenchContext* ctx, KeySpace* space, uint64_t index, ThreadStats* stats,
                    OpScratch* scratch);
// Gets space's key index and checks the answer. *found (optional) tells
// whether the key was there.
bool VerifiedGet(BenchContext* ctx, KeySpace* space, uint64_t index, ThreadStats* stats,
                 OpScratch* scratch, bool* found = nullptr);
// Gets a key the run never writes; it must be absent.
bool VerifiedGetMissing(BenchContext* ctx, const std::string& key, ThreadStats* stats,
                        OpScratch* scratch);
// Checks one entry a cursor returned: the value must be derived from the key,
// and (for keys of space that parse back) not newer than the key's last
// write begun.
bool VerifyScanEntry(BenchContext* ctx, KeySpace* space, std::string_view key,
                     std::string_view value, ThreadStats* stats);
// Seeks to start and reads up to count entries (count 0: just the seek),
// verifying each. Cursor errors fail the run.
bool VerifiedScan(BenchContext* ctx, KeySpace* space, Cursor* cursor, const std::string& start,
                  int count, ThreadStats* stats);

}  // namespace accelkv_bench
