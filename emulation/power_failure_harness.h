// The power-failure harness: runs a workload of write batches against a
// database on emulated pmem under the PowerFailureSimulator, then, for every
// persist point (or every k-th when there are more than `max_checks`),
// rebuilds the pool a power failure at that point leaves, opens it and checks:
//  - the database opens (no Corruption) and VerifyIntegrity passes;
//  - its contents equal the state after some prefix of the batches that
//    contains every batch acknowledged with sync=true before the failure (so
//    nothing acknowledged is lost and no batch is partly visible);
//  - forward and reverse iteration and Get agree.
// With `reorder`, it also checks images where only a random subset of the
// lines (or 8-byte words) being fenced at the failing point reached the
// medium; with `early_eviction`, images where a random subset of the lines
// dirty at that point (written or flushed, not yet fenced) did.
//
// Hybrid mode: `files` journals the SSD tables (tests/support/fault_injection_fs.h);
// each of its durability events (fsync, directory sync, removal) is a persist
// point too, and each check also rebuilds the table files a power failure
// leaves: the synced data of files whose directory entry was synced, and, in
// the randomised check, possibly part of the rest.
//
// Test-only: the binary must link emulation/libpmem_interpose.cc.
#ifndef JIGSAW_EMULATION_POWER_FAILURE_HARNESS_H_
#define JIGSAW_EMULATION_POWER_FAILURE_HARNESS_H_

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "jigsaw/options.h"
#include "jigsaw/status.h"

namespace jigsaw::emulation {

// The file side of a power failure: a journal of the file events in one
// directory, and the files a power failure after any prefix of it leaves.
// Implemented by the tests' FaultInjectionFileSystem.
class FileCrashModel {
 public:
  virtual ~FileCrashModel() = default;
  // Starts a journal of `dir` (clearing an earlier one). Files already there,
  // but those named in `untracked`, count as durable.
  virtual Status StartJournal(const std::string& dir, const std::vector<std::string>& untracked) = 0;
  // Stops journaling; the journal stays for WriteCrashState.
  virtual void StopJournal() = 0;
  // Events journaled so far. Thread-safe.
  virtual uint64_t JournalEvents() = 0;
  // Called after each journaled event that changes what survives a power
  // failure (a sync, a directory sync, a removal, a rename), from the thread
  // that made it; nullptr: none.
  virtual void SetDurabilityListener(std::function<void()> listener) = 0;
  // Writes into `to_dir` (which holds no journaled file) the files a power
  // failure after the first `events` events leaves. rng == nullptr: exactly
  // the synced bytes of files whose directory entry was synced; otherwise any
  // outcome a file system may produce, picked at random.
  virtual Status WriteCrashState(uint64_t events, const std::string& to_dir, std::mt19937_64* rng) = 0;
};

struct PowerFailureWorkload {
  int batches = 300;             // write batches in all
  int batches_before_arming = 60;  // written (and the DB closed) before tracking starts
  int keys = 64;                 // size of the key space
  int value_size = 100;
  double sync_fraction = 0.5;    // share of batches written with sync=true
  double range_delete_fraction = 0;  // share of updates that are range deletes (of up to all keys)
  uint64_t seed = 1;
  size_t max_checks = 400;       // power failures simulated at most (0: every point), plus variants
  bool reorder = true;           // also a partial next point, at each point checked
  bool early_eviction = false;   // also evicted dirty lines, at each point checked
  // After every `settle_every` tracked batches, wait until the flushes and
  // compactions they started have run (0: never): the workload then compacts
  // however slowly the background thread runs under the simulator.
  int settle_every = 0;
  Options options;               // for every open; pmem_path must be empty
  // Hybrid (or any mode writing SSD tables): the file system in
  // options.file_system, as a crash model. nullptr: table files are not
  // rebuilt (pmem mode).
  FileCrashModel* files = nullptr;
};

struct PowerFailureReport {
  size_t persist_points = 0;
  size_t external_points = 0;    // of them, file-system events
  size_t checks = 0;
  size_t reorder_checks = 0;     // of them, with a partial next point
  size_t eviction_checks = 0;    // of them, with early-evicted lines (and random file outcomes)
  size_t max_evictable = 0;      // most lines evictable at one point
  uint64_t flushes = 0;          // by the tracked database
  uint64_t compactions = 0;
  int deepest_level = 0;         // the deepest level holding data at the end
  std::vector<std::string> failures;  // one line per failed check (at most 20 kept)
  size_t failed_checks = 0;
};

// Runs the workload in `dir` (created if missing; its contents are replaced).
// A non-OK status means the harness itself could not run; failed checks are
// in `report`.
Status RunPowerFailureHarness(const std::string& dir, const PowerFailureWorkload& workload,
                              PowerFailureReport* report);

}  // namespace jigsaw::emulation

#endif  // JIGSAW_EMULATION_POWER_FAILURE_HARNESS_H_
