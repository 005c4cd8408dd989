#include "gpu/output_assembler.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_util.h"
#include "table/table_builder.h"
#include "util/internal_key.h"

namespace accelkv {
namespace gpu {

namespace {

// A WritableFile appending to a range's buffer (its tables one after
// another; the buffer keeps its capacity across jobs).
class BufferSink final : public WritableFile {
 public:
  explicit BufferSink(std::string* buffer) : buffer_(buffer) {}
  Status Append(const Slice& data) override {
    buffer_->append(data.data(), data.size());
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }

 private:
  std::string* const buffer_;
};

// One output table encoded into its range's buffer.
struct EncodedTable {
  size_t range = 0;
  uint64_t offset = 0;  // in the range's buffer
  FileMetaData meta;    // all but the number
};

// One subcompaction range's outputs, encoded into the range's buffer by
// TableBuilder and split by the range's own OutputSplitter.
class RangeAssembler {
 public:
  RangeAssembler(const CompactionJobSpec& spec, size_t range, std::string* buffer)
      : spec_(spec), range_(range), buffer_(buffer), sink_(buffer) {
    buffer_->clear();
  }

  Status Add(const Slice& key, const Slice& value) {
    // The exact estimate only where the O(1) bound reaches the split size.
    const uint64_t current =
        builder_ != nullptr
            ? splitter_.OutputBytes(builder_->EstimatedFileSizeBound(),
                                    [this] { return builder_->EstimatedFileSize(); })
            : 0;
    if (splitter_.ShouldStopBefore(key, current) && builder_ != nullptr) {
      Status s = FinishTable();
      if (!s.ok()) return s;
    }
    if (builder_ == nullptr) {
      table_offset_ = buffer_->size();
      builder_ = std::make_unique<TableBuilder>(spec_.table_options, &sink_);
    }
    builder_->Add(key, value);
    return builder_->status();
  }

  Status Finish() { return builder_ != nullptr ? FinishTable() : Status::OK(); }

  void Abandon() {
    if (builder_ != nullptr) builder_->Abandon();
    builder_.reset();
  }

  std::vector<EncodedTable>& tables() { return tables_; }

 private:
  Status FinishTable() {
    Status s = builder_->Finish();
    if (s.ok()) {
      EncodedTable t;
      t.range = range_;
      t.offset = table_offset_;
      t.meta = OutputFileMeta(0, buffer_->size() - table_offset_, builder_->properties());
      tables_.push_back(std::move(t));
    }
    builder_.reset();
    return s;
  }

  const CompactionJobSpec& spec_;
  const size_t range_;
  std::string* const buffer_;
  BufferSink sink_;
  OutputSplitter splitter_{spec_.compaction};
  std::unique_ptr<TableBuilder> builder_;
  uint64_t table_offset_ = 0;
  std::vector<EncodedTable> tables_;
};

// The kept position where each subcompaction range starts: a boundary's
// range at the first kept entry whose user key is at or above it (the kept
// order ascends by user key).
Status RangeStarts(const CompactionJobSpec& spec, const JobInput& input,
                   const HostVector<uint32_t>& kept, std::vector<uint64_t>* starts) {
  const char* key_arena = reinterpret_cast<const char*>(input.keys.key_arena);
  const Comparator* ucmp = spec.internal_comparator->user_comparator();
  const uint64_t n = kept.size();
  std::vector<uint64_t> boundary_starts;
  for (const std::string& b : spec.compaction->subcompaction_boundaries()) {
    uint64_t lo = 0;
    uint64_t hi = n;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      const uint32_t i = kept[mid];
      const Slice key(key_arena + input.keys.key_offset[i], input.keys.key_size[i]);
      if (ucmp->Compare(ExtractUserKey(key), Slice(b)) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    boundary_starts.push_back(lo);
  }
  if (!SubcompactionRangeStarts(boundary_starts, n, starts)) {
    return Status::InvalidArgument("gpu: assemble: subcompaction boundaries out of order");
  }
  return Status::OK();
}

}  // namespace

Status AssembleOutputs(const CompactionJobSpec& spec, const JobInput& input,
                       const HostVector<uint32_t>& kept, AssembleBuffers* buffers,
                       double* helper_cpu_seconds, CompactionJobResult* result) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> starts;
  Status s = RangeStarts(spec, input, kept, &starts);
  if (!s.ok()) return s;

  // "encode": the ranges on separate threads, each into its own buffer.
  // OutputSplitter closes an output at each range's first entry, and a
  // fresh splitter reaches the same state there (compaction.h, step 4), so
  // the tables are the single pass's.
  const char* arena = reinterpret_cast<const char*>(input.keys.arena);
  const char* key_arena = reinterpret_cast<const char*>(input.keys.key_arena);
  const size_t ranges = starts.size() - 1;
  if (buffers->ranges.size() < ranges) buffers->ranges.resize(ranges);
  std::vector<std::vector<EncodedTable>> range_tables(ranges);
  std::vector<Status> statuses(ranges);
  *helper_cpu_seconds += ParallelFor(ranges, ComputeThreads(ranges), [&](size_t r) {
    RangeAssembler assembler(spec, r, &buffers->ranges[r]);
    Status st;
    for (uint64_t k = starts[r]; k < starts[r + 1]; ++k) {
      const uint32_t i = kept[k];
      st = assembler.Add(Slice(key_arena + input.keys.key_offset[i], input.keys.key_size[i]),
                         Slice(arena + input.value_offset[i], input.value_size[i]));
      if (!st.ok()) break;
    }
    if (st.ok()) {
      st = assembler.Finish();
    } else {
      assembler.Abandon();
    }
    statuses[r] = st;
    range_tables[r] = std::move(assembler.tables());
  });
  for (const Status& st : statuses) {
    if (!st.ok()) return st;  // the encode creates no file
  }
  std::vector<EncodedTable> tables;
  for (std::vector<EncodedTable>& rt : range_tables) {
    for (EncodedTable& t : rt) tables.push_back(std::move(t));
  }
  const auto t1 = std::chrono::steady_clock::now();
  result->stage_micros["encode"] += MicrosSince(t0);

  // "write": numbers in table (key) order, then each file written, fsynced
  // and closed on its own thread; a created file is listed (in table
  // order) even when a step fails, for the caller to remove.
  for (EncodedTable& t : tables) t.meta.number = spec.new_file_number();
  std::vector<Status> written(tables.size());
  std::vector<char> created(tables.size(), 0);
  *helper_cpu_seconds += ParallelFor(tables.size(), FileThreads(tables.size()), [&](size_t i) {
    const EncodedTable& t = tables[i];
    bool made = false;
    written[i] = WriteOutputTable(
        spec, t.meta.number, {Slice(buffers->ranges[t.range].data() + t.offset, t.meta.file_size)},
        &made);
    created[i] = made ? 1 : 0;
  });
  for (size_t i = 0; i < tables.size(); ++i) {
    if (created[i]) result->outputs.push_back(tables[i].meta);
    if (s.ok()) s = written[i];
  }
  if (s.ok()) {
    for (const EncodedTable& t : tables) {
      result->bytes_written += t.meta.file_size;
      result->output_entries += t.meta.num_entries;
    }
  }
  result->stage_micros["write"] += MicrosSince(t1);
  return s;
}

}  // namespace gpu
}  // namespace accelkv
