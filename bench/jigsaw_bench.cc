// jigsaw_bench: a db_bench-compatible benchmark of JigsawDB against the real
// LevelDB, RocksDB and LMDB libraries, run in one process on the same medium.
//
//   jigsaw_bench --benchmarks=fillseq,fillrandom,readrandom --num=1000000
//                --engines=jigsaw,leveldb,rocksdb,lmdb [--json=out.json]
//
// Keys are db_bench's: 16-digit decimal numbers (--key_size pads or cuts),
// values --value_size bytes, compressible as db_bench's (--compression_ratio). See docs/performance.md.
#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/bench_key.h"
#include "bench/engines.h"
#include "bench/jigsaw_bench.h"
#include "bench/zipfian.h"

namespace jigsaw::bench {
namespace {

// The pool for a run: --pool_size_mb, or six times the key and value bytes
// of --num entries (measured: the default benchmarks at 1M entries, with an
// overwrite of every key, need 320-384 MiB; 6x is 704 MiB) in whole 64 MiB,
// at least 256 MiB (4 MiB memtables need 117 MiB, docs/sizing.md). Pool
// files on tmpfs are allocated whole when created.
uint64_t PoolSizeMiB(const Flags& f) {
  if (f.pool_size_mb != 0) return f.pool_size_mb;
  const uint64_t bytes = 6 * f.num * static_cast<uint64_t>(f.key_size + f.value_size);
  return std::max<uint64_t>(256, ((bytes >> 20) + 64) / 64 * 64);
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

class KeyMaker {
 public:
  explicit KeyMaker(int key_size) : key_size_(static_cast<size_t>(key_size)) {}
  std::string Make(uint64_t n) const {
    std::string key;
    MakeInto(n, &key);
    return key;
  }
  // The same into *key, reusing its buffer: the benchmark loops allocate
  // nothing per operation (as db_bench's key buffer).
  void MakeInto(uint64_t n, std::string* key) const { MakeBenchKey(n, key_size_, key); }

 private:
  size_t key_size_;
};

// What one thread measured. Each thread's own cache lines: the counters
// change at every operation, and threads sharing a line would pass it
// between their cores each time (a cost the engines would be charged).
struct alignas(64) ThreadStats {
  uint64_t ops = 0, bytes = 0, found = 0;
  std::vector<uint32_t> latencies_ns;
  std::string error;
  std::atomic<uint64_t> progress{0};  // ops, published every kProgressEvery for the progress line
};
constexpr uint64_t kProgressEvery = 4096;

// Runs op(thread, i, rng, stats) for i in [0, per_thread) on `threads`
// threads and merges what they measured; progress on stderr.
template <typename Op>
Result MeasureParallel(const std::string& engine, const std::string& benchmark, int threads, uint64_t per_thread,
                       bool record, Op op) {
  std::vector<ThreadStats> stats(static_cast<size_t>(threads));
  const auto start = std::chrono::steady_clock::now();
  auto body = [&](int t) {
    ThreadStats& st = stats[static_cast<size_t>(t)];
    std::mt19937_64 rng(301 + static_cast<uint64_t>(t) * 7919);
    if (record) st.latencies_ns.reserve(per_thread);
    auto last_report = start;
    // The clock only where a latency is recorded, and once per operation:
    // an operation's latency runs from the end of the one before (with the
    // loop's few nanoseconds of bookkeeping), as db_bench's FinishedSingleOp
    // measures with --histogram. A read costs ~25 ns here; two per
    // operation would add 50 ns to every engine's figures.
    std::chrono::steady_clock::time_point last_end;
    if (record) last_end = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < per_thread && st.error.empty(); ++i) {
      op(t, i, &rng, &st);
      if (record) {
        const auto end = std::chrono::steady_clock::now();
        st.latencies_ns.push_back(static_cast<uint32_t>(std::min<int64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(end - last_end).count(), UINT32_MAX)));
        last_end = end;
      }
      ++st.ops;
      // No counter shared by the threads: each publishes its own count now
      // and then, and thread 0 adds them up for the progress line.
      if (st.ops % kProgressEvery != 0) continue;
      st.progress.store(st.ops, std::memory_order_relaxed);
      if (t != 0) continue;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_report > std::chrono::seconds(2)) {
        last_report = now;
        uint64_t total = 0;
        for (const ThreadStats& other : stats) total += other.progress.load(std::memory_order_relaxed);
        std::fprintf(stderr, "  ... %s %s: %" PRIu64 "/%" PRIu64 " ops\n", engine.c_str(), benchmark.c_str(), total,
                     per_thread * static_cast<uint64_t>(threads));
      }
    }
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(body, t);
  body(0);
  for (auto& w : workers) w.join();
  Result r;
  r.engine = engine;
  r.benchmark = benchmark;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<uint32_t> latencies;
  for (ThreadStats& st : stats) {
    if (!st.error.empty()) r.error = st.error;
    r.ops += st.ops;
    r.bytes += st.bytes;
    r.found += st.found;
    latencies.insert(latencies.end(), st.latencies_ns.begin(), st.latencies_ns.end());
  }
  if (!latencies.empty()) {
    auto pct = [&](double p) {
      const size_t k = std::min(latencies.size() - 1, static_cast<size_t>(p * static_cast<double>(latencies.size())));
      std::nth_element(latencies.begin(), latencies.begin() + static_cast<long>(k), latencies.end());
      return latencies[k] / 1000.0;
    };
    r.p50_us = pct(0.50);
    r.p99_us = pct(0.99);
    r.p999_us = pct(0.999);
  }
  return r;
}

class Runner {
 public:
  Runner(const Flags& flags, const std::string& engine_name, const EngineConfig& config)
      : flags_(flags), engine_name_(engine_name), config_(config), keys_(flags.key_size), rng_(301) {
    // As db_bench's values: 1 MiB of 100-byte pieces, each a random string
    // of compression_ratio x 100 printable characters repeated to fill it,
    // so that a value compresses to about that fraction of its size.
    const size_t random_bytes = std::max<size_t>(1, static_cast<size_t>(flags.compression_ratio * 100));
    while (value_pool_.size() < (1 << 20)) {
      std::string piece;
      for (size_t i = 0; i < random_bytes; ++i) piece.push_back(static_cast<char>(' ' + rng_() % 95));
      while (piece.size() < 100) piece.append(piece, 0, std::min(random_bytes, 100 - piece.size()));
      value_pool_ += piece;
    }
  }

  // Runs one benchmark (reopening the engine first for a fill, or if it is not open) and appends its result; false,
  // with the reason on stderr, if the benchmark is unknown or the engine failed.
  bool Run(const std::string& benchmark, std::vector<Result>* results) {
    Kind kind;
    if (!Classify(benchmark, &kind)) {
      std::fprintf(stderr, "unknown benchmark '%s'\n", benchmark.c_str());
      return false;
    }
    if (kind.fresh || engine_ == nullptr) {
      if (!Reopen(kind.fresh && !flags_.use_existing_db)) return false;
    }
    const Result r = Measure(benchmark, kind);
    engine_->EndOfBenchmark();
    if (!r.error.empty()) {
      std::fprintf(stderr, "%s %s: %s\n", engine_name_.c_str(), benchmark.c_str(), r.error.c_str());
      return false;
    }
    results->push_back(r);
    return true;
  }

  std::string Stats() { return engine_ != nullptr ? engine_->Stats() : ""; }
  void Close() { engine_.reset(); }
  // Bytes of the files under the engine's directory, without JigsawDB's
  // pool: each file's size, or its allocated blocks if fewer (LMDB's map
  // file is sparse, its size the map's; ext4 may allocate past a growing
  // file's end).
  uint64_t FileBytes() const {
    uint64_t bytes = 0;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(config_.dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      struct stat st {};
      if (it->is_regular_file(ec) && it->path() != std::filesystem::path(config_.pmem_path) &&
          ::stat(it->path().c_str(), &st) == 0) {
        bytes += std::min(static_cast<uint64_t>(st.st_size), static_cast<uint64_t>(st.st_blocks) * 512);
      }
    }
    return bytes;
  }

 private:
  // What a benchmark does: whether it starts from an empty database, and how it writes (if it writes).
  struct Kind {
    bool fresh = false;
    bool write = false, sync = false, random = false, deletes = false;
    uint64_t ops = 0;  // writes in all
    bool ycsb = false;
  };

  // Sets *kind for the benchmark `benchmark`; false if there is no such benchmark.
  bool Classify(const std::string& benchmark, Kind* kind) const {
    const uint64_t num = flags_.num;
    kind->ops = num;
    kind->ycsb = benchmark.size() == 5 && benchmark.rfind("ycsb", 0) == 0 && benchmark[4] >= 'a' &&
                 benchmark[4] <= 'f';
    if (benchmark == "fillseq") {
      kind->fresh = kind->write = true;
    } else if (benchmark == "fillrandom") {
      kind->fresh = kind->write = kind->random = true;
    } else if (benchmark == "fillsync") {
      // db_bench writes num/1000 here; the fillsync target needs more
      // writes to measure, so num/10 (documented in docs/performance.md).
      kind->fresh = kind->write = kind->sync = kind->random = true;
      kind->ops = std::max<uint64_t>(1, num / 10);
    } else if (benchmark == "overwrite") {
      kind->write = kind->random = true;
    } else if (benchmark == "ingest") {
      kind->fresh = true;
    } else if (benchmark == "deleterandom") {
      kind->write = kind->random = kind->deletes = true;
    } else if (!kind->ycsb && benchmark != "readrandom" && benchmark != "readmissing" && benchmark != "readseq" &&
               benchmark != "readreverse" && benchmark != "seekrandom" && benchmark != "readwhilewriting" &&
               benchmark != "multireadrandom" && benchmark != "compact") {
      return false;
    }
    return true;
  }

  // Reads per thread: --reads (or --num) shared among the threads, at least one.
  uint64_t ReadsPerThread() const {
    const uint64_t reads = flags_.reads < 0 ? flags_.num : static_cast<uint64_t>(flags_.reads);
    return std::max<uint64_t>(1, reads / static_cast<uint64_t>(flags_.threads));
  }

  // Runs the benchmark on the open engine and returns what it measured (with the error of a failed operation).
  Result Measure(const std::string& benchmark, const Kind& kind) {
    if (kind.write) return MeasureWrites(benchmark, kind);
    if (benchmark == "compact") return MeasureCompact(benchmark);
    if (benchmark == "ingest") return MeasureIngest(benchmark);
    if (benchmark == "readseq" || benchmark == "readreverse") return MeasureScan(benchmark);
    if (benchmark == "readwhilewriting") return MeasureReadWhileWriting(benchmark);
    if (benchmark == "multireadrandom") return MeasureMultiRead(benchmark);
    if (kind.ycsb) return RunYcsb(benchmark[4], ReadsPerThread(), flags_.histogram);
    return MeasurePointReads(benchmark);
  }

  // Puts (or deletes) kind.ops keys: fillseq splits the key range among threads; the others pick keys at random.
  Result MeasureWrites(const std::string& benchmark, const Kind& kind) {
    const uint64_t num = flags_.num;
    const bool random = kind.random, sync = kind.sync, deletes = kind.deletes;
    const uint64_t each = std::max<uint64_t>(1, kind.ops / static_cast<uint64_t>(flags_.threads));
    return MeasureParallel(engine_name_, benchmark, flags_.threads, each, flags_.histogram,
                           [&](int t, uint64_t i, std::mt19937_64* rng, ThreadStats* st) {
                             const uint64_t n = random ? (*rng)() % num : static_cast<uint64_t>(t) * each + i;
                             thread_local std::string key;
                             keys_.MakeInto(n, &key);
                             std::string error =
                                 deletes ? engine_->Delete(key, sync) : engine_->Put(key, Value(rng), sync);
                             if (!error.empty()) st->error = error;
                             st->bytes += key.size() + (deletes ? 0 : static_cast<uint64_t>(flags_.value_size));
                           });
  }

  // db_bench's compact: the whole key range, once (one "op").
  Result MeasureCompact(const std::string& benchmark) {
    return MeasureParallel(engine_name_, benchmark, 1, 1, false,
                           [&](int, uint64_t, std::mt19937_64*, ThreadStats* st) {
                             const std::string error = engine_->CompactAll();
                             if (!error.empty()) st->error = error;
                           });
  }

  // Bulk load: --num entries of keys 0..num-1 in order, values as the
  // fills write, into table files, then ingested (Engine::IngestSorted);
  // the files' writing is timed too. Ops count entries.
  Result MeasureIngest(const std::string& benchmark) {
    const uint64_t num = flags_.num;
    Result r = MeasureParallel(engine_name_, benchmark, 1, 1, false,
                               [&](int, uint64_t, std::mt19937_64* rng, ThreadStats* st) {
                                 const std::string error = engine_->IngestSorted(
                                     num, [&](uint64_t i, std::string* key, std::string_view* value) {
                                       keys_.MakeInto(i, key);
                                       *value = Value(rng);
                                     });
                                 if (!error.empty()) st->error = error;
                                 st->bytes += num * static_cast<uint64_t>(flags_.key_size + flags_.value_size);
                               });
    r.ops = num;
    return r;
  }

  // readseq or readreverse: each thread scans --reads entries; ops count the entries read by all threads.
  Result MeasureScan(const std::string& benchmark) {
    const uint64_t reads = flags_.reads < 0 ? flags_.num : static_cast<uint64_t>(flags_.reads);
    Result r = MeasureParallel(engine_name_, benchmark, flags_.threads, 1, false,
                               [&](int, uint64_t, std::mt19937_64*, ThreadStats* st) {
                                 st->found = engine_->Scan(reads, benchmark == "readreverse", &st->bytes);
                               });
    r.ops = r.found;  // entries read, by all threads
    r.found = 0;
    return r;
  }

  // db_bench's readwhilewriting: `threads` readers read at random while
  // one more thread overwrites random keys until they finish -- as fast as
  // it can, or at --benchmark_write_rate_limit bytes (key + value) per
  // second, so that engines whose writers differ in speed can be compared
  // under the same writes. The writer's puts are reported beside the reads.
  Result MeasureReadWhileWriting(const std::string& benchmark) {
    const uint64_t num = flags_.num;
    std::atomic<bool> readers_done{false};
    std::atomic<uint64_t> puts{0};
    std::string writer_error;
    std::thread writer([&] {
      std::mt19937_64 rng(7);
      std::string key;
      const auto start = std::chrono::steady_clock::now();
      const double rate = static_cast<double>(flags_.benchmark_write_rate_limit);
      uint64_t bytes = 0;
      while (!readers_done.load(std::memory_order_relaxed) && writer_error.empty()) {
        keys_.MakeInto(rng() % num, &key);
        const std::string_view value = Value(&rng);
        writer_error = engine_->Put(key, value, false);
        puts.fetch_add(1, std::memory_order_relaxed);
        bytes += key.size() + value.size();
        if (rate > 0) {  // ahead of the rate: wait until the bytes written are due
          std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                    std::chrono::duration<double>(static_cast<double>(bytes) / rate)));
        }
      }
    });
    Result r = MeasureParallel(engine_name_, benchmark, flags_.threads, ReadsPerThread(), flags_.histogram,
                               [&](int, uint64_t, std::mt19937_64* rng, ThreadStats* st) { Read(rng, false, st); });
    r.writer_puts = puts.load(std::memory_order_relaxed);  // while the readers ran
    readers_done = true;
    writer.join();
    if (r.error.empty()) r.error = writer_error;
    return r;
  }

  // Random keys looked up --batch_size at a time (one MultiGet each);
  // ops count keys, latency percentiles are per batch.
  Result MeasureMultiRead(const std::string& benchmark) {
    const uint64_t num = flags_.num;
    const auto batch = static_cast<uint64_t>(flags_.batch_size);
    Result r = MeasureParallel(engine_name_, benchmark, flags_.threads, std::max<uint64_t>(1, ReadsPerThread() / batch),
                               flags_.histogram, [&](int, uint64_t, std::mt19937_64* rng, ThreadStats* st) {
                                 std::vector<std::string> keys;
                                 for (uint64_t k = 0; k < batch; ++k) keys.push_back(keys_.Make((*rng)() % num));
                                 const int64_t found = engine_->MultiGet(keys);
                                 if (found < 0) st->error = "read error";
                                 st->found += found > 0 ? static_cast<uint64_t>(found) : 0;
                                 st->bytes += batch * static_cast<uint64_t>(flags_.key_size) +
                                              static_cast<uint64_t>(std::max<int64_t>(found, 0)) * flags_.value_size;
                               });
    r.ops *= batch;
    return r;
  }

  // readrandom, readmissing (keys absent) or seekrandom (a seek and one entry read per key), at random.
  Result MeasurePointReads(const std::string& benchmark) {
    const uint64_t num = flags_.num;
    const bool missing = benchmark == "readmissing", seek = benchmark == "seekrandom";
    return MeasureParallel(engine_name_, benchmark, flags_.threads, ReadsPerThread(), flags_.histogram,
                           [&](int, uint64_t, std::mt19937_64* rng, ThreadStats* st) {
                             if (seek) {
                               std::string key = keys_.Make((*rng)() % num);
                               const bool hit = engine_->SeekAndRead(key);
                               st->found += hit ? 1 : 0;
                               st->bytes += key.size();
                             } else {
                               Read(rng, missing, st);
                             }
                           });
  }

  // A value: a window of the value pool (which outlives every use).
  std::string_view Value(std::mt19937_64* rng) const {
    // At a piece's start, as db_bench's values are (its generator hands out
    // the pool in order): a 100-byte value is one piece, compressible as
    // --compression_ratio says.
    const size_t pieces = (value_pool_.size() - static_cast<size_t>(flags_.value_size)) / 100 + 1;
    const size_t offset = (*rng)() % pieces * 100;
    return std::string_view(value_pool_).substr(offset, static_cast<size_t>(flags_.value_size));
  }
  // One random point read (of an absent key when `missing`). The key and
  // value buffers are the thread's, reused (as db_bench's).
  void Read(std::mt19937_64* rng, bool missing, ThreadStats* st) {
    thread_local std::string key;
    thread_local std::string value;
    keys_.MakeInto((*rng)() % flags_.num, &key);
    if (missing) key.back() = '.';
    value.clear();
    const int hit = engine_->Get(key, &value);
    if (hit < 0) st->error = "read error";
    st->found += hit > 0 ? 1 : 0;
    st->bytes += key.size() + (hit > 0 ? value.size() : 0);
  }
  // YCSB core workloads over the loaded keys [0, num) (run a fill first):
  //   a 50% read / 50% update        b 95% read / 5% update
  //   c 100% read                    d 95% read latest / 5% insert
  //   e 95% scan (1..100) / 5% insert f 50% read / 50% read-modify-write
  // Keys follow --ycsb_distribution; inserts append keys num, num+1, ...
  Result RunYcsb(char workload, uint64_t per_thread, bool record) {
    const uint64_t num = flags_.num;
    const bool zipfian = flags_.ycsb_distribution == "zipfian";
    if (zipf_ == nullptr && zipfian) zipf_ = std::make_unique<Zipfian>(num);
    std::atomic<uint64_t> inserted{0};
    const std::string name = std::string("ycsb") + workload;
    auto pick = [&](std::mt19937_64* rng) {
      return zipfian ? Scramble(zipf_->Next(rng), num) : (*rng)() % num;
    };
    return MeasureParallel(engine_name_, name, flags_.threads, per_thread, record,
                           [&](int, uint64_t, std::mt19937_64* rng, ThreadStats* st) {
                             const unsigned roll = static_cast<unsigned>((*rng)() % 100);
                             auto read = [&](uint64_t n) {
                               thread_local std::string key;
                               thread_local std::string value;
                               keys_.MakeInto(n, &key);
                               value.clear();
                               const int hit = engine_->Get(key, &value);
                               if (hit < 0) st->error = "read error";
                               st->found += hit > 0 ? 1 : 0;
                               st->bytes += value.size();
                             };
                             auto update = [&](uint64_t n) {
                               thread_local std::string key;
                               keys_.MakeInto(n, &key);
                               const std::string error = engine_->Put(key, Value(rng), false);
                               if (!error.empty()) st->error = error;
                               st->bytes += static_cast<uint64_t>(flags_.value_size);
                             };
                             auto insert = [&] { update(num + inserted.fetch_add(1)); };
                             switch (workload) {
                               case 'a': roll < 50 ? read(pick(rng)) : update(pick(rng)); break;
                               case 'b': roll < 95 ? read(pick(rng)) : update(pick(rng)); break;
                               case 'c': read(pick(rng)); break;
                               case 'd': {
                                 if (roll >= 95) {
                                   insert();
                                   break;
                                 }
                                 // Latest: most reads go to the newest keys.
                                 const uint64_t newest = num + inserted.load() - 1;
                                 const uint64_t back = zipfian ? zipf_->Next(rng) : (*rng)() % num;
                                 read(newest - std::min(back, newest));
                                 break;
                               }
                               case 'e':
                                 if (roll < 95) {
                                   const uint64_t n = engine_->ScanFrom(keys_.Make(pick(rng)), 1 + (*rng)() % 100, &st->bytes);
                                   st->found += n > 0 ? 1 : 0;
                                 } else {
                                   insert();
                                 }
                                 break;
                               default: {  // 'f'
                                 const uint64_t n = pick(rng);
                                 read(n);
                                 if (roll >= 50) update(n);
                               }
                             }
                           });
  }
  bool Reopen(bool destroy) {
    engine_.reset();
    std::string error;
    engine_ = ReopenEngine(engine_name_, config_, destroy, &error);
    if (engine_ == nullptr) {
      std::fprintf(stderr, "cannot open %s: %s\n", engine_name_.c_str(), error.c_str());
      return false;
    }
    if (!described_) {
      described_ = true;
      const std::string medium = engine_->Describe();
      if (!medium.empty()) std::printf("%s: %s\n", engine_name_.c_str(), medium.c_str());
    }
    return true;
  }

  const Flags& flags_;
  const std::string engine_name_;
  EngineConfig config_;
  KeyMaker keys_;
  std::mt19937_64 rng_;
  std::string value_pool_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Zipfian> zipf_;
  bool described_ = false;
};

// Defines the command-line flags, each stored into *f.
void DefineFlags(CLI::App* app, Flags* f) {
  app->option_defaults()->always_capture_default();  // --help shows each default
  app->add_option("--benchmarks", f->benchmarks,
                  "comma-separated: fillseq, fillsync, fillrandom, ingest, overwrite, readrandom, readmissing, readseq, "
                  "compact, readreverse, seekrandom, multireadrandom, deleterandom, readwhilewriting, ycsba..ycsbf "
                  "(after a fill)");
  app->add_option("--num", f->num, "number of key/value pairs")->check(CLI::PositiveNumber);
  app->add_option("--reads", f->reads, "number of reads (-1: --num)");
  app->add_option("--key_size", f->key_size, "key bytes")->check(CLI::Range(8, 1024));
  app->add_option("--value_size", f->value_size, "value bytes")->check(CLI::Range(1, 1 << 20));
  app->add_option("--threads", f->threads,
                  "threads sharing each benchmark's operations (readwhilewriting: reader threads, plus one writer)")
      ->check(CLI::Range(1, 64));
  app->add_option("--batch_size", f->batch_size, "multireadrandom: keys per MultiGet")->check(CLI::Range(1, 4096));
  app->add_option("--ycsb_distribution", f->ycsb_distribution, "key distribution of ycsba..ycsbf: zipfian or uniform")
      ->check(CLI::IsMember({"zipfian", "uniform"}));
  app->add_option("--db", f->db, "JigsawDB directory");
  app->add_option("--pmem_path", f->pmem_path, "JigsawDB pool file (default <db>/pool)");
  app->add_option("--pool_size_mb", f->pool_size_mb,
                  "JigsawDB pool size when created, MiB; 0 (default): 6x the key and value bytes of --num, "
                  "at least 256 MiB (docs/sizing.md)");
  app->add_option("--peer_dir", f->peer_dir,
                  "directory for LevelDB, RocksDB and LMDB, each in a subdirectory named after it (default: beside "
                  "the pool)");
  app->add_option("--engines", f->engines, "comma-separated: jigsaw, leveldb, rocksdb, lmdb");
  app->add_option("--mode", f->mode,
                  "pmem (everything in the pmem pool), hybrid (pmem upper levels, SSD tables below "
                  "--pmem_budget_mb in the --db directory) or disk (no pmem: WAL, manifest and tables in --db)")
      ->check(CLI::IsMember({"pmem", "hybrid", "disk"}));
  app->add_option("--pmem_budget_mb", f->pmem_budget_mb, "hybrid: MiB of blocks kept in pmem");
  app->add_option("--ssd_use_mmap", f->ssd_use_mmap,
                  "hybrid: serve SSD tables from mmap instead of the block cache (1/0)");
  app->add_option("--ssd_mapped_gets", f->ssd_mapped_gets,
                  "hybrid and disk: Gets read SSD tables in place through a SIGBUS-guarded mmap (1, default) or "
                  "through the block cache (0)");
  app->add_option("--paranoid_checks", f->paranoid_checks,
                  "JigsawDB: verify each SSD block's CRC once as it enters memory (1, default) or not (0)");
  app->add_option("--wal_size_limit_mb", f->wal_size_limit_mb,
                  "JigsawDB: keep flushed logs for the change feed, up to this many MiB (0: none kept)");
  app->add_option("--reuse_log_files", f->reuse_log_files,
                  "disk: write each new WAL log file over the last one no longer needed (1, default) or into a new "
                  "file (0)");
  app->add_option("--concurrent_memtable_writes", f->concurrent_memtable_writes,
                  "JigsawDB: writers of one group insert their own batches into the memtable at once (1/0; "
                  "RocksDB's allow_concurrent_memtable_write)");
  app->add_option("--read_triggered_compactions", f->read_triggered_compactions,
                  "JigsawDB: reads ask for L0 to be compacted below its trigger (1, default, or 0; "
                  "Options::read_triggered_compactions)");
  app->add_option("--ssd_block_kb", f->ssd_block_kb, "hybrid: KiB per KeySet block inside SSD tables");
  app->add_option("--table_format", f->table_format,
                  "hybrid and disk: block format of SSD tables, keyset or classic (the profiler's baseline)")
      ->check(CLI::IsMember({"keyset", "classic"}));
  app->add_option("--level1_mb", f->level1_mb,
                  "JigsawDB L1 target MiB (default: 64 in pmem mode; 10 with SSD tables, LevelDB's geometry)");
  app->add_option("--table_size_kb", f->table_size_kb,
                  "JigsawDB pmem block / SSD table target KiB (default: 4096 in pmem mode; 2048 with SSD tables, "
                  "LevelDB's file size)");
  app->add_option("--ssd_io", f->ssd_io,
                  "SSD batched reads (iterator read-ahead, MultiGet) and, with uring, table writes: auto, uring or "
                  "pread")
      ->check(CLI::IsMember({"auto", "uring", "pread"}));
  app->add_option("--cache_size_mb", f->cache_size_mb, "JigsawDB block cache MiB (LevelDB/RocksDB: their block cache)");
  app->add_option("--cache_size", f->cache_size,
                  "db_bench's: block cache bytes (overrides --cache_size_mb; -1: unset)");
  app->add_option("--write_buffer_size", f->write_buffer_size, "db_bench's: memtable bytes of every engine")
      ->check(CLI::Range(int64_t{64} << 10, int64_t{1} << 30));
  app->add_option("--bloom_bits", f->bloom_bits, "db_bench's: Bloom filter bits per key of every engine (0: none)")
      ->check(CLI::Range(0, 64));
  app->add_option("--compression_ratio", f->compression_ratio,
                  "db_bench's: values are pieces of this fraction random characters, repeated to fill them")
      ->check(CLI::Range(0.0, 1.0));
  app->add_option("--benchmark_write_rate_limit", f->benchmark_write_rate_limit,
                  "db_bench's: readwhilewriting's writer writes at most this many key + value bytes per second "
                  "(0: as fast as it can)");
  app->add_option("--compression", f->compression,
                  "table compression: none; default (each engine's own: JigsawDB LZ4, LevelDB and RocksDB Snappy); "
                  "lz4 or zstd (JigsawDB and RocksDB; LevelDB Snappy). LMDB never compresses")
      ->check(CLI::IsMember({"none", "default", "lz4", "zstd"}));
  app->add_option("--timing_model", f->timing_model,
                  "NVM timing model for JigsawDB's pmem: none, or optane (random read +205 ns, 2.2 GB/s writes "
                  "in 256-byte units, 6.6 GB/s reads)")
      ->check(CLI::IsMember({"none", "optane"}));
  app->add_option("--pmem_emulation", f->pmem_emulation,
                  "auto (flush+fence on tmpfs and real pmem, msync elsewhere), force (flush+fence anywhere), "
                  "off (msync unless real pmem)")
      ->check(CLI::IsMember({"auto", "force", "off"}));
  app->add_flag("--use_existing_db", f->use_existing_db, "do not destroy databases before fill benchmarks");
  app->add_option("--histogram", f->histogram, "record per-operation latency percentiles (1/0)");
  app->add_option("--json", f->json, "write every result to this JSON file");
  app->add_option("--compare_json", f->compare_json,
                  "a JSON file of an earlier run (--json) to print this run's JigsawDB figures beside: its "
                  "JigsawDB and its peers, benchmark by benchmark (e.g. a --timing_model=optane run beside a "
                  "DRAM-emulated one)")
      ->check(CLI::ExistingFile);
  app->add_option("--stats", f->stats, "print each engine's statistics after its run (1/0)");
}

// Fills in the paths left unset: the pool beside the database, the peers on the medium JigsawDB's data is on.
void ResolvePaths(Flags* f) {
  if (f->pmem_path.empty()) f->pmem_path = f->db + "/pool";
  if (f->peer_dir.empty()) {
    // Peers use the medium JigsawDB's data is on: beside the pool in pmem
    // mode, beside the database directory (the SSD tables) otherwise.
    const std::filesystem::path beside = f->mode == "pmem" ? std::filesystem::path(f->pmem_path).parent_path()
                                                           : std::filesystem::path(f->db);
    f->peer_dir = (beside.parent_path() / "jigsaw-bench-peers").string();
  }
}

// The engines of --engines built into this binary, in order; prints a line for each one skipped.
std::vector<std::string> SelectEngines(const Flags& f) {
  std::vector<std::string> engines;
  for (const std::string& name : Split(f.engines)) {
    if (EngineBuiltIn(name)) {
      engines.push_back(name);
    } else {
      std::printf("jigsaw_bench: %s skipped: not built into this binary (not found at build time, or unknown)\n",
                  name.c_str());
    }
  }
  return engines;
}

// Prints the run's settings and the results table's column headings.
void PrintHeader(const Flags& f) {
  std::printf("jigsaw_bench  keys %d bytes, values %d bytes, num %" PRIu64 ", mode %s, timing model %s%s\n",
              f.key_size, f.value_size, f.num, f.mode.c_str(), f.timing_model.c_str(),
              f.timing_model == "optane"
                  ? " (JigsawDB pmem: random read +205 ns, 2.2 GB/s writes in 256-B units, 6.6 GB/s reads)"
                                         : "");
  if (f.mode == "disk") {  // no pool: WAL, manifest and tables are files in --db
    std::printf("jigsaw files in %s; peers in %s\n", f.db.c_str(), f.peer_dir.c_str());
  } else {
    std::printf("jigsaw pool %s (%" PRIu64 " MiB); peers in %s\n", f.pmem_path.c_str(), PoolSizeMiB(f),
                f.peer_dir.c_str());
  }
  std::printf("%-8s %-16s %12s %12s %9s %9s %9s %9s\n", "engine", "benchmark", "micros/op", "ops/s", "MB/s",
              "p50 us", "p99 us", "p99.9 us");
}

// The configuration `engine` runs with under the flags: JigsawDB in --db and the pool, a peer in its subdirectory
// of --peer_dir.
EngineConfig MakeEngineConfig(const Flags& f, const std::string& engine) {
  EngineConfig config;
  config.memtable_size = static_cast<size_t>(f.write_buffer_size);
  config.bloom_bits_per_key = f.bloom_bits;
  config.pmem_pool_size = PoolSizeMiB(f) << 20;
  config.use_existing = f.use_existing_db;
  if (f.timing_model == "optane") config.nvm_timing = NvmTimingModel::Optane();
  config.storage_mode = f.mode == "hybrid" ? StorageMode::kHybrid
                        : f.mode == "disk" ? StorageMode::kDisk
                                           : StorageMode::kPmem;
  config.pmem_budget = f.pmem_budget_mb << 20;
  config.ssd_use_mmap = f.ssd_use_mmap != 0;
  config.ssd_mapped_gets = f.ssd_mapped_gets != 0;
  config.paranoid_checks = f.paranoid_checks != 0;
  config.reuse_log_files = f.reuse_log_files != 0;
  config.wal_size_limit_mb = f.wal_size_limit_mb;
  config.concurrent_memtable_writes = f.concurrent_memtable_writes != 0;
  config.read_triggered_compactions = f.read_triggered_compactions != 0;
  config.ssd_block_size = f.ssd_block_kb << 10;
  config.table_format = f.table_format == "classic" ? TableFormat::kClassic : TableFormat::kKeySet;
  config.block_cache_capacity = f.cache_size >= 0 ? static_cast<size_t>(f.cache_size) : f.cache_size_mb << 20;
  config.data_bytes = f.num * static_cast<uint64_t>(f.key_size + f.value_size);
  config.compression = f.compression;
  config.ssd_io = f.ssd_io == "uring" ? SsdIo::kUring : f.ssd_io == "pread" ? SsdIo::kPread : SsdIo::kAuto;
  // With SSD tables, JigsawDB takes LevelDB's level geometry (10 MiB L1,
  // 2 MiB files): the same write amplification shape on the same disk.
  const bool ssd = f.mode != "pmem";
  config.level1_size = (f.level1_mb != 0 ? f.level1_mb : (ssd ? 10 : 64)) << 20;
  config.block_size = (f.table_size_kb != 0 ? f.table_size_kb : (ssd ? 2048 : 4096)) << 10;
  config.pmem_emulation = f.pmem_emulation == "force" ? PmemEmulation::kForce
                          : f.pmem_emulation == "off" ? PmemEmulation::kOff
                                                      : PmemEmulation::kAuto;
  if (engine == "jigsaw") {
    config.dir = f.db;
    config.pmem_path = f.pmem_path;
  } else {
    config.dir = f.peer_dir + "/" + engine;
  }
  return config;
}

// Prints one result as a row of the results table.
void PrintResult(const Result& r) {
  std::printf("%-8s %-16s %12.3f %12.0f %9.1f", r.engine.c_str(), r.benchmark.c_str(), r.micros_per_op(),
              r.ops_per_sec(), r.mb_per_sec());
  if (r.has_percentiles()) {
    std::printf(" %9.2f %9.2f %9.2f", r.p50_us, r.p99_us, r.p999_us);
  } else {
    std::printf(" %9s %9s %9s", "-", "-", "-");  // not timed per operation (scans)
  }
  if (r.benchmark.rfind("read", 0) == 0 && r.benchmark != "readseq" && r.benchmark != "readreverse") {
    std::printf("  (%" PRIu64 " of %" PRIu64 " found", r.found, r.ops);
    if (r.benchmark == "readwhilewriting" && r.seconds > 0) {
      std::printf("; writer %" PRIu64 " puts, %.0f/s", r.writer_puts, static_cast<double>(r.writer_puts) / r.seconds);
    }
    std::printf(")");
  }
  std::printf("\n");
  std::fflush(stdout);
}

// Runs every benchmark on `engine`, printing each result as it comes and appending it to *results, then its
// statistics (with --stats); false if a benchmark failed (the reason is on stderr).
bool RunEngine(const Flags& f, const std::vector<std::string>& benchmarks, const std::string& engine,
               std::vector<Result>* results, std::map<std::string, uint64_t>* file_bytes) {
  Runner runner(f, engine, MakeEngineConfig(f, engine));
  for (const std::string& benchmark : benchmarks) {
    const size_t before = results->size();
    if (!runner.Run(benchmark, results)) return false;
    for (size_t i = before; i < results->size(); ++i) PrintResult((*results)[i]);
  }
  const std::string stats = f.stats ? runner.Stats() : "";
  if (!stats.empty()) std::printf("--- %s statistics ---\n%s\n", engine.c_str(), stats.c_str());
  runner.Close();
  (*file_bytes)[engine] = runner.FileBytes();
  return true;
}

// Defines the flags, runs every benchmark on every engine built in and reports; 0, or 1 if a benchmark failed (or
// CLI11's code for a command line that does not parse).
int Main(int argc, char** argv) {
  Flags f;
  CLI::App app("jigsaw_bench: JigsawDB against LevelDB, RocksDB and LMDB (db_bench compatible)");
  DefineFlags(&app, &f);
  CLI11_PARSE(app, argc, argv);

  ResolvePaths(&f);
  const std::vector<std::string> benchmarks = Split(f.benchmarks);
  const std::vector<std::string> engines = SelectEngines(f);
  PrintHeader(f);
  std::vector<Result> results;
  std::map<std::string, uint64_t> file_bytes;
  for (const std::string& engine : engines) {
    if (!RunEngine(f, benchmarks, engine, &results, &file_bytes)) return 1;
  }
  PrintPeerRatios(results);
  PrintSpace(f, file_bytes);
  if (!f.compare_json.empty()) PrintComparison(f.compare_json, results);
  if (!f.json.empty()) WriteJson(f, results, file_bytes);
  return 0;
}

}  // namespace
}  // namespace jigsaw::bench

int main(int argc, char** argv) { return jigsaw::bench::Main(argc, argv); }
