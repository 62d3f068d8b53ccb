#!/bin/sh
# Reproduce one of the paper's tables: run its sweep (resumable: run again after a kill to
# finish), then print its tables as markdown and draw its figures.
#   sh experiments/reproduce.sh N [--jobs J] [--retry-failed]     N = 1..5
# Results go to experiments/results/tableN.h5 (+ .csv), figures to experiments/figures/.
# Needs the DOPPLER graphs under $DOPPLER_SHARED_DATA (default ../shared/data).
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 N [doppler sweep options]" >&2; exit 2; }
n=$1
shift
cfg=experiments/configs/table$n.json
[ -f "$cfg" ] || { echo "$0: no $cfg" >&2; exit 2; }
DOPPLER=${DOPPLER:-./doppler}
out=experiments/results/table$n.h5
figs=experiments/figures
mkdir -p experiments/results "$figs"
# a run that fails (a method not built yet) is recorded and reported; go on to the tables
"$DOPPLER" sweep "$cfg" --out "$out" "$@" || echo "$0: some runs failed (their cells say so)" >&2
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
