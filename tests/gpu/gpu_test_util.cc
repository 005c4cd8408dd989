#include "gpu/gpu_test_util.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

#include "table/block.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "testutil/test_util.h"
#include "util/filename.h"

namespace accelkv {
namespace test {

namespace {

constexpr uint64_t kFirstOutput = 1000;

struct Entry {
  std::string user_key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
  std::string InternalKey() const {
    std::string k;
    AppendInternalKey(&k, ParsedInternalKey(user_key, seq, type));
    return k;
  }
};

void SortEntries(std::vector<Entry>* v) {
  std::sort(v->begin(), v->end(), [](const Entry& a, const Entry& b) {
    if (a.user_key != b.user_key) return a.user_key < b.user_key;
    return PackSequenceAndType(a.seq, a.type) > PackSequenceAndType(b.seq, b.type);
  });
}

FileMetaPtr WriteTable(Env* env, const std::string& dbname, const TableOptions& topt,
                       uint64_t number, const std::vector<Entry>& entries) {
  auto meta = std::make_shared<FileMetaData>();
  meta->number = number;
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(TableFileName(dbname, number), &file);
  if (!s.ok()) std::abort();
  TableBuilder builder(topt, file.get());
  for (const Entry& e : entries) builder.Add(e.InternalKey(), e.value);
  s = builder.Finish();
  if (s.ok()) s = file->Close();
  if (!s.ok()) std::abort();
  SetFromTableProperties(builder.properties(), builder.FileSize(), meta.get());
  return meta;
}

// A key pool with shared prefixes, keys that are prefixes of others and
// keys ending in 0x00.
std::vector<std::string> MakeKeyPool(Random* rnd, const GpuJobShape& shape, size_t n) {
  std::vector<std::string> pool;
  const std::string prefixes[] = {"", "user", std::string(9, 'p'), std::string("\0\0", 2)};
  while (pool.size() < n) {
    const uint32_t choice = rnd->Uniform(10);
    if (shape.fixed_key_size > 0 && shape.decimal_key_range > 0) {
      std::string key = std::to_string(rnd->Uniform(shape.decimal_key_range));
      key.insert(0, shape.fixed_key_size > key.size() ? shape.fixed_key_size - key.size() : 0, '0');
      key.resize(shape.fixed_key_size);
      // Distinct while the range has numbers left.
      if (pool.size() >= shape.decimal_key_range ||
          std::find(pool.begin(), pool.end(), key) == pool.end()) {
        pool.push_back(key);
      }
      continue;
    }
    if (shape.fixed_key_size > 0) {
      std::string key = prefixes[rnd->Uniform(4)] + RandomString(rnd, shape.fixed_key_size);
      key.resize(shape.fixed_key_size);
      pool.push_back(key);
      continue;
    }
    if (choice < 2 && !pool.empty()) {
      const std::string base = pool[rnd->Uniform(pool.size())];
      if (base.size() > 1) pool.push_back(base.substr(0, 1 + rnd->Uniform(base.size() - 1)));
      pool.push_back(base + std::string(1, '\0'));
      continue;
    }
    uint32_t len = 1 + rnd->Uniform(shape.max_key_size);
    if (rnd->OneIn(50)) len = 1 + rnd->Uniform(1024);
    std::string key = prefixes[rnd->Uniform(4)] + RandomString(rnd, len);
    if (key.size() > 1024) key.resize(1024);
    if (key.empty()) key = "k";
    pool.push_back(key);
  }
  return pool;
}

std::string RandomValue(Random* rnd, const GpuJobShape& shape) {
  if (shape.fixed_value_size >= 0) {
    return RandomString(rnd, static_cast<uint32_t>(shape.fixed_value_size));
  }
  uint32_t len = rnd->Uniform(shape.max_value_size + 1);
  if (shape.mix_small_values && rnd->OneIn(2)) len = rnd->Uniform(101);
  if (shape.allow_long_values && rnd->OneIn(100)) len = rnd->Uniform(64 * 1024 + 1);
  return RandomString(rnd, len);
}

}  // namespace

GpuJob MakeRandomJob(Random* rnd, Env* env, const std::string& dbname, const TableOptions& topt,
                     const InternalKeyComparator* icmp, const GpuJobShape& shape) {
  GpuJob job;
  const size_t total = static_cast<size_t>(shape.entries_per_file) *
                       static_cast<size_t>(shape.l0_files + shape.l1_files);
  const std::vector<std::string> pool = MakeKeyPool(rnd, shape, std::max<size_t>(8, total / 3));
  SequenceNumber seq = 1;
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  uint64_t number = 1;
  // Level 1: the oldest data, split into non-overlapping files at user-key
  // boundaries.
  std::vector<Entry> l1;
  std::set<std::string> l1_keys;
  for (int i = 0; i < shape.entries_per_file * shape.l1_files; ++i) {
    const std::string& k = pool[rnd->Uniform(static_cast<int>(pool.size()))];
    if (!l1_keys.insert(k).second) continue;
    l1.push_back(Entry{k, seq++, rnd->OneIn(8) ? ValueType::kDeletion : ValueType::kValue, ""});
    if (l1.back().type == ValueType::kValue) l1.back().value = RandomValue(rnd, shape);
  }
  SortEntries(&l1);
  if (shape.l1_files > 0 && !l1.empty()) {
    const size_t per = (l1.size() + shape.l1_files - 1) / shape.l1_files;
    for (size_t b = 0; b < l1.size(); b += per) {
      std::vector<Entry> part(l1.begin() + b, l1.begin() + std::min(l1.size(), b + per));
      p.inputs[1].push_back(WriteTable(env, dbname, topt, number++, part));
    }
  }
  // Level 0: overlapping files, newer files hold newer sequences; many
  // versions of the same keys.
  std::vector<FileMetaPtr> l0;
  for (int f = 0; f < shape.l0_files; ++f) {
    std::vector<Entry> entries;
    std::set<std::string> keys;
    for (int i = 0; i < shape.entries_per_file; ++i) {
      const std::string& k = pool[rnd->Uniform(static_cast<int>(pool.size()))];
      if (!keys.insert(k).second) continue;
      Entry e{k, seq++, rnd->OneIn(5) ? ValueType::kDeletion : ValueType::kValue, ""};
      if (e.type == ValueType::kValue) e.value = RandomValue(rnd, shape);
      entries.push_back(std::move(e));
    }
    SortEntries(&entries);
    l0.push_back(WriteTable(env, dbname, topt, number++, entries));
  }
  std::reverse(l0.begin(), l0.end());  // newest first
  p.inputs[0] = l0;
  for (int w = 0; w < 2; ++w) {
    for (const auto& f : p.inputs[w]) job.input_entries += f->num_entries;
  }
  // Deeper levels (not bottommost) or none (bottommost); they double as
  // grandparents so outputs split on overlap too.
  if (!rnd->OneIn(3)) {
    std::vector<std::string> bounds;
    for (int i = 0; i < 6; ++i) bounds.push_back(pool[rnd->Uniform(static_cast<int>(pool.size()))]);
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    LevelFiles l2;
    for (size_t i = 0; i + 1 < bounds.size(); i += 2) {
      auto f = std::make_shared<FileMetaData>();
      f->number = 500 + i;
      f->file_size = 1000 + rnd->Uniform(100000);
      f->smallest = InternalKey(bounds[i], 1, ValueType::kValue);
      f->largest = InternalKey(bounds[i + 1], 1, ValueType::kValue);
      l2.push_back(f);
    }
    p.grandparents = l2;
    p.deeper_levels.push_back(l2);
  }
  // Subcompaction boundaries (user keys) in half the jobs: every executor
  // cuts its output there.
  if (rnd->OneIn(2)) {
    std::set<std::string> bounds;
    const int nb = 1 + static_cast<int>(rnd->Uniform(3));
    for (int i = 0; i < nb; ++i) bounds.insert(pool[rnd->Uniform(static_cast<int>(pool.size()))]);
    p.subcompaction_boundaries.assign(bounds.begin(), bounds.end());
  }
  p.max_output_file_size = 4096 + rnd->Uniform(64 * 1024);
  p.max_grandparent_overlap_bytes = 10000 + rnd->Uniform(200000);
  job.compaction = std::make_unique<Compaction>(p, icmp);
  const int nsnap = static_cast<int>(rnd->Uniform(5));
  std::set<SequenceNumber> snaps;
  for (int i = 0; i < nsnap; ++i) snaps.insert(1 + rnd->Uniform(static_cast<int>(seq)));
  job.snapshots.assign(snaps.begin(), snaps.end());
  return job;
}

Status RunAndCapture(CompactionExecutor* executor, Env* env, const std::string& dbname,
                     const TableOptions& topt, const InternalKeyComparator* icmp, const GpuJob& job,
                     CompactionJobResult* result, std::map<uint64_t, std::string>* files) {
  uint64_t next = kFirstOutput;
  CompactionJobSpec spec;
  spec.dbname = dbname;
  spec.env = env;
  spec.table_options = topt;
  TableCache cache(dbname, env, topt, 100);
  spec.table_cache = &cache;
  spec.compaction = job.compaction.get();
  spec.snapshots = job.snapshots;
  spec.internal_comparator = icmp;
  spec.new_file_number = [&next] { return next++; };
  Status s = executor->Run(spec, result);
  files->clear();
  for (const FileMetaData& f : result->outputs) {
    const std::string fname = TableFileName(dbname, f.number);
    if (s.ok()) {
      Status r = ReadFileToString(env, fname, &(*files)[f.number]);
      if (!r.ok()) return r;
    }
    env->RemoveFile(fname);
  }
  return s;
}

Status ForEachDataBlock(const std::string& file,
                        const std::function<void(uint64_t, const BlockLayout&)>& fn) {
  if (file.size() < Footer::kEncodedLength) return Status::Corruption("table file too short");
  Footer footer;
  Status s = footer.DecodeFrom(
      Slice(file.data() + file.size() - Footer::kEncodedLength, Footer::kEncodedLength),
      file.size());
  if (!s.ok()) return s;
  BlockContents contents;
  contents.size = footer.index_handle.size;
  contents.data = std::make_unique<char[]>(contents.size);
  std::memcpy(contents.data.get(), file.data() + footer.index_handle.offset, contents.size);
  std::unique_ptr<Block> index;
  s = Block::Parse(std::move(contents), &index);
  for (uint32_t i = 0; s.ok() && i < index->num_entries(); ++i) {
    Slice v = index->value(i);
    BlockHandle h;
    s = h.DecodeFrom(&v);
    if (!s.ok()) break;
    if (h.offset > file.size() || h.size > file.size() - h.offset) {
      return Status::Corruption("index entry outside the file");
    }
    BlockLayout l;
    s = Block::Validate(Slice(file.data() + h.offset, h.size), &l);
    if (!s.ok()) break;
    fn(h.offset, l);
  }
  return s;
}

Status CountBlockShapes(const std::string& file, BlockShapes* shapes) {
  return ForEachDataBlock(file, [shapes](uint64_t, const BlockLayout& l) {
    const bool many = l.n >= 2;
    const bool key_var = l.key_width == BlockLayout::kVariable;
    const bool value_var = l.value_width == BlockLayout::kVariable;
    shapes->blocks++;
    shapes->no_prefix += l.prefix_size == 0 ? 1 : 0;
    shapes->prefix += many && l.prefix_size > 0 ? 1 : 0;
    shapes->one_entry += l.n == 1 ? 1 : 0;
    shapes->fixed_keys += many && !key_var ? 1 : 0;
    shapes->variable_keys += key_var ? 1 : 0;
    shapes->fixed_values += many && !value_var ? 1 : 0;
    shapes->variable_values += value_var ? 1 : 0;
    shapes->wide_ends += l.offset_width == 4 && (key_var || value_var) ? 1 : 0;
    shapes->huge += l.size >= (1u << 20) ? 1 : 0;
    shapes->huge_many += many && l.size >= (1u << 20) ? 1 : 0;
  });
}

int CountOutputFiles(Env* env, const std::string& dbname) {
  std::vector<std::string> children;
  env->GetChildren(dbname, &children);
  int n = 0;
  for (const std::string& c : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(c, &number, &type) && type == FileType::kTableFile &&
        number >= kFirstOutput) {
      ++n;
    }
  }
  return n;
}

}  // namespace test
}  // namespace accelkv
