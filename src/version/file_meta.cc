#include "version/file_meta.h"

namespace accelkv {

void SetFromTableProperties(const TableProperties& props, uint64_t file_size, FileMetaData* meta) {
  meta->file_size = file_size;
  meta->smallest.DecodeFrom(props.smallest_key);
  meta->largest.DecodeFrom(props.largest_key);
  meta->smallest_seqno = props.smallest_seqno;
  meta->largest_seqno = props.largest_seqno;
  meta->num_entries = props.num_entries;
  meta->num_deletions = props.num_deletions;
}

}  // namespace accelkv
