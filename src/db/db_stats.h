// DBStats: counters behind GetProperty("accelkv.stats") and
// "accelkv.stats.json": per level, per executor, write path and stalls.
//
// Thread safety: REQUIRES the DB mutex for every call.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace accelkv {

struct LevelCompactionStats {
  uint64_t compactions = 0;
  uint64_t bytes_read_level = 0;       // input bytes from this level
  uint64_t bytes_read_next_level = 0;  // input bytes from the level below
  uint64_t bytes_written = 0;          // output bytes written into this level
  uint64_t micros = 0;
};

struct ExecutorStats {
  uint64_t jobs = 0;
  uint64_t fallbacks = 0;  // jobs that failed here and were rerun by the CPU executor
  // Jobs too large for the GPU's memory whole (docs/GPU.md, "Chunked jobs"):
  // run there in chunks, or on the CPU where they could not be; counted
  // under the executor that ran them.
  uint64_t chunked_jobs = 0;
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
  uint64_t micros = 0;
  double cpu_seconds = 0;
  uint64_t device_busy_micros = 0;  // the accelerator's time (GPU executor)
  // Per stage, microseconds: read, merge, drop, encode, write.
  std::map<std::string, uint64_t> stage_micros;
  // CPU seconds by stage, where the executor measures them (GPU executor).
  std::map<std::string, double> stage_cpu_seconds;
};

// Why writers waited in MakeRoomForWrite, as RocksDB's "Stalls(count)"
// breaks it down. A stop or slowdown counts under the first condition that
// held, in this order; memtables never slow writes, they only stop them.
enum StallCause : int {
  kStallMemtables = 0,     // max_write_buffer_number memtables, none flushed yet
  kStallLevel0Files = 1,   // level0_slowdown_writes_trigger / level0_stop_writes_trigger
  kStallPendingBytes = 2,  // soft / hard_pending_compaction_bytes_limit
  kNumStallCauses = 3,
};
// "memtables", "level0_files", "pending_compaction_bytes" (the names in
// accelkv.stats and accelkv.stats.json).
inline const char* StallCauseName(int cause) {
  switch (cause) {
    case kStallMemtables:
      return "memtables";
    case kStallLevel0Files:
      return "level0_files";
    case kStallPendingBytes:
      return "pending_compaction_bytes";
    default:
      return "unknown";
  }
}

struct StallStats {
  uint64_t stops = 0;  // waits for background work (one per wake-up)
  uint64_t stop_micros = 0;
  uint64_t slowdowns = 0;  // writes delayed by 1 ms
  uint64_t slowdown_micros = 0;
};

struct DBStats {
  uint64_t user_bytes_written = 0;  // keys + values handed to Write
  uint64_t user_writes = 0;         // write groups (one WAL record each)
  // Write groups a leader wrote after its own on queued writers' behalf
  // (flat combining, DBImpl::WriteImpl; pipelined groups are not combined).
  uint64_t combined_groups = 0;
  uint64_t wal_bytes_written = 0;
  uint64_t wal_syncs = 0;
  uint64_t flushes = 0;
  uint64_t flush_bytes_written = 0;
  uint64_t flush_dropped_entries = 0;  // versions no snapshot could see, not flushed
  uint64_t trivial_moves = 0;
  StallStats stalls[kNumStallCauses];  // by StallCause
  std::vector<LevelCompactionStats> levels;
  std::map<std::string, ExecutorStats> executors;

  explicit DBStats(int num_levels) : levels(num_levels) {}

  // The stalls of every cause together.
  StallStats TotalStalls() const {
    StallStats t;
    for (const StallStats& c : stalls) {
      t.stops += c.stops;
      t.stop_micros += c.stop_micros;
      t.slowdowns += c.slowdowns;
      t.slowdown_micros += c.slowdown_micros;
    }
    return t;
  }
  uint64_t CompactionBytesWritten() const {
    uint64_t n = 0;
    for (const auto& l : levels) n += l.bytes_written;
    return n;
  }
  // (flush + compaction bytes written to tables) / user bytes. The WAL is
  // reported separately, as RocksDB's "W-Amp" does.
  double WriteAmplification() const {
    if (user_bytes_written == 0) return 0;
    return static_cast<double>(flush_bytes_written + CompactionBytesWritten()) /
           static_cast<double>(user_bytes_written);
  }
};

}  // namespace accelkv
