// Options::Options() lives in src/db/options.cc, which version_test does not
// link (tests/<module> link only their module's library and its
// dependencies). This is the same definition, so tests here can build
// Options. Remove it once the constructor moves below src/db/ (e.g. to
// src/util/): the test's own definition then simply shadows the archive's
// member, so the two can coexist meanwhile.
#include "accelkv/comparator.h"
#include "accelkv/env.h"
#include "accelkv/options.h"

namespace accelkv {

Options::Options() : comparator(BytewiseComparator()), env(Env::Default()) {}

}  // namespace accelkv
