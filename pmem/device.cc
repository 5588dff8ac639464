#include "pmem/device.h"

#include <daxctl/libdaxctl.h>
#include <ndctl/libndctl.h>
#include <numa.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>

namespace jigsaw::pmem {

namespace {

const char* ModeName(enum ndctl_namespace_mode mode) {
  switch (mode) {
    case NDCTL_NS_MODE_FSDAX: return "fsdax";
    case NDCTL_NS_MODE_DEVDAX: return "devdax";
    case NDCTL_NS_MODE_SECTOR: return "sector";
    case NDCTL_NS_MODE_RAW: return "raw";
    default: return "unknown";
  }
}

std::string DevicePath(struct ndctl_namespace* ndns) {
  const char* block = ndctl_namespace_get_block_device(ndns);
  if (block != nullptr && block[0] != '\0') return std::string("/dev/") + block;
  if (struct ndctl_pfn* pfn = ndctl_namespace_get_pfn(ndns)) {
    const char* dev = ndctl_pfn_get_block_device(pfn);
    if (dev != nullptr && dev[0] != '\0') return std::string("/dev/") + dev;
  }
  if (struct ndctl_dax* dax = ndctl_namespace_get_dax(ndns)) {
    struct daxctl_region* region = ndctl_dax_get_daxctl_region(dax);
    struct daxctl_dev* dev;
    daxctl_dev_foreach(region, dev) {
      const char* name = daxctl_dev_get_devname(dev);
      if (name != nullptr) return std::string("/dev/") + name;
    }
  }
  return "";
}

}  // namespace

std::vector<PmemDevice> ListPmemDevices() {
  std::vector<PmemDevice> devices;
  struct ndctl_ctx* ctx = nullptr;
  if (ndctl_new(&ctx) != 0 || ctx == nullptr) return devices;
  struct ndctl_bus* bus;
  ndctl_bus_foreach(ctx, bus) {
    struct ndctl_region* region;
    ndctl_region_foreach(bus, region) {
      struct ndctl_namespace* ndns;
      ndctl_namespace_foreach(region, ndns) {
        if (!ndctl_namespace_is_enabled(ndns)) continue;
        PmemDevice d;
        d.namespace_name = ndctl_namespace_get_devname(ndns);
        d.mode = ModeName(ndctl_namespace_get_mode(ndns));
        d.device_path = DevicePath(ndns);
        d.size = ndctl_namespace_get_size(ndns);
        d.numa_node = ndctl_namespace_get_numa_node(ndns);
        devices.push_back(std::move(d));
      }
    }
  }
  ndctl_unref(ctx);
  return devices;
}

int NumaNodeForPath(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  // A device-DAX node is itself a character device; a file lives on st_dev.
  const bool char_device = S_ISCHR(st.st_mode);
  const dev_t dev = char_device ? st.st_rdev : st.st_dev;
  const std::string sysfs = std::string("/sys/dev/") + (char_device ? "char/" : "block/") +
                            std::to_string(major(dev)) + ":" + std::to_string(minor(dev)) + "/device/numa_node";
  std::ifstream in(sysfs);
  int node = -1;
  if (!(in >> node)) return -1;
  return node;
}

int NumaNodeCount() {
  if (numa_available() < 0) return 1;
  return numa_num_configured_nodes();
}

bool BindThreadToNode(int node) {
  if (node < 0 || NumaNodeCount() < 2 || node > numa_max_node()) return false;
  numa_run_on_node(node);
  numa_set_preferred(node);
  return true;
}

}  // namespace jigsaw::pmem
