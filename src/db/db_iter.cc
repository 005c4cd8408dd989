#include "db/db_iter.h"

#include <memory>
#include <string>

namespace accelkv {
namespace {

// Direction-aware merging view, after LevelDB's DBIter:
// - forward: the internal iterator is positioned at the entry yielding key()/value().
// - reverse: the internal iterator is positioned just before all entries of the
//   current user key; key and value are saved in saved_key_/saved_value_.
class DBIter final : public Iterator {
 public:
  DBIter(const Comparator* cmp, Iterator* iter, SequenceNumber s, const ReadOptions& options)
      : user_comparator_(cmp),
        iter_(iter),
        sequence_(s),
        lower_(options.iterate_lower_bound ? options.iterate_lower_bound->ToString() : ""),
        upper_(options.iterate_upper_bound ? options.iterate_upper_bound->ToString() : ""),
        has_lower_(options.iterate_lower_bound != nullptr),
        has_upper_(options.iterate_upper_bound != nullptr) {}

  bool Valid() const override { return valid_; }
  Slice key() const override {
    return direction_ == kForward ? ExtractUserKey(iter_->key()) : Slice(saved_key_);
  }
  Slice value() const override {
    return direction_ == kForward ? iter_->value() : Slice(saved_value_);
  }
  Status status() const override { return status_.ok() ? iter_->status() : status_; }

  void Next() override;
  void Prev() override;
  void Seek(const Slice& target) override;
  void SeekForPrev(const Slice& target) override;
  void SeekToFirst() override;
  void SeekToLast() override;

 private:
  enum Direction { kForward, kReverse };

  void FindNextUserEntry(bool skipping, std::string* skip);
  void FindPrevUserEntry();
  bool ParseKey(ParsedInternalKey* key);
  // Applies the bounds after a positioning step.
  void ClampForward() {
    if (valid_ && has_upper_ && user_comparator_->Compare(key(), upper_) >= 0) valid_ = false;
  }
  void ClampReverse() {
    if (valid_ && has_lower_ && user_comparator_->Compare(key(), lower_) < 0) valid_ = false;
  }

  void SaveKey(const Slice& k, std::string* dst) { dst->assign(k.data(), k.size()); }
  void ClearSavedValue() {
    if (saved_value_.capacity() > 1048576) {
      std::string empty;
      swap(empty, saved_value_);
    } else {
      saved_value_.clear();
    }
  }

  const Comparator* const user_comparator_;
  std::unique_ptr<Iterator> const iter_;
  SequenceNumber const sequence_;
  const std::string lower_;
  const std::string upper_;
  const bool has_lower_;
  const bool has_upper_;

  Status status_;
  std::string saved_key_;    // == current key when direction_ == kReverse
  std::string saved_value_;  // == current raw value when direction_ == kReverse
  Direction direction_ = kForward;
  bool valid_ = false;
};

bool DBIter::ParseKey(ParsedInternalKey* ikey) {
  if (!ParseInternalKey(iter_->key(), ikey)) {
    status_ = Status::Corruption("corrupted internal key in DBIter");
    return false;
  }
  return true;
}

void DBIter::Next() {
  assert(valid_);
  if (direction_ == kReverse) {  // Switch directions?
    direction_ = kForward;
    // iter_ is pointing just before the entries for this->key(), so advance
    // into the range of entries for this->key() and then use the normal
    // skipping code below.
    if (!iter_->Valid()) {
      iter_->SeekToFirst();
    } else {
      iter_->Next();
    }
    if (!iter_->Valid()) {
      valid_ = false;
      saved_key_.clear();
      return;
    }
    // saved_key_ already contains the key to skip past.
  } else {
    // Store in saved_key_ the current key so we skip it below.
    SaveKey(ExtractUserKey(iter_->key()), &saved_key_);
    iter_->Next();
    if (!iter_->Valid()) {
      valid_ = false;
      saved_key_.clear();
      return;
    }
  }
  FindNextUserEntry(true, &saved_key_);
  ClampForward();
}

void DBIter::FindNextUserEntry(bool skipping, std::string* skip) {
  // Loop until we hit an acceptable entry to yield.
  assert(iter_->Valid());
  assert(direction_ == kForward);
  do {
    ParsedInternalKey ikey;
    if (ParseKey(&ikey) && ikey.sequence <= sequence_) {
      switch (ikey.type) {
        case ValueType::kDeletion:
          // Arrange to skip all upcoming entries for this key since they are
          // hidden by this deletion.
          SaveKey(ikey.user_key, skip);
          skipping = true;
          break;
        case ValueType::kValue:
          if (skipping && user_comparator_->Compare(ikey.user_key, *skip) <= 0) {
            // Entry hidden
          } else {
            valid_ = true;
            saved_key_.clear();
            return;
          }
          break;
      }
    } else if (!status_.ok()) {
      valid_ = false;
      return;
    }
    iter_->Next();
  } while (iter_->Valid());
  saved_key_.clear();
  valid_ = false;
}

void DBIter::Prev() {
  assert(valid_);
  if (direction_ == kForward) {  // Switch directions?
    // iter_ is pointing at the current entry. Scan backwards until the key
    // changes so we can use the normal reverse scanning code.
    assert(iter_->Valid());  // Otherwise valid_ would have been false
    SaveKey(ExtractUserKey(iter_->key()), &saved_key_);
    while (true) {
      iter_->Prev();
      if (!iter_->Valid()) {
        valid_ = false;
        saved_key_.clear();
        ClearSavedValue();
        return;
      }
      if (user_comparator_->Compare(ExtractUserKey(iter_->key()), saved_key_) < 0) break;
    }
    direction_ = kReverse;
  }
  FindPrevUserEntry();
  ClampReverse();
}

void DBIter::FindPrevUserEntry() {
  assert(direction_ == kReverse);
  ValueType value_type = ValueType::kDeletion;
  if (iter_->Valid()) {
    do {
      ParsedInternalKey ikey;
      if (ParseKey(&ikey) && ikey.sequence <= sequence_) {
        if ((value_type != ValueType::kDeletion) &&
            user_comparator_->Compare(ikey.user_key, saved_key_) < 0) {
          // We encountered a non-deleted value in entries for previous keys.
          break;
        }
        value_type = ikey.type;
        if (value_type == ValueType::kDeletion) {
          saved_key_.clear();
          ClearSavedValue();
        } else {
          Slice raw_value = iter_->value();
          SaveKey(ExtractUserKey(iter_->key()), &saved_key_);
          saved_value_.assign(raw_value.data(), raw_value.size());
        }
      } else if (!status_.ok()) {
        break;
      }
      iter_->Prev();
    } while (iter_->Valid());
  }

  if (value_type == ValueType::kDeletion || !status_.ok()) {
    // End
    valid_ = false;
    saved_key_.clear();
    ClearSavedValue();
    direction_ = kForward;
  } else {
    valid_ = true;
  }
}

void DBIter::Seek(const Slice& target) {
  direction_ = kForward;
  ClearSavedValue();
  saved_key_.clear();
  Slice t = target;
  if (has_lower_ && user_comparator_->Compare(t, lower_) < 0) t = lower_;
  AppendInternalKey(&saved_key_, ParsedInternalKey(t, sequence_, kValueTypeForSeek));
  iter_->Seek(saved_key_);
  if (iter_->Valid()) {
    FindNextUserEntry(false, &saved_key_ /* temporary storage */);
  } else {
    valid_ = false;
  }
  ClampForward();
}

void DBIter::SeekToFirst() {
  if (has_lower_) {
    Seek(lower_);
    return;
  }
  direction_ = kForward;
  ClearSavedValue();
  iter_->SeekToFirst();
  if (iter_->Valid()) {
    FindNextUserEntry(false, &saved_key_ /* temporary storage */);
  } else {
    valid_ = false;
  }
  ClampForward();
}

void DBIter::SeekForPrev(const Slice& target) {
  // Position after every entry of user keys <= target, then step back.
  direction_ = kReverse;
  ClearSavedValue();
  saved_key_.clear();
  bool clamp_to_upper = has_upper_ && user_comparator_->Compare(target, upper_) >= 0;
  if (clamp_to_upper) {
    // The last key < upper: seek to the first entry of upper and step back.
    AppendInternalKey(&saved_key_,
                      ParsedInternalKey(upper_, kMaxSequenceNumber, kValueTypeForSeek));
  } else {
    // (target, seq 0, deletion) is the last possible internal key of target.
    AppendInternalKey(&saved_key_, ParsedInternalKey(target, 0, ValueType::kDeletion));
  }
  iter_->Seek(saved_key_);
  if (iter_->Valid()) {
    if (!clamp_to_upper) {
      // Skip the exact (target, 0, deletion) entry if present: it belongs to target.
      while (iter_->Valid() &&
             user_comparator_->Compare(ExtractUserKey(iter_->key()), target) <= 0) {
        iter_->Next();
      }
    }
    if (iter_->Valid()) {
      iter_->Prev();
    } else {
      iter_->SeekToLast();
    }
  } else {
    iter_->SeekToLast();
  }
  saved_key_.clear();
  FindPrevUserEntry();
  ClampReverse();
}

void DBIter::SeekToLast() {
  if (has_upper_) {
    SeekForPrev(upper_);
    return;
  }
  direction_ = kReverse;
  ClearSavedValue();
  iter_->SeekToLast();
  FindPrevUserEntry();
  ClampReverse();
}

}  // namespace

Iterator* NewDBIterator(const Comparator* user_comparator, Iterator* internal_iter,
                        SequenceNumber sequence, const ReadOptions& options) {
  return new DBIter(user_comparator, internal_iter, sequence, options);
}

}  // namespace accelkv
