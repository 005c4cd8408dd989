// CURRENT: the file naming the live MANIFEST (docs/FORMAT.md).
#pragma once

#include <cstdint>
#include <string>

#include "accelkv/env.h"
#include "accelkv/status.h"

namespace accelkv {

// Points CURRENT at MANIFEST-<descriptor_number>: writes a temp file, syncs
// it, renames it over CURRENT and syncs the directory.
Status SetCurrentFile(Env* env, const std::string& dbname, uint64_t descriptor_number);

}  // namespace accelkv
