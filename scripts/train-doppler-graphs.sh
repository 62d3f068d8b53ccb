#!/bin/sh
# Train DOPPLER (Stage I, then Stage II from Stage I's checkpoint) on DOPPLER's graphs and print
# the table of issue 5: graph, critical path, greedy DOPPLER after I and after II, ratio
# (after II / cp), episodes, seconds. DOPPLER-compatible cost model; makespans in DOPPLER units.
# Usage: scripts/train-doppler-graphs.sh [GRAPH_DIR] [EPISODES_I] [EPISODES_II] [CONFIG] [OUTDIR] [GRAPHS...]
set -e
dir=${1:-../shared/data/doppler-graphs}
e1=${2:-2000}
e2=${3:-2000}
cfg=${4:-}
out=${5:-doppler-runs}
shift 5 2>/dev/null || shift $#
graphs=${*:-"chain_mm_112nodes.txt:4 ffnn_192nodes.txt:4 transformer_block_215nodes.txt:4 full_transformer_layer_261nodes.txt:4 8gpu_transformer_block.txt:8 8gpu_full_transformer.txt:8"}
bin=${DOPPLER:-./doppler}
mkdir -p "$out"
cfgopt=""
[ -n "$cfg" ] && cfgopt="--config $cfg"
printf '| graph | devices | critical path | DOPPLER after I | after II | ratio II/cp | episodes | seconds |\n|---|---|---|---|---|---|---|---|\n'
for gd in $graphs; do
    g=${gd%%:*}; d=${gd##*:}; name=${g%.txt}
    t0=$(date +%s.%N)
    $bin train --graph "$dir/$g" --devices "$d" $cfgopt --stage il --episodes "$e1" --checkpoint "$out/$name-il.h5" \
        --trajectory "$out/$name-il.traj.h5" > "$out/$name-il.out" 2> "$out/$name-il.err"
    $bin train --graph "$dir/$g" --devices "$d" $cfgopt --stage sim --episodes "$e2" --init "$out/$name-il.h5" \
        --checkpoint "$out/$name-sim.h5" --trajectory "$out/$name-sim.traj.h5" > "$out/$name-sim.out" 2> "$out/$name-sim.err"
    t1=$(date +%s.%N)
    cp=$(awk '$1 == "cp" {print $2}' "$out/$name-sim.out")
    a1=$(awk '$1 == "doppler" {print $2}' "$out/$name-il.out")
    a2=$(awk '$1 == "doppler" {print $2}' "$out/$name-sim.out")
    printf '| %s | %s | %s | %s | %s | %s | %s + %s | %.0f |\n' "$name" "$d" "$cp" "$a1" "$a2" \
        "$(echo "$a2 $cp" | awk '{printf "%.3f", $1 / $2}')" "$e1" "$e2" "$(echo "$t1 $t0" | awk '{print $1 - $2}')"
done
