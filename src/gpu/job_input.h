// JobInput: the CPU half of the keys-only pipeline's front end. Reads a
// compaction job's input table files whole into the device's host arena
// (pinned on the GPU backend) and decodes their layout: footer, index block
// (its CRC checked here, it is needed to find the rest), the data blocks'
// entry offsets (Block::Validate), and per entry where its internal key and
// value lie in the arena, plus IsBaseLevelForKey for tombstones. The data,
// filter and properties blocks are left for the device to checksum.
//
// Every offset is bounds-checked; malformed bytes give Corruption, never a
// read outside the arena.
//
// Thread safety: one job per JobInput.
#pragma once

#include <cstdint>
#include <vector>

#include "accelkv/status.h"
#include "compaction/compaction_executor.h"
#include "gpu/key_sort_device.h"

namespace accelkv {
namespace gpu {

struct InputTable {
  uint64_t number = 0;
  uint64_t offset = 0;  // in the arena
  uint64_t size = 0;
};

struct JobInput {
  std::vector<InputTable> tables;
  KeySortInput keys;                   // arena, blocks, key offsets, flags, snapshots
  std::vector<uint64_t> value_offset;  // per entry, into the arena
  std::vector<uint32_t> value_size;

  // The table holding arena offset `offset` (REQUIRES: inside some table).
  const InputTable& TableAt(uint64_t offset) const;
  // Empties every array but keeps its capacity: the executor reuses one
  // JobInput across jobs, so a job's per-entry arrays are not fresh pages.
  void Clear();
};

// Reads every input file of spec.compaction (level inputs, then
// output-level inputs) into device->HostArena.
Status ReadInputTables(const CompactionJobSpec& spec, KeySortDevice* device, JobInput* input);

// Decodes the tables read by ReadInputTables; fills keys.blocks, the entry
// arrays and keys.snapshots.
Status DecodeInputTables(const CompactionJobSpec& spec, JobInput* input);

}  // namespace gpu
}  // namespace accelkv
