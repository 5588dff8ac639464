// What the SSD table's sources share (ssd/table_builder.cc writes tables,
// ssd/table.cc opens and reads them, ssd/table_iterators.cc iterates them):
// the per-thread read time. The file layout is table_layout.h's.
#ifndef JIGSAW_SSD_TABLE_INTERNAL_H_
#define JIGSAW_SSD_TABLE_INTERNAL_H_

#include <cstddef>
#include <cstdint>

namespace jigsaw::ssd::table_internal {

// Nanoseconds this thread has spent reading blocks of tables opened with
// time_reads (ThreadReadNanos).
inline thread_local uint64_t t_read_ns = 0;

}  // namespace jigsaw::ssd::table_internal

#endif  // JIGSAW_SSD_TABLE_INTERNAL_H_
