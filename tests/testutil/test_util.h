// Shared test helpers, linked into every test binary.
//
// Thread safety: TempDir is used by one thread at a time; TestSeed() and
// RandomString() are safe for concurrent use (RandomString mutates *rnd).
#pragma once

#include <cstdint>
#include <string>

#include "util/random.h"

namespace accelkv {
namespace test {

// A fresh directory "<$TMPDIR or /tmp>/accelkv-test-XXXXXX", created by the
// constructor (aborts the test binary if that fails) and removed with all
// its contents by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The seed for a randomized test: $ACCELKV_SEED if set (decimal), else one
// derived from the clock. Prints "ACCELKV_SEED=<seed>" to stderr so a
// failure can be replayed with `ACCELKV_SEED=<seed> <binary> --gtest_filter=...`.
uint64_t TestSeed();

// len random bytes (all 256 values).
std::string RandomString(Random* rnd, size_t len);

}  // namespace test
}  // namespace accelkv
