// SSD tables: files of KeySet blocks (docs/ssd_format.md).
//
//   file   := block* index footer
//   block  := a KeySet block (docs/format.md), byte for byte what it would be
//             in pmem, at an 8-byte aligned offset
//   index  := per block: offset, size, entries, smallest and largest key;
//             then a table-wide Bloom filter, held in DRAM by readers so that
//             a Get skips tables without the key before reading any block
//   footer := magic "JGSWSST1", version, index location, CRCs
//
// TableBuilder writes one through a WritableFile; SsdTable serves it: the
// index is held in DRAM, blocks come from the block cache (one read plus a
// checksum check to fill, never a decode) or straight from a read-only mmap.
#ifndef JIGSAW_SSD_TABLE_H_
#define JIGSAW_SSD_TABLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/bloom.h"
#include "format/keyset_block.h"
#include "format/keyset_pieces.h"
#include "jigsaw/file_system.h"
#include "ssd/block_cache.h"
#include "ssd/io_engine.h"
#include "ssd/table_layout.h"
#include "table/table.h"
#include "util/key_prefix.h"

namespace jigsaw::ssd {

struct TableInfo {
  uint64_t file_size = 0;
  uint64_t entries = 0;
  uint32_t blocks = 0;
  std::string smallest, largest;  // user keys
};

// Builds a table into `file` (not owned; the caller syncs and closes it).
// Thread-safety: one thread.
class TableBuilder {
 public:
  // block_size: target bytes of each KeySet block; a block ends at the first
  // user-key boundary at or beyond it (or earlier if one key's versions
  // overflow twice that).
  // `format`: KeySet (the engine's) or classic (LevelDB-style, for measuring
  // the conversion cost).
  TableBuilder(const BlockBuilderOptions& options, size_t block_size, WritableFile* file,
               BlockFormat format = BlockFormat::kKeySet);

  // Entries in strictly increasing internal-key order. `key_hash` is
  // bloom::KeyHash(user_key) (InternalIterator::key_hash() carries it along).
  Status Add(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value,
             uint32_t key_hash);
  // The same, hashing the key here: for entries that carry no hash (classic
  // blocks), whose hashing is then part of the format's work (timed as
  // encode when profiling).
  Status Add(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value);
  // Whether AppendRun can take entries: blocks whose builders take runs
  // (BuilderTakesRuns).
  bool TakesRuns() const;
  // Appends `run` (entries after the last one added, each a new user key)
  // as bytes, block after block, ending blocks as Add would, until the table
  // reaches `table_size_limit` bytes; *taken: how many (0 if the blocks
  // cannot take runs, or an entry alone overflows a block: the caller adds
  // it). Each key is hashed for the table filter.
  Status AppendRun(const EntryRun& run, uint64_t table_size_limit, uint32_t* taken);
  // Appends `block`, a finished KeySet block holding the user keys
  // [smallest, largest], as its bytes -- one append, nothing decoded or
  // re-encoded: a block migrating from pmem (docs/ssd_format.md, "Large
  // blocks"). It must be the table's only block: its Bloom filter becomes
  // the table filter (the same layout and hashing). InvalidArgument if the
  // table has blocks already or is not of KeySet blocks, what
  // keyset::ReadOutline says if `block`'s header is not valid (Corruption
  // for one not of the current entry layout).
  Status AddWholeBlock(const Slice& block, const Slice& smallest, const Slice& largest);
  // Writes the index and the footer. Does not sync.
  Status Finish(TableInfo* info);
  // Compress the blocks flushed from now on (docs/ssd_format.md,
  // "Compressed blocks"); blocks added whole and large blocks never are.
  // Default: kNone.
  void set_compression(Compression compression) { compression_ = compression; }

  // Bytes in the file once finished now (approximately).
  uint64_t EstimatedSize() const;
  uint64_t num_entries() const { return entries_; }
  // Profiling (compactions and flushes): the block format's own work --
  // building and finishing blocks, encoding the index and filter -- is
  // charged to *encode (per-entry calls sampled), the file appends to
  // write_nanos(). `encode` must outlive the builder; null = off (no clock
  // is read).
  void set_profile(SampledPhase* encode) { encode_ = encode; }
  // Nanoseconds spent appending to the file so far (0 unless profiling).
  uint64_t write_nanos() const { return write_ns_; }

 private:
  // Makes builder_ a builder of the next block in buffer_, of `capacity`
  // bytes: the last block's, restarted, when it fits.
  void StartBlock(size_t capacity);
  Status FlushBlock();
  // The table's index section: block index entries, then the table filter.
  void EncodeIndex(std::string* index) const;
  Status Append(const Slice& data);

  const BlockBuilderOptions options_;  // bloom_bits_per_key: the table filter's
  BlockBuilderOptions block_options_;   // the blocks': no filter of their own
  const size_t block_size_;
  WritableFile* const file_;
  const BlockFormat format_;
  std::vector<uint64_t> buffer_;
  std::unique_ptr<BlockBuilder> builder_;
  std::unique_ptr<BlockBuilder> spare_;  // the last block's builder, finished, over buffer_
  size_t builder_capacity_ = 0;          // of builder_, then of spare_
  std::string block_smallest_, block_largest_;
  std::vector<TableIndexEntry> index_;
  uint64_t offset_ = 0;
  uint64_t index_bytes_ = 0;  // encoded size of index_
  uint64_t write_ns_ = 0;
  SampledPhase* encode_ = nullptr;
  uint64_t entries_ = 0;
  std::vector<uint32_t> key_hashes_;  // one per user key, for the table filter
  uint32_t last_key_hash_ = 0;        // of the last entry added
  std::string copied_filter_;         // AddWholeBlock: the block's filter lines
  Compression compression_ = Compression::kNone;
  std::string stored_;  // the last block compressed
};

struct SsdTableOptions {
  const Comparator* comparator = BytewiseComparator();
  BlockCache* cache = nullptr;  // required unless use_mmap
  bool use_mmap = false;        // serve blocks from a read-only mapping
  // Point lookups (Get) read blocks in place from a read-only mapping of the
  // file -- the page cache is their cache: no system call, no copy, no block
  // cache entry -- under a SIGBUS guard (util/guarded_read.h): a page the
  // kernel cannot supply makes the Get return IOError. The value found is
  // copied out before the guard ends, so nothing handed to a caller points
  // into the mapping; iterators and scans keep the block cache. Not used by
  // reads that verify checksums (they go through the cache, which verifies
  // each block once), nor where the file system offers no mapping. Implied
  // by use_mmap (which serves everything from the mapping, unguarded).
  bool mapped_gets = false;
  // Check each block's CRC once, when it first enters memory: read into
  // the cache, first read through the mapping (mapped Gets and the
  // iterators that share their readers; with use_mmap, a block's first
  // use), or -- a large block read in pieces, which carry no CRC -- read
  // whole once before its first piece is served. Scan iterators, which feed
  // compactions, always check; so do reads with
  // ReadOptions::verify_checksums. Without it a damaged block is still
  // never read out of bounds (the reader checks its structure); Validate()
  // always checks.
  bool verify_checksums = false;
  // Batched read-ahead for iterators; nullptr: none.
  IoEngine* io = nullptr;
  // Add the time of block reads to ThreadReadNanos (for compaction
  // profiles); off, reads cost no clock reads.
  bool time_reads = false;
};

// Nanoseconds this thread has spent reading SSD table blocks from files
// (cache misses and read-ahead) of tables opened with time_reads, for the
// compaction profile.
uint64_t ThreadReadNanos();

class SsdTable;

// One block read planned for a batch (MultiGet, read-ahead).
struct BlockFetch {
  const SsdTable* table;
  uint32_t block;
};

// Reads every planned block that is not cached, all in one IoEngine batch
// (io_uring serves them in parallel; a block planned twice is read once),
// and caches them. Best effort: a block that fails to read is left out and
// its error surfaces when it is read for real. `io` nullptr: nothing.
void FetchBlocks(IoEngine* io, std::vector<BlockFetch> fetches);

// Blocks an iterator reads ahead in one batch.
inline constexpr uint32_t kReadAheadBlocks = 8;
// Bytes of adjacent blocks a scan iterator reads at once.
inline constexpr uint64_t kScanWindowBytes = 256 << 10;
// Blocks larger than this (blocks migrated from pmem) never enter the block
// cache: a point lookup reads them in pieces (keyset::PieceReader) or in
// place from the mapping; an iterator in place from the mapping, copying
// each entry out (until it has stepped kLargeBlockStepsBeforeWholeRead
// entries forward), or whole into a buffer of its own.
inline constexpr uint64_t kLargeBlockBytes = 64 << 10;
// Steps forward after which an iterator reading a large block through the
// mapping reads the rest of it whole: a scan then. Reading a 4 MiB block
// costs about what copying a few thousand entries out one by one does.
inline constexpr uint32_t kLargeBlockStepsBeforeWholeRead = 2048;
// The same for a block that is not large: copying a few KiB costs about
// what copying out a handful of entries does.
inline constexpr uint32_t kSmallBlockStepsBeforeWholeRead = 8;

class SsdTable final : public Table {
 public:
  // Reads the footer and index of `file` (table `number`, at `path` for
  // messages). Corruption naming the file for anything malformed or
  // truncated, NotSupported for a newer version.
  static Status Open(const SsdTableOptions& options, std::unique_ptr<RandomAccessFile> file, uint64_t number,
                     const std::string& path, std::unique_ptr<SsdTable>* table);
  ~SsdTable() override;

  // With options.verify_checksums, every block the read uses has its
  // checksum verified -- read from the file, the cache or the mapping, once
  // per cached or mapped block -- whatever SsdTableOptions::verify_checksums
  // says.
  Status Get(const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
             std::string* value, SequenceNumber* sequence) const override;
  // Prefetches the table filter's line for the key.
  void PrefetchForGet(uint64_t key_hash) const override;
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions& options) const override;
  const RandomAccessFile* file() const override { return file_.get(); }
  std::unique_ptr<InternalIterator> NewSequentialIterator(const ReadOptions& options) const override;
  std::unique_ptr<InternalIterator> NewScanIterator(SampledPhase* decode) const override;
  // KeySet tables only (null for classic ones).
  std::unique_ptr<BlockScan> NewBlockScan(SampledPhase* decode) const override;
  uint64_t num_entries() const override { return entries_; }
  // By the offset of the block the key would be in, and inside a large
  // block (read in pieces: by its outline's samples; read through the
  // mapping: by its reader) or a block of use_mmap (by its reader).
  double ApproximatePosition(const Slice& user_key) const override;
  Status Validate() const override;

  const std::string& smallest() const { return smallest_; }
  const std::string& largest() const { return largest_; }
  uint64_t file_size() const { return file_->Size(); }
  uint32_t num_blocks() const { return static_cast<uint32_t>(index_.size()); }
  // Where block i (< num_blocks()) starts in the file, how it is stored
  // there, and in how many bytes.
  uint64_t block_offset(uint32_t i) const { return index_[i].offset; }
  StoredCodec block_codec(uint32_t i) const { return index_[i].codec; }
  uint64_t block_stored_bytes(uint32_t i) const { return index_[i].stored_bytes(); }
  BlockFormat format() const { return format_; }
  // Block i: from the cache, the mapping, or read (and cached). With
  // `verify`, its checksum verified (Corruption naming the file if it
  // differs).
  Status ReadBlock(uint32_t i, bool verify, CachedBlockRef* block) const;
  // Reads blocks [first, first + count) that are not cached in one batch
  // through the IoEngine and caches them (FetchBlocks).
  void Prefetch(uint32_t first, uint32_t count) const;
  // For a batched Get: appends the block a Get of user_key would read first,
  // unless the table filter rules the key out, the key is outside every
  // block or the table is mapped (FetchBlocks skips cached blocks).
  void PlanGet(const Slice& user_key, std::vector<BlockFetch>* fetches) const;

 private:
  class BlockSource;
  class TableBlockScan;
  class MappedBlockIterator;
  class SplitBlockIterator;
  struct IndexLocation;
  friend void FetchBlocks(IoEngine* io, std::vector<BlockFetch> fetches);
  SsdTable() = default;
  // Open's steps, in order; each fails as Open does.
  // Reads and checks the footer: sets format_ and entries_, and *where to the index's location and checksum.
  Status ReadFooter(IndexLocation* where);
  // Reads the index section `where` into *index, its checksum checked.
  Status ReadIndex(const IndexLocation& where, std::string* index) const;
  // Decodes `index` into index_ and the table filter; Corruption if it disagrees with itself, entries_ or index_offset.
  Status DecodeIndex(const std::string& index, uint64_t index_offset);
  // From index_: smallest_, largest_ and, for a bytewise comparator, the blocks' key prefixes.
  void LoadKeyBounds();
  // use_mmap: a reader per block over the file's mapping (mapped_), or use_mmap cleared if the file cannot be mapped.
  Status OpenMappedReaders();
  // mapped_gets (neither use_mmap nor verify_checksums): the file's mapping and a reader slot per block, if it maps.
  void SetUpMappedGets();
  // KeySet tables read from the file: a PieceReader per large block that can be read in pieces (pieces_).
  void OpenPieceReaders();
  bool MayContain(const Slice& user_key) const;
  // The first block whose largest key is >= user_key (index_.size(): none).
  uint32_t FirstCandidateBlock(const Slice& user_key) const;
  std::shared_ptr<CachedBlock> NewBlockBuffer(uint32_t i) const;
  // A reader over block->size bytes at data (checksum checked if verify).
  Status OpenReader(const char* data, bool verify, CachedBlock* block) const;
  // Checks the checksum of block i, open in `block`, unless already done.
  Status VerifyChecksum(uint32_t i, const CachedBlock& block) const;
  // Reads `bytes` from `skip` bytes into block `first`'s stored bytes
  // (blocks are adjacent) into dest: Corruption naming the file if the
  // file ends early.
  Status ReadBlocks(uint32_t first, uint64_t bytes, char* dest, uint64_t skip = 0) const;
  // Whether blocks [first, end) can be copied from the mapping without page
  // faults: the table is mapped for Gets, and each block is one a Get has
  // read there (so its pages are mapped in this process; on a VM a first
  // touch of a mapped page costs more than reading it) and not a large one
  // (Gets read those in pieces).
  bool WarmInMapping(uint32_t first, uint32_t end) const;
  // A user's scan reads its first window of the table. The second scan
  // to do so maps every page of the table's mapping (mapped for Gets) into
  // this process at once, so that windows are copied from the mapping
  // (WarmInMapping then answers true for every block): one madvise per
  // table, tried once. The first scan reads with pread: a table scanned
  // once (a scan that stops early, a table soon compacted away) is not
  // worth the call.
  void NoteUserScan() const;
  // As ReadBlocks, copied from the mapping under the SIGBUS guard: no system
  // call, no page-cache lookup per page. MappingFault() if a page cannot be
  // read.
  Status CopyMappedBlocks(uint32_t first, uint64_t bytes, char* dest) const;
  // IOError naming the file: a guarded read of the mapping faulted.
  Status MappingFault() const;
  // Block i in a new buffer with its reader: read from the file, or, with
  // `from_mapping`, copied from the mapping (CopyMappedBlocks).
  // A compressed block is read as its stored bytes and decompressed.
  Status ReadBlockCopy(uint32_t i, bool verify, bool from_mapping, std::shared_ptr<CachedBlock>* block) const;
  // Decompresses compressed block i from its stored bytes into dest
  // (index_[i].size bytes). Corruption naming the file and block if it
  // does not decompress.
  Status Decompress(uint32_t i, const Slice& stored, char* dest) const;
  Status Corrupt(const std::string& what) const;
  bool IsLarge(uint32_t i) const { return index_[i].size > kLargeBlockBytes; }
  // A lookup in block i, read through the block cache (or use_mmap's
  // mapping). Result as Get's.
  Status GetFromBlock(uint32_t i, const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot,
                      ValueType* type, std::string* value, SequenceNumber* sequence) const;
  // The reader of block i over the mapping (mapped_gets), opened and
  // published by the first caller; null with *s set if the block's header is
  // malformed. Must run inside a guarded read (it reads the mapping); a
  // reader it opens and does not publish is left in *opened.
  const BlockReader* MappedReader(uint32_t i, std::unique_ptr<BlockReader>* opened, Status* s) const;
  // A lookup in block i read in place from the mapping (mapped_gets), under
  // the SIGBUS guard: IOError if a page cannot be read. Result as Get's.
  Status GetFromMappedBlock(uint32_t i, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
                            std::string* value, SequenceNumber* sequence) const;
  // Copies stored bytes [begin, begin + n) of block i to dest: from the
  // mapping of a compressed table under the SIGBUS guard, or read.
  Status CopyStored(uint32_t i, uint64_t begin, uint64_t n, char* dest) const;
  // Runs use(stored) on stored bytes [begin, begin + n) of compressed block
  // i and returns its Status: in place in the table's mapping, under the
  // SIGBUS guard (MappingFault() if a page cannot be read; `use` then stops
  // where it was, so it must own no heap memory), or read into *scratch.
  template <typename Use>
  Status WithStored(uint32_t i, uint64_t begin, uint64_t n, std::string* scratch, Use&& use) const;
  // The key part of split-compressed block i (docs/ssd_format.md), from the
  // block cache or read, decompressed and cached.
  Status ReadKeyPart(uint32_t i, CachedBlockRef* part) const;
  // Whether block i is split-compressed and its key part may serve a read
  // (`verify`: the read's verify_checksums, which needs the block whole). A
  // table that verifies checksums checks each such block whole once, here
  // on its first read (not cached: its reads use the key part); false with
  // *s set if that check fails.
  bool ServesFromKeyPart(uint32_t i, bool verify, Status* s) const;
  // Region bytes [first * kValueGroupBytes, end) of split-compressed block
  // i (`head`: its key part's) into dest (DecompressGroups), their groups'
  // stored frames read into *frames. Corruption naming the table and block
  // for bytes outside the region or groups that do not decompress.
  Status ReadValueGroups(uint32_t i, const SplitHead& head, uint32_t first, uint64_t end, std::string* frames,
                         char* dest) const;
  // A lookup in split-compressed block i: its key part searched, then only
  // the value groups that hold the value decompressed. NotSupported if the
  // block's key part cannot be searched on its own (the caller reads it
  // whole). Result as Get's.
  Status GetFromSplitBlock(uint32_t i, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
                           std::string* value, SequenceNumber* sequence) const;
  // A lookup in large block i: in pieces when it can, else the block read
  // whole (not cached). Result as Get's.
  Status GetFromLargeBlock(uint32_t i, const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot,
                           ValueType* type, std::string* value, SequenceNumber* sequence) const;

  SsdTableOptions options_;
  BlockFormat format_ = BlockFormat::kKeySet;
  uint32_t version_ = kUncompressedTableVersion;  // the footer's
  // Some block is compressed: no block is read in place from a mapping
  // (use_mmap and mapped_gets are off for the table).
  bool compressed_ = false;
  // A table with compressed blocks opened with mapped_gets: its mapping,
  // which compressed blocks are decompressed from (under the SIGBUS guard)
  // instead of read with pread.
  const char* stored_mapping_ = nullptr;
  // A table with compressed blocks opened with verify_checksums: whether
  // block i has had its CRC checked since the table was opened. A block
  // read again after its eviction from the cache is not checked again, as
  // a block read in place from the mapping is checked once.
  std::unique_ptr<std::atomic<bool>[]> verified_once_;
  std::unique_ptr<RandomAccessFile> file_;
  uint64_t number_ = 0;
  std::string path_;
  std::vector<TableIndexEntry> index_;
  // Bytewise tables: the prefixes of each block's largest and smallest
  // keys, so that finding a key's block compares integers, not strings
  // (whose bytes would be one more cache miss per table a Get probes).
  std::vector<KeyPrefix> largest_prefixes_;
  std::vector<KeyPrefix> smallest_prefixes_;
  std::vector<CachedBlockRef> mapped_;  // use_mmap: a reader per block
  const char* gets_mapping_ = nullptr;   // mapped_gets: the file's mapping (null: not used)
  // mapped_gets: a reader per block over the mapping, made by the block's
  // first Get (made at open, they would read every block's first page) and
  // owned by the table.
  std::unique_ptr<std::atomic<const BlockReader*>[]> gets_readers_;
  // NoteUserScan's progress: no scan yet, one scan, then populated or not
  // (the call failed).
  enum : uint8_t { kMappingCold, kMappingScannedOnce, kMappingPopulated, kMappingNotPopulated };
  mutable std::atomic<uint8_t> mapping_state_{kMappingCold};
  // Per block: the outline of a large KeySet block read by pread, for
  // lookups in pieces (nullptr for the others, and for large blocks that
  // cannot be read in pieces).
  std::vector<std::unique_ptr<keyset::PieceReader>> pieces_;
  // verify_checksums: whether large block i has had its CRC checked whole
  // (before its first piece read); one flag per pieces_ entry.
  std::unique_ptr<std::atomic<bool>[]> pieces_verified_;
  std::string filter_;                   // table Bloom filter lines (empty: none)
  bloom::Geometry filter_geometry_;
  uint64_t entries_ = 0;
  std::string smallest_, largest_;
};

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_TABLE_H_
