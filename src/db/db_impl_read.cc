// DBImpl read path: Get, MultiGet, iterators, snapshots.
#include "db/db_impl.h"
#include "db/db_iter.h"
#include "table/merging_iterator.h"

namespace accelkv {
namespace {

// The memtables and version a read uses, pinned under the mutex and released
// (under the mutex) when the read is done.
struct ReadState {
  MemTable* mem = nullptr;
  std::vector<MemTable*> imm;  // newest first
  Version* current = nullptr;
};

}  // namespace

Status DBImpl::Get(const ReadOptions& options, const Slice& key, std::string* value) {
  MemTable* mem;
  MemTable* imm_stack[8];
  std::vector<MemTable*> imm_heap;
  MemTable** imm = imm_stack;
  size_t num_imm = 0;
  Version* current;
  SequenceNumber snapshot;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return Status::InvalidArgument("database is closed");
    snapshot = options.snapshot != nullptr
                   ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence()
                   : versions_->LastSequence();
    mem = mem_;
    mem->Ref();
    if (imm_.size() > 8) {
      imm_heap.resize(imm_.size());
      imm = imm_heap.data();
    }
    for (auto it = imm_.rbegin(); it != imm_.rend(); ++it) {
      it->mem->Ref();
      imm[num_imm++] = it->mem;
    }
    current = versions_->current();
    current->Ref();
  }

  LookupKey lkey(key, snapshot);
  Status s;
  bool done = mem->Get(lkey, value, &s);
  for (size_t j = 0; !done && j < num_imm; j++) done = imm[j]->Get(lkey, value, &s);
  if (!done) s = current->Get(options, lkey, value);

  std::lock_guard<std::mutex> l(mu_);
  mem->Unref();
  for (size_t j = 0; j < num_imm; j++) imm[j]->Unref();
  current->Unref();
  return s;
}

std::vector<Status> DBImpl::MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                                     std::vector<std::string>* values) {
  values->resize(keys.size());
  std::vector<Status> statuses(keys.size());
  ReadState rs;
  SequenceNumber snapshot;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) {
      for (auto& s : statuses) s = Status::InvalidArgument("database is closed");
      return statuses;
    }
    snapshot = options.snapshot != nullptr
                   ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence()
                   : versions_->LastSequence();
    rs.mem = mem_;
    rs.mem->Ref();
    for (auto it = imm_.rbegin(); it != imm_.rend(); ++it) {
      it->mem->Ref();
      rs.imm.push_back(it->mem);
    }
    rs.current = versions_->current();
    rs.current->Ref();
  }

  // Memtables first, newest to oldest; what they do not decide goes to the
  // version, batched per table.
  std::vector<LookupKey> lkeys;
  lkeys.reserve(keys.size());
  for (const Slice& k : keys) lkeys.emplace_back(k, snapshot);
  std::vector<size_t> pending;
  for (size_t i = 0; i < keys.size(); i++) {
    Status s;
    bool done = rs.mem->Get(lkeys[i], &(*values)[i], &s);
    for (size_t j = 0; !done && j < rs.imm.size(); j++)
      done = rs.imm[j]->Get(lkeys[i], &(*values)[i], &s);
    if (done) {
      statuses[i] = s;
    } else {
      pending.push_back(i);
    }
  }
  if (!pending.empty()) {
    std::vector<const LookupKey*> batch;
    batch.reserve(pending.size());
    for (size_t i : pending) batch.push_back(&lkeys[i]);
    std::vector<std::string> found(pending.size());
    std::vector<Status> found_status(pending.size());
    rs.current->MultiGet(options, batch, &found, &found_status);
    for (size_t j = 0; j < pending.size(); j++) {
      statuses[pending[j]] = std::move(found_status[j]);
      if (statuses[pending[j]].ok()) (*values)[pending[j]] = std::move(found[j]);
    }
  }

  std::lock_guard<std::mutex> l(mu_);
  rs.mem->Unref();
  for (MemTable* m : rs.imm) m->Unref();
  rs.current->Unref();
  return statuses;
}

Iterator* DBImpl::NewInternalIterator(const ReadOptions& options, SequenceNumber* latest_snapshot) {
  std::vector<Iterator*> list;
  ReadState* rs = new ReadState;
  {
    std::lock_guard<std::mutex> l(mu_);
    *latest_snapshot = versions_->LastSequence();
    rs->mem = mem_;
    rs->mem->Ref();
    list.push_back(mem_->NewIterator());
    for (auto it = imm_.rbegin(); it != imm_.rend(); ++it) {
      it->mem->Ref();
      rs->imm.push_back(it->mem);
      list.push_back(it->mem->NewIterator());
    }
    rs->current = versions_->current();
    rs->current->Ref();
  }
  rs->current->AddIterators(options, &list);
  Iterator* internal_iter = NewMergingIterator(&internal_comparator_, std::move(list));
  internal_iter->RegisterCleanup([this, rs] {
    std::lock_guard<std::mutex> l(mu_);
    rs->mem->Unref();
    for (MemTable* m : rs->imm) m->Unref();
    rs->current->Unref();
    delete rs;
  });
  return internal_iter;
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) {
      return std::unique_ptr<Iterator>(
          NewErrorIterator(Status::InvalidArgument("database is closed")));
    }
  }
  SequenceNumber latest;
  Iterator* iter = NewInternalIterator(options, &latest);
  const SequenceNumber seq = options.snapshot != nullptr
                                 ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence()
                                 : latest;
  return std::unique_ptr<Iterator>(NewDBIterator(user_comparator(), iter, seq, options));
}

const Snapshot* DBImpl::GetSnapshot() {
  std::lock_guard<std::mutex> l(mu_);
  return snapshots_.New(versions_->LastSequence());
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  std::lock_guard<std::mutex> l(mu_);
  snapshots_.Delete(static_cast<const SnapshotImpl*>(snapshot));
}

}  // namespace accelkv
