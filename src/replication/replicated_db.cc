// ReplicatedDB: a StateMachine under a libraft server on a libuv loop of
// its own (docs/replication.md).
#include "jigsaw/replicated_db.h"

extern "C" {
#include <raft.h>
#include <raft/uv.h>
}
#include <pthread.h>
#include <signal.h>
#include <uv.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

#include "jigsaw/file_system.h"
#include "replication/state_machine.h"

namespace jigsaw {

namespace {

constexpr char kNotLeaderMessage[] = "not the leader";

// Skips the replication's own keys.
class UserKeyIterator final : public Iterator {
 public:
  UserKeyIterator(std::shared_ptr<DB> db, const ReadOptions& options)
      : db_(std::move(db)), it_(db_->NewIterator(options)) {}
  explicit UserKeyIterator(Status error) : error_(std::move(error)) {}
  bool Valid() const override { return it_ != nullptr && it_->Valid(); }
  void SeekToFirst() override { Forward([&] { it_->SeekToFirst(); }); }
  void SeekToLast() override { Backward([&] { it_->SeekToLast(); }); }
  void Seek(const Slice& target) override { Forward([&] { it_->Seek(target); }); }
  void Next() override { Forward([&] { it_->Next(); }); }
  void Prev() override { Backward([&] { it_->Prev(); }); }
  Slice key() const override { return it_->key(); }
  Slice value() const override { return it_->value(); }
  Status status() const override { return it_ != nullptr ? it_->status() : error_; }

 private:
  template <typename Move>
  void Forward(Move move) {
    if (it_ == nullptr) return;
    move();
    while (it_->Valid() && replication::IsReservedKey(it_->key())) it_->Next();
  }
  template <typename Move>
  void Backward(Move move) {
    if (it_ == nullptr) return;
    move();
    while (it_->Valid() && replication::IsReservedKey(it_->key())) it_->Prev();
  }
  std::shared_ptr<DB> db_;  // keeps a generation a restore replaced open
  std::unique_ptr<Iterator> it_;
  Status error_;
};

// libraft 0.15's TCP transport parses "host:port" with strtok, whose state
// is the process's: two replicas of one process connecting at once (each
// on its own loop thread) could each connect to a port parsed from the
// other's address. Every call into the transport that parses an address
// -- listen and connect -- runs under one lock.
std::mutex transport_parse_mutex;
int (*tcp_listen)(struct raft_uv_transport*, raft_uv_accept_cb) = nullptr;
int (*tcp_connect)(struct raft_uv_transport*, struct raft_uv_connect*, raft_id, const char*,
                   raft_uv_connect_cb) = nullptr;

int SerializedListen(struct raft_uv_transport* transport, raft_uv_accept_cb cb) {
  std::lock_guard<std::mutex> lock(transport_parse_mutex);
  return tcp_listen(transport, cb);
}

int SerializedConnect(struct raft_uv_transport* transport, struct raft_uv_connect* req, raft_id id,
                      const char* address, raft_uv_connect_cb cb) {
  std::lock_guard<std::mutex> lock(transport_parse_mutex);
  return tcp_connect(transport, req, id, address, cb);
}

// Routes a TCP transport's listen and connect through the lock above.
void SerializeAddressParsing(struct raft_uv_transport* transport) {
  std::lock_guard<std::mutex> lock(transport_parse_mutex);
  if (transport->listen != &SerializedListen) {
    tcp_listen = transport->listen;
    transport->listen = &SerializedListen;
  }
  if (transport->connect != &SerializedConnect) {
    tcp_connect = transport->connect;
    transport->connect = &SerializedConnect;
  }
}

Status RaftStatus(int rv, const char* what) {
  if (rv == RAFT_NOTLEADER || rv == RAFT_LEADERSHIPLOST) return Status::IOError(kNotLeaderMessage, what);
  if (rv == RAFT_SHUTDOWN) return Status::IOError(what, "the replica is closing");
  return Status::IOError(what, raft_strerror(rv));
}

const char* RoleName(int state) {
  switch (state) {
    case RAFT_LEADER:
      return "leader";
    case RAFT_FOLLOWER:
      return "follower";
    case RAFT_CANDIDATE:
      return "candidate";
    default:
      return "unavailable";
  }
}

class ReplicatedDBImpl final : public ReplicatedDB {
 public:
  explicit ReplicatedDBImpl(const ReplicaOptions& options) : options_(options) {}
  ~ReplicatedDBImpl() override;

  Status Start();

  Status Write(const WriteOptions& options, WriteBatch* batch) override;
  Status Get(const ReadOptions& options, ReadConsistency consistency, const Slice& key, std::string* value) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options, ReadConsistency consistency) override;
  Status AddServer(const ReplicaServer& server) override;
  Status RemoveServer(uint64_t id) override;
  Status TransferLeadership(uint64_t id) override;
  ReplicaStatus GetStatus() override;
  ReplicaServer Leader() override {
    const ReplicaStatus status = GetStatus();
    return ReplicaServer{status.leader_id, status.leader_address};
  }

 private:
  using Promise = std::promise<Status>;

  // Runs `task` on the loop thread.
  void Post(std::function<void()> task);
  // Posts `task`, which must eventually set the promise, and waits for it
  // up to the request timeout.
  Status Call(const char* what, std::function<void(std::shared_ptr<Promise>)> task);
  // On the loop thread: the status for a request this server cannot take.
  Status NotLeader() const;
  Status Barrier();  // commits a barrier entry (leader only)

  static void OnWake(uv_async_t* handle);
  static void OnRaftClosed(struct raft* raft);

  const ReplicaOptions options_;
  std::unique_ptr<replication::StateMachine> machine_;
  uv_loop_t loop_{};
  uv_async_t wake_{};
  struct raft_uv_transport transport_ {};
  struct raft_io io_ {};
  struct raft raft_ {};
  bool loop_ready_ = false, wake_ready_ = false, transport_ready_ = false, io_ready_ = false, raft_ready_ = false;
  std::thread thread_;
  std::mutex mu_;  // guards tasks_ and closing_
  std::deque<std::function<void()>> tasks_;
  bool closing_ = false;
};

}  // namespace

Status ReplicatedDB::Put(const WriteOptions& options, const Slice& key, const Slice& value) {
  WriteBatch batch;
  batch.Put(key, value);
  return Write(options, &batch);
}

Status ReplicatedDB::Delete(const WriteOptions& options, const Slice& key) {
  WriteBatch batch;
  batch.Delete(key);
  return Write(options, &batch);
}

ReplicatedDB::~ReplicatedDB() = default;

bool ReplicatedDB::IsNotLeader(const Status& status) {
  return status.IsIOError() && status.ToString().find(kNotLeaderMessage) != std::string::npos;
}

Status ReplicatedDB::Open(const ReplicaOptions& options, std::unique_ptr<ReplicatedDB>* db) {
  if (options.self.id == 0 || options.self.address.empty() || options.dir.empty()) {
    return Status::InvalidArgument("ReplicaOptions", "self.id, self.address and dir are required");
  }
  auto impl = std::make_unique<ReplicatedDBImpl>(options);
  Status s = impl->Start();
  if (!s.ok()) return s;
  *db = std::move(impl);
  return Status::OK();
}

namespace {

Status ReplicatedDBImpl::Start() {
  FileSystem* fs = options_.db_options.file_system != nullptr ? options_.db_options.file_system : FileSystem::Default();
  Status s = fs->CreateDirIfMissing(options_.dir);
  if (s.ok()) s = fs->CreateDirIfMissing(options_.dir + "/raft");
  if (!s.ok()) return s;
  Options db_options = options_.db_options;
  db_options.create_if_missing = true;
  s = replication::StateMachine::Open(db_options, options_.dir, &machine_);
  if (!s.ok()) return s;

  int rv = uv_loop_init(&loop_);
  if (rv != 0) return Status::IOError("uv_loop_init", uv_strerror(rv));
  loop_ready_ = true;
  wake_.data = this;
  rv = uv_async_init(&loop_, &wake_, &ReplicatedDBImpl::OnWake);
  if (rv != 0) return Status::IOError("uv_async_init", uv_strerror(rv));
  wake_ready_ = true;
  rv = raft_uv_tcp_init(&transport_, &loop_);
  if (rv != 0) return RaftStatus(rv, "raft_uv_tcp_init");
  transport_ready_ = true;
  SerializeAddressParsing(&transport_);
  const std::string raft_dir = options_.dir + "/raft";
  rv = raft_uv_init(&io_, &loop_, raft_dir.c_str(), &transport_);
  if (rv != 0) return Status::IOError("raft_uv_init", io_.errmsg);
  io_ready_ = true;
  // libraft 0.15's libuv I/O implements async_work but calls itself
  // version 1, and raft_init wants version 2 before it takes snapshots off
  // its thread: the I/O is what version 2 describes.
  if (io_.async_work != nullptr) {
    io_.version = 2;
    machine_->UseAsyncSnapshots();
  }
  rv = raft_init(&raft_, &io_, machine_->fsm(), options_.self.id, options_.self.address.c_str());
  if (rv != 0) return Status::IOError("raft_init", raft_errmsg(&raft_));
  raft_ready_ = true;
  raft_.data = this;
  machine_->Attach(&raft_);
  if (!options_.bootstrap.empty()) {
    struct raft_configuration conf;
    raft_configuration_init(&conf);
    for (const ReplicaServer& server : options_.bootstrap) {
      rv = raft_configuration_add(&conf, server.id, server.address.c_str(), RAFT_VOTER);
      if (rv != 0) break;
    }
    if (rv == 0) rv = raft_bootstrap(&raft_, &conf);
    raft_configuration_close(&conf);
    if (rv != 0 && rv != RAFT_CANTBOOTSTRAP) return RaftStatus(rv, "raft_bootstrap");
  }
  raft_set_election_timeout(&raft_, options_.election_timeout_ms);
  raft_set_heartbeat_timeout(&raft_, options_.heartbeat_timeout_ms);
  raft_set_snapshot_threshold(&raft_, options_.snapshot_threshold);
  raft_set_snapshot_trailing(&raft_, options_.snapshot_trailing);
  raft_set_install_snapshot_timeout(&raft_, options_.install_snapshot_timeout_ms);
  raft_set_pre_vote(&raft_, true);
  rv = raft_start(&raft_);
  if (rv != 0) return Status::IOError("raft_start", raft_errmsg(&raft_));
  thread_ = std::thread([this] {
    // A peer that went away makes a write to its socket fail with EPIPE,
    // not kill the process: SIGPIPE is blocked on the thread that writes.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
  });
  return Status::OK();
}

ReplicatedDBImpl::~ReplicatedDBImpl() {
  if (thread_.joinable()) {
    Post([this] { raft_close(&raft_, &ReplicatedDBImpl::OnRaftClosed); });
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    thread_.join();  // the loop ends once raft, its I/O and wake_ are closed
  } else if (loop_ready_) {
    // Start failed part way: undo what it did, on this thread.
    if (raft_ready_) {
      raft_close(&raft_, &ReplicatedDBImpl::OnRaftClosed);
    } else {
      if (io_ready_) raft_uv_close(&io_);
      if (transport_ready_) raft_uv_tcp_close(&transport_);
      if (wake_ready_) uv_close(reinterpret_cast<uv_handle_t*>(&wake_), nullptr);
    }
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  if (loop_ready_) (void)uv_loop_close(&loop_);
  machine_.reset();
}

void ReplicatedDBImpl::OnRaftClosed(struct raft* raft) {
  auto* self = static_cast<ReplicatedDBImpl*>(raft->data);
  raft_uv_close(&self->io_);
  raft_uv_tcp_close(&self->transport_);
  uv_close(reinterpret_cast<uv_handle_t*>(&self->wake_), nullptr);
}

void ReplicatedDBImpl::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return;
    tasks_.push_back(std::move(task));
  }
  uv_async_send(&wake_);
}

void ReplicatedDBImpl::OnWake(uv_async_t* handle) {
  auto* self = static_cast<ReplicatedDBImpl*>(handle->data);
  std::deque<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> lock(self->mu_);
    tasks.swap(self->tasks_);
  }
  for (auto& task : tasks) task();
}

Status ReplicatedDBImpl::Call(const char* what, std::function<void(std::shared_ptr<Promise>)> task) {
  auto promise = std::make_shared<Promise>();
  std::future<Status> done = promise->get_future();
  Post([task = std::move(task), promise] { task(promise); });
  if (done.wait_for(std::chrono::milliseconds(options_.request_timeout_ms)) != std::future_status::ready) {
    return Status::IOError(what, "timed out (its outcome is unknown)");
  }
  return done.get();
}

Status ReplicatedDBImpl::NotLeader() const {
  raft_id id = 0;
  const char* address = nullptr;
  raft_leader(const_cast<struct raft*>(&raft_), &id, &address);
  if (id == 0) return Status::IOError(kNotLeaderMessage, "no leader is known");
  return Status::IOError(kNotLeaderMessage, "the leader is " + std::to_string(id) + " at " + address);
}

Status ReplicatedDBImpl::Write(const WriteOptions& options, WriteBatch* batch) {
  std::string command;
  Status s = replication::EncodeCommand(*batch, options.sync, options_.db_options.comparator, &command);
  if (!s.ok()) return s;
  return Call("replicated write", [this, command = std::move(command)](std::shared_ptr<Promise> promise) {
    if (raft_state(&raft_) != RAFT_LEADER) return promise->set_value(NotLeader());
    struct Request {
      struct raft_apply apply;
      std::shared_ptr<Promise> promise;
    };
    auto* request = new Request{{}, promise};
    request->apply.data = request;
    struct raft_buffer buf;
    buf.len = command.size();
    buf.base = raft_malloc(buf.len);
    if (buf.base == nullptr) {
      delete request;
      return promise->set_value(Status::IOError("replicated write", "out of memory"));
    }
    std::memcpy(buf.base, command.data(), buf.len);
    const int rv = raft_apply(&raft_, &request->apply, &buf, 1, [](struct raft_apply* req, int status, void* result) {
      auto* r = static_cast<Request*>(req->data);
      if (status != 0) {
        r->promise->set_value(RaftStatus(status, "replicated write"));
      } else if (result != nullptr) {
        r->promise->set_value(*static_cast<const Status*>(result));
      } else {
        r->promise->set_value(Status::OK());
      }
      delete r;
    });
    if (rv != 0) {
      raft_free(buf.base);
      delete request;
      promise->set_value(RaftStatus(rv, "replicated write"));
    }
  });
}

Status ReplicatedDBImpl::Barrier() {
  return Call("linearizable read", [this](std::shared_ptr<Promise> promise) {
    if (raft_state(&raft_) != RAFT_LEADER) return promise->set_value(NotLeader());
    struct Request {
      struct raft_barrier barrier;
      std::shared_ptr<Promise> promise;
    };
    auto* request = new Request{{}, promise};
    request->barrier.data = request;
    const int rv = raft_barrier(&raft_, &request->barrier, [](struct raft_barrier* req, int status) {
      auto* r = static_cast<Request*>(req->data);
      r->promise->set_value(status == 0 ? Status::OK() : RaftStatus(status, "read barrier"));
      delete r;
    });
    if (rv != 0) {
      delete request;
      promise->set_value(RaftStatus(rv, "read barrier"));
    }
  });
}

Status ReplicatedDBImpl::Get(const ReadOptions& options, ReadConsistency consistency, const Slice& key,
                             std::string* value) {
  if (replication::IsReservedKey(key)) return Status::NotFound(key, "a key reserved for the replication");
  if (consistency == ReadConsistency::kLinearizable) {
    Status s = Barrier();
    if (!s.ok()) return s;
  }
  return machine_->db()->Get(options, key, value);
}

std::unique_ptr<Iterator> ReplicatedDBImpl::NewIterator(const ReadOptions& options, ReadConsistency consistency) {
  if (consistency == ReadConsistency::kLinearizable) {
    Status s = Barrier();
    if (!s.ok()) return std::make_unique<UserKeyIterator>(s);
  }
  return std::make_unique<UserKeyIterator>(machine_->db(), options);
}

Status ReplicatedDBImpl::AddServer(const ReplicaServer& server) {
  if (server.id == 0 || server.address.empty()) return Status::InvalidArgument("AddServer", "id and address");
  return Call("AddServer", [this, server](std::shared_ptr<Promise> promise) {
    if (raft_state(&raft_) != RAFT_LEADER) return promise->set_value(NotLeader());
    struct Request {
      struct raft_change change;
      std::shared_ptr<Promise> promise;
      ReplicatedDBImpl* self;
      raft_id id;
    };
    auto* request = new Request{{}, promise, this, server.id};
    request->change.data = request;
    // Added as a spare, then promoted: raft catches it up before it votes.
    const int rv = raft_add(&raft_, &request->change, server.id, server.address.c_str(),
                            [](struct raft_change* req, int status) {
                              auto* r = static_cast<Request*>(req->data);
                              int rv = status;
                              if (rv == 0) {
                                rv = raft_assign(&r->self->raft_, &r->change, r->id, RAFT_VOTER,
                                                 [](struct raft_change* req2, int status2) {
                                                   auto* r2 = static_cast<Request*>(req2->data);
                                                   r2->promise->set_value(
                                                       status2 == 0 ? Status::OK() : RaftStatus(status2, "promote"));
                                                   delete r2;
                                                 });
                                if (rv == 0) return;
                              }
                              r->promise->set_value(RaftStatus(rv, "AddServer"));
                              delete r;
                            });
    if (rv != 0) {
      delete request;
      promise->set_value(RaftStatus(rv, "AddServer"));
    }
  });
}

Status ReplicatedDBImpl::RemoveServer(uint64_t id) {
  return Call("RemoveServer", [this, id](std::shared_ptr<Promise> promise) {
    if (raft_state(&raft_) != RAFT_LEADER) return promise->set_value(NotLeader());
    struct Request {
      struct raft_change change;
      std::shared_ptr<Promise> promise;
    };
    auto* request = new Request{{}, promise};
    request->change.data = request;
    const int rv = raft_remove(&raft_, &request->change, id, [](struct raft_change* req, int status) {
      auto* r = static_cast<Request*>(req->data);
      r->promise->set_value(status == 0 ? Status::OK() : RaftStatus(status, "RemoveServer"));
      delete r;
    });
    if (rv != 0) {
      delete request;
      promise->set_value(RaftStatus(rv, "RemoveServer"));
    }
  });
}

Status ReplicatedDBImpl::TransferLeadership(uint64_t id) {
  return Call("TransferLeadership", [this, id](std::shared_ptr<Promise> promise) {
    if (raft_state(&raft_) != RAFT_LEADER) return promise->set_value(NotLeader());
    struct Request {
      struct raft_transfer transfer;
      std::shared_ptr<Promise> promise;
      struct raft* raft;
    };
    auto* request = new Request{{}, promise, &raft_};
    request->transfer.data = request;
    // libraft reports the outcome only through this server's state: still
    // the leader means the transfer failed (the target did not win).
    const int rv = raft_transfer(&raft_, &request->transfer, id, [](struct raft_transfer* req) {
      auto* r = static_cast<Request*>(req->data);
      const bool moved = raft_state(r->raft) != RAFT_LEADER;
      r->promise->set_value(moved ? Status::OK()
                                  : Status::IOError("TransferLeadership", "the leadership did not move"));
      delete r;
    });
    if (rv != 0) {
      delete request;
      promise->set_value(RaftStatus(rv, "TransferLeadership"));
    }
  });
}

ReplicaStatus ReplicatedDBImpl::GetStatus() {
  // Filled on the loop thread; shared, since a timed-out call's task may
  // still run after this returns.
  auto status = std::make_shared<ReplicaStatus>();
  status->id = options_.self.id;
  status->role = "unavailable";
  const Status s = Call("status", [this, status](std::shared_ptr<Promise> promise) {
    status->role = RoleName(raft_state(&raft_));
    raft_id id = 0;
    const char* address = nullptr;
    raft_leader(&raft_, &id, &address);
    status->leader_id = id;
    status->leader_address = address != nullptr ? address : "";
    status->term = raft_.current_term;
    status->commit_index = raft_.commit_index;
    status->applied_index = raft_last_applied(&raft_);
    status->last_log_index = raft_.last_stored;
    for (unsigned i = 0; i < raft_.configuration.n; ++i) {
      const struct raft_server& server = raft_.configuration.servers[i];
      if (server.role == RAFT_VOTER) status->voters.push_back(ReplicaServer{server.id, server.address});
    }
    promise->set_value(Status::OK());
  });
  ReplicaStatus result;
  if (s.ok()) {
    result = *status;
  } else {  // timed out: the task may still run, so nothing of it is read
    result.id = options_.self.id;
    result.role = "unavailable";
  }
  result.db_applied_index = machine_->applied_index();
  result.snapshots_installed = machine_->restores();
  return result;
}

}  // namespace

}  // namespace jigsaw
