#!/bin/sh
# With MPI:
#   - `mpirun -n 2 doppler sweep` gives the same rows and makespans as the local pool;
#   - a sweep run as 3 ranks, killed with SIGKILL mid-way (mpirun, every rank and every run
#     process at once, as a batch system or a lost node does) and started again as 2 ranks ends
#     with every run exactly once and the same rows as the pool.
# Skips (77) when doppler was built without MPI or mpirun is absent, except under CI (CI=true),
# where the MPI path must be tested: there it fails.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER="$top_builddir/doppler"
GRAPH="$top_srcdir/tests/data/sweep-fork.json"
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
    [ "${CI:-}" = true ] && fail "$1 (CI=true: install libopenmpi-dev openmpi-bin, scripts/install-deps.sh, and configure again)"
    echo "$1: skip"
    exit 77
}
"$DOPPLER" sweep --help | grep -q 'This build has MPI' || skip "doppler built without MPI"
command -v mpirun > /dev/null 2>&1 || skip "mpirun not found"
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-sweep-mpi-XXXXXX")
job=""
cleanup() {
    [ -n "$job" ] && kill_session "$job" > /dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# The processes of session $1 that still run (a zombie holds no file or lock any more). Read from
# /proc, not ps: a minimal Debian has no procps.
session_pids() {
    sid=$1
    for f in /proc/[0-9]*/stat; do
        { read -r line < "$f"; } 2> /dev/null || continue
        # fields after "pid (comm) ": state ppid pgrp session ...
        set -- ${line##*) }
        [ "$4" = "$sid" ] && [ "$1" != Z ] && [ "$1" != X ] && echo "${f#/proc/}" | cut -d/ -f1
    done
    return 0
}
# SIGKILL every process of session $1 at once (how many: $killed), then wait until none runs.
kill_session() {
    pids=$(session_pids "$1")
    killed=$(echo $pids | wc -w)
    [ -z "$pids" ] || kill -9 $pids 2> /dev/null || true
    i=0
    while [ -n "$(session_pids "$1")" ]; do
        i=$((i + 1))
        [ "$i" -gt 400 ] && { echo "processes of session $1 survive SIGKILL" >&2; return 1; }
        sleep 0.05
    done
    return 0
}

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
export LD_LIBRARY_PATH ASAN_OPTIONS
# a results CSV without the columns that are timing (seconds, 14th) or wall-clock time
# (finished, last); the first 13 columns hold no quoted commas
untimed() { sed -E 's/^(([^,]*,){13})[^,]*,/\1/; s/,[^,]*$//' "$1"; }

cat > "$work/m.json" <<JSON
{"name": "m", "fixed": {"graph": "$GRAPH"},
 "grid": {"devices": [2, 3, 4], "method": ["cp", "random", "round-robin"], "seed": [1, 2]}}
JSON
# ---- a rank that fails before the sweep ends every rank (they waited for it forever, silently:
# a review), its error shown; either rank ----
for order in "m.json nonexist.json" "nonexist.json m.json"; do
    set -- $order
    rc=0
    timeout 60 mpirun $extra --oversubscribe -n 1 "$bin" sweep "$work/$1" --out "$work/f.h5" --quiet : \
        -n 1 "$bin" sweep "$work/$2" --out "$work/f.h5" --quiet > "$work/f.log" 2>&1 || rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { cat "$work/f.log" >&2; fail "a rank failing before the sweep ($order): rc $rc"; }
    grep -q "nonexist.json: No such file" "$work/f.log" && grep -q "failed before the sweep (its error above): every rank stops" "$work/f.log" ||
        { cat "$work/f.log" >&2; fail "the failing rank's error ($order)"; }
    rm -rf "$work"/f.*
done

# ---- 2 ranks against the pool ----
"$DOPPLER" sweep "$work/m.json" --out "$work/pool.h5" --jobs 2 --quiet
timeout 120 mpirun $extra --oversubscribe -n 2 "$bin" sweep "$work/m.json" --out "$work/mpi.h5" --quiet \
    > "$work/mpi.log" 2>&1 || { cat "$work/mpi.log" >&2; fail "mpirun sweep failed"; }
# same keys, order, status and makespans (columns 1-12: key .. makespan)
"$DOPPLER" report "$work/pool.h5" --table runs | cut -d, -f1-12 > "$work/a.csv"
"$DOPPLER" report "$work/mpi.h5" --table runs | cut -d, -f1-12 > "$work/b.csv"
[ "$(wc -l < "$work/a.csv")" -eq 19 ] || fail "pool gave $(wc -l < "$work/a.csv") lines"
cmp -s "$work/a.csv" "$work/b.csv" || { diff "$work/a.csv" "$work/b.csv" >&2; fail "MPI rows differ from the pool's"; }

# ---- rank 0 alone prints and merges; every way out finalises MPI ----
# --list, --help and a config error came once per rank and mpirun exited 1 (a rank ended without
# MPI_Finalize); --merge ran on every rank into one file: the lock refused one, exit 1 (a review)
timeout 120 mpirun $extra --oversubscribe -n 2 "$bin" sweep "$work/m.json" --list > "$work/list.out" 2> "$work/list.err" ||
    { cat "$work/list.err" >&2; fail "mpirun sweep --list"; }
[ "$(wc -l < "$work/list.out")" -eq 18 ] || fail "mpirun sweep --list printed $(wc -l < "$work/list.out") lines for 18 runs"
timeout 120 mpirun $extra --oversubscribe -n 2 "$bin" sweep --help > "$work/help.out" 2>&1 || fail "mpirun sweep --help"
[ "$(grep -c '^Usage' "$work/help.out")" -eq 1 ] || fail "mpirun sweep --help printed the usage $(grep -c '^Usage' "$work/help.out") times"
echo '{"name":' > "$work/bad.json"
timeout 120 mpirun $extra --oversubscribe -n 2 "$bin" sweep "$work/bad.json" > /dev/null 2> "$work/bad.err" &&
    fail "mpirun sweep of a malformed config exit 0"
[ "$(grep -c 'bad.json:' "$work/bad.err")" -eq 1 ] || { cat "$work/bad.err" >&2; fail "the config error not said once"; }
# a run's config key refused on every rank before any run, said once, nothing written (a misspelt
# cfg__ key was found when its run ran, after the results file was made: a review)
cat > "$work/ck.json" <<JSON
{"name": "ck", "fixed": {"graph": "$GRAPH", "method": "doppler", "episodes_il": 2, "episodes_sim": 2}, "grid": {"cfg__gama": [0.5]}}
JSON
timeout 120 mpirun $extra --oversubscribe -n 2 "$bin" sweep "$work/ck.json" --out "$work/ck.h5" > /dev/null 2> "$work/ck.err" &&
    fail "mpirun sweep of a cfg__gama exit 0"
[ "$(grep -c 'ck.json: run .*parameter "cfg__gama": config: unknown key "gama".*nothing was run or written' "$work/ck.err")" -eq 1 ] &&
    [ ! -e "$work/ck.h5" ] && [ ! -e "$work/ck.csv" ] || { cat "$work/ck.err" >&2; fail "cfg__gama under mpirun"; }
for i in 0 1 2; do "$DOPPLER" sweep "$work/m.json" --shard $i/3 --out "$work/part$i.h5" --quiet || fail "shard $i"; done
timeout 120 mpirun $extra --oversubscribe -n 2 "$bin" sweep "$work/m.json" --merge "$work/part0.h5" "$work/part1.h5" \
    "$work/part2.h5" --out "$work/merged.h5" > "$work/merge.log" 2>&1 || { cat "$work/merge.log" >&2; fail "mpirun sweep --merge"; }
[ "$(grep -c 'merged 18 rows' "$work/merge.log")" -eq 1 ] || { cat "$work/merge.log" >&2; fail "the merge not done once"; }

# ---- 3 ranks killed mid-way, restarted as 2 ranks ----
# 18 runs; each repeats cp + simulation on the 10-op graph (timing_repeats) so that it lasts a
# noticeable time, and the graph set is mixed so that rows differ (devices, method, seed).
cat > "$work/k.json" <<JSON
{"name": "k", "fixed": {"graph": "$GRAPH", "timing_repeats": 30000},
 "grid": {"devices": [2, 4], "method": ["cp", "random", "round-robin"], "seed": [1, 2, 3]}}
JSON
total=18
mkdir "$work/pool" "$work/mpi"
"$DOPPLER" sweep "$work/k.json" --out "$work/pool/k.h5" --jobs 2 --quiet
[ "$(($(wc -l < "$work/pool/k.csv") - 1))" -eq "$total" ] || fail "pool gave $(wc -l < "$work/pool/k.csv") CSV lines"
# its own session, so that one SIGKILL reaches mpirun, the ranks and their run processes
setsid timeout 120 mpirun $extra --oversubscribe -n 3 "$bin" sweep "$work/k.json" --out "$work/mpi/k.h5" \
    > "$work/kill.log" 2>&1 &
job=$!
# wait for 3 finished rows (header + 3 complete lines), by polling the CSV
i=0
while [ "$( (cat "$work/mpi/k.csv" 2> /dev/null || true) | wc -l)" -lt 4 ]; do
    kill -0 "$job" 2> /dev/null || { cat "$work/kill.log" >&2; fail "the 3-rank sweep ended before 3 rows"; }
    i=$((i + 1))
    [ "$i" -gt 1200 ] && fail "no 3 rows after 60 s"
    sleep 0.05
done
# SIGKILL at once every process of the sweep's session: mpirun, timeout, the ranks, their run
# processes (none has that session unless setsid gave the sweep its own one: counted below)
kill_session "$job" || fail "could not kill the 3-rank sweep"
wait "$job" 2> /dev/null || true
job=""
# mpirun (and timeout) plus 3 ranks at least, the worker ranks' run processes besides
[ "$killed" -ge 5 ] || fail "only $killed processes in the killed sweep's session"
done_rows=$(($(wc -l < "$work/mpi/k.csv") - 1))
[ "$done_rows" -ge 3 ] && [ "$done_rows" -lt "$total" ] ||
    fail "expected 3..$((total - 1)) rows after the kill, got $done_rows (runs too short?)"
# through a hostfile, as across hosts (doc/cluster.md), with this machine as the only host
printf 'localhost slots=2\n' > "$work/hosts"
timeout 120 mpirun $extra --oversubscribe --hostfile "$work/hosts" -n 2 "$bin" sweep "$work/k.json" --out "$work/mpi/k.h5" \
    > "$work/restart.log" 2>&1 || { cat "$work/restart.log" >&2; fail "the 2-rank restart failed"; }
grep -q "$((total - done_rows)) runs to do over 1 MPI worker ranks ($done_rows already in" "$work/restart.log" ||
    { cat "$work/restart.log" >&2; fail "the restart did not skip the $done_rows finished runs"; }
# every run exactly once, in the CSV and in the HDF5 file
[ "$(($(wc -l < "$work/mpi/k.csv") - 1))" -eq "$total" ] || fail "CSV has $(($(wc -l < "$work/mpi/k.csv") - 1)) rows, expected $total"
[ "$(tail -n +2 "$work/mpi/k.csv" | cut -d, -f1 | sort -u | wc -l)" -eq "$total" ] || fail "CSV has a run twice"
"$DOPPLER" report "$work/mpi/k.h5" --table runs > "$work/mpi-h5.csv"
[ "$(($(wc -l < "$work/mpi-h5.csv") - 1))" -eq "$total" ] || fail "HDF5 has $(($(wc -l < "$work/mpi-h5.csv") - 1)) rows, expected $total"
[ "$(tail -n +2 "$work/mpi-h5.csv" | cut -d, -f1 | sort -u | wc -l)" -eq "$total" ] || fail "HDF5 has a run twice"
# the same rows as the pool's, every column but the timing ones, in the CSV and in the HDF5 file
untimed "$work/pool/k.csv" > "$work/pool.rows"
untimed "$work/mpi/k.csv" > "$work/mpi.rows"
cmp -s "$work/pool.rows" "$work/mpi.rows" || { diff "$work/pool.rows" "$work/mpi.rows" >&2; fail "restarted MPI CSV rows differ from the pool's"; }
"$DOPPLER" report "$work/pool/k.h5" --table runs > "$work/pool-h5.csv"
untimed "$work/pool-h5.csv" > "$work/pool.rows"
untimed "$work/mpi-h5.csv" > "$work/mpi.rows"
cmp -s "$work/pool.rows" "$work/mpi.rows" || { diff "$work/pool.rows" "$work/mpi.rows" >&2; fail "restarted MPI HDF5 rows differ from the pool's"; }
# and the same assignment files
diff -r "$work/pool/k.runs" "$work/mpi/k.runs" >&2 || fail "run files differ from the pool's"
[ ! -e "$work/mpi/k.lock" ] || fail "lock file left behind"
echo "test_sweep_mpi.sh: ok (killed after $done_rows of $total runs)"
