// libFuzzer target for the engine's reading of its own files: small
// databases are made once -- disk mode (MANIFEST, WAL log files, SSD tables
// of KeySet or of classic blocks) and hybrid mode, of either format too (a
// pmem pool holding the manifest, WAL segments and the upper levels' tables;
// SSD tables below), and one of each mode with compressed SSD tables (LZ4,
// zstd) -- then every
// input damages one file of one of them and the engine opens the result
// and uses it: recovery, reads, scans both ways, a write, a compaction over
// the damaged tables, VerifyIntegrity. Whatever the damage, each call must
// return (an error Status is fine); a crash, a hang, a sanitizer report or
// a leak is a bug.
//
// Input:
//   byte 0  which database (modulo the number made)
//   byte 1  bits 0-1: wal_recovery_mode; bit 2: paranoid_checks; bit 3:
//           reads verify checksums; bit 4: the MANIFEST file's record
//           checksum is recomputed after the damage (so that what is inside
//           the record is checked, not only its CRC)
//   byte 2  which file (index modulo the number of files)
//   then    edits of 6 bytes each: kind, a 32-bit offset (modulo the file
//           size), a byte. kind % 4: 0 set the byte, 1 flip bits (xor),
//           2 truncate the file there, 3 copy the 8 bytes at another
//           offset (the byte, times 8) over it.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/iterator.h"
#include "jigsaw/options.h"
#include "util/checksum.h"
#include "util/coding.h"

namespace {

using jigsaw::DB;
using jigsaw::Options;
using jigsaw::Slice;
using jigsaw::Status;

struct File {
  std::string name;
  std::string bytes;
};

struct Template {
  Options options;
  std::vector<File> files;
};

std::string MakeScratchDir(const char* what) {
  const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  std::string pattern = std::string(base) + "/jigsaw-" + what + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  return pattern;
}

std::vector<std::string> ListFiles(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(d);
  }
  return names;
}

void RemoveFiles(const std::string& dir) {
  for (const std::string& name : ListFiles(dir)) std::remove((dir + "/" + name).c_str());
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteWhole(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%012d", i);
  return buf;
}

constexpr int kKeys = 4000;
constexpr const char* kPoolName = "pool";  // inside the database's directory

Options BaseOptions(jigsaw::StorageMode mode, jigsaw::TableFormat format, jigsaw::Compression compression) {
  Options options;
  options.storage_mode = mode;
  options.table_format = format;
  options.compression = compression;
  options.pmem_pool_size = uint64_t{16} << 20;  // the smallest pool
  options.pmem_budget = 1 << 20;                // hybrid: L2 on SSD
  options.memtable_size = 64 << 10;
  options.table_size = 64 << 10;
  options.level1_size = 1 << 20;
  options.level0_compaction_trigger = 2;
  options.block_cache_capacity = 1 << 20;
  return options;
}

// A database with tables in L0 and deeper, overwritten and deleted keys,
// and writes left in its log; its files' bytes, the lock and the info log
// left out.
Template MakeTemplate(jigsaw::StorageMode mode, jigsaw::TableFormat format,
                      jigsaw::Compression compression = jigsaw::Compression::kNone) {
  Template t;
  t.options = BaseOptions(mode, format, compression);
  const std::string dir = MakeScratchDir("dbfuzz-template");
  Options create = t.options;
  create.create_if_missing = true;
  if (mode != jigsaw::StorageMode::kDisk) create.pmem_path = dir + "/" + kPoolName;
  std::unique_ptr<DB> db;
  Status s = DB::Open(create, dir, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "cannot make the template database: %s\n", s.ToString().c_str());
    std::abort();
  }
  jigsaw::WriteOptions write;
  const std::string value(120, 'v');
  for (int round = 0; round < 3; ++round) {
    for (int i = round; i < kKeys; i += 1 + round) {
      (void)db->Put(write, Key(i), Slice(value.data(), 40 + (i * 7 + round) % 80));
    }
    for (int i = round; i < kKeys; i += 13) (void)db->Delete(write, Key(i));
  }
  (void)db->CompactRange(nullptr, nullptr);
  for (int i = 0; i < kKeys; i += 5) (void)db->Put(write, Key(i), "after the compaction");
  db.reset();
  for (const std::string& name : ListFiles(dir)) {
    if (name == "LOCK" || name.rfind("LOG", 0) == 0) continue;
    t.files.push_back({name, ReadWhole(dir + "/" + name)});
  }
  RemoveFiles(dir);
  rmdir(dir.c_str());
  const char* codec = compression == jigsaw::Compression::kLZ4    ? ", LZ4"
                      : compression == jigsaw::Compression::kZstd ? ", zstd"
                                                                  : "";
  std::fprintf(stderr, "db_files_fuzzer: %s, %s tables%s:", mode == jigsaw::StorageMode::kDisk ? "disk" : "hybrid",
               format == jigsaw::TableFormat::kKeySet ? "KeySet" : "classic", codec);
  for (const File& f : t.files) std::fprintf(stderr, " %s (%zu bytes)", f.name.c_str(), f.bytes.size());
  std::fprintf(stderr, "\n");
  return t;
}

void FixManifestChecksum(std::string* file) {
  constexpr size_t kRecord = 256;  // docs/manifest.md: the record follows the file header
  if (file->size() < kRecord + 24) return;
  char* record = file->data() + kRecord;
  const uint64_t size = jigsaw::DecodeFixed64(record + 16);
  if (size < 16 || size > file->size() - kRecord) return;
  jigsaw::EncodeFixed32(record + 12, jigsaw::crc32c::Value(record + 16, size - 16));
}

void Damage(const uint8_t* edits, size_t size, std::string* file) {
  for (size_t i = 0; i + 6 <= size && !file->empty(); i += 6) {
    const uint8_t kind = edits[i] % 4;
    const uint32_t raw = static_cast<uint32_t>(edits[i + 1]) | static_cast<uint32_t>(edits[i + 2]) << 8 |
                         static_cast<uint32_t>(edits[i + 3]) << 16 | static_cast<uint32_t>(edits[i + 4]) << 24;
    const size_t offset = raw % file->size();
    const uint8_t byte = edits[i + 5];
    switch (kind) {
      case 0:
        (*file)[offset] = static_cast<char>(byte);
        break;
      case 1:
        (*file)[offset] = static_cast<char>((*file)[offset] ^ (byte == 0 ? 1 : byte));
        break;
      case 2:
        file->resize(offset);
        break;
      default: {
        const size_t from = (size_t{byte} * 8) % file->size();
        for (size_t k = 0; k < 8 && offset + k < file->size() && from + k < file->size(); ++k) {
          (*file)[offset + k] = (*file)[from + k];
        }
        break;
      }
    }
  }
}

// Everything a user might do with what opened; results are only touched.
void Use(DB* db, bool verify_checksums) {
  jigsaw::ReadOptions read;
  read.verify_checksums = verify_checksums;
  uint64_t sink = 0;
  {
    std::unique_ptr<jigsaw::Iterator> it = db->NewIterator(read);
    int steps = 0;
    for (it->SeekToFirst(); it->Valid() && steps < 3 * kKeys; it->Next(), ++steps) {
      sink += it->key().size() + it->value().size();
    }
    sink += it->status().ok();
    int back = 0;
    for (it->SeekToLast(); it->Valid() && back < 200; it->Prev(), ++back) sink += it->value().size();
    it->Seek(Key(kKeys / 2));
    for (int k = 0; it->Valid() && k < 50; it->Next(), ++k) sink += it->key().size();
    if (it->Valid()) it->Prev();
  }
  std::string value;
  for (int i = 0; i < kKeys; i += 97) {
    if (db->Get(read, Key(i), &value).ok()) sink += value.size();
  }
  std::vector<Slice> keys;
  std::vector<std::string> key_bytes;
  for (int i = 1; i < kKeys; i += 501) key_bytes.push_back(Key(i));
  for (const std::string& k : key_bytes) keys.push_back(k);
  std::vector<std::string> values;
  for (const Status& s : db->MultiGet(read, keys, &values)) sink += s.ok();
  jigsaw::WriteOptions write;
  write.sync = true;
  (void)db->Put(write, Key(7), "written after the damage");
  (void)db->Delete(write, Key(8));
  (void)db->CompactRange(nullptr, nullptr);
  (void)db->VerifyIntegrity();
  std::string property;
  (void)db->GetProperty("jigsaw.stats", &property);
  if (sink == 42) std::fputc(' ', stderr);  // keeps the reads
}

std::vector<Template>* templates = nullptr;
std::string* work_dir = nullptr;

void CleanUp() {
  if (work_dir != nullptr) {
    RemoveFiles(*work_dir);
    rmdir(work_dir->c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  templates = new std::vector<Template>;
  templates->push_back(MakeTemplate(jigsaw::StorageMode::kDisk, jigsaw::TableFormat::kKeySet));
  templates->push_back(MakeTemplate(jigsaw::StorageMode::kDisk, jigsaw::TableFormat::kClassic));
  templates->push_back(MakeTemplate(jigsaw::StorageMode::kHybrid, jigsaw::TableFormat::kKeySet));
  templates->push_back(MakeTemplate(jigsaw::StorageMode::kHybrid, jigsaw::TableFormat::kClassic));
  templates->push_back(MakeTemplate(jigsaw::StorageMode::kDisk, jigsaw::TableFormat::kKeySet, jigsaw::Compression::kLZ4));
  templates->push_back(
      MakeTemplate(jigsaw::StorageMode::kHybrid, jigsaw::TableFormat::kClassic, jigsaw::Compression::kZstd));
  work_dir = new std::string(MakeScratchDir("dbfuzz"));
  std::atexit(CleanUp);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const Template& t = (*templates)[data[0] % templates->size()];
  const uint8_t flags = data[1];
  if (t.files.empty()) return 0;
  const size_t damaged = data[2] % t.files.size();
  RemoveFiles(*work_dir);
  for (size_t i = 0; i < t.files.size(); ++i) {
    std::string bytes = t.files[i].bytes;
    if (i == damaged) {
      Damage(data + 3, size - 3, &bytes);
      if ((flags & 16) != 0 && t.files[i].name == "MANIFEST") FixManifestChecksum(&bytes);
    }
    WriteWhole(*work_dir + "/" + t.files[i].name, bytes);
  }
  Options options = t.options;
  if (options.storage_mode != jigsaw::StorageMode::kDisk) options.pmem_path = *work_dir + "/" + kPoolName;
  options.wal_recovery_mode = static_cast<jigsaw::WalRecoveryMode>(flags & 3);
  options.paranoid_checks = (flags & 4) != 0;
  std::unique_ptr<DB> db;
  if (DB::Open(options, *work_dir, &db).ok()) Use(db.get(), (flags & 8) != 0);
  return 0;
}
