#!/bin/sh
# bench/general.sh (make bench-general): generalization (issue 29). A trained model places, zero
# shot, graphs nobody here chose and graphs outside the training ranges; each case beside the
# best instant method, annealing and (with an improvement policy) the improvement search, and the
# lower bound. Nothing here is used for training or for choosing a design.
#
# The graphs (every file present is taken, so a folder with more files gives more cases):
#   doppler  DOPPLER's ten graph files, the six and their gdp_ variants (their own costs: comm = 4 x time)
#   stg      Kasahara STG random and application graphs (no transfer costs of their own: on
#            DOPPLER's rule at each ratio of RATIOS, --comm-ratio R)
#   sinnen   Sinnen's DOT task graphs (their own transfer costs)
#   wf       WfCommons workflow instances (their own runtimes and file sizes)
#   msr      MSR dnn-partitioning operator and layer graphs (their own costs)
#   gen      generated graphs outside the training ranges (2-D ChainMM, 8-layer FFNN, Llama
#            layer at tp 8; FLOPs and bytes, on DOPPLER's rule at each ratio of RATIOS)
# Machines: the uniform machine of DEVICES identical devices (default "4 8"; the DOPPLER and
# generated 8-device graphs on their own count); the generated graphs (FLOPs and bytes: the only
# ones a topology can time) also on each bundled topology of TOPOLOGIES (default none; e.g.
# "dgx1-v100 pcie-gen3-4gpu").
#
#   CKPT=doppler.h5 [IMPROVE=improve.h5] sh bench/general.sh
#   CKPT="seed1.h5 seed2.h5 seed3.h5 seed4.h5 seed5.h5" sh bench/general.sh   (several training
#            seeds: each case's instant methods and searches once, the policy of each checkpoint;
#            the summary gives the mean +- sd over the checkpoints of each family's figures)
#   DEVICES="2 4 8 16" RATIOS="1 4 10" ANNEAL="1000 20000" IMPROVE_BUDGETS="200 2000" FAMILIES="stg msr"
#   ROWS="out1 out2" CKPT="..." sh bench/general.sh   (no placement: the case rows of earlier runs'
#            outputs, e.g. of FAMILIES run side by side, summarised again; CKPT, ANNEAL and
#            IMPROVE as in those runs)
#
# Prints one row per case (makespans in the graph's unit; ratio = method / best instant) and a
# summary per family and overall: the mean ratio of each method to the best instant method and
# the share of cases where the policy's greedy placement is below it, beside what the lower bound
# allows: its floor (the mean of lower bound / best instant) and the share of cases whose best
# instant placement is at the lower bound (optimal: no method is below it). CPU ms of the greedy
# placement is the whole doppler place process (/usr/bin/time).
set -eu
top_srcdir=${top_srcdir:-.}
bin=${DOPPLER:-$top_srcdir/doppler}
SH=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
CKPT=${CKPT:-}
IMPROVE=${IMPROVE:-}
DEVICES=${DEVICES:-4 8}
RATIOS=${RATIOS:-1 4}
ANNEAL=${ANNEAL:-1000 20000}
IMPROVE_BUDGETS=${IMPROVE_BUDGETS:-200 2000}
FAMILIES=${FAMILIES:-doppler stg sinnen wf msr gen}
TOPOLOGIES=${TOPOLOGIES:-}
[ -n "$CKPT" ] || { echo "bench/general.sh: CKPT=FILE (a doppler train checkpoint) is required" >&2; exit 2; }
ROWS=${ROWS:-}
[ -n "$ROWS" ] || for c in $CKPT; do [ -f "$c" ] || { echo "bench/general.sh: $c: no such checkpoint" >&2; exit 2; }; done
K=$(echo $CKPT | wc -w)
[ -n "$ROWS" ] || [ -d "$SH" ] || { echo "bench/general.sh: $SH not found (DOPPLER_SHARED_DATA)" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-bench-general.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ms_of() { sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p' "$1"; }
# ratio A B: A / B to 4 decimals (awk: no bc needed); "nan" when A is empty (a method that
# printed no makespan), never a number that looks measured
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 <= 0) print "nan"; else printf "%7.4f", a / b }'; }
rows="$tmp/rows"
: > "$rows"

# die_place OUT ARGS...: doppler place ARGS > OUT, or stop the bench naming the command and
# showing doppler's error (a failed policy, annealing or improvement placement was dropped or
# ended the script without a word, and a table of no case exited 0: a review)
die_place() {
    out=$1; shift
    if ! "$bin" place "$@" > "$out" 2> "$tmp/place.err"; then
        echo "bench/general.sh: doppler place $* failed:" >&2
        sed 's/^/  /' "$tmp/place.err" >&2
        exit 1
    fi
}

# case FAMILY NAME GRAPH MACHINE_OPTIONS...: one row (its variables are the script's: sh has no
# locals, so none of them is a loop variable of the callers)
run_case() {
    fam=$1 name=$2 graph=$3
    shift 3
    lb=$("$bin" graph info "$graph" "$@" 2> /dev/null | sed -n 's/^lower bound: *\([0-9.e+-]*\).*/\1/p')
    best=""; bm=""
    for m in round-robin cp heft cpop peft etf; do
        die_place "$tmp/m.json" --graph "$graph" "$@" --method $m --json
        x=$(ms_of "$tmp/m.json")
        [ -n "$x" ] || { echo "bench/general.sh: $m printed no makespan on $graph $*" >&2; exit 1; }
        if [ -z "$best" ] || awk -v x="$x" -v b="$best" 'BEGIN { exit !(x + 0 < b + 0) }'; then best=$x; bm=$m; fi
    done
    # the policy of each checkpoint: the first one's makespan and CPU, every one's ratio
    dms=""; cpu=""; ratios=""
    for c in $CKPT; do
        if ! /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$bin" place --graph "$graph" "$@" --method doppler --checkpoint "$c" \
            --json > "$tmp/d.json" 2> "$tmp/place.err"; then
            echo "bench/general.sh: doppler place --graph $graph $* --method doppler --checkpoint $c failed:" >&2
            sed 's/^/  /' "$tmp/place.err" >&2
            exit 1
        fi
        x=$(ms_of "$tmp/d.json")
        [ -n "$dms" ] || { dms=$x; cpu=$(awk '{print ($1 + $2) * 1000}' "$tmp/cpu"); }
        ratios="$ratios $(ratio "$x" "$best")"
    done
    line=$(printf '%-7s %-40s %-14s %10.6g %10.6g %-11s %10.6g %7.0f' "$fam" "$name" "$(echo "$*" | sed 's/--devices /d/; s/--topology /t:/; s/ --comm-ratio /,r/; s/ //g')" \
           "$lb" "$best" "$bm" "$dms" "$cpu")
    line="$line$ratios"
    for b in $ANNEAL; do
        die_place "$tmp/a.json" --graph "$graph" "$@" --method anneal --budget "$b" --seed 1 --json
        line="$line $(ratio "$(ms_of "$tmp/a.json")" "$best")"
    done
    if [ -n "$IMPROVE" ]; then
        for b in $IMPROVE_BUDGETS; do
            die_place "$tmp/i.json" --graph "$graph" "$@" --method improve --checkpoint "$IMPROVE" --budget "$b" --seed 1 --json
            line="$line $(ratio "$(ms_of "$tmp/i.json")" "$best")"
        done
    fi
    echo "$line" | tee -a "$rows"
}

if [ -n "$ROWS" ]; then
    # the case rows of earlier outputs (comments, headers and their summaries left out)
    # shellcheck disable=SC2086
    cat $ROWS | awk -v K="$K" '/^#/ || /^family / || /^\(/ { next } $3 == "cases" { next } NF >= 8 + K' > "$rows"
    cat "$rows"
else
head="family  graph                                    machine                lb       best method        doppler  cpu_ms"
i=1; for c in $CKPT; do head="$head  ratio$i"; i=$((i + 1)); done
for b in $ANNEAL; do head="$head  an$b"; done
[ -z "$IMPROVE" ] || for b in $IMPROVE_BUDGETS; do head="$head  im$b"; done
echo "# zero-shot generalization: $CKPT${IMPROVE:+, improvement policy $IMPROVE}; devices $DEVICES; DOPPLER's rule at ratios $RATIOS${TOPOLOGIES:+; topologies $TOPOLOGIES}"
echo "$head"
for fam in $FAMILIES; do
    before=$(wc -l < "$rows")
    case $fam in
    doppler)
        for f in "$SH"/doppler-graphs/*.txt; do
            [ -f "$f" ] || continue
            n=$(basename "$f" .txt)
            case $n in 8gpu_*) run_case doppler "$n" "$f" --devices 8 ;; *) run_case doppler "$n" "$f" --devices 4 ;; esac
        done ;;
    stg)
        for f in $(find "$SH/stg" -name '*.stg' | sort); do
            for d in $DEVICES; do for r in $RATIOS; do
                run_case stg "$(basename "$(dirname "$f")")/$(basename "$f" .stg)" "$f" --devices "$d" --comm-ratio "$r"
            done; done
        done ;;
    sinnen)
        for f in $(find "$SH/sinnen-optimal-dot" -name '*.dot' | sort); do
            for d in $DEVICES; do run_case sinnen "$(basename "$f" .dot | cut -c1-40)" "$f" --devices "$d"; done
        done ;;
    wf)
        for f in $(find "$SH/wfcommons" -name '*.json' ! -name '*schema*' | sort); do
            for d in $DEVICES; do run_case wf "$(basename "$f" .json | cut -c1-40)" "$f" --devices "$d"; done
        done ;;
    msr)
        for f in $(find "$SH/msr-dnn-partitioning" -path '*Graphs/*.json' | sort); do
            for d in $DEVICES; do run_case msr "$(basename "$(dirname "$f")" | cut -c1-2)/$(basename "$f" .json)" "$f" --devices "$d"; done
        done ;;
    gen)
        for spec in "chainmm:--partition 2d" "ffnn:--layers 8" "llama-layer:--tp 8"; do
            model=${spec%%:*}
            # shellcheck disable=SC2086
            "$bin" graph gen "$model" ${spec#*:} --out "$tmp/gen-$model.json" > /dev/null 2> "$tmp/gen.err" ||
                { echo "bench/general.sh: graph gen $model ${spec#*:} failed:" >&2; cat "$tmp/gen.err" >&2; exit 1; }
            for r in $RATIOS; do
                run_case gen "$model$(echo "${spec#*:}" | tr -d ' ')" "$tmp/gen-$model.json" --comm-ratio "$r"
            done
            for t in $TOPOLOGIES; do
                run_case gen "$model$(echo "${spec#*:}" | tr -d ' ')" "$tmp/gen-$model.json" --topology "$t"
            done
        done ;;
    *) echo "bench/general.sh: unknown family $fam" >&2; exit 2 ;;
    esac
    # a family of no case (its folder missing from $SH, or empty) is an error, not an empty row
    # of the table (the script exited 0 with a header and no summary)
    [ "$(wc -l < "$rows")" -gt "$before" ] ||
        { echo "bench/general.sh: family $fam gave no case (its graphs not found under $SH: DOPPLER_SHARED_DATA)" >&2; exit 1; }
done
fi

# summary: per family and overall, the mean ratio to the best instant method of the greedy
# policy (each checkpoint's; with several, the mean +- sd over checkpoints of the family means)
# and of each search column, and the share of cases the policy is below the best instant
echo
echo "# summary (mean of method / best instant; below: share of cases where doppler < best instant${K:+; $K checkpoint(s): mean +- sd over them})"
# row fields: 1 family, 2 graph, 3 machine, 4 lb, 5 best, 6 method, 7 doppler (first checkpoint),
# 8 cpu, 9..8+K each checkpoint's ratio, then the searches' ratios
awk -v K="$K" -v REAL="stg sinnen wf msr" '
function line(name, cnt, S, B, C, FL, AT,    k, m, v, bm, bv, j) {
  m = 0; v = 0; bm = 0; bv = 0
  for (k = 1; k <= K; k++) { m += S[k] / cnt; bm += B[k] / cnt }
  m /= K; bm /= K
  for (k = 1; k <= K; k++) { v += (S[k] / cnt - m) ^ 2; bv += (B[k] / cnt - bm) ^ 2 }
  if (K > 1) printf "%-8s %3d cases  doppler %.3f +- %.3f  below %3.0f%% +- %2.0f%%", name, cnt, m, sqrt(v / (K - 1)), 100 * bm, 100 * sqrt(bv / (K - 1))
  else printf "%-8s %3d cases  doppler %.3f  below %3.0f%%", name, cnt, m, 100 * bm
  for (j = 1; j <= ns; j++) printf "  %.3f", C[j] / cnt
  printf "  | floor %.3f  at lb %3.0f%%\n", FL / cnt, 100 * AT / cnt
}
{ f = $1; if (!(f in n)) order[++nf] = f; n[f]++; N++
  # the lower bound over the best instant method (no placement of the case is below it), and
  # whether the best instant placement is at the bound (to the 6 digits of the rows): then it is
  # optimal and no method is below it
  fl = $4 / $5; at = ($5 - $4 <= 1e-5 * $5 && $4 - $5 <= 1e-5 * $5); fls[f] += fl; ats[f] += at; FLS += fl; ATS += at
  for (k = 1; k <= K; k++) { r = $(8 + k); s[f, k] += r; S[k] += r; if (r < 1) { b[f, k]++; B[k]++ } }
  ns = NF - 8 - K; for (j = 1; j <= ns; j++) { c[f, j] += $(8 + K + j); C[j] += $(8 + K + j) }
  if (index(" " REAL " ", " " f " ")) {
    NR_++; RFL += fl; RAT += at
    for (k = 1; k <= K; k++) { r = $(8 + k); RSUM[k] += r; if (r < 1) RBEL[k]++ }
    for (j = 1; j <= ns; j++) RCOL[j] += $(8 + K + j) } }
END {
  for (i = 1; i <= nf; i++) {
    f = order[i]
    delete fs; delete fb; delete fc
    for (k = 1; k <= K; k++) { fs[k] = s[f, k]; fb[k] = b[f, k] }
    for (j = 1; j <= ns; j++) fc[j] = c[f, j]
    line(f, n[f], fs, fb, fc, fls[f], ats[f])
  }
  if (NR_) line("real", NR_, RSUM, RBEL, RCOL, RFL, RAT)
  if (N) line("all", N, S, B, C, FLS, ATS) }' "$rows"
echo "(real: the public graphs nobody here made, families stg sinnen wf msr)"
echo "(columns after below: ${ANNEAL:+anneal at $ANNEAL}${IMPROVE:+, improve at $IMPROVE_BUDGETS}, each / best instant)"
echo "(floor: the mean of lower bound / best instant, below which no method's mean can go)"
echo "(at lb: the share of cases whose best instant placement is at the lower bound, so optimal: no method is below it there)"
