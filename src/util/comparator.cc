#include "accelkv/comparator.h"

namespace accelkv {
namespace {

class BytewiseComparatorImpl final : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return a.compare(b); }
  const char* Name() const override { return "accelkv.BytewiseComparator"; }
  bool IsBytewise() const override { return true; }
};

}  // namespace

const Comparator* BytewiseComparator() {
  static const BytewiseComparatorImpl* singleton = new BytewiseComparatorImpl;
  return singleton;
}

}  // namespace accelkv
