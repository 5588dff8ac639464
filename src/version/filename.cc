#include "version/filename.h"

#include <algorithm>
#include <cinttypes>
#include <memory>
#include <cstdio>

namespace jigsaw {

namespace {

std::string NumberedFileName(const std::string& dir, uint64_t number, const char* suffix) {
  char name[40];
  std::snprintf(name, sizeof(name), "/%06" PRIu64 ".%s", number, suffix);
  return dir + name;
}

}  // namespace

std::string TableFileName(const std::string& dir, uint64_t number) { return NumberedFileName(dir, number, "jst"); }
std::string LogFileName(const std::string& dir, uint64_t number) { return NumberedFileName(dir, number, "log"); }

std::string InfoLogFileName(const std::string& dir) { return dir + "/LOG"; }
std::string OldInfoLogFileName(const std::string& dir) { return dir + "/LOG.old"; }

bool ParseFileName(const std::string& name, FileType* type, uint64_t* number) {
  *number = 0;
  if (name == "MANIFEST") {
    *type = FileType::kManifest;
  } else if (name == "MANIFEST.tmp") {
    *type = FileType::kManifestTemp;
  } else if (name == "IDENTITY") {
    *type = FileType::kIdentity;
  } else if (name == "IDENTITY.tmp") {
    *type = FileType::kIdentityTemp;
  } else if (name == "LOCK") {
    *type = FileType::kLock;
  } else if (name == "LOG") {
    *type = FileType::kInfoLog;
  } else if (name == "LOG.old") {
    *type = FileType::kOldInfoLog;
  } else {
    const size_t dot = name.find('.');
    if (dot == 0 || dot == std::string::npos || dot > 20 || name.find_first_not_of("0123456789") != dot) return false;
    const std::string suffix = name.substr(dot + 1);
    if (suffix == "jst") {
      *type = FileType::kTable;
    } else if (suffix == "log") {
      *type = FileType::kLog;
    } else {
      return false;
    }
    uint64_t value = 0;
    for (size_t i = 0; i < dot; ++i) {
      const uint64_t digit = static_cast<uint64_t>(name[i] - '0');
      if (value > (UINT64_MAX - digit) / 10) return false;
      value = value * 10 + digit;
    }
    *number = value;
  }
  return true;
}

Status ReplaceFileAtomically(FileSystem* fs, const std::string& dir, const std::string& name, const Slice& contents,
                             bool* renamed) {
  if (renamed != nullptr) *renamed = false;
  const std::string tmp = dir + "/" + name + ".tmp";
  std::unique_ptr<WritableFile> file;
  Status s = fs->NewWritableFile(tmp, &file);
  if (s.ok()) s = file->Append(contents);
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = fs->RenameFile(tmp, dir + "/" + name);
  if (!s.ok()) {
    (void)fs->RemoveFile(tmp);
    return s;
  }
  if (renamed != nullptr) *renamed = true;
  return fs->SyncDir(dir);
}

Status CopyFile(FileSystem* fs, const RandomAccessFile* source, const std::string& from, const std::string& to) {
  constexpr size_t kCopyChunk = 1 << 20;
  std::unique_ptr<WritableFile> dest;
  Status s = fs->NewWritableFile(to, &dest);
  if (!s.ok()) return s;
  std::string scratch(kCopyChunk, '\0');
  const uint64_t size = source->Size();
  for (uint64_t offset = 0; s.ok() && offset < size;) {
    Slice chunk;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kCopyChunk, size - offset));
    s = source->Read(offset, n, scratch.data(), &chunk);
    if (s.ok() && chunk.size() != n) s = Status::IOError(from, "short read while copying it");
    if (s.ok()) s = dest->Append(chunk);
    offset += n;
  }
  if (s.ok()) s = dest->Sync();
  const Status closed = dest->Close();
  return s.ok() ? closed : s;
}

}  // namespace jigsaw
