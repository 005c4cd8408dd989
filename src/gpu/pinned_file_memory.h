// PinnedFileMemory: page-locked memory for an in-memory Env's files
// (MemEnvOptions::memory), so the GPU executor copies lent input bytes
// (RandomAccessFile::Lend) straight from the Env's chunks to the device
// rather than through its pinned file arena (job_input.cc), and its copies
// back fill the output tables' files in place (device_encoder.cc). Each
// chunk is PinnedAllocate memory (pinned_buffer.h: page aligned; huge pages
// registered from 4 MiB up, so chunks of 2 MiB multiples there waste nothing),
// page-locked where the driver can pin it and ordinary otherwise (no GPU,
// or built without CUDA), which the executor then copies as before.
// Thread safety: safe for concurrent use.
#pragma once

#include <memory>

#include "accelkv/env.h"

namespace accelkv {
namespace gpu {

std::shared_ptr<HostMemory> NewPinnedFileMemory();

}  // namespace gpu
}  // namespace accelkv
