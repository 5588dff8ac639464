#include "db/version.h"

#include <cstring>

#include "pmem/pmem_table.h"
#include "util/checksum.h"
#include "util/coding.h"

namespace jigsaw {

TableMeta::~TableMeta() {
  table.reset();
  if (obsolete.load(std::memory_order_acquire) && disposer != nullptr) disposer->Dispose(*this);
}

TableRef MakeSsdTable(uint64_t number, uint64_t file_size, int level, std::unique_ptr<Table> table,
                      const std::string& smallest, const std::string& largest, uint64_t entries) {
  auto block = std::make_shared<TableMeta>();
  block->number = number;
  block->residence = Residence::kSsd;
  block->size = file_size;
  block->level = level;
  block->table = std::move(table);
  block->smallest = smallest;
  block->largest = largest;
  block->entries = entries;
  return block;
}

Status OpenPmemTable(pmem::Pool* pool, const Comparator* comparator, uint64_t number, uint64_t offset, uint64_t size,
                 int level, bool verify_checksum, TableRef* result) {
  const char* data = pool->Direct(offset);
  if (data == nullptr || size > pool->ObjectSize(offset)) {
    return Status::Corruption("block " + std::to_string(number), "size exceeds its pmem object");
  }
  auto block = std::make_shared<TableMeta>();
  block->number = number;
  block->offset = offset;
  block->size = size;
  block->level = level;
  BlockReadOptions options;
  options.comparator = comparator;
  options.verify_checksum = verify_checksum;
  std::unique_ptr<BlockReader> reader;
  Status s = BlockReader::Open(BlockFormat::kKeySet, Slice(data, size), options, &reader);
  if (!s.ok()) return Status::Corruption("block " + std::to_string(number), s.ToString());
  block->entries = reader->num_entries();
  block->table = pmem::NewPmemTable(std::move(reader));
  auto it = block->table->NewIterator(ReadOptions());
  it->SeekToFirst();
  if (it->Valid()) {
    block->smallest = it->user_key().ToString();
    it->SeekToLast();
    if (it->Valid()) block->largest = it->user_key().ToString();
  }
  if (!it->status().ok()) return Status::Corruption("block " + std::to_string(number), it->status().ToString());
  if (pool->timing() != nullptr) block->table = pmem::NewNvmTimedTable(std::move(block->table), pool->timing());
  *result = std::move(block);
  return Status::OK();
}

uint64_t Version::LevelBytes(int level) const {
  uint64_t bytes = 0;
  for (const TableRef& b : levels[level]) bytes += b->size;
  return bytes;
}

std::vector<TableRef> Version::Overlapping(const Comparator* ucmp, int level, const Slice& smallest,
                                           const Slice& largest) const {
  std::vector<TableRef> result;
  for (const TableRef& b : levels[level]) {
    if (ucmp->Compare(b->largest, smallest) >= 0 && ucmp->Compare(b->smallest, largest) <= 0) result.push_back(b);
  }
  return result;
}

// ---------------------------------------------------------------------------
// Manifest record (docs/manifest.md)

namespace {

constexpr uint64_t kManifestMagic = 0x464E414D5753474AULL;  // bytes "JGSWMANF"
constexpr uint32_t kManifestVersion = 2;
constexpr uint64_t kHeaderSize = 64;
constexpr uint64_t kWalEntrySize = 24;
constexpr uint64_t kBlockEntrySize = 32;
constexpr uint64_t kPendingHeaderSize = 16;
constexpr uint32_t kFlagSsd = 1;

char* EncodeBlockEntry(const ManifestState::BlockEntry& b, char* p) {
  EncodeFixed64(p, b.offset);
  EncodeFixed64(p + 8, b.size);
  EncodeFixed64(p + 16, b.number);
  EncodeFixed32(p + 24, static_cast<uint32_t>(b.level));
  EncodeFixed32(p + 28, b.residence == Residence::kSsd ? kFlagSsd : 0);
  return p + kBlockEntrySize;
}

Status DecodeBlockEntry(const char* p, ManifestState::BlockEntry* b) {
  const uint32_t level = DecodeFixed32(p + 24);
  const uint32_t flags = DecodeFixed32(p + 28);
  if (level >= kNumLevels) return Status::Corruption("manifest", "block level out of range");
  if ((flags & ~kFlagSsd) != 0) return Status::Corruption("manifest", "unknown block flags");
  *b = {DecodeFixed64(p), DecodeFixed64(p + 8), DecodeFixed64(p + 16), static_cast<int>(level),
        (flags & kFlagSsd) != 0 ? Residence::kSsd : Residence::kPmem};
  return Status::OK();
}

}  // namespace

uint64_t ManifestSize(const ManifestState& state) {
  uint64_t size = kHeaderSize + kWalEntrySize * state.wal_segments.size() + kBlockEntrySize * state.blocks.size();
  for (const auto& p : state.pending) {
    size += kPendingHeaderSize + 8 * p.outputs.size() + kBlockEntrySize * p.shadows.size();
  }
  return size;
}

void EncodeManifest(const ManifestState& state, char* dest) {
  const uint64_t size = ManifestSize(state);
  std::memset(dest, 0, kHeaderSize);
  EncodeFixed64(dest + 0, kManifestMagic);
  EncodeFixed32(dest + 8, kManifestVersion);
  EncodeFixed64(dest + 16, size);
  EncodeFixed64(dest + 24, state.generation);
  EncodeFixed64(dest + 32, state.last_sequence);
  EncodeFixed64(dest + 40, state.next_number);
  EncodeFixed32(dest + 48, static_cast<uint32_t>(state.wal_segments.size()));
  EncodeFixed32(dest + 52, static_cast<uint32_t>(state.blocks.size()));
  EncodeFixed32(dest + 56, static_cast<uint32_t>(state.pending.size()));
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
  const uint64_t fixed = kHeaderSize + kWalEntrySize * wal_count + kBlockEntrySize * uint64_t{block_count};
  if (fixed > size || (pending_count == 0 && fixed != size)) {
    return Status::Corruption("manifest", "counts do not match the size");
  }
  state->generation = DecodeFixed64(data + 24);
  state->last_sequence = DecodeFixed64(data + 32);
  state->next_number = DecodeFixed64(data + 40);
  state->wal_segments.clear();
  state->blocks.clear();
  state->pending.clear();
  const char* p = data + kHeaderSize;
  for (uint32_t i = 0; i < wal_count; ++i, p += kWalEntrySize) {
    state->wal_segments.push_back({DecodeFixed64(p), DecodeFixed64(p + 8), DecodeFixed64(p + 16)});
  }
  for (uint32_t i = 0; i < block_count; ++i, p += kBlockEntrySize) {
    ManifestState::BlockEntry b;
    Status s = DecodeBlockEntry(p, &b);
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
      Status s = DecodeBlockEntry(p, &b);
      if (!s.ok()) return s;
      pending.shadows.push_back(b);
    }
    state->pending.push_back(std::move(pending));
  }
  if (p != end) return Status::Corruption("manifest", "trailing bytes");
  return Status::OK();
}

}  // namespace jigsaw
