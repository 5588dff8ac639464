// libFuzzer target for the block readers: classic, and KeySet of every
// version (the header's version picks the reader; the seeds hold both).
//
// Input: one byte choosing the format (even: KeySet, odd: classic) and
// whether to verify the checksum (bit 1), then the block bytes. The block is
// copied into a heap buffer of exactly its size, so a read past the end is
// caught by AddressSanitizer. Every reader entry point runs.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "format/block.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jigsaw;
  if (size < 1) return 0;
  const BlockFormat format = (data[0] & 1) == 0 ? BlockFormat::kKeySet : BlockFormat::kClassic;
  BlockReadOptions options;
  options.verify_checksum = (data[0] & 2) != 0;
  const size_t block_size = size - 1;
  // operator new[] memory is 16-byte aligned; its exact size lets ASan flag
  // any byte read past the block.
  std::unique_ptr<char[]> storage(new char[block_size == 0 ? 1 : block_size]);
  char* block = storage.get();
  if (block_size > 0) std::memcpy(block, data + 1, block_size);

  std::unique_ptr<BlockReader> reader;
  if (!BlockReader::Open(format, Slice(block, block_size), options, &reader).ok()) return 0;
  (void)reader->Validate();
  uint64_t sink = 0;
  auto it = reader->NewIterator();
  size_t steps = 0;
  for (it->SeekToFirst(); it->Valid() && steps < 100000; it->Next(), ++steps) {
    sink += it->user_key().size() + it->value().size() + it->sequence();
    if (!it->user_key().empty()) sink += static_cast<uint8_t>(it->user_key()[0]);
    if (!it->value().empty()) sink += static_cast<uint8_t>(it->value()[it->value().size() - 1]);
  }
  for (it->SeekToLast(); it->Valid() && steps < 200000; it->Prev(), ++steps) {
    sink += it->user_key().size();
  }
  for (const char* key : {"", "a", "key", "user000000000042", "\xff\xff"}) {
    it->Seek(key);
    if (it->Valid()) sink += it->value().size();
    BlockLookup lookup;
    if (reader->Get(key, kMaxSequenceNumber, &lookup).ok()) sink += lookup.value.size();
  }
  return sink == 0xdeadbeef ? 1 : 0;
}
