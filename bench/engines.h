// The key-value engines jigsaw_bench drives: JigsawDB and the real LevelDB
// and RocksDB libraries, behind one small interface, configured alike
// (memtable size, no compression, 10-bit Bloom filters, same sync setting),
// and LMDB (a B+tree: bench/lmdb_engine.cc, its own settings).
#ifndef JIGSAW_BENCH_ENGINES_H_
#define JIGSAW_BENCH_ENGINES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jigsaw/options.h"

namespace jigsaw::bench {

struct EngineConfig {
  std::string dir;        // database directory
  std::string pmem_path;  // JigsawDB pool (ignored by peers)
  uint64_t pmem_pool_size = uint64_t{4} << 30;
  size_t memtable_size = 4 << 20;
  int bloom_bits_per_key = 10;  // every engine's Bloom filters (0: none)
  bool use_existing = false;
  jigsaw::PmemEmulation pmem_emulation = jigsaw::PmemEmulation::kAuto;  // JigsawDB only
  jigsaw::NvmTimingModel nvm_timing;                                      // JigsawDB only
  jigsaw::StorageMode storage_mode = jigsaw::StorageMode::kPmem;          // JigsawDB only
  uint64_t pmem_budget = 0;                                               // JigsawDB hybrid
  bool ssd_use_mmap = false;                                              // JigsawDB hybrid
  bool ssd_mapped_gets = true;                                            // JigsawDB hybrid/disk: Get via a guarded mapping
  bool paranoid_checks = true;                                            // JigsawDB: SSD block CRCs checked on load
  uint64_t wal_size_limit_mb = 0;  // JigsawDB: flushed logs kept for the change feed (0: none)
  bool reuse_log_files = true;                                            // JigsawDB disk: write new logs over old ones
  bool concurrent_memtable_writes = true;                                 // JigsawDB
  bool read_triggered_compactions = true;                                 // JigsawDB
  size_t ssd_block_size = 8 << 10;                                        // JigsawDB hybrid
  size_t block_cache_capacity = size_t{64} << 20;                         // JigsawDB hybrid
  jigsaw::SsdIo ssd_io = jigsaw::SsdIo::kAuto;  // JigsawDB
  uint64_t level1_size = 0;  // JigsawDB: 0 = the engine's default
  size_t block_size = 0;     // JigsawDB: target bytes of a pmem block / SSD table; 0 = default
  jigsaw::TableFormat table_format = jigsaw::TableFormat::kKeySet;  // JigsawDB
  bool profile_compactions = false;                                  // JigsawDB
  uint64_t data_bytes = 0;  // LMDB: the workload's key + value bytes (sizes its map); 0 = unknown
  // Table compression: "none", "default" (each engine's own: JigsawDB LZ4,
  // LevelDB and RocksDB Snappy), "lz4" or "zstd" (JigsawDB and RocksDB that
  // codec, LevelDB Snappy, its only one). LMDB never compresses.
  std::string compression = "none";
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;
  // One line on the medium the engine runs on, or "".
  virtual std::string Describe() { return ""; }
  // Empty string on success, else a message.
  virtual std::string Put(std::string_view key, std::string_view value, bool sync) = 0;
  virtual std::string Delete(const std::string& key, bool sync) = 0;
  // 1 found, 0 not found, -1 error.
  virtual int Get(std::string_view key, std::string* value) = 0;
  // Looks up every key (MultiGet where the engine has one, else a loop of
  // Gets); returns how many were found, or -1 on an error.
  virtual int64_t MultiGet(const std::vector<std::string>& keys) = 0;
  // Scans up to `limit` entries forward (or backward); returns entries and
  // adds key + value bytes to *bytes.
  virtual uint64_t Scan(uint64_t limit, bool reverse, uint64_t* bytes) = 0;
  // Seeks to `key` and reads the entry found; returns true if one was found.
  virtual bool SeekAndRead(const std::string& key) = 0;
  // Seeks to `key` and reads up to `count` entries; returns how many, adds
  // their bytes to *bytes.
  virtual uint64_t ScanFrom(const std::string& key, uint64_t count, uint64_t* bytes) = 0;
  // A benchmark ended: drops what the engine kept between its operations
  // (JigsawDB's pooled iterators, which pin the data they last read).
  virtual void EndOfBenchmark() {}
  // Compacts the whole key range (db_bench's "compact"); "" on success.
  virtual std::string CompactAll() = 0;
  // A human-readable line of engine statistics (may be empty).
  virtual std::string Stats() = 0;
  // An engine property ("" if the engine has none by that name).
  virtual std::string Property(const std::string&) { return ""; }
  // Bulk load: writes the `num` entries entry(0..num-1) -- keys in
  // increasing order -- into table files outside the database, then adds
  // them to it (JigsawDB: TableFileWriter and IngestExternalFile). "" on
  // success, else a message (engines without bulk ingest here say so).
  virtual std::string IngestSorted(uint64_t num,
                                   const std::function<void(uint64_t, std::string*, std::string_view*)>& entry) {
    (void)num, (void)entry;
    return std::string("ingest is not measured for ") + name();
  }
};

// Scans up to `limit` entries of any LevelDB-shaped iterator.
template <typename It>
inline uint64_t ScanIterator(It* it, uint64_t limit, bool reverse, uint64_t* bytes) {
  uint64_t n = 0;
  for (reverse ? it->SeekToLast() : it->SeekToFirst(); it->Valid() && n < limit; ++n) {
    *bytes += it->key().size() + it->value().size();
    if (reverse) {
      it->Prev();
    } else {
      it->Next();
    }
  }
  return n;
}

// Seek, then read up to `count` entries forward.
template <typename It>
inline uint64_t ScanForward(It* it, const std::string& key, uint64_t count, uint64_t* bytes) {
  uint64_t n = 0;
  for (it->Seek(key); it->Valid() && n < count; it->Next(), ++n) *bytes += it->key().size() + it->value().size();
  return n;
}

// Opens (creating, or reusing if config.use_existing) an engine by name:
// "jigsaw", "jigsaw-raft", "leveldb", "rocksdb" or "lmdb". Returns nullptr
// with *error set.
std::unique_ptr<Engine> OpenEngine(const std::string& name, const EngineConfig& config, std::string* error);
// Whether engine `name` was built into this binary (the peers are optional
// at build time: bench/CMakeLists.txt).
bool EngineBuiltIn(const std::string& name);

// Opens LMDB in config.dir (bench/lmdb_engine.cc); as OpenEngine.
std::unique_ptr<Engine> OpenLmdbEngine(const EngineConfig& config, std::string* error);
// Opens "jigsaw-raft" (bench/raft_engine.cc): three ReplicatedDB replicas
// in config.dir, raft over loopback TCP, driven through the leader.
std::unique_ptr<Engine> OpenRaftEngine(const EngineConfig& config, std::string* error);
// The JigsawDB Options of a configuration (what "jigsaw" opens with).
jigsaw::Options JigsawOptionsFor(const EngineConfig& config);
// Deletes an engine's database.
void DestroyEngine(const std::string& name, const EngineConfig& config);
// Opens an engine in config.dir (created if missing), after deleting its
// database if `destroy`. nullptr with *error set on failure.
std::unique_ptr<Engine> ReopenEngine(const std::string& name, const EngineConfig& config, bool destroy,
                                     std::string* error);

}  // namespace jigsaw::bench

#endif  // JIGSAW_BENCH_ENGINES_H_
