// Output sinks: where the entries of a flush or a compaction become new
// tables of one level. One interface, two tiers:
//  - pmem: PmemBlockSink builds KeySet blocks, PmemTableImageSink SSD table
//    images of classic blocks (Options::table_format, NewPmemSink picks),
//    each in a DRAM buffer, and copies each finished output into an
//    exactly sized pool object (reserved, not yet committed: the caller
//    publishes reservations() with its manifest);
//  - SsdTableSink writes table files (ssd/table.h), each left open in
//    files() for the caller to sync (or synced at once with sync_each).
// The caller decides where outputs may end (at user-key boundaries, through
// CloseIfFull) and what to do with them after Finish; on any error it calls
// Abandon, which releases what the sink made.
//
// Thread-safety: a sink is used by one thread.
#ifndef JIGSAW_COMPACTION_OUTPUT_SINK_H_
#define JIGSAW_COMPACTION_OUTPUT_SINK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compaction/compaction_profile.h"
#include "version/table_store.h"
#include "format/internal_iterator.h"
#include "format/keyset_block.h"
#include "ssd/table.h"
#include "util/memory_file.h"

namespace jigsaw {

// One entry for OutputSink::Add, which takes an iterator's current entry:
// for callers that hold entries, not iterators (a flush's memtable walk, a
// merge of blocks read as bytes). Not an iterator over anything: only the
// accessors are used.
class SingleEntry final : public InternalIterator {
 public:
  // The entry; `key_hash` (may be null) is bloom::KeyHash(key) when the
  // caller has it.
  void Set(const Slice& key, uint64_t tag, const Slice& value, const uint32_t* key_hash) {
    valid_ = true;
    user_key_ = key;
    value_ = value;
    tag_ = tag;
    has_key_hash_ = key_hash != nullptr;
    key_hash_ = has_key_hash_ ? *key_hash : 0;
  }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(const Slice&, SequenceNumber) override {}
  void Next() override { valid_ = false; }
  void Prev() override { valid_ = false; }
  Status status() const override { return Status::OK(); }
};

class OutputSink {
 public:
  virtual ~OutputSink() = default;

  // Called before the first entry of each new user key (outputs end only
  // there): ends the current output if it has reached Options::table_size,
  // or (pmem) if an entry of key_size + value_size bytes could make its
  // block spill into one more pool chunk than table_size needs. *closed
  // says whether one ended.
  virtual Status CloseIfFull(size_t key_size, size_t value_size, bool* closed) = 0;
  // Appends the current entry of `entry` (in internal-key order).
  virtual Status Add(const InternalIterator& entry) = 0;
  // Appends a prefix of `run` (entries after the last one added, each a new
  // user key) as bytes, if this sink's output format can: sets *taken to
  // the number of entries appended -- 0 if it cannot, or if the current
  // output has no room left for the first (the caller then adds entries
  // one by one, and CloseIfFull ends the output).
  // Whether AppendRun can ever take entries (so the merge looks for runs).
  virtual bool TakesRuns() const { return false; }
  virtual Status AppendRun(const EntryRun& run, uint32_t* taken) {
    (void)run;
    *taken = 0;
    return Status::OK();
  }
  // Ends the last output.
  virtual Status Finish() = 0;
  // After an error: cancels reservations, closes and deletes files, and
  // drops the outputs. The sink is then empty, as new, and may be used
  // again.
  virtual void Abandon() = 0;

  // The finished outputs, in key order.
  std::vector<TableRef>& outputs() { return outputs_; }

 protected:
  std::vector<TableRef> outputs_;
};

// A sink whose outputs are pmem tables: built in DRAM, each copied into an
// exactly sized pool object that is reserved, not committed -- the caller
// publishes reservations() with its commit, or Abandon cancels them.
class PmemSink : public OutputSink {
 public:
  // The pool objects of the outputs, to publish with the commit that adds
  // them (the caller takes them over).
  std::vector<pmem::Reservation>& reservations() { return reservations_; }

 protected:
  // `store` must outlive the sink; `phases` (may be null: no profiling) too.
  // may_use_standby: see pmem::PoolSpace::Reserve.
  PmemSink(TableStore* store, bool may_use_standby, OutputPhases* phases);

  // Reserves a pool object of `size` bytes, copies `data` into it (charged
  // to the write phase: a copy, not an encoding), opens it as a table of
  // `layout` and appends it to the outputs; the reservation is kept even if
  // the open fails (Abandon cancels it).
  Status AddToPool(const char* data, size_t size, PmemLayout layout);
  // Drops the outputs and cancels their reservations.
  void DropOutputs();

  TableStore* const store_;
  const bool may_use_standby_;
  OutputPhases* const phases_;
  // Output bytes that fill whole pool chunks: an output ending before an
  // entry could take it past this occupies no more chunks than block_size
  // does (pmem/pool_sizing.h, OutputBlockChunks).
  const uint64_t chunk_limit_;
  std::vector<pmem::Reservation> reservations_;
};

// The pmem sink of the store's pmem_table_format(): a PmemBlockSink or a
// PmemTableImageSink. Arguments as theirs.
std::unique_ptr<PmemSink> NewPmemSink(TableStore* store, bool may_use_standby, OutputPhases* phases);

// Builds KeySet blocks, each a pool object (PmemLayout::kKeySetBlock).
class PmemBlockSink final : public PmemSink {
 public:
  PmemBlockSink(TableStore* store, bool may_use_standby, OutputPhases* phases);
  ~PmemBlockSink() override;

  Status CloseIfFull(size_t key_size, size_t value_size, bool* closed) override;
  Status Add(const InternalIterator& entry) override;
  // As the store's KeySet builders do (BlockBuilder::AppendRun), charged
  // to encode.
  bool TakesRuns() const override { return BuilderTakesRuns(BlockFormat::kKeySet, build_options_); }
  Status AppendRun(const EntryRun& run, uint32_t* taken) override;
  Status Finish() override;
  void Abandon() override;

 private:
  void StartBlock(size_t min_capacity);
  Status FinishBlock();

  const BlockBuilderOptions build_options_;
  std::vector<uint64_t> buffer_;  // 8-byte aligned
  std::unique_ptr<BlockBuilder> builder_;
};

// Builds SSD table images -- the bytes of a table file of classic blocks
// (ssd::TableBuilder, BlockFormat::kClassic, inner blocks of
// Options::ssd_block_size as SSD tables have, with its table filter) -- each
// a pool object (PmemLayout::kTableImage), read in place as an SSD table.
// Outputs end as PmemBlockSink's do (CloseIfFull: at table_size, or before
// an entry could take the image past chunk_limit_). Profiling: the
// builder's work (entries, blocks, index, filter, its appends to the DRAM
// buffer) is charged to encode, the copy into the pool to write.
class PmemTableImageSink final : public PmemSink {
 public:
  PmemTableImageSink(TableStore* store, bool may_use_standby, OutputPhases* phases);
  ~PmemTableImageSink() override;

  Status CloseIfFull(size_t key_size, size_t value_size, bool* closed) override;
  Status Add(const InternalIterator& entry) override;
  // Classic blocks take no runs: OutputSink's AppendRun, which takes none.
  Status Finish() override;
  void Abandon() override;
  uint64_t entries_added() const { return entries_; }

 private:
  Status FinishImage();

  std::string image_;  // the image being built
  StringWritableFile file_{&image_};
  std::unique_ptr<ssd::TableBuilder> builder_;
  uint64_t entries_ = 0;
};

class SsdTableSink final : public OutputSink {
 public:
  // `store` must outlive the sink; `phases` (may be null) too. sync_each:
  // each table is synced when finished (otherwise its writeback is only
  // started, and the caller syncs files()).
  SsdTableSink(TableStore* store, bool sync_each, OutputPhases* phases);
  ~SsdTableSink() override;

  Status CloseIfFull(size_t key_size, size_t value_size, bool* closed) override;
  Status Add(const InternalIterator& entry) override;
  // As the store's table builders do (ssd::TableBuilder::AppendRun).
  bool TakesRuns() const override;
  Status AppendRun(const EntryRun& run, uint32_t* taken) override;
  Status Finish() override;
  void Abandon() override;
  // Ends the current table and writes `block` -- a KeySet block of the
  // current entry layout (keyset::ReadOutline reads its header) holding the
  // user keys [smallest, largest], in pmem -- as a table of its
  // own, as its bytes (a migration: ssd::TableBuilder::AddWholeBlock). Its
  // file write is charged to the write phase; nothing to encode.
  Status AddWholeBlock(const Slice& block, const Slice& smallest, const Slice& largest);
  // Ends the current table and writes `image` -- the bytes of a table file
  // (a pmem table image) -- unchanged as a table file of its own: a
  // migration. Its write is charged to the write phase; nothing to encode.
  Status AddTableImage(const Slice& image);

  // The outputs' files, still open (the caller takes them over).
  std::vector<std::unique_ptr<WritableFile>>& files() { return files_; }
  uint64_t entries_added() const { return entries_; }

 private:
  Status StartTable();
  Status FinishTable();
  // Ends file_ (`s`: how writing it went; `file_size` bytes): syncs it or
  // starts its writeback, hands it to files(), and opens it as an output.
  Status EndTable(Status s, uint64_t file_size);

  TableStore* const store_;
  const bool sync_each_;
  OutputPhases* const phases_;
  std::unique_ptr<WritableFile> file_;  // the table being built
  std::unique_ptr<ssd::TableBuilder> builder_;
  uint64_t number_ = 0;
  uint64_t entries_ = 0;
  std::vector<std::unique_ptr<WritableFile>> files_;
};

}  // namespace jigsaw

#endif  // JIGSAW_COMPACTION_OUTPUT_SINK_H_
