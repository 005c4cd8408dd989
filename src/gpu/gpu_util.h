// Small helpers the GPU executor's files share: stage timing and the
// FileMetaData of a finished output table.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>

namespace accelkv {

struct FileMetaData;
struct TableProperties;

namespace gpu {

// Microseconds from start to now (steady clock), for the stage times.
inline uint64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
}

// The metadata of output table `number` of file_size bytes whose
// properties are props (keys, sequence range, entry and deletion counts).
FileMetaData OutputFileMeta(uint64_t number, uint64_t file_size, const TableProperties& props);

}  // namespace gpu
}  // namespace accelkv
