// Logger: where a DB writes its info log -- one line per event a person
// running it wants to know about: open and recovery, flushes, compactions,
// trivial moves and migrations, write stalls, a full pool or disk, the
// durability tracker's rounds, background errors, close.
//
// By default (Options::info_log nullptr) a DB writes <name>/LOG, keeping the
// previous open's log as <name>/LOG.old; lines start with the local time and
// the thread. The log is informational: it is never synced, and a failure
// to create or write it does not fail the DB.
#ifndef JIGSAW_INCLUDE_JIGSAW_LOGGER_H_
#define JIGSAW_INCLUDE_JIGSAW_LOGGER_H_

#include "jigsaw/export.h"
#include "jigsaw/slice.h"

namespace jigsaw {

class JIGSAW_EXPORT Logger {
 public:
  Logger() = default;
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;
  virtual ~Logger();

  // Records one event: `message` is one line, without a trailing newline.
  // Called by the DB's threads concurrently: must be thread-safe.
  virtual void Log(const Slice& message) = 0;
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_LOGGER_H_
