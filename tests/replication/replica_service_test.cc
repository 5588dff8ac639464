// The client protocol: ReplicaService on each of three replicas,
// ReplicaClient finding the leader among them, following it when it
// changes, and a malformed request answered with an error, not a crash.
#include "jigsaw/replica_service.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/replica_test_util.h"
#include "util/coding.h"

namespace jigsaw {
namespace {

using test::WaitFor;

class ReplicaServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (size_t i = 0; i < 3; ++i) {
      cluster_.Open(i);
      std::unique_ptr<ReplicaService> service;
      ASSERT_TRUE(ReplicaService::Start(cluster_.replica(i), "127.0.0.1:0", &service).ok());
      addresses_.push_back(service->address());
      services_.push_back(std::move(service));
    }
  }
  void TearDown() override { services_.clear(); }

  test::ScratchDir scratch_;
  test::ReplicaCluster cluster_{scratch_.path()};
  std::vector<std::unique_ptr<ReplicaService>> services_;
  std::vector<std::string> addresses_;
};

TEST_F(ReplicaServiceTest, AClientFindsTheLeaderWhereverItIsListed) {
  const size_t leader = cluster_.Leader();
  // The leader last: the client passes the followers by.
  std::vector<std::string> order;
  for (size_t i = 1; i <= 3; ++i) order.push_back(addresses_[(leader + i) % 3]);
  ReplicaClient client(order);
  for (int k = 0; k < 50; ++k) ASSERT_TRUE(client.Put(test::NumberedKey(k), test::NumberedValue(k)).ok()) << k;
  ASSERT_TRUE(client.Delete(test::NumberedKey(3), /*sync=*/true).ok());
  std::string value;
  ASSERT_TRUE(client.Get(test::NumberedKey(7), &value).ok());
  EXPECT_EQ(value, test::NumberedValue(7));
  EXPECT_TRUE(client.Get(test::NumberedKey(3), &value).IsNotFound());
  std::vector<std::pair<std::string, std::string>> pairs;
  ASSERT_TRUE(client.Scan(test::NumberedKey(10), 5, &pairs).ok());
  ASSERT_EQ(pairs.size(), 5u);
  EXPECT_EQ(pairs[0].first, test::NumberedKey(10));
  EXPECT_EQ(pairs[4].second, test::NumberedValue(14));

  // A stale read goes to the first address, a follower, once it has them.
  cluster_.Converge();
  ASSERT_TRUE(client.Get(test::NumberedKey(7), &value, ReadConsistency::kStale).ok());
  EXPECT_EQ(value, test::NumberedValue(7));
  std::string text;
  ASSERT_TRUE(client.GetStatus(order[0], &text).ok());
  EXPECT_NE(text.find("role=follower"), std::string::npos) << text;
  ASSERT_TRUE(client.GetStatus(addresses_[leader], &text).ok());
  EXPECT_NE(text.find("role=leader"), std::string::npos) << text;
  EXPECT_NE(text.find("voters=1@"), std::string::npos) << text;
}

TEST_F(ReplicaServiceTest, AClientFollowsTheLeaderWhenItChanges) {
  ReplicaClient client(addresses_);
  ASSERT_TRUE(client.Put("before", "1").ok());
  const size_t old_leader = cluster_.Leader();
  services_[old_leader].reset();
  cluster_.Close(old_leader);
  ASSERT_TRUE(client.Put("after", "2").ok());
  std::string value;
  ASSERT_TRUE(client.Get("before", &value).ok());
  EXPECT_EQ(value, "1");
  ASSERT_TRUE(client.Get("after", &value).ok());
  EXPECT_EQ(value, "2");
}

TEST_F(ReplicaServiceTest, AMalformedRequestIsAnsweredWithAnError) {
  const std::string& address = addresses_[0];
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  // A put whose key runs past the frame's end, then an unknown op.
  for (const std::string& body : {std::string("\x01\x00\xff\xff\x00\x00", 6), std::string("\x63", 1)}) {
    std::string frame(4, '\0');
    EncodeFixed32(frame.data(), static_cast<uint32_t>(body.size()));
    frame += body;
    ASSERT_EQ(::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL), static_cast<ssize_t>(frame.size()));
    char header[4];
    ASSERT_EQ(::recv(fd, header, 4, MSG_WAITALL), 4);
    std::string reply(DecodeFixed32(header), '\0');
    ASSERT_EQ(::recv(fd, reply.data(), reply.size(), MSG_WAITALL), static_cast<ssize_t>(reply.size()));
    EXPECT_EQ(reply[0], 3) << "error code";
    EXPECT_NE(reply.find("InvalidArgument"), std::string::npos) << reply;
  }
  ::close(fd);
  // The replica still serves.
  ReplicaClient client(addresses_);
  EXPECT_TRUE(client.Put("k", "v").ok());
}

}  // namespace
}  // namespace jigsaw
