#!/bin/sh
# bench/transfer.sh (make bench-transfer): zero-shot placement (issue 16). A DOPPLER model is
# trained only on generated graphs (--family, seeded; validation graphs drawn from the same
# families), then places the six DOPPLER graph files, which it has never seen (4 devices, 8 for
# the 8gpu_ files), with one greedy rollout. Per graph: its makespan, the best instant method's
# (round-robin, cp, heft, cpop, peft, etf) and their ratio, and the wall time of the placement
# and CPU time of the placement (the whole `doppler place` process: start, reading the graph and
# the checkpoint, the rollout, the simulation; /usr/bin/time). One line per training
# seed and graph, then the mean ratio per seed.
#   SEEDS="1 2 3 4 5" EPISODES=300 COUNT=24 CONFIG=bench/doppler-project.json sh bench/transfer.sh
# CKPT_DIR=dir: checkpoints dir/doppler-S.h5 are used when present, else trained and kept there
# (bench/transfer-size.sh reuses them).
# REFINE_BUDGETS="50 200" (with CKPT_DIR holding improve-S.h5, the general improvement policy of
# bench/transfer-improve.sh, also trained on generated graphs only): one more row per budget B,
# "doppler+improve-B", the DOPPLER greedy placement refined by the improvement search
# (--refine improve --proposals improve-S.h5 --refine-budget B, placement seed S): a placement
# made by the two learned models alone, B simulations.
# DEMO_BUDGET=B: expert iteration. The DOPPLER model's Stage II imitates, on each training
# graph, the improvement search's placement of B simulations with the general improvement policy
# of the same seed (the "demonstrations" key, doc/estimators.md): CONFIG plus
# "demonstrations": {"method": "improve", "budget": B, "checkpoint": CKPT_DIR/improve-S.h5},
# that policy trained first when absent (bench/transfer-improve.sh's command); the checkpoints
# are CKPT_DIR/doppler-demoB-S.h5. EPISODES= (empty) keeps the config's episodes per stage.
# BANDWIDTH_RANGE=LO:HI: the DOPPLER model's training and validation graphs each on a uniform
# machine of its own (train --bandwidth-range; checkpoints named with -bwLO:HI). VAL_COUNT=M:
# validation graphs drawn (default 5; checkpoints named with -valM when not 5).
# COMM_RATIO_RANGE=LO:HI: instead, each on a uniform machine of DOPPLER's communication rule with
# a ratio of its own (train --comm-ratio-range; checkpoints named with -crLO:HI).
# TEST_MACHINES="default --comm-ratio=4": the generated test set (data/testsets/transfer.txt, ten
# graphs never trained or model-selected on, each on the device count it was made for) is placed
# the same way on each machine listed (machine options with '=' for a space; "default": none),
# rows "test:K@MACHINE" (K = the spec's line) and a summary per machine; empty: not placed.
# The expert-iteration rows of EXPERIMENTS.md:
#   SEEDS="1 2 3 4 5" CKPT_DIR=ck COUNT=96 EPISODES= CONFIG=bench/doppler-transfer.json \
#   DEMO_BUDGET=2000 sh bench/transfer.sh
set -eu
top_srcdir=${top_srcdir:-.}
bin=${DOPPLER:-$top_srcdir/doppler}
SH=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
SEEDS=${SEEDS:-1}
EPISODES=${EPISODES-300}
DEMO_BUDGET=${DEMO_BUDGET:-}
BANDWIDTH_RANGE=${BANDWIDTH_RANGE:-}
COMM_RATIO_RANGE=${COMM_RATIO_RANGE:-}
mtag="${BANDWIDTH_RANGE:+-bw$BANDWIDTH_RANGE}${COMM_RATIO_RANGE:+-cr$COMM_RATIO_RANGE}"
VAL_COUNT=${VAL_COUNT:-5}
IMPROVE_EPISODES=${IMPROVE_EPISODES:-20000}
COUNT=${COUNT:-24}
CONFIG=${CONFIG:-$top_srcdir/bench/doppler-project.json}
FAMILIES=${FAMILIES:-chainmm,ffnn,llama-block,llama-layer,daggen}
TEST_MACHINES=${TEST_MACHINES-default}
[ -d "$SH/doppler-graphs" ] || { echo "bench/transfer.sh: $SH/doppler-graphs not found (DOPPLER_SHARED_DATA)"; exit 77; }
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-bench-transfer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
CKPT_DIR=${CKPT_DIR:-$tmp}
. "$top_srcdir/bench/lib.sh"
now() { date +%s.%N; }
ms_of() { sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p' "$1"; }
echo "# zero-shot: trained on $COUNT graphs of $FAMILIES, ${EPISODES:-the config} episodes per stage, config $CONFIG${DEMO_BUDGET:+, demonstrations of $DEMO_BUDGET simulations}${BANDWIDTH_RANGE:+, link bandwidths $BANDWIDTH_RANGE}${COMM_RATIO_RANGE:+, communication ratios $COMM_RATIO_RANGE}"
# zero_shot GRAPH NAME MACHINE_OPTIONS ROWS: the greedy placement of checkpoint $ck and the best
# instant method on GRAPH; prints and appends the row to ROWS, leaves the ratio in r
zero_shot() {
    a=$(now)
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$bin" place --graph "$1" $3 --method doppler --checkpoint "$ck" --json > "$tmp/d.json"
    b=$(now)
    cpu=$(awk '{print ($1 + $2) * 1000}' "$tmp/cpu")
    d=$(ms_of "$tmp/d.json")
    dev=$(sed -n 's/.*"busy":\[\([^]]*\)\].*/\1/p' "$tmp/d.json" | tr ',' '\n' | wc -l)
    best=""; bm=""
    for m in round-robin cp heft cpop peft etf; do
        # shellcheck disable=SC2086
        "$bin" place --graph "$1" $3 --method $m --json > "$tmp/m.json" 2> /dev/null || continue
        x=$(ms_of "$tmp/m.json")
        if [ -z "$best" ] || [ "$(echo "$x < $best" | bc -l)" = 1 ]; then best=$x; bm=$m; fi
    done
    r=$(echo "scale=4; $d / $best" | bc -l)
    printf '%-5s %-36s %4s %12.7g %12.7g %-12s %8.4f %9.1f %9.1f\n' "$seed" "$2" "$dev" "$d" "$best" "$bm" "$r" \
        "$(echo "($b - $a) * 1000" | bc -l)" "$cpu" | tee -a "$4"
}
printf '%-5s %-36s %4s %12s %12s %-12s %8s %9s %9s\n' seed graph dev doppler best_instant method ratio wall_ms cpu_ms
for seed in $SEEDS; do
    vtag=""; [ "$VAL_COUNT" = 5 ] || vtag="-val$VAL_COUNT"
    ck="$CKPT_DIR/doppler$mtag$vtag-$seed.h5"
    cfg=$CONFIG
    if [ -n "$DEMO_BUDGET" ]; then
        ck="$CKPT_DIR/doppler-demo$DEMO_BUDGET$mtag$vtag-$seed.h5"
        imp="$CKPT_DIR/improve-$seed.h5"
        bench_improve_ckpt "$seed"
        cfg="$tmp/config-$seed.json"
        python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["demonstrations"] = {"method": "improve", "budget": int(sys.argv[2]), "checkpoint": sys.argv[3]}; json.dump(c, open(sys.argv[4], "w"))' \
            "$CONFIG" "$DEMO_BUDGET" "$(cd "$(dirname "$imp")" && pwd)/$(basename "$imp")" "$cfg"
    fi
    t0=$(now)
    settings="FAMILIES=$FAMILIES COUNT=$COUNT VAL_COUNT=$VAL_COUNT EPISODES=$EPISODES CONFIG=$(bench_config_sum "$CONFIG") DEMO_BUDGET=$DEMO_BUDGET BANDWIDTH_RANGE=$BANDWIDTH_RANGE COMM_RATIO_RANGE=$COMM_RATIO_RANGE"
    rm -f "$tmp/train-$seed.out"
    [ -f "$ck" ] || : > "$tmp/train-$seed.out"
    # shellcheck disable=SC2086
    bench_ckpt "$ck" "$settings" "$bin" train --family "$FAMILIES" --family-count "$COUNT" --val-count "$VAL_COUNT" --seed "$seed" \
        --config "$cfg" --pipeline ${EPISODES:+--episodes "$EPISODES"} ${BANDWIDTH_RANGE:+--bandwidth-range "$BANDWIDTH_RANGE"} \
        ${COMM_RATIO_RANGE:+--comm-ratio-range "$COMM_RATIO_RANGE"} --quiet > "$tmp/train-$seed.out" 2> "$tmp/train-$seed.err" ||
        { cat "$tmp/train-$seed.err"; exit 1; }
    t1=$(now)
    [ -s "$tmp/train-$seed.out" ] && echo "# seed $seed: training $(echo "$t1 - $t0" | bc) s; $(grep '^stage sim' "$tmp/train-$seed.out")"
    sum=0; k=0
    for f in chain_mm_112nodes ffnn_192nodes transformer_block_215nodes full_transformer_layer_261nodes \
             8gpu_transformer_block 8gpu_full_transformer; do
        g="$SH/doppler-graphs/$f.txt"
        dev=4; case $f in 8gpu_*) dev=8;; esac
        zero_shot "$g" "$f" "--devices $dev" "$tmp/rows"
        sum=$(echo "$sum + $r" | bc -l); k=$((k + 1))
        imp="$CKPT_DIR/improve-$seed.h5"
        for rb in ${REFINE_BUDGETS:-}; do
            [ -f "$imp" ] || { echo "# no $imp: no doppler+improve rows"; break; }
            /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$bin" place --graph "$g" --devices "$dev" --method doppler --checkpoint "$ck" \
                --refine improve --proposals "$imp" --refine-budget "$rb" --seed "$seed" --json > "$tmp/r.json"
            x=$(ms_of "$tmp/r.json")
            printf '%-5s %-36s %4s %12.2f %12.2f %-12s %8.4f %9s %9.1f  doppler+improve-%s\n' "$seed" "$f" "$dev" "$x" "$best" "$bm" \
                "$(echo "scale=4; $x / $best" | bc -l)" - "$(awk '{print ($1 + $2) * 1000}' "$tmp/cpu")" "$rb" | tee -a "$tmp/rows"
        done
    done
    echo "# seed $seed: mean ratio to the best instant method $(echo "scale=3; $sum / $k" | bc -l)"
    for tm in $TEST_MACHINES; do
        mo=""; [ "$tm" = default ] || mo=$(echo "$tm" | tr '=' ' ')
        i=0
        grep -v '^#' "$top_srcdir/data/testsets/transfer.txt" | while read -r spec; do
            i=$((i + 1))
            [ -f "$tmp/test$i.json" ] || {
                model=${spec#gen:}; model=${model%%\?*}
                # shellcheck disable=SC2046
                "$bin" graph gen "$model" $(echo "${spec#*\?}" | tr '&' '\n' | sed 's/^/--/; s/=/ /') --out "$tmp/test$i.json" > /dev/null
            }
            zero_shot "$tmp/test$i.json" "test:$i@$tm" "$mo" "$tmp/trows"
        done
    done
done
# per method (the greedy rollout, and doppler+improve-B): the mean over the graphs of the ratio of
# each graph's mean (over the seeds) to the best instant method, and the graphs where that is below 1
if [ -f "$tmp/rows" ]; then awk '{ m = (NF == 10 ? $10 : "doppler-greedy"); k = m " " $2; r[k] += $7; n[k]++; c[m] += $9; cn[m]++ }
    END { for (k in r) { split(k, a, " "); g[a[1]] += r[k] / n[k]; gn[a[1]]++; if (r[k] / n[k] < 1) b[a[1]] += 1 }
          for (m in g) printf "# %s: mean ratio to the best instant method %.3f, below 1 on %d of %d graphs, %.0f ms of CPU per placement\n",
                              m, g[m] / gn[m], b[m], gn[m], c[m] / cn[m] }' "$tmp/rows" | sort; fi
# the generated test set, per machine: the same means over its graphs
if [ -f "$tmp/trows" ]; then awk '{ split($2, t, "@"); k = t[2] " " t[1]; r[k] += $7; n[k]++; c[t[2]] += $9; cn[t[2]]++ }
    END { for (k in r) { split(k, a, " "); g[a[1]] += r[k] / n[k]; gn[a[1]]++; if (r[k] / n[k] < 1) b[a[1]] += 1 }
          for (m in g) printf "# generated test set, machine %s: doppler-greedy mean ratio to the best instant method %.3f, below 1 on %d of %d graphs, %.0f ms of CPU per placement\n",
                              m, g[m] / gn[m], b[m], gn[m], c[m] / cn[m] }' "$tmp/trows" | sort; fi
