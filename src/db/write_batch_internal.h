// Engine-side access to a WriteBatch's encoding (sequence number, raw bytes).
#ifndef JIGSAW_DB_WRITE_BATCH_INTERNAL_H_
#define JIGSAW_DB_WRITE_BATCH_INTERNAL_H_

#include "format/dbformat.h"
#include "jigsaw/write_batch.h"

namespace jigsaw {

class MemTable;

class WriteBatchInternal {
 public:
  static constexpr size_t kHeaderSize = 12;  // fixed64 sequence, fixed32 count
  // Record types of the encoding (docs/wal.md): ValueType's 0 (Delete) and
  // 1 (Put), and a range delete, which is no block entry's type.
  static constexpr uint8_t kRangeDeletionType = 2;
  static constexpr uint8_t kMaxRecordType = kRangeDeletionType;

  static SequenceNumber Sequence(const WriteBatch& batch);
  static void SetSequence(WriteBatch* batch, SequenceNumber sequence);
  static uint32_t Count(const WriteBatch& batch);
  static Slice Contents(const WriteBatch& batch) { return Slice(batch.rep_); }
  // Makes room for `bytes` of encoding in all (header included), so that
  // the updates that follow allocate at most once.
  static void Reserve(WriteBatch* batch, size_t bytes) { batch->rep_.reserve(bytes); }
  // Replaces the batch with an encoding read back from the WAL. Corruption
  // if it is shorter than the header.
  static Status SetContents(WriteBatch* batch, const Slice& contents);
  // Checks every key and value against the DB's size limits, and that no
  // range delete begins after it ends in `ucmp`'s order (unchecked if
  // null), in the same pass telling whether every update is a Delete or DeleteRange
  // (if deletes_only is set).
  static Status CheckLimits(const WriteBatch& batch, const Comparator* ucmp, bool* deletes_only = nullptr);
  // Inserts every update into `memtable`, numbered from the batch sequence,
  // with MemTable::AddConcurrently when `concurrently` (other batches are
  // being inserted at the same time), else with MemTable::Add.
  static Status InsertInto(const WriteBatch& batch, MemTable* memtable, bool concurrently = false);
};

}  // namespace jigsaw

#endif  // JIGSAW_DB_WRITE_BATCH_INTERNAL_H_
