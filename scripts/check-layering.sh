#!/usr/bin/env bash
# Checks the engine's layering (docs/architecture.md): a folder includes only
# the folders listed for it, and only format/ names the KeySet format's
# versions. Exits 1 naming every violation.
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
  # The optional replication module sits on the engine's public API, its
  # batch encoding (db/write_batch_internal.h) and its atomic file
  # replacement (version/filename.h).
  [replication]="jigsaw util version db replication"
  # The command-line tools sit above the engine. Of the engine they see only
  # the files' names and the IDENTITY record (tools_engine_headers below);
  # its tables they read through the public API or the table-level folders.
  [tools]="jigsaw util format table pmem ssd version db tools"
)
tools_engine_headers="version/filename.h db/db_identity.h"

# The engine proper lives under src/; its folders are included by their
# own names ("db/db_impl.h"), src/ being on the include path.
declare -A path=([version]=src/version [compaction]=src/compaction [db]=src/db [replication]=src/replication)

status=0
for folder in "${!allowed[@]}"; do
  dir=${path[$folder]:-$folder}
  [[ -d $dir ]] || continue
  while IFS=: read -r file _ include; do
    target=${include#*\"}
    target=${target%%/*}
    if [[ " ${allowed[$folder]} " != *" $target "* ]]; then
      echo "layering: $file includes \"${include#*\"}" >&2
      status=1
    fi
  done < <(grep -Hn '^#include "' "$dir"/*.h "$dir"/*.cc 2>/dev/null || true)
done

# The tools never reach into the engine's state (DBImpl, versions).
while IFS=: read -r file _ include; do
  target=${include#*\"}
  target=${target%\"*}
  if [[ " $tools_engine_headers " != *" $target "* ]]; then
    echo "layering: $file includes \"$target\" (tools read the engine through include/jigsaw/)" >&2
    status=1
  fi
done < <(grep -Hn '^#include "\(db\|version\|compaction\)/' tools/*.h tools/*.cc 2>/dev/null || true)

# Tests mirror the code by folder, and a googletest suite lives in one file.
while read -r suite files; do
  echo "layering: test suite $suite spans two files: $files" >&2
  status=1
done < <(for f in tests/*/*.cc; do
           { grep -ohE '^TEST(_P|_F)?\([A-Za-z0-9_]+,' "$f" || true; } | sed -E 's/.*\(([A-Za-z0-9_]+),/\1/' |
             sort -u | sed "s|\$| $f|"
         done | awk '{n[$1]++; f[$1] = f[$1] " " $2} END {for (s in n) if (n[s] > 1) print s, f[s]}')

# Nothing else sits under src/, and no engine folder is left at the top.
for dir in src/*/; do
  name=$(basename "$dir")
  if [[ ${path[$name]:-} != "src/$name" ]]; then
    echo "layering: $dir is not an engine folder (docs/architecture.md)" >&2
    status=1
  fi
done
for name in "${!path[@]}"; do
  if [[ -d $name ]]; then
    echo "layering: $name/ belongs under src/" >&2
    status=1
  fi
done

# The KeySet format's versions stay behind format/: outside it, code names
# the current layout's headers (format/keyset_entry.h, keyset_node.h,
# keyset_pieces.h, keyset_block.h) and asks builders and blocks for
# capabilities; it neither includes a versioned header, nor names a
# versioned namespace, nor compares a keyset_version with a number.
version_pattern='keyset_v[0-9]+\.h|\bv[0-9]+::|keyset_version *[!=<>]=? *[0-9]'
while IFS=: read -r file line text; do
  echo "format versions: $file:$line names a KeySet version: ${text#"${text%%[![:space:]]*}"}" >&2
  status=1
done < <(grep -rnE --include='*.h' --include='*.cc' "$version_pattern" \
           src pmem ssd table tools bench util 2>/dev/null || true)

[[ $status -eq 0 ]] && echo "layering: ok"
exit $status
