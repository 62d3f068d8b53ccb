#!/bin/sh
# bench/improve.sh (make bench-improve): the learned improvement method (issue 16, item 3)
# against annealing at equal simulations. Per training seed, an improvement policy is trained on
# generated graphs only (--family, each graph on the device count it was made for: 2, 4 or 8),
# then places the six DOPPLER graph files (4 devices, 8 for the 8gpu_ files), which it has never
# seen, at budgets of 500 to 20,000 simulations (each budget a separate run, so that annealing's
# temperature schedule fits its budget), by these methods:
#   improve         place --method improve (its defaults: from the best of the six instant
#                   methods, annealing's acceptance, 20% uniform moves, the budget shared by 10
#                   runs restarted from the best, doc/improve.md)
#   improve-cp      the same from cp ("init": "cp": improve's default start before 2026-12-02)
#   improve-1run    the same from cp in one run ("restarts": 1: the search before restarts)
#   improve-greedy  the same as improve-cp accepting only moves that are no worse
#   improve-active  improve with active search ("active_lr": 0.001: the policy fine-tuned on the
#                   graph by the search's own moves, doc/improve.md)
#   anneal+policy   place --method anneal --proposals (the policy proposes half the moves; from cp)
#   anneal          place --method anneal (uniform moves, from cp, annealing's default)
#   anneal-bi       annealing from the best instant placement, improve's start
# Placement seed = training seed. Prints one row per run, then mean +- sd over the seeds per
# graph, method and budget, the ratio to the best known at 20,000, and writes the anytime plot.
#   SEEDS="1 2 3 4 5" EPISODES=20000 COUNT=32 BUDGETS="500 1000 2000 5000 10000 20000" \
#   PLOT=improve-anytime.png sh bench/improve.sh
# ROWS=FILE (the output of an earlier run) skips training and placing: its rows are summarised
# and plotted again.
set -eu
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/bench/lib.sh"
bin=${DOPPLER:-$top_srcdir/doppler}
SH=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
SEEDS=${SEEDS:-1 2 3}
EPISODES=${EPISODES:-20000}
COUNT=${COUNT:-32}
BUDGETS=${BUDGETS:-500 1000 2000 5000 10000 20000}
FAMILIES=${FAMILIES:-chainmm,ffnn,llama-block,llama-layer,daggen}
GRAPHS=${GRAPHS:-chain_mm_112nodes ffnn_192nodes transformer_block_215nodes full_transformer_layer_261nodes 8gpu_transformer_block 8gpu_full_transformer}
PLOT=${PLOT:-}
ROWS=${ROWS:-}
[ -d "$SH/doppler-graphs" ] || { echo "bench/improve.sh: $SH/doppler-graphs not found (DOPPLER_SHARED_DATA)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-bench-improve.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo '{"accept": "greedy", "init": "cp"}' > "$tmp/greedy.json"
echo '{"restarts": 1, "init": "cp"}' > "$tmp/one-run.json"
echo '{"init": "cp"}' > "$tmp/from-cp.json"
echo '{"init": "best-instant"}' > "$tmp/best-instant.json"
echo '{"active_lr": 0.001}' > "$tmp/active.json"
METHODS=${METHODS:-improve improve-cp improve-1run improve-greedy improve-active anneal+policy anneal anneal-bi}
best_of() { bench_best_known "$1"; }
rows="$tmp/rows"
: > "$rows"
if [ -n "$ROWS" ]; then
    grep -v '^#' "$ROWS" | awk 'NF == 6 && $1 ~ /^[0-9]+$/' > "$rows"
    SEEDS=$(awk '{ print $1 }' "$rows" | sort -un | tr '\n' ' ')
else
echo "# improvement policy trained on $COUNT generated graphs of $FAMILIES, $EPISODES episodes; seeds $SEEDS"
echo "# seed graph method budget makespan simulations"
for seed in $SEEDS; do
    ck="$tmp/improve-$seed.h5"
    "$bin" train --method improve --family "$FAMILIES" --family-count "$COUNT" --seed "$seed" --episodes "$EPISODES" \
        --checkpoint "$ck" --quiet > "$tmp/train-$seed.out" 2> "$tmp/train-$seed.err" || { cat "$tmp/train-$seed.err"; exit 1; }
    echo "# seed $seed: $(head -1 "$tmp/train-$seed.out")"
    for f in $GRAPHS; do
        g="$SH/doppler-graphs/$f.txt"
        dev=4; case $f in 8gpu_*) dev=8;; esac
        for b in $BUDGETS; do
            for m in $METHODS; do
                case $m in
                improve) args="--method improve --checkpoint $ck";;
                improve-cp) args="--method improve --checkpoint $ck --config $tmp/from-cp.json";;
                improve-active) args="--method improve --checkpoint $ck --config $tmp/active.json";;
                anneal-bi) args="--method anneal --config $tmp/best-instant.json";;
                improve-1run) args="--method improve --checkpoint $ck --config $tmp/one-run.json";;
                improve-greedy) args="--method improve --checkpoint $ck --config $tmp/greedy.json";;
                anneal+policy) args="--method anneal --proposals $ck";;
                anneal) args="--method anneal";;
                *) echo "bench/improve.sh: unknown method $m in METHODS (improve, improve-cp, improve-active, anneal-bi, improve-1run, improve-greedy, anneal+policy, anneal)" >&2; exit 2;;
                esac
                # shellcheck disable=SC2086
                "$bin" place --graph "$g" --devices $dev $args --budget "$b" --seed "$seed" --json > "$tmp/p.json"
                ms=$(sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p' "$tmp/p.json")
                sims=$(sed -n 's/.*"simulations":\([0-9]*\).*/\1/p' "$tmp/p.json")
                echo "$seed $f $m $b $ms $sims" | tee -a "$rows"
            done
        done
    done
done
fi
echo "# mean +- sample sd over the seeds (DOPPLER units); ratio: mean / best known"
echo "# graph method budget mean sd n ratio"
summary="$tmp/summary"
for f in $GRAPHS; do
    best=$(best_of "$f")
    awk -v f="$f" -v best="$best" '$2 == f { k = $3 " " $4; s[k] += $5; q[k] += $5 * $5; n[k]++ }
        END { for (k in s) { m = s[k] / n[k]; v = n[k] > 1 ? (q[k] - n[k] * m * m) / (n[k] - 1) : 0;
              printf "%s %s %.2f %.2f %d %.4f\n", f, k, m, (v > 0 ? sqrt(v) : 0), n[k], m / best } }' "$rows" |
        sort -k2,2 -k3,3n
done | tee "$summary"
echo "# goal (issue 16): improve within 2% of the best known at 20,000 simulations on every graph"
awk '$2 == "improve" && $3 == 20000 { ok = ($7 <= 1.02 ? "met" : "NOT met"); printf "%s: %.4f of best known, %s\n", $1, $7, ok;
     k++; if ($7 > 1.02) bad++ }
     END { print (k == 0 ? "no run at 20,000 simulations" : bad ? "goal not met on " bad " of " k " graph(s)" : "goal met on all " k " graph(s)") }' "$summary"
if [ -n "$PLOT" ] && command -v gnuplot > /dev/null; then
    {
        # the legend outside each panel, on its right (inside, top right, it covered the curves)
        echo "set terminal pngcairo size 2300,1000 font ',10' noenhanced"
        echo "set output '$PLOT'"
        echo "set multiplot layout 2,3 title 'anytime: best makespan against simulations, mean over seeds $SEEDS (DOPPLER units)'"
        echo "set logscale x; set xlabel 'simulations'; set ylabel 'makespan'; set key outside right top vertical Left reverse font ',8' samplen 2; set offsets 0, 0, graph 0.05, graph 0.05"
        for f in $GRAPHS; do
            best=$(best_of "$f")
            for m in improve improve-cp improve-1run improve-greedy improve-active anneal+policy anneal anneal-bi; do
                awk -v f="$f" -v m="$m" '$1 == f && $2 == m { print $3, $4, $5 }' "$summary" | sort -n > "$tmp/$f.$m.dat"
            done
            echo "set title '$f'"
            echo "plot '$tmp/$f.improve.dat' u 1:2 w lp t 'improve', '$tmp/$f.improve-cp.dat' u 1:2 w lp t 'improve from cp', \
'$tmp/$f.improve-1run.dat' u 1:2 w lp t 'improve (from cp, one run)', \
'$tmp/$f.improve-greedy.dat' u 1:2 w lp t 'improve (from cp, greedy)', '$tmp/$f.improve-active.dat' u 1:2 w lp t 'improve + active search', \
'$tmp/$f.anneal+policy.dat' u 1:2 w lp t 'anneal + policy proposals', '$tmp/$f.anneal.dat' u 1:2 w lp t 'anneal', \
'$tmp/$f.anneal-bi.dat' u 1:2 w lp t 'anneal from best instant', \
$best w l dt 2 lc rgb 'black' t 'best known'"
        done
        echo "unset multiplot"
    } > "$tmp/plot.gp"
    gnuplot "$tmp/plot.gp" && echo "# plot: $PLOT"
fi
