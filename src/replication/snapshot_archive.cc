#include "replication/snapshot_archive.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <system_error>

#include "util/checksum.h"
#include "util/coding.h"

namespace jigsaw::replication {

namespace {

// Layout (docs/replication.md, "Snapshot archive, version 1").
constexpr uint64_t kMagic = 0x50414E535753474AULL;  // bytes "JGSWSNAP"
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 40;
constexpr size_t kEntryHeaderSize = 12;  // u32 name_size | u64 file_size
constexpr size_t kTrailerSize = 4;       // u32 body_crc
constexpr size_t kMaxNameSize = 255;
constexpr size_t kCopyChunk = size_t{1} << 20;

bool ValidName(const Slice& name) {
  if (name.empty() || name.size() > kMaxNameSize) return false;
  if (name == Slice(".") || name == Slice("..")) return false;
  return std::none_of(name.data(), name.data() + name.size(), [](char c) { return c == '/' || c == '\0'; });
}

Status WriteFile(FileSystem* fs, const std::string& path, const Slice& contents) {
  std::unique_ptr<WritableFile> file;
  Status s = fs->NewWritableFile(path, &file);
  for (size_t done = 0; s.ok() && done < contents.size(); done += kCopyChunk) {
    s = file->Append(Slice(contents.data() + done, std::min(kCopyChunk, contents.size() - done)));
  }
  if (s.ok()) s = file->Sync();
  if (file != nullptr) {
    const Status closed = file->Close();
    if (s.ok()) s = closed;
  }
  return s;
}

}  // namespace

void RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

Status PlanArchive(FileSystem* fs, const std::string& dir, ArchivePlan* plan) {
  plan->files.clear();
  std::vector<std::string> names;
  Status s = fs->GetChildren(dir, &names);
  if (!s.ok()) return s;
  std::sort(names.begin(), names.end());
  plan->size = kHeaderSize + kTrailerSize;
  for (const std::string& name : names) {
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return Status::NotSupported(path, "is not a regular file: a snapshot archive holds only files");
    }
    if (!ValidName(name)) return Status::NotSupported(path, "a name a snapshot archive cannot hold");
    uint64_t size = 0;
    s = fs->GetFileSize(path, &size);
    if (!s.ok()) return s;
    plan->files.emplace_back(name, size);
    plan->size += kEntryHeaderSize + name.size() + size;
  }
  return Status::OK();
}

Status WriteArchive(FileSystem* fs, const std::string& dir, const ArchivePlan& plan, const SnapshotHeader& header,
                    char* dest) {
  EncodeFixed64(dest, kMagic);
  EncodeFixed32(dest + 8, kVersion);
  EncodeFixed32(dest + 12, static_cast<uint32_t>(plan.files.size()));
  EncodeFixed64(dest + 16, header.applied_index);
  EncodeFixed64(dest + 24, header.sequence);
  EncodeFixed32(dest + 32, 0);
  EncodeFixed32(dest + 36, crc32c::Value(dest, 36));
  char* p = dest + kHeaderSize;
  for (const auto& [name, size] : plan.files) {
    const std::string path = dir + "/" + name;
    EncodeFixed32(p, static_cast<uint32_t>(name.size()));
    EncodeFixed64(p + 4, size);
    std::memcpy(p + kEntryHeaderSize, name.data(), name.size());
    p += kEntryHeaderSize + name.size();
    std::unique_ptr<RandomAccessFile> file;
    Status s = fs->NewRandomAccessFile(path, &file);
    if (s.ok() && file->Size() != size) s = Status::Corruption(path, "changed size while archived");
    for (uint64_t done = 0; s.ok() && done < size;) {
      Slice got;
      const size_t want = static_cast<size_t>(std::min<uint64_t>(kCopyChunk, size - done));
      s = file->Read(done, want, p + done, &got);
      if (s.ok() && got.size() != want) s = Status::Corruption(path, "shorter than its size");
      if (s.ok() && got.data() != p + done) std::memcpy(p + done, got.data(), got.size());
      done += want;
    }
    if (!s.ok()) return s;
    p += size;
  }
  const char* body = dest + kHeaderSize;
  EncodeFixed32(p, crc32c::Value(body, static_cast<size_t>(p - body)));
  return Status::OK();
}

Status ReadArchiveHeader(const Slice& archive, SnapshotHeader* header) {
  if (archive.size() < kHeaderSize + kTrailerSize) {
    return Status::Corruption("snapshot archive", "shorter than its header");
  }
  const char* p = archive.data();
  if (DecodeFixed64(p) != kMagic) return Status::Corruption("snapshot archive", "bad magic");
  if (DecodeFixed32(p + 36) != crc32c::Value(p, 36)) {
    return Status::Corruption("snapshot archive", "header checksum mismatch");
  }
  const uint32_t version = DecodeFixed32(p + 8);
  if (version == 0) return Status::Corruption("snapshot archive", "version 0");
  if (version > kVersion) {
    return Status::NotSupported("snapshot archive", "version " + std::to_string(version) + " is newer than 1");
  }
  header->applied_index = DecodeFixed64(p + 16);
  header->sequence = DecodeFixed64(p + 24);
  return Status::OK();
}

Status UnpackArchive(FileSystem* fs, const Slice& archive, const std::string& dir) {
  SnapshotHeader header;
  Status s = ReadArchiveHeader(archive, &header);
  if (!s.ok()) return s;
  const char* const begin = archive.data();
  const char* const body_end = begin + archive.size() - kTrailerSize;
  const uint32_t count = DecodeFixed32(begin + 12);
  if (DecodeFixed32(body_end) !=
      crc32c::Value(begin + kHeaderSize, static_cast<size_t>(body_end - begin - kHeaderSize))) {
    return Status::Corruption("snapshot archive", "body checksum mismatch");
  }
  // Every entry's bounds and name, before anything is written.
  struct Entry {
    Slice name, contents;
  };
  std::vector<Entry> entries;
  std::set<std::string> seen;
  const char* p = begin + kHeaderSize;
  for (uint32_t i = 0; i < count; ++i) {
    if (static_cast<size_t>(body_end - p) < kEntryHeaderSize) {
      return Status::Corruption("snapshot archive", "entry " + std::to_string(i) + " truncated");
    }
    const uint32_t name_size = DecodeFixed32(p);
    const uint64_t size = DecodeFixed64(p + 4);
    p += kEntryHeaderSize;
    if (name_size > static_cast<size_t>(body_end - p) || size > static_cast<uint64_t>(body_end - p - name_size)) {
      return Status::Corruption("snapshot archive", "entry " + std::to_string(i) + " runs past the end");
    }
    Entry e{Slice(p, name_size), Slice(p + name_size, static_cast<size_t>(size))};
    if (!ValidName(e.name) || !seen.insert(e.name.ToString()).second) {
      return Status::Corruption("snapshot archive", "entry " + std::to_string(i) + " has a bad or repeated name");
    }
    entries.push_back(e);
    p += name_size + size;
  }
  if (p != body_end) return Status::Corruption("snapshot archive", "bytes after its last entry");

  if (fs->FileExists(dir)) return Status::InvalidArgument(dir, "exists");
  s = fs->CreateDirIfMissing(dir);
  for (const Entry& e : entries) {
    if (!s.ok()) break;
    s = WriteFile(fs, dir + "/" + e.name.ToString(), e.contents);
  }
  if (s.ok()) s = fs->SyncDir(dir);
  if (!s.ok()) RemoveTree(dir);
  return s;
}

}  // namespace jigsaw::replication
