// The engine's side of the info log (include/jigsaw/logger.h): formatting a
// line, and the default logger writing a file.
#ifndef JIGSAW_UTIL_LOGGING_H_
#define JIGSAW_UTIL_LOGGING_H_

#include <memory>

#include "jigsaw/file_system.h"
#include "jigsaw/logger.h"

namespace jigsaw {

// Formats a line printf-style and gives it to `logger` (nullptr: nothing).
void Log(Logger* logger, const char* format, ...) __attribute__((format(printf, 2, 3)));

// A Logger appending to `file`, each line prefixed with the local time (to
// the microsecond) and the calling thread's id. Not synced; a write error
// stops the logging silently (the log is informational).
std::unique_ptr<Logger> NewFileLogger(std::unique_ptr<WritableFile> file);

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_LOGGING_H_
