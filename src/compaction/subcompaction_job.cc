#include "compaction/subcompaction_job.h"

#include <chrono>
#include <vector>

#include "compaction/file_list_iterator.h"
#include "compaction/obsolete_version_filter.h"
#include "table/merging_iterator.h"
#include "util/filename.h"
#include "util/thread_cpu.h"

namespace accelkv {

namespace {

using Clock = std::chrono::steady_clock;

uint64_t NanosBetween(Clock::time_point a, Clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

// Entries between two polls of the stop flag.
constexpr uint64_t kStopPollEvery = 1024;

}  // namespace

SubcompactionJob::SubcompactionJob(const CompactionJobSpec& spec, const std::string* begin,
                                   const std::string* end, const std::atomic<bool>* stop)
    : spec_(spec), c_(*spec.compaction), begin_(begin), end_(end), stop_(stop) {}

Status SubcompactionJob::Run(CompactionJobResult* result) {
  const double cpu_start = ThreadCpuSeconds();
  result_ = result;
  *result_ = CompactionJobResult();

  const Clock::time_point read_start = Clock::now();
  std::unique_ptr<Iterator> input = OpenInputs();
  result_->stage_micros["read"] = NanosBetween(read_start, Clock::now()) / 1000;

  Status s = ProcessEntries(input.get());
  input.reset();
  if (s.ok() && builder_ != nullptr) {
    s = FinishOutput();
  } else if (builder_ != nullptr) {
    AbandonOutput();
  }
  result_->stage_micros["encode"] += encode_ns_ / 1000;
  result_->stage_micros["write"] += write_ns_ / 1000;
  for (const FileMetaData& f : result_->outputs) result_->bytes_written += f.file_size;
  result_->cpu_seconds = ThreadCpuSeconds() - cpu_start;
  return s;
}

bool SubcompactionJob::Overlaps(const FileMetaData& f) const {
  const Comparator* ucmp = spec_.internal_comparator->user_comparator();
  if (begin_ != nullptr && ucmp->Compare(f.largest.user_key(), Slice(*begin_)) < 0) return false;
  if (end_ != nullptr && ucmp->Compare(f.smallest.user_key(), Slice(*end_)) >= 0) return false;
  return true;
}

std::unique_ptr<Iterator> SubcompactionJob::OpenInputs() {
  ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::vector<Iterator*> children;
  for (int which = 0; which < 2; which++) {
    std::vector<FileMetaPtr> files;
    for (const FileMetaPtr& f : c_.inputs(which)) {
      if (Overlaps(*f)) files.push_back(f);
    }
    if (files.empty()) continue;
    if (c_.level() + which == 0) {
      // Level-0 files overlap: each needs its own iterator.
      for (const FileMetaPtr& f : files) {
        children.push_back(spec_.table_cache->NewIterator(ro, f->number, f->file_size));
      }
    } else {
      children.push_back(
          NewFileListIterator(spec_.table_cache, ro, spec_.internal_comparator, std::move(files)));
    }
  }
  std::unique_ptr<Iterator> merged(
      NewMergingIterator(spec_.internal_comparator, std::move(children)));
  if (begin_ != nullptr) {
    merged->Seek(InternalKey(Slice(*begin_), kMaxSequenceNumber, kValueTypeForSeek).Encode());
  } else {
    merged->SeekToFirst();
  }
  return merged;
}

Status SubcompactionJob::ProcessEntries(Iterator* input) {
  // merge, drop and encode interleave per entry; clocking all of them per
  // entry would cost as much as the work. Every kSampleEvery-th entry is
  // timed stage by stage, and the loop's wall time (less output opens and
  // finishes, timed exactly) is split between the three stages in the
  // proportions of the sampled times.
  constexpr uint64_t kSampleEvery = 32;
  uint64_t sampled_ns[3] = {0, 0, 0};  // merge, drop, encode
  const uint64_t outside_before = encode_ns_ + write_ns_;
  const Clock::time_point loop_start = Clock::now();

  const Comparator* ucmp = spec_.internal_comparator->user_comparator();
  ObsoleteVersionFilter filter(ucmp, spec_.snapshots, &c_);
  OutputSplitter splitter(&c_);
  std::string prev_key;
  Status s;
  for (uint64_t n = 0; input->Valid(); n++) {
    if (stop_ != nullptr && n % kStopPollEvery == 0 && stop_->load(std::memory_order_relaxed)) {
      stopped_ = true;
      s = Status::Aborted("compaction: stopped because another subcompaction failed");
      break;
    }
    const bool sample = n % kSampleEvery == 0;
    Clock::time_point t0, t1, t2;
    if (sample) t0 = Clock::now();
    const Slice key = input->key();
    ParsedInternalKey ikey;
    if (!ParseInternalKey(key, &ikey)) {
      s = Status::Corruption("compaction input: malformed internal key");
      break;
    }
    if (end_ != nullptr && ucmp->Compare(ikey.user_key, Slice(*end_)) >= 0) break;
    if (n > 0 && spec_.internal_comparator->Compare(Slice(prev_key), key) >= 0) {
      s = Status::Corruption("compaction input: keys out of order or duplicated");
      break;
    }
    prev_key.assign(key.data(), key.size());
    result_->input_entries++;
    const bool keep = filter.Keep(ikey);
    if (sample) t1 = Clock::now();
    uint64_t outside_ns = 0;
    if (!keep) {
      result_->dropped_entries++;
    } else {
      // The exact estimate only when its cheap bound reaches the split size.
      const uint64_t current =
          builder_ == nullptr ? 0 : splitter.OutputBytes(builder_->EstimatedFileSizeBound(), [&] {
            return builder_->EstimatedFileSize();
          });
      if (splitter.ShouldStopBefore(key, current) && builder_ != nullptr) {
        const uint64_t before = encode_ns_ + write_ns_;
        s = FinishOutput();
        outside_ns += encode_ns_ + write_ns_ - before;
        if (!s.ok()) break;
      }
      if (builder_ == nullptr) {
        const uint64_t before = encode_ns_ + write_ns_;
        s = OpenOutput();
        outside_ns += encode_ns_ + write_ns_ - before;
        if (!s.ok()) break;
      }
      builder_->Add(key, input->value());
      s = builder_->status();
      if (!s.ok()) break;
      result_->output_entries++;
    }
    if (sample) t2 = Clock::now();
    input->Next();
    if (sample) {
      const Clock::time_point t3 = Clock::now();
      sampled_ns[0] += NanosBetween(t2, t3);
      sampled_ns[1] += NanosBetween(t0, t1);
      const uint64_t encode = NanosBetween(t1, t2);
      sampled_ns[2] += encode > outside_ns ? encode - outside_ns : 0;
    }
  }
  if (s.ok()) s = input->status();

  const uint64_t loop_ns = NanosBetween(loop_start, Clock::now());
  const uint64_t outside = encode_ns_ + write_ns_ - outside_before;
  const uint64_t in_loop = loop_ns > outside ? loop_ns - outside : 0;
  const uint64_t sampled_total = sampled_ns[0] + sampled_ns[1] + sampled_ns[2];
  const char* names[3] = {"merge", "drop", "encode"};
  for (int i = 0; i < 3; i++) {
    uint64_t share = 0;
    if (sampled_total > 0) {
      share =
          static_cast<uint64_t>(static_cast<double>(in_loop) * static_cast<double>(sampled_ns[i]) /
                                static_cast<double>(sampled_total));
    } else if (i == 0) {
      share = in_loop;  // no entry: the time went to positioning the input
    }
    result_->stage_micros[names[i]] += share / 1000;
  }
  return s;
}

Status SubcompactionJob::OpenOutput() {
  const Clock::time_point start = Clock::now();
  const uint64_t number = spec_.new_file_number();
  std::unique_ptr<WritableFile> file;
  Status s = NewTableFile(spec_.env, TableFileName(spec_.dbname, number), spec_.table_options,
                          IOPriority::kLow, &file);
  if (s.ok()) {
    FileMetaData meta;
    meta.number = number;
    result_->outputs.push_back(meta);  // listed from now on, for removal on error
    file_ = std::move(file);
    builder_ = std::make_unique<TableBuilder>(spec_.table_options, file_.get());
  }
  write_ns_ += NanosBetween(start, Clock::now());
  return s;
}

Status SubcompactionJob::FinishOutput() {
  const Clock::time_point start = Clock::now();
  Status s = builder_->Finish();
  const Clock::time_point encoded = Clock::now();
  encode_ns_ += NanosBetween(start, encoded);
  if (s.ok()) s = file_->Sync();
  if (s.ok()) s = file_->Close();
  write_ns_ += NanosBetween(encoded, Clock::now());
  if (s.ok()) {
    FileMetaData& meta = result_->outputs.back();
    SetFromTableProperties(builder_->properties(), builder_->FileSize(), &meta);
  }
  builder_.reset();
  file_.reset();
  return s;
}

void SubcompactionJob::AbandonOutput() {
  builder_->Abandon();
  builder_.reset();
  file_.reset();
}

}  // namespace accelkv
