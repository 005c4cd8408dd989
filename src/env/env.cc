// Whole-file helpers over any Env.
#include "accelkv/env.h"

namespace accelkv {

Status ReadFileToString(Env* env, const std::string& fname, std::string* data) {
  data->clear();
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  static constexpr size_t kBufferSize = 8192;
  std::unique_ptr<char[]> space(new char[kBufferSize]);
  while (true) {
    Slice fragment;
    s = file->Read(kBufferSize, &fragment, space.get());
    if (!s.ok()) break;
    data->append(fragment.data(), fragment.size());
    if (fragment.size() < kBufferSize) break;  // a short read means end of file
  }
  return s;
}

Status WriteStringToFile(Env* env, const Slice& data, const std::string& fname, bool sync) {
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(fname, &file);
  if (!s.ok()) return s;
  s = file->Append(data);
  if (s.ok() && sync) s = file->Sync();
  if (s.ok()) {
    s = file->Close();
  } else {
    file->Close();  // the first error is the one reported
  }
  file.reset();
  if (!s.ok()) env->RemoveFile(fname);
  return s;
}

}  // namespace accelkv
