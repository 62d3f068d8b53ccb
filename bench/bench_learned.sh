#!/bin/sh
# Benchmark: seconds per episode (inference and training) of DOPPLER, Placeto and GDP, measured in
# one run on each DOPPLER graph (DOPPLER-compatible model), beside the DOPPLER authors' figures
# (they report Placeto about twice as slow as DOPPLER per episode). No target: a comparison.
# Usage: bench/bench_learned.sh [BUILDDIR [REPS]]   (DOPPLER_SHARED_DATA overrides ../shared/data)
# The quality table (makespans and seconds of cp, HEFT, Placeto, GDP, annealing and DOPPLER at one
# episode budget) is `bench/bench_learned table GRAPH_DIR EPISODES` (make bench-learned).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top}
reps=${2:-5}
shared=${DOPPLER_SHARED_DATA:-$top/../shared/data}
if [ ! -d "$shared/doppler-graphs" ]; then
    # an error, not a skip: make bench passed with the table left out (a review)
    echo "bench_learned: $shared/doppler-graphs not found (set DOPPLER_SHARED_DATA to the shared data folder)" >&2
    exit 1
fi
exec taskset -c 0 "$build/bench/bench_learned" episode "$shared/doppler-graphs" "$reps"
