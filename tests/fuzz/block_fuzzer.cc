// libFuzzer target for the block readers: classic, and KeySet of every
// version (the header's version picks the reader; the seeds hold both).
//
// Input: one byte choosing the format (even: KeySet, odd: classic) and
// whether to verify the checksum (bit 1), then the block bytes. The block is
// copied into a heap buffer of exactly its size, so a read past the end is
// caught by AddressSanitizer. Every reader entry point runs, and for KeySet
// input the lookups in pieces (keyset::v2::PieceReader) and a compaction's
// entry cursor (keyset::v2::EntryCursor), whether or not the whole block
// opens: both read without the block's checksum.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "format/block.h"
#include "format/keyset_v2.h"

namespace {

// The block's bytes through the interface PieceReader reads with; every
// read is bounds-checked here and copied out of the exact-size buffer.
class BufferBytes final : public jigsaw::keyset::v2::BlockBytes {
 public:
  BufferBytes(const char* block, size_t size) : block_(block), size_(size) {}
  jigsaw::Status Read(uint64_t offset, uint64_t size, char* dest) const override {
    if (offset > size_ || size > size_ - offset) return jigsaw::Status::Corruption("read past the block");
    if (size > 0) std::memcpy(dest, block_ + offset, size);
    return jigsaw::Status::OK();
  }

 private:
  const char* block_;
  size_t size_;
};

uint64_t LookUpInPieces(const char* block, size_t block_size, const std::vector<std::string>& keys) {
  using namespace jigsaw;
  const BufferBytes bytes(block, block_size);
  std::unique_ptr<keyset::v2::PieceReader> pieces;
  if (!keyset::v2::PieceReader::Open(bytes, block_size, BytewiseComparator(), &pieces).ok()) return 0;
  uint64_t sink = pieces->memory_usage();
  for (const std::string& key : keys) {
    for (SequenceNumber snapshot : {kMaxSequenceNumber, SequenceNumber{1}}) {
      ValueType type;
      [[maybe_unused]] SequenceNumber found_sequence = 0;
      std::string value;
      bool whole_block = false;
      if (pieces->Get(bytes, key, snapshot, &type, &value, &found_sequence, &whole_block).ok()) sink += value.size();
    }
  }
  return sink;
}

// The compaction's pass over the block in place (keyset::v2::EntryCursor),
// touching the first and last byte of every key and value it hands out.
uint64_t WalkWithCursor(const char* block, size_t block_size) {
  using namespace jigsaw;
  keyset::v2::EntryCursor cursor;
  if (!cursor.Reset(Slice(block, block_size), BytewiseComparator()).ok()) return 0;
  uint64_t sink = 0;
  for (size_t steps = 0; cursor.Valid() && steps < 100000; cursor.Next(), ++steps) {
    const keyset::v2::EntryView& e = cursor.entry();
    sink += e.tag + cursor.entry_size() + cursor.value_offset();
    if (!e.key.empty()) sink += static_cast<uint8_t>(e.key[0]) + static_cast<uint8_t>(e.key[e.key.size() - 1]);
    if (!e.value.empty()) sink += static_cast<uint8_t>(e.value[0]) + static_cast<uint8_t>(e.value[e.value.size() - 1]);
  }
  return sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jigsaw;
  if (size < 1) return 0;
  const BlockFormat format = (data[0] & 1) == 0 ? BlockFormat::kKeySet : BlockFormat::kClassic;
  BlockReadOptions options;
  options.verify_checksum = (data[0] & 2) != 0;
  options.hash_index = (data[0] & 4) != 0;
  const size_t block_size = size - 1;
  // operator new[] memory is 16-byte aligned; its exact size lets ASan flag
  // any byte read past the block.
  std::unique_ptr<char[]> storage(new char[block_size == 0 ? 1 : block_size]);
  char* block = storage.get();
  if (block_size > 0) std::memcpy(block, data + 1, block_size);

  std::vector<std::string> keys = {"", "a", "key", "user000000000042", "\xff\xff"};
  // Whether or not the reader opens it: the cursor checks no checksum.
  const uint64_t walked = format == BlockFormat::kKeySet ? WalkWithCursor(block, block_size) : 0;
  if (walked == 0xdeadbeef) return 1;
  std::unique_ptr<BlockReader> reader;
  if (!BlockReader::Open(format, Slice(block, block_size), options, &reader).ok()) {
    if (format == BlockFormat::kKeySet) return LookUpInPieces(block, block_size, keys) == 0xdeadbeef ? 1 : 0;
    return 0;
  }
  (void)reader->Validate();
  uint64_t sink = 0;
  auto it = reader->NewIterator();
  size_t steps = 0;
  for (it->SeekToFirst(); it->Valid() && steps < 100000; it->Next(), ++steps) {
    if (keys.size() < 40) keys.push_back(it->user_key().ToString());
    sink += it->user_key().size() + it->value().size() + it->sequence();
    if (!it->user_key().empty()) sink += static_cast<uint8_t>(it->user_key()[0]);
    if (!it->value().empty()) sink += static_cast<uint8_t>(it->value()[it->value().size() - 1]);
  }
  for (it->SeekToLast(); it->Valid() && steps < 200000; it->Prev(), ++steps) {
    sink += it->user_key().size();
  }
  if (format == BlockFormat::kKeySet) sink += LookUpInPieces(block, block_size, keys);
  for (const char* key : {"", "a", "key", "user000000000042", "\xff\xff"}) {
    it->Seek(key);
    if (it->Valid()) sink += it->value().size();
  }
  // Point lookups of the keys met and of some others, through the hash
  // index when the first byte asks for one.
  for (const std::string& key : keys) {
    for (SequenceNumber snapshot : {kMaxSequenceNumber, SequenceNumber{1}}) {
      BlockLookup lookup;
      if (reader->Get(key, snapshot, &lookup).ok()) sink += lookup.value.size() + lookup.sequence;
    }
  }
  return sink == 0xdeadbeef ? 1 : 0;
}
