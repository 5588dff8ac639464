// floor_bench: what the hardware allows for the paper's workload, and how far
// a jigsaw_bench run is from it.
//
// Measures this machine's primitives -- a dependent DRAM miss (pointer chase
// over 512 MiB of 4 KiB pages, TLB misses included, as a lookup into a large
// index pays them), sequential read bandwidth, and the cost of appending a
// log record to a file mapped with libpmem (plain stores, as a non-sync
// write leaves it; and pmem_memcpy_persist, as a sync write must) -- and
// derives from them the floor of each workload: the least a
// key-value store must do per operation, whatever its design (see
// docs/performance.md, "Physical floors"). With --compare_json (a
// jigsaw_bench --json file) it prints JigsawDB's micros/op beside each floor
// and the ratio.
//
//   floor_bench --dir=/dev/shm --compare_json=out/jigsaw_bench.json --json=out/floor_bench.json
#include <CLI/CLI.hpp>
#include <libpmem.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The best of `rounds` runs of f (a run returns its own per-unit time):
// floors are lower bounds, so noise from other processes is discarded.
template <typename F>
double BestOf(int rounds, F&& f) {
  double best = 1e300;
  for (int i = 0; i < rounds; ++i) best = std::min(best, f());
  return best;
}

// ns per hop of a pointer chase through one random cycle of 64-byte lines.
double DramMissNs(size_t bytes, uint64_t hops) {
  const size_t lines = bytes / 64;
  std::unique_ptr<uint64_t[]> memory(new uint64_t[lines * 8]);
  std::vector<uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(42);
  // Sattolo's algorithm: one cycle through every line.
  for (size_t i = lines - 1; i > 0; --i) std::swap(order[i], order[rng() % i]);
  for (size_t i = 0; i < lines; ++i) memory[size_t{order[i]} * 8] = size_t{order[(i + 1) % lines]} * 8;
  return BestOf(3, [&] {
    uint64_t at = 0;
    const auto start = Clock::now();
    for (uint64_t i = 0; i < hops; ++i) at = memory[at];
    const double s = SecondsSince(start);
    if (at == ~uint64_t{0}) std::printf("unreachable\n");  // keeps the chase
    return s * 1e9 / static_cast<double>(hops);
  });
}

// GB/s of reading a buffer once, front to back.
double SequentialReadGBps(size_t bytes) {
  std::unique_ptr<uint64_t[]> memory(new uint64_t[bytes / 8]);
  for (size_t i = 0; i < bytes / 8; ++i) memory[i] = i;
  return 1.0 / BestOf(3, [&] {
           uint64_t sum = 0;
           const auto start = Clock::now();
           for (size_t i = 0; i < bytes / 8; i += 8) {
             sum += memory[i] + memory[i + 1] + memory[i + 2] + memory[i + 3] + memory[i + 4] + memory[i + 5] +
                    memory[i + 6] + memory[i + 7];
           }
           const double s = SecondsSince(start);
           if (sum == 42) std::printf("unreachable\n");
           return s / (static_cast<double>(bytes) / 1e9);
         });
}

struct PmemAppend {
  double plain_ns = 0;    // copied with plain stores (a non-sync write)
  double durable_ns = 0;  // copied, flushed and fenced: pmem_memcpy_persist (a sync write)
  bool is_pmem = false;   // libpmem's verdict on the mapping (false on tmpfs)
};

// ns per record of appending `record` bytes at a time to a mapped file.
bool PmemAppendNs(const std::string& path, size_t record, uint64_t records, PmemAppend* result,
                  std::string* error) {
  const size_t length = ((record * records) | 4095) + 1;
  size_t mapped = 0;
  int is_pmem = 0;
  void* base = pmem_map_file(path.c_str(), length, PMEM_FILE_CREATE | PMEM_FILE_EXCL, 0600, &mapped, &is_pmem);
  if (base == nullptr) {
    *error = "pmem_map_file " + path + ": " + pmem_errormsg();
    return false;
  }
  char* log = static_cast<char*>(base);
  std::memset(log, 0, mapped);  // the pages exist before the timing, as a WAL segment's do
  pmem_persist(log, mapped);
  std::string payload(record, 'r');
  result->is_pmem = is_pmem != 0;
  auto run = [&](bool durable) {
    return BestOf(3, [&] {
      const auto start = Clock::now();
      for (uint64_t i = 0; i < records; ++i) {
        char* dest = log + i * record;
        if (durable) {
          pmem_memcpy_persist(dest, payload.data(), record);
        } else {
          std::memcpy(dest, payload.data(), record);
        }
      }
      return SecondsSince(start) * 1e9 / static_cast<double>(records);
    });
  };
  result->plain_ns = run(false);
  result->durable_ns = run(true);
  pmem_unmap(base, mapped);
  unlink(path.c_str());
  return true;
}

struct Floor {
  std::string benchmark;
  double micros;
  std::string what;
};

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/dev/shm";
  std::string compare_json;
  std::string json;
  size_t key_size = 16, value_size = 100;
  size_t dram_mib = 512;
  CLI::App app("floor_bench: the hardware's floor for each workload of the paper, beside a jigsaw_bench run");
  app.add_option("--dir", dir, "directory of the pmem file the log appends are timed on (DRAM-emulated: /dev/shm)");
  app.add_option("--compare_json", compare_json, "a jigsaw_bench --json file: JigsawDB's figures beside the floors");
  app.add_option("--json", json, "write the measurements and floors here");
  app.add_option("--key_size", key_size, "key bytes")->check(CLI::Range(1, 1 << 20));
  app.add_option("--value_size", value_size, "value bytes")->check(CLI::Range(0, 1 << 24));
  app.add_option("--dram_mib", dram_mib, "MiB the pointer chase runs through")->check(CLI::Range(64, 1 << 16));
  CLI11_PARSE(app, argc, argv);

  // A WAL record of one put: the key, the value and ~24 bytes of batch and
  // record headers (sequence, count, type, lengths, checksum).
  const size_t record = key_size + value_size + 24;
  const double miss_ns = DramMissNs(dram_mib << 20, 4000000);
  const double read_gbps = SequentialReadGBps(size_t{256} << 20);
  PmemAppend append;
  std::string error;
  const std::string path = dir + "/floor_bench." + std::to_string(getpid()) + ".pmem";
  if (!PmemAppendNs(path, record, 200000, &append, &error)) {
    std::fprintf(stderr, "floor_bench: %s\n", error.c_str());
    return 1;
  }

  std::printf("floor_bench: primitives of this machine (best of 3)\n");
  std::printf("  dependent DRAM miss (%zu MiB, 4 KiB pages)   %8.1f ns\n", dram_mib, miss_ns);
  std::printf("  sequential read                               %8.2f GB/s\n", read_gbps);
  std::printf("  append a %zu-byte record to a mapping in %s (libpmem: %s)\n", record, dir.c_str(),
              append.is_pmem ? "pmem" : "not pmem, e.g. DRAM-emulated on tmpfs");
  std::printf("    plain stores (non-sync write)               %8.1f ns\n", append.plain_ns);
  std::printf("    pmem_memcpy_persist (sync write)            %8.1f ns\n", append.durable_ns);

  // The least any store does per operation: a write appends its record to a
  // log (durably for fillsync) and, unless keys arrive in order, finds its
  // place in an index (one miss); a point read finds its key (one miss into
  // an index) and reads the entry with its value (another); a scan streams
  // key, value and an 8-byte length field.
  const double scan_bytes = static_cast<double>(key_size + value_size + 8);
  const std::vector<Floor> floors = {
      {"fillseq", append.plain_ns / 1000, "append the record"},
      {"fillsync", append.durable_ns / 1000, "append the record durably"},
      {"fillrandom", (append.plain_ns + miss_ns) / 1000, "append the record + 1 miss (index)"},
      {"overwrite", (append.plain_ns + miss_ns) / 1000, "append the record + 1 miss (index)"},
      {"readrandom", 2 * miss_ns / 1000, "2 misses (index, entry and value)"},
      {"readseq", scan_bytes / read_gbps / 1000, "stream key + value + 8 bytes"},
  };

  std::map<std::string, double> jigsaw;  // best micros/op per benchmark
  if (!compare_json.empty()) {
    std::ifstream in(compare_json);
    nlohmann::json results;
    if (!in || !(in >> results)) {
      std::fprintf(stderr, "floor_bench: cannot read %s\n", compare_json.c_str());
      return 1;
    }
    for (const auto& r : results.value("results", nlohmann::json::array())) {
      if (r.value("engine", "") != "jigsaw") continue;
      const std::string name = r.value("benchmark", "");
      const double micros = r.value("micros_per_op", 0.0);
      if (micros > 0 && (!jigsaw.count(name) || micros < jigsaw[name])) jigsaw[name] = micros;
    }
  }

  std::printf("\n%-12s %10s %12s %8s  %s\n", "benchmark", "floor us", "JigsawDB us", "ratio", "floor");
  nlohmann::json out;
  out["primitives"] = {{"dram_miss_ns", miss_ns},
                       {"sequential_read_gbps", read_gbps},
                       {"record_bytes", record},
                       {"append_ns", append.plain_ns},
                       {"durable_append_ns", append.durable_ns},
                       {"is_pmem", append.is_pmem}};
  out["floors"] = nlohmann::json::array();
  for (const Floor& f : floors) {
    nlohmann::json row = {{"benchmark", f.benchmark}, {"floor_micros_per_op", f.micros}, {"floor", f.what}};
    auto it = jigsaw.find(f.benchmark);
    if (it != jigsaw.end()) {
      std::printf("%-12s %10.3f %12.3f %7.1fx  %s\n", f.benchmark.c_str(), f.micros, it->second,
                  it->second / f.micros, f.what.c_str());
      row["jigsaw_micros_per_op"] = it->second;
      row["ratio"] = it->second / f.micros;
    } else {
      std::printf("%-12s %10.3f %12s %8s  %s\n", f.benchmark.c_str(), f.micros, "-", "-", f.what.c_str());
    }
    out["floors"].push_back(row);
  }
  if (!json.empty()) {
    std::ofstream(json) << out.dump(2) << "\n";
    std::printf("\nwritten to %s\n", json.c_str());
  }
  return 0;
}
