// HostKeySortDevice: the CPU reference KeySortDevice (see key_sort_device.h).
// It runs the key_sort_common.h functions the CUDA kernels run, one entry or
// block at a time, so tests on machines without a GPU check the logic the
// GPU executes, and tests with a GPU can compare both.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "accelkv/env.h"
#include "gpu/gpu_util.h"
#include "gpu/host_encoder.h"
#include "gpu/key_sort_device.h"

namespace accelkv {
namespace gpu {

namespace {

class HostKeySortDevice final : public KeySortDevice {
 public:
  explicit HostKeySortDevice(uint64_t budget) : budget_(budget) {
    for (uint32_t i = 0; i < 256; ++i) crc_table_[i] = Crc32cTableEntry(i);
  }

  const char* Name() const override { return "host-reference"; }

  Status HostArena(uint64_t bytes, uint8_t** arena) override {
    CancelStaging();
    return arena_.Get(bytes, "alloc", arena);
  }

  // Nothing to copy: only the bookkeeping, so the contract is tested.
  Status BeginStaging(const uint8_t* arena, uint64_t size) override {
    held_.Release();  // as the CUDA device frees what an earlier job left
    staged_.Begin(arena, size);
    key_first_ = false;
    verify_pending_ = false;
    verified_bad_ = ~uint64_t{0};
    return Status::OK();
  }
  // Every copy is done when staged: a group needs no event.
  Status MarkStaged() override {
    if (!staged_.active()) {
      return Status::InvalidArgument("gpu: copy_in: MarkStaged without BeginStaging");
    }
    return Status::OK();
  }
  // Key-first jobs: nothing runs ahead here (every copy is done when
  // staged), but Run leaves its verify's result to WaitVerified as the
  // CUDA device does, so the executor's handling of it runs in CI.
  void SetKeyFirst(bool on) override { key_first_allowed_ = on; }
  Status WaitVerified(KeySortOutput* out, std::map<std::string, uint64_t>* stage_micros) override {
    ResolveVerify(stage_micros);
    if (verified_bad_ != ~uint64_t{0}) {
      out->bad_block = verified_bad_;
      out->kept.clear();
      held_.Release();
      return Status::Corruption("block checksum mismatch");
    }
    return Status::OK();
  }
  // The verify Run left: its result kept for WaitVerified (EncodeBlocks
  // and the releases resolve it too, as on the CUDA device).
  void ResolveVerify(std::map<std::string, uint64_t>* stage_micros) {
    if (!verify_pending_) return;
    verify_pending_ = false;
    (*stage_micros)["copy_in_wait"] += 0;
    verified_bad_ = pending_bad_block_;
  }
  Status StageRange(uint64_t offset, uint64_t size) override { return staged_.Add(offset, size); }
  // The arena is this device's memory: lent bytes are copied into it, so
  // every later stage reads them there (and the lending path runs in CI).
  bool DirectHostMemory(const uint8_t* /*src*/, uint64_t /*size*/) override { return true; }
  Status StageFrom(uint64_t offset, const std::vector<Slice>& pieces) override {
    uint8_t* const into = arena_.data();  // HostArena's buffer, which staging must be on
    if (into == nullptr || staged_.arena() != into) {
      return Status::InvalidArgument("gpu: copy_in: StageFrom into an arena not from HostArena");
    }
    uint64_t size = 0;
    for (const Slice& p : pieces) size += p.size();
    Status s = staged_.Add(offset, size);
    if (!s.ok()) return s;
    for (const Slice& p : pieces) {
      if (p.size() > 0) std::memcpy(into + offset, p.data(), p.size());
      offset += p.size();
    }
    return Status::OK();
  }
  void CancelStaging() override {
    staged_.Reset();
    std::map<std::string, uint64_t> unreported;
    ResolveVerify(&unreported);
  }
  Status HostKeyArena(uint64_t bytes, uint8_t** arena) override {
    return key_arena_.Get(bytes, "alloc", arena);
  }
  Status HostOutput(uint64_t bytes, uint8_t** out) override {
    return out_.Get(bytes, "encode", out);
  }

  uint64_t MemoryBudget() const override { return budget_; }

  Status EncodeBlocks(const EncodeJob& job,
                      const std::vector<std::pair<uint64_t, uint64_t>>& chunks,
                      const ChunkPlacer& place, size_t queue_ahead,
                      std::map<std::string, uint64_t>* stage_micros,
                      const std::function<bool(size_t)>& landed) override {
    Status s = held_.Check(job);
    if (s.ok()) s = CheckChunkOrder(chunks);
    const EncodeSources src{job.arena,          job.key_arena,    kept_.data(),
                            key_offset_.data(), key_size_.data(), value_offset_.data(),
                            value_size_.data()};
    // The device's output buffer (the CUDA device's dev_.out): the chunks
    // are encoded there, then copied to their places as the CUDA device's
    // copies back do; landed as late as queue_ahead allows, as the CUDA
    // device's may be, so the callers' bookkeeping (the output ring's
    // places) meets the same order here.
    if (s.ok() && device_out_.size() < job.out_size) device_out_.resize(job.out_size);
    const auto queue = [&](size_t c) {
      const ChunkPlace where = place(c);
      uint64_t begin = 0;
      uint64_t end = 0;
      ChunkExtent(job, chunks[c].first, chunks[c].second, &begin, &end);
      if (!where.Covers(begin, end)) {
        return Status::Aborted("gpu: encode: a chunk's bytes lie outside its place");
      }
      // The kernels' work on the host, one thread (host_encoder.h; keys-only
      // mode runs the same on several).
      const auto t = std::chrono::steady_clock::now();
      EncodeOnHost(job, src, chunks[c].first, chunks[c].second, device_out_.data(), 1);
      where.ForEachPart(begin, end, [&](uint8_t* at, uint64_t from, uint64_t n) {
        std::memcpy(at, device_out_.data() + from, n);
      });
      (*stage_micros)["gpu_encode"] += MicrosSince(t);
      return Status::OK();
    };
    const auto land = [&](size_t c, Status* st) {
      // A key-first job's checksums before its first chunk lands.
      ResolveVerify(stage_micros);
      if (verified_bad_ != ~uint64_t{0}) {
        *st = Status::Corruption("block checksum mismatch");
        return false;
      }
      return landed(c);
    };
    if (s.ok())
      s = EncodeChunksInOrder(job, chunks, kept_.size(), queue_ahead, queue, land, nullptr);
    if (!s.ok()) held_.Release();  // a failed call releases the input (key_sort_device.h)
    return s;
  }

  void ReleaseEncodeInput() override {
    held_.Release();
    std::map<std::string, uint64_t> unreported;
    ResolveVerify(&unreported);  // as the CUDA device's release waits for the verify
  }

  // The kernels' work, block by block, the sums running as the scan's do.
  Status CheckBlocks(const uint8_t* arena, uint64_t arena_size, const HostVector<BlockSpan>& spans,
                     HostVector<DecodeBlock>* blocks, BlockCheckResult* result,
                     std::map<std::string, uint64_t>* stage_micros) override {
    if (InjectedFailure() == GpuStage::kVerify) {
      return Status::Aborted("gpu: injected failure at", GpuStageName(GpuStage::kVerify));
    }
    // Staged whole when the staging does not cover the arena, as the CUDA
    // device does (only the bookkeeping: the arena is this device's memory).
    const bool covered = staged_.Covers(arena, arena_size);
    if (!covered) {
      Status s = BeginStaging(arena, arena_size);
      if (s.ok()) s = StageRange(0, arena_size);
      if (!s.ok()) return s;
    }
    key_first_ = covered && key_first_allowed_ && !spans.empty();
    (*stage_micros)["copy_in_wait"] += 0;
    if (key_first_) (*stage_micros)["gpu_gather"] += 0;  // the blocks are read in place
    const auto t = std::chrono::steady_clock::now();
    *result = BlockCheckResult();
    blocks->clear();
    BlockSums sums{0, 0, 0};
    uint64_t fixed_min = ~uint64_t{0}, fixed_max = 0;
    for (uint64_t i = 0; i < spans.size(); ++i) {
      BlockLayout l;
      const uint32_t code = CheckDataBlock(arena + spans[i].offset, spans[i].size, &l);
      if (code != kDataBlockOk) {
        result->bad_block = i;
        result->bad_code = code;
        blocks->clear();
        break;
      }
      if (l.n == 0) continue;
      blocks->push_back(MakeDecodeBlock(spans[i].offset, l, sums.key_bytes, sums.entries));
      sums = AddBlockSums()(sums, BlockShare(code, l));
      fixed_min = std::min(fixed_min, FixedKeySize(l));
      fixed_max = std::max(fixed_max, FixedKeySize(l));
    }
    if (result->bad_block == ~uint64_t{0}) {
      result->sums = sums;
      if (fixed_min != ~uint64_t{0}) {
        result->fixed_key_size = fixed_min == fixed_max ? fixed_min : 0;
      }
    }
    (*stage_micros)["gpu_check"] += MicrosSince(t);
    return Status::OK();
  }

  // The kernel's work, entry by entry (each finds its block as a warp does).
  Status DecodeKeys(const DecodeInput& in, DecodeOutput* out,
                    std::map<std::string, uint64_t>* stage_micros) override {
    // Nothing to copy (the stage keys are those of the CUDA device).
    held_.Release();
    (*stage_micros)["copy_in"] += 0;
    if (staged_.Covers(in.arena, in.arena_size)) {
      (*stage_micros)["copy_in_wait"] += 0;
    } else {
      key_first_ = false;  // as the CUDA device uploads the arena whole
    }
    staged_.Reset();
    const auto t = std::chrono::steady_clock::now();
    const uint64_t n = in.entries;
    out->key_offset->resize(n);
    out->key_size->resize(n);
    out->value_offset->resize(n);
    out->value_size->resize(n);
    out->bad_entry = ~uint64_t{0};
    const uint64_t nb = in.blocks.size();
    for (uint64_t e = 0; e < n; ++e) {
      const DecodeBlock& b = in.blocks[BlockOfEntry(in.blocks.data(), nb, e)];
      const DecodedEntry d = LocateEntry(in.arena, b, static_cast<uint32_t>(e - b.first_entry));
      MaterializeKey(in.arena, in.key_arena, b, d, 0, 1);
      (*out->key_offset)[e] = d.key_offset;
      (*out->key_size)[e] = d.key_size;
      (*out->value_offset)[e] = d.value_offset;
      (*out->value_size)[e] = d.value_size;
      if (!InternalKeyOk(in.arena, b, d) && out->bad_entry == ~uint64_t{0}) out->bad_entry = e;
    }
    (*stage_micros)["gpu_decode"] += MicrosSince(t);
    return Status::OK();
  }

  Status WaitDecodedKeys(std::map<std::string, uint64_t>* stage_micros) override {
    (*stage_micros)["keys_wait"] += 0;  // DecodeKeys filled them before it returned
    return Status::OK();
  }

  // The plan is whole once Run returned, but it is handed out in stretches
  // of kPlanStretch entries, so that the planner's runs are cut where the
  // CUDA device's parts would cut them, on every machine (the executor
  // tests check that the output stays byte for byte the same).
  Status WaitPlan(uint64_t k, uint64_t* ready) override {
    if (k >= plan_.size()) return Status::InvalidArgument("gpu: plan: position past the plan");
    if (plan_released_) return Status::Aborted("gpu: plan: the plan entries were released");
    *ready = std::min<uint64_t>(plan_.size(), (k / kPlanStretch + 1) * kPlanStretch);
    return Status::OK();
  }

  Status Run(const KeySortInput& in, KeySortOutput* out,
             std::map<std::string, uint64_t>* stage_micros) override {
    held_.Release();
    // Key-first: the checksums' result waits for WaitVerified.
    const bool deferred = key_first_;
    key_first_ = false;
    verify_pending_ = false;
    pending_bad_block_ = ~uint64_t{0};
    verified_bad_ = ~uint64_t{0};
    plan_.clear();
    plan_released_ = false;
    runs_.clear();
    plan_block_size_ = 0;
    out->plan = nullptr;
    out->runs = nullptr;
    out->num_runs = 0;
    out->boundary_starts.clear();
    out->table_starts.clear();
    out->bad_block = ~uint64_t{0};
    Status s = in.CheckFlags();
    if (s.ok()) s = in.CheckEncodeInputs();
    if (s.ok()) s = RunStages(in, out, stage_micros, deferred);
    if (s.ok() && in.keep_for_encode) {
      // The plan inputs (PlanKernel's work), and what EncodeBlocks reads.
      const auto t = std::chrono::steady_clock::now();
      const KeyArrays keys{in.key_arena, in.key_offset.data(), in.key_size.data()};
      const KeyListView gp = in.grandparents.View();
      const KeyListView bounds = in.boundaries.View();
      plan_.resize(out->kept.size());
      for (uint64_t k = 0; k < out->kept.size(); ++k) {
        plan_[k] = MakePlanEntry(keys, in.value_size->data(), out->kept.data(), k, gp, bounds);
      }
      out->plan = plan_.data();
      for (uint32_t b = 1; b <= in.boundaries.size(); ++b) {
        out->boundary_starts.push_back(BoundaryStart(plan_.data(), plan_.size(), b));
      }
      plan_block_size_ = in.plan_block_size;
      if (plan_block_size_ > 0) {
        PlanBlocks(in, out);
        out->runs = runs_.data();
        out->num_runs = runs_.size();
      }
      kept_ = out->kept;
      key_offset_ = in.key_offset;
      key_size_ = in.key_size;
      value_offset_ = *in.value_offset;
      value_size_ = *in.value_size;
      held_.Hold(in);
      (*stage_micros)["gpu_plan"] += MicrosSince(t);
    }
    return s;
  }

  // As the CUDA device, which frees its plan entries: later reads fail.
  void ReleasePlan() override { plan_released_ = true; }

 private:
  // The device's data blocks (the CUDA device's BlockRuns): each
  // subcompaction range (from boundary_starts) cut as one table, or with
  // split_tables each of its tables (SplitRange).
  void PlanBlocks(const KeySortInput& in, KeySortOutput* out) {
    std::vector<uint64_t> range;
    (void)SubcompactionRangeStarts(out->boundary_starts, plan_.size(),
                                   &range);  // the encoder refuses disorder
    std::vector<uint64_t> cuts;
    for (size_t r = 0; r + 1 < range.size(); ++r) {
      if (in.split_tables) {
        SplitRange(in, range[r], range[r + 1], &cuts);
      } else {
        cuts.push_back(range[r]);
      }
    }
    if (in.split_tables) out->table_starts = cuts;
    cuts.push_back(plan_.size());
    for (size_t t = 0; t + 1 < cuts.size(); ++t) AppendBlockRuns(cuts[t], cuts[t + 1], &runs_);
  }

  // The first entries of the output tables of the range plan_[begin, end)
  // (split_common.h), appended to *starts: each table's blocks walked in
  // order from its start until one holds the split (the CUDA device
  // searches a window of blocks at once: FirstSplitInBlock finds the same
  // first entry in either order).
  void SplitRange(const KeySortInput& in, uint64_t begin, uint64_t end,
                  std::vector<uint64_t>* starts) const {
    for (uint64_t s = begin; s < end;) {
      starts->push_back(s);
      SplitSums closed = EmptySplitSums();
      uint64_t split = ~uint64_t{0};
      ForEachBlock(plan_.data(), s, end, plan_block_size_, [&](uint64_t first, uint64_t last) {
        const SplitBlock b{first, last, s, end};
        split = FirstSplitInBlock(plan_.data(), in.key_arena, b, closed, in.split,
                                  in.grandparent_bytes.data());
        closed =
            CombineSplitSums(closed, MakeSplitSums(plan_.data(), in.key_arena, first, last, s));
        return split == ~uint64_t{0};
      });
      s = split == ~uint64_t{0} ? end : split;
    }
  }

  // The blocks of plan_[begin, end) by the boundary rule, cut as one table
  // from begin.
  void AppendBlockRuns(uint64_t begin, uint64_t end, std::vector<BlockRun>* runs) const {
    ForEachBlock(plan_.data(), begin, end, plan_block_size_, [&](uint64_t first, uint64_t last) {
      runs->push_back(MakeBlockRun(plan_.data(), first, last));
      return true;
    });
  }

  Status RunStages(const KeySortInput& in, KeySortOutput* out,
                   std::map<std::string, uint64_t>* stage_micros, bool deferred) {
    using Clock = std::chrono::steady_clock;
    const GpuStage fail = InjectedFailure();
    auto injected = [](GpuStage stage) {
      return Status::Aborted("gpu: injected failure at", GpuStageName(stage));
    };
    if (fail == GpuStage::kAlloc) return injected(fail);
    if (fail == GpuStage::kCopyIn) return injected(fail);
    if (fail == GpuStage::kVerify) return injected(fail);

    auto t = Clock::now();
    bool bad = false;
    uint64_t bad_block = 0;
    for (uint64_t b = 0; b < in.blocks.size(); ++b) {
      if (!BlockChecksumOk(crc_table_, in.arena, in.blocks[b])) {
        bad = true;
        bad_block = b;
        break;
      }
    }
    (*stage_micros)["verify"] += MicrosSince(t);

    if (fail == GpuStage::kSort) return injected(fail);
    t = Clock::now();
    const KeyArrays keys{in.key_arena, in.key_offset.data(), in.key_size.data()};
    const uint64_t n = in.num_entries();
    std::vector<SortItem> items(n);
    for (uint64_t i = 0; i < n; ++i) items[i] = keys.MakeItem(static_cast<uint32_t>(i));
    std::sort(items.begin(), items.end(),
              [&keys](const SortItem& a, const SortItem& b) { return keys.Less(a, b); });
    (*stage_micros)["sort"] += MicrosSince(t);

    if (fail == GpuStage::kDedup) return injected(fail);
    t = Clock::now();
    out->kept.clear();
    bool duplicate = false;
    const DeeperLevelsView deeper = in.DeeperView();
    const uint8_t* const flags = in.flags.empty() ? nullptr : in.flags.data();
    for (uint64_t pos = 0; pos < n; ++pos) {
      if (pos > 0) {
        const uint32_t a = items[pos - 1].index;
        const uint32_t b = items[pos].index;
        duplicate |= keys.CompareUserKeys(a, b) == 0 && keys.trailer(a) == keys.trailer(b);
      }
      if (KeepSortedEntry(keys, flags, items.data(), pos, in.snapshots.data(),
                          static_cast<uint32_t>(in.snapshots.size()), deeper)) {
        out->kept.push_back(items[pos].index);
      }
    }
    (*stage_micros)["dedup"] += MicrosSince(t);

    if (fail == GpuStage::kCopyOut) return injected(fail);
    // A bad checksum is reported before a duplicate, deferred or not.
    if (bad && (!deferred || duplicate)) {
      out->bad_block = bad_block;
      out->kept.clear();
      return Status::Corruption("block checksum mismatch");
    }
    if (duplicate) {
      out->kept.clear();
      return Status::Corruption("gpu: compaction input holds a duplicated internal key");
    }
    if (bad) pending_bad_block_ = bad_block;
    verify_pending_ = deferred;
    return Status::OK();
  }

  // A host buffer grown on demand and reused, page-aligned as the CUDA
  // device's pinned buffers are (direct writes of output tables go out
  // from it without a copy).
  class Buffer {
   public:
    Status Get(uint64_t bytes, const char* stage, uint8_t** p) {
      if (bytes > capacity_) {
        data_.reset();
        capacity_ = 0;
        data_.reset(new (std::align_val_t(kPage), std::nothrow)
                        uint8_t[std::max<uint64_t>(bytes, 1)]);
        if (data_ == nullptr) {
          return Status::Aborted(std::string("gpu: ") + stage + ": host allocation failed",
                                 std::to_string(bytes) + " bytes");
        }
        capacity_ = bytes;
      }
      *p = data_.get();
      return Status::OK();
    }
    uint8_t* data() const { return data_.get(); }  // nullptr before the first Get

   private:
    static constexpr size_t kPage = kDirectIoAlignment;  // direct I/O into the arenas
    struct AlignedDelete {
      void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(kPage)); }
    };
    std::unique_ptr<uint8_t[], AlignedDelete> data_;
    uint64_t capacity_ = 0;
  };

  const uint64_t budget_;
  uint32_t crc_table_[256];
  Buffer arena_;
  Buffer key_arena_;
  Buffer out_;
  std::vector<uint8_t> device_out_;  // EncodeBlocks' output, as on a device
  HeldInput held_;
  StagedArena staged_;  // BeginStaging .. DecodeKeys or CancelStaging
  // Key-first jobs (SetKeyFirst): allowed, this job's CheckBlocks took it,
  // and Run's verify result left for WaitVerified.
  bool key_first_allowed_ = false;
  bool key_first_ = false;
  bool verify_pending_ = false;
  uint64_t pending_bad_block_ = ~uint64_t{0};
  uint64_t verified_bad_ = ~uint64_t{0};  // the resolved verify's (WaitVerified)
  // Run's plan inputs, and the entries and kept order EncodeBlocks reads.
  static constexpr uint64_t kPlanStretch = 1000;  // WaitPlan
  std::vector<PlanEntry> plan_;
  std::vector<BlockRun> runs_;
  uint64_t plan_block_size_ = 0;  // the last Run's block plan (0: none)
  bool plan_released_ = false;    // ReleasePlan since the last Run
  HostVector<uint32_t> kept_;
  HostVector<uint64_t> key_offset_;
  HostVector<uint32_t> key_size_;
  HostVector<uint64_t> value_offset_;
  HostVector<uint32_t> value_size_;
};

}  // namespace

std::unique_ptr<KeySortDevice> NewHostKeySortDevice(uint64_t budget) {
  return std::make_unique<HostKeySortDevice>(budget);
}

}  // namespace gpu
}  // namespace accelkv
