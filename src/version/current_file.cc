// CURRENT is replaced atomically: written to a synced temp file, renamed over
// CURRENT, then the directory is synced.
#include "version/current_file.h"

#include "util/filename.h"

namespace accelkv {

Status SetCurrentFile(Env* env, const std::string& dbname, uint64_t descriptor_number) {
  std::string manifest = DescriptorFileName(dbname, descriptor_number);
  Slice contents = manifest;
  contents.remove_prefix(dbname.size() + 1);
  std::string tmp = TempFileName(dbname, descriptor_number);
  Status s = WriteStringToFile(env, contents.ToString() + "\n", tmp, /*sync=*/true);
  if (s.ok()) s = env->RenameFile(tmp, CurrentFileName(dbname));
  if (s.ok()) s = env->SyncDir(dbname);
  if (!s.ok()) env->RemoveFile(tmp);
  return s;
}

}  // namespace accelkv
