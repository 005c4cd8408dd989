#include "tools/table_file.h"

namespace accelkv::cli {

Status OpenTableFile(Env* env, const std::string& path, const InternalKeyComparator* icmp,
                     std::unique_ptr<Table>* table, uint64_t* file_size) {
  *file_size = 0;
  uint64_t size = 0;
  Status s = env->GetFileSize(path, &size);
  if (!s.ok()) return s;
  *file_size = size;
  std::unique_ptr<RandomAccessFile> file;
  s = env->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s;
  TableOptions options;
  options.comparator = icmp;
  options.user_comparator = icmp->user_comparator();
  options.block_cache = nullptr;
  return Table::Open(options, std::move(file), size, table);
}

}  // namespace accelkv::cli
