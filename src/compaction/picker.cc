#include "compaction/picker.h"

#include <algorithm>

#include "pmem/pool_sizing.h"

namespace jigsaw {

uint64_t Compaction::InputBytes() const {
  uint64_t bytes = 0;
  for (const auto& tables : inputs) {
    for (const TableRef& t : tables) bytes += t->size;
  }
  return bytes;
}

uint64_t MaxBytesForLevel(const Options& options, int level) {
  uint64_t bytes = options.level1_size;
  for (int l = 1; l < level; ++l) bytes *= static_cast<uint64_t>(options.level_size_multiplier);
  return bytes;
}

namespace {

// [first, last] of `tables` widened over neighbours that share a boundary
// key: they hold versions of one key and must move together.
void WidenOverSharedBoundaries(const Comparator* ucmp, const std::vector<TableRef>& tables, size_t* first,
                               size_t* last) {
  while (*first > 0 && ucmp->Compare(tables[*first - 1]->largest, tables[*first]->smallest) == 0) --*first;
  while (*last + 1 < tables.size() && ucmp->Compare(tables[*last]->largest, tables[*last + 1]->smallest) == 0) {
    ++*last;
  }
}

}  // namespace

bool PickCompaction(const Version& version, const Options& options, std::string compact_pointers[kNumLevels],
                    bool l0_wanted_by_reads, Compaction* compaction) {
  const Comparator* ucmp = options.comparator;
  // Scoring L0 like the others keeps L1 near its target, which bounds the
  // size (and the free space) an L0 compaction needs.
  int level = -1;
  double best_score = 1.0;
  for (int l = 0; l < kNumLevels - 1; ++l) {
    const double score =
        l == 0 ? static_cast<double>(version.levels[0].size()) / options.level0_compaction_trigger
               : static_cast<double>(version.LevelBytes(l)) / static_cast<double>(MaxBytesForLevel(options, l));
    if (score > best_score || (l == 0 && score >= 1.0 && score >= best_score)) {
      best_score = score;
      level = l;
    }
  }
  if (level < 0 && l0_wanted_by_reads && !version.levels[0].empty()) level = 0;
  if (level < 0) return false;
  *compaction = Compaction();
  compaction->level = level;
  if (level == 0) {
    compaction->inputs[0] = version.levels[0];
  } else {
    const auto& tables = version.levels[level];
    size_t pick = 0;
    while (pick < tables.size() && !compact_pointers[level].empty() &&
           ucmp->Compare(tables[pick]->largest, compact_pointers[level]) <= 0) {
      ++pick;
    }
    if (pick == tables.size()) pick = 0;
    size_t first = pick, last = pick;
    WidenOverSharedBoundaries(ucmp, tables, &first, &last);
    compaction->inputs[0].assign(tables.begin() + static_cast<std::ptrdiff_t>(first),
                                 tables.begin() + static_cast<std::ptrdiff_t>(last) + 1);
    compact_pointers[level] = tables[last]->largest;
  }
  AddOverlappingInputs(version, ucmp, compaction);
  return true;
}

bool PickRangeStep(const Version& version, const Comparator* ucmp, int level, const Slice* begin, const Slice* end,
                   size_t l0_take, Compaction* compaction) {
  auto in_range = [&](const TableRef& t) {
    return (begin == nullptr || ucmp->Compare(t->largest, *begin) >= 0) &&
           (end == nullptr || ucmp->Compare(t->smallest, *end) <= 0);
  };
  const auto& tables = version.levels[level];
  const auto first = std::find_if(tables.begin(), tables.end(), in_range);
  if (first == tables.end()) return false;
  *compaction = Compaction();
  compaction->level = level;
  if (level == 0) {
    // Everything left above the oldest l0_take tables is newer, everything
    // below older.
    const size_t take = std::min(l0_take, tables.size());
    compaction->inputs[0].assign(tables.end() - static_cast<std::ptrdiff_t>(take), tables.end());
  } else {
    size_t first_index = static_cast<size_t>(first - tables.begin()), last_index = first_index;
    size_t ignored_first = first_index;  // only later neighbours join: earlier ones were out of range
    WidenOverSharedBoundaries(ucmp, tables, &ignored_first, &last_index);
    compaction->inputs[0].assign(tables.begin() + static_cast<std::ptrdiff_t>(first_index),
                                 tables.begin() + static_cast<std::ptrdiff_t>(last_index) + 1);
  }
  AddOverlappingInputs(version, ucmp, compaction);
  return true;
}

bool NextSplit(const Comparator* ucmp, const std::vector<TableRef>& lower, size_t* lower_count,
               Compaction* compaction) {
  size_t k = *lower_count;
  if (k <= 1) return false;
  k /= 2;
  while (k > 0 && ucmp->Compare(lower[k - 1]->largest, lower[k]->smallest) == 0) --k;
  *lower_count = k;
  if (k == 0) return false;
  compaction->split = true;
  compaction->split_key = lower[k - 1]->largest;
  compaction->inputs[1].assign(lower.begin(), lower.begin() + static_cast<std::ptrdiff_t>(k));
  return true;
}

void ExtendRange(const Comparator* ucmp, const std::vector<TableRef>& tables, std::string* smallest,
                 std::string* largest, bool* any) {
  for (const TableRef& t : tables) {
    if (!*any || ucmp->Compare(t->smallest, *smallest) < 0) *smallest = t->smallest;
    if (!*any || ucmp->Compare(t->largest, *largest) > 0) *largest = t->largest;
    *any = true;
  }
}

void AddOverlappingInputs(const Version& version, const Comparator* ucmp, Compaction* compaction) {
  std::string smallest, largest;
  bool any = false;
  ExtendRange(ucmp, compaction->inputs[0], &smallest, &largest, &any);
  compaction->inputs[1].clear();
  if (!any) return;
  // The overlapping tables, and the later neighbours that share a boundary
  // key with the last of them: they hold that key's older versions, at the
  // output level itself, where IsBaseLevelForKey does not look -- left out,
  // a tombstone above them could be dropped and an older value come back.
  // (An earlier neighbour holds newer versions: leaving it is safe.)
  const auto& tables = version.levels[compaction->level + 1];
  size_t first = tables.size(), last = 0;
  for (size_t i = 0; i < tables.size(); ++i) {
    if (ucmp->Compare(tables[i]->largest, smallest) >= 0 && ucmp->Compare(tables[i]->smallest, largest) <= 0) {
      if (first == tables.size()) first = i;
      last = i;
    }
  }
  if (first == tables.size()) return;
  size_t ignored_first = first;
  WidenOverSharedBoundaries(ucmp, tables, &ignored_first, &last);
  compaction->inputs[1].assign(tables.begin() + static_cast<std::ptrdiff_t>(first),
                               tables.begin() + static_cast<std::ptrdiff_t>(last) + 1);
}

bool IsBaseLevelForKey(const Version& version, const Comparator* ucmp, int level, const Slice& user_key) {
  for (int l = level + 1; l < kNumLevels; ++l) {
    if (!version.Overlapping(ucmp, l, user_key, user_key).empty()) return false;
  }
  return true;
}

bool AllInPmem(const std::vector<TableRef>& tables) {
  return std::all_of(tables.begin(), tables.end(), [](const TableRef& t) { return t->residence == Residence::kPmem; });
}

namespace {

// Not a split step, nothing below to merge with, inputs disjoint, each
// input in `tier`.
bool MovesWhole(const Compaction& compaction, const Comparator* ucmp, Residence tier) {
  if (compaction.split || !compaction.inputs[1].empty() || compaction.inputs[0].empty()) return false;
  std::vector<TableRef> sorted = compaction.inputs[0];
  for (const TableRef& t : sorted) {
    if (t->residence != tier) return false;
  }
  std::sort(sorted.begin(), sorted.end(),
            [&](const TableRef& a, const TableRef& b) { return ucmp->Compare(a->smallest, b->smallest) < 0; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (ucmp->Compare(sorted[i - 1]->largest, sorted[i]->smallest) >= 0) return false;
  }
  return true;
}

}  // namespace

bool IsTrivialMove(const Compaction& compaction, const Comparator* ucmp, bool output_to_ssd) {
  return MovesWhole(compaction, ucmp, output_to_ssd ? Residence::kSsd : Residence::kPmem);
}

bool IsMigration(const Compaction& compaction, const Comparator* ucmp, bool output_to_ssd) {
  return output_to_ssd && MovesWhole(compaction, ucmp, Residence::kPmem);
}

uint64_t PmemBlockBudget(const Options& options, uint64_t pool_size) {
  const uint64_t wal_chunks = (1 + static_cast<uint64_t>(options.max_immutable_memtables)) *
                              ObjectChunks(WalSegmentCapacity(options.memtable_size));
  const uint64_t reserved_chunks = StandbyBytes(options, pool_size) / kPoolChunk + wal_chunks + 2;
  const uint64_t heap_chunks = PoolHeapChunks(pool_size);
  const uint64_t room = heap_chunks > reserved_chunks ? (heap_chunks - reserved_chunks) * kPoolChunk : 0;
  return std::min(options.pmem_budget != 0 ? options.pmem_budget : pool_size / 2, room);
}

bool OutputToSsd(const Version& version, const Options& options, uint64_t budget, bool pool_full, int output_level,
                 uint64_t bytes) {
  if (options.storage_mode == StorageMode::kDisk) return true;
  if (options.storage_mode != StorageMode::kHybrid) return false;
  if (pool_full) return true;
  // A level stays in pmem only if it and every level above fit the budget
  // at their target sizes, and the output fits what is left of it now
  // (counted in the pool chunks blocks occupy).
  uint64_t capacity = static_cast<uint64_t>(options.level0_stop_trigger) * options.memtable_size;
  for (int l = 1; l <= output_level; ++l) capacity += MaxBytesForLevel(options, l);
  if (capacity > budget) return true;
  uint64_t pmem_bytes = 0;
  for (const auto& level : version.levels) {
    for (const TableRef& t : level) {
      if (t->residence == Residence::kPmem) pmem_bytes += ObjectChunks(t->size) * kPoolChunk;
    }
  }
  return pmem_bytes + bytes + kPoolChunk > budget;
}

}  // namespace jigsaw
