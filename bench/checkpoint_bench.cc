// checkpoint_bench: what an online checkpoint (DB::CreateCheckpoint) costs
// the writers of a database. Fills --num random keys (16-byte keys,
// --value_size values), then runs one writer for two windows of equal
// purpose: one while the main thread only waits (--idle_ms), one while it
// makes a checkpoint. Prints, for each window, its length, the Puts done and
// the writer's longest Put -- the stall a checkpoint could add shows as a
// longest Put beyond the idle window's (which includes the engine's own
// flush and compaction stalls).
//
//   checkpoint_bench --mode=pmem|hybrid|disk --num=1000000 --dir=DIR
//                    [--pmem_path=/dev/shm/...] [--value_size=100]
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "bench/bench_key.h"
#include "jigsaw/db.h"

namespace jigsaw {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  std::string mode = "pmem";
  uint64_t num = 1000000;
  size_t value_size = 100;
  std::string dir = "/dev/shm/jigsaw-checkpoint-bench";
  std::string pmem_path;
  uint64_t pool_mb = 4096;
  int idle_ms = 300;
};

// The key of the i-th write: a permutation of [0, num), as fillrandom.
std::string KeyOf(uint64_t i, uint64_t num) {
  std::string key;
  bench::MakeBenchKey((i * 7919) % num, 16, &key);
  return key;
}

struct Window {
  double ms = 0;
  uint64_t puts = 0;
  double longest_put_ms = 0;
};

// One writer runs while `work` does; then stops.
template <typename Work>
Window WithWriter(DB* db, const Flags& flags, uint64_t* next, Work&& work) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> puts{0};
  std::atomic<int64_t> longest_ns{0};
  const std::string value(flags.value_size, 'v');
  std::thread writer([&] {
    uint64_t i = *next;
    while (!stop.load()) {
      const auto start = Clock::now();
      if (!db->Put(WriteOptions(), KeyOf(i++, flags.num), value).ok()) break;
      const int64_t ns = (Clock::now() - start).count();
      if (ns > longest_ns.load()) longest_ns.store(ns);
      puts.fetch_add(1);
    }
    *next = i;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the writer is running
  puts.store(0);
  longest_ns.store(0);
  const auto start = Clock::now();
  work();
  Window w;
  w.ms = (Clock::now() - start).count() / 1e6;
  w.puts = puts.load();
  w.longest_put_ms = longest_ns.load() / 1e6;
  stop.store(true);
  writer.join();
  return w;
}

int Run(const Flags& flags) {
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.storage_mode = flags.mode == "disk"     ? StorageMode::kDisk
                         : flags.mode == "hybrid" ? StorageMode::kHybrid
                                                  : StorageMode::kPmem;
  options.pmem_path = flags.pmem_path;
  options.pmem_pool_size = flags.pool_mb << 20;
  const std::string checkpoint = flags.dir + "-checkpoint";
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, flags.dir, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "checkpoint_bench: %s\n", s.ToString().c_str());
    return 1;
  }
  const std::string value(flags.value_size, 'v');
  uint64_t next = 0;
  for (; next < flags.num && s.ok(); ++next) s = db->Put(WriteOptions(), KeyOf(next, flags.num), value);
  const Window idle =
      WithWriter(db.get(), flags, &next, [&] { std::this_thread::sleep_for(std::chrono::milliseconds(flags.idle_ms)); });
  uint64_t sequence = 0;
  const Window during = WithWriter(db.get(), flags, &next, [&] {
    if (s.ok()) s = db->CreateCheckpoint(checkpoint, &sequence);
  });
  if (!s.ok()) {
    std::fprintf(stderr, "checkpoint_bench: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("mode %s, %llu entries filled\n", flags.mode.c_str(), static_cast<unsigned long long>(flags.num));
  std::printf("idle window:       %8.1f ms, %8llu puts, longest put %7.2f ms\n", idle.ms,
              static_cast<unsigned long long>(idle.puts), idle.longest_put_ms);
  std::printf("checkpoint window: %8.1f ms, %8llu puts, longest put %7.2f ms (checkpoint at sequence %llu)\n",
              during.ms, static_cast<unsigned long long>(during.puts), during.longest_put_ms,
              static_cast<unsigned long long>(sequence));
  db.reset();
  (void)DestroyDB(flags.dir, options);
  Options disk;
  disk.storage_mode = StorageMode::kDisk;
  (void)DestroyDB(checkpoint, disk);
  std::error_code ec;
  std::filesystem::remove_all(flags.dir, ec);
  std::filesystem::remove_all(checkpoint, ec);
  return 0;
}

}  // namespace
}  // namespace jigsaw

int main(int argc, char** argv) {
  jigsaw::Flags flags;
  CLI::App app("checkpoint_bench: the cost of DB::CreateCheckpoint to a running writer");
  app.add_option("--mode", flags.mode, "storage mode")->check(CLI::IsMember({"pmem", "hybrid", "disk"}));
  app.add_option("--num", flags.num, "entries filled before the windows")->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  app.add_option("--value_size", flags.value_size, "value bytes")->check(CLI::Range(size_t{1}, size_t{1} << 20));
  app.add_option("--dir", flags.dir, "database directory (must not exist; the checkpoint goes to <dir>-checkpoint)");
  app.add_option("--pmem_path", flags.pmem_path, "pool file (default <dir>/pool, on tmpfs)");
  app.add_option("--pool_mb", flags.pool_mb, "pool size in MiB");
  app.add_option("--idle_ms", flags.idle_ms, "the idle window's length")->check(CLI::Range(1, 60000));
  CLI11_PARSE(app, argc, argv);
  return jigsaw::Run(flags);
}
