#include "compaction/merge.h"

#include <algorithm>
#include <string>
#include <vector>

#include "format/keyset_v2.h"
#include "table/merging_iterator.h"
#include "util/key_prefix.h"
#include "version/level_iterator.h"

namespace jigsaw {

namespace {

// Runs shorter than this are added entry by entry: a run costs a peek (and
// a comparison per entry) before it saves anything.
constexpr uint32_t kMinRun = 2;
constexpr uint32_t kMaxRun = 1u << 16;
// Where inputs alternate key by key there are no runs and every peek is
// wasted: after a failed peek the merge skips the next `backoff` new keys
// before peeking again, doubling it (up to kMaxBackoff) while peeks keep
// failing and resetting it when one succeeds.
constexpr uint32_t kMaxBackoff = 64;

}  // namespace

Status MergeInto(InternalIterator* input, const MergeRules& rules, OutputSink* sink,
                 const std::function<Status()>& after_output, uint64_t* entries, uint64_t* spliced) {
  const Comparator* ucmp = rules.ucmp;
  // Bytewise order: equal keys are equal bytes, so different key hashes
  // carried by entries (memtable nodes, version 1 blocks) prove a new key
  // without comparing. Entries without one are hashed only by the output
  // builders, inside the encode phase: hashing is their format's work.
  const bool bytewise = ucmp == BytewiseComparator();
  std::string current_key;
  KeyPrefix current_prefix;  // of current_key, when bytewise
  uint32_t current_key_hash = 0;
  bool current_hash_carried = false;
  bool has_current = false;
  SequenceNumber last_sequence_for_key = kMaxSequenceNumber;
  // While the sink takes runs: the merge decides nothing inside a run (one
  // version per key, no tombstone, nothing of another input in between), so
  // runs go to the sink as bytes and only their boundaries are visited.
  const bool runs = sink->TakesRuns();
  uint32_t backoff = 0;     // new keys to pass before the next peek
  uint32_t next_backoff = 1;
  uint64_t read = 0;
  uint64_t spliced_entries = 0;
  Status s;
  for (input->SeekToFirst(); input->Valid() && s.ok();) {
    const Slice key = input->user_key();
    const SequenceNumber sequence = input->sequence();
    const bool hash_carried = input->carries_key_hash();
    const uint32_t key_hash = hash_carried ? input->key_hash() : 0;
    KeyPrefix prefix;
    if (bytewise) prefix = LoadKeyPrefix(key);
    const bool new_key = !has_current ||
                         (bytewise && hash_carried && current_hash_carried && key_hash != current_key_hash) ||
                         (bytewise ? CompareWithPrefixes(key, prefix, current_key, current_prefix)
                                   : ucmp->Compare(key, current_key)) != 0;
    if (new_key) {
      bool closed = false;
      s = sink->CloseIfFull(key.size(), input->value().size(), &closed);
      if (s.ok() && closed && after_output) s = after_output();
      if (!s.ok()) break;
      EntryRun run;
      bool peek = runs;
      if (peek && backoff > 0) {
        --backoff;
        peek = false;
      }
      if (peek && input->PeekRun(nullptr, 0, kMaxRun, &run) < kMinRun) {
        backoff = next_backoff;
        next_backoff = std::min(2 * next_backoff, kMaxBackoff);
        peek = false;
      }
      if (peek) {
        next_backoff = 1;
        uint32_t taken = 0;
        s = sink->AppendRun(run, &taken);
        if (!s.ok()) break;
        if (taken > 0) {
          // The last entry taken is the current key from now on: a version
          // of it in another input is older and may be dropped.
          Slice last_key;
          uint64_t last_tag = 0;
          keyset::v2::RunEntry(run, taken - 1, &last_key, &last_tag);
          current_key.assign(last_key.data(), last_key.size());
          if (bytewise) current_prefix = LoadKeyPrefix(current_key);
          last_sequence_for_key = TagSequence(last_tag);
          current_hash_carried = false;
          has_current = true;
          read += taken;
          spliced_entries += taken;
          input->SkipRun(taken);
          continue;
        }
        // No room for the run's first entry in the current output: it is
        // added on its own, and CloseIfFull ends the output at the next key.
      }
      current_key.assign(key.data(), key.size());
      current_prefix = prefix;
      current_key_hash = key_hash;
      current_hash_carried = hash_carried;
      has_current = true;
      last_sequence_for_key = kMaxSequenceNumber;
    }
    ++read;
    bool drop = false;
    if (last_sequence_for_key <= rules.smallest_snapshot) {
      drop = true;  // a newer version of this key is visible to every reader
    } else if (rules.base != nullptr && input->type() == ValueType::kDeletion &&
               sequence <= rules.smallest_snapshot &&
               IsBaseLevelForKey(*rules.base, ucmp, rules.output_level, key)) {
      drop = true;  // nothing older below: the tombstone has done its job
    }
    last_sequence_for_key = sequence;
    if (!drop) s = sink->Add(*input);
    if (s.ok()) input->Next();
  }
  if (s.ok()) s = input->status();
  if (s.ok()) s = sink->Finish();
  if (entries != nullptr) *entries += read;
  if (spliced != nullptr) *spliced += spliced_entries;
  return s;
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

}  // namespace jigsaw
