#include "db/wal_archive.h"

#include <chrono>

#include "db/wal.h"
#include "version/filename.h"

namespace jigsaw {

namespace {

constexpr char kTempSuffix[] = ".tmp";

uint64_t UnixSeconds() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

WalArchive::WalArchive(FileSystem* fs, const std::string& db, uint64_t ttl_seconds, uint64_t size_limit_bytes)
    : fs_(fs), dir_(Dir(db)), ttl_seconds_(ttl_seconds), size_limit_bytes_(size_limit_bytes) {}

std::string WalArchive::PathOf(uint64_t number) const { return LogFileName(dir_, number); }

Status WalArchive::Open() {
  if (archiving()) {
    Status s = fs_->CreateDirIfMissing(dir_);
    if (!s.ok()) return s;
  }
  std::vector<std::string> children;
  if (!fs_->FileExists(dir_) || !fs_->GetChildren(dir_, &children).ok()) return Status::OK();
  {
    MutexLock lock(&mutex_);
    for (const std::string& child : children) {
      const std::string path = dir_ + "/" + child;
      const size_t n = child.size();
      if (n > 4 && child.compare(n - 4, 4, kTempSuffix) == 0) {
        (void)fs_->RemoveFile(path);  // an archiving a crash interrupted
        continue;
      }
      FileType type;
      uint64_t number = 0;
      uint64_t size = 0;
      if (ParseFileName(child, &type, &number) && type == FileType::kLog && fs_->GetFileSize(path, &size).ok()) {
        sizes_[number] = size;
      }
    }
  }
  return Status::OK();
}

Status WalArchive::Added(uint64_t number, const std::string& path) {
  uint64_t size = 0;
  Status s = fs_->GetFileSize(path, &size);
  if (!s.ok()) return s;
  MutexLock lock(&mutex_);
  sizes_[number] = size;
  return Status::OK();
}

Status WalArchive::AddFile(uint64_t number, const std::string& path) {
  const std::string to = PathOf(number);
  Status s = fs_->RenameFile(path, to);
  if (s.ok()) s = fs_->SyncDir(dir_);
  if (s.ok()) s = Added(number, to);
  return s;
}

Status WalArchive::AddRecords(uint64_t number, const char* records, uint64_t size) {
  const std::string to = PathOf(number);
  const std::string temp = to + kTempSuffix;
  std::unique_ptr<WritableFile> file;
  Status s = fs_->NewWritableFile(temp, &file);
  if (!s.ok()) return s;
  char header[kWalHeaderSize];
  EncodeLogFileHeader(number, header);
  s = file->Append(Slice(header, sizeof(header)));
  if (s.ok()) s = file->Append(Slice(records, size));
  if (s.ok()) s = file->Sync();
  const Status closed = file->Close();
  if (s.ok()) s = closed;
  if (s.ok()) s = fs_->RenameFile(temp, to);
  if (s.ok()) s = fs_->SyncDir(dir_);
  if (!s.ok()) {
    (void)fs_->RemoveFile(temp);
    return s;
  }
  return Added(number, to);
}

std::vector<uint64_t> WalArchive::Numbers() const {
  MutexLock lock(&mutex_);
  std::vector<uint64_t> numbers;
  numbers.reserve(sizes_.size());
  for (const auto& [number, size] : sizes_) numbers.push_back(number);
  return numbers;
}

bool WalArchive::Has(uint64_t number) const {
  MutexLock lock(&mutex_);
  return sizes_.count(number) > 0;
}

Status WalArchive::Purge() {
  if (!archiving()) return Status::OK();
  MutexLock lock(&mutex_);
  uint64_t total = 0;
  for (const auto& [number, size] : sizes_) total += size;
  const uint64_t now = UnixSeconds();
  for (auto it = sizes_.begin(); it != sizes_.end();) {
    bool expired = size_limit_bytes_ != 0 && total > size_limit_bytes_;
    uint64_t modified = 0;
    const std::string path = PathOf(it->first);
    if (!expired && ttl_seconds_ != 0) {
      Status s = fs_->GetFileModificationTime(path, &modified);
      if (s.IsNotFound()) {  // removed by hand
        total -= it->second;
        it = sizes_.erase(it);
        continue;
      }
      expired = s.ok() && now >= modified && now - modified >= ttl_seconds_;
    }
    // Logs are archived in number order: once one is young enough and
    // the archive fits its limit, the newer ones stay too.
    if (!expired) break;
    Status s = fs_->RemoveFile(path);
    if (!s.ok() && fs_->FileExists(path)) return s;
    total -= it->second;
    it = sizes_.erase(it);
  }
  return Status::OK();
}

}  // namespace jigsaw
