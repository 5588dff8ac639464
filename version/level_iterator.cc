#include "version/level_iterator.h"

#include <algorithm>
#include <utility>

#include "table/concatenating_iterator.h"

namespace jigsaw {

namespace {

// The tables of a level as the children of a concatenation.
class LevelSource {
 public:
  LevelSource(const Comparator* comparator, std::vector<TableRef> tables, bool scan, const ReadOptions& options,
              SampledPhase* decode)
      : comparator_(comparator), tables_(std::move(tables)), scan_(scan), options_(options), decode_(decode) {}

  size_t num_children() const { return tables_.size(); }
  size_t FirstCandidate(const Slice& user_key) const {
    auto it = std::lower_bound(tables_.begin(), tables_.end(), user_key, [this](const TableRef& t, const Slice& k) {
      return comparator_->Compare(t->largest, k) < 0;
    });
    return static_cast<size_t>(it - tables_.begin());
  }
  Status OpenChild(size_t i, std::unique_ptr<InternalIterator>* child) {
    const Table& table = *tables_[i]->table;
    *child = scan_ ? table.NewScanIterator(decode_) : table.NewIterator(options_);
    return Status::OK();
  }
  void WillReadForwardFrom(size_t) {}  // the tables read ahead themselves

 private:
  const Comparator* const comparator_;
  const std::vector<TableRef> tables_;
  const bool scan_;             // tables read by scan iterators (compaction inputs)
  const ReadOptions options_;   // for the tables' iterators
  SampledPhase* const decode_;  // for the scan iterators; may be null
};

}  // namespace

std::unique_ptr<InternalIterator> NewLevelIterator(const Comparator* comparator, std::vector<TableRef> tables,
                                                   const ReadOptions& options) {
  return std::make_unique<ConcatenatingIterator<LevelSource>>(/*decode=*/nullptr, comparator, std::move(tables),
                                                              /*scan=*/false, options, nullptr);
}

std::unique_ptr<InternalIterator> NewLevelScanIterator(const Comparator* comparator, std::vector<TableRef> tables,
                                                       SampledPhase* decode) {
  // The tables' scan iterators charge `decode` themselves.
  return std::make_unique<ConcatenatingIterator<LevelSource>>(/*decode=*/nullptr, comparator, std::move(tables),
                                                              /*scan=*/true, ReadOptions(), decode);
}

}  // namespace jigsaw
