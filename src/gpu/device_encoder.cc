#include "gpu/device_encoder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_util.h"
#include "gpu/host_encoder.h"
#include "gpu/output_planner.h"
#include "gpu/range_planner.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "util/filename.h"
#include "version/file_meta.h"

namespace accelkv {
namespace gpu {

namespace {

// The files of one EncodeOutputs call: numbers taken in table
// order at construction; each released table (its whole file encoded, by
// the device or the CPU) written, fsynced and closed on writer threads
// (OrderedWorkers) while the caller goes on; Finish joins them and reports
// into the result. Deferred (PendingWrites), Finish comes later,
// after other work overlapped the writes.
//
// A table of more than one piece (kWritePieceBytes) is written in pieces,
// each a work item of its own, with positioned writes where its file takes
// them: the first piece taken creates the file and sizes it, the last one
// done syncs and closes it. A file that takes none (direct writes, an Env
// without them) is appended whole by its last piece.
class TableWrites final : public PendingWrites {
 public:
  // bytes[i]: table i's encoded bytes on the host.
  TableWrites(const CompactionJobSpec& spec, std::vector<std::unique_ptr<PlannedTable>> tables,
              std::vector<const uint8_t*> bytes, size_t min_helpers, CompactionJobResult* result)
      : spec_(spec),
        tables_(std::move(tables)),
        bytes_(std::move(bytes)),
        result_(result),
        numbers_(tables_.size()),
        pieces_(TableSizes(tables_), kWritePieceBytes),
        written_(tables_.size()),
        done_(tables_.size(), false) {
    for (uint64_t& n : numbers_) n = spec.new_file_number();
    for (size_t i = 0; i < tables_.size(); ++i) written_[i].pieces_left.store(pieces_.count(i));
    const size_t threads = FileThreads(pieces_.total());
    workers_ = std::make_unique<OrderedWorkers>(std::max(threads - 1, min_helpers),
                                                [this](size_t k) { WritePiece(k); });
  }
  ~TableWrites() override {
    if (!finished_) (void)Finish();
  }

  const PlannedTable& table(size_t i) const { return *tables_[i]; }
  // Lent output: opens table i's file now (before its chunk is encoded)
  // and, when its Env lends the prepared file's bytes in memory the
  // device's copies reach directly (WritableFile::LendPrepared,
  // KeySortDevice::DirectHostMemory), adds them to *where as lent extents
  // at the table's output offsets: the device's copies back fill the file
  // in place, and its writer only syncs and closes it. Else the table is
  // written from the host output buffer, as is every later one of the job
  // (the first that is not lent ends the lending). Encode thread only.
  void Lend(size_t i, KeySortDevice* device, ChunkPlace* where) {
    if (!lending_) return;
    Written& w = written_[i];
    std::call_once(w.open, [this, i] { Open(i, /*prepare=*/true); });
    std::vector<WritablePiece> pieces;
    uint64_t size = 0;
    bool direct = w.positioned && w.failure.ok() && w.file->LendPrepared(&pieces).ok();
    for (size_t k = 0; k < pieces.size() && direct; ++k) {
      direct = device->DirectHostMemory(reinterpret_cast<const uint8_t*>(pieces[k].data),
                                        pieces[k].size);
      size += pieces[k].size;
    }
    if (!direct || size != tables_[i]->file_size) {
      lending_ = false;
      return;
    }
    w.lent = true;
    uint64_t at = tables_[i]->out_offset;
    for (const WritablePiece& p : pieces) {
      where->lent.push_back(PlaceExtent{reinterpret_cast<uint8_t*>(p.data), at, p.size});
      at += p.size;
    }
  }
  // Hands tables [0, end) to the writers.
  void Release(size_t end) {
    if (released_ == 0 && end > 0) first_release_ = std::chrono::steady_clock::now();
    released_ = end;
    workers_->Release(pieces_.begin(end));
  }
  bool write_failed() const { return write_failed_.load(); }
  // Returns once tables [0, end), all released, are written (or failed)
  // and closed: their bytes may then be overwritten. Runs released pieces
  // itself meanwhile, since a helper may never have joined.
  void WaitWritten(size_t end) {
    std::unique_lock<std::mutex> l(done_mu_);
    while (done_prefix_ < end) {
      l.unlock();
      const bool ran = workers_->RunOne();
      l.lock();
      // None left to take: the rest run on helpers, which say when done.
      if (!ran) done_cv_.wait(l, [&] { return done_prefix_ >= end; });
    }
  }
  // The device has encoded its last chunk (or failed: encode_status).
  void EncodeDone(const Status& encode_status) {
    encode_status_ = encode_status;
    encoded_ = std::chrono::steady_clock::now();
  }

  // Stage times: "gpu_encode" is the device's (counted by the caller); the
  // writes that ran while other work went on (the device encoding later
  // chunks; deferred, the next chunk of a job) are "write_overlapped" (wall,
  // from the first release to the start of Finish: not on the job's
  // critical path); the wall time Finish waits is "write".
  Status Finish() override {
    finished_ = true;
    const auto wait_start = std::max(std::chrono::steady_clock::now(), encoded_);
    {
      CpuStageScope cpu(result_, "write");  // the caller writes beside the helpers
      *cpu.helpers() += workers_->Close();
    }
    result_->stage_micros["write"] += MicrosSince(wait_start);
    if (released_ > 0) {
      result_->stage_micros["write_overlapped"] += static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(wait_start - first_release_)
              .count());
    }
    // Tables opened for lending but never released (a failed encode): closed
    // here; every created file is listed either way.
    for (size_t i = released_; i < written_.size(); ++i) {
      if (written_[i].file != nullptr) (void)written_[i].file->Close();
      written_[i].file.reset();
    }
    for (const Written& w : written_) {
      if (w.created) result_->outputs.push_back(w.meta);
    }
    for (size_t i = 0; i < released_; ++i) {
      if (!written_[i].failure.ok()) return written_[i].failure.status();
    }
    if (!encode_status_.ok()) return encode_status_;
    for (const Written& w : written_) {
      result_->bytes_written += w.meta.file_size;
      result_->output_entries += w.meta.num_entries;
    }
    return Status::OK();
  }

 private:
  // One table's file, shared by its pieces' writers.
  struct Written {
    std::once_flag open;                 // the first piece taken opens the file
    std::unique_ptr<WritableFile> file;  // set in open; closed by the last piece
    bool positioned = false;             // the file took PrepareWriteAt
    bool lent = false;                   // filled in place by the device (Lend)
    bool created = false;
    FileMetaData meta;
    std::atomic<uint64_t> pieces_left{0};
    FirstFailure failure;
  };

  static std::vector<uint64_t> TableSizes(const std::vector<std::unique_ptr<PlannedTable>>& t) {
    std::vector<uint64_t> sizes;
    sizes.reserve(t.size());
    for (const auto& table : t) sizes.push_back(table->file_size);
    return sizes;
  }

  void Fail(Written* w, const Status& s) {
    w->failure.Add(s);
    write_failed_.store(true);
  }

  // prepare: PrepareWriteAt even for a table of one piece (else appended).
  void Open(size_t i, bool prepare) {
    const PlannedTable& table = *tables_[i];
    Written& w = written_[i];
    w.meta = OutputFileMeta(numbers_[i], table.file_size, table.props);
    Status s = NewTableFile(spec_.env, TableFileName(spec_.dbname, numbers_[i]),
                            spec_.table_options, IOPriority::kLow, &w.file);
    if (!s.ok()) return Fail(&w, s);
    w.created = true;
    if (pieces_.count(i) == 1 && !prepare) return;
    s = w.file->PrepareWriteAt(table.file_size);
    if (s.ok()) {
      w.positioned = true;
    } else if (!s.IsNotSupported()) {
      Fail(&w, s);
    }
  }

  void WritePiece(size_t k) {
    const size_t i = pieces_.FileOf(k);
    const PlannedTable& table = *tables_[i];
    Written& w = written_[i];
    std::call_once(w.open, [this, i] { Open(i, /*prepare=*/false); });
    const char* bytes = reinterpret_cast<const char*>(bytes_[i]);
    if (w.positioned && !w.lent && w.failure.ok()) {
      const uint64_t at = (k - pieces_.begin(i)) * kWritePieceBytes;
      const Status s =
          w.file->WriteAt(at, Slice(bytes + at, std::min(kWritePieceBytes, table.file_size - at)));
      if (!s.ok()) Fail(&w, s);
    }
    // The last piece done: every other piece's WriteAt happened before.
    if (w.pieces_left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (w.file != nullptr) {
      Status s;
      if (w.failure.ok()) {
        if (!w.positioned) s = w.file->Append(Slice(bytes, table.file_size));
        if (s.ok()) s = w.file->Sync();
      }
      const Status close = w.file->Close();
      if (s.ok()) s = close;
      if (!s.ok()) Fail(&w, s);
      w.file.reset();
    }
    MarkDone(i);
  }

  void MarkDone(size_t i) {
    {
      std::lock_guard<std::mutex> l(done_mu_);
      done_[i] = true;
      while (done_prefix_ < done_.size() && done_[done_prefix_]) ++done_prefix_;
    }
    done_cv_.notify_all();
  }

  const CompactionJobSpec& spec_;
  const std::vector<std::unique_ptr<PlannedTable>> tables_;
  const std::vector<const uint8_t*> bytes_;
  CompactionJobResult* const result_;
  std::vector<uint64_t> numbers_;
  const FilePieces pieces_;  // the tables' pieces (kWritePieceBytes)
  std::vector<Written> written_;
  std::unique_ptr<OrderedWorkers> workers_;
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  std::vector<bool> done_;  // table closed (written or failed); under done_mu_
  size_t done_prefix_ = 0;  // tables [0, it) all done; under done_mu_
  std::atomic<bool> write_failed_{false};
  size_t released_ = 0;  // tables handed to the writers
  bool lending_ = true;  // Lend: no table refused yet (encode thread)
  std::chrono::steady_clock::time_point first_release_;
  std::chrono::steady_clock::time_point encoded_;
  Status encode_status_;
  bool finished_ = false;
};

}  // namespace

Status EncodeOutputs(const CompactionJobSpec& spec, const JobInput& input,
                     const KeySortOutput& sorted, KeySortDevice* device,
                     const EncodeOptions& options, EncodeJob* scratch,
                     const std::function<Status()>& before_output,
                     std::unique_ptr<PendingWrites>* defer, CompactionJobResult* result) {
  if (spec.table_options.block_size == 0 ||
      spec.table_options.compression != CompressionType::kNone) {
    return Status::NotSupported("gpu: encode: table options the device encoder does not take");
  }
  if (sorted.plan == nullptr && !sorted.kept.empty()) {
    return Status::InvalidArgument("gpu: encode: the device computed no plan inputs");
  }
  auto t = std::chrono::steady_clock::now();
  std::optional<CpuStageScope> plan_cpu(std::in_place, result, "plan");
  EncodeJob& job = *scratch;
  job.arena = input.keys.arena;
  job.arena_size = input.keys.arena_size;
  job.key_arena = input.keys.key_arena;
  job.key_arena_size = input.keys.key_arena_size;
  // job.blocks, filters and tables keep their size from the last job until
  // the ranges' lists are laid out below (a resize from empty zero-filled
  // every block's record again on the plan's serial tail).
  job.comparator = OutputComparatorName(spec);
  job.out_size = 0;
  // The subcompaction ranges (where PlanEntry::boundaries steps up) are
  // planned on separate threads: OutputSplitter cuts at each range's first
  // key, and a fresh splitter and planner reach the same state there
  // (compaction.h, step 4), as the CPU executor's subcompactions rely on.
  // Then the ranges' blocks and tables are laid out one after another.
  // The ranges' starts come from the device (boundary_starts), since the
  // plan entries are still on their way back: each range's thread
  // (RangePlanner) plans from the device's block records, and waits only
  // for the plan entries it reaches entry by entry (WaitPlan).
  const uint64_t n = sorted.kept.size();
  if (sorted.boundary_starts.size() != spec.compaction->subcompaction_boundaries().size()) {
    return Status::InvalidArgument("gpu: encode: the device gave no subcompaction range starts");
  }
  std::vector<uint64_t> starts;
  if (!SubcompactionRangeStarts(sorted.boundary_starts, n, &starts)) {
    return Status::InvalidArgument("gpu: encode: subcompaction range starts out of order");
  }
  const size_t ranges = starts.size() - 1;
  if (job.range_lists.size() < ranges) job.range_lists.resize(ranges);
  struct RangePlan {
    std::vector<std::unique_ptr<PlannedTable>> tables;
    uint64_t out_size = 0;
    Status status;
    uint64_t wait_micros = 0;  // in WaitPlan
    uint64_t end_micros = 0;   // from the stage's start to the range's plan end
  };
  std::vector<RangePlan> plans(ranges);
  *plan_cpu->helpers() += ParallelFor(ranges, ComputeThreads(ranges), [&](size_t r) {
    RangePlan& rp = plans[r];
    EncodeJob::RangeLists& lists = job.range_lists[r];
    lists.blocks.clear();
    lists.filters.clear();
    lists.tails.clear();
    OutputPlanner planner(spec, input, sorted, &lists.blocks, &lists.filters, &lists.tails);
    RangePlanner range(input, sorted, device, starts[r], starts[r + 1], &planner);
    const Status st = range.Plan();
    rp.wait_micros = range.wait_micros();
    rp.status = st.ok() ? planner.Finish() : st;
    rp.out_size = planner.out_size();
    rp.tables = std::move(planner.tables());
    rp.end_micros = MicrosSince(t);
  });
  const uint64_t joined_micros = MicrosSince(t);
  device->ReleasePlan();  // every range is planned
  const uint64_t released_micros = MicrosSince(t);
  // The range that ended last: when it ended, and how long it waited for
  // its plan entries; when the threads were joined and the device's plan
  // released (docs/GPU.md, "plan_last_end", "plan_last_wait",
  // "plan_joined", "plan_released").
  const RangePlan* last = nullptr;
  for (const RangePlan& rp : plans) {
    if (last == nullptr || rp.end_micros > last->end_micros) last = &rp;
  }
  // The ranges' lists one after another: each range's place from O(ranges)
  // sums, then each range's lists copied there on its own thread, their
  // offsets moved by the ranges' before it. One thread copying range after
  // range was the plan's serial tail: 0.4-0.55 ms a job on the H100
  // (plan less plan_released; bench/results/2026-11-28-h100-parallel-plan-merge.md).
  struct RangeBase {
    size_t block = 0, filter = 0, tail = 0, table = 0;
    uint64_t out = 0;
  };
  std::vector<RangeBase> base(ranges + 1);
  for (size_t r = 0; r < ranges; ++r) {
    const RangePlan& rp = plans[r];
    if (!rp.status.ok()) return rp.status;
    const EncodeJob::RangeLists& lists = job.range_lists[r];
    base[r + 1].block = base[r].block + lists.blocks.size();
    base[r + 1].filter = base[r].filter + lists.filters.size();
    base[r + 1].tail = base[r].tail + lists.tails.size();
    base[r + 1].table = base[r].table + rp.tables.size();
    base[r + 1].out = base[r].out + rp.out_size;
  }
  job.blocks.resize(base[ranges].block);
  job.filters.resize(base[ranges].filter);
  job.tables.resize(base[ranges].tail);
  job.out_size = base[ranges].out;
  std::vector<std::unique_ptr<PlannedTable>> tables(base[ranges].table);
  *plan_cpu->helpers() += ParallelFor(ranges, ComputeThreads(ranges), [&](size_t r) {
    RangePlan& rp = plans[r];
    const EncodeJob::RangeLists& lists = job.range_lists[r];
    const RangeBase& b = base[r];
    EncodeBlock* block = job.blocks.data() + b.block;
    for (const EncodeBlock& x : lists.blocks) {
      *block = x;
      block->out_offset += b.out;
      ++block;
    }
    EncodeFilter* filter = job.filters.data() + b.filter;
    for (const EncodeFilter& x : lists.filters) {
      *filter = x;
      filter->out_offset += b.out;
      ++filter;
    }
    EncodeTable* tail = job.tables.data() + b.tail;
    for (const EncodeTable& x : lists.tails) {
      *tail = x;
      tail->out_offset += b.out;
      tail->first_block += b.block;
      tail->end_block += b.block;
      ++tail;
    }
    for (size_t i = 0; i < rp.tables.size(); ++i) {
      std::unique_ptr<PlannedTable>& t = rp.tables[i];
      t->out_offset += b.out;
      t->first_block += b.block;
      t->end_block += b.block;
      tables[b.table + i] = std::move(t);
    }
  });
  result->stage_micros["plan"] += MicrosSince(t);
  if (last != nullptr) {
    result->stage_micros["plan_last_end"] += last->end_micros;
    result->stage_micros["plan_last_wait"] += last->wait_micros;
  }
  result->stage_micros["plan_joined"] += joined_micros;
  result->stage_micros["plan_released"] += released_micros;
  plan_cpu.reset();

  Status s = before_output ? before_output() : Status::OK();
  if (!s.ok()) return s;
  // "output": the host output buffer, the tables' file numbers, the writers.
  std::optional<CpuStageScope> output_cpu(std::in_place, result, "output");

  // Chunks of whole tables in table order, each of at least options.chunk_bytes of
  // data blocks (the last one: the rest); at least one chunk, so the device
  // sees the encode stage even when nothing is kept.
  const size_t nt = tables.size();
  std::vector<size_t> chunk_end;  // table index after each chunk
  uint64_t chunk_data = 0;
  for (size_t i = 0; i < nt; ++i) {
    chunk_data += tables[i]->file_size;
    if (chunk_data >= std::max<uint64_t>(options.chunk_bytes, 1) || i + 1 == nt) {
      chunk_end.push_back(i + 1);
      chunk_data = 0;
    }
  }
  if (chunk_end.empty()) chunk_end.push_back(0);
  const size_t nc = chunk_end.size();
  // Chunk c's output bytes: [chunk_lo[c], chunk_lo[c + 1]), from its first
  // table's offset to the next chunk's (the job's end after the last).
  std::vector<uint64_t> chunk_lo(nc + 1, job.out_size);
  for (size_t c = 0; c < nc; ++c) {
    const size_t first_table = c == 0 ? 0 : chunk_end[c - 1];
    if (first_table < nt) chunk_lo[c] = tables[first_table]->out_offset;
  }
  // The host output buffer: the whole output, or in device-encode mode,
  // when that is at least twice as large, a ring of kOutputRingSlots slots
  // of the largest chunk each (4 KiB multiples, so direct writes stay
  // aligned): chunk c lands in slot c % kOutputRingSlots once the writes of
  // chunk c - kOutputRingSlots are done (the place waits for them).
  uint64_t slot_bytes = 0;
  for (size_t c = 0; c < nc; ++c) {
    slot_bytes = std::max(slot_bytes, chunk_lo[c + 1] - chunk_lo[c]);
  }
  slot_bytes = AlignUp(slot_bytes, kDirectIoAlignment);
  const bool ring = !options.on_host && nc > kOutputRingSlots &&
                    2 * kOutputRingSlots * slot_bytes <= job.out_size;
  uint8_t* out = nullptr;
  s = device->HostOutput(ring ? kOutputRingSlots * slot_bytes : job.out_size, &out);
  if (!s.ok()) return s;
  std::vector<uint8_t*> chunk_dst(nc);
  for (size_t c = 0; c < nc; ++c) {
    chunk_dst[c] = ring ? out + (c % kOutputRingSlots) * slot_bytes : out + chunk_lo[c];
  }
  std::vector<const uint8_t*> table_bytes(nt);
  for (size_t c = 0; c < nc; ++c) {
    for (size_t i = c == 0 ? 0 : chunk_end[c - 1]; i < chunk_end[c]; ++i) {
      table_bytes[i] = chunk_dst[c] + (tables[i]->out_offset - chunk_lo[c]);
    }
  }

  // Each chunk's tables are encoded whole (data blocks, filter,
  // properties, index, footer) on the device, or in keys-only mode on the
  // CPU, then their files are written, fsynced and closed on the writer
  // threads while the next chunk is encoded. File numbers are taken in
  // table order first; a created file is listed in result->outputs (in
  // table order) even when a later step fails, also a failed encode of a
  // later chunk (the caller removes them); the first failure in table
  // order among the written tables is returned, else the encode's. A
  // write failure stops the encoding of later chunks (on the device, of
  // those after the one already queued). The caller encodes
  // while the helpers write; it joins them for what is left after the last
  // chunk. With several chunks, or writes deferred past the return, at
  // least one helper, so writes overlap other work.
  const size_t min_helpers = chunk_end.size() > 1 || defer != nullptr ? 1 : 0;
  auto writes = std::make_unique<TableWrites>(spec, std::move(tables), std::move(table_bytes),
                                              min_helpers, result);
  Status encode_status;
  output_cpu.reset();
  // Keys-only mode encodes on the CPU from the host arenas (the values
  // never went back from the device), with the same functions.
  const EncodeSources host_src{input.keys.arena,           input.keys.key_arena,
                               sorted.kept.data(),         input.keys.key_offset.data(),
                               input.keys.key_size.data(), input.value_offset.data(),
                               input.value_size.data()};
  std::optional<CpuStageScope> encode_cpu(std::in_place, result,
                                          options.on_host ? "encode" : "gpu_encode");
  // Chunk c's blocks: its first table's first block to its last table's
  // end block.
  std::vector<std::pair<uint64_t, uint64_t>> chunk_blocks(chunk_end.size());
  for (size_t c = 0; c < chunk_end.size(); ++c) {
    const size_t first_table = c == 0 ? 0 : chunk_end[c - 1];
    chunk_blocks[c].first = first_table < nt ? writes->table(first_table).first_block : 0;
    chunk_blocks[c].second = chunk_end[c] > 0 ? writes->table(chunk_end[c] - 1).end_block : 0;
  }
  if (options.on_host) {
    for (size_t c = 0; c < chunk_end.size() && !writes->write_failed(); ++c) {
      const auto [first_block, end_block] = chunk_blocks[c];
      const auto t0 = std::chrono::steady_clock::now();
      encode_status = CheckEncodeJob(job, first_block, end_block, sorted.kept.size());
      if (encode_status.ok()) {
        *encode_cpu->helpers() += EncodeOnHost(job, host_src, first_block, end_block, out,
                                               ComputeThreads(end_block - first_block));
      }
      result->stage_micros["encode"] += MicrosSince(t0);
      if (!encode_status.ok()) break;
      writes->Release(chunk_end[c]);
    }
  } else {
    // The device queues the next chunk before it hands this one over.
    // "slot_wait" (ring only): the encode's waits for a slot's writes.
    uint64_t slot_wait = 0;
    const ChunkPlacer place = [&](size_t c) {
      if (ring && c >= kOutputRingSlots) {
        const auto t0 = std::chrono::steady_clock::now();
        writes->WaitWritten(chunk_end[c - kOutputRingSlots]);
        slot_wait += MicrosSince(t0);
      }
      ChunkPlace where{chunk_dst[c], chunk_lo[c], chunk_lo[c + 1] - chunk_lo[c], {}};
      for (size_t i = c == 0 ? 0 : chunk_end[c - 1]; i < chunk_end[c]; ++i) {
        writes->Lend(i, device, &where);
      }
      return where;
    };
    // Every chunk may be queued at once; with the ring, a place waits for
    // the writes of the chunk kOutputRingSlots before it, which only its
    // landed starts (key_sort_device.h).
    const size_t queue_ahead = ring ? kOutputRingSlots : chunk_end.size();
    // "encode_first_landed": from this call's start to the first chunk's
    // landing (the device's encode and copies back before it).
    encode_status = device->EncodeBlocks(
        job, chunk_blocks, place, queue_ahead, &result->stage_micros, [&](size_t c) {
          if (c == 0) result->stage_micros["encode_first_landed"] += MicrosSince(t);
          writes->Release(chunk_end[c]);
          return !writes->write_failed();
        });
    if (ring) result->stage_micros["slot_wait"] += slot_wait;
  }
  // "encode_returned", "encode_released", "encode_finished": from this
  // call's start to the device's return, its release, the writers' end.
  result->stage_micros["encode_returned"] += MicrosSince(t);
  device->ReleaseEncodeInput();
  result->stage_micros["encode_released"] += MicrosSince(t);
  encode_cpu.reset();
  writes->EncodeDone(encode_status);
  if (defer != nullptr && encode_status.ok() && !writes->write_failed()) {
    *defer = std::move(writes);
    return Status::OK();
  }
  s = writes->Finish();
  result->stage_micros["encode_finished"] += MicrosSince(t);
  return s;
}

}  // namespace gpu
}  // namespace accelkv
