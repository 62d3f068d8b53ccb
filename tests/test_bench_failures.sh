#!/bin/sh
# The benchmark scripts fail loudly (a non-zero exit and the reason) where they printed an empty
# or partial table and exited 0 (a review of bench/ and scripts/, twenty-fifth session): each case
# below held the wrong behaviour before its fix. No shared data and no training needed.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
bin=$(cd "$top_builddir" && pwd)/doppler
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dp-bench-failures-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# bench_inputs.sh without a doppler binary: exited 0 after rows of "failed" and time's report
if sh "$top_srcdir/bench/bench_inputs.sh" "$tmp" 200 8 200 1 > "$tmp/o" 2> "$tmp/e"; then fail "bench_inputs.sh without a binary exited 0"; fi
grep -q "no doppler binary" "$tmp/e" || fail "bench_inputs.sh does not say the binary is missing"

# the per-episode and one-simulation benches without DOPPLER's graphs: exited 0 ("skipped")
for s in bench_learned bench_doppler bench_sim; do
    if DOPPLER_SHARED_DATA="$tmp/none" sh "$top_srcdir/bench/$s.sh" "$top_builddir" > "$tmp/o" 2> "$tmp/e"; then
        fail "$s.sh without the shared data exited 0"
    fi
    grep -q "doppler-graphs not found" "$tmp/e" || fail "$s.sh does not say what is missing"
done

# improve-validate.sh with a checkpoint that is not one: rows without makespans, a NaN summary, exit 0
echo "not a checkpoint" > "$tmp/bad.h5"
if DOPPLER="$bin" top_srcdir="$top_srcdir" CKPT="$tmp/bad.h5" COUNT=1 SEEDS=1 BUDGET=20 SETTINGS='default={}' \
    sh "$top_srcdir/bench/improve-validate.sh" > "$tmp/o" 2> "$tmp/e"; then
    fail "improve-validate.sh with a bad checkpoint exited 0"
fi
grep -q "doppler place .* failed" "$tmp/e" && grep -q "bad.h5" "$tmp/e" || { cat "$tmp/e"; fail "improve-validate.sh does not show place's error"; }
if DOPPLER="$bin" CKPT="$tmp/missing.h5" sh "$top_srcdir/bench/improve-validate.sh" > "$tmp/o" 2> "$tmp/e"; then
    fail "improve-validate.sh with a missing checkpoint exited 0"
fi
grep -q "missing.h5 not found" "$tmp/e" || fail "improve-validate.sh does not name the missing checkpoint"

# train-doppler-graphs.sh with three of its five optional arguments: dash's shift past the
# arguments stopped it with exit 2 and no word, before its table's header
( cd "$tmp" && DOPPLER=false sh "$top_srcdir/scripts/train-doppler-graphs.sh" "$tmp/none" 5 5 > "$tmp/o" 2> "$tmp/e" ) || true
grep -q "^| graph | devices" "$tmp/o" || { cat "$tmp/e"; fail "train-doppler-graphs.sh stopped at its arguments"; }

# transfer-size.sh with DEMO_BUDGET: the checkpoint bench/transfer.sh made under those settings,
# never one of default settings trained here (make bench-transfer placed the size rows with another model)
mkdir "$tmp/ck"
if DOPPLER="$bin" top_srcdir="$top_srcdir" CKPT_DIR="$tmp/ck" DEMO_BUDGET=50 COMM_RATIO_RANGE=2:8 LAYERS=1 \
    sh "$top_srcdir/bench/transfer-size.sh" > "$tmp/o" 2> "$tmp/e"; then
    fail "transfer-size.sh without transfer.sh's checkpoint exited 0"
fi
grep -q "doppler-demo50-cr2:8-1.h5 not found" "$tmp/e" || { cat "$tmp/e"; fail "transfer-size.sh does not name transfer.sh's checkpoint"; }
[ -z "$(ls "$tmp/ck")" ] || fail "transfer-size.sh trained a model of its own"

# general-validation.py: a failed draw said nothing and was cached as an empty list
if command -v python3 > /dev/null; then
    if DOPPLER="$bin" top_srcdir="$top_srcdir" FAMS=nosuchfamily,chainmm PER=1 CACHE="$tmp/gv" \
        python3 "$top_srcdir/bench/general-validation.py" "$tmp/bad.h5" > "$tmp/o" 2> "$tmp/e"; then
        fail "general-validation.py with an unknown family exited 0"
    fi
    grep -q "unknown graph family 'nosuchfamily'" "$tmp/e" || { cat "$tmp/e"; fail "general-validation.py hides train's error"; }
    [ ! -f "$tmp/gv/specs.txt" ] || fail "general-validation.py cached a failed draw"
fi
echo "the benchmark scripts fail loudly"
