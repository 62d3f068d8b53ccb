#!/bin/sh
# bench/transfer-improve.sh (part of make bench-transfer): the zero-shot and fine-tuning goals of
# issue 16 measured with the learned improvement method. Per training seed S, the general
# improvement policy (trained on generated graphs only, as bench/improve.sh trains it; or
# CKPT_DIR/improve-S.h5) places the six DOPPLER graph files (never seen; 4 devices, 8 for the
# 8gpu_ files), placement seed S:
#   zero-shot   place --method improve --config {"init": "best-instant"} --budget B, B in
#               ZERO_BUDGETS: a short search from the best instant placement (its 6 simulations
#               counted in B)
#   search-500  place --method improve --budget 500, from cp ("init": "cp") and from the best
#               instant placement (improve's default start)
#   active-500  place --method improve --budget 500 --config {"active_lr": 0.001}: from the best
#               instant placement, the policy fine-tuned on the graph by active search (the
#               search's own 500 simulations; doc/improve.md)
#   finetune    train --method improve --graph G --init general --episodes FT_EPISODES (each
#               episode 32 moves and its start), then place --method improve
#               --budget FT_SEARCH from the best instant placement with the fine-tuned policy:
#               batches of FT_BATCH episodes (12 of 4: 3 Adam steps, 396 simulations) + FT_SEARCH
# beside annealing from cp at 4,000 and 20,000 simulations (place --method anneal --seed S). Each
# row: seed, graph, method, budget, makespan, simulations spent, CPU ms of the doppler processes
# (one core: OPENBLAS_NUM_THREADS=1, /usr/bin/time user + system). Then mean +- sd per graph and
# method, and the ratios to the best instant method, the best known value and annealing.
#   SEEDS="1 2 3 4 5" CKPT_DIR=dir sh bench/transfer-improve.sh
# ROWS=FILE (the output of an earlier run) skips training and placing: its rows are summarised again.
set -eu
top_srcdir=${top_srcdir:-.}
bin=${DOPPLER:-$top_srcdir/doppler}
SH=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
SEEDS=${SEEDS:-1 2 3}
ZERO_BUDGETS=${ZERO_BUDGETS:-50 100 200}
FT_EPISODES=${FT_EPISODES:-12}
FT_BATCH=${FT_BATCH:-4}
FT_SEARCH=${FT_SEARCH:-100}
IMPROVE_EPISODES=${IMPROVE_EPISODES:-20000}
FAMILIES=${FAMILIES:-chainmm,ffnn,llama-block,llama-layer,daggen}
GRAPHS=${GRAPHS:-chain_mm_112nodes ffnn_192nodes transformer_block_215nodes full_transformer_layer_261nodes 8gpu_transformer_block 8gpu_full_transformer}
CKPT_DIR=${CKPT_DIR:-}
ROWS=${ROWS:-}
[ -d "$SH/doppler-graphs" ] || { echo "bench/transfer-improve.sh: $SH/doppler-graphs not found (DOPPLER_SHARED_DATA)"; exit 77; }
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-bench-tri.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -n "$CKPT_DIR" ] || CKPT_DIR=$tmp
. "$top_srcdir/bench/lib.sh"
echo '{"init": "best-instant"}' > "$tmp/bi.json"
echo '{"init": "cp"}' > "$tmp/cp.json"
echo '{"active_lr": 0.001}' > "$tmp/active.json"
echo "{\"method\": \"improve\", \"improve\": {\"batch\": $FT_BATCH}}" > "$tmp/ft.json"
best_of() { bench_best_known "$1"; }
ms_of() { sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p' "$1"; }
sims_of() { sed -n 's/.*"simulations":\([0-9]*\).*/\1/p' "$1"; }
cpu_of() { awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$1"; }
rows="$tmp/rows"; : > "$rows"
if [ -n "$ROWS" ]; then
    awk 'NF == 7 && ($1 == "-" || $1 ~ /^[0-9]+$/)' "$ROWS" > "$rows"
else
echo "# seed graph method budget makespan simulations cpu_ms (seed -: the instant methods)"
for seed in $SEEDS; do
    ck="$CKPT_DIR/improve-$seed.h5"
    bench_improve_ckpt "$seed"
    for f in $GRAPHS; do
        g="$SH/doppler-graphs/$f.txt"
        dev=4; case $f in 8gpu_*) dev=8;; esac
        out() { echo "$seed $f $1 $2 $(ms_of "$tmp/p.json") $3 $4" | tee -a "$rows"; }
        if [ "$seed" = "$(echo $SEEDS | cut -d' ' -f1)" ]; then
            for m in round-robin cp heft cpop peft etf; do
                "$bin" place --graph "$g" --devices $dev --method $m --json > "$tmp/p.json" 2> /dev/null || continue
                echo "- $f $m 0 $(ms_of "$tmp/p.json") 0 0" | tee -a "$rows"
            done
        fi
        pl() { /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$bin" place --graph "$g" --devices $dev "$@" --seed "$seed" --json > "$tmp/p.json"; }
        for b in $ZERO_BUDGETS; do
            pl --method improve --checkpoint "$ck" --config "$tmp/bi.json" --budget "$b"
            out zero-shot "$b" "$(sims_of "$tmp/p.json")" "$(cpu_of "$tmp/cpu")"
        done
        pl --method improve --checkpoint "$ck" --config "$tmp/cp.json" --budget 500
        out search-500-from-cp 500 "$(sims_of "$tmp/p.json")" "$(cpu_of "$tmp/cpu")"
        pl --method improve --checkpoint "$ck" --config "$tmp/bi.json" --budget 500
        out search-500-from-best-instant 500 "$(sims_of "$tmp/p.json")" "$(cpu_of "$tmp/cpu")"
        pl --method improve --checkpoint "$ck" --config "$tmp/active.json" --budget 500
        out active-500 500 "$(sims_of "$tmp/p.json")" "$(cpu_of "$tmp/cpu")"
        rm -f "$tmp/ft.h5"
        /usr/bin/time -f '%U %S' -o "$tmp/cpu-ft" "$bin" train --method improve --config "$tmp/ft.json" --graph "$g" --devices $dev --init "$ck" \
            --episodes "$FT_EPISODES" --seed "$seed" --checkpoint "$tmp/ft.h5" --quiet > "$tmp/ft.out"
        ft_sims=$(sed -n 's/.*, \([0-9]*\) simulations,.*/\1/p' "$tmp/ft.out")
        pl --method improve --checkpoint "$tmp/ft.h5" --config "$tmp/bi.json" --budget "$FT_SEARCH"
        out finetune+search $((ft_sims + FT_SEARCH)) $((ft_sims + $(sims_of "$tmp/p.json"))) \
            $(( $(cpu_of "$tmp/cpu-ft") + $(cpu_of "$tmp/cpu") ))
        for b in 4000 20000; do
            pl --method anneal --budget "$b"
            out anneal-from-cp "$b" "$(sims_of "$tmp/p.json")" "$(cpu_of "$tmp/cpu")"
        done
    done
done
fi
echo "# mean +- sample sd over the seeds; ratios of the mean to the best instant method (bi), the best known"
echo "# value (bk), annealing at 20,000 (a20k) and annealing at 4,000 (a4k); wins: seeds below the reference"
echo "# graph method budget mean sd n r_bi r_bk r_a20k r_a4k cpu_ms sims wins_vs_bi wins_vs_a4k"
for f in $GRAPHS; do
    bk=$(best_of "$f")
    bi=$(awk -v f="$f" '$1 == "-" && $2 == f { if (b == "" || $5 < b) b = $5 } END { print b }' "$rows")
    awk -v f="$f" -v bk="$bk" -v bi="$bi" '
        $1 != "-" && $2 == f { k = $3 " " $4; s[k] += $5; q[k] += $5 * $5; n[k]++; c[k] += $7; sm[k] += $6; ms[k, $1] = $5; seeds[$1] = 1 }
        END {
            for (k in s) mean[k] = s[k] / n[k]
            for (k in s) {
                m = mean[k]; v = n[k] > 1 ? (q[k] - n[k] * m * m) / (n[k] - 1) : 0
                wb = 0; wa = 0
                for (sd in seeds) { if (ms[k, sd] < bi - 1e-9) wb++; if (ms[k, sd] < ms["anneal-from-cp 4000", sd] - 1e-9) wa++ }
                printf "%s %s %.2f %.2f %d %.4f %.4f %.4f %.4f %.0f %.0f %d %d\n", f, k, m, (v > 0 ? sqrt(v) : 0), n[k], m / bi, m / bk,
                    m / mean["anneal-from-cp 20000"], m / mean["anneal-from-cp 4000"], c[k] / n[k], sm[k] / n[k], wb, wa
            }
        }' "$rows" | sort -k2,2 -k3,3n
done | tee "$tmp/summary"
echo "# per method: mean over the graphs of the ratio to the best instant method, graphs below 1, graphs below annealing at 4,000"
awk '{ k = $2 " " $3; r[k] += $7; n[k]++; if ($7 < 1) b[k]++; if ($10 < 1) a[k]++ }
     END { for (k in r) printf "%s: mean ratio to best instant %.4f, below 1 on %d of %d graphs, below anneal 4,000 on %d\n", k, r[k] / n[k], b[k], n[k], a[k] }' \
    "$tmp/summary" | sort
