#include "tools/stress_file_system.h"

#include <utility>

namespace jigsaw::stress {
namespace {

class FaultyWritableFile final : public WritableFile {
 public:
  FaultyWritableFile(FaultyFileSystem* fs, std::string path, std::unique_ptr<WritableFile> base)
      : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}

  Status Append(const Slice& data) override {
    Status s = fs_->MaybeFail("append", path_, /*uses_space=*/true);
    if (!s.ok()) {
      if (s.IsNoSpace() && !data.empty()) {
        const size_t part = fs_->ShortLength(data.size());
        if (part > 0 && base_->Append(Slice(data.data(), part)).ok()) unsynced_ = true;
      }
      return s;
    }
    s = base_->Append(data);
    if (s.ok() && !data.empty()) unsynced_ = true;
    return s;
  }
  Status StartWriteback() override { return base_->StartWriteback(); }
  Status Sync() override {
    Status s = fs_->MaybeFail("sync", path_, /*uses_space=*/unsynced_);
    if (!s.ok()) return s;
    s = base_->Sync();
    if (s.ok()) unsynced_ = false;
    return s;
  }
  Status Close() override { return base_->Close(); }
  uint64_t Size() const override { return base_->Size(); }

 private:
  FaultyFileSystem* const fs_;
  const std::string path_;
  const std::unique_ptr<WritableFile> base_;
  bool unsynced_ = false;  // data appended since the last sync
};

}  // namespace

FaultyFileSystem::FaultyFileSystem(uint64_t error_one_in, uint64_t seed, std::atomic<uint64_t>* injected)
    : base_(FileSystem::Default()), error_one_in_(error_one_in), injected_(injected), rng_(seed) {}

Status FaultyFileSystem::MaybeFail(const char* what, const std::string& path, bool uses_space) {
  if (!armed_.load(std::memory_order_relaxed)) return Status::OK();
  if (uses_space && full_.load(std::memory_order_relaxed)) {
    injected_->fetch_add(1);
    return Status::NoSpace(path, std::string(what) + ": no space left on device (injected)");
  }
  if (error_one_in_ == 0) return Status::OK();
  bool fail = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fail = rng_() % error_one_in_ == 0;
  }
  if (!fail) return Status::OK();
  injected_->fetch_add(1);
  return Status::IOError(path, std::string(what) + ": input/output error (injected)");
}

size_t FaultyFileSystem::ShortLength(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<size_t>(rng_() % n);
}

Status FaultyFileSystem::Wrap(const std::string& path, Status created, std::unique_ptr<WritableFile>* file) {
  if (!created.ok()) return created;
  *file = std::make_unique<FaultyWritableFile>(this, path, std::move(*file));
  return Status::OK();
}

Status FaultyFileSystem::NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) {
  Status s = MaybeFail("create", path, /*uses_space=*/true);
  if (!s.ok()) return s;
  return Wrap(path, base_->NewWritableFile(path, file), file);
}

Status FaultyFileSystem::NewTableFile(const std::string& path, bool async_io, std::unique_ptr<WritableFile>* file) {
  Status s = MaybeFail("create", path, /*uses_space=*/true);
  if (!s.ok()) return s;
  return Wrap(path, base_->NewTableFile(path, async_io, file), file);
}

Status FaultyFileSystem::NewLogFile(const std::string& path, std::unique_ptr<WritableFile>* file) {
  Status s = MaybeFail("create", path, /*uses_space=*/true);
  if (!s.ok()) return s;
  return Wrap(path, base_->NewLogFile(path, file), file);
}

Status FaultyFileSystem::ReuseLogFile(const std::string& old_path, const std::string& path,
                                      std::unique_ptr<WritableFile>* file) {
  Status s = MaybeFail("rename", old_path, /*uses_space=*/false);
  if (!s.ok()) return s;
  return Wrap(path, base_->ReuseLogFile(old_path, path, file), file);
}

Status FaultyFileSystem::RenameFile(const std::string& from, const std::string& to) {
  Status s = MaybeFail("rename", from, /*uses_space=*/false);
  if (!s.ok()) return s;
  return base_->RenameFile(from, to);
}

Status FaultyFileSystem::SyncDir(const std::string& dir) {
  Status s = MaybeFail("directory sync", dir, /*uses_space=*/false);
  if (!s.ok()) return s;
  return base_->SyncDir(dir);
}

Status FaultyFileSystem::SyncFile(const std::string& path) {
  Status s = MaybeFail("sync", path, /*uses_space=*/false);
  if (!s.ok()) return s;
  return base_->SyncFile(path);
}

Status FaultyFileSystem::SyncFileSystem(const std::string& dir) {
  Status s = MaybeFail("file-system sync", dir, /*uses_space=*/false);
  if (!s.ok()) return s;
  return base_->SyncFileSystem(dir);
}

}  // namespace jigsaw::stress
