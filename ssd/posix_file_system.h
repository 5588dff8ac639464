// The POSIX FileSystem (ssd/posix_file_system.cc) with settings of its own:
// FileSystem::Default() uses the defaults; tests shorten the wait bound and
// substitute a ring that never completes.
#ifndef JIGSAW_SSD_POSIX_FILE_SYSTEM_H_
#define JIGSAW_SSD_POSIX_FILE_SYSTEM_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "jigsaw/file_system.h"
#include "ssd/io_engine.h"

namespace jigsaw::ssd {

struct PosixFileSystemOptions {
  // How long a table file waits for an io_uring write before it gives the
  // ring up (ssd/io_engine.h): the bytes in flight are written again with
  // pwrite at their offsets, buffers the kernel may still read are never
  // freed, the file continues with pwrite, and the file system's later table
  // files do not use io_uring.
  std::chrono::nanoseconds uring_wait_bound = kDefaultUringWaitBound;
  // Test seam. Called, from the thread opening it, once per table file that
  // sets up a ring (async_io, io_uring usable, not given up): returns the
  // descriptor that file's ring writes to instead of its own (a full pipe
  // nobody reads makes a write that never completes), or -1 for its own.
  // pwrite always goes to the file. The descriptor stays the caller's and
  // must stay open while the file system lives. Null: the file's own.
  std::function<int(const std::string& path)> ring_target_for_test;
};

// A POSIX file system of its own (FileSystem::Default() is one with default
// options). Thread-safety: as FileSystem.
std::unique_ptr<FileSystem> NewPosixFileSystem(PosixFileSystemOptions options);

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_POSIX_FILE_SYSTEM_H_
