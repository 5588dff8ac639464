// FileSystem: how JigsawDB reads and writes files on the SSD tier (tables,
// and in disk-only mode the WAL and manifest). Options::file_system selects
// one; the default is the POSIX file system. Tests substitute one that
// injects faults (like LevelDB's Env).
//
// Thread-safety: a FileSystem and RandomAccessFile may be used concurrently;
// a WritableFile by one thread at a time.
#ifndef JIGSAW_INCLUDE_JIGSAW_FILE_SYSTEM_H_
#define JIGSAW_INCLUDE_JIGSAW_FILE_SYSTEM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jigsaw/export.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw {

class JIGSAW_EXPORT WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends at the end. NoSpace when the device is full.
  virtual Status Append(const Slice& data) = 0;
  // Starts writing appended data back without waiting (sync_file_range);
  // a hint, durability still needs Sync.
  virtual Status StartWriteback() { return Status::OK(); }
  // Everything appended so far is durable on return (fdatasync).
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
  virtual uint64_t Size() const = 0;
};

class JIGSAW_EXPORT RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to n bytes at offset into scratch; *result may point into
  // scratch. A short result means end of file.
  virtual Status Read(uint64_t offset, size_t n, char* scratch, Slice* result) const = 0;
  virtual uint64_t Size() const = 0;
  // The whole file mapped read-only, or nullptr if this file cannot be
  // mapped. Valid while the file object lives.
  virtual const char* Mapping() { return nullptr; }
  // Maps every page of the mapping Mapping() returned into this process now,
  // with one call, instead of a page fault at each first touch. True if
  // every page is mapped; false if it cannot be done (Mapping() not called
  // or null, an old kernel, a page that cannot be read): reads of the
  // mapping still work, faulting. May be called concurrently with reads.
  virtual bool PopulateMapping() { return false; }
  // The descriptor for asynchronous I/O (io_uring), or -1.
  virtual int fd() const { return -1; }
};

// An exclusive lock on a file, held until the object is destroyed.
class JIGSAW_EXPORT FileLock {
 public:
  virtual ~FileLock() = default;
};

class JIGSAW_EXPORT FileSystem {
 public:
  virtual ~FileSystem() = default;
  // The POSIX file system. Never destroyed.
  static FileSystem* Default();

  // Creates or truncates.
  virtual Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) = 0;
  // Creates or truncates a file written once, front to back (a table). Its
  // appends may be buffered and written in the background: they reach the
  // file by StartWriteback, Sync or Close, and an error of such a write is
  // returned by the next call. `async_io`: the POSIX file system writes its
  // buffers through io_uring where it can, else pwrite(2); a write not
  // completed within a bound (5 s) is written again with pwrite, and its
  // later table files use pwrite (docs/design/015-ssd-writes.md). Default:
  // NewWritableFile.
  virtual Status NewTableFile(const std::string& path, bool async_io, std::unique_ptr<WritableFile>* file) {
    (void)async_io;
    return NewWritableFile(path, file);
  }
  // Creates or truncates a log file (the WAL of disk-only mode): each
  // Append is in the operating system -- it survives a crash of this
  // process, not a power failure -- once it returns; Sync makes everything
  // appended durable. Until Close the file may be longer than what was
  // appended, zeros after it. The POSIX file system copies appends into a
  // shared mapping of space allocated ahead (no system call per append).
  // Default: NewWritableFile.
  virtual Status NewLogFile(const std::string& path, std::unique_ptr<WritableFile>* file) {
    return NewWritableFile(path, file);
  }
  // Renames the closed log file `old_path` to `path` -- the rename durable on
  // return -- and opens it as a log file written again from its start: the
  // old log's pages are reused instead of new ones allocated. Like
  // NewLogFile's, except that until Close only the 8 bytes after the last
  // append are sure to read as zeros; the old log's bytes may follow them.
  // (A WAL reader tells those apart from damage by the header version the
  // WAL writes into a reused file: docs/wal.md.) NotSupported (the default)
  // tells the caller to remove the old file and call NewLogFile.
  virtual Status ReuseLogFile(const std::string& old_path, const std::string& path,
                              std::unique_ptr<WritableFile>* file) {
    (void)file;
    return Status::NotSupported(old_path + " -> " + path, "log files are not reused");
  }
  virtual Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  // Atomically replaces `to` (durable after SyncDir of the directory).
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  // Names (not paths) of the entries of a directory.
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* names) = 0;
  virtual Status CreateDirIfMissing(const std::string& dir) = 0;
  // Makes the directory's entries (created, removed, renamed files) durable.
  virtual Status SyncDir(const std::string& dir) = 0;
  // Makes the data of an existing file durable (one written before a crash).
  virtual Status SyncFile(const std::string& path) = 0;
  // Makes everything written to the file system holding `dir` durable --
  // every file's data and every directory's entries -- in one call (the
  // POSIX file system: syncfs(2)). NotSupported (the default) tells the
  // caller to sync file by file instead.
  virtual Status SyncFileSystem(const std::string& dir) {
    return Status::NotSupported(dir, "no file-system-wide sync");
  }
  // Makes `to` a second name of the existing file `from` (a hard link;
  // durable after SyncDir of `to`'s directory). NotSupported (the default)
  // or an error where the two cannot share the file (another file system):
  // callers copy instead.
  virtual Status LinkFile(const std::string& from, const std::string& to) {
    return Status::NotSupported(from + " -> " + to, "hard links are not supported");
  }
  virtual Status GetFileSize(const std::string& path, uint64_t* size) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  // Creates `path` if missing and locks it exclusively for this handle: a
  // second LockFile of the same file -- from this process or another --
  // fails with IOError ("in use by process N" when the holder is known),
  // until *lock is destroyed. The holder's process id is written into the
  // file. A read-only file system gives IOError. Default: flock(2) on the
  // POSIX file, which wrappers inherit.
  virtual Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock);
  // Removes the directory `dir` if it is empty (IOError otherwise). Used to
  // undo the directories a failed DB::Open created. Default: rmdir(2),
  // which wrappers inherit.
  virtual Status RemoveDir(const std::string& dir);
  // The time `path` was last modified, in seconds since the Unix epoch
  // (archived logs' age, Options::wal_ttl_seconds). Default: stat(2) on
  // the POSIX file, which wrappers inherit.
  virtual Status GetFileModificationTime(const std::string& path, uint64_t* unix_seconds);
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_FILE_SYSTEM_H_
