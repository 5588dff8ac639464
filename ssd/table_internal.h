// What the SSD table's sources share (ssd/table_builder.cc writes tables,
// ssd/table.cc opens and reads them, ssd/table_iterators.cc iterates them):
// the file layout's constants and the per-thread read time.
#ifndef JIGSAW_SSD_TABLE_INTERNAL_H_
#define JIGSAW_SSD_TABLE_INTERNAL_H_

#include <cstddef>
#include <cstdint>

namespace jigsaw::ssd::table_internal {

inline constexpr uint64_t kTableMagic = 0x315453535753474AULL;  // bytes "JGSWSST1"
// An index entry's fixed part: offset, size, entries, smallest and largest key lengths.
inline constexpr size_t kIndexEntryFixed = 8 + 4 + 4 + 4 + 4;

// n rounded up to a multiple of 8 (blocks and index entries are 8-byte aligned).
inline size_t Pad8(size_t n) { return (n + 7) & ~size_t{7}; }

// Nanoseconds this thread has spent reading blocks of tables opened with
// time_reads (ThreadReadNanos).
inline thread_local uint64_t t_read_ns = 0;

}  // namespace jigsaw::ssd::table_internal

#endif  // JIGSAW_SSD_TABLE_INTERNAL_H_
