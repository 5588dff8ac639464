// The DRAM memtable's node layout (db/memtable.h): a KeySet entry of the
// layout docs/format.md calls "Version 1", with DRAM meanings -- the index
// field holds a pointer to the value bytes and the links are node pointers.
// It carries the key hash and the value size as fields of their own, which
// the memtable reads on every lookup and a flush copies on.
//
// A node (8-byte aligned):
//   +0  u64 tag        sequence << 8 | type
//   +8  u64 index      pointer to the value bytes
//   +16 u32 key_size
//   +20 u32 value_size
//   +24 u32 height     1..kMaxHeight
//   +28 u32 key_hash   bloom::KeyHash(key)
//   +32 u64 next[height]  the next node of each level, null = end
//   ... key bytes, zero-padded to 8
//
// format/keyset_v1.cc checks that these values are that version's.
#ifndef JIGSAW_FORMAT_KEYSET_NODE_H_
#define JIGSAW_FORMAT_KEYSET_NODE_H_

#include <cstddef>
#include <cstdint>

#include "format/keyset_block.h"

namespace jigsaw::keyset::node {

inline constexpr size_t kTag = 0;
inline constexpr size_t kIndex = 8;
inline constexpr size_t kKeySize = 16;
inline constexpr size_t kValueSize = 20;
inline constexpr size_t kHeight = 24;
inline constexpr size_t kKeyHash = 28;
inline constexpr size_t kNext = 32;

// The fixed fields before the links; the key follows the links at
// kHeaderSize + 8 * height.
inline constexpr size_t kHeaderSize = 32;

// Bytes of a node of `height` with a key of `key_size` bytes.
inline constexpr size_t NodeSize(uint32_t height, size_t key_size) {
  return kHeaderSize + 8 * size_t{height} + ((key_size + 7) & ~size_t{7});
}

// The head node: full height, empty key.
inline constexpr size_t kHeadSize = kHeaderSize + 8 * size_t{kMaxHeight};

}  // namespace jigsaw::keyset::node

#endif  // JIGSAW_FORMAT_KEYSET_NODE_H_
