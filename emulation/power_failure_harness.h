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
// lines being fenced at the failing point reached the medium.
//
// Test-only: the binary must link emulation/libpmem_interpose.cc.
#ifndef JIGSAW_EMULATION_POWER_FAILURE_HARNESS_H_
#define JIGSAW_EMULATION_POWER_FAILURE_HARNESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "jigsaw/options.h"
#include "jigsaw/status.h"

namespace jigsaw::emulation {

struct PowerFailureWorkload {
  int batches = 300;             // write batches in all
  int batches_before_arming = 60;  // written (and the DB closed) before tracking starts
  int keys = 64;                 // size of the key space
  int value_size = 100;
  double sync_fraction = 0.5;    // share of batches written with sync=true
  uint64_t seed = 1;
  size_t max_checks = 400;       // power failures simulated at most (plus reorderings)
  bool reorder = true;
  Options options;               // for every open; pmem_path must be empty
};

struct PowerFailureReport {
  size_t persist_points = 0;
  size_t checks = 0;
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
