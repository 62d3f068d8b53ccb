#!/bin/sh
# Data-parallel training over MPI ranks (issue 30 item 5): `mpirun -n R doppler train` computes
# what one process computes, bit for bit, whatever R:
#   - a distribution (--family, validation graphs, Stage I then Stage II with the batch baseline,
#     forced first choices, self-imitation and distillation, as bench/doppler-zeroshot.json) on
#     1, 2 and 3 ranks (3 does not divide the batch of 4): the same parameters' hash as the
#     single process, the same checkpoint (all but the run's identifier) and the same trajectory
#     rows (all but wall-clock times);
#   - one graph, Stage I with one episode per batch, then Stage II with the greedy baseline (each
#     episode's backward right after its rollout), on 2 ranks: the same hash; a finished run
#     continued mid-batch on 2 ranks from a single process's checkpoint: the same hash;
#   - what cannot be split (the running baseline of a policy-gradient stage) is refused with a
#     clear error on every rank, and nothing is written.
# Skips (77) when doppler was built without MPI or mpirun is absent, except under CI (CI=true),
# where the MPI path must be tested: there it fails.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER="$top_builddir/doppler"
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
    [ "${CI:-}" = true ] && fail "$1 (CI=true: install libopenmpi-dev openmpi-bin, scripts/install-deps.sh, and configure again)"
    echo "$1: skip"
    exit 77
}
"$DOPPLER" sweep --help | grep -q 'This build has MPI' || skip "doppler built without MPI"
command -v mpirun > /dev/null 2>&1 || skip "mpirun not found"
command -v h5dump > /dev/null 2>&1 || skip "h5dump not found (Debian: hdf5-tools)"
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-train-mpi-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# OpenMPI refuses root unless told; --oversubscribe lets more ranks than cores share them
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
extra=""
[ "$(id -u)" -eq 0 ] && extra="--allow-run-as-root"
# the libtool wrapper script is not an MPI program: run the real binary
bin="$DOPPLER"
[ -x "$top_builddir/.libs/doppler" ] && bin="$top_builddir/.libs/doppler"
LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# (under the sanitizer build, OpenMPI's own allocations at exit are not this project's leaks)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
DOPPLER_DATA="${DOPPLER_DATA:-$top_srcdir/data}"
export LD_LIBRARY_PATH ASAN_OPTIONS DOPPLER_DATA
ranks() { n=$1; shift; timeout 120 mpirun $extra --oversubscribe -n "$n" "$bin" "$@"; }
fnv() { sed -n 's/.*"parameters_fnv1a":"\([0-9a-f]*\)".*/\1/p' "$1"; }
# a checkpoint without its run's identifier (each run draws its own)
# the checkpoint less its run id and wall-clock seconds (attributes seconds, stage_seconds0)
ckdump() { h5dump "$1" | sed '1d; /ATTRIBUTE "run_id"/,/^   }/d; /ATTRIBUTE "seconds"/,/^   }/d; /ATTRIBUTE "stage_seconds0"/,/^   }/d'; }
# the trajectory's rows that are not wall-clock times
trdump() {
    for d in episodes/episode episodes/stage episodes/seed episodes/makespan episodes/reward episodes/lr episodes/epsilon \
             episodes/sel_agree episodes/plc_agree episodes/step_offset episodes/n_steps steps/sel_op steps/sel_logp \
             steps/ready steps/plc_device steps/plc_logp evaluations/stage evaluations/episode evaluations/makespan \
             evaluations/best evaluations/simulations; do
        h5dump -d "/$d" "$1" | sed 1d
    done
}

# ---- a distribution: 1, 2 and 3 ranks against one process ----
cat > "$work/m.json" <<'JSON'
{"network": {"hidden": 8, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4, "features": "engine"}, "state": "engine",
 "gamma": 1, "checkpoint_every": 4,
 "stages": {"il": {"episodes": 8, "batch": 4},
            "sim": {"episodes": 8, "batch": 4, "baseline": "batch", "normalize_advantages": true,
                    "exploration": "mixture", "epsilon": 0, "epsilon_final": 0, "forced_first": true,
                    "sil_weight": 1, "sil_k": 4, "sil_replays": 4, "distill": 20, "entropy_weight": 0.001}}}
JSON
run="train --family stg,cnn --family-count 3 --val-count 2 --seed 1 --config $work/m.json --pipeline --json"
# shellcheck disable=SC2086
"$bin" $run --checkpoint "$work/c0.h5" --trajectory "$work/t0.h5" --quiet > "$work/r0.json" 2> "$work/r0.err" ||
    { cat "$work/r0.err" >&2; fail "single-process training"; }
h0=$(fnv "$work/r0.json")
[ -n "$h0" ] || fail "no parameters_fnv1a in train --json of a distribution"
ckdump "$work/c0.h5" > "$work/c0.dump"
trdump "$work/t0.h5" > "$work/t0.dump"
[ "$(grep -c . "$work/t0.dump")" -gt 50 ] || fail "the trajectory dump is too short"
for n in 1 2 3; do
    # shellcheck disable=SC2086
    ranks "$n" $run --checkpoint "$work/c$n.h5" --trajectory "$work/t$n.h5" > "$work/r$n.json" 2> "$work/r$n.err" ||
        { cat "$work/r$n.err" >&2; fail "training on $n ranks"; }
    h=$(fnv "$work/r$n.json")
    [ "$h" = "$h0" ] || fail "$n ranks: parameters hash $h, one process $h0"
    ckdump "$work/c$n.h5" > "$work/c$n.dump"
    cmp -s "$work/c0.dump" "$work/c$n.dump" || { diff "$work/c0.dump" "$work/c$n.dump" | head -20 >&2; fail "$n ranks: the checkpoint differs"; }
    trdump "$work/t$n.h5" > "$work/t$n.dump"
    cmp -s "$work/t0.dump" "$work/t$n.dump" || { diff "$work/t0.dump" "$work/t$n.dump" | head -20 >&2; fail "$n ranks: the trajectory differs"; }
    # rank 0 alone prints: one result line, one final progress line per stage
    [ "$(grep -c parameters_fnv1a "$work/r$n.json")" -eq 1 ] || fail "$n ranks: the result printed more than once"
    [ "$(grep -c 'train sim: episode 8/8' "$work/r$n.err")" -eq 1 ] || { cat "$work/r$n.err" >&2; fail "$n ranks: progress not printed once"; }
done
grep -q "3 MPI ranks" "$work/r3.err" || fail "the rank count is not said"

# ---- one graph, Stage I with one episode per batch (the default: nothing to split, rank 1
# waits), then Stage II with the greedy baseline: 2 ranks against one process ----
graph="$top_srcdir/tests/data/tiny-doppler.txt"
cat > "$work/g.json" <<'JSON'
{"network": {"hidden": 8, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4}, "gamma": 1,
 "stages": {"il": {"episodes": 4},
            "sim": {"episodes": 12, "batch": 4, "baseline": "greedy", "exploration": "mixture", "epsilon": 0.1,
                    "epsilon_final": 0}}}
JSON
"$bin" train --graph "$graph" --config "$work/g.json" --pipeline --seed 5 --json --quiet > "$work/g0.json" ||
    fail "single-process training on one graph"
ranks 2 train --graph "$graph" --config "$work/g.json" --pipeline --seed 5 --json --quiet > "$work/g2.json" ||
    fail "training on one graph on 2 ranks"
[ -n "$(fnv "$work/g0.json")" ] && [ "$(fnv "$work/g2.json")" = "$(fnv "$work/g0.json")" ] ||
    fail "one graph, greedy baseline: 2 ranks give $(fnv "$work/g2.json"), one process $(fnv "$work/g0.json")"

# ---- a finished run continued with more episodes, starting mid-batch (4 of a batch of 8), on 2
# ranks from the single process's checkpoint: as the single process continues it ----
echo '{"network": {"hidden": 8, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4}, "seed": 3, "stages": {"sim": {"batch": 8, "baseline": "batch"}}}' > "$work/more.json"
"$bin" train --graph "$graph" --config "$work/more.json" --stage sim --episodes 4 --checkpoint "$work/m1.h5" --quiet > /dev/null ||
    fail "a 4-episode run"
cp "$work/m1.h5" "$work/m2.h5"
"$bin" train --graph "$graph" --config "$work/more.json" --stage sim --episodes 12 --checkpoint "$work/m1.h5" --resume --json --quiet \
    > "$work/m1.json" || fail "the 4-episode run resumed to 12 episodes"
ranks 2 train --graph "$graph" --config "$work/more.json" --stage sim --episodes 12 --checkpoint "$work/m2.h5" --resume --json --quiet \
    > "$work/m2.json" || fail "the 4-episode run resumed to 12 episodes on 2 ranks"
[ -n "$(fnv "$work/m1.json")" ] && [ "$(fnv "$work/m2.json")" = "$(fnv "$work/m1.json")" ] ||
    fail "resumed on 2 ranks: $(fnv "$work/m2.json"), one process $(fnv "$work/m1.json")"

# ---- refused: the running baseline of a policy-gradient stage ----
echo '{"stages": {"sim": {"episodes": 4, "batch": 2, "baseline": "running"}}}' > "$work/run.json"
if ranks 2 train --graph "$graph" --config "$work/run.json" --stage sim --checkpoint "$work/no.h5" > /dev/null 2> "$work/err"; then
    fail "the running baseline accepted on 2 ranks"
fi
grep -q 'running baseline.*cannot be split over 2 ranks' "$work/err" || { cat "$work/err" >&2; fail "no clear error for the running baseline"; }
[ ! -e "$work/no.h5" ] || fail "a refused run wrote its checkpoint"
# (one rank is one process: the same config trains)
ranks 1 train --graph "$graph" --config "$work/run.json" --stage sim --quiet > /dev/null || fail "the running baseline on 1 rank"

# ---- an input error on one rank only (a graph missing on one host) ends every rank: the others
# waited for it in the ranks' first exchange, the job never ended (a review) ----
echo '{"stages": {"sim": {"episodes": 4, "batch": 2, "baseline": "batch"}}}' > "$work/one.json"
for bad in 0 1; do
    g0=$graph; g1=$graph
    if [ $bad = 0 ]; then g0="$work/absent.json"; else g1="$work/absent.json"; fi
    rc=0
    timeout 120 mpirun $extra --oversubscribe -n 1 "$bin" train --graph "$g0" --config "$work/one.json" --stage sim \
        --checkpoint "$work/one.h5" --quiet : -n 1 "$bin" train --graph "$g1" --config "$work/one.json" --stage sim \
        --checkpoint "$work/one.h5" --quiet > /dev/null 2> "$work/err" || rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || { cat "$work/err" >&2; fail "rank $bad's missing graph: exit $rc (124: the job hung)"; }
    grep -q "absent.json" "$work/err" && grep -q "stopped: rank $bad failed before the run" "$work/err" ||
        { cat "$work/err" >&2; fail "rank $bad's missing graph: the error is not said"; }
    [ ! -e "$work/one.h5" ] || fail "a run stopped before it began wrote its checkpoint"
done
echo "test_train_mpi.sh: ok"
