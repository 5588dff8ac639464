// The file system jigsaw_stress runs the engine on (docs/stress.md): the
// default one, with faults injected into what the engine writes while the
// faults are armed.
//
// - File-system errors: each append, sync, file creation, rename and
//   directory sync fails with IOError, one time in `error_one_in` (0: never).
//   An append that fails writes nothing.
// - A full device: while SetFull(true), every append and file creation
//   fails with NoSpace, an append after writing a part of its data (the
//   short write ENOSPC leaves), and syncs of files with data appended
//   since their last sync fail too.
//
// Reads are never failed: the oracle's checks read through the same files.
// Thread-safe.
#ifndef JIGSAW_TOOLS_STRESS_FILE_SYSTEM_H_
#define JIGSAW_TOOLS_STRESS_FILE_SYSTEM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "jigsaw/file_system.h"

namespace jigsaw::stress {

class FaultyFileSystem final : public FileSystem {
 public:
  // Counts each injected fault in *injected (which outlives this).
  FaultyFileSystem(uint64_t error_one_in, uint64_t seed, std::atomic<uint64_t>* injected);

  // While disarmed (the start), nothing fails.
  void Arm(bool armed) { armed_.store(armed); }
  void SetFull(bool full) { full_.store(full); }
  // Fails `what` of `path` if a fault is due: IOError (a random error), or
  // NoSpace when `uses_space` and the device is full.
  Status MaybeFail(const char* what, const std::string& path, bool uses_space);
  // A short write's length for `n` bytes on a full device: [0, n).
  size_t ShortLength(size_t n);
  bool full() const { return armed_.load() && full_.load(); }

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override;
  Status NewTableFile(const std::string& path, bool async_io, std::unique_ptr<WritableFile>* file) override;
  Status NewLogFile(const std::string& path, std::unique_ptr<WritableFile>* file) override;
  Status ReuseLogFile(const std::string& old_path, const std::string& path,
                      std::unique_ptr<WritableFile>* file) override;
  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override {
    return base_->NewRandomAccessFile(path, file);
  }
  Status RemoveFile(const std::string& path) override { return base_->RemoveFile(path); }
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status GetChildren(const std::string& dir, std::vector<std::string>* names) override {
    return base_->GetChildren(dir, names);
  }
  Status CreateDirIfMissing(const std::string& dir) override { return base_->CreateDirIfMissing(dir); }
  Status SyncDir(const std::string& dir) override;
  Status SyncFile(const std::string& path) override;
  Status SyncFileSystem(const std::string& dir) override;
  Status LinkFile(const std::string& from, const std::string& to) override { return base_->LinkFile(from, to); }
  Status GetFileSize(const std::string& path, uint64_t* size) override { return base_->GetFileSize(path, size); }
  bool FileExists(const std::string& path) override { return base_->FileExists(path); }
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override {
    return base_->LockFile(path, lock);
  }
  Status RemoveDir(const std::string& dir) override { return base_->RemoveDir(dir); }
  Status GetFileModificationTime(const std::string& path, uint64_t* unix_seconds) override {
    return base_->GetFileModificationTime(path, unix_seconds);
  }

 private:
  // Wraps a new file of the base file system, unless creating it failed.
  Status Wrap(const std::string& path, Status created, std::unique_ptr<WritableFile>* file);

  FileSystem* const base_;
  const uint64_t error_one_in_;
  std::atomic<bool> armed_{false};
  std::atomic<bool> full_{false};
  std::atomic<uint64_t>* const injected_;
  std::mutex mu_;
  std::mt19937_64 rng_;  // guarded by mu_
};

}  // namespace jigsaw::stress

#endif  // JIGSAW_TOOLS_STRESS_FILE_SYSTEM_H_
