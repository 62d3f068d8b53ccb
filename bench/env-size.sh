#!/bin/sh
# bench/env-size.sh: the engine state (policy/dp_env.h, "state": "engine") on large graphs
# (issues 15 and 16). Per size (doppler graph gen llama-layer --layers L, 4 devices):
#   - bench/bench_env_size: an episode in the engine state per order of ORDERS (default "cp
#     random": the critical-path order, and ops selected at random, placed late against their
#     time), its CPU time per step, how many steps resumed the engine at the placed op's READY,
#     the ops simulated again per run, the ops whose times a step changed (the least an exact
#     incremental state rewrites), and the estimates that needed a resumed run (exact ties);
#     each with the commits' convergence off and on (dp_sim_set_converge_prefix);
#   - the CPU time (user + system, one BLAS thread) and makespan of `doppler place --method
#     doppler --checkpoint CKPT` (the greedy rollout of a general model trained with
#     bench/doppler-project.json), with $DOPPLER and, when set, with $DOPPLER_BEFORE (another
#     build, e.g. one before the resumed runs): both must give the same assignment (the state is
#     exact either way), which is checked.
# Then, when BENCH_DOPPLER (and BENCH_DOPPLER_BEFORE) name bench/bench_doppler builds, the CPU ms
# per DOPPLER episode with bench/doppler-project.json on the DOPPLER graphs (10 repetitions).
#   CKPT=ck.h5 LAYERS="11 52" DOPPLER_BEFORE=../old/doppler sh bench/env-size.sh
# Without CKPT a small general model is trained here (for timing only: EPISODES, COUNT).
set -eu
top_srcdir=${top_srcdir:-.}
bin=${DOPPLER:-$top_srcdir/doppler}
before=${DOPPLER_BEFORE:-}
sizebin=${BENCH_ENV_SIZE:-$top_srcdir/bench/bench_env_size}
LAYERS=${LAYERS:-11 52}
ORDERS=${ORDERS:-cp random}
EPISODES=${EPISODES:-50}
COUNT=${COUNT:-8}
CONFIG=${CONFIG:-$top_srcdir/bench/doppler-project.json}
FAMILIES=${FAMILIES:-chainmm,ffnn,llama-block,llama-layer,daggen}
export OPENBLAS_NUM_THREADS=1
[ -x "$sizebin" ] || { echo "env-size: $sizebin not built (make bench/bench_env_size, or make bench-env-size; BENCH_ENV_SIZE names another)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-bench-envsize.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
CKPT=${CKPT:-}
if [ -z "$CKPT" ]; then
    CKPT=$tmp/doppler.h5
    "$bin" train --family "$FAMILIES" --family-count "$COUNT" --val-count 2 --seed 1 --config "$CONFIG" \
        --pipeline --episodes "$EPISODES" --checkpoint "$CKPT" --quiet > /dev/null
fi
ms_of() { sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p' "$1"; }
# greedy BIN TAG: one greedy rollout on $g; prints a row
greedy() {
    /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$1" place --graph "$g" --devices 4 --method doppler --checkpoint "$CKPT" \
        --out "$tmp/$2.assign.json" --json > "$tmp/$2.json"
    echo "L$L $ops $2 $(ms_of "$tmp/$2.json") $(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$tmp/cpu")"
}
echo "# greedy: graph ops build makespan cpu_ms"
for L in $LAYERS; do
    g="$tmp/llama-layer-L$L.json"
    "$bin" graph gen llama-layer --layers "$L" --out "$g" > "$tmp/gen.out"
    ops=$(sed -n 's/.*, \([0-9]*\) ops,.*/\1/p' "$tmp/gen.out")
    # the engine-state table is the script's main output: a failed or missing bench_env_size
    # stops it (its status was sed's, and a program not built was skipped: a review)
    for order in $ORDERS; do
        for conv in 0 1; do
            "$sizebin" "$g" 4 "$order" 1 "$conv" > "$tmp/size.out" || { echo "env-size: $sizebin $g 4 $order 1 $conv failed" >&2; exit 1; }
            sed 's/^/# /' "$tmp/size.out"
        done
    done
    greedy "$bin" after
    if [ -n "$before" ]; then
        greedy "$before" before
        cmp -s "$tmp/after.assign.json" "$tmp/before.assign.json" || { echo "env-size: L$L: the two builds' assignments differ" >&2; exit 1; }
    fi
done
shared=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
for b in ${BENCH_DOPPLER:-} ${BENCH_DOPPLER_BEFORE:-}; do
    echo "# per-episode CPU ms, $b, bench/doppler-project.json"
    taskset -c 0 "$b" "$shared/doppler-graphs" 10 "$CONFIG"
done
