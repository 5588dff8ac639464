#!/usr/bin/env bash
# Installs an already built JigsawDB into a temporary prefix and builds and
# runs a small program against it twice: through the CMake package
# (find_package(jigsaw), jigsaw::jigsaw) and through pkg-config (jigsaw.pc,
# static linking). Usage: scripts/check-install.sh <build directory>
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: $0 <build directory>}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/jigsaw/db.h"
if find "$prefix/include" -name '*.h' | grep -v '/jigsaw/' | grep -q .; then
  echo "check-install: headers outside include/jigsaw/ were installed" >&2
  exit 1
fi

echo "check-install: find_package(jigsaw)"
cmake -S tests/consumer -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer"

echo "check-install: pkg-config --static jigsaw"
pcdir=$(dirname "$(find "$prefix" -name jigsaw.pc | head -n 1)")
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs --static jigsaw)
# shellcheck disable=SC2086
c++ -std=c++20 tests/consumer/main.cc -o "$work/consumer-pc" $flags
"$work/consumer-pc"
