#!/bin/sh
# bench/improve-validate.sh: choose the improvement search's settings on generated VALIDATION
# graphs (not the DOPPLER test graphs): COUNT graphs drawn from the five families with family seed
# FAMILY_SEED (the draw `doppler train --family` makes; it skips data/testsets/transfer.txt), each
# on the device count it was made for, placed from cp at BUDGET simulations with seeds SEEDS by
# the checkpoint CKPT (train --method improve) under several search settings, and by annealing.
# Prints per setting the mean over graphs and seeds of makespan / the best makespan any setting
# found for that graph and seed (1 = always the best).
#   CKPT=imp.h5 FAMILY_SEED=777 COUNT=10 SEEDS="1 2" BUDGET=20000 sh bench/improve-validate.sh
set -eu
top_srcdir=${top_srcdir:-.}
bin=${DOPPLER:-$top_srcdir/doppler}
: "${CKPT:?CKPT=FILE: an improvement checkpoint (doppler train --method improve)}"
FAMILY_SEED=${FAMILY_SEED:-777}
COUNT=${COUNT:-10}
SEEDS=${SEEDS:-1 2}
BUDGET=${BUDGET:-20000}
FAMILIES=${FAMILIES:-chainmm,ffnn,llama-block,llama-layer,daggen}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-improve-validate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# the draw: train lists the graphs it drew (one episode, thrown away)
"$bin" train --method improve --family "$FAMILIES" --family-count "$COUNT" --family-seed "$FAMILY_SEED" --episodes 1 \
    --checkpoint "$tmp/draw.h5" 2> "$tmp/draw.err" > /dev/null || { cat "$tmp/draw.err"; exit 1; }
i=0
grep ' gen:' "$tmp/draw.err" | awk '{ print $NF, $(NF - 2) }' | while read -r spec dev; do
    i=$((i + 1))
    model=${spec#gen:}; model=${model%%\?*}
    # shellcheck disable=SC2046
    "$bin" graph gen "$model" $(echo "${spec#*\?}" | tr '&' '\n' | sed 's/^/--/; s/=/ /') --out "$tmp/g$i.json" > /dev/null
    echo "$tmp/g$i.json $dev $spec"
done > "$tmp/list"
echo '{"accept": "greedy"}' > "$tmp/greedy.json"
for x in 0.1 0.5; do echo "{\"mix\": $x}" > "$tmp/mix$x.json"; done
echo "# $COUNT validation graphs (family seed $FAMILY_SEED), budget $BUDGET, seeds $SEEDS, checkpoint $CKPT"
: > "$tmp/rows"
while read -r g dev spec; do
    for seed in $SEEDS; do
        for v in improve improve-greedy improve-mix0.1 improve-mix0.5 anneal; do
            case $v in
            improve) a="--method improve --checkpoint $CKPT";;
            improve-greedy) a="--method improve --checkpoint $CKPT --config $tmp/greedy.json";;
            improve-mix0.1) a="--method improve --checkpoint $CKPT --config $tmp/mix0.1.json";;
            improve-mix0.5) a="--method improve --checkpoint $CKPT --config $tmp/mix0.5.json";;
            anneal) a="--method anneal";;
            esac
            # shellcheck disable=SC2086
            ms=$("$bin" place --graph "$g" --devices "$dev" $a --budget "$BUDGET" --seed "$seed" --json |
                 sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p')
            echo "$spec $dev $seed $v $ms" | tee -a "$tmp/rows"
        done
    done
done < "$tmp/list"
echo "# setting: mean of makespan / best of all settings (same graph and seed)"
awk '{ k = $1 " " $3; if (!(k in b) || $5 < b[k]) b[k] = $5; r[NR] = $0 }
     END { for (i = 1; i <= NR; i++) { split(r[i], f, " "); s[f[4]] += f[5] / b[f[1] " " f[3]]; n[f[4]]++ }
           for (v in s) printf "%s %.4f\n", v, s[v] / n[v] }' "$tmp/rows" | sort -k2n
