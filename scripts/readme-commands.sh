#!/bin/sh
# Run the commands README.md shows, as a new user types them, on a built checkout: each one's exit
# status and wall seconds in a table (issue 32: "every command the README prints, each exiting
# 0"). Placeholders are filled with bundled files (G = data/graphs/llama-layer.json; torchvision's
# ResNet-18 for graph import) and budgets are cut to seconds (--episodes 4, --budget 200), so
# the whole list runs in a few minutes on 2 cores; the commands are otherwise the README's.
#
#   sh scripts/readme-commands.sh [OUT_DIR]      (run from the checkout, after make)
#
# Exit status: 0 when every command exited 0, else 1. Commands that need what this machine may
# lack (torch for graph import, gnuplot for plots) are run too: their failure is reported. The
# calibration fit refuses a profile measured on a busy machine (R^2 below 0.5; its message says
# so), and validate then has no calibration: run those on a quiet machine.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
D=${DOPPLER:-$here/doppler}
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/doppler-readme.XXXXXX")}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
# in the checkout, as the README says (`./doppler`, or an installed doppler, finds the bundled data
# there); every file a command writes goes to $out
cd "$here" || exit 2
G=$here/data/graphs/llama-layer.json
fails=0
printf '%-4s %-8s %s\n' rc seconds command
run() {
    t0=$(date +%s.%N)
    sh -c "$1" > "$out/last.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    printf '%-4s %-8s %s\n' "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" "$1"
    [ "$rc" -eq 0 ] || { fails=$((fails + 1)); sed 's/^/     | /' "$out/last.log" | tail -5; }
}
# Using the command
run "$D graph info $G"
run "$D place --graph $G --devices 4 --method cp --out $out/assignment.json"
run "$D simulate --graph $G --devices 4 --assignment $out/assignment.json --trace $out/trace.json"
run "$D place --graph $G --devices 4 --method cp --json"
run "$D graph gen llama-layer --tp 8 --out $out/g.json"
run "$D place --graph $here/data/graphs/chainmm-small.json --method cp --out $out/assignment-small.json && \
     $D graph convert $here/data/graphs/chainmm-small.json $out/out.dot --assignment $out/assignment-small.json"
run "$D graph gen stg --out $out/t.json && $D graph convert $out/t.json --out $out/out.txt"
run "$D graph import torchvision:resnet18 --out $out/r18.json"
run "$D graph gen llama-layer --layers 2 --tp 8 --training --out $out/train.json"
# Training DOPPLER
run "$D train --graph $G --stage il --episodes 4 --checkpoint $out/il.h5 --trajectory $out/il.traj.h5"
run "$D train --graph $G --stage sim --episodes 4 --init $out/il.h5 --checkpoint $out/sim.h5"
run "$D train --graph $G --pipeline --checkpoint $out/run.h5 --episodes 4"
run "$D train --graph $G --pipeline --checkpoint $out/run.h5 --episodes 8 --resume"
run "$D place --graph $G --method doppler --checkpoint $out/sim.h5 --samples 4"
run "$D place --graph $G --method doppler --checkpoint $out/sim.h5 --refine anneal --refine-budget 200"
run "$D train --print-config"
run "$D train --family chainmm,ffnn,llama-block,llama-layer,daggen --family-count 4 --val-count 1 --pipeline --episodes 4 --checkpoint $out/general.h5"
run "$D place --graph $here/data/graphs/llama-block-tp8.json --devices 8 --method doppler --checkpoint $out/general.h5"
run "$D train --graph $G --init $out/general.h5 --stage sim --episodes 4"
# Learned baselines
run "$D train --method placeto --graph $G --checkpoint $out/pl.h5 --episodes 4"
run "$D place --method placeto --graph $G --checkpoint $out/pl.h5"
run "$D place --method gdp --graph $G --budget 4 --seed 3"
# Machines and the simulator
run "$D topology list"
run "$D topology show dgx1-v100"
run "$D place --graph $here/data/graphs/llama-layer-tp8.json --topology dgx1-v100 --method cp --out $out/a8.json && \
     $D simulate --graph $here/data/graphs/llama-layer-tp8.json --assignment $out/a8.json --topology dgx1-v100 \
     --transfer-model maxmin --mode async --streams 2 --memory-limit topology --trace $out/t.json"
# Sweeps and reports (table 3's graphs are DOPPLER's files: the reference data, README's section)
shared=${DOPPLER_SHARED_DATA:-$here/../shared/data}
if [ -d "$shared/doppler-graphs" ]; then
DOPPLER_SHARED_DATA=$shared; export DOPPLER_SHARED_DATA
run "$D sweep $here/experiments/configs/table3.json --jobs 2 --out $out/t3.h5"
run "$D report $out/t3.h5 --table main"
run "$D report $out/t3.h5 --plot bars --table main --out $out/t3.png"
else
    echo "skip: the sweep and report commands (no reference data at $shared: DOPPLER_SHARED_DATA)"
fi
# Real execution, calibration and validation (cut: two sizes, a few assignments)
run "$D graph gen chainmm --out $out/c.json && $D calibrate profile --topology cpu-2core --graph $out/c.json --out $out/profile.json"
run "$D calibrate fit $out/profile.json --out $out/calibration.json"
run "$D validate --graph $out/c.json --topology cpu-2core --calibration $out/calibration.json --assignments 4"
echo "$fails failed; files in $out"
[ "$fails" -eq 0 ]
