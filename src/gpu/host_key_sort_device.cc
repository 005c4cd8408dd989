// HostKeySortDevice: the CPU reference KeySortDevice (see key_sort_device.h).
// It runs the key_sort_common.h functions the CUDA kernels run, one entry or
// block at a time, so tests on machines without a GPU check the logic the
// GPU executes, and tests with a GPU can compare both.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

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
    if (bytes > capacity_) {
      arena_.reset(new uint8_t[bytes]);
      capacity_ = bytes;
    }
    *arena = arena_.get();
    return Status::OK();
  }

  uint64_t MemoryBudget() const override { return budget_; }

  Status HostOutput(uint64_t bytes, uint8_t** out) override {
    if (bytes > out_capacity_) {
      out_.reset(new uint8_t[bytes]);
      out_capacity_ = bytes;
    }
    *out = out_.get();
    return Status::OK();
  }

  Status EncodeBlocks(const EncodeJob& job, uint8_t* out,
                      std::map<std::string, uint64_t>* stage_micros) override {
    if (InjectedFailure() == GpuStage::kEncode) {
      return Status::Aborted("gpu: injected failure at", GpuStageName(GpuStage::kEncode));
    }
    const auto t = std::chrono::steady_clock::now();
    for (const EncodeEntry& e : job.entries) {
      const EncodeBlock& b = job.blocks[e.block];
      std::memcpy(out + b.out_offset + e.key_dst, job.arena + e.key_src, e.key_size);
      std::memcpy(out + b.out_offset + e.value_dst, job.arena + e.value_src, e.value_size);
      WriteEntrySlots(out, b, e);
    }
    for (const EncodeBlock& b : job.blocks) {
      WriteBlockTail(out, b);
      WriteBlockCrc(crc_table_, out, b);
    }
    (*stage_micros)["gpu_encode"] += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t)
            .count());
    return Status::OK();
  }

  Status Run(const KeySortInput& in, KeySortOutput* out,
             std::map<std::string, uint64_t>* stage_micros) override {
    using Clock = std::chrono::steady_clock;
    auto micros = [](Clock::time_point t) {
      return static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t).count());
    };
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
    (*stage_micros)["verify"] += micros(t);

    if (fail == GpuStage::kSort) return injected(fail);
    t = Clock::now();
    const KeyArrays keys{in.arena, in.key_offset.data(), in.key_size.data()};
    const uint64_t n = in.num_entries();
    std::vector<SortItem> items(n);
    for (uint64_t i = 0; i < n; ++i) items[i] = keys.MakeItem(static_cast<uint32_t>(i));
    std::sort(items.begin(), items.end(),
              [&keys](const SortItem& a, const SortItem& b) { return keys.Less(a, b); });
    (*stage_micros)["sort"] += micros(t);

    if (fail == GpuStage::kDedup) return injected(fail);
    t = Clock::now();
    out->kept.clear();
    bool duplicate = false;
    for (uint64_t pos = 0; pos < n; ++pos) {
      if (pos > 0) {
        const uint32_t a = items[pos - 1].index;
        const uint32_t b = items[pos].index;
        duplicate |= keys.CompareUserKeys(a, b) == 0 && keys.trailer(a) == keys.trailer(b);
      }
      if (KeepSortedEntry(keys, in.flags.data(), items.data(), pos, in.snapshots.data(),
                          static_cast<uint32_t>(in.snapshots.size()))) {
        out->kept.push_back(items[pos].index);
      }
    }
    (*stage_micros)["dedup"] += micros(t);

    if (fail == GpuStage::kCopyOut) return injected(fail);
    if (bad) {
      out->bad_block = bad_block;
      out->kept.clear();
      return Status::Corruption("block checksum mismatch");
    }
    if (duplicate) {
      out->kept.clear();
      return Status::Corruption("gpu: compaction input holds a duplicated internal key");
    }
    return Status::OK();
  }

 private:
  const uint64_t budget_;
  uint32_t crc_table_[256];
  std::unique_ptr<uint8_t[]> arena_;
  uint64_t capacity_ = 0;
  std::unique_ptr<uint8_t[]> out_;
  uint64_t out_capacity_ = 0;
};

}  // namespace

std::unique_ptr<KeySortDevice> NewHostKeySortDevice(uint64_t budget) {
  return std::make_unique<HostKeySortDevice>(budget);
}

}  // namespace gpu
}  // namespace accelkv
