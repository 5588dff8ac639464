// A pipe whose buffer is full and that nobody reads: an io_uring write to it
// never completes (the kernel waits for room that never comes). Tests hand
// it to ssd::PosixFileSystemOptions::ring_target_for_test.
#ifndef JIGSAW_TESTS_FULL_PIPE_H_
#define JIGSAW_TESTS_FULL_PIPE_H_

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>

#include <gtest/gtest.h>

namespace jigsaw::test {

class FullPipe {
 public:
  FullPipe() {
    // Should a write the engine gave up still be pending when the read end
    // closes, it would fail with SIGPIPE.
    old_sigpipe_ = std::signal(SIGPIPE, SIG_IGN);
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    const std::string chunk(4096, 'p');
    while (::write(write_fd_, chunk.data(), chunk.size()) > 0) {
    }
    EXPECT_EQ(errno, EAGAIN);
    // Blocking again: io_uring fails a write to a non-blocking descriptor
    // with EAGAIN at once instead of waiting for room.
    EXPECT_EQ(::fcntl(write_fd_, F_SETFL, ::fcntl(write_fd_, F_GETFL) & ~O_NONBLOCK), 0);
  }
  ~FullPipe() {
    ::close(write_fd_);
    ::close(read_fd_);
    std::signal(SIGPIPE, old_sigpipe_);
  }
  FullPipe(const FullPipe&) = delete;
  FullPipe& operator=(const FullPipe&) = delete;

  int write_fd() const { return write_fd_; }

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  void (*old_sigpipe_)(int) = SIG_DFL;
};

}  // namespace jigsaw::test

#endif  // JIGSAW_TESTS_FULL_PIPE_H_
