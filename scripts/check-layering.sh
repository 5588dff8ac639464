#!/usr/bin/env bash
# Checks the engine's layering (docs/architecture.md): a folder includes only
# the folders listed for it. Exits 1 naming every violation.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A allowed=(
  [util]="jigsaw util"
  [format]="jigsaw util format"
  [table]="jigsaw util format table"
  [pmem]="jigsaw util format table pmem"
  [ssd]="jigsaw util format table ssd"
  [version]="jigsaw util format table pmem ssd version"
  [compaction]="jigsaw util format table pmem ssd version compaction"
  [db]="jigsaw util format table pmem ssd version compaction db"
  [emulation]="jigsaw util emulation"
  # The command-line tool sits above the engine: it may include any of it.
  [tools]="jigsaw util format table pmem ssd version compaction db tools"
)

status=0
for folder in "${!allowed[@]}"; do
  [[ -d $folder ]] || continue
  while IFS=: read -r file _ include; do
    target=${include#*\"}
    target=${target%%/*}
    if [[ " ${allowed[$folder]} " != *" $target "* ]]; then
      echo "layering: $file includes \"${include#*\"}" >&2
      status=1
    fi
  done < <(grep -Hn '^#include "' "$folder"/*.h "$folder"/*.cc 2>/dev/null || true)
done
[[ $status -eq 0 ]] && echo "layering: ok"
exit $status
