#!/bin/sh
# The main job on a bundled default: install what is missing, build, then place the bundled small
# ChainMM (data/graphs/chainmm-small.json) on 4 devices with each heuristic and print the makespans.
set -eu
cd "$(dirname "$0")/.."
sh ./scripts/install-deps.sh
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure
make -j"$(nproc)"
graph=data/graphs/chainmm-small.json
echo
echo "Placing $graph on 4 identical devices (uniform machine: 1e13 FLOP/s, 12 GB/s links):"
for m in cp random round-robin; do
    printf '  %-12s ' "$m"
    ./doppler place --graph "$graph" --devices 4 --method "$m" --seed 1 | sed -n 's/^makespan: //p'
done
echo
echo "Training DOPPLER briefly on it (Stage I imitation then Stage II simulator RL, 300 episodes each,"
echo "network sizes of bench/doppler-fast.json; a few seconds on one core):"
ckdir=$(mktemp -d "${TMPDIR:-/tmp}/doppler-quickstart.XXXXXX")
./doppler train --graph "$graph" --devices 4 --config bench/doppler-fast.json --pipeline --episodes 300 \
    --checkpoint "$ckdir/doppler.h5" --quiet | sed -n '/^method/,/^random/p' | sed 's/^/  /'
rm -rf "$ckdir"
