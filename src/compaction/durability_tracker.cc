#include "compaction/durability_tracker.h"

#include <algorithm>

#include "compaction/merge.h"
#include "compaction/output_sink.h"
#include "table/merging_iterator.h"

namespace jigsaw {

namespace {

ManifestState::PendingCompaction PendingManifestEntry(const PendingCompaction& p) {
  ManifestState::PendingCompaction entry;
  entry.output_level = p.output_level;
  for (const TableRef& t : p.outputs) entry.outputs.push_back(t->number);
  for (size_t i = 0; i < p.shadows.size(); ++i) {
    const TableRef& t = p.shadows[i];
    entry.shadows.push_back({t->offset, t->size, t->number, p.shadow_levels[i], t->residence, t->pmem_layout});
  }
  return entry;
}

}  // namespace

std::vector<ManifestState::PendingCompaction> PendingManifestEntries(const std::deque<PendingCompaction>& pending,
                                                                     size_t skip_oldest,
                                                                     const PendingCompaction* added) {
  std::vector<ManifestState::PendingCompaction> entries;
  for (size_t i = skip_oldest; i < pending.size(); ++i) entries.push_back(PendingManifestEntry(pending[i]));
  if (added != nullptr) entries.push_back(PendingManifestEntry(*added));
  return entries;
}

bool ConflictsWithPending(const Comparator* ucmp, const Compaction& compaction,
                          const std::deque<PendingCompaction>& pending) {
  std::string smallest, largest;
  bool any = false;
  for (const auto& inputs : compaction.inputs) ExtendRange(ucmp, inputs, &smallest, &largest, &any);
  for (const PendingCompaction& p : pending) {
    for (const TableRef& out : p.outputs) {
      for (const auto& inputs : compaction.inputs) {
        if (std::find(inputs.begin(), inputs.end(), out) != inputs.end()) return true;
      }
    }
    if (any && p.output_level == compaction.output_level()) {
      for (const TableRef& shadow : p.shadows) {
        if (ucmp->Compare(shadow->largest, smallest) >= 0 && ucmp->Compare(shadow->smallest, largest) <= 0) {
          return true;
        }
      }
    }
  }
  return false;
}

Status SyncOutputFiles(TableStore* store, const std::vector<std::unique_ptr<WritableFile>>& files) {
  uint64_t bytes = 0;
  for (const auto& f : files) bytes += f->Size();
  Status whole = store->fs()->SyncFileSystem(store->dbname());
  if (!whole.IsNotSupported()) {
    store->sync_stats()->Add(1, bytes);
    return whole;
  }
  for (const auto& f : files) {
    Status s = f->Sync();
    store->sync_stats()->Add(1, f->Size());
    if (!s.ok()) return s;
  }
  store->sync_stats()->Add(1, 0);
  return store->fs()->SyncDir(store->dbname());  // the new files' directory entries
}

namespace {

// A shadow's storage is released after the recovery commit: a stand-in
// table without a reader carries it to the disposer.
TableRef DiscardedShadow(TableStore* store, const ManifestState::BlockEntry& e) {
  auto t = std::make_shared<TableMeta>();
  t->number = e.number;
  t->residence = e.residence;
  t->pmem_layout = e.pmem_layout;
  t->offset = e.offset;
  t->size = e.size;
  t->disposer = store;
  t->obsolete = true;
  return t;
}

// Redoes `p` from its shadows into synced SSD tables: *outputs.
Status RedoFromShadows(TableStore* store, const ManifestState::PendingCompaction& p, std::vector<TableRef>* inputs,
                       std::vector<TableRef>* outputs) {
  std::vector<std::unique_ptr<InternalIterator>> children;
  for (const auto& shadow : p.shadows) {
    TableRef t;
    Status s = shadow.residence == Residence::kPmem
                   ? store->OpenPmem(shadow.number, shadow.pmem_layout, shadow.offset, shadow.size,
                                     /*verify_checksum=*/true, &t)
                   : store->OpenSsd(shadow.number, &t);
    if (!s.ok()) return Status::Corruption("shadow of a pending compaction", s.ToString());
    children.push_back(t->table->NewScanIterator(/*decode=*/nullptr));
    inputs->push_back(std::move(t));
  }
  auto merged = NewMergingIterator(store->comparator(), std::move(children));
  MergeRules rules;
  rules.ucmp = store->comparator();
  rules.smallest_snapshot = 0;  // every version stays
  rules.base = nullptr;         // every tombstone stays
  rules.output_level = p.output_level;
  SsdTableSink sink(store, /*sync_each=*/true, /*phases=*/nullptr);
  Status s = MergeInto(merged.get(), rules, &sink, {}, nullptr);
  for (auto& f : sink.files()) (void)f->Close();  // synced: a close error loses nothing
  if (s.ok()) s = store->fs()->SyncDir(store->dbname());
  store->sync_stats()->Add(1, 0);
  if (!s.ok()) {
    sink.Abandon();
    return s;
  }
  *outputs = std::move(sink.outputs());
  return Status::OK();
}

}  // namespace

Status ResolvePendingCompactions(TableStore* store, const std::vector<ManifestState::PendingCompaction>& pending,
                                 std::map<uint64_t, TableRef>* loaded, Version* version,
                                 std::vector<TableRef>* discarded, uint64_t* redone) {
  for (const auto& p : pending) {
    bool intact = true;
    for (uint64_t number : p.outputs) {
      auto it = loaded->find(number);
      if (it == loaded->end() || !it->second->table->Validate().ok()) intact = false;
    }
    if (intact) {
      // The outputs survived (in the page cache at least): make them durable.
      for (uint64_t number : p.outputs) {
        Status s = store->fs()->SyncFile(store->TablePath(number));
        store->sync_stats()->Add(1, 0);
        if (!s.ok()) return s;
      }
      Status s = store->fs()->SyncDir(store->dbname());
      store->sync_stats()->Add(1, 0);
      if (!s.ok()) return s;
      for (const auto& shadow : p.shadows) discarded->push_back(DiscardedShadow(store, shadow));
      continue;
    }
    std::vector<TableRef> inputs, outputs;
    Status s = RedoFromShadows(store, p, &inputs, &outputs);
    if (!s.ok()) return s;
    auto& level = version->levels[p.output_level];
    for (uint64_t number : p.outputs) {
      auto it = loaded->find(number);
      if (it == loaded->end()) continue;
      level.erase(std::remove(level.begin(), level.end(), it->second), level.end());
      it->second->obsolete = true;
      discarded->push_back(it->second);
      loaded->erase(it);
    }
    level.insert(level.end(), outputs.begin(), outputs.end());
    ++*redone;
    for (TableRef& t : inputs) {
      t->obsolete = true;
      discarded->push_back(std::move(t));
    }
  }
  return Status::OK();
}

}  // namespace jigsaw
