// The client protocol, version 1 (docs/replication.md, "Client protocol"):
// the service and the client.
#include "jigsaw/replica_service.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <mutex>
#include <sstream>
#include <thread>

#include "jigsaw/iterator.h"
#include "util/coding.h"

namespace jigsaw {

namespace {

enum Op : uint8_t { kPut = 1, kDelete = 2, kGet = 3, kScan = 4, kStatus = 5 };
enum Code : uint8_t { kOk = 0, kNotFound = 1, kNotLeader = 2, kError = 3 };
constexpr uint32_t kMaxFrame = 64u << 20;

// ---------------------------------------------------------------------------
// Sockets

bool SplitAddress(const std::string& address, std::string* host, std::string* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  return true;
}

Status Resolve(const std::string& address, bool passive, addrinfo** result) {
  std::string host, port;
  if (!SplitAddress(address, &host, &port)) return Status::InvalidArgument(address, "is not host:port");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const int rv = ::getaddrinfo(host.c_str(), port.c_str(), &hints, result);
  if (rv != 0) return Status::IOError(address, ::gai_strerror(rv));
  return Status::OK();
}

void NoDelay(int fd) {
  int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* dest, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::recv(fd, dest + done, n - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

bool SendFrame(int fd, const std::string& body) {
  std::string frame(4, '\0');
  EncodeFixed32(frame.data(), static_cast<uint32_t>(body.size()));
  frame += body;
  return WriteAll(fd, frame);
}

bool ReceiveFrame(int fd, std::string* body) {
  char header[4];
  if (!ReadAll(fd, header, sizeof(header))) return false;
  const uint32_t size = DecodeFixed32(header);
  if (size > kMaxFrame) return false;
  body->resize(size);
  return ReadAll(fd, body->data(), size);
}

void PutBytes(std::string* out, const Slice& bytes) {
  char size[4];
  EncodeFixed32(size, static_cast<uint32_t>(bytes.size()));
  out->append(size, 4);
  out->append(bytes.data(), bytes.size());
}

// Reads a frame's fields front to back; any overrun makes ok() false.
class Reader {
 public:
  explicit Reader(const std::string& body) : p_(body.data()), end_(body.data() + body.size()) {}
  uint8_t U8() {
    if (end_ - p_ < 1) return Fail<uint8_t>();
    return static_cast<uint8_t>(*p_++);
  }
  uint32_t U32() {
    if (end_ - p_ < 4) return Fail<uint32_t>();
    const uint32_t v = DecodeFixed32(p_);
    p_ += 4;
    return v;
  }
  Slice Bytes() {
    const uint32_t n = U32();
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) return Fail<Slice>();
    Slice s(p_, n);
    p_ += n;
    return s;
  }
  bool ok() const { return ok_; }
  bool done() const { return p_ == end_; }

 private:
  template <typename T>
  T Fail() {
    ok_ = false;
    p_ = end_;
    return T();
  }
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

std::string Reply(Code code, const Slice& payload = Slice()) {
  std::string out(1, static_cast<char>(code));
  out.append(payload.data(), payload.size());
  return out;
}

std::string ReplyTo(const Status& s) {
  if (s.ok()) return Reply(kOk);
  if (s.IsNotFound()) return Reply(kNotFound);
  if (ReplicatedDB::IsNotLeader(s)) return Reply(kNotLeader, s.ToString());
  return Reply(kError, s.ToString());
}

std::string StatusText(const ReplicaStatus& st) {
  std::ostringstream out;
  out << "id=" << st.id << "\nrole=" << st.role << "\nleader=" << st.leader_id << "@" << st.leader_address
      << "\nterm=" << st.term << "\ncommit_index=" << st.commit_index << "\napplied_index=" << st.applied_index
      << "\ndb_applied_index=" << st.db_applied_index << "\nlast_log_index=" << st.last_log_index
      << "\nsnapshots_installed=" << st.snapshots_installed << "\nvoters=";
  for (size_t i = 0; i < st.voters.size(); ++i) {
    out << (i > 0 ? "," : "") << st.voters[i].id << "@" << st.voters[i].address;
  }
  out << "\n";
  return out.str();
}

ReadConsistency ConsistencyOf(uint8_t byte) {
  return byte == 0 ? ReadConsistency::kLinearizable : ReadConsistency::kStale;
}

// ---------------------------------------------------------------------------
// The service

class ServiceImpl final : public ReplicaService {
 public:
  ServiceImpl(ReplicatedDB* db, int listen_fd, std::string address)
      : db_(db), listen_fd_(listen_fd), address_(std::move(address)) {
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~ServiceImpl() override {
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    ::close(listen_fd_);
    std::list<Connection> connections;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (Connection& c : connections_) ::shutdown(c.fd, SHUT_RDWR);
      connections.splice(connections.end(), connections_);
    }
    for (Connection& c : connections) {
      c.thread.join();
      ::close(c.fd);
    }
  }
  std::string address() const override { return address_; }

 private:
  struct Connection {
    int fd;
    std::thread thread;
  };

  void AcceptLoop() {
    for (;;) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // shut down
      }
      NoDelay(fd);
      std::lock_guard<std::mutex> lock(mu_);
      connections_.push_back(Connection{fd, std::thread()});
      connections_.back().thread = std::thread([this, fd] { Serve(fd); });
    }
  }

  void Serve(int fd) {
    std::string request;
    while (ReceiveFrame(fd, &request)) {
      if (!SendFrame(fd, Handle(request))) break;
    }
    ::shutdown(fd, SHUT_RDWR);  // the destructor closes it
  }

  std::string Handle(const std::string& request) {
    Reader in(request);
    const uint8_t op = in.U8();
    WriteOptions write;
    ReadOptions read;
    switch (op) {
      case kPut: {
        write.sync = in.U8() != 0;
        const Slice key = in.Bytes(), value = in.Bytes();
        if (!in.ok() || !in.done()) break;
        return ReplyTo(db_->Put(write, key, value));
      }
      case kDelete: {
        write.sync = in.U8() != 0;
        const Slice key = in.Bytes();
        if (!in.ok() || !in.done()) break;
        return ReplyTo(db_->Delete(write, key));
      }
      case kGet: {
        const ReadConsistency consistency = ConsistencyOf(in.U8());
        const Slice key = in.Bytes();
        if (!in.ok() || !in.done()) break;
        std::string value;
        const Status s = db_->Get(read, consistency, key, &value);
        if (!s.ok()) return ReplyTo(s);
        std::string payload;
        PutBytes(&payload, value);
        return Reply(kOk, payload);
      }
      case kScan: {
        const ReadConsistency consistency = ConsistencyOf(in.U8());
        const uint32_t limit = in.U32();
        const Slice start = in.Bytes();
        if (!in.ok() || !in.done()) break;
        std::unique_ptr<Iterator> it = db_->NewIterator(read, consistency);
        std::string pairs;
        uint32_t n = 0;
        for (it->Seek(start); it->Valid() && n < limit; it->Next(), ++n) {
          PutBytes(&pairs, it->key());
          PutBytes(&pairs, it->value());
        }
        if (!it->status().ok()) return ReplyTo(it->status());
        std::string payload(4, '\0');
        EncodeFixed32(payload.data(), n);
        return Reply(kOk, payload + pairs);
      }
      case kStatus:
        if (!in.done()) break;
        return Reply(kOk, StatusText(db_->GetStatus()));
      default:
        break;
    }
    return Reply(kError, "InvalidArgument: a request this replica does not read (client protocol version 1)");
  }

  ReplicatedDB* const db_;
  const int listen_fd_;
  const std::string address_;
  std::thread acceptor_;
  std::mutex mu_;  // guards connections_
  std::list<Connection> connections_;
};

}  // namespace

ReplicaService::~ReplicaService() = default;

Status ReplicaService::Start(ReplicatedDB* db, const std::string& address, std::unique_ptr<ReplicaService>* service) {
  addrinfo* found = nullptr;
  Status s = Resolve(address, true, &found);
  if (!s.ok()) return s;
  int fd = -1;
  int error = 0;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
      error = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) return Status::IOError(address, std::strerror(error != 0 ? error : EADDRNOTAVAIL));
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  (void)::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  char host[NI_MAXHOST], port[NI_MAXSERV];
  std::string resolved = address;
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, host, sizeof(host), port, sizeof(port),
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    resolved = std::string(host) + ":" + port;
  }
  *service = std::make_unique<ServiceImpl>(db, fd, resolved);
  return Status::OK();
}

// ---------------------------------------------------------------------------
// The client

struct ReplicaClient::Rep {
  std::vector<std::string> addresses;
  unsigned timeout_ms;
  std::vector<int> fds;  // a connection per address, -1 when none
  size_t leader = 0;     // where the next leader request goes first

  ~Rep() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }

  int Connect(size_t i) {
    if (fds[i] >= 0) return fds[i];
    addrinfo* found = nullptr;
    if (!Resolve(addresses[i], false, &found).ok()) return -1;
    for (addrinfo* a = found; a != nullptr && fds[i] < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        NoDelay(fd);
        fds[i] = fd;
      } else {
        ::close(fd);
      }
    }
    ::freeaddrinfo(found);
    return fds[i];
  }

  // One request to replica i; false when the connection failed.
  bool RoundTrip(size_t i, const std::string& request, std::string* reply) {
    const int fd = Connect(i);
    if (fd < 0) return false;
    if (SendFrame(fd, request) && ReceiveFrame(fd, reply) && !reply->empty()) return true;
    ::close(fd);
    fds[i] = -1;
    return false;
  }

  // Sends to the leader: replicas in turn from the last leader until one
  // answers other than "not the leader", or the timeout.
  Status ToLeader(const std::string& request, std::string* reply) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string last = "no replica could be reached";
    for (;;) {
      for (size_t k = 0; k < addresses.size(); ++k) {
        const size_t i = (leader + k) % addresses.size();
        if (!RoundTrip(i, request, reply)) {
          last = addresses[i] + ": cannot be reached";
          continue;
        }
        if (static_cast<Code>((*reply)[0]) == kNotLeader) {
          last = reply->substr(1);
          continue;
        }
        leader = i;
        return Status::OK();
      }
      if (std::chrono::steady_clock::now() > deadline) return Status::IOError("cluster", "no leader: " + last);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // A request to the leader (writes, linearizable reads) or to the first
  // address (stale reads); OK when the reply's code is.
  Status Send(ReadConsistency consistency, const std::string& request, std::string* reply) {
    if (addresses.empty()) return Status::InvalidArgument("ReplicaClient", "no addresses");
    Status s;
    if (consistency == ReadConsistency::kLinearizable) {
      s = ToLeader(request, reply);
    } else if (!RoundTrip(0, request, reply)) {
      s = Status::IOError(addresses[0], "cannot be reached");
    }
    return s.ok() ? Outcome(*reply) : s;
  }

  static Status Outcome(const std::string& reply) {
    switch (static_cast<Code>(reply[0])) {
      case kOk:
        return Status::OK();
      case kNotFound:
        return Status::NotFound("key");
      default:
        return Status::IOError("replica", reply.substr(1));
    }
  }
};

ReplicaClient::ReplicaClient(std::vector<std::string> addresses, unsigned timeout_ms) : rep_(std::make_unique<Rep>()) {
  rep_->addresses = std::move(addresses);
  rep_->timeout_ms = timeout_ms;
  rep_->fds.assign(rep_->addresses.size(), -1);
}

ReplicaClient::~ReplicaClient() = default;

Status ReplicaClient::Put(const Slice& key, const Slice& value, bool sync) {
  std::string request{static_cast<char>(kPut), static_cast<char>(sync ? 1 : 0)};
  PutBytes(&request, key);
  PutBytes(&request, value);
  std::string reply;
  return rep_->Send(ReadConsistency::kLinearizable, request, &reply);
}

Status ReplicaClient::Delete(const Slice& key, bool sync) {
  std::string request{static_cast<char>(kDelete), static_cast<char>(sync ? 1 : 0)};
  PutBytes(&request, key);
  std::string reply;
  return rep_->Send(ReadConsistency::kLinearizable, request, &reply);
}

Status ReplicaClient::Get(const Slice& key, std::string* value, ReadConsistency consistency) {
  std::string request{static_cast<char>(kGet),
                      static_cast<char>(consistency == ReadConsistency::kLinearizable ? 0 : 1)};
  PutBytes(&request, key);
  std::string reply;
  Status s = rep_->Send(consistency, request, &reply);
  if (!s.ok()) return s;
  const std::string payload = reply.substr(1);
  Reader in(payload);
  const Slice v = in.Bytes();
  if (!in.ok() || !in.done()) return Status::Corruption("replica reply", "malformed");
  value->assign(v.data(), v.size());
  return Status::OK();
}

Status ReplicaClient::Scan(const Slice& start, uint32_t limit, std::vector<std::pair<std::string, std::string>>* out,
                           ReadConsistency consistency) {
  std::string request{static_cast<char>(kScan),
                      static_cast<char>(consistency == ReadConsistency::kLinearizable ? 0 : 1)};
  char n[4];
  EncodeFixed32(n, limit);
  request.append(n, 4);
  PutBytes(&request, start);
  std::string reply;
  Status s = rep_->Send(consistency, request, &reply);
  if (!s.ok()) return s;
  const std::string payload = reply.substr(1);
  Reader in(payload);
  const uint32_t count = in.U32();
  out->clear();
  for (uint32_t i = 0; i < count && in.ok(); ++i) {
    const Slice k = in.Bytes(), v = in.Bytes();
    out->emplace_back(k.ToString(), v.ToString());
  }
  if (!in.ok() || !in.done()) return Status::Corruption("replica reply", "malformed");
  return Status::OK();
}

Status ReplicaClient::GetStatus(const std::string& address, std::string* text) {
  auto it = std::find(rep_->addresses.begin(), rep_->addresses.end(), address);
  size_t i = static_cast<size_t>(it - rep_->addresses.begin());
  if (it == rep_->addresses.end()) {
    rep_->addresses.push_back(address);
    rep_->fds.push_back(-1);
  }
  std::string reply;
  if (!rep_->RoundTrip(i, std::string(1, static_cast<char>(kStatus)), &reply)) {
    return Status::IOError(address, "cannot be reached");
  }
  Status s = Rep::Outcome(reply);
  if (s.ok()) *text = reply.substr(1);
  return s;
}

}  // namespace jigsaw
