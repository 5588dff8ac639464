// Tables of the pmem tier: one KeySet block in a pool object, read in place;
// and the decorator that charges the NVM timing model (pmem/nvm_timing.h)
// for its reads.
#ifndef JIGSAW_PMEM_PMEM_TABLE_H_
#define JIGSAW_PMEM_PMEM_TABLE_H_

#include <memory>

#include "format/block.h"
#include "pmem/nvm_timing.h"
#include "table/table.h"

namespace jigsaw::pmem {

// A Table over the block `reader` reads, whose bytes are `contents`. They
// must stay mapped and unchanged while the table or any of its iterators or
// block scans is alive. Its scan iterators and block scans read in place
// like its iterators (pmem blocks were verified when the pool was opened or
// built by this process: nothing to check).
//
// Media errors: its scan iterators and block scans (flushes, compactions,
// migrations) probe the whole block when made (util/guarded_read.h) and,
// with `guard_reads`, its Gets and iterators read it guarded. A line that
// cannot be read -- poisoned persistent memory, a pool file cut short --
// is then a Corruption naming block `number` (an iterator's status, for
// good), not a SIGBUS. Not caught: a line poisoned while a scan reads it,
// or after an iterator's window (InternalIterator::OpenWindow) read the
// block whole.
std::unique_ptr<Table> NewPmemTable(std::unique_ptr<BlockReader> reader, const Slice& contents, uint64_t number,
                                    bool guard_reads);

// `base`, `table_bytes` long, with its reads of NVM charged to `timing`
// (which must outlive the table): one random read per Get and per
// positioning of an iterator (Seek, SeekToFirst, SeekToLast -- a jump into
// the block), and, for iterators from NewIterator and NewScanIterator alike
// (scans and the inputs of flushes and compactions), the block's average
// bytes per entry for every entry they land on or step over (Next, Prev,
// SkipRun) to the read bandwidth; block scans pay a random read and the
// whole block's bytes per block.
std::unique_ptr<Table> NewNvmTimedTable(std::unique_ptr<Table> base, const NvmTiming* timing, uint64_t table_bytes);

}  // namespace jigsaw::pmem

#endif  // JIGSAW_PMEM_PMEM_TABLE_H_
