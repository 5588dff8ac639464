// A program using an installed JigsawDB, built by scripts/check-install.sh
// twice: through find_package(jigsaw) and through pkg-config. It opens a
// disk-mode database in a new temporary directory, writes, reads back,
// reopens and reads again; exit status 0 only if every value matches.
#include <jigsaw/db.h>
#include <jigsaw/version.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "consumer: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main() {
  char dir_template[] = "/tmp/jigsaw-consumer-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) return Fail("mkdtemp failed");
  const std::string name = std::string(dir) + "/db";
  jigsaw::Options options;
  options.create_if_missing = true;
  options.storage_mode = jigsaw::StorageMode::kDisk;
  int status = 0;
  for (int round = 0; round < 2 && status == 0; ++round) {
    std::unique_ptr<jigsaw::DB> db;
    jigsaw::Status s = jigsaw::DB::Open(options, name, &db);
    if (!s.ok()) {
      status = Fail("open: " + s.ToString());
      break;
    }
    for (int i = 0; i < 1000 && round == 0; ++i) {
      s = db->Put(jigsaw::WriteOptions(), "key" + std::to_string(i), "value" + std::to_string(i));
      if (!s.ok()) status = Fail("put: " + s.ToString());
    }
    for (int i = 0; i < 1000 && status == 0; ++i) {
      std::string value;
      s = db->Get(jigsaw::ReadOptions(), "key" + std::to_string(i), &value);
      if (!s.ok() || value != "value" + std::to_string(i)) status = Fail("get key" + std::to_string(i));
    }
  }
  std::filesystem::remove_all(dir);
  if (status == 0) {
    std::printf("consumer: JigsawDB %d.%d.%d works\n", JIGSAW_VERSION_MAJOR, JIGSAW_VERSION_MINOR,
                JIGSAW_VERSION_PATCH);
  }
  return status;
}
