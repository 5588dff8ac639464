#!/usr/bin/env bash
# The main job, on DRAM-emulated pmem (/dev/shm):
#   1. jigsaw_bench: the JigsawDB paper's workload (fillseq, fillsync,
#      fillrandom, overwrite, readrandom, readseq, readrandom, readseq;
#      16-byte keys, 100-byte values) on JigsawDB, LevelDB, RocksDB and LMDB,
#      all on /dev/shm, with throughput ratios; then JigsawDB again under the
#      Optane timing model (its pmem made as slow as Optane DCPMM: random
#      reads, read and write bandwidth), printed beside the first run; and
#      floor_bench: the machine's floor for each workload beside JigsawDB's
#      figures of the first run; with --scale=10m (or --scale=N entries) the
#      same workload at that scale on JigsawDB and LMDB, 1M reads; and every
#      engine in disk mode, tables uncompressed and then compressed with its
#      own codec, with each engine's bytes on disk per entry; and two
#      threads on JigsawDB, LevelDB and LMDB: YCSB A-F and readwhilewriting,
#      that once more with every engine's writer at the same rate;
#   2. jigsaw_profile: the conversion-cost profiler -- the same workload in
#      {Disk+NVM, Disk only} x {KeySet, classic tables in every tier} with
#      every compaction timed by phase, against LevelDB on the disk and on
#      /dev/shm, SSD tables on the local disk; at 100,000 (the paper's
#      size) and 1,000,000 entries (10,000,000 too when asked, see
#      JIGSAW_PROFILE_NUMS below);
#   3. format_bench: the KeySet block against the classic block;
#   4. the bindings' point reads: Python's get and Node's getSync beside the
#      C++ Get on the same open database (bindings/*/bench.*).
#   5. scripts/report.py: out/report.md (every table, every target met or
#      missed), and the results README.md and docs/performance.md quote.
# Results: out/report.md, out/jigsaw_bench.json, out/jigsaw_bench_optane.json, out/floor_bench.json,
# out/jigsaw_bench_scale.json (--scale), out/jigsaw_bench_disk_{none,default}.json,
# out/jigsaw_bench_threads{,_paced}.json, out/bench-*.png,
# out/jigsaw_profile-<num>.{json,csv}, out/profile-<num>-*.png,
# out/format_bench.json, out/bindings_{python,node}.json.
# Other arguments go to format_bench. Installs missing Debian packages
# first (needs root or sudo).
# Environment: JIGSAW_NUM (default 1000000) entries for jigsaw_bench,
# JIGSAW_PROFILE_NUMS (default "100000 1000000"; e.g. "100000 1000000
# 10000000") the scales of jigsaw_profile.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
jobs=${JIGSAW_JOBS:-$(nproc)}
num=${JIGSAW_NUM:-1000000}
scale=
args=()
for arg in "$@"; do
  case $arg in
    --scale=10m) scale=10000000 ;;
    --scale=*) scale=${arg#--scale=} ;;
    *) args+=("$arg") ;;
  esac
done
if [[ -n $scale && ! $scale =~ ^[0-9]+$ ]]; then
  echo "run-main.sh: --scale takes 10m or a number of entries" >&2
  exit 2
fi
profile_nums=${JIGSAW_PROFILE_NUMS:-100000 1000000}
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DJIGSAW_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$jobs" --target jigsaw_bench jigsaw_profile format_bench floor_bench >/dev/null
# The bindings in a tree of their own: they need the library compiled
# position-independent, which the benchmarks above do not use.
(cd bindings/node && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
cmake -S . -B build/bindings -DCMAKE_BUILD_TYPE=Release -DJIGSAW_BUILD_TESTS=OFF -DJIGSAW_BUILD_BENCH=OFF \
  -DJIGSAW_BUILD_PYTHON=ON -DJIGSAW_BUILD_NODE=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build/bindings -j "$jobs" --target _jigsawdb jigsaw_level >/dev/null
# The build's files reach the disk before anything is timed: their writeback
# would otherwise share the two cores with the first engine's run.
sync
mkdir -p out
workdir=/dev/shm/jigsaw-main-job
diskdir=${TMPDIR:-/var/tmp}/jigsaw-main-job-disk
rm -rf "$workdir" "$diskdir"
trap 'rm -rf "$workdir" "$diskdir"' EXIT

echo "JigsawDB main job on $(uname -n): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
echo "== jigsaw_bench: the paper's workload, $num entries, all engines on /dev/shm =="
build/release/bench/jigsaw_bench --num="$num" --engines=jigsaw,leveldb,rocksdb,lmdb --db="$workdir/db" \
  --peer_dir="$workdir/peers" --json=out/jigsaw_bench.json
echo
echo "== jigsaw_bench: JigsawDB on pmem under the Optane timing model (docs/emulation.md), beside the run above =="
rm -rf "$workdir/db"
build/release/bench/jigsaw_bench --num="$num" --engines=jigsaw --timing_model=optane --db="$workdir/db" \
  --json=out/jigsaw_bench_optane.json --compare_json=out/jigsaw_bench.json
echo
if [[ -n $scale ]]; then
  echo "== jigsaw_bench: the same workload at $scale entries (1M reads), JigsawDB and LMDB on /dev/shm =="
  rm -rf "$workdir/db" "$workdir/peers"
  build/release/bench/jigsaw_bench --num="$scale" --reads=1000000 --engines=jigsaw,lmdb --db="$workdir/db" \
    --peer_dir="$workdir/peers" --json=out/jigsaw_bench_scale.json | sed -n '/^engine/,$p'
  rm -rf "$workdir/db" "$workdir/peers"
  echo
fi
echo "== jigsaw_bench: disk mode in $diskdir, values half compressible, tables uncompressed then compressed =="
# Each engine's own codec (JigsawDB LZ4, LevelDB and RocksDB Snappy; LMDB
# has none), and each engine's bytes on disk per entry.
for compression in none default; do
  build/release/bench/jigsaw_bench --num="$num" --engines=jigsaw,leveldb,rocksdb,lmdb --mode=disk \
    --compression="$compression" --compression_ratio=0.5 --benchmarks=fillrandom,readrandom,seekrandom,readseq \
    --db="$diskdir/db" --peer_dir="$diskdir/peers" --json="out/jigsaw_bench_disk_$compression.json" |
    sed -n '/^engine/,$p'
  rm -rf "$diskdir"
done
echo
echo "== jigsaw_bench: two threads, YCSB A-F and readwhilewriting, JigsawDB, LevelDB and LMDB on /dev/shm =="
# readwhilewriting as db_bench runs it (each writer as fast as it can), then
# again with every writer at 5 MB/s, well below what each reaches beside
# two readers here, so that every engine's readers share the machine with
# the same writes. A million operations per workload: shorter runs move
# with the compactions a fill leaves owed.
rm -rf "$workdir/db" "$workdir/peers"
build/release/bench/jigsaw_bench --num="$num" --threads=2 --engines=jigsaw,leveldb,lmdb \
  --db="$workdir/db" --peer_dir="$workdir/peers" --histogram=0 \
  --benchmarks=fillrandom,ycsba,ycsbb,ycsbc,ycsbd,ycsbe,ycsbf,readwhilewriting \
  --json=out/jigsaw_bench_threads.json | sed -n '/^engine/,$p'
rm -rf "$workdir/db" "$workdir/peers"
build/release/bench/jigsaw_bench --num="$num" --threads=2 --engines=jigsaw,leveldb,lmdb \
  --db="$workdir/db" --peer_dir="$workdir/peers" --histogram=0 --benchmark_write_rate_limit=5000000 \
  --benchmarks=fillrandom,readwhilewriting --json=out/jigsaw_bench_threads_paced.json | sed -n '/^engine/,$p'
rm -rf "$workdir/db" "$workdir/peers"
echo
echo "== floor_bench: what this machine allows for each workload, beside JigsawDB's run above =="
build/release/bench/floor_bench --dir="$workdir" --compare_json=out/jigsaw_bench.json --json=out/floor_bench.json
echo
for profile_num in $profile_nums; do
  echo "== jigsaw_profile: conversion cost, $profile_num entries, SSD tables in $diskdir =="
  # The on/off comparison of profiling's cost runs at the smallest scale only.
  overhead=$([[ $profile_num == "${profile_nums%% *}" ]] && echo 1 || echo 0)
  build/release/bench/jigsaw_profile --num="$profile_num" --dir="$diskdir" --pmem_path="$workdir/profile.pool" \
    --overhead="$overhead" --json="out/jigsaw_profile-$profile_num.json" --csv="out/jigsaw_profile-$profile_num.csv" \
    --plot="out/profile-$profile_num" 2>/dev/null
  rm -rf "$diskdir"
  echo
done
echo "== format_bench: one 4 MiB block, KeySet vs classic =="
build/release/bench/format_bench --benchmark_out=out/format_bench.json --benchmark_out_format=json \
  --benchmark_color=false "${args[@]}" | sed -n '/^Summary/,$p'
echo
echo "== bindings: a point read through Python and Node beside the C++ Get on the same database, $num entries =="
mkdir -p "$workdir"
PYTHONPATH=build/bindings/bindings/python /usr/bin/python3 -P bindings/python/bench.py --num="$num" --dir="$workdir" \
  --json=out/bindings_python.json
(cd bindings/node && JIGSAW_LEVEL_ADDON="$PWD/../../build/bindings/bindings/node/jigsaw_level.node" \
  node bench.js --num "$num" --dir "$workdir" --json ../../out/bindings_node.json)
echo
# The report, and the generated results in README.md and docs/performance.md.
/usr/bin/python3 scripts/report.py out --docs
echo
echo "Full results: out/report.md; out/jigsaw_bench.json, out/jigsaw_bench_optane.json, out/floor_bench.json,"
echo "out/jigsaw_bench_disk_{none,default}.json, out/jigsaw_bench_scale.json (--scale), out/bench-*.png,"
echo "out/jigsaw_bench_threads{,_paced}.json,"
echo "out/jigsaw_profile-<num>.{json,csv}, out/profile-<num>-*.png, out/format_bench.json,"
echo "out/bindings_python.json, out/bindings_node.json"
