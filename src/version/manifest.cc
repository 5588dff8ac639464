#include "version/manifest.h"

#include <algorithm>
#include <cstring>

#include "version/filename.h"
#include "util/persist_bug.h"
#include "util/checksum.h"
#include "util/coding.h"
#include "util/guarded_read.h"

namespace jigsaw {

// ---------------------------------------------------------------------------
// Manifest record (docs/manifest.md)

namespace {

constexpr uint64_t kManifestMagic = 0x464E414D5753474AULL;  // bytes "JGSWMANF"
// Version 4 adds range tombstones, version 3 flag bit 1 (a pmem table
// image); a record is written in the oldest version that holds it, 2 at
// least.
constexpr uint32_t kManifestVersion = 4;
constexpr uint32_t kManifestVersionWithImages = 3;
constexpr uint32_t kManifestVersionWithoutImages = 2;
constexpr uint64_t kHeaderSize = 64;
constexpr uint64_t kWalEntrySize = 24;
constexpr uint64_t kBlockEntrySize = 32;
constexpr uint64_t kPendingHeaderSize = 16;
constexpr uint64_t kRangeTombstoneHeaderSize = 16;
constexpr uint32_t kFlagSsd = 1;
constexpr uint32_t kFlagTableImage = 2;  // version 3

bool IsTableImage(const ManifestState::BlockEntry& b) {
  return b.residence == Residence::kPmem && b.pmem_layout == PmemLayout::kTableImage;
}

char* EncodeBlockEntry(const ManifestState::BlockEntry& b, char* p) {
  EncodeFixed64(p, b.offset);
  EncodeFixed64(p + 8, b.size);
  EncodeFixed64(p + 16, b.number);
  EncodeFixed32(p + 24, static_cast<uint32_t>(b.level));
  EncodeFixed32(p + 28, b.residence == Residence::kSsd ? kFlagSsd : IsTableImage(b) ? kFlagTableImage : 0);
  return p + kBlockEntrySize;
}

Status DecodeBlockEntry(const char* p, uint32_t version, ManifestState::BlockEntry* b) {
  const uint32_t level = DecodeFixed32(p + 24);
  const uint32_t flags = DecodeFixed32(p + 28);
  if (level >= kNumLevels) return Status::Corruption("manifest", "block level out of range");
  const uint32_t known = version >= 3 ? kFlagSsd | kFlagTableImage : kFlagSsd;
  if ((flags & ~known) != 0) return Status::Corruption("manifest", "unknown block flags");
  if ((flags & kFlagSsd) != 0 && (flags & kFlagTableImage) != 0) {
    return Status::Corruption("manifest", "an SSD table flagged as a pmem table image");
  }
  *b = {DecodeFixed64(p), DecodeFixed64(p + 8), DecodeFixed64(p + 16), static_cast<int>(level),
        (flags & kFlagSsd) != 0 ? Residence::kSsd : Residence::kPmem,
        (flags & kFlagTableImage) != 0 ? PmemLayout::kTableImage : PmemLayout::kKeySetBlock};
  return Status::OK();
}

// The oldest version that can hold `state`.
uint32_t VersionFor(const ManifestState& state) {
  bool images = std::any_of(state.blocks.begin(), state.blocks.end(), IsTableImage);
  for (const auto& p : state.pending) images = images || std::any_of(p.shadows.begin(), p.shadows.end(), IsTableImage);
  if (!state.range_tombstones.empty()) return kManifestVersion;
  return images ? kManifestVersionWithImages : kManifestVersionWithoutImages;
}

uint64_t RangeTombstoneSize(const RangeTombstone& t) {
  return kRangeTombstoneHeaderSize + (t.begin.size() + t.end.size() + 7) / 8 * 8;
}

}  // namespace

uint64_t ManifestSize(const ManifestState& state) {
  uint64_t size = kHeaderSize + kWalEntrySize * state.wal_segments.size() + kBlockEntrySize * state.blocks.size();
  for (const auto& p : state.pending) {
    size += kPendingHeaderSize + 8 * p.outputs.size() + kBlockEntrySize * p.shadows.size();
  }
  for (const RangeTombstone& t : state.range_tombstones) size += RangeTombstoneSize(t);
  return size;
}

void EncodeManifest(const ManifestState& state, char* dest) {
  const uint64_t size = ManifestSize(state);
  std::memset(dest, 0, kHeaderSize);
  EncodeFixed64(dest + 0, kManifestMagic);
  EncodeFixed32(dest + 8, VersionFor(state));
  EncodeFixed64(dest + 16, size);
  EncodeFixed64(dest + 24, state.generation);
  EncodeFixed64(dest + 32, state.last_sequence);
  EncodeFixed64(dest + 40, state.next_number);
  EncodeFixed32(dest + 48, static_cast<uint32_t>(state.wal_segments.size()));
  EncodeFixed32(dest + 52, static_cast<uint32_t>(state.blocks.size()));
  EncodeFixed32(dest + 56, static_cast<uint32_t>(state.pending.size()));
  EncodeFixed32(dest + 60, static_cast<uint32_t>(state.range_tombstones.size()));
  char* p = dest + kHeaderSize;
  for (const WalSegmentMeta& w : state.wal_segments) {
    EncodeFixed64(p, w.offset);
    EncodeFixed64(p + 8, w.capacity);
    EncodeFixed64(p + 16, w.number);
    p += kWalEntrySize;
  }
  for (const ManifestState::BlockEntry& b : state.blocks) p = EncodeBlockEntry(b, p);
  for (const auto& pending : state.pending) {
    EncodeFixed32(p, static_cast<uint32_t>(pending.output_level));
    EncodeFixed32(p + 4, static_cast<uint32_t>(pending.outputs.size()));
    EncodeFixed32(p + 8, static_cast<uint32_t>(pending.shadows.size()));
    EncodeFixed32(p + 12, 0);
    p += kPendingHeaderSize;
    for (uint64_t number : pending.outputs) {
      EncodeFixed64(p, number);
      p += 8;
    }
    for (const ManifestState::BlockEntry& b : pending.shadows) p = EncodeBlockEntry(b, p);
  }
  for (const RangeTombstone& t : state.range_tombstones) {
    const uint64_t bytes = RangeTombstoneSize(t);
    std::memset(p, 0, bytes);
    EncodeFixed64(p, t.sequence);
    EncodeFixed32(p + 8, static_cast<uint32_t>(t.begin.size()));
    EncodeFixed32(p + 12, static_cast<uint32_t>(t.end.size()));
    std::memcpy(p + kRangeTombstoneHeaderSize, t.begin.data(), t.begin.size());
    std::memcpy(p + kRangeTombstoneHeaderSize + t.begin.size(), t.end.data(), t.end.size());
    p += bytes;
  }
  EncodeFixed32(dest + 12, crc32c::Value(dest + 16, size - 16));
}

Status DecodeManifest(const char* data, uint64_t capacity, ManifestState* state) {
  if (capacity < kHeaderSize || DecodeFixed64(data) != kManifestMagic) {
    return Status::Corruption("manifest", "bad magic");
  }
  const uint32_t version = DecodeFixed32(data + 8);
  if (version > kManifestVersion) {
    return Status::NotSupported("manifest version " + std::to_string(version) + " is newer than supported");
  }
  const uint64_t size = DecodeFixed64(data + 16);
  if (size < kHeaderSize || size > capacity) return Status::Corruption("manifest", "bad size");
  if (crc32c::Value(data + 16, size - 16) != DecodeFixed32(data + 12)) {
    return Status::Corruption("manifest", "checksum mismatch");
  }
  const uint32_t wal_count = DecodeFixed32(data + 48);
  const uint32_t block_count = DecodeFixed32(data + 52);
  const uint32_t pending_count = version >= 2 ? DecodeFixed32(data + 56) : 0;
  const uint32_t tombstone_count = version >= 4 ? DecodeFixed32(data + 60) : 0;
  const uint64_t fixed = kHeaderSize + kWalEntrySize * wal_count + kBlockEntrySize * uint64_t{block_count};
  if (fixed > size || (pending_count == 0 && tombstone_count == 0 && fixed != size)) {
    return Status::Corruption("manifest", "counts do not match the size");
  }
  state->generation = DecodeFixed64(data + 24);
  state->last_sequence = DecodeFixed64(data + 32);
  state->next_number = DecodeFixed64(data + 40);
  state->wal_segments.clear();
  state->blocks.clear();
  state->pending.clear();
  state->range_tombstones.clear();
  const char* p = data + kHeaderSize;
  for (uint32_t i = 0; i < wal_count; ++i, p += kWalEntrySize) {
    state->wal_segments.push_back({DecodeFixed64(p), DecodeFixed64(p + 8), DecodeFixed64(p + 16)});
  }
  for (uint32_t i = 0; i < block_count; ++i, p += kBlockEntrySize) {
    ManifestState::BlockEntry b;
    Status s = DecodeBlockEntry(p, version, &b);
    if (!s.ok()) return s;
    state->blocks.push_back(b);
  }
  const char* const end = data + size;
  for (uint32_t i = 0; i < pending_count; ++i) {
    if (static_cast<uint64_t>(end - p) < kPendingHeaderSize) return Status::Corruption("manifest", "pending truncated");
    ManifestState::PendingCompaction pending;
    pending.output_level = static_cast<int>(DecodeFixed32(p));
    const uint32_t outputs = DecodeFixed32(p + 4);
    const uint32_t shadows = DecodeFixed32(p + 8);
    p += kPendingHeaderSize;
    if (pending.output_level < 1 || pending.output_level >= kNumLevels ||
        static_cast<uint64_t>(end - p) < 8 * uint64_t{outputs} + kBlockEntrySize * uint64_t{shadows}) {
      return Status::Corruption("manifest", "pending compaction malformed");
    }
    for (uint32_t j = 0; j < outputs; ++j, p += 8) pending.outputs.push_back(DecodeFixed64(p));
    for (uint32_t j = 0; j < shadows; ++j, p += kBlockEntrySize) {
      ManifestState::BlockEntry b;
      Status s = DecodeBlockEntry(p, version, &b);
      if (!s.ok()) return s;
      pending.shadows.push_back(b);
    }
    state->pending.push_back(std::move(pending));
  }
  for (uint32_t i = 0; i < tombstone_count; ++i) {
    if (static_cast<uint64_t>(end - p) < kRangeTombstoneHeaderSize) {
      return Status::Corruption("manifest", "range tombstone truncated");
    }
    RangeTombstone t;
    t.sequence = DecodeFixed64(p);
    const uint32_t begin_size = DecodeFixed32(p + 8);
    const uint32_t end_size = DecodeFixed32(p + 12);
    const uint64_t bytes = kRangeTombstoneHeaderSize + (uint64_t{begin_size} + end_size + 7) / 8 * 8;
    if (static_cast<uint64_t>(end - p) < bytes || t.sequence == 0 || t.sequence > kMaxSequenceNumber) {
      return Status::Corruption("manifest", "range tombstone malformed");
    }
    t.begin.assign(p + kRangeTombstoneHeaderSize, begin_size);
    t.end.assign(p + kRangeTombstoneHeaderSize + begin_size, end_size);
    p += bytes;
    state->range_tombstones.push_back(std::move(t));
  }
  if (p != end) return Status::Corruption("manifest", "trailing bytes");
  return Status::OK();
}

// ---------------------------------------------------------------------------
// PoolManifestStore

Status PoolManifestStore::Load(ManifestState* state, bool* exists) {
  const uint64_t offset = pool_->manifest_offset();
  *exists = offset != 0;
  if (!*exists) return Status::OK();
  // Decoded from a copy made under a guard (util/guarded_read.h): a media
  // error in the record is a Corruption, not a SIGBUS.
  const char* record = pool_->Direct(offset);
  std::string copy(pool_->ObjectSize(offset), '\0');
  if (!GuardedCopy(copy.data(), record, copy.size())) {
    return Status::Corruption("manifest record at pool offset " + std::to_string(offset),
                              "unreadable pool memory at " + DescribeUnreadable(record, copy.size()));
  }
  Status s = DecodeManifest(copy.data(), copy.size(), state);
  if (!s.ok()) return s;
  offset_ = offset;
  return Status::OK();
}

Status PoolManifestStore::Commit(const ManifestState& state, std::vector<pmem::Reservation*> reservations,
                                 std::vector<uint64_t> frees, bool may_use_standby) {
  const uint64_t size = ManifestSize(state);
  pmem::Reservation manifest;
  Status s = space_->Reserve(pmem::ObjectType::kManifest, size, /*zero=*/false, &manifest, may_use_standby);
  if (!s.ok()) return s;
  EncodeManifest(state, manifest.data);
  if (!JIGSAW_PERSIST_BUG(kManifestAfterCommit)) pool_->region()->Persist(manifest.data, size);
  if (offset_ != 0) frees.push_back(offset_);
  reservations.push_back(&manifest);
  s = pool_->Commit(reservations, manifest.offset, frees);
  if (JIGSAW_PERSIST_BUG(kManifestAfterCommit)) pool_->region()->Persist(manifest.data, size);
  if (!s.ok()) {
    pool_->Cancel(&manifest);
    return s.IsNoSpace() ? space_->FullStatus("no room for the redo log of a commit") : s;
  }
  offset_ = manifest.offset;
  return Status::OK();
}

// ---------------------------------------------------------------------------
// FileManifestStore

namespace {

constexpr uint64_t kManifestFileMagic = 0x4B5349445753474AULL;  // bytes "JGSWDISK"
constexpr uint32_t kManifestFileVersion = 1;
constexpr size_t kManifestFileHeader = 256;

}  // namespace

Status FileManifestStore::Load(ManifestState* state, bool* exists) {
  const std::string path = dir_ + "/MANIFEST";
  if (std::strlen(comparator_->Name()) > kManifestFileHeader - 16) {
    return Status::InvalidArgument("comparator", "name longer than 240 bytes");
  }
  *exists = fs_->FileExists(path);
  if (!*exists) return Status::OK();
  std::unique_ptr<RandomAccessFile> file;
  Status s = fs_->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s;
  std::vector<uint64_t> buffer(file->Size() / 8 + 1);
  Slice contents;
  s = file->Read(0, file->Size(), reinterpret_cast<char*>(buffer.data()), &contents);
  if (!s.ok()) return s;
  if (contents.size() < kManifestFileHeader || DecodeFixed64(contents.data()) != kManifestFileMagic) {
    return Status::Corruption(path, "not a JigsawDB manifest file");
  }
  const uint32_t version = DecodeFixed32(contents.data() + 8);
  if (version > kManifestFileVersion) {
    return Status::NotSupported(path, "manifest file version " + std::to_string(version) + " is newer than " +
                                          std::to_string(kManifestFileVersion));
  }
  const uint32_t name_size = DecodeFixed32(contents.data() + 12);
  if (name_size > kManifestFileHeader - 16) return Status::Corruption(path, "bad comparator name");
  const std::string stored(contents.data() + 16, name_size);
  if (stored != comparator_->Name()) {
    return Status::InvalidArgument("comparator mismatch",
                                   "database uses " + stored + ", options give " + comparator_->Name());
  }
  s = DecodeManifest(contents.data() + kManifestFileHeader, contents.size() - kManifestFileHeader, state);
  if (!s.ok()) return Status::Corruption(path, s.ToString());
  return Status::OK();
}

Status FileManifestStore::Commit(const ManifestState& state, std::vector<pmem::Reservation*> /*reservations*/,
                                 std::vector<uint64_t> /*frees*/, bool /*may_use_standby*/) {
  std::string contents(kManifestFileHeader + ManifestSize(state), '\0');
  EncodeFixed64(contents.data(), kManifestFileMagic);
  EncodeFixed32(contents.data() + 8, kManifestFileVersion);
  const std::string comparator = comparator_->Name();
  EncodeFixed32(contents.data() + 12, static_cast<uint32_t>(comparator.size()));
  std::memcpy(contents.data() + 16, comparator.data(), std::min(comparator.size(), kManifestFileHeader - 16));
  EncodeManifest(state, contents.data() + kManifestFileHeader);
  bool renamed = false;
  Status s = ReplaceFileAtomically(fs_, dir_, "MANIFEST", contents, &renamed);
  sync_stats_->Add(2, contents.size());
  if (!renamed) return s;
  // Renamed: the new manifest is the database now, even if the directory
  // sync failed. Callers must not undo their change (that would delete
  // files it names); later writes get the error instead.
  if (!s.ok() && late_error_.ok()) late_error_ = s;
  return Status::OK();
}

Status FileManifestStore::TakeLateError() {
  Status s = late_error_;
  late_error_ = Status::OK();
  return s;
}

}  // namespace jigsaw
