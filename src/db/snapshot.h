// Snapshots: the live snapshot list of a DB. A snapshot pins a sequence
// number; compaction keeps every version some live snapshot can see.
//
// Thread safety: REQUIRES the DB mutex for every SnapshotList call.
#pragma once

#include <cstdint>
#include <list>
#include <vector>

#include "accelkv/db.h"
#include "util/internal_key.h"

namespace accelkv {

class SnapshotImpl final : public Snapshot {
 public:
  explicit SnapshotImpl(SequenceNumber seq) : sequence_(seq) {}
  ~SnapshotImpl() override = default;
  SequenceNumber sequence() const { return sequence_; }

 private:
  friend class SnapshotList;
  SequenceNumber const sequence_;
  std::list<SnapshotImpl*>::iterator pos_;
};

class SnapshotList {
 public:
  SnapshotList() = default;
  SnapshotList(const SnapshotList&) = delete;
  SnapshotList& operator=(const SnapshotList&) = delete;
  ~SnapshotList() {
    for (SnapshotImpl* s : list_) delete s;
  }

  bool empty() const { return list_.empty(); }
  size_t size() const { return list_.size(); }
  // Sequences are non-decreasing in creation order.
  SequenceNumber oldest() const { return list_.front()->sequence(); }

  SnapshotImpl* New(SequenceNumber seq) {
    auto* s = new SnapshotImpl(seq);
    list_.push_back(s);
    s->pos_ = std::prev(list_.end());
    return s;
  }
  void Delete(const SnapshotImpl* s) {
    list_.erase(s->pos_);
    delete s;
  }
  // Distinct live snapshot sequences, ascending.
  std::vector<SequenceNumber> Sequences() const {
    std::vector<SequenceNumber> out;
    out.reserve(list_.size());
    for (const SnapshotImpl* s : list_) {
      if (out.empty() || out.back() != s->sequence()) out.push_back(s->sequence());
    }
    return out;
  }

 private:
  std::list<SnapshotImpl*> list_;
};

}  // namespace accelkv
