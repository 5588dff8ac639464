// The snapshot archive: a directory's files round-trip byte for byte, and a
// damaged, truncated, newer or hostile archive is refused before anything
// is written.
#include "replication/snapshot_archive.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/db_test_util.h"
#include "util/checksum.h"
#include "util/coding.h"

namespace jigsaw::replication {
namespace {

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out[e.path().filename().string()] = ss.str();
  }
  return out;
}

class SnapshotArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_ = scratch_.path() + "/source";
    std::filesystem::create_directories(source_);
    WriteText(source_ + "/MANIFEST-000001", "manifest bytes");
    std::string table(300000, 'x');
    table.append("end");
    WriteText(source_ + "/000007.jst", table);
    WriteText(source_ + "/empty", "");
  }
  std::string Archive(const SnapshotHeader& header) {
    ArchivePlan plan;
    EXPECT_TRUE(PlanArchive(FileSystem::Default(), source_, &plan).ok());
    std::string archive(plan.size, '\0');
    EXPECT_TRUE(WriteArchive(FileSystem::Default(), source_, plan, header, archive.data()).ok());
    return archive;
  }
  Status Unpack(const std::string& archive, const std::string& name = "out") {
    return UnpackArchive(FileSystem::Default(), archive, scratch_.path() + "/" + name);
  }
  test::ScratchDir scratch_;
  std::string source_;
};

TEST_F(SnapshotArchiveTest, FilesRoundTripWithTheHeader) {
  SnapshotHeader header;
  header.applied_index = 1234;
  header.sequence = 99;
  const std::string archive = Archive(header);
  SnapshotHeader read;
  ASSERT_TRUE(ReadArchiveHeader(archive, &read).ok());
  EXPECT_EQ(read.applied_index, 1234u);
  EXPECT_EQ(read.sequence, 99u);
  ASSERT_TRUE(Unpack(archive).ok());
  EXPECT_EQ(Files(scratch_.path() + "/out"), Files(source_));
  // The target must not exist.
  EXPECT_TRUE(Unpack(archive).IsInvalidArgument());
}

TEST_F(SnapshotArchiveTest, AnyFlippedByteOrTruncationIsCorruption) {
  const std::string archive = Archive(SnapshotHeader());
  for (size_t offset : {size_t{0}, size_t{20}, size_t{45}, archive.size() / 2, archive.size() - 1}) {
    std::string damaged = archive;
    damaged[offset] ^= 0x5a;
    const Status s = Unpack(damaged, "flip" + std::to_string(offset));
    EXPECT_TRUE(s.IsCorruption()) << offset << ": " << s.ToString();
    EXPECT_FALSE(std::filesystem::exists(scratch_.path() + "/flip" + std::to_string(offset)));
  }
  for (size_t size : {size_t{0}, size_t{10}, size_t{44}, archive.size() - 1}) {
    EXPECT_TRUE(Unpack(archive.substr(0, size), "cut").IsCorruption()) << size;
  }
}

TEST_F(SnapshotArchiveTest, ANewerVersionIsNotSupported) {
  std::string archive = Archive(SnapshotHeader());
  EncodeFixed32(archive.data() + 8, 2);
  EncodeFixed32(archive.data() + 36, crc32c::Value(archive.data(), 36));
  SnapshotHeader header;
  EXPECT_TRUE(ReadArchiveHeader(archive, &header).IsNotSupported());
}

TEST_F(SnapshotArchiveTest, ANameThatLeavesTheDirectoryIsRefused) {
  std::filesystem::remove_all(source_);
  std::filesystem::create_directories(source_);
  WriteText(source_ + "/ab", "payload");
  std::string archive = Archive(SnapshotHeader());
  // The one entry's name "ab" becomes "./" -- then ".." -- with the body
  // checksum made right again, so only the name check can refuse it.
  for (const char* name : {"/b", ".."}) {
    std::string hostile = archive;
    std::memcpy(hostile.data() + 40 + 12, name, 2);
    const size_t body = hostile.size() - 4 - 40;
    EncodeFixed32(hostile.data() + hostile.size() - 4, crc32c::Value(hostile.data() + 40, body));
    const Status s = Unpack(hostile, "hostile");
    EXPECT_TRUE(s.IsCorruption()) << name << ": " << s.ToString();
  }
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() + "/b"));
}

TEST_F(SnapshotArchiveTest, ADirectoryWithASubdirectoryIsNotSupported) {
  std::filesystem::create_directories(source_ + "/sub");
  ArchivePlan plan;
  EXPECT_TRUE(PlanArchive(FileSystem::Default(), source_, &plan).IsNotSupported());
}

}  // namespace
}  // namespace jigsaw::replication
