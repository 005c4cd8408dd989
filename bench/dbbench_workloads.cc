// The db_bench-style workloads over the db_bench key space [0, --num):
//   fillseq       puts keys first_op, first_op+1, ... in order
//   fillrandom    puts uniformly random keys (with repetition, as db_bench)
//   overwrite     puts uniformly random keys
//   readrandom    gets uniformly random keys (found or verified absent)
//   readseq       walks a cursor from the first key, wrapping at the end
//   readmissing   gets keys that are never written (must be absent)
//   seekrandom    seeks to a random key and reads --seek-nexts more entries
//   readwhilewriting  readrandom, beside one overwrite thread
//   deleterandom  deletes uniformly random keys
#include <memory>

#include "keys.h"
#include "rng.h"
#include "verified_ops.h"
#include "workload.h"

namespace accelkv_bench {

namespace {

class DbBenchThread : public WorkloadThread {
 public:
  enum class Kind { kFillSeq, kPutRandom, kReadRandom, kReadSeq, kReadMissing, kSeek, kDelete };

  DbBenchThread(Kind kind, BenchContext* ctx, uint64_t seed, uint64_t first_op)
      : kind_(kind), ctx_(ctx), space_(ctx->db_keys()), rng_(seed), first_op_(first_op) {}

  OpResult Op(uint64_t i, ThreadStats* stats) override {
    const uint64_t n = space_->capacity();
    bool ok = true;
    switch (kind_) {
      case Kind::kFillSeq:
        if (first_op_ + i >= n) return OpResult::kDone;
        ok = VerifiedPut(ctx_, space_, first_op_ + i, stats, &scratch_);
        break;
      case Kind::kPutRandom:
        ok = VerifiedPut(ctx_, space_, NextRandomKey(n, /*put=*/true), stats, &scratch_);
        break;
      case Kind::kReadRandom:
        ok = VerifiedGet(ctx_, space_, NextRandomKey(n, /*put=*/false), stats, &scratch_);
        break;
      case Kind::kReadMissing:
        MissingKey(rng_.Uniform(n), ctx_->flags().key_size, &scratch_.key);
        ok = VerifiedGetMissing(ctx_, scratch_.key, stats, &scratch_);
        break;
      case Kind::kReadSeq:
        ok = ReadNext(stats);
        break;
      case Kind::kSeek:
        if (cursor_ == nullptr) cursor_ = ctx_->engine()->NewCursor();
        space_->Key(rng_.Uniform(n), &scratch_.key);
        ok = VerifiedScan(ctx_, space_, cursor_.get(), scratch_.key, ctx_->flags().seek_nexts + 1,
                          stats);
        break;
      case Kind::kDelete:
        ok = VerifiedDelete(ctx_, space_, NextRandomKey(n, /*put=*/false), stats, &scratch_);
        break;
    }
    stats->ops++;
    return ok ? OpResult::kOk : OpResult::kFailed;
  }

 private:
  // The next uniformly random key index. Keys are drawn two ops ahead (the
  // same sequence of draws as drawing each when needed): the key after next
  // gets its key state prefetched, and, for puts, the next key is formatted
  // and its value hashed (its version read from that state, loaded by now)
  // and its value body prefetched, while the engine serves this op; the
  // put then takes that key and hash (OpScratch::prepared).
  uint64_t NextRandomKey(uint64_t n, bool put) {
    if (!have_ahead_) {
      ahead_[0] = rng_.Uniform(n);
      ahead_[1] = rng_.Uniform(n);
      space_->state()->Prefetch(ahead_[0]);
      space_->state()->Prefetch(ahead_[1]);
      have_ahead_ = true;
    }
    const uint64_t index = ahead_[0];
    if (put && ahead_prepared_) {
      scratch_.key.swap(ahead_key_);
      scratch_.prepared = true;
      scratch_.prepared_index = index;
      scratch_.prepared_version = ahead_version_;
      scratch_.prepared_hash = ahead_hash_;
    }
    ahead_[0] = ahead_[1];
    ahead_[1] = rng_.Uniform(n);
    space_->state()->Prefetch(ahead_[1]);
    ahead_prepared_ = put;
    if (put) {
      space_->Key(ahead_[0], &ahead_key_);
      ahead_version_ = space_->state()->NextWriteVersion(ahead_[0]);
      ahead_hash_ = ctx_->values().Hash(ahead_key_, ahead_version_, space_->value_size());
      ctx_->values().Prefetch(ahead_hash_, space_->value_size());
    }
    return index;
  }

  // One entry per op; a fresh cursor each time the end is reached, so
  // wrapping sees the writes made since.
  bool ReadNext(ThreadStats* stats) {
    if (cursor_ == nullptr || !cursor_->Valid()) {
      if (cursor_ != nullptr && !cursor_->status().ok()) {
        ctx_->Fail("readseq cursor failed: " + cursor_->status().message);
        return false;
      }
      cursor_ = ctx_->engine()->NewCursor();
      cursor_->SeekToFirst();
      previous_.clear();
      if (!cursor_->Valid()) {  // empty database: nothing to read
        stats->reads_not_found++;
        return cursor_->status().ok();
      }
    } else {
      cursor_->Next();
      if (!cursor_->Valid()) return ReadNext(stats);
    }
    const std::string_view key = cursor_->key();
    if (!previous_.empty() && key <= std::string_view(previous_)) {
      ctx_->Fail("readseq cursor went backwards at '" + std::string(key) + "'");
      return false;
    }
    previous_.assign(key.data(), key.size());
    return VerifyScanEntry(ctx_, space_, key, cursor_->value(), stats);
  }

  Kind kind_;
  BenchContext* ctx_;
  KeySpace* space_;
  Rng rng_;
  uint64_t ahead_[2] = {0, 0};  // NextRandomKey's next two indexes, once have_ahead_
  bool have_ahead_ = false;
  // For puts (ahead_prepared_): ahead_[0]'s key, the version its write would
  // carry as of the draw, and its value's hash.
  bool ahead_prepared_ = false;
  std::string ahead_key_;
  uint32_t ahead_version_ = 0;
  uint64_t ahead_hash_ = 0;
  uint64_t first_op_;
  OpScratch scratch_;
  std::unique_ptr<Cursor> cursor_;
  std::string previous_;
};

}  // namespace

std::unique_ptr<WorkloadThread> NewDbBenchThread(const std::string& name, BenchContext* ctx,
                                                 uint64_t seed, uint64_t first_op) {
  using Kind = DbBenchThread::Kind;
  Kind kind = Kind::kReadRandom;
  if (name == "fillseq") {
    kind = Kind::kFillSeq;
  } else if (name == "fillrandom" || name == "overwrite") {
    kind = Kind::kPutRandom;
  } else if (name == "readrandom" || name == "readwhilewriting") {
    kind = Kind::kReadRandom;
  } else if (name == "readseq") {
    kind = Kind::kReadSeq;
  } else if (name == "readmissing") {
    kind = Kind::kReadMissing;
  } else if (name == "seekrandom") {
    kind = Kind::kSeek;
  } else if (name == "deleterandom") {
    kind = Kind::kDelete;
  } else {
    return nullptr;
  }
  return std::make_unique<DbBenchThread>(kind, ctx, seed, first_op);
}

}  // namespace accelkv_bench
