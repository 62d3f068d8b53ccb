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
# Anytime curves (issue 15): annealing, local search and random search (best of K random
# placements) at every budget of BUDGETS (default "100 300 1000 TOTAL 20000"; rows anneal-B,
# local-B, random-B); the refine rows at every total of REFINE_TOTALS (default "TOTAL 20000"; rows
# doppler-project+anneal-T and, with PROPOSALS, doppler-project+anneal+proposals-T and
# doppler-project+improve-T, the improvement search of that policy from the same start); and both
# DOPPLER trainings' greedy makespan at each of their evaluations against the simulations spent by
# then (from the trajectories' /evaluations, h5dump; CURVES file). With PLOT=FILE.png (gnuplot),
# one panel per graph: makespan against simulations (log axis), means over the seeds, with
# round-robin, cp, the best list scheduler (heft, cpop, peft, etf), the lower bound and the best
# known as lines.
#
# Output: the raw rows as CSV (OUT, default quality.csv: graph,seed,method,makespan,simulations),
# the evaluation curves as CSV (CURVES, default quality-curves.csv:
# graph,seed,method,index,makespan,simulations) and a markdown table of mean +- sd over the seeds
# on stdout. Environment: SEEDS (default 5), SEED_FROM (1: seeds SEED_FROM .. SEED_FROM + SEEDS -
# 1; OUT and CURVES are then appended to, for a run in parts), EPISODES (1000, the authors' per
# stage), TOTAL (4000), BUDGETS, REFINE_TOTALS, PROPOSALS (an improve checkpoint: adds the rows
# doppler-project+anneal+proposals-T, the refine search with half its moves proposed by it, and
# doppler-project+improve-T, its improvement search), PLOT, KEEP (a folder that keeps this
# project's checkpoints, GRAPH-SEED.h5), GRAPHS (a subset of the file names),
# DOPPLER_SHARED_DATA; REPLOT=1 only summarises and plots the rows already in OUT and CURVES.
# About 1 to 2 minutes per graph and seed on one core.
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
CURVES=${CURVES:-quality-curves.csv}
BUDGETS=${BUDGETS:-"100 300 1000 $TOTAL 20000"}
REFINE_TOTALS=${REFINE_TOTALS:-"$TOTAL 20000"}
PLOT=${PLOT:-}
GRAPHS=${GRAPHS:-"chain_mm_112nodes.txt ffnn_192nodes.txt transformer_block_215nodes.txt full_transformer_layer_261nodes.txt 8gpu_transformer_block.txt 8gpu_full_transformer.txt"}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$here/lib.sh"
best_known() { bench_best_known "$1"; }
ms() { sed -n 's/.*"makespan":\([^,]*\),.*/\1/p' "$1"; }
sims() { sed -n 's/.*"simulations":\([0-9]*\).*/\1/p' "$1"; }
if [ -z "${REPLOT:-}" ]; then
[ "$SEED_FROM" -gt 1 ] && [ -f "$OUT" ] || echo "graph,seed,method,makespan,simulations" > "$OUT"
[ "$SEED_FROM" -gt 1 ] && [ -f "$CURVES" ] || echo "graph,seed,method,index,makespan,simulations" > "$CURVES"
# one column of a trajectory's /evaluations (h5dump), one value per line; none is an error (a
# missing or failing h5dump gave the curves file its header alone, and a plot without DOPPLER's
# curves, exit 0: a review)
command -v h5dump > /dev/null 2>&1 || { echo "quality: h5dump not found (Debian package hdf5-tools)" >&2; exit 1; }
evals() {
    h5dump -d "/evaluations/$2" -y -w 0 "$1" > "$tmp/h5dump.out" || { echo "quality: h5dump -d /evaluations/$2 $1 failed" >&2; exit 1; }
    awk '/DATA \{/ { on = 1; next } on && /\}/ { exit } on' "$tmp/h5dump.out" | tr -d ' ' | tr ',' '\n' | sed '/^$/d' > "$tmp/evals.out"
    [ -s "$tmp/evals.out" ] || { echo "quality: $1 holds no /evaluations/$2" >&2; exit 1; }
    cat "$tmp/evals.out"
}
for f in $GRAPHS; do
    G="$data/$f"
    case $f in 8gpu_*) dev=8 ;; *) dev=4 ;; esac
    for seed in $(seq "$SEED_FROM" $((SEED_FROM + SEEDS - 1))); do
        for m in single random round-robin cp heft cpop peft etf; do
            "$D" place --graph "$G" --devices $dev --method $m --seed "$seed" --json > "$tmp/p.json"
            echo "$f,$seed,$m,$(ms "$tmp/p.json"),0" >> "$OUT"
        done
        for b in $(echo $BUDGETS | tr ' ' '\n' | sort -nu); do
            for m in anneal local random; do
                if [ $m = random ]; then opt="--samples $b"; else opt="--budget $b"; fi
                # shellcheck disable=SC2086
                "$D" place --graph "$G" --devices $dev --method $m $opt --seed "$seed" --json > "$tmp/p.json"
                echo "$f,$seed,$m-$b,$(ms "$tmp/p.json"),$(sims "$tmp/p.json")" >> "$OUT"
            done
        done
        for cfg in fast project; do
            ep=""
            [ $cfg = fast ] && ep="--episodes $EPISODES"
            "$D" train --graph "$G" --devices $dev --pipeline $ep --seed "$seed" --quiet \
                --config "$here/doppler-$cfg.json" --checkpoint "$tmp/$cfg.h5" --trajectory "$tmp/$cfg.traj.h5" \
                --force > "$tmp/t.out"
            evals "$tmp/$cfg.traj.h5" makespan > "$tmp/ev.ms"
            evals "$tmp/$cfg.traj.h5" simulations > "$tmp/ev.sims"
            paste -d, "$tmp/ev.ms" "$tmp/ev.sims" | awk -F, -v p="$f,$seed,doppler-$cfg" '{ print p "," NR - 1 "," $0 }' >> "$CURVES"
            rm -f "$tmp/$cfg.traj.h5"
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
        for T in $REFINE_TOTALS; do
            left=$((T - total - 3))
            [ $left -gt 0 ] || left=1
            "$D" place --graph "$G" --devices $dev --method doppler --checkpoint "$tmp/project.h5" --seed "$seed" \
                --refine anneal --refine-budget "$left" --json > "$tmp/p.json"
            echo "$f,$seed,doppler-project+anneal-$T,$(ms "$tmp/p.json"),$((total + $(sims "$tmp/p.json")))" >> "$OUT"
            if [ -n "${PROPOSALS:-}" ]; then
                # the same search with half its moves proposed by an improvement policy (train --method
                # improve on generated graphs: its offline simulations are not counted here)
                "$D" place --graph "$G" --devices $dev --method doppler --checkpoint "$tmp/project.h5" --seed "$seed" \
                    --refine anneal --refine-budget "$left" --proposals "$PROPOSALS" --json > "$tmp/p.json"
                echo "$f,$seed,doppler-project+anneal+proposals-$T,$(ms "$tmp/p.json"),$((total + $(sims "$tmp/p.json")))" >> "$OUT"
                # the improvement search itself (place --method improve's) from the same start
                "$D" place --graph "$G" --devices $dev --method doppler --checkpoint "$tmp/project.h5" --seed "$seed" \
                    --refine improve --refine-budget "$left" --proposals "$PROPOSALS" --json > "$tmp/p.json"
                echo "$f,$seed,doppler-project+improve-$T,$(ms "$tmp/p.json"),$((total + $(sims "$tmp/p.json")))" >> "$OUT"
            fi
        done
        [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp "$tmp/project.h5" "$KEEP/${f%.txt}-$seed.h5"; }
    done
    lb=$("$D" graph info "$G" --devices $dev 2>/dev/null | sed -n 's/.*lower bound[^0-9]*\([0-9.e+-]*\).*/\1/p' | head -1)
    if [ "$SEED_FROM" -eq 1 ]; then
        echo "$f,0,lower-bound,${lb:-NA},0" >> "$OUT"
        echo "$f,0,best-known,$(best_known "$f"),0" >> "$OUT"
    fi
done
fi
# mean +- sd per graph and method
echo "| graph | method | makespan (mean +- sd, DOPPLER units) | simulations (mean) | seeds |"
echo "|---|---|---:|---:|---:|"
awk -F, 'NR > 1 && $4 != "NA" { k = $1 SUBSEP $3; n[k]++; s[k] += $4; q[k] += $4 * $4; c[k] += $5; if (!(k in o)) { o[k] = ++m; key[m] = k } }
    END { for (i = 1; i <= m; i++) { k = key[i]; split(k, p, SUBSEP); mu = s[k] / n[k]; v = n[k] > 1 ? (q[k] - n[k] * mu * mu) / (n[k] - 1) : 0;
          printf "| %s | %s | %.2f +- %.2f | %.0f | %d |\n", p[1], p[2], mu, sqrt(v > 0 ? v : 0), c[k] / n[k], n[k] } }' "$OUT"
# the anytime plot: one panel per graph, means over the seeds
if [ -n "$PLOT" ] && command -v gnuplot > /dev/null; then
    mean_of() { # GRAPH METHOD: mean makespan of that row over the seeds
        awk -F, -v f="$1" -v m="$2" '$1 == f && $3 == m && $4 != "NA" { s += $4; n++ } END { if (n) printf "%.6g\n", s / n }' "$OUT"
    }
    {
        # the legend outside each panel, on its right (inside, bottom left, it covered the curves
        # and markers it names)
        echo "set terminal pngcairo size 2400,1100 font ',10' noenhanced"
        echo "set output '$PLOT'"
        echo "set multiplot layout 2,3 title 'makespan against simulations spent (training + search), mean over the seeds (DOPPLER units)'"
        echo "set logscale x; set xlabel 'simulations'; set ylabel 'makespan'; set key outside right top vertical Left reverse font ',8' samplen 2; set offsets 0, 0, graph 0.05, graph 0.05"
        for f in $GRAPHS; do
            for m in anneal local random doppler-project+anneal doppler-project+anneal+proposals doppler-project+improve; do
                # rows m-B: mean simulations and makespan per B
                awk -F, -v f="$f" -v m="$m" '$1 == f && index($3, m "-") == 1 && substr($3, length(m) + 2) ~ /^[0-9]+$/ {
                        k = substr($3, length(m) + 2) + 0; s[k] += $5; y[k] += $4; n[k]++ }
                    END { for (k in s) printf "%.6g %.6g\n", s[k] / n[k], y[k] / n[k] }' "$OUT" | sort -g > "$tmp/$f.$m.dat"
            done
            for m in doppler-fast doppler-project; do
                awk -F, -v f="$f" -v m="$m" '$1 == f && $3 == m { s[$4] += $6; y[$4] += $5; n[$4]++ }
                    END { for (k in s) printf "%.6g %.6g\n", s[k] / n[k], y[k] / n[k] }' "$CURVES" | sort -g > "$tmp/$f.$m.dat"
            done
            rr=$(mean_of "$f" round-robin); cp=$(mean_of "$f" cp); lb=$(mean_of "$f" lower-bound); bk=$(mean_of "$f" best-known)
            list=$(for m in heft cpop peft etf; do mean_of "$f" $m; done | sort -g | head -1)
            echo "set title '$f'"
            # from just below the lower bound to above the worse of round-robin and cp (the untrained
            # policies' first evaluations can be far above; they leave the panel at the top)
            top=$(printf '%s\n%s\n' "${rr:-0}" "${cp:-0}" | sort -g | tail -1)
            echo "set yrange [${lb:-0} * 0.95 : $top * 1.25]"
            printf "plot '%s' u 1:2 w lp t 'anneal', '%s' u 1:2 w lp t 'local search', '%s' u 1:2 w lp t 'random search (best of K)', " \
                "$tmp/$f.anneal.dat" "$tmp/$f.local.dat" "$tmp/$f.random.dat"
            printf "'%s' u 1:2 w l lw 2 lc rgb 'dark-orange' t 'DOPPLER, authors (greedy at evaluations)', '%s' u 1:2 w l lw 2 lc rgb 'dark-green' t 'DOPPLER, this project (greedy at evaluations)', " \
                "$tmp/$f.doppler-fast.dat" "$tmp/$f.doppler-project.dat"
            printf "'%s' u 1:2 w p pt 7 ps 1.5 t 'this project + anneal at inference', " "$tmp/$f.doppler-project+anneal.dat"
            [ -s "$tmp/$f.doppler-project+anneal+proposals.dat" ] &&
                printf "'%s' u 1:2 w p pt 5 ps 1.5 t '... + learned move proposals', " "$tmp/$f.doppler-project+anneal+proposals.dat"
            [ -s "$tmp/$f.doppler-project+improve.dat" ] &&
                printf "'%s' u 1:2 w p pt 9 ps 1.5 t 'this project + improvement search at inference', " "$tmp/$f.doppler-project+improve.dat"
            # reference lines: those that print the same (cp, round-robin and the best list
            # scheduler all at 84.18 on FFNN) are one line whose label names them all
            refs=$(printf 'round-robin=%s\ncp=%s\nbest list scheduler=%s\n' "${rr:-NaN}" "${cp:-NaN}" "${list:-NaN}" |
                awk -F= '{ v = ($2 == "NaN") ? "NaN" : sprintf("%.4g", $2); if (!(v in lab)) { o[++n] = v; lab[v] = $1 } else lab[v] = lab[v] " = " $1 }
                    END { split("2 3 4", dt, " "); split("#8c510a #762a83 #01665e", lc, " ");
                          for (i = 1; i <= n; i++) printf "%s w l dt %s lw 1.5 lc rgb \"%s\" t \"%s (%s)\", ", o[i], dt[i], lc[i], lab[o[i]], o[i] }')
            printf "%s" "$refs"
            printf "%s w l lc rgb 'gray' t 'lower bound', %s w l lc rgb 'black' dt 2 t 'best known'\n" "${lb:-NaN}" "${bk:-NaN}"
        done
        echo "unset multiplot"
    } > "$tmp/plot.gp"
    gnuplot "$tmp/plot.gp" && echo "# plot: $PLOT"
fi
