#!/bin/sh
# bench/transfer-size.sh (part of make bench-transfer): the size goal of issue 16. Models trained
# only on generated graphs of at most 403 ops (--family, as bench/transfer.sh and bench/improve.sh
# train them) place stacked Llama layers far larger than any training graph:
#   doppler graph gen llama-layer --layers 11   (2,163 ops, 4 devices)
#   doppler graph gen llama-layer --layers 52   (10,117 ops, 4 devices)
# Per graph: round-robin, cp and the best instant method (round-robin, cp, heft, cpop, peft,
# etf); the DOPPLER general model's greedy rollout (place --method doppler); the improvement
# method (place --method improve) from cp and from the best instant placement (config init
# "best-instant", its 6 simulations counted in the budget) at each budget of BUDGETS. Per row:
# makespan (simulator time units), its ratio to cp and to the best instant method, the
# simulations spent, and the CPU time of the whole `doppler place` process on one core
# (OPENBLAS_NUM_THREADS=1; /usr/bin/time user + system; the wall time on the shared machine is
# printed beside it).
#   SEEDS="1 2 3" CKPT_DIR=dir BUDGETS="50 200 500" sh bench/transfer-size.sh
# CKPT_DIR holding doppler-S.h5 and improve-S.h5 per seed S skips training (else they are trained
# here as bench/transfer.sh and bench/improve.sh do: EPISODES, IMPROVE_EPISODES, COUNT, CONFIG,
# COMM_RATIO_RANGE, VAL_COUNT). DEMO_BUDGET=B and COMM_RATIO_RANGE name the checkpoint as
# bench/transfer.sh does (doppler-demoB-crLO:HI-S.h5): with DEMO_BUDGET it must be there already
# (make bench-transfer runs bench/transfer.sh first with the same settings; this script placed
# with a default-settings model of its own instead: a review).
set -eu
top_srcdir=${top_srcdir:-.}
bin=${DOPPLER:-$top_srcdir/doppler}
SEEDS=${SEEDS:-1}
BUDGETS=${BUDGETS:-50 200 500}
LAYERS=${LAYERS:-11 52}
EPISODES=${EPISODES-300}  # empty: the config's episodes, as bench/transfer.sh reads it (it made 300 of empty: a review)
IMPROVE_EPISODES=${IMPROVE_EPISODES:-20000}
COUNT=${COUNT:-24}
CONFIG=${CONFIG:-$top_srcdir/bench/doppler-project.json}
FAMILIES=${FAMILIES:-chainmm,ffnn,llama-block,llama-layer,daggen}
CKPT_DIR=${CKPT_DIR:-}
DEMO_BUDGET=${DEMO_BUDGET:-}
COMM_RATIO_RANGE=${COMM_RATIO_RANGE:-}
VAL_COUNT=${VAL_COUNT:-5}
mtag="${COMM_RATIO_RANGE:+-cr$COMM_RATIO_RANGE}"
vtag=""; [ "$VAL_COUNT" = 5 ] || vtag="-val$VAL_COUNT"
# bench/transfer.sh's name of seed $1's DOPPLER checkpoint under these settings
doppler_ckpt() { echo "$CKPT_DIR/doppler${DEMO_BUDGET:+-demo$DEMO_BUDGET}$mtag$vtag-$1.h5"; }
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-bench-size.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -n "$CKPT_DIR" ] || CKPT_DIR=$tmp
echo '{"init": "best-instant"}' > "$tmp/bi.json"
echo '{"init": "cp"}' > "$tmp/cp.json"
now() { date +%s.%N; }
ms_of() { sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p' "$1"; }
sims_of() { sed -n 's/.*"simulations":\([0-9]*\).*/\1/p' "$1"; }
. "$top_srcdir/bench/lib.sh"
for seed in $SEEDS; do
    # the DOPPLER model of bench/transfer.sh's settings (the same checkpoint name and settings)
    ck=$(doppler_ckpt "$seed")
    if [ -n "$DEMO_BUDGET" ]; then
        [ -f "$ck" ] || { echo "bench/transfer-size.sh: $ck not found: bench/transfer.sh with the same CKPT_DIR," \
                               "DEMO_BUDGET and COMM_RATIO_RANGE trains it" >&2; exit 1; }
    else
        # shellcheck disable=SC2086
        bench_ckpt "$ck" "FAMILIES=$FAMILIES COUNT=$COUNT VAL_COUNT=$VAL_COUNT EPISODES=$EPISODES CONFIG=$(bench_config_sum "$CONFIG") DEMO_BUDGET= BANDWIDTH_RANGE= COMM_RATIO_RANGE=$COMM_RATIO_RANGE" \
            "$bin" train --family "$FAMILIES" --family-count "$COUNT" --val-count "$VAL_COUNT" --seed "$seed" --config "$CONFIG" \
            --pipeline ${EPISODES:+--episodes "$EPISODES"} ${COMM_RATIO_RANGE:+--comm-ratio-range "$COMM_RATIO_RANGE"} \
            --quiet > /dev/null
    fi
    bench_improve_ckpt "$seed"
done
# place ARGS...: one `doppler place` run on $g; sets ms, sims, cpu (ms), wall (ms)
place() {
    t_a=$(now)
    /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$bin" place --graph "$g" --devices 4 "$@" --json > "$tmp/p.json"
    t_b=$(now)
    ms=$(ms_of "$tmp/p.json"); sims=$(sims_of "$tmp/p.json"); sims=${sims:-0}
    cpu=$(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$tmp/cpu")
    wall=$(echo "($t_b - $t_a) * 1000" | bc -l | awk '{ printf "%.0f", $1 }')
}
echo "# size: graph ops seed method budget makespan ratio_cp ratio_best_instant simulations cpu_ms wall_ms"
for L in $LAYERS; do
    g="$tmp/llama-layer-L$L.json"
    "$bin" graph gen llama-layer --layers "$L" --out "$g" > "$tmp/gen.out"
    ops=$(sed -n 's/.*, \([0-9]*\) ops,.*/\1/p' "$tmp/gen.out")
    best=""; bm=""; cp=""
    : > "$tmp/instant"
    for m in round-robin cp heft cpop peft etf; do
        place --method $m
        [ $m = cp ] && cp=$ms
        if [ -z "$best" ] || [ "$(echo "$ms < $best" | bc -l)" = 1 ]; then best=$ms; bm=$m; fi
        echo "$m $ms $cpu $wall" >> "$tmp/instant"
    done
    row() { echo "L$L $ops $seed $1 $2 $ms $(echo "scale=4; $ms / $cp" | bc -l) $(echo "scale=4; $ms / $best" | bc -l) $sims $cpu $wall"; }
    while read -r m ms cpu wall; do seed=-; sims=0; row "$m" -; done < "$tmp/instant"
    echo "# L$L: best instant method $bm ($best)"
    for seed in $SEEDS; do
        place --method doppler --checkpoint "$(doppler_ckpt "$seed")"
        row doppler-greedy -
        for b in $BUDGETS; do
            place --method improve --checkpoint "$CKPT_DIR/improve-$seed.h5" --config "$tmp/cp.json" --budget "$b" --seed "$seed"
            row improve-from-cp "$b"
            place --method improve --checkpoint "$CKPT_DIR/improve-$seed.h5" --config "$tmp/bi.json" --budget "$b" --seed "$seed"
            row improve-from-best-instant "$b"
        done
    done
done
