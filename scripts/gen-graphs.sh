#!/bin/sh
# Regenerate the bundled workload graphs in data/graphs/ (native JSON) with `doppler graph gen`.
# Usage: sh scripts/gen-graphs.sh [DOPPLER [OUTDIR]]   (defaults: ./doppler, data/graphs)
# The list below is the single source of what is bundled; tests/test_graph_cmd.sh checks that the
# bundled files are exactly what it produces.
set -eu
D=${1:-./doppler}
out=${2:-data/graphs}
mkdir -p "$out"
while read -r file model params; do
    case "$file" in ''|\#*) continue ;; esac
    # shellcheck disable=SC2086
    "$D" graph gen "$model" $params --name "${file%.json}" --out "$out/$file" >/dev/null
done <<'LIST'
# file                   model         parameters (defaults: doppler graph gen --help)
chainmm-small.json       chainmm       --matrices 3 --n 4096
chainmm.json             chainmm
ffnn.json                ffnn
llama-block.json         llama-block
llama-layer.json         llama-layer
llama-block-tp8.json     llama-block   --tp 8
llama-layer-tp8.json     llama-layer   --tp 8
LIST
