#!/bin/sh
# Work-conserving (async) vs bulk-synchronous (bsp) makespans of the six DOPPLER graphs under the
# critical-path placement, DOPPLER-compatible costs (--devices 4, or 8 for the 8-GPU graphs),
# beside the paper's introduction table (ChainMM 139 vs 185.3, FFNN 50.2 vs about 76, real GPUs).
# Usage: scripts/wc-vs-bsp.sh [BUILDDIR]   (DOPPLER_SHARED_DATA overrides ../shared/data)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top}
shared=${DOPPLER_SHARED_DATA:-$top/../shared/data}
ms() { "$build/doppler" place --graph "$1" --method cp --devices "$2" --mode "$3" --json | sed 's/.*"makespan":\([^,]*\),.*/\1/'; }
printf '| graph | devices | async (WC) | bsp | bsp / async | paper WC | paper BSP | paper ratio |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for f in chain_mm_112nodes ffnn_192nodes transformer_block_215nodes full_transformer_layer_261nodes \
         8gpu_transformer_block 8gpu_full_transformer; do
    d=4; case $f in 8gpu*) d=8;; esac
    a=$(ms "$shared/doppler-graphs/$f.txt" $d async)
    b=$(ms "$shared/doppler-graphs/$f.txt" $d bsp)
    case $f in
        chain_mm*) p="139 | 185.3 | 1.333";;
        ffnn*) p="50.2 | ~76 | ~1.51";;
        *) p="- | - | -";;
    esac
    awk -v f="$f" -v d="$d" -v a="$a" -v b="$b" -v p="$p" 'BEGIN { printf "| %s | %s | %.6g | %.6g | %.3f | %s |\n", f, d, a, b, b / a, p }'
done
