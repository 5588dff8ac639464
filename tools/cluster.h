// `jigsaw --cluster host:port,... <command>`: the replicated database's
// client commands (tools/cluster.cc).
#ifndef JIGSAW_TOOLS_CLUSTER_H_
#define JIGSAW_TOOLS_CLUSTER_H_

#include "tools/tool.h"

namespace jigsaw::tool {

// Parses and runs a command line whose first argument is --cluster;
// returns the exit code.
int ClusterMain(int argc, char** argv);

}  // namespace jigsaw::tool

#endif  // JIGSAW_TOOLS_CLUSTER_H_
