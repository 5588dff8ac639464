// The current KeySet entry layout (docs/format.md, "Key set and entries"):
// the entries that builders write, that EntryRun and BlockWindow
// (format/internal_iterator.h) point at, and that a merge or a scan reads
// in place. Code outside format/ names entries through this header only;
// which format version defines the layout is this header's business.
//
// Every name here is the defining version's own (a using-declaration) or an
// inline function over it, so a caller compiles to exactly the code it
// would with that version's header.
#ifndef JIGSAW_FORMAT_KEYSET_ENTRY_H_
#define JIGSAW_FORMAT_KEYSET_ENTRY_H_

#include <cstddef>
#include <cstdint>

#include "format/internal_iterator.h"
#include "format/keyset_v2.h"
#include "jigsaw/slice.h"
#include "util/coding.h"

namespace jigsaw::keyset {

// Entry field offsets (kTag, kIndex, kShape, kNext), for code that decodes
// an entry's fixed fields by hand.
namespace ent = v2::ent;

using v2::kEntryHeaderSize;  // the fixed fields before the links
using v2::ShapeHeight;       // of an entry's shape word
using v2::ShapeKeySize;

using v2::EntrySize;  // EntrySize(height, key_size): bytes of one entry
using v2::LinkOf;     // LinkOf(entry, level): the level's link of an entry in place

// One entry loaded from a block; the sections a lookup or a scan reads.
using v2::EntryView;
using v2::Sections;
// A forward pass over one block's entries in place.
using v2::EntryCursor;

// Runs (EntryRun): the key and tag of one entry, the front dropped, the
// keys of the first n.
using v2::DropFront;
using v2::ForEachRunKey;
using v2::RunEntry;

// The key size and value size of the entry at `entry`.
inline uint32_t EntryKeySize(const char* entry) { return ShapeKeySize(DecodeFixed32(entry + ent::kShape)); }
inline uint32_t EntryValueSize(const char* entry) {
  return static_cast<uint32_t>(DecodeFixed64(entry + ent::kIndex) >> 32);
}

// The key, tag and value size of a run's first entry (run.count > 0).
inline void RunFront(const EntryRun& run, Slice* key, uint64_t* tag, uint64_t* value_size) {
  const uint32_t shape = DecodeFixed32(run.entries + ent::kShape);
  *key = Slice(run.entries + kEntryHeaderSize + 4 * size_t{ShapeHeight(shape)}, ShapeKeySize(shape));
  *tag = DecodeFixed64(run.entries + ent::kTag);
  *value_size = EntryValueSize(run.entries);
}

// Bytes a key of `key_size` bytes counts toward a block's sizing bytes (the
// argument of BlockSizeBound, format/keyset_block.h): its entry at the
// lowest height.
inline constexpr uint64_t SizingEntryBytes(size_t key_size) { return EntrySize(1, key_size); }

// Whether the entry after `e` in its block lies right after it (the
// condition under which a scan window takes it; InternalIterator::OpenWindow).
inline bool NextIsAdjacent(const EntryView& e) { return e.next == EntrySize(e.height, e.key.size()); }

// Sets the sections a scan window gives of its block -- the value buffer
// and the key set, what LoadAt and LoadNext read -- in *s; leaves its
// samples and count alone.
inline void SetSections(const BlockWindow& w, Sections* s) {
  s->values = w.values;
  s->value_buffer_size = w.value_buffer_size;
  s->keyset = w.keyset;
  s->keyset_size = w.keyset_size;
}

}  // namespace jigsaw::keyset

#endif  // JIGSAW_FORMAT_KEYSET_ENTRY_H_
