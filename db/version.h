// Version: the set of KeySet blocks that make up the LSM tree's persistent
// levels at one moment, and the manifest record that makes it durable
// (docs/manifest.md).
//
// Versions are immutable and shared (std::shared_ptr). A block stays
// allocated in pmem while any Version or iterator holds it: when it has been
// dropped from the current version (MarkObsolete) and its last reference goes,
// its pmem object is freed.
#ifndef JIGSAW_DB_VERSION_H_
#define JIGSAW_DB_VERSION_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/block.h"
#include "pmem/pool.h"
#include "table/table.h"

namespace jigsaw {

inline constexpr int kNumLevels = 7;

// Where a level's unit lives: a KeySet block in a pmem object, or a table
// file of KeySet blocks on the SSD tier (<db>/<number>.jst).
enum class Residence : uint8_t { kPmem = 0, kSsd = 1 };

struct TableMeta;

// Releases the storage of a block that left the LSM tree (pmem object freed,
// table file deleted) once nothing references it any more.
class TableDisposer {
 public:
  virtual ~TableDisposer() = default;
  virtual void Dispose(const TableMeta& block) = 0;
};

// One unit of a level: a KeySet block in pmem or an SSD table.
struct TableMeta {
  uint64_t number = 0;  // unique, increasing in creation order
  Residence residence = Residence::kPmem;
  uint64_t offset = 0;  // pmem: pool object holding the block
  uint64_t size = 0;    // pmem: block bytes; SSD: file bytes
  int level = 0;
  std::string smallest;  // first and last user key
  std::string largest;
  uint64_t entries = 0;
  std::unique_ptr<Table> table;

  TableDisposer* disposer = nullptr;
  std::atomic<bool> obsolete{false};
  ~TableMeta();  // disposes of the storage if obsolete
};
using TableRef = std::shared_ptr<TableMeta>;

// Opens a committed or just-built pmem block: table plus key range; the
// table's reads are charged to the pool's timing model if it has one.
Status OpenPmemTable(pmem::Pool* pool, const Comparator* comparator, uint64_t number, uint64_t offset, uint64_t size,
                 int level, bool verify_checksum, TableRef* block);
// Wraps an open SSD table.
TableRef MakeSsdTable(uint64_t number, uint64_t file_size, int level, std::unique_ptr<Table> table,
                      const std::string& smallest, const std::string& largest, uint64_t entries);

struct Version {
  // L0: newest block first (blocks may overlap). L1+: sorted by key, disjoint.
  std::array<std::vector<TableRef>, kNumLevels> levels;

  uint64_t LevelBytes(int level) const;
  // Blocks of `level` whose user-key range intersects [smallest, largest].
  std::vector<TableRef> Overlapping(const Comparator* ucmp, int level, const Slice& smallest,
                                    const Slice& largest) const;
};

struct WalSegmentMeta {
  uint64_t offset = 0;
  uint64_t capacity = 0;
  uint64_t number = 0;
};

// What a manifest record stores.
struct ManifestState {
  uint64_t generation = 0;
  SequenceNumber last_sequence = 0;
  uint64_t next_number = 1;
  std::vector<WalSegmentMeta> wal_segments;  // oldest first
  struct BlockEntry {
    uint64_t offset, size, number;
    int level;
    Residence residence = Residence::kPmem;
  };
  std::vector<BlockEntry> blocks;
  // Compactions whose SSD outputs are not yet durable (NobLSM): the outputs
  // are in `blocks`; their inputs are kept, unserved, as shadows.
  struct PendingCompaction {
    int output_level = 0;
    std::vector<uint64_t> outputs;    // block numbers
    std::vector<BlockEntry> shadows;  // the inputs, with their old levels
  };
  std::vector<PendingCompaction> pending;
};

// Size of the encoded record.
uint64_t ManifestSize(const ManifestState& state);
// Encodes into dest (ManifestSize bytes).
void EncodeManifest(const ManifestState& state, char* dest);
// Decodes and verifies (magic, version, CRC). `capacity`: bytes available.
Status DecodeManifest(const char* data, uint64_t capacity, ManifestState* state);

}  // namespace jigsaw

#endif  // JIGSAW_DB_VERSION_H_
