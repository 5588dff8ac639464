#include "version/level_iterator.h"

#include <algorithm>
#include <span>
#include <utility>

#include "table/concatenating_iterator.h"

namespace jigsaw {

namespace {

// The tables of a level as the children of a concatenation.
class LevelSource {
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
    const bool from_first = i == will_read_from_first_;
    will_read_from_first_ = kNone;
    if (!from_first) read_from_first_ = kNone;  // a seek or a step back ends a scan
    *child = scan_                          ? table.NewScanIterator(decode_)
             : from_first && follows_whole_ ? table.NewSequentialIterator(options_)
                                            : table.NewIterator(options_);
    return Status::OK();
  }
  // Table i will be read from its first entry. If the table before it was
  // too, all of that one was read: a scan, whose next table may read ahead
  // at once (Table::NewSequentialIterator). Each table reads ahead itself.
  void WillReadForwardFrom(size_t i) {
    follows_whole_ = read_from_first_ != kNone && read_from_first_ + 1 == i;
    read_from_first_ = i;
    will_read_from_first_ = i;
  }

 private:
  const Comparator* const comparator_;
  const std::vector<TableRef> owned_;
  const std::span<const TableRef> tables_;
  static constexpr size_t kNone = ~size_t{0};

  const bool scan_;             // tables read by scan iterators (compaction inputs)
  const ReadOptions options_;   // for the tables' iterators
  SampledPhase* const decode_;  // for the scan iterators; may be null
  size_t read_from_first_ = kNone;       // the last table opened to be read from its first entry
  size_t will_read_from_first_ = kNone;  // announced by WillReadForwardFrom, not yet opened
  bool follows_whole_ = false;           // ... right after read_from_first_ - 1 was read whole
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
