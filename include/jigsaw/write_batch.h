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
  void Clear();
  // Appends the updates of `source` to this batch.
  void Append(const WriteBatch& source);

  uint32_t Count() const;
  // Bytes of the batch's encoding (what the WAL stores).
  size_t ApproximateSize() const { return rep_.size(); }

  // Calls handler for each update, in order.
  class Handler {
   public:
    virtual ~Handler();
    virtual void Put(const Slice& key, const Slice& value) = 0;
    virtual void Delete(const Slice& key) = 0;
  };
  Status Iterate(Handler* handler) const;

 private:
  friend class WriteBatchInternal;
  // Encoding (docs/wal.md): fixed64 sequence | fixed32 count | records, each
  // u8 type | varint32 key length | key | [varint32 value length | value].
  std::string rep_;
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_WRITE_BATCH_H_
