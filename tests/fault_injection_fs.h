// A FileSystem for crash tests, in the spirit of LevelDB's fault-injection
// Env: it forwards to the POSIX file system and remembers, per file, how many
// bytes were synced and whether its directory entry was synced.
// DropUnsyncedData() then does what a power failure does to a page cache:
// files lose their unsynced tails, files whose creation was never made
// durable disappear. SetActive(false) makes every later sync fail, freezing
// the durable state at that moment (a crash the process does not notice).
// Optionally, appends fail with NoSpace after a byte budget (a full disk).
#ifndef JIGSAW_TESTS_FAULT_INJECTION_FS_H_
#define JIGSAW_TESTS_FAULT_INJECTION_FS_H_

#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "jigsaw/file_system.h"

namespace jigsaw::test {

class FaultInjectionFileSystem final : public FileSystem {
 public:
  FaultInjectionFileSystem() : base_(FileSystem::Default()) {}

  void SetActive(bool active) {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = active;
  }
  // While set, file syncs fail with NoSpace (a device that filled up between
  // write and writeback).
  void SetSyncNoSpace(bool no_space) {
    std::lock_guard<std::mutex> lock(mu_);
    sync_no_space_ = no_space;
  }
  // Appends beyond `bytes` more fail with NoSpace (-1: unlimited).
  void SetSpaceLeft(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    space_left_ = bytes;
  }
  // Truncates every tracked file to its synced size and removes files whose
  // directory entry was never synced.
  void DropUnsyncedData() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [path, state] : files_) {
      if (!state.entry_synced) {
        (void)base_->RemoveFile(path);
      } else if (truncate(path.c_str(), static_cast<off_t>(state.synced)) != 0) {
        // already removed by the engine
      }
    }
    files_.clear();
  }

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    std::unique_ptr<WritableFile> base;
    Status s = base_->NewWritableFile(path, &base);
    if (!s.ok()) return s;
    std::lock_guard<std::mutex> lock(mu_);
    files_[path] = FileState();
    *file = std::make_unique<File>(this, path, std::move(base));
    return Status::OK();
  }
  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override {
    return base_->NewRandomAccessFile(path, file);
  }
  Status RemoveFile(const std::string& path) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      files_.erase(path);
    }
    return base_->RemoveFile(path);
  }
  // A rename is modelled as durable at once (the engine syncs the directory
  // right after each one).
  Status RenameFile(const std::string& from, const std::string& to) override {
    Status s = base_->RenameFile(from, to);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(from);
    if (s.ok() && it != files_.end()) {
      files_[to] = it->second;
      files_.erase(from);
    }
    return s;
  }
  Status GetChildren(const std::string& dir, std::vector<std::string>* names) override {
    return base_->GetChildren(dir, names);
  }
  Status CreateDirIfMissing(const std::string& dir) override { return base_->CreateDirIfMissing(dir); }
  Status SyncDir(const std::string& dir) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!active_) return Status::IOError(dir, "file system inactive (simulated crash)");
    for (auto& [path, state] : files_) {
      if (path.rfind(dir + "/", 0) == 0) state.entry_synced = true;
    }
    ++syncs_;
    return Status::OK();
  }
  Status SyncFile(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!active_) return Status::IOError(path, "file system inactive (simulated crash)");
    ++syncs_;
    return Status::OK();
  }
  Status GetFileSize(const std::string& path, uint64_t* size) override { return base_->GetFileSize(path, size); }
  bool FileExists(const std::string& path) override { return base_->FileExists(path); }

  int syncs() {
    std::lock_guard<std::mutex> lock(mu_);
    return syncs_;
  }

 private:
  struct FileState {
    uint64_t size = 0;
    uint64_t synced = 0;
    bool entry_synced = false;
  };
  class File final : public WritableFile {
   public:
    File(FaultInjectionFileSystem* fs, std::string path, std::unique_ptr<WritableFile> base)
        : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}
    Status Append(const Slice& data) override {
      {
        std::lock_guard<std::mutex> lock(fs_->mu_);
        if (fs_->space_left_ >= 0) {
          if (static_cast<int64_t>(data.size()) > fs_->space_left_) {
            return Status::NoSpace(path_, "no space left on device (injected)");
          }
          fs_->space_left_ -= static_cast<int64_t>(data.size());
        }
      }
      Status s = base_->Append(data);
      if (s.ok()) {
        std::lock_guard<std::mutex> lock(fs_->mu_);
        auto it = fs_->files_.find(path_);
        if (it != fs_->files_.end()) it->second.size += data.size();
      }
      return s;
    }
    Status Sync() override {
      std::lock_guard<std::mutex> lock(fs_->mu_);
      if (!fs_->active_) return Status::IOError(path_, "file system inactive (simulated crash)");
      if (fs_->sync_no_space_) return Status::NoSpace(path_, "no space left on device (injected at sync)");
      auto it = fs_->files_.find(path_);
      if (it != fs_->files_.end()) it->second.synced = it->second.size;
      ++fs_->syncs_;
      return Status::OK();  // the base file's data is in the page cache; only the bookkeeping matters
    }
    Status Close() override { return base_->Close(); }
    uint64_t Size() const override { return base_->Size(); }

   private:
    FaultInjectionFileSystem* const fs_;
    const std::string path_;
    std::unique_ptr<WritableFile> base_;
  };

  FileSystem* const base_;
  std::mutex mu_;
  std::map<std::string, FileState> files_;
  bool active_ = true;
  bool sync_no_space_ = false;
  int64_t space_left_ = -1;
  int syncs_ = 0;
};

}  // namespace jigsaw::test

#endif  // JIGSAW_TESTS_FAULT_INJECTION_FS_H_
