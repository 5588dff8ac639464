#include "jigsaw/comparator.h"

namespace jigsaw {

Comparator::~Comparator() = default;

namespace {
class BytewiseComparatorImpl final : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return a.compare(b); }
  const char* Name() const override { return "jigsaw.BytewiseComparator"; }
};
}  // namespace

const Comparator* BytewiseComparator() {
  static const BytewiseComparatorImpl* const instance = new BytewiseComparatorImpl();
  return instance;
}

}  // namespace jigsaw
