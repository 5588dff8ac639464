#!/usr/bin/env bash
# The test command: builds JigsawDB and runs the whole test suite.
#   1. unit tests (gcc, optimised, assertions on), then
#      scripts/check-install.sh on that build (the installed static library
#      used through find_package and pkg-config), then the Python binding's
#      pytest suite (bindings/python, built in the same tree)
#   2. the same tests built with clang under AddressSanitizer + UBSan (but the
#      two every-persist-point power-failure workloads)
#   3. the concurrency tests under ThreadSanitizer (gcc)
#   4. short libFuzzer runs (the clang build of step 2): both block readers,
#      then the engine over damaged database files (tests/fuzz/)
#   and, first, scripts/check-layering.sh (the folders' include rule) and
#   scripts/check-size.sh (file and function sizes)
# Installs missing Debian packages first (needs root or sudo).
# Environment: JIGSAW_FUZZ_SECONDS (default 60), JIGSAW_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
jobs=${JIGSAW_JOBS:-$(nproc)}
fuzz_seconds=${JIGSAW_FUZZ_SECONDS:-60}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

section() { printf '\n=== %s ===\n' "$*"; }

section "layering: no folder includes one above it, only format/ names KeySet versions (docs/architecture.md)"
layering_status=passed
./scripts/check-layering.sh || layering_status=failed

section "sizes: files, functions, README and docs a newcomer can read (docs/architecture.md)"
size_status=passed
./scripts/check-size.sh || size_status=failed

# A failing test step does not stop the later ones: every step runs, and
# the closing line counts what failed.
ctest_status=passed
section "unit tests (gcc, RelWithDebInfo with assertions)"
# The Python binding is built here too (its module links this library,
# compiled position-independent for it), with Debian's interpreter.
cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJIGSAW_BUILD_PYTHON=ON \
  -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build/test -j "$jobs"
ctest --test-dir build/test -j "$jobs" --output-on-failure | tee -a "$log" || ctest_status=failed

section "install: find_package(jigsaw) and pkg-config consumers of the installed library"
install_status=passed
./scripts/check-install.sh build/test | tee -a "$log" || install_status=failed

section "Python binding: pytest (bindings/python/tests) in pmem, hybrid and disk mode"
python_log=build/test/pytest.log
PYTHONPATH=build/test/bindings/python /usr/bin/python3 -m pytest -q -p no:cacheprovider bindings/python/tests \
  2>&1 | tee "$python_log" || true
# pytest's last line: "N passed", "F failed, N passed", "E errors" ... in S s
summary=$(tail -n 1 "$python_log")
python_passed=$({ grep -oE "[0-9]+ passed" <<<"$summary" || true; } | awk '{s += $1} END {print s + 0}')
python_failed=$({ grep -oE "[0-9]+ (failed|errors?)" <<<"$summary" || true; } | awk '{s += $1} END {print s + 0}')
if [[ $python_passed -eq 0 && $python_failed -eq 0 ]]; then python_failed=1; fi  # pytest did not run

section "unit tests under ASan + UBSan (clang), with fuzz targets"
CC=clang CXX=clang++ cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DJIGSAW_SANITIZE=address -DJIGSAW_BUILD_FUZZERS=ON -DJIGSAW_BUILD_BENCH=OFF >/dev/null
cmake --build build/asan -j "$jobs"
# Every test but the two every-persist-point power-failure workloads (over
# six minutes each here; step 1 runs them, and the sampled one runs here).
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan -j "$jobs" -E "PowerFailureHarnessTest\.EveryPersistPoint" --output-on-failure |
  tee -a "$log" || ctest_status=failed

section "concurrency tests under ThreadSanitizer"
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJIGSAW_SANITIZE=thread -DJIGSAW_BUILD_BENCH=OFF >/dev/null
cmake --build build/tsan -j "$jobs" --target db_concurrency_test db_concurrency_model_test db_read_lifetime_test memtable_test ssd_tier_test keyset_v2_test buffer_recycler_test checkpoint_test transaction_log_test ingest_test range_delete_test
# ssd_tier_test: the durability tracker's thread against compactions;
# keyset_v2_test: readers racing to build a block's hash index.
# buffer_recycler_test: scan windows taken and returned on several threads.
# db_read_lifetime_test: readers holding blocks and tables that compactions
# replace.
# checkpoint_test: checkpoints made while a writer runs and tables are
# flushed and compacted under them.
# transaction_log_test: a follower reading the change feed's live logs
# while the primary writes, flushes and archives them.
# ingest_test: ingests beside a writer and a scanning reader.
# range_delete_test: range deletes beside scanning readers, snapshots and
# compactions that drop what they delete and the spent tombstones.
# db_concurrency_model_test: writers' atomic groups against readers that
# check every view with the history (JIGSAW_MODEL_BATCHES and
# JIGSAW_MODEL_ROUNDS run it longer).
TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build/tsan \
  -R "Concurrency|ConcurrencyModel|ReadLifetime|MemTable|MemtableWrites|SsdTierTest\.(Tracker|CompactionOutputs|Unsynced|Migrat|PmemBlocks)|HashIndexTest\.Concurrent|CheckpointTest\.CheckpointsWhileAWriter|TransactionLogTest\.AFollower|IngestTest\.IngestsBeside|RangeDeleteTest\.ConcurrentReaders" \
  --output-on-failure | tee -a "$log" || ctest_status=failed

section "libFuzzer: block readers for ${fuzz_seconds}s"
corpus=build/asan/fuzz-corpus
mkdir -p "$corpus"
build/asan/tests/block_fuzz_seeds "$corpus"
fuzz_status=passed
if ! build/asan/tests/block_fuzzer -max_total_time="$fuzz_seconds" -max_len=8192 -print_final_stats=1 \
      -artifact_prefix=build/asan/ "$corpus" 2>build/asan/fuzz.log; then
  fuzz_status=failed
  tail -n 40 build/asan/fuzz.log
fi
grep -E "^(stat::number_of_executed_units|Done)" build/asan/fuzz.log || true

section "libFuzzer: the engine over damaged database files for ${fuzz_seconds}s"
db_corpus=build/asan/db-files-corpus
mkdir -p "$db_corpus"
db_fuzz_status=passed
if ! ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      build/asan/tests/db_files_fuzzer -max_total_time="$fuzz_seconds" -timeout=60 -max_len=128 -len_control=0 \
      -print_final_stats=1 -artifact_prefix=build/asan/ "$db_corpus" 2>build/asan/db-files-fuzz.log; then
  db_fuzz_status=failed
  tail -n 60 build/asan/db-files-fuzz.log
fi
grep -E "^(db_files_fuzzer|stat::number_of_executed_units|Done)" build/asan/db-files-fuzz.log || true

# One closing line for the whole suite.
passed=0
failed=0
while read -r _ _ _ f _ _ _ _ total; do
  passed=$((passed + total - f))
  failed=$((failed + f))
done < <(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$log" |
         sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/x x x \1 x x x x \2/')
passed=$((passed + python_passed))
failed=$((failed + python_failed))
for status in "$fuzz_status" "$db_fuzz_status" "$layering_status" "$size_status" "$install_status"; do
  if [[ $status == passed ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
# A ctest run that failed without a failure in its summary (it could not
# list or start the tests) still fails the suite.
if [[ $ctest_status == failed && $failed -eq 0 ]]; then failed=1; fi
echo
echo "jigsaw: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
