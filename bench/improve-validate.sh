#!/bin/sh
# bench/improve-validate.sh: choose the improvement search's settings on generated VALIDATION
# graphs (not the DOPPLER test graphs): the COUNT + 4 graphs drawn from the five families with
# family seed FAMILY_SEED (the draw `doppler train --family --family-count COUNT` makes, its 4
# validation graphs included; it skips data/testsets/transfer.txt), each on the device count it
# was made for, placed at BUDGET simulations with seeds SEEDS by each checkpoint of CKPT (one or
# more, space-separated: train --method improve, e.g. one per training seed) under each search
# setting of SETTINGS (from the best instant placement unless it says "init"), and by annealing
# (from cp).
# SETTINGS: space-separated NAME=JSON (a --config object without spaces; "{}" = the defaults).
# Prints per setting, over graphs, seeds and checkpoints, the mean of makespan / the best makespan
# any setting found for that graph, seed and checkpoint (1 = always the best), the worst such
# ratio, and the share of runs within 2% of that best.
#   CKPT=imp.h5 FAMILY_SEED=777 COUNT=10 SEEDS="1 2" BUDGET=20000 sh bench/improve-validate.sh
#   CKPT="ck1.h5 ck2.h5 ck3.h5" SETTINGS='default={} r4={"restarts":4}' sh bench/improve-validate.sh
set -eu
top_srcdir=${top_srcdir:-.}
bin=${DOPPLER:-$top_srcdir/doppler}
: "${CKPT:?CKPT=FILE: an improvement checkpoint (doppler train --method improve), or several}"
FAMILY_SEED=${FAMILY_SEED:-777}
COUNT=${COUNT:-10}
SEEDS=${SEEDS:-1 2}
BUDGET=${BUDGET:-20000}
FAMILIES=${FAMILIES:-chainmm,ffnn,llama-block,llama-layer,daggen}
SETTINGS=${SETTINGS:-default={\} one-run={\"restarts\":1\} greedy={\"accept\":\"greedy\"\} mix0.1={\"mix\":0.1\} mix0.5={\"mix\":0.5\}}
for ck in $CKPT; do [ -r "$ck" ] || { echo "bench/improve-validate.sh: checkpoint $ck not found" >&2; exit 1; }; done
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
names=
for s in $SETTINGS; do
    name=${s%%=*}
    printf '%s\n' "${s#*=}" > "$tmp/set-$name.json"
    names="$names $name"
done
echo "# $(wc -l < "$tmp/list" | tr -d ' ') validation graphs (family seed $FAMILY_SEED, count $COUNT), budget $BUDGET, seeds $SEEDS, checkpoints $CKPT"
echo "# graph devices checkpoint seed setting makespan"
: > "$tmp/rows"
while read -r g dev spec; do
    ci=0
    for ck in $CKPT; do
        ci=$((ci + 1))
        for seed in $SEEDS; do
            for v in $names anneal; do
                case $v in
                anneal) a="--method anneal";;
                *) a="--method improve --checkpoint $ck --config $tmp/set-$v.json";;
                esac
                # a placement that fails stops the bench with its error (the pipe into sed lost place's
                # status: rows without a makespan, then a summary of NaN and exit 0; a review)
                # shellcheck disable=SC2086
                "$bin" place --graph "$g" --devices "$dev" $a --budget "$BUDGET" --seed "$seed" --json > "$tmp/p.json" \
                    2> "$tmp/p.err" || { echo "bench/improve-validate.sh: doppler place $a on $spec failed:" >&2
                                         cat "$tmp/p.err" >&2; exit 1; }
                ms=$(sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p' "$tmp/p.json")
                [ -n "$ms" ] || { echo "bench/improve-validate.sh: doppler place $a on $spec printed no makespan" >&2; exit 1; }
                echo "$spec $dev $ci $seed $v $ms" | tee -a "$tmp/rows"
            done
        done
    done
done < "$tmp/list"
echo "# setting: mean and max of makespan / best of all settings (same graph, checkpoint and seed), share within 2%"
awk '{ k = $1 " " $3 " " $4; if (!(k in b) || $6 < b[k]) b[k] = $6; r[NR] = $0 }
     END { for (i = 1; i <= NR; i++) { split(r[i], f, " "); x = f[6] / b[f[1] " " f[3] " " f[4]]; v = f[5];
               s[v] += x; n[v]++; if (x > mx[v]) mx[v] = x; if (x <= 1.02) w[v]++ }
           for (v in s) printf "%s %.4f %.4f %.2f\n", v, s[v] / n[v], mx[v], w[v] / n[v] }' "$tmp/rows" | sort -k2n
