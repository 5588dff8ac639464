// TableStore: the storage tiers as the engine sees them -- where a table
// lives, how it is opened, created and released. It owns the pmem pool and
// its space accounting, the SSD block cache and I/O engine, and disposes of
// the storage of tables that left the tree (TableDisposer).
//
// Thread-safety: every method may be called concurrently (the pool, the
// PoolSpace, the FileSystem and the block cache are thread-safe).
#ifndef JIGSAW_VERSION_TABLE_STORE_H_
#define JIGSAW_VERSION_TABLE_STORE_H_

#include <memory>
#include <string>

#include "version/manifest.h"
#include "version/version.h"
#include "format/block.h"
#include "jigsaw/file_system.h"
#include "jigsaw/options.h"
#include "pmem/pool.h"
#include "pmem/pool_space.h"
#include "ssd/block_cache.h"
#include "ssd/io_engine.h"

namespace jigsaw {

class VersionSet;

class TableStore final : public TableDisposer {
 public:
  // `options` and `versions` (for new file numbers) must outlive the store.
  TableStore(const Options& options, std::string dbname, VersionSet* versions);
  ~TableStore() override;

  // Picks the I/O engine for SSD tables (Options::ssd_io); *description
  // says what was chosen (jigsaw.io).
  void ChooseIo(std::string* description);
  // Opens (or creates) the pool. Not called in disk-only mode.
  Status OpenPool(const pmem::PoolOptions& pool_options);

  // null in disk-only mode.
  pmem::Pool* pool() const { return pool_.get(); }
  pmem::PoolSpace* space() const { return space_.get(); }
  FileSystem* fs() const { return fs_; }
  const std::string& dbname() const { return dbname_; }
  ssd::BlockCache* block_cache() const { return block_cache_.get(); }
  ssd::IoEngine* io() const { return io_.get(); }
  SyncStats* sync_stats() { return &sync_stats_; }
  const Options& options() const { return options_; }
  const Comparator* comparator() const { return options_.comparator; }
  uint64_t NewTableNumber();

  // The blocks of new SSD tables: KeySet, or classic (Options::table_format).
  BlockFormat ssd_block_format() const {
    return options_.table_format == TableFormat::kClassic ? BlockFormat::kClassic : BlockFormat::kKeySet;
  }
  // The format of new pmem tables (Options::table_format): kKeySet, one
  // KeySet block per object; kClassic, an SSD table image of classic blocks
  // per object (PmemLayout::kTableImage).
  BlockFormat pmem_table_format() const {
    return options_.table_format == TableFormat::kClassic ? BlockFormat::kClassic : BlockFormat::kKeySet;
  }
  BlockBuilderOptions block_builder_options() const;

  // Opens the pmem table of `layout` at `offset` (committed or just built):
  // OpenPmemTable.
  Status OpenPmem(uint64_t number, PmemLayout layout, uint64_t offset, uint64_t size, bool verify_checksum,
                  TableRef* table);
  // Opens the SSD table file `number`: Corruption if it is missing or empty.
  Status OpenSsd(uint64_t number, TableRef* table);
  // Creates the file of a new SSD table.
  Status NewTableFile(uint64_t number, std::unique_ptr<WritableFile>* file);
  std::string TablePath(uint64_t number) const;
  // Deletes a table file that no manifest names (a leftover is collected at
  // the next open).
  void RemoveTableFile(uint64_t number);

  // TableDisposer: frees the pmem object or deletes the file (and its
  // cached blocks) of a table that left the tree.
  void Dispose(const TableMeta& table) override;

 private:
  const Options& options_;
  const std::string dbname_;
  VersionSet* const versions_;
  FileSystem* const fs_;
  std::unique_ptr<pmem::Pool> pool_;
  std::unique_ptr<pmem::PoolSpace> space_;
  std::unique_ptr<ssd::BlockCache> block_cache_;
  std::unique_ptr<ssd::IoEngine> io_;
  bool async_table_writes_ = false;  // table files written through io_uring
  SyncStats sync_stats_;
};

}  // namespace jigsaw

#endif  // JIGSAW_VERSION_TABLE_STORE_H_
