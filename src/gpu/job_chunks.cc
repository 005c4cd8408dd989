#include "gpu/job_chunks.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "gpu/gpu_util.h"
#include "util/filename.h"

namespace accelkv {
namespace gpu {

namespace {

Status TableCorruption(uint64_t number, const Status& s) {
  return Status::Corruption("table file " + std::to_string(number) + ": " + s.ToString());
}

// The footer and index block of file f into *index.
Status ReadTableIndex(const CompactionJobSpec& spec, const FileMetaData& f, TableIndex* index) {
  index->number = f.number;
  index->num_entries = f.num_entries;
  index->smallest_user_key = f.smallest.user_key().ToString();
  std::unique_ptr<RandomAccessFile> file;
  Status s = spec.env->NewRandomAccessFile(TableFileName(spec.dbname, f.number), &file);
  if (!s.ok()) return s;
  Footer footer;
  s = ReadFooter(*file, f.file_size, &footer);
  BlockContents contents;  // the index block, CRC checked
  if (s.ok()) s = ReadBlock(*file, footer.index_handle, &contents);
  if (s.ok()) {
    s = DecodeIndexBlock(contents.slice().data(), contents.size, footer.DataEnd(), &index->blocks,
                         &index->last_user_keys);
  }
  if (!s.ok()) return s.IsIOError() ? s : TableCorruption(f.number, s);
  // Chunks find blocks by binary search over these: they must ascend, and
  // the blocks must follow one another in the file.
  for (size_t i = 1; i < index->blocks.size(); ++i) {
    const BlockHandle& prev = index->blocks[i - 1];
    if (index->last_user_keys[i - 1] > index->last_user_keys[i] ||
        index->blocks[i].offset < prev.offset + prev.size + kBlockTrailerSize) {
      return TableCorruption(f.number, Status::Corruption("index entries out of order"));
    }
  }
  return Status::OK();
}

// The blocks [first, last] of one table that can hold user keys of range,
// or first > last when none can. A block holds keys up to its last key;
// keys ascend through the table.
std::pair<size_t, size_t> BlocksOfRange(const TableIndex& t, const UserKeyRange& range) {
  const size_t nb = t.blocks.size();
  if (nb == 0 || (range.has_hi && Slice(t.smallest_user_key).compare(Slice(range.hi)) >= 0)) {
    return {1, 0};
  }
  const auto& keys = t.last_user_keys;
  const size_t first =
      range.has_lo
          ? static_cast<size_t>(std::lower_bound(keys.begin(), keys.end(), range.lo) - keys.begin())
          : 0;
  if (first == nb) return {1, 0};
  size_t last = nb - 1;
  if (range.has_hi) {
    last = std::min(last, static_cast<size_t>(std::lower_bound(keys.begin(), keys.end(), range.hi) -
                                              keys.begin()));
  }
  return {first, last};
}

// Ranges [first_range, last_range] of the boundaries as one key range.
UserKeyRange RangeOf(const std::vector<std::string>& boundaries, size_t first_range,
                     size_t last_range) {
  UserKeyRange r;
  r.has_lo = first_range > 0;
  if (r.has_lo) r.lo = boundaries[first_range - 1];
  r.has_hi = last_range < boundaries.size();
  if (r.has_hi) r.hi = boundaries[last_range];
  return r;
}

// The chunk of key range `range`: every table's blocks that can hold its
// keys, with the totals (the arena's as read with direct_reads or not).
// Without with_parts, only the totals.
JobChunk ChunkOf(const std::vector<TableIndex>& indexes, UserKeyRange range, bool direct_reads,
                 bool with_parts) {
  JobChunk chunk;
  for (const TableIndex& t : indexes) {
    const auto [first, last] = BlocksOfRange(t, range);
    if (first > last) continue;
    const BlockHandle& a = t.blocks[first];
    const BlockHandle& b = t.blocks[last];
    const uint64_t size = b.offset + b.size + kBlockTrailerSize - a.offset;
    const BlockHandle& end = t.blocks.back();
    const uint64_t table_bytes = end.offset + end.size + kBlockTrailerSize - t.blocks[0].offset;
    // Entries pro rata of the bytes, rounded up, plus one per block (an
    // over-estimate: DecodeInputTables checks the exact figure).
    chunk.entries += (t.num_entries * size + table_bytes - 1) / table_bytes + (last - first + 1);
    chunk.bytes += size;
    chunk.arena_bytes += ArenaSpanBytes(direct_reads, a.offset, size);
    chunk.blocks += last - first + 1;
    if (with_parts) {
      TablePart part;
      part.number = t.number;
      part.file_offset = a.offset;
      part.size = size;
      part.blocks.assign(t.blocks.begin() + static_cast<std::ptrdiff_t>(first),
                         t.blocks.begin() + static_cast<std::ptrdiff_t>(last) + 1);
      chunk.parts.push_back(std::move(part));
    }
  }
  chunk.range = std::move(range);
  return chunk;
}

}  // namespace

Status ReadTableIndexes(const CompactionJobSpec& spec, std::vector<TableIndex>* indexes,
                        double* helper_cpu_seconds) {
  std::vector<const FileMetaData*> files;
  for (int which = 0; which < 2; ++which) {
    for (const FileMetaPtr& f : spec.compaction->inputs(which)) files.push_back(f.get());
  }
  indexes->assign(files.size(), TableIndex());
  std::vector<Status> status(files.size());
  *helper_cpu_seconds += ParallelFor(files.size(), FileThreads(files.size()), [&](size_t i) {
    status[i] = ReadTableIndex(spec, *files[i], &(*indexes)[i]);
  });
  for (const Status& s : status) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

void PrefetchChunk(const CompactionJobSpec& spec, const JobChunk& chunk) {
  // With direct reads there is nothing to start: pages read into the page
  // cache now would not serve the chunk's O_DIRECT reads and would only
  // cost a second read from the disk.
  if (spec.table_options.direct_compaction_reads) return;
  for (const TablePart& p : chunk.parts) {
    std::unique_ptr<RandomAccessFile> file;
    if (spec.env->NewRandomAccessFile(TableFileName(spec.dbname, p.number), &file).ok()) {
      (void)file->Prefetch(p.file_offset, static_cast<size_t>(p.size));
    }
  }
}

Status PlanJobChunks(const std::vector<TableIndex>& indexes,
                     const std::vector<std::string>& boundaries, bool direct_reads,
                     const ChunkFits& fits, std::vector<JobChunk>* chunks) {
  chunks->clear();
  const size_t ranges = boundaries.size() + 1;
  auto fit = [&](size_t first, size_t last) {
    const JobChunk c =
        ChunkOf(indexes, RangeOf(boundaries, first, last), direct_reads, /*with_parts=*/false);
    return fits(c.arena_bytes, c.entries, c.blocks);
  };
  for (size_t first = 0; first < ranges;) {
    if (!fit(first, first)) {
      return Status::NotSupported(
          "gpu: a subcompaction range of the job needs more device memory than the budget",
          "range " + std::to_string(first) + " of " + std::to_string(ranges));
    }
    size_t last = first;
    while (last + 1 < ranges && fit(first, last + 1)) ++last;
    chunks->push_back(
        ChunkOf(indexes, RangeOf(boundaries, first, last), direct_reads, /*with_parts=*/true));
    first = last + 1;
  }
  return Status::OK();
}

std::vector<std::string> ChunkBoundaries(const std::vector<TableIndex>& indexes,
                                         const std::vector<std::string>& existing,
                                         bool direct_reads, const ChunkFits& fits) {
  // Candidates: the blocks' distinct last user keys above the job's
  // smallest user key (a cut at or below it would leave an empty range).
  std::vector<std::string> candidates;
  const std::string* smallest = nullptr;
  for (const TableIndex& t : indexes) {
    candidates.insert(candidates.end(), t.last_user_keys.begin(), t.last_user_keys.end());
    if (!t.blocks.empty() && (smallest == nullptr || t.smallest_user_key < *smallest)) {
      smallest = &t.smallest_user_key;
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  if (smallest != nullptr) {
    candidates.erase(candidates.begin(),
                     std::upper_bound(candidates.begin(), candidates.end(), *smallest));
  }
  auto range_fits = [&](const UserKeyRange& r) {
    const JobChunk c = ChunkOf(indexes, r, direct_reads, /*with_parts=*/false);
    return fits(c.arena_bytes, c.entries, c.blocks);
  };
  // Between two of the job's boundaries (segments), cut greedily: from the
  // last cut, the largest candidate whose range up to it still fits (the
  // range's blocks grow with its end, so a binary search finds it), or the
  // next candidate when none does (a range cannot be smaller).
  std::vector<std::string> out;
  UserKeyRange r;
  for (size_t e = 0; e <= existing.size(); ++e) {
    r.has_hi = e < existing.size();
    r.hi = r.has_hi ? existing[e] : std::string();
    auto first = r.has_lo ? std::upper_bound(candidates.begin(), candidates.end(), r.lo)
                          : candidates.begin();
    const auto end = r.has_hi ? std::lower_bound(first, candidates.end(), r.hi) : candidates.end();
    while (first != end && !range_fits(r)) {
      // The first candidate in [first, end) whose range does not fit.
      const auto too_far = std::partition_point(first, end, [&](const std::string& k) {
        UserKeyRange up_to = r;
        up_to.has_hi = true;
        up_to.hi = k;
        return range_fits(up_to);
      });
      const auto cut = too_far == first ? first : too_far - 1;
      out.push_back(*cut);
      r.has_lo = true;
      r.lo = *cut;
      first = cut + 1;
    }
    if (r.has_hi) {
      out.push_back(existing[e]);
      r.has_lo = true;
      r.lo = existing[e];
    }
  }
  return out;
}

}  // namespace gpu
}  // namespace accelkv
