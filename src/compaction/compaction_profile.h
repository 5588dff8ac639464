// The compaction profile (Options::profile_compactions): one row per flush
// or compaction with the time of each phase -- read, decode, merge, encode,
// write, sync -- as jigsaw.compaction-profile reports it and jigsaw_profile
// charts it (docs/performance.md, "How the profiler measures").
#ifndef JIGSAW_COMPACTION_COMPACTION_PROFILE_H_
#define JIGSAW_COMPACTION_COMPACTION_PROFILE_H_

#include <cstdint>
#include <string>

#include "util/profile_clock.h"

namespace jigsaw {

// One timed flush or compaction.
struct PhaseProfile {
  double start_s = 0;  // since the DB was opened
  int level = -1;      // input level of a compaction; -1 for a flush
  bool to_ssd = false;
  uint64_t read_ns = 0, decode_ns = 0, merge_ns = 0, encode_ns = 0, write_ns = 0, sync_ns = 0, total_ns = 0;
  // Of encode_ns: plain copies (keys, values, spliced runs, staged key
  // sets: bytes moved unchanged) and filter and checksum work (key hashes,
  // Bloom filter bits, CRCs); the rest of encode_ns is conversion into the
  // block format. Of decode_ns: conversion out of the block format (varints
  // parsed, keys rebuilt); the rest is positioning. (WorkPart,
  // util/profile_clock.h.)
  uint64_t encode_copy_ns = 0, encode_filter_checksum_ns = 0, decode_convert_ns = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  uint64_t entries = 0;             // entries read (a flush: written)
  uint64_t entries_moved = 0;       // entries of tables moved down by reference (a trivial move)
  uint64_t entries_spliced = 0;     // of `entries`, those copied as bytes in runs (the rest rebuilt)
  uint64_t entries_migrated = 0;    // entries of pmem blocks written to SSD as their bytes (a migration)
  uint64_t preempted_ns = 0;        // flushes run between its outputs (not its own time)
  uint64_t instrumentation_ns = 0;  // the clock reads' own cost (taken out of total_ns)

  // Closes the profile once its phases are in: total_ns is `wall_ns` less
  // preempted_ns and the instrumentation -- but at least the phases' sum
  // (sampled phases are estimates and may add up to more than a short run
  // took) -- and merge_ns is what the other phases leave of it.
  void Finish(uint64_t wall_ns);
};

// The output phases a sink charges (compaction/output_sink.h): encode = the
// block format's work, write = bytes reaching the medium, sync = syncs made
// inline. Not thread-safe: one per flush or compaction.
struct OutputPhases {
  SampledPhase encode, write, sync;
  uint64_t table_write_ns = 0;  // appends of table files, timed by their builders

  // Adds the phases to `profile` (encode, write, sync, instrumentation).
  void AddTo(PhaseProfile* profile) const;
};

// jigsaw.compaction-profile: a CSV header line and one line per profile.
std::string CompactionProfileCsvHeader();
std::string CompactionProfileCsvRow(const PhaseProfile& profile);

}  // namespace jigsaw

#endif  // JIGSAW_COMPACTION_COMPACTION_PROFILE_H_
