#!/bin/sh
# Reproduce one of the paper's tables: run every run of its sweep again, print its tables, draw
# its figures, and compare the new results with the committed reference results.
#
#   sh experiments/reproduce.sh N [--out DIR] [--reuse] [--tolerance R] [doppler sweep options]
#
#   N            1..5 (experiments/configs/tableN.json), or `general`: the generalization table of
#                issue 29 (EXPERIMENTS.md "Generalization over five training seeds"): the zero-shot
#                model trained on the wide corpus at each seed of $SEEDS (default 1 2 3 4 5; about
#                15 minutes of one core each), the improvement policy of the wide corpus on 2 to 16
#                devices (seed 1; EXPERIMENTS.md "The improvement policy of the wide corpus"),
#                then bench/general.sh with every checkpoint (DEVICES "2 4 8 16", two topologies;
#                an hour or more), its summary compared with experiments/reference/general.txt
#   --out DIR    where results and figures go (default: $DOPPLER_REPRODUCE_DIR, else
#                ${TMPDIR:-/tmp}/doppler-reproduce); the results are DIR/tableN.h5 (+ .csv, run
#                files in DIR/tableN.runs/), the figures DIR/figures/. Nothing tracked is written.
#   --reuse      keep the runs already finished in DIR (a killed reproduction continues); by
#                default DIR's results of table N are removed first, so every run runs again
#   --tolerance R  relative tolerance of the comparison (default 1e-6): makespans and metrics
#                that differ by more are printed; wall-clock seconds are not compared (tables
#                only: general compares its summary exactly and refuses it)
# Other options (--jobs J, --timeout S, ...) go to `doppler sweep` (tables only; general refuses
# them).
#
# Exit status: 0 when every run succeeded and nothing differs from experiments/reference/tableN.csv
# beyond the tolerance; 1 otherwise; 2 usage. Needs the DOPPLER graphs under
# $DOPPLER_SHARED_DATA (default ../shared/data) and a built ./doppler (or $DOPPLER).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: $0 N [--out DIR] [--reuse] [--tolerance R] [doppler sweep options]" >&2; exit 2; }
[ $# -ge 1 ] || usage
n=$1
shift
case $n in [1-9]|general) ;; *) usage ;; esac
cfg=$here/experiments/configs/table$n.json
ref=$here/experiments/reference/table$n.csv
[ "$n" = general ] || [ -f "$cfg" ] || { echo "$0: no $cfg" >&2; exit 2; }
DOPPLER=${DOPPLER:-$here/doppler}
# the bundled data of this tree (topologies, best known makespans), wherever this is run from
DOPPLER_DATA=${DOPPLER_DATA:-$here/data}
export DOPPLER_DATA
[ -x "$DOPPLER" ] || { echo "$0: $DOPPLER is not built (make, or set \$DOPPLER)" >&2; exit 2; }
dir=${DOPPLER_REPRODUCE_DIR:-${TMPDIR:-/tmp}/doppler-reproduce}
reuse=0
tol=1e-6
tol_given=0
# take our options out of the arguments, wherever they are; the others stay for doppler sweep
count=$#
i=0
while [ "$i" -lt "$count" ]; do
    a=$1
    shift
    i=$((i + 1))
    case $a in
    --out|--tolerance)
        [ "$i" -lt "$count" ] || usage
        if [ "$a" = --out ]; then dir=$1; else tol=$1; tol_given=1; fi
        shift
        i=$((i + 1)) ;;
    --out=*) dir=${a#--out=} ;;
    --reuse) reuse=1 ;;
    --retry-failed) ;; # the default of doppler sweep now
    *) set -- "$@" "$a" ;;
    esac
done
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac
# a bad tolerance is refused now, not after the sweep
awk -v t="$tol" 'BEGIN { exit !(t ~ /^[0-9.]+([eE][-+]?[0-9]+)?$/ && t + 0 >= 0) }' ||
    { echo "$0: --tolerance: expected a non-negative number, got '$tol'" >&2; exit 2; }
# general compares its summary exactly and runs no sweep: the options that would not apply are
# refused, not dropped (a review)
if [ "$n" = general ] && { [ "$tol_given" = 1 ] || [ $# -gt 0 ]; }; then
    echo "$0: general runs no sweep and compares its summary exactly: --tolerance and doppler sweep options ($*) do not apply" >&2
    exit 2
fi
# refuse to write into the tracked tree (a reproduction must leave `git status` clean)
case $dir/ in "$here"/*)
    if command -v git > /dev/null 2>&1 && git -C "$here" rev-parse --is-inside-work-tree > /dev/null 2>&1 &&
        ! git -C "$here" check-ignore -q "$dir"; then
        echo "$0: --out $dir is inside the source tree and not ignored by git; choose a folder outside it" >&2
        exit 2
    fi ;;
esac
mkdir -p "$dir/figures"
dir=$(cd "$dir" && pwd)
if [ "$n" = general ]; then
    # the generalization table: train (or, with --reuse, resume) each seed's model, then place
    # the benchmark with all of them; nothing here is chosen on the benchmark
    SH=${DOPPLER_SHARED_DATA:-$here/../shared/data}
    [ -d "$SH/stg" ] || { echo "$0: general: $SH/stg not found (DOPPLER_SHARED_DATA)" >&2; exit 2; }
    g=$dir/general
    mkdir -p "$g"
    families=all # the wide corpus's fourteen families
    train() { # CHECKPOINT ARGS...: a new run, or with --reuse the run of CHECKPOINT continued
        ck=$1
        shift
        if [ "$reuse" -eq 1 ] && [ -f "$ck" ]; then again=--resume; else again=--force; fi
        echo "$0: doppler train $* --checkpoint $ck $again" >&2
        "$DOPPLER" train "$@" --checkpoint "$ck" $again --quiet > "$ck.out" 2> "$ck.err" ||
            { cat "$ck.err" >&2; exit 1; }
    }
    cks=""
    for s in ${SEEDS:-1 2 3 4 5}; do
        train "$g/seed$s.h5" --family $families --family-count 56 --val-count 14 --seed "$s" \
            --config "$here/bench/doppler-zeroshot.json" --pipeline
        cks="$cks $g/seed$s.h5"
    done
    train "$g/improve-1.h5" --method improve --family $families --family-count 32 --devices-range 2:16 \
        --seed 1 --episodes 20000
    CKPT="$cks" IMPROVE="$g/improve-1.h5" DEVICES=${DEVICES:-2 4 8 16} RATIOS=${RATIOS:-1 4} \
        TOPOLOGIES=${TOPOLOGIES:-dgx1-v100 pcie-gen3-4gpu} ANNEAL=${ANNEAL:-200 2000 20000} \
        IMPROVE_BUDGETS=${IMPROVE_BUDGETS:-200 2000 20000} DOPPLER=$DOPPLER DOPPLER_SHARED_DATA=$SH \
        sh "$here/bench/general.sh" > "$dir/general.txt" || exit 1
    cat "$dir/general.txt"
    ref=$here/experiments/reference/general.txt
    [ -f "$ref" ] || { echo "$0: no reference $ref to compare with" >&2; exit 1; }
    # the summaries (every figure printed to 3 decimals) must agree line for line
    sed -n '/^# summary/,$p' "$ref" | grep -v '^#' > "$dir/general.ref-summary"
    sed -n '/^# summary/,$p' "$dir/general.txt" | grep -v '^#' > "$dir/general.summary"
    echo "comparison with $ref (summary lines):"
    if diff "$dir/general.ref-summary" "$dir/general.summary"; then echo "the same"; exit 0; fi
    exit 1
fi
out=$dir/table$n.h5
figs=$dir/figures
if [ "$reuse" -eq 0 ]; then
    # our own outputs only: the results, their CSV, run files and lock of this table
    rm -rf "$dir/table$n.h5" "$dir/table$n.csv" "$dir/table$n.runs" "$dir/table$n.h5.lock"
fi
status=0
# the CSV's checksum before and after tells a sweep that started no run (a missing graph, a
# wrong parameter: it said why) from one whose runs failed
csv=$dir/table$n.csv
before=$(cksum < "$csv" 2>/dev/null || echo none)
if ! "$DOPPLER" sweep "$cfg" --out "$out" "$@"; then
    if [ ! -f "$out" ] || [ "$(cksum < "$csv" 2>/dev/null || echo none)" = "$before" ]; then
        echo "$0: table $n: doppler sweep started no run (its message above says why; DOPPLER's graph files are the reference data: README.md, \"Reference data\")" >&2
        exit 1
    fi
    echo "$0: some runs failed (their cells say so)" >&2
    status=1
fi
[ -f "$out" ] || exit 1
for t in $("$DOPPLER" report "$out" --list-tables | cut -f1 | grep -v -e '^runs$' -e '^makespan$' -e '^seconds$'); do
    "$DOPPLER" report "$out" --table "$t"
    echo
done
# figures: the main table as bars (ratios to the best baseline), and per table one more
"$DOPPLER" report "$out" --table main --plot bars --out "$figs/table$n.png" || true
case $n in
1) # the schedule of the critical-path placement of ChainMM (run 0), and a DOPPLER learning curve
   "$DOPPLER" report "$out" --plot gantt --run 0 --out "$figs/gantt-chainmm-cp.png" || true
   k=$("$DOPPLER" report "$out" --table runs --where method=doppler --where status=ok | awk -F, 'NR == 2 {print $1}')
   [ -n "$k" ] && "$DOPPLER" report "$out" --plot learning --run "$k" --out "$figs/learning-chainmm.png" || true ;;
5) "$DOPPLER" report "$out" --table slowdown --plot bars --out "$figs/table5-slowdown.png" || true ;;
esac
echo "figures: $figs"
if [ -f "$ref" ]; then
    echo "comparison with $ref (relative tolerance $tol):"
    "$DOPPLER" report "$out" --compare "$ref" --tolerance "$tol" || status=1
else
    echo "$0: no reference results $ref to compare with" >&2
fi
exit $status
