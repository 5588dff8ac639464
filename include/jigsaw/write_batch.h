// WriteBatch: a group of updates applied atomically by DB::Write: after a
// crash either all of a batch is visible or none of it.
//
// Thread-safety: a WriteBatch is not thread-safe; use one per thread or
// synchronise externally.
#ifndef JIGSAW_INCLUDE_JIGSAW_WRITE_BATCH_H_
#define JIGSAW_INCLUDE_JIGSAW_WRITE_BATCH_H_

#include <cstdint>
#include <string>

#include "jigsaw/export.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw {

class JIGSAW_EXPORT WriteBatch {
 public:
  WriteBatch();

  // The key and value bytes are copied into the batch.
  void Put(const Slice& key, const Slice& value);
  void Delete(const Slice& key);
  // Deletes every key k with begin_key <= k < end_key (in the comparator's
  // order) that exists when the batch is applied; keys written later, even
  // in the same batch, stay. Takes one sequence number like Put and Delete.
  // DB::Write refuses a batch with begin_key > end_key (InvalidArgument);
  // begin_key == end_key deletes nothing.
  void DeleteRange(const Slice& begin_key, const Slice& end_key);
  void Clear();
  // Appends the updates of `source` to this batch.
  void Append(const WriteBatch& source);

  uint32_t Count() const;
  // Bytes of the batch's encoding (what the WAL stores).
  size_t ApproximateSize() const { return rep_.size(); }

  // Calls handler for each update, in order. Stops at the first DeleteRange
  // the handler refuses and returns its Status.
  class Handler {
   public:
    virtual ~Handler();
    virtual void Put(const Slice& key, const Slice& value) = 0;
    virtual void Delete(const Slice& key) = 0;
    // A range delete. The default refuses it: Iterate stops there and
    // returns NotSupported, so that a handler written before range deletes
    // existed never skips one unawares.
    virtual Status DeleteRange(const Slice& begin_key, const Slice& end_key);
  };
  Status Iterate(Handler* handler) const;

 private:
  friend class WriteBatchInternal;
  // Encoding (docs/wal.md): fixed64 sequence | fixed32 count | records, each
  // u8 type | varint32 key length | key | [varint32 value length | value]
  // (type 2, a range delete: the begin key, then the end key as the value).
  std::string rep_;
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_WRITE_BATCH_H_
