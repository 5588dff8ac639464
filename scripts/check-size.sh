#!/usr/bin/env bash
# Checks the sizes a newcomer can read (docs/architecture.md, "Sizes"): no
# source file of the library, tools, benchmarks or emulation over 900 lines,
# no function there over 100 lines (measured by universal-ctags), README
# under 200 lines, no file in docs/ over 800 lines. Exits 1 naming each
# violation.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
folders=(util format table pmem ssd src/version src/compaction src/db tools bench emulation)
sources=()
for folder in "${folders[@]}"; do
  [[ -d $folder ]] || continue
  while IFS= read -r f; do sources+=("$f"); done < <(find "$folder" -maxdepth 1 \( -name '*.cc' -o -name '*.h' \) | sort)
done

for f in "${sources[@]}"; do
  n=$(wc -l <"$f")
  if ((n > 900)); then
    echo "size: $f has $n lines (at most 900)" >&2
    status=1
  fi
done

# Function lengths: definitions with an end line, as universal-ctags sees them.
while IFS=$'\t' read -r lines path line name; do
  echo "size: $path:$line $name is $lines lines (at most 100)" >&2
  status=1
done < <(ctags --fields=+ne --kinds-c++=f --language-force=c++ --output-format=json -f - "${sources[@]}" |
           python3 -c '
import json, sys
for text in sys.stdin:
    tag = json.loads(text)
    if tag.get("_type") == "tag" and "end" in tag:
        lines = tag["end"] - tag["line"] + 1
        if lines > 100:
            print(lines, tag["path"], tag["line"], tag.get("scope", "") + "::" + tag["name"], sep="\t")
')

n=$(wc -l <README.md)
if ((n >= 200)); then
  echo "size: README.md has $n lines (under 200)" >&2
  status=1
fi
for f in docs/*.md docs/*/*.md; do
  [[ -f $f ]] || continue
  n=$(wc -l <"$f")
  if ((n > 800)); then
    echo "size: $f has $n lines (at most 800)" >&2
    status=1
  fi
done

[[ $status -eq 0 ]] && echo "size: ok"
exit $status
