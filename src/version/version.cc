#include "version/version.h"

#include <algorithm>
#include <cassert>
#include <numeric>

#include "table/two_level_iterator.h"
#include "util/coding.h"
#include "version/key_debug.h"
#include "version/level_file_iterator.h"
#include "version/version_set.h"

namespace accelkv {

uint64_t MaxBytesForLevel(const Options& options, int level) {
  double result = static_cast<double>(options.max_bytes_for_level_base);
  for (int l = 2; l <= level; l++) result *= options.max_bytes_for_level_multiplier;
  // 2^64 as a double; anything at or above saturates.
  if (result >= 18446744073709551616.0) return UINT64_MAX;
  return static_cast<uint64_t>(result);
}

namespace {

// Outcome of looking a key up in one table.
enum class LookupState { kNotFound, kFound, kDeleted, kCorrupt };

// Decides a lookup from the first entry >= the lookup key that a table hands
// back (TableCache::Get's callback).
struct Saver {
  const Comparator* ucmp;
  Slice user_key;
  std::string* value;
  LookupState state = LookupState::kNotFound;

  void operator()(const Slice& ikey, const Slice& v) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(ikey, &parsed)) {
      state = LookupState::kCorrupt;
    } else if (ucmp->Compare(parsed.user_key, user_key) == 0) {
      if (parsed.type == ValueType::kValue) {
        state = LookupState::kFound;
        value->assign(v.data(), v.size());
      } else {
        state = LookupState::kDeleted;
      }
    }
  }
};

// The status a decided lookup answers with; kNotFound is undecided.
Status LookupStatus(LookupState state, uint64_t file_number) {
  switch (state) {
    case LookupState::kFound:
      return Status::OK();
    case LookupState::kCorrupt:
      return Status::Corruption("corrupted internal key in table",
                                "#" + std::to_string(file_number));
    case LookupState::kDeleted:
    case LookupState::kNotFound:
      break;
  }
  return Status::NotFound(Slice());
}

// An error of the table cache itself (not of the lookup). A file that
// cannot be found must not read as "key not found": the data is missing.
Status TableError(const Status& s) {
  if (s.IsNotFound()) return Status::Corruption("table file missing", s.message());
  return s;
}

bool AfterFile(const Comparator* ucmp, const Slice* user_key, const FileMetaData& f) {
  return user_key != nullptr && ucmp->Compare(*user_key, f.largest.user_key()) > 0;
}

bool BeforeFile(const Comparator* ucmp, const Slice* user_key, const FileMetaData& f) {
  return user_key != nullptr && ucmp->Compare(*user_key, f.smallest.user_key()) < 0;
}

bool UserKeyInFile(const Comparator* ucmp, const Slice& user_key, const FileMetaData& f) {
  return ucmp->Compare(user_key, f.smallest.user_key()) >= 0 &&
         ucmp->Compare(user_key, f.largest.user_key()) <= 0;
}

// Index of the first file of a sorted level that could hold a key >= the
// user key `user_key` (the first whose largest user key is >= it).
size_t FindFileForUserKey(const InternalKeyComparator& icmp, const LevelFiles& files,
                          const Slice& user_key) {
  const InternalKey probe(user_key, kMaxSequenceNumber, kValueTypeForSeek);
  return FindFile(icmp, files, probe.Encode());
}

}  // namespace

Version::Version(const Options* options, const InternalKeyComparator* icmp, TableCache* table_cache,
                 std::vector<LevelFiles> files)
    : options_(options), icmp_(icmp), table_cache_(table_cache), files_(std::move(files)) {
  assert(static_cast<int>(files_.size()) == options_->num_levels);
  level_bytes_.resize(files_.size(), 0);
  for (size_t level = 0; level < files_.size(); level++) {
    for (const FileMetaPtr& f : files_[level]) level_bytes_[level] += f->file_size;
  }
  ComputeScores();
  ComputePendingCompactionBytes();
}

void Version::Ref() { ++refs_; }

void Version::Unref() {
  assert(refs_ >= 1);
  if (--refs_ == 0) {
    if (vset_ != nullptr) vset_->RemoveVersion(this);
    delete this;
  }
}

void Version::ComputeScores() {
  const int levels = num_levels();
  scores_.assign(levels, 0.0);
  const int trigger = std::max(1, options_->level0_file_num_compaction_trigger);
  if (levels > 1) scores_[0] = static_cast<double>(files_[0].size()) / trigger;
  for (int level = 1; level + 1 < levels; level++) {
    scores_[level] = static_cast<double>(level_bytes_[level]) /
                     static_cast<double>(std::max<uint64_t>(1, MaxBytesForLevel(*options_, level)));
  }
}

void Version::ComputePendingCompactionBytes() {
  const int levels = num_levels();
  double estimate = 0;
  uint64_t carried = 0;  // bytes compaction pushes from the level above
  const uint64_t l0_bytes = level_bytes_[0];
  const bool l0_triggered =
      static_cast<int>(files_[0].size()) >= options_->level0_file_num_compaction_trigger ||
      l0_bytes >= options_->max_bytes_for_level_base;
  if (l0_triggered) {
    estimate += static_cast<double>(l0_bytes);
    carried = l0_bytes;
  }
  for (int level = 1; level + 1 < levels; level++) {
    uint64_t size = level_bytes_[level];
    if (level == 1 && l0_triggered) estimate += static_cast<double>(size);
    size += carried;
    carried = 0;
    const uint64_t target = MaxBytesForLevel(*options_, level);
    if (size > target) {
      carried = size - target;
      const uint64_t next = level_bytes_[level + 1];
      if (next > 0) {
        estimate += static_cast<double>(carried) *
                    (static_cast<double>(next) / static_cast<double>(size) + 1.0);
      }
    }
  }
  pending_compaction_bytes_ =
      estimate >= 18446744073709551616.0 ? UINT64_MAX : static_cast<uint64_t>(estimate);
}

Status Version::Get(const ReadOptions& options, const LookupKey& key, std::string* value) const {
  const Comparator* ucmp = icmp_->user_comparator();
  const Slice ikey = key.internal_key();
  const Slice user_key = key.user_key();

  auto probe = [&](const FileMetaData& f, bool* decided) -> Status {
    Saver saver{ucmp, user_key, value};
    Status s = table_cache_->Get(options, f.number, f.file_size, ikey,
                                 [&saver](const Slice& k, const Slice& v) { saver(k, v); });
    *decided = !s.ok() || saver.state != LookupState::kNotFound;
    if (!s.ok()) return TableError(s);
    return LookupStatus(saver.state, f.number);
  };

  // Level 0: every file whose range holds the key, newest first.
  for (const FileMetaPtr& f : files_[0]) {
    if (!UserKeyInFile(ucmp, user_key, *f)) continue;
    bool decided;
    Status s = probe(*f, &decided);
    if (decided) return s;
  }
  // Deeper levels: at most one file each.
  for (int level = 1; level < num_levels(); level++) {
    const LevelFiles& files = files_[level];
    const size_t index = FindFile(*icmp_, files, ikey);
    if (index >= files.size()) continue;
    const FileMetaData& f = *files[index];
    if (ucmp->Compare(user_key, f.smallest.user_key()) < 0) continue;
    bool decided;
    Status s = probe(f, &decided);
    if (decided) return s;
  }
  return Status::NotFound(Slice());
}

void Version::MultiGet(const ReadOptions& options, const std::vector<const LookupKey*>& keys,
                       std::vector<std::string>* values, std::vector<Status>* statuses) const {
  const Comparator* ucmp = icmp_->user_comparator();
  const size_t n = keys.size();
  values->assign(n, std::string());
  statuses->assign(n, Status::NotFound(Slice()));

  // Undecided keys, in internal-key order so each table is read front to back.
  std::vector<size_t> pending(n);
  std::iota(pending.begin(), pending.end(), 0);
  std::sort(pending.begin(), pending.end(), [&](size_t a, size_t b) {
    return icmp_->Compare(keys[a]->internal_key(), keys[b]->internal_key()) < 0;
  });
  std::vector<bool> decided(n, false);

  // Probes the table of f once (one table-cache lookup) for every key of group.
  auto probe_group = [&](const FileMetaData& f, const std::vector<size_t>& group) {
    Status s = table_cache_->WithTable(f.number, f.file_size, [&](const Table& table) {
      for (size_t i : group) {
        Saver saver{ucmp, keys[i]->user_key(), &(*values)[i]};
        Status ks = table.InternalGet(options, keys[i]->internal_key(),
                                      [&saver](const Slice& k, const Slice& v) { saver(k, v); });
        if (!ks.ok()) {
          (*statuses)[i] = TableError(ks);
          decided[i] = true;
        } else if (saver.state != LookupState::kNotFound) {
          (*statuses)[i] = LookupStatus(saver.state, f.number);
          decided[i] = true;
        }
      }
    });
    if (!s.ok()) {  // the table could not be opened: every key of the group fails
      for (size_t i : group) {
        (*statuses)[i] = TableError(s);
        decided[i] = true;
      }
    }
  };
  auto drop_decided = [&]() {
    pending.erase(
        std::remove_if(pending.begin(), pending.end(), [&](size_t i) { return decided[i]; }),
        pending.end());
  };

  std::vector<size_t> group;
  for (const FileMetaPtr& f : files_[0]) {
    if (pending.empty()) return;
    group.clear();
    for (size_t i : pending) {
      if (UserKeyInFile(ucmp, keys[i]->user_key(), *f)) group.push_back(i);
    }
    if (group.empty()) continue;
    probe_group(*f, group);
    drop_decided();
  }
  for (int level = 1; level < num_levels() && !pending.empty(); level++) {
    const LevelFiles& files = files_[level];
    if (files.empty()) continue;
    // pending is sorted, so the keys of one file are consecutive and the
    // files come in level order.
    size_t group_file = files.size();
    group.clear();
    for (size_t i : pending) {
      const size_t index = FindFile(*icmp_, files, keys[i]->internal_key());
      if (index >= files.size() ||
          ucmp->Compare(keys[i]->user_key(), files[index]->smallest.user_key()) < 0) {
        continue;
      }
      if (index != group_file && !group.empty()) {
        probe_group(*files[group_file], group);
        group.clear();
      }
      group_file = index;
      group.push_back(i);
    }
    if (!group.empty()) probe_group(*files[group_file], group);
    drop_decided();
  }
}

void Version::AddIterators(const ReadOptions& options, std::vector<Iterator*>* iters) const {
  for (const FileMetaPtr& f : files_[0]) {
    iters->push_back(table_cache_->NewIterator(options, f->number, f->file_size));
  }
  for (int level = 1; level < num_levels(); level++) {
    if (!files_[level].empty()) iters->push_back(NewConcatenatingIterator(options, level));
  }
}

Iterator* Version::NewConcatenatingIterator(const ReadOptions& options, int level) const {
  TableCache* cache = table_cache_;
  return NewTwoLevelIterator(
      new LevelFileIterator(icmp_, &files_[level]),
      [cache](const ReadOptions& opts, const Slice& file_value) -> Iterator* {
        uint64_t number;
        uint64_t size;
        if (!LevelFileIterator::DecodeValue(file_value, &number, &size)) {
          return NewErrorIterator(Status::Corruption("bad level file-list entry"));
        }
        return cache->NewIterator(opts, number, size);
      },
      options);
}

bool Version::OverlapInLevel(int level, const Slice* smallest_user_key,
                             const Slice* largest_user_key) const {
  const Comparator* ucmp = icmp_->user_comparator();
  const LevelFiles& files = files_[level];
  if (level == 0) {
    for (const FileMetaPtr& f : files) {
      if (AfterFile(ucmp, smallest_user_key, *f) || BeforeFile(ucmp, largest_user_key, *f)) {
        continue;
      }
      return true;
    }
    return false;
  }
  const size_t index =
      smallest_user_key == nullptr ? 0 : FindFileForUserKey(*icmp_, files, *smallest_user_key);
  if (index >= files.size()) return false;  // every file ends before the range
  return !BeforeFile(ucmp, largest_user_key, *files[index]);
}

void Version::GetOverlappingInputs(int level, const InternalKey* begin, const InternalKey* end,
                                   std::vector<FileMetaPtr>* inputs) const {
  const Comparator* ucmp = icmp_->user_comparator();
  const LevelFiles& files = files_[level];
  Slice user_begin;
  Slice user_end;
  if (begin != nullptr) user_begin = begin->user_key();
  if (end != nullptr) user_end = end->user_key();
  const Slice* b = begin != nullptr ? &user_begin : nullptr;
  const Slice* e = end != nullptr ? &user_end : nullptr;

  if (level > 0) {
    size_t i = b == nullptr ? 0 : FindFileForUserKey(*icmp_, files, *b);
    for (; i < files.size() && !BeforeFile(ucmp, e, *files[i]); i++) inputs->push_back(files[i]);
    return;
  }

  // Level 0: widen [b, e] by every overlapping file until it is stable.
  std::vector<FileMetaPtr> found;
  for (size_t i = 0; i < files.size();) {
    const FileMetaData& f = *files[i++];
    if (AfterFile(ucmp, b, f) || BeforeFile(ucmp, e, f)) continue;
    found.push_back(files[i - 1]);
    if (b != nullptr && ucmp->Compare(f.smallest.user_key(), *b) < 0) {
      user_begin = f.smallest.user_key();
      found.clear();
      i = 0;
    } else if (e != nullptr && ucmp->Compare(f.largest.user_key(), *e) > 0) {
      user_end = f.largest.user_key();
      found.clear();
      i = 0;
    }
  }
  inputs->insert(inputs->end(), found.begin(), found.end());
}

std::string Version::DebugString() const {
  std::string r;
  for (int level = 0; level < num_levels(); level++) {
    for (const FileMetaPtr& f : files_[level]) {
      r += "L" + std::to_string(level) + " #" + std::to_string(f->number) + " " +
           std::to_string(f->file_size) + " [" + InternalKeyDebugString(f->smallest.Encode()) +
           " .. " + InternalKeyDebugString(f->largest.Encode()) + "]\n";
    }
  }
  return r;
}

}  // namespace accelkv
