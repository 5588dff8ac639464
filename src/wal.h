// The write-ahead log in persistent memory (docs/wal.md).
//
// One WAL segment per memtable: a pmem object, zeroed when reserved, with a
// 64-byte header and then records, each
//   u32 crc32c | u32 length | payload (a WriteBatch encoding) | zero pad to 8
// where the CRC covers the segment number, the length and the payload. The
// first record whose length is 0, does not fit, or fails its CRC ends the
// segment.
//
// Durability: Append(..., sync=true) returns after the record (and every
// earlier record of the segment) is persisted.
// Thread-safety: a WalWriter is used under the DB's write lock.
#ifndef JIGSAW_SRC_WAL_H_
#define JIGSAW_SRC_WAL_H_

#include <cstdint>
#include <functional>

#include "jigsaw/file_system.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"
#include "pmem/region.h"

namespace jigsaw {

inline constexpr uint64_t kWalHeaderSize = 64;
inline constexpr uint64_t kWalRecordHeaderSize = 8;

// Bytes a payload occupies in a segment.
inline uint64_t WalRecordSize(size_t payload) { return kWalRecordHeaderSize + ((payload + 7) & ~size_t{7}); }

// Where the DB appends its write batches: a pmem segment or, in disk-only
// mode, a log file.
class LogWriter {
 public:
  virtual ~LogWriter() = default;
  virtual bool HasRoom(size_t payload) const = 0;
  // Requires HasRoom(payload.size()). With sync, the record and every earlier
  // one are durable on return. An error leaves the log unusable.
  virtual Status Append(const Slice& payload, bool sync) = 0;
  // Makes every appended record durable.
  virtual Status Sync() = 0;
};

class WalWriter final : public LogWriter {
 public:
  // Writes and persists the header of a freshly reserved, zeroed segment.
  static void Format(pmem::Region* region, char* segment, uint64_t capacity, uint64_t number);

  // Appends after `write_offset` (kWalHeaderSize for a new segment).
  WalWriter(pmem::Region* region, char* segment, uint64_t capacity, uint64_t number,
            uint64_t write_offset = kWalHeaderSize);

  bool HasRoom(size_t payload) const override { return offset_ + WalRecordSize(payload) <= capacity_; }
  Status Append(const Slice& payload, bool sync) override;
  Status Sync() override;

 private:
  pmem::Region* const region_;
  char* const segment_;
  const uint64_t capacity_;
  const uint64_t number_;
  uint64_t offset_;
  uint64_t synced_offset_;
};

// The WAL of disk-only mode: the same header and records in a file
// <db>/<number>.log (header capacity 0: records run to the end of the file).
class FileWalWriter final : public LogWriter {
 public:
  static Status Create(FileSystem* fs, const std::string& path, uint64_t number,
                       std::unique_ptr<FileWalWriter>* writer);
  bool HasRoom(size_t) const override { return true; }
  Status Append(const Slice& payload, bool sync) override;
  Status Sync() override;
  uint64_t syncs() const { return syncs_; }

 private:
  FileWalWriter(std::unique_ptr<WritableFile> file, uint64_t number) : file_(std::move(file)), number_(number) {}
  std::unique_ptr<WritableFile> file_;
  const uint64_t number_;
  std::string record_;
  bool dirty_ = false;
  uint64_t syncs_ = 0;
};

// Replays a log file written by FileWalWriter (same contract as
// ReadWalSegment).
Status ReadWalFile(FileSystem* fs, const std::string& path, uint64_t number,
                   const std::function<Status(const Slice&)>& record);

// Validates a segment's header and calls `record` for each intact record in
// order. *end receives the offset after the last intact record (where a
// writer would continue). Corruption if the header is invalid.
Status ReadWalSegment(const char* segment, uint64_t capacity, uint64_t number,
                      const std::function<Status(const Slice&)>& record, uint64_t* end);

}  // namespace jigsaw

#endif  // JIGSAW_SRC_WAL_H_
