#!/usr/bin/env bash
# make perf-page: rewrites the generated blocks of docs/performance.md
# (between `<!-- BEGIN generated:NAME -->` and `<!-- END generated:NAME -->`)
# with the last make bench's target/bench/page/NAME.md, and docs/perf/ with
# the charts the page shows. Refuses blocks missing or from another commit:
# the page shows one run.
set -euo pipefail
cd "$(dirname "$0")/.."
page=docs/performance.md
blocks=target/bench/page
names=$(grep -oE '<!-- BEGIN generated:[a-z0-9-]+ -->' "$page" | sed -E 's/.*generated:([a-z0-9-]+).*/\1/')
[ -n "$names" ] || { echo "$page has no generated blocks" >&2; exit 1; }
commits=()
for n in $names; do
  f=$blocks/$n.md
  [ -f "$f" ] || { echo "no $f: run make bench first" >&2; exit 1; }
  first=$(head -1 "$f")
  [[ $first == Measured* ]] || { echo "$f does not open with its run line" >&2; exit 1; }
  commits+=("$(grep -oE 'at commit `[^`]+`' <<<"$first")")
done
if [ "$(printf '%s\n' "${commits[@]}" | sort -u | wc -l)" -ne 1 ]; then
  echo "the blocks come from different commits; run make bench again:" >&2
  for n in $names; do echo "  $n: $(head -1 "$blocks/$n.md" | grep -oE 'at commit `[^`]+`')" >&2; done
  exit 1
fi
awk -v dir="$blocks" '
  /<!-- BEGIN generated:[a-z0-9-]+ -->/ {
    print
    match($0, /generated:[a-z0-9-]+/)
    f = dir "/" substr($0, RSTART + 10, RLENGTH - 10) ".md"
    print ""
    while ((getline line < f) > 0) print line
    close(f)
    print ""
    skip = 1
    next
  }
  /<!-- END generated:[a-z0-9-]+ -->/ { skip = 0 }
  !skip { print }
' "$page" >"$page.new"
mv "$page.new" "$page"
mkdir -p docs/perf
charts=$(grep -oE '\(perf/[a-z0-9-]+\.svg\)' "$page" | sort -u | sed -E 's/\(perf\/(.*)\)/\1/')
rm -f docs/perf/*.svg
for c in $charts; do
  [ -f "target/bench/$c" ] || { echo "no target/bench/$c" >&2; exit 1; }
  cp "target/bench/$c" docs/perf/
done
echo "docs/performance.md: $(wc -w <<<"$names") blocks from ${commits[0]}; docs/perf/: $(wc -w <<<"$charts") charts"
