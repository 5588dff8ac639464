#include "compaction/compaction_profile.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace jigsaw {

void PhaseProfile::Finish(uint64_t wall_ns) {
  wall_ns -= std::min(wall_ns, preempted_ns);
  const uint64_t accounted = read_ns + decode_ns + encode_ns + write_ns + sync_ns;
  total_ns = std::max(wall_ns - std::min(wall_ns, instrumentation_ns), accounted);
  merge_ns = total_ns - accounted;
}

void OutputPhases::AddTo(PhaseProfile* profile) const {
  profile->encode_ns += encode.EstimatedNanos();
  profile->encode_copy_ns += encode.EstimatedPartNanos(WorkPart::kCopy);
  profile->encode_filter_checksum_ns += encode.EstimatedPartNanos(WorkPart::kFilterChecksum);
  profile->write_ns += write.EstimatedNanos() + table_write_ns;
  profile->sync_ns += sync.EstimatedNanos();
  profile->instrumentation_ns +=
      encode.InstrumentationNanos() + write.InstrumentationNanos() + sync.InstrumentationNanos();
}

std::string CompactionProfileCsvHeader() {
  // Times in seconds. entries: entries read (a flush: written);
  // instrumentation_s: the profile's own clock reads, already taken out of
  // total_s and the phases; entries_moved: entries of tables that moved
  // down by reference (a trivial move: nothing read or written);
  // entries_spliced: of `entries`, those a merge copied as bytes in runs;
  // entries_migrated: entries of pmem blocks written to SSD tables as their
  // bytes (a migration: nothing decoded or encoded); encode_copy_s and
  // encode_filter_checksum_s: of encode_s, plain copies and filter and
  // checksum work (the rest is conversion); decode_convert_s: of decode_s,
  // conversion out of the block format (the rest is positioning).
  return "start_s,level,to_ssd,read_s,decode_s,merge_s,encode_s,write_s,sync_s,total_s,bytes_in,bytes_out,"
         "entries,instrumentation_s,entries_moved,entries_spliced,entries_migrated,encode_copy_s,"
         "encode_filter_checksum_s,decode_convert_s\n";
}

std::string CompactionProfileCsvRow(const PhaseProfile& r) {
  char row[512];
  std::snprintf(row, sizeof(row),
                "%.6f,%d,%d,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9f,%" PRIu64
                ",%" PRIu64 ",%" PRIu64 ",%.9f,%.9f,%.9f\n",
                r.start_s,
                r.level, r.to_ssd ? 1 : 0, r.read_ns / 1e9, r.decode_ns / 1e9, r.merge_ns / 1e9, r.encode_ns / 1e9,
                r.write_ns / 1e9, r.sync_ns / 1e9, r.total_ns / 1e9, r.bytes_in, r.bytes_out, r.entries,
                r.instrumentation_ns / 1e9, r.entries_moved, r.entries_spliced, r.entries_migrated,
                r.encode_copy_ns / 1e9, r.encode_filter_checksum_ns / 1e9, r.decode_convert_ns / 1e9);
  return row;
}

}  // namespace jigsaw
