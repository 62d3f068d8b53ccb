#!/bin/sh
# bench/search.sh (make bench-search) on a small generated graph, against a stand-in base build:
# a row of moves per second with "same", and a failed run of either build stops the bench with
# the run's error output and a non-zero status (a failed run's time once entered the row: review
# of c3a2055). No real base is built; the stand-in base runs this build's doppler.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
bin=$(cd "$top_builddir" && pwd)/doppler
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-test-bench-search.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
DOPPLER_DATA=${DOPPLER_DATA:-$(cd "$top_srcdir" && pwd)/data}
export DOPPLER_DATA
mkdir -p "$tmp/shared/doppler-graphs" "$tmp/base/bench"
"$bin" graph gen random --n 60 --out "$tmp/r.json" > /dev/null || fail "graph gen random"
"$bin" graph convert "$tmp/r.json" "$tmp/shared/doppler-graphs/r60.txt" > /dev/null || fail "graph convert"
# the stand-in base: this build's doppler, failing where FAIL_AT names the budget; bench_sim
# prints a line as bench_sim does (its 6th field: us per simulation)
cat > "$tmp/base/doppler" <<EOF2
#!/bin/sh
case " \$* " in *" --budget \${FAIL_AT:-none} "*) echo "stand-in base: failed on purpose" >&2; exit 3 ;; esac
exec "$bin" "\$@"
EOF2
printf '#!/bin/sh\necho header\necho g 1 2 3 4 5.0\n' > "$tmp/base/bench/bench_sim"
chmod +x "$tmp/base/doppler" "$tmp/base/bench/bench_sim"
run() {
    rc=0
    out=$(env "$@" BASE=HEAD BASE_BUILD="$tmp/base" REPS=1 BUDGET=2000 METHODS=anneal LAYERS=0 GRAPHS=r60 \
        DOPPLER_SHARED_DATA="$tmp/shared" top_srcdir="$top_srcdir" DOPPLER="$bin" sh "$top_srcdir/bench/search.sh" 2>&1) ||
        rc=$?
}
run FAIL_AT=none
[ "$rc" -eq 0 ] || fail "bench/search.sh exited $rc: $out"
for m in anneal; do
    row=$(printf '%s\n' "$out" | awk -v m=$m '$1 == "r60" && $2 == m')
    [ -n "$row" ] || fail "no $m row: $out"
    # before, after: moves per second, or nan where the two budgets' CPU times did not differ
    # (a timing, not checked: tests are not timed); the same placement (the stand-in is this
    # build)
    # paired and spread: a ratio and its least-greatest (or nan, as above); with REPS=1 the one
    # repetition's ratio is the median, the least and the greatest
    echo "$row" | awk '{ exit !(NF == 10 && $4 ~ /^([0-9]+|nan)$/ && $5 ~ /^([0-9]+|nan)$/ && $7 == "yes" &&
        ($9 == "nan" || ($9 ~ /^[0-9]+\.[0-9][0-9]$/ && $10 == $9 "-" $9))) }' ||
        fail "row: $row"
done
# a failed run of the base at budget B, then at B/10: the bench stops, naming the run
for at in 2000 200; do
    run FAIL_AT=$at
    [ "$rc" -ne 0 ] || fail "a failed run at budget $at did not stop the bench: $out"
    printf '%s\n' "$out" | grep -q "failed on purpose" || fail "the failed run's error output is missing: $out"
    printf '%s\n' "$out" | grep -q "budget $at failed" || fail "the failed run is not named: $out"
    printf '%s\n' "$out" | awk '$1 == "r60"' | grep -q . && fail "a row was printed after a failed run: $out"
done
echo "PASS: bench/search.sh rows; failed runs stop it"
# bench_sim refuses bad numbers (atoi's 0 for --devices abc gave a segfault: a review)
bs="$top_builddir/bench/bench_sim"   # a check program (Makefile.am)
[ -x "$bs" ] || fail "$bs not built"
if true; then
    for o in "--devices abc" "--devices 0" "--min-seconds xyz" "--runs -5"; do
        # shellcheck disable=SC2086
        "$bs" $o "$top_srcdir/data/graphs/chainmm-small.json" > /dev/null 2> "$tmp/bs.err"
        rc=$?
        [ "$rc" -eq 2 ] && grep -q "expected" "$tmp/bs.err" || fail "bench_sim $o: exit $rc, $(cat "$tmp/bs.err")"
    done
    echo "PASS: bench_sim refuses bad options"
fi
