// Discovery of persistent-memory devices (libndctl/libdaxctl) and of the
// NUMA node that backs a pool path, for placing background threads and
// emulated-pmem pages near the memory they touch.
//
// Everything here degrades gracefully: on a machine without NVDIMMs (or
// without permission to read them) the device list is empty and the NUMA
// node is -1, never an error.
#ifndef JIGSAW_PMEM_DEVICE_H_
#define JIGSAW_PMEM_DEVICE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace jigsaw::pmem {

struct PmemDevice {
  std::string namespace_name;  // e.g. "namespace0.0"
  std::string mode;            // "fsdax", "devdax", "sector", "raw" or "unknown"
  std::string device_path;     // e.g. "/dev/pmem0" or "/dev/dax0.0"; empty if none
  uint64_t size = 0;           // bytes
  int numa_node = -1;          // -1 if unknown
};

// Every enabled pmem namespace libndctl reports (empty without NVDIMMs).
std::vector<PmemDevice> ListPmemDevices();

// The NUMA node of the device holding `path` (a file on a DAX filesystem or a
// device-DAX node), from sysfs; -1 for tmpfs, other filesystems or unknown.
int NumaNodeForPath(const std::string& path);

// Number of NUMA nodes with memory (1 where libnuma is unavailable).
int NumaNodeCount();

// Binds the calling thread's CPUs and memory preference to `node`; no-op for
// node < 0 or a single-node machine. Returns true if it bound.
bool BindThreadToNode(int node);

}  // namespace jigsaw::pmem

#endif  // JIGSAW_PMEM_DEVICE_H_
