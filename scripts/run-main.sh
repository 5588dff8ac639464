#!/usr/bin/env bash
# The main job, on DRAM-emulated pmem (/dev/shm):
#   1. jigsaw_bench: the JigsawDB paper's workload (fillseq, fillsync,
#      fillrandom, overwrite, readrandom, readseq, readrandom, readseq;
#      16-byte keys, 100-byte values) on JigsawDB, LevelDB and RocksDB, all
#      on /dev/shm, with throughput ratios;
#   2. format_bench: the KeySet block against the classic block.
# Results: out/jigsaw_bench.json, out/format_bench.json.
# Installs missing Debian packages first (needs root or sudo).
# Environment: JIGSAW_NUM (default 1000000) entries for jigsaw_bench.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
jobs=${JIGSAW_JOBS:-$(nproc)}
num=${JIGSAW_NUM:-1000000}
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DJIGSAW_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$jobs" --target jigsaw_bench format_bench >/dev/null
mkdir -p out
workdir=/dev/shm/jigsaw-main-job
rm -rf "$workdir"
trap 'rm -rf "$workdir"' EXIT

echo "JigsawDB main job on $(uname -n): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
echo "== jigsaw_bench: the paper's workload, $num entries, all engines on /dev/shm =="
build/release/bench/jigsaw_bench --num="$num" --db="$workdir/db" --peer_dir="$workdir/peers" \
  --json=out/jigsaw_bench.json
echo
echo "== format_bench: one 4 MiB block, KeySet vs classic =="
build/release/bench/format_bench --benchmark_out=out/format_bench.json --benchmark_out_format=json \
  --benchmark_color=false "$@" | sed -n '/^Summary/,$p'
echo
echo "Full results: out/jigsaw_bench.json, out/format_bench.json"
