#include "src/version.h"

#include <cstring>

#include "format/checksum.h"
#include "format/coding.h"

namespace jigsaw {

BlockMeta::~BlockMeta() {
  reader.reset();
  if (obsolete.load(std::memory_order_acquire) && pool != nullptr) pool->Free(offset);
}

Status LoadBlock(pmem::Pool* pool, const Comparator* comparator, uint64_t number, uint64_t offset, uint64_t size,
                 int level, bool verify_checksum, BlockRef* result) {
  const char* data = pool->Direct(offset);
  if (data == nullptr || size > pool->ObjectSize(offset)) {
    return Status::Corruption("block " + std::to_string(number), "size exceeds its pmem object");
  }
  auto block = std::make_shared<BlockMeta>();
  block->number = number;
  block->offset = offset;
  block->size = size;
  block->level = level;
  block->pool = pool;
  BlockReadOptions options;
  options.comparator = comparator;
  options.verify_checksum = verify_checksum;
  Status s = BlockReader::Open(BlockFormat::kKeySet, Slice(data, size), options, &block->reader);
  if (!s.ok()) return Status::Corruption("block " + std::to_string(number), s.ToString());
  block->entries = block->reader->num_entries();
  auto it = block->reader->NewIterator();
  it->SeekToFirst();
  if (it->Valid()) {
    block->smallest = it->user_key().ToString();
    it->SeekToLast();
    if (it->Valid()) block->largest = it->user_key().ToString();
  }
  if (!it->status().ok()) return Status::Corruption("block " + std::to_string(number), it->status().ToString());
  *result = std::move(block);
  return Status::OK();
}

uint64_t Version::LevelBytes(int level) const {
  uint64_t bytes = 0;
  for (const BlockRef& b : levels[level]) bytes += b->size;
  return bytes;
}

std::vector<BlockRef> Version::Overlapping(const Comparator* ucmp, int level, const Slice& smallest,
                                           const Slice& largest) const {
  std::vector<BlockRef> result;
  for (const BlockRef& b : levels[level]) {
    if (ucmp->Compare(b->largest, smallest) >= 0 && ucmp->Compare(b->smallest, largest) <= 0) result.push_back(b);
  }
  return result;
}

// ---------------------------------------------------------------------------
// Manifest record (docs/manifest.md)

namespace {

constexpr uint64_t kManifestMagic = 0x464E414D5753474AULL;  // bytes "JGSWMANF"
constexpr uint32_t kManifestVersion = 1;
constexpr uint64_t kHeaderSize = 64;
constexpr uint64_t kWalEntrySize = 24;
constexpr uint64_t kBlockEntrySize = 32;

}  // namespace

uint64_t ManifestSize(const ManifestState& state) {
  return kHeaderSize + kWalEntrySize * state.wal_segments.size() + kBlockEntrySize * state.blocks.size();
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
  char* p = dest + kHeaderSize;
  for (const WalSegmentMeta& w : state.wal_segments) {
    EncodeFixed64(p, w.offset);
    EncodeFixed64(p + 8, w.capacity);
    EncodeFixed64(p + 16, w.number);
    p += kWalEntrySize;
  }
  for (const ManifestState::BlockEntry& b : state.blocks) {
    EncodeFixed64(p, b.offset);
    EncodeFixed64(p + 8, b.size);
    EncodeFixed64(p + 16, b.number);
    EncodeFixed32(p + 24, static_cast<uint32_t>(b.level));
    EncodeFixed32(p + 28, 0);
    p += kBlockEntrySize;
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
  if (kHeaderSize + kWalEntrySize * wal_count + kBlockEntrySize * uint64_t{block_count} != size) {
    return Status::Corruption("manifest", "counts do not match the size");
  }
  state->generation = DecodeFixed64(data + 24);
  state->last_sequence = DecodeFixed64(data + 32);
  state->next_number = DecodeFixed64(data + 40);
  state->wal_segments.clear();
  state->blocks.clear();
  const char* p = data + kHeaderSize;
  for (uint32_t i = 0; i < wal_count; ++i, p += kWalEntrySize) {
    state->wal_segments.push_back({DecodeFixed64(p), DecodeFixed64(p + 8), DecodeFixed64(p + 16)});
  }
  for (uint32_t i = 0; i < block_count; ++i, p += kBlockEntrySize) {
    const uint32_t level = DecodeFixed32(p + 24);
    if (level >= kNumLevels) return Status::Corruption("manifest", "block level out of range");
    state->blocks.push_back({DecodeFixed64(p), DecodeFixed64(p + 8), DecodeFixed64(p + 16), static_cast<int>(level)});
  }
  return Status::OK();
}

}  // namespace jigsaw
