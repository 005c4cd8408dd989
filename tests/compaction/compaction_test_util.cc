#include "compaction/compaction_test_util.h"

#include <algorithm>

#include "table/table.h"
#include "table/table_builder.h"
#include "util/filename.h"

namespace accelkv::test {

FileMetaPtr MakeFile(uint64_t number, const std::string& smallest, const std::string& largest,
                     uint64_t bytes, SequenceNumber smallest_seq, SequenceNumber largest_seq) {
  auto f = std::make_shared<FileMetaData>();
  f->number = number;
  f->file_size = bytes;
  f->smallest = InternalKey(smallest, smallest_seq, ValueType::kValue);
  f->largest = InternalKey(largest, largest_seq, ValueType::kValue);
  f->smallest_seqno = std::min(smallest_seq, largest_seq);
  f->largest_seqno = std::max(smallest_seq, largest_seq);
  f->num_entries = 2;
  return f;
}

std::string Numbers(const std::vector<FileMetaPtr>& files) {
  std::string out;
  for (const FileMetaPtr& f : files) {
    if (!out.empty()) out += ",";
    out += std::to_string(f->number);
  }
  return out;
}

void SortEntries(std::vector<Entry>* entries) {
  std::sort(entries->begin(), entries->end(), [](const Entry& a, const Entry& b) {
    if (a.user_key != b.user_key) return a.user_key < b.user_key;
    return PackSequenceAndType(a.seq, a.type) > PackSequenceAndType(b.seq, b.type);
  });
}

FileMetaPtr WriteTable(Env* env, const std::string& dbname, const TableOptions& options,
                       uint64_t number, const std::vector<Entry>& entries, Status* s) {
  auto meta = std::make_shared<FileMetaData>();
  meta->number = number;
  std::unique_ptr<WritableFile> file;
  *s = env->NewWritableFile(TableFileName(dbname, number), &file);
  if (!s->ok()) return meta;
  TableBuilder builder(options, file.get());
  for (const Entry& e : entries) builder.Add(e.InternalKeyString(), e.value);
  *s = builder.Finish();
  if (s->ok()) *s = file->Sync();
  if (s->ok()) *s = file->Close();
  if (!s->ok()) return meta;
  SetFromTableProperties(builder.properties(), builder.FileSize(), meta.get());
  return meta;
}

Status ReadTable(Env* env, const std::string& dbname, const TableOptions& options, uint64_t number,
                 std::vector<std::pair<std::string, std::string>>* entries) {
  entries->clear();
  const std::string fname = TableFileName(dbname, number);
  uint64_t size = 0;
  Status s = env->GetFileSize(fname, &size);
  std::unique_ptr<RandomAccessFile> file;
  if (s.ok()) s = env->NewRandomAccessFile(fname, &file);
  std::unique_ptr<Table> table;
  if (s.ok()) s = Table::Open(options, std::move(file), size, &table);
  if (!s.ok()) return s;
  ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<Iterator> it(table->NewIterator(ro));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    entries->emplace_back(it->key().ToString(), it->value().ToString());
  }
  return it->status();
}

}  // namespace accelkv::test
