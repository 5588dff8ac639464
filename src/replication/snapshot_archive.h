// The snapshot archive: a checkpoint directory's files in one buffer, the
// form in which a raft snapshot carries a replica's database between nodes
// (docs/replication.md, "Snapshot archive, version 1").
#ifndef JIGSAW_REPLICATION_SNAPSHOT_ARCHIVE_H_
#define JIGSAW_REPLICATION_SNAPSHOT_ARCHIVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "jigsaw/file_system.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw::replication {

// What an archive says of the database it carries.
struct SnapshotHeader {
  uint64_t applied_index = 0;  // raft index of the last entry applied to it
  uint64_t sequence = 0;       // its newest sequence number
};

// Removes `path` and everything under it, if it exists; errors ignored
// (what the replica's directory holds besides its databases: archives
// being built or unpacked, leftovers of a crash).
void RemoveTree(const std::string& path);

// The plan of an archive of a directory's regular files: their names and
// sizes, and the archive's size in bytes.
struct ArchivePlan {
  std::vector<std::pair<std::string, uint64_t>> files;
  uint64_t size = 0;
};

// Lists `dir` (which must hold only regular files: a subdirectory is
// NotSupported) into *plan.
Status PlanArchive(FileSystem* fs, const std::string& dir, ArchivePlan* plan);

// Writes the archive of plan's files, read from `dir`, into dest[0,
// plan.size). A file whose size changed since the plan is Corruption.
Status WriteArchive(FileSystem* fs, const std::string& dir, const ArchivePlan& plan, const SnapshotHeader& header,
                    char* dest);

// Checks an archive's header (magic, version, checksum) and reads it.
// Corruption for a damaged or truncated header, NotSupported for a newer
// version.
Status ReadArchiveHeader(const Slice& archive, SnapshotHeader* header);

// Checks the whole archive (header, every entry's bounds and name, the
// body checksum) and then writes its files into the new directory `dir`
// (which must not exist), each synced, and the directory synced. On error
// `dir` is removed.
Status UnpackArchive(FileSystem* fs, const Slice& archive, const std::string& dir);

}  // namespace jigsaw::replication

#endif  // JIGSAW_REPLICATION_SNAPSHOT_ARCHIVE_H_
