// The write-ahead log in persistent memory (docs/wal.md).
//
// One WAL segment per memtable: a pmem object, zeroed when reserved, with a
// 64-byte header and then records, each
//   u32 crc32c | u32 length | payload (a WriteBatch encoding) | zero pad to 8
// where the CRC covers the segment number, the length and the payload. The
// header also keeps the segment's *durable end*: every byte before it was
// durable before any byte after it was written.
//
// Durability: Append(..., sync=true) returns after the record (and every
// earlier record of the segment) is persisted; Sync() also persists the
// durable end up to the last record.
// Thread-safety: a WalWriter is used under the DB's write lock; the readers
// keep no state and must not run while their log is written.
#ifndef JIGSAW_DB_WAL_H_
#define JIGSAW_DB_WAL_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

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
  // Offset after the last record appended: the bytes before it are whole
  // records and never change again.
  virtual uint64_t end() const = 0;
};

class WalWriter final : public LogWriter {
 public:
  // Writes and persists the header of a freshly reserved segment (its
  // bytes need not be zeros: docs/wal.md, version 2) and the zeros after it
  // that end the empty log.
  static void Format(pmem::Region* region, char* segment, uint64_t capacity, uint64_t number);

  // Appends after `write_offset` (kWalHeaderSize for a new segment).
  WalWriter(pmem::Region* region, char* segment, uint64_t capacity, uint64_t number,
            uint64_t write_offset = kWalHeaderSize);

  bool HasRoom(size_t payload) const override { return offset_ + WalRecordSize(payload) <= capacity_; }
  Status Append(const Slice& payload, bool sync) override;
  // Persists every appended record, then the header's durable end (one more
  // fence; called at a memtable switch and a clean close, not per write).
  Status Sync() override;
  uint64_t end() const override { return offset_; }

 private:
  // Persists the records appended since the last persist, together with the
  // header's durable end as of that last persist (one fence).
  void PersistRecords();

  pmem::Region* const region_;
  char* const segment_;
  const uint64_t capacity_;
  const uint64_t number_;
  uint64_t offset_;
  uint64_t synced_offset_;
};

// The WAL of disk-only mode: the same header and records in a file
// <db>/<number>.log (header capacity 0: records run to the end of the file;
// durable end 0: unknown).
class FileWalWriter final : public LogWriter {
 public:
  // Creates the log file `path`, or, when `reuse` names a log file no
  // longer needed, writes it over that file (FileSystem::ReuseLogFile;
  // header version 2, docs/wal.md). When the file system cannot reuse it,
  // `reuse` is removed and a new file made. The header is durable on return.
  static Status Create(FileSystem* fs, const std::string& path, uint64_t number, const std::string& reuse,
                       std::unique_ptr<FileWalWriter>* writer);
  bool HasRoom(size_t) const override { return true; }
  Status Append(const Slice& payload, bool sync) override;
  Status Sync() override;
  uint64_t end() const override { return end_; }
  uint64_t syncs() const { return syncs_; }

 private:
  FileWalWriter(std::unique_ptr<WritableFile> file, uint64_t number) : file_(std::move(file)), number_(number) {}
  std::unique_ptr<WritableFile> file_;
  const uint64_t number_;
  std::string record_;
  bool dirty_ = false;
  uint64_t end_ = kWalHeaderSize;
  uint64_t syncs_ = 0;
};

// What reading one log found. A log ends cleanly at a record header of
// zeros with nothing but zeros after it (a segment's unused space), or at
// the end of the file; any other record that is not intact is *damage*.
struct WalReadResult {
  // Offset after the last record passed to the callback: where a writer
  // would continue.
  uint64_t end = kWalHeaderSize;
  // The segment header's durable end: every byte before it was durable
  // before the crash. 0: unknown (log files, and segments written before
  // the field existed).
  uint64_t durable_end = 0;
  // Records passed to the callback.
  uint64_t records = 0;

  // The first damage: its offset and what is wrong there.
  bool damaged = false;
  uint64_t damage_offset = 0;
  std::string damage;
  // The first intact record of this log after the damage (0: none found).
  uint64_t next_intact_offset = 0;
  // The search for an intact record after the damage gave up at its work
  // limit (candidate lengths of up to the rest of the log, each one
  // checksummed) before the end of the log: one may follow unseen.
  bool search_incomplete = false;

  // WalDamage::kSkip: damaged stretches skipped, and their bytes.
  uint64_t skipped_stretches = 0;
  uint64_t skipped_bytes = 0;
};

// What a reader does at damage.
enum class WalDamage {
  // Stops: records after the damage are not passed on (it still looks for
  // one, to report it).
  kStop,
  // Skips to the next intact record (found at 8-byte alignment) and goes
  // on; stops only where none is found.
  kSkip,
};

// Validates a segment's header and calls `record` for each intact record in
// order, handling damage as `on_damage` says and describing it in *result.
// Corruption if the header is invalid; an error from `record` is returned
// as is. Damage itself is not an error here: the caller decides
// (WalDamageIsTornTail, DescribeWalDamage).
Status ReadWalSegment(const char* segment, uint64_t capacity, uint64_t number, WalDamage on_damage,
                      const std::function<Status(const Slice&)>& record, WalReadResult* result);

// How long damage in a live log must stay in place to be reported
// (ReadWalFile): far longer than an append's copy, even one whose thread is
// descheduled in the middle of it.
inline constexpr std::chrono::milliseconds kLiveLogPatience{200};

// Replays a log file written by FileWalWriter (same contract as
// ReadWalSegment; a missing file is Corruption). `live`: a writer may be
// appending to the log (a read-only open beside it). Appends are copies
// into a shared mapping, whose bytes need not land in order, and one read
// of the file copies its pages at different moments: it can catch a record
// half-copied -- its header still zeros -- and, in later pages, records
// appended after it completed. So a live log is read again, after a pause,
// while such damage (intact records after it) moves or lasts less than
// kLiveLogPatience, and the records of the last read are replayed: damage
// that stays is reported as any other.
Status ReadWalFile(FileSystem* fs, const std::string& path, uint64_t number, WalDamage on_damage,
                   const std::function<Status(const Slice&)>& record, WalReadResult* result, bool live = false);

// The header of a log file of log `number` (version 1, capacity 0: records
// run to the end of the file), as FileWalWriter writes it; an archived log
// (docs/wal.md, "Archived logs") starts with it too.
void EncodeLogFileHeader(uint64_t number, char* header);

// Appends a record of log `number` holding `payload` to *out, as a writer
// lays it out (header, payload, zero padding).
void AppendWalRecord(uint64_t number, const Slice& payload, std::string* out);

// The records of a log whose bytes [0, end) are known whole -- a live log
// up to the end its writer published, a flushed log, an archived one --
// passed to `record` in order, up to `end` or a record header of zeros
// (old bytes of a reused file may follow it). Unlike ReadWalSegment there
// is no damage to tolerate: a bad header or record is Corruption.
Status ReadWholeWal(const char* log, uint64_t end, uint64_t number,
                    const std::function<Status(const Slice&)>& record);

// Whether the first damage of a log is a *torn tail*: bytes a crash may
// legitimately have left unwritten, never acknowledged as durable.
//  - Known durable end (pmem segments): damage at or after it. Unsynced
//    records may reach pmem in any order (cache lines are flushed and
//    evicted independently), so intact records after it do not make it
//    mid-log damage -- none of them was durable either.
//  - Unknown (log files, old segments): damage in the newest log with no
//    intact record of that log after it. An older log was synced in full
//    before the next one was created.
bool WalDamageIsTornTail(const WalReadResult& result, bool newest_log);

// "bad CRC at offset 4168; an intact record follows at offset 4304" and
// the like, for Corruption messages.
std::string DescribeWalDamage(const WalReadResult& result);

}  // namespace jigsaw

#endif  // JIGSAW_DB_WAL_H_
