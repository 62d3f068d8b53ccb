#!/bin/sh
# test_best_known.sh: data/best-known.json is backed by placements (issue 28, item 9). Every graph
# whose best known makespan names an assignment file (data/best-known/NAME.json, the placement
# that reached it) simulates, under the DOPPLER-compatible model on the graph's own device count,
# to the recorded makespan (relative 1e-12), and no recorded makespan is below the graph's lower
# bound. A value edited by hand, or a placement that stopped reproducing after a change of the
# simulator, fails here.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
bin="$top_builddir/doppler"
sh_data=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
fail() { echo "FAIL: $*"; exit 1; }
if [ ! -d "$sh_data/doppler-graphs" ]; then
    if [ "${DOPPLER_REQUIRE_SHARED_DATA:-0}" = 1 ]; then
        echo "ERROR: DOPPLER's graphs ($sh_data/doppler-graphs) not found and DOPPLER_REQUIRE_SHARED_DATA=1"
        exit 99
    fi
    echo "SKIP: DOPPLER's graphs ($sh_data/doppler-graphs) not found (set DOPPLER_SHARED_DATA)"
    exit 77
fi
py=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    [ "$p" = : ] && continue
    if command -v "$p" >/dev/null 2>&1; then py=$p; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 to read the JSON"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-best-known.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$py" - "$top_srcdir/data/best-known.json" > "$tmp/list" <<'EOF' || fail "reading data/best-known.json"
import json, sys
d = json.load(open(sys.argv[1]))
for name, g in d["graphs"].items():
    print("%s|%d|%r|%s" % (name, g["devices"], g["makespan"], g.get("assignment") or ""))
EOF
n=0 checked=0
while IFS='|' read -r name dev ms assign; do
    n=$((n + 1))
    graph="$sh_data/doppler-graphs/$name.txt"
    [ -f "$graph" ] || continue  # a graph of the reference data kept back from this checkout
    lb=$("$bin" graph info "$graph" --devices "$dev" | sed -n 's/^lower bound: *\([0-9.e+-]*\).*/\1/p')
    [ "$("$py" -c "import sys; print(float(sys.argv[1]) >= float(sys.argv[2]) * (1 - 1e-12))" "$ms" "$lb")" = True ] ||
        fail "$name: best known $ms is below the lower bound $lb"
    [ -n "$assign" ] || continue
    got=$("$bin" simulate --graph "$graph" --devices "$dev" --assignment "$top_srcdir/data/$assign" --json |
          sed -n 's/.*"makespan":\([^,]*\).*/\1/p')
    [ -n "$got" ] || fail "$name: simulating data/$assign gave no makespan"
    [ "$("$py" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(abs(a - b) <= 1e-12 * b)" "$got" "$ms")" = True ] ||
        fail "$name: data/$assign simulates to $got, data/best-known.json says $ms"
    checked=$((checked + 1))
done < "$tmp/list"
[ "$checked" -gt 0 ] || fail "no best known makespan is backed by an assignment file"
echo "$n graphs, $checked placements simulated to their recorded makespans"
exit 0
