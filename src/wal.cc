#include "src/wal.h"

#include <cstring>
#include <vector>

#include "format/checksum.h"
#include "format/coding.h"
#include "src/persist_bug.h"

namespace jigsaw {

namespace {

constexpr uint64_t kWalMagic = 0x314C41575753474AULL;  // bytes "JGSWWAL1"
constexpr uint32_t kWalVersion = 1;

// Header: u64 magic | u32 version | u32 reserved | u64 number | u64 capacity.
constexpr size_t kMagicOffset = 0;
constexpr size_t kVersionOffset = 8;
constexpr size_t kNumberOffset = 16;
constexpr size_t kCapacityOffset = 24;

uint32_t RecordCrc(uint64_t number, uint32_t length, const char* payload) {
  char prefix[12];
  EncodeFixed64(prefix, number);
  EncodeFixed32(prefix + 8, length);
  return crc32c::Extend(crc32c::Value(prefix, sizeof(prefix)), payload, length);
}

}  // namespace

void WalWriter::Format(pmem::Region* region, char* segment, uint64_t capacity, uint64_t number) {
  EncodeFixed64(segment + kMagicOffset, kWalMagic);
  EncodeFixed32(segment + kVersionOffset, kWalVersion);
  EncodeFixed64(segment + kNumberOffset, number);
  EncodeFixed64(segment + kCapacityOffset, capacity);
  region->Persist(segment, kWalHeaderSize);
}

WalWriter::WalWriter(pmem::Region* region, char* segment, uint64_t capacity, uint64_t number,
                     uint64_t write_offset)
    : region_(region),
      segment_(segment),
      capacity_(capacity),
      number_(number),
      offset_(write_offset),
      synced_offset_(write_offset) {}

Status WalWriter::Append(const Slice& payload, bool sync) {
  char* record = segment_ + offset_;
  const auto length = static_cast<uint32_t>(payload.size());
  std::memcpy(record + kWalRecordHeaderSize, payload.data(), payload.size());
  const size_t padded = (payload.size() + 7) & ~size_t{7};
  std::memset(record + kWalRecordHeaderSize + payload.size(), 0, padded - payload.size());
  EncodeFixed32(record + 4, length);
  EncodeFixed32(record, RecordCrc(number_, length, record + kWalRecordHeaderSize));
  offset_ += kWalRecordHeaderSize + padded;
  return sync ? Sync() : Status::OK();
}

#ifdef JIGSAW_PERSIST_BUG_HOOKS
testing::PersistBug testing::persist_bug = testing::kNoPersistBug;
#endif

Status WalWriter::Sync() {
  if (offset_ == synced_offset_) return Status::OK();
  if (!JIGSAW_PERSIST_BUG(kDropWalPersist)) region_->Persist(segment_ + synced_offset_, offset_ - synced_offset_);
  synced_offset_ = offset_;
  return Status::OK();
}

Status FileWalWriter::Create(FileSystem* fs, const std::string& path, uint64_t number,
                             std::unique_ptr<FileWalWriter>* writer) {
  std::unique_ptr<WritableFile> file;
  Status s = fs->NewWritableFile(path, &file);
  if (!s.ok()) return s;
  char header[kWalHeaderSize] = {};
  EncodeFixed64(header + kMagicOffset, kWalMagic);
  EncodeFixed32(header + kVersionOffset, kWalVersion);
  EncodeFixed64(header + kNumberOffset, number);
  EncodeFixed64(header + kCapacityOffset, 0);  // to the end of the file
  s = file->Append(Slice(header, sizeof(header)));
  // The header is durable before any manifest names the log: a power
  // failure before the first sync write leaves an empty log, not a
  // headerless one that would fail recovery.
  if (s.ok()) s = file->Sync();
  if (!s.ok()) return s;
  writer->reset(new FileWalWriter(std::move(file), number));
  return Status::OK();
}

Status FileWalWriter::Append(const Slice& payload, bool sync) {
  const auto length = static_cast<uint32_t>(payload.size());
  const size_t padded = (payload.size() + 7) & ~size_t{7};
  record_.assign(kWalRecordHeaderSize + padded, '\0');
  std::memcpy(record_.data() + kWalRecordHeaderSize, payload.data(), payload.size());
  EncodeFixed32(record_.data() + 4, length);
  EncodeFixed32(record_.data(), RecordCrc(number_, length, record_.data() + kWalRecordHeaderSize));
  Status s = file_->Append(record_);
  if (!s.ok()) return s;
  dirty_ = true;
  return sync ? Sync() : Status::OK();
}

Status FileWalWriter::Sync() {
  if (!dirty_) return Status::OK();
  Status s = file_->Sync();
  if (s.ok()) {
    dirty_ = false;
    ++syncs_;
  }
  return s;
}

Status ReadWalFile(FileSystem* fs, const std::string& path, uint64_t number,
                   const std::function<Status(const Slice&)>& record) {
  std::unique_ptr<RandomAccessFile> file;
  Status s = fs->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s.IsNotFound() ? Status::Corruption("WAL " + path, "missing") : s;
  std::vector<uint64_t> buffer(file->Size() / 8 + 1);
  Slice contents;
  s = file->Read(0, file->Size(), reinterpret_cast<char*>(buffer.data()), &contents);
  if (!s.ok()) return s;
  uint64_t end = 0;
  s = ReadWalSegment(contents.data(), contents.size(), number, record, &end);
  if (!s.ok()) return Status::Corruption("WAL " + path, s.ToString());
  return Status::OK();
}

Status ReadWalSegment(const char* segment, uint64_t capacity, uint64_t number,
                      const std::function<Status(const Slice&)>& record, uint64_t* end) {
  if (capacity < kWalHeaderSize || DecodeFixed64(segment + kMagicOffset) != kWalMagic) {
    return Status::Corruption("WAL segment " + std::to_string(number), "bad magic");
  }
  if (DecodeFixed32(segment + kVersionOffset) != kWalVersion) {
    return Status::NotSupported("WAL segment " + std::to_string(number), "unknown version");
  }
  if (DecodeFixed64(segment + kNumberOffset) != number || DecodeFixed64(segment + kCapacityOffset) > capacity) {
    return Status::Corruption("WAL segment " + std::to_string(number), "header does not match the manifest");
  }
  uint64_t offset = kWalHeaderSize;
  // Capacity 0: a log file, whose records run to its end.
  const uint64_t limit = DecodeFixed64(segment + kCapacityOffset) == 0 ? capacity
                                                                       : DecodeFixed64(segment + kCapacityOffset);
  while (offset + kWalRecordHeaderSize <= limit) {
    const uint32_t length = DecodeFixed32(segment + offset + 4);
    if (length == 0 || length > limit - offset - kWalRecordHeaderSize) break;
    const char* payload = segment + offset + kWalRecordHeaderSize;
    if (DecodeFixed32(segment + offset) != RecordCrc(number, length, payload)) break;  // torn tail
    Status s = record(Slice(payload, length));
    if (!s.ok()) return s;
    offset += WalRecordSize(length);
  }
  *end = offset;
  return Status::OK();
}

}  // namespace jigsaw
