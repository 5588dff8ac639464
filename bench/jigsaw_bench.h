// jigsaw_bench's flags and results, and how a run's results are printed
// beside each other and written to --json (jigsaw_bench_output.cc).
#ifndef JIGSAW_BENCH_JIGSAW_BENCH_H_
#define JIGSAW_BENCH_JIGSAW_BENCH_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace jigsaw::bench {

struct Flags {
  std::string benchmarks = "fillseq,fillsync,fillrandom,overwrite,readrandom,readseq,readrandom,readseq";
  uint64_t num = 1000000;
  int64_t reads = -1;
  int key_size = 16;
  int value_size = 100;
  int threads = 1;
  int batch_size = 16;
  std::string db = "/dev/shm/jigsaw-bench/db";
  std::string pmem_path;
  std::string peer_dir;
  std::string engines = "jigsaw,leveldb,rocksdb";
  std::string mode = "pmem";
  std::string timing_model = "none";
  std::string pmem_emulation = "auto";
  uint64_t pmem_budget_mb = 64;
  int ssd_use_mmap = 0;
  int ssd_mapped_gets = 1;
  int paranoid_checks = 1;
  int reuse_log_files = 1;
  uint64_t wal_size_limit_mb = 0;
  int concurrent_memtable_writes = 1;
  int read_triggered_compactions = 1;
  size_t ssd_block_kb = 8;
  std::string table_format = "keyset";  // of SSD tables
  size_t cache_size_mb = 64;
  int64_t cache_size = -1;         // db_bench's, bytes (-1: --cache_size_mb)
  int64_t write_buffer_size = 4 << 20;  // db_bench's: memtable bytes, every engine
  int bloom_bits = 10;             // db_bench's: Bloom bits per key, every engine
  double compression_ratio = 0.5;  // db_bench's: values compress to about this fraction of their size
  uint64_t benchmark_write_rate_limit = 0;  // db_bench's: readwhilewriting's writer, key+value bytes/s (0: none)
  std::string compression = "none";  // EngineConfig::compression
  std::string ssd_io = "auto";
  std::string ycsb_distribution = "zipfian";
  uint64_t level1_mb = 0;
  size_t table_size_kb = 0;
  uint64_t pool_size_mb = 0;  // 0: sized for --num (PoolSizeMiB)
  bool use_existing_db = false;
  bool histogram = true;
  std::string json;
  std::string compare_json;
  bool stats = false;
};

struct Result {
  std::string engine, benchmark;
  uint64_t ops = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0;
  // Whether operations were timed one by one (not for whole-table scans).
  bool has_percentiles() const { return p50_us > 0 || p99_us > 0 || p999_us > 0; }
  uint64_t found = 0;
  uint64_t writer_puts = 0;  // readwhilewriting: the writer's puts while the readers ran
  std::string error;  // set if an operation failed
  double micros_per_op() const { return ops ? seconds * 1e6 / static_cast<double>(ops) : 0; }
  double ops_per_sec() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
  double mb_per_sec() const { return seconds > 0 ? static_cast<double>(bytes) / 1048576.0 / seconds : 0; }
};

// This machine's host name and CPU model.
std::string Hostname();
std::string CpuModel();
// Prints this run's JigsawDB results beside an earlier run's (a --json
// file): JigsawDB's micros/op in both, and this run's JigsawDB throughput
// relative to the earlier run's peers. The n-th run of a benchmark name is
// compared with the n-th of the same name there.
void PrintComparison(const std::string& path, const std::vector<Result>& results);
// Throughput ratios of JigsawDB to each peer, benchmark by benchmark (the
// n-th run of a benchmark name is compared with the peer's n-th run).
void PrintPeerRatios(const std::vector<Result>& results);
// Each engine's files after its benchmarks (`file_bytes`), in bytes per
// --num entries.
void PrintSpace(const Flags& f, const std::map<std::string, uint64_t>& file_bytes);
// Writes the machine, the flags, the build, every result and each engine's
// file bytes to --json, and says so.
void WriteJson(const Flags& f, const std::vector<Result>& results, const std::map<std::string, uint64_t>& file_bytes);

}  // namespace jigsaw::bench

#endif  // JIGSAW_BENCH_JIGSAW_BENCH_H_
