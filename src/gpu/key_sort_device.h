// KeySortDevice: the accelerator half of the keys-only GPU compaction
// pipeline. Given the job's input table files in one host arena, the blocks
// to checksum and, per entry, where its internal key lies, it verifies every
// block's CRC32C, orders the entries into internal-key order and applies the
// obsolete-version rule, returning the indices of the kept entries in output
// order. Values never move: the CPU assembles output tables from the arena.
//
// Implementations: CudaKeySortDevice (cuda_key_sort_device.cu, CUB merge
// sort + select) and HostKeySortDevice (the CPU reference running the same
// key_sort_common.h functions; used by tests everywhere and as the oracle
// for the CUDA one).
//
// Errors: Corruption for a checksum mismatch (nothing else is reported);
// Aborted("gpu: <stage>: ...") for any device failure, including injected
// ones (SetInjectedFailure), after which the device is still usable when
// the failure was transient.
//
// Thread safety: one job at a time per device (the executor serializes).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/status.h"
#include "gpu/encode_common.h"
#include "gpu/gpu_executor.h"
#include "gpu/key_sort_common.h"

namespace accelkv {
namespace gpu {

struct KeySortInput {
  const uint8_t* arena = nullptr;  // from HostArena(); holds arena_size bytes
  uint64_t arena_size = 0;
  std::vector<BlockSpan> blocks;     // blocks to checksum
  std::vector<uint64_t> key_offset;  // per entry, into the arena
  std::vector<uint32_t> key_size;    // per entry, >= 8
  std::vector<uint8_t> flags;        // per entry, kFlagBaseLevel
  std::vector<uint64_t> snapshots;   // ascending, distinct

  uint64_t num_entries() const { return key_offset.size(); }
};

struct KeySortOutput {
  std::vector<uint32_t> kept;  // entry indices in internal-key order
  // Index into KeySortInput::blocks of a block whose checksum failed (the
  // lowest one) when Run returned Corruption for a checksum; else ~0.
  uint64_t bad_block = ~uint64_t{0};
};

// The data blocks of a job's output tables, planned by the CPU
// (device_encoder.h) for the device to fill (encode_common.h).
struct EncodeJob {
  const uint8_t* arena = nullptr;  // the job's input arena (from HostArena)
  uint64_t arena_size = 0;
  std::vector<EncodeEntry> entries;  // in output order
  std::vector<EncodeBlock> blocks;   // in output order
  uint64_t out_size = 0;             // bytes of every block with its trailer
};

class KeySortDevice {
 public:
  virtual ~KeySortDevice() = default;
  virtual const char* Name() const = 0;

  // A host buffer of at least bytes (pinned on the GPU backend), reused by
  // later calls: valid until the next HostArena call or destruction.
  virtual Status HostArena(uint64_t bytes, uint8_t** arena) = 0;

  // A host buffer of at least bytes for encoded output (pinned on the GPU
  // backend), reused like HostArena's.
  virtual Status HostOutput(uint64_t bytes, uint8_t** out) = 0;

  // Fills every planned data block of job into out[0, job.out_size) (from
  // HostOutput): keys, values, offset arrays, entry count, trailer. Adds its
  // time under "gpu_encode". Aborted("gpu: encode: ...") on any failure.
  virtual Status EncodeBlocks(const EncodeJob& job, uint8_t* out,
                              std::map<std::string, uint64_t>* stage_micros) = 0;

  // Device bytes one job may use (the memory budget).
  virtual uint64_t MemoryBudget() const = 0;

  // Device bytes a job of this shape needs (arena + per-entry arrays +
  // sort scratch, and for the device encoder a second copy of the arena, the
  // output and the per-entry plan), for the budget check.
  static uint64_t BytesNeeded(uint64_t arena_bytes, uint64_t entries, uint64_t blocks);

  // Verifies, sorts and filters; adds its stage times (micros) under
  // "copy_in", "verify", "sort", "dedup", "copy_out".
  virtual Status Run(const KeySortInput& in, KeySortOutput* out,
                     std::map<std::string, uint64_t>* stage_micros) = 0;
};

// The CPU reference. budget: the MemoryBudget() it reports.
std::unique_ptr<KeySortDevice> NewHostKeySortDevice(uint64_t budget);

// The CUDA device; nullptr plus a one-line *reason when no usable GPU is
// present or the library was built without CUDA.
std::unique_ptr<KeySortDevice> NewCudaKeySortDevice(const GpuExecutorOptions& options,
                                                    std::string* reason);

// The stage an injected failure hits (SetInjectedFailure), or kNone.
GpuStage InjectedFailure();

}  // namespace gpu
}  // namespace accelkv
