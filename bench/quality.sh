#!/bin/sh
# bench/quality.sh: placement quality against simulations spent, on DOPPLER's six graphs (4 devices,
# 8 for the 8gpu_ files), SEEDS seeds each (issue 15's benchmark; `make bench-quality`).
#
# Per graph and seed: the lower bound, single device, random (seeded), round-robin, cp and heft (no
# simulation); annealing from cp at TOTAL (4,000) and 20,000 simulations and at the simulations this
# project's training spent; the authors' DOPPLER (bench/doppler-fast.json: EPISODES of Stage I then
# EPISODES of Stage II; its final and model-selected parameters); this project's DOPPLER
# (bench/doppler-project.json with its own episode counts: Stage I's final greedy, Stage II's final
# and model-selected greedy and the best placement sampled in Stage II); and the latter with
# annealing at inference (--refine anneal) started from the better of its greedy placement and the
# best placement its training sampled, for the simulations left to TOTAL, so that the row's total
# (training + search) is TOTAL. Every row gives the simulations it spent; the best known values
# (issue 15) are printed beside.
#
# Output: the raw rows as CSV (OUT, default quality.csv: graph,seed,method,makespan,simulations)
# and a markdown table of mean +- sd over the seeds on stdout. Environment: SEEDS (default 5),
# SEED_FROM (1: seeds SEED_FROM .. SEED_FROM + SEEDS - 1; OUT is then appended to, for a run in parts),
# EPISODES (1000, the authors' per stage), TOTAL (4000), PROPOSALS (an improve checkpoint: adds the row doppler-project+anneal+proposals, the
# refine search with half its moves proposed by it), GRAPHS (a subset of the file names),
# DOPPLER_SHARED_DATA. About 1 minute per graph and seed on one core (229 ops).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
D="${DOPPLER:-$top/doppler}"
data="${DOPPLER_SHARED_DATA:-$top/../shared/data}/doppler-graphs"
[ -d "$data" ] || { echo "bench/quality.sh: no $data (set DOPPLER_SHARED_DATA)" >&2; exit 77; }
SEEDS=${SEEDS:-5}
SEED_FROM=${SEED_FROM:-1}
EPISODES=${EPISODES:-1000}
TOTAL=${TOTAL:-4000}
OUT=${OUT:-quality.csv}
GRAPHS=${GRAPHS:-"chain_mm_112nodes.txt ffnn_192nodes.txt transformer_block_215nodes.txt full_transformer_layer_261nodes.txt 8gpu_transformer_block.txt 8gpu_full_transformer.txt"}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
best_known() {
    case $1 in
    chain_mm_112nodes.txt) echo 1200.07 ;; ffnn_192nodes.txt) echo 56.70 ;;
    transformer_block_215nodes.txt) echo 166.7 ;; full_transformer_layer_261nodes.txt) echo 129.2 ;;
    8gpu_transformer_block.txt) echo 180.4 ;; 8gpu_full_transformer.txt) echo 180.4 ;; *) echo NA ;;
    esac
}
ms() { sed -n 's/.*"makespan":\([^,]*\),.*/\1/p' "$1"; }
sims() { sed -n 's/.*"simulations":\([0-9]*\).*/\1/p' "$1"; }
[ "$SEED_FROM" -gt 1 ] && [ -f "$OUT" ] || echo "graph,seed,method,makespan,simulations" > "$OUT"
for f in $GRAPHS; do
    G="$data/$f"
    case $f in 8gpu_*) dev=8 ;; *) dev=4 ;; esac
    for seed in $(seq "$SEED_FROM" $((SEED_FROM + SEEDS - 1))); do
        for m in single random round-robin cp heft; do
            "$D" place --graph "$G" --devices $dev --method $m --seed "$seed" --json > "$tmp/p.json"
            echo "$f,$seed,$m,$(ms "$tmp/p.json"),0" >> "$OUT"
        done
        for b in "$TOTAL" 20000; do
            "$D" place --graph "$G" --devices $dev --method anneal --budget $b --seed "$seed" --json > "$tmp/p.json"
            echo "$f,$seed,anneal-$b,$(ms "$tmp/p.json"),$(sims "$tmp/p.json")" >> "$OUT"
        done
        for cfg in fast project; do
            ep=""
            [ $cfg = fast ] && ep="--episodes $EPISODES"
            "$D" train --graph "$G" --devices $dev --pipeline $ep --seed "$seed" --quiet \
                --config "$here/doppler-$cfg.json" --checkpoint "$tmp/$cfg.h5" --force > "$tmp/t.out"
            total=$(awk '/^stage / { for (i = 1; i <= NF; i++) if ($(i + 1) == "simulations:") s += $i } END { print s + 0 }' "$tmp/t.out")
            final=$(awk '$1 == "doppler-final" { print $2; exit }' "$tmp/t.out")
            sel=$(awk '$1 == "doppler" { print $2; exit }' "$tmp/t.out")
            if [ $cfg = project ]; then
                s1=$(awk '$1 == "stage" && $2 == "il" { for (i = 1; i <= NF; i++) if ($i == "simulations:") print $(i + 2); exit }' "$tmp/t.out" | tr -d ,)
                n1=$(awk '$1 == "stage" && $2 == "il" { print $5; exit }' "$tmp/t.out")
                seen=$(awk '$1 == "stage" && $2 == "sim" { print $NF; exit }' "$tmp/t.out")
                echo "$f,$seed,doppler-project-stage1-final,$s1,$n1" >> "$OUT"
                echo "$f,$seed,doppler-project-best-sampled,$seen,$total" >> "$OUT"
            fi
            echo "$f,$seed,doppler-$cfg-final,$final,$total" >> "$OUT"
            echo "$f,$seed,doppler-$cfg-selected,$sel,$total" >> "$OUT"
        done
        "$D" place --graph "$G" --devices $dev --method anneal --budget "$total" --seed "$seed" --json > "$tmp/p.json"
        echo "$f,$seed,anneal-at-training,$(ms "$tmp/p.json"),$(sims "$tmp/p.json")" >> "$OUT"
        # the place command spends 3 simulations besides the search: the policy's greedy placement,
        # its move proposals and the best sampled placement's check
        left=$((TOTAL - total - 3))
        [ $left -gt 0 ] || left=1
        "$D" place --graph "$G" --devices $dev --method doppler --checkpoint "$tmp/project.h5" --seed "$seed" \
            --refine anneal --refine-budget "$left" --json > "$tmp/p.json"
        echo "$f,$seed,doppler-project+anneal,$(ms "$tmp/p.json"),$((total + $(sims "$tmp/p.json")))" >> "$OUT"
        if [ -n "${PROPOSALS:-}" ]; then
            # the same search with half its moves proposed by an improvement policy (train --method
            # improve on generated graphs: its offline simulations are not counted here)
            "$D" place --graph "$G" --devices $dev --method doppler --checkpoint "$tmp/project.h5" --seed "$seed" \
                --refine anneal --refine-budget "$left" --proposals "$PROPOSALS" --json > "$tmp/p.json"
            echo "$f,$seed,doppler-project+anneal+proposals,$(ms "$tmp/p.json"),$((total + $(sims "$tmp/p.json")))" >> "$OUT"
        fi
    done
    lb=$("$D" graph info "$G" --devices $dev 2>/dev/null | sed -n 's/.*lower bound[^0-9]*\([0-9.e+-]*\).*/\1/p' | head -1)
    if [ "$SEED_FROM" -eq 1 ]; then
        echo "$f,0,lower-bound,${lb:-NA},0" >> "$OUT"
        echo "$f,0,best-known,$(best_known "$f"),0" >> "$OUT"
    fi
done
# mean +- sd per graph and method
echo "| graph | method | makespan (mean +- sd, DOPPLER units) | simulations (mean) | seeds |"
echo "|---|---|---:|---:|---:|"
awk -F, 'NR > 1 && $4 != "NA" { k = $1 SUBSEP $3; n[k]++; s[k] += $4; q[k] += $4 * $4; c[k] += $5; if (!(k in o)) { o[k] = ++m; key[m] = k } }
    END { for (i = 1; i <= m; i++) { k = key[i]; split(k, p, SUBSEP); mu = s[k] / n[k]; v = n[k] > 1 ? (q[k] - n[k] * mu * mu) / (n[k] - 1) : 0;
          printf "| %s | %s | %.2f +- %.2f | %.0f | %d |\n", p[1], p[2], mu, sqrt(v > 0 ? v : 0), c[k] / n[k], n[k] } }' "$OUT"
