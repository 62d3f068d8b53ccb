#!/bin/sh
# Benchmark of the general engine: a layered random DAG of 1e5 ops on 8 devices (DGX-1 V100
# topology, random assignment) under each transfer model: seconds per simulation, events per
# second (target: max-min under 1 s), and workspace bytes per (V + E) at four sizes (linear).
# Usage: bench/bench_hifi.sh [BUILDDIR]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top}
exec taskset -c 0 "$build/bench/bench_hifi" --ops 100000 --seed 1 --min-seconds 1 \
    "$top/data/topologies/dgx1-v100.json"
