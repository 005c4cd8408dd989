// Constructors of the engine adapters; only engine_registry.cc calls them.
#pragma once

#include <memory>

#include "engine.h"

namespace accelkv_bench {

std::unique_ptr<Engine> NewRocksDBEngine();
std::unique_ptr<Engine> NewLevelDBEngine();
#ifdef ACCELKV_BENCH_WITH_ACCELKV
std::unique_ptr<Engine> NewAccelKVEngine();
#endif

}  // namespace accelkv_bench
