// InternalIterator: the engine's iterator over (user key, sequence, type,
// value) entries, implemented by blocks, memtables, tables and the merging
// and concatenating iterators (table/merging_iterator.h,
// table/concatenating_iterator.h).
#ifndef JIGSAW_FORMAT_INTERNAL_ITERATOR_H_
#define JIGSAW_FORMAT_INTERNAL_ITERATOR_H_

#include <cstdint>

#include "format/bloom.h"
#include "format/dbformat.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw {

// A run of consecutive entries of one KeySet block of the current entry
// layout (format/keyset_entry.h) that a compaction may copy as bytes
// (BlockBuilder::AppendRun): the entries lie back to back, their values
// too and in the same order, no two have one user key and none is a
// deletion -- so the merge has nothing to decide inside it. Points into the block; valid until the iterator moves.
struct EntryRun {
  const char* entries = nullptr;  // the first entry's bytes
  uint64_t entry_bytes = 0;       // of all `count` entries
  const char* values = nullptr;   // the first entry's value
  uint64_t value_bytes = 0;       // of all `count` values
  const char* last = nullptr;     // the last entry's bytes
  uint32_t first_value_offset = 0;  // the first value's offset in its block
  uint32_t count = 0;
};

// The entries of a KeySet block of the current entry layout from an
// iterator's current one on, for a reader that steps through them in place
// (InternalIterator::OpenWindow). The sections are as keyset::Sections
// (format/keyset_entry.h) describes them.
struct BlockWindow {
  const char* values = nullptr;
  uint64_t value_buffer_size = 0;
  const char* keyset = nullptr;
  uint64_t keyset_size = 0;
  uint64_t offset = 0;     // of the current entry in the key set
  uint32_t remaining = 0;  // entries of the block after it
  // Every entry the reader takes must sort before (limit_key, limit_tag):
  // the next entry of the iterator's other sources.
  bool limited = false;
  Slice limit_key;
  uint64_t limit_tag = 0;
};

// An iterator over entries in internal-key order: a block's, a memtable's,
// a table's, a level's or a merge of several. Slices returned by user_key()
// and value() stay valid until the iterator moves or is destroyed (an
// iterator over a KeySet block in memory: until the block bytes are
// released; an SSD table's reading a block through the file's mapping
// copies each entry out, and its Slices last until it moves).
// Thread-safety: one thread at a time per iterator.
class InternalIterator {
 public:
  virtual ~InternalIterator() = default;

  bool Valid() const { return valid_; }
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // Positions at the first entry with (user key, sequence) >= (user_key,
  // sequence) in internal-key order: the newest version of user_key visible
  // at `sequence`, or the next key.
  virtual void Seek(const Slice& user_key, SequenceNumber sequence = kMaxSequenceNumber) = 0;
  virtual void Next() = 0;  // requires Valid()
  virtual void Prev() = 0;  // requires Valid()

  // The current entry; require Valid(). The accessors are not virtual: every
  // move stores the current entry here, so reading it costs no dispatch.
  Slice user_key() const { return user_key_; }
  SequenceNumber sequence() const { return TagSequence(tag_); }
  ValueType type() const { return TagType(tag_); }
  uint64_t tag() const { return tag_; }  // sequence << 8 | type
  Slice value() const { return value_; }
  // bloom::KeyHash(user_key()): read from the entry where the format stores
  // it (KeySet blocks, the memtable), computed otherwise.
  uint32_t key_hash() const { return has_key_hash_ ? key_hash_ : bloom::KeyHash(user_key_); }
  // True if key_hash() is read, not computed (costs nothing).
  bool carries_key_hash() const { return has_key_hash_; }
  // Corruption if a damaged entry was met; the iterator is then !Valid().
  virtual Status status() const = 0;

  // Runs (compactions only; forward iteration). PeekRun describes the run
  // that starts at the current entry, at most `max_entries` long, whose
  // entries all sort before (limit_key, limit_tag) when limit_key is not
  // null, and returns its length: 0 when the iterator cannot hand over
  // bytes (not a KeySet block of the current entry layout, or the current
  // entry cannot start a run).
  // SkipRun(n) moves past the first n (1 <= n <= that length) entries of
  // the run just peeked, as n calls of Next would. Requires Valid().
  virtual uint32_t PeekRun(const Slice* limit_key, uint64_t limit_tag, uint32_t max_entries, EntryRun* run) {
    (void)limit_key, (void)limit_tag, (void)max_entries, (void)run;
    return 0;
  }
  virtual void SkipRun(uint32_t n) {
    for (uint32_t i = 0; i < n && Valid(); ++i) Next();
  }
  // Scans (DBIter; forward iteration): when the current entry lies in a
  // KeySet block of the current entry layout, describes the block from it
  // on, and the limit before which the entries that follow it in the block
  // are this iterator's next ones, and returns true. The reader may then read the
  // entries after the current one from the block itself, as long as each
  // lies right after the one before (its level-0 link is its
  // predecessor's size) and sorts before the limit, and move past the k it
  // took, and the current one, with SkipRun(k + 1) (as k + 1 calls of Next).
  // The block stays valid until this iterator moves. Requires Valid().
  virtual bool OpenWindow(BlockWindow* window) {
    (void)window;
    return false;
  }
  // Scans (DBIter; forward iteration): OpenWindow for each source of a
  // merge. Fills windows[0, n) and returns n (at most `capacity`): window 0
  // opens on the current entry (that of the source it lies in), window k on
  // the current entry of the source with the k-th smallest one, for as long
  // as the sources in that order offer windows; every window is limited by
  // the smallest current entry of a source without one. 0 when the current
  // entry's source offers none. The reader may take entries from the
  // windows in internal-key order, as the merge would return them -- each
  // window's current entry first, then the ones after it, as OpenWindow
  // says -- and then move past everything it took with SkipRuns(taken),
  // taken[k] the entries taken from window k (window 0's current entry
  // counts; as SkipRun(taken[k]) on its source, nothing where taken[k] is
  // 0). The windows stay valid until this iterator moves. Requires Valid().
  // By default the iterator is one source: OpenWindow and SkipRun.
  virtual size_t OpenWindows(BlockWindow* windows, size_t capacity) {
    return capacity > 0 && OpenWindow(windows) ? 1 : 0;
  }
  virtual void SkipRuns(const uint32_t* taken) {
    if (taken[0] > 0) SkipRun(taken[0]);
  }

 protected:
  // Copies the current entry of `source` (which must be Valid()): for
  // iterators that forward another iterator's entries.
  //
  // Word by word: the source has just stored these fields, a word at a time
  // where it built them in registers. A wider load spanning two such stores
  // cannot be forwarded from the store buffer and waits until they reach
  // the cache (~15 cycles), once per layer of iterators on every step; the
  // compiler would copy each Slice as one 16-byte load.
  void SetEntryFrom(const InternalIterator& source) {
    user_key_ = Slice(Word(source.user_key_.data()), Word(source.user_key_.size()));
    value_ = Slice(Word(source.value_.data()), Word(source.value_.size()));
    tag_ = Word(source.tag_);
    key_hash_ = source.key_hash_;
    has_key_hash_ = source.has_key_hash_;
  }

  // `value` through a general register: one scalar load of its own width.
  template <typename T>
  static T Word(T value) {
    asm("" : "+r"(value));
    return value;
  }

  bool valid_ = false;
  bool has_key_hash_ = false;  // key_hash_ holds the current key's hash
  uint32_t key_hash_ = 0;
  Slice user_key_;
  Slice value_;
  uint64_t tag_ = 0;
};

}  // namespace jigsaw

#endif  // JIGSAW_FORMAT_INTERNAL_ITERATOR_H_
