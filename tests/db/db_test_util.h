// Helpers shared by the database-level tests (tests/db/*_test.cc).
//
// Only db_test_util.cc reaches below the public API (DBImpl's TEST_ hooks),
// so the tests themselves depend on include/accelkv/ plus the test Envs.
//
// Thread safety: the free functions are safe for concurrent use on one DB
// (they only call thread-safe DB methods); KeyOf/ValueOf are pure.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/db.h"
#include "accelkv/env.h"
#include "accelkv/options.h"
#include "accelkv/status.h"

namespace accelkv {
namespace test {

// Options that make a small workload flush and compact through several
// levels: the smallest sizes the engine accepts (64 KiB write buffer, table
// files and level-1 target), L0 compaction trigger 2, small blocks. With
// ACCELKV_TEST_GPU_COMPACTION=force in the environment, gpu_compaction is
// kForce (the GPU executor, or ACCELKV_GPU_DEVICE=host's reference device).
Options SmallTreeOptions(Env* env);

// Waits until no flush or compaction is pending or running; returns the
// database's background error (OK if none).
Status WaitForBackgroundWork(DB* db);

// Every key/value the iterator of `ro` yields, in order. Returns the
// iterator's status; a key out of order or repeated is reported as
// Corruption.
Status ReadAll(DB* db, const ReadOptions& ro, std::map<std::string, std::string>* out);

// The same, walking backwards from SeekToLast with Prev.
Status ReadAllBackward(DB* db, const ReadOptions& ro, std::map<std::string, std::string>* out);

// "accelkv.num-files-at-level<level>" as a number; -1 if the property is
// not available.
int NumFilesAtLevel(DB* db, int level);

// Sum of NumFilesAtLevel over levels [1, num_levels).
int NumFilesBelowLevel0(DB* db, int num_levels);

// Names (not paths) in dir whose name ends with suffix (".sst", ".log"),
// or starts with it when it is a prefix like "MANIFEST-". Sorted.
std::vector<std::string> FilesWithSuffix(Env* env, const std::string& dir,
                                         const std::string& suffix);
std::vector<std::string> FilesWithPrefix(Env* env, const std::string& dir,
                                         const std::string& prefix);

// Fixed-width, order-preserving key "k<width digits>" for an integer.
std::string KeyOf(uint64_t i, int width = 8);

// A status printer for gtest messages.
inline std::string S(const Status& s) { return s.ToString(); }

}  // namespace test
}  // namespace accelkv
