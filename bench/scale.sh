#!/bin/sh
# bench/scale.sh (make bench-scale): placing a whole training step at scale (issue 30).
#
# 1. The Llama-7B training step, 32 layers at tensor-parallel degree 8 (forward, backward, Adam:
#    `doppler graph gen llama-layer --layers LAYERS --tp 8 --training`, 38,574 ops), on the 8
#    devices of MACHINE (place's machine options; default "--topology dgx1-v100", the bundled
#    DGX-1: the general engine; "--devices 8": 8 uniform devices and the DOPPLER-compatible
#    engine): round-robin, cp, heft, etf (instant; cp and heft also on groups of N ops for each N
#    of INSTANT_COARSEN, default "2": `place --coarsen 2`, pairs, which gave cp 7.735 s on the
#    99,774-op graph against 8.754 for ETF, EXPERIMENTS.md "Training on group graphs"; "" for
#    none), the DOPPLER general
#    model's greedy rollout (CKPT), the improvement search (IMPROVE_CKPT, from the best instant
#    placement, BUDGET simulations) and annealing (BUDGET simulations). Per method the makespan
#    (simulated seconds), its ratio to the best instant method's, the simulations spent, and the
#    wall seconds, CPU seconds (user + system) and peak memory (maximum RSS) of the whole
#    `doppler place` process (read, place, simulate), from /usr/bin/time -v.
# 2. An imported torchvision model's training step (TORCH_MODEL, default resnet50; "" skips it):
#    `doppler graph import torchvision:TORCH_MODEL --training --input-shape TORCH_INPUT
#    --optimizer TORCH_OPTIMIZER` (python/doppler/importers.py, the trace of Graph.from_torch with
#    training=True: forward, backward, update, one op per aten op), default input 32x3x224x224
#    (32x3x299x299 for inception_v3: 32 images per device, torchvision's classification recipe)
#    and sgd; placed by the same METHODS on the same MACHINE, the same columns. Needs
#    python3-torch and python3-torchvision; without them this part says so and is skipped (the
#    exit status is the Llama part's). The import's own wall and CPU seconds and peak RSS are
#    printed above its table (the trace runs the step once on the CPU: about 4 GB at ResNet-50's
#    default). LAYERS="" skips the Llama-7B table (then only this one and the sweep run).
# 3. The DOPPLER rollout against graph size: the same training graphs with SWEEP_LAYERS layers
#    (1,374 to about 100,000 ops), one `doppler place --method doppler` each, the same columns.
#
# Checkpoints: CKPT (a doppler train checkpoint; a general model places any graph) and
# IMPROVE_CKPT (train --method improve). Unset, they are trained here into CKPT_DIR (default: a
# fresh folder, removed afterwards) on generated graphs only, as bench/transfer-size.sh does:
# CONFIG (bench/doppler-zeroshot.json: the engine state) with EPISODES per stage on COUNT graphs
# of FAMILIES, and the improvement policy with IMPROVE_EPISODES on 32 (bench/lib.sh).
#   sh bench/scale.sh
#   CKPT=ck/doppler-1.h5 IMPROVE_CKPT=ck/improve-1.h5 SWEEP_LAYERS="1 3 8" BUDGET=500 sh bench/scale.sh
#   LAYERS= SWEEP_LAYERS= TORCH_MODEL=vit_b_16 TORCH_INPUT=8x3x224x224 sh bench/scale.sh
# METHODS: the methods run (default "round-robin cp heft etf doppler improve anneal"; the ratio
# column needs an instant one); SWEEP_LAYERS="" skips the sweep. SWEEP_COARSEN: the sweep's
# rollouts, "none" for the plain one, N for `--coarsen N` (the groups placed, policy/dp_coarse.h)
# and N:RULE for `--coarsen N --coarsen-rule RULE`, e.g. SWEEP_COARSEN="none 16 16:chains"; default
# "none". SWEEP_REFINE: place options added to the coarsened rollouts (e.g. "--refine local
# --refine-budget 100"; default none).
# Every method runs with OPENBLAS_NUM_THREADS=1 and at most CPU_LIMIT CPU seconds (ulimit -t;
# default 1800): one that reaches it is reported as stopped there, one that fails with its exit
# status (the bench then exits 1 at the end). CPU seconds are the figures to compare on a shared
# host; wall seconds are printed beside them.
set -eu
top_srcdir=${top_srcdir:-.}
bin=${DOPPLER:-$top_srcdir/doppler}
MACHINE=${MACHINE:---topology dgx1-v100}
CPU_LIMIT=${CPU_LIMIT:-1800}
METHODS=${METHODS:-round-robin cp heft etf doppler improve anneal}
INSTANT_COARSEN=${INSTANT_COARSEN-2}
has() { case " $METHODS " in *" $1 "*) return 0 ;; esac; return 1; }
LAYERS=${LAYERS-32}
TORCH_MODEL=${TORCH_MODEL-resnet50}
TORCH_OPTIMIZER=${TORCH_OPTIMIZER:-sgd}
BUDGET=${BUDGET:-2000}
SWEEP_LAYERS=${SWEEP_LAYERS-1 3 8 26 83}
SEED=${SEED:-1}
EPISODES=${EPISODES:-300}
COUNT=${COUNT:-24}
IMPROVE_EPISODES=${IMPROVE_EPISODES:-20000}
CONFIG=${CONFIG:-$top_srcdir/bench/doppler-zeroshot.json}
FAMILIES=${FAMILIES:-chainmm,ffnn,llama-block,llama-layer,daggen}
CKPT=${CKPT:-}
IMPROVE_CKPT=${IMPROVE_CKPT:-}
[ -x /usr/bin/time ] || { echo "bench/scale.sh: /usr/bin/time not found (apt-get install time)"; exit 77; }
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-bench-scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
CKPT_DIR=${CKPT_DIR:-$tmp}
. "$top_srcdir/bench/lib.sh"
if [ -z "$CKPT" ]; then
    CKPT=$CKPT_DIR/doppler-$SEED.h5
    echo "# training the DOPPLER general model: $COUNT graphs of $FAMILIES, $EPISODES episodes per stage, $CONFIG" >&2
    bench_ckpt "$CKPT" "FAMILIES=$FAMILIES COUNT=$COUNT VAL_COUNT=5 EPISODES=$EPISODES CONFIG=$(bench_config_sum "$CONFIG") DEMO_BUDGET= BANDWIDTH_RANGE= COMM_RATIO_RANGE=" \
        "$bin" train --family "$FAMILIES" --family-count "$COUNT" --val-count 5 --seed "$SEED" --config "$CONFIG" \
        --pipeline --episodes "$EPISODES" --quiet > /dev/null
fi
if [ -z "$IMPROVE_CKPT" ] && has improve; then
    echo "# training the improvement policy: $IMPROVE_EPISODES episodes on 32 graphs of $FAMILIES" >&2
    bench_improve_ckpt "$SEED"
    IMPROVE_CKPT=$CKPT_DIR/improve-$SEED.h5
fi
echo '{"init": "best-instant"}' > "$tmp/bi.json"
failed=0

# measure ARGS...: run ARGS under /usr/bin/time -v and the CPU limit; sets rc, wall, cpu (s),
# rss (MiB)
measure() {
    rc=0
    # shellcheck disable=SC2016 # the inner shell expands $0 and $@
    /usr/bin/time -v -o "$tmp/time" sh -c 'ulimit -t "$0" && exec "$@"' "$CPU_LIMIT" "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s }' "$tmp/time")
    cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tmp/time")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$tmp/time")
}
json_num() { sed -n "s/.*\"$1\":\([-0-9.e+]*\).*/\1/p" "$tmp/out"; }

# gen L FILE: the training graph of L layers; sets ops, gen_wall, gen_cpu, gen_rss
gen() {
    measure "$bin" graph gen llama-layer --layers "$1" --tp 8 --training --out "$2"
    [ "$rc" = 0 ] || { cat "$tmp/err"; exit 1; }
    ops=$(sed -n 's/.*, \([0-9]*\) ops,.*/\1/p' "$tmp/out")
    gen_wall=$wall; gen_cpu=$cpu; gen_rss=$rss
}

row() { # name
    if [ "$rc" != 0 ]; then
        failed=1
        echo "| $1 | $(why) | | | $wall | $cpu | $rss |"
        return
    fi
    ms=$(json_num makespan); sims=$(json_num simulations)
    if [ -z "$best" ]; then ratio=-; else ratio=$(echo "scale=4; $ms / $best" | bc -l | sed 's/^\./0./'); fi
    echo "| $1 | $(printf %.6g "$ms") | $ratio | ${sims:-0} | $wall | $cpu | $rss |"
}
# why the last run gave no result
why() {
    if awk -v c="$cpu" -v l="$CPU_LIMIT" 'BEGIN { exit !(c >= l - 1) }'; then echo "stopped at the CPU limit ($CPU_LIMIT s)"
    else echo "failed (exit $rc: $(tail -n 1 "$tmp/err"))"; fi
}
# shellcheck disable=SC2086
place() { measure "$bin" place --graph "$g" $MACHINE --json "$@"; }
# table: every method of METHODS on the graph $g, one row each
table() {
    echo "| method | makespan (s) | / best instant | simulations | wall (s) | CPU (s) | peak RSS (MiB) |"
    echo "|---|---|---|---|---|---|---|"
    best=""
    : > "$tmp/instant"
    for m in round-robin cp heft etf $(for n in $INSTANT_COARSEN; do echo "cp@$n heft@$n"; done); do
        has "${m%@*}" || continue
        case $m in
            *@*) place --method "${m%@*}" --coarsen "${m#*@}" ;;
            *) place --method "$m" ;;
        esac
        if [ "$rc" = 0 ]; then
            ms=$(json_num makespan)
            echo "$m $ms $wall $cpu $rss" >> "$tmp/instant"
            if [ -z "$best" ] || [ "$(echo "$ms < $best" | bc -l)" = 1 ]; then best=$ms; fi
        else
            echo "$m failed $rc $wall $cpu $rss" >> "$tmp/instant"
        fi
    done
    while read -r m ms wall cpu rss; do
        if [ "$ms" = failed ]; then
            failed=1
            echo "| $(echo "$m" | sed 's/@/ --coarsen /') | failed (exit $wall) | | | | | |"
        else
            rc=0; printf '{"makespan":%s,"simulations":0}' "$ms" > "$tmp/out"; row "$(echo "$m" | sed 's/@/ --coarsen /')"
        fi
    done < "$tmp/instant"
    if has doppler; then
        place --method doppler --checkpoint "$CKPT"
        row "doppler (greedy rollout)"
    fi
    if has improve; then
        place --method improve --checkpoint "$IMPROVE_CKPT" --config "$tmp/bi.json" --budget "$BUDGET" --seed "$SEED"
        row "improve (from best instant, $BUDGET)"
    fi
    if has anneal; then
        place --method anneal --budget "$BUDGET" --seed "$SEED"
        row "anneal ($BUDGET)"
    fi
}

if [ -n "$LAYERS" ]; then
    g=$tmp/llama7b-train-tp8.json
    gen "$LAYERS" "$g"
    echo "# graph gen llama-layer --layers $LAYERS --tp 8 --training: $ops ops, ${gen_wall} s wall, ${gen_cpu} s CPU, ${gen_rss} MiB peak"
    echo "# machine: $MACHINE; $(date -u +%Y-%m-%d), doppler $(git -C "$top_srcdir" rev-parse --short HEAD 2>/dev/null || echo '?')"
    table
fi

if [ -n "$TORCH_MODEL" ]; then
    case $TORCH_MODEL in inception_v3) input=${TORCH_INPUT:-32x3x299x299} ;; *) input=${TORCH_INPUT:-32x3x224x224} ;; esac
    g=$tmp/torch-train.json
    measure "$bin" graph import "torchvision:$TORCH_MODEL" --training --optimizer "$TORCH_OPTIMIZER" --input-shape "$input" --out "$g"
    [ -z "$LAYERS" ] || echo
    if [ "$rc" = 0 ]; then
        # "FILE: N ops, M edges, F FLOPs, parameters P bytes"
        desc=$(sed -n 's/^[^:]*: //p' "$tmp/out")
        echo "# graph import torchvision:$TORCH_MODEL --training --optimizer $TORCH_OPTIMIZER --input-shape $input: $desc; ${wall} s wall, ${cpu} s CPU, ${rss} MiB peak"
        echo "# machine: $MACHINE; $(date -u +%Y-%m-%d), doppler $(git -C "$top_srcdir" rev-parse --short HEAD 2>/dev/null || echo '?')"
        table
    elif grep -q "is not installed\|cannot import\|cannot run" "$tmp/err"; then
        echo "# torchvision:$TORCH_MODEL skipped: $(tail -n 1 "$tmp/err")"
    else
        failed=1
        echo "# graph import torchvision:$TORCH_MODEL: $(why)"
    fi
    rm -f "$g"
fi
[ -n "$SWEEP_LAYERS" ] || exit $failed

echo
echo "# the DOPPLER rollout against graph size (the same training graphs, LAYERS layers at tp 8)"
echo "| layers | ops | coarsen | groups | gen wall (s) | rollout wall (s) | rollout CPU (s) | peak RSS (MiB) | CPU us per op | makespan (s) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for L in $SWEEP_LAYERS; do
    gen "$L" "$tmp/sweep.json"
    for N in ${SWEEP_COARSEN:-none}; do
        case $N in
        none) co="" ;;
        *:*) co="--coarsen ${N%%:*} --coarsen-rule ${N#*:} ${SWEEP_REFINE:-}" ;;
        *) co="--coarsen $N ${SWEEP_REFINE:-}" ;;
        esac
        # shellcheck disable=SC2086
        measure "$bin" place --graph "$tmp/sweep.json" $MACHINE --json --method doppler --checkpoint "$CKPT" $co
        groups=$(json_num groups); groups=${groups:--}
        if [ "$rc" != 0 ]; then
            failed=1
            echo "| $L | $ops | $N | | $gen_wall | $(why) | $cpu | $rss | | |"
        else
            echo "| $L | $ops | $N | $groups | $gen_wall | $wall | $cpu | $rss | $(echo "$cpu * 1000000 / $ops" | bc) | $(printf %.6g "$(json_num makespan)") |"
        fi
    done
done
rm -f "$tmp/sweep.json"
exit $failed
