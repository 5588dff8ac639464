// src/filename.h: paths built and names parsed agree, and nothing else is
// taken for a database file.
#include "version/filename.h"

#include <gtest/gtest.h>

namespace jigsaw {
namespace {

TEST(FileNameTest, BuiltNamesParseBack) {
  for (uint64_t number : {uint64_t{0}, uint64_t{7}, uint64_t{123456}, uint64_t{9876543210}, UINT64_MAX}) {
    for (bool table : {true, false}) {
      const std::string path = table ? TableFileName("/db", number) : LogFileName("/db", number);
      ASSERT_EQ(path.substr(0, 4), "/db/");
      FileType type;
      uint64_t parsed = 0;
      ASSERT_TRUE(ParseFileName(path.substr(4), &type, &parsed)) << path;
      EXPECT_EQ(type, table ? FileType::kTable : FileType::kLog);
      EXPECT_EQ(parsed, number);
    }
  }
  EXPECT_EQ(TableFileName("/db", 12), "/db/000012.jst");
}

TEST(FileNameTest, FixedNames) {
  FileType type;
  uint64_t number;
  const std::pair<const char*, FileType> fixed[] = {
      {"MANIFEST", FileType::kManifest}, {"MANIFEST.tmp", FileType::kManifestTemp},
      {"IDENTITY", FileType::kIdentity}, {"IDENTITY.tmp", FileType::kIdentityTemp},
      {"LOCK", FileType::kLock}, {"LOG", FileType::kInfoLog}, {"LOG.old", FileType::kOldInfoLog}};
  for (const auto& [name, expected] : fixed) {
    ASSERT_TRUE(ParseFileName(name, &type, &number)) << name;
    EXPECT_EQ(type, expected);
  }
}

TEST(FileNameTest, OtherNamesAreNotDatabaseFiles) {
  FileType type;
  uint64_t number;
  for (const char* name : {"", ".jst", "12.jstx", "12.js", "x12.jst", "1a.log", "12.log.tmp", "pool", "notes.txt",
                           "MANIFEST2", "lock", "99999999999999999999.jst", "123456789012345678901.log"}) {
    EXPECT_FALSE(ParseFileName(name, &type, &number)) << name;
  }
}

}  // namespace
}  // namespace jigsaw
