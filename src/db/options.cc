#include "accelkv/options.h"

#include "accelkv/comparator.h"
#include "accelkv/env.h"

namespace accelkv {

Options::Options() : comparator(BytewiseComparator()), env(Env::Default()) {}

}  // namespace accelkv
