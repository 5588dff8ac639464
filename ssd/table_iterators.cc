// SsdTable's iterators: the block source that concatenating iterators and
// block scans read blocks through (the block cache, read windows or the
// mapping), and the iterator over a block read in place from the mapping.
#include "ssd/table.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

#include "format/keyset_pieces.h"
#include "util/guarded_read.h"
#include "ssd/table_internal.h"
#include "table/concatenating_iterator.h"
#include "util/buffer_recycler.h"
#include "util/profile_clock.h"

namespace jigsaw::ssd {

using table_internal::t_read_ns;

// A user's iterator over a block of a table mapped for Gets, the block not
// in the cache: each move runs on the block's reader over the mapping (the
// one Gets use), under the SIGBUS guard, and copies the entry it lands on
// out of the mapping (no Slice it hands out points into the mapping, where
// touching a page the kernel cannot supply would raise SIGBUS unguarded). A
// Seek thus reads the pages it touches -- a few, of a block of megabytes
// for a large one -- with no system call. After kSmallBlockStepsBeforeWholeRead
// (kLargeBlockStepsBeforeWholeRead for a large block) steps forward it reads
// the block whole -- a small one copied from the mapping into the cache, a
// large one from the file into a buffer of its own -- and goes on in place
// there. Thread-safety: one thread at a time, as any iterator.
class SsdTable::MappedBlockIterator final : public InternalIterator {
 public:
  MappedBlockIterator(const SsdTable* table, uint32_t block)
      : table_(table),
        block_(block),
        large_(table->IsLarge(block)),
        steps_before_whole_read_(large_ ? kLargeBlockStepsBeforeWholeRead : kSmallBlockStepsBeforeWholeRead) {}

  void SeekToFirst() override {
    steps_ = 0;
    Move([](InternalIterator* it) { it->SeekToFirst(); });
  }
  void SeekToLast() override {
    steps_ = 0;
    Move([](InternalIterator* it) { it->SeekToLast(); });
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    steps_ = 0;
    Move([&](InternalIterator* it) { it->Seek(user_key, sequence); });
  }
  void Next() override {
    if (whole_ == nullptr && ++steps_ >= steps_before_whole_read_) ReadWhole();
    Move([](InternalIterator* it) { it->Next(); });
  }
  void Prev() override {
    steps_ = 0;
    Move([](InternalIterator* it) { it->Prev(); });
  }
  void SkipRun(uint32_t n) override {
    if (whole_ == nullptr) return InternalIterator::SkipRun(n);
    Move([n](InternalIterator* it) { it->SkipRun(n); });
  }
  // Only once read whole: a window points into the block's bytes.
  bool OpenWindow(BlockWindow* window) override { return whole_ != nullptr && inner_->OpenWindow(window); }
  Status status() const override {
    if (!status_.ok()) return status_;
    return inner_ != nullptr ? inner_->status() : Status::OK();
  }

 private:
  // Runs `move` on the inner iterator -- guarded, with the entry copied out,
  // until the block is read whole -- and takes the entry it lands on.
  template <typename Op>
  void Move(Op&& move) {
    valid_ = false;
    if (!status_.ok()) return;
    if (whole_ != nullptr) {
      move(inner_.get());
      if (inner_->Valid()) SetEntryFrom(*inner_);
      valid_ = inner_->Valid();
      return;
    }
    if (inner_ == nullptr) {
      // The reader lives as long as the table; its iterator reads the
      // mapping only when it moves.
      std::unique_ptr<BlockReader> opened;  // out here: see guarded_read.h
      const BlockReader* reader = nullptr;
      Status s;
      if (!GuardedRead([&] { reader = table_->MappedReader(block_, &opened, &s); })) {
        status_ = table_->MappingFault();
        return;
      }
      if (reader == nullptr) {
        status_ = table_->Corrupt("block " + std::to_string(block_) + ": " + s.ToString());
        return;
      }
      inner_ = reader->NewIterator();
    }
    bool landed = false;
    const char* copy = nullptr;
    size_t key_size = 0, value_size = 0;
    const bool read = GuardedRead([&] {
      move(inner_.get());
      landed = inner_->Valid();
      if (!landed) return;
      key_size = inner_->user_key().size();
      value_size = inner_->value().size();
      // Into the inline buffer when the entry fits (no allocation per
      // iterator), else into spill_.
      char* to = inline_;
      if (key_size + value_size > sizeof(inline_)) {
        spill_.resize(key_size + value_size);
        to = spill_.data();
      }
      std::memcpy(to, inner_->user_key().data(), key_size);
      std::memcpy(to + key_size, inner_->value().data(), value_size);
      copy = to;
    });
    if (!read) {
      status_ = table_->MappingFault();
      return;
    }
    if (!landed) return;
    user_key_ = Slice(copy, key_size);
    value_ = Slice(copy + key_size, value_size);
    tag_ = inner_->tag();
    has_key_hash_ = inner_->carries_key_hash();
    key_hash_ = has_key_hash_ ? inner_->key_hash() : 0;
    valid_ = true;
  }
  // From the mapped reader to the block read whole, at the same entry: a
  // large block read from the file (most of its pages were never touched
  // through the mapping), a small one copied from the mapping (its pages
  // just were) and put in the block cache, as a read would be.
  void ReadWhole() {
    if (!valid_) return;
    std::shared_ptr<CachedBlock> fresh;
    const Status s =
        table_->ReadBlockCopy(block_, table_->options_.verify_checksums, /*from_mapping=*/!large_, &fresh);
    if (!s.ok()) {
      status_ = s;
      return;
    }
    CachedBlockRef whole = std::move(fresh);
    auto inner = whole->reader->NewIterator();
    inner->Seek(user_key_, TagSequence(tag_));  // (user key, sequence) names one entry
    if (!inner->Valid() || inner->user_key() != user_key_ || inner->tag() != tag_) {
      status_ = table_->Corrupt("block " + std::to_string(block_) + " reads differently from the file and the mapping");
      return;
    }
    // Cached only once it agrees with what the mapping showed.
    if (!large_) table_->options_.cache->Insert(table_->number_, block_, whole);
    inner_ = std::move(inner);
    whole_ = std::move(whole);
    SetEntryFrom(*inner_);
  }

  const SsdTable* const table_;
  const uint32_t block_;
  const bool large_;  // never cached: read from the file when read whole
  const uint32_t steps_before_whole_read_;
  CachedBlockRef whole_;                     // once read whole (declared before inner_: outlives it)
  std::unique_ptr<InternalIterator> inner_;  // over the mapping, or over whole_
  // The current entry's key and value, copied out of the mapping, back to
  // back: inline when they fit, else in spill_.
  char inline_[240];
  std::string spill_;
  uint32_t steps_ = 0;                       // Next calls since the last seek or step back
  Status status_;
};

// A user's iterator over a split-compressed block that is not cached whole
// (ServesFromKeyPart): it moves through the block's key part, shared with
// Gets through the block cache, and decompresses only the value groups that
// hold its entries' values, keeping the last ones (values are stored in
// entry order, so stepping through the block decompresses each group once).
// A seek thus decompresses one 1 KiB group instead of the block. Hands out
// no runs or windows (a key part has no values to hand out). Thread-safety:
// one thread at a time, as any iterator.
class SsdTable::SplitBlockIterator final : public InternalIterator {
 public:
  SplitBlockIterator(const SsdTable* table, uint32_t block, CachedBlockRef part)
      : table_(table), block_(block), part_(std::move(part)), inner_(part_->reader->NewIterator()) {}

  void SeekToFirst() override {
    inner_->SeekToFirst();
    Take();
  }
  void SeekToLast() override {
    inner_->SeekToLast();
    Take();
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    inner_->Seek(user_key, sequence);
    Take();
  }
  void Next() override {
    inner_->Next();
    Take();
  }
  void Prev() override {
    inner_->Prev();
    Take();
  }
  Status status() const override { return status_.ok() ? inner_->status() : status_; }

 private:
  // Takes the entry the key part's iterator is at, its value decompressed
  // unless the groups at hand hold it.
  void Take() {
    valid_ = false;
    if (!status_.ok() || !inner_->Valid()) return;
    value_ = Slice();
    const uint64_t size = inner_->value().size();
    if (size > 0) {
      const SplitHead& head = part_->split_head;
      const uint64_t offset = keyset::KeyPartValueOffset(*inner_);
      uint32_t first = 0, last = 0;
      if (!GroupsHolding(head, offset, size, &first, &last)) {
        status_ = table_->Corrupt("block " + std::to_string(block_) + ": value outside its groups");
        return;
      }
      if (groups_.empty() || first < first_ || last > last_) {
        groups_.resize(size_t{last - first + 1} * kValueGroupBytes);
        const uint64_t end = std::min<uint64_t>(uint64_t{last + 1} * kValueGroupBytes, head.region_size());
        status_ = table_->ReadValueGroups(block_, head, first, end, &frames_, groups_.data());
        if (!status_.ok()) {
          groups_.clear();
          return;
        }
        first_ = first;
        last_ = last;
      }
      value_ = Slice(groups_.data() + (offset - uint64_t{first_} * kValueGroupBytes), size);
    }
    user_key_ = inner_->user_key();
    tag_ = inner_->tag();
    has_key_hash_ = inner_->carries_key_hash();
    key_hash_ = has_key_hash_ ? inner_->key_hash() : 0;
    valid_ = true;
  }

  const SsdTable* const table_;
  const uint32_t block_;
  const CachedBlockRef part_;  // the key part, with its reader and split head (declared before inner_)
  const std::unique_ptr<InternalIterator> inner_;
  // Value groups [first_, last_] decompressed, back to back (empty: none),
  // and the scratch their stored frames are read into.
  std::string groups_;
  std::string frames_;
  uint32_t first_ = 0, last_ = 0;
  Status status_;
};

// Iteration concatenates the blocks (table/concatenating_iterator.h): this
// source opens them, and holds the current block so that eviction cannot
// free it.
//
// A scan (compaction inputs) bypasses the block cache: it reads runs of
// adjacent blocks, up to kScanWindowBytes, with one read into a window of its
// own and serves blocks in place from there -- no per-block buffer, no cache
// insert evicting blocks that readers use. A user's iterator reads through
// the cache (with read-ahead) until it has stepped forward into
// kReadAheadBlocks blocks in a row; it is scanning then, and reads the next
// blocks through windows too, until it seeks or turns back. A window whose
// blocks Gets have all read through the table's mapping is copied from the
// mapping, under the SIGBUS guard, instead of read (WarmInMapping).
class SsdTable::BlockSource {
 public:
  // verify: see ReadBlock (for a scan, blocks are always verified). decode:
  // see Table::NewScanIterator; may be null. scanning: a user's iterator
  // that reads through windows from its first block on
  // (Table::NewSequentialIterator), as if it had stepped forward through
  // kReadAheadBlocks blocks already.
  BlockSource(const SsdTable* table, bool scan, bool verify, SampledPhase* decode, bool scanning = false)
      : table_(table),
        scan_(scan && !table->options_.use_mmap),
        verify_mapped_(scan && table->options_.use_mmap),
        verify_(verify),
        decode_(decode),
        reads_mapping_(!scan_ && !verify_mapped_ && !verify && table->gets_mapping_ != nullptr),
        forward_run_(scanning ? kReadAheadBlocks : 0) {}

  size_t num_children() const { return table_->index_.size(); }
  size_t FirstCandidate(const Slice& user_key) const { return table_->FirstCandidateBlock(user_key); }
  Status OpenChild(size_t i, std::unique_ptr<InternalIterator>* child) {
    block_.reset();
    // A forward step into the block after the last one opened continues a
    // run; anything else (a seek, a step back) ends it.
    const bool scanning = forward_run_ >= kReadAheadBlocks && i == stepping_into_ && i == opened_ + 1;
    if (i != stepping_into_) forward_run_ = 0;
    opened_ = i;
    // Decode: opening the block's reader (its reads are excluded by the phase).
    const auto open = [&, block = static_cast<uint32_t>(i)] {
      const bool own_buffer = (scanning || table_->IsLarge(block)) && !mapped();
      return scan_            ? OpenInWindow(block, /*verify=*/true)
             : verify_mapped_ ? OpenMappedVerified(block)
             : own_buffer     ? OpenInWindow(block, verify_ || table_->options_.verify_checksums)
                              : table_->ReadBlock(block, verify_, &block_);
    };
    // A block a user's iterator seeks into, when the table is mapped for
    // Gets and the read does not ask to verify checksums again (the table's
    // verify_checksums checks the block once, when its mapped reader is
    // made): from the cache if it is there,
    // else in place from the mapping, as Gets read it (no read-ahead; the
    // block reaches the cache only if the iterator steps on in it).
    if (reads_mapping_ && !scanning) {
      const auto block = static_cast<uint32_t>(i);
      if (!table_->IsLarge(block)) block_ = table_->options_.cache->Lookup(table_->number_, block);
      if (block_ == nullptr) {
        *child = std::make_unique<MappedBlockIterator>(table_, block);
        return Status::OK();
      }
      *child = block_->reader->NewIterator();
      return Status::OK();
    }
    // A split-compressed block a user's iterator seeks into: through its
    // key part, as Gets read it (SplitBlockIterator).
    Status s;
    if (!scan_ && !verify_mapped_ && !scanning && table_->ServesFromKeyPart(static_cast<uint32_t>(i), verify_, &s)) {
      const auto block = static_cast<uint32_t>(i);
      CachedBlockRef part;
      s = table_->ReadKeyPart(block, &part);
      if (s.ok()) {
        *child = std::make_unique<SplitBlockIterator>(table_, block, std::move(part));
        return Status::OK();
      }
      if (!s.IsNotSupported()) return s;
      s = Status::OK();  // its key part cannot be searched alone: read whole, below
    }
    if (!s.ok()) return s;
    s = decode_ != nullptr ? decode_->RunExact(open) : open();
    if (!s.ok()) return s;
    *child = block_->reader->NewIterator();
    return Status::OK();
  }
  // A scan's block i as bytes (verified as OpenChild verifies them), valid
  // until the next call.
  Status OpenBytes(size_t i, Slice* bytes) {
    assert(scan_ || verify_mapped_);
    block_.reset();
    const auto open = [&, block = static_cast<uint32_t>(i)] {
      return scan_ ? OpenInWindow(block, /*verify=*/true) : OpenMappedVerified(block);
    };
    Status s = decode_ != nullptr ? decode_->RunExact(open) : open();
    if (s.ok()) *bytes = block_bytes_;
    return s;
  }
  // Sequential reading: the next blocks in one batch.
  void WillReadForwardFrom(size_t i) {
    forward_run_ = i == opened_ + 1 ? forward_run_ + 1 : 1;
    stepping_into_ = i;
    if (!scan_ && !reads_mapping_ && forward_run_ < kReadAheadBlocks && i % kReadAheadBlocks == 0) {
      table_->Prefetch(static_cast<uint32_t>(i), kReadAheadBlocks);
    }
  }

 private:
  bool mapped() const { return table_->options_.use_mmap; }
  // Block i from the window, reading a new window from block i on first.
  Status OpenInWindow(uint32_t i, bool verify) {
    const auto& index = table_->index_;
    if (window_end_ == 0 || i < window_first_ || i >= window_end_) {
      // Nothing refers to the old window any more (the iterator dropped the
      // block's iterator, OpenChild the block): its buffer is reused.
      window_end_ = 0;
      uint32_t end = i + 1;
      while (end < index.size() && index[end].offset + index[end].stored_bytes() - index[i].offset <= kScanWindowBytes) {
        ++end;
      }
      const uint64_t bytes = index[end - 1].offset + index[end - 1].stored_bytes() - index[i].offset;
      if (window_bytes_ < bytes) {  // none yet, or one block larger than a window
        window_ = ScanWindows().Take(bytes);
        window_bytes_ = std::max<uint64_t>(bytes, ScanWindows().buffer_bytes());
      }
      // A user's scan counts toward populating the table's mapping; a
      // compaction's reads a table about to be deleted and does not.
      if (!scan_ && !noted_user_scan_) {
        noted_user_scan_ = true;
        table_->NoteUserScan();
      }
      Status s = table_->WarmInMapping(i, end) ? table_->CopyMappedBlocks(i, bytes, WindowData())
                                               : table_->ReadBlocks(i, bytes, WindowData());
      if (!s.ok()) return s;
      window_first_ = i;
      window_end_ = end;
    }
    const char* data = WindowData() + (index[i].offset - index[window_first_].offset);
    if (!index[i].compressed()) return OpenVerified(i, data, verify);
    // Decompressed into a buffer the block owns.
    std::shared_ptr<CachedBlock> decoded = table_->NewBlockBuffer(i);
    char* dest = reinterpret_cast<char*>(decoded->buffer.get());
    Status s = table_->Decompress(i, Slice(data, index[i].stored_size), dest);
    if (!s.ok()) return s;
    return OpenVerified(i, dest, verify, std::move(decoded));
  }
  // Scan windows are recycled across sources: a source reads one table, and
  // a fresh window per table would fault in its pages every time. Never
  // destroyed: an iterator may outlive static destruction.
  static BufferRecycler& ScanWindows() {
    static BufferRecycler* const windows = new BufferRecycler(kScanWindowBytes, /*max_kept=*/16);
    return *windows;
  }
  char* WindowData() const { return reinterpret_cast<char*>(window_.get()); }
  // A scan of a mapped table: the mapped readers were opened without their
  // checksums; a scan opens its own, checked.
  Status OpenMappedVerified(uint32_t i) {
    return OpenVerified(i, table_->file_->Mapping() + table_->index_[i].offset, /*verify=*/true);
  }
  // A scan feeds compactions, which rewrite what they read: its blocks'
  // checksums are always verified (whatever verify_checksums says), so a
  // damaged block stops the compaction instead of being rewritten as if
  // intact -- a flipped stored key hash, say, would make the merge keep a
  // shadowed version or drop a live one. The check is part of reading the
  // block (timed as a read, like LevelDB's ReadBlock). A user's scan
  // verifies as its ReadOptions and the table say (`verify`). `data`: block
  // i's bytes, which outlive the reader (a read window or the mapping), or
  // the buffer of `owner`, which becomes the block.
  Status OpenVerified(uint32_t i, const char* data, bool verify, std::shared_ptr<CachedBlock> owner = nullptr) {
    // Without an owner, a reader over bytes the block does not own.
    std::shared_ptr<CachedBlock> block = owner != nullptr ? std::move(owner) : std::make_shared<CachedBlock>();
    block->size = table_->index_[i].size;
    const uint64_t open_start = table_->options_.time_reads ? SteadyNanos() : 0;
    Status s = table_->OpenReader(data, verify, block.get());
    if (table_->options_.time_reads) t_read_ns += SteadyNanos() - open_start;
    if (!s.ok()) return table_->Corrupt("block " + std::to_string(i) + ": " + s.ToString());
    block_ = std::move(block);
    block_bytes_ = Slice(data, table_->index_[i].size);
    return Status::OK();
  }

  const SsdTable* const table_;
  const bool scan_;           // scan through read windows (tables read by pread)
  const bool verify_mapped_;  // scan of a mapped table
  const bool verify_;         // not a scan: ReadOptions::verify_checksums
  SampledPhase* const decode_;
  // A user's iterator over a table mapped for Gets, verifying nothing: until
  // it scans, blocks not in the cache are read in place from the mapping
  // (MappedBlockIterator), with no read-ahead.
  const bool reads_mapping_;
  // Scan: blocks [window_first_, window_end_) (end 0: none), in a window of
  // window_bytes_ (recycled, or larger for a block that outgrows one).
  BufferRecycler::Buffer window_;
  uint64_t window_bytes_ = 0;
  uint32_t window_first_ = 0, window_end_ = 0;
  // A user's iterator: blocks stepped into forward in a row, the one being
  // stepped into, and the last one opened.
  size_t forward_run_;
  size_t stepping_into_ = SIZE_MAX;
  size_t opened_ = SIZE_MAX;
  bool noted_user_scan_ = false;  // told the table (NoteUserScan)
  CachedBlockRef block_;  // the current block; declared after window_: released before it
  Slice block_bytes_;     // its bytes, when opened by OpenVerified
};

// A compaction's pass over the table's blocks as bytes: BlockSource's scan,
// without an iterator per block.
class SsdTable::TableBlockScan final : public BlockScan {
 public:
  TableBlockScan(const SsdTable* table, SampledPhase* decode)
      : source_(table, /*scan=*/true, /*verify=*/true, decode) {}
  bool NextBlock(Slice* block) override {
    if (!status_.ok() || next_ >= source_.num_children()) return false;
    status_ = source_.OpenBytes(next_++, block);
    return status_.ok();
  }
  Status status() const override { return status_; }

 private:
  BlockSource source_;
  size_t next_ = 0;
  Status status_;
};

std::unique_ptr<InternalIterator> SsdTable::NewIterator(const ReadOptions& options) const {
  return std::make_unique<ConcatenatingIterator<BlockSource>>(/*decode=*/nullptr, this, /*scan=*/false,
                                                              options.verify_checksums, /*decode=*/nullptr);
}
std::unique_ptr<InternalIterator> SsdTable::NewSequentialIterator(const ReadOptions& options) const {
  return std::make_unique<ConcatenatingIterator<BlockSource>>(/*decode=*/nullptr, this, /*scan=*/false,
                                                              options.verify_checksums, /*decode=*/nullptr,
                                                              /*scanning=*/true);
}
std::unique_ptr<InternalIterator> SsdTable::NewScanIterator(SampledPhase* decode) const {
  return std::make_unique<ConcatenatingIterator<BlockSource>>(decode, this, /*scan=*/true, /*verify=*/true, decode);
}

std::unique_ptr<BlockScan> SsdTable::NewBlockScan(SampledPhase* decode) const {
  if (format_ != BlockFormat::kKeySet) return nullptr;
  return std::make_unique<TableBlockScan>(this, decode);
}

}  // namespace jigsaw::ssd
