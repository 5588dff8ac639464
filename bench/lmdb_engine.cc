// LMDB (Debian's liblmdb 0.9) as a jigsaw_bench peer: a copy-on-write B+tree
// in one memory-mapped file, one writer at a time, readers never blocked.
//
// Settings (docs/performance.md, "LMDB settings"):
//   - every Put/Delete is its own write transaction (jigsaw_bench writes one
//     key per operation; it has no write batches);
//   - sync=false commits with MDB_NOSYNC (the commit is in the page cache:
//     it survives a killed process, not a power loss -- JigsawDB's and the
//     LSM peers' sync=false); sync=true commits durably (LMDB's own commit:
//     data pages flushed, then the meta page written and flushed);
//   - MDB_WRITEMAP (pages written in place through the map, no malloc'd
//     page copies and write(2)s): writes 3-5x faster at 1M entries on
//     /dev/shm, and LMDB's durable commit stays durable with it (msync of
//     the data, then of the meta page). With MDB_NOSYNC a power loss may
//     corrupt the file rather than only lose the last commits; sync=false
//     promises nothing across a power loss anyway. The data file is
//     extended (sparse) to the map size at open;
//   - MDB_NORDAHEAD, MDB_NOTLS (read transactions are pooled objects any
//     thread may take), a map sized from the workload (kMapFactor).
// Reads use a pool of read-only transactions, each reset after an operation
// and renewed (a fresh snapshot) before the next, with a cursor kept beside
// it for scans and seeks.
#include <lmdb.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "bench/engines.h"
#include "bench/idle_pool.h"

namespace jigsaw::bench {

namespace {

// The map (LMDB's upper bound on the file's size) is kMapFactor times the
// workload's key + value bytes, at least kMinMapSize: B+tree pages half full
// after random inserts, page headers, the free list and the pages a
// copy-on-write commit keeps for readers of older snapshots stay well below
// it. A write that finds the map full fails with MapFull()'s message.
constexpr uint64_t kMapFactor = 16;
constexpr uint64_t kMinMapSize = uint64_t{1} << 30;
constexpr unsigned kMaxReaders = 256;  // pooled read txns: threads (<= 64) plus readers of iterators

std::string LmdbError(const char* what, int rc) { return std::string("LMDB ") + what + ": " + mdb_strerror(rc); }

MDB_val Val(std::string_view s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }

class LmdbEngine final : public Engine {
 public:
  static std::unique_ptr<Engine> Open(const EngineConfig& config, std::string* error) {
    auto engine = std::make_unique<LmdbEngine>();
    const std::string message = engine->OpenEnv(config);
    if (!message.empty()) {
      *error = message;
      return nullptr;
    }
    return engine;
  }

  // Contract: no operation is in flight (every pooled transaction is idle).
  ~LmdbEngine() override {
    idle_.Drain([](Reader& r) {
      if (r.cursor != nullptr) mdb_cursor_close(r.cursor);
      mdb_txn_abort(r.txn);
    });
    if (env_ != nullptr) mdb_env_close(env_);
  }

  const char* name() const override { return "lmdb"; }

  std::string Describe() override {
    int major = 0, minor = 0, patch = 0;
    mdb_version(&major, &minor, &patch);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "LMDB %d.%d.%d, map %" PRIu64
                  " MiB, MDB_WRITEMAP|MDB_NORDAHEAD|MDB_NOTLS, a transaction per write, MDB_NOSYNC unless sync",
                  major, minor, patch, map_size_ >> 20);
    return line;
  }

  std::string Put(std::string_view key, std::string_view value, bool sync) override {
    return Write(sync, [&](MDB_txn* txn) {
      MDB_val k = Val(key), v = Val(value);
      return mdb_put(txn, dbi_, &k, &v, 0);
    });
  }

  std::string Delete(const std::string& key, bool sync) override {
    return Write(sync, [&](MDB_txn* txn) {
      MDB_val k = Val(key);
      const int rc = mdb_del(txn, dbi_, &k, nullptr);
      return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;  // deleting an absent key is not an error
    });
  }

  int Get(std::string_view key, std::string* value) override {
    Reader r;
    if (Checkout(&r) != MDB_SUCCESS) return -1;
    MDB_val k = Val(key), v;
    const int rc = mdb_get(r.txn, dbi_, &k, &v);
    if (rc == MDB_SUCCESS) value->assign(static_cast<const char*>(v.mv_data), v.mv_size);
    Return(r);
    return rc == MDB_SUCCESS ? 1 : rc == MDB_NOTFOUND ? 0 : -1;
  }

  // All keys from one snapshot (like RocksDB's MultiGet); values copied out.
  int64_t MultiGet(const std::vector<std::string>& keys) override {
    Reader r;
    if (Checkout(&r) != MDB_SUCCESS) return -1;
    int64_t found = 0;
    std::string value;
    for (const std::string& key : keys) {
      MDB_val k = Val(key), v;
      const int rc = mdb_get(r.txn, dbi_, &k, &v);
      if (rc == MDB_SUCCESS) {
        value.assign(static_cast<const char*>(v.mv_data), v.mv_size);  // copied out, as the others do
        ++found;
      } else if (rc != MDB_NOTFOUND) {
        found = -1;
        break;
      }
    }
    Return(r);
    return found;
  }

  uint64_t Scan(uint64_t limit, bool reverse, uint64_t* bytes) override {
    Reader r;
    if (CheckoutCursor(&r) != MDB_SUCCESS) return 0;
    uint64_t n = 0;
    MDB_val k, v;
    for (int rc = mdb_cursor_get(r.cursor, &k, &v, reverse ? MDB_LAST : MDB_FIRST); rc == MDB_SUCCESS && n < limit;
         rc = mdb_cursor_get(r.cursor, &k, &v, reverse ? MDB_PREV : MDB_NEXT), ++n) {
      *bytes += k.mv_size + v.mv_size;
    }
    Return(r);
    return n;
  }

  bool SeekAndRead(const std::string& key) override {
    Reader r;
    if (CheckoutCursor(&r) != MDB_SUCCESS) return false;
    MDB_val k = Val(key), v;
    const bool found = mdb_cursor_get(r.cursor, &k, &v, MDB_SET_RANGE) == MDB_SUCCESS;
    Return(r);
    return found;
  }

  uint64_t ScanFrom(const std::string& key, uint64_t count, uint64_t* bytes) override {
    Reader r;
    if (CheckoutCursor(&r) != MDB_SUCCESS) return 0;
    uint64_t n = 0;
    MDB_val k = Val(key), v;
    for (int rc = mdb_cursor_get(r.cursor, &k, &v, MDB_SET_RANGE); rc == MDB_SUCCESS && n < count;
         rc = mdb_cursor_get(r.cursor, &k, &v, MDB_NEXT), ++n) {
      *bytes += k.mv_size + v.mv_size;
    }
    Return(r);
    return n;
  }

  // A B+tree has nothing to compact in place (mdb_env_copy2's compaction
  // writes a copy elsewhere): a no-op.
  std::string CompactAll() override { return ""; }

  std::string Stats() override {
    MDB_stat st{};
    MDB_envinfo info{};
    mdb_env_stat(env_, &st);
    mdb_env_info(env_, &info);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "entries %zu, depth %u, pages: %zu branch, %zu leaf, %zu overflow; file %zu MiB of a %" PRIu64
                  " MiB map; readers %u of %u",
                  st.ms_entries, st.ms_depth, st.ms_branch_pages, st.ms_leaf_pages, st.ms_overflow_pages,
                  ((info.me_last_pgno + 1) * st.ms_psize) >> 20, map_size_ >> 20, info.me_numreaders,
                  info.me_maxreaders);
    return line;
  }

 private:
  // A pooled read-only transaction and its cursor (nullptr until needed).
  struct Reader {
    MDB_txn* txn = nullptr;
    MDB_cursor* cursor = nullptr;
  };

  std::string OpenEnv(const EngineConfig& config) {
    map_size_ = std::max(kMinMapSize, kMapFactor * config.data_bytes);
    map_size_ = (map_size_ + (uint64_t{64} << 20) - 1) & ~((uint64_t{64} << 20) - 1);  // whole 64 MiB
    int rc = mdb_env_create(&env_);
    if (rc != MDB_SUCCESS) {
      env_ = nullptr;
      return LmdbError("mdb_env_create", rc);
    }
    if ((rc = mdb_env_set_mapsize(env_, map_size_)) != MDB_SUCCESS) return LmdbError("mdb_env_set_mapsize", rc);
    if ((rc = mdb_env_set_maxreaders(env_, kMaxReaders)) != MDB_SUCCESS) {
      return LmdbError("mdb_env_set_maxreaders", rc);
    }
    if ((rc = mdb_env_open(env_, config.dir.c_str(), kEnvFlags | MDB_NOSYNC, 0644)) != MDB_SUCCESS) {
      return LmdbError(("mdb_env_open " + config.dir).c_str(), rc);
    }
    MDB_txn* txn = nullptr;
    if ((rc = mdb_txn_begin(env_, nullptr, 0, &txn)) != MDB_SUCCESS) return LmdbError("mdb_txn_begin", rc);
    if ((rc = mdb_dbi_open(txn, nullptr, 0, &dbi_)) != MDB_SUCCESS) {
      mdb_txn_abort(txn);
      return LmdbError("mdb_dbi_open", rc);
    }
    if ((rc = mdb_txn_commit(txn)) != MDB_SUCCESS) return LmdbError("mdb_txn_commit", rc);
    return "";
  }

  // Runs `op` in a write transaction of its own and commits it, durably if
  // `sync`. Writers are serialized here (LMDB serializes them too): the
  // environment's MDB_NOSYNC flag is switched only between transactions, by
  // the one writer. Readers read the environment's flags when they renew a
  // snapshot, so mixing sync and non-sync writes while reads run is a data
  // race on that word (jigsaw_bench never does: its sync writes are
  // fillsync's, alone).
  template <typename Op>
  std::string Write(bool sync, Op op) {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (sync != durable_) {
      const int rc = mdb_env_set_flags(env_, MDB_NOSYNC, sync ? 0 : 1);
      if (rc != MDB_SUCCESS) return LmdbError("mdb_env_set_flags", rc);
      durable_ = sync;
    }
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
    if (rc != MDB_SUCCESS) return LmdbError("mdb_txn_begin", rc);
    rc = op(txn);
    if (rc != MDB_SUCCESS) {
      mdb_txn_abort(txn);
      return rc == MDB_MAP_FULL ? MapFull() : LmdbError("write", rc);
    }
    rc = mdb_txn_commit(txn);
    if (rc == MDB_MAP_FULL) return MapFull();
    return rc == MDB_SUCCESS ? "" : LmdbError("mdb_txn_commit", rc);
  }

  std::string MapFull() const {
    return "LMDB map full: the database outgrew its map of " + std::to_string(map_size_ >> 20) + " MiB (" +
           std::to_string(kMapFactor) + "x the workload's key and value bytes, at least " +
           std::to_string(kMinMapSize >> 20) + " MiB; raise kMapFactor in bench/lmdb_engine.cc)";
  }

  // Takes an idle read transaction from the pool (or begins one) and
  // renews it: a snapshot of the latest commit. Give it back with Return.
  int Checkout(Reader* r) {
    if (!idle_.Take(r)) *r = Reader();
    if (r->txn == nullptr) {
      const int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &r->txn);
      if (rc != MDB_SUCCESS) r->txn = nullptr;
      return rc;
    }
    const int rc = mdb_txn_renew(r->txn);
    if (rc != MDB_SUCCESS) Discard(r);
    return rc;
  }

  // Checkout, with the reader's cursor bound to its renewed transaction.
  int CheckoutCursor(Reader* r) {
    int rc = Checkout(r);
    if (rc != MDB_SUCCESS) return rc;
    rc = r->cursor == nullptr ? mdb_cursor_open(r->txn, dbi_, &r->cursor) : mdb_cursor_renew(r->txn, r->cursor);
    if (rc != MDB_SUCCESS) Discard(r);
    return rc;
  }

  // Ends the reader's snapshot (its reader slot stays reserved) and pools it.
  void Return(const Reader& r) {
    mdb_txn_reset(r.txn);
    idle_.GiveBack(r);
  }

  // Frees a reader that failed to renew.
  static void Discard(Reader* r) {
    if (r->cursor != nullptr) mdb_cursor_close(r->cursor);
    if (r->txn != nullptr) mdb_txn_abort(r->txn);
    *r = Reader();
  }

  static constexpr unsigned kEnvFlags = MDB_WRITEMAP | MDB_NORDAHEAD | MDB_NOTLS;

  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  uint64_t map_size_ = 0;
  std::mutex write_mu_;
  bool durable_ = false;  // MDB_NOSYNC is off; guarded by write_mu_
  IdlePool<Reader> idle_;  // reset read transactions, each thread's own
};

}  // namespace

std::unique_ptr<Engine> OpenLmdbEngine(const EngineConfig& config, std::string* error) {
  return LmdbEngine::Open(config, error);
}

}  // namespace jigsaw::bench
