// jigsaw_bench's output beside its table rows: comparisons with an earlier
// run and with the peers, bytes on disk, and the --json record.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bench/jigsaw_bench.h"
#include "git_commit.h"  // generated: JIGSAW_GIT_COMMIT
#include "jigsaw/version.h"

namespace jigsaw::bench {

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

// Prints this run's JigsawDB results beside an earlier run's (a --json
// file): JigsawDB's micros/op in both, and this run's JigsawDB throughput
// relative to the earlier run's peers. The n-th run of a benchmark name is
// compared with the n-th of the same name there.
void PrintComparison(const std::string& path, const std::vector<Result>& results) {
  nlohmann::json earlier;
  try {
    std::ifstream(path) >> earlier;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "--compare_json %s: not a jigsaw_bench JSON file (%s)\n", path.c_str(), e.what());
    return;
  }
  // engine -> benchmark -> micros/op of its runs, in order.
  std::map<std::string, std::map<std::string, std::vector<double>>> before;
  std::vector<std::string> peers;
  for (const auto& r : earlier.value("results", nlohmann::json::array())) {
    const std::string engine = r.value("engine", "");
    before[engine][r.value("benchmark", "")].push_back(r.value("micros_per_op", 0.0));
    if (engine != "jigsaw" && std::find(peers.begin(), peers.end(), engine) == peers.end()) peers.push_back(engine);
  }
  const auto config = earlier.value("config", nlohmann::json::object());
  std::printf("\nJigsawDB in this run beside %s (timing model %s, num %s):\n", path.c_str(),
              config.value("timing_model", std::string("?")).c_str(), config.value("num", nlohmann::json()).dump().c_str());
  std::printf("%-16s %14s %14s %9s", "benchmark", "us/op here", "us/op there", "ratio");
  for (const std::string& peer : peers) std::printf("  %-14s", ("vs " + peer + " there").c_str());
  std::printf("\n");
  std::map<std::string, size_t> seen;
  for (const Result& r : results) {
    if (r.engine != "jigsaw") continue;
    const size_t n = seen[r.benchmark]++;
    auto at = [&](const std::string& engine) -> double {
      const auto e = before.find(engine);
      if (e == before.end()) return 0;
      const auto b = e->second.find(r.benchmark);
      return b != e->second.end() && n < b->second.size() ? b->second[n] : 0;
    };
    const double there = at("jigsaw");
    std::printf("%-16s %14.3f ", r.benchmark.c_str(), r.micros_per_op());
    if (there > 0) {
      std::printf("%14.3f %8.2fx", there, r.micros_per_op() / there);
    } else {
      std::printf("%14s %9s", "-", "-");
    }
    for (const std::string& peer : peers) {
      const double peer_us = at(peer);
      if (peer_us > 0 && r.micros_per_op() > 0) {
        std::printf("  %13.2fx", peer_us / r.micros_per_op());
      } else {
        std::printf("  %14s", "-");
      }
    }
    std::printf("\n");
  }
  std::printf("(ratio: time per op here / there; vs peer: the peer's time per op there / JigsawDB's here)\n");
}

// Throughput ratios of JigsawDB to each peer, benchmark by benchmark (the
// n-th run of a benchmark name is compared with the peer's n-th run).
void PrintPeerRatios(const std::vector<Result>& results) {
  std::map<std::string, std::vector<const Result*>> by_engine;
  for (const Result& r : results) by_engine[r.engine].push_back(&r);
  if (by_engine.size() > 1 && by_engine.count("jigsaw") > 0) {
    std::printf("\nJigsawDB throughput relative to peers (ops/s ratio):\n");
  }
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
}

// Bytes per entry of --num entries.
double PerEntry(const Flags& f, uint64_t bytes) { return f.num > 0 ? static_cast<double>(bytes) / f.num : 0; }

// Each engine's files after its benchmarks, in bytes per --num entries.
void PrintSpace(const Flags& f, const std::map<std::string, uint64_t>& file_bytes) {
  std::printf("\nspace after the benchmarks (files in each engine's directory; compression %s, values %.2f "
              "compressible):\n", f.compression.c_str(), f.compression_ratio);
  for (const auto& [engine, bytes] : file_bytes) {
    const bool in_pool = engine == "jigsaw" && f.mode != "disk";
    std::printf("  %-8s %12" PRIu64 " bytes  %8.1f bytes/entry%s\n", engine.c_str(), bytes, PerEntry(f, bytes),
                in_pool ? "  (without the pool, which holds the pmem levels)" : "");
  }
}

// Writes the machine, the flags, the build and every result to --json, and says so.
void WriteJson(const Flags& f, const std::vector<Result>& results, const std::map<std::string, uint64_t>& file_bytes) {
  nlohmann::json out;
  struct utsname u {};
  uname(&u);
  out["machine"] = {{"host", Hostname()}, {"cpu", CpuModel()}, {"cores", sysconf(_SC_NPROCESSORS_ONLN)},
                    {"kernel", std::string(u.release)}};
  out["config"] = {{"benchmarks", f.benchmarks}, {"num", f.num}, {"reads", f.reads}, {"key_size", f.key_size},
                   {"value_size", f.value_size}, {"threads", f.threads}, {"batch_size", f.batch_size},
                   {"mode", f.mode}, {"pmem_budget_mb", f.pmem_budget_mb}, {"level1_mb", f.level1_mb},
                   {"table_size_kb", f.table_size_kb}, {"ssd_block_kb", f.ssd_block_kb},
                   {"table_format", f.table_format}, {"cache_size_mb", f.cache_size_mb},
                   {"ssd_use_mmap", f.ssd_use_mmap}, {"ssd_mapped_gets", f.ssd_mapped_gets},
                   {"reuse_log_files", f.reuse_log_files}, {"wal_size_limit_mb", f.wal_size_limit_mb}, {"ssd_io", f.ssd_io},
                   {"concurrent_memtable_writes", f.concurrent_memtable_writes},
                   {"read_triggered_compactions", f.read_triggered_compactions},
                   {"timing_model", f.timing_model}, {"pmem_emulation", f.pmem_emulation},
                   {"pmem_path", f.pmem_path}, {"peer_dir", f.peer_dir},
                   {"memtable_size", f.write_buffer_size}, {"compression", f.compression},
                   {"compression_ratio", f.compression_ratio},
                   {"benchmark_write_rate_limit", f.benchmark_write_rate_limit},
                   {"bloom_bits_per_key", f.bloom_bits},
                   {"cache_bytes", f.cache_size >= 0 ? static_cast<uint64_t>(f.cache_size) : f.cache_size_mb << 20}};
  out["jigsaw_commit"] = JIGSAW_GIT_COMMIT;
  out["jigsaw_version"] = JIGSAW_VERSION_STRING;
  {
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    out["date"] = date;
  }
  out["results"] = nlohmann::json::array();
  for (const Result& r : results) {
    out["results"].push_back({{"engine", r.engine}, {"benchmark", r.benchmark}, {"num", r.ops},
                              {"micros_per_op", r.micros_per_op()}, {"ops_per_sec", r.ops_per_sec()},
                              {"mb_per_sec", r.mb_per_sec()}});
    if (r.benchmark == "readwhilewriting") out["results"].back()["writer_puts"] = r.writer_puts;
    if (r.has_percentiles()) {
      out["results"].back()["p50_us"] = r.p50_us;
      out["results"].back()["p99_us"] = r.p99_us;
      out["results"].back()["p999_us"] = r.p999_us;
    }
  }
  out["space"] = nlohmann::json::array();
  for (const auto& [engine, bytes] : file_bytes) {
    out["space"].push_back({{"engine", engine}, {"file_bytes", bytes}, {"bytes_per_entry", PerEntry(f, bytes)}});
  }
  std::ofstream(f.json) << out.dump(2) << "\n";
  std::printf("\nresults written to %s\n", f.json.c_str());
}

}  // namespace jigsaw::bench
