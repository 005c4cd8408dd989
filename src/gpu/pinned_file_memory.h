// PinnedFileMemory: page-locked memory for an in-memory Env's files
// (MemEnvOptions::memory), so the GPU executor copies lent input bytes
// (RandomAccessFile::Lend) straight from the Env's chunks to the device
// rather than through its pinned file arena (job_input.cc). With CUDA it
// installs the pinned allocator (host_vector.h) first, as a CUDA device's
// creation does; each chunk is HostAllocateBytes memory, page-locked where
// the driver can pin it and ordinary otherwise (no GPU, or built without
// CUDA), which the executor then copies as before.
#pragma once

#include <memory>

#include "accelkv/env.h"

namespace accelkv {
namespace gpu {

std::shared_ptr<HostMemory> NewPinnedFileMemory();

}  // namespace gpu
}  // namespace accelkv
