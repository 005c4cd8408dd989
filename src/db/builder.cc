#include "db/builder.h"

#include <memory>

#include "table/table_builder.h"
#include "util/filename.h"

namespace accelkv {

Status BuildTable(const std::string& dbname, Env* env, const TableOptions& options,
                  Iterator* iter, FileMetaData* meta) {
  meta->file_size = 0;
  iter->SeekToFirst();
  if (!iter->Valid()) return iter->status();

  const std::string fname = TableFileName(dbname, meta->number);
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(fname, &file);
  if (!s.ok()) return s;

  TableBuilder builder(options, file.get());
  for (; iter->Valid(); iter->Next()) builder.Add(iter->key(), iter->value());
  s = iter->status();
  if (s.ok()) {
    s = builder.Finish();
  } else {
    builder.Abandon();
  }
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) {
    const TableProperties& props = builder.properties();
    meta->file_size = builder.FileSize();
    meta->smallest.DecodeFrom(props.smallest_key);
    meta->largest.DecodeFrom(props.largest_key);
    meta->smallest_seqno = props.smallest_seqno;
    meta->largest_seqno = props.largest_seqno;
    meta->num_entries = props.num_entries;
    meta->num_deletions = props.num_deletions;
  }
  if (!s.ok()) {
    file.reset();
    env->RemoveFile(fname);
    meta->file_size = 0;
  }
  return s;
}

}  // namespace accelkv
