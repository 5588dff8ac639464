#include "db/db_identity.h"

#include <sys/statfs.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "pmem/pool.h"
#include "version/filename.h"

namespace jigsaw {

namespace {

constexpr const char* kIdentityFile = "IDENTITY";
constexpr const char* kIdentityHeader = "JigsawDB database identity";
constexpr uint64_t kTmpfsMagic = 0x01021994;

const char* ModeName(StorageMode mode) {
  switch (mode) {
    case StorageMode::kPmem:
      return "kPmem";
    case StorageMode::kHybrid:
      return "kHybrid";
    default:
      return "kDisk";
  }
}

std::string Describe(const DatabaseIdentity& identity) {
  return identity.uses_pool ? "a pmem/hybrid database (id " + identity.database_id + ", pool " + identity.pool_path + ")"
                            : "a disk-mode database (id " + identity.database_id + ")";
}

bool IsHexId(const std::string& id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// A numbered table or log file.
bool IsTableOrLog(const std::string& name) {
  FileType type;
  uint64_t number;
  return ParseFileName(name, &type, &number) && (type == FileType::kTable || type == FileType::kLog);
}

bool OnTmpfs(const std::string& dir) {
  struct statfs fs {};
  return statfs(dir.c_str(), &fs) == 0 && static_cast<uint64_t>(fs.f_type) == kTmpfsMagic;
}

}  // namespace

bool IsDatabaseFileName(const std::string& name) {
  FileType type;
  uint64_t number;
  return ParseFileName(name, &type, &number);
}

std::string PoolPathFor(const Options& options, const std::string& dir) {
  return options.pmem_path.empty() ? dir + "/pool" : options.pmem_path;
}

Status ReadIdentity(FileSystem* fs, const std::string& dir, DatabaseIdentity* identity) {
  const std::string path = dir + "/" + kIdentityFile;
  if (!fs->FileExists(path)) return Status::NotFound(path);
  std::unique_ptr<RandomAccessFile> file;
  Status s = fs->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s;
  const uint64_t size = file->Size();
  if (size > 64 << 10) return Status::Corruption(path, "not a JigsawDB identity file (" + std::to_string(size) + " bytes)");
  std::string buffer(size, '\0');
  Slice contents;
  s = file->Read(0, size, buffer.data(), &contents);
  if (!s.ok()) return s;
  std::istringstream in(contents.ToString());
  std::string line;
  if (!std::getline(in, line) || line != kIdentityHeader) {
    return Status::Corruption(path, "not a JigsawDB identity file");
  }
  std::map<std::string, std::string> fields;
  while (std::getline(in, line)) {
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) return Status::Corruption(path, "malformed line: " + line);
    fields[line.substr(0, colon)] = line.substr(colon + 2);
  }
  const std::string& version = fields["format_version"];
  if (version.empty() || version.find_first_not_of("0123456789") != std::string::npos || version.size() > 9) {
    return Status::Corruption(path, "no format_version");
  }
  if (std::stoi(version) > DatabaseIdentity::kFormatVersion) {
    return Status::NotSupported(path, "identity format version " + version + " is newer than " +
                                          std::to_string(DatabaseIdentity::kFormatVersion));
  }
  *identity = DatabaseIdentity();
  identity->database_id = fields["database_id"];
  if (!IsHexId(identity->database_id)) return Status::Corruption(path, "bad database_id");
  const std::string& storage = fields["storage"];
  if (storage != "pool" && storage != "disk") return Status::Corruption(path, "bad storage: " + storage);
  identity->uses_pool = storage == "pool";
  identity->pool_path = fields["pool_path"];
  const std::string& state = fields["state"];
  if (state != "creating" && state != "ready") return Status::Corruption(path, "bad state: " + state);
  identity->creating = state == "creating";
  if (identity->uses_pool && identity->pool_path.empty()) return Status::Corruption(path, "no pool_path");
  return Status::OK();
}

Status WriteIdentity(FileSystem* fs, const std::string& dir, const DatabaseIdentity& identity) {
  std::string text = std::string(kIdentityHeader) + "\n";
  text += "format_version: " + std::to_string(DatabaseIdentity::kFormatVersion) + "\n";
  text += "database_id: " + identity.database_id + "\n";
  text += std::string("storage: ") + (identity.uses_pool ? "pool" : "disk") + "\n";
  if (identity.uses_pool) text += "pool_path: " + identity.pool_path + "\n";
  text += std::string("state: ") + (identity.creating ? "creating" : "ready") + "\n";
  return ReplaceFileAtomically(fs, dir, kIdentityFile, text);
}

namespace {

// What PlanOpen reads before deciding.
struct DirectoryFacts {
  bool has_manifest = false;
  bool has_files = false;  // tables or logs
  bool pool_mode = false;  // the options ask for a pool (kPmem or kHybrid)
  pmem::PoolOptions pool_options;  // path and comparator, for Inspect
};

// PlanOpen for a directory with an IDENTITY (plan->identity).
Status PlanWithIdentity(const Options& options, const std::string& dir, DirectoryFacts* d, OpenPlan* plan) {
  const bool pool_mode = d->pool_mode;
  const bool has_manifest = d->has_manifest;
  const bool has_files = d->has_files;
  const std::string& pool_path = d->pool_options.path;
  pmem::PoolOptions& pool_options = d->pool_options;
  const DatabaseIdentity& identity = plan->identity;
  if (identity.uses_pool != pool_mode) {
    return Status::InvalidArgument("storage_mode", dir + " holds " + Describe(identity) + "; options give " +
                                                       ModeName(options.storage_mode));
  }
  if (!pool_mode) {
    if (!has_manifest) {
      if (!identity.creating) return Status::Corruption(dir, "MANIFEST is missing");
      plan->creating = true;
      plan->clear_leftovers = has_files;
    }
    return Status::OK();
  }
  pool_options.database_id = identity.database_id;
  pmem::Pool::Facts facts;
  Status s = pmem::Pool::Inspect(pool_options, &facts);
  if (s.IsNotFound()) {
    // Only a creation that never committed may make its pool anew.
    if (identity.creating) {
      plan->creating = true;
      plan->identity.pool_path = pool_path;
      return Status::OK();
    }
    return Status::InvalidArgument("pmem_path", pool_path + " does not exist; " + dir + " holds " +
                                                    Describe(identity));
  }
  if (!s.ok()) return s;
  if (facts.database_id.empty()) {
    return Status::InvalidArgument("pmem_path", pool_path + " is not the pool of the database in " + dir +
                                                    " (it records no database id; the database's is " +
                                                    identity.database_id + ")");
  }
  plan->creating = !facts.has_manifest;
  if (plan->identity.pool_path != pool_path) {
    plan->identity.pool_path = pool_path;  // the pool moved; its id says it is this database's
    plan->identity_outdated = true;
  }
  return Status::OK();
}

// PlanOpen for a directory without an IDENTITY: a new database, or one made
// by a version without identity files (adopted: the identity is written once
// it has opened).
Status PlanWithoutIdentity(const Options& options, const std::string& dir, DirectoryFacts* d, OpenPlan* plan) {
  const bool pool_mode = d->pool_mode;
  const bool has_manifest = d->has_manifest;
  const bool has_files = d->has_files;
  const std::string& pool_path = d->pool_options.path;
  DatabaseIdentity& identity = plan->identity;
  identity.database_id = pmem::NewDatabaseId();
  identity.uses_pool = pool_mode;
  identity.pool_path = pool_mode ? pool_path : "";
  if (!pool_mode) {
    if (!has_manifest && has_files) {
      return Status::InvalidArgument("storage_mode", dir + " holds table or log files but no MANIFEST: not a "
                                                         "disk-mode database (a pmem/hybrid one's tables?); options "
                                                         "give kDisk");
    }
    plan->creating = !has_manifest;
  } else {
    if (has_manifest) {
      return Status::InvalidArgument("storage_mode", dir + " holds a disk-mode database (MANIFEST); options give " +
                                                         std::string(ModeName(options.storage_mode)));
    }
    pmem::Pool::Facts facts;
    Status s = pmem::Pool::Inspect(d->pool_options, &facts);
    if (s.IsNotFound()) {
      if (has_files) {
        return Status::InvalidArgument("pmem_path", pool_path + " does not exist, but " + dir +
                                                        " holds table or log files of a database");
      }
      plan->creating = true;
    } else if (!s.ok()) {
      return s;
    } else if (!facts.database_id.empty() && facts.has_manifest) {
      return Status::InvalidArgument("pmem_path", pool_path + " is the pool of database " + facts.database_id +
                                                      ", whose directory is not " + dir + " (it has no IDENTITY)");
    } else {
      if (!facts.database_id.empty()) identity.database_id = facts.database_id;
      plan->creating = !facts.has_manifest;
    }
  }
  return Status::OK();
}

}  // namespace

Status PlanOpen(FileSystem* fs, const Options& options, const std::string& dir, OpenPlan* plan) {
  *plan = OpenPlan();
  Status s = fs->GetChildren(dir, &plan->children_before);
  if (!s.ok()) return s;
  DirectoryFacts d;
  for (const std::string& child : plan->children_before) {
    if (child == "MANIFEST") d.has_manifest = true;
    if (IsTableOrLog(child)) d.has_files = true;
  }
  d.pool_mode = options.storage_mode != StorageMode::kDisk;
  d.pool_options.path = PoolPathFor(options, dir);
  d.pool_options.comparator_name = options.comparator->Name();
  s = ReadIdentity(fs, dir, &plan->identity);
  if (s.ok()) {
    plan->identity_exists = true;
    return PlanWithIdentity(options, dir, &d, plan);
  }
  if (!s.IsNotFound()) return s;
  s = PlanWithoutIdentity(options, dir, &d, plan);
  if (!s.ok()) return s;
  if (plan->creating && !options.create_if_missing) {
    return Status::InvalidArgument(dir, "does not exist (create_if_missing is false)");
  }
  if (plan->creating && d.pool_mode && options.pmem_path.empty() && !OnTmpfs(dir)) {
    return Status::InvalidArgument("pmem_path", "is empty and " + dir +
                                                    " is not on tmpfs: name the pool file (a file on a DAX file "
                                                    "system, a device-DAX node, or /dev/shm for emulated pmem) -- "
                                                    "a pool on a disk file system is only persisted by msync");
  }
  return Status::OK();
}

}  // namespace jigsaw
