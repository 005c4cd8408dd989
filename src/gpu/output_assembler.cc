#include "gpu/output_assembler.h"

#include <chrono>
#include <memory>
#include <string>

#include "gpu/gpu_util.h"
#include "table/table_builder.h"
#include "util/filename.h"

namespace accelkv {
namespace gpu {

namespace {

// A WritableFile that appends to a string (the encoded table).
class StringSink final : public WritableFile {
 public:
  Status Append(const Slice& data) override {
    contents_.append(data.data(), data.size());
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  const std::string& contents() const { return contents_; }
  void Clear() { contents_.clear(); }

 private:
  std::string contents_;
};

class Assembler {
 public:
  Assembler(const CompactionJobSpec& spec, CompactionJobResult* result)
      : spec_(spec), result_(result) {}

  Status Add(const Slice& key, const Slice& value) {
    // The exact estimate only where the O(1) bound reaches the split size.
    const uint64_t current =
        builder_ != nullptr
            ? splitter_.OutputBytes(builder_->EstimatedFileSizeBound(),
                                    [this] { return builder_->EstimatedFileSize(); })
            : 0;
    if (splitter_.ShouldStopBefore(key, current) && builder_ != nullptr) {
      Status s = FinishOutput();
      if (!s.ok()) return s;
    }
    if (builder_ == nullptr) {
      number_ = spec_.new_file_number();
      sink_.Clear();
      builder_ = std::make_unique<TableBuilder>(spec_.table_options, &sink_);
    }
    builder_->Add(key, value);
    return builder_->status();
  }

  Status Finish() { return builder_ != nullptr ? FinishOutput() : Status::OK(); }

  void Abandon() {
    if (builder_ != nullptr) builder_->Abandon();
    builder_.reset();
  }

  uint64_t encode_micros() const { return encode_micros_; }
  uint64_t write_micros() const { return write_micros_; }

 private:
  Status FinishOutput() {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = builder_->Finish();
    const FileMetaData meta =
        OutputFileMeta(number_, sink_.contents().size(), builder_->properties());
    builder_.reset();
    encode_micros_ += MicrosSince(t0);
    if (!s.ok()) return s;
    const auto t1 = std::chrono::steady_clock::now();
    std::unique_ptr<WritableFile> file;
    const std::string fname = TableFileName(spec_.dbname, number_);
    s = NewTableFile(spec_.env, fname, spec_.table_options, IOPriority::kLow, &file);
    if (!s.ok()) return s;
    result_->outputs.push_back(meta);
    s = file->Append(sink_.contents());
    if (s.ok()) s = file->Sync();
    const Status close = file->Close();
    if (s.ok()) s = close;
    if (s.ok()) {
      result_->bytes_written += meta.file_size;
      result_->output_entries += meta.num_entries;
    }
    write_micros_ += MicrosSince(t1);
    return s;
  }

  const CompactionJobSpec& spec_;
  CompactionJobResult* const result_;
  OutputSplitter splitter_{spec_.compaction};
  StringSink sink_;
  std::unique_ptr<TableBuilder> builder_;
  uint64_t number_ = 0;
  uint64_t encode_micros_ = 0;
  uint64_t write_micros_ = 0;
};

}  // namespace

Status AssembleOutputs(const CompactionJobSpec& spec, const JobInput& input,
                       const HostVector<uint32_t>& kept, CompactionJobResult* result) {
  Assembler assembler(spec, result);
  const char* arena = reinterpret_cast<const char*>(input.keys.arena);
  const char* key_arena = reinterpret_cast<const char*>(input.keys.key_arena);
  const auto t0 = std::chrono::steady_clock::now();
  Status s;
  for (uint32_t i : kept) {
    s = assembler.Add(Slice(key_arena + input.keys.key_offset[i], input.keys.key_size[i]),
                      Slice(arena + input.value_offset[i], input.value_size[i]));
    if (!s.ok()) break;
  }
  if (s.ok()) {
    s = assembler.Finish();
  } else {
    assembler.Abandon();
  }
  const uint64_t total = MicrosSince(t0);
  const uint64_t write = assembler.write_micros();
  result->stage_micros["write"] += write;
  result->stage_micros["encode"] += total > write ? total - write : 0;
  return s;
}

}  // namespace gpu
}  // namespace accelkv
