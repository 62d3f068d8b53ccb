#!/bin/sh
# test_coarse_cli.sh: `doppler place --coarsen N` (policy/dp_coarse.h) on a generated training
# graph of about 20,000 ops (llama-layer --layers 16 --tp 8 --training: 19,374 ops, 8 uniform
# devices): round-robin and the DOPPLER policy (a 2-episode checkpoint trained here on a small
# ffnn) place the group graph, local search refines the expansion at a budget of simulations.
# Checked: every op placed on a device in range; fewer groups than ops, none above N; the
# simulations the JSON reports (the group graph's and the refinement's, apart and in all);
# refining never worse than the plain expansion; the chains rule (--coarsen-rule chains) gives
# more groups than the default packed rule; the groups' critical path by work is reported and a
# large N warned about; bad values refused with the option named. `doppler train --coarsen N`
# trains on group graphs, scored by the expanded placement on the graph's own machine: the
# makespan train reports (model-selected and final parameters) is what `place --coarsen N` reports
# from the checkpoint, to the bit, and so is train's cp row (place --method cp --coarsen N), on one
# graph and as the first graph of a family run whose every graph is grouped.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
bin="$top_builddir/doppler"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-coarse-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export OPENBLAS_NUM_THREADS=1
DOPPLER_DATA=${DOPPLER_DATA:-$top_srcdir/data}
export DOPPLER_DATA
num() { sed -n "s/.*\"$1\":\([-0-9.e+]*\).*/\1/p" "$2"; }

# the bound printed by work alone is a lower bound: each op at its least time, the work over the
# compute streams (mean times and devices gave 16.5 for a makespan of 3 on a heterogeneous
# example, 4 s for 1 s with 4 streams a device: a review)
printf '3\n2\n2\n\n1 2 0\n2 3 0\n\n1 10\n1 10\n1 10\n\n1 2 1\n' > "$tmp/h.in"
"$bin" place --graph "$tmp/h.in" --method cp --coarsen 1 --json > "$tmp/h.json" || fail "place a heterogeneous example --coarsen 1"
awk -v b="$(num work_bound "$tmp/h.json")" -v m="$(num makespan "$tmp/h.json")" 'BEGIN { exit !(b == 3 && m == 3) }' || fail "heterogeneous work bound: $(cat "$tmp/h.json")"
python3 -c 'import json; json.dump({"name": "par8", "ops": [{"name": "o%d" % i, "flops": 1e13} for i in range(8)], "edges": []}, open("'"$tmp"'/par8.json", "w"))'
"$bin" place --graph "$tmp/par8.json" --devices 2 --streams 4 --method round-robin --coarsen 1 --json > "$tmp/s.json" || fail "place --streams 4 --coarsen 1"
awk -v b="$(num work_bound "$tmp/s.json")" 'BEGIN { exit !(b == 1) }' || fail "work bound with 4 streams a device: $(cat "$tmp/s.json")"

"$bin" graph gen llama-layer --layers 16 --tp 8 --training --out "$tmp/big.json" > "$tmp/gen.out" || fail "graph gen"
ops=$(sed -n 's/.*, \([0-9]*\) ops,.*/\1/p' "$tmp/gen.out")
[ "$ops" = 19374 ] || fail "expected 19374 ops, got '$ops'"

# place ARGS...: doppler place on the big graph, JSON to $tmp/p.json, assignment to $tmp/p.out
place() {
    "$bin" place --graph "$tmp/big.json" --devices 8 --json --out "$tmp/p.out" "$@" > "$tmp/p.json" 2> "$tmp/err" ||
        { cat "$tmp/err"; fail "place $*"; }
}
# every op has a device in 0..7
all_placed() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"]; sys.exit(not (len(d) == int(sys.argv[2]) and all(0 <= x < 8 for x in d)))' \
        "$tmp/p.out" "$ops" || fail "$1: not every op placed on 0..7"
}

place --method round-robin --coarsen 16
all_placed "round-robin --coarsen 16"
groups=$(num groups "$tmp/p.json"); largest=$(num largest_group "$tmp/p.json"); plain=$(num makespan "$tmp/p.json")
[ -n "$groups" ] && [ "$groups" -lt "$ops" ] && [ "$groups" -ge $(((ops + 15) / 16)) ] || fail "groups '$groups' of $ops ops"
[ "$largest" -le 16 ] || fail "largest group $largest above 16"
[ "$(num simulations "$tmp/p.json")" = 0 ] || fail "round-robin on groups spent simulations"
echo "ok: round-robin --coarsen 16: $groups groups (largest $largest), makespan $plain"

# the chains rule: more groups than the default packed rule, also at most 16 ops each
place --method round-robin --coarsen 16 --coarsen-rule chains
all_placed "round-robin --coarsen 16 --coarsen-rule chains"
chains=$(num groups "$tmp/p.json")
[ -n "$chains" ] && [ "$groups" -lt "$chains" ] || fail "packed $groups groups, chains '$chains': expected fewer packed"
[ "$(num largest_group "$tmp/p.json")" -le 16 ] || fail "chains: largest group above 16"
grep -q '"rule":"chains"' "$tmp/p.json" || fail "chains: the JSON does not name the rule"
echo "ok: --coarsen-rule chains: $chains groups"

place --method round-robin --coarsen 16 --refine local --refine-budget 30
all_placed "refined"
refined=$(num makespan "$tmp/p.json")
[ "$(num simulations "$tmp/p.json")" = 30 ] || fail "refine: $(num simulations "$tmp/p.json") simulations, expected 30"
[ "$(num refine_simulations "$tmp/p.json")" = 30 ] || fail "refine_simulations"
awk -v a="$refined" -v b="$plain" 'BEGIN { exit !(a <= b) }' || fail "refined $refined worse than the expansion $plain"
echo "ok: refined with 30 simulations: $refined"

"$bin" train --graph "$top_srcdir/data/graphs/ffnn.json" --devices 8 --seed 3 --pipeline --episodes 2 --quiet \
    --checkpoint "$tmp/ck.h5" > "$tmp/train.out" 2>&1 || { cat "$tmp/train.out"; fail "train"; }
place --method doppler --checkpoint "$tmp/ck.h5" --coarsen 16
all_placed "doppler --coarsen 16"
gs=$(num group_simulations "$tmp/p.json")
[ "$gs" -ge 1 ] && [ "$(num simulations "$tmp/p.json")" = "$gs" ] || fail "doppler on groups: group simulations '$gs'"
echo "ok: doppler --coarsen 16: makespan $(num makespan "$tmp/p.json"), $gs simulation(s) on the group graph"

# the groups' critical path by work against the lower bound by work: in the JSON; a warning when
# the groups bound the makespan (a large N chains whole paths), none at N 16
grep -q '"work_bound":' "$tmp/p.json" && grep -q '"group_critical_path_work":' "$tmp/p.json" || fail "JSON: no work bound"
! grep -q "warning" "$tmp/err" || fail "--coarsen 16 warned: $(cat "$tmp/err")"
place --method cp --coarsen 5000 --coarsen-rule chains
gcp=$(num group_critical_path_work "$tmp/p.json"); wb=$(num work_bound "$tmp/p.json")
awk -v a="$gcp" -v b="$wb" 'BEGIN { exit !(a > 1.1 * b) }' || fail "--coarsen 5000: groups' path $gcp, bound $wb"
grep -q "warning: --coarsen 5000: the groups' critical path by work is" "$tmp/err" || fail "--coarsen 5000: no warning: $(cat "$tmp/err")"
echo "ok: --coarsen 5000 warns (groups' critical path by work $gcp, bound $wb)"
# the JSON's work figures are in the printed unit, as the text's (a DOPPLER file's were in file
# units: 6e2 for 6e-8 DOPPLER units; a review)
printf '3\n\n0, 1\n1, 2\n100,0\n200,0\n300,0' > "$tmp/c3.txt"
"$bin" place --graph "$tmp/c3.txt" --method cp --coarsen 2 --json > "$tmp/c3.json" 2> /dev/null || fail "place --coarsen on a DOPPLER file"
awk -v x="$(num critical_path_work "$tmp/c3.json")" 'BEGIN { exit !(x > 5.99e-8 && x < 6.01e-8) }' ||
    fail "critical_path_work of a DOPPLER file: $(num critical_path_work "$tmp/c3.json"), wanted 6e-08"
# the text gives every figure of the line with its unit (the bound and the groups' path had none)
"$bin" place --graph "$tmp/big.json" --devices 8 --method cp --coarsen 16 > "$tmp/t.out" 2> /dev/null || fail "place --coarsen 16 (text)"
grep -q "lower bound [0-9.e+-]* s (critical path or work per compute stream), the groups' critical path [0-9.e+-]* s (" "$tmp/t.out" ||
    fail "units of the work figures: $(grep 'by work alone' "$tmp/t.out")"

# bad values: refused, the option named, nothing written
rm -f "$tmp/p.out"
for bad in 0 -3 x; do
    if "$bin" place --graph "$tmp/big.json" --devices 8 --method cp --coarsen "$bad" --out "$tmp/p.out" > /dev/null 2> "$tmp/err"; then
        fail "--coarsen $bad accepted"
    fi
    grep -q -- "--coarsen" "$tmp/err" || fail "--coarsen $bad: message does not name the option: $(cat "$tmp/err")"
    [ ! -e "$tmp/p.out" ] || fail "--coarsen $bad: an assignment was written"
done
for bad in "--coarsen 16 --coarsen-rule bands" "--coarsen-rule chains"; do
    # shellcheck disable=SC2086
    if "$bin" place --graph "$tmp/big.json" --devices 8 --method cp $bad --out "$tmp/p.out" > /dev/null 2> "$tmp/err"; then
        fail "$bad accepted"
    fi
    grep -q -- "--coarsen-rule" "$tmp/err" || fail "$bad: message does not name the option: $(cat "$tmp/err")"
    [ ! -e "$tmp/p.out" ] || fail "$bad: an assignment was written"
done
if "$bin" simulate --graph "$tmp/big.json" --devices 8 --method cp --coarsen 4 > /dev/null 2> "$tmp/err"; then
    fail "simulate --coarsen accepted"
fi
grep -q -- "--coarsen" "$tmp/err" || fail "simulate --coarsen: $(cat "$tmp/err")"
echo "ok: bad --coarsen values refused"

# train --coarsen: the policy learns on the group graph; place --coarsen from its checkpoint
# places the same group graph the same way (the makespan to the bit, both parameter sets)
"$bin" graph gen llama-layer --layers 1 --tp 4 --training --out "$tmp/l1.json" > /dev/null || fail "graph gen l1"
"$bin" train --graph "$tmp/l1.json" --devices 4 --coarsen 16 --pipeline --episodes 6 --seed 5 --quiet --json \
    --checkpoint "$tmp/c1.h5" > "$tmp/t.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "train --coarsen 16"; }
tg=$(num n_groups "$tmp/t.json"); to=$(num n_ops "$tmp/t.json")
[ "$to" = 754 ] && [ -n "$tg" ] && [ "$tg" -lt 754 ] || fail "train --coarsen 16: $tg groups of '$to' ops"
for par in selected final; do
    key=makespan; [ "$par" = final ] && key=makespan_final
    want=$(num "$key" "$tmp/t.json")
    "$bin" place --graph "$tmp/l1.json" --devices 4 --method doppler --checkpoint "$tmp/c1.h5" --parameters "$par" \
        --coarsen 16 --json > "$tmp/p1.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "place --coarsen from train's checkpoint"; }
    got=$(num makespan "$tmp/p1.json")
    [ -n "$want" ] && [ "$want" = "$got" ] || fail "train --coarsen reported $key $want, place --coarsen --parameters $par gives $got"
    [ "$(num groups "$tmp/p1.json")" = "$tg" ] || fail "place and train group differently"
done
"$bin" place --graph "$tmp/l1.json" --devices 4 --method cp --coarsen 16 --json > "$tmp/p1.json" 2> "$tmp/err" || fail "place cp --coarsen 16"
# annealing and local search with an improvement policy's proposals on the group graph (they
# failed: "the cost oracle must be the machine's engine"; a review): the group graph's engine
echo '{"method": "improve", "improve": {"hidden": 8, "episodes": 8, "batch": 4, "horizon": 4}}' > "$tmp/imp.json"
DOPPLER_DATA="$top_srcdir/data" "$bin" train --method improve --config "$tmp/imp.json" --family chainmm --family-count 1 \
    --checkpoint "$tmp/imp.h5" --quiet > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; fail "train --method improve"; }
for m in anneal local; do
    "$bin" place --graph "$tmp/l1.json" --devices 4 --method $m --proposals "$tmp/imp.h5" --budget 50 --coarsen 16 --json \
        > "$tmp/pp.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "place $m --proposals --coarsen 16"; }
    grep -q '"simulations":50' "$tmp/pp.json" || { cat "$tmp/pp.json"; fail "place $m --proposals --coarsen: simulations"; }
done
[ "$(num makespan_cp "$tmp/t.json")" = "$(num makespan "$tmp/p1.json")" ] ||
    fail "train --coarsen's cp row $(num makespan_cp "$tmp/t.json"), place --method cp --coarsen gives $(num makespan "$tmp/p1.json")"
echo "ok: train --coarsen 16 and place --coarsen 16 agree: $tg groups, makespan $want (final parameters)"

# a family run: every graph grouped (listed so), the first graph's group makespan again place's
"$bin" train --family ffnn,chainmm --family-count 2 --val-count 1 --devices 4 --coarsen 8 --coarsen-rule chains --pipeline \
    --episodes 4 --seed 2 --json --checkpoint "$tmp/cf.h5" > "$tmp/tf.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "train --family --coarsen"; }
[ "$(grep -c 'grouped from' "$tmp/err")" = 3 ] || fail "train --family --coarsen: not every graph listed as grouped: $(cat "$tmp/err")"
first=$(sed -n 's/^  train .* \(gen:[^ ]*\) .*/\1/p' "$tmp/err" | head -1)
[ -n "$first" ] || fail "no first graph in the listing: $(cat "$tmp/err")"
# gen:MODEL?K=V&K=V... as graph gen MODEL --K V --K V ...
model=$(echo "$first" | sed 's/^gen:\([^?]*\).*/\1/')
params=$(echo "$first" | sed 's/^[^?]*?//; s/&/ --/g; s/=/ /g; s/^/--/')
# shellcheck disable=SC2086
"$bin" graph gen "$model" $params --out "$tmp/f1.json" > /dev/null || fail "cannot generate the first graph $first"
"$bin" place --graph "$tmp/f1.json" --devices 4 --method doppler --checkpoint "$tmp/cf.h5" --coarsen 8 --coarsen-rule chains --json \
    > "$tmp/pf.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "place the family run's first graph"; }
[ "$(num makespan "$tmp/tf.json")" = "$(num makespan "$tmp/pf.json")" ] ||
    fail "family run: train reported $(num makespan "$tmp/tf.json"), place --coarsen gives $(num makespan "$tmp/pf.json")"
echo "ok: train --family --coarsen 8 --coarsen-rule chains: every graph grouped; first graph's makespan as place's"

# under a memory penalty the policy's rows are the oracle's (penalised, as without --coarsen) and
# the heuristics' rows the raw makespan, place's "makespan" (they were penalised with --coarsen)
"$bin" graph gen ffnn --out "$tmp/f.json" > /dev/null || fail "graph gen ffnn"
"$bin" train --graph "$tmp/f.json" --devices 4 --memory-limit 3e8 --memory-policy penalty --coarsen 8 --pipeline --episodes 2 \
    --seed 5 --json --quiet > "$tmp/tp.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "train --coarsen under a memory penalty"; }
"$bin" place --graph "$tmp/f.json" --devices 4 --memory-limit 3e8 --memory-policy penalty --method cp --coarsen 8 --json \
    > "$tmp/pp.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "place cp --coarsen 8 under a memory penalty"; }
[ "$(num makespan_cp "$tmp/tp.json")" = "$(num makespan "$tmp/pp.json")" ] ||
    fail "memory penalty: train's cp row $(num makespan_cp "$tmp/tp.json"), place's makespan $(num makespan "$tmp/pp.json")"
# --comm-ratio applies to the graph (FLOPs and bytes), not to its group graph (times): no warning
"$bin" train --graph "$tmp/f.json" --devices 4 --comm-ratio 4 --coarsen 8 --episodes 1 --quiet > /dev/null 2> "$tmp/err" ||
    { cat "$tmp/err"; fail "train --comm-ratio 4 --coarsen 8"; }
! grep -q "warning" "$tmp/err" || fail "train --comm-ratio --coarsen warned: $(cat "$tmp/err")"
echo "ok: under a memory penalty the rows mean what they mean without --coarsen; no warning for --comm-ratio"

# what a method simulates to choose is scored on the machine: random search's best of 8 (its first
# 4 draws are those of K 4) is never worse than its best of 4 (it was, ranked by the group graph)
ms4=; for k in 4 8; do
    "$bin" place --graph "$tmp/l1.json" --topology dgx1-v100 --method random --samples $k --coarsen 16 --seed 1 --json \
        > "$tmp/pr.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "random --samples $k --coarsen 16"; }
    [ "$(num group_simulations "$tmp/pr.json")" = $k ] || fail "random --samples $k: $(num group_simulations "$tmp/pr.json") simulations"
    [ $k = 4 ] && ms4=$(num makespan "$tmp/pr.json")
done
awk -v a="$(num makespan "$tmp/pr.json")" -v b="$ms4" 'BEGIN { exit !(a <= b) }' ||
    fail "random search on groups: best of 8 $(num makespan "$tmp/pr.json") worse than best of 4 $ms4"
echo "ok: random search on groups ranks by the machine's makespan (best of 4 $ms4, of 8 $(num makespan "$tmp/pr.json"))"

# the checkpoint records the grouping (config "coarsen", "coarsen_rule"): a resume with another is
# refused naming --coarsen, one without it groups as the run did (it was refused before
# 2026-12-06, when a resumed run took the command line's config); place notes a placement grouped
# otherwise
"$bin" train --graph "$tmp/l1.json" --devices 4 --coarsen 16 --coarsen-rule chains --stage il --episodes 2 --quiet \
    --checkpoint "$tmp/rc.h5" > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; fail "train --coarsen 16 --coarsen-rule chains"; }
cp "$tmp/rc.h5" "$tmp/rc0.h5"
"$bin" train --graph "$tmp/l1.json" --devices 4 --stage il --episodes 3 --quiet --checkpoint "$tmp/rc0.h5" --resume --json \
    > "$tmp/rc0.json" 2> "$tmp/err" || { cat "$tmp/err"; fail "resume without --coarsen"; }
grep -q '"coarsen":{"max_group":16,"rule":"chains"' "$tmp/rc0.json" ||
    fail "a resume without --coarsen did not group as the run did: $(cat "$tmp/rc0.json")"
# a coarsened run records the whole graph's simulator too: a resume on another one is refused (the
# expanded oracle has no engine of its own, and --streams 2 was taken; a review)
"$bin" train --graph "$tmp/l1.json" --devices 4 --stage il --episodes 3 --quiet --checkpoint "$tmp/rc.h5" --resume --streams 2 \
    > /dev/null 2> "$tmp/err" && fail "a coarsened run resumed on --streams 2"
grep -q "the simulator differs" "$tmp/err" || fail "coarsened resume on another simulator: $(cat "$tmp/err")"
# --coarsen-rule alone on a resume is checked against the run's grouping (it said "--coarsen-rule
# needs --coarsen N" before reading the checkpoint)
"$bin" train --graph "$tmp/l1.json" --devices 4 --coarsen-rule packed --stage il --episodes 4 --quiet --checkpoint "$tmp/rc.h5" \
    --resume > /dev/null 2> "$tmp/err" && fail "--coarsen-rule packed resumed a chains run"
grep -q "the run trained with --coarsen 16 --coarsen-rule chains" "$tmp/err" || fail "--coarsen-rule alone: $(cat "$tmp/err")"
for other in "--coarsen 8 --coarsen-rule chains" "--coarsen 16 --coarsen-rule packed"; do
    # shellcheck disable=SC2086
    if "$bin" train --graph "$tmp/l1.json" --devices 4 $other --stage il --episodes 4 --quiet --checkpoint "$tmp/rc.h5" --resume \
        > /dev/null 2> "$tmp/err"; then fail "resumed with '$other' a run of --coarsen 16 --coarsen-rule chains"; fi
    grep -q "the run trained with --coarsen 16 --coarsen-rule chains" "$tmp/err" || fail "resume with '$other': $(cat "$tmp/err")"
done
"$bin" train --graph "$tmp/l1.json" --devices 4 --coarsen 16 --coarsen-rule chains --stage il --episodes 4 --quiet \
    --checkpoint "$tmp/rc.h5" --resume > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; fail "resume with the run's grouping"; }
"$bin" place --graph "$tmp/l1.json" --devices 4 --method doppler --checkpoint "$tmp/rc.h5" > /dev/null 2> "$tmp/err" || fail "place"
grep -q "note: .*rc.h5 was trained on group graphs (--coarsen 16 --coarsen-rule chains); this placement has no --coarsen" "$tmp/err" ||
    fail "place without --coarsen: no note: $(cat "$tmp/err")"
"$bin" place --graph "$tmp/l1.json" --devices 4 --method doppler --checkpoint "$tmp/rc.h5" --coarsen 16 --coarsen-rule chains \
    > /dev/null 2> "$tmp/err" || fail "place --coarsen 16 --coarsen-rule chains"
! grep -q "note:" "$tmp/err" || fail "place with the checkpoint's grouping noted: $(cat "$tmp/err")"
echo "ok: the checkpoint records the grouping: resume refused without it, place notes another"

for bad in "--coarsen 0" "--coarsen-rule chains" "--coarsen 8 --method improve" "--coarsen 8 --stage real"; do
    # shellcheck disable=SC2086
    if "$bin" train --graph "$tmp/l1.json" --devices 4 --episodes 1 $bad > /dev/null 2> "$tmp/err"; then
        fail "train $bad accepted"
    fi
    grep -q -- "--coarsen" "$tmp/err" || fail "train $bad: message does not name the option: $(cat "$tmp/err")"
done
echo "ok: bad train --coarsen uses refused"

# the method's simulations are said for what they are: random search's samples are of the whole
# graph on the machine (the expanded oracle), not "on the group graph" as the text said; a
# method's error counts groups, and says it was placing them ("27 ops, limit 24" for a file of
# 182 ops; a review)
"$bin" place --graph "$tmp/l1.json" --devices 4 --method random --samples 12 --coarsen 16 > "$tmp/r.txt" 2> "$tmp/err" ||
    fail "place random --coarsen: $(cat "$tmp/err")"
grep -q "12 simulations by the method (12 of the whole graph, 0 of the group graph)" "$tmp/r.txt" ||
    fail "random --coarsen simulations: $(grep coarsened "$tmp/r.txt")"
if "$bin" place --graph "$tmp/l1.json" --devices 4 --method exact --coarsen 16 > /dev/null 2> "$tmp/err"; then
    fail "exact on a group graph above its limit accepted"
fi
grep -q "placing the [0-9]* groups of at most 16 ops (--coarsen" "$tmp/err" || fail "exact --coarsen error: $(cat "$tmp/err")"
echo "ok: --coarsen says whose simulations and which graph a method's error is about"
