// jigsaw_profile: the conversion-cost profiler.
//
// Runs the JigsawDB paper's workload (fillseq, fillsync, fillrandom,
// overwrite, readrandom, readseq, readrandom, readseq; 16-byte keys, 100-byte
// values) in four configurations -- {Disk+NVM, Disk only} x {KeySet blocks,
// classic LevelDB-style blocks} -- with every flush and compaction timed by
// phase (read, decode, merge, encode, write, sync), then the same workload on
// LevelDB. Prints the paper's Table 1 (share of compaction time per phase)
// and Table 3 (writing, encoding and total time), and writes JSON, CSV (one
// row per flush or compaction) and gnuplot plots.
//
//   jigsaw_profile --num=100000 --dir=/var/tmp/jigsaw-profile
//                  --pmem_path=/dev/shm/jigsaw-profile.pool --json=p.json --csv=p.csv --plot=p
//
// Disk+NVM is hybrid mode: the WAL, the manifest, L0 and the upper levels
// in (emulated) pmem, the deepest level the workload fills as SSD tables in
// --dir (--pmem_budget_mb sizes the pmem levels; by default every level
// above the deepest one). Disk only keeps nothing in pmem. LevelDB runs
// twice: with its directory in --dir (on the disk) and in --leveldb_nvm_dir
// (on the pmem mount: the paper's "hierarchical on NVM"). See
// docs/performance.md.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_key.h"
#include "bench/engines.h"

namespace jigsaw::bench {
namespace {

struct Flags {
  uint64_t num = 100000;
  std::string dir = "/var/tmp/jigsaw-profile";
  std::string pmem_path = "/dev/shm/jigsaw-profile.pool";
  uint64_t pmem_budget_mb = 0;  // 0: every level above the deepest one (PlanPmemLevels)
  std::string leveldb_nvm_dir;  // "": next to --pmem_path
  uint64_t write_buffer_size = 4 << 20;  // memtable bytes, every engine (db_bench's name)
  bool leveldb = true;
  bool overhead = true;
  std::vector<std::string> configs = {"disk+nvm/keyset", "disk+nvm/classic", "disk/keyset", "disk/classic"};
  std::string json, csv, plot;
};

struct Phases {
  double read = 0, decode = 0, merge = 0, encode = 0, write = 0, sync = 0;
  // Of encode: plain copies, and filter and checksum work; of decode:
  // conversion out of the block format (the engine's profile columns).
  double encode_copy = 0, encode_filter_checksum = 0, decode_convert = 0;
  double sum() const { return read + decode + merge + encode + write + sync; }
  // The paper's words: conversion into and out of the block format (encode
  // less its copies and filter and checksum work, plus decode's
  // conversion), bytes moved unchanged, and the work both formats do on the
  // same bytes.
  double convert() const { return std::max(0.0, encode - encode_copy - encode_filter_checksum) + decode_convert; }
  double copy() const { return encode_copy; }
  double filter_checksum() const { return encode_filter_checksum; }
  double positioning() const { return std::max(0.0, decode - decode_convert); }
};

struct ConfigResult {
  std::string storage, format;  // "disk+nvm" / "disk", "keyset" / "classic"
  std::string pmem_format, ssd_format;  // the block format of each tier ("none": the tier is not used)
  double total_s = 0;
  Phases compaction;  // compactions only (flushes are in `flush`)
  Phases flush;
  int compactions = 0, flushes = 0;
  double instrumentation_s = 0;  // the profile's clock reads (taken out of its phases)
  double compacted_entries = 0;  // entries read by compactions
  double spliced_entries = 0;    // of compacted_entries, copied as bytes in runs
  int moves = 0;                 // trivial moves: tables moved down by a manifest edit
  double moved_entries = 0;      // their entries
  int migrations = 0;            // pmem blocks written to SSD tables as their bytes
  double migrated_entries = 0;   // their entries
  std::vector<std::vector<double>> rows;  // the engine's profile rows
};

std::string Key(uint64_t n) {
  std::string key;
  MakeBenchKey(n, 16, &key);
  return key;
}

// The paper's workload on one engine; returns the total seconds. `collect`
// is called before each database is destroyed and at the end.
double RunWorkload(const std::string& name, const EngineConfig& config, uint64_t num,
                   const std::function<void(Engine*)>& collect) {
  std::mt19937_64 rng(301);
  std::string value_pool(1 << 20, ' ');
  for (char& c : value_pool) c = static_cast<char>(' ' + rng() % 95);
  auto value = [&] { return value_pool.substr(rng() % (value_pool.size() - 100), 100); };
  std::unique_ptr<Engine> engine;
  auto reopen = [&](bool destroy) {
    if (engine != nullptr) collect(engine.get());
    engine.reset();
    std::string error;
    engine = ReopenEngine(name, config, destroy, &error);
    if (engine == nullptr) {
      std::fprintf(stderr, "cannot open %s: %s\n", name.c_str(), error.c_str());
      std::exit(1);
    }
  };
  auto fail = [&](const std::string& what, const std::string& error) {
    std::fprintf(stderr, "%s %s: %s\n", name.c_str(), what.c_str(), error.c_str());
    std::exit(1);
  };
  double total = 0;
  const char* benchmarks[] = {"fillseq", "fillsync", "fillrandom", "overwrite",
                              "readrandom", "readseq", "readrandom", "readseq"};
  for (const std::string b : benchmarks) {
    const bool fill = b.rfind("fill", 0) == 0;
    if (fill || engine == nullptr) reopen(fill);
    const auto start = std::chrono::steady_clock::now();
    if (b == "fillseq") {
      for (uint64_t i = 0; i < num; ++i) {
        const std::string e = engine->Put(Key(i), value(), false);
        if (!e.empty()) fail(b, e);
      }
    } else if (b == "fillsync") {
      // Every write durable: num/100 of them (an fsync each on the disk).
      for (uint64_t i = 0; i < std::max<uint64_t>(1, num / 100); ++i) {
        const std::string e = engine->Put(Key(rng() % num), value(), true);
        if (!e.empty()) fail(b, e);
      }
    } else if (b == "fillrandom" || b == "overwrite") {
      for (uint64_t i = 0; i < num; ++i) {
        const std::string e = engine->Put(Key(rng() % num), value(), false);
        if (!e.empty()) fail(b, e);
      }
    } else if (b == "readrandom") {
      std::string v;
      for (uint64_t i = 0; i < num; ++i) {
        if (engine->Get(Key(rng() % num), &v) < 0) fail(b, "read error");
      }
    } else {
      uint64_t bytes = 0;
      engine->Scan(num, false, &bytes);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "  %-8s %-10s %8.3f s\n", name.c_str(), b.c_str(), seconds);
    total += seconds;
  }
  collect(engine.get());
  engine.reset();  // a clean close: pending compaction syncs finish (and are timed)
  return total;
}

// The columns of jigsaw.compaction-profile this profiler reads, in order
// (db.h documents the property).
constexpr const char* kProfileHeader =
    "start_s,level,to_ssd,read_s,decode_s,merge_s,encode_s,write_s,sync_s,total_s,bytes_in,bytes_out,entries,"
    "instrumentation_s,entries_moved,entries_spliced,entries_migrated,encode_copy_s,encode_filter_checksum_s,"
    "decode_convert_s";
constexpr size_t kProfileColumns = 20;

// Parses the engine's jigsaw.compaction-profile CSV into rows of numbers.
// A header or row this profiler does not know is a fatal error, not a
// silently empty report.
void ParseProfile(const std::string& csv, std::vector<std::vector<double>>* rows) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  if (line != kProfileHeader) {
    std::fprintf(stderr, "jigsaw_profile: unexpected jigsaw.compaction-profile header: %s\n", line.c_str());
    std::exit(1);
  }
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(std::stod(cell));
    if (row.size() != kProfileColumns) {
      std::fprintf(stderr, "jigsaw_profile: profile row with %zu columns, expected %zu: %s\n", row.size(),
                   kProfileColumns, line.c_str());
      std::exit(1);
    }
    rows->push_back(std::move(row));
  }
}

// The table geometry every JigsawDB configuration runs with: LevelDB's on
// the disk (10 MiB L1, x10 per level, 2 MiB tables).
constexpr uint64_t kLevel1Bytes = 10 << 20;
constexpr size_t kTableBytes = 2 << 20;
// The engine has levels L0..L6: the deepest one always may go to SSD.
constexpr int kMaxPmemLevel = 5;

// Which levels Disk+NVM keeps in pmem, and the pmem budget that keeps them
// there (Options::pmem_budget): L0 at its stop trigger, then each level's
// target size (the engine's placement rule, compaction/picker.cc
// OutputToSsd).
struct PmemPlan {
  uint64_t budget = 0;
  int deepest_pmem_level = 0;  // 0: L0 only
};

uint64_t BudgetForLevels(const Flags& f, int deepest_level) {
  const Options defaults;
  uint64_t bytes = static_cast<uint64_t>(defaults.level0_stop_trigger) * f.write_buffer_size;
  uint64_t level_bytes = kLevel1Bytes;
  for (int l = 1; l <= deepest_level; ++l, level_bytes *= static_cast<uint64_t>(defaults.level_size_multiplier)) {
    bytes += level_bytes;
  }
  return bytes;
}

// --pmem_budget_mb, or (0) the budget that keeps every level above the
// deepest one this workload fills in pmem: levels are added from L1 down
// while their targets together hold less than the workload's live data
// (num entries of 16-byte keys, 100-byte values and 16 bytes of entry
// overhead). A budget that keeps no level below L0 in pmem is refused with
// the smallest one that keeps L1.
bool PlanPmemLevels(const Flags& f, PmemPlan* plan, std::string* error) {
  const Options defaults;
  const uint64_t live_bytes = f.num * (16 + 100 + 16);
  if (f.pmem_budget_mb == 0) {
    int deepest = 0;
    uint64_t targets = 0, level_bytes = kLevel1Bytes;
    while (deepest < kMaxPmemLevel && targets + level_bytes < live_bytes) {
      targets += level_bytes;
      level_bytes *= static_cast<uint64_t>(defaults.level_size_multiplier);
      ++deepest;
    }
    plan->deepest_pmem_level = deepest;
    plan->budget = BudgetForLevels(f, deepest);
    return true;
  }
  plan->budget = f.pmem_budget_mb << 20;
  const uint64_t smallest = BudgetForLevels(f, 1);
  if (plan->budget < smallest) {
    *error = "--pmem_budget_mb=" + std::to_string(f.pmem_budget_mb) +
             " keeps no level below L0 in pmem (L0 at its stop trigger alone needs " +
             std::to_string(BudgetForLevels(f, 0) >> 20) + " MiB); the smallest budget that keeps L1 is " +
             std::to_string((smallest + (1 << 20) - 1) >> 20) + " MiB (0: every level above the deepest one)";
    return false;
  }
  int deepest = 0;
  while (deepest < kMaxPmemLevel && BudgetForLevels(f, deepest + 1) <= plan->budget) ++deepest;
  plan->deepest_pmem_level = deepest;
  return true;
}

ConfigResult RunConfig(const Flags& f, const PmemPlan& plan, bool hybrid, bool classic, bool profile) {
  ConfigResult r;
  r.storage = hybrid ? "disk+nvm" : "disk";
  r.format = classic ? "classic" : "keyset";
  r.ssd_format = r.format;
  r.pmem_format = hybrid ? r.format : "none";
  EngineConfig config;
  config.dir = f.dir + "/" + r.storage + "-" + r.format;
  config.pmem_path = f.pmem_path;
  // The pool holds the budget's tables, the WAL segments and the standby
  // space (docs/sizing.md: 4 MiB memtables need 117 MiB); pool files on
  // tmpfs are allocated whole.
  config.pmem_pool_size = std::max<uint64_t>(uint64_t{256} << 20, 2 * plan.budget);
  config.storage_mode = hybrid ? StorageMode::kHybrid : StorageMode::kDisk;
  config.pmem_budget = plan.budget;
  config.memtable_size = f.write_buffer_size;
  config.table_format = classic ? TableFormat::kClassic : TableFormat::kKeySet;
  config.profile_compactions = profile;
  config.level1_size = kLevel1Bytes;
  config.block_size = kTableBytes;
  std::fprintf(stderr, "%s / %s%s\n", r.storage.c_str(), r.format.c_str(), profile ? "" : " (profiling off)");
  // Each database instance is collected once, just before it is replaced
  // or at the end of the workload.
  auto collect = [&](Engine* e) { ParseProfile(e->Property("jigsaw.compaction-profile"), &r.rows); };
  r.total_s = RunWorkload("jigsaw", config, f.num, collect);
  DestroyEngine("jigsaw", config);
  for (const auto& row : r.rows) {
    if (row[14] > 0) {  // a trivial move: nothing read, decoded or written
      ++r.moves;
      r.moved_entries += row[14];
      continue;
    }
    Phases& p = row[1] < 0 ? r.flush : r.compaction;
    if (row[16] > 0) {  // a migration: written, not merged; its phases count
      ++r.migrations;
      r.migrated_entries += row[16];
    } else {
      (row[1] < 0 ? r.flushes : r.compactions)++;
    }
    if (row[1] >= 0) {
      r.compacted_entries += row[12];
      r.spliced_entries += row[15];
    }
    r.instrumentation_s += row[13];
    p.read += row[3];
    p.decode += row[4];
    p.merge += row[5];
    p.encode += row[6];
    p.write += row[7];
    p.sync += row[8];
    p.encode_copy += row[17];
    p.encode_filter_checksum += row[18];
    p.decode_convert += row[19];
  }
  return r;
}

double Share(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

// The paper's Figure 4: write time over encode time along the sequence of
// compaction merges (migrations and trivial moves encode nothing and are
// left out), the sequence normalised into kFigureBuckets parts; each part's
// ratio is its merges' write time over their encode time (NaN: a part with
// no merge, when there are fewer merges than parts).
constexpr int kFigureBuckets = 200;

std::vector<double> WriteOverEncodeBuckets(const ConfigResult& r) {
  std::vector<const std::vector<double>*> merges;
  for (const auto& row : r.rows) {
    if (row[1] >= 0 && row[14] == 0 && row[16] == 0) merges.push_back(&row);
  }
  std::vector<double> write(kFigureBuckets, 0), encode(kFigureBuckets, 0), ratio(kFigureBuckets, std::nan(""));
  for (size_t i = 0; i < merges.size(); ++i) {
    const size_t bucket = i * kFigureBuckets / merges.size();
    write[bucket] += (*merges[i])[7];
    encode[bucket] += (*merges[i])[6];
  }
  for (int b = 0; b < kFigureBuckets; ++b) {
    if (encode[b] > 0) ratio[b] = write[b] / encode[b];
  }
  return ratio;
}

// Write time over encode time of all compaction merges together.
double WriteOverEncode(const ConfigResult& r) {
  double write = 0, encode = 0;
  for (const auto& row : r.rows) {
    if (row[1] >= 0 && row[14] == 0 && row[16] == 0) {
      write += row[7];
      encode += row[6];
    }
  }
  return encode > 0 ? write / encode : 0;
}

void WritePlots(const std::string& prefix, const std::vector<ConfigResult>& results) {
  // Data: one file per configuration, one row per compaction.
  for (const ConfigResult& r : results) {
    std::ofstream out(prefix + "-" + r.storage + "-" + r.format + ".dat");
    out << "# part_of_the_compaction_sequence write_over_encode\n";
    const std::vector<double> ratio = WriteOverEncodeBuckets(r);
    for (int b = 0; b < kFigureBuckets; ++b) {
      if (!std::isnan(ratio[b])) out << b << " " << ratio[b] << "\n";
    }
  }
  std::ofstream shares(prefix + "-shares.dat");
  shares << "# config read decode merge encode write sync\n";
  for (const ConfigResult& r : results) {
    const double w = r.compaction.sum();
    shares << r.storage << "/" << r.format << " " << Share(r.compaction.read, w) << " " << Share(r.compaction.decode, w)
           << " " << Share(r.compaction.merge, w) << " " << Share(r.compaction.encode, w) << " "
           << Share(r.compaction.write, w) << " " << Share(r.compaction.sync, w) << "\n";
  }
  shares.close();
  // Colours from the Okabe-Ito palette (told apart with colour-blindness
  // too), and a different point shape per configuration.
  static const char* const kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"};
  static const int kPointTypes[] = {7, 5, 9, 13, 11, 15};
  std::ofstream gp(prefix + ".gp");
  gp << "set terminal pngcairo size 1000,420\n"
        "set output '" << prefix << "-ratio.png'\n"
        "set title 'Write time / encode time along the compaction merges (cf. JigsawDB paper, Figure 4)'\n"
        "set xlabel 'compaction sequence, in " << kFigureBuckets << " parts'\nset ylabel 'write / encode'\n"
        "set logscale y\nset key outside\nset xrange [0:" << kFigureBuckets << "]\n"
        "plot ";
  for (size_t i = 0; i < results.size(); ++i) {
    gp << (i ? ", " : "") << "'" << prefix << "-" << results[i].storage << "-" << results[i].format
       << ".dat' using 1:2 with linespoints pt " << kPointTypes[i % 6] << " ps 0.6 lc rgb '" << kColours[i % 6]
       << "' title '" << results[i].storage << "/" << results[i].format << "'";
  }
  // The phase shares: stacked bars in the order of the columns, bottom to
  // top; the legend is inverted to read in the same order as the stack.
  // Decode and encode are a few percent: each bar is labelled with their
  // sum above it, so that a thin slice is never the only trace of them.
  gp << "\nunset logscale y\n"
        "set output '" << prefix << "-shares.png'\n"
        "set title 'Share of compaction time per phase (%)'\nset style data histograms\n"
        "set style histogram rowstacked\nset style fill solid 1.0 border rgb 'black'\nset boxwidth 0.6\n"
        "set key outside right top invert\n"
        "set ylabel '% of compaction time'\nset xlabel ''\nset yrange [0:112]\nset ytics 0,20,100\n"
        "set xtics rotate by -20\nset xrange [-0.6:" << results.size() - 0.4 << "]\n"
        "plot '" << prefix << "-shares.dat' using 2:xtic(1) title 'read' lc rgb '#BBBBBB', "
        "'' using 3 title 'decode' lc rgb '#D55E00', '' using 4 title 'merge' lc rgb '#56B4E9', "
        "'' using 5 title 'encode' lc rgb '#E69F00', '' using 6 title 'write' lc rgb '#009E73', "
        "'' using 7 title 'sync' lc rgb '#CC79A7', "
        "'' using 0:(105):(sprintf('enc+dec %.1f%%', $3+$5)) with labels notitle\n";
  gp.close();
  const std::string command = "gnuplot '" + prefix + ".gp'";
  if (std::system(command.c_str()) == 0) {
    std::printf("plots: %s-ratio.png, %s-shares.png (gnuplot script %s.gp)\n", prefix.c_str(), prefix.c_str(),
                prefix.c_str());
  } else {
    std::printf("gnuplot failed; script and data left in %s.gp and %s-*.dat\n", prefix.c_str(), prefix.c_str());
  }
}

// Defines the command-line flags, each stored into *f.
void DefineFlags(CLI::App* app, Flags* f) {
  app->add_option("--num", f->num, "entries of the workload")->check(CLI::PositiveNumber);
  app->add_option("--dir", f->dir, "disk directory for the SSD tables (and LevelDB)");
  app->add_option("--pmem_path", f->pmem_path, "pool file for Disk+NVM (DRAM-emulated pmem on /dev/shm)");
  app->add_option("--pmem_budget_mb", f->pmem_budget_mb,
                  "Disk+NVM: MiB of tables kept in pmem (L0 at its stop trigger, then whole levels); 0 (default): "
                  "every level above the deepest one the workload fills");
  app->add_option("--leveldb_nvm_dir", f->leveldb_nvm_dir,
                  "LevelDB's directory on the pmem mount (default: --pmem_path with \"-leveldb\" appended)");
  app->add_option("--write_buffer_size", f->write_buffer_size, "memtable bytes (every engine)")
      ->check(CLI::Range(uint64_t{64} << 10, uint64_t{1} << 30));
  app->add_option("--leveldb", f->leveldb, "also run the workload on LevelDB (1/0)");
  app->add_option("--overhead", f->overhead,
                  "also run Disk/KeySet three times with profiling off and twice more on, alternating, to show its "
                  "cost (1/0)");
  app->add_option("--configs", f->configs, "configurations to run (storage/format)")
      ->delimiter(',')
      ->check(CLI::IsMember({"disk+nvm/keyset", "disk+nvm/classic", "disk/keyset", "disk/classic"}));
  app->add_option("--json", f->json, "write the results as JSON");
  app->add_option("--csv", f->csv, "write one row per flush or compaction");
  app->add_option("--plot", f->plot, "write gnuplot PNGs with this path prefix");
}

// Runs the workload in each configuration --configs names, in the order Disk+NVM before Disk only, KeySet before
// classic, with profiling on.
std::vector<ConfigResult> RunConfigs(const Flags& f, const PmemPlan& plan) {
  std::vector<ConfigResult> results;
  for (bool hybrid : {true, false}) {
    for (bool classic : {false, true}) {
      const std::string name = std::string(hybrid ? "disk+nvm" : "disk") + (classic ? "/classic" : "/keyset");
      if (std::find(f.configs.begin(), f.configs.end(), name) == f.configs.end()) continue;
      results.push_back(RunConfig(f, plan, hybrid, classic, true));
    }
  }
  return results;
}

// Profiling's cost: the median run time of Disk/KeySet with profiling off, and on (0 each: not measured).
struct Overhead {
  double unprofiled = 0, profiled = 0;
};

// With --overhead and a Disk/KeySet result among `results`, runs Disk/KeySet with profiling off and on,
// alternating (the first "on" is the run in `results`), and returns the medians of three each.
Overhead MeasureOverhead(const Flags& f, const PmemPlan& plan, const std::vector<ConfigResult>& results) {
  const ConfigResult* disk_keyset = nullptr;
  for (const ConfigResult& r : results) {
    if (r.storage == "disk" && r.format == "keyset") disk_keyset = &r;
  }
  Overhead overhead;
  if (f.overhead && disk_keyset != nullptr) {
    std::vector<double> off, on = {disk_keyset->total_s};
    for (int round = 0; round < 3; ++round) {
      off.push_back(RunConfig(f, plan, false, false, false).total_s);
      if (round < 2) on.push_back(RunConfig(f, plan, false, false, true).total_s);
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    overhead.unprofiled = median(off);
    overhead.profiled = median(on);
  }
  return overhead;
}

// LevelDB's total seconds with its directory on the disk and on the pmem mount (0 each: not run).
struct LevelDbTotals {
  double disk = 0, nvm = 0;
};

// With --leveldb, runs the workload on LevelDB in --dir and in --leveldb_nvm_dir; clears f->leveldb (saying so) if
// LevelDB is not built in.
LevelDbTotals RunLevelDb(Flags* f) {
  LevelDbTotals totals;
  if (f->leveldb && !EngineBuiltIn("leveldb")) {
    std::fprintf(stderr, "jigsaw_profile: LevelDB was not found at build time: no LevelDB run\n");
    f->leveldb = false;
  }
  if (f->leveldb) {
    EngineConfig config;
    config.dir = f->dir + "/leveldb";
    config.memtable_size = f->write_buffer_size;
    totals.disk = RunWorkload("leveldb", config, f->num, [](Engine*) {});
    DestroyEngine("leveldb", config);
    config.dir = f->leveldb_nvm_dir;
    std::fprintf(stderr, "leveldb on the pmem mount (%s)\n", config.dir.c_str());
    totals.nvm = RunWorkload("leveldb", config, f->num, [](Engine*) {});
    DestroyEngine("leveldb", config);
  }
  return totals;
}

// Compaction merges in all configurations.
int TotalCompactions(const std::vector<ConfigResult>& results) {
  int compactions = 0;
  for (const ConfigResult& r : results) compactions += r.compactions;
  return compactions;
}

// Prints what ran where, and a note when no compaction ran at all.
void PrintSetting(const Flags& f, const PmemPlan& plan, int compactions) {
  std::printf("jigsaw_profile  num %" PRIu64 ", 16-byte keys, 100-byte values; SSD tables in %s; pmem %s\n",
              f.num, f.dir.c_str(), f.pmem_path.c_str());
  std::printf("Disk+NVM: L0%s in pmem (a %" PRIu64 " MiB budget), deeper levels on SSD; each configuration's "
              "tables in its format in every tier it uses\n\n",
              plan.deepest_pmem_level == 0 ? ""
                                           : ("-L" + std::to_string(plan.deepest_pmem_level)).c_str(),
              plan.budget >> 20);
  if (compactions == 0) {
    std::printf("No compaction ran in any configuration: --num=%" PRIu64
                " fits in the memtables and L0. The tables below are empty; try --num=1000000 (the paper's "
                "scale).\n\n",
                f.num);
  }
}

// Prints Table 1 (each phase's share of compaction time) and the same shares in the paper's words.
void PrintPhaseShares(const std::vector<ConfigResult>& results) {
  std::printf("Table 1: share of compaction time per phase (%%)\n");
  std::printf("%-18s %11s %7s %7s %7s %7s %7s %7s %10s\n", "configuration", "compactions", "read", "decode",
              "merge", "encode", "write", "sync", "enc+dec");
  for (const ConfigResult& r : results) {
    const double w = r.compaction.sum();
    std::printf("%-18s %11d %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %9.1f%%\n", (r.storage + "/" + r.format).c_str(),
                r.compactions, Share(r.compaction.read, w), Share(r.compaction.decode, w),
                Share(r.compaction.merge, w), Share(r.compaction.encode, w), Share(r.compaction.write, w),
                Share(r.compaction.sync, w), Share(r.compaction.encode + r.compaction.decode, w));
  }
  std::printf("\nTable 1 in the paper's words: share of compaction time (%%). convert: into and out of the block "
              "format (encode less its copies and filter and checksum work, plus decode's varints and key "
              "rebuilding); copy: bytes moved unchanged by the format's builders (keys, values, spliced runs, "
              "staged key sets); filter+checksum: key hashes, Bloom bits, CRCs; positioning: decode's stepping "
              "through blocks\n");
  std::printf("%-18s %9s %7s %16s %12s %7s %7s %7s %7s\n", "configuration", "convert", "copy", "filter+checksum",
              "positioning", "merge", "read", "write", "sync");
  for (const ConfigResult& r : results) {
    const Phases& c = r.compaction;
    const double w = c.sum();
    std::printf("%-18s %9.1f %7.1f %16.1f %12.1f %7.1f %7.1f %7.1f %7.1f\n", (r.storage + "/" + r.format).c_str(),
                Share(c.convert(), w), Share(c.copy(), w), Share(c.filter_checksum(), w),
                Share(c.positioning(), w), Share(c.merge, w), Share(c.read, w), Share(c.write, w),
                Share(c.sync, w));
  }
}

// Prints each phase's compaction time per entry compactions read, and how they placed the entries.
void PrintPerEntry(const std::vector<ConfigResult>& results) {
  // Migrations' phases are compaction time (their block's write and sync):
  // their entries count too, or the write and sync of a migrated block
  // would be spread over the merged entries alone.
  std::printf("\nThe same per entry read by compactions, merged or migrated (ns)\n");
  std::printf("%-18s %11s %7s %7s %7s %7s %7s %7s %10s\n", "configuration", "entries", "read", "decode", "merge",
              "encode", "write", "sync", "total");
  for (const ConfigResult& r : results) {
    const double entries = r.compacted_entries + r.migrated_entries;
    const double n = entries > 0 ? entries / 1e9 : 1.0;  // seconds -> ns per entry
    std::printf("%-18s %11.0f %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %10.1f\n", (r.storage + "/" + r.format).c_str(),
                entries, r.compaction.read / n, r.compaction.decode / n, r.compaction.merge / n,
                r.compaction.encode / n, r.compaction.write / n, r.compaction.sync / n, r.compaction.sum() / n);
  }
  std::printf("\nHow compactions placed entries: merged entry by entry (rebuilt), copied as bytes in runs "
              "(spliced), moved by reference in whole tables (a manifest edit), or written from pmem to SSD as "
              "whole blocks' bytes (migrated)\n");
  std::printf("%-18s %9s %12s %12s %9s %12s %10s %12s\n", "configuration", "merges", "rebuilt", "spliced", "moves",
              "moved", "migrations", "migrated");
  for (const ConfigResult& r : results) {
    std::printf("%-18s %9d %12.0f %12.0f %9d %12.0f %10d %12.0f\n", (r.storage + "/" + r.format).c_str(),
                r.compactions, r.compacted_entries - r.spliced_entries, r.spliced_entries, r.moves, r.moved_entries,
                r.migrations, r.migrated_entries);
  }
}

// Prints Table 3 (writing, encoding and total time, against LevelDB's when it ran).
void PrintTotals(const Flags& f, const std::vector<ConfigResult>& results, const LevelDbTotals& leveldb) {
  std::printf("\nTable 3: writing, encoding and total time (s); flushes and compactions\n");
  std::printf("%-18s %10s %10s %10s %12s %14s %14s\n", "configuration", "writing", "encoding", "total", "vs LevelDB",
              "vs LevelDB-NVM", "write/encode");
  for (const ConfigResult& r : results) {
    char versus[32] = "-", versus_nvm[32] = "-";  // no LevelDB run
    if (leveldb.disk > 0) std::snprintf(versus, sizeof(versus), "%.2fx", r.total_s / leveldb.disk);
    if (leveldb.nvm > 0) std::snprintf(versus_nvm, sizeof(versus_nvm), "%.2fx", r.total_s / leveldb.nvm);
    std::printf("%-18s %10.3f %10.3f %10.3f %12s %14s %14.1f\n", (r.storage + "/" + r.format).c_str(),
                r.compaction.write + r.flush.write, r.compaction.encode + r.flush.encode, r.total_s, versus,
                versus_nvm, WriteOverEncode(r));
  }
  if (f.leveldb) {
    std::printf("%-18s %10s %10s %10.3f\n", "leveldb (disk)", "-", "-", leveldb.disk);
    std::printf("%-18s %10s %10s %10.3f\n", "leveldb (pmem fs)", "-", "-", leveldb.nvm);
  }
  std::printf("(write/encode: compaction merges' write time over their encode time, the paper's Figure 4 "
              "taken over the whole run)\n");
}

// Prints what profiling cost: its clock reads in each configuration, and the measured overhead if it was.
void PrintProfilingCost(const std::vector<ConfigResult>& results, const Overhead& overhead) {
  std::printf("\nCost of profiling ON (clock reads; estimated from their measured cost and taken out of the "
              "phases above):\n");
  for (const ConfigResult& r : results) {
    std::printf("%-18s %.3f s = %.2f%% of compaction time, %.2f%% of the run\n", (r.storage + "/" + r.format).c_str(),
                r.instrumentation_s, Share(r.instrumentation_s, r.compaction.sum() + r.instrumentation_s),
                Share(r.instrumentation_s, r.total_s));
  }
  if (overhead.unprofiled > 0) {
    std::printf("disk/keyset, profiling off vs on, three alternating runs each: medians %.3f s vs %.3f s (%+.1f%%; "
                "this machine's run-to-run noise is larger); off, no profile clock is read at all\n",
                overhead.unprofiled, overhead.profiled,
                Share(overhead.profiled - overhead.unprofiled, overhead.unprofiled));
  }
}

// Writes the run's settings and each configuration's totals to --json.
void WriteJson(const Flags& f, const PmemPlan& plan, const std::vector<ConfigResult>& results,
               const LevelDbTotals& leveldb, const Overhead& overhead) {
  nlohmann::json out;
  out["num"] = f.num;
  out["leveldb_total_s"] = leveldb.disk;
  out["leveldb_nvm_total_s"] = leveldb.nvm;
  out["pmem_budget_mb"] = plan.budget >> 20;
  out["deepest_pmem_level"] = plan.deepest_pmem_level;
  out["unprofiled_disk_keyset_total_s"] = overhead.unprofiled;  // median of three
  out["profiled_disk_keyset_total_s"] = overhead.profiled;      // median of three
  for (const ConfigResult& r : results) {
    nlohmann::json buckets = nlohmann::json::array();
    for (double ratio : WriteOverEncodeBuckets(r)) {
      buckets.push_back(std::isnan(ratio) ? nlohmann::json(nullptr) : nlohmann::json(ratio));
    }
    out["configurations"].push_back({{"storage", r.storage},
                                     {"format", r.format},
                                     {"pmem_format", r.pmem_format},
                                     {"ssd_format", r.ssd_format},
                                     {"write_over_encode", WriteOverEncode(r)},
                                     {"write_over_encode_parts", buckets},
                                     {"total_s", r.total_s},
                                     {"read_s", r.compaction.read},
                                     {"decode_s", r.compaction.decode},
                                     {"merge_s", r.compaction.merge},
                                     {"encode_s", r.compaction.encode},
                                     {"write_s", r.compaction.write},
                                     {"sync_s", r.compaction.sync},
                                     {"convert_s", r.compaction.convert()},
                                     {"copy_s", r.compaction.copy()},
                                     {"filter_checksum_s", r.compaction.filter_checksum()},
                                     {"positioning_s", r.compaction.positioning()},
                                     {"convert_share", Share(r.compaction.convert(), r.compaction.sum()) / 100},
                                     {"flush_convert_s", r.flush.convert()},
                                     {"flush_copy_s", r.flush.copy()},
                                     {"flush_filter_checksum_s", r.flush.filter_checksum()},
                                     {"compactions", r.compactions},
                                     {"compacted_entries", r.compacted_entries},
                                     {"spliced_entries", r.spliced_entries},
                                     {"trivial_moves", r.moves},
                                     {"moved_entries", r.moved_entries},
                                     {"migrations", r.migrations},
                                     {"migrated_entries", r.migrated_entries},
                                     {"flushes", r.flushes},
                                     {"flush_encode_s", r.flush.encode},
                                     {"flush_write_s", r.flush.write},
                                     {"flush_sync_s", r.flush.sync}});
  }
  std::ofstream(f.json) << out.dump(2) << "\n";
}

// Writes one CSV row per flush or compaction of every configuration to --csv: its storage, its format and the
// engine's profile columns.
void WriteCsv(const std::string& path, const std::vector<ConfigResult>& results) {
  std::ofstream csv(path);
  csv << "storage,format," << kProfileHeader << "\n";
  for (const ConfigResult& r : results) {
    for (const auto& row : r.rows) {
      csv << r.storage << "," << r.format;
      for (double v : row) csv << "," << v;
      csv << "\n";
    }
  }
}

}  // namespace
}  // namespace jigsaw::bench

// Defines and checks the flags, runs every configuration (and LevelDB), prints the tables and writes the files
// asked for; 0, 2 for a pmem budget that keeps no level below L0 (or CLI11's code for a command line that does not
// parse).
int main(int argc, char** argv) {
  using namespace jigsaw::bench;
  Flags f;
  CLI::App app{"jigsaw_profile: the conversion-cost profiler"};
  DefineFlags(&app, &f);
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(f.dir);
  if (f.leveldb_nvm_dir.empty()) f.leveldb_nvm_dir = f.pmem_path + "-leveldb";
  PmemPlan plan;
  std::string plan_error;
  if (!PlanPmemLevels(f, &plan, &plan_error)) {
    std::fprintf(stderr, "jigsaw_profile: %s\n", plan_error.c_str());
    return 2;
  }

  const std::vector<ConfigResult> results = RunConfigs(f, plan);
  const Overhead overhead = MeasureOverhead(f, plan, results);
  const LevelDbTotals leveldb = RunLevelDb(&f);

  const int compactions = TotalCompactions(results);
  PrintSetting(f, plan, compactions);
  PrintPhaseShares(results);
  PrintPerEntry(results);
  PrintTotals(f, results, leveldb);
  PrintProfilingCost(results, overhead);

  if (!f.json.empty()) WriteJson(f, plan, results, leveldb, overhead);
  if (!f.csv.empty()) WriteCsv(f.csv, results);
  if (!f.plot.empty() && compactions == 0) {
    std::printf("no plots: no compaction ran\n");
  } else if (!f.plot.empty()) {
    WritePlots(f.plot, results);
  }
  return 0;
}
