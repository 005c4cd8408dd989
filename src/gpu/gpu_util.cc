#include "gpu/gpu_util.h"

#include "table/table_properties.h"
#include "version/file_meta.h"

namespace accelkv {
namespace gpu {

FileMetaData OutputFileMeta(uint64_t number, uint64_t file_size, const TableProperties& props) {
  FileMetaData meta;
  meta.number = number;
  SetFromTableProperties(props, file_size, &meta);
  return meta;
}

}  // namespace gpu
}  // namespace accelkv
