#!/bin/sh
# Train DOPPLER (Stage I, then Stage II from Stage I's checkpoint) on DOPPLER's graphs and print
# the table of doc/doppler-results.md: graph, devices, critical path, greedy DOPPLER with Stage I's
# final parameters and after I (model-selected parameters, where Stage II starts), after II with the final parameters and with
# the model-selected ones, episodes, seconds of I and II. DOPPLER-compatible cost model;
# makespans in DOPPLER units.
# Usage: scripts/train-doppler-graphs.sh [GRAPH_DIR] [EPISODES_I] [EPISODES_II] [CONFIG] [OUTDIR] [GRAPHS...]
#   GRAPHS are FILE:DEVICES (default: all six). With REUSE_IL=1 an existing OUTDIR/NAME-il.h5 is
#   used as Stage I (to compare Stage II configurations from the same start).
set -e
dir=${1:-../shared/data/doppler-graphs}
e1=${2:-2000}
e2=${3:-2000}
cfg=${4:-}
out=${5:-doppler-runs}
# at most five to shift (dash stops the script at a shift past the arguments: fewer than five
# exited 2 with no word; a review)
if [ $# -ge 5 ]; then shift 5; else shift $#; fi
graphs=${*:-"chain_mm_112nodes.txt:4 ffnn_192nodes.txt:4 transformer_block_215nodes.txt:4 full_transformer_layer_261nodes.txt:4 8gpu_transformer_block.txt:8 8gpu_full_transformer.txt:8"}
bin=${DOPPLER:-./doppler}
mkdir -p "$out"
cfgopt=""
[ -n "$cfg" ] && cfgopt="--config $cfg"
tag=$(basename "${cfg:-default}" .json)
now() { date +%s.%N; }
printf '| graph | devices | critical path | I final | after I | after II final | after II selected | episodes | seconds I + II |\n|---|---|---|---|---|---|---|---|---|\n'
for gd in $graphs; do
    g=${gd%%:*}; d=${gd##*:}; name=${g%.txt}
    t0=$(now)
    if [ "${REUSE_IL:-0}" != 1 ] || [ ! -f "$out/$name-il.h5" ]; then
        $bin train --graph "$dir/$g" --devices "$d" $cfgopt --stage il --episodes "$e1" --force --checkpoint "$out/$name-il.h5" \
            --trajectory "$out/$name-il.traj.h5" > "$out/$name-il.out" 2> "$out/$name-il.err"
        echo "$(now) $t0" | awk '{print $1 - $2}' > "$out/$name-il.seconds"
    fi
    t1=$(now)
    $bin train --graph "$dir/$g" --devices "$d" $cfgopt --stage sim --episodes "$e2" --init "$out/$name-il.h5" --force \
        --checkpoint "$out/$name-$tag-sim.h5" --trajectory "$out/$name-$tag-sim.traj.h5" \
        > "$out/$name-$tag-sim.out" 2> "$out/$name-$tag-sim.err"
    t2=$(now)
    cp=$(awk '$1 == "cp" {print $2; exit}' "$out/$name-$tag-sim.out")
    f1=$(awk '$1 == "doppler-final" {print $2; exit}' "$out/$name-il.out")
    a1=$(awk '$1 == "doppler" {print $2; exit}' "$out/$name-il.out")
    f2=$(awk '$1 == "doppler-final" {print $2; exit}' "$out/$name-$tag-sim.out")
    a2=$(awk '$1 == "doppler" {print $2; exit}' "$out/$name-$tag-sim.out")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s + %s | %.0f + %.0f |\n' "$name" "$d" "$cp" "$f1" "$a1" "$f2" "$a2" "$e1" "$e2" \
        "$(cat "$out/$name-il.seconds")" "$(echo "$t2 $t1" | awk '{print $1 - $2}')"
done
