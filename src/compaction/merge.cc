#include "compaction/merge.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "format/keyset_entry.h"
#include "table/iterator_wrappers.h"
#include "table/merging_iterator.h"
#include "util/key_prefix.h"
#include "version/level_iterator.h"

namespace jigsaw {

namespace {

// Runs longer than this are split (EntryRun counts in 32 bits; a sink takes
// a prefix anyway).
constexpr uint32_t kMaxRun = 1u << 16;

// The merge loop, written once. `Source` is an input strategy: it walks the
// merged inputs' entries in internal-key order and knows the current user
// key. Per entry the loop asks whether it begins a new user key; at a new
// key the source may pass a run of entries on as bytes (each the only
// version of its key, none a tombstone: the rule has nothing to decide in
// it) and report its last entry's sequence. Every other entry is decided
// by the drop rule, and the source keeps it (adds it to the sink, or to a
// run it is gathering) or not, then moves past it. *read counts every
// entry, run or not.
//
// The Source's calls (all non-virtual, inlined here):
//   bool Valid() const;                  an entry is current
//   bool IsNewKey();                     it begins a user key (vs the last)
//   Status StartKey(uint32_t* spliced, SequenceNumber* last);
//                                        it is now the current key; or it
//                                        and *spliced - 1 entries after it
//                                        went on as bytes, the last of
//                                        sequence *last, and the source is
//                                        past them (on error: *spliced
//                                        entries were read)
//   Slice user_key(); SequenceNumber sequence(); ValueType type();
//   Status Keep(bool new_key);           keeps the entry
//   Status Next();                       moves past it
//   Status Finish();                     after the last entry
template <class Source>
Status MergeLoop(Source& source, const MergeRules& rules, OutputSink* sink, uint64_t* read) {
  DropRule drop(rules);
  uint64_t entries = 0;
  Status s;
  while (s.ok() && source.Valid()) {
    const bool new_key = source.IsNewKey();
    if (new_key) {
      drop.NewKey();
      uint32_t spliced = 0;
      SequenceNumber last = 0;
      s = source.StartKey(&spliced, &last);
      entries += spliced;
      if (!s.ok()) break;
      if (spliced > 0) {
        drop.Passed(last);
        continue;
      }
    }
    ++entries;
    if (!drop.Drops(source.user_key(), source.sequence(), source.type())) s = source.Keep(new_key);
    if (s.ok()) s = source.Next();
  }
  *read += entries;
  if (s.ok()) s = source.Finish();
  if (s.ok()) s = sink->Finish();
  return s;
}

// Ends the sink's current output if full, before an entry of key_size +
// value_size bytes that begins a user key; runs `after_output` if one
// ended.
Status CloseIfFull(OutputSink* sink, const std::function<Status()>& after_output, size_t key_size,
                   size_t value_size) {
  bool closed = false;
  Status s = sink->CloseIfFull(key_size, value_size, &closed);
  if (s.ok() && closed && after_output) s = after_output();
  return s;
}

// ---------------------------------------------------------------------------
// MergeInto's strategy: one InternalIterator; survivors added one by one,
// runs peeked from the iterator (InternalIterator::PeekRun) at new keys.

// Runs shorter than this are added entry by entry: a run costs a peek (and
// a comparison per entry) before it saves anything.
constexpr uint32_t kMinRun = 2;
// Where inputs alternate key by key there are no runs and every peek is
// wasted: after a failed peek the merge skips the next `backoff` new keys
// before peeking again, doubling it (up to kMaxBackoff) while peeks keep
// failing and resetting it when one succeeds.
constexpr uint32_t kMaxBackoff = 64;

class IteratorSource {
 public:
  IteratorSource(InternalIterator* input, const MergeRules& rules, OutputSink* sink,
                 const std::function<Status()>& after_output)
      : input_(input),
        ucmp_(rules.ucmp),
        bytewise_(rules.ucmp == BytewiseComparator()),
        sink_(sink),
        after_output_(after_output),
        runs_(sink->TakesRuns()) {
    input_->SeekToFirst();
  }

  bool Valid() const { return input_->Valid(); }
  // Bytewise order: equal keys are equal bytes, so different key hashes
  // carried by entries (memtable nodes, blocks whose entries store it) prove a new key
  // without comparing. Entries without one are hashed only by the output
  // builders, inside the encode phase: hashing is their format's work.
  bool IsNewKey() {
    const Slice key = input_->user_key();
    hash_carried_ = input_->carries_key_hash();
    key_hash_ = hash_carried_ ? input_->key_hash() : 0;
    if (bytewise_) prefix_ = LoadKeyPrefix(key);
    return !has_current_ ||
           (bytewise_ && hash_carried_ && current_hash_carried_ && key_hash_ != current_key_hash_) ||
           (bytewise_ ? CompareWithPrefixes(key, prefix_, current_key_, current_prefix_)
                      : ucmp_->Compare(key, current_key_)) != 0;
  }
  // Outputs may end here (the sink decides); then a run is peeked, unless
  // backing off.
  Status StartKey(uint32_t* spliced, SequenceNumber* last) {
    const Slice key = input_->user_key();
    Status s = CloseIfFull(sink_, after_output_, key.size(), input_->value().size());
    if (!s.ok()) return s;
    EntryRun run;
    bool peek = runs_;
    if (peek && backoff_ > 0) {
      --backoff_;
      peek = false;
    }
    if (peek && input_->PeekRun(nullptr, 0, kMaxRun, &run) < kMinRun) {
      backoff_ = next_backoff_;
      next_backoff_ = std::min(2 * next_backoff_, kMaxBackoff);
      peek = false;
    }
    if (peek) {
      next_backoff_ = 1;
      uint32_t taken = 0;
      s = sink_->AppendRun(run, &taken);
      if (!s.ok()) return s;
      if (taken > 0) {
        // The last entry taken is the current key from now on: a version
        // of it in another input is older and may be dropped.
        Slice last_key;
        uint64_t last_tag = 0;
        keyset::RunEntry(run, taken - 1, &last_key, &last_tag);
        current_key_.assign(last_key.data(), last_key.size());
        if (bytewise_) current_prefix_ = LoadKeyPrefix(current_key_);
        current_hash_carried_ = false;
        has_current_ = true;
        spliced_ += taken;
        *spliced = taken;
        *last = TagSequence(last_tag);
        input_->SkipRun(taken);
        return Status::OK();
      }
      // No room for the run's first entry in the current output: it is
      // added on its own, and CloseIfFull ends the output at the next key.
    }
    current_key_.assign(key.data(), key.size());
    current_prefix_ = prefix_;
    current_key_hash_ = key_hash_;
    current_hash_carried_ = hash_carried_;
    has_current_ = true;
    return Status::OK();
  }
  Slice user_key() const { return input_->user_key(); }
  SequenceNumber sequence() const { return input_->sequence(); }
  ValueType type() const { return input_->type(); }
  Status Keep(bool /*new_key*/) { return sink_->Add(*input_); }
  Status Next() {
    input_->Next();
    return Status::OK();
  }
  Status Finish() { return input_->status(); }

  uint64_t spliced() const { return spliced_; }

 private:
  InternalIterator* const input_;
  const Comparator* const ucmp_;
  const bool bytewise_;
  OutputSink* const sink_;
  const std::function<Status()>& after_output_;
  // While the sink takes runs: the merge decides nothing inside a run, so
  // runs go to the sink as bytes and only their boundaries are visited.
  const bool runs_;
  uint32_t backoff_ = 0;  // new keys to pass before the next peek
  uint32_t next_backoff_ = 1;
  uint64_t spliced_ = 0;

  // The current entry's key facts (IsNewKey), for StartKey.
  KeyPrefix prefix_;
  uint32_t key_hash_ = 0;
  bool hash_carried_ = false;
  // The current user key.
  std::string current_key_;
  KeyPrefix current_prefix_;  // of current_key_, when bytewise
  uint32_t current_key_hash_ = 0;
  bool current_hash_carried_ = false;
  bool has_current_ = false;
};

// ---------------------------------------------------------------------------
// MergeBlockScans' strategy: KeySet blocks walked in place by entry cursors,
// survivors gathered into runs of bytes.

// A level's tables one after another (sorted and disjoint), each scan
// dropped once read.
class LevelBlockScan final : public BlockScan {
 public:
  LevelBlockScan(std::vector<TableRef> tables, std::vector<std::unique_ptr<BlockScan>> scans)
      : tables_(std::move(tables)), scans_(std::move(scans)) {}
  bool NextBlock(Slice* block) override {
    while (current_ < scans_.size()) {
      if (scans_[current_]->NextBlock(block)) return true;
      status_ = scans_[current_]->status();
      if (!status_.ok()) return false;
      scans_[current_++].reset();
    }
    return false;
  }
  Status status() const override { return status_; }

 private:
  const std::vector<TableRef> tables_;  // kept alive while their blocks are read
  std::vector<std::unique_ptr<BlockScan>> scans_;
  size_t current_ = 0;
  Status status_;
};

class BlockCursorSource {
 public:
  BlockCursorSource(std::vector<std::unique_ptr<BlockScan>> scans, const MergeRules& rules, OutputSink* sink,
                    const std::function<Status()>& after_output, SampledPhase* decode)
      : ucmp_(rules.ucmp),
        bytewise_(rules.ucmp == BytewiseComparator()),
        gallop_(DropRule::KeepsNewestVersions(rules)),
        sink_(sink),
        after_output_(after_output),
        decode_(decode),
        inputs_(scans.size()) {
    for (size_t i = 0; i < scans.size(); ++i) inputs_[i].scan = std::move(scans[i]);
  }

  // Opens every input's first block; the merge starts if this succeeds.
  Status Start() {
    Status s;
    for (size_t i = 0; i < inputs_.size() && s.ok(); ++i) {
      s = LoadBlock(i);
      if (s.ok() && inputs_[i].cursor.Valid()) order_.push_back(i);
    }
    std::sort(order_.begin(), order_.end(), [this](size_t a, size_t b) { return Compare(a, b) < 0; });
    front_ = order_.empty() ? nullptr : &inputs_[order_.front()];
    return s;
  }

  bool Valid() const { return front_ != nullptr; }
  bool IsNewKey() const {
    const Input& in = *front_;
    const keyset::EntryView& e = in.cursor.entry();
    return !has_current_ || CompareKeys(e.key, in.head, current_key_, current_prefix_) != 0;
  }
  // The key stays where it lies: copied only if its block is about to go
  // (Next). A newest version that is not a tombstone starts a gallop.
  Status StartKey(uint32_t* spliced, SequenceNumber* last) {
    *spliced = 0;
    if (gallop_ && TagType(Entry().tag) != ValueType::kDeletion) return Gallop(spliced, last);
    SetCurrentKey(order_.front(), *front_);
    return Status::OK();
  }
  Slice user_key() const { return Entry().key; }
  SequenceNumber sequence() const { return TagSequence(Entry().tag); }
  ValueType type() const { return TagType(Entry().tag); }
  // A surviving newest version that is not a tombstone joins the pending
  // run, or starts the next. A tombstone, or an older version kept for a
  // snapshot (which must stay in the output of the version before it: no
  // CloseIfFull), is added alone.
  Status Keep(bool new_key) {
    const size_t i = order_.front();
    const Input& in = *front_;
    const keyset::EntryView& e = in.cursor.entry();
    Status s;
    if (new_key && TagType(e.tag) != ValueType::kDeletion) {
      s = KeepInRun(i, in);
    } else {
      s = FlushRun();
      if (s.ok() && new_key) s = CloseIfFull(sink_, after_output_, e.key.size(), e.value.size());
      if (s.ok()) {
        one_entry_.Set(e.key, e.tag, e.value, nullptr);
        s = sink_->Add(one_entry_);
      }
    }
    return s;
  }
  // Moves the front input past its current entry, into its next block when
  // this one ends (handing over first a run that points into it), and
  // sinks it to its place in the order.
  Status Next() {
    const size_t i = order_.front();
    Status s = AdvanceInput(i);
    if (s.ok()) Reorder();
    return s;
  }
  Status Finish() { return FlushRun(); }

  uint64_t spliced() const { return spliced_; }

 private:
  struct Input {
    std::unique_ptr<BlockScan> scan;
    keyset::EntryCursor cursor;
    KeyPrefix head;       // of the cursor's key, when bytewise
    uint64_t blocks = 0;  // opened so far: a run never spans two
  };

  const keyset::EntryView& Entry() const { return front_->cursor.entry(); }

  void SetCurrentKey(size_t i, const Input& in) {
    current_key_ = in.cursor.entry().key;
    current_key_input_ = i;
    current_prefix_ = in.head;
    has_current_ = true;
  }
  // <0, 0, >0 as user key a (of prefix pa) sorts before, with, after b.
  int CompareKeys(const Slice& a, const KeyPrefix& pa, const Slice& b, const KeyPrefix& pb) const {
    return bytewise_ ? CompareWithPrefixes(a, pa, b, pb) : ucmp_->Compare(a, b);
  }

  // The front entry -- the newest version of a new key and no tombstone, so
  // kept (DropRule::KeepsNewestVersions) -- joins the pending run, and so do
  // the entries after it in its input for which the rule has nothing to
  // decide either: each a new user key, none a tombstone, every one below
  // the next input's entry (so no other input holds a version of it). They
  // are passed here, one comparison with the next input and one with the
  // key before per entry, without a trip through the loop and the order
  // update each; the last one's key is current after. *spliced counts them.
  Status Gallop(uint32_t* spliced, SequenceNumber* last) {
    const size_t i = order_.front();
    Input& in = inputs_[i];
    const Input* next = order_.size() > 1 ? &inputs_[order_[1]] : nullptr;
    uint32_t n = 0;
    bool after_next = false;  // the front entry is known to sort after the next input's
    Status s;
    for (;;) {
      ++n;
      s = KeepInRun(i, in);
      if (!s.ok()) break;
      *last = TagSequence(in.cursor.entry().tag);
      SetCurrentKey(i, in);
      s = AdvanceInput(i);
      if (!s.ok() || !in.cursor.Valid() || n == kMaxRun) break;
      const keyset::EntryView& e = in.cursor.entry();
      const int vs_next = next != nullptr ? CompareKeys(e.key, in.head, next->cursor.entry().key, next->head) : -1;
      after_next = vs_next > 0;
      if (vs_next >= 0 || TagType(e.tag) == ValueType::kDeletion ||
          CompareKeys(e.key, in.head, current_key_, current_prefix_) == 0) {  // an older version
        break;
      }
    }
    if (s.ok()) Reorder(after_next);
    *spliced = n;
    return s;
  }
  // A kept newest version that is no tombstone (input i's current entry)
  // extends the pending run, or ends it and starts the next.
  Status KeepInRun(size_t i, const Input& in) {
    if (Continues(i, in)) {
      run_.entry_bytes += in.cursor.entry_size();
      run_.value_bytes += in.cursor.entry().value.size();
      run_.last = in.cursor.entry_bytes();
      ++run_.count;
      return Status::OK();
    }
    Status s = FlushRun();
    if (s.ok()) StartRun(i, in);
    return s;
  }
  // After the front input moved on: it leaves the order if it ended, else
  // sinks to its place (past the second without comparing when
  // `after_second`: the caller found it sorts after it).
  void Reorder(bool after_second = false) {
    const size_t i = order_.front();
    if (!inputs_[i].cursor.Valid()) {
      order_.erase(order_.begin());
    } else {
      size_t k = 0;
      if (after_second) std::swap(order_[0], order_[1]), k = 1;
      for (; k + 1 < order_.size() && Compare(order_[k], order_[k + 1]) > 0; ++k) {
        std::swap(order_[k], order_[k + 1]);
      }
    }
    front_ = order_.empty() ? nullptr : &inputs_[order_.front()];
  }

  // Whether input i's current entry extends the pending run: same block,
  // right after its last entry, its value right after the last value.
  bool Continues(size_t i, const Input& in) const {
    return run_.count > 0 && run_input_ == i && run_block_ == in.blocks && run_.count < kMaxRun &&
           in.cursor.entry_bytes() == run_.entries + run_.entry_bytes &&
           in.cursor.entry().value.data() == run_.values + run_.value_bytes;
  }
  void StartRun(size_t i, const Input& in) {
    run_.entries = in.cursor.entry_bytes();
    run_.entry_bytes = in.cursor.entry_size();
    run_.values = in.cursor.entry().value.data();
    run_.value_bytes = in.cursor.entry().value.size();
    run_.last = run_.entries;
    run_.first_value_offset = in.cursor.value_offset();
    run_.count = 1;
    run_input_ = i;
    run_block_ = in.blocks;
  }
  // Hands the pending run to the sink: as much as the current output takes,
  // then (after CloseIfFull ended it) the rest. An entry no output takes as
  // bytes (one too big for what is left) is added alone, as MergeInto does.
  Status FlushRun() {
    while (run_.count > 0) {
      Slice first_key;
      uint64_t first_tag = 0, first_value_size = 0;
      keyset::RunFront(run_, &first_key, &first_tag, &first_value_size);
      Status s = CloseIfFull(sink_, after_output_, first_key.size(), first_value_size);
      if (!s.ok()) return s;
      uint32_t taken = 0;
      s = sink_->AppendRun(run_, &taken);
      if (!s.ok()) return s;
      if (taken == run_.count) {
        spliced_ += taken;
        run_.count = 0;
        return Status::OK();
      }
      if (taken == 0) {
        one_entry_.Set(first_key, first_tag, Slice(run_.values, first_value_size), nullptr);
        s = sink_->Add(one_entry_);
        if (!s.ok()) return s;
        taken = 1;
      } else {
        spliced_ += taken;
      }
      keyset::DropFront(&run_, taken);
    }
    return Status::OK();
  }

  Status AdvanceInput(size_t i) {
    Input& in = inputs_[i];
    if (decode_ != nullptr) {
      decode_->Run([&] { in.cursor.Next(); });
    } else {
      in.cursor.Next();
    }
    if (in.cursor.Valid()) {
      if (bytewise_) in.head = LoadKeyPrefix(in.cursor.entry().key);
      return Status::OK();
    }
    if (!in.cursor.status().ok()) return in.cursor.status();
    if (run_.count > 0 && run_input_ == i) {
      Status s = FlushRun();
      if (!s.ok()) return s;
    }
    if (has_current_ && current_key_input_ == i && current_key_.data() != current_key_copy_.data()) {
      current_key_copy_.assign(current_key_.data(), current_key_.size());
      current_key_ = current_key_copy_;
    }
    return LoadBlock(i);
  }
  // Positions input i at the first entry of its next non-empty block (or
  // leaves its cursor invalid at the end).
  Status LoadBlock(size_t i) {
    Input& in = inputs_[i];
    Slice block;
    while (in.scan->NextBlock(&block)) {
      ++in.blocks;
      Status s = decode_ != nullptr ? decode_->RunExact([&] { return in.cursor.Reset(block, ucmp_); })
                                    : in.cursor.Reset(block, ucmp_);
      if (!s.ok()) return s;
      if (in.cursor.Valid()) {
        if (bytewise_) in.head = LoadKeyPrefix(in.cursor.entry().key);
        return Status::OK();
      }
    }
    return in.scan->status();
  }

  // <0, 0, >0 as input a's entry sorts before, with, after input b's.
  int Compare(size_t a, size_t b) const {
    const keyset::EntryView& x = inputs_[a].cursor.entry();
    const keyset::EntryView& y = inputs_[b].cursor.entry();
    const int r = CompareKeys(x.key, inputs_[a].head, y.key, inputs_[b].head);
    if (r != 0) return r;
    return x.tag > y.tag ? -1 : x.tag < y.tag ? 1 : 0;  // newer first
  }

  const Comparator* const ucmp_;
  const bool bytewise_;
  const bool gallop_;  // newest versions that are no tombstones are kept
  OutputSink* const sink_;
  const std::function<Status()>& after_output_;
  SampledPhase* const decode_;
  std::vector<Input> inputs_;
  std::vector<size_t> order_;  // the inputs with entries left, smallest entry first
  Input* front_ = nullptr;     // inputs_[order_.front()]: the current entry's; null at the end

  // The user key of the last new key met: in its input's block (input
  // current_key_input_), or in current_key_copy_ once that block is left.
  Slice current_key_;
  size_t current_key_input_ = 0;
  std::string current_key_copy_;
  KeyPrefix current_prefix_;
  bool has_current_ = false;

  EntryRun run_;  // pending: survivors not yet handed to the sink (count 0: none)
  size_t run_input_ = 0;
  uint64_t run_block_ = 0;
  SingleEntry one_entry_;
  uint64_t spliced_ = 0;
};

}  // namespace

Status MergeInto(InternalIterator* input, const MergeRules& rules, OutputSink* sink,
                 const std::function<Status()>& after_output, uint64_t* entries, uint64_t* spliced) {
  IteratorSource source(input, rules, sink, after_output);
  uint64_t read = 0;
  Status s = MergeLoop(source, rules, sink, &read);
  if (entries != nullptr) *entries += read;
  if (spliced != nullptr) *spliced += source.spliced();
  return s;
}

Status MergeBlockScans(std::vector<std::unique_ptr<BlockScan>> inputs, const MergeRules& rules, OutputSink* sink,
                       const std::function<Status()>& after_output, SampledPhase* decode, uint64_t* entries,
                       uint64_t* spliced) {
  if (!sink->TakesRuns()) return Status::NotSupported("the output format does not take KeySet runs");
  BlockCursorSource source(std::move(inputs), rules, sink, after_output, decode);
  uint64_t read = 0;
  Status s = source.Start();
  if (s.ok()) s = MergeLoop(source, rules, sink, &read);
  if (entries != nullptr) *entries += read;
  if (spliced != nullptr) *spliced += source.spliced();
  return s;
}

Status MergeCompaction(const Compaction& compaction, int input_sets, const std::string* after,
                       const std::string* upto, const MergeRules& rules, OutputSink* sink,
                       const std::function<Status()>& after_output, SampledPhase* decode, uint64_t* entries,
                       uint64_t* spliced) {
  bool deletes_ranges = false;
  if (rules.range_tombstones != nullptr) {
    for (int which = 0; which < input_sets && !deletes_ranges; ++which) {
      for (const TableRef& t : compaction.inputs[which]) {
        deletes_ranges = deletes_ranges || rules.range_tombstones->Overlaps(t->smallest, t->largest, rules.smallest_snapshot);
      }
    }
  }
  std::vector<std::unique_ptr<BlockScan>> scans;
  if (!deletes_ranges && after == nullptr && upto == nullptr && sink->TakesRuns() &&
      NewCompactionBlockScans(compaction, input_sets, decode, &scans)) {
    uint64_t read = 0, copied = 0;
    Status s = MergeBlockScans(std::move(scans), rules, sink, after_output, decode, &read, &copied);
    if (!s.IsNotSupported()) {
      if (entries != nullptr) *entries += read;
      if (spliced != nullptr) *spliced += copied;
      return s;
    }
    sink->Abandon();
  }
  std::unique_ptr<InternalIterator> input = NewCompactionInput(rules.ucmp, compaction, input_sets, decode);
  if (after != nullptr || upto != nullptr) input = NewKeyRangeIterator(rules.ucmp, std::move(input), after, upto);
  if (deletes_ranges) {
    input = NewRangeDeletionFilter(std::move(input), rules.range_tombstones, rules.smallest_snapshot);
  }
  return MergeInto(input.get(), rules, sink, after_output, entries, spliced);
}

std::unique_ptr<InternalIterator> NewCompactionInput(const Comparator* ucmp, const Compaction& compaction,
                                                     int input_sets, SampledPhase* decode) {
  // With a child per table, every merge step would compare every input
  // table and keep a read window of each in flight.
  std::vector<std::unique_ptr<InternalIterator>> children;
  for (int which = 0; which < input_sets; ++which) {
    const std::vector<TableRef>& inputs = compaction.inputs[which];
    if (compaction.level + which == 0) {
      for (const TableRef& t : inputs) children.push_back(t->table->NewScanIterator(decode));
    } else if (!inputs.empty()) {
      children.push_back(NewLevelScanIterator(ucmp, inputs, decode));
    }
  }
  return NewMergingIterator(ucmp, std::move(children));
}

bool NewCompactionBlockScans(const Compaction& compaction, int input_sets, SampledPhase* decode,
                             std::vector<std::unique_ptr<BlockScan>>* scans) {
  std::vector<std::unique_ptr<BlockScan>> made;
  for (int which = 0; which < input_sets; ++which) {
    const std::vector<TableRef>& inputs = compaction.inputs[which];
    if (inputs.empty()) continue;
    std::vector<std::unique_ptr<BlockScan>> tables;
    for (const TableRef& t : inputs) {
      auto scan = t->table->NewBlockScan(decode);
      if (scan == nullptr) return false;
      tables.push_back(std::move(scan));
    }
    if (compaction.level + which == 0) {
      for (auto& scan : tables) made.push_back(std::move(scan));
    } else {
      made.push_back(std::make_unique<LevelBlockScan>(inputs, std::move(tables)));
    }
  }
  *scans = std::move(made);
  return true;
}

}  // namespace jigsaw
