// Options::Options() lives in src/db/options.cc, which compaction_test does
// not link (the compaction module sits below db). The picker tests need
// Options objects, so the default constructor is defined here, identically.
// The lead may move options.cc below compaction (e.g. to src/env/); then this
// file goes away.
#include "accelkv/comparator.h"
#include "accelkv/env.h"
#include "accelkv/options.h"

namespace accelkv {

Options::Options() : comparator(BytewiseComparator()), env(Env::Default()) {}

}  // namespace accelkv
