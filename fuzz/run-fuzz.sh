#!/bin/sh
# run-fuzz.sh: run every libFuzzer harness of a fuzzing build for a bounded time.
#
#   sh fuzz/run-fuzz.sh SRCDIR BUILDDIR [HARNESS...]
#
# Environment: FUZZ_SECONDS (per harness, default 60), FUZZ_RUNS (stop after that many
# executions, default no limit), DOPPLER_SHARED_DATA (seed files, default SRCDIR/../shared/data).
# Seed corpora are assembled at run time in BUILDDIR/_fuzz/seeds-NAME from the committed seeds
# (fuzz/seeds/NAME), tests/bad-inputs, data/ and the shared data (never copied into the tree).
# The growing corpus lives in BUILDDIR/_fuzz/corpus-NAME, crashes in BUILDDIR/_fuzz/crash-NAME-*,
# and a one-line summary per harness (executions, coverage, features, crashes) in
# BUILDDIR/_fuzz/summary.txt (the latest run of each harness). Exit status 1 when any harness crashed.
set -eu
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
shift 2
secs=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:--1}
shared=${DOPPLER_SHARED_DATA:-$src/../shared/data}
work=$build/_fuzz
mkdir -p "$work"
harnesses=${*:-$(cd "$build/fuzz" && ls fuzz_* 2>/dev/null | grep -v '\.' || true)}
[ -n "$harnesses" ] || { echo "run-fuzz.sh: no harnesses in $build/fuzz" >&2; exit 2; }

# seed files for a harness: PATTERNS are find -name patterns under the given folders
seed_from() { # NAME DIR PATTERN...
    name=$1; dir=$2; shift 2
    [ -d "$dir" ] || return 0
    for pat in "$@"; do
        find "$dir" -type f -name "$pat" -size -200k -exec cp {} "$work/seeds-$name/" \; 2>/dev/null || true
    done
}

status=0
new=$work/summary.txt.new.$$
: > "$new"
for h in $harnesses; do
    name=${h#fuzz_}
    rm -rf "$work/seeds-$name"
    # crashes of earlier runs (fixed or not) move aside: the summary counts this run's
    mkdir -p "$work/old"
    for f in "$work/crash-$name-"*; do [ -e "$f" ] && mv "$f" "$work/old/"; done
    mkdir -p "$work/seeds-$name" "$work/corpus-$name"
    [ -d "$src/fuzz/seeds/$name" ] && cp "$src/fuzz/seeds/$name"/* "$work/seeds-$name/" 2>/dev/null || true
    case $name in
    graph_doppler)
        seed_from "$name" "$src/tests" '*.txt'
        seed_from "$name" "$shared/doppler-graphs" '*.txt' ;;
    graph_json)
        seed_from "$name" "$src/tests" '*.json'
        seed_from "$name" "$src/data" '*.json'
        seed_from "$name" "$shared/msr-dnn-partitioning" '*.json' ;;
    hetero_csv)
        # the three CSV files of one example, joined by "%%" lines (fuzz_hetero_csv.c)
        for exe in "$shared"/heft-topcuoglu2002/*_task_exe_time.csv "$src"/tests/bad-hetero/*_task_exe_time.csv; do
            [ -f "$exe" ] || continue
            pre=${exe%_task_exe_time.csv}
            for bw in "${pre}_resource_BW.csv" ""; do
                out="$work/seeds-$name/$(basename "$pre")${bw:+-bw}"
                { cat "$exe"; printf '%%%%\n'; cat "${pre}_task_connectivity.csv" 2>/dev/null || true
                  if [ -n "$bw" ] && [ -f "$bw" ]; then printf '%%%%\n'; cat "$bw"; fi; } > "$out"
            done
        done ;;
    *)
        # a harness added later names its seeds in fuzz/seeds.list: NAME<TAB>DIR<TAB>PATTERN
        if [ -f "$src/fuzz/seeds.list" ]; then
            grep "^$name	" "$src/fuzz/seeds.list" | while IFS='	' read -r _ dir pat; do
                case $dir in
                shared/*) seed_from "$name" "$shared/${dir#shared/}" "$pat" ;;
                *) seed_from "$name" "$src/$dir" "$pat" ;;
                esac
            done
        fi ;;
    esac
    # harnesses that make their own seeds (fuzz_checkpoint: a short training run)
    DP_FUZZ_WRITE_SEEDS="$work/seeds-$name"; export DP_FUZZ_WRITE_SEEDS
    dict=""
    [ -f "$src/fuzz/$name.dict" ] && dict="-dict=$src/fuzz/$name.dict"
    log=$work/$name.log
    echo "fuzz $name: ${secs}s$( [ "$runs" != -1 ] && echo ", at most $runs runs")" >&2
    rc=0
    # HDF5 mallocs sizes read from a corrupt file; a normal malloc returns NULL for them, and so
    # must ASan's here (elsewhere an absurd allocation is a missing limit of ours: a crash)
    asan=${ASAN_OPTIONS:-}
    lsan=${LSAN_OPTIONS:-}
    case $name in checkpoint)
        asan="allocator_may_return_null=1${asan:+:$asan}"
        lsan="suppressions=$src/fuzz/lsan-hdf5.supp${lsan:+:$lsan}" ;;
    esac
    ASAN_OPTIONS=$asan LSAN_OPTIONS=$lsan "$build/fuzz/$h" -max_total_time="$secs" -runs="$runs" -print_final_stats=1 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$work/crash-$name-" $dict \
        "$work/corpus-$name" "$work/seeds-$name" > "$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    crashes=$(ls "$work" | grep -c "^crash-$name-" || true)
    line="$name: executions ${execs:-?}, cov ${cov:-?}, ft ${ft:-?}, seconds $secs, exit $rc, crash files $crashes"
    echo "$line" >> "$new"
    echo "  $line" >&2
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "  see $log and $work/crash-$name-*" >&2
        grep -m1 -A12 'ERROR\|invariant broken\|runtime error' "$log" >&2 || true
    fi
done
# the summary keeps the latest line of every harness: runs of other harnesses (even concurrent
# ones, started with other harness lists) keep theirs
touch "$work/summary.txt"
{ cut -d: -f1 "$new" | sed 's/^/^/; s/$/:/' > "$new.names"
  grep -v -f "$new.names" "$work/summary.txt" || true
  cat "$new"; } | sort > "$new.all"
mv "$new.all" "$work/summary.txt"
rm -f "$new" "$new.names"
exit $status
