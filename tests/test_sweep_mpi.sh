#!/bin/sh
# With MPI: `mpirun -n 2 doppler sweep` gives the same rows and makespans as the local pool.
# Skips (77) when doppler was built without MPI or mpirun is absent.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER="$top_builddir/doppler"
GRAPH="$top_srcdir/tests/data/sweep-fork.json"
"$DOPPLER" sweep --help | grep -q 'This build has MPI' || { echo "doppler built without MPI: skip"; exit 77; }
command -v mpirun > /dev/null 2>&1 || { echo "mpirun not found: skip"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-sweep-mpi-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cat > "$work/m.json" <<JSON
{"name": "m", "fixed": {"graph": "$GRAPH"},
 "grid": {"devices": [2, 3, 4], "method": ["cp", "random", "round-robin"], "seed": [1, 2]}}
JSON
"$DOPPLER" sweep "$work/m.json" --out "$work/pool.h5" --jobs 2 --quiet
# OpenMPI refuses root unless told; --oversubscribe lets 2 ranks share fewer cores
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
extra=""
[ "$(id -u)" -eq 0 ] && extra="--allow-run-as-root"
# the libtool wrapper script is not an MPI program: run the real binary
bin="$DOPPLER"
[ -x "$top_builddir/.libs/doppler" ] && bin="$top_builddir/.libs/doppler"
# (under the sanitizer build, OpenMPI's own allocations at exit are not this project's leaks)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 120 mpirun $extra --oversubscribe -n 2 "$bin" sweep "$work/m.json" --out "$work/mpi.h5" --quiet \
    > "$work/mpi.log" 2>&1 || { cat "$work/mpi.log" >&2; echo "FAIL: mpirun sweep failed" >&2; exit 1; }
# same keys, order, status and makespans (columns 1-12: key .. makespan)
"$DOPPLER" report "$work/pool.h5" --table runs | cut -d, -f1-12 > "$work/a.csv"
"$DOPPLER" report "$work/mpi.h5" --table runs | cut -d, -f1-12 > "$work/b.csv"
[ "$(wc -l < "$work/a.csv")" -eq 19 ] || { echo "FAIL: pool gave $(wc -l < "$work/a.csv") lines" >&2; exit 1; }
cmp -s "$work/a.csv" "$work/b.csv" || { diff "$work/a.csv" "$work/b.csv" >&2; echo "FAIL: MPI rows differ from the pool's" >&2; exit 1; }
echo "test_sweep_mpi.sh: ok"
