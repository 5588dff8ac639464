// What a program can learn about an open database's tables, and check
// table by table: DB::GetLiveTablesMetaData, DB::VerifyTables and
// DB::GetTableContents. The jigsaw tool's info, verify and dump commands
// are built on these.
#ifndef JIGSAW_INCLUDE_JIGSAW_METADATA_H_
#define JIGSAW_INCLUDE_JIGSAW_METADATA_H_

#include <cstdint>
#include <string>

#include "jigsaw/export.h"
#include "jigsaw/options.h"
#include "jigsaw/status.h"

namespace jigsaw {

// The LSM tree's levels: L0 to L6.
inline constexpr int kNumLevels = 7;

// Where a table's bytes are kept and in what shape.
enum class TableStorage : uint8_t {
  // One KeySet block in a pool object (docs/format.md).
  kPmemBlock,
  // The bytes of a table file of classic blocks in a pool object, read in
  // place (TableFormat::kClassic; docs/ssd_format.md).
  kPmemTableImage,
  // A table file in the database directory (docs/ssd_format.md).
  kSsdTable,
};

// One live table: a unit of a level of the LSM tree.
struct JIGSAW_EXPORT LiveTableMetaData {
  int level = 0;  // 0 .. kNumLevels - 1
  uint64_t number = 0;  // unique in the database, increasing in creation order
  TableStorage storage = TableStorage::kPmemBlock;
  // The encoding of its blocks: KeySet or classic.
  TableFormat block_format = TableFormat::kKeySet;
  // kPmemBlock: the block's KeySet format version (docs/format.md); the
  // table kinds: the table file format version (docs/ssd_format.md). 0 if
  // the block's header is unreadable.
  uint32_t format_version = 0;
  uint64_t size = 0;     // bytes: the block, the image, the file
  uint64_t entries = 0;  // entries stored, tombstones and old versions included
  std::string smallest_key;  // first and last user key
  std::string largest_key;
  std::string file_name;     // kSsdTable: the file's path; else empty
  uint64_t pool_offset = 0;  // pmem kinds: the pool object's offset; else 0
};

// DB::VerifyTables' finding for one table.
struct JIGSAW_EXPORT TableCheck {
  LiveTableMetaData table;
  // OK, or Corruption saying what is wrong with it (not naming the table).
  Status status;
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_METADATA_H_
