#!/bin/sh
# bench_scale.sh: 10^6-op chain and star graphs (DOPPLER text and native JSON) load, place with
# the critical-path method and simulate; prints time per phase and peak RSS (bench/bench_scale.c).
#   sh bench/bench_scale.sh [BUILDDIR] [N]     (default N = 1000000)
set -eu
build=${1:-.}
n=${2:-1000000}
b=$build/bench/bench_scale
[ -x "$b" ] || make -C "$build" bench/bench_scale >/dev/null
for shape in chain star istar; do
    for fmt in doppler json; do
        "$b" $shape "$n" $fmt
    done
done
# the same star with the ready set kept sorted by id (the environment's default order), smaller:
# O(ready) per step makes it quadratic
"$b" star $((n / 10)) doppler id
"$b" star $((n / 10)) doppler blevel
