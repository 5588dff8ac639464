// The archive of flushed write-ahead logs that the change feed reads
// (DB::GetUpdatesSince; docs/wal.md, "Archived logs").
//
// <db>/archive/<number>.log holds the records of log <number> after a log
// file header (capacity 0): a disk-mode log file moved there whole, or a
// pmem segment's records written out. A file appears whole or not at all
// (written as <number>.log.tmp, synced, renamed). Retention
// (Options::wal_ttl_seconds, wal_size_limit_mb) removes the oldest files.
//
// Thread-safety: thread-safe (an internal mutex; no file I/O but listing
// and removal is done under it).
#ifndef JIGSAW_DB_WAL_ARCHIVE_H_
#define JIGSAW_DB_WAL_ARCHIVE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "jigsaw/file_system.h"
#include "jigsaw/status.h"
#include "util/mutex.h"

namespace jigsaw {

class WalArchive {
 public:
  // ttl_seconds, size_limit_bytes: 0 sets no limit of that kind; both 0:
  // nothing is archived (archiving() false) and nothing removed.
  WalArchive(FileSystem* fs, const std::string& db, uint64_t ttl_seconds, uint64_t size_limit_bytes);

  static std::string Dir(const std::string& db) { return db + "/archive"; }
  std::string PathOf(uint64_t number) const;

  bool archiving() const { return ttl_seconds_ != 0 || size_limit_bytes_ != 0; }

  // At open: makes the directory (when archiving), removes leftover .tmp
  // files and lists the archived logs. Purge next.
  Status Open();

  // Moves the log file `path` of log `number` into the archive (a rename,
  // made durable by syncing both directories).
  Status AddFile(uint64_t number, const std::string& path);
  // Writes the records `records` (the bytes after a log's header) of log
  // `number` into the archive as a log file, durable on return.
  Status AddRecords(uint64_t number, const char* records, uint64_t size);

  // The archived logs' numbers, oldest first.
  std::vector<uint64_t> Numbers() const EXCLUDES(mutex_);
  bool Has(uint64_t number) const EXCLUDES(mutex_);

  // Removes archived logs older than the TTL, then the oldest while the
  // archive is over its size limit. Returns the first removal that failed
  // (the file stays, and is tried again next time).
  Status Purge() EXCLUDES(mutex_);

 private:
  Status Added(uint64_t number, const std::string& path) EXCLUDES(mutex_);

  FileSystem* const fs_;
  const std::string dir_;
  const uint64_t ttl_seconds_;
  const uint64_t size_limit_bytes_;
  mutable Mutex mutex_;
  std::map<uint64_t, uint64_t> sizes_ GUARDED_BY(mutex_);  // number -> bytes
};

}  // namespace jigsaw

#endif  // JIGSAW_DB_WAL_ARCHIVE_H_
