#!/bin/sh
# bench/train-mpi.sh (make bench-train-mpi): the speed-up of data-parallel training over MPI ranks
# (issue 30 item 5). A corpus run like EXPERIMENTS.md's M1 (fourteen families, 56 training and 14
# validation draws, seed 1, bench/doppler-zeroshot.json) but shorter: Stage II alone for EPISODES
# episodes (default 160: ten batches of 16), per config of CONFIGS (default "distill0 zeroshot":
# distill0 is the config without its end-of-stage distillation, "distill": 0, which is
# sequential and runs whole on every rank; zeroshot the config as it is), on 1 process and then
# on each rank count of RANKS (default 2), REPEATS times (default 1) in alternation, so that a
# shared machine's load falls on both alike.
#
#   sh bench/train-mpi.sh                       # EPISODES=160 RANKS="2" REPEATS=1 CONFIGS="distill0 zeroshot"
#
# Prints, per run: ranks, wall and CPU seconds of the whole command (/usr/bin/time: mpirun and
# every rank), the stage's wall seconds (train --json "seconds", rank 0), the load average before
# the run, the parameters' hash (the same on every rank count, or the script fails), and each
# rank's CPU seconds outside the exchanges (train's closing lines on stderr); then the median
# speed-up (1 process / R ranks) of the whole command and of the stage, per config.
set -eu
top_srcdir=${top_srcdir:-.}
bin=${DOPPLER:-$top_srcdir/doppler}
[ -x "$top_srcdir/.libs/doppler" ] && [ "$bin" = "$top_srcdir/doppler" ] && bin="$top_srcdir/.libs/doppler"
EPISODES=${EPISODES:-160}
RANKS=${RANKS:-2}
REPEATS=${REPEATS:-1}
CONFIGS=${CONFIGS:-distill0 zeroshot}
LD_LIBRARY_PATH="$top_srcdir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
DOPPLER_DATA="${DOPPLER_DATA:-$top_srcdir/data}"
export LD_LIBRARY_PATH DOPPLER_DATA
command -v mpirun > /dev/null 2>&1 || { echo "bench/train-mpi.sh: mpirun not found (scripts/install-deps.sh)" >&2; exit 1; }
"$bin" train --help | grep -q 'this build has MPI' || { echo "bench/train-mpi.sh: doppler built without MPI" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
extra=""
[ "$(id -u)" -eq 0 ] && extra="--allow-run-as-root"
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-train-mpi-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
/usr/bin/python3 - "$top_srcdir/bench/doppler-zeroshot.json" "$work/distill0.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["stages"]["sim"]["distill"] = 0
json.dump(c, open(sys.argv[2], "w"))
EOF
families=all # the wide corpus's fourteen families
echo "config ranks wall_s cpu_s stage_s load1 parameters_fnv1a per-rank-CPU-outside-exchanges"
for cfg in $CONFIGS; do
    c="$top_srcdir/bench/doppler-zeroshot.json"
    [ "$cfg" = distill0 ] && c="$work/distill0.json"
    for rep in $(seq "$REPEATS"); do
        for r in 1 $RANKS; do
            launch=""
            [ "$r" -gt 1 ] && launch="mpirun $extra --oversubscribe -n $r"
            load=$(cut -d' ' -f1 /proc/loadavg)
            # shellcheck disable=SC2086
            /usr/bin/time -f "%e %U %S" -o "$work/time" $launch "$bin" train --family $families --family-count 56 --val-count 14 \
                --seed 1 --config "$c" --stage sim --episodes "$EPISODES" --checkpoint "$work/c.h5" --force --json \
                > "$work/out.json" 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
            read -r wall user sys < "$work/time"
            h=$(sed -n 's/.*"parameters_fnv1a":"\([0-9a-f]*\)".*/\1/p' "$work/out.json")
            s=$(sed -n 's/.*"seconds":\([0-9.e+-]*\).*/\1/p' "$work/out.json")
            ranks=$(sed -n 's/^doppler train: rank [0-9]*: [0-9.]* s CPU, \([0-9.]*\) s of it outside.*/\1/p' "$work/err" | tr '\n' ' ')
            [ -n "$ranks" ] || ranks=-
            cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
            echo "$cfg $r $wall $cpu $s $load $h $ranks"
            echo "$cfg $r $wall $s $h" >> "$work/rows"
        done
    done
done
# the same parameters on every rank count, per config; the median speed-ups
awk '
{ k = $1; if (!(k in hash)) hash[k] = $5; else if (hash[k] != $5) { print "FAIL: " k " on " $2 " ranks: parameters " $5 ", expected " hash[k]; bad = 1 }
  n[k, $2]++; w[k, $2, n[k, $2]] = $3; st[k, $2, n[k, $2]] = $4; if ($2 > 1) rk[$2] = 1; cf[k] = 1 }
function med(a, k, r, m,   i, j, t, v) { for (i = 1; i <= m; i++) v[i] = a[k, r, i];
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
  return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2 }
END { for (k in cf) for (r in rk)
        printf "%s: %s ranks: speed-up %.2f (whole command, median wall), %.2f (the stage)\n", k, r,
               med(w, k, 1, n[k, 1]) / med(w, k, r, n[k, r]), med(st, k, 1, n[k, 1]) / med(st, k, r, n[k, r])
      exit bad }' "$work/rows"
