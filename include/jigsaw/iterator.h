// Iterator over the user-visible contents of a database (newest visible
// version of each live key, deletions hidden), in comparator order.
//
// Lifetime: key() and value() are valid until the iterator moves or is
// destroyed. An iterator pins the data it reads: blocks it may visit stay
// allocated until it is destroyed. Destroy iterators before the DB.
// Thread-safety: one thread at a time per iterator.
#ifndef JIGSAW_INCLUDE_JIGSAW_ITERATOR_H_
#define JIGSAW_INCLUDE_JIGSAW_ITERATOR_H_

#include "jigsaw/export.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw {

class JIGSAW_EXPORT Iterator {
 public:
  Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  virtual ~Iterator();

  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // Positions at the first key >= target.
  virtual void Seek(const Slice& target) = 0;
  virtual void Next() = 0;  // requires Valid()
  virtual void Prev() = 0;  // requires Valid()
  virtual Slice key() const = 0;    // requires Valid()
  virtual Slice value() const = 0;  // requires Valid()
  virtual Status status() const = 0;

  // Makes the iterator read the database as a new iterator with the same
  // ReadOptions would now -- the latest writes, or the same snapshot if the
  // options name one -- and leaves it not Valid() until it is positioned
  // again, with status() OK. Costs less than a new iterator: when nothing
  // was written, flushed or compacted since, the iterator keeps everything
  // it had built. The data it read before may be released. NotSupported
  // for iterators that cannot be refreshed (those of read-only secondaries
  // and of ReplicatedDB: make a new one); the iterator is then unchanged.
  virtual Status Refresh();
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_ITERATOR_H_
