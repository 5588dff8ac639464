#include "version/level_iterator.h"

#include <algorithm>
#include <span>
#include <utility>

#include "table/concatenating_iterator.h"

namespace jigsaw {

namespace {

// The tables of a level as the children of a concatenation.
class LevelSource {
  static constexpr size_t kNone = ~size_t{0};

 public:
  // Reads `tables`, or `owned` (kept here) when it is not empty.
  LevelSource(const Comparator* comparator, std::span<const TableRef> tables, std::vector<TableRef> owned, bool scan,
              const ReadOptions& options, SampledPhase* decode)
      : comparator_(comparator),
        owned_(std::move(owned)),
        tables_(owned_.empty() ? tables : std::span<const TableRef>(owned_)),
        scan_(scan),
        options_(options),
        decode_(decode) {}

  size_t num_children() const { return tables_.size(); }
  size_t FirstCandidate(const Slice& user_key) const {
    auto it = std::lower_bound(tables_.begin(), tables_.end(), user_key, [this](const TableRef& t, const Slice& k) {
      return comparator_->Compare(t->largest, k) < 0;
    });
    return static_cast<size_t>(it - tables_.begin());
  }
  Status OpenChild(size_t i, std::unique_ptr<InternalIterator>* child) {
    const Table& table = *tables_[i]->table;
    // Read from its first entry right after table i - 1 was too, i.e. after
    // all of it was read: a scan, which may read ahead at once
    // (Table::NewSequentialIterator). A seek or a step back ends a scan.
    const bool from_first = i == announced_;
    const bool sequential = from_first && last_from_first_ != kNone && last_from_first_ + 1 == i;
    announced_ = kNone;
    last_from_first_ = from_first ? i : kNone;
    *child = scan_        ? table.NewScanIterator(decode_)
             : sequential ? table.NewSequentialIterator(options_)
                          : table.NewIterator(options_);
    return Status::OK();
  }
  // Table i will be read from its first entry. Each table reads ahead itself.
  void WillReadForwardFrom(size_t i) { announced_ = i; }

 private:
  const Comparator* const comparator_;
  const std::vector<TableRef> owned_;
  const std::span<const TableRef> tables_;
  const bool scan_;             // tables read by scan iterators (compaction inputs)
  const ReadOptions options_;   // for the tables' iterators
  SampledPhase* const decode_;  // for the scan iterators; may be null
  size_t announced_ = kNone;        // by WillReadForwardFrom, not yet opened
  size_t last_from_first_ = kNone;  // the last table opened, if read from its first entry
};

}  // namespace

std::unique_ptr<InternalIterator> NewLevelIterator(const Comparator* comparator, std::span<const TableRef> tables,
                                                   const ReadOptions& options) {
  return std::make_unique<ConcatenatingIterator<LevelSource>>(/*decode=*/nullptr, comparator, tables,
                                                              std::vector<TableRef>(), /*scan=*/false, options,
                                                              nullptr);
}

std::unique_ptr<InternalIterator> NewLevelScanIterator(const Comparator* comparator, std::vector<TableRef> tables,
                                                       SampledPhase* decode) {
  // The tables' scan iterators charge `decode` themselves.
  return std::make_unique<ConcatenatingIterator<LevelSource>>(/*decode=*/nullptr, comparator,
                                                              std::span<const TableRef>(), std::move(tables),
                                                              /*scan=*/true, ReadOptions(), decode);
}

}  // namespace jigsaw
