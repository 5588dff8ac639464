#include "jigsaw/write_batch.h"

#include "util/coding.h"
#include "jigsaw/db.h"
#include "db/memtable.h"
#include "db/write_batch_internal.h"

namespace jigsaw {

namespace {

constexpr char kRangeDeletionTag = static_cast<char>(WriteBatchInternal::kRangeDeletionType);

void PutLengthPrefixed(std::string* dst, const Slice& s) {
  char buf[5];
  char* end = EncodeVarint32(buf, static_cast<uint32_t>(s.size()));
  dst->append(buf, static_cast<size_t>(end - buf));
  dst->append(s.data(), s.size());
}

bool GetLengthPrefixed(Slice* input, Slice* result) {
  uint32_t length;
  const char* p = DecodeVarint32(input->data(), input->data() + input->size(), &length);
  if (p == nullptr) return false;
  const size_t header = static_cast<size_t>(p - input->data());
  if (input->size() - header < length) return false;
  *result = Slice(p, length);
  input->remove_prefix(header + length);
  return true;
}

}  // namespace

WriteBatch::Handler::~Handler() = default;

Status WriteBatch::Handler::DeleteRange(const Slice&, const Slice&) {
  return Status::NotSupported("this WriteBatch::Handler does not take range deletes");
}

WriteBatch::WriteBatch() { Clear(); }

void WriteBatch::Clear() {
  rep_.clear();
  rep_.resize(WriteBatchInternal::kHeaderSize);
}

uint32_t WriteBatch::Count() const { return WriteBatchInternal::Count(*this); }

void WriteBatch::Put(const Slice& key, const Slice& value) {
  EncodeFixed32(rep_.data() + 8, Count() + 1);
  rep_.push_back(static_cast<char>(ValueType::kValue));
  PutLengthPrefixed(&rep_, key);
  PutLengthPrefixed(&rep_, value);
}

void WriteBatch::Delete(const Slice& key) {
  EncodeFixed32(rep_.data() + 8, Count() + 1);
  rep_.push_back(static_cast<char>(ValueType::kDeletion));
  PutLengthPrefixed(&rep_, key);
}

void WriteBatch::DeleteRange(const Slice& begin_key, const Slice& end_key) {
  EncodeFixed32(rep_.data() + 8, Count() + 1);
  rep_.push_back(kRangeDeletionTag);
  PutLengthPrefixed(&rep_, begin_key);
  PutLengthPrefixed(&rep_, end_key);
}

void WriteBatch::Append(const WriteBatch& source) {
  EncodeFixed32(rep_.data() + 8, Count() + source.Count());
  rep_.append(source.rep_.data() + WriteBatchInternal::kHeaderSize,
              source.rep_.size() - WriteBatchInternal::kHeaderSize);
}

Status WriteBatch::Iterate(Handler* handler) const {
  Slice input(rep_);
  if (input.size() < WriteBatchInternal::kHeaderSize) return Status::Corruption("write batch too small");
  input.remove_prefix(WriteBatchInternal::kHeaderSize);
  uint32_t found = 0;
  while (!input.empty()) {
    const char tag = input[0];
    input.remove_prefix(1);
    Slice key, value;
    if (tag == static_cast<char>(ValueType::kValue)) {
      if (!GetLengthPrefixed(&input, &key) || !GetLengthPrefixed(&input, &value)) {
        return Status::Corruption("bad write batch Put");
      }
      handler->Put(key, value);
    } else if (tag == static_cast<char>(ValueType::kDeletion)) {
      if (!GetLengthPrefixed(&input, &key)) return Status::Corruption("bad write batch Delete");
      handler->Delete(key);
    } else if (tag == kRangeDeletionTag) {
      if (!GetLengthPrefixed(&input, &key) || !GetLengthPrefixed(&input, &value)) {
        return Status::Corruption("bad write batch DeleteRange");
      }
      Status s = handler->DeleteRange(key, value);
      if (!s.ok()) return s;
    } else {
      return Status::Corruption("unknown write batch record type");
    }
    ++found;
  }
  if (found != Count()) return Status::Corruption("write batch has wrong count");
  return Status::OK();
}

SequenceNumber WriteBatchInternal::Sequence(const WriteBatch& batch) { return DecodeFixed64(batch.rep_.data()); }

void WriteBatchInternal::SetSequence(WriteBatch* batch, SequenceNumber sequence) {
  EncodeFixed64(batch->rep_.data(), sequence);
}

uint32_t WriteBatchInternal::Count(const WriteBatch& batch) { return DecodeFixed32(batch.rep_.data() + 8); }

Status WriteBatchInternal::SetContents(WriteBatch* batch, const Slice& contents) {
  if (contents.size() < kHeaderSize) return Status::Corruption("write batch too small");
  batch->rep_.assign(contents.data(), contents.size());
  return Status::OK();
}

namespace {

class LimitChecker : public WriteBatch::Handler {
 public:
  explicit LimitChecker(const Comparator* ucmp) : ucmp_(ucmp) {}
  void Put(const Slice& key, const Slice& value) override {
    has_put = true;
    Check(key);
    if (status.ok() && value.size() > kMaxUserValueSize) {
      status = Status::InvalidArgument("value too large", std::to_string(value.size()) + " bytes, limit " +
                                                              std::to_string(kMaxUserValueSize));
    }
  }
  void Delete(const Slice& key) override { Check(key); }
  Status DeleteRange(const Slice& begin_key, const Slice& end_key) override {
    Check(begin_key);
    Check(end_key);
    if (status.ok() && ucmp_ != nullptr && ucmp_->Compare(begin_key, end_key) > 0) {
      status = Status::InvalidArgument("DeleteRange: the begin key sorts after the end key");
    }
    return Status::OK();
  }
  Status status;
  bool has_put = false;

 private:
  const Comparator* const ucmp_;
  void Check(const Slice& key) {
    if (status.ok() && key.size() > kMaxUserKeySize) {
      status = Status::InvalidArgument("key too large", std::to_string(key.size()) + " bytes, limit " +
                                                            std::to_string(kMaxUserKeySize));
    }
  }
};

class MemTableInserter : public WriteBatch::Handler {
 public:
  MemTableInserter(SequenceNumber sequence, MemTable* memtable, bool concurrently)
      : sequence_(sequence), memtable_(memtable), concurrently_(concurrently) {}
  void Put(const Slice& key, const Slice& value) override { Add(ValueType::kValue, key, value); }
  void Delete(const Slice& key) override { Add(ValueType::kDeletion, key, Slice()); }
  Status DeleteRange(const Slice& begin_key, const Slice& end_key) override {
    const SequenceNumber sequence = sequence_++;
    // An empty range deletes nothing; it still takes its number.
    if (memtable_->comparator()->Compare(begin_key, end_key) < 0) {
      memtable_->AddRangeTombstone(sequence, begin_key, end_key);
    }
    return Status::OK();
  }

 private:
  void Add(ValueType type, const Slice& key, const Slice& value) {
    if (concurrently_) {
      memtable_->AddConcurrently(sequence_++, type, key, value);
    } else {
      memtable_->Add(sequence_++, type, key, value);
    }
  }

  SequenceNumber sequence_;
  MemTable* const memtable_;
  const bool concurrently_;
};

}  // namespace

Status WriteBatchInternal::CheckLimits(const WriteBatch& batch, const Comparator* ucmp, bool* deletes_only) {
  LimitChecker checker(ucmp);
  Status s = batch.Iterate(&checker);
  if (deletes_only != nullptr) *deletes_only = s.ok() && !checker.has_put;
  return s.ok() ? checker.status : s;
}

Status WriteBatchInternal::InsertInto(const WriteBatch& batch, MemTable* memtable, bool concurrently) {
  MemTableInserter inserter(Sequence(batch), memtable, concurrently);
  return batch.Iterate(&inserter);
}

}  // namespace jigsaw
