#include "bench/engines.h"

#ifdef JIGSAW_BENCH_LEVELDB
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#endif
#ifdef JIGSAW_BENCH_ROCKSDB
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#endif

#include <filesystem>

#include "bench/idle_pool.h"
#include "jigsaw/db.h"
#include "jigsaw/table_file_writer.h"

namespace jigsaw::bench {

Options JigsawOptionsFor(const EngineConfig& config) {
  Options options;
  options.create_if_missing = true;
  options.pmem_path = config.pmem_path;
  options.pmem_pool_size = config.pmem_pool_size;
  options.memtable_size = config.memtable_size;
  options.pmem_emulation = config.pmem_emulation;
  options.nvm_timing = config.nvm_timing;
  options.storage_mode = config.storage_mode;
  options.pmem_budget = config.pmem_budget;
  options.ssd_use_mmap = config.ssd_use_mmap;
  options.ssd_mapped_gets = config.ssd_mapped_gets;
  options.paranoid_checks = config.paranoid_checks;
  options.reuse_log_files = config.reuse_log_files;
  options.wal_size_limit_mb = config.wal_size_limit_mb;
  options.concurrent_memtable_writes = config.concurrent_memtable_writes;
  options.read_triggered_compactions = config.read_triggered_compactions;
  options.ssd_block_size = config.ssd_block_size;
  options.ssd_io = config.ssd_io;
  options.table_format = config.table_format;
  options.compression = config.compression == "none"   ? Compression::kNone
                        : config.compression == "zstd" ? Compression::kZstd
                                                       : Compression::kLZ4;
  options.profile_compactions = config.profile_compactions;
  if (config.level1_size != 0) options.level1_size = config.level1_size;
  if (config.block_size != 0) options.table_size = config.block_size;
  options.block_cache_capacity = config.block_cache_capacity;
  options.bloom_bits_per_key = config.bloom_bits_per_key;
  return options;
}

namespace {

// Iterators kept between seeks and short scans by engines that can refresh
// one to the latest writes (JigsawDB's and RocksDB's Iterator::Refresh), as
// LMDB's engine keeps its cursors: an operation takes one of its thread's
// idle ones, refreshed, or a new one (`make`), and gives it back. Destroy
// the pool before its database.
template <typename It>
class IteratorPool {
 public:
  template <typename Make>
  std::unique_ptr<It> Take(Make&& make) {
    std::unique_ptr<It> it;
    if (!idle_.Take(&it) || it == nullptr || !it->Refresh().ok()) it.reset(make());
    return it;
  }
  void GiveBack(std::unique_ptr<It> it) { idle_.GiveBack(std::move(it)); }
  // Idle iterators pin what they last read: dropped after each benchmark.
  void Clear() {
    idle_.Drain([](std::unique_ptr<It>& it) { it.reset(); });
  }

 private:
  IdlePool<std::unique_ptr<It>> idle_;
};

class JigsawEngine final : public Engine {
 public:
  static std::unique_ptr<Engine> Open(const EngineConfig& config, std::string* error) {
    const Options options = JigsawOptionsFor(config);
    auto engine = std::make_unique<JigsawEngine>();
    engine->options_ = options;
    engine->dir_ = config.dir;
    Status s = DB::Open(options, config.dir, &engine->db_);
    if (!s.ok()) {
      *error = s.ToString();
      return nullptr;
    }
    return engine;
  }
  const char* name() const override { return "jigsaw"; }
  std::string Property(const std::string& name) override {
    std::string value;
    return db_->GetProperty(name, &value) ? value : "";
  }
  std::string Describe() override {
    std::string device;
    db_->GetProperty("jigsaw.pmem-device", &device);
    return device.substr(0, device.find('\n'));
  }
  std::string Put(std::string_view key, std::string_view value, bool sync) override {
    WriteOptions w;
    w.sync = sync;
    Status s = db_->Put(w, Slice(key.data(), key.size()), Slice(value.data(), value.size()));
    return s.ok() ? "" : s.ToString();
  }
  std::string Delete(const std::string& key, bool sync) override {
    WriteOptions w;
    w.sync = sync;
    Status s = db_->Delete(w, key);
    return s.ok() ? "" : s.ToString();
  }
  int Get(std::string_view key, std::string* value) override {
    Status s = db_->Get(ReadOptions(), Slice(key.data(), key.size()), value);
    return s.ok() ? 1 : s.IsNotFound() ? 0 : -1;
  }
  int64_t MultiGet(const std::vector<std::string>& keys) override {
    std::vector<Slice> slices(keys.begin(), keys.end());
    int64_t found = 0;
    for (const Status& s : db_->MultiGet(ReadOptions(), slices, &values_)) {
      if (!s.ok() && !s.IsNotFound()) return -1;
      found += s.ok() ? 1 : 0;
    }
    return found;
  }
  uint64_t Scan(uint64_t limit, bool reverse, uint64_t* bytes) override {
    return ScanIterator(db_->NewIterator(ReadOptions()).get(), limit, reverse, bytes);
  }
  bool SeekAndRead(const std::string& key) override {
    auto it = TakeIterator();
    it->Seek(key);
    const bool found = it->Valid() && it->value().size() < (size_t{1} << 40);
    GiveBack(std::move(it));
    return found;
  }
  uint64_t ScanFrom(const std::string& key, uint64_t count, uint64_t* bytes) override {
    auto it = TakeIterator();
    const uint64_t n = ScanForward(it.get(), key, count, bytes);
    GiveBack(std::move(it));
    return n;
  }
  void EndOfBenchmark() override { iterators_.Clear(); }
  std::string CompactAll() override {
    Status s = db_->CompactRange(nullptr, nullptr);
    return s.ok() ? "" : s.ToString();
  }
  // Files of up to 64 MiB in <dir>.ingest, moved into the database.
  std::string IngestSorted(uint64_t num,
                           const std::function<void(uint64_t, std::string*, std::string_view*)>& entry) override {
    const std::string dir = dir_ + ".ingest";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return dir + ": " + ec.message();
    TableFileWriter writer(options_);
    std::vector<std::string> files;
    std::string key;
    std::string_view value;
    uint64_t bytes = 0;
    Status s;
    for (uint64_t i = 0; i < num && s.ok(); ++i) {
      entry(i, &key, &value);
      if (files.empty() || bytes >= (uint64_t{64} << 20)) {
        if (!files.empty()) s = writer.Finish();
        files.push_back(dir + "/" + std::to_string(files.size()) + ".jst");
        if (s.ok()) s = writer.Open(files.back());
        bytes = 0;
      }
      if (s.ok()) s = writer.Put(key, Slice(value.data(), value.size()));
      bytes += key.size() + value.size();
    }
    if (s.ok() && !files.empty()) s = writer.Finish();
    IngestExternalFileOptions move;
    move.move_files = true;
    if (s.ok()) s = db_->IngestExternalFile(files, move);
    std::filesystem::remove_all(dir, ec);
    return s.ok() ? "" : s.ToString();
  }
  std::string Stats() override {
    std::string levels, stalls, syncs, cache, ssd, writes, read_triggered;
    db_->GetProperty("jigsaw.levels", &levels);
    db_->GetProperty("jigsaw.stalls", &stalls);
    db_->GetProperty("jigsaw.read-triggered-compactions", &read_triggered);
    db_->GetProperty("jigsaw.write-groups", &writes);
    db_->GetProperty("jigsaw.sync-stats", &syncs);
    std::string io;
    db_->GetProperty("jigsaw.block-cache", &cache);
    db_->GetProperty("jigsaw.ssd-bytes", &ssd);
    db_->GetProperty("jigsaw.io", &io);
    return levels + stalls + " read_triggered_compactions " + read_triggered + "\nwrites: " + writes + "\nSSD: " + syncs + ", table bytes " + ssd + "\nblock cache: " + cache + "\nread-ahead: " + io;
  }

  std::unique_ptr<Iterator> TakeIterator() {
    return iterators_.Take([this] { return db_->NewIterator(ReadOptions()).release(); });
  }
  void GiveBack(std::unique_ptr<Iterator> it) { iterators_.GiveBack(std::move(it)); }

  Options options_;
  std::string dir_;
  std::unique_ptr<DB> db_;
  std::vector<std::string> values_;  // MultiGet results, reused
  IteratorPool<Iterator> iterators_;  // declared after db_: destroyed before it
};

// LevelDB and RocksDB share the shape of their API; one adapter serves both.
// Lib supplies the library's types and how to open it.
template <typename Lib>
class PeerEngine final : public Engine {
 public:
  static std::unique_ptr<Engine> Open(const EngineConfig& config, std::string* error) {
    auto engine = std::make_unique<PeerEngine>();
    std::string message = Lib::Open(config, &engine->lib_);
    if (!message.empty()) {
      *error = message;
      return nullptr;
    }
    return engine;
  }
  const char* name() const override { return Lib::kName; }
  std::string Put(std::string_view key, std::string_view value, bool sync) override {
    typename Lib::WriteOptions w;
    w.sync = sync;
    auto s = lib_.db->Put(w, typename Lib::Slice(key.data(), key.size()), typename Lib::Slice(value.data(), value.size()));
    return s.ok() ? "" : s.ToString();
  }
  std::string Delete(const std::string& key, bool sync) override {
    typename Lib::WriteOptions w;
    w.sync = sync;
    auto s = lib_.db->Delete(w, key);
    return s.ok() ? "" : s.ToString();
  }
  int Get(std::string_view key, std::string* value) override {
    auto s = lib_.db->Get(typename Lib::ReadOptions(), typename Lib::Slice(key.data(), key.size()), value);
    return s.ok() ? 1 : s.IsNotFound() ? 0 : -1;
  }
  int64_t MultiGet(const std::vector<std::string>& keys) override {
    int64_t found = 0;
    if constexpr (Lib::kHasMultiGet) {  // RocksDB
      std::vector<typename Lib::Slice> slices(keys.begin(), keys.end());
      for (const auto& s : lib_.db->MultiGet(typename Lib::ReadOptions(), slices, &values_)) {
        if (!s.ok() && !s.IsNotFound()) return -1;
        found += s.ok() ? 1 : 0;
      }
    } else {  // LevelDB has none
      std::string value;
      for (const std::string& key : keys) {
        const int hit = Get(key, &value);
        if (hit < 0) return -1;
        found += hit;
      }
    }
    return found;
  }
  uint64_t Scan(uint64_t limit, bool reverse, uint64_t* bytes) override {
    std::unique_ptr<typename Lib::Iterator> it(lib_.db->NewIterator(typename Lib::ReadOptions()));
    return ScanIterator(it.get(), limit, reverse, bytes);
  }
  bool SeekAndRead(const std::string& key) override {
    auto it = TakeIterator();
    it->Seek(key);
    const bool found = it->Valid() && it->value().size() < (size_t{1} << 40);
    GiveBack(std::move(it));
    return found;
  }
  uint64_t ScanFrom(const std::string& key, uint64_t count, uint64_t* bytes) override {
    auto it = TakeIterator();
    const uint64_t n = ScanForward(it.get(), key, count, bytes);
    GiveBack(std::move(it));
    return n;
  }
  void EndOfBenchmark() override { iterators_.Clear(); }
  std::string CompactAll() override {
    const auto s = Lib::CompactAll(lib_.db.get());
    return s.ok() ? "" : s.ToString();
  }
  std::string Stats() override {
    std::string stats;
    if (Lib::kStatsProperty[0] != '\0') lib_.db->GetProperty(Lib::kStatsProperty, &stats);
    return stats;
  }

 private:
  // RocksDB's iterators are reused as JigsawDB's (IteratorPool); LevelDB's
  // cannot be refreshed: a new one per operation.
  std::unique_ptr<typename Lib::Iterator> TakeIterator() {
    auto make = [this] { return lib_.db->NewIterator(typename Lib::ReadOptions()); };
    if constexpr (Lib::kHasRefresh) return iterators_.Take(make);
    return std::unique_ptr<typename Lib::Iterator>(make());
  }
  void GiveBack(std::unique_ptr<typename Lib::Iterator> it) {
    if constexpr (Lib::kHasRefresh) iterators_.GiveBack(std::move(it));
  }

  typename Lib::State lib_;
  std::vector<std::string> values_;  // MultiGet results, reused
  IteratorPool<typename Lib::Iterator> iterators_;  // declared after lib_: destroyed before it
};

#ifdef JIGSAW_BENCH_LEVELDB
struct LevelDBLib {
  static constexpr const char* kName = "leveldb";
  static constexpr const char* kStatsProperty = "leveldb.stats";
  using WriteOptions = leveldb::WriteOptions;
  using ReadOptions = leveldb::ReadOptions;
  using Iterator = leveldb::Iterator;
  using Slice = leveldb::Slice;
  static constexpr bool kHasMultiGet = false;
  static constexpr bool kHasRefresh = false;
  struct State {
    // Destroyed in reverse order: the DB before its cache and filter.
    std::unique_ptr<leveldb::Cache> cache;
    std::unique_ptr<const leveldb::FilterPolicy> filter;
    std::unique_ptr<leveldb::DB> db;
  };
  static std::string Open(const EngineConfig& config, State* state) {
    state->cache.reset(leveldb::NewLRUCache(config.block_cache_capacity));  // the same size as JigsawDB's
    if (config.bloom_bits_per_key > 0) state->filter.reset(leveldb::NewBloomFilterPolicy(config.bloom_bits_per_key));
    leveldb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = config.memtable_size;
    options.compression = config.compression == "none" ? leveldb::kNoCompression : leveldb::kSnappyCompression;
    options.block_cache = state->cache.get();
    options.filter_policy = state->filter.get();
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(options, config.dir, &db);
    state->db.reset(db);
    return s.ok() ? "" : s.ToString();
  }
  static leveldb::Status CompactAll(leveldb::DB* db) {
    db->CompactRange(nullptr, nullptr);  // returns nothing
    return leveldb::Status::OK();
  }
};

#endif  // JIGSAW_BENCH_LEVELDB

#ifdef JIGSAW_BENCH_ROCKSDB
struct RocksDBLib {
  static constexpr const char* kName = "rocksdb";
  static constexpr const char* kStatsProperty = "rocksdb.stats";
  using WriteOptions = rocksdb::WriteOptions;
  using ReadOptions = rocksdb::ReadOptions;
  using Iterator = rocksdb::Iterator;
  using Slice = rocksdb::Slice;
  static constexpr bool kHasMultiGet = true;
  static constexpr bool kHasRefresh = true;
  struct State {
    std::unique_ptr<rocksdb::DB> db;
  };
  static std::string Open(const EngineConfig& config, State* state) {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = config.memtable_size;
    options.compression = config.compression == "none"   ? rocksdb::kNoCompression
                          : config.compression == "lz4"  ? rocksdb::kLZ4Compression
                          : config.compression == "zstd" ? rocksdb::kZSTD
                                                         : rocksdb::kSnappyCompression;
    options.max_background_jobs = 2;
    rocksdb::BlockBasedTableOptions table;
    if (config.bloom_bits_per_key > 0) table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(config.bloom_bits_per_key));
    table.block_cache = rocksdb::NewLRUCache(config.block_cache_capacity);  // the same size as JigsawDB's
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, config.dir, &db);
    state->db.reset(db);
    return s.ok() ? "" : s.ToString();
  }
  static rocksdb::Status CompactAll(rocksdb::DB* db) {
    return db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr);
  }
};

#endif  // JIGSAW_BENCH_ROCKSDB

}  // namespace

bool EngineBuiltIn(const std::string& name) {
  if (name == "jigsaw") return true;
#ifdef JIGSAW_BENCH_RAFT
  if (name == "jigsaw-raft") return true;
#endif
#ifdef JIGSAW_BENCH_LEVELDB
  if (name == "leveldb") return true;
#endif
#ifdef JIGSAW_BENCH_ROCKSDB
  if (name == "rocksdb") return true;
#endif
#ifdef JIGSAW_BENCH_LMDB
  if (name == "lmdb") return true;
#endif
  return false;
}

std::unique_ptr<Engine> OpenEngine(const std::string& name, const EngineConfig& config, std::string* error) {
  if (name == "jigsaw") return JigsawEngine::Open(config, error);
#ifdef JIGSAW_BENCH_RAFT
  if (name == "jigsaw-raft") return OpenRaftEngine(config, error);
#endif
#ifdef JIGSAW_BENCH_LEVELDB
  if (name == "leveldb") return PeerEngine<LevelDBLib>::Open(config, error);
#endif
#ifdef JIGSAW_BENCH_ROCKSDB
  if (name == "rocksdb") return PeerEngine<RocksDBLib>::Open(config, error);
#endif
#ifdef JIGSAW_BENCH_LMDB
  if (name == "lmdb") return OpenLmdbEngine(config, error);
#endif
  if (name == "leveldb" || name == "rocksdb" || name == "lmdb" || name == "jigsaw-raft") {
    *error = name + " was not found when this binary was built (see scripts/install-deps.sh)";
  } else {
    *error = "unknown engine '" + name + "' (choose jigsaw, jigsaw-raft, leveldb, rocksdb or lmdb)";
  }
  return nullptr;
}

void DestroyEngine(const std::string& name, const EngineConfig& config) {
  if (name == "jigsaw") {
    Options options;
    options.pmem_path = config.pmem_path;
    (void)DestroyDB(config.dir, options);
  }
  std::error_code ec;
  std::filesystem::remove_all(config.dir, ec);
}

std::unique_ptr<Engine> ReopenEngine(const std::string& name, const EngineConfig& config, bool destroy,
                                     std::string* error) {
  if (destroy) DestroyEngine(name, config);
  std::filesystem::create_directories(config.dir);
  return OpenEngine(name, config, error);
}

}  // namespace jigsaw::bench
