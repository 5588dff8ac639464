#!/usr/bin/env bash
# Smoke test of jigsaw_profile: a workload big enough to compact must show
# flushes and compactions in the report and the JSON (an empty report once
# went unnoticed when the engine's profile gained a column). Memtables of
# 512 KiB give each database ~26 flushes, more L0 blocks than the stop
# trigger (12), so every configuration compacts however the machine's load
# delays the background thread (with 4 MiB memtables a loaded run once
# ended before its one due compaction started).
# Usage: profile_smoke_test.sh <jigsaw_profile binary> <scratch dir>
set -euo pipefail
profile=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
trap 'rm -rf "$scratch" /dev/shm/jigsaw-profile-smoke-$$.pool' EXIT
"$profile" --num=50000 --write_buffer_size=524288 --dir="$scratch/disk" --pmem_path=/dev/shm/jigsaw-profile-smoke-$$.pool --leveldb=0 \
  --overhead=0 --configs disk/keyset disk+nvm/classic --json="$scratch/p.json" --csv="$scratch/p.csv" \
  >"$scratch/report.txt" 2>"$scratch/stderr.txt" ||
  { cat "$scratch/report.txt" "$scratch/stderr.txt"; echo "profile_smoke_test: jigsaw_profile failed" >&2; exit 1; }
cat "$scratch/report.txt"
fail() { cat "$scratch/stderr.txt" >&2; echo "profile_smoke_test: $*" >&2; exit 1; }
[[ $(grep -cE '"compactions": [1-9]' "$scratch/p.json") -eq 2 ]] || fail "a configuration reported no compactions"
[[ $(grep -cE '"flushes": [1-9]' "$scratch/p.json") -eq 2 ]] || fail "a configuration reported no flushes"
# Header plus at least one row per configuration.
[[ $(wc -l <"$scratch/p.csv") -ge 3 ]] || fail "the CSV holds no profile rows"
# A pmem budget that keeps no level below L0 is refused, naming the smallest
# useful one (6 MiB of L0 at its stop trigger + 10 MiB of L1).
if "$profile" --num=1000 --write_buffer_size=524288 --pmem_budget_mb=8 --dir="$scratch/disk" --leveldb=0 \
     --overhead=0 --configs disk+nvm/keyset >"$scratch/small.txt" 2>&1; then
  fail "--pmem_budget_mb=8 was accepted"
fi
grep -q "the smallest budget that keeps L1 is 16 MiB" "$scratch/small.txt" || { cat "$scratch/small.txt"; fail "no smallest budget named"; }
echo "profile_smoke_test: ok"
