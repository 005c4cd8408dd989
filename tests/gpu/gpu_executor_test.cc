// GpuCompactionExecutor tests, run over two KeySortDevices: the host
// reference (everywhere) and CUDA (skipped without a GPU). Output files must
// be byte-identical to the CPU executor's, also when the device encodes the
// output in several chunks; every injected stage failure must give Aborted,
// with no file created before the encode and every created file listed in
// the result at the encode; a flipped byte must give Corruption.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "compaction/cpu_compaction_executor.h"
#include "env/fault_injection_env.h"
#include "env/posix_direct_random_access_file.h"
#include "env/posix_direct_writable_file.h"
#include "gpu/device_encoder.h"
#include "gpu/device_memory_ledger.h"
#include "gpu/gpu_executor.h"
#include "gpu/gpu_test_util.h"
#include "gpu/job_input.h"
#include "gpu/key_sort_device.h"
#include "gpu/pinned_file_memory.h"
#include "table/block_builder.h"
#include "table/format.h"
#include "testutil/test_util.h"
#include "util/coding.h"
#include "util/filename.h"

namespace accelkv {
namespace {

constexpr uint64_t kBudget = 1ull << 30;

// Resets the process-wide injected failure when a test ends.
struct InjectionGuard {
  explicit InjectionGuard(GpuStage stage) { GpuCompactionExecutor::SetInjectedFailure(stage); }
  ~InjectionGuard() { GpuCompactionExecutor::SetInjectedFailure(GpuStage::kNone); }
};

// The bytes of a job's output files, as listed in its result.
uint64_t OutputBytes(const CompactionJobResult& result) {
  uint64_t bytes = 0;
  for (const FileMetaData& f : result.outputs) bytes += f.file_size;
  return bytes;
}

// What the jobs did with the staging calls (key_sort_device.h).
struct StagingCounts {
  int begins = 0;             // BeginStaging calls that returned OK
  int ranges = 0;             // StageRange calls that returned OK
  int lent_tables = 0;        // StageFrom calls that returned OK (a lent table each)
  int lent_pieces = 0;        // their pieces
  uint64_t staged_bytes = 0;  // bytes staged by both, OK calls
  uint64_t lent_bytes = 0;    // bytes staged by StageFrom, OK calls
  int fail_stage_from = 0;    // when not 0: StageFrom call number fail_stage_from fails
  int stage_from_calls = 0;
  uint64_t lent_out_bytes = 0;  // output bytes placed in lent extents (ChunkPlace::lent)
  // When >= 0: chunk fail_landed_at's landed call is not passed on, the
  // encode stops there and EncodeBlocks fails (Aborted), as a device error
  // after the chunk was placed would.
  int fail_landed_at = -1;
  bool pending = false;    // a device arena staged, neither taken by DecodeKeys nor cancelled
  int block_checks = 0;    // CheckBlocks calls (device-encode mode: one per job or chunk)
  int runs = 0;            // Run calls (one per job, or per chunk of a chunked job)
  int fail_run = 0;        // when not 0: Run call number fail_run (from 1) returns Aborted
  int plan_waits = 0;      // WaitPlan calls
  int fail_plan_wait = 0;  // when not 0: WaitPlan call number fail_plan_wait returns Aborted
  // The last Run's device table splits (KeySortOutput::table_starts), and
  // when not 0 how Run alters them before the planner sees them: 1 drops
  // the second table start, 2 moves it one entry later.
  uint64_t table_starts = 0;
  int alter_split = 0;
  // True: Run merges the middle block record with the next one (as if the
  // device had cut one block where the rule cuts two) before the planner
  // sees them.
  bool merge_runs = false;
  // When >= 0: each EncodeBlocks call first encodes with a landed that
  // stops after chunk encode_probe_stop, keeping the chunks it was handed
  // and its status, then encodes again for the executor.
  int encode_probe_stop = -1;
  std::vector<size_t> encode_probe_landed;
  Status encode_probe_status;
  size_t encode_probe_chunks = 0;
  // The probe's queue_ahead (0: the executor's), and whether its last
  // chunk ends past the job's blocks (CheckEncodeJob refuses it).
  size_t encode_probe_ahead = 0;
  bool encode_probe_bad_last = false;
  // StageRange calls whose offset or size is not a multiple of 4 KiB, and
  // BeginStaging calls on an arena not 4 KiB aligned (direct reads stage
  // whole aligned spans of a page-aligned arena).
  int unaligned_ranges = 0;
  int unaligned_arenas = 0;
  int keys_only_decodes = 0;  // DecodeKeys calls with DecodeInput::keys_only
  uint64_t run_blocks = 0;    // the last Run's blocks to checksum (KeySortInput::blocks)
  bool key_first = false;     // the last SetKeyFirst
  int wait_verified_calls = 0;
  int marks = 0;  // MarkStaged calls (staging groups)
};

// Forwards to a device, counting the chunks EncodeBlocks hands back (the
// chunks a job's output was encoded in) and the staging calls.
class CountingDevice final : public gpu::KeySortDevice {
 public:
  // *budget, when not 0, replaces the inner device's memory budget.
  CountingDevice(std::unique_ptr<gpu::KeySortDevice> inner, int* encode_calls,
                 StagingCounts* staging, const uint64_t* budget)
      : inner_(std::move(inner)), encode_calls_(encode_calls), staging_(staging), budget_(budget) {}
  const char* Name() const override { return inner_->Name(); }
  Status HostArena(uint64_t bytes, uint8_t** arena) override {
    staging_->pending = false;  // it ends the staging
    return inner_->HostArena(bytes, arena);
  }
  void SetKeyFirst(bool on) override {
    staging_->key_first = on;
    inner_->SetKeyFirst(on);
  }
  Status WaitVerified(gpu::KeySortOutput* out,
                      std::map<std::string, uint64_t>* stage_micros) override {
    ++staging_->wait_verified_calls;
    return inner_->WaitVerified(out, stage_micros);
  }
  Status MarkStaged() override {
    Status s = inner_->MarkStaged();
    if (s.ok()) ++staging_->marks;
    return s;
  }
  Status BeginStaging(const uint8_t* arena, uint64_t size) override {
    Status s = inner_->BeginStaging(arena, size);
    if (s.ok()) ++staging_->begins;
    if (reinterpret_cast<uintptr_t>(arena) % kDirectIoAlignment != 0) {
      ++staging_->unaligned_arenas;
    }
    staging_->pending = s.ok();
    return s;
  }
  bool DirectHostMemory(const uint8_t* src, uint64_t size) override {
    return inner_->DirectHostMemory(src, size);
  }
  // A failure injected here cancels the staging, as a device error does.
  Status StageFrom(uint64_t offset, const std::vector<Slice>& pieces) override {
    if (++staging_->stage_from_calls == staging_->fail_stage_from) {
      inner_->CancelStaging();
      staging_->pending = false;
      return Status::Aborted("gpu: copy_in: failure injected by the test at StageFrom");
    }
    Status s = inner_->StageFrom(offset, pieces);
    if (s.ok()) {
      uint64_t size = 0;
      for (const Slice& p : pieces) size += p.size();
      ++staging_->lent_tables;
      staging_->lent_pieces += static_cast<int>(pieces.size());
      staging_->staged_bytes += size;
      staging_->lent_bytes += size;
    } else {
      staging_->pending = false;
    }
    return s;
  }
  Status StageRange(uint64_t offset, uint64_t size) override {
    Status s = inner_->StageRange(offset, size);
    if (s.ok()) ++staging_->ranges;
    if (s.ok()) staging_->staged_bytes += size;
    if (offset % kDirectIoAlignment != 0 || size % kDirectIoAlignment != 0) {
      ++staging_->unaligned_ranges;
    }
    if (!s.ok()) staging_->pending = false;  // a failed call cancels the staging
    return s;
  }
  void CancelStaging() override {
    staging_->pending = false;
    inner_->CancelStaging();
  }
  Status HostKeyArena(uint64_t bytes, uint8_t** arena) override {
    return inner_->HostKeyArena(bytes, arena);
  }
  Status HostOutput(uint64_t bytes, uint8_t** out) override {
    return inner_->HostOutput(bytes, out);
  }
  Status EncodeBlocks(const gpu::EncodeJob& job,
                      const std::vector<std::pair<uint64_t, uint64_t>>& chunks,
                      const gpu::ChunkPlacer& place, size_t queue_ahead,
                      std::map<std::string, uint64_t>* stage_micros,
                      const std::function<bool(size_t)>& landed) override {
    if (staging_->encode_probe_stop >= 0) {
      // The probe's chunks go to a scratch copy of the whole output: the
      // executor's places may wait for writes that only its own landed
      // calls start.
      staging_->encode_probe_landed.clear();
      staging_->encode_probe_chunks = chunks.size();
      const auto stop = static_cast<size_t>(staging_->encode_probe_stop);
      std::vector<uint8_t> scratch(job.out_size);
      std::vector<std::pair<uint64_t, uint64_t>> probe_chunks = chunks;
      if (staging_->encode_probe_bad_last && !probe_chunks.empty()) {
        probe_chunks.back().second = job.blocks.size() + 1;
      }
      staging_->encode_probe_status = inner_->EncodeBlocks(
          job, probe_chunks,
          [&](size_t) {
            return gpu::ChunkPlace{scratch.data(), 0, job.out_size, {}};
          },
          staging_->encode_probe_ahead != 0 ? staging_->encode_probe_ahead : queue_ahead,
          stage_micros,
          [&](size_t c) {
            staging_->encode_probe_landed.push_back(c);
            return c < stop;
          });
      if (!staging_->encode_probe_status.ok()) return staging_->encode_probe_status;
    }
    const gpu::ChunkPlacer counted = [&](size_t c) {
      gpu::ChunkPlace where = place(c);
      for (const gpu::PlaceExtent& e : where.lent) staging_->lent_out_bytes += e.size;
      return where;
    };
    bool failed = false;
    Status s = inner_->EncodeBlocks(job, chunks, counted, queue_ahead, stage_micros, [&](size_t c) {
      if (static_cast<int>(c) == staging_->fail_landed_at) {
        failed = true;
        return false;
      }
      ++*encode_calls_;
      return landed(c);
    });
    if (s.ok() && failed) {
      s = Status::Aborted("gpu: encode: failure injected by the test after a chunk's place");
    }
    return s;
  }
  void ReleaseEncodeInput() override { inner_->ReleaseEncodeInput(); }
  void ReleaseHostBuffers() override { inner_->ReleaseHostBuffers(); }
  gpu::PinnedPool::Stats PinnedHostStats() const override { return inner_->PinnedHostStats(); }
  uint64_t MemoryBudget() const override {
    return *budget_ != 0 ? *budget_ : inner_->MemoryBudget();
  }
  Status CheckBlocks(const uint8_t* arena, uint64_t arena_size,
                     const gpu::HostVector<gpu::BlockSpan>& spans,
                     gpu::HostVector<gpu::DecodeBlock>* blocks, gpu::BlockCheckResult* result,
                     std::map<std::string, uint64_t>* stage_micros) override {
    ++staging_->block_checks;
    return inner_->CheckBlocks(arena, arena_size, spans, blocks, result, stage_micros);
  }
  Status DecodeKeys(const gpu::DecodeInput& in, gpu::DecodeOutput* out,
                    std::map<std::string, uint64_t>* stage_micros) override {
    staging_->pending = false;  // taken over or freed
    if (in.keys_only) ++staging_->keys_only_decodes;
    return inner_->DecodeKeys(in, out, stage_micros);
  }
  Status WaitDecodedKeys(std::map<std::string, uint64_t>* stage_micros) override {
    return inner_->WaitDecodedKeys(stage_micros);
  }
  // Called from the ranges' planner threads at once: counted under a mutex.
  Status WaitPlan(uint64_t k, uint64_t* ready) override {
    {
      std::lock_guard<std::mutex> l(plan_mu_);
      if (++staging_->plan_waits == staging_->fail_plan_wait) {
        return Status::Aborted("gpu: plan: failure injected by the test at wait",
                               std::to_string(staging_->plan_waits));
      }
    }
    return inner_->WaitPlan(k, ready);
  }
  void ReleasePlan() override { inner_->ReleasePlan(); }
  Status Run(const gpu::KeySortInput& in, gpu::KeySortOutput* out,
             std::map<std::string, uint64_t>* stage_micros) override {
    staging_->run_blocks = in.blocks.size();
    if (++staging_->runs == staging_->fail_run) {
      inner_->ReleaseEncodeInput();
      return Status::Aborted("gpu: sort: failure injected by the test at run",
                             std::to_string(staging_->runs));
    }
    Status s = inner_->Run(in, out, stage_micros);
    if (s.ok() && staging_->merge_runs && out->num_runs >= 2) MergeMiddleRuns(out);
    staging_->table_starts = out->table_starts.size();
    if (s.ok() && staging_->alter_split != 0 && out->table_starts.size() >= 2) {
      if (staging_->alter_split == 1) {
        out->table_starts.erase(out->table_starts.begin() + 1);
      } else {
        ++out->table_starts[1];
      }
    }
    return s;
  }

 private:
  // StagingCounts::merge_runs: the records from a copy in which record j
  // (the middle one) also holds record j + 1's entries, its sums theirs.
  void MergeMiddleRuns(gpu::KeySortOutput* out) {
    runs_.assign(out->runs, out->runs + out->num_runs);
    const size_t j = runs_.size() / 2 - 1;
    gpu::BlockRun& a = runs_[j];
    const gpu::BlockRun& b = runs_[j + 1];
    a.key_bytes += b.head.key_size + b.key_bytes;
    a.value_bytes += b.head.value_size + b.value_bytes;
    a.growth += 4 * uint64_t{b.head.key_size} + b.head.value_size + b.growth;
    a.smallest_seqno = std::min({a.smallest_seqno, b.head.trailer >> 8, b.smallest_seqno});
    a.largest_seqno = std::max({a.largest_seqno, b.head.trailer >> 8, b.largest_seqno});
    a.min_shared = std::min({a.min_shared, b.head.shared, b.min_shared});
    a.filter_keys += ((b.head.flags & gpu::kPlanSameUserKey) == 0 ? 1 : 0) + b.filter_keys;
    a.deletions += ((b.head.trailer & 0xff) == 0 ? 1 : 0) + b.deletions;
    a.end = b.end;
    a.last_key_offset = b.last_key_offset;
    a.last_key_size = b.last_key_size;
    a.last_value_size = b.last_value_size;
    a.last_grandparents = b.last_grandparents;
    a.last_boundaries = b.last_boundaries;
    a.flags = 0;
    runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(j + 1));
    out->runs = runs_.data();
    out->num_runs = runs_.size();
  }

  const std::unique_ptr<gpu::KeySortDevice> inner_;
  std::vector<gpu::BlockRun> runs_;  // MergeMiddleRuns' records
  std::mutex plan_mu_;
  int* const encode_calls_;
  StagingCounts* const staging_;
  const uint64_t* const budget_;
};

class GpuExecutorTest : public testing::TestWithParam<std::string> {
 protected:
  GpuExecutorTest() : env_(NewMemEnv(Env::Default())) {
    topt_.comparator = &icmp_;
    topt_.user_comparator = BytewiseComparator();
    topt_.block_size = 1024;
    EXPECT_TRUE(env_->CreateDir(dbname_).ok());
  }

  void SetUp() override {
    options_.min_input_bytes = 0;
    options_.max_consecutive_failures = 3;
    options_.encode_chunk_bytes = 1;             // every output table its own chunk
    options_.device_split_min_bytes = 0;         // the device splits every job's tables,
    options_.device_split_window = 64;           // a few blocks at a time
    options_.key_first_min_bytes_per_entry = 0;  // device-encode jobs run key-first
    std::string reason;
    gpu_ = NewExecutor(options_, &reason);
    if (gpu_ == nullptr) GTEST_SKIP() << reason;
  }

  // An executor over this test's device kind, counting its device's
  // encode chunks in encode_calls_; nullptr and *reason without a GPU.
  std::unique_ptr<GpuCompactionExecutor> NewExecutor(
      const GpuExecutorOptions& options, std::string* reason,
      std::shared_ptr<gpu::DeviceMemoryLedger> ledger = nullptr) {
    std::unique_ptr<gpu::KeySortDevice> device;
    if (GetParam() == "host") {
      device = gpu::NewHostKeySortDevice(kBudget);
    } else {
      device = gpu::NewCudaKeySortDevice(options, reason);
      if (device == nullptr) return nullptr;
    }
    return std::make_unique<GpuCompactionExecutor>(
        options,
        std::make_unique<CountingDevice>(std::move(device), &encode_calls_, &staging_, &budget_),
        std::move(ledger));
  }

  // Runs job on a new executor of this test's device kind with options.
  Status RunOnNewExecutor(const GpuExecutorOptions& options, const test::GpuJob& job,
                          CompactionJobResult* result, std::map<uint64_t, std::string>* files) {
    std::string reason;
    std::unique_ptr<GpuCompactionExecutor> gpu = NewExecutor(options, &reason);
    if (gpu == nullptr) return Status::NotSupported("no executor", reason);
    return Run(gpu.get(), job, result, files);
  }

  test::GpuJob NewJob(Random* rnd, const test::GpuJobShape& shape = test::GpuJobShape()) {
    // Inputs of an earlier job are replaced (same numbers).
    return test::MakeRandomJob(rnd, env_.get(), dbname_, topt_, &icmp_, shape);
  }

  // Replaces env_ with an in-memory Env whose files live in page-locked
  // chunks of chunk_bytes (gpu::NewPinnedFileMemory), which both devices
  // copy to and from in place (lent input and output tables).
  void UsePinnedMemEnv(size_t chunk_bytes) {
    MemEnvOptions mem;
    mem.chunk_bytes = chunk_bytes;
    mem.memory = gpu::NewPinnedFileMemory();
    env_ = NewMemEnv(Env::Default(), mem);
    ASSERT_TRUE(env_->CreateDir(dbname_).ok());
  }

  // A job without long values whose output is several tables of about
  // 8 KiB (a chunk each with encode_chunk_bytes = 1).
  test::GpuJob NewSmallTablesJob(Random* rnd) {
    test::GpuJobShape shape;
    shape.allow_long_values = false;
    test::GpuJob job = NewJob(rnd, shape);
    Compaction::Params params = job.compaction->params();
    params.max_output_file_size = 8192;
    job.compaction = std::make_unique<Compaction>(params, &icmp_);
    return job;
  }

  Status Run(CompactionExecutor* e, const test::GpuJob& job, CompactionJobResult* result,
             std::map<uint64_t, std::string>* files) {
    return test::RunAndCapture(e, env_.get(), dbname_, topt_, &icmp_, job, result, files);
  }

  // Flips the byte at pick(its bytes) of the job's first L0 input table,
  // runs the job and expects Corruption("checksum mismatch") naming that
  // table file, with no output chunk landed (written) and no file left.
  void ExpectChecksumMismatchAfterFlip(const test::GpuJob& job,
                                       const std::function<uint64_t(const std::string&)>& pick) {
    const FileMetaPtr& victim = job.compaction->inputs(0)[0];
    const std::string fname = TableFileName(dbname_, victim->number);
    std::string bytes;
    ASSERT_TRUE(ReadFileToString(env_.get(), fname, &bytes).ok());
    const uint64_t pos = pick(bytes);
    if (HasFatalFailure()) return;
    ASSERT_LT(pos, bytes.size());
    bytes[pos] = static_cast<char>(bytes[pos] ^ 0x5a);
    ASSERT_TRUE(WriteStringToFile(env_.get(), bytes, fname, false).ok());
    // Both encode modes: the device checksums the blocks, or (keys-only)
    // the CPU does; the same error either way.
    // Device-encode mode runs key-first (docs/GPU.md, "Key-first jobs"):
    // Run leaves the checksums to the encode, which finds the mismatch
    // before its first chunk lands, and WaitVerified names the block;
    // keys-only mode's CPU finds it before the sort.
    for (const char* mode : {"device", "cpu"}) {
      SCOPED_TRACE(mode);
      ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
      CompactionJobResult result;
      std::map<uint64_t, std::string> files;
      const int waits = staging_.wait_verified_calls;
      const int landed = encode_calls_;
      Status s = Run(gpu_.get(), job, &result, &files);
      ::unsetenv("ACCELKV_GPU_ENCODE");
      const bool device = std::string(mode) == "device";
      EXPECT_EQ(device, staging_.key_first);
      EXPECT_EQ(device, result.stage_micros.count("gpu_gather") > 0);
      EXPECT_EQ(device ? waits + 1 : waits, staging_.wait_verified_calls);
      EXPECT_EQ(landed, encode_calls_);
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(std::string::npos, s.ToString().find("checksum mismatch")) << s.ToString();
      EXPECT_NE(std::string::npos,
                s.ToString().find("table file " + std::to_string(victim->number)))
          << s.ToString();
      // Device-encode mode may have created the output files (lent to the
      // device's copies back), listed for the caller to remove; keys-only
      // mode fails before the output.
      if (!device) {
        EXPECT_TRUE(result.outputs.empty());
      }
      EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
    }
  }

  // Splits by size only, with max_output_file_size limit0: runs the CPU
  // executor, then (when it made at least two outputs, first of size F)
  // both executors with limits F-2..F+2, in the encode modes mode(limit)
  // gives, expecting the GPU's files to equal the CPU's. Returns whether
  // the job split at all.
  bool ExpectSplitsAtTheExactLimit(test::GpuJob* job, uint64_t limit0, const std::string& trace,
                                   const std::function<std::vector<const char*>(uint64_t)>& modes,
                                   std::vector<GpuCompactionExecutor*> gpus = {}) {
    if (gpus.empty()) gpus.push_back(gpu_.get());
    Compaction::Params params = job->compaction->params();
    params.grandparents.clear();  // splits by size only
    params.subcompaction_boundaries.clear();
    params.max_output_file_size = limit0;
    job->compaction = std::make_unique<Compaction>(params, &icmp_);
    CompactionJobResult first;
    std::map<uint64_t, std::string> first_files;
    EXPECT_TRUE(Run(&cpu_, *job, &first, &first_files).ok());
    if (first.outputs.size() < 2) return false;
    const uint64_t f = first.outputs[0].file_size;
    for (uint64_t limit = f - 2; limit <= f + 2; ++limit) {
      params.max_output_file_size = limit;
      job->compaction = std::make_unique<Compaction>(params, &icmp_);
      for (const char* mode : modes(limit)) {
        ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
        SCOPED_TRACE(trace + ", limit " + std::to_string(limit) + " (first output " +
                     std::to_string(f) + "), encode mode " + mode);
        CompactionJobResult cpu_result;
        std::map<uint64_t, std::string> cpu_files;
        EXPECT_TRUE(Run(&cpu_, *job, &cpu_result, &cpu_files).ok());
        for (size_t g = 0; g < gpus.size(); ++g) {
          SCOPED_TRACE("executor " + std::to_string(g));
          CompactionJobResult gpu_result;
          std::map<uint64_t, std::string> gpu_files;
          const Status s = Run(gpus[g], *job, &gpu_result, &gpu_files);
          EXPECT_TRUE(s.ok()) << s.ToString();
          EXPECT_TRUE(cpu_files == gpu_files);
        }
      }
    }
    ::unsetenv("ACCELKV_GPU_ENCODE");
    return true;
  }

  // Runs the CPU executor on job (into *cpu_result) and expects the GPU
  // run's output to be the same (ExpectSameOutput) and to have counted
  // every input entry of the job.
  void ExpectCpuMatches(const test::GpuJob& job, const CompactionJobResult& gpu_result,
                        const std::map<uint64_t, std::string>& gpu_files,
                        CompactionJobResult* cpu_result) {
    std::map<uint64_t, std::string> cpu_files;
    ASSERT_TRUE(Run(&cpu_, job, cpu_result, &cpu_files).ok());
    ExpectSameOutput(*cpu_result, cpu_files, gpu_result, gpu_files);
    if (HasFatalFailure()) return;
    EXPECT_EQ(job.input_entries, gpu_result.input_entries);
  }

  // The GPU run's files and outputs equal the CPU run's (bytes, numbers,
  // metadata), and so do the entry counts and the bytes written.
  static void ExpectSameOutput(const CompactionJobResult& cpu_result,
                               const std::map<uint64_t, std::string>& cpu_files,
                               const CompactionJobResult& gpu_result,
                               const std::map<uint64_t, std::string>& gpu_files) {
    ASSERT_EQ(cpu_files.size(), gpu_files.size());
    for (const auto& [number, bytes] : cpu_files) {
      ASSERT_TRUE(gpu_files.count(number)) << number;
      ASSERT_TRUE(gpu_files.at(number) == bytes) << "file " << number << " differs";
    }
    ASSERT_EQ(cpu_result.outputs.size(), gpu_result.outputs.size());
    for (size_t i = 0; i < cpu_result.outputs.size(); ++i) {
      const FileMetaData& a = cpu_result.outputs[i];
      const FileMetaData& b = gpu_result.outputs[i];
      EXPECT_EQ(a.number, b.number);
      EXPECT_EQ(a.file_size, b.file_size);
      EXPECT_EQ(a.smallest.Encode().ToString(), b.smallest.Encode().ToString());
      EXPECT_EQ(a.largest.Encode().ToString(), b.largest.Encode().ToString());
      EXPECT_EQ(a.smallest_seqno, b.smallest_seqno);
      EXPECT_EQ(a.largest_seqno, b.largest_seqno);
      EXPECT_EQ(a.num_entries, b.num_entries);
      EXPECT_EQ(a.num_deletions, b.num_deletions);
    }
    EXPECT_EQ(cpu_result.input_entries, gpu_result.input_entries);
    EXPECT_EQ(cpu_result.output_entries, gpu_result.output_entries);
    EXPECT_EQ(cpu_result.dropped_entries, gpu_result.dropped_entries);
    EXPECT_EQ(cpu_result.bytes_written, gpu_result.bytes_written);
  }

  // Sets the device budget to 1/divisor of what the job needs whole (above
  // the fixed slack) and gives the job the boundaries ChunkBoundaries picks
  // for it, so that it runs in chunks.
  void MakeChunked(test::GpuJob* job, uint64_t divisor) {
    budget_ = kSlack + (WholeNeed(*job) - kSlack) / divisor;
    AddChunkBoundaries(job);
  }

  // The device memory the job needs whole, as the executor estimates it
  // (from the files' metadata, the key arena as the input bytes).
  static uint64_t WholeNeed(const test::GpuJob& job) {
    const Compaction& c = *job.compaction;
    const uint64_t bytes = c.TotalInputBytes();
    const uint64_t files = c.num_input_files(0) + c.num_input_files(1);
    return gpu::KeySortDevice::BytesNeeded(bytes, bytes, job.input_entries,
                                           job.input_entries + 2 * files);
  }

  // Replaces the job with a copy carrying the boundaries ChunkBoundaries
  // gives it at the current budget_, checking that they ascend and keep the
  // job's own.
  void AddChunkBoundaries(test::GpuJob* job) {
    Compaction::Params params = job->compaction->params();
    std::vector<std::string> bounds;
    ASSERT_TRUE(gpu_->ChunkBoundaries(Spec(*job), &bounds).ok());
    EXPECT_TRUE(std::adjacent_find(bounds.begin(), bounds.end(), std::greater_equal<>()) ==
                bounds.end());
    for (const std::string& b : params.subcompaction_boundaries) {
      EXPECT_TRUE(std::binary_search(bounds.begin(), bounds.end(), b)) << b;
    }
    params.subcompaction_boundaries = bounds;
    job->compaction = std::make_unique<Compaction>(params, &icmp_);
  }

  // BytesNeeded's fixed part (the slack every job is given).
  static inline const uint64_t kSlack = gpu::KeySortDevice::BytesNeeded(0, 0, 0, 0);

  // Moves the test to the POSIX Env, in a fresh directory on the file
  // system of $TMPDIR (through a FaultInjectionEnv with no fault set, since
  // env_ owns its Env and Env::Default() must not be deleted).
  void UsePosixEnv() {
    posix_dir_ = std::make_unique<test::TempDir>();
    env_ = std::make_unique<FaultInjectionEnv>(Env::Default());
    dbname_ = posix_dir_->File("db");
    ASSERT_TRUE(env_->CreateDir(dbname_).ok());
  }

  // The output variants of the write tests, in order: 0 the in-memory Env,
  // 1 POSIX files with buffered writes, 2 POSIX files with direct writes.
  // Sets the test up for it (variant 1 moves to POSIX files) and returns its
  // name.
  const char* UseWriteVariant(int variant) {
    if (variant == 1) UsePosixEnv();
    topt_.use_direct_writes = variant == 2;
    return variant == 0   ? "in-memory Env"
           : variant == 1 ? "POSIX Env, buffered writes"
                          : "POSIX Env, direct writes";
  }

  // Runs the chunked job as ChunkedJobsByteIdenticalToCpu does: from a
  // third of what it needs whole, the budget grows until it runs (a range
  // cannot be smaller than the blocks at its edges). NotSupported when
  // even nearly the whole need does not run it in chunks.
  Status RunChunked(test::GpuJob* job, CompactionJobResult* result,
                    std::map<uint64_t, std::string>* files) {
    const Compaction::Params picked = job->compaction->params();
    const uint64_t whole = WholeNeed(*job);
    budget_ = kSlack + (whole - kSlack) / 3;
    Status s;
    for (;;) {
      job->compaction = std::make_unique<Compaction>(picked, &icmp_);
      EXPECT_TRUE(gpu_->NeedsChunkBoundaries(Spec(*job)));
      AddChunkBoundaries(job);
      EXPECT_TRUE(gpu_->ShouldOffload(Spec(*job)));
      s = Run(gpu_.get(), *job, result, files);
      if (!s.IsNotSupported() || budget_ + (budget_ - kSlack) / 2 >= whole) break;
      budget_ += (budget_ - kSlack) / 2;
    }
    return s;
  }

  CompactionJobSpec Spec(const test::GpuJob& job) {
    CompactionJobSpec spec;
    spec.dbname = dbname_;
    spec.env = env_.get();
    spec.table_options = topt_;
    spec.compaction = job.compaction.get();
    spec.snapshots = job.snapshots;
    spec.internal_comparator = &icmp_;
    return spec;
  }

  std::string dbname_ = "/gpu-test-db";  // UsePosixEnv moves it
  InternalKeyComparator icmp_{BytewiseComparator()};
  TableOptions topt_;
  std::unique_ptr<test::TempDir> posix_dir_;  // UsePosixEnv's directory
  std::unique_ptr<Env> env_;
  GpuExecutorOptions options_;
  std::unique_ptr<GpuCompactionExecutor> gpu_;
  int encode_calls_ = 0;   // encode chunks landed, every executor of NewExecutor
  StagingCounts staging_;  // their staging calls
  uint64_t budget_ = 0;    // their devices' memory budget when not 0
  // One thread: with several, the subcompaction ranges of a job take their
  // file numbers in a racy order, and files are compared by number.
  CpuCompactionExecutor cpu_{1};
};

// The job shapes the randomized identity test cycles through, so that the
// outputs hold every case of the block format (docs/FORMAT.md, "Block"):
// shared prefixes or none, one-entry blocks, fixed and variable key and
// value widths, and blocks over 64 KiB (4-byte end offsets); and filter
// blocks of every size, or none.
test::GpuJobShape ShapeFor(int iter, Random* rnd, TableOptions* topt) {
  test::GpuJobShape shape;
  shape.l0_files = 1 + static_cast<int>(rnd->Uniform(6));
  shape.l1_files = static_cast<int>(rnd->Uniform(3));
  shape.entries_per_file = 20 + static_cast<int>(rnd->Uniform(400));
  shape.max_key_size = 1 + static_cast<uint32_t>(rnd->Uniform(100));
  topt->block_size = 1024;
  // Filters off, or from 1 probe (one line per 512 keys) to 12 probes and
  // many lines per key (the device builds them: EncodeFilter).
  static constexpr int kBloomBits[] = {10, 0, 1, 23, 64, 10, 3};
  topt->bloom_bits_per_key = kBloomBits[(iter / 5) % 7];
  // Direct writes: the device-encode plan then starts each table at a 4 KiB
  // boundary of the output buffer; the padding must never reach a file.
  topt->use_direct_writes = iter % 3 == 0;
  // Direct reads (here on the in-memory Env, which ignores the file
  // option): each input table in its own 4 KiB-aligned span of the file
  // arena, at its offset into its aligned cover. 3 of 7 jobs: both encode
  // modes, every shape, with and without direct writes.
  topt->direct_compaction_reads = iter % 7 < 3;
  switch (iter % 5) {
    case 0:  // variable keys and values, some values up to 64 KiB
      break;
    case 1:  // fixed-width keys, small blocks (many one-entry blocks)
      shape.fixed_key_size = 1 + static_cast<uint32_t>(rnd->Uniform(40));
      topt->block_size = 64 + rnd->Uniform(256);
      break;
    case 2:  // fixed-width keys and values (tombstones' values are empty)
      shape.fixed_key_size = 1 + static_cast<uint32_t>(rnd->Uniform(24));
      shape.fixed_value_size = static_cast<int>(rnd->Uniform(100));
      topt->block_size = 128 + rnd->Uniform(512);
      break;
    case 3:  // blocks over 64 KiB: 4-byte end offsets
      shape.entries_per_file = 300 + static_cast<int>(rnd->Uniform(400));
      shape.max_value_size = 400;
      topt->block_size = 70000 + rnd->Uniform(100000);
      break;
    case 4:  // every value empty: a fixed value width of 0
      shape.fixed_value_size = 0;
      topt->block_size = 256 + rnd->Uniform(2048);
      break;
  }
  return shape;
}

// The planner decides splits from an O(1) bound of the table size and asks
// for the exact estimate only when the bound reaches the limit
// (OutputSplitter::OutputBytes). A CPU run's first output size F is the exact
// estimate before the key that split it, so limits F-2..F+2 put that
// decision exactly at the boundary, on both sides; both encode modes must
// split where the CPU executor does.
TEST_P(GpuExecutorTest, SplitDecisionsAtTheExactSizeLimit) {
  Random rnd(test::TestSeed());
  for (int iter = 0; iter < 6; ++iter) {
    test::GpuJobShape shape;
    shape.allow_long_values = false;
    test::GpuJob job = NewJob(&rnd, shape);
    EXPECT_TRUE(ExpectSplitsAtTheExactLimit(&job, 8192 + rnd.Uniform(8192),
                                            "iteration " + std::to_string(iter), [](uint64_t) {
                                              return std::vector<const char*>{"device", "cpu"};
                                            }));
    if (HasFailure()) return;
  }
}

// The same exact-limit check over the randomized test's table shapes
// (ShapeFor) and filters of several lines per key: the planner skips the
// bound while a cached upper bound of it (grown per entry by
// Planner::MaxGrowth) stays below the limit, so the split must still be
// decided where each of that growth's terms is largest (a data block flushed
// before almost every key, 4-byte end offsets, many filter lines per key).
TEST_P(GpuExecutorTest, SplitDecisionsAtTheExactSizeLimitForEveryShape) {
  Random rnd(test::TestSeed());
  int checked = 0;
  for (int iter = 0; iter < 45; ++iter) {
    const test::GpuJobShape shape = ShapeFor(iter, &rnd, &topt_);
    if (iter >= 35) topt_.bloom_bits_per_key = 600 + static_cast<int>(rnd.Uniform(1200));
    test::GpuJob job = NewJob(&rnd, shape);
    // Jobs with too few entries to split are skipped.
    checked += ExpectSplitsAtTheExactLimit(
        &job, 2048 + rnd.Uniform(6144), "iteration " + std::to_string(iter),
        [iter](uint64_t limit) {
          return std::vector<const char*>{(iter + limit) % 2 == 0 ? "device" : "cpu"};
        });
    if (HasFailure()) return;
  }
  EXPECT_LE(20, checked);
}

// The planner adds each device block whole (OutputPlanner::AddWholeBlock)
// until one of its entries is to be decided. With values larger than the
// data block size (every block one entry) and smaller (a few entries a
// block), tables split as the CPU executor splits them: at the exact size
// limit, at limits under two entries' size (the bound is first computed at
// a table's second entry), on grandparent overlap alone, and at
// subcompaction boundaries; with and without device splits.
TEST_P(GpuExecutorTest, WholeBlocksSplitWhereTheCpuDoes) {
  Random rnd(test::TestSeed());
  topt_.block_size = 256;
  // Without device splits the planner decides each range's tables itself,
  // the device's block records covering its first one.
  GpuExecutorOptions options = options_;
  options.device_split_min_bytes = ~uint64_t{0};
  std::string reason;
  std::unique_ptr<GpuCompactionExecutor> unsplit = NewExecutor(options, &reason);
  ASSERT_NE(nullptr, unsplit) << reason;
  // A third of random jobs have no grandparents and so no overlap splits:
  // past the eighth job, more run until two jobs split on overlap alone
  // (eight alone fell short for one seed in CI).
  int overlap_splits = 0;
  for (int iter = 0; iter < 8 || (overlap_splits < 2 && iter < 40); ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    test::GpuJobShape shape;
    shape.allow_long_values = false;
    shape.fixed_value_size = iter % 2 == 0 ? 300 + static_cast<int>(rnd.Uniform(200))
                                           : 30 + static_cast<int>(rnd.Uniform(40));
    shape.entries_per_file = 120;
    test::GpuJob job = NewJob(&rnd, shape);
    Compaction::Params params = job.compaction->params();
    const uint64_t overlap = params.max_grandparent_overlap_bytes;
    const struct {
      uint64_t size;
      uint64_t overlap;  // max_grandparent_overlap_bytes
    } limits[] = {
        {1, overlap}, {700, overlap}, {1100, overlap}, {9000, overlap}, {uint64_t{1} << 30, 1}};
    for (const auto& limit : limits) {
      params.max_output_file_size = limit.size;
      params.max_grandparent_overlap_bytes = limit.overlap;
      job.compaction = std::make_unique<Compaction>(params, &icmp_);
      CompactionJobResult cpu_result;
      std::map<uint64_t, std::string> cpu_files;
      ASSERT_TRUE(Run(&cpu_, job, &cpu_result, &cpu_files).ok());
      if (limit.overlap == 1 && cpu_files.size() > params.subcompaction_boundaries.size() + 1) {
        ++overlap_splits;  // tables that end on grandparent overlap alone
      }
      for (const char* mode : {"device", "cpu"}) {
        for (GpuCompactionExecutor* gpu : {gpu_.get(), unsplit.get()}) {
          SCOPED_TRACE("limit " + std::to_string(limit.size) + ", overlap " +
                       std::to_string(limit.overlap) + ", encode mode " + mode +
                       (gpu == unsplit.get() ? ", no device splits" : ""));
          ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
          CompactionJobResult gpu_result;
          std::map<uint64_t, std::string> gpu_files;
          const Status s = Run(gpu, job, &gpu_result, &gpu_files);
          ::unsetenv("ACCELKV_GPU_ENCODE");
          ASSERT_TRUE(s.ok()) << s.ToString();
          EXPECT_TRUE(cpu_files == gpu_files);
        }
      }
    }
    EXPECT_TRUE(ExpectSplitsAtTheExactLimit(&job, 6000 + rnd.Uniform(6000),
                                            "iteration " + std::to_string(iter),
                                            [](uint64_t) {
                                              return std::vector<const char*>{"device", "cpu"};
                                            },
                                            {gpu_.get(), unsplit.get()}));
    if (HasFailure()) return;
  }
  EXPECT_LE(2, overlap_splits);
}

// Input files are read and output files written on several threads: a
// failed read, open, append or sync of any file is the job's error, and
// every output file created is listed in result->outputs (so the caller
// removes it), whichever thread failed.
TEST_P(GpuExecutorTest, FileErrorsOnAnyThreadListEveryCreatedOutput) {
  FaultInjectionEnv faults(env_.get());
  Random rnd(test::TestSeed());
  // direct: the input read with TableOptions::direct_compaction_reads
  // (aligned spans of the arena, aligned covers read).
  const struct {
    FaultKind kind;
    int64_t after;
    bool direct;
  } cases[] = {{FaultKind::kRead, 3, false},         {FaultKind::kOpenReadable, 2, false},
               {FaultKind::kOpenWritable, 1, false}, {FaultKind::kOpenWritable, 3, false},
               {FaultKind::kWrite, 2, false},        {FaultKind::kWrite, 5, false},
               {FaultKind::kSync, 0, false},         {FaultKind::kSync, 2, false},
               {FaultKind::kRead, 0, true},          {FaultKind::kRead, 3, true},
               {FaultKind::kOpenReadable, 2, true}};
  int iter = 0;
  for (const auto& c : cases) {
    const char* mode = iter++ % 2 == 0 ? "device" : "cpu";
    ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
    topt_.direct_compaction_reads = c.direct;
    SCOPED_TRACE(std::string(FaultKindName(c.kind)) + " after " + std::to_string(c.after) +
                 ", encode mode " + mode + (c.direct ? ", direct reads" : ""));
    test::GpuJobShape shape;
    shape.l0_files = 4;
    shape.allow_long_values = false;
    test::GpuJob job = NewJob(&rnd, shape);
    Compaction::Params params = job.compaction->params();
    params.max_output_file_size = 8192;  // several outputs
    job.compaction = std::make_unique<Compaction>(params, &icmp_);
    faults.SetFailure(c.kind, c.after, /*one_shot=*/false);
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    const Status s =
        test::RunAndCapture(gpu_.get(), &faults, dbname_, topt_, &icmp_, job, &result, &files);
    faults.ClearFailures();
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// A chunked job: its chunks' files are still being written while the next
// chunk is read and sorted (deferred writes). A read, open, write or sync
// failure in any chunk (also one that strikes an earlier chunk's deferred
// writes, or a later chunk's reads while they run) fails the job with
// every created file listed, so nothing is left behind.
TEST_P(GpuExecutorTest, ChunkedJobFileErrorsListEveryCreatedOutput) {
  FaultInjectionEnv faults(env_.get());
  Random rnd(test::TestSeed());
  const FaultKind kinds[] = {FaultKind::kRead, FaultKind::kOpenReadable, FaultKind::kWrite,
                             FaultKind::kSync, FaultKind::kOpenWritable};
  int iter = 0;
  for (FaultKind kind : kinds) {
    // where: 0 the middle of the job, 1 near its end, 2 the middle with
    // direct reads (each part's aligned cover into an aligned span).
    for (int where = 0; where < 3; ++where) {
      const char* mode = iter++ % 2 == 0 ? "device" : "cpu";
      ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
      topt_.direct_compaction_reads = where == 2;
      test::GpuJobShape shape;
      shape.l0_files = 4;
      shape.allow_long_values = false;
      test::GpuJob job = NewJob(&rnd, shape);
      Compaction::Params params = job.compaction->params();
      params.max_output_file_size = 8192;  // several outputs per chunk
      job.compaction = std::make_unique<Compaction>(params, &icmp_);
      ASSERT_NO_FATAL_FAILURE(MakeChunked(&job, 4));
      // A clean run counts the job's operations of this kind; the fault
      // then strikes in the middle of the job or near its end (a later
      // chunk, while an earlier chunk's writes may still run).
      CompactionJobSpec spec = Spec(job);
      spec.env = &faults;
      uint64_t next = 1000;
      spec.new_file_number = [&next] { return next++; };
      const uint64_t ops0 = faults.OpCount(kind);
      CompactionJobResult clean;
      ASSERT_TRUE(gpu_->Run(spec, &clean).ok());
      const int64_t ops = static_cast<int64_t>(faults.OpCount(kind) - ops0);
      for (const FileMetaData& f : clean.outputs) {
        ASSERT_TRUE(env_->RemoveFile(TableFileName(dbname_, f.number)).ok());
      }
      ASSERT_LT(2, ops) << FaultKindName(kind);
      const int64_t after = where == 1 ? ops - 2 : ops / 2;
      SCOPED_TRACE(std::string(FaultKindName(kind)) + " after " + std::to_string(after) + " of " +
                   std::to_string(ops) + ", encode mode " + mode +
                   (where == 2 ? ", direct reads" : ""));
      faults.SetFailure(kind, after, /*one_shot=*/false);
      CompactionJobResult result;
      next = 1000;
      const Status s = gpu_->Run(spec, &result);
      faults.ClearFailures();
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
      for (const FileMetaData& f : result.outputs) {
        EXPECT_TRUE(env_->RemoveFile(TableFileName(dbname_, f.number)).ok()) << f.number;
      }
      EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));  // every created file listed
    }
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
  budget_ = 0;
}

// The file arena is staged on the device as the files are read. A read
// error after some files were staged, or a table whose layout is corrupt,
// fails the job with every staged byte freed (CancelStaging), and the next
// job on the same executor takes the staged path and matches the CPU.
TEST_P(GpuExecutorTest, FailureAfterStagedFilesFreesTheStagingAndNextJobWorks) {
  FaultInjectionEnv faults(env_.get());
  Random rnd(test::TestSeed());
  test::GpuJobShape shape;
  shape.l0_files = 6;
  shape.allow_long_values = false;
  for (int iter = 0; iter < 4; ++iter) {
    // The last two with direct reads (each file in its own aligned span).
    topt_.direct_compaction_reads = iter >= 2;
    SCOPED_TRACE("iteration " + std::to_string(iter) +
                 (topt_.direct_compaction_reads ? ", direct reads" : ""));
    test::GpuJob job = NewJob(&rnd, shape);
    const int files = job.compaction->num_input_files(0) + job.compaction->num_input_files(1);
    CompactionJobResult result;
    std::map<uint64_t, std::string> out;
    const int ranges_before = staging_.ranges;
    if (iter % 2 == 0) {
      // One read fails after 2 + iter files were read (one Read per small
      // file): the files read before and after it were staged.
      faults.SetFailure(FaultKind::kRead, 2 + iter, /*one_shot=*/true);
      const Status s =
          test::RunAndCapture(gpu_.get(), &faults, dbname_, topt_, &icmp_, job, &result, &out);
      faults.ClearFailures();
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
      EXPECT_EQ(files - 1, staging_.ranges - ranges_before);
    } else {
      // A corrupt footer in the last table: found by its reader thread,
      // reported by the decode with the table's number.
      const FileMetaPtr& victim = job.compaction->num_input_files(1) > 0
                                      ? job.compaction->inputs(1).back()
                                      : job.compaction->inputs(0).back();
      const std::string fname = TableFileName(dbname_, victim->number);
      std::string bytes;
      ASSERT_TRUE(ReadFileToString(env_.get(), fname, &bytes).ok());
      for (size_t i = bytes.size() - 8; i < bytes.size(); ++i) bytes[i] = 0;  // the magic
      ASSERT_TRUE(WriteStringToFile(env_.get(), bytes, fname, false).ok());
      // Through the fault Env, whose files lend nothing: every file is read
      // and staged by StageRange.
      const Status s =
          test::RunAndCapture(gpu_.get(), &faults, dbname_, topt_, &icmp_, job, &result, &out);
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(std::string::npos,
                s.ToString().find("table file " + std::to_string(victim->number)))
          << s.ToString();
      EXPECT_EQ(files, staging_.ranges - ranges_before);
      job = NewJob(&rnd, shape);  // fresh, intact inputs
    }
    EXPECT_FALSE(staging_.pending);
    EXPECT_TRUE(result.outputs.empty());
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));

    CompactionJobResult cpu_result, gpu_result;
    std::map<uint64_t, std::string> cpu_files, gpu_files;
    ASSERT_TRUE(Run(&cpu_, job, &cpu_result, &cpu_files).ok());
    const Status s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(gpu_result.stage_micros.count("copy_in_wait"));
    EXPECT_FALSE(staging_.pending);
    EXPECT_TRUE(cpu_files == gpu_files);
  }
}

// Without ACCELKV_GPU_ENCODE the encode mode follows the input's average
// value size: at most device_encode_max_avg_value bytes the device encodes
// the data blocks, above it the CPU assembles them (keys-only); both equal
// the CPU executor's output.
TEST_P(GpuExecutorTest, EncodeModeFollowsTheAverageValueSize) {
  ::unsetenv("ACCELKV_GPU_ENCODE");
  Random rnd(test::TestSeed());
  test::GpuJobShape shape;
  shape.fixed_value_size = 100;  // tombstones' values are empty: the average is at most 100
  for (const uint64_t limit : {uint64_t{200}, uint64_t{20}}) {
    SCOPED_TRACE("device_encode_max_avg_value " + std::to_string(limit));
    GpuExecutorOptions options = options_;
    options.device_encode_max_avg_value = limit;
    const test::GpuJob job = NewJob(&rnd, shape);
    const int calls_before = encode_calls_;
    CompactionJobResult gpu_result, cpu_result;
    std::map<uint64_t, std::string> gpu_files;
    const Status s = RunOnNewExecutor(options, job, &gpu_result, &gpu_files);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) return;
    if (limit == 200) {
      EXPECT_LT(calls_before, encode_calls_);  // device encode
    } else {
      EXPECT_EQ(calls_before, encode_calls_);  // keys-only
    }
  }
}

// Key-first goes by the input's bytes per entry too
// (key_first_min_bytes_per_entry), in device-encode mode only; the output
// is the CPU executor's either way.
TEST_P(GpuExecutorTest, KeyFirstFollowsTheBytesPerEntry) {
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  Random rnd(test::TestSeed());
  test::GpuJobShape shape;
  shape.fixed_value_size = 100;  // about 100-130 bytes per entry in the files
  for (const uint64_t min : {uint64_t{0}, uint64_t{60}, uint64_t{400}, uint64_t{512}}) {
    SCOPED_TRACE("key_first_min_bytes_per_entry " + std::to_string(min));
    GpuExecutorOptions options = options_;
    options.key_first_min_bytes_per_entry = min;
    const test::GpuJob job = NewJob(&rnd, shape);
    CompactionJobResult gpu_result, cpu_result;
    std::map<uint64_t, std::string> gpu_files;
    const Status s = RunOnNewExecutor(options, job, &gpu_result, &gpu_files);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const bool key_first = min < 100;
    const bool gathered = gpu_result.stage_micros.count("gpu_gather") > 0;
    EXPECT_EQ(key_first, staging_.key_first);
    EXPECT_EQ(key_first, gathered);
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) break;
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

TEST_P(GpuExecutorTest, RandomJobsByteIdenticalToCpu) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  test::BlockShapes shapes;
  // Device-encode chunks: one table each, ~16 KiB of tables (a chunk of
  // several tables, or one larger one), the default (one chunk per job).
  const uint64_t chunk_sizes[] = {1, 16 << 10, GpuExecutorOptions().encode_chunk_bytes};
  std::unique_ptr<GpuCompactionExecutor> executors[3];
  for (int i = 0; i < 3; ++i) {
    GpuExecutorOptions options = options_;
    options.encode_chunk_bytes = chunk_sizes[i];
    std::string reason;
    executors[i] = NewExecutor(options, &reason);
    ASSERT_NE(nullptr, executors[i]) << reason;
  }
  int multi_chunk_jobs = 0;  // device-encode jobs encoded in 2+ chunks of 2+ tables
  // Both encode modes: the device builds the data blocks, or the CPU
  // assembles them from the arenas (keys-only). Five shapes and two modes:
  // every shape runs in both modes, and each chunk size in both.
  // A job's tables are small enough for a 16 KiB chunk to group several of
  // them only in some jobs (about 1% of seeds have none in 60 jobs): more
  // jobs run until one does, so the multi-table chunk path is always covered.
  uint64_t jobs_per_executor[3] = {0, 0, 0};
  for (int iter = 0; iter < 60 || (multi_chunk_jobs == 0 && iter < 600); ++iter) {
    const char* mode = iter % 2 == 0 ? "device" : "cpu";
    const int which = (iter / 2) % 3;
    ++jobs_per_executor[which];
    GpuCompactionExecutor* gpu = executors[which].get();
    ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
    SCOPED_TRACE("iteration " + std::to_string(iter) + ", encode mode " + mode + ", chunk bytes " +
                 std::to_string(chunk_sizes[which]));
    const test::GpuJobShape shape = ShapeFor(iter, &rnd, &topt_);
    const test::GpuJob job = NewJob(&rnd, shape);
    CompactionJobResult cpu_result, gpu_result;
    std::map<uint64_t, std::string> cpu_files, gpu_files;
    ASSERT_TRUE(Run(&cpu_, job, &cpu_result, &cpu_files).ok());
    const int calls_before = encode_calls_;
    const int ranges_before = staging_.ranges;
    const uint64_t staged_before = staging_.staged_bytes;
    const uint64_t lent_before = staging_.lent_bytes;
    const uint64_t lent_out_before = staging_.lent_out_bytes;
    const int unaligned_before = staging_.unaligned_ranges;
    const int keys_only_before = staging_.keys_only_decodes;
    Status s = Run(gpu, job, &gpu_result, &gpu_files);
    ASSERT_TRUE(s.ok()) << s.ToString();
    // Direct reads: every table's span starts and ends at a 4 KiB boundary
    // (and the arena itself is page aligned: unaligned_arenas below).
    if (topt_.direct_compaction_reads) {
      EXPECT_EQ(unaligned_before, staging_.unaligned_ranges);
    }
    if (iter % 2 == 0) {
      // Device-encode mode: every input file was staged as it was read
      // (direct reads: its aligned span, one range each), or staged from
      // the in-memory Env's own bytes without a read (the host reference
      // device takes every lent table; the CUDA device none of this Env's,
      // which are not page-locked), DecodeKeys took the staged arena
      // instead of uploading it (copy_in_wait), and the device checksummed
      // the blocks.
      const uint64_t lent = staging_.lent_bytes - lent_before;
      if (topt_.direct_compaction_reads) {
        EXPECT_EQ(job.compaction->num_input_files(0) + job.compaction->num_input_files(1),
                  staging_.ranges - ranges_before);
        EXPECT_EQ(0u, lent);
      } else {
        const uint64_t input_bytes = job.compaction->TotalInputBytes();
        EXPECT_EQ(input_bytes, staging_.staged_bytes - staged_before);
        EXPECT_EQ(GetParam() == "host" ? input_bytes : 0u, lent);
      }
      // The output tables: filled in place in the in-memory Env's files
      // on the host reference device (lent extents), written from the
      // host output buffer on the CUDA device (this Env's memory is not
      // page-locked).
      EXPECT_EQ(GetParam() == "host" ? OutputBytes(gpu_result) : 0u,
                staging_.lent_out_bytes - lent_out_before);
      EXPECT_TRUE(gpu_result.stage_micros.count("copy_in_wait"));
      EXPECT_LT(0u, staging_.run_blocks);
      EXPECT_FALSE(gpu_result.stage_micros.count("verify_cpu"));
    } else {
      // Keys-only mode: nothing staged; the CPU checksummed the blocks and
      // the device got only their keys.
      EXPECT_EQ(ranges_before, staging_.ranges);
      EXPECT_EQ(1, staging_.keys_only_decodes - keys_only_before);
      EXPECT_EQ(0u, staging_.run_blocks);
      EXPECT_TRUE(gpu_result.stage_micros.count("verify_cpu"));
    }
    EXPECT_FALSE(staging_.pending);
    const int calls = encode_calls_ - calls_before;
    const int tables = static_cast<int>(gpu_result.outputs.size());
    if (iter % 2 != 0) {
      EXPECT_EQ(0, calls);  // keys-only mode
    } else if (which == 0) {
      EXPECT_EQ(std::max(1, tables), calls);  // one table per chunk
    } else if (which == 1) {
      EXPECT_LE(1, calls);
      EXPECT_GE(std::max(1, tables), calls);
      if (calls >= 2 && calls < tables) ++multi_chunk_jobs;
    } else {
      EXPECT_EQ(1, calls);
    }
    ExpectSameOutput(cpu_result, cpu_files, gpu_result, gpu_files);
    if (HasFatalFailure()) return;
    EXPECT_EQ(job.input_entries, gpu_result.input_entries);
    EXPECT_EQ(cpu_result.bytes_read, gpu_result.bytes_read);
    EXPECT_EQ(cpu_result.bytes_written, gpu_result.bytes_written);
    for (const char* stage : {"read", "decode", "copy_in", "verify", "sort", "dedup", "write"}) {
      EXPECT_TRUE(gpu_result.stage_micros.count(stage)) << stage;
    }
    // Device-encode mode encodes whole tables on the device (gpu_encode);
    // keys-only mode on the CPU (encode).
    EXPECT_EQ(iter % 2 == 0, gpu_result.stage_micros.count("gpu_encode") > 0);
    EXPECT_EQ(iter % 2 != 0, gpu_result.stage_micros.count("encode") > 0);
    // The CUDA device's verify runs beside the sort and the dedup: the
    // overlap it reports lies within both, and device busy time counts it
    // once (1 us of slack for the truncation of each stage to whole us).
    const auto& st = gpu_result.stage_micros;
    const auto stage = [&st](const char* name) {
      const auto it = st.find(name);
      return it == st.end() ? uint64_t{0} : it->second;
    };
    EXPECT_LE(stage("verify_overlap"), stage("verify"));
    EXPECT_LE(stage("verify_overlap"), stage("sort") + stage("dedup") + 1);
    uint64_t busy = 0;
    for (const char* name : {"copy_in", "gpu_gather", "gpu_check", "gpu_decode", "verify", "sort",
                             "dedup", "copy_out", "gpu_plan", "gpu_encode"}) {
      busy += stage(name);
    }
    EXPECT_EQ(busy - stage("verify_overlap"), gpu_result.device_busy_micros);
    // The CPU seconds by stage: each of the job's stages measured, and
    // together (with "other", the job thread outside them) the job's.
    double staged = 0;
    for (const auto& [name, cpu] : gpu_result.stage_cpu_seconds) {
      EXPECT_GE(cpu, 0.0) << name;
      staged += cpu;
    }
    EXPECT_NEAR(gpu_result.cpu_seconds, staged, 1e-9);
    // Both modes plan on the CPU; keys-only mode encodes there too.
    const std::vector<const char*> cpu_stages{"read",
                                              "validate",
                                              "decode",
                                              "sort",
                                              "plan",
                                              "output",
                                              iter % 2 == 0 ? "gpu_encode" : "encode",
                                              "write",
                                              "release"};
    for (const char* name : cpu_stages) {
      EXPECT_TRUE(gpu_result.stage_cpu_seconds.count(name)) << name;
    }
    for (const auto& [number, bytes] : cpu_files) {
      ASSERT_TRUE(test::CountBlockShapes(bytes, &shapes).ok()) << number;
    }
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
  EXPECT_GT(shapes.no_prefix, 0u);
  EXPECT_GT(shapes.prefix, 0u);
  EXPECT_GT(shapes.one_entry, 0u);
  EXPECT_GT(shapes.fixed_keys, 0u);
  EXPECT_GT(shapes.variable_keys, 0u);
  EXPECT_GT(shapes.fixed_values, 0u);
  EXPECT_GT(shapes.variable_values, 0u);
  EXPECT_GT(shapes.wide_ends, 0u);
  std::printf(
      "output data blocks: %llu; P=0 %llu, P>0 %llu, one-entry %llu, fixed keys %llu, "
      "variable keys %llu, fixed values %llu, variable values %llu, 4-byte ends %llu\n",
      static_cast<unsigned long long>(shapes.blocks),
      static_cast<unsigned long long>(shapes.no_prefix),
      static_cast<unsigned long long>(shapes.prefix),
      static_cast<unsigned long long>(shapes.one_entry),
      static_cast<unsigned long long>(shapes.fixed_keys),
      static_cast<unsigned long long>(shapes.variable_keys),
      static_cast<unsigned long long>(shapes.fixed_values),
      static_cast<unsigned long long>(shapes.variable_values),
      static_cast<unsigned long long>(shapes.wide_ends));
  std::printf("device-encode jobs in several multi-table chunks: %d\n", multi_chunk_jobs);
  EXPECT_GT(multi_chunk_jobs, 0);
  EXPECT_EQ(0, staging_.unaligned_arenas);
  for (int i = 0; i < 3; ++i) {
    const GpuExecutorStats stats = executors[i]->GetStats();
    EXPECT_EQ(jobs_per_executor[i], stats.jobs);
    EXPECT_EQ(0u, stats.failures);
  }
}

// An injected failure before the encode creates no file. At the encode it
// strikes the device call that encodes the job's last block: in
// device-encode mode with one table per chunk every table but the last was
// written first, and each is listed in result->outputs, so nothing is left
// once the caller removed them (RunAndCapture does); in keys-only mode it
// strikes before the CPU assembly, with no file.
TEST_P(GpuExecutorTest, InjectedFailureAtEachStageListsEveryCreatedFile) {
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewSmallTablesJob(&rnd);  // several outputs
  CompactionJobResult cpu_result;
  std::map<uint64_t, std::string> cpu_files;
  ASSERT_TRUE(Run(&cpu_, job, &cpu_result, &cpu_files).ok());
  const size_t tables = cpu_result.outputs.size();
  ASSERT_GE(tables, 3u);
  const GpuStage stages[] = {GpuStage::kAlloc, GpuStage::kCopyIn, GpuStage::kVerify,
                             GpuStage::kSort,  GpuStage::kDedup,  GpuStage::kCopyOut,
                             GpuStage::kEncode};
  options_.max_consecutive_failures = 100;
  std::string reason;
  gpu_ = NewExecutor(options_, &reason);
  ASSERT_NE(nullptr, gpu_) << reason;
  uint64_t failures = 0;
  for (const char* mode : {"device", "cpu"}) {
    ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
    for (GpuStage stage : stages) {
      SCOPED_TRACE(std::string(GpuStageName(stage)) + ", encode mode " + mode);
      InjectionGuard guard(stage);
      CompactionJobResult result;
      std::map<uint64_t, std::string> files;
      const int calls_before = encode_calls_;
      Status s = Run(gpu_.get(), job, &result, &files);
      EXPECT_TRUE(s.IsAborted()) << s.ToString();
      EXPECT_NE(std::string::npos, s.ToString().find(GpuStageName(stage))) << s.ToString();
      if (stage == GpuStage::kEncode && std::string(mode) == "device") {
        // Every chunk (a table each) landed but the last, which failed.
        EXPECT_EQ(static_cast<int>(tables) - 1, encode_calls_ - calls_before);
        ASSERT_EQ(tables - 1, result.outputs.size());
        for (size_t i = 0; i < result.outputs.size(); ++i) {
          EXPECT_EQ(cpu_result.outputs[i].number, result.outputs[i].number);
          EXPECT_EQ(cpu_result.outputs[i].file_size, result.outputs[i].file_size);
        }
      } else {
        EXPECT_TRUE(result.outputs.empty());
      }
      EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
      ++failures;
    }
    // After the failures, the same executor still produces the CPU's bytes
    // (the fallback path loses nothing and the device is reusable).
    CompactionJobResult gpu_result;
    std::map<uint64_t, std::string> gpu_files;
    ASSERT_TRUE(Run(gpu_.get(), job, &gpu_result, &gpu_files).ok());
    EXPECT_TRUE(cpu_files == gpu_files);
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
  EXPECT_EQ(failures, gpu_->GetStats().failures);
}

// The plan entries come back while the CPU plans (WaitPlan): a failed
// wait, on one of the ranges' threads, fails the job with Aborted and no
// file, and the next job still gives the CPU executor's bytes.
TEST_P(GpuExecutorTest, FailedPlanWaitFailsTheJobWithNoFiles) {
  Random rnd(test::TestSeed());
  test::GpuJobShape shape;
  shape.allow_long_values = false;
  test::GpuJob job = NewJob(&rnd, shape);
  ASSERT_NO_FATAL_FAILURE(MakeChunked(&job, 4));  // several subcompaction ranges
  budget_ = 0;  // whole again: one Run, every range planned on its own thread
  CompactionJobResult cpu_result;
  std::map<uint64_t, std::string> cpu_files;
  ASSERT_TRUE(Run(&cpu_, job, &cpu_result, &cpu_files).ok());
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  // With the device's block plan a planner waits only where it goes entry
  // by entry; without it for every entry it reads.
  for (const char* block_plan : {"0", "1"}) {
    SCOPED_TRACE(std::string("ACCELKV_GPU_BLOCK_PLAN=") + block_plan);
    ::setenv("ACCELKV_GPU_BLOCK_PLAN", block_plan, 1);
    int failed = 0;
    for (int fail : {1, 3}) {
      SCOPED_TRACE("failing wait " + std::to_string(fail));
      staging_.plan_waits = 0;
      staging_.fail_plan_wait = fail;
      CompactionJobResult result;
      std::map<uint64_t, std::string> files;
      const Status s = Run(gpu_.get(), job, &result, &files);
      staging_.fail_plan_wait = 0;
      if (staging_.plan_waits < fail) {
        EXPECT_TRUE(s.ok()) << s.ToString();  // fewer waits than that: nothing failed
        continue;
      }
      ++failed;
      EXPECT_TRUE(s.IsAborted()) << s.ToString();
      EXPECT_NE(std::string::npos, s.ToString().find("injected by the test")) << s.ToString();
      EXPECT_TRUE(result.outputs.empty());
      EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
      EXPECT_FALSE(staging_.pending);
    }
    // Every job with a kept entry waits at least once without a block plan.
    if (std::string(block_plan) == "0") {
      EXPECT_LE(1, failed);
    }
  }
  ::unsetenv("ACCELKV_GPU_BLOCK_PLAN");
  CompactionJobResult gpu_result;
  std::map<uint64_t, std::string> gpu_files;
  ASSERT_TRUE(Run(gpu_.get(), job, &gpu_result, &gpu_files).ok());
  EXPECT_TRUE(cpu_files == gpu_files);
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// The device splits each subcompaction range into its output tables
// (docs/GPU.md, "Table splits") where the CPU executor does, with tables
// small enough to need several windows; with device_split_min_bytes above
// the tables' size it cuts each range as one table and the planner goes on
// entry by entry: the same files either way.
TEST_P(GpuExecutorTest, DeviceSplitsEveryTableWhereTheCpuDoes) {
  Random rnd(test::TestSeed());
  for (int iter = 0; iter < 4; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    test::GpuJobShape shape;
    shape.allow_long_values = false;
    test::GpuJob job = NewJob(&rnd, shape);
    Compaction::Params params = job.compaction->params();
    if (iter % 2 == 0) params.subcompaction_boundaries.clear();  // one range
    params.max_output_file_size = (8 << 10) + rnd.Uniform(16 << 10);
    job.compaction = std::make_unique<Compaction>(params, &icmp_);
    CompactionJobResult cpu_result;
    std::map<uint64_t, std::string> cpu_files;
    ASSERT_TRUE(Run(&cpu_, job, &cpu_result, &cpu_files).ok());
    ASSERT_LE(3u, cpu_files.size());  // tables that start inside a range
    ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
    CompactionJobResult gpu_result;
    std::map<uint64_t, std::string> gpu_files;
    ASSERT_TRUE(Run(gpu_.get(), job, &gpu_result, &gpu_files).ok());
    EXPECT_EQ(cpu_files.size(), staging_.table_starts);
    EXPECT_TRUE(cpu_files == gpu_files);
    GpuExecutorOptions options = options_;
    options.device_split_min_bytes = params.max_output_file_size + 1;
    std::string reason;
    std::unique_ptr<GpuCompactionExecutor> unsplit = NewExecutor(options, &reason);
    ASSERT_NE(nullptr, unsplit) << reason;
    std::map<uint64_t, std::string> unsplit_files;
    ASSERT_TRUE(Run(unsplit.get(), job, &gpu_result, &unsplit_files).ok());
    ::unsetenv("ACCELKV_GPU_ENCODE");
    EXPECT_EQ(0u, staging_.table_starts);
    EXPECT_TRUE(cpu_files == unsplit_files);
  }
}

// The planner checks every device split against the CPU rule: a split
// dropped or moved by one entry fails the job with Corruption and nothing
// written, and the next job is byte-identical to the CPU executor.
TEST_P(GpuExecutorTest, DeviceSplitThatDisagreesIsCorruptionWithNoFiles) {
  Random rnd(test::TestSeed());
  test::GpuJobShape shape;
  shape.allow_long_values = false;
  test::GpuJob job = NewJob(&rnd, shape);
  Compaction::Params params = job.compaction->params();  // one range, tables of 32 KiB
  params.subcompaction_boundaries.clear();
  params.max_output_file_size = 32 << 10;
  job.compaction = std::make_unique<Compaction>(params, &icmp_);
  CompactionJobResult cpu_result;
  std::map<uint64_t, std::string> cpu_files;
  ASSERT_TRUE(Run(&cpu_, job, &cpu_result, &cpu_files).ok());
  ASSERT_LE(3u, cpu_files.size());
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  for (int alter : {1, 2}) {
    SCOPED_TRACE("alteration " + std::to_string(alter));
    staging_.alter_split = alter;
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    const Status s = Run(gpu_.get(), job, &result, &files);
    staging_.alter_split = 0;
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("a table where the")) << s.ToString();
    EXPECT_TRUE(result.outputs.empty());
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
  }
  CompactionJobResult gpu_result;
  std::map<uint64_t, std::string> gpu_files;
  ASSERT_TRUE(Run(gpu_.get(), job, &gpu_result, &gpu_files).ok());
  ::unsetenv("ACCELKV_GPU_ENCODE");
  EXPECT_EQ(cpu_files.size(), staging_.table_starts);
  EXPECT_TRUE(cpu_files == gpu_files);
}

// The planner checks each device block record against the boundary rule:
// a record holding two blocks' entries (one block where the rule cuts two)
// fails the job with Corruption and nothing written, whether its blocks
// hold one entry each (AddWholeBlock's case) or several; the next job is
// byte-identical to the CPU executor.
TEST_P(GpuExecutorTest, DeviceBlockLongerThanTheRuleIsCorruptionWithNoFiles) {
  Random rnd(test::TestSeed());
  topt_.block_size = 256;
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  for (const int value_size : {400, 40}) {
    SCOPED_TRACE("values of " + std::to_string(value_size) + " bytes");
    test::GpuJobShape shape;
    shape.allow_long_values = false;
    shape.fixed_value_size = value_size;
    test::GpuJob job = NewJob(&rnd, shape);
    Compaction::Params params = job.compaction->params();  // one range, one table
    params.subcompaction_boundaries.clear();
    params.grandparents.clear();
    params.max_output_file_size = uint64_t{1} << 30;
    job.compaction = std::make_unique<Compaction>(params, &icmp_);
    staging_.merge_runs = true;
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    const Status s = Run(gpu_.get(), job, &result, &files);
    staging_.merge_runs = false;
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("boundary rule")) << s.ToString();
    EXPECT_TRUE(result.outputs.empty());
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
    CompactionJobResult cpu_result, gpu_result;
    std::map<uint64_t, std::string> cpu_files, gpu_files;
    ASSERT_TRUE(Run(&cpu_, job, &cpu_result, &cpu_files).ok());
    ASSERT_TRUE(Run(gpu_.get(), job, &gpu_result, &gpu_files).ok());
    EXPECT_TRUE(cpu_files == gpu_files);
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

TEST_P(GpuExecutorTest, RepeatedFailuresMarkUnhealthy) {
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewJob(&rnd);
  EXPECT_TRUE(gpu_->healthy());
  EXPECT_TRUE(gpu_->ShouldOffload(Spec(job)));
  {
    InjectionGuard guard(GpuStage::kSort);
    for (int i = 0; i < options_.max_consecutive_failures; ++i) {
      CompactionJobResult result;
      std::map<uint64_t, std::string> files;
      EXPECT_TRUE(Run(gpu_.get(), job, &result, &files).IsAborted());
    }
  }
  EXPECT_FALSE(gpu_->healthy());
  EXPECT_FALSE(gpu_->ShouldOffload(Spec(job)));
}

// Executors that share a device (DeviceMemoryLedger): a job whose device
// bytes do not fit beside what other jobs hold is refused before it starts
// (NotSupported, so the database reruns it on the CPU), creates no file and
// leaves the GPU healthy. Once the others let go it runs, byte-identical to
// the CPU, and gives its bytes back.
TEST_P(GpuExecutorTest, JobRefusedWhileOtherJobsHoldTheDeviceMemory) {
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewJob(&rnd);
  const uint64_t capacity = 1ull << 40;
  auto ledger = std::make_shared<gpu::DeviceMemoryLedger>(capacity);
  std::string reason;
  std::unique_ptr<GpuCompactionExecutor> gpu = NewExecutor(options_, &reason, ledger);
  ASSERT_NE(nullptr, gpu) << reason;
  ASSERT_TRUE(gpu->ShouldOffload(Spec(job)));
  ASSERT_TRUE(ledger->TryReserve(capacity - 1));  // another executor's job
  CompactionJobResult result;
  std::map<uint64_t, std::string> files;
  Status s = Run(gpu.get(), job, &result, &files);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("other jobs hold the device memory"))
      << s.ToString();
  EXPECT_TRUE(result.outputs.empty());
  EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
  EXPECT_EQ(capacity - 1, ledger->reserved());
  EXPECT_EQ(0u, gpu->GetStats().failures);
  EXPECT_EQ(0u, gpu->GetStats().jobs);
  EXPECT_TRUE(gpu->healthy());

  ledger->Release(capacity - 1);
  CompactionJobResult gpu_result, cpu_result;
  std::map<uint64_t, std::string> gpu_files;
  s = Run(gpu.get(), job, &gpu_result, &gpu_files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(0u, ledger->reserved());
  EXPECT_EQ(1u, gpu->GetStats().jobs);
  ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
}

// Device-encode mode's output ring (gpu::kOutputRingSlots slots of the
// largest encode chunk, device_encoder.h): a job of many small tables, each
// its own chunk, lands chunk after chunk in the slots, each reused once the
// files of the chunk before in it are written. Byte-identical to the CPU
// executor in memory, on POSIX files and with direct writes (the slots keep
// the tables 4 KiB-aligned for O_DIRECT).
TEST_P(GpuExecutorTest, OutputRingByteIdenticalToCpu) {
  Random rnd(test::TestSeed());
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  for (int variant = 0; variant < 3; ++variant) {
    const char* name = nullptr;
    ASSERT_NO_FATAL_FAILURE(name = UseWriteVariant(variant));
    SCOPED_TRACE(name);
    for (int iter = 0; iter < 3; ++iter) {
      test::GpuJobShape shape;
      shape.entries_per_file = 2000 + static_cast<int>(rnd.Uniform(1000));
      shape.allow_long_values = false;
      test::GpuJob job = NewJob(&rnd, shape);
      Compaction::Params params = job.compaction->params();
      params.max_output_file_size = 8192 + rnd.Uniform(8192);  // many small tables
      job.compaction = std::make_unique<Compaction>(params, &icmp_);
      CompactionJobResult gpu_result, cpu_result;
      std::map<uint64_t, std::string> gpu_files;
      const Status s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(1u, gpu_result.stage_micros.count("slot_wait"))
          << gpu_files.size() << " tables did not go through the ring";
      ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
      if (HasFatalFailure()) break;
    }
  }
  topt_.use_direct_writes = false;
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// An in-memory Env lends its files' bytes (RandomAccessFile::Lend), here
// from page-locked chunks of 4 KiB (gpu::NewPinnedFileMemory), so data and
// index blocks lie across chunk boundaries: the device stages every table
// from the Env's chunks (one StageFrom per table) without a read, the CPU
// validates it there; every output table's file is prepared first and
// lends its chunks, which the device's copies back fill (ChunkPlace::lent),
// and the output equals the CPU executor's. When a StageFrom fails midway
// (the second table's, odd iterations) the staging is cancelled, the
// executor copies the lent tables into the host arena and the device's
// layout check (CheckBlocks) stages it whole: the same output.
TEST_P(GpuExecutorTest, LentInputsAndOutputsByteIdenticalToCpu) {
  ASSERT_NO_FATAL_FAILURE(UsePinnedMemEnv(4096));
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);  // staged: device-encode mode
  Random rnd(test::TestSeed());
  for (int iter = 0; iter < 8; ++iter) {
    const bool fail = iter % 2 == 1;
    // Key-first (the default) in the first six iterations: the device reads
    // the blocks' keys from the Env's page-locked chunks (4 KiB: blocks
    // across them) while the copies run; a staging that failed is not.
    const bool key_first = iter < 6;
    if (!key_first) ::setenv("ACCELKV_GPU_KEY_FIRST", "0", 1);
    SCOPED_TRACE("iteration " + std::to_string(iter) +
                 (fail ? ", the second StageFrom fails" : "") +
                 (key_first ? "" : ", not key-first"));
    test::GpuJobShape shape;
    shape.allow_long_values = false;
    const test::GpuJob job = NewJob(&rnd, shape);
    const uint64_t input_bytes = job.compaction->TotalInputBytes();
    const uint64_t lent_before = staging_.lent_bytes;
    const int pieces_before = staging_.lent_pieces;
    const int tables_before = staging_.lent_tables;
    const int marks_before = staging_.marks;
    const uint64_t lent_out_before = staging_.lent_out_bytes;
    const int ranges_before = staging_.ranges;
    staging_.stage_from_calls = 0;
    staging_.fail_stage_from = fail ? 2 : 0;
    CompactionJobResult gpu_result, cpu_result;
    std::map<uint64_t, std::string> gpu_files;
    const Status s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
    staging_.fail_stage_from = 0;
    ::unsetenv("ACCELKV_GPU_KEY_FIRST");
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(key_first, staging_.key_first);
    EXPECT_EQ(key_first && !fail, gpu_result.stage_micros.count("gpu_gather") > 0);
    EXPECT_EQ(ranges_before, staging_.ranges);  // nothing was read and staged
    if (fail) {
      EXPECT_EQ(1, staging_.lent_tables - tables_before);  // the first table, then none
      EXPECT_LT(0u, staging_.lent_bytes - lent_before);
      EXPECT_GT(input_bytes, staging_.lent_bytes - lent_before);
      // The device's layout check (CheckBlocks) staged the arena whole.
      EXPECT_TRUE(gpu_result.stage_micros.count("copy_in_wait"));
    } else {
      EXPECT_EQ(input_bytes, staging_.lent_bytes - lent_before);
      EXPECT_LT(static_cast<int>(input_bytes / 4096), staging_.lent_pieces - pieces_before);
      // Key-first: staged in groups (staging_groups.h), each table in up to
      // key_first_stage_groups parts, a MarkStaged after each group; else
      // a StageFrom per table.
      const int tables = job.compaction->num_input_files(0) + job.compaction->num_input_files(1);
      const auto groups = static_cast<int>(GpuExecutorOptions().key_first_stage_groups);
      if (key_first) {
        EXPECT_EQ(groups, staging_.marks - marks_before);
        EXPECT_LE(tables, staging_.lent_tables - tables_before);
        EXPECT_GE(tables * groups, staging_.lent_tables - tables_before);
      } else {
        EXPECT_EQ(0, staging_.marks - marks_before);
        EXPECT_EQ(tables, staging_.lent_tables - tables_before);
      }
      EXPECT_TRUE(gpu_result.stage_micros.count("copy_in_wait"));
    }
    EXPECT_FALSE(staging_.pending);
    EXPECT_EQ(OutputBytes(gpu_result), staging_.lent_out_bytes - lent_out_before);
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) break;
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// A device failure after a chunk was placed (its tables' files opened to
// lend their bytes: page-locked in-memory files) but before it landed: the
// job fails, and every file it created is listed in result->outputs (also
// those opened and never handed to the writers), so nothing is left once
// the caller removed them.
TEST_P(GpuExecutorTest, EncodeFailureAfterLentTablesOpenedListsThem) {
  ASSERT_NO_FATAL_FAILURE(UsePinnedMemEnv(4096));
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewSmallTablesJob(&rnd);
  CompactionJobResult cpu_result;
  std::map<uint64_t, std::string> cpu_files;
  ASSERT_TRUE(Run(&cpu_, job, &cpu_result, &cpu_files).ok());
  ASSERT_GE(cpu_result.outputs.size(), 3u);
  for (int at = 0; at < 3; ++at) {
    SCOPED_TRACE("chunk " + std::to_string(at) + " fails after its place");
    staging_.fail_landed_at = at;
    const uint64_t lent_before = staging_.lent_out_bytes;
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    const Status s = Run(gpu_.get(), job, &result, &files);
    staging_.fail_landed_at = -1;
    EXPECT_TRUE(s.IsAborted()) << s.ToString();
    EXPECT_LT(lent_before, staging_.lent_out_bytes);
    // Chunks 0 .. at landed but the last; `at` was placed (the CUDA device
    // also placed the next one, queued before the wait).
    EXPECT_LE(static_cast<size_t>(at) + 1, result.outputs.size());
    for (size_t i = 0; i < result.outputs.size(); ++i) {
      EXPECT_EQ(cpu_result.outputs[i].number - cpu_result.outputs[0].number,
                result.outputs[i].number - result.outputs[0].number);
    }
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
  }
  // The executor is still healthy and exact.
  CompactionJobResult gpu_result;
  std::map<uint64_t, std::string> gpu_files;
  ASSERT_TRUE(Run(gpu_.get(), job, &gpu_result, &gpu_files).ok());
  ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// The executors of a process share their pinned host buffers (PinnedPool,
// pinned_pool.h): a job gives them back when it ends and another
// executor's job of the same size takes them instead of pinning its own.
TEST_P(GpuExecutorTest, ExecutorsShareThePinnedHostBuffers) {
  if (GetParam() == "host") GTEST_SKIP() << "the host reference device pins no memory";
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewJob(&rnd);
  std::string reason;
  std::unique_ptr<GpuCompactionExecutor> other = NewExecutor(options_, &reason);
  ASSERT_NE(nullptr, other) << reason;
  // Twice on the first executor: its buffers settle on the pool's regions.
  for (int i = 0; i < 2; ++i) {
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    ASSERT_TRUE(Run(gpu_.get(), job, &result, &files).ok());
  }
  const GpuExecutorStats first = gpu_->GetStats();
  ASSERT_GT(first.pinned_host_bytes, 0u);
  EXPECT_EQ(first.pinned_host_bytes, other->GetStats().pinned_host_bytes);  // one pool
  CompactionJobResult gpu_result, cpu_result;
  std::map<uint64_t, std::string> gpu_files;
  ASSERT_TRUE(Run(other.get(), job, &gpu_result, &gpu_files).ok());
  // The other executor's job pinned nothing more.
  EXPECT_EQ(first.pinned_host_bytes, other->GetStats().pinned_host_bytes);
  ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
}

TEST_P(GpuExecutorTest, FlippedByteIsCorruptionWithNoFiles) {
  Random rnd(test::TestSeed());
  for (int iter = 0; iter < 20; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    const test::GpuJob job = NewJob(&rnd);
    const FileMetaPtr& victim =
        job.compaction->inputs(0)[rnd.Uniform(job.compaction->num_input_files(0))];
    const std::string fname = TableFileName(dbname_, victim->number);
    std::string bytes;
    ASSERT_TRUE(ReadFileToString(env_.get(), fname, &bytes).ok());
    // Half the time a byte inside the data blocks (caught by the device's
    // CRC32C), else anywhere (footer, index: caught on the CPU).
    const size_t pos = iter % 2 == 0 ? rnd.Uniform(bytes.size() / 2) : rnd.Uniform(bytes.size());
    bytes[pos] = static_cast<char>(bytes[pos] ^ (1 + rnd.Uniform(255)));
    ASSERT_TRUE(WriteStringToFile(env_.get(), bytes, fname, false).ok());
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    const int landed = encode_calls_;
    Status s = Run(gpu_.get(), job, &result, &files);
    EXPECT_TRUE(s.IsCorruption()) << "pos " << pos << ": " << s.ToString();
    // No output chunk was written; a key-first job may have created its
    // first output files (lent to the device's copies back) before its
    // verify failed: listed, and removed by the caller.
    EXPECT_EQ(landed, encode_calls_);
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
  }
  EXPECT_EQ(0u, gpu_->GetStats().failures);
  EXPECT_TRUE(gpu_->healthy());
}

// db_bench-style keys (16-byte zero-padded decimals), whose differing bits
// fit 64: the CUDA device sorts them as packed 64-bit radix keys
// (stage sort_pack), byte-identical to the CPU executor, with tombstones,
// many versions and snapshots as the random jobs have them.
TEST_P(GpuExecutorTest, PackedRadixKeysByteIdenticalToCpu) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    test::GpuJobShape shape;
    shape.entries_per_file = 2000;
    shape.fixed_key_size = 16;
    shape.decimal_key_range = round % 2 == 0 ? 100000 : 1u << 30;
    shape.fixed_value_size = static_cast<int>(rnd.Uniform(200));
    shape.allow_long_values = false;
    const test::GpuJob job = NewJob(&rnd, shape);
    CompactionJobResult gpu_result;
    std::map<uint64_t, std::string> gpu_files;
    const Status s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
    ASSERT_TRUE(s.ok()) << s.ToString();
    CompactionJobResult cpu_result;
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) return;
    if (GetParam() == "cuda") {
      EXPECT_EQ(1u, gpu_result.stage_micros.count("sort_pack"));
    }
  }
}

// Many subcompaction ranges, and few long ones: the plan entries come back
// in parts (the CUDA device: more than 64 ranges in equal parts, else up to
// four slices per range, each range's first slice first; the host
// reference: stretches of 1,000 entries), and every range's planner waits
// for the parts it reaches: byte-identical to the CPU executor either way.
TEST_P(GpuExecutorTest, PlanPartsOverManyOrLongRangesByteIdenticalToCpu) {
  Random rnd(test::TestSeed());
  for (const auto& [ranges, entries_per_file] : {std::pair{100, 4000}, std::pair{4, 14000}}) {
    SCOPED_TRACE(std::to_string(ranges) + " ranges");
    test::GpuJobShape shape;
    shape.entries_per_file = entries_per_file;
    shape.fixed_key_size = 16;
    shape.decimal_key_range = 100000;
    shape.fixed_value_size = 100;
    shape.allow_long_values = false;
    test::GpuJob job = NewJob(&rnd, shape);
    Compaction::Params params = job.compaction->params();
    params.subcompaction_boundaries.clear();
    for (int b = 1; b < ranges; ++b) {
      std::string key = std::to_string(uint64_t{100000} * b / ranges);
      key.insert(0, 16 - key.size(), '0');
      params.subcompaction_boundaries.push_back(key);
    }
    job.compaction = std::make_unique<Compaction>(params, &icmp_);
    // Without the device's block plan every range reads its plan entries;
    // with it they are not needed here (each range is one table).
    for (const char* block_plan : {"0", "1"}) {
      SCOPED_TRACE(std::string("ACCELKV_GPU_BLOCK_PLAN=") + block_plan);
      ::setenv("ACCELKV_GPU_BLOCK_PLAN", block_plan, 1);
      ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
      staging_.plan_waits = 0;
      CompactionJobResult gpu_result;
      std::map<uint64_t, std::string> gpu_files;
      const Status s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
      ::unsetenv("ACCELKV_GPU_ENCODE");
      ::unsetenv("ACCELKV_GPU_BLOCK_PLAN");
      ASSERT_TRUE(s.ok()) << s.ToString();
      if (std::string(block_plan) == "0") {
        EXPECT_LE(ranges, staging_.plan_waits);  // at least one wait per range
      }
      CompactionJobResult cpu_result;
      ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
      if (HasFatalFailure()) return;
      EXPECT_LE(static_cast<size_t>(ranges), gpu_result.outputs.size());  // cut at every boundary
    }
  }
}

// Two L0 tables of 40,000 entries (16-byte keys, 200-byte values: over
// 1,000 data blocks and 4 MiB each) and one L1 table.
test::GpuJobShape LargeTablesShape() {
  test::GpuJobShape shape;
  shape.l0_files = 2;
  shape.l1_files = 1;
  shape.entries_per_file = 40000;
  shape.fixed_key_size = 16;
  shape.fixed_value_size = 200;
  shape.allow_long_values = false;
  return shape;
}

// Staging groups (docs/GPU.md, "Staging groups"): a key-first job whose
// tables are lent is staged in groups, the low keys first, and its encode
// starts each part once the groups its entries' values are in have landed.
// On the CUDA device every group after the first is held back 3 ms
// (ACCELKV_GPU_TEST_STAGE_DELAY_US), so the encode begins while later
// groups are still to come: an encode that read a value before its group
// landed would read the last job's bytes. The output is the CPU executor's,
// byte for byte, with one output chunk or many (1 MiB).
TEST_P(GpuExecutorTest, StagingGroupsHeldBackByteIdenticalToCpu) {
  ASSERT_NO_FATAL_FAILURE(UsePinnedMemEnv(64 << 10));
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  ::setenv("ACCELKV_GPU_KEY_FIRST", "1", 1);  // whatever the values' size
  ::setenv("ACCELKV_GPU_TEST_STAGE_DELAY_US", "3000", 1);
  Random rnd(test::TestSeed());
  for (int iter = 0; iter < 4; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    GpuExecutorOptions options = options_;
    options.encode_chunk_bytes = iter % 2 == 0 ? options.encode_chunk_bytes : 1 << 20;
    const test::GpuJob job = NewJob(&rnd, LargeTablesShape());
    const int marks = staging_.marks;
    CompactionJobResult gpu_result, cpu_result;
    std::map<uint64_t, std::string> gpu_files;
    const Status s = RunOnNewExecutor(options, job, &gpu_result, &gpu_files);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(staging_.key_first);
    EXPECT_EQ(static_cast<int>(options.key_first_stage_groups), staging_.marks - marks);
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) break;
  }
  ::unsetenv("ACCELKV_GPU_TEST_STAGE_DELAY_US");
  ::unsetenv("ACCELKV_GPU_KEY_FIRST");
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// Tables of several MiB (over 1000 data blocks each): byte-identical to the
// CPU executor; a byte flipped in the second half of a large table is
// Corruption with no output file.
TEST_P(GpuExecutorTest, LargeTablesByteIdenticalToCpu) {
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewJob(&rnd, LargeTablesShape());
  const FileMetaPtr& big = job.compaction->inputs(0)[0];
  ASSERT_GT(big->file_size, 4u << 20);
  CompactionJobResult gpu_result;
  std::map<uint64_t, std::string> gpu_files;
  Status s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  CompactionJobResult cpu_result;
  ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
  if (HasFatalFailure()) return;

  const std::string fname = TableFileName(dbname_, big->number);
  std::string bytes;
  ASSERT_TRUE(ReadFileToString(env_.get(), fname, &bytes).ok());
  const size_t pos = bytes.size() / 2 + rnd.Uniform(static_cast<uint32_t>(bytes.size() / 3));
  bytes[pos] = static_cast<char>(bytes[pos] ^ 0x21);
  ASSERT_TRUE(WriteStringToFile(env_.get(), bytes, fname, false).ok());
  CompactionJobResult result;
  std::map<uint64_t, std::string> files;
  const int landed = encode_calls_;
  s = Run(gpu_.get(), job, &result, &files);
  EXPECT_TRUE(s.IsCorruption()) << "pos " << pos << ": " << s.ToString();
  EXPECT_EQ(landed, encode_calls_);  // no output chunk written (files listed are removed)
  EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
}

// An input table of several read pieces (4 MiB each, read on several
// threads): a read failure at any piece, or a file shorter than its
// metadata, fails the job (IOError, Corruption "truncated table file") with
// the staging freed and no file left; the same job then runs byte-identical
// to the CPU executor.
TEST_P(GpuExecutorTest, InputReadFailureInAnyPieceFailsTheJob) {
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewJob(&rnd, LargeTablesShape());
  const FileMetaPtr& big = job.compaction->inputs(0)[0];
  ASSERT_GT(big->file_size, 4u << 20);  // two pieces or more
  for (const int64_t after : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{4}}) {
    SCOPED_TRACE("read failure after " + std::to_string(after));
    FaultInjectionEnv faults(env_.get());
    faults.SetFailure(FaultKind::kRead, after, /*one_shot=*/true);
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    const Status s =
        test::RunAndCapture(gpu_.get(), &faults, dbname_, topt_, &icmp_, job, &result, &files);
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_EQ(1u, faults.InjectedCount(FaultKind::kRead));
    EXPECT_FALSE(staging_.pending);
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
  }

  const std::string fname = TableFileName(dbname_, big->number);
  std::string bytes;
  ASSERT_TRUE(ReadFileToString(env_.get(), fname, &bytes).ok());
  Status s;
  for (const size_t size : {size_t{1} << 20, (size_t{4} << 20) + 1000}) {  // in either piece
    SCOPED_TRACE("the file cut at " + std::to_string(size));
    ASSERT_TRUE(WriteStringToFile(env_.get(), bytes.substr(0, size), fname, false).ok());
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    s = Run(gpu_.get(), job, &result, &files);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("truncated table file")) << s.ToString();
    EXPECT_FALSE(staging_.pending);
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
  }

  ASSERT_TRUE(WriteStringToFile(env_.get(), bytes, fname, false).ok());
  CompactionJobResult gpu_result;
  std::map<uint64_t, std::string> gpu_files;
  s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  CompactionJobResult cpu_result;
  ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
}

// Output tables of several pieces (gpu::kWritePieceBytes) are written with
// positioned writes, a piece per work item on the writer threads, where
// their files take them (the in-memory Env, buffered POSIX files), and
// appended whole where not (POSIX direct writes): byte-identical to the CPU
// executor either way. A write failure at any piece fails the job with no
// file left.
TEST_P(GpuExecutorTest, OutputTablesWrittenInPiecesByteIdenticalToCpu) {
  Random rnd(test::TestSeed());
  for (int variant = 0; variant < 3; ++variant) {
    const char* name = nullptr;
    ASSERT_NO_FATAL_FAILURE(name = UseWriteVariant(variant));
    SCOPED_TRACE(name);
    test::GpuJob job = NewJob(&rnd, LargeTablesShape());
    Compaction::Params params = job.compaction->params();
    params.max_output_file_size = 5 << 20;  // tables of three pieces, and a shorter last one
    // Only the size closes a table: the random job's grandparent overlap
    // limit (at most about 210 KB) or its subcompaction boundaries could
    // leave every table under one piece (seed 1795776934049181397 did).
    params.max_grandparent_overlap_bytes = 1ull << 40;
    params.subcompaction_boundaries.clear();
    job.compaction = std::make_unique<Compaction>(params, &icmp_);
    bool positioned = variant < 2;
    if (variant == 2) {  // a file system that refuses O_DIRECT: buffered writes
      std::unique_ptr<WritableFile> probe;
      const Status p = NewPosixDirectWritableFile(dbname_ + "/probe", IOPriority::kHigh, &probe);
      ASSERT_TRUE(p.ok() || p.IsInvalidArgument()) << p.ToString();
      positioned = !p.ok();
      if (p.ok()) {
        ASSERT_TRUE(probe->Close().ok());
        ASSERT_TRUE(env_->RemoveFile(dbname_ + "/probe").ok());
      }
    }
    FaultInjectionEnv counted(env_.get());
    CompactionJobResult gpu_result;
    std::map<uint64_t, std::string> gpu_files;
    Status s = test::RunAndCapture(gpu_.get(), &counted, dbname_, topt_, &icmp_, job, &gpu_result,
                                   &gpu_files);
    ASSERT_TRUE(s.ok()) << s.ToString();
    // A table of several pieces: PrepareWriteAt, then a WriteAt per piece,
    // or where the file refused it (NotSupported) one Append; any other
    // table: one Append.
    uint64_t expected_writes = 0;
    int several = 0;
    for (const auto& [number, bytes] : gpu_files) {
      const uint64_t pieces = (bytes.size() + gpu::kWritePieceBytes - 1) / gpu::kWritePieceBytes;
      several += pieces > 1 ? 1 : 0;
      expected_writes += pieces == 1 ? 1 : 1 + (positioned ? pieces : 1);
    }
    ASSERT_LE(1, several) << "no output table of several pieces";
    EXPECT_EQ(expected_writes, counted.OpCount(FaultKind::kWrite));
    CompactionJobResult cpu_result;
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) return;
    if (!positioned) continue;
    // The first write (a PrepareWriteAt or an Append), and a later one (a
    // WriteAt, or with every table appended an Append) fail.
    for (const int64_t after : {int64_t{0}, int64_t{3}}) {
      SCOPED_TRACE("write failure after " + std::to_string(after));
      counted.SetFailure(FaultKind::kWrite, after, /*one_shot=*/false);
      CompactionJobResult result;
      std::map<uint64_t, std::string> files;
      s = test::RunAndCapture(gpu_.get(), &counted, dbname_, topt_, &icmp_, job, &result, &files);
      counted.ClearFailures();
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
      EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
    }
  }
  topt_.use_direct_writes = false;
}

// EncodeBlocks hands the chunks back in order, each once, and stops where
// landed says so (the executor's says so once a write failed): no chunk
// after it is handed back, and the call returns OK keeping the job's input
// on the device, so the executor's own call after it still writes the
// CPU's bytes.
TEST_P(GpuExecutorTest, EncodeStopsWhereLandedSays) {
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewSmallTablesJob(&rnd);
  for (const int stop : {0, 1}) {
    SCOPED_TRACE("stop after chunk " + std::to_string(stop));
    staging_.encode_probe_stop = stop;
    CompactionJobResult gpu_result;
    std::map<uint64_t, std::string> gpu_files;
    const Status s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
    staging_.encode_probe_stop = -1;
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_LE(3u, gpu_result.outputs.size());
    EXPECT_TRUE(staging_.encode_probe_status.ok()) << staging_.encode_probe_status.ToString();
    std::vector<size_t> expected;
    for (int c = 0; c <= stop; ++c) expected.push_back(static_cast<size_t>(c));
    EXPECT_EQ(expected, staging_.encode_probe_landed);
    CompactionJobResult cpu_result;
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// EncodeBlocks checks each chunk just before it places it: a last chunk
// that ends past the job's blocks fails the call (InvalidArgument) once
// every chunk before it landed, in order, however many chunks the device
// may queue ahead of their landings; the job fails with nothing left.
TEST_P(GpuExecutorTest, EncodeRefusesABadChunkAfterTheOnesBeforeItLanded) {
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewSmallTablesJob(&rnd);
  for (const size_t ahead : {size_t{1}, size_t{2}, size_t{0}}) {  // 0: the executor's (all)
    SCOPED_TRACE("queue_ahead " + std::to_string(ahead));
    staging_.encode_probe_stop = std::numeric_limits<int>::max();
    staging_.encode_probe_ahead = ahead;
    staging_.encode_probe_bad_last = true;
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    const Status s = Run(gpu_.get(), job, &result, &files);
    staging_.encode_probe_stop = -1;
    staging_.encode_probe_ahead = 0;
    staging_.encode_probe_bad_last = false;
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_TRUE(staging_.encode_probe_status.IsInvalidArgument())
        << staging_.encode_probe_status.ToString();
    ASSERT_LE(3u, staging_.encode_probe_chunks);
    std::vector<size_t> expected(staging_.encode_probe_chunks - 1);
    std::iota(expected.begin(), expected.end(), size_t{0});
    EXPECT_EQ(expected, staging_.encode_probe_landed);
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
  }
  // The executor is still healthy and exact.
  CompactionJobResult gpu_result;
  std::map<uint64_t, std::string> gpu_files;
  ASSERT_TRUE(Run(gpu_.get(), job, &gpu_result, &gpu_files).ok());
  CompactionJobResult cpu_result;
  ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// A malformed data block late in a table of over 1024 blocks fails the job
// with its own error; with a second malformed block early in the table the
// job fails with the early one's (the first in file order), whichever order
// the CPU validates them in (a validation in slices on several threads was
// measured, bench/results/2026-11-26-h100-sliced-validation.md).
TEST_P(GpuExecutorTest, FirstMalformedBlockInFileOrderFailsTheJob) {
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewJob(&rnd, LargeTablesShape());
  const std::string fname = TableFileName(dbname_, job.compaction->inputs(0)[0]->number);
  std::string bytes;
  ASSERT_TRUE(ReadFileToString(env_.get(), fname, &bytes).ok());
  std::vector<std::pair<uint64_t, uint64_t>> blocks;  // offset, contents size
  ASSERT_TRUE(test::ForEachDataBlock(bytes, [&blocks](uint64_t offset, const BlockLayout& l) {
                blocks.emplace_back(offset, l.size);
              }).ok());
  ASSERT_GE(blocks.size(), 1024u);
  const auto run = [&](const std::string& file) {
    EXPECT_TRUE(WriteStringToFile(env_.get(), file, fname, false).ok());
    CompactionJobResult result;
    std::map<uint64_t, std::string> files;
    const Status s = Run(gpu_.get(), job, &result, &files);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_TRUE(result.outputs.empty());
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
    return s.ToString();
  };
  // The last block's entry count (its footer's first word) made too large.
  std::string late = bytes;
  const auto& [last_offset, last_size] = blocks.back();
  EncodeFixed32(&late[last_offset + last_size - BlockLayout::kFooterSize], 0xffffffffu);
  const std::string late_error = run(late);
  EXPECT_EQ(std::string::npos, late_error.find("unsupported compression")) << late_error;
  // ...and the second block's trailer naming a compression.
  std::string both = late;
  both[blocks[1].first + blocks[1].second] = 1;
  const std::string both_error = run(both);
  EXPECT_NE(std::string::npos, both_error.find("unsupported compression")) << both_error;
  EXPECT_NE(late_error, both_error);
}

// The first failure in table order fails the job, whether the reader
// threads found it (a table's index block) or the device's layout check
// (a data block of an earlier table: device-encode mode) or the readers
// again (keys-only mode, which checks layouts on the CPU): the same error
// in both encode modes.
TEST_P(GpuExecutorTest, FirstFailingTableFailsTheJobWhicheverCheckFoundIt) {
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewJob(&rnd);
  ASSERT_GE(job.compaction->num_input_files(0), 2);
  std::string fname[2], bytes[2];
  uint64_t number[2];
  for (int i = 0; i < 2; ++i) {
    number[i] = job.compaction->inputs(0)[i]->number;
    fname[i] = TableFileName(dbname_, number[i]);
    ASSERT_TRUE(ReadFileToString(env_.get(), fname[i], &bytes[i]).ok());
  }
  // Table i with its last data block's entry count made too large, or its
  // index block's first byte flipped (its checksum then fails).
  const auto bad_block = [](std::string b) {
    uint64_t offset = 0, size = 0;
    EXPECT_TRUE(test::ForEachDataBlock(b, [&](uint64_t o, const BlockLayout& l) {
                  offset = o;
                  size = l.size;
                }).ok());
    EncodeFixed32(&b[offset + size - BlockLayout::kFooterSize], 0xffffffffu);
    return b;
  };
  const auto bad_index = [](std::string b) {
    Footer footer;
    const Slice tail(b.data() + b.size() - Footer::kEncodedLength, Footer::kEncodedLength);
    EXPECT_TRUE(footer.DecodeFrom(tail, b.size()).ok());
    b[footer.index_handle.offset] ^= 0x55;
    return b;
  };
  for (const char* mode : {"device", "cpu"}) {
    ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
    for (int first_block = 0; first_block < 2; ++first_block) {
      SCOPED_TRACE(std::string("encode mode ") + mode +
                   (first_block ? ", block then index" : ", index then block"));
      ASSERT_TRUE(WriteStringToFile(env_.get(),
                                    first_block ? bad_block(bytes[0]) : bad_index(bytes[0]),
                                    fname[0], false)
                      .ok());
      ASSERT_TRUE(WriteStringToFile(env_.get(),
                                    first_block ? bad_index(bytes[1]) : bad_block(bytes[1]),
                                    fname[1], false)
                      .ok());
      CompactionJobResult result;
      std::map<uint64_t, std::string> files;
      const Status s = Run(gpu_.get(), job, &result, &files);
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(std::string::npos, s.ToString().find("table file " + std::to_string(number[0])))
          << s.ToString();
      // A block's check failed (its entry count: "block entry count too
      // large", "block sections do not fill the block" or "data block has
      // more entries than distinct keys", by its widths), or the index
      // block's checksum.
      EXPECT_EQ(first_block != 0, s.ToString().find("checksum") == std::string::npos)
          << s.ToString();
      EXPECT_TRUE(result.outputs.empty());
      EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
    }
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// Values of 0 to 300 KiB, then to 3 MiB, in device-encode mode: output
// blocks of 16 KiB and more go to the thread-block-per-block kernel
// (EncodeLargeBlocksKernel), those of 1 MiB and more to several thread
// blocks each (EncodeHugeBlocksKernel, their CRC by HugeBlocksCrcKernel),
// smaller ones to the warp kernel, in the same encode parts; all copy in
// 16-byte units from every source alignment.
TEST_P(GpuExecutorTest, LargeValueBlocksByteIdenticalToCpu) {
  ::setenv("ACCELKV_GPU_ENCODE", "device", 1);
  Random rnd(test::TestSeed());
  test::GpuJobShape shape;
  shape.l0_files = 3;
  shape.l1_files = 2;
  test::BlockShapes shapes;
  // Every shape counted below, or more jobs of the 3 MiB shape until it is:
  // the six jobs left a huge block with a small entry before it out for
  // about 0.7% of seeds (3 runs of 450 on the GPU machine).
  const auto covered = [&shapes] {
    return shapes.wide_ends > 0 && shapes.one_entry > 0 && shapes.huge > 0 && shapes.huge_many > 0;
  };
  for (int iter = 0; iter < 6 || (!covered() && iter < 60); ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    // Values to 300 KiB (a thread block per block on CUDA), then to 3 MiB
    // (blocks of 1 MiB or more: several thread blocks each).
    shape.entries_per_file = iter < 4 ? 40 : 8;
    shape.max_value_size = iter < 4 ? 300 << 10 : 3 << 20;
    shape.mix_small_values = iter >= 4;
    const test::GpuJob job = NewJob(&rnd, shape);
    const int calls_before = encode_calls_;
    CompactionJobResult gpu_result, cpu_result;
    std::map<uint64_t, std::string> gpu_files;
    const Status s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_LT(calls_before, encode_calls_);  // device encode
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) return;
    for (const auto& [number, bytes] : gpu_files) {
      ASSERT_TRUE(test::CountBlockShapes(bytes, &shapes).ok());
    }
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
  EXPECT_GT(shapes.wide_ends, 0u);  // blocks over 64 KiB with an end-offset array
  EXPECT_GT(shapes.one_entry, 0u);
  EXPECT_GT(shapes.huge, 0u);
  EXPECT_GT(shapes.huge_many, 0u);  // a small entry before a huge one
}

TEST_P(GpuExecutorTest, ChecksumMismatchReportsFileAndBlock) {
  Random rnd(test::TestSeed());
  test::GpuJobShape shape;
  shape.allow_long_values = false;
  const test::GpuJob job = NewJob(&rnd, shape);
  // The first data block starts at offset 0 with its keys: byte 0 is the
  // first user-key byte, so the block layout stays valid and only the
  // CRC32C can tell.
  ExpectChecksumMismatchAfterFlip(job, [](const std::string&) { return uint64_t{0}; });
  EXPECT_EQ(2u, gpu_->GetStats().corruptions);  // once per encode mode
  if (HasFatalFailure()) return;
  // The mismatch was this job's alone: sound jobs on the same executor, in
  // both encode modes (keys-only mode's WaitVerified has no verify of its
  // own and must not return the last one's), equal the CPU executor's.
  for (const char* mode : {"cpu", "device"}) {
    SCOPED_TRACE(std::string("after the mismatch, ") + mode);
    ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
    const test::GpuJob sound = NewJob(&rnd, shape);
    CompactionJobResult gpu_result, cpu_result;
    std::map<uint64_t, std::string> gpu_files;
    const Status s = Run(gpu_.get(), sound, &gpu_result, &gpu_files);
    ::unsetenv("ACCELKV_GPU_ENCODE");
    ASSERT_TRUE(s.ok()) << s.ToString();
    ExpectCpuMatches(sound, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) return;
  }
}

// Input blocks of 16 KiB or more are verified by a thread block each on the
// CUDA device (VerifyLargeBlocksKernel), smaller ones by a warp: a flipped
// value byte in the middle of the largest block is Corruption naming the
// file, as in a small block.
TEST_P(GpuExecutorTest, LargeBlockChecksumMismatchReportsFile) {
  Random rnd(test::TestSeed());
  test::GpuJobShape shape;
  shape.l0_files = 2;
  shape.l1_files = 1;
  shape.entries_per_file = 30;
  shape.max_value_size = 300 << 10;
  const test::GpuJob job = NewJob(&rnd, shape);
  ExpectChecksumMismatchAfterFlip(job, [](const std::string& bytes) {
    uint64_t offset = 0;
    BlockLayout largest;
    EXPECT_TRUE(test::ForEachDataBlock(bytes, [&](uint64_t o, const BlockLayout& l) {
                  if (l.value_bytes > largest.value_bytes) {
                    offset = o;
                    largest = l;
                  }
                }).ok());
    EXPECT_GE(largest.size, uint64_t{16} << 10) << "no block of 16 KiB or more to corrupt";
    // A value byte: the layout stays valid and only the CRC32C can tell.
    return offset + largest.values_offset() + largest.value_bytes / 2;
  });
  EXPECT_EQ(2u, gpu_->GetStats().corruptions);  // once per encode mode
}

// EncodeBlocks takes the arenas the last Run left on the device
// (keep_for_encode) and keeps them for the next chunk until
// ReleaseEncodeInput or a failed call: without them it is Aborted, never a
// read of stale device memory.
TEST_P(GpuExecutorTest, EncodeNeedsTheInputOfTheLastRun) {
  std::unique_ptr<gpu::KeySortDevice> device;
  if (GetParam() == "host") {
    device = gpu::NewHostKeySortDevice(kBudget);
  } else {
    std::string reason;
    device = gpu::NewCudaKeySortDevice(options_, &reason);
    if (device == nullptr) GTEST_SKIP() << reason;
  }
  uint8_t* arena = nullptr;
  uint8_t* key_arena = nullptr;
  uint8_t* out = nullptr;
  ASSERT_TRUE(device->HostArena(1, &arena).ok());
  ASSERT_TRUE(device->HostKeyArena(1, &key_arena).ok());
  ASSERT_TRUE(device->HostOutput(1, &out).ok());
  gpu::KeySortInput in;  // an empty job
  in.arena = arena;
  in.key_arena = key_arena;
  gpu::EncodeJob job;
  job.arena = arena;
  job.key_arena = key_arena;
  std::map<std::string, uint64_t> micros;
  gpu::KeySortOutput sorted;
  auto encode = [&](uint64_t first = 0, uint64_t end = 0) {
    return device->EncodeBlocks(
        job, {{first, end}},
        [&](size_t) {
          return gpu::ChunkPlace{out, 0, 1, {}};
        },
        1, &micros, [](size_t) { return true; });
  };

  Status s = encode();  // no Run yet
  EXPECT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("gpu: encode")) << s.ToString();
  in.flags.assign(1, 0);  // flags for an entry the job does not have
  s = device->Run(in, &sorted, &micros);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  in.flags.clear();  // none flagged
  ASSERT_TRUE(device->Run(in, &sorted, &micros).ok());
  EXPECT_TRUE(encode().IsAborted());  // that Run did not keep its input
  in.keep_for_encode = true;
  s = device->Run(in, &sorted, &micros);  // without the values the encode needs
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  const gpu::HostVector<uint64_t> value_offset;
  const gpu::HostVector<uint32_t> value_size;
  in.value_offset = &value_offset;
  in.value_size = &value_size;
  ASSERT_TRUE(device->Run(in, &sorted, &micros).ok());
  s = encode();
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = encode();  // the input stays for the next chunk
  EXPECT_TRUE(s.ok()) << s.ToString();
  device->ReleaseEncodeInput();
  EXPECT_TRUE(encode().IsAborted());  // released
  device->ReleaseEncodeInput();       // idempotent

  // A range outside the job's blocks is refused, and the failed call
  // releases the input.
  ASSERT_TRUE(device->Run(in, &sorted, &micros).ok());
  s = encode(0, 1);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(encode().IsAborted());

  // A planned block outside the kept entries (there are none) is refused
  // before anything is written, also when an earlier chunk went well.
  ASSERT_TRUE(device->Run(in, &sorted, &micros).ok());
  EXPECT_TRUE(encode().ok());
  gpu::EncodeBlock b{};
  b.n = 1;
  b.prefix_size = 0;
  b.key_width = 8;
  b.value_width = 0;
  b.offset_width = 2;
  b.key_bytes = 8;
  job.blocks.push_back(b);
  job.out_size = gpu::EncodedBlockSize(b) + 5;
  s = encode(0, 1);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(encode().IsAborted());
}

// The filters of a chunk are those of its tables (FiltersOfBlocks), each
// kept position finds its table's filter (FilterOfKept), and CheckEncodeJob
// refuses a filter that would make a kernel read or write outside the job.
TEST(GpuEncodeFilterTest, ChunkSelectionLookupAndChecks) {
  gpu::EncodeJob job;
  // Two tables: kept [0, 6) in blocks 0-1, kept [6, 10) in block 2; each
  // table's filter follows its data blocks.
  uint64_t offset = 0;
  auto add_block = [&](uint64_t first, uint32_t n) {
    gpu::EncodeBlock b{};
    b.out_offset = offset;
    b.first = first;
    b.n = n;
    b.key_width = 8;
    b.value_width = 0;
    b.offset_width = 2;
    b.key_bytes = 8 * n;
    job.blocks.push_back(b);
    offset += gpu::EncodedBlockSize(b) + 5;
  };
  auto add_filter = [&](uint64_t first, uint64_t end) {
    job.filters.push_back(gpu::EncodeFilter{offset, first, end, 1, 6});
    offset += gpu::EncodedFilterSize(job.filters.back()) + 5;
  };
  add_block(0, 3);
  add_block(3, 3);
  add_filter(0, 6);
  add_block(6, 4);
  add_filter(6, 10);
  job.out_size = offset;
  constexpr uint64_t kKept = 10;

  uint64_t f0 = 9, f1 = 9;
  gpu::FiltersOfBlocks(job, 0, 2, &f0, &f1);
  EXPECT_EQ(0u, f0);
  EXPECT_EQ(1u, f1);
  gpu::FiltersOfBlocks(job, 2, 3, &f0, &f1);
  EXPECT_EQ(1u, f0);
  EXPECT_EQ(2u, f1);
  gpu::FiltersOfBlocks(job, 0, 3, &f0, &f1);
  EXPECT_EQ(0u, f0);
  EXPECT_EQ(2u, f1);
  gpu::FiltersOfBlocks(job, 1, 1, &f0, &f1);  // an empty range
  EXPECT_EQ(f0, f1);
  for (uint64_t k = 0; k < kKept; ++k) {
    EXPECT_EQ(k < 6 ? 0u : 1u, gpu::FilterOfKept(job.filters.data(), 2, k)) << k;
  }
  EXPECT_EQ(2u, gpu::FilterOfKept(job.filters.data(), 2, kKept));  // past every table

  EXPECT_TRUE(gpu::CheckEncodeJob(job, 0, 3, kKept).ok());
  auto refused = [&](const std::function<void(gpu::EncodeFilter*)>& spoil) {
    gpu::EncodeJob bad = job;
    spoil(&bad.filters[1]);
    const Status st = gpu::CheckEncodeJob(bad, 0, 3, kKept);
    return st.IsInvalidArgument() &&
           st.ToString().find("filter lies outside the job") != std::string::npos;
  };
  EXPECT_TRUE(refused([](gpu::EncodeFilter* f) { f->num_lines = 0; }));
  EXPECT_TRUE(refused([](gpu::EncodeFilter* f) { f->num_probes = 0; }));
  EXPECT_TRUE(refused([](gpu::EncodeFilter* f) { f->num_probes = 13; }));
  EXPECT_TRUE(refused([](gpu::EncodeFilter* f) { f->end = kKept + 1; }));
  EXPECT_TRUE(refused([](gpu::EncodeFilter* f) { f->end = f->first; }));
  EXPECT_TRUE(refused([](gpu::EncodeFilter* f) { f->num_lines = 2; }));  // past out_size
  EXPECT_TRUE(refused([](gpu::EncodeFilter* f) { f->out_offset = ~uint64_t{0} - 8; }));
  EXPECT_TRUE(refused([](gpu::EncodeFilter* f) { f->first = 5; }));  // overlaps filter 0

  // Chunks: ascending and disjoint (chunks in flight at once write
  // disjoint parts of the output), each checked as a range.
  EXPECT_TRUE(gpu::CheckChunkOrder({{0, 2}, {2, 3}}).ok());
  EXPECT_TRUE(gpu::CheckChunkOrder({{0, 3}}).ok());
  EXPECT_TRUE(gpu::CheckChunkOrder({}).ok());
  EXPECT_TRUE(gpu::CheckChunkOrder({{2, 3}, {0, 2}}).IsInvalidArgument());
  EXPECT_TRUE(gpu::CheckChunkOrder({{0, 2}, {1, 3}}).IsInvalidArgument());
  EXPECT_TRUE(gpu::CheckEncodeJob(job, 2, 3, kKept).ok());
  EXPECT_TRUE(gpu::CheckEncodeJob(job, 2, 4, kKept).IsInvalidArgument());
}

TEST_P(GpuExecutorTest, PolicyAndNonBytewiseComparator) {
  Random rnd(test::TestSeed());
  const test::GpuJob job = NewJob(&rnd);
  EXPECT_TRUE(gpu_->ShouldOffload(Spec(job)));

  GpuExecutorOptions big = options_;
  big.min_input_bytes = job.compaction->TotalInputBytes() + 1;
  GpuCompactionExecutor high(big, gpu::NewHostKeySortDevice(kBudget));
  EXPECT_FALSE(high.ShouldOffload(Spec(job)));

  // Too large for the budget: without boundaries it needs ChunkBoundaries
  // first; with them it is offloaded, and a range that does not fit either
  // aborts the job with no file.
  GpuCompactionExecutor tiny(options_, gpu::NewHostKeySortDevice(1024));
  // Not fitting is no device failure: it never marks the GPU unhealthy.
  Compaction::Params params = job.compaction->params();
  params.subcompaction_boundaries.clear();
  test::GpuJob whole;
  whole.compaction = std::make_unique<Compaction>(params, &icmp_);
  whole.snapshots = job.snapshots;
  EXPECT_FALSE(tiny.ShouldOffload(Spec(whole)));
  EXPECT_TRUE(tiny.NeedsChunkBoundaries(Spec(whole)));
  EXPECT_FALSE(gpu_->NeedsChunkBoundaries(Spec(whole)));
  CompactionJobResult result;
  std::map<uint64_t, std::string> files;
  Status s = Run(&tiny, whole, &result, &files);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  params.subcompaction_boundaries = {"m"};
  test::GpuJob split;
  split.compaction = std::make_unique<Compaction>(params, &icmp_);
  EXPECT_TRUE(tiny.ShouldOffload(Spec(split)));
  for (int i = 0; i < options_.max_consecutive_failures; ++i) {
    s = Run(&tiny, split, &result, &files);
    EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  }
  EXPECT_TRUE(tiny.healthy());
  EXPECT_EQ(0u, tiny.GetStats().failures);
  EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));

  class ReverseBytewise final : public Comparator {
   public:
    int Compare(const Slice& a, const Slice& b) const override { return b.compare(a); }
    const char* Name() const override { return "test.ReverseBytewise"; }
  };
  ReverseBytewise reverse;
  InternalKeyComparator ricmp(&reverse);
  CompactionJobSpec spec = Spec(job);
  spec.internal_comparator = &ricmp;
  EXPECT_FALSE(gpu_->ShouldOffload(spec));
  uint64_t next = 1000;
  spec.new_file_number = [&next] { return next++; };
  s = gpu_->Run(spec, &result);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
}

// A job too large for the device's budget (here a third of what it needs
// whole) gets boundaries from ChunkBoundaries and runs in chunks of its
// ranges, each reading only the blocks that can hold its keys; the output
// equals the CPU executor's for the same job (with those boundaries) in both
// encode modes, with tombstones, snapshots and versions of one key across
// the files, and chunk edges inside blocks. From the sixteenth job on the
// files are page-locked in-memory ones, whose parts the device copies
// where the Env keeps them (lent: StageFrom), as the host reference device
// does with any in-memory files.
TEST_P(GpuExecutorTest, ChunkedJobsByteIdenticalToCpu) {
  Random rnd(test::TestSeed());
  int chunked = 0;
  for (int iter = 0; iter < 30; ++iter) {
    const char* mode = iter % 2 == 0 ? "device" : "cpu";
    ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
    if (iter == 15) {
      ASSERT_NO_FATAL_FAILURE(UsePinnedMemEnv(4096));
    }
    SCOPED_TRACE("iteration " + std::to_string(iter) + ", encode mode " + mode +
                 (iter >= 15 ? ", page-locked files" : ""));
    const test::GpuJobShape shape = ShapeFor(iter, &rnd, &topt_);
    test::GpuJob job = NewJob(&rnd, shape);
    const Compaction::Params picked = job.compaction->params();
    const uint64_t whole = WholeNeed(job);
    // A third of what the job needs whole; a range cannot be smaller than
    // the blocks at its edges, so with large blocks beside a small job the
    // budget grows until the job runs.
    budget_ = kSlack + (whole - kSlack) / 3;
    Status s;
    CompactionJobResult gpu_result;
    std::map<uint64_t, std::string> gpu_files;
    const GpuExecutorStats before = gpu_->GetStats();
    const int unaligned_before = staging_.unaligned_ranges;
    const uint64_t lent_before = staging_.lent_bytes;
    for (;;) {
      staging_.ranges = 0;  // those of the run that counts
      job.compaction = std::make_unique<Compaction>(picked, &icmp_);
      ASSERT_TRUE(gpu_->NeedsChunkBoundaries(Spec(job)));
      ASSERT_NO_FATAL_FAILURE(AddChunkBoundaries(&job));
      ASSERT_TRUE(gpu_->ShouldOffload(Spec(job)));
      s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
      if (!s.IsNotSupported() || budget_ + (budget_ - kSlack) / 2 >= whole) break;
      budget_ += (budget_ - kSlack) / 2;
    }
    if (s.IsNotSupported()) {
      // Blocks too large to chunk this job below what it needs whole (the
      // database then runs it on the CPU): nothing was created.
      EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    CompactionJobResult cpu_result;
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) return;
    const GpuExecutorStats after = gpu_->GetStats();
    EXPECT_EQ(before.chunked_jobs + 1, after.chunked_jobs);
    if (after.chunks >= before.chunks + 2) ++chunked;
    EXPECT_TRUE(gpu_result.stage_micros.count("index"));
    EXPECT_FALSE(staging_.pending);
    // Direct reads: the parts (data-block runs at any file offset) are
    // read as their aligned covers, into aligned spans.
    if (topt_.direct_compaction_reads) {
      EXPECT_EQ(unaligned_before, staging_.unaligned_ranges);
    }
    // Device-encode mode stages every chunk's parts: lent where the device
    // copies from the Env's memory (never with direct reads), else read
    // and staged.
    const bool lends = (GetParam() == "host" || iter >= 15) && !topt_.direct_compaction_reads;
    if (iter % 2 == 0) {
      EXPECT_EQ(lends, staging_.lent_bytes > lent_before);
      EXPECT_EQ(lends, staging_.ranges == 0);
    }
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
  budget_ = 0;
  std::printf("jobs run in two chunks or more: %d of 30\n", chunked);
  EXPECT_LE(15, chunked);  // 22-28 seen; case 3 (blocks over 64 KiB) rarely chunks
}

// TableOptions::direct_compaction_reads on the POSIX Env, in a directory on
// a real file system: the executor reads every input table (whole, or a
// chunk's parts, which start at any file offset) as its 4 KiB-aligned
// cover with O_DIRECT straight into its aligned span of the page-aligned
// arena, every read on the zero-copy path (none through the bounce
// buffer), and the output equals the CPU executor's. Where the file system
// refuses O_DIRECT (e.g. tmpfs) the Env falls back to pread, and the
// output must still be equal. A read fault then fails the job with
// nothing left behind.
TEST_P(GpuExecutorTest, DirectReadsOnPosixByteIdenticalToCpu) {
  ASSERT_NO_FATAL_FAILURE(UsePosixEnv());
  Random rnd(test::TestSeed());
  int direct_files = -1;  // whether the file system takes O_DIRECT (-1: not known yet)
  int chunked = 0;
  for (int iter = 0; iter < 24; ++iter) {
    budget_ = 0;
    const char* mode = iter % 2 == 0 ? "device" : "cpu";
    ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
    const bool chunk = iter % 4 >= 2;
    SCOPED_TRACE("iteration " + std::to_string(iter) + ", encode mode " + mode +
                 (chunk ? ", chunked" : ", whole"));
    const test::GpuJobShape shape = ShapeFor(iter, &rnd, &topt_);
    topt_.direct_compaction_reads = true;
    test::GpuJob job = NewJob(&rnd, shape);
    if (direct_files < 0) {
      std::unique_ptr<RandomAccessFile> probe;
      const Status p = NewPosixDirectRandomAccessFile(
          TableFileName(dbname_, job.compaction->inputs(0)[0]->number), IOPriority::kHigh, &probe);
      ASSERT_TRUE(p.ok() || p.IsInvalidArgument()) << p.ToString();
      direct_files = p.ok() ? 1 : 0;
      if (!p.ok()) std::printf("O_DIRECT refused under %s: pread fallback\n", dbname_.c_str());
    }
    const int files = job.compaction->num_input_files(0) + job.compaction->num_input_files(1);
    const int unaligned_before = staging_.unaligned_ranges;
    const DirectReadCounts reads_before = GetDirectReadCounts();
    CompactionJobResult gpu_result;
    std::map<uint64_t, std::string> gpu_files;
    Status s;
    if (chunk) {
      const GpuExecutorStats before = gpu_->GetStats();
      s = RunChunked(&job, &gpu_result, &gpu_files);
      if (s.IsNotSupported()) continue;  // too large blocks to chunk (see the chunked test)
      if (gpu_->GetStats().chunks >= before.chunks + 2) ++chunked;
    } else {
      s = Run(gpu_.get(), job, &gpu_result, &gpu_files);
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    const DirectReadCounts reads_after = GetDirectReadCounts();
    EXPECT_EQ(unaligned_before, staging_.unaligned_ranges);
    if (direct_files == 1) {
      // One read or more per table (or part) read, every one aligned.
      EXPECT_LE(reads_before.aligned + static_cast<uint64_t>(files), reads_after.aligned);
      EXPECT_EQ(reads_before.bounced, reads_after.bounced);
    }
    CompactionJobResult cpu_result;
    ExpectCpuMatches(job, gpu_result, gpu_files, &cpu_result);
    if (HasFatalFailure()) return;
    if (!chunk) {
      EXPECT_EQ(cpu_result.bytes_read, gpu_result.bytes_read);  // not the padding
    }
    EXPECT_FALSE(staging_.pending);
  }
  budget_ = 0;
  std::printf("chunked jobs run in two chunks or more: %d of 12\n", chunked);
  // Small random jobs may fit one chunk: 6-11 of 12 chunked over 30 seeds,
  // 3 with ACCELKV_SEED=1795845549544670995 (which failed "at least 4").
  EXPECT_LE(2, chunked);
  EXPECT_EQ(0, staging_.unaligned_arenas);

  // A read fault on a direct-read file (after the first reads of the job):
  // IOError, the staging freed, no file left.
  FaultInjectionEnv faults(env_.get());
  test::GpuJobShape shape;
  shape.l0_files = 5;
  shape.allow_long_values = false;
  const test::GpuJob job = NewJob(&rnd, shape);
  faults.SetFailure(FaultKind::kRead, 2, /*one_shot=*/true);
  CompactionJobResult result;
  std::map<uint64_t, std::string> out;
  const Status s =
      test::RunAndCapture(gpu_.get(), &faults, dbname_, topt_, &icmp_, job, &result, &out);
  faults.ClearFailures();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_FALSE(staging_.pending);
  EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_));
  ::unsetenv("ACCELKV_GPU_ENCODE");
}

// A chunked job whose device fails in its last chunk: Aborted, every file
// of the earlier chunks listed (RunAndCapture removes them), and nothing
// left behind.
TEST_P(GpuExecutorTest, ChunkedJobFailureListsEveryCreatedFile) {
  Random rnd(test::TestSeed());
  test::GpuJobShape shape;
  shape.allow_long_values = false;
  test::GpuJob job = NewJob(&rnd, shape);
  ASSERT_NO_FATAL_FAILURE(MakeChunked(&job, 4));
  CompactionJobResult result;
  std::map<uint64_t, std::string> files;
  ASSERT_TRUE(Run(gpu_.get(), job, &result, &files).ok());
  const size_t all_outputs = result.outputs.size();
  // The last chunk's run fails: the earlier chunks' files were written.
  const int runs = staging_.runs;
  staging_.fail_run = 2 * runs;  // the second job's last chunk
  for (const char* mode : {"device", "cpu"}) {
    ::setenv("ACCELKV_GPU_ENCODE", mode, 1);
    staging_.runs = runs;
    const Status s = Run(gpu_.get(), job, &result, &files);
    EXPECT_TRUE(s.IsAborted()) << s.ToString();
    EXPECT_LT(0u, result.outputs.size()) << mode;  // listed, then removed
    EXPECT_GT(all_outputs, result.outputs.size()) << mode;
    EXPECT_EQ(0, test::CountOutputFiles(env_.get(), dbname_)) << mode;
  }
  ::unsetenv("ACCELKV_GPU_ENCODE");
  staging_.fail_run = 0;
  budget_ = 0;
}

INSTANTIATE_TEST_SUITE_P(Devices, GpuExecutorTest, testing::Values("host", "cuda"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(GpuExecutorCreateTest, CreateGivesExecutorOrOneLineReason) {
  std::string reason;
  std::unique_ptr<GpuCompactionExecutor> e =
      GpuCompactionExecutor::Create(GpuExecutorOptions(), &reason);
  if (e == nullptr) {
    EXPECT_EQ(0u, reason.find("no GPU: ")) << reason;
    EXPECT_EQ(std::string::npos, reason.find('\n')) << reason;
    GTEST_SKIP() << reason;
  }
  EXPECT_STREQ("gpu", e->Name());
  EXPECT_TRUE(e->healthy());
}

}  // namespace
}  // namespace accelkv
