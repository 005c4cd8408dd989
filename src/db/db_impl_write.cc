// DBImpl write path: group commit, WAL append, memtable insert, stalls,
// and pipelined writes (write_pipeline.h).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "db/db_impl.h"
#include "memtable/link_job.h"
#include "memtable/write_batch_internal.h"
#include "util/cpu_relax.h"
#include "util/filename.h"

namespace accelkv {

// A queued write. Followers wait for their state to change from kWaiting:
// to kDone (a leader wrote their batch; status holds the outcome), to
// kLeader (they lead the next group) or to kLink (their group's leader asks
// them to help link the group's entries into the memtable, link_job; they
// then wait again, for kDone). They spin, then yield, and only then
// block on their own mutex and condition variable (RocksDB's AwaitState), so
// a busy queue hands writes over without a futex sleep and wake-up per
// writer, which made LevelDB-style group commit slower with 8 writers than
// with one. The yield phase is adaptive (RocksDB's adaptive yield): it is
// skipped while it has not been paying off (the DB's yield credit is
// negative; one wait in 256 still tries it, to notice when it pays again),
// and cut short after three slow yields (a yield that took over 3 us means
// other threads had the core: the machine is oversubscribed, and yielding
// then only burns CPU in sched_yield). Measured on 16 cores with 16 writers
// (bench/results/2026-11-24-h100-db-writers.md): the fixed 50 us yield loop
// spent more CPU in the kernel than in user space.
struct DBImpl::Writer {
  enum State : uint32_t { kWaiting = 0, kBlocked = 1, kLink = 2, kLeader = 3, kDone = 4 };

  explicit Writer(const WriteBatch* b, bool s) : batch(b), sync(s) {}
  Status status;
  const WriteBatch* batch;  // nullptr: a request to switch the memtable
  bool sync;
  std::atomic<uint32_t> state{kWaiting};
  std::mutex mu;  // with cv: only once the writer blocks (state kBlocked)
  std::condition_variable cv;
  Writer* next_done = nullptr;  // the leader's list of its group's followers
  // Set by the leader before kLink; read by this writer after it sees kLink.
  std::shared_ptr<MemTableLinkJob> link_job;

  // Waits until the state is kLink, kLeader or kDone and returns it, as
  // the options say (Options::write_thread_*). credit: the DB's yield
  // credit (see above).
  uint32_t Await(const Options& options, std::atomic<int32_t>* credit) {
    using Clock = std::chrono::steady_clock;
    // Spin: 200 pauses, then on until write_thread_spin_usec have passed.
    Clock::time_point spin_end;
    for (uint32_t i = 1;; ++i) {
      const uint32_t s = state.load(std::memory_order_acquire);
      if (s >= kLink) return s;
      CpuRelax();
      if (i == 200) {
        if (options.write_thread_spin_usec == 0) break;
        spin_end = Clock::now() + std::chrono::microseconds(options.write_thread_spin_usec);
      } else if (i > 200 && i % 64 == 0 && Clock::now() >= spin_end) {
        break;
      }
    }
    thread_local uint32_t waits = 0;
    if (options.enable_write_thread_adaptive_yield && options.write_thread_max_yield_usec > 0 &&
        (credit->load(std::memory_order_relaxed) >= 0 || (++waits & 255u) == 0)) {
      const auto start = Clock::now();
      const auto max_yield = std::chrono::microseconds(options.write_thread_max_yield_usec);
      const auto slow_yield = std::chrono::microseconds(options.write_thread_slow_yield_usec);
      auto last = start;
      int slow = 0;
      bool released = false;
      uint32_t s = kWaiting;
      while (last - start < max_yield) {
        std::this_thread::yield();
        s = state.load(std::memory_order_acquire);
        if (s >= kLink) {
          released = true;
          break;
        }
        const auto now = Clock::now();
        if (slow_yield.count() > 0 && now - last > slow_yield && ++slow >= 3) break;
        last = now;
      }
      // credit <- credit - credit / 1024 +/- 2^17 (RocksDB's constants).
      const int32_t c = credit->load(std::memory_order_relaxed);
      credit->store(c - c / 1024 + (released ? 131072 : -131072), std::memory_order_relaxed);
      if (released) return s;
    }
    std::unique_lock<std::mutex> l(mu);
    uint32_t expected = kWaiting;
    if (state.compare_exchange_strong(expected, kBlocked, std::memory_order_acq_rel)) {
      cv.wait(l, [this] { return state.load(std::memory_order_acquire) >= kLink; });
    }
    return state.load(std::memory_order_acquire);
  }

  // Called by another thread. After it returns the writer may be gone:
  // nothing of it is touched once the new state is visible to it, except
  // under its mutex when it blocked (it cannot leave its wait before that
  // mutex is released).
  void SetState(uint32_t new_state) {
    uint32_t s = state.load(std::memory_order_acquire);
    while (s != kBlocked) {  // kWaiting, or kLink while it helps
      if (state.compare_exchange_weak(s, new_state, std::memory_order_acq_rel)) return;
    }
    std::lock_guard<std::mutex> l(mu);  // kBlocked: it waits on cv
    state.store(new_state, std::memory_order_release);
    cv.notify_one();
  }

  // Asks a waiting writer to help with job, unless it is asleep (waking it
  // would cost the leader a system call, and the job is done sooner by the
  // threads that are running). True if it was asked.
  bool AskToLink(const std::shared_ptr<MemTableLinkJob>& job) {
    link_job = job;
    uint32_t expected = kWaiting;
    return state.compare_exchange_strong(expected, kLink, std::memory_order_acq_rel);
  }

  // Called by this writer in state kLink: helps, then waits for its outcome.
  // Returns kDone.
  uint32_t LinkAndAwait(const Options& options, std::atomic<int32_t>* credit) {
    link_job->Help();
    link_job.reset();
    uint32_t expected = kLink;
    if (!state.compare_exchange_strong(expected, kWaiting, std::memory_order_acq_rel)) {
      return expected;  // kDone already
    }
    return Await(options, credit);
  }
};

namespace {

// Put and Delete build their one-record batch in a batch kept per thread, so
// a write allocates nothing (a fresh WriteBatch took a malloc and a free per
// write: about 4% of a writer's time in fillrandom, perf on the dev machine).
// A write returns only once its batch is applied, so the next write of the
// thread may reuse it. Large records do not pin their memory.
class SingleWriteBatch {
 public:
  SingleWriteBatch() : batch_(Cached()) { batch_.Clear(); }
  ~SingleWriteBatch() {
    constexpr size_t kKeepBytes = 64 << 10;
    if (WriteBatchInternal::Contents(&batch_).size() > kKeepBytes) batch_ = WriteBatch();
  }
  SingleWriteBatch(const SingleWriteBatch&) = delete;
  SingleWriteBatch& operator=(const SingleWriteBatch&) = delete;
  WriteBatch* get() { return &batch_; }

 private:
  static WriteBatch& Cached() {
    thread_local WriteBatch batch;
    return batch;
  }
  WriteBatch& batch_;
};

}  // namespace

Status DBImpl::Put(const WriteOptions& options, const Slice& key, const Slice& value) {
  SingleWriteBatch batch;
  batch.get()->Put(key, value);
  return WriteImpl(options, batch.get());
}

Status DBImpl::Delete(const WriteOptions& options, const Slice& key) {
  SingleWriteBatch batch;
  batch.get()->Delete(key);
  return WriteImpl(options, batch.get());
}

Status DBImpl::Write(const WriteOptions& options, const WriteBatch& batch) {
  return WriteImpl(options, &batch);
}

Status DBImpl::WriteImpl(const WriteOptions& options, const WriteBatch* batch) {
  Writer w(batch, options.sync);
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return Status::InvalidArgument("database is closed");
  writers_.push_back(&w);
  if (&w != writers_.front()) {
    lock.unlock();
    uint32_t state = w.Await(options_, &writer_yield_credit_);
    if (state == Writer::kLink) state = w.LinkAndAwait(options_, &writer_yield_credit_);
    if (state == Writer::kDone) return w.status;
    lock.lock();  // this writer now leads (a finishing leader made it front)
  }
  if (options_.enable_pipelined_write) return PipelinedWriteGroup(&w, lock);

  // This writer leads: it writes its group, then, while writers are queued
  // behind it, up to kMaxCombinedGroups more groups on their behalf before
  // it hands the lead on. The next leader is waiting, often asleep; on a
  // loaded machine a woken thread waits for a core, while this one has it
  // (flat combining). A memtable switch request (batch nullptr) is left to
  // lead itself. While this thread leads and the queue is not empty, the
  // queue's front only waits (a writer leads only when made front by a
  // leader or when it finds the queue empty), so the lock may be dropped
  // between groups to wake the finished group's writers.
  constexpr int kMaxCombinedGroups = 4;
  Writer* done = nullptr;  // the last group's writers but this one, to wake
  const Status status = WriteGroup(&w, lock, &done);
  for (int extra = 0; extra < kMaxCombinedGroups; ++extra) {
    if (writers_.empty() || writers_.front()->batch == nullptr) break;
    lock.unlock();
    WakeWriters(done);
    lock.lock();
    done = nullptr;
    stats_.combined_groups++;
    WriteGroup(&w, lock, &done);
  }
  // Hand the lead to the next writer, and only then, with mu_ released,
  // tell the group's writers their outcome: waking a blocked writer is a
  // futex call, and under mu_ those calls held up the next group (the next
  // leader needs mu_ to start).
  HandOffLead();
  lock.unlock();
  WakeWriters(done);
  return status;
}

int DBImpl::TEST_BlockedWriters() {
  std::lock_guard<std::mutex> l(mu_);
  int blocked = 0;
  for (const Writer* w : writers_) {
    if (w->state.load(std::memory_order_acquire) == Writer::kBlocked) ++blocked;
  }
  return blocked;
}

void DBImpl::HandOffLead() {
  if (!writers_.empty()) {
    writers_.front()->SetState(Writer::kLeader);
  } else if (shutting_down_.load()) {
    bg_cv_.notify_all();  // Close waits for the queue to drain
  }
}

Status DBImpl::WriteGroup(Writer* self, std::unique_lock<std::mutex>& lock, Writer** done) {
  Writer* const leader = writers_.front();
  Status status = MakeRoomForWrite(leader->batch == nullptr, lock);
  uint64_t last_sequence = versions_->LastSequence();
  Writer* last_writer = leader;
  if (status.ok() && leader->batch != nullptr) {
    WriteBatch* group = BuildBatchGroup(&last_writer);
    // A combined group (see WriteImpl): its front writer waits as well.
    if (leader != self) group_followers_.push_back(leader);
    WriteBatchInternal::SetSequence(group, last_sequence + 1);
    const uint32_t count = WriteBatchInternal::Count(group);
    last_sequence += count;
    MemTable* mem = mem_;
    const bool sync = leader->sync;

    // Append to the WAL and apply to the memtable without mu_: only the
    // leader is here, and readers never block on writers.
    lock.unlock();
    const Slice contents = WriteBatchInternal::Contents(group);
    bool sync_error = false;
    status = AppendToWal(contents, sync, &sync_error);
    if (status.ok()) status = InsertGroup(group, mem);
    lock.lock();

    if (status.ok()) versions_->SetLastSequence(last_sequence);
    RecordGroupWritten(status, sync_error, contents.size(), sync);
    if (group == &tmp_batch_) tmp_batch_.Clear();
  }

  // The group leaves the queue; its writers but self (its front, when in
  // it) are linked into *done, to be woken once mu_ is released.
  PopGroup(last_writer, status, done);
  if (*done == self) *done = self->next_done;
  return status;
}

DBImpl::Writer* DBImpl::PopGroup(Writer* last_writer, const Status& status, Writer** first) {
  Writer** tail = first;
  Writer* ready = nullptr;
  do {
    ready = writers_.front();
    writers_.pop_front();
    ready->status = status;
    *tail = ready;
    tail = &ready->next_done;
  } while (ready != last_writer);
  *tail = nullptr;
  return ready;
}

Status DBImpl::AppendToWal(const Slice& contents, bool sync, bool* sync_error) {
  if (test_before_wal_append_) test_before_wal_append_();
  Status s = log_->AddRecord(contents);
  if (s.ok()) s = logfile_->Flush();
  if (s.ok() && sync) {
    // A synced write to a new WAL makes its directory entry durable first
    // (SwitchMemtable leaves that to the first synced write).
    if (!wal_dir_synced_) {
      s = env_->SyncDir(dbname_);
      if (s.ok()) wal_dir_synced_ = true;
    }
    if (s.ok()) s = logfile_->Sync();
    *sync_error = !s.ok();
  }
  return s;
}

void DBImpl::RecordGroupWritten(const Status& s, bool sync_error, size_t wal_bytes, bool sync) {
  if (s.ok()) {
    stats_.wal_bytes_written += wal_bytes;
    if (sync) stats_.wal_syncs++;
    stats_.user_writes++;
    // User bytes: the batch payload (keys, values and their length prefixes).
    stats_.user_bytes_written += wal_bytes - WriteBatchInternal::kHeaderSize;
  } else {
    // The WAL may now hold a record whose fate is unknown; refuse further
    // writes rather than risk acknowledging data that is not durable.
    RecordBackgroundError(sync_error ? Status::IOError("WAL sync failed", s.ToString()) : s);
  }
}

Status DBImpl::PipelinedWriteGroup(Writer* self, std::unique_lock<std::mutex>& lock) {
  // A memtable switch (the request's own, or one for room) first waits for
  // the groups in flight: they link into the memtable being switched.
  Status status = MakeRoomForWrite(self->batch == nullptr, lock);
  Writer* last_writer = self;
  std::shared_ptr<MemTableLinkJob> job;
  WritePipeline<Writer>::Group group;
  if (status.ok() && self->batch != nullptr) {
    WriteBatch* batch = BuildBatchGroup(&last_writer);
    SequenceNumber last_sequence = write_pipeline_->LastAllocated();
    WriteBatchInternal::SetSequence(batch, last_sequence + 1);
    last_sequence += WriteBatchInternal::Count(batch);
    MemTable* mem = mem_;
    const bool sync = self->sync;

    lock.unlock();
    const Slice contents = WriteBatchInternal::Contents(batch);
    bool sync_error = false;
    status = AppendToWal(contents, sync, &sync_error);
    if (status.ok()) {
      // Encoding stays with the leader (the arena has one writer); links
      // may run beside the next leader's encoding (MemTable::Link).
      status = PrepareLinkJob(batch, mem, &job);
    }
    lock.lock();

    if (status.ok()) {
      group.last_sequence = last_sequence;
    } else {
      job.reset();  // nothing of this group is published
    }
    RecordGroupWritten(status, sync_error, contents.size(), sync);
    if (batch == &tmp_batch_) tmp_batch_.Clear();
  }

  // The group, this writer first, leaves the queue with its outcome.
  group.last = PopGroup(last_writer, status, &group.first);
  if (job) {
    // Published by whichever thread links the oldest group in flight; until
    // then this writer waits like its followers (for kDone).
    self->state.store(Writer::kWaiting, std::memory_order_relaxed);
    write_pipeline_->Add(&group);
    if (options_.allow_concurrent_memtable_write && job->entries()->size() >= 2) {
      for (Writer* f : group_followers_) f->AskToLink(job);
    }
  }
  HandOffLead();
  lock.unlock();
  if (!job) {
    WakeWriters(group.first->next_done);  // all but this writer
    return status;
  }
  if (test_before_pipelined_link_) test_before_pipelined_link_();
  job->Help();
  job->Wait();
  WakeWriters(write_pipeline_->MarkLinked(&group));  // may include this writer
  self->Await(options_, &writer_yield_credit_);
  return self->status;
}

Status DBImpl::InsertGroup(const WriteBatch* group, MemTable* mem) {
  if (!options_.allow_concurrent_memtable_write || group_followers_.empty() ||
      WriteBatchInternal::Count(group) < 2) {
    return WriteBatchInternal::InsertInto(group, mem);
  }
  std::shared_ptr<MemTableLinkJob> job;
  Status s = PrepareLinkJob(group, mem, &job);
  if (!s.ok()) return s;  // checked before anything was prepared: nothing to link
  for (Writer* w : group_followers_) w->AskToLink(job);
  job->Help();
  job->Wait();
  return s;
}

Status DBImpl::PrepareLinkJob(const WriteBatch* batch, MemTable* mem,
                              std::shared_ptr<MemTableLinkJob>* job) {
  *job = std::make_shared<MemTableLinkJob>(mem);
  (*job)->entries()->reserve(WriteBatchInternal::Count(batch));
  return WriteBatchInternal::PrepareInto(batch, mem, (*job)->entries());
}

// The writers have left the queue but wait for kDone, so they are alive;
// each may be gone once its state is set, so its link is read first.
void DBImpl::WakeWriters(Writer* done) {
  while (done != nullptr) {
    Writer* next = done->next_done;
    done->SetState(Writer::kDone);
    done = next;
  }
}

// REQUIRES: writers_ is not empty and its front has a non-null batch.
WriteBatch* DBImpl::BuildBatchGroup(Writer** last_writer) {
  Writer* first = writers_.front();
  WriteBatch* result = const_cast<WriteBatch*>(first->batch);
  size_t size = WriteBatchInternal::ByteSize(first->batch);

  // Bound the group so a small write is not delayed behind a huge group.
  size_t max_size = 1 << 20;
  if (size <= (128 << 10)) max_size = size + (128 << 10);

  *last_writer = first;
  group_followers_.clear();
  for (auto it = writers_.begin() + 1; it != writers_.end(); ++it) {
    Writer* w = *it;
    if (w->sync && !first->sync) break;  // a sync write must not ride a non-sync leader
    if (w->batch == nullptr) break;
    size += WriteBatchInternal::ByteSize(w->batch);
    if (size > max_size) break;
    if (result == first->batch) {
      result = &tmp_batch_;
      assert(WriteBatchInternal::Count(result) == 0);
      WriteBatchInternal::Append(result, first->batch);
    }
    WriteBatchInternal::Append(result, w->batch);
    group_followers_.push_back(w);
    *last_writer = w;
  }
  return result;
}

Status DBImpl::MakeRoomForWrite(bool force, std::unique_lock<std::mutex>& lock) {
  bool allow_delay = !force;
  while (true) {
    const int l0_files = versions_->NumLevelFiles(0);
    if (!bg_error_.ok()) {
      return bg_error_;
    }
    if (shutting_down_.load()) {
      return Status::Aborted("database is closing");
    }
    const uint64_t pending = versions_->EstimatedPendingCompactionBytes();
    const bool slow_l0 = l0_files >= options_.level0_slowdown_writes_trigger;
    if (allow_delay && (slow_l0 || pending >= options_.soft_pending_compaction_bytes_limit)) {
      // Close to the stop threshold: delay this write by 1 ms once, handing
      // the CPU to compaction instead of stopping writes later for seconds.
      StallStats& stall = stats_.stalls[slow_l0 ? kStallLevel0Files : kStallPendingBytes];
      stall.slowdowns++;
      lock.unlock();
      const uint64_t start = env_->NowMicros();
      env_->SleepForMicroseconds(1000);
      lock.lock();
      stall.slowdown_micros += env_->NowMicros() - start;
      allow_delay = false;
      continue;
    }
    // An empty memtable always has room: its arena's first block alone may
    // exceed a small write_buffer_size, and switching it would loop forever.
    if (!force &&
        (mem_->NumEntries() == 0 || mem_->ApproximateMemoryUsage() <= options_.write_buffer_size)) {
      return Status::OK();  // room in the current memtable
    }
    if (force && mem_->NumEntries() == 0) {
      return Status::OK();  // nothing to flush
    }
    const bool too_many_memtables =
        static_cast<int>(imm_.size()) >= options_.max_write_buffer_number - 1;
    const bool too_many_l0 = l0_files >= options_.level0_stop_writes_trigger;
    const bool too_much_pending = pending >= options_.hard_pending_compaction_bytes_limit;
    if (too_many_memtables || too_many_l0 || too_much_pending) {
      MaybeScheduleWork();
      StallStats& stall = stats_.stalls[too_many_memtables ? kStallMemtables
                                        : too_many_l0      ? kStallLevel0Files
                                                           : kStallPendingBytes];
      const uint64_t start = env_->NowMicros();
      stall.stops++;
      bg_cv_.wait(lock);
      stall.stop_micros += env_->NowMicros() - start;
      continue;
    }
    Status s = SwitchMemtable();
    if (!s.ok()) return s;
    force = false;  // the switch satisfied a forced request
    MaybeScheduleWork();
  }
}

Status DBImpl::NewWalFile(uint64_t number, std::unique_ptr<WritableFile>* file) {
  WritableFileOptions file_options;
  file_options.use_mmap_writes = options_.allow_mmap_writes;
  return env_->NewWritableFile(LogFileName(dbname_, number), file_options, file);
}

MemTable* DBImpl::NewMemTable() const {
  constexpr size_t kMinHugeBuffer = 16 * Arena::kHugeBlockSize;
  return new MemTable(internal_comparator_,
                      options_.memtable_huge_pages && options_.write_buffer_size >= kMinHugeBuffer,
                      options_.memtable_btree_index);
}

// Makes mem_ immutable and starts a new memtable with a new WAL.
Status DBImpl::SwitchMemtable() {
  // Pipelined groups still linking into mem_ finish first (they need no
  // lock this thread holds); this leader keeps new ones out meanwhile.
  write_pipeline_->WaitUntilEmpty();
  const uint64_t new_log_number = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> lfile;
  Status s = NewWalFile(new_log_number, &lfile);
  // The new WAL's directory entry must be durable before a synced write to
  // it is acknowledged, or the write would vanish with the file after a
  // power loss: the first synced write syncs the directory
  // (wal_dir_synced_). Writes that are not synced may be lost anyway, and
  // a flush's ApplyEdit syncs the directory before the MANIFEST names the
  // new WAL. Here, under mu_, the directory sync (a journal commit on a
  // busy disk) held up every write at each switch.
  if (!s.ok()) {
    versions_->ReuseFileNumber(new_log_number);
    return s;
  }
  // Everything written to the old log is handed to the OS before the switch.
  if (logfile_) {
    s = logfile_->Close();
    if (!s.ok()) {
      RecordBackgroundError(s);
      return s;
    }
  }
  imm_.push_back(ImmutableMemTable{mem_, logfile_number_});
  has_imm_.store(true, std::memory_order_release);
  logfile_ = std::move(lfile);
  logfile_number_ = new_log_number;
  log_ = std::make_unique<log::Writer>(logfile_.get());
  wal_dir_synced_ = false;
  mem_ = NewMemTable();
  mem_->Ref();
  return Status::OK();
}

void DBImpl::RecordBackgroundError(const Status& s) {
  if (bg_error_.ok() && !s.ok()) {
    bg_error_ = s;
    bg_cv_.notify_all();
  }
}

}  // namespace accelkv
