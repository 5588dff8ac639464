// The names of a database directory's files, in one place: building a path
// and telling what a name is. docs/ssd_format.md, manifest.md, wal.md and
// identity.md specify the files themselves.
//
// Thread-safety: pure functions (ReplaceFileAtomically: as safe as the
// FileSystem it is given, for different files).
#ifndef JIGSAW_VERSION_FILENAME_H_
#define JIGSAW_VERSION_FILENAME_H_

#include <cstdint>
#include <string>

#include "jigsaw/file_system.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw {

enum class FileType {
  kTable,         // <number>.jst, an SSD table
  kLog,           // <number>.log, a disk-mode WAL
  kManifest,      // MANIFEST (disk mode)
  kManifestTemp,  // MANIFEST.tmp
  kIdentity,      // IDENTITY
  kIdentityTemp,  // IDENTITY.tmp
  kLock,          // LOCK
  kInfoLog,       // LOG (include/jigsaw/logger.h)
  kOldInfoLog,    // LOG.old, the previous open's
};

// <dir>/<number, 6 digits or more>.jst
std::string TableFileName(const std::string& dir, uint64_t number);
// <dir>/<number, 6 digits or more>.log
std::string LogFileName(const std::string& dir, uint64_t number);

// <dir>/LOG and <dir>/LOG.old.
std::string InfoLogFileName(const std::string& dir);
std::string OldInfoLogFileName(const std::string& dir);

// True if `name` (a directory entry, not a path) is a file this engine
// creates; *type and, for tables and logs, *number say which.
bool ParseFileName(const std::string& name, FileType* type, uint64_t* number);

// Replaces <dir>/<name> with `contents`, atomically: written whole to
// <dir>/<name>.tmp, synced, renamed over <dir>/<name>, then the directory
// synced. Returns the first failure. *renamed (may be null) says whether the
// rename happened: from then on the new contents are the file, even if the
// directory sync failed (a crash may still bring the old file back).
Status ReplaceFileAtomically(FileSystem* fs, const std::string& dir, const std::string& name, const Slice& contents,
                             bool* renamed = nullptr);

// Copies `source` (the open file of `from`, named in errors) into the new
// file `to`, synced (not its directory).
Status CopyFile(FileSystem* fs, const RandomAccessFile* source, const std::string& from, const std::string& to);

}  // namespace jigsaw

#endif  // JIGSAW_VERSION_FILENAME_H_
