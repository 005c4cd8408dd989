// Constructors of the engine adapters; only engine_registry.cc calls them.
#pragma once

#include <memory>
#include <string>

#include "engine.h"

namespace accelkv_bench {

std::unique_ptr<Engine> NewRocksDBEngine();
std::unique_ptr<Engine> NewLevelDBEngine();
#ifdef ACCELKV_BENCH_WITH_ACCELKV
std::unique_ptr<Engine> NewAccelKVEngine();
#endif
// N instances of engine `name` behind one hash-partitioned Engine
// (engine_partitioned.cc); nullptr if the engine is unknown or N < 1.
std::unique_ptr<Engine> NewPartitionedEngine(const std::string& name, int partitions);

}  // namespace accelkv_bench
