// A FileSystem that forwards every call to another one (the POSIX file
// system by default): tests derive from it and override the calls they
// change.
#ifndef JIGSAW_TESTS_FORWARDING_FS_H_
#define JIGSAW_TESTS_FORWARDING_FS_H_

#include <memory>
#include <string>
#include <vector>

#include "jigsaw/file_system.h"

namespace jigsaw::test {

// A WritableFile that forwards every call to the one it wraps: tests derive
// from it and override the calls they change.
class ForwardingWritableFile : public WritableFile {
 public:
  explicit ForwardingWritableFile(std::unique_ptr<WritableFile> base) : base_(std::move(base)) {}

  Status Append(const Slice& data) override { return base_->Append(data); }
  Status StartWriteback() override { return base_->StartWriteback(); }
  Status Sync() override { return base_->Sync(); }
  Status Close() override { return base_->Close(); }
  uint64_t Size() const override { return base_->Size(); }

 protected:
  const std::unique_ptr<WritableFile> base_;
};

class ForwardingFileSystem : public FileSystem {
 public:
  explicit ForwardingFileSystem(FileSystem* base = FileSystem::Default()) : base_(base) {}

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    return base_->NewWritableFile(path, file);
  }
  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override {
    return base_->NewRandomAccessFile(path, file);
  }
  Status RemoveFile(const std::string& path) override { return base_->RemoveFile(path); }
  Status RenameFile(const std::string& from, const std::string& to) override { return base_->RenameFile(from, to); }
  Status GetChildren(const std::string& dir, std::vector<std::string>* names) override {
    return base_->GetChildren(dir, names);
  }
  Status CreateDirIfMissing(const std::string& dir) override { return base_->CreateDirIfMissing(dir); }
  Status SyncDir(const std::string& dir) override { return base_->SyncDir(dir); }
  Status SyncFile(const std::string& path) override { return base_->SyncFile(path); }
  Status GetFileSize(const std::string& path, uint64_t* size) override { return base_->GetFileSize(path, size); }
  bool FileExists(const std::string& path) override { return base_->FileExists(path); }
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override {
    return base_->LockFile(path, lock);
  }

 protected:
  FileSystem* const base_;
};

}  // namespace jigsaw::test

#endif  // JIGSAW_TESTS_FORWARDING_FS_H_
