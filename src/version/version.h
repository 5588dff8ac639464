// Version: the tables that make up the LSM tree's persistent levels at one
// moment -- pmem objects and table files on SSD, each a TableMeta --
// and VersionEdit, the one way a new version is made from an old one.
// version/manifest.h records a version durably; version/version_set.h holds the
// current one.
//
// Versions are immutable once published and shared (std::shared_ptr). A
// table's storage stays while any Version or iterator holds its TableMeta:
// when the table has left the tree (its `obsolete` flag is set, after the
// commit that dropped it) and the last reference goes, the TableDisposer
// frees its pmem object or deletes its file -- on the thread that drops that
// reference.
#ifndef JIGSAW_VERSION_VERSION_H_
#define JIGSAW_VERSION_VERSION_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/block.h"
#include "jigsaw/metadata.h"  // kNumLevels
#include "pmem/pool.h"
#include "table/range_tombstones.h"
#include "table/table.h"

namespace jigsaw {

// Where a level's unit lives: a pmem object, or a table file on the SSD
// tier (<db>/<number>.jst).
enum class Residence : uint8_t { kPmem = 0, kSsd = 1 };

// What a pmem object holds: one KeySet block (docs/format.md), or an SSD
// table image -- the bytes of a table file of classic blocks
// (docs/ssd_format.md), read in place (Options::table_format kClassic).
enum class PmemLayout : uint8_t { kKeySetBlock = 0, kTableImage = 1 };

struct TableMeta;

// Releases the storage of a block that left the LSM tree (pmem object freed,
// table file deleted) once nothing references it any more.
class TableDisposer {
 public:
  virtual ~TableDisposer() = default;
  virtual void Dispose(const TableMeta& block) = 0;
};

// One unit of a level: a pmem table or an SSD table. Which level
// it is in is the Version's to say: a trivial move puts the same TableMeta
// one level down.
struct TableMeta {
  uint64_t number = 0;  // unique, increasing in creation order
  Residence residence = Residence::kPmem;
  PmemLayout pmem_layout = PmemLayout::kKeySetBlock;  // pmem only
  uint64_t offset = 0;  // pmem: pool object holding the table
  uint64_t size = 0;    // pmem: block or image bytes; SSD: file bytes
  std::string smallest;  // first and last user key
  std::string largest;
  uint64_t entries = 0;
  std::unique_ptr<Table> table;

  TableDisposer* disposer = nullptr;
  std::atomic<bool> obsolete{false};
  ~TableMeta();  // disposes of the storage if obsolete
};
using TableRef = std::shared_ptr<TableMeta>;

// Opens the committed or just-built pmem table of `layout` in the first
// `size` bytes of the object at `offset`: table plus key range; the table's
// reads are charged to the pool's timing model if it has one. A KeySet
// block is read by its BlockReader -- with `hash_index`, with a DRAM hash
// index for point lookups (BlockReadOptions::hash_index) -- and with
// `verify_checksum` has its checksum checked. A table image is read as an
// SSD table over the object's bytes (ssd::SsdTable, use_mmap: its index and
// filter in DRAM, its blocks served in place, no block cache); with
// `verify_checksum` every block is validated (SsdTable::Validate).
// Corruption naming the table if it cannot be read (a media error too: the
// open is guarded) or holds no entries. With `guard_reads`, a KeySet
// block's Gets and iterators are guarded too (pmem::NewPmemTable).
Status OpenPmemTable(pmem::Pool* pool, const Comparator* comparator, uint64_t number, PmemLayout layout,
                     uint64_t offset, uint64_t size, bool verify_checksum, bool hash_index, bool guard_reads,
                     TableRef* table);
// Wraps an open SSD table.
TableRef MakeSsdTable(uint64_t number, uint64_t file_size, std::unique_ptr<Table> table,
                      const std::string& smallest, const std::string& largest, uint64_t entries);

struct Version {
  // L0: newest block first (blocks may overlap). L1+: sorted by key, disjoint.
  std::array<std::vector<TableRef>, kNumLevels> levels;
  // The range tombstones flushed into the tree and still covering a
  // version some table may hold (table/range_tombstones.h); null if none.
  std::shared_ptr<const RangeTombstoneSet> range_tombstones;

  uint64_t LevelBytes(int level) const;
  // Blocks of `level` whose user-key range intersects [smallest, largest].
  std::vector<TableRef> Overlapping(const Comparator* ucmp, int level, const Slice& smallest,
                                    const Slice& largest) const;
};

// A change of the levels and range tombstones: tables removed (from whatever level holds them)
// and tables added.
struct VersionEdit {
  std::vector<uint64_t> removed;                // table numbers
  std::vector<std::pair<int, TableRef>> added;  // (level, table)
  // L0 is newest first: added L0 tables go in front (a flush), or with
  // this flag behind every table there (a split step's remainder, older
  // than anything flushed while it ran).
  bool l0_added_are_oldest = false;
  // Range tombstones that enter the tree (a flush's) and leave it (spent:
  // no table holds a version they cover), by sequence.
  std::vector<RangeTombstone> added_range_tombstones;
  std::vector<SequenceNumber> removed_range_tombstones;

  void Remove(const std::vector<TableRef>& tables) {
    for (const TableRef& t : tables) removed.push_back(t->number);
  }
  void Add(int level, const TableRef& table) { added.emplace_back(level, table); }
};

// `base` changed by `edit`; levels >= 1 come out sorted by smallest key.
std::shared_ptr<Version> ApplyEdit(const Version& base, const VersionEdit& edit, const Comparator* ucmp);

// The shape every version has: each table holds entries, its smallest key
// not after its largest; in L1 and deeper (sorted by smallest key) each
// table starts at or after the end of the one before it (a key's versions
// may continue into the next table). Only damage makes a manifest describe
// anything else -- and a merge over overlapping tables of one level would
// write outputs out of order -- so recovery and VerifyIntegrity check it.
// Corruption naming the first table that breaks it.
Status CheckLevelShape(const Version& version, const Comparator* ucmp);
// That shape for table `index` of `level` alone: OK, or Corruption saying
// what is wrong (not naming the table).
Status CheckTableShape(const Version& version, const Comparator* ucmp, int level, size_t index);


}  // namespace jigsaw

#endif  // JIGSAW_VERSION_VERSION_H_
