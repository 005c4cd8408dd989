// WritePipeline: the write groups in flight with Options::enable_pipelined_write
// (RocksDB's option of this name), in sequence order.
//
// A pipelined group's leader writes the WAL record and encodes the entries
// into the memtable's arena, as always, and then hands the lead to the next
// writer before the entries are linked into the skiplist. The linking, a
// search through the memtable that is mostly cache misses and the larger
// part of a write, then overlaps the next group's WAL write instead of
// holding it up. Groups may finish linking in any order; the pipeline
// publishes a group's last sequence (VersionSet::SetLastSequence) only once
// it and every older group are linked, so a reader never sees a group
// without every group before it, and a write is acknowledged only once it
// is visible (read-your-writes).
//
// Writer: the DB's queued writer type, with a `Writer* next_done` link. A
// group's writers form a list through next_done, handed back by MarkLinked
// when the group is published, to be told they are done. Versions: where
// the published sequence lives (LastSequence, SetLastSequence): the
// VersionSet.
//
// Thread safety: every method may be called by any thread, without the DB
// mutex; Add only by the write leader (groups enter in sequence order).
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

#include "util/internal_key.h"
#include "version/version_set.h"

namespace accelkv {

template <class Writer, class Versions = VersionSet>
class WritePipeline {
 public:
  // One group in flight; it lives until its writers are told they are done.
  struct Group {
    SequenceNumber last_sequence = 0;
    Writer* first = nullptr;  // the group's writers, linked through next_done
    Writer* last = nullptr;
    bool linked = false;  // guarded by the pipeline's mutex
  };

  explicit WritePipeline(Versions* versions) : versions_(versions) {}
  WritePipeline(const WritePipeline&) = delete;
  WritePipeline& operator=(const WritePipeline&) = delete;

  // The last sequence handed out: that of the newest group in flight, or
  // the published one when none is.
  SequenceNumber LastAllocated() {
    std::lock_guard<std::mutex> l(mu_);
    return groups_.empty() ? versions_->LastSequence() : groups_.back()->last_sequence;
  }

  // The leader: g's sequences follow those of every group added before.
  void Add(Group* g) {
    std::lock_guard<std::mutex> l(mu_);
    groups_.push_back(g);
  }

  // Any thread, once every entry of g is linked. Publishes the oldest
  // groups that are linked and returns their writers, as one list through
  // next_done (nullptr: g waits for an older group, whose MarkLinked
  // publishes g). The groups must not be touched after this returns; their
  // writers are, until they are told they are done.
  Writer* MarkLinked(Group* g) {
    Writer* head = nullptr;
    Writer** tail = &head;
    std::lock_guard<std::mutex> l(mu_);
    g->linked = true;
    SequenceNumber published = 0;
    while (!groups_.empty() && groups_.front()->linked) {
      Group* front = groups_.front();
      groups_.pop_front();
      published = front->last_sequence;
      *tail = front->first;
      tail = &front->last->next_done;
    }
    *tail = nullptr;
    if (head != nullptr) versions_->SetLastSequence(published);
    if (groups_.empty() && empty_waiters_ > 0) empty_cv_.notify_all();
    return head;
  }

  // Returns once no group is in flight: before the memtable is switched
  // (an immutable memtable must be complete) and at close. The caller must
  // keep new groups out (it leads the writers, or the queue is drained);
  // the groups in flight finish without any lock the caller may hold.
  void WaitUntilEmpty() {
    std::unique_lock<std::mutex> l(mu_);
    ++empty_waiters_;
    empty_cv_.wait(l, [this] { return groups_.empty(); });
    --empty_waiters_;
  }

 private:
  Versions* const versions_;
  std::mutex mu_;
  std::condition_variable empty_cv_;
  int empty_waiters_ = 0;
  std::deque<Group*> groups_;
};

}  // namespace accelkv
