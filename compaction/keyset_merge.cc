#include "compaction/keyset_merge.h"

#include <algorithm>
#include <string>
#include <utility>

#include "format/keyset_v2.h"
#include "util/key_prefix.h"

namespace jigsaw {

namespace {

using keyset::v2::EntryCursor;
using keyset::v2::EntryView;

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

// Runs longer than this are split (EntryRun counts in 32 bits; a sink takes
// a prefix anyway).
constexpr uint32_t kMaxRun = 1u << 16;

class KeySetMerge {
 public:
  KeySetMerge(std::vector<std::unique_ptr<BlockScan>> scans, const MergeRules& rules, OutputSink* sink,
              const std::function<Status()>& after_output, SampledPhase* decode)
      : rules_(rules),
        bytewise_(rules.ucmp == BytewiseComparator()),
        sink_(sink),
        after_output_(after_output),
        decode_(decode),
        inputs_(scans.size()) {
    for (size_t i = 0; i < scans.size(); ++i) inputs_[i].scan = std::move(scans[i]);
  }

  Status Run() {
    Status s;
    for (size_t i = 0; i < inputs_.size() && s.ok(); ++i) {
      s = LoadBlock(i);
      if (s.ok() && inputs_[i].cursor.Valid()) order_.push_back(i);
    }
    if (!s.ok()) return s;
    std::sort(order_.begin(), order_.end(), [this](size_t a, size_t b) { return Compare(a, b) < 0; });
    while (!order_.empty()) {
      const size_t i = order_.front();
      s = Step(i);
      if (s.ok()) s = Advance(i);
      if (!s.ok()) return s;
      Resort();
    }
    s = FlushRun();
    return s.ok() ? sink_->Finish() : s;
  }

  uint64_t read() const { return read_; }
  uint64_t spliced() const { return spliced_; }

 private:
  struct Input {
    std::unique_ptr<BlockScan> scan;
    EntryCursor cursor;
    KeyPrefix head;         // of the cursor's key, when bytewise
    uint64_t blocks = 0;    // opened so far: a run never spans two
  };

  // The decision for input i's current entry (the smallest of all).
  Status Step(size_t i) {
    Input& in = inputs_[i];
    const EntryView& e = in.cursor.entry();
    const bool new_key = !has_current_ || (bytewise_ ? CompareWithPrefixes(e.key, in.head, current_key_, current_prefix_)
                                                     : rules_.ucmp->Compare(e.key, current_key_)) != 0;
    if (new_key) {
      // Where it lies: copied only if its block is about to go (Advance).
      current_key_ = e.key;
      current_key_input_ = i;
      current_prefix_ = in.head;
      has_current_ = true;
      last_sequence_for_key_ = kMaxSequenceNumber;
    }
    ++read_;
    const SequenceNumber sequence = TagSequence(e.tag);
    const bool deletion = TagType(e.tag) == ValueType::kDeletion;
    bool drop = false;
    if (last_sequence_for_key_ <= rules_.smallest_snapshot) {
      drop = true;  // a newer version of this key is visible to every reader
    } else if (rules_.base != nullptr && deletion && sequence <= rules_.smallest_snapshot &&
               IsBaseLevelForKey(*rules_.base, rules_.ucmp, rules_.output_level, e.key)) {
      drop = true;  // nothing older below: the tombstone has done its job
    }
    last_sequence_for_key_ = sequence;
    if (drop) return Status::OK();
    if (new_key && !deletion) {
      if (Continues(i, in)) {
        run_.entry_bytes += in.cursor.entry_size();
        run_.value_bytes += e.value.size();
        run_.last = in.cursor.entry_bytes();
        ++run_.count;
        return Status::OK();
      }
      Status s = FlushRun();
      if (s.ok()) StartRun(i, in);
      return s;
    }
    // A tombstone, or an older version kept for a snapshot (which must stay
    // in the output of the version before it: no CloseIfFull).
    Status s = FlushRun();
    if (s.ok() && new_key) s = CloseIfFull(e.key.size(), e.value.size());
    if (!s.ok()) return s;
    one_entry_.Set(e.key, e.tag, e.value, nullptr);
    return sink_->Add(one_entry_);
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
      const uint32_t first_shape = DecodeFixed32(run_.entries + keyset::v2::ent::kShape);
      const uint64_t first_value_size = DecodeFixed64(run_.entries + keyset::v2::ent::kIndex) >> 32;
      Status s = CloseIfFull(keyset::v2::ShapeKeySize(first_shape), first_value_size);
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
        EntryView e;
        uint64_t tag = 0;
        keyset::v2::RunEntry(run_, 0, &e.key, &tag);
        e.tag = tag;
        e.value = Slice(run_.values, first_value_size);
        one_entry_.Set(e.key, e.tag, e.value, nullptr);
        s = sink_->Add(one_entry_);
        if (!s.ok()) return s;
        taken = 1;
      } else {
        spliced_ += taken;
      }
      keyset::v2::DropFront(&run_, taken);
    }
    return Status::OK();
  }
  Status CloseIfFull(size_t key_size, size_t value_size) {
    bool closed = false;
    Status s = sink_->CloseIfFull(key_size, value_size, &closed);
    if (s.ok() && closed && after_output_) s = after_output_();
    return s;
  }

  // Moves input i past its current entry, into its next block when this one
  // ends (handing over first a run that points into it).
  Status Advance(size_t i) {
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
      Status s = decode_ != nullptr ? decode_->RunExact([&] { return in.cursor.Reset(block, rules_.ucmp); })
                                    : in.cursor.Reset(block, rules_.ucmp);
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
    const EntryView& x = inputs_[a].cursor.entry();
    const EntryView& y = inputs_[b].cursor.entry();
    const int r = bytewise_ ? CompareWithPrefixes(x.key, inputs_[a].head, y.key, inputs_[b].head)
                            : rules_.ucmp->Compare(x.key, y.key);
    if (r != 0) return r;
    return x.tag > y.tag ? -1 : x.tag < y.tag ? 1 : 0;  // newer first
  }
  // After the front input moved: it sinks to its place (or leaves).
  void Resort() {
    if (!inputs_[order_.front()].cursor.Valid()) {
      order_.erase(order_.begin());
      return;
    }
    for (size_t k = 0; k + 1 < order_.size() && Compare(order_[k], order_[k + 1]) > 0; ++k) {
      std::swap(order_[k], order_[k + 1]);
    }
  }

  const MergeRules rules_;
  const bool bytewise_;
  OutputSink* const sink_;
  const std::function<Status()>& after_output_;
  SampledPhase* const decode_;
  std::vector<Input> inputs_;
  std::vector<size_t> order_;  // the inputs with entries left, smallest entry first

  // The user key of the last entry met: in its input's block (input
  // current_key_input_), or in current_key_copy_ once that block is left.
  Slice current_key_;
  size_t current_key_input_ = 0;
  std::string current_key_copy_;
  KeyPrefix current_prefix_;
  bool has_current_ = false;
  SequenceNumber last_sequence_for_key_ = kMaxSequenceNumber;

  EntryRun run_;  // pending: survivors not yet handed to the sink (count 0: none)
  size_t run_input_ = 0;
  uint64_t run_block_ = 0;
  SingleEntry one_entry_;

  uint64_t read_ = 0;
  uint64_t spliced_ = 0;
};

}  // namespace

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

Status MergeKeySetBlocks(std::vector<std::unique_ptr<BlockScan>> inputs, const MergeRules& rules, OutputSink* sink,
                         const std::function<Status()>& after_output, SampledPhase* decode, uint64_t* entries,
                         uint64_t* spliced) {
  if (!sink->TakesRuns()) return Status::NotSupported("the output format does not take KeySet runs");
  KeySetMerge merge(std::move(inputs), rules, sink, after_output, decode);
  Status s = merge.Run();
  if (entries != nullptr) *entries += merge.read();
  if (spliced != nullptr) *spliced += merge.spliced();
  return s;
}

}  // namespace jigsaw
