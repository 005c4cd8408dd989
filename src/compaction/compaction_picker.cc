#include "compaction/compaction_picker.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "compaction/subcompaction_boundaries.h"

namespace accelkv {

namespace {

uint64_t TotalFileSize(const std::vector<FileMetaPtr>& files) {
  uint64_t total = 0;
  for (const FileMetaPtr& f : files) total += f->file_size;
  return total;
}

// Smallest and largest internal key over the files of a and b.
// REQUIRES: at least one file.
void GetRange(const InternalKeyComparator& icmp, const std::vector<FileMetaPtr>& a,
              const std::vector<FileMetaPtr>& b, InternalKey* smallest, InternalKey* largest) {
  bool first = true;
  for (const auto* list : {&a, &b}) {
    for (const FileMetaPtr& f : *list) {
      if (first || icmp.Compare(f->smallest.Encode(), smallest->Encode()) < 0) {
        *smallest = f->smallest;
      }
      if (first || icmp.Compare(f->largest.Encode(), largest->Encode()) > 0) {
        *largest = f->largest;
      }
      first = false;
    }
  }
}

std::vector<FileMetaPtr> Overlapping(const Version& version, int level, const InternalKey& begin,
                                     const InternalKey& end) {
  std::vector<FileMetaPtr> files;
  version.GetOverlappingInputs(level, &begin, &end, &files);
  return files;
}

// File numbers of every input of a running compaction.
std::unordered_set<uint64_t> BusyFiles(const std::vector<const Compaction*>& running) {
  std::unordered_set<uint64_t> busy;
  for (const Compaction* r : running) {
    for (int which = 0; which < 2; which++) {
      for (const FileMetaPtr& f : r->inputs(which)) busy.insert(f->number);
    }
  }
  return busy;
}

bool AnyBusy(const std::unordered_set<uint64_t>& busy, const std::vector<FileMetaPtr>& files) {
  for (const FileMetaPtr& f : files) {
    if (busy.count(f->number) > 0) return true;
  }
  return false;
}

}  // namespace

CompactionPicker::CompactionPicker(const Options* options, const InternalKeyComparator* icmp)
    : options_(options), icmp_(icmp) {}

std::unique_ptr<Compaction> CompactionPicker::Pick(
    const Version& version, const std::vector<const Compaction*>& running,
    const std::vector<std::string>& compact_pointers) const {
  // Levels needing compaction, most urgent first (ties: the shallower level).
  std::vector<std::pair<double, int>> candidates;
  for (int level = 0; level + 1 < version.num_levels(); level++) {
    const double score = version.compaction_score(level);
    if (score >= 1) candidates.emplace_back(score, level);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [score, level] : candidates) {
    std::unique_ptr<Compaction> c;
    if (level == 0) {
      c = PickLevel0(version, running);
    } else {
      const std::string pointer =
          static_cast<size_t>(level) < compact_pointers.size() ? compact_pointers[level] : "";
      c = PickLevelN(version, level, running, pointer);
    }
    if (c) return c;
  }
  return nullptr;
}

std::unique_ptr<Compaction> CompactionPicker::PickLevel0(
    const Version& version, const std::vector<const Compaction*>& running) const {
  for (const Compaction* r : running) {
    if (r->level() == 0) return nullptr;
  }
  const LevelFiles& files = version.files(0);
  std::unordered_set<uint64_t> tried;
  // L0 is ordered newest first: start from the oldest file.
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    const FileMetaPtr& f = *it;
    if (tried.count(f->number) > 0) continue;
    std::vector<FileMetaPtr> inputs0 = Overlapping(version, 0, f->smallest, f->largest);
    for (const FileMetaPtr& g : inputs0) tried.insert(g->number);
    std::unique_ptr<Compaction> c = SetupCompaction(version, 0, std::move(inputs0),
                                                    CompactionReason::kLevel0FileCount, running);
    if (c) return c;
  }
  return nullptr;
}

std::unique_ptr<Compaction> CompactionPicker::PickLevelN(
    const Version& version, int level, const std::vector<const Compaction*>& running,
    const std::string& compact_pointer) const {
  const LevelFiles& files = version.files(level);
  if (files.empty()) return nullptr;
  size_t start = 0;
  if (!compact_pointer.empty()) {
    const Slice pointer(compact_pointer);
    auto it = std::upper_bound(files.begin(), files.end(), pointer,
                               [this](const Slice& p, const FileMetaPtr& f) {
                                 return icmp_->Compare(p, f->largest.Encode()) < 0;
                               });
    start = it == files.end() ? 0 : static_cast<size_t>(it - files.begin());
  }
  // Candidates in round-robin order from the compact pointer, ordered by
  // how many bytes of level + 1 they would rewrite per byte they push down
  // (RocksDB's kMinOverlappingRatio): a file with no overlap below (a
  // trivial move) comes first, and an L1 that outgrew its target drains
  // into L2 without rewriting it. Ties keep the round-robin order.
  const std::unordered_set<uint64_t> busy = BusyFiles(running);
  const int output_level = level + 1;
  std::vector<std::pair<double, size_t>> order;  // (overlap ratio, round-robin rank)
  order.reserve(files.size());
  for (size_t k = 0; k < files.size(); k++) {
    const FileMetaPtr& f = files[(start + k) % files.size()];
    if (busy.count(f->number) > 0) continue;
    const uint64_t below =
        TotalFileSize(Overlapping(version, output_level, f->smallest, f->largest));
    order.emplace_back(
        static_cast<double>(below) / static_cast<double>(std::max<uint64_t>(f->file_size, 1)), k);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [ratio, k] : order) {
    const size_t index = (start + k) % files.size();
    std::unique_ptr<Compaction> c =
        SetupCompaction(version, level, {files[index]}, CompactionReason::kLevelSize, running);
    if (c && c->IsTrivialMove())
      c = ExtendTrivialMove(version, level, index, std::move(c), busy, running);
    if (c) return c;
  }
  return nullptr;
}

std::unique_ptr<Compaction> CompactionPicker::ExtendTrivialMove(
    const Version& version, int level, size_t index, std::unique_ptr<Compaction> c,
    const std::unordered_set<uint64_t>& busy, const std::vector<const Compaction*>& running) const {
  const LevelFiles& files = version.files(level);
  const uint64_t limit = 25 * options_->target_file_size;
  uint64_t total = files[index]->file_size;
  size_t first = index;
  size_t last = index;
  // A neighbour joins when it is free, the bytes stay under the limit and
  // the grown key range still has nothing in the output level (files of a
  // level >= 1 are disjoint, but the gap between two may hold one below).
  auto joins = [&](size_t lo, size_t hi, size_t added) {
    if (busy.count(files[added]->number) > 0) return false;
    if (total + files[added]->file_size > limit) return false;
    return Overlapping(version, level + 1, files[lo]->smallest, files[hi]->largest).empty();
  };
  while (last + 1 < files.size() && joins(first, last + 1, last + 1)) {
    total += files[++last]->file_size;
  }
  while (first > 0 && joins(first - 1, last, first - 1)) {
    total += files[--first]->file_size;
  }
  if (first == last) return c;
  std::vector<FileMetaPtr> inputs(files.begin() + static_cast<std::ptrdiff_t>(first),
                                  files.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  std::unique_ptr<Compaction> grown =
      SetupCompaction(version, level, std::move(inputs), CompactionReason::kLevelSize, running);
  return grown && grown->IsTrivialMove() ? std::move(grown) : std::move(c);
}

std::unique_ptr<Compaction> CompactionPicker::SetupCompaction(
    const Version& version, int level, std::vector<FileMetaPtr> inputs0, CompactionReason reason,
    const std::vector<const Compaction*>& running) const {
  const int output_level = level + 1;
  const std::unordered_set<uint64_t> busy = BusyFiles(running);
  InternalKey smallest, largest;
  GetRange(*icmp_, inputs0, {}, &smallest, &largest);
  std::vector<FileMetaPtr> inputs1 = Overlapping(version, output_level, smallest, largest);

  InternalKey all_start, all_limit;
  GetRange(*icmp_, inputs0, inputs1, &all_start, &all_limit);
  if (!inputs1.empty()) {
    // Grow the level inputs over the whole range if that pulls in no more
    // output-level files (LevelDB's SetupOtherInputs).
    std::vector<FileMetaPtr> expanded0 = Overlapping(version, level, all_start, all_limit);
    const uint64_t limit = 25 * options_->target_file_size;
    if (expanded0.size() > inputs0.size() &&
        TotalFileSize(inputs1) + TotalFileSize(expanded0) < limit && !AnyBusy(busy, expanded0)) {
      InternalKey new_start, new_limit;
      GetRange(*icmp_, expanded0, {}, &new_start, &new_limit);
      std::vector<FileMetaPtr> expanded1 = Overlapping(version, output_level, new_start, new_limit);
      if (expanded1.size() == inputs1.size()) {
        inputs0 = std::move(expanded0);
        inputs1 = std::move(expanded1);
        GetRange(*icmp_, inputs0, inputs1, &all_start, &all_limit);
      }
    }
  }

  // Conflicts with running compactions.
  if (AnyBusy(busy, inputs0) || AnyBusy(busy, inputs1)) return nullptr;
  const Comparator* ucmp = icmp_->user_comparator();
  for (const Compaction* r : running) {
    if (level == 0 && r->level() == 0) return nullptr;
    if (r->output_level() != output_level || r->smallest().empty()) continue;
    const bool disjoint = ucmp->Compare(r->largest().user_key(), all_start.user_key()) < 0 ||
                          ucmp->Compare(all_limit.user_key(), r->smallest().user_key()) < 0;
    if (!disjoint) return nullptr;
  }

  Compaction::Params p;
  p.level = level;
  p.output_level = output_level;
  p.reason = reason;
  p.inputs[0] = std::move(inputs0);
  p.inputs[1] = std::move(inputs1);
  if (output_level + 1 < version.num_levels()) {
    p.grandparents = Overlapping(version, output_level + 1, all_start, all_limit);
  }
  for (int deeper = output_level + 1; deeper < version.num_levels(); deeper++) {
    p.deeper_levels.push_back(Overlapping(version, deeper, all_start, all_limit));
  }
  p.max_output_file_size = options_->target_file_size;
  p.max_grandparent_overlap_bytes = 10 * options_->target_file_size;
  p.subcompaction_boundaries =
      GenSubcompactionBoundaries(p, icmp_->user_comparator(), options_->max_subcompactions);
  return std::make_unique<Compaction>(std::move(p), icmp_);
}

std::unique_ptr<Compaction> CompactionPicker::PickRange(
    const Version& version, int level, const InternalKey* begin, const InternalKey* end,
    const std::vector<const Compaction*>& running) const {
  if (level < 0 || level + 1 >= version.num_levels()) return nullptr;
  std::vector<FileMetaPtr> inputs;
  version.GetOverlappingInputs(level, begin, end, &inputs);
  if (inputs.empty()) return nullptr;
  if (level > 0) {
    // Bounded pieces: the files in key order up to the one reaching the limit.
    const uint64_t limit = 25 * options_->target_file_size;
    uint64_t total = 0;
    for (size_t i = 0; i < inputs.size(); i++) {
      total += inputs[i]->file_size;
      if (total >= limit) {
        inputs.resize(i + 1);
        break;
      }
    }
  }
  return SetupCompaction(version, level, std::move(inputs), CompactionReason::kManual, running);
}

std::string CompactionPicker::NextCompactPointer(const Compaction& c) {
  const InternalKeyComparator* icmp = c.internal_comparator();
  const FileMetaData* largest = nullptr;
  for (const FileMetaPtr& f : c.inputs(0)) {
    if (largest == nullptr || icmp->Compare(f->largest.Encode(), largest->largest.Encode()) > 0) {
      largest = f.get();
    }
  }
  return largest == nullptr ? std::string() : largest->largest.Encode().ToString();
}

}  // namespace accelkv
