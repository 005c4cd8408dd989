#include "db/db_test_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "accelkv/comparator.h"
#include "db/db_impl.h"

namespace accelkv {
namespace test {

Options SmallTreeOptions(Env* env) {
  Options options;
  options.env = env;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  options.target_file_size = 64 << 10;
  options.max_bytes_for_level_base = 64 << 10;
  options.max_bytes_for_level_multiplier = 4;
  options.level0_file_num_compaction_trigger = 2;
  options.block_size = 1024;
  options.max_write_buffer_number = 3;
  // ACCELKV_TEST_GPU_COMPACTION=force offers every compaction to the GPU
  // executor (tests/CMakeLists.txt runs the model and crash tests so too).
  const char* gpu = std::getenv("ACCELKV_TEST_GPU_COMPACTION");
  if (gpu != nullptr && std::string(gpu) == "force") options.gpu_compaction = GpuCompaction::kForce;
  // ACCELKV_TEST_PIPELINED_WRITE=1: pipelined writes (tests/CMakeLists.txt
  // runs the model and crash tests so too).
  const char* pipelined = std::getenv("ACCELKV_TEST_PIPELINED_WRITE");
  if (pipelined != nullptr && std::string(pipelined) == "1") options.enable_pipelined_write = true;
  // ACCELKV_TEST_MMAP_WRITES=1: memory-mapped WALs (tests/CMakeLists.txt
  // runs the model, crash and fault tests so too).
  const char* mmap_writes = std::getenv("ACCELKV_TEST_MMAP_WRITES");
  if (mmap_writes != nullptr && std::string(mmap_writes) == "1") options.allow_mmap_writes = true;
  // ACCELKV_TEST_SKIPLIST_MEMTABLE=1: memtables indexed by the skiplist, not
  // the B+-tree (tests/CMakeLists.txt runs the model and crash tests so too).
  const char* skiplist = std::getenv("ACCELKV_TEST_SKIPLIST_MEMTABLE");
  if (skiplist != nullptr && std::string(skiplist) == "1") options.memtable_btree_index = false;
  return options;
}

Status WaitForBackgroundWork(DB* db) {
  return static_cast<DBImpl*>(db)->TEST_WaitForBackgroundWork();
}

namespace {
Status Collect(DB* db, const ReadOptions& ro, bool forward,
               std::map<std::string, std::string>* out) {
  out->clear();
  std::unique_ptr<Iterator> it = db->NewIterator(ro);
  const Comparator* cmp = BytewiseComparator();
  std::string prev;
  bool first = true;
  if (forward) {
    it->SeekToFirst();
  } else {
    it->SeekToLast();
  }
  for (; it->Valid(); forward ? it->Next() : it->Prev()) {
    std::string k = it->key().ToString();
    if (!first) {
      const int c = cmp->Compare(prev, k);
      if ((forward && c >= 0) || (!forward && c <= 0)) {
        return Status::Corruption("iterator out of order at key", k);
      }
    }
    first = false;
    (*out)[k] = it->value().ToString();
    prev = std::move(k);
  }
  return it->status();
}
}  // namespace

Status ReadAll(DB* db, const ReadOptions& ro, std::map<std::string, std::string>* out) {
  return Collect(db, ro, true, out);
}

Status ReadAllBackward(DB* db, const ReadOptions& ro, std::map<std::string, std::string>* out) {
  return Collect(db, ro, false, out);
}

int NumFilesAtLevel(DB* db, int level) {
  std::string value;
  if (!db->GetProperty("accelkv.num-files-at-level" + std::to_string(level), &value)) return -1;
  return std::stoi(value);
}

int NumFilesBelowLevel0(DB* db, int num_levels) {
  int total = 0;
  for (int level = 1; level < num_levels; level++) {
    total += std::max(0, NumFilesAtLevel(db, level));
  }
  return total;
}

std::vector<std::string> FilesWithSuffix(Env* env, const std::string& dir,
                                         const std::string& suffix) {
  std::vector<std::string> children, result;
  env->GetChildren(dir, &children);
  for (const std::string& name : children) {
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      result.push_back(name);
    }
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::vector<std::string> FilesWithPrefix(Env* env, const std::string& dir,
                                         const std::string& prefix) {
  std::vector<std::string> children, result;
  env->GetChildren(dir, &children);
  for (const std::string& name : children) {
    if (name.compare(0, prefix.size(), prefix) == 0) result.push_back(name);
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::string KeyOf(uint64_t i, int width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "k%0*llu", width, static_cast<unsigned long long>(i));
  return buf;
}

}  // namespace test
}  // namespace accelkv
