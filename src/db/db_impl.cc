// DBImpl construction, Close, and the DB::Open / DestroyDB entry points.
#include "db/db_impl.h"

#include <algorithm>

#include "compaction/cpu_compaction_executor.h"
#include "compaction/subcompaction_boundaries.h"
#include "gpu/gpu_executor.h"
#include "util/filename.h"

namespace accelkv {

namespace {
template <class T, class V>
void ClipToRange(T* ptr, V minvalue, V maxvalue) {
  if (static_cast<V>(*ptr) > maxvalue) *ptr = maxvalue;
  if (static_cast<V>(*ptr) < minvalue) *ptr = minvalue;
}
}  // namespace

Options SanitizeOptions(const std::string& dbname, const InternalKeyComparator* icmp,
                        const Options& src) {
  Options result = src;
  if (result.env == nullptr) result.env = Env::Default();
  ClipToRange(&result.write_buffer_size, size_t{64} << 10, size_t{1} << 30);
  ClipToRange(&result.max_write_buffer_number, 2, 64);
  ClipToRange(&result.max_open_files, 16, 1000000);
  ClipToRange(&result.block_size, size_t{256}, size_t{4} << 20);
  ClipToRange(&result.bloom_bits_per_key, 0, 64);
  ClipToRange(&result.num_levels, 2, 12);
  ClipToRange(&result.max_background_jobs, 2, 64);
  ClipToRange(&result.max_subcompactions, 1, kMaxSubcompactions);
  ClipToRange(&result.level0_file_num_compaction_trigger, 1, 1000);
  // A writer's wait phases: at most a second each (longer only burns CPU).
  ClipToRange(&result.write_thread_spin_usec, uint64_t{0}, uint64_t{1000000});
  ClipToRange(&result.write_thread_max_yield_usec, uint64_t{0}, uint64_t{1000000});
  ClipToRange(&result.write_thread_slow_yield_usec, uint64_t{0}, uint64_t{1000000});
  if (result.level0_slowdown_writes_trigger < result.level0_file_num_compaction_trigger) {
    result.level0_slowdown_writes_trigger = result.level0_file_num_compaction_trigger;
  }
  if (result.level0_stop_writes_trigger < result.level0_slowdown_writes_trigger) {
    result.level0_stop_writes_trigger = result.level0_slowdown_writes_trigger;
  }
  if (result.target_file_size < (64 << 10)) result.target_file_size = 64 << 10;
  if (result.max_bytes_for_level_base < (64 << 10)) result.max_bytes_for_level_base = 64 << 10;
  if (result.max_bytes_for_level_multiplier < 2) result.max_bytes_for_level_multiplier = 2;
  if (!(result.gpu_memory_fraction >= 0.05)) result.gpu_memory_fraction = 0.05;  // NaN too
  if (result.gpu_memory_fraction > 0.95) result.gpu_memory_fraction = 0.95;
  if (result.hard_pending_compaction_bytes_limit < result.soft_pending_compaction_bytes_limit) {
    result.hard_pending_compaction_bytes_limit = result.soft_pending_compaction_bytes_limit;
  }
  (void)dbname;
  (void)icmp;
  return result;
}

DBImpl::DBImpl(const Options& raw_options, const std::string& dbname)
    : env_(raw_options.env != nullptr ? raw_options.env : Env::Default()),
      internal_comparator_(raw_options.comparator),
      options_(SanitizeOptions(dbname, &internal_comparator_, raw_options)),
      dbname_(dbname),
      stats_(options_.num_levels) {
  block_cache_ =
      options_.block_cache ? options_.block_cache : NewLRUCache(options_.block_cache_size);
  table_options_.comparator = &internal_comparator_;
  table_options_.user_comparator = options_.comparator;
  table_options_.block_size = options_.block_size;
  table_options_.bloom_bits_per_key = options_.bloom_bits_per_key;
  table_options_.compression = options_.compression;
  table_options_.block_cache = block_cache_.get();
  table_options_.use_mmap_reads = options_.allow_mmap_reads;
  table_options_.use_direct_writes = options_.use_direct_io_for_flush_and_compaction;
  // The GPU executor's reads of its input files (the table cache ignores it).
  table_options_.direct_compaction_reads = options_.use_direct_io_for_flush_and_compaction;
  // Leave some descriptors for WAL, MANIFEST and the rest.
  table_cache_ = std::make_unique<TableCache>(dbname_, env_, table_options_,
                                              std::max(options_.max_open_files - 10, 10));
  versions_ =
      std::make_unique<VersionSet>(dbname_, &options_, table_cache_.get(), &internal_comparator_);
  write_pipeline_ = std::make_unique<WritePipeline<Writer>>(versions_.get());
  picker_ = std::make_unique<CompactionPicker>(&options_, &internal_comparator_);
  cpu_executor_ = std::make_unique<CpuCompactionExecutor>();
  gpu_executor_ = NewDatabaseGpuExecutor(options_, &gpu_status_);
  flush_pool_ = std::make_unique<ThreadPool>(1);
  compaction_pool_ = std::make_unique<ThreadPool>(std::max(1, options_.max_background_jobs - 1));
}

DBImpl::~DBImpl() { Close(); }

Status DBImpl::Close() {
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return Status::OK();
  shutting_down_.store(true);
  bg_cv_.notify_all();  // stalled writers return Aborted
  // Running jobs finish (their results are installed or discarded); queued
  // ones see shutting_down_ and return at once.
  while (flush_scheduled_ || compactions_running_ > 0 || !writers_.empty()) bg_cv_.wait(lock);
  write_pipeline_->WaitUntilEmpty();  // pipelined writers still linking into mem_
  closed_ = true;
  Status result = bg_error_;
  lock.unlock();
  flush_pool_.reset();
  compaction_pool_.reset();
  lock.lock();

  if (logfile_) {
    Status s = logfile_->Close();  // buffered WAL bytes reach the OS
    if (result.ok()) result = s;
    log_.reset();
    logfile_.reset();
  }
  if (mem_ != nullptr) mem_->Unref();
  mem_ = nullptr;
  for (auto& imm : imm_) imm.mem->Unref();
  imm_.clear();
  versions_.reset();
  table_cache_.reset();
  if (db_lock_) {
    env_->UnlockFile(std::move(db_lock_));
  }
  return result;
}

Status DB::Open(const Options& options, const std::string& dbname, std::unique_ptr<DB>* dbptr) {
  dbptr->reset();
  if (options.comparator == nullptr) return Status::InvalidArgument("options.comparator is null");
  if (dbname.empty()) return Status::InvalidArgument("empty database path");
  auto impl = std::make_unique<DBImpl>(options, dbname);
  Status s = impl->OpenImpl();
  if (s.ok()) *dbptr = std::move(impl);
  return s;
}

Status DestroyDB(const std::string& dbname, const Options& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::vector<std::string> filenames;
  Status result = env->GetChildren(dbname, &filenames);
  if (!result.ok()) return Status::OK();  // ignore error in case directory does not exist
  std::unique_ptr<FileLock> lock;
  const std::string lockname = LockFileName(dbname);
  result = env->LockFile(lockname, &lock);
  if (result.ok()) {
    uint64_t number;
    FileType type;
    for (const std::string& name : filenames) {
      if (ParseFileName(name, &number, &type) && type != FileType::kLockFile) {
        Status del = env->RemoveFile(dbname + "/" + name);
        if (result.ok() && !del.ok()) result = del;
      }
    }
    env->UnlockFile(std::move(lock));
    env->RemoveFile(lockname);
    env->RemoveDir(dbname);  // ignore error in case dir contains other files
  }
  return result;
}

}  // namespace accelkv
