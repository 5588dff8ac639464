#!/usr/bin/env bash
# Installs an already built JigsawDB into a temporary prefix and builds and
# runs a small program against it twice: through the CMake package
# (find_package(jigsaw), jigsaw::jigsaw) and through pkg-config (jigsaw.pc;
# --static, which a shared install ignores). Fails if a header outside
# include/jigsaw/ is installed, or, for a shared library, if it exports a
# jigsaw:: name that include/jigsaw/ does not declare.
# Usage: scripts/check-install.sh <build directory>
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: $0 <build directory>}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

fail() {
  echo "check-install: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/jigsaw/db.h" || fail "include/jigsaw/db.h not installed"
if find "$prefix/include" -type f | grep -v "^$prefix/include/jigsaw/" | grep -q .; then
  fail "files outside include/jigsaw/ were installed: $(find "$prefix/include" -type f | grep -v "^$prefix/include/jigsaw/")"
fi
pc=$(find "$prefix" -name jigsaw.pc)
[[ -n $pc ]] || fail "jigsaw.pc not installed"
libdir=$(dirname "$(dirname "$pc")")

so=$(find "$libdir" -maxdepth 1 -name 'libjigsaw.so.*' -type f)
if [[ -n $so ]]; then
  kind=shared
  # Every exported jigsaw:: name must be one of include/jigsaw/'s.
  public=$(cat include/jigsaw/*.h)
  while read -r name; do
    grep -qw -- "$name" <<<"$public" || fail "$so exports internal name jigsaw::$name"
  done < <(nm -D --defined-only -C "$so" | grep -oE 'jigsaw::[A-Za-z_][A-Za-z0-9_]*' | sed 's/^jigsaw:://' | sort -u)
  echo "check-install: $(nm -D --defined-only "$so" | wc -l) dynamic symbols exported, all of the public API"
else
  kind=static
  test -f "$libdir/libjigsaw.a" || fail "no libjigsaw installed in $libdir"
fi

if [[ -d tools && -f "$build/tools/jigsaw" ]]; then
  test -x "$prefix/bin/jigsaw" || fail "the jigsaw tool was built but not installed"
  "$prefix/bin/jigsaw" --version >/dev/null || fail "the installed jigsaw tool does not run"
  echo "check-install: bin/jigsaw $("$prefix/bin/jigsaw" --version)"
fi

echo "check-install: find_package(jigsaw), $kind library"
cmake -S tests/consumer -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer"

echo "check-install: pkg-config --static jigsaw, $kind library"
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs --static jigsaw)
# shellcheck disable=SC2086
c++ -std=c++20 tests/consumer/main.cc -o "$work/consumer-pc" $flags
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$work/consumer-pc"

echo "check-install: the C API from C99, pkg-config --static jigsaw, $kind library"
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wpedantic -Werror tests/consumer/c_main.c -o "$work/c-consumer-pc" $flags
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$work/c-consumer-pc"
