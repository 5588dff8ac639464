#include "jigsaw/status.h"

#include <gtest/gtest.h>

namespace jigsaw {
namespace {

TEST(StatusTest, OkHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kOk);
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(s.message().empty());
}

TEST(StatusTest, CodesAndMessages) {
  EXPECT_TRUE(Status::NotFound("k").IsNotFound());
  EXPECT_TRUE(Status::Corruption("c").IsCorruption());
  EXPECT_TRUE(Status::NotSupported("n").IsNotSupported());
  EXPECT_TRUE(Status::InvalidArgument("i").IsInvalidArgument());
  EXPECT_TRUE(Status::IOError("io").IsIOError());
  EXPECT_TRUE(Status::NoSpace("full").IsNoSpace());
  Status s = Status::InvalidArgument("key too large", "70000 bytes");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "key too large: 70000 bytes");
  EXPECT_EQ(s.ToString(), "Invalid argument: key too large: 70000 bytes");
}

TEST(StatusTest, CopyAndMove) {
  Status a = Status::IOError("disk", "gone");
  Status b = a;
  EXPECT_EQ(a.ToString(), b.ToString());
  Status c = std::move(a);
  EXPECT_TRUE(c.IsIOError());
  b = Status::OK();
  EXPECT_TRUE(b.ok());
  const Status& alias = c;
  c = alias;  // self-assignment keeps the value
  EXPECT_TRUE(c.IsIOError());
}

// A code without a message (a lookup's NotFound) keeps its code through
// copies and moves; a moved-from status is OK.
TEST(StatusTest, ACodeWithoutAMessage) {
  Status a = Status::NotFound(Slice());
  EXPECT_TRUE(a.IsNotFound());
  EXPECT_FALSE(a.ok());
  EXPECT_TRUE(a.message().empty());
  EXPECT_EQ(a.ToString(), "NotFound: ");
  Status b = a;
  EXPECT_TRUE(b.IsNotFound());
  Status c = std::move(a);
  EXPECT_TRUE(c.IsNotFound());
  EXPECT_TRUE(a.ok());  // NOLINT(bugprone-use-after-move): the documented moved-from state
  c = Status::Corruption("", "detail only");
  EXPECT_EQ(c.message(), ": detail only");
  b = std::move(c);
  EXPECT_TRUE(b.IsCorruption());
  EXPECT_TRUE(c.ok());  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace jigsaw
