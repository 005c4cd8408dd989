#include "compact_job.h"

#include <algorithm>

#include "accelkv/comparator.h"
#include "compaction/subcompaction_boundaries.h"
#include "keys.h"
#include "rng.h"
#include "table/table_builder.h"
#include "table/table_cache.h"
#include "util/filename.h"
#include "values.h"

namespace accelkv_bench {

using accelkv::FileMetaData;
using accelkv::FileMetaPtr;
using accelkv::SequenceNumber;
using accelkv::Status;

size_t CompactJobShape::ValueSize(uint64_t key_index, uint64_t seq) const {
  if (value_size_max <= value_size) return value_size;
  // Sizes spread uniformly over the range.
  const uint64_t z = Mix64(key_index * 0x9e3779b97f4a7c15ull + seq + seed);
  return value_size + static_cast<size_t>(z % (value_size_max - value_size + 1));
}

namespace {

struct GenEntry {
  uint64_t key_index;
  SequenceNumber seq;
  bool deletion;
};

// Writes entries (ascending keys) as table `number`; fills *meta.
Status WriteInputTable(accelkv::Env* env, const std::string& dbname,
                       const accelkv::TableOptions& topt, const CompactJobShape& shape,
                       const ValueFactory& values, uint64_t number,
                       const std::vector<GenEntry>& entries, std::shared_ptr<FileMetaData>* meta) {
  std::unique_ptr<accelkv::WritableFile> file;
  Status s = env->NewWritableFile(accelkv::TableFileName(dbname, number), &file);
  if (!s.ok()) return s;
  accelkv::TableBuilder builder(topt, file.get());
  std::string key, value, ikey;
  for (const GenEntry& e : entries) {
    DbBenchKey(e.key_index, shape.key_size, &key);
    value.clear();
    if (!e.deletion) {
      values.Make(key, static_cast<uint32_t>(e.seq), shape.ValueSize(e.key_index, e.seq), &value);
    }
    ikey.clear();
    accelkv::AppendInternalKey(
        &ikey,
        accelkv::ParsedInternalKey(
            key, e.seq, e.deletion ? accelkv::ValueType::kDeletion : accelkv::ValueType::kValue));
    builder.Add(ikey, value);
  }
  s = builder.Finish();
  if (s.ok()) s = file->Close();
  if (!s.ok()) return s;
  auto m = std::make_shared<FileMetaData>();
  m->number = number;
  accelkv::SetFromTableProperties(builder.properties(), builder.FileSize(), m.get());
  *meta = std::move(m);
  return Status::OK();
}

// The GC rule over every generated entry (one snapshot at most, bottommost):
// per key, the newest version of each snapshot stripe, less tombstones
// newest in the oldest stripe.
std::vector<CompactExpectedEntry> Expected(std::vector<GenEntry> all,
                                           const std::vector<SequenceNumber>& snapshots) {
  std::sort(all.begin(), all.end(), [](const GenEntry& a, const GenEntry& b) {
    return a.key_index != b.key_index ? a.key_index < b.key_index : a.seq > b.seq;
  });
  auto stripe = [&](SequenceNumber s) {
    for (SequenceNumber snap : snapshots) {
      if (snap >= s) return snap;
    }
    return accelkv::kMaxSequenceNumber;
  };
  std::vector<CompactExpectedEntry> out;
  for (size_t i = 0; i < all.size(); i++) {
    const GenEntry& e = all[i];
    if (i > 0 && all[i - 1].key_index == e.key_index && stripe(all[i - 1].seq) == stripe(e.seq)) {
      continue;  // an older version in the same stripe
    }
    const bool oldest_stripe = snapshots.empty() || stripe(e.seq) == snapshots.front();
    if (e.deletion && oldest_stripe) continue;
    out.push_back({e.key_index, e.seq, e.deletion});
  }
  return out;
}

}  // namespace

CompactJob::CompactJob(const CompactJobShape& shape)
    : shape_(shape), icmp_(accelkv::BytewiseComparator()) {
  topt_.comparator = &icmp_;
  topt_.user_comparator = accelkv::BytewiseComparator();
  topt_.block_size = shape.block_size;
  topt_.bloom_bits_per_key = shape.bloom_bits_per_key;
  topt_.use_direct_writes = shape.direct_writes;
  // Only the GPU executor reads with it (the CPU executor reads its inputs
  // through the table cache, buffered).
  topt_.direct_compaction_reads = shape.direct_reads;
}

size_t CompactJob::input_files() const {
  return compaction_->num_input_files(0) + compaction_->num_input_files(1);
}

Status CompactJob::Build(const CompactJobShape& shape, accelkv::Env* env, const std::string& dbname,
                         std::unique_ptr<CompactJob>* out) {
  if (shape.l0_files < 1 || shape.l1_files < 0 ||
      shape.num < static_cast<uint64_t>(shape.l0_files)) {
    return Status::InvalidArgument("compact: need at least one L0 file and --num >= L0 files");
  }
  if (shape.key_size < MinDbBenchKeySize(shape.num) || shape.value_size < kMinValueSize) {
    return Status::InvalidArgument("compact: key or value size too small");
  }
  std::unique_ptr<CompactJob> job(new CompactJob(shape));
  // The directory may exist already; a real problem shows at the first write.
  (void)env->CreateDir(dbname);
  Status s;
  const ValueFactory values(shape.seed);
  Rng rng(shape.seed);
  std::vector<GenEntry> all;
  SequenceNumber next_seq = 1;
  uint64_t number = 1;
  accelkv::Compaction::Params p;
  p.level = 0;
  p.output_level = 1;

  // Level 1: the even indices, l1_files equal key ranges.
  const uint64_t evens = (shape.num + 1) / 2;
  for (int f = 0; f < shape.l1_files; f++) {
    std::vector<GenEntry> entries;
    const uint64_t lo = evens * static_cast<uint64_t>(f) / static_cast<uint64_t>(shape.l1_files);
    const uint64_t hi =
        evens * static_cast<uint64_t>(f + 1) / static_cast<uint64_t>(shape.l1_files);
    for (uint64_t i = lo; i < hi; i++) entries.push_back({2 * i, next_seq++, false});
    if (entries.empty()) continue;
    std::shared_ptr<FileMetaData> meta;
    s = WriteInputTable(env, dbname, job->topt_, shape, values, number++, entries, &meta);
    if (!s.ok()) return s;
    p.inputs[1].push_back(std::move(meta));
    all.insert(all.end(), entries.begin(), entries.end());
  }

  // Level 0: overlapping files, oldest first; listed newest first.
  const uint64_t per_file = shape.num / static_cast<uint64_t>(shape.l0_files);
  SequenceNumber snapshot = 0;
  for (int f = 0; f < shape.l0_files; f++) {
    std::vector<uint64_t> keys(per_file);
    for (uint64_t& k : keys) k = rng.Uniform(shape.num);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::vector<GenEntry> entries;
    entries.reserve(keys.size());
    for (uint64_t k : keys) entries.push_back({k, next_seq++, rng.Uniform(10) == 0});
    std::shared_ptr<FileMetaData> meta;
    s = WriteInputTable(env, dbname, job->topt_, shape, values, number++, entries, &meta);
    if (!s.ok()) return s;
    p.inputs[0].insert(p.inputs[0].begin(), std::move(meta));
    all.insert(all.end(), entries.begin(), entries.end());
    if (f + 1 == shape.l0_files / 2) snapshot = next_seq - 1;
  }
  if (snapshot > 0) job->snapshots_.push_back(snapshot);

  p.max_output_file_size = shape.target_file_size;
  p.max_grandparent_overlap_bytes = 10 * shape.target_file_size;
  // The ranges balance the inputs' bytes by their indexes, as the
  // database's jobs do (DBImpl::RunCompaction; subcompaction_boundaries.h).
  accelkv::TableCache cache(dbname, env, job->topt_, 1000);
  p.subcompaction_boundaries = accelkv::GenSubcompactionBoundaries(
      p, accelkv::BytewiseComparator(), shape.max_subcompactions,
      accelkv::TableCacheOffsets(&cache));
  job->compaction_ = std::make_unique<accelkv::Compaction>(std::move(p), &job->icmp_);
  job->input_entries_ = all.size();
  job->expected_ = Expected(std::move(all), job->snapshots_);
  job->first_output_number_ = number;
  *out = std::move(job);
  return Status::OK();
}

}  // namespace accelkv_bench
