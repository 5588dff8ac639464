#include "db/wal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "db/write_batch_internal.h"
#include "format/dbformat.h"
#include "util/checksum.h"
#include "util/coding.h"
#include "util/persist_bug.h"

namespace jigsaw {

namespace {

constexpr uint64_t kWalMagic = 0x314C41575753474AULL;  // bytes "JGSWWAL1"
constexpr uint32_t kWalVersion = 1;
// Old bytes may follow the zero record header that ends the log: a log file
// written over an earlier log's file (FileSystem::ReuseLogFile), or a pmem
// segment reserved without zeroing (what WalWriter::Format writes).
constexpr uint32_t kOldBytesMayFollowVersion = 2;

// Header: u64 magic | u32 version | u32 reserved | u64 number | u64 capacity
// | u64 durable end.
constexpr size_t kMagicOffset = 0;
constexpr size_t kVersionOffset = 8;
constexpr size_t kNumberOffset = 16;
constexpr size_t kCapacityOffset = 24;
constexpr size_t kDurableEndOffset = 32;

uint32_t RecordCrc(uint64_t number, uint32_t length, const char* payload) {
  char prefix[12];
  EncodeFixed64(prefix, number);
  EncodeFixed32(prefix + 8, length);
  return crc32c::Extend(crc32c::Value(prefix, sizeof(prefix)), payload, length);
}

}  // namespace

void WalWriter::Format(pmem::Region* region, char* segment, uint64_t capacity, uint64_t number) {
  std::memset(segment, 0, kWalHeaderSize);
  EncodeFixed64(segment + kMagicOffset, kWalMagic);
  EncodeFixed32(segment + kVersionOffset, kOldBytesMayFollowVersion);
  EncodeFixed64(segment + kNumberOffset, number);
  EncodeFixed64(segment + kCapacityOffset, capacity);
  EncodeFixed64(segment + kDurableEndOffset, kWalHeaderSize);
  // The first record's header position reads as zeros: the log's end.
  const size_t end_marker = std::min<uint64_t>(8, capacity - kWalHeaderSize);
  std::memset(segment + kWalHeaderSize, 0, end_marker);
  region->Persist(segment, kWalHeaderSize + end_marker);
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
  const size_t padded = (payload.size() + 7) & ~size_t{7};
  // The segment was not zeroed: the next record's header position is
  // cleared first, so that the log ends at zeros whenever this record is
  // whole (and, until its header is written, at this record's zeros).
  const uint64_t next = offset_ + kWalRecordHeaderSize + padded;
  if (next + 8 <= capacity_) EncodeFixed64(segment_ + next, 0);
  std::atomic_signal_fence(std::memory_order_release);  // stores in this order
  std::memcpy(record + kWalRecordHeaderSize, payload.data(), payload.size());
  std::memset(record + kWalRecordHeaderSize + payload.size(), 0, padded - payload.size());
  EncodeFixed32(record + 4, length);
  EncodeFixed32(record, RecordCrc(number_, length, record + kWalRecordHeaderSize));
  offset_ = next;
  if (sync) PersistRecords();
  return Status::OK();
}

#ifdef JIGSAW_PERSIST_BUG_HOOKS
testing::PersistBug testing::persist_bug = testing::kNoPersistBug;
#endif

void WalWriter::PersistRecords() {
  if (offset_ == synced_offset_) return;
  // The durable end may only name bytes an earlier fence made durable: the
  // records flushed here may reach the medium in any order, or not at all,
  // until the fence below completes.
  char* durable_end = segment_ + kDurableEndOffset;
  if (DecodeFixed64(durable_end) != synced_offset_) {
    EncodeFixed64(durable_end, synced_offset_);
    region_->Flush(durable_end, 8);
  }
  // With the zeros after the last record (Append), unless it filled the
  // segment.
  const uint64_t end = std::min<uint64_t>(offset_ + 8, capacity_);
  if (!JIGSAW_PERSIST_BUG(kDropWalPersist)) region_->Flush(segment_ + synced_offset_, end - synced_offset_);
  region_->Drain();
  synced_offset_ = offset_;
}

Status WalWriter::Sync() {
  PersistRecords();
  char* durable_end = segment_ + kDurableEndOffset;
  if (DecodeFixed64(durable_end) != synced_offset_) {
    EncodeFixed64(durable_end, synced_offset_);  // one aligned 8-byte store: old or new value after a crash
    region_->Persist(durable_end, 8);
  }
  return Status::OK();
}

Status FileWalWriter::Create(FileSystem* fs, const std::string& path, uint64_t number, const std::string& reuse,
                             std::unique_ptr<FileWalWriter>* writer) {
  std::unique_ptr<WritableFile> file;
  bool reused = false;
  Status s;
  if (!reuse.empty()) {
    s = fs->ReuseLogFile(reuse, path, &file);
    reused = s.ok();
    // Not reusable (a file system without reuse, a failed rename): the old
    // file goes, wherever the failure left it, and a new one is made.
    if (!reused) {
      file.reset();
      (void)fs->RemoveFile(reuse);
    }
  }
  if (!reused) s = fs->NewLogFile(path, &file);
  if (!s.ok()) return s;
  char header[kWalHeaderSize];
  EncodeLogFileHeader(number, header);
  if (reused) EncodeFixed32(header + kVersionOffset, kOldBytesMayFollowVersion);
  s = file->Append(Slice(header, sizeof(header)));
  // The header is durable before any manifest names the log: a power
  // failure before the first sync write leaves an empty log, not a
  // headerless one that would fail recovery.
  if (s.ok()) s = file->Sync();
  if (!s.ok()) return s;
  writer->reset(new FileWalWriter(std::move(file), number));
  return Status::OK();
}

void AppendWalRecord(uint64_t number, const Slice& payload, std::string* out) {
  const auto length = static_cast<uint32_t>(payload.size());
  const size_t start = out->size();
  out->resize(start + WalRecordSize(payload.size()), '\0');
  char* record = out->data() + start;
  std::memcpy(record + kWalRecordHeaderSize, payload.data(), payload.size());
  EncodeFixed32(record + 4, length);
  EncodeFixed32(record, RecordCrc(number, length, record + kWalRecordHeaderSize));
}

Status FileWalWriter::Append(const Slice& payload, bool sync) {
  record_.clear();
  AppendWalRecord(number_, payload, &record_);
  Status s = file_->Append(record_);
  if (!s.ok()) return s;
  dirty_ = true;
  end_ += record_.size();
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

void EncodeLogFileHeader(uint64_t number, char* header) {
  std::memset(header, 0, kWalHeaderSize);
  EncodeFixed64(header + kMagicOffset, kWalMagic);
  EncodeFixed32(header + kVersionOffset, kWalVersion);
  EncodeFixed64(header + kNumberOffset, number);
  EncodeFixed64(header + kCapacityOffset, 0);  // to the end of the file
}

Status ReadWholeWal(const char* log, uint64_t end, uint64_t number,
                    const std::function<Status(const Slice&)>& record) {
  const std::string name = "WAL " + std::to_string(number);
  if (end < kWalHeaderSize || DecodeFixed64(log + kMagicOffset) != kWalMagic ||
      DecodeFixed64(log + kNumberOffset) != number) {
    return Status::Corruption(name, "bad header");
  }
  const uint32_t version = DecodeFixed32(log + kVersionOffset);
  if (version != kWalVersion && version != kOldBytesMayFollowVersion) {
    return Status::NotSupported(name, "unknown version");
  }
  for (uint64_t offset = kWalHeaderSize; offset + kWalRecordHeaderSize <= end;) {
    const uint32_t crc = DecodeFixed32(log + offset);
    const uint32_t length = DecodeFixed32(log + offset + 4);
    if (crc == 0 && length == 0) break;
    if (length == 0 || WalRecordSize(length) > end - offset ||
        crc != RecordCrc(number, length, log + offset + kWalRecordHeaderSize)) {
      return Status::Corruption(name, "damaged record at offset " + std::to_string(offset));
    }
    Status s = record(Slice(log + offset + kWalRecordHeaderSize, length));
    if (!s.ok()) return s;
    offset += WalRecordSize(length);
  }
  return Status::OK();
}

Status ReadWalFile(FileSystem* fs, const std::string& path, uint64_t number, WalDamage on_damage,
                   const std::function<Status(const Slice&)>& record, WalReadResult* result, bool live) {
  std::vector<uint64_t> buffer;
  Slice contents;
  // Reads the whole file, as long as it is now, into buffer.
  auto read = [&] {
    std::unique_ptr<RandomAccessFile> file;
    Status s = fs->NewRandomAccessFile(path, &file);
    if (!s.ok()) return s.IsNotFound() ? Status::Corruption("WAL " + path, "missing") : s;
    const uint64_t size = file->Size();
    buffer.assign(size / 8 + 1, 0);
    return file->Read(0, size, reinterpret_cast<char*>(buffer.data()), &contents);
  };
  Status s = read();
  if (!s.ok()) return s;
  const auto started = std::chrono::steady_clock::now();
  uint64_t last_damage = 0;
  auto last_moved = started;
  while (live) {
    WalReadResult dry;
    s = ReadWalSegment(contents.data(), contents.size(), number, on_damage,
                       [](const Slice&) { return Status::OK(); }, &dry);
    if (!s.ok() || !dry.damaged || dry.next_intact_offset == 0) break;
    const auto now = std::chrono::steady_clock::now();
    if (dry.damage_offset != last_damage) {
      last_damage = dry.damage_offset;
      last_moved = now;
    } else if (now - last_moved >= kLiveLogPatience) {
      break;  // it stays: reported below
    }
    if (now - started >= 100 * kLiveLogPatience) break;  // the writer keeps tearing reads: give up
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    s = read();
    if (!s.ok()) return s;
  }
  s = ReadWalSegment(contents.data(), contents.size(), number, on_damage, record, result);
  if (s.IsCorruption() || s.IsNotSupported()) return Status::Corruption("WAL " + path, s.message());
  return s;
}

namespace {

// Work limit of the search for an intact record after damage, in bytes
// checksummed: a damaged stretch of random bytes offers candidate lengths
// up to the rest of the log at every 8-byte offset.
uint64_t SearchBudget(uint64_t bytes) { return (uint64_t{64} << 20) + 16 * bytes; }

// Intact at `offset`: a header whose length fits before `limit`, a payload
// shaped like a WriteBatch (fixed64 sequence, nonzero fixed32 count), zero
// padding and a CRC that verifies for this log's number. *length receives
// the payload length; *checked adds the bytes checksummed.
bool IntactRecordAt(const char* segment, uint64_t limit, uint64_t number, uint64_t offset, uint32_t* length,
                    uint64_t* checked) {
  if (offset + kWalRecordHeaderSize > limit) return false;
  const uint32_t n = DecodeFixed32(segment + offset + 4);
  if (n < 12 || n > limit - offset - kWalRecordHeaderSize) return false;
  const char* payload = segment + offset + kWalRecordHeaderSize;
  // What every batch the writer logs satisfies, checked before the CRC so
  // that old bytes (a reused file or segment) rarely cost a checksum: a
  // sequence below 2^56, a nonzero count of updates of at least 2 bytes
  // each (type, key length), the first one's type a Put, a Delete or a
  // range delete.
  const uint32_t count = DecodeFixed32(payload + 8);
  if (count == 0 || count > (n - 12) / 2 || DecodeFixed64(payload) > kMaxSequenceNumber) return false;
  if (static_cast<uint8_t>(payload[12]) > WriteBatchInternal::kMaxRecordType) return false;
  const uint64_t padded = (uint64_t{n} + 7) & ~uint64_t{7};
  if (offset + kWalRecordHeaderSize + padded > limit) return false;
  for (uint64_t i = n; i < padded; ++i) {
    if (payload[i] != 0) return false;
  }
  *checked += n;
  if (DecodeFixed32(segment + offset) != RecordCrc(number, n, payload)) return false;
  *length = n;
  return true;
}

bool AllZero(const char* bytes, uint64_t n) {
  static const char kZeros[4096] = {};
  for (uint64_t i = 0; i < n; i += sizeof(kZeros)) {
    if (std::memcmp(bytes + i, kZeros, std::min<uint64_t>(sizeof(kZeros), n - i)) != 0) return false;
  }
  return true;
}

// What is wrong with the record at `offset`, or "" if it is intact or the
// log ends cleanly there (*clean_end).
std::string CheckRecordAt(const char* segment, uint64_t limit, uint64_t number, uint64_t offset,
                          bool* clean_end) {
  *clean_end = false;
  if (offset + kWalRecordHeaderSize > limit) {
    *clean_end = AllZero(segment + offset, limit - offset);
    return *clean_end ? "" : "partial record header";
  }
  const uint32_t crc = DecodeFixed32(segment + offset);
  const uint32_t length = DecodeFixed32(segment + offset + 4);
  if (length == 0) {
    if (crc == 0 && AllZero(segment + offset, limit - offset)) {
      *clean_end = true;
      return "";
    }
    return crc == 0 ? "record header of zeros, with nonzero bytes after it" : "record length 0";
  }
  // Whole, with its padding: a log file torn inside a record's padding ends
  // there (its payload may be intact, but the record was never written
  // whole, so never acknowledged), and the next record starts past it.
  if (WalRecordSize(length) > limit - offset) {
    return "record length " + std::to_string(length) + " runs past the end of the log";
  }
  if (crc != RecordCrc(number, length, segment + offset + kWalRecordHeaderSize)) return "bad CRC";
  return "";
}

}  // namespace

Status ReadWalSegment(const char* segment, uint64_t capacity, uint64_t number, WalDamage on_damage,
                      const std::function<Status(const Slice&)>& record, WalReadResult* result) {
  *result = WalReadResult();
  const std::string name = "WAL segment " + std::to_string(number);
  if (capacity < kWalHeaderSize || DecodeFixed64(segment + kMagicOffset) != kWalMagic) {
    return Status::Corruption(name, "bad magic");
  }
  const uint32_t version = DecodeFixed32(segment + kVersionOffset);
  if (version != kWalVersion && version != kOldBytesMayFollowVersion) {
    return Status::NotSupported(name, "unknown version");
  }
  const uint64_t capacity_field = DecodeFixed64(segment + kCapacityOffset);
  if (DecodeFixed64(segment + kNumberOffset) != number || capacity_field > capacity ||
      (capacity_field != 0 && capacity_field < kWalHeaderSize)) {
    return Status::Corruption(name, "header does not match the manifest");
  }
  // Earlier bytes -- an earlier log's file, or whatever the pool object's
  // space held before -- may follow the end.
  const bool old_bytes_may_follow = version == kOldBytesMayFollowVersion;
  // A version 2 segment ends at the first record header of zeros at or past
  // its durable end, without a search through what follows (old pool bytes,
  // megabytes of them, whose candidate records would each be checksummed):
  // the writer clears a record's header position before anything after it,
  // so only a power failure can leave records of this log after such a
  // header, and those were never durable.
  const bool segment_ends_at_zeros = old_bytes_may_follow && capacity_field != 0;
  // Capacity 0: a log file, whose records run to its end.
  const uint64_t limit = capacity_field == 0 ? capacity : capacity_field;
  const uint64_t durable_end = DecodeFixed64(segment + kDurableEndOffset);
  if (durable_end != 0 && (durable_end < kWalHeaderSize || durable_end > limit || durable_end % 8 != 0)) {
    return Status::Corruption(name, "durable end " + std::to_string(durable_end) + " outside the segment");
  }
  result->durable_end = durable_end;
  uint64_t offset = kWalHeaderSize;
  uint64_t search_budget = SearchBudget(limit - offset);
  uint64_t searched = 0;
  for (;;) {
    if (segment_ends_at_zeros && offset >= durable_end && offset + 8 <= limit &&
        DecodeFixed64(segment + offset) == 0) {
      break;
    }
    bool clean_end = false;
    std::string damage = CheckRecordAt(segment, limit, number, offset, &clean_end);
    // Zeros where bytes were durable are damage too (a lost or cleared line).
    if (clean_end && offset < durable_end) damage = "zeros where a record was durable";
    if (damage.empty()) {
      if (clean_end) break;
      const uint32_t length = DecodeFixed32(segment + offset + 4);
      Status s = record(Slice(segment + offset + kWalRecordHeaderSize, length));
      if (s.IsCorruption()) {
        return Status::Corruption(name + ", record at offset " + std::to_string(offset), s.message());
      }
      if (!s.ok()) return s;
      ++result->records;
      offset += WalRecordSize(length);
      result->end = offset;
      continue;
    }
    // Damage: look for the next intact record of this log.
    uint64_t next = 0;
    bool incomplete = false;
    for (uint64_t p = offset + 8; p + kWalRecordHeaderSize <= limit; p += 8) {
      if (searched > search_budget) {
        incomplete = true;
        break;
      }
      uint32_t length = 0;
      if (IntactRecordAt(segment, limit, number, p, &length, &searched)) {
        next = p;
        break;
      }
    }
    // A reused log file (a version 2 segment stopped at its zeros above)
    // ends at a header of zeros with no record of this log after it: what
    // follows is the old log's (a record's CRC names its log's number).
    if (old_bytes_may_follow && next == 0 && !incomplete && offset >= durable_end &&
        DecodeFixed64(segment + offset) == 0) {
      break;
    }
    if (!result->damaged) {
      result->damaged = true;
      result->damage_offset = offset;
      result->damage = std::move(damage);
      result->next_intact_offset = next;
      result->search_incomplete = incomplete;
    }
    if (on_damage != WalDamage::kSkip || next == 0) break;
    ++result->skipped_stretches;
    result->skipped_bytes += next - offset;
    offset = next;
  }
  return Status::OK();
}

bool WalDamageIsTornTail(const WalReadResult& result, bool newest_log) {
  if (!result.damaged) return false;
  if (result.durable_end != 0) return result.damage_offset >= result.durable_end;
  return newest_log && result.next_intact_offset == 0 && !result.search_incomplete;
}

std::string DescribeWalDamage(const WalReadResult& result) {
  if (!result.damaged) return "no damage";
  std::string text = result.damage + " at offset " + std::to_string(result.damage_offset);
  if (result.next_intact_offset != 0) {
    text += "; an intact record follows at offset " + std::to_string(result.next_intact_offset);
  } else if (result.search_incomplete) {
    text += "; the search for intact records after it stopped at its work limit";
  } else {
    text += "; no intact record follows";
  }
  if (result.durable_end != 0) {
    text += result.damage_offset < result.durable_end
                ? "; below the durable end " + std::to_string(result.durable_end)
                : "; at or past the durable end " + std::to_string(result.durable_end) + " (never synced)";
  }
  if (result.skipped_stretches > 0) {
    text += "; skipped " + std::to_string(result.skipped_stretches) + " damaged stretch(es), " +
            std::to_string(result.skipped_bytes) + " bytes";
  }
  return text;
}

}  // namespace jigsaw
