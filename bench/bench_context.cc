#include "bench_context.h"

#include "keys.h"

namespace accelkv_bench {

void KeySpace::Key(uint64_t index, std::string* out) const {
  if (format_ == Format::kDbBench) {
    DbBenchKey(index, key_size_, out);
  } else {
    YcsbKey(index, out);
  }
}

bool KeySpace::Parse(std::string_view key, uint64_t* index) const {
  if (format_ != Format::kDbBench) return false;
  return ParseDbBenchKey(key, key_size_, index) && *index < capacity();
}

uint64_t KeySpace::LiveBytes() const {
  if (format_ == Format::kDbBench) return state_.LiveKeys() * (key_size_ + value_size_);
  uint64_t bytes = 0;
  std::string key;
  for (uint64_t i = 0; i < capacity(); i++) {
    if (!state_.IsLive(i)) continue;
    YcsbKey(i, &key);
    bytes += key.size() + value_size_;
  }
  return bytes;
}

void ThreadStats::Merge(const ThreadStats& other) {
  latency.Merge(other.latency);
  ops += other.ops;
  bytes += other.bytes;
  user_write_bytes += other.user_write_bytes;
  reads_checked += other.reads_checked;
  reads_found += other.reads_found;
  reads_not_found += other.reads_not_found;
}

BenchContext::BenchContext(const BenchFlags& flags, Engine* engine, uint64_t ycsb_capacity)
    : ycsb_records(flags.num),
      ycsb_next_insert(flags.num),
      flags_(flags),
      engine_(engine),
      values_(flags.seed),
      db_keys_(KeySpace::Format::kDbBench, flags.num, flags.key_size, flags.value_size),
      ycsb_keys_(KeySpace::Format::kYcsb, ycsb_capacity, 0, flags.YcsbValueSize()) {
  db_keys_.state()->SetPreexisting(flags.use_existing);
  ycsb_keys_.state()->SetPreexisting(flags.use_existing);
}

void BenchContext::Fail(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure_.empty()) failure_ = message;
  }
  failed_.store(true, std::memory_order_release);
  stop.store(true, std::memory_order_release);
}

std::string BenchContext::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

}  // namespace accelkv_bench
