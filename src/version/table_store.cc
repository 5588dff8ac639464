#include "version/table_store.h"

#include "version/filename.h"
#include "version/version_set.h"
#include "ssd/table.h"

namespace jigsaw {

TableStore::TableStore(const Options& options, std::string dbname, VersionSet* versions)
    : options_(options),
      dbname_(std::move(dbname)),
      versions_(versions),
      fs_(options.file_system != nullptr ? options.file_system : FileSystem::Default()),
      block_cache_(std::make_unique<ssd::BlockCache>(options.block_cache_capacity)) {}

TableStore::~TableStore() {
  space_.reset();  // cancels the standby before the pool closes
  pool_.reset();
}

void TableStore::ChooseIo(std::string* description) {
  io_ = ssd::ChooseIoEngine(options_.ssd_io, dbname_, description);
  // io_uring table writes only when asked for: they measured no faster than
  // pwrite (docs/design/015-ssd-writes.md, "Bounded io_uring waits").
  async_table_writes_ = options_.ssd_io == SsdIo::kUring && io_->is_uring();
  if (options_.file_system != nullptr) {
    *description += "; table writes: through Options::file_system";
  } else {
    *description += async_table_writes_ ? "; table writes: io_uring from 256 KiB buffers"
                                        : "; table writes: pwrite from 256 KiB buffers";
  }
}

Status TableStore::OpenPool(const pmem::PoolOptions& pool_options) {
  Status s = pmem::Pool::Open(pool_options, &pool_);
  if (s.ok()) space_ = std::make_unique<pmem::PoolSpace>(pool_.get());
  return s;
}

uint64_t TableStore::NewTableNumber() { return versions_->NewFileNumber(); }

BlockBuilderOptions TableStore::block_builder_options() const {
  BlockBuilderOptions build_options;
  build_options.comparator = options_.comparator;
  build_options.bloom_bits_per_key = options_.bloom_bits_per_key;
  return build_options;
}

Status TableStore::OpenPmem(uint64_t number, PmemLayout layout, uint64_t offset, uint64_t size, bool verify_checksum,
                            TableRef* table) {
  if (pool_ == nullptr) {
    // A manifest of a disk-only database that names a pmem block: damaged.
    return Status::Corruption("block " + std::to_string(number), "a pmem block in a database without a pool");
  }
  const bool guard_reads = options_.pmem_read_guard == PmemReadGuard::kAlways ||
                           (options_.pmem_read_guard == PmemReadGuard::kAuto && pool_->real_pmem());
  Status s = OpenPmemTable(pool_.get(), options_.comparator, number, layout, offset, size, verify_checksum,
                           options_.pmem_hash_index, guard_reads, table);
  if (s.ok()) (*table)->disposer = this;
  return s;
}

Status TableStore::OpenSsd(uint64_t number, TableRef* table) {
  const std::string path = TablePath(number);
  std::unique_ptr<RandomAccessFile> file;
  Status s = fs_->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s.IsNotFound() ? Status::Corruption("table " + path, "missing") : s;
  ssd::SsdTableOptions table_options;
  table_options.comparator = options_.comparator;
  table_options.cache = block_cache_.get();
  table_options.use_mmap = options_.ssd_use_mmap;
  table_options.mapped_gets = options_.ssd_mapped_gets;
  table_options.verify_checksums = options_.paranoid_checks;
  table_options.io = io_.get();
  table_options.time_reads = options_.profile_compactions;
  std::unique_ptr<ssd::SsdTable> ssd_table;
  s = ssd::SsdTable::Open(table_options, std::move(file), number, path, &ssd_table);
  if (!s.ok()) return s;
  if (ssd_table->num_entries() == 0) return Status::Corruption("table " + path, "empty");
  const std::string smallest = ssd_table->smallest(), largest = ssd_table->largest();
  const uint64_t entries = ssd_table->num_entries(), size = ssd_table->file_size();
  *table = MakeSsdTable(number, size, std::move(ssd_table), smallest, largest, entries);
  (*table)->disposer = this;
  return Status::OK();
}

Status TableStore::NewTableFile(uint64_t number, std::unique_ptr<WritableFile>* file) {
  return fs_->NewTableFile(TablePath(number), async_table_writes_, file);
}

std::string TableStore::TablePath(uint64_t number) const { return TableFileName(dbname_, number); }

void TableStore::RemoveTableFile(uint64_t number) { (void)fs_->RemoveFile(TablePath(number)); }

void TableStore::Dispose(const TableMeta& table) {
  if (table.residence == Residence::kPmem) {
    pool_->Free(table.offset);  // a block or a table image (served in place: nothing cached)
  } else {
    const auto* ssd_table = static_cast<const ssd::SsdTable*>(table.table.get());
    block_cache_->EraseTable(table.number, ssd_table != nullptr ? ssd_table->num_blocks() : 0);
    RemoveTableFile(table.number);
  }
}

}  // namespace jigsaw
