#!/bin/sh
# Reproduce one of the paper's tables: run every run of its sweep again, print its tables, draw
# its figures, and compare the new results with the committed reference results.
#
#   sh experiments/reproduce.sh N [--out DIR] [--reuse] [--tolerance R] [doppler sweep options]
#
#   N            1..5 (experiments/configs/tableN.json)
#   --out DIR    where results and figures go (default: $DOPPLER_REPRODUCE_DIR, else
#                ${TMPDIR:-/tmp}/doppler-reproduce); the results are DIR/tableN.h5 (+ .csv, run
#                files in DIR/tableN.runs/), the figures DIR/figures/. Nothing tracked is written.
#   --reuse      keep the runs already finished in DIR (a killed reproduction continues); by
#                default DIR's results of table N are removed first, so every run runs again
#   --tolerance R  relative tolerance of the comparison (default 1e-6): makespans and metrics
#                that differ by more are printed; wall-clock seconds are not compared
# Other options (--jobs J, --timeout S, ...) go to `doppler sweep`.
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
case $n in [1-9]) ;; *) usage ;; esac
cfg=$here/experiments/configs/table$n.json
ref=$here/experiments/reference/table$n.csv
[ -f "$cfg" ] || { echo "$0: no $cfg" >&2; exit 2; }
DOPPLER=${DOPPLER:-$here/doppler}
# the bundled data of this tree (topologies, best known makespans), wherever this is run from
DOPPLER_DATA=${DOPPLER_DATA:-$here/data}
export DOPPLER_DATA
[ -x "$DOPPLER" ] || { echo "$0: $DOPPLER is not built (make, or set \$DOPPLER)" >&2; exit 2; }
dir=${DOPPLER_REPRODUCE_DIR:-${TMPDIR:-/tmp}/doppler-reproduce}
reuse=0
tol=1e-6
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
        if [ "$a" = --out ]; then dir=$1; else tol=$1; fi
        shift
        i=$((i + 1)) ;;
    --out=*) dir=${a#--out=} ;;
    --reuse) reuse=1 ;;
    --retry-failed) ;; # the default of doppler sweep now
    *) set -- "$@" "$a" ;;
    esac
done
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac
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
