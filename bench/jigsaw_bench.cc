// jigsaw_bench: a db_bench-compatible benchmark of JigsawDB against the real
// LevelDB and RocksDB libraries, run in one process on the same medium.
//
//   jigsaw_bench --benchmarks=fillseq,fillrandom,readrandom --num=1000000
//                --engines=jigsaw,leveldb,rocksdb [--json=out.json]
//
// Keys are db_bench's: 16-digit decimal numbers (--key_size pads or cuts),
// values --value_size random bytes. See docs/benchmarks.md.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/engines.h"

namespace jigsaw::bench {
namespace {

struct Flags {
  std::string benchmarks = "fillseq,fillsync,fillrandom,overwrite,readrandom,readseq,readrandom,readseq";
  uint64_t num = 1000000;
  int64_t reads = -1;
  int key_size = 16;
  int value_size = 100;
  int threads = 1;
  std::string db = "/dev/shm/jigsaw-bench/db";
  std::string pmem_path;
  std::string peer_dir;
  std::string engines = "jigsaw,leveldb,rocksdb";
  std::string mode = "pmem";
  std::string timing_model = "none";
  std::string pmem_emulation = "auto";
  uint64_t pmem_budget_mb = 64;
  int ssd_use_mmap = 0;
  size_t ssd_block_kb = 8;
  size_t cache_size_mb = 64;
  std::string ssd_io = "auto";
  uint64_t level1_mb = 0;
  size_t table_size_kb = 0;
  uint64_t pool_size_mb = 4096;
  bool use_existing_db = false;
  bool histogram = true;
  std::string json;
};

struct Result {
  std::string engine, benchmark;
  uint64_t ops = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0;
  uint64_t found = 0;
  double micros_per_op() const { return ops ? seconds * 1e6 / static_cast<double>(ops) : 0; }
  double ops_per_sec() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
  double mb_per_sec() const { return seconds > 0 ? static_cast<double>(bytes) / 1048576.0 / seconds : 0; }
};

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
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%016" PRIu64, n);
    std::string key(buf);
    if (key.size() < key_size_) key.append(key_size_ - key.size(), 'x');
    key.resize(key_size_);
    return key;
  }

 private:
  size_t key_size_;
};

// Times every operation; reports the run with percentiles.
class Timer {
 public:
  Timer(const std::string& engine, const std::string& benchmark, uint64_t expected, bool record)
      : engine_(engine), benchmark_(benchmark), expected_(expected), record_(record) {
    if (record_) latencies_.reserve(expected);
    start_ = last_report_ = std::chrono::steady_clock::now();
  }
  std::chrono::steady_clock::time_point Begin() const { return std::chrono::steady_clock::now(); }
  void End(std::chrono::steady_clock::time_point begin) {
    const auto now = std::chrono::steady_clock::now();
    if (record_) latencies_.push_back(static_cast<uint32_t>(std::min<int64_t>(
                     std::chrono::duration_cast<std::chrono::nanoseconds>(now - begin).count(), UINT32_MAX)));
    if (++done_ % 4096 == 0 && now - last_report_ > std::chrono::seconds(2)) {
      last_report_ = now;
      std::fprintf(stderr, "  ... %s %s: %" PRIu64 "/%" PRIu64 " ops\n", engine_.c_str(), benchmark_.c_str(), done_,
                   expected_);
    }
  }
  Result Finish(uint64_t ops, uint64_t bytes) {
    Result r;
    r.engine = engine_;
    r.benchmark = benchmark_;
    r.ops = ops;
    r.bytes = bytes;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!latencies_.empty()) {
      auto pct = [&](double p) {
        const size_t k = std::min(latencies_.size() - 1, static_cast<size_t>(p * static_cast<double>(latencies_.size())));
        std::nth_element(latencies_.begin(), latencies_.begin() + static_cast<long>(k), latencies_.end());
        return latencies_[k] / 1000.0;
      };
      r.p50_us = pct(0.50);
      r.p99_us = pct(0.99);
      r.p999_us = pct(0.999);
    }
    return r;
  }

 private:
  std::string engine_, benchmark_;
  uint64_t expected_;
  bool record_;
  std::vector<uint32_t> latencies_;
  uint64_t done_ = 0;
  std::chrono::steady_clock::time_point start_, last_report_;
};

class Runner {
 public:
  Runner(const Flags& flags, const std::string& engine_name, const EngineConfig& config)
      : flags_(flags), engine_name_(engine_name), config_(config), keys_(flags.key_size), rng_(301) {
    value_pool_.resize(1 << 20);
    for (char& c : value_pool_) c = static_cast<char>(' ' + rng_() % 95);
  }

  bool Run(const std::string& benchmark, std::vector<Result>* results) {
    const uint64_t num = flags_.num;
    const uint64_t reads = flags_.reads < 0 ? num : static_cast<uint64_t>(flags_.reads);
    bool fresh = false;
    bool write = false, sync = false, random = false, deletes = false;
    uint64_t ops = num;
    if (benchmark == "fillseq") {
      fresh = write = true;
    } else if (benchmark == "fillrandom") {
      fresh = write = random = true;
    } else if (benchmark == "fillsync") {
      // db_bench writes num/1000 here; the fillsync target needs more
      // writes to measure, so num/10 (documented in docs/benchmarks.md).
      fresh = write = sync = random = true;
      ops = std::max<uint64_t>(1, num / 10);
    } else if (benchmark == "overwrite") {
      write = random = true;
    } else if (benchmark == "deleterandom") {
      write = random = deletes = true;
    } else if (benchmark != "readrandom" && benchmark != "readmissing" && benchmark != "readseq" &&
               benchmark != "readreverse" && benchmark != "seekrandom") {
      std::fprintf(stderr, "unknown benchmark '%s'\n", benchmark.c_str());
      return false;
    }
    if (fresh || engine_ == nullptr) {
      if (!Reopen(fresh && !flags_.use_existing_db)) return false;
    }
    const bool record = flags_.histogram;
    uint64_t bytes = 0, found = 0;
    if (write) {
      Timer timer(engine_name_, benchmark, ops, record);
      std::uniform_int_distribution<uint64_t> pick(0, num - 1);
      for (uint64_t i = 0; i < ops; ++i) {
        const std::string key = keys_.Make(random ? pick(rng_) : i);
        const auto begin = timer.Begin();
        std::string error = deletes ? engine_->Delete(key, sync) : engine_->Put(key, Value(), sync);
        timer.End(begin);
        if (!error.empty()) {
          std::fprintf(stderr, "%s %s: %s\n", engine_name_.c_str(), benchmark.c_str(), error.c_str());
          return false;
        }
        bytes += key.size() + (deletes ? 0 : static_cast<uint64_t>(flags_.value_size));
      }
      results->push_back(timer.Finish(ops, bytes));
    } else if (benchmark == "readseq" || benchmark == "readreverse") {
      Timer timer(engine_name_, benchmark, reads, false);
      const uint64_t n = engine_->Scan(reads, benchmark == "readreverse", &bytes);
      results->push_back(timer.Finish(n, bytes));
    } else {
      Timer timer(engine_name_, benchmark, reads, record);
      std::uniform_int_distribution<uint64_t> pick(0, num - 1);
      std::string value;
      for (uint64_t i = 0; i < reads; ++i) {
        std::string key = keys_.Make(pick(rng_));
        if (benchmark == "readmissing") key.back() = '.';
        const auto begin = timer.Begin();
        int hit;
        if (benchmark == "seekrandom") {
          hit = engine_->SeekAndRead(key) ? 1 : 0;
        } else {
          hit = engine_->Get(key, &value);
        }
        timer.End(begin);
        if (hit < 0) {
          std::fprintf(stderr, "%s %s: read error\n", engine_name_.c_str(), benchmark.c_str());
          return false;
        }
        found += static_cast<uint64_t>(hit);
        bytes += key.size() + (hit ? value.size() : 0);
      }
      Result r = timer.Finish(reads, bytes);
      r.found = found;
      results->push_back(r);
    }
    return true;
  }

  std::string Stats() { return engine_ != nullptr ? engine_->Stats() : ""; }
  void Close() { engine_.reset(); }

 private:
  std::string Value() {
    const size_t offset = rng_() % (value_pool_.size() - static_cast<size_t>(flags_.value_size));
    return value_pool_.substr(offset, static_cast<size_t>(flags_.value_size));
  }
  bool Reopen(bool destroy) {
    engine_.reset();
    if (destroy) DestroyEngine(engine_name_, config_);
    std::filesystem::create_directories(config_.dir);
    std::string error;
    engine_ = OpenEngine(engine_name_, config_, &error);
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
  bool described_ = false;
};

std::string Hostname() {
  char name[256] = {0};
  gethostname(name, sizeof(name) - 1);
  return name;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

int Main(int argc, char** argv) {
  Flags f;
  CLI::App app("jigsaw_bench: JigsawDB against LevelDB and RocksDB (db_bench compatible)");
  app.add_option("--benchmarks", f.benchmarks, "comma-separated: fillseq, fillsync, fillrandom, overwrite, "
                                              "readrandom, readmissing, readseq, readreverse, seekrandom, deleterandom");
  app.add_option("--num", f.num, "number of key/value pairs")->check(CLI::PositiveNumber);
  app.add_option("--reads", f.reads, "number of reads (-1: --num)");
  app.add_option("--key_size", f.key_size, "key bytes")->check(CLI::Range(8, 1024));
  app.add_option("--value_size", f.value_size, "value bytes")->check(CLI::Range(1, 1 << 20));
  app.add_option("--threads", f.threads, "benchmark threads (only 1 is supported so far)")->check(CLI::Range(1, 1));
  app.add_option("--db", f.db, "JigsawDB directory");
  app.add_option("--pmem_path", f.pmem_path, "JigsawDB pool file (default <db>/pool)");
  app.add_option("--pool_size_mb", f.pool_size_mb, "JigsawDB pool size when created, MiB");
  app.add_option("--peer_dir", f.peer_dir, "directory for LevelDB and RocksDB (default: beside the pool)");
  app.add_option("--engines", f.engines, "comma-separated: jigsaw, leveldb, rocksdb");
  app.add_option("--mode", f.mode,
                 "pmem (everything in the pmem pool), hybrid (pmem upper levels, SSD tables below "
                 "--pmem_budget_mb in the --db directory) or disk (no pmem: WAL, manifest and tables in --db)")
      ->check(CLI::IsMember({"pmem", "hybrid", "disk"}));
  app.add_option("--pmem_budget_mb", f.pmem_budget_mb, "hybrid: MiB of blocks kept in pmem");
  app.add_option("--ssd_use_mmap", f.ssd_use_mmap, "hybrid: serve SSD tables from mmap instead of the block cache (1/0)");
  app.add_option("--ssd_block_kb", f.ssd_block_kb, "hybrid: KiB per KeySet block inside SSD tables");
  app.add_option("--level1_mb", f.level1_mb,
                 "JigsawDB L1 target MiB (default: 64 in pmem mode; 10 with SSD tables, LevelDB's geometry)");
  app.add_option("--table_size_kb", f.table_size_kb,
                 "JigsawDB pmem block / SSD table target KiB (default: 4096 in pmem mode; 2048 with SSD tables, "
                 "LevelDB's file size)");
  app.add_option("--ssd_io", f.ssd_io, "SSD read-ahead: auto, uring or pread")
      ->check(CLI::IsMember({"auto", "uring", "pread"}));
  app.add_option("--cache_size_mb", f.cache_size_mb, "JigsawDB block cache MiB (LevelDB/RocksDB: their block cache)");
  app.add_option("--timing_model", f.timing_model,
                 "NVM timing model for JigsawDB's pmem: none, or optane (random read +205 ns, 2.2 GB/s writes "
                 "in 256-byte units)")
      ->check(CLI::IsMember({"none", "optane"}));
  app.add_option("--pmem_emulation", f.pmem_emulation,
                 "auto (flush+fence on tmpfs and real pmem, msync elsewhere), force (flush+fence anywhere), "
                 "off (msync unless real pmem)")
      ->check(CLI::IsMember({"auto", "force", "off"}));
  app.add_flag("--use_existing_db", f.use_existing_db, "do not destroy databases before fill benchmarks");
  app.add_option("--histogram", f.histogram, "record per-operation latency percentiles (1/0)");
  app.add_option("--json", f.json, "write every result to this JSON file");
  CLI11_PARSE(app, argc, argv);

  if (f.pmem_path.empty()) f.pmem_path = f.db + "/pool";
  if (f.peer_dir.empty()) {
    // Peers use the medium JigsawDB's data is on: beside the pool in pmem
    // mode, beside the database directory (the SSD tables) otherwise.
    const std::filesystem::path beside = f.mode == "pmem" ? std::filesystem::path(f.pmem_path).parent_path()
                                                          : std::filesystem::path(f.db);
    f.peer_dir = (beside.parent_path() / "jigsaw-bench-peers").string();
  }
  const std::vector<std::string> benchmarks = Split(f.benchmarks);
  const std::vector<std::string> engines = Split(f.engines);

  std::printf("jigsaw_bench  keys %d bytes, values %d bytes, num %" PRIu64 ", mode %s, timing model %s%s\n",
              f.key_size, f.value_size, f.num, f.mode.c_str(), f.timing_model.c_str(),
              f.timing_model == "optane" ? " (JigsawDB pmem: random read +205 ns, 2.2 GB/s writes in 256-B units)"
                                         : "");
  std::printf("jigsaw pool %s; peers in %s\n", f.pmem_path.c_str(), f.peer_dir.c_str());
  std::printf("%-8s %-12s %12s %12s %9s %9s %9s %9s\n", "engine", "benchmark", "micros/op", "ops/s", "MB/s",
              "p50 us", "p99 us", "p99.9 us");
  std::vector<Result> results;
  for (const std::string& engine : engines) {
    EngineConfig config;
    config.memtable_size = 4 << 20;
    config.pmem_pool_size = f.pool_size_mb << 20;
    config.use_existing = f.use_existing_db;
    if (f.timing_model == "optane") config.nvm_timing = NvmTimingModel::Optane();
    config.storage_mode = f.mode == "hybrid" ? StorageMode::kHybrid
                          : f.mode == "disk" ? StorageMode::kDisk
                                             : StorageMode::kPmem;
    config.pmem_budget = f.pmem_budget_mb << 20;
    config.ssd_use_mmap = f.ssd_use_mmap != 0;
    config.ssd_block_size = f.ssd_block_kb << 10;
    config.block_cache_capacity = f.cache_size_mb << 20;
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
    Runner runner(f, engine, config);
    for (const std::string& benchmark : benchmarks) {
      const size_t before = results.size();
      if (!runner.Run(benchmark, &results)) return 1;
      for (size_t i = before; i < results.size(); ++i) {
        const Result& r = results[i];
        std::printf("%-8s %-12s %12.3f %12.0f %9.1f %9.2f %9.2f %9.2f", r.engine.c_str(), r.benchmark.c_str(),
                    r.micros_per_op(), r.ops_per_sec(), r.mb_per_sec(), r.p50_us, r.p99_us, r.p999_us);
        if (r.benchmark.rfind("read", 0) == 0 && r.benchmark != "readseq" && r.benchmark != "readreverse") {
          std::printf("  (%" PRIu64 " of %" PRIu64 " found)", r.found, r.ops);
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
    const std::string stats = runner.Stats();
    if (!stats.empty()) std::printf("--- %s statistics ---\n%s\n", engine.c_str(), stats.c_str());
    runner.Close();
  }

  // Throughput ratios of JigsawDB to each peer, benchmark by benchmark (the
  // n-th run of a benchmark name is compared with the peer's n-th run).
  std::printf("\nJigsawDB throughput relative to peers (ops/s ratio):\n");
  std::map<std::string, std::vector<const Result*>> by_engine;
  for (const Result& r : results) by_engine[r.engine].push_back(&r);
  for (const auto& [peer, runs] : by_engine) {
    if (peer == "jigsaw" || by_engine.count("jigsaw") == 0) continue;
    const auto& mine = by_engine["jigsaw"];
    for (size_t i = 0; i < mine.size() && i < runs.size(); ++i) {
      if (runs[i]->ops_per_sec() > 0) {
        std::printf("  %-12s vs %-8s %6.2fx\n", mine[i]->benchmark.c_str(), peer.c_str(),
                    mine[i]->ops_per_sec() / runs[i]->ops_per_sec());
      }
    }
  }

  if (!f.json.empty()) {
    nlohmann::json out;
    struct utsname u {};
    uname(&u);
    out["machine"] = {{"host", Hostname()}, {"cpu", CpuModel()}, {"cores", sysconf(_SC_NPROCESSORS_ONLN)},
                      {"kernel", std::string(u.release)}};
    out["config"] = {{"benchmarks", f.benchmarks}, {"num", f.num}, {"reads", f.reads}, {"key_size", f.key_size},
                     {"value_size", f.value_size}, {"threads", f.threads}, {"mode", f.mode}, {"pmem_budget_mb", f.pmem_budget_mb}, {"level1_mb", f.level1_mb}, {"table_size_kb", f.table_size_kb}, {"ssd_block_kb", f.ssd_block_kb}, {"cache_size_mb", f.cache_size_mb}, {"ssd_use_mmap", f.ssd_use_mmap}, {"ssd_io", f.ssd_io},
                     {"timing_model", f.timing_model}, {"pmem_emulation", f.pmem_emulation}, {"pmem_path", f.pmem_path}, {"peer_dir", f.peer_dir},
                     {"memtable_size", 4 << 20}, {"compression", "none"}, {"bloom_bits_per_key", 10}};
    out["results"] = nlohmann::json::array();
    for (const Result& r : results) {
      out["results"].push_back({{"engine", r.engine}, {"benchmark", r.benchmark}, {"num", r.ops},
                                {"micros_per_op", r.micros_per_op()}, {"ops_per_sec", r.ops_per_sec()},
                                {"mb_per_sec", r.mb_per_sec()}, {"p50_us", r.p50_us}, {"p99_us", r.p99_us},
                                {"p999_us", r.p999_us}});
    }
    std::ofstream(f.json) << out.dump(2) << "\n";
    std::printf("\nresults written to %s\n", f.json.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace jigsaw::bench

int main(int argc, char** argv) { return jigsaw::bench::Main(argc, argv); }
