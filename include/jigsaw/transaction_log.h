// The change feed: the committed write batches of a database, in sequence
// order, as DB::GetUpdatesSince returns them (docs/design/025-change-feed.md).
//
// Thread-safety: a TransactionLogIterator is not thread-safe; use one per
// thread. It may outlive nothing: destroy it before its DB.
#ifndef JIGSAW_INCLUDE_JIGSAW_TRANSACTION_LOG_H_
#define JIGSAW_INCLUDE_JIGSAW_TRANSACTION_LOG_H_

#include <cstdint>

#include "jigsaw/export.h"
#include "jigsaw/status.h"
#include "jigsaw/write_batch.h"

namespace jigsaw {

// One committed write batch: the updates of one write-ahead log record
// (one DB::Write, or several writers' batches group-committed together),
// numbered from `sequence` on (update i has sequence + i).
struct BatchResult {
  uint64_t sequence = 0;
  WriteBatch batch;
};

class JIGSAW_EXPORT TransactionLogIterator {
 public:
  TransactionLogIterator() = default;
  TransactionLogIterator(const TransactionLogIterator&) = delete;
  TransactionLogIterator& operator=(const TransactionLogIterator&) = delete;
  virtual ~TransactionLogIterator();

  // True while positioned at a batch. False at the end of the feed (status
  // OK) or at an error (status says which).
  virtual bool Valid() const = 0;
  // Requires Valid(). Moves to the next batch.
  virtual void Next() = 0;
  // OK, or why the feed stopped early: NotFound when a log it needed was
  // removed by retention meanwhile; Corruption when sequence numbers do not
  // follow on (updates lost, e.g. to WAL damage skipped at recovery) or a
  // kept log is damaged.
  virtual Status status() const = 0;
  // Requires Valid(). The current batch (a copy).
  virtual BatchResult GetBatch() = 0;
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_TRANSACTION_LOG_H_
