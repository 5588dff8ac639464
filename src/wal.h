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

#include "jigsaw/slice.h"
#include "jigsaw/status.h"
#include "pmem/region.h"

namespace jigsaw {

inline constexpr uint64_t kWalHeaderSize = 64;
inline constexpr uint64_t kWalRecordHeaderSize = 8;

// Bytes a payload occupies in a segment.
inline uint64_t WalRecordSize(size_t payload) { return kWalRecordHeaderSize + ((payload + 7) & ~size_t{7}); }

class WalWriter {
 public:
  // Writes and persists the header of a freshly reserved, zeroed segment.
  static void Format(pmem::Region* region, char* segment, uint64_t capacity, uint64_t number);

  // Appends after `write_offset` (kWalHeaderSize for a new segment).
  WalWriter(pmem::Region* region, char* segment, uint64_t capacity, uint64_t number,
            uint64_t write_offset = kWalHeaderSize);

  bool HasRoom(size_t payload) const { return offset_ + WalRecordSize(payload) <= capacity_; }
  // Requires HasRoom(payload.size()).
  void Append(const Slice& payload, bool sync);
  // Makes every appended record durable.
  void Sync();

 private:
  pmem::Region* const region_;
  char* const segment_;
  const uint64_t capacity_;
  const uint64_t number_;
  uint64_t offset_;
  uint64_t synced_offset_;
};

// Validates a segment's header and calls `record` for each intact record in
// order. *end receives the offset after the last intact record (where a
// writer would continue). Corruption if the header is invalid.
Status ReadWalSegment(const char* segment, uint64_t capacity, uint64_t number,
                      const std::function<Status(const Slice&)>& record, uint64_t* end);

}  // namespace jigsaw

#endif  // JIGSAW_SRC_WAL_H_
