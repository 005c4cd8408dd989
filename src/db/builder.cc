#include "db/builder.h"

#include <memory>
#include <utility>

#include "compaction/obsolete_version_filter.h"
#include "table/table_builder.h"
#include "util/filename.h"

namespace accelkv {

Status BuildTable(const std::string& dbname, Env* env, const TableOptions& options,
                  const Comparator* ucmp, std::vector<SequenceNumber> snapshots, Iterator* iter,
                  FileMetaData* meta, uint64_t* dropped) {
  meta->file_size = 0;
  if (dropped != nullptr) *dropped = 0;
  iter->SeekToFirst();
  if (!iter->Valid()) return iter->status();

  const std::string fname = TableFileName(dbname, meta->number);
  std::unique_ptr<WritableFile> file;
  Status s = NewTableFile(env, fname, options, IOPriority::kHigh, &file);
  if (!s.ok()) return s;

  TableBuilder builder(options, file.get());
  ObsoleteVersionFilter filter(ucmp, std::move(snapshots), /*c=*/nullptr);
  for (; iter->Valid() && s.ok(); iter->Next()) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(iter->key(), &parsed)) {
      s = Status::Corruption("memtable holds a malformed internal key");
    } else if (filter.Keep(parsed)) {
      builder.Add(iter->key(), iter->value());
    } else if (dropped != nullptr) {
      ++*dropped;
    }
  }
  if (s.ok()) s = iter->status();
  if (s.ok()) {
    s = builder.Finish();
  } else {
    builder.Abandon();
  }
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) {
    SetFromTableProperties(builder.properties(), builder.FileSize(), meta);
  }
  if (!s.ok()) {
    file.reset();
    env->RemoveFile(fname);
    meta->file_size = 0;
  }
  return s;
}

}  // namespace accelkv
