#!/bin/sh
# test_faults.sh: out of memory at every allocation (issue 28 item 6). DOPPLER_FAIL_ALLOC=K makes
# the K-th allocation of the process fail (models/dp_alloc.h). For each command below and every K
# from 1 up to the command's allocation count (DOPPLER_FAIL_ALLOC=0 prints it), the command must
# either
#   - exit with status 1 (not a crash, not a signal, not a usage error), saying "out of memory",
#     and leave no partial output: no temporary file (outputs are written to a temporary file and
#     renamed), and any output file left is the complete one, byte for byte what the run without
#     the failure writes (train's checkpoint is written before its closing report); or
#   - succeed with the same standard output and the same files as without the failure (a cache
#     or a fallback that does without the memory), never a different result;
#   - under the sanitizers (the sanitizer pass, --enable-sanitizers), report no leak and no error:
#     any "Sanitizer" or "runtime error" line fails.
# Commands: place with a heuristic (cp), with a search (anneal), coarsened (anneal on groups of
# at most 3 ops, local search refining: policy/dp_coarse.c), graph convert, and train
# (2 episodes, imitation, writing a checkpoint), on a 10-op graph: 72 to 605 allocations each (at
# 122619e; DOPPLER_FAIL_ALLOC=0 prints a command's count), so
# every K is run, none sampled; DOPPLER_FAULTS_MAX (default 2000) caps the count should a change
# make a command allocate far more (the test then fails saying so, rather than running minutes).
set -u
command -v h5dump > /dev/null || { echo "SKIP: no h5dump (hdf5-tools) to compare checkpoints"; exit 77; }
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
D="$top_builddir/doppler"
# the program itself rather than libtool's wrapper script (a fifth of the time: runs are many)
if [ -x "$top_builddir/.libs/doppler" ]; then
    D="$top_builddir/.libs/doppler"
    LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; export LD_LIBRARY_PATH
fi
G="$top_srcdir/tests/data/tiny-doppler.txt"
max=${DOPPLER_FAULTS_MAX:-2000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-faults.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1"
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
cat > "$tmp/tiny.json" <<'JSON'
{"network": {"hidden": 8, "mlp_hidden": 8, "edge_hidden": 8, "steps": 1}, "checkpoint_every": 100}
JSON
out="$tmp/out"

# same_file A B: the same bytes; HDF5 files (a checkpoint holds its run's random id and its
# wall-clock seconds, attributes seconds and stage_seconds0) the same h5dump but for those and the
# file's name
h5text() {
    h5dump "$1" | sed -e 1d -e 's/"[0-9a-f]\{32\}"/"ID"/' -e '/ATTRIBUTE "seconds"/,/^   }/d' \
        -e '/ATTRIBUTE "stage_seconds0"/,/^   }/d'
}
same_file() {
    case $1 in
        *.h5) h5text "$1" > "$tmp/a.dump" 2>&1 && h5text "$2" > "$tmp/b.dump" 2>&1 && cmp -s "$tmp/a.dump" "$tmp/b.dump" ;;
        *) cmp -s "$1" "$2" ;;
    esac
}
# same_files ALL: 0 when every file in $out is the reference run's file of that name (ALL=1:
# and every reference file is there)
same_files() {
    for f in $(ls -A "$out"); do
        [ -f "$tmp/ref/$f" ] && same_file "$out/$f" "$tmp/ref/$f" || return 1
    done
    [ "$1" = 0 ] && return 0
    for f in $(ls -A "$tmp/ref"); do [ -f "$out/$f" ] || return 1; done
}

# run_faults NAME COMMAND...: COMMAND writes only into $out
run_faults() {
    name=$1; shift
    rm -rf "$out" "$tmp/ref"; mkdir "$out"
    DOPPLER_FAIL_ALLOC=0 "$@" > "$tmp/ref.stdout" 2> "$tmp/err" || { cat "$tmp/err"; bad "$name: fails without fault injection"; return; }
    n=$(sed -n 's/^doppler: \([0-9]*\) allocations (DOPPLER_FAIL_ALLOC=0)$/\1/p' "$tmp/err" | tail -1)
    [ -n "$n" ] || { bad "$name: no allocation count on stderr"; return; }
    [ "$n" -le "$max" ] || { bad "$name: $n allocations, more than DOPPLER_FAULTS_MAX=$max"; return; }
    [ -n "$(ls -A "$out")" ] || { bad "$name: wrote nothing into $out"; return; }
    mv "$out" "$tmp/ref"
    k=1 nerr=0
    while [ "$k" -le "$n" ]; do
        rm -rf "$out"; mkdir "$out"
        DOPPLER_FAIL_ALLOC=$k "$@" > "$tmp/stdout" 2> "$tmp/err"
        rc=$?
        what="$name, allocation $k of $n failed"
        if [ "$rc" -eq 0 ]; then
            # done without that memory: the result must not show it
            cmp -s "$tmp/stdout" "$tmp/ref.stdout" || { bad "$what: succeeded with another output"; diff "$tmp/ref.stdout" "$tmp/stdout" | sed 6q; }
            same_files 1 || bad "$what: succeeded with other files"
        elif [ "$rc" -ne 1 ]; then bad "$what: exit status $rc, wanted 1"; sed 5q "$tmp/err"
        elif ! grep -q "out of memory" "$tmp/err"; then bad "$what: no 'out of memory' in the error"; sed 5q "$tmp/err"
        elif ! same_files 0; then bad "$what: left $(ls -A "$out" | tr '\n' ' ')(partial or temporary files)"
        else nerr=$((nerr + 1))
        fi
        if grep -q "Sanitizer\|runtime error" "$tmp/err"; then bad "$what: sanitizer report"; sed 20q "$tmp/err"; fi
        if [ "$fails" -gt "${DOPPLER_FAULTS_STOP:-20}" ]; then echo "FAIL: stopping after 20 failures"; exit 1; fi
        k=$((k + 1))
    done
    echo "$name: $n allocations, each failed once: $nerr clean out-of-memory errors, $((n - nerr)) done without it"
}

only=${DOPPLER_FAULTS_ONLY:-}  # one command's name, to run it alone
faults() { [ -z "$only" ] || [ "$only" = "$1" ] || return 0; run_faults "$@"; }
faults "place cp" "$D" place --graph "$G" --method cp --out "$out/a.json"
faults "place anneal" "$D" place --graph "$G" --method anneal --budget 20 --seed 1 --out "$out/a.json"
faults "place coarse" "$D" place --graph "$G" --method anneal --budget 10 --coarsen 3 --refine local --refine-budget 10 --seed 1 --out "$out/a.json"
faults "graph convert" "$D" graph convert "$G" "$out/g.json"
faults "train" "$D" train --graph "$G" --config "$tmp/tiny.json" --stage il --episodes 2 --checkpoint "$out/c.h5" --quiet
[ "$fails" -eq 0 ] || exit 1
