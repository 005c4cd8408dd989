#include "gpu/gpu_util.h"

#include "table/table_properties.h"
#include "version/file_meta.h"

namespace accelkv {
namespace gpu {

FileMetaData OutputFileMeta(uint64_t number, uint64_t file_size, const TableProperties& props) {
  FileMetaData meta;
  meta.number = number;
  meta.file_size = file_size;
  meta.smallest.DecodeFrom(props.smallest_key);
  meta.largest.DecodeFrom(props.largest_key);
  meta.smallest_seqno = props.smallest_seqno;
  meta.largest_seqno = props.largest_seqno;
  meta.num_entries = props.num_entries;
  meta.num_deletions = props.num_deletions;
  return meta;
}

}  // namespace gpu
}  // namespace accelkv
