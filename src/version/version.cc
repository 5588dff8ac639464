#include "version/version.h"

#include <algorithm>
#include <cstring>

#include "pmem/pmem_table.h"
#include "ssd/table.h"
#include "util/checksum.h"
#include "util/coding.h"
#include "util/guarded_read.h"
#include "util/memory_file.h"

namespace jigsaw {

TableMeta::~TableMeta() {
  table.reset();
  if (obsolete.load(std::memory_order_acquire) && disposer != nullptr) disposer->Dispose(*this);
}

TableRef MakeSsdTable(uint64_t number, uint64_t file_size, std::unique_ptr<Table> table,
                      const std::string& smallest, const std::string& largest, uint64_t entries) {
  auto block = std::make_shared<TableMeta>();
  block->number = number;
  block->residence = Residence::kSsd;
  block->size = file_size;
  block->table = std::move(table);
  block->smallest = smallest;
  block->largest = largest;
  block->entries = entries;
  return block;
}

namespace {

// The key range of a table: its first and last user key.
Status ReadKeyRange(const Table& table, std::string* smallest, std::string* largest) {
  auto it = table.NewIterator(ReadOptions());
  it->SeekToFirst();
  if (it->Valid()) {
    *smallest = it->user_key().ToString();
    it->SeekToLast();
    if (it->Valid()) *largest = it->user_key().ToString();
  }
  return it->status();
}

Status OpenKeySetBlock(const Comparator* comparator, const Slice& contents, bool verify_checksum, bool hash_index,
                       bool guard_reads, TableMeta* table) {
  BlockReadOptions options;
  options.comparator = comparator;
  options.verify_checksum = verify_checksum;
  options.hash_index = hash_index;
  std::unique_ptr<BlockReader> reader;
  Status s = BlockReader::Open(BlockFormat::kKeySet, contents, options, &reader);
  if (!s.ok()) return s;
  table->entries = reader->num_entries();
  table->table = pmem::NewPmemTable(std::move(reader), contents, table->number, guard_reads);
  return ReadKeyRange(*table->table, &table->smallest, &table->largest);
}

Status OpenTableImage(const Comparator* comparator, const Slice& contents, bool verify_checksum, TableMeta* table) {
  ssd::SsdTableOptions options;
  options.comparator = comparator;
  options.use_mmap = true;  // blocks served in place from the object
  std::unique_ptr<ssd::SsdTable> image;
  Status s = ssd::SsdTable::Open(options, std::make_unique<MemoryRandomAccessFile>(contents), table->number,
                                 std::to_string(table->number) + " (pmem object at " + std::to_string(table->offset) +
                                     ")",
                                 &image);
  if (s.ok() && verify_checksum) s = image->Validate();
  if (!s.ok()) return s;
  if (image->num_entries() == 0) return Status::Corruption("empty table image");
  table->entries = image->num_entries();
  table->smallest = image->smallest();
  table->largest = image->largest();
  table->table = std::move(image);
  return Status::OK();
}

}  // namespace

Status OpenPmemTable(pmem::Pool* pool, const Comparator* comparator, uint64_t number, PmemLayout layout,
                     uint64_t offset, uint64_t size, bool verify_checksum, bool hash_index, bool guard_reads,
                     TableRef* result) {
  const char* data = pool->Direct(offset);
  if (data == nullptr || size > pool->ObjectSize(offset)) {
    return Status::Corruption("block " + std::to_string(number), "size exceeds its pmem object");
  }
  auto table = std::make_shared<TableMeta>();
  table->number = number;
  table->pmem_layout = layout;
  table->offset = offset;
  table->size = size;
  const Slice contents(data, size);
  // Guarded (util/guarded_read.h): pool memory that cannot be read is a
  // damaged table, not a SIGBUS. What the open had allocated and not yet
  // handed to `table` is leaked.
  Status s;
  if (!GuardedRead([&] {
        s = layout == PmemLayout::kTableImage
                ? OpenTableImage(comparator, contents, verify_checksum, table.get())
                : OpenKeySetBlock(comparator, contents, verify_checksum, hash_index, guard_reads, table.get());
      })) {
    s = Status::IOError("read fault in pool memory (a media error, or a pool file cut short)");
  }
  if (!s.ok()) {
    return Status::Corruption(
        (layout == PmemLayout::kTableImage ? "pmem table image " : "block ") + std::to_string(number), s.ToString());
  }
  if (pool->timing() != nullptr) table->table = pmem::NewNvmTimedTable(std::move(table->table), pool->timing(), size);
  *result = std::move(table);
  return Status::OK();
}

std::shared_ptr<Version> ApplyEdit(const Version& base, const VersionEdit& edit, const Comparator* ucmp) {
  auto version = std::make_shared<Version>(base);
  if (!edit.added_range_tombstones.empty() || !edit.removed_range_tombstones.empty()) {
    version->range_tombstones =
        base.range_tombstones != nullptr
            ? base.range_tombstones->Changed(edit.added_range_tombstones, edit.removed_range_tombstones)
            : (edit.added_range_tombstones.empty()
                   ? nullptr
                   : std::make_shared<const RangeTombstoneSet>(ucmp, edit.added_range_tombstones));
  }
  if (!edit.removed.empty()) {
    for (auto& tables : version->levels) {
      tables.erase(std::remove_if(tables.begin(), tables.end(),
                                  [&](const TableRef& t) {
                                    return std::find(edit.removed.begin(), edit.removed.end(), t->number) !=
                                           edit.removed.end();
                                  }),
                   tables.end());
    }
  }
  bool touched[kNumLevels] = {};
  std::vector<TableRef> new_l0;
  for (const auto& [level, table] : edit.added) {
    if (level == 0) {
      new_l0.push_back(table);
    } else {
      version->levels[level].push_back(table);
      touched[level] = true;
    }
  }
  auto& l0 = version->levels[0];
  l0.insert(edit.l0_added_are_oldest ? l0.end() : l0.begin(), new_l0.begin(), new_l0.end());
  for (int level = 1; level < kNumLevels; ++level) {
    if (!touched[level]) continue;
    // Stable: tables that share a boundary key (one key's versions overflowed
    // a block) keep their order, newer versions first.
    std::stable_sort(version->levels[level].begin(), version->levels[level].end(),
                     [&](const TableRef& a, const TableRef& b) { return ucmp->Compare(a->smallest, b->smallest) < 0; });
  }
  return version;
}

Status CheckTableShape(const Version& version, const Comparator* ucmp, int level, size_t index) {
  const auto& tables = version.levels[level];
  const TableMeta& t = *tables[index];
  if (t.entries == 0 || ucmp->Compare(t.smallest, t.largest) > 0) {
    return Status::Corruption("empty or inverted key range");
  }
  if (level > 0 && index > 0 && ucmp->Compare(tables[index - 1]->largest, t.smallest) > 0) {
    return Status::Corruption("overlaps table " + std::to_string(tables[index - 1]->number) +
                              " before it in its level");
  }
  return Status::OK();
}

Status CheckLevelShape(const Version& version, const Comparator* ucmp) {
  for (int level = 0; level < kNumLevels; ++level) {
    for (size_t i = 0; i < version.levels[level].size(); ++i) {
      const Status s = CheckTableShape(version, ucmp, level, i);
      if (!s.ok()) {
        return Status::Corruption(
            "table " + std::to_string(version.levels[level][i]->number) + " at level " + std::to_string(level),
            s.message());
      }
    }
  }
  return Status::OK();
}

uint64_t Version::LevelBytes(int level) const {
  uint64_t bytes = 0;
  for (const TableRef& b : levels[level]) bytes += b->size;
  return bytes;
}

std::vector<TableRef> Version::Overlapping(const Comparator* ucmp, int level, const Slice& smallest,
                                           const Slice& largest) const {
  std::vector<TableRef> result;
  for (const TableRef& b : levels[level]) {
    if (ucmp->Compare(b->largest, smallest) >= 0 && ucmp->Compare(b->smallest, largest) <= 0) result.push_back(b);
  }
  return result;
}

}  // namespace jigsaw
