#!/bin/sh
# bench/zeroshot-demos.sh: issue 29 item 3's expert-iteration experiment, scored on the validation
# set only (bench/general-validation.py: fresh draws of the training families, never the
# benchmark's graphs). The zero-shot DOPPLER model of the wide corpus (M1's command, EXPERIMENTS.md
# "Training on the wide corpus") with a shortened Stage II (EPISODES, default 6000), in variants:
#   A  M1's config (bench/doppler-zeroshot.json) alone;
#   B  A with demonstrations by the improvement search at 2,000 simulations with the improvement
#      policy of the wide corpus ("demonstrations": {"method": "improve", "budget": 2000,
#      "checkpoint": IMPROVE}): each training graph's improved placement offered to its
#      self-imitation buffer and distilled at the stage's end (expert iteration, Anthony et al.
#      2017), every simulation counted;
#   C  B with Stage I distilling them too ("il": {"distill": 1000});
#   D  B with each training graph on its own drawn device count (--devices-range 2:16, the
#      range the improvement policy was trained on);
#   S  A with the dynamic SEL ("network": {"sel_dynamic": true}: per-step terms of each ready
#      op's state on top of its static score, dp_doppler.h; issue 29);
#   T  S with ETF as SEL's teacher ("sel_teacher": "etf": the ready ops of earliest start).
# A, S and T need no improvement policy (IMPROVE is neither read nor trained for them alone).
# Each variant at the training seeds SEEDS; then each checkpoint on the validation set. Prints
# each run's validation line and, per variant, the mean +- sample sd over the seeds of the mean
# ratio of the greedy placement to the best instant method, and the share of cases below it.
#
#   IMPROVE=improve.h5 JOBS=2 sh bench/zeroshot-demos.sh      (IMPROVE unset: trained first by
#        train --method improve --family <the 14> --family-count 32 --devices-range 2:16
#        --episodes 20000 --seed 1, about 4 CPU minutes)
#   VARIANTS="A D" SEEDS="1 2 3 4 5" EPISODES=30000 OUTDIR=runs sh bench/zeroshot-demos.sh
#
# Cost: each run is about 10 CPU minutes (6,000 episodes); B, C and D add 56 x 2,001 simulations
# of demonstrations per stage that uses them.
set -eu
top_srcdir=${top_srcdir:-.}
top=$(cd "$top_srcdir" && pwd)
bin=${DOPPLER:-$top/doppler}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
export DOPPLER="$bin" top_srcdir="$top" DOPPLER_DATA="${DOPPLER_DATA:-$top/data}" OPENBLAS_NUM_THREADS=1
VARIANTS=${VARIANTS:-A B C D}
SEEDS=${SEEDS:-1 2 3}
EPISODES=${EPISODES:-6000}
JOBS=${JOBS:-2}
IMPROVE=${IMPROVE:-}
# every argument checked before anything runs (training the improvement policy alone is minutes)
bad() { echo "zeroshot-demos: $*" >&2; exit 1; }
posint() { case $1 in '' | *[!0-9]* | 0*) return 1 ;; esac; }
for v in $VARIANTS; do
    case $v in A|B|C|D|S|T) ;; *) bad "VARIANTS: unknown variant '$v' (A, B, C, D, S, T)" ;; esac
done
for s in $SEEDS; do posint "$s" || bad "SEEDS: expected positive integers, got '$s'"; done
[ -n "$SEEDS" ] || bad "SEEDS: empty"
posint "$EPISODES" || bad "EPISODES: expected a positive integer, got '$EPISODES'"
posint "$JOBS" || bad "JOBS: expected a positive integer, got '$JOBS'"
if [ -n "$IMPROVE" ]; then
    { [ -f "$IMPROVE" ] && [ -r "$IMPROVE" ]; } || bad "IMPROVE=$IMPROVE: no such checkpoint file"
fi
OUTDIR=${OUTDIR:-$(mktemp -d "${TMPDIR:-/tmp}/doppler-zeroshot-demos.XXXXXX")}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
F=all # the wide corpus's fourteen families (models/dp_gen.h DP_GEN_WIDE_CORPUS)
need_improve=0
for v in $VARIANTS; do case $v in B|C|D) need_improve=1 ;; esac; done
if [ "$need_improve" = 0 ]; then
    IMPROVE=-
elif [ -z "$IMPROVE" ]; then
    IMPROVE=$OUTDIR/improve-1.h5
    [ -f "$IMPROVE" ] || "$bin" train --method improve --family $F --family-count 32 --devices-range 2:16 \
        --episodes 20000 --seed 1 --checkpoint "$IMPROVE" >"$OUTDIR/improve-1.out" 2>"$OUTDIR/improve-1.err" || {
        echo "zeroshot-demos: training the improvement policy failed: $OUTDIR/improve-1.err" >&2; exit 1; }
fi
if [ "$need_improve" = 1 ]; then
    case $IMPROVE in /*) ;; *) IMPROVE=$(pwd)/$IMPROVE ;; esac
    { [ -f "$IMPROVE" ] && [ -r "$IMPROVE" ]; } || bad "IMPROVE=$IMPROVE: no such checkpoint file"
fi
/usr/bin/python3 - "$top/bench/doppler-zeroshot.json" "$OUTDIR" "$EPISODES" "$IMPROVE" <<'EOF'
import json, sys
base, out, episodes, improve = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
a = json.load(open(base))
a["stages"]["sim"]["episodes"] = episodes
b = json.loads(json.dumps(a))
b["demonstrations"] = {"method": "improve", "budget": 2000, "checkpoint": improve}
c = json.loads(json.dumps(b))
c["stages"]["il"]["distill"] = 1000
s = json.loads(json.dumps(a))
s["network"]["sel_dynamic"] = True
t = json.loads(json.dumps(s))
t["sel_teacher"] = "etf"
for name, cfg in (("A", a), ("B", b), ("C", c), ("D", b), ("S", s), ("T", t)):
    json.dump(cfg, open("%s/%s.json" % (out, name), "w"))
EOF
# one line per run: variant seed
runs=$OUTDIR/runs.txt
: >"$runs"
for v in $VARIANTS; do
    for s in $SEEDS; do echo "$v $s" >>"$runs"; done
done
run_one() {
    v=$1 s=$2
    extra=
    [ "$v" = D ] && extra="--devices-range 2:16"
    [ -f "$OUTDIR/$v$s.done" ] && return 0
    # shellcheck disable=SC2086
    "$DOPPLER" train --family $F --family-count 56 --val-count 14 --seed "$s" --config "$OUTDIR/$v.json" --pipeline $extra \
        --checkpoint "$OUTDIR/$v$s.h5" --force >"$OUTDIR/$v$s.out" 2>"$OUTDIR/$v$s.err" || {
        echo "zeroshot-demos: run $v seed $s failed: $OUTDIR/$v$s.err" >&2; return 1; }
    # one placement at a time: JOBS runs are already side by side
    JOBS=1 /usr/bin/python3 "$top_srcdir/bench/general-validation.py" "$OUTDIR/$v$s.h5" >"$OUTDIR/val-$v$s.txt" || return 1
    touch "$OUTDIR/$v$s.done"
}
# the validation set's graphs and instant placements first (cached; the runs then only read them)
METHODS="" /usr/bin/python3 "$top_srcdir/bench/general-validation.py" - >/dev/null
fail=0
batch=""
n=0
for r in $(tr ' ' ':' <"$runs"); do
    run_one "${r%%:*}" "${r##*:}" &
    batch="$batch $!"
    n=$((n + 1))
    if [ "$n" -ge "$JOBS" ]; then
        for p in $batch; do wait "$p" || fail=1; done
        batch="" n=0
    fi
done
for p in $batch; do wait "$p" || fail=1; done
echo "# zeroshot-demos: $OUTDIR, EPISODES=$EPISODES, IMPROVE=$IMPROVE"
while read -r v s; do
    [ -f "$OUTDIR/val-$v$s.txt" ] || { echo "$v seed $s: no validation result" >&2; fail=1; continue; }
    printf '%s seed %s: %s\n' "$v" "$s" "$(grep '^ALL' "$OUTDIR/val-$v$s.txt")"
done <"$runs"
for v in $VARIANTS; do
    for s in $SEEDS; do [ -f "$OUTDIR/val-$v$s.txt" ] && grep '^ALL' "$OUTDIR/val-$v$s.txt"; done |
        awk -v v="$v" '{m += $4; q += $4 * $4; b += $6; n++}
            END {if (n) {mu = m / n; sd = n > 1 ? sqrt((q - n * mu * mu) / (n - 1)) : 0;
                 printf "variant %s: %d seeds, greedy / best instant %.3f +- %.3f, below it on %.1f%% of the cases\n", v, n, mu, sd, b / n}}'
done
exit $fail
