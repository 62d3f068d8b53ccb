#!/bin/sh
# Benchmark: seconds per DOPPLER episode, inference and training separately, on each DOPPLER
# graph, beside the authors' figures; first with the authors' network sizes (hidden 128, edge
# network 128, 6 steps), then with bench/doppler-fast.json (hidden 64, edge network 16).
# Target: under 5 ms per training episode on Llama-layer on one core.
# Usage: bench/bench_doppler.sh [BUILDDIR]   (DOPPLER_SHARED_DATA overrides ../shared/data)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top}
shared=${DOPPLER_SHARED_DATA:-$top/../shared/data}
# an error, not a skip: make bench passed with the table left out (a review)
[ -d "$shared/doppler-graphs" ] ||
    { echo "bench_doppler: $shared/doppler-graphs not found (set DOPPLER_SHARED_DATA to the shared data folder)" >&2; exit 1; }
taskset -c 0 "$build/bench/bench_doppler" "$shared/doppler-graphs" 20
taskset -c 0 "$build/bench/bench_doppler" "$shared/doppler-graphs" 20 "$top/bench/doppler-fast.json"
