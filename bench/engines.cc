#include "bench/engines.h"

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <filesystem>

#include "jigsaw/db.h"

namespace jigsaw::bench {

namespace {

class JigsawEngine final : public Engine {
 public:
  static std::unique_ptr<Engine> Open(const EngineConfig& config, std::string* error) {
    Options options;
    options.create_if_missing = true;
    options.pmem_path = config.pmem_path;
    options.pmem_pool_size = config.pmem_pool_size;
    options.memtable_size = config.memtable_size;
    auto engine = std::make_unique<JigsawEngine>();
    Status s = DB::Open(options, config.dir, &engine->db_);
    if (!s.ok()) {
      *error = s.ToString();
      return nullptr;
    }
    return engine;
  }
  const char* name() const override { return "jigsaw"; }
  std::string Put(const std::string& key, const std::string& value, bool sync) override {
    WriteOptions w;
    w.sync = sync;
    Status s = db_->Put(w, key, value);
    return s.ok() ? "" : s.ToString();
  }
  std::string Delete(const std::string& key, bool sync) override {
    WriteOptions w;
    w.sync = sync;
    Status s = db_->Delete(w, key);
    return s.ok() ? "" : s.ToString();
  }
  int Get(const std::string& key, std::string* value) override {
    Status s = db_->Get(ReadOptions(), key, value);
    return s.ok() ? 1 : s.IsNotFound() ? 0 : -1;
  }
  uint64_t Scan(uint64_t limit, bool reverse, uint64_t* bytes) override {
    auto it = db_->NewIterator(ReadOptions());
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
  bool SeekAndRead(const std::string& key) override {
    auto it = db_->NewIterator(ReadOptions());
    it->Seek(key);
    return it->Valid() && it->value().size() < (size_t{1} << 40);
  }
  std::string Stats() override {
    std::string levels, stalls;
    db_->GetProperty("jigsaw.levels", &levels);
    db_->GetProperty("jigsaw.stalls", &stalls);
    return levels + stalls;
  }

  std::unique_ptr<DB> db_;
};

class LevelDBEngine final : public Engine {
 public:
  static std::unique_ptr<Engine> Open(const EngineConfig& config, std::string* error) {
    auto engine = std::make_unique<LevelDBEngine>();
    engine->cache_.reset(leveldb::NewLRUCache(8 << 20));
    engine->filter_.reset(leveldb::NewBloomFilterPolicy(10));
    leveldb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = config.memtable_size;
    options.compression = leveldb::kNoCompression;
    options.block_cache = engine->cache_.get();
    options.filter_policy = engine->filter_.get();
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(options, config.dir, &db);
    if (!s.ok()) {
      *error = s.ToString();
      return nullptr;
    }
    engine->db_.reset(db);
    return engine;
  }
  ~LevelDBEngine() override { db_.reset(); }
  const char* name() const override { return "leveldb"; }
  std::string Put(const std::string& key, const std::string& value, bool sync) override {
    leveldb::WriteOptions w;
    w.sync = sync;
    leveldb::Status s = db_->Put(w, key, value);
    return s.ok() ? "" : s.ToString();
  }
  std::string Delete(const std::string& key, bool sync) override {
    leveldb::WriteOptions w;
    w.sync = sync;
    leveldb::Status s = db_->Delete(w, key);
    return s.ok() ? "" : s.ToString();
  }
  int Get(const std::string& key, std::string* value) override {
    leveldb::Status s = db_->Get(leveldb::ReadOptions(), key, value);
    return s.ok() ? 1 : s.IsNotFound() ? 0 : -1;
  }
  uint64_t Scan(uint64_t limit, bool reverse, uint64_t* bytes) override {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(leveldb::ReadOptions()));
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
  bool SeekAndRead(const std::string& key) override {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(leveldb::ReadOptions()));
    it->Seek(key);
    return it->Valid() && it->value().size() < (size_t{1} << 40);
  }
  std::string Stats() override {
    std::string stats;
    db_->GetProperty("leveldb.stats", &stats);
    return stats;
  }

 private:
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::DB> db_;
};

class RocksDBEngine final : public Engine {
 public:
  static std::unique_ptr<Engine> Open(const EngineConfig& config, std::string* error) {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = config.memtable_size;
    options.compression = rocksdb::kNoCompression;
    options.max_background_jobs = 2;
    rocksdb::BlockBasedTableOptions table;
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, config.dir, &db);
    if (!s.ok()) {
      *error = s.ToString();
      return nullptr;
    }
    auto engine = std::make_unique<RocksDBEngine>();
    engine->db_.reset(db);
    return engine;
  }
  const char* name() const override { return "rocksdb"; }
  std::string Put(const std::string& key, const std::string& value, bool sync) override {
    rocksdb::WriteOptions w;
    w.sync = sync;
    rocksdb::Status s = db_->Put(w, key, value);
    return s.ok() ? "" : s.ToString();
  }
  std::string Delete(const std::string& key, bool sync) override {
    rocksdb::WriteOptions w;
    w.sync = sync;
    rocksdb::Status s = db_->Delete(w, key);
    return s.ok() ? "" : s.ToString();
  }
  int Get(const std::string& key, std::string* value) override {
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, value);
    return s.ok() ? 1 : s.IsNotFound() ? 0 : -1;
  }
  uint64_t Scan(uint64_t limit, bool reverse, uint64_t* bytes) override {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
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
  bool SeekAndRead(const std::string& key) override {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    it->Seek(key);
    return it->Valid() && it->value().size() < (size_t{1} << 40);
  }
  std::string Stats() override { return ""; }

 private:
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace

std::unique_ptr<Engine> OpenEngine(const std::string& name, const EngineConfig& config, std::string* error) {
  if (name == "jigsaw") return JigsawEngine::Open(config, error);
  if (name == "leveldb") return LevelDBEngine::Open(config, error);
  if (name == "rocksdb") return RocksDBEngine::Open(config, error);
  *error = "unknown engine '" + name + "' (choose jigsaw, leveldb or rocksdb)";
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

}  // namespace jigsaw::bench
