#!/bin/sh
# Benchmark: one simulation of each DOPPLER graph (DOPPLER-compatible model, critical-path
# assignment), median microseconds over many runs. Target: ChainMM under 5 us on one core
# (the reference SimPy simulator takes about 1.4 ms).
# Usage: bench/bench_sim.sh [BUILDDIR]   (DOPPLER_SHARED_DATA overrides ../shared/data)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top}
shared=${DOPPLER_SHARED_DATA:-$top/../shared/data}
graphs=""
# the targets are on DOPPLER's graphs: without them an error, not a table of the bundled graphs
# only that make bench passed (a review)
[ -d "$shared/doppler-graphs" ] ||
    { echo "bench_sim: $shared/doppler-graphs not found (set DOPPLER_SHARED_DATA to the shared data folder)" >&2; exit 1; }
for f in chain_mm_112nodes ffnn_192nodes transformer_block_215nodes full_transformer_layer_261nodes \
         8gpu_transformer_block 8gpu_full_transformer; do
    graphs="$graphs $shared/doppler-graphs/$f.txt"
done
for f in "$top"/data/graphs/*.json; do [ -s "$f" ] && graphs="$graphs $f"; done
exec taskset -c 0 "$build/bench/bench_sim" --min-seconds 0.5 $graphs
