#!/usr/bin/env bash
# The main job: builds JigsawDB (Release) and runs the format benchmark --
# the KeySet block against the classic LevelDB-style block -- printing a
# readable summary. Results: out/format_bench.json (Google Benchmark JSON).
# Installs missing Debian packages first (needs root or sudo).
# Extra arguments go to format_bench (e.g. --benchmark_filter=Get).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
jobs=${JIGSAW_JOBS:-$(nproc)}
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DJIGSAW_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$jobs" --target format_bench >/dev/null
mkdir -p out

echo "JigsawDB format benchmark on $(uname -n): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "One block of 4 MiB of entries (16-byte keys, 100-byte values), built and read in DRAM."
echo
build/release/bench/format_bench --benchmark_out=out/format_bench.json --benchmark_out_format=json \
  --benchmark_color=false "$@"
echo
echo "Full results: out/format_bench.json"
