// DBImpl::GetProperty: stats as text and JSON.
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "db/db_impl.h"
#include "gpu/gpu_executor.h"

namespace accelkv {
namespace {

void AppendF(std::string* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Appends the whole formatted text, however long (a GPU's status line made
// the JSON's prefix outgrow a fixed 512-byte buffer, which cut it short).
void AppendF(std::string* out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  va_list again;
  va_copy(again, ap);
  const int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n > 0 && static_cast<size_t>(n) < sizeof(buf)) {
    out->append(buf, static_cast<size_t>(n));
  } else if (n > 0) {
    const size_t at = out->size();
    out->resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out->data() + at, static_cast<size_t>(n) + 1, fmt, again);
    out->resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

double MiB(uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

}  // namespace

bool DBImpl::GetProperty(const Slice& property, std::string* value) {
  value->clear();
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return false;
  Slice in = property;
  const Slice prefix("accelkv.");
  if (!in.starts_with(prefix)) return false;
  in.remove_prefix(prefix.size());

  if (in.starts_with("num-files-at-level")) {
    in.remove_prefix(strlen("num-files-at-level"));
    std::string digits = in.ToString();
    if (digits.empty() || digits.size() > 2 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    int level = std::stoi(digits);
    if (level >= options_.num_levels) return false;
    *value = std::to_string(versions_->NumLevelFiles(level));
    return true;
  }
  if (in == "stats") {
    *value = StatsString();
    return true;
  }
  if (in == "stats.json") {
    *value = StatsJson();
    return true;
  }
  if (in == "sstables") {
    *value = versions_->current()->DebugString();
    return true;
  }
  if (in == "approximate-memory-usage") {
    size_t total = block_cache_->TotalCharge() + mem_->ApproximateMemoryUsage();
    for (const auto& imm : imm_) total += imm.mem->ApproximateMemoryUsage();
    *value = std::to_string(total);
    return true;
  }
  if (in == "write-amplification") {
    AppendF(value, "%.3f", stats_.WriteAmplification());
    return true;
  }
  return false;
}

std::string DBImpl::StatsString() {
  std::string out;
  AppendF(&out, "** AccelKV stats **\n");
  AppendF(&out, "Level  Files   Size(MiB)  Score  Compactions  Read(MiB)  Written(MiB)  Time(s)\n");
  AppendF(&out, "------------------------------------------------------------------------------\n");
  for (int level = 0; level < options_.num_levels; level++) {
    const int files = versions_->NumLevelFiles(level);
    const LevelCompactionStats& s = stats_.levels[level];
    if (files == 0 && s.compactions == 0 && s.bytes_written == 0) continue;
    AppendF(&out, "L%-5d %5d %11.1f %6.2f %12" PRIu64 " %10.1f %13.1f %8.2f\n", level, files,
            MiB(versions_->NumLevelBytes(level)), versions_->CompactionScore(level), s.compactions,
            MiB(s.bytes_read_level + s.bytes_read_next_level), MiB(s.bytes_written),
            s.micros / 1e6);
  }
  AppendF(&out,
          "\nUser writes: %" PRIu64 " groups (%" PRIu64
          " combined), %.1f MiB; WAL: %.1f MiB, %" PRIu64 " syncs\n",
          stats_.user_writes, stats_.combined_groups, MiB(stats_.user_bytes_written),
          MiB(stats_.wal_bytes_written), stats_.wal_syncs);
  AppendF(&out,
          "Flushes: %" PRIu64 " (%.1f MiB, %" PRIu64
          " hidden versions dropped); compactions wrote %.1f MiB; trivial moves: %" PRIu64 "\n",
          stats_.flushes, MiB(stats_.flush_bytes_written), stats_.flush_dropped_entries,
          MiB(stats_.CompactionBytesWritten()), stats_.trivial_moves);
  AppendF(&out, "Write amplification (table bytes written / user bytes): %.2f\n",
          stats_.WriteAmplification());
  const StallStats stalls = stats_.TotalStalls();
  AppendF(&out, "Stalls: %" PRIu64 " stops, %.3f s stopped, %.3f s slowed down\n", stalls.stops,
          stalls.stop_micros / 1e6, stalls.slowdown_micros / 1e6);
  out += "Stall causes:";
  for (int c = 0; c < kNumStallCauses; c++) {
    const StallStats& st = stats_.stalls[c];
    AppendF(&out, "%s %s %" PRIu64 " stops (%.3f s)", c == 0 ? "" : ";", StallCauseName(c),
            st.stops, st.stop_micros / 1e6);
    if (c != kStallMemtables) {
      AppendF(&out, ", %" PRIu64 " slowdowns (%.3f s)", st.slowdowns, st.slowdown_micros / 1e6);
    }
  }
  out += "\n";
  AppendF(&out, "Pending compaction bytes (estimate): %.1f MiB\n",
          MiB(versions_->EstimatedPendingCompactionBytes()));
  out += gpu_status_ + "\n";
  const GpuExecutorStats gpu =
      gpu_executor_ != nullptr ? gpu_executor_->GetStats() : GpuExecutorStats();
  if (gpu.peak_pinned_host_bytes > 0) {
    AppendF(&out,
            "GPU pinned host memory (all GPU executors of the process): %.1f MiB, peak %.1f MiB, "
            "%" PRIu64 " regions pinned (%.1f MiB in all)\n",
            MiB(gpu.pinned_host_bytes), MiB(gpu.peak_pinned_host_bytes), gpu.pinned_host_maps,
            MiB(gpu.pinned_host_mapped_bytes));
  }
  for (const auto& [name, e] : stats_.executors) {
    AppendF(&out,
            "Executor %s: %" PRIu64 " jobs, %" PRIu64
            " fallbacks, in %.1f MiB, out %.1f MiB, %.2f s, %.2f CPU-s",
            name.c_str(), e.jobs, e.fallbacks, MiB(e.input_bytes), MiB(e.output_bytes),
            e.micros / 1e6, e.cpu_seconds);
    // An accelerator's busy time, for the executors that have one.
    if (e.device_busy_micros > 0) AppendF(&out, ", %.2f s device busy", e.device_busy_micros / 1e6);
    if (e.chunked_jobs > 0) AppendF(&out, ", %" PRIu64 " chunked jobs", e.chunked_jobs);
    out += "\n";
    if (!e.stage_micros.empty()) {
      out += "  stages (s):";
      for (const auto& [stage, micros] : e.stage_micros)
        AppendF(&out, " %s=%.3f", stage.c_str(), micros / 1e6);
      out += "\n";
    }
    if (!e.stage_cpu_seconds.empty()) {
      out += "  CPU-s by stage:";
      for (const auto& [stage, cpu] : e.stage_cpu_seconds)
        AppendF(&out, " %s=%.3f", stage.c_str(), cpu);
      out += "\n";
    }
  }
  return out;
}

namespace {

// s with '"', '\\' and control bytes escaped for a JSON string.
std::string JsonEscaped(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      AppendF(&out, "\\u%04x", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string DBImpl::StatsJson() {
  const GpuExecutorStats gpu =
      gpu_executor_ != nullptr ? gpu_executor_->GetStats() : GpuExecutorStats();
  std::string out = "{\"levels\":[";
  for (int level = 0; level < options_.num_levels; level++) {
    const LevelCompactionStats& s = stats_.levels[level];
    AppendF(
        &out,
        "%s{\"level\":%d,\"files\":%d,\"bytes\":%" PRIu64 ",\"score\":%.3f,\"compactions\":%" PRIu64
        ",\"read_bytes\":%" PRIu64 ",\"written_bytes\":%" PRIu64 ",\"micros\":%" PRIu64 "}",
        level == 0 ? "" : ",", level, versions_->NumLevelFiles(level),
        static_cast<uint64_t>(versions_->NumLevelBytes(level)), versions_->CompactionScore(level),
        s.compactions, s.bytes_read_level + s.bytes_read_next_level, s.bytes_written, s.micros);
  }
  const StallStats stalls = stats_.TotalStalls();
  std::string causes;  // "name":{"stops":..,"stop_micros":..,"slowdowns":..,"slowdown_micros":..}
  for (int c = 0; c < kNumStallCauses; c++) {
    const StallStats& st = stats_.stalls[c];
    AppendF(&causes,
            "%s\"%s\":{\"stops\":%" PRIu64 ",\"stop_micros\":%" PRIu64 ",\"slowdowns\":%" PRIu64
            ",\"slowdown_micros\":%" PRIu64 "}",
            c == 0 ? "" : ",", StallCauseName(c), st.stops, st.stop_micros, st.slowdowns,
            st.slowdown_micros);
  }
  AppendF(&out,
          "],\"user_bytes_written\":%" PRIu64 ",\"user_writes\":%" PRIu64
          ",\"combined_groups\":%" PRIu64 ",\"wal_bytes_written\":%" PRIu64
          ",\"wal_syncs\":%" PRIu64 ",\"flushes\":%" PRIu64 ",\"flush_bytes_written\":%" PRIu64
          ",\"flush_dropped_entries\":%" PRIu64 ",\"compaction_bytes_written\":%" PRIu64
          ",\"trivial_moves\":%" PRIu64 ",\"write_amplification\":%.4f,\"stall_count\":%" PRIu64
          ",\"stall_micros\":%" PRIu64 ",\"slowdown_count\":%" PRIu64
          ",\"slowdown_micros\":%" PRIu64
          ",\"stall_causes\":{%s}"
          ",\"gpu\":\"%s\",\"gpu_pinned_host_bytes\":%" PRIu64
          ",\"gpu_peak_pinned_host_bytes\":%" PRIu64 ",\"gpu_pinned_host_maps\":%" PRIu64
          ",\"gpu_pinned_host_mapped_bytes\":%" PRIu64 ",\"executors\":{",
          stats_.user_bytes_written, stats_.user_writes, stats_.combined_groups,
          stats_.wal_bytes_written, stats_.wal_syncs, stats_.flushes, stats_.flush_bytes_written,
          stats_.flush_dropped_entries, stats_.CompactionBytesWritten(), stats_.trivial_moves,
          stats_.WriteAmplification(), stalls.stops, stalls.stop_micros, stalls.slowdowns,
          stalls.slowdown_micros, causes.c_str(), JsonEscaped(gpu_status_).c_str(),
          gpu.pinned_host_bytes, gpu.peak_pinned_host_bytes, gpu.pinned_host_maps,
          gpu.pinned_host_mapped_bytes);
  bool first = true;
  for (const auto& [name, e] : stats_.executors) {
    AppendF(&out,
            "%s\"%s\":{\"jobs\":%" PRIu64 ",\"fallbacks\":%" PRIu64 ",\"chunked_jobs\":%" PRIu64
            ",\"input_bytes\":%" PRIu64 ",\"output_bytes\":%" PRIu64 ",\"micros\":%" PRIu64
            ",\"cpu_seconds\":%.4f,\"device_busy_micros\":%" PRIu64 ",\"stage_micros\":{",
            first ? "" : ",", name.c_str(), e.jobs, e.fallbacks, e.chunked_jobs, e.input_bytes,
            e.output_bytes, e.micros, e.cpu_seconds, e.device_busy_micros);
    bool first_stage = true;
    for (const auto& [stage, micros] : e.stage_micros) {
      AppendF(&out, "%s\"%s\":%" PRIu64, first_stage ? "" : ",", stage.c_str(), micros);
      first_stage = false;
    }
    out += "},\"stage_cpu_seconds\":{";
    first_stage = true;
    for (const auto& [stage, cpu] : e.stage_cpu_seconds) {
      AppendF(&out, "%s\"%s\":%.4f", first_stage ? "" : ",", stage.c_str(), cpu);
      first_stage = false;
    }
    out += "}}";
    first = false;
  }
  out += "}}";
  return out;
}

}  // namespace accelkv
