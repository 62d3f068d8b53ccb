#!/bin/sh
# bench/search.sh (make bench-search): search at the speed of the engine (issue 31). For each of
# DOPPLER's six graphs and a generated 10,117-op graph (llama-layer --layers 52), the moves per
# second of annealing, local search and the improvement search, with this build and with a build
# of BASE, in the same run; then one simulation of ChainMM and Llama-layer (bench/bench_sim)
# beside the authors' SimPy simulator.
#
#   sh bench/search.sh                       (BASE=ae76a1a, built once under $TMPDIR)
#   BASE=d5d00fa BASE_BUILD=/tmp/b REPS=5 BUDGET=50000 METHODS=anneal CORE=1 sh bench/search.sh
#
# Moves per second: CPU seconds (user + sys: wait4's, to the microsecond, through python3; else
# /usr/bin/time's hundredths) of `doppler place --method M --budget B --seed 1` less those of the
# same run at budget B / 10 (start-up, graph, initial placement), the minimum over REPS
# repetitions of each, over the difference of the simulations the two runs report (a local
# search may stop at a local optimum before its budget). The two builds' runs alternate.
# B = BUDGET (default 100000, issue 31's 1e5); IMPROVE_BUDGET (default 20000) for the improvement
# search, whose policy costs more per move; LARGE_BUDGET (default 300) on the 10,117-op graph.
# The improvement search starts from the best instant placement (7 simulations): IMPROVE_BUDGET
# and LARGE_BUDGET, and their tenths, must be at least 7 (a smaller one fails its row).
# Each row also says whether the two builds' placements are the same (same seed, same moves:
# "same") and gives the makespan; then paired, the median over the repetitions of the ratio of
# each repetition's own four runs, and spread, the least and greatest of those ratios (the
# host's speed may move between repetitions: rates() below).
# The improvement search uses IMPROVE (a train --method improve checkpoint), or one trained here
# for 300 episodes on 8 generated graphs (its quality does not matter: its cost per move does);
# the base build uses IMPROVE_BASE, which defaults to IMPROVE, or to one the base build trains by
# the same command when it cannot read IMPROVE (an older checkpoint format).
#
# SimPy: the authors' simulator is not on this machine (it is their code; only their graph files
# are, in ../shared/data). Its times are issue 31's measurements, SIMPY_CHAINMM_MS=1.3 and
# SIMPY_LLAMA_MS=3.9 (ms per simulation on this 2-core machine, ae76a1a's time); the ratio is
# SimPy's time over bench_sim's minimum per simulation.
set -eu
top_srcdir=${top_srcdir:-.}
top=$(cd "$top_srcdir" && pwd)
bin=${DOPPLER:-$top/doppler}
SH=${DOPPLER_SHARED_DATA:-$top/../shared/data}
BASE=${BASE:-ae76a1a}
BUDGET=${BUDGET:-100000}
IMPROVE_BUDGET=${IMPROVE_BUDGET:-20000}
LARGE_BUDGET=${LARGE_BUDGET:-300}
REPS=${REPS:-3}
METHODS=${METHODS:-anneal local improve}
GRAPHS=${GRAPHS:-chain_mm_112nodes ffnn_192nodes transformer_block_215nodes full_transformer_layer_261nodes 8gpu_transformer_block 8gpu_full_transformer}
LAYERS=${LAYERS:-52}
SIMPY_CHAINMM_MS=${SIMPY_CHAINMM_MS:-1.3}
SIMPY_LLAMA_MS=${SIMPY_LLAMA_MS:-3.9}
export OPENBLAS_NUM_THREADS=1
[ -d "$SH/doppler-graphs" ] || { echo "bench/search.sh: $SH/doppler-graphs not found (DOPPLER_SHARED_DATA)" >&2; exit 77; }
# every timed run pinned to core CORE (default 0) when taskset exists
pin=""
command -v taskset > /dev/null && pin="taskset -c ${CORE:-0}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-bench-search.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# the base build: git archive of BASE, configured and built once (kept in BASE_BUILD)
base_build=${BASE_BUILD:-${TMPDIR:-/tmp}/doppler-base-$BASE}
if [ ! -x "$base_build/doppler" ] || [ ! -x "$base_build/bench/bench_sim" ]; then
    echo "# building $BASE in $base_build (once)" >&2
    mkdir -p "$base_build"
    git -C "$top" archive "$BASE" | tar -x -C "$base_build"
    (cd "$base_build" && autoreconf -fi && ./configure && make -j2 doppler bench/bench_sim) > "$base_build.log" 2>&1 ||
        { tail -20 "$base_build.log" >&2; echo "bench/search.sh: building $BASE failed ($base_build.log)" >&2; exit 1; }
fi
base_bin=$base_build/doppler

IMPROVE=${IMPROVE:-}
IMPROVE_BASE=${IMPROVE_BASE:-}
train_improve() {
    "$1" train --method improve --family chainmm,ffnn,llama-block,llama-layer --family-count 8 --seed 1 \
        --episodes 300 --checkpoint "$2" --quiet > /dev/null
}
case " $METHODS " in *" improve "*)
    if [ -z "$IMPROVE" ]; then
        IMPROVE=$tmp/improve.h5
        train_improve "$bin" "$IMPROVE"
    fi
    # a base whose checkpoint format is older cannot read this build's checkpoint: it gets its
    # own, trained by the same command with the base build (the rows' "same" then compares
    # placements of two checkpoints)
    if [ -z "$IMPROVE_BASE" ]; then
        IMPROVE_BASE=$IMPROVE
        if ! "$base_bin" place --graph "$SH/doppler-graphs/chain_mm_112nodes.txt" --method improve --budget 10 \
            --seed 1 --checkpoint "$IMPROVE" --out "$tmp/probe.json" > /dev/null 2>&1; then
            IMPROVE_BASE=$tmp/improve-base.h5
            (DOPPLER_DATA=$base_build/data; export DOPPLER_DATA; train_improve "$base_bin" "$IMPROVE_BASE")
            echo "# improve: $BASE cannot read this build's checkpoint; each build uses its own (same training command)"
        fi
    fi ;;
esac

# the large graph (LAYERS=0: none)
big=$tmp/llama-layer-L$LAYERS.json
big_name=""
if [ "$LAYERS" -gt 0 ]; then
    "$bin" graph gen llama-layer --layers "$LAYERS" --out "$big" > /dev/null
    big_name=big
fi

ms_of() { sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p' "$1"; }
sims_of() { sed -n 's/.*"simulations":\([0-9]*\).*/\1/p' "$1"; }
# run1 BIN GRAPH METHOD BUDGET TAG: one run; its CPU seconds (user + sys) to $tmp/TAG.cpu, its
# output in $tmp/TAG.*. With python3, to the microsecond from wait4's resource usage; else
# /usr/bin/time's, which prints hundredths (3% of the 0.3 s that annealing's 100,000 moves take on
# Llama-block). A run that fails stops the bench with its error output (called as a command, not
# in $(...), so that the exit is the script's).
run1() {
    extra=""
    if [ "$3" = improve ]; then
        extra="--checkpoint $IMPROVE"
        [ "$1" = "$base_bin" ] && extra="--checkpoint $IMPROVE_BASE"
    fi
    rc=0
    if command -v python3 > /dev/null; then
        python3 -c '
import os, sys
out, err, cpu, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
pid = os.fork()
if pid == 0:
    os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
    os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    os.execvp(argv[0], argv)
_, status, ru = os.wait4(pid, 0)
with open(cpu, "w") as f:
    f.write("%.6f\n" % (ru.ru_utime + ru.ru_stime))
sys.exit(0 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 1)' "$tmp/$5.json" "$tmp/$5.err" "$tmp/$5.cpu" \
            $pin "$1" place --graph "$2" --method "$3" --budget "$4" --seed 1 $extra --out "$tmp/$5.assign.json" \
            --json || rc=$?
    else
        $pin /usr/bin/time -f '%U %S' -o "$tmp/$5.time" "$1" place --graph "$2" --method "$3" --budget "$4" --seed 1 \
            $extra --out "$tmp/$5.assign.json" --json > "$tmp/$5.json" 2> "$tmp/$5.err" || rc=$?
        awk 'END { printf "%.3f\n", $1 + $2 }' "$tmp/$5.time" > "$tmp/$5.cpu"
    fi
    if [ "$rc" -ne 0 ]; then
        echo "bench/search.sh: $1 place --graph $2 --method $3 --budget $4 failed:" >&2
        cat "$tmp/$5.err" >&2
        exit 1
    fi
}
least() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
# rate_of N SECONDS: N / SECONDS, or nan when either is not positive
rate_of() { awk -v n="$1" -v d="$2" 'BEGIN { if (d <= 0 || n <= 0) print "nan"; else printf "%.0f", n / d }'; }
# rates GRAPH METHOD BUDGET: sets before and after, each build's moves per second (the
# simulations its runs at budget B and B/10 report, a search may stop early, over the difference
# of their least CPU seconds over REPS runs). The two builds' runs alternate (base B, this B, base
# B/10, this B/10, REPS times), so that a change in the host's speed during the row falls on both.
# Not called in $(...): a failed run's exit is the script's.
# Also paired and spread: the ratio of each repetition's own four runs (after's moves per second
# over before's, from that repetition's CPU seconds), their median and their least-greatest. This
# host's speed has moved by 1.6x within minutes (EXPERIMENTS.md "A moved op's grant"): the least
# times of the two builds may come from different phases, a repetition's four runs from one.
rates() {
    b0=$(($3 / 10))
    r=0 cb1="" ca1="" cb0="" ca0="" reps=""
    while [ "$r" -lt "$REPS" ]; do
        run1 "$base_bin" "$1" "$2" "$3" before
        cb1=$(least "$cb1" "$(cat "$tmp/before.cpu")")
        run1 "$bin" "$1" "$2" "$3" after
        ca1=$(least "$ca1" "$(cat "$tmp/after.cpu")")
        run1 "$base_bin" "$1" "$2" "$b0" before-b0
        cb0=$(least "$cb0" "$(cat "$tmp/before-b0.cpu")")
        run1 "$bin" "$1" "$2" "$b0" after-b0
        ca0=$(least "$ca0" "$(cat "$tmp/after-b0.cpu")")
        reps="$reps $(cat "$tmp/before.cpu" "$tmp/before-b0.cpu" "$tmp/after.cpu" "$tmp/after-b0.cpu" | tr '\n' ' ')"
        r=$((r + 1))
    done
    nb=$(($(sims_of "$tmp/before.json") - $(sims_of "$tmp/before-b0.json")))
    na=$(($(sims_of "$tmp/after.json") - $(sims_of "$tmp/after-b0.json")))
    before=$(rate_of "$nb" "$(awk -v a="$cb1" -v b="$cb0" 'BEGIN { print a - b }')")
    after=$(rate_of "$na" "$(awk -v a="$ca1" -v b="$ca0" 'BEGIN { print a - b }')")
    # the repetitions' ratios (one whose budgets' times did not differ has none), sorted
    set -- $(echo "$reps" | awk -v nb="$nb" -v na="$na" '{
        for (i = 1; i + 3 <= NF; i += 4) {
            db = $i - $(i + 1); da = $(i + 2) - $(i + 3)
            if (db > 0 && da > 0 && nb > 0 && na > 0) printf "%.6f\n", (na / da) / (nb / db)
        } }' | sort -g)
    if [ "$#" -eq 0 ]; then
        paired=nan spread=nan
    else
        lo=$1
        paired=$(printf '%s\n' "$@" | awk '{ x[NR] = $1 } END { printf "%.2f", NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2 }')
        eval "hi=\${$#}"
        spread=$(awk -v a="$lo" -v b="$hi" 'BEGIN { printf "%.2f-%.2f", a, b }')
    fi
}

echo "# moves per second (CPU), seed 1; before = $BASE ($(git -C "$top" rev-parse --short "$BASE")), after = this build ($(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- . 2>/dev/null || echo '+changes'))"
printf '%-34s %-8s %7s %10s %10s %7s %5s %14s %7s %11s\n' graph method budget before after ratio same makespan paired spread
for name in $GRAPHS $big_name; do
    if [ "$name" = big ]; then g=$big; B=$LARGE_BUDGET; label="llama-layer-L$LAYERS"; else g=$SH/doppler-graphs/$name.txt; B=$BUDGET; label=$name; fi
    for m in $METHODS; do
        Bm=$B
        [ "$m" = improve ] && [ "$name" != big ] && Bm=$IMPROVE_BUDGET
        rates "$g" "$m" "$Bm"
        same=no
        cmp -s "$tmp/before.assign.json" "$tmp/after.assign.json" && same=yes
        ratio=$(awk -v a="$after" -v b="$before" 'BEGIN { if (b > 0 && a > 0) printf "%.2f", a / b; else print "nan" }')
        printf '%-34s %-8s %7d %10s %10s %7s %5s %14s %7s %11s\n' "$label" "$m" "$Bm" "$before" "$after" "$ratio" "$same" \
            "$(ms_of "$tmp/after.json")" "$paired" "$spread"
    done
done

# one simulation (bench_sim: DOPPLER-compatible model, cp assignment, 4 devices), least us per run
# over batches, both builds in turns on one core
echo
echo "# one simulation: bench_sim, minimum us per simulation over 5 alternating runs of each build; SimPy: issue 31's figures"
printf '%-34s %10s %10s %10s %12s %12s\n' graph before_us after_us simpy_ms simpy/before simpy/after
for pair in "chain_mm_112nodes $SIMPY_CHAINMM_MS" "full_transformer_layer_261nodes $SIMPY_LLAMA_MS"; do
    set -- $pair
    g=$SH/doppler-graphs/$1.txt
    [ -f "$g" ] || { echo "# $1: $g not found, no row"; continue; }
    bmin="" amin=""
    for r in 1 2 3 4 5; do
        b=$($pin "$base_build/bench/bench_sim" --min-seconds 0.3 "$g" | awk 'NR == 2 { print $6 }')
        a=$($pin "$top/bench/bench_sim" --min-seconds 0.3 "$g" | awk 'NR == 2 { print $6 }')
        [ -n "$b" ] && [ -n "$a" ] || { echo "bench/search.sh: bench_sim on $g failed" >&2; exit 1; }
        bmin=$(awk -v x="$bmin" -v y="$b" 'BEGIN { print (x == "" || y < x) ? y : x }')
        amin=$(awk -v x="$amin" -v y="$a" 'BEGIN { print (x == "" || y < x) ? y : x }')
    done
    awk -v g="$1" -v b="$bmin" -v a="$amin" -v s="$2" 'BEGIN { printf "%-34s %10.3f %10.3f %10.2f %11.0fx %11.0fx\n", g, b, a, s, s * 1000 / b, s * 1000 / a }'
done
