#include "compaction/merge.h"

#include <string>
#include <vector>

#include "table/merging_iterator.h"
#include "version/level_iterator.h"

namespace jigsaw {

Status MergeInto(InternalIterator* input, const MergeRules& rules, OutputSink* sink,
                 const std::function<Status()>& after_output, uint64_t* entries) {
  const Comparator* ucmp = rules.ucmp;
  // Bytewise order: equal keys are equal bytes, so different key hashes
  // carried by KeySet entries prove a new key without comparing. Entries
  // without one (classic blocks) are hashed only by the output builders,
  // inside the encode phase: hashing is their format's work.
  const bool bytewise = ucmp == BytewiseComparator();
  std::string current_key;
  uint32_t current_key_hash = 0;
  bool current_hash_carried = false;
  bool has_current = false;
  SequenceNumber last_sequence_for_key = kMaxSequenceNumber;
  uint64_t read = 0;
  Status s;
  for (input->SeekToFirst(); input->Valid() && s.ok(); input->Next()) {
    ++read;
    const Slice key = input->user_key();
    const SequenceNumber sequence = input->sequence();
    const bool hash_carried = input->carries_key_hash();
    const uint32_t key_hash = hash_carried ? input->key_hash() : 0;
    if (!has_current || (bytewise && hash_carried && current_hash_carried && key_hash != current_key_hash) ||
        ucmp->Compare(key, current_key) != 0) {
      bool closed = false;
      s = sink->CloseIfFull(key.size(), input->value().size(), &closed);
      if (s.ok() && closed && after_output) s = after_output();
      if (!s.ok()) break;
      current_key.assign(key.data(), key.size());
      current_key_hash = key_hash;
      current_hash_carried = hash_carried;
      has_current = true;
      last_sequence_for_key = kMaxSequenceNumber;
    }
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
  }
  if (s.ok()) s = input->status();
  if (s.ok()) s = sink->Finish();
  if (entries != nullptr) *entries += read;
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
