// Flush: an immutable memtable becomes one new L0 table -- a pool object
// (pmem and hybrid modes: a KeySet block, or with Options::table_format
// kClassic an SSD table image) or an SSD table (disk-only mode, made
// durable before it returns). The caller commits it (with the frees of the
// memtable's WAL segments) and installs it.
#ifndef JIGSAW_DB_FLUSH_H_
#define JIGSAW_DB_FLUSH_H_

#include "compaction/compaction_profile.h"
#include "db/memtable.h"
#include "version/table_store.h"

namespace jigsaw {

// At least the size of the KeySet block (of options.keyset_version) that
// BuildMemTableBlock makes of `mem`: in O(1) from the memtable's counters
// where the version has a bound (keyset::BlockSizeBound: a few bytes per 8
// entries over the exact size), else exactly, from a pass over the entries.
uint64_t KeySetBlockSizeBound(const MemTable& mem, const BlockBuilderOptions& options);

// Builds every entry of `mem` into one block of `format` at dest[0,
// capacity) (8-byte aligned): the flush's work, also run by format_bench.
// NoSpace if it does not fit. A KeySet block of a version with a
// PlacedBuilder (keyset::NewPlacedBuilder) is made by copy: one pass over
// the entries writes the key set in place, then the memtable's value log
// is copied whole as the value buffer.
// `encode` (may be null): the phase the builder's work is timed in.
// Requires that no Add runs on `mem` concurrently.
Status BuildMemTableBlock(const MemTable& mem, BlockFormat format, const BlockBuilderOptions& options, char* dest,
                          size_t capacity, size_t* block_size, SampledPhase* encode = nullptr);

// Builds `mem` (non-empty) into a persisted but uncommitted pool object of
// KeySetBlockSizeBound bytes (the block may end a little before the
// object): *reservation, for the caller to publish or cancel, and *table.
// Reserves from the standby if the pool is full (a flush is what frees WAL
// segments). With `profile` (may be null) it is filled as a flush's row:
// encode = building the block in place in the pool (the builder writes
// pmem directly, so this includes storing its bytes and walking the
// memtable), write = persisting them (the flushes and fence), merge = the
// rest.
Status FlushToPmemBlock(TableStore* store, const MemTable& mem, TableRef* table, pmem::Reservation* reservation,
                        PhaseProfile* profile);

// As FlushToPmemBlock, for a pmem table of classic blocks: walks `mem`
// into a PmemTableImageSink (one image however large, reserved exactly) and
// hands back its table and reservation. The profile's row is filled as
// FlushToPmemBlock's: encode = building the image in DRAM, write = copying
// it into the pool and persisting it, merge = walking the memtable and the
// rest.
Status FlushToPmemTableImage(TableStore* store, const MemTable& mem, TableRef* table, pmem::Reservation* reservation,
                             PhaseProfile* profile);

// Builds `mem` (non-empty) into an L0 SSD table, synced with its directory
// entry before return (the commit that follows drops the WAL holding the
// same writes). With `profile` (may be null) it is filled as a flush's row:
// encode = building the table, write = its appends, sync = the syncs, merge
// = walking the memtable and the rest.
Status FlushToSsdTable(TableStore* store, const MemTable& mem, TableRef* table, PhaseProfile* profile);

}  // namespace jigsaw

#endif  // JIGSAW_DB_FLUSH_H_
