// Tables of the pmem tier: one KeySet block in a pool object, read in place;
// and the decorator that charges the NVM timing model (pmem/nvm_timing.h)
// for its random reads.
#ifndef JIGSAW_PMEM_PMEM_TABLE_H_
#define JIGSAW_PMEM_PMEM_TABLE_H_

#include <memory>

#include "format/block.h"
#include "pmem/nvm_timing.h"
#include "table/table.h"

namespace jigsaw::pmem {

// A Table over the block `reader` reads. The block's bytes must stay mapped
// and unchanged while the table or any of its iterators is alive. Its scan
// iterators read in place like its iterators (pmem blocks were verified
// when the pool was opened or built by this process: nothing to check).
std::unique_ptr<Table> NewPmemTable(std::unique_ptr<BlockReader> reader);

// `base` with the random reads of NVM charged to `timing` (which must
// outlive the table): one per Get, and one per positioning of an iterator
// from NewIterator (Seek, SeekToFirst, SeekToLast -- a jump into the block;
// Next and Prev read on sequentially and are free). Scan iterators read the
// block sequentially and charge nothing.
std::unique_ptr<Table> NewNvmTimedTable(std::unique_ptr<Table> base, const NvmTiming* timing);

}  // namespace jigsaw::pmem

#endif  // JIGSAW_PMEM_PMEM_TABLE_H_
