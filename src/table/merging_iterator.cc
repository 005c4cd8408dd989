#include "table/merging_iterator.h"

#include <memory>

namespace accelkv {

namespace {

// Yields the children's entries in the total order (key, child index, position
// within the child): equal keys of different children come out lowest child
// first going forward and highest child first going backward, so switching
// direction never repeats or skips an entry. Linear scan over the children,
// as in LevelDB: there are few of them (L0 files + one per level).
class MergingIterator final : public Iterator {
 public:
  MergingIterator(const Comparator* cmp, std::vector<Iterator*> children) : cmp_(cmp) {
    children_.reserve(children.size());
    for (Iterator* c : children) children_.emplace_back(c);
  }

  bool Valid() const override { return current_ != nullptr; }

  void SeekToFirst() override {
    for (auto& c : children_) c->SeekToFirst();
    FindSmallest();
    direction_ = kForward;
  }
  void SeekToLast() override {
    for (auto& c : children_) c->SeekToLast();
    FindLargest();
    direction_ = kReverse;
  }
  void Seek(const Slice& target) override {
    for (auto& c : children_) c->Seek(target);
    FindSmallest();
    direction_ = kForward;
  }
  void SeekForPrev(const Slice& target) override {
    for (auto& c : children_) c->SeekForPrev(target);
    FindLargest();
    direction_ = kReverse;
  }

  void Next() override {
    if (direction_ != kForward) {
      // Position every other child at its first entry after current in the
      // total order: key > K for lower children, key >= K for higher ones.
      const Slice k = key();  // current_ does not move below, so k stays valid
      bool lower = true;
      for (auto& c : children_) {
        Iterator* child = c.get();
        if (child == current_) {
          lower = false;
          continue;
        }
        child->Seek(k);
        if (lower) {
          while (child->Valid() && cmp_->Compare(child->key(), k) == 0) child->Next();
        }
      }
      direction_ = kForward;
    }
    current_->Next();
    FindSmallest();
  }

  void Prev() override {
    if (direction_ != kReverse) {
      // Last entry before current: key <= K for lower children, key < K for
      // higher ones.
      const Slice k = key();
      bool lower = true;
      for (auto& c : children_) {
        Iterator* child = c.get();
        if (child == current_) {
          lower = false;
          continue;
        }
        child->SeekForPrev(k);
        if (!lower) {
          while (child->Valid() && cmp_->Compare(child->key(), k) == 0) child->Prev();
        }
      }
      direction_ = kReverse;
    }
    current_->Prev();
    FindLargest();
  }

  Slice key() const override { return current_->key(); }
  Slice value() const override { return current_->value(); }

  Status status() const override {
    for (const auto& c : children_) {
      Status s = c->status();
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

 private:
  enum Direction { kForward, kReverse };

  void FindSmallest() {
    Iterator* smallest = nullptr;
    for (auto& c : children_) {
      if (!c->Valid()) continue;
      if (smallest == nullptr || cmp_->Compare(c->key(), smallest->key()) < 0) smallest = c.get();
    }
    current_ = smallest;
  }
  void FindLargest() {
    Iterator* largest = nullptr;
    for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
      Iterator* c = it->get();
      if (!c->Valid()) continue;
      if (largest == nullptr || cmp_->Compare(c->key(), largest->key()) > 0) largest = c;
    }
    current_ = largest;
  }

  const Comparator* const cmp_;
  std::vector<std::unique_ptr<Iterator>> children_;
  Iterator* current_ = nullptr;
  Direction direction_ = kForward;
};

}  // namespace

Iterator* NewMergingIterator(const Comparator* comparator, std::vector<Iterator*> children) {
  if (children.empty()) return NewEmptyIterator();
  if (children.size() == 1) return children[0];
  return new MergingIterator(comparator, std::move(children));
}

}  // namespace accelkv
