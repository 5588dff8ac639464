// jigsaw_stress: many threads of random operations against an expected-state
// oracle that survives kill -9, and a driver that kills and restarts it in a
// loop, verifying the whole database after every restart (docs/stress.md).
//
// Only the public API is used. Each worker thread owns a contiguous range of
// keys and is its only writer, so the oracle knows, for each key, the one
// state an acknowledged history allows -- and, while a write is in flight,
// the one other state it may leave. The oracle is a file mapped shared
// (<db>.expected): what a worker stores there is in the page cache at once
// and survives the process being killed at any instruction.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/write_batch.h"
#include "tools/stress_file_system.h"

namespace jigsaw::stress {
namespace {

// A key's state in the oracle: bit 31 set if the key holds a value (clear:
// absent), bits 0-30 the key's write generation (its value is
// ValueOf(key, generation)). kNone: no write in flight.
constexpr uint32_t kPresent = 0x80000000u;
constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint64_t kMagic = 0x4a53545245535332ull;  // "JSTRESS2"

uint32_t Generation(uint32_t state) { return state & ~kPresent; }
bool Present(uint32_t state) { return (state & kPresent) != 0; }

// The expected state: a header, then for each key the state its acknowledged
// writes left (committed) and the state of a write in flight (pending).
struct Header {
  uint64_t magic;
  uint64_t keys;
  std::atomic<uint64_t> ops;            // operations done, over every run
  std::atomic<uint64_t> verifications;  // whole-database verifications passed
  std::atomic<uint64_t> runs;           // processes started on this database
  std::atomic<uint64_t> reopens;        // reopens after a write failed
  std::atomic<uint64_t> faults;         // file-system faults injected
};
struct KeyState {
  std::atomic<uint32_t> committed;
  std::atomic<uint32_t> pending;
};

class Oracle {
 public:
  // Maps (creating if missing) the oracle file for `keys` keys.
  static std::unique_ptr<Oracle> Open(const std::string& path, uint64_t keys, std::string* error) {
    auto oracle = std::unique_ptr<Oracle>(new Oracle());
    const size_t bytes = sizeof(Header) + keys * sizeof(KeyState);
    const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      *error = path + ": " + std::strerror(errno);
      if (fd >= 0) close(fd);
      return nullptr;
    }
    void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
      *error = path + ": mmap: " + std::strerror(errno);
      return nullptr;
    }
    oracle->map_ = map;
    oracle->bytes_ = bytes;
    oracle->header_ = static_cast<Header*>(map);
    oracle->keys_ = reinterpret_cast<KeyState*>(static_cast<char*>(map) + sizeof(Header));
    if (oracle->header_->magic != kMagic) {  // new: every key absent, generation 0
      oracle->header_->keys = keys;
      for (uint64_t k = 0; k < keys; ++k) {
        oracle->keys_[k].committed.store(0);
        oracle->keys_[k].pending.store(kNone);
      }
      oracle->header_->magic = kMagic;
    } else if (oracle->header_->keys != keys) {
      *error = path + ": made for " + std::to_string(oracle->header_->keys) + " keys, not " + std::to_string(keys);
      return nullptr;
    }
    return oracle;
  }
  ~Oracle() { munmap(map_, bytes_); }

  Header* header() { return header_; }
  KeyState& key(uint64_t k) { return keys_[k]; }
  uint64_t keys() const { return header_->keys; }

 private:
  Oracle() = default;
  void* map_ = nullptr;
  size_t bytes_ = 0;
  Header* header_ = nullptr;
  KeyState* keys_ = nullptr;
};

std::string KeyOf(uint64_t k) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "key%010" PRIu64, k);
  return buf;
}

// The value of generation g of key k: its key and generation, then filler
// of a length and byte both depend on (they vary, and any mix-up shows).
std::string ValueOf(uint64_t k, uint32_t g) {
  std::string v = std::to_string(k) + ":" + std::to_string(g) + ":";
  v.append(8 + (k * 7 + g * 13) % 200, static_cast<char>('a' + (k + g) % 26));
  return v;
}

// Whether a read of key k (status s, value v) shows `state`.
bool Shows(uint64_t k, uint32_t state, const Status& s, const std::string& v) {
  if (Present(state)) return s.ok() && v == ValueOf(k, Generation(state));
  return s.IsNotFound();
}

std::string Describe(uint32_t state) {
  if (state == kNone) return "none";
  return (Present(state) ? "value of generation " : "absent after generation ") + std::to_string(Generation(state));
}

struct Config {
  std::string db;
  std::string mode = "pmem";
  int threads = 4;
  uint64_t keys = 20000;
  double duration = 60;  // seconds
  uint64_t seed = 0;
  bool crash_loop = false;
  double kill_min = 2, kill_max = 12;  // seconds a run lives before the kill
  bool child = false;   // a run the crash loop started
  bool verify_only = false;
  bool fresh = false;  // crash loop: start from new databases, remove them after a clean end
  uint64_t pool_mb = 256;
  uint64_t memtable_kb = 0;  // 0: drawn at random per run
  uint64_t fs_error_one_in = 0;  // file-system errors: one write, sync, creation or rename in this many fails
  double full_every = 0;         // seconds between full-device episodes, on average (0: none)
  bool faults() const { return fs_error_one_in != 0 || full_every > 0; }
};

StorageMode ModeOf(const std::string& name) {
  if (name == "hybrid") return StorageMode::kHybrid;
  if (name == "disk") return StorageMode::kDisk;
  return StorageMode::kPmem;
}

// Options drawn from `rng`: sizes small enough that flushes, compactions
// and (in hybrid mode) migrations run all the time.
Options RandomOptions(const Config& config, std::mt19937_64* rng) {
  Options options;
  options.create_if_missing = true;
  options.storage_mode = ModeOf(config.mode);
  options.pmem_pool_size = config.pool_mb << 20;
  options.pmem_budget = uint64_t{4} << 20;
  const size_t memtables[] = {64 << 10, 256 << 10, 1 << 20, 4 << 20};
  options.memtable_size = memtables[(*rng)() % 4];
  if (config.memtable_kb != 0) options.memtable_size = config.memtable_kb << 10;
  options.table_size = options.memtable_size + (128 << 10);
  options.level1_size = uint64_t{1} << (20 + (*rng)() % 3);
  options.level0_compaction_trigger = 2 + static_cast<int>((*rng)() % 4);
  options.concurrent_memtable_writes = (*rng)() % 2 == 0;
  options.pmem_hash_index = (*rng)() % 2 == 0;
  options.read_triggered_compactions = (*rng)() % 2 == 0;
  options.paranoid_checks = (*rng)() % 4 == 0;
  return options;
}

// One failure of the oracle's check: what was read against what was allowed.
void Report(const char* where, uint64_t k, const Status& s, const std::string& v, uint32_t committed,
            uint32_t pending) {
  std::fprintf(stderr,
               "jigsaw_stress: MISMATCH in %s: %s read %s%s; allowed: %s, in flight: %s\n", where, KeyOf(k).c_str(),
               s.ok() ? "value " : s.ToString().c_str(), s.ok() ? v.substr(0, 40).c_str() : "",
               Describe(committed).c_str(), Describe(pending).c_str());
}

class Runner {
 public:
  // `fs`: the file system `db` runs on when faults are injected, else null.
  Runner(const Config& config, Oracle* oracle, DB* db, FaultyFileSystem* fs, uint64_t seed)
      : config_(config), oracle_(oracle), db_(db), fs_(fs), seed_(seed) {}

  enum class Outcome { kDone, kMismatch, kReopen };

  // Every key read with Get and with one forward scan: each must show its
  // committed state or its in-flight one; the oracle then takes the state
  // found. False on a mismatch (reported).
  bool VerifyAll() {
    const uint64_t keys = oracle_->keys();
    std::vector<bool> found(keys, false);
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key = it->key().ToString();
      uint64_t k = 0;
      if (key.size() != 13 || key.compare(0, 3, "key") != 0 || (k = std::stoull(key.substr(3))) >= keys) {
        std::fprintf(stderr, "jigsaw_stress: MISMATCH in scan: unknown key %s\n", key.c_str());
        return false;
      }
      found[k] = true;
    }
    if (!it->status().ok()) {
      std::fprintf(stderr, "jigsaw_stress: scan failed: %s\n", it->status().ToString().c_str());
      return false;
    }
    it.reset();
    for (uint64_t k = 0; k < keys; ++k) {
      std::string v;
      const Status s = db_->Get(ReadOptions(), KeyOf(k), &v);
      KeyState& state = oracle_->key(k);
      const uint32_t committed = state.committed.load(), pending = state.pending.load();
      uint32_t now = kNone;
      if (Shows(k, committed, s, v)) now = committed;
      else if (pending != kNone && Shows(k, pending, s, v)) now = pending;
      if (now == kNone || found[k] != s.ok()) {
        Report("verification", k, s, v, committed, pending);
        return false;
      }
      state.committed.store(now);
      state.pending.store(kNone);
    }
    oracle_->header()->verifications.fetch_add(1);
    return true;
  }

  // Runs the workers until `end`, with faults injected if there is a file
  // system to inject them: kMismatch if a worker found one, kReopen if a
  // write failed (the workers stop at once: the database must be reopened
  // and verified before anything else is written).
  Outcome Run(std::chrono::steady_clock::time_point end) {
    std::vector<std::thread> workers;
    for (int t = 0; t < config_.threads; ++t) workers.emplace_back([this, t, end] { Work(t, end); });
    std::thread faults;
    if (fs_ != nullptr) {
      fs_->Arm(true);
      if (config_.full_every > 0) faults = std::thread([this, end] { FillDevice(end); });
    }
    for (auto& w : workers) w.join();
    stopped_.store(true);
    if (faults.joinable()) faults.join();
    if (fs_ != nullptr) {
      fs_->Arm(false);
      fs_->SetFull(false);
    }
    if (failed_.load()) return Outcome::kMismatch;
    return reopen_.load() ? Outcome::kReopen : Outcome::kDone;
  }

 private:
  struct Op {
    uint64_t key;
    bool put;
  };

  // Thread t's keys: [first, end).
  void RangeOf(int t, uint64_t* first, uint64_t* end) const {
    *first = oracle_->keys() * static_cast<uint64_t>(t) / static_cast<uint64_t>(config_.threads);
    *end = oracle_->keys() * static_cast<uint64_t>(t + 1) / static_cast<uint64_t>(config_.threads);
  }

  // Full-device episodes, every config_.full_every seconds on average,
  // each lasting 10-300 ms, until the workers stop.
  void FillDevice(std::chrono::steady_clock::time_point end) {
    std::mt19937_64 rng(seed_ ^ 0x5eed);
    std::exponential_distribution<double> gap(1.0 / config_.full_every);
    auto sleep = [&](double seconds) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                                std::chrono::duration<double>(seconds));
      while (!stopped_.load() && std::chrono::steady_clock::now() < std::min(until, end)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    };
    while (!stopped_.load() && std::chrono::steady_clock::now() < end) {
      sleep(gap(rng));
      if (stopped_.load()) break;
      fs_->SetFull(true);
      sleep(0.01 + static_cast<double>(rng() % 290) / 1000);
      fs_->SetFull(false);
    }
  }

  // Writes `ops` (this thread's keys, distinct) as one batch, or as one
  // DeleteRange over [range_begin, range_end) when `range`. False if the
  // write failed: then the keys' states are settled and a reopen is asked
  // for.
  bool Write(const std::vector<Op>& ops, bool range, uint64_t range_begin, uint64_t range_end, std::mt19937_64* rng) {
    WriteBatch batch;
    std::vector<uint32_t> next(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      KeyState& state = oracle_->key(ops[i].key);
      next[i] = (Generation(state.committed.load()) + 1) | (ops[i].put ? kPresent : 0);
      state.pending.store(next[i]);  // before the write: a kill may come at any instruction after
      if (range) continue;
      if (ops[i].put) batch.Put(KeyOf(ops[i].key), ValueOf(ops[i].key, Generation(next[i])));
      else batch.Delete(KeyOf(ops[i].key));
    }
    WriteOptions options;
    options.sync = (*rng)() % 50 == 0;
    const Status s = range ? db_->DeleteRange(options, KeyOf(range_begin), KeyOf(range_end))
                           : db_->Write(options, &batch);
    if (!s.ok()) {
      if (fs_ == nullptr) std::fprintf(stderr, "jigsaw_stress: write failed: %s\n", s.ToString().c_str());
      for (size_t i = 0; i < ops.size(); ++i) Settle(ops[i].key);
      reopen_.store(true);
      return false;
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      KeyState& state = oracle_->key(ops[i].key);
      state.committed.store(next[i]);
      state.pending.store(kNone);
    }
    return true;
  }

  // After a failed write of key k: the key shows the state before it or the
  // one it would have left. Which one a reopen shows is not known (the log
  // may hold the write, or the memtable alone), so both stay allowed until
  // the next verification settles it.
  void Settle(uint64_t k) {
    std::string v;
    const Status s = db_->Get(ReadOptions(), KeyOf(k), &v);
    KeyState& state = oracle_->key(k);
    const uint32_t committed = state.committed.load(), pending = state.pending.load();
    if (pending != kNone && Shows(k, pending, s, v)) {
      state.committed.store(pending);
      state.pending.store(committed);
    } else if (!Shows(k, committed, s, v)) {
      Fail("a read after a failed write", k, s, v, committed, pending);
    }
  }

  void Fail(const char* where, uint64_t k, const Status& s, const std::string& v, uint32_t committed,
            uint32_t pending) {
    Report(where, k, s, v, committed, pending);
    failed_.store(true);
  }

  // A read of one of this thread's keys must show its committed state.
  void Check(const char* where, uint64_t k, const Status& s, const std::string& v) {
    const uint32_t committed = oracle_->key(k).committed.load();
    if (!Shows(k, committed, s, v)) Fail(where, k, s, v, committed, oracle_->key(k).pending.load());
  }

  void Work(int t, std::chrono::steady_clock::time_point end) {
    std::mt19937_64 rng(seed_ * 1000003 + static_cast<uint64_t>(t));
    uint64_t first = 0, last = 0;
    RangeOf(t, &first, &last);
    const uint64_t span = last - first;
    if (span == 0) return;
    auto own = [&] { return first + rng() % span; };
    while (!failed_.load() && !reopen_.load() && std::chrono::steady_clock::now() < end) {
      const unsigned op = rng() % 100;
      if (op < 35) {
        Write({{own(), true}}, false, 0, 0, &rng);
      } else if (op < 45) {
        Write({{own(), false}}, false, 0, 0, &rng);
      } else if (op < 55) {
        std::vector<Op> ops;
        const size_t n = 2 + rng() % 6;
        for (size_t i = 0; i < n; ++i) {
          const uint64_t k = own();
          if (std::none_of(ops.begin(), ops.end(), [&](const Op& o) { return o.key == k; })) {
            ops.push_back({k, rng() % 4 != 0});
          }
        }
        Write(ops, false, 0, 0, &rng);
      } else if (op < 57) {
        const uint64_t begin = own();
        const uint64_t range_end = std::min(last, begin + 1 + rng() % 20);
        std::vector<Op> ops;
        for (uint64_t k = begin; k < range_end; ++k) {
          if (Present(oracle_->key(k).committed.load())) ops.push_back({k, false});
        }
        Write(ops, true, begin, range_end, &rng);
      } else if (op < 75) {
        const uint64_t k = own();
        std::string v;
        ReadOptions read;
        read.verify_checksums = rng() % 8 == 0;
        Check("Get", k, db_->Get(read, KeyOf(k), &v), v);
      } else if (op < 78) {
        // Another thread's key: its committed state or the one in flight
        // (read the oracle around the Get: the owner may move on meanwhile).
        const uint64_t k = rng() % oracle_->keys();
        const uint32_t before = oracle_->key(k).committed.load();
        std::string v;
        const Status s = db_->Get(ReadOptions(), KeyOf(k), &v);
        const uint32_t after = oracle_->key(k).committed.load();
        const uint32_t pending = oracle_->key(k).pending.load();
        if (!Shows(k, before, s, v) && !Shows(k, after, s, v) && !(pending != kNone && Shows(k, pending, s, v)) &&
            Generation(after) == Generation(before)) {
          Fail("Get of another thread's key", k, s, v, after, pending);
        }
      } else if (op < 88) {
        Scan(first, last, own(), rng() % 3 == 0, &rng);
      } else if (op < 94) {
        SnapshotRead(own, &rng);
      } else if (op < 98) {
        std::vector<std::string> keys;
        std::vector<uint64_t> ks;
        for (int i = 0; i < 8; ++i) {
          ks.push_back(own());
          keys.push_back(KeyOf(ks.back()));
        }
        std::vector<Slice> slices(keys.begin(), keys.end());
        std::vector<std::string> values;
        const std::vector<Status> statuses = db_->MultiGet(ReadOptions(), slices, &values);
        for (size_t i = 0; i < ks.size(); ++i) Check("MultiGet", ks[i], statuses[i], values[i]);
      } else {
        const uint64_t begin = own();
        const std::string b = KeyOf(begin), e = KeyOf(std::min(last, begin + 200));
        const Slice bs(b), es(e);
        const Status s = db_->CompactRange(&bs, &es);
        // (A failure injected into it stops the store's writes: the next
        // write fails, and the database is reopened.)
        if (!s.ok() && fs_ == nullptr) std::fprintf(stderr, "jigsaw_stress: CompactRange: %s\n", s.ToString().c_str());
      }
      oracle_->header()->ops.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // Up to 30 entries from `start` within [first, last), forward or back:
  // each key's presence and value as the oracle says, none skipped.
  void Scan(uint64_t first, uint64_t last, uint64_t start, bool reverse, std::mt19937_64* rng) {
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    uint64_t expect = start;  // the next key the scan may land on
    if (reverse) {
      it->Seek(KeyOf(start));
      if (!it->Valid()) it->SeekToLast();
      else if (it->key().ToString() != KeyOf(start)) it->Prev();
    } else {
      it->Seek(KeyOf(start));
    }
    const int limit = 1 + static_cast<int>((*rng)() % 30);
    for (int n = 0; n < limit && it->Valid(); ++n) {
      const std::string key = it->key().ToString();
      if (reverse ? key < KeyOf(first) : key >= KeyOf(last)) break;
      const uint64_t k = std::stoull(key.substr(3));
      // Every key passed over is absent.
      for (uint64_t gap = expect; reverse ? gap > k : gap < k; reverse ? --gap : ++gap) {
        if (Present(oracle_->key(gap).committed.load())) {
          Fail(reverse ? "reverse scan (skipped)" : "scan (skipped)", gap, Status::NotFound(""), "",
               oracle_->key(gap).committed.load(), kNone);
          return;
        }
      }
      Check(reverse ? "reverse scan" : "scan", k, Status::OK(), it->value().ToString());
      if (reverse && k == first) return;
      expect = reverse ? k - 1 : k + 1;
      if (reverse) it->Prev();
      else it->Next();
    }
    if (!it->status().ok()) Fail("scan status", expect, it->status(), "", 0, kNone);
  }

  // Reads a few keys at a snapshot, overwrites them, and reads them again
  // at the snapshot: the first answers.
  template <typename Own>
  void SnapshotRead(Own own, std::mt19937_64* rng) {
    const Snapshot* snapshot = db_->GetSnapshot();
    ReadOptions at;
    at.snapshot = snapshot;
    std::vector<uint64_t> ks;
    std::vector<std::pair<Status, std::string>> first;
    for (int i = 0; i < 4; ++i) {
      ks.push_back(own());
      std::string v;
      Status s = db_->Get(at, KeyOf(ks.back()), &v);
      Check("snapshot Get", ks.back(), s, v);
      first.emplace_back(s, v);
    }
    for (uint64_t k : ks) {
      if (!Write({{k, (*rng)() % 3 != 0}}, false, 0, 0, rng)) break;
    }
    for (size_t i = 0; i < ks.size(); ++i) {
      std::string v;
      const Status s = db_->Get(at, KeyOf(ks[i]), &v);
      if (s.ok() != first[i].first.ok() || (s.ok() && v != first[i].second)) {
        std::fprintf(stderr, "jigsaw_stress: at the snapshot, first %s %s\n", first[i].first.ToString().c_str(),
                     first[i].second.substr(0, 40).c_str());
        Fail("snapshot reread", ks[i], s, v, oracle_->key(ks[i]).committed.load(), kNone);
      }
    }
    db_->ReleaseSnapshot(snapshot);
  }

  const Config& config_;
  Oracle* const oracle_;
  DB* const db_;
  FaultyFileSystem* const fs_;
  const uint64_t seed_;
  std::atomic<bool> failed_{false};
  std::atomic<bool> reopen_{false};   // a write failed
  std::atomic<bool> stopped_{false};  // the workers are done
};

// Opens config.db, printing why it could not be opened.
Status OpenDB(const Config& config, const Options& options, uint64_t run, std::unique_ptr<DB>* db) {
  const Status s = DB::Open(options, config.db, db);
  if (!s.ok()) {
    std::fprintf(stderr, "jigsaw_stress: open %s (run %" PRIu64 "): %s\n", config.db.c_str(), run,
                 s.ToString().c_str());
  }
  return s;
}

// One process's run: open, verify everything, work, close; with faults
// injected, reopen (and verify everything) after each failed write. 0 OK,
// 1 a mismatch, 2 an error.
int RunOnce(const Config& config) {
  std::string error;
  std::unique_ptr<Oracle> oracle = Oracle::Open(config.db + ".expected", config.keys, &error);
  if (oracle == nullptr) {
    std::fprintf(stderr, "jigsaw_stress: %s\n", error.c_str());
    return 2;
  }
  const uint64_t run = oracle->header()->runs.fetch_add(1);
  const uint64_t seed = config.seed * 7919 + run;
  std::mt19937_64 rng(seed);
  Options options = RandomOptions(config, &rng);
  std::unique_ptr<FaultyFileSystem> fs;
  if (config.faults()) {
    fs = std::make_unique<FaultyFileSystem>(config.fs_error_one_in, seed, &oracle->header()->faults);
    options.file_system = fs.get();
  }
  std::fprintf(stderr,
               "jigsaw_stress: run %" PRIu64 " of %s (%s): seed %" PRIu64 ", memtable %zu, table %zu, level1 %" PRIu64
               ", L0 trigger %d, concurrent memtable writes %d, hash index %d, read-triggered compactions %d, "
               "paranoid checks %d, file-system errors one in %" PRIu64 ", full device every %g s\n",
               run, config.db.c_str(), config.mode.c_str(), seed, options.memtable_size, options.table_size,
               options.level1_size, options.level0_compaction_trigger, options.concurrent_memtable_writes,
               options.pmem_hash_index, options.read_triggered_compactions, options.paranoid_checks,
               config.fs_error_one_in, config.full_every);
  std::unique_ptr<DB> db;
  if (!OpenDB(config, options, run, &db).ok()) return 2;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(config.duration));
  for (uint64_t reopens = 0;; ++reopens) {
    Runner runner(config, oracle.get(), db.get(), fs.get(), seed + reopens * 104729);
    if (!runner.VerifyAll()) return 1;
    if (config.verify_only) return 0;
    const Runner::Outcome outcome = runner.Run(end);
    if (outcome != Runner::Outcome::kReopen) return outcome == Runner::Outcome::kDone ? 0 : 1;
    oracle->header()->reopens.fetch_add(1);
    db.reset();
    if (fs != nullptr && rng() % 4 == 0) {
      // Sometimes the first open still meets the faults: it opens the
      // database or fails, and either way loses nothing (the next open and
      // verification tell).
      fs->Arm(true);
      fs->SetFull(rng() % 2 == 0);
      if (!DB::Open(options, config.db, &db).ok()) db.reset();
      fs->Arm(false);
      fs->SetFull(false);
      if (db != nullptr) continue;
    }
    if (!OpenDB(config, options, run, &db).ok()) return 2;
  }
}

// Starts this program on `config` as a child run.
pid_t Spawn(const char* self, const Config& config, uint64_t seed) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  std::vector<std::string> args = {self,
                                   "--db=" + config.db,
                                   "--mode=" + config.mode,
                                   "--threads=" + std::to_string(config.threads),
                                   "--keys=" + std::to_string(config.keys),
                                   "--duration=" + std::to_string(config.duration),
                                   "--seed=" + std::to_string(seed),
                                   "--pool_mb=" + std::to_string(config.pool_mb),
                                   "--memtable_kb=" + std::to_string(config.memtable_kb),
                                   "--fs_error_one_in=" + std::to_string(config.fs_error_one_in),
                                   "--full_every=" + std::to_string(config.full_every),
                                   "--child"};
  if (config.verify_only) args.push_back("--verify_only");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  _exit(2);
}

// Kills and restarts runs on each mode's database in turn for
// config.duration seconds; every restart verifies everything first.
int CrashLoop(const char* self, Config config, const std::vector<std::string>& modes) {
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(config.duration);
  std::mt19937_64 rng(config.seed);
  uint64_t kills = 0, clean_exits = 0, step = 0;
  const std::string base = config.db;
  auto remove_all = [&] {
    std::error_code ec;
    for (const std::string& mode : modes) {
      std::filesystem::remove_all(base + "-" + mode, ec);
      std::filesystem::remove(base + "-" + mode + ".expected", ec);
    }
  };
  if (config.fresh) remove_all();
  while (std::chrono::steady_clock::now() < end) {
    Config run = config;
    run.mode = modes[step % modes.size()];
    run.db = base + "-" + run.mode;
    const double lives = config.kill_min + std::uniform_real_distribution<double>(0, 1)(rng) *
                                               (config.kill_max - config.kill_min);
    run.duration = lives + 5;  // the kill comes first, unless the open is slow
    const pid_t pid = Spawn(self, run, rng());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(lives);
    int status = 0;
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ++kills;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      ++clean_exits;
    } else {
      std::fprintf(stderr, "jigsaw_stress: a %s run failed (exit %d, signal %d): see above\n", run.mode.c_str(),
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      return 1;
    }
    ++step;
  }
  // A last verification of each database.
  uint64_t ops = 0, verifications = 0, runs = 0, reopens = 0, faults = 0;
  for (const std::string& mode : modes) {
    Config last = config;
    last.mode = mode;
    last.db = base + "-" + mode;
    last.verify_only = true;
    const pid_t pid = Spawn(self, last, rng());
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "jigsaw_stress: the final verification of %s failed\n", last.db.c_str());
      return 1;
    }
    std::string error;
    std::unique_ptr<Oracle> oracle = Oracle::Open(last.db + ".expected", config.keys, &error);
    if (oracle == nullptr) return 2;
    ops += oracle->header()->ops.load();
    verifications += oracle->header()->verifications.load();
    runs += oracle->header()->runs.load();
    reopens += oracle->header()->reopens.load();
    faults += oracle->header()->faults.load();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("jigsaw_stress: %.0f s, modes", seconds);
  for (const std::string& m : modes) std::printf(" %s", m.c_str());
  std::printf(": %" PRIu64 " operations, %" PRIu64 " runs, %" PRIu64 " kills, %" PRIu64
              " clean exits, %" PRIu64 " faults injected, %" PRIu64 " reopens after a failed write, %" PRIu64
              " whole-database verifications, 0 mismatches\n",
              ops, runs, kills, clean_exits, faults, reopens, verifications);
  if (config.fresh) remove_all();
  return 0;
}

}  // namespace
}  // namespace jigsaw::stress

int main(int argc, char** argv) {
  using jigsaw::stress::Config;
  Config config;
  std::string modes = "pmem,hybrid,disk";
  CLI::App app("jigsaw_stress: random operations from many threads against an expected-state oracle that "
               "survives kills; with --crash_loop, killed and restarted in a loop across modes, the whole "
               "database verified after every restart (docs/stress.md). Exit 0: no mismatch; 1: a mismatch "
               "(printed); 2: an error.");
  app.add_option("--db", config.db, "database path (crash loop: a prefix; each mode's database is <db>-<mode>)")
      ->required();
  app.add_option("--mode", config.mode, "pmem, hybrid or disk (one run)");
  app.add_option("--modes", modes, "crash loop: the modes to cycle through");
  app.add_option("--threads", config.threads, "worker threads")->check(CLI::Range(1, 64));
  app.add_option("--keys", config.keys, "keys, shared among the threads")->check(CLI::Range(64, 10000000));
  app.add_option("--duration", config.duration, "seconds to run (crash loop: in all)");
  app.add_option("--seed", config.seed, "random seed (0: from the clock)");
  app.add_option("--pool_mb", config.pool_mb, "pool size in MiB");
  app.add_option("--memtable_kb", config.memtable_kb, "memtable size in KiB (default: drawn at random per run)");
  app.add_option("--fs_error_one_in", config.fs_error_one_in,
                 "inject file-system errors: one append, sync, file creation or rename in this many fails (0: none)");
  app.add_option("--full_every", config.full_every,
                 "inject a full device (10-300 ms at a time) every this many seconds on average (0: never)");
  app.add_option("--kill_min", config.kill_min, "crash loop: shortest life of a run, seconds");
  app.add_option("--kill_max", config.kill_max, "crash loop: longest life of a run, seconds");
  app.add_flag("--crash_loop", config.crash_loop, "kill and restart runs in a loop");
  app.add_flag("--verify_only", config.verify_only, "open, verify everything, close");
  app.add_flag("--fresh", config.fresh, "crash loop: remove the databases and oracles first, and after a clean end");
  app.add_flag("--child", config.child, "(internal) a run the crash loop started");
  CLI11_PARSE(app, argc, argv);
  if (config.seed == 0) config.seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  if (!config.crash_loop) {
    const int rc = jigsaw::stress::RunOnce(config);
    if (!config.child && rc == 0) std::printf("jigsaw_stress: %s: no mismatch\n", config.db.c_str());
    return rc;
  }
  std::vector<std::string> mode_list;
  std::stringstream in(modes);
  for (std::string m; std::getline(in, m, ',');) {
    if (m != "pmem" && m != "hybrid" && m != "disk") {
      std::fprintf(stderr, "jigsaw_stress: unknown mode %s\n", m.c_str());
      return 2;
    }
    mode_list.push_back(m);
  }
  std::printf("jigsaw_stress: seed %" PRIu64 "\n", config.seed);
  std::fflush(stdout);
  return jigsaw::stress::CrashLoop(argv[0], config, mode_list);
}
