#!/bin/sh
# The main job, one command: install what is missing and build, then generate a Llama-7B layer
# (sequence 4096, tensor parallel 4: 223 ops) and place it on 4 identical devices with
# round-robin, the critical-path heuristic, HEFT, simulated annealing and a briefly trained
# DOPPLER (its model-selected and its final parameters); print each makespan to 4 significant
# digits with the simulations the method spent,
# the lower bound, how DOPPLER's choices compare with the heuristic's, and write a Chrome trace
# of the best and of DOPPLER's placement (open it in https://ui.perfetto.dev).
#
# Environment: QUICKSTART_OUT (folder for the graph, checkpoint and traces; default a new
# folder under ${TMPDIR:-/tmp}), QUICKSTART_EPISODES (episodes per training stage, default 300:
# about 25 s on one core: README.md), DOPPLER_QUICKSTART_BUILD=0 (skip installing and building: the
# checkout is built; tests/test_quickstart.sh), DOPPLER (the command; default ./doppler).
set -eu
cd "$(dirname "$0")/.."
if [ "${DOPPLER_QUICKSTART_BUILD:-1}" != 0 ]; then
    sh ./scripts/install-deps.sh
    [ -x configure ] || autoreconf -fi
    [ -f Makefile ] || ./configure
    make -j"$(nproc)"
fi
doppler=${DOPPLER:-./doppler}
# the command as the Next: lines print it: a path that works from any folder (the build leaves
# doppler in the checkout, not on PATH; `make install` puts it there)
case $doppler in
*/*) doppler_shown=$(cd "$(dirname "$doppler")" && pwd)/$(basename "$doppler") ;;
*) doppler_shown=$doppler ;;
esac
episodes=${QUICKSTART_EPISODES:-300}
out=${QUICKSTART_OUT:-}
if [ -z "$out" ]; then out=$(mktemp -d "${TMPDIR:-/tmp}/doppler-quickstart.XXXXXX"); fi
mkdir -p "$out"
out=$(cd "$out" && pwd)  # the printed paths work from any folder
graph=$out/llama-layer.json
config=bench/doppler-project.json

# a number to 4 significant digits, trailing zeros kept (0.08010), no dangling point (1200)
sig4() { awk -v x="$1" 'BEGIN { s = sprintf("%#.4g", x); sub(/\.$/, "", s); print s }'; }
# "makespan SIMULATIONS" of a `doppler place` text output
place_row() {
    ms=$(sed -n 's/^makespan: \([^ ]*\).*/\1/p' "$1")
    sims=$(sed -n 's/^simulations spent by the method: \([0-9]*\).*/\1/p' "$1")
    echo "$ms ${sims:-0}"
}

"$doppler" graph gen llama-layer --out "$graph" > /dev/null
"$doppler" graph info "$graph" > "$out/info.txt"
info() { sed -n "s/^$1: *\\([^ ]*\\).*/\\1/p" "$out/info.txt"; }
echo
echo "Graph: one Llama-7B layer, tensor parallel 4 (doppler graph gen llama-layer): $(info ops) ops, $(info edges) edges"
echo "Machine: 4 identical devices, 1e13 FLOP/s each, 12 GB/s links with 10 us latency, transfers in"
echo "parallel, one op at a time per device (the DOPPLER-compatible simulator). Makespans in seconds."
echo
echo "Training DOPPLER briefly ($config: Stage I imitation of the critical-path heuristic, then"
echo "Stage II REINFORCE against the simulator, $episodes episodes each) ..."
"$doppler" train --graph "$graph" --config "$config" --pipeline --episodes "$episodes" \
    --checkpoint "$out/doppler.h5" --trajectory "$out/doppler.traj.h5" --force --quiet > "$out/train.txt"
train_sims=$(awk '$1 == "stage" { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^simulations/) s += $i } END { print s + 0 }' "$out/train.txt")

printf '%s\n' round-robin cp heft anneal > "$out/methods"
: > "$out/rows"
for m in round-robin cp heft anneal; do
    "$doppler" place --graph "$graph" --method "$m" --seed 1 --out "$out/$m.assignment.json" > "$out/$m.txt"
    echo "$m $(place_row "$out/$m.txt")" >> "$out/rows"
done
# annealing with exactly the simulations DOPPLER's training spent: the comparison at equal cost
"$doppler" place --graph "$graph" --method anneal --budget "$train_sims" --seed 1 > "$out/anneal-eq.txt"
echo "anneal@$train_sims $(place_row "$out/anneal-eq.txt")" >> "$out/rows"
"$doppler" place --graph "$graph" --method doppler --checkpoint "$out/doppler.h5" \
    --out "$out/doppler.assignment.json" --trace "$out/doppler.trace.json" > "$out/doppler.txt"
set -- $(place_row "$out/doppler.txt")
echo "doppler $1 $((train_sims + $2))" >> "$out/rows"
# the final parameters too: place uses the model-selected ones (the best at a checkpoint
# evaluation), and a learned method is reported with both
"$doppler" place --graph "$graph" --method doppler --checkpoint "$out/doppler.h5" --parameters final \
    --out "$out/doppler-final.assignment.json" > "$out/doppler-final.txt"
set -- $(place_row "$out/doppler-final.txt")
echo "doppler-final $1 $((train_sims + $2))" >> "$out/rows"

echo
printf '  %-18s %-14s %s\n' method "makespan (s)" "simulations spent"
while read -r m ms sims; do
    case $m in
    anneal) note="(simulated annealing, its default budget)" ;;
    anneal@*) note="(annealing given the simulations DOPPLER's training spent)"; m=anneal ;;
    doppler) note="($train_sims training + 1 to place; model-selected parameters, what place uses)" ;;
    doppler-final) note="(final parameters, the same simulations: place --parameters final)"; m=doppler ;;
    cp) note="(critical path: highest b-level first, earliest start)" ;;
    heft) note="(HEFT, Topcuoglu et al. 2002)" ;;
    round-robin) note="(op k of the topological order on device k mod 4)" ;;
    *) note= ;;
    esac
    printf '  %-18s %-14s %-7s %s\n' "$m" "$(sig4 "$ms")" "$sims" "$note"
done < "$out/rows"
printf '  %-18s %-14s %-7s %s\n' "lower bound" "$(sig4 "$(info 'lower bound')")" "" "(max of the critical path without communication, work / compute streams)"
printf '  %-18s %-14s %-7s %s\n' "single device" "$(sig4 "$(info 'single device')")" "" "(everything on one device)"

# ties: rows equal to 4 significant digits
ties=$(while read -r m ms sims; do echo "$(sig4 "$ms") ${m%@*}"; done < "$out/rows" | sort | awk '
    function flush() { if (n) { out = out (out == "" ? "" : "; ") line " (" prev ")" } }
    $1 == prev { line = line " = " $2; n++; next }
    { flush(); line = $2; prev = $1; n = 0 }
    END { flush(); print out }')
if [ -n "$ties" ]; then
    echo "  ties, equal to 4 significant digits: $ties"
fi
best=$(sort -k2,2g "$out/rows" | head -n 1)
set -- $best
best_m=${1%@*}
best_name=$best_m
case $1 in
doppler) ;;
doppler-final) best_name="doppler (final parameters)"
    "$doppler" place --graph "$graph" --method doppler --checkpoint "$out/doppler.h5" --parameters final \
        --trace "$out/$best_m.trace.json" > /dev/null ;;
*@*) "$doppler" place --graph "$graph" --method anneal --budget "${1#*@}" --seed 1 --trace "$out/$best_m.trace.json" > /dev/null ;;
*) "$doppler" place --graph "$graph" --method "$1" --seed 1 --trace "$out/$best_m.trace.json" > /dev/null ;;
esac
echo
echo "Best here: $best_name ($(sig4 "$2") s)."
echo
echo "DOPPLER's choices against the critical-path heuristic's (a step where the heuristic ties counts as"
echo "disagreement, so only a unique best choice can agree; the ties are listed apart):"
sed -n '/^  doppler /p; /^  doppler-final /p' "$out/train.txt"
echo
echo "Files in $out:"
echo "  $best_m.trace.json (the best placement) and doppler.trace.json: Chrome traces of the schedules, one"
echo "    row per device; open them in https://ui.perfetto.dev or chrome://tracing"
echo "  doppler.h5 (checkpoint), doppler.traj.h5 (training trajectory, doc/file-formats.md),"
echo "  *.assignment.json (each method's placement), llama-layer.json (the graph)"
echo
if [ "$doppler_shown" != doppler ]; then
    echo "The command is $doppler_shown (not on PATH: run it by that path, or sudo make install"
    echo "to put doppler in /usr/local/bin)."
fi
echo "Next: $doppler_shown place --graph $graph --method doppler --checkpoint $out/doppler.h5 --refine anneal"
cp_ms=$(awk '$1 == "cp" { print $2 }' "$out/rows")
rr_ms=$(awk '$1 == "round-robin" { print $2 }' "$out/rows")
echo "      $doppler_shown report --plot learning --trajectory $out/doppler.traj.h5 --reference cp=$cp_ms \\"
echo "          --reference round-robin=$rr_ms --out learning.png"
