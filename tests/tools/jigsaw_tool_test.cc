// The `jigsaw` command-line tool (tools/jigsaw.cc), run as a program against
// databases this test makes through the C++ API: output, exit codes, and
// that it never opens a database that is open elsewhere.
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/db_test_util.h"
#include "jigsaw/db.h"
#include "jigsaw/table_file_writer.h"

namespace jigsaw {
namespace {

using test::FlipByte;
using test::ScratchDir;
using test::SmallOptions;

struct ToolRun {
  int code = -1;
  std::string out, err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the tool with `args`; its stdout and stderr go to files in `dir`.
ToolRun Tool(const ScratchDir& dir, const std::vector<std::string>& args) {
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  const std::string out = dir.path() + "/tool.out", err = dir.path() + "/tool.err";
  std::string command = quote(JIGSAW_TOOL_PATH);
  for (const std::string& a : args) command += " " + quote(a);
  command += " >" + quote(out) + " 2>" + quote(err);
  const int status = std::system(command.c_str());
  ToolRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadAll(out);
  r.err = ReadAll(err);
  return r;
}

std::string Key(int i) {
  char key[16];
  std::snprintf(key, sizeof(key), "key%05d", i);
  return key;
}

// A database in `mode` at <dir>/db holding Key(0..n) = "v<i>" padded to
// 100 bytes, compacted so that it has tables below L0.
std::string MakeDb(const ScratchDir& dir, StorageMode mode, int n, Options* used = nullptr,
                   TableFormat format = TableFormat::kKeySet) {
  Options options = SmallOptions();
  options.storage_mode = mode;
  options.table_format = format;
  const std::string name = dir.path() + "/db";
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, name, &db);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return name;
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(db->Put(WriteOptions(), Key(i), "v" + std::to_string(i) + std::string(100, '.')).ok());
  }
  EXPECT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  if (used != nullptr) *used = options;
  return name;
}

std::vector<std::string> TableFiles(const std::string& dir) {
  std::vector<std::string> tables;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".jst") tables.push_back(e.path().string());
  }
  std::sort(tables.begin(), tables.end());
  return tables;
}

TEST(JigsawToolTest, PutGetDeleteScan) {
  ScratchDir dir;
  const std::string db = MakeDb(dir, StorageMode::kDisk, 10);

  ToolRun r = Tool(dir, {"get", db, Key(3)});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "v3" + std::string(100, '.') + "\n");

  r = Tool(dir, {"get", db, "missing"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;

  // A key and value with bytes that are not printable, given in hex.
  r = Tool(dir, {"put", db, "a\\b", "x\ty"});
  EXPECT_EQ(r.code, 0) << r.err;
  r = Tool(dir, {"put", "--key_hex", db, "0001", "ff41"});
  EXPECT_EQ(r.code, 0) << r.err;
  r = Tool(dir, {"get", db, "a\\b"});
  EXPECT_EQ(r.out, "x\\x09y\n");
  r = Tool(dir, {"get", "--key_hex", "--hex", db, "0001"});
  EXPECT_EQ(r.out, "ff41\n");

  r = Tool(dir, {"delete", db, Key(3)});
  EXPECT_EQ(r.code, 0) << r.err;
  r = Tool(dir, {"get", db, Key(3)});
  EXPECT_EQ(r.code, 2);

  r = Tool(dir, {"scan", db, "--from", Key(1), "--to", Key(6)});
  EXPECT_EQ(r.code, 0) << r.err;
  std::string expected;
  for (int i : {1, 2, 4, 5}) expected += Key(i) + "\tv" + std::to_string(i) + std::string(100, '.') + "\n";
  EXPECT_EQ(r.out, expected);

  r = Tool(dir, {"scan", db, "--limit", "2"});
  EXPECT_EQ(r.out, "\\x00\\x01\t\\xffA\na\\\\b\tx\\x09y\n");
  r = Tool(dir, {"scan", db, "--limit", "1", "--hex"});
  EXPECT_EQ(r.out, "0001\tff41\n");

  r = Tool(dir, {"frobnicate", db});
  EXPECT_EQ(r.code, 1);
  r = Tool(dir, {"scan", db, "--limit", "many"});
  EXPECT_EQ(r.code, 1);
}

TEST(JigsawToolTest, InfoListsLevelsInEachMode) {
  for (StorageMode mode : {StorageMode::kPmem, StorageMode::kDisk}) {
    ScratchDir dir;
    const std::string db = MakeDb(dir, mode, 3000);
    const ToolRun r = Tool(dir, {"info", db});
    EXPECT_EQ(r.code, 0) << r.err;
    const char* mode_line = mode == StorageMode::kPmem ? "opened as     pmem (IDENTITY)" : "opened as     disk (IDENTITY)";
    EXPECT_NE(r.out.find(mode_line), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("level  tables"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("L6 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("formats       IDENTITY 1"), std::string::npos) << r.out;
    if (mode == StorageMode::kPmem) {
      EXPECT_NE(r.out.find("pool usage"), std::string::npos) << r.out;
    }
  }
}

TEST(JigsawToolTest, DumpsAnSsdTableAndAPmemBlock) {
  {
    ScratchDir dir;
    const std::string db = MakeDb(dir, StorageMode::kDisk, 50);
    const std::vector<std::string> tables = TableFiles(db);
    ASSERT_FALSE(tables.empty());
    const ToolRun r = Tool(dir, {"dump", "--table", tables.front(), "--values"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("footer: magic JGSWSST1, version 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("magic 534b57415347494a (JIGSAWKS)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("key " + Key(7) + " seq "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" value v7..."), std::string::npos) << r.out;
  }
  {
    ScratchDir dir;
    const std::string db = MakeDb(dir, StorageMode::kPmem, 50);
    ToolRun r = Tool(dir, {"verify", db, "--verbose"});
    ASSERT_EQ(r.code, 0) << r.err;
    // "ok      pmem block <n> at level ..."
    const size_t at = r.out.find("pmem block ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string number = r.out.substr(at + 11, r.out.find(' ', at + 11) - (at + 11));
    r = Tool(dir, {"dump", db, "--number", number});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("pmem block " + number), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("key " + Key(7) + " seq "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" value size 102"), std::string::npos) << r.out;
    r = Tool(dir, {"dump", db, "--number", "999999"});
    EXPECT_EQ(r.code, 2);
  }
  {
    // A table of compressed blocks: each block's codec and stored size, its entries decompressed.
    ScratchDir dir;
    const std::string file = dir.path() + "/000005.jst";
    Options options = SmallOptions();
    options.compression = Compression::kLZ4;
    TableFileWriter writer(options);
    ASSERT_TRUE(writer.Open(file).ok());
    for (int i = 0; i < 300; ++i) ASSERT_TRUE(writer.Put(Key(i), "v" + std::to_string(i) + std::string(100, '.')).ok());
    ASSERT_TRUE(writer.Finish().ok());
    const ToolRun r = Tool(dir, {"dump", "--table", file, "--values"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("footer: magic JGSWSST1, version 3"), std::string::npos) << r.out;  // split blocks
    EXPECT_NE(r.out.find("block 0 at offset 0, LZ4, values in groups, "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" value v7..."), std::string::npos) << r.out;
  }
}

// A classic database's pmem tables are SSD table images: info counts them,
// verify checks them, dump shows one as the table it is; damage to an
// image's footer makes the open fail with Corruption naming it.
TEST(JigsawToolTest, PmemTableImagesOfAClassicDatabase) {
  ScratchDir dir;
  Options options;
  const std::string db = MakeDb(dir, StorageMode::kPmem, 3000, &options, TableFormat::kClassic);
  ToolRun r = Tool(dir, {"info", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" table images of classic blocks"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" 0 table images of classic blocks"), std::string::npos) << r.out;
  r = Tool(dir, {"verify", db, "--verbose"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // "ok      pmem table image <n> at level ..."
  const std::string label = "pmem table image ";
  const size_t at = r.out.find(label);
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("pmem block "), std::string::npos) << r.out;
  const std::string number = r.out.substr(at + label.size(), r.out.find(' ', at + label.size()) - (at + label.size()));
  r = Tool(dir, {"dump", db, "--block", number});  // --number's old name
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(label + number), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("footer: magic JGSWSST1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blocks of classic format"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" seq "), std::string::npos) << r.out;
  // "pool object at offset <o>, <size> bytes"
  const size_t object = r.out.find("pool object at offset ");
  ASSERT_NE(object, std::string::npos) << r.out;
  std::istringstream fields(r.out.substr(object + std::strlen("pool object at offset ")));
  uint64_t offset = 0, size = 0;
  char comma = 0;
  fields >> offset >> comma >> size;
  ASSERT_GT(size, 64u) << r.out;

  FlipByte(dir.path() + "/db/pool", static_cast<std::streamoff>(offset + size - 30));  // in the footer
  std::unique_ptr<DB> opened;
  Options reopen = SmallOptions();
  reopen.storage_mode = StorageMode::kPmem;
  const Status s = DB::Open(reopen, db, &opened);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(label + number), std::string::npos) << s.ToString();
  r = Tool(dir, {"verify", db});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
}

TEST(JigsawToolTest, VerifyNamesEachDamagedTable) {
  ScratchDir dir;
  const std::string db = MakeDb(dir, StorageMode::kDisk, 3000);
  ToolRun r = Tool(dir, {"verify", db});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 damaged"), std::string::npos) << r.out;

  const std::vector<std::string> tables = TableFiles(db);
  ASSERT_GE(tables.size(), 2u);
  FlipByte(tables.front(), 200);  // inside the first block's values
  FlipByte(tables.back(), 200);
  r = Tool(dir, {"verify", db});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("DAMAGED SSD table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(tables.front()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(tables.back()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 2 damaged"), std::string::npos) << r.out;
  // The dump of a damaged table says so too.
  r = Tool(dir, {"dump", "--table", tables.front()});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
}

TEST(JigsawToolTest, RepairRebuildsADatabaseWithADamagedTable) {
  ScratchDir dir;
  const std::string db = MakeDb(dir, StorageMode::kDisk, 3000);
  const std::vector<std::string> tables = TableFiles(db);
  ASSERT_GE(tables.size(), 2u);
  FlipByte(tables.front(), 200);  // inside the first block's values
  ToolRun r = Tool(dir, {"repair", db});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("lost: SSD table " + tables.front() + ", block 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("repaired " + db), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept at " + db + ".lost"), std::string::npos) << r.out;
  r = Tool(dir, {"verify", db});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = Tool(dir, {"get", db, Key(2999)});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = Tool(dir, {"repair", dir.path() + "/nothing"});
  EXPECT_EQ(r.code, 4) << r.out << r.err;  // as destroy: a missing database is an error, not a missing key
  EXPECT_NE(r.err.find("no such database directory"), std::string::npos) << r.err;
}

TEST(JigsawToolTest, DestroyNeedsYes) {
  ScratchDir dir;
  const std::string db = MakeDb(dir, StorageMode::kPmem, 10);
  ToolRun r = Tool(dir, {"destroy", db});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--yes"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(db + "/pool"));
  r = Tool(dir, {"destroy", db, "--yes"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db + "/pool"));
  EXPECT_FALSE(std::filesystem::exists(db + "/IDENTITY"));
}

TEST(JigsawToolTest, DeleteRangeRemovesTheKeysOfTheRange) {
  ScratchDir dir;
  const std::string db = MakeDb(dir, StorageMode::kDisk, 10);
  ToolRun r = Tool(dir, {"delete-range", db, Key(2), Key(5)});
  EXPECT_EQ(r.code, 0) << r.err;
  r = Tool(dir, {"scan", db});
  std::string expected;
  for (int i : {0, 1, 5, 6, 7, 8, 9}) expected += Key(i) + "\tv" + std::to_string(i) + std::string(100, '.') + "\n";
  EXPECT_EQ(r.out, expected);
  r = Tool(dir, {"delete-range", db, Key(5), Key(1)});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("begin key sorts after the end key"), std::string::npos) << r.err;
  r = Tool(dir, {"delete-range", db, Key(5)});
  EXPECT_EQ(r.code, 1);
  r = Tool(dir, {"scan", db});
  EXPECT_EQ(r.out, expected);
}

TEST(JigsawToolTest, CopyIntoDiskModeKeepsEveryKey) {
  ScratchDir dir;
  const std::string db = MakeDb(dir, StorageMode::kPmem, 500);
  ASSERT_EQ(Tool(dir, {"delete", db, Key(10)}).code, 0);
  const ToolRun before = Tool(dir, {"scan", db});
  ASSERT_EQ(before.code, 0) << before.err;
  const std::string copy = dir.path() + "/copy";
  ToolRun r = Tool(dir, {"copy", db, copy, "--mode", "disk"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(copy + "/MANIFEST"));
  const ToolRun after = Tool(dir, {"scan", copy});
  EXPECT_EQ(after.code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  // Into an existing database: refused.
  r = Tool(dir, {"copy", db, copy, "--mode", "disk"});
  EXPECT_EQ(r.code, 4);
}

TEST(JigsawToolTest, CheckpointIsADiskModeDatabaseOfEveryKey) {
  for (StorageMode mode : {StorageMode::kPmem, StorageMode::kDisk}) {
    ScratchDir dir;
    const std::string db = MakeDb(dir, mode, 500);
    ASSERT_EQ(Tool(dir, {"delete", db, Key(10)}).code, 0);
    ASSERT_EQ(Tool(dir, {"delete-range", db, Key(20), Key(40)}).code, 0);
    const ToolRun before = Tool(dir, {"scan", db});
    ASSERT_EQ(before.code, 0) << before.err;
    EXPECT_EQ(before.out.find(Key(30)), std::string::npos);
    const std::string checkpoint = dir.path() + "/checkpoint";
    ToolRun r = Tool(dir, {"checkpoint", db, checkpoint});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("at sequence"), std::string::npos) << r.out;
    EXPECT_TRUE(std::filesystem::exists(checkpoint + "/MANIFEST"));
    const ToolRun after = Tool(dir, {"scan", checkpoint});
    EXPECT_EQ(after.code, 0) << after.err;
    EXPECT_EQ(after.out, before.out);
    r = Tool(dir, {"checkpoint", db, checkpoint});  // it exists
    EXPECT_EQ(r.code, 4);
    EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
  }
}

TEST(JigsawToolTest, UpdatesPrintsTheChangeFeedAndKeepsTheArchive) {
  for (StorageMode mode : {StorageMode::kPmem, StorageMode::kDisk}) {
    ScratchDir dir;
    Options options = SmallOptions();
    options.storage_mode = mode;
    options.wal_size_limit_mb = 64;
    const std::string db = dir.path() + "/db";
    {
      std::unique_ptr<DB> handle;
      ASSERT_TRUE(DB::Open(options, db, &handle).ok());
      for (int i = 0; i < 3000; ++i) {
        ASSERT_TRUE(handle->Put(WriteOptions(), Key(i), "v" + std::to_string(i) + std::string(100, '.')).ok());
      }
      ASSERT_TRUE(handle->Delete(WriteOptions(), Key(7)).ok());
      ASSERT_TRUE(handle->DeleteRange(WriteOptions(), Key(8), Key(9)).ok());
    }
    ToolRun r = Tool(dir, {"updates", db, "--since", "1", "--limit", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "@1 1\nput key00000 v0" + std::string(100, '.') + "\n@2 1\nput key00001 v1" +
                         std::string(100, '.') + "\n");
    // `info` opens the database too: its recovery archives the live log
    // and removes nothing, so the whole feed is still there.
    ASSERT_EQ(Tool(dir, {"info", db}).code, 0);
    r = Tool(dir, {"updates", db, "--since", "3000"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "@3000 1\nput key02999 v2999" + std::string(100, '.') +
                         "\n@3001 1\ndelete key00007\n@3002 1\ndelete-range key00008 key00009\n");
    r = Tool(dir, {"updates", db});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '@'), 3002);
    r = Tool(dir, {"updates", db, "--since", "3003"});  // past the newest
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    // A database that keeps no logs: the first writes are gone.
    ScratchDir plain_dir;
    const std::string plain = MakeDb(plain_dir, mode, 3000);
    r = Tool(plain_dir, {"updates", plain, "--since", "1"});
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.err.find("NotFound"), std::string::npos) << r.err;
  }
}

TEST(JigsawToolTest, IngestAddsTableFiles) {
  ScratchDir dir;
  const std::string db = MakeDb(dir, StorageMode::kDisk, 100);
  const std::string file = dir.path() + "/bulk.jst";
  {
    TableFileWriter writer(SmallOptions());
    ASSERT_TRUE(writer.Open(file).ok());
    ASSERT_TRUE(writer.Put("zz1", "bulk").ok());
    ASSERT_TRUE(writer.Finish().ok());
  }
  ToolRun r = Tool(dir, {"ingest", db, file});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ingested 1 file(s)"), std::string::npos) << r.out;
  r = Tool(dir, {"get", db, "zz1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "bulk\n");
  r = Tool(dir, {"ingest", db, dir.path() + "/missing.jst"});
  EXPECT_EQ(r.code, 4) << r.out;
}

TEST(JigsawToolTest, RefusesADatabaseOpenElsewhere) {
  ScratchDir dir;
  Options options;
  const std::string db = MakeDb(dir, StorageMode::kDisk, 10, &options);
  options.create_if_missing = false;
  std::unique_ptr<DB> held;
  ASSERT_TRUE(DB::Open(options, db, &held).ok());
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"get", db, Key(1)}, {"put", db, "k", "v"}, {"verify", db}, {"destroy", db, "--yes"}}) {
    const ToolRun r = Tool(dir, args);
    EXPECT_EQ(r.code, 4) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("in use"), std::string::npos) << args[0] << ": " << r.err;
  }
  std::string value;
  EXPECT_TRUE(held->Get(ReadOptions(), "k", &value).IsNotFound());
  // --read_only reads beside the holder, and the holder's latest writes.
  ASSERT_TRUE(held->Put(WriteOptions(), "held", "written").ok());
  ToolRun r = Tool(dir, {"get", db, "held", "--read_only"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "written\n");
  r = Tool(dir, {"scan", db, "--read_only"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("held\twritten"), std::string::npos) << r.out;
  EXPECT_EQ(Tool(dir, {"verify", db, "--read_only"}).code, 0);
  held.reset();
  EXPECT_EQ(Tool(dir, {"get", db, Key(1)}).code, 0);
}

TEST(JigsawToolTest, OptionsThatDisagreeAreReported) {
  ScratchDir dir;
  const std::string db = MakeDb(dir, StorageMode::kDisk, 10);
  const ToolRun r = Tool(dir, {"get", db, Key(1), "--mode", "pmem"});
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.err.find("storage_mode"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("disagree"), std::string::npos) << r.err;
  const ToolRun missing = Tool(dir, {"info", dir.path() + "/nothing"});
  EXPECT_EQ(missing.code, 4);
  EXPECT_NE(missing.err.find("there is no database at"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/nothing"));
}

}  // namespace
}  // namespace jigsaw
