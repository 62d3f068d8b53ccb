#!/bin/sh
# experiments/reproduce.sh 3 in a copy of the tracked tree (a fresh clone as far as the script
# can tell): it runs every run of table 3 again (24 runs of milliseconds each: the full config,
# not a reduced one), finds no difference from experiments/reference/table3.csv, and leaves
# `git status` clean. Then --reuse keeps the finished runs, and a changed reference makespan is
# reported as a difference with exit status 1.
# SKIP (77) without git, outside a git checkout, or without DOPPLER's graph files.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER=$(cd "$top_builddir" && pwd)/doppler
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v git > /dev/null 2>&1 || { echo "SKIP: git is not installed"; exit 77; }
# a checkout of its own: a copy inside another checkout (the sanitizer build's _build-san/src)
# has no tracked files there
[ -n "$(git -C "$top_srcdir" ls-files experiments/reproduce.sh 2> /dev/null)" ] || { echo "SKIP: $top_srcdir is not a git checkout"; exit 77; }
shared=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-reproduce-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# the tracked files as they are in the working tree, committed in a new repository
mkdir "$work/src"
(cd "$top_srcdir" && git ls-files -z | tar --null --ignore-failed-read -T - -cf - 2> /dev/null) | (cd "$work/src" && tar xf -)
cd "$work/src"
git init -q .
git add -A
git -c user.name=test -c user.email=test@localhost commit -qm snapshot
[ -f experiments/reference/table3.csv ] || fail "no experiments/reference/table3.csv in the tracked tree"

# without the reference data no run starts: said once, exit 1, no false "some runs failed"
mkdir "$work/nodata"
if DOPPLER_SHARED_DATA="$work/nodata" DOPPLER="$DOPPLER" sh experiments/reproduce.sh 3 --out "$work/out0" > "$work/log0" 2>&1; then
    cat "$work/log0" >&2; fail "reproduce.sh without the data gave exit 0"
fi
grep -q 'no run was started' "$work/log0" || { cat "$work/log0" >&2; fail "the sweep did not say that no run was started"; }
grep -q 'doppler sweep started no run' "$work/log0" || { cat "$work/log0" >&2; fail "reproduce.sh did not say that no run started"; }
grep -q 'some runs failed' "$work/log0" && { cat "$work/log0" >&2; fail "a false 'some runs failed' after 'no run was started'"; }

[ -f "$shared/doppler-graphs/chain_mm_112nodes.txt" ] || { echo "SKIP: DOPPLER's graphs are not in $shared"; exit 77; }
DOPPLER_SHARED_DATA=$(cd "$shared" && pwd)
export DOPPLER_SHARED_DATA

DOPPLER="$DOPPLER" sh experiments/reproduce.sh 3 --jobs 2 --out "$work/out" > "$work/log" 2>&1 \
    || { cat "$work/log" >&2; fail "reproduce.sh 3 failed"; }
runs=$(tail -n +2 experiments/reference/table3.csv | wc -l)
grep -q "0 of $runs runs already in\|$runs/$runs done (0 earlier)" "$work/log" || { cat "$work/log" >&2; fail "not every run ran again"; }
grep -q "^$runs runs compared, 0 differ beyond a relative tolerance of 1e-06" "$work/log" || { cat "$work/log" >&2; fail "differences from the reference"; }
grep -q 'only in' "$work/log" && { cat "$work/log" >&2; fail "runs on one side only"; }
[ -f "$work/out/table3.h5" ] && [ -f "$work/out/figures/table3.png" -o ! -x "$(command -v gnuplot || echo /nonexistent)" ] \
    || fail "results or figure not in the output folder"
[ -z "$(git status --porcelain --ignored)" ] || { git status --porcelain --ignored >&2; fail "reproduce.sh wrote into the tree"; }

# --reuse: nothing runs again; a changed reference value is a difference (exit 1)
sed -i '2s/,ok,\([0-9.]*\),/,ok,9999.5,/' experiments/reference/table3.csv
if DOPPLER="$DOPPLER" sh experiments/reproduce.sh 3 --reuse --out "$work/out" > "$work/log2" 2>&1; then
    cat "$work/log2" >&2
    fail "a changed reference gave exit 0"
fi
grep -q "$runs of $runs runs already in" "$work/log2" || { cat "$work/log2" >&2; fail "--reuse ran runs again"; }
grep -q 'makespan: new [0-9.]*, reference 9999.5' "$work/log2" || { cat "$work/log2" >&2; fail "the changed makespan is not printed"; }
grep -q "^$runs runs compared, 1 differ" "$work/log2" || { cat "$work/log2" >&2; fail "the difference is not counted"; }
# an output folder inside the tree (not ignored) is refused
if DOPPLER="$DOPPLER" sh experiments/reproduce.sh 3 --out "$work/src/experiments/x" > "$work/log3" 2>&1; then fail "--out inside the tree accepted"; fi
grep -q 'inside the source tree' "$work/log3" || { cat "$work/log3" >&2; fail "no message for --out inside the tree"; }
# general runs no sweep: --tolerance and sweep options are refused, not dropped; a bad tolerance is
# refused before any run (a review of the twentieth session)
for opts in "--tolerance 0.01" "--jobs 2"; do
    # shellcheck disable=SC2086
    if DOPPLER="$DOPPLER" sh experiments/reproduce.sh general $opts > "$work/log4" 2>&1; then fail "general $opts accepted"; fi
    grep -q 'general runs no sweep' "$work/log4" || { cat "$work/log4" >&2; fail "no message for general $opts"; }
done
if DOPPLER="$DOPPLER" sh experiments/reproduce.sh 3 --tolerance abc > "$work/log5" 2>&1; then fail "--tolerance abc accepted"; fi
grep -q "tolerance: expected a non-negative number, got 'abc'" "$work/log5" || { cat "$work/log5" >&2; fail "no message for --tolerance abc"; }
echo "test_reproduce.sh: ok"
