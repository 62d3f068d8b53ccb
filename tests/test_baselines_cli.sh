#!/bin/sh
# End-to-end tests of the learned baselines in the doppler command: doppler place --method
# placeto|gdp (trains --budget episodes when no checkpoint), their configs and errors.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
doppler_cmd() { ${DOPPLER_VALGRIND:-} "$top_builddir/doppler" "$@"; }
D=doppler_cmd
G="$top_srcdir/data/graphs/chainmm-small.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_rc() { # expected-rc description command...
    want=$1; shift; what=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; cat "$tmp/err"; fi
}

"$D" place --help | grep -q 'placeto gdp' && ok || bad "help lists placeto and gdp"
for m in placeto gdp; do
    expect_rc 0 "place $m" "$D" place --graph "$G" --method $m --budget 4 --seed 3 --json --out "$tmp/$m.json"
    grep -q "\"method\":\"$m\"" "$tmp/out" && ok || bad "$m: method in the JSON output"
    # the same seed and budget give the same assignment
    expect_rc 0 "place $m again" "$D" place --graph "$G" --method $m --budget 4 --seed 3 --out "$tmp/$m-2.json"
    cmp -s "$tmp/$m.json" "$tmp/$m-2.json" && ok || bad "$m: not reproducible"
    # the assignment round-trips through simulate
    expect_rc 0 "simulate $m" "$D" simulate --graph "$G" --assignment "$tmp/$m.json"
done
# progress of the training inside place on stderr, a line every 5% (placeto --budget 200 ran 33 s
# silently); from the start here ($DOPPLER_PROGRESS_AFTER=0; by default after 2 s)
for m in placeto gdp; do
    DOPPLER_PROGRESS_AFTER=0 expect_rc 0 "place $m with progress" "$D" place --graph "$G" --method $m --budget 20 --json
    [ "$(grep -c "^place $m: training episode [0-9]*/20 (" "$tmp/err")" -eq 20 ] && ok || { bad "$m: 20 progress lines"; cat "$tmp/err"; }
    grep -q "^place $m: training episode 20/20 (100%), .* ep/s, about 0 s left$" "$tmp/err" && ok || bad "$m: last progress line"
    grep -q '"makespan"' "$tmp/out" && ! grep -q 'training' "$tmp/out" && ok || bad "$m: progress stays off stdout"
done
# annealing and local search report their simulations the same way (issue 33: a budget of 1e11
# ran without a word), a line every 5%, the last at the budget; none for a quick default run
for m in anneal local; do
    DOPPLER_PROGRESS_AFTER=0 expect_rc 0 "place $m with progress" "$D" place --graph "$G" --method $m --budget 40000 --json
    grep -q "^place $m: [0-9]*/40000 simulations ([0-9]*%), .* sim/s" "$tmp/err" && ok || { bad "$m: progress lines"; cat "$tmp/err"; }
    grep -q "^place $m: 40000/40000 simulations (100%)" "$tmp/err" && ok || { bad "$m: last progress line"; cat "$tmp/err"; }
    expect_rc 0 "place $m quietly" "$D" place --graph "$G" --method $m --budget 2000 --json
    [ ! -s "$tmp/err" ] && ok || bad "$m: a quick search printed progress: $(cat "$tmp/err")"
done
# off a terminal the first line comes once the search has run $DOPPLER_PROGRESS_AFTER, not at its
# first 5% (a budget of 1e12 printed nothing for hours: a review of the twenty-third session)
DOPPLER_PROGRESS_AFTER=0.2 timeout 2 "$top_builddir/doppler" place --graph "$G" --method anneal --budget 1000000000000 > /dev/null 2> "$tmp/err"
grep -q "^place anneal: [0-9]*/1000000000000 simulations (0%), .* sim/s" "$tmp/err" && ok || { bad "anneal: no first progress line"; cat "$tmp/err"; }
# a placement from a checkpoint trains nothing: no progress
expect_rc 0 "train placeto" "$D" train --method placeto --graph "$G" --episodes 2 --checkpoint "$tmp/p.h5" --quiet
DOPPLER_PROGRESS_AFTER=0 expect_rc 0 "place placeto from its checkpoint" "$D" place --graph "$G" --method placeto --checkpoint "$tmp/p.h5"
[ ! -s "$tmp/err" ] && ok || bad "progress without training: $(cat "$tmp/err")"
echo '{"gdp": {"hidden": 16, "heads": 2, "layers": 1}}' > "$tmp/small-gdp.json"
echo '{"placeto": {"hidden": 8}}' > "$tmp/small-placeto.json"
expect_rc 0 "gdp with config" "$D" place --graph "$G" --method gdp --budget 2 --config "$tmp/small-gdp.json"
expect_rc 0 "placeto with config" "$D" place --graph "$G" --method placeto --budget 2 --config "$tmp/small-placeto.json"
# place trains Stage II alone for --budget episodes from --seed: a config's seed, episodes,
# pipeline or coarsening were read and ignored (a review); they are refused, naming the key
# (and any key of Stage I's or Stage III's settings: only stages.il.episodes was compared, lr and
# epsilon there, and everything under stages.real, were taken silently: a review)
for c in '{"seed": 5}' '{"stages": {"sim": {"episodes": 5}}}' '{"pipeline": true}' '{"coarsen": 4}' \
         '{"stages": {"il": {"lr": 0.5}}}' '{"stages": {"real": {"episodes": 7}}}'; do
    echo "$c" > "$tmp/ign.json"
    for m in placeto gdp; do
        expect_rc 1 "$m place with $c" "$D" place --graph "$G" --method $m --budget 2 --config "$tmp/ign.json"
        grep -q "does not apply to place" "$tmp/err" && ok || bad "$m $c: $(cat "$tmp/err")"
    done
done
# a sweep's placeto and gdp runs likewise (their train_config's seed, episodes or pipeline were
# ignored where place refuses them): refused before the sweep runs anything, as the run's config
# is built before any run (it failed each run); and samples 0 as a placement run's
echo '{"seed": 9}' > "$tmp/sw-seed.json"
for extra in '"train_config": "sw-seed.json"' '"samples": 0'; do
    printf '{"name": "swb", "fixed": {"graph": "%s", "seed": 1, "episodes": 2, %s}, "grid": {"method": ["gdp"]}}\n' \
        "$(cd "$(dirname "$G")" && pwd)/$(basename "$G")" "$extra" > "$tmp/swb.json"
    rm -f "$tmp/swb.h5" "$tmp/swb.csv"
    (cd "$tmp" && "$D" sweep swb.json --quiet > /dev/null 2> "$tmp/swb.err") && bad "a sweep's gdp run with $extra ran" || ok
    case $extra in
    *train_config*)
        grep -q 'swb.json: run .*parameter "train_config" sw-seed.json: the key seed does not apply to a gdp run.*nothing was run or written' \
            "$tmp/swb.err" && [ ! -e "$tmp/swb.csv" ] && ok || bad "a sweep's gdp run with $extra: $(cat "$tmp/swb.err")" ;;
    *)
        grep -q 'failed,.*samples"* = 0: must be >= 1' "$tmp/swb.csv" && ok || bad "a sweep's gdp run with $extra: $(cat "$tmp/swb.csv")" ;;
    esac
done
# a sweep's placeto and gdp runs record the episodes they trained in their checkpoint's config
# (it said the default 2000, and a resume trained on to 2000: a review)
if command -v h5dump > /dev/null 2>&1; then
    printf '{"name": "swe", "fixed": {"graph": "%s", "seed": 1, "episodes": 4}, "grid": {"method": ["placeto", "gdp"]}}\n' \
        "$(cd "$(dirname "$G")" && pwd)/$(basename "$G")" > "$tmp/swe.json"
    (cd "$tmp" && "$D" sweep swe.json --quiet > /dev/null 2>&1) && ok || bad "the placeto and gdp sweep"
    for ck in "$tmp"/swe.runs/*/checkpoint.h5; do
        h5dump -a /config "$ck" | tr -d '\n ' | grep -q '"sim":{[^}]*"episodes":4[,}]' && ok ||
            bad "$ck records other episodes than the 4 it trained"
    done
fi
# a key the method cannot honour is refused, naming the key and the method (it used to be read and ignored)
expect_rc 1 "placeto given GDP's network" "$D" place --graph "$G" --method placeto --budget 2 --config "$tmp/small-gdp.json"
grep -q 'key "gdp" does not apply to method placeto' "$tmp/err" && ok || bad "placeto: a GDP key named"
for k in '"network": {"hidden": 8}' '"sel_topological": true' '"update_sel": false'; do
    echo "{$k}" > "$tmp/dual.json"
    expect_rc 1 "placeto given $k" "$D" train --method placeto --graph "$G" --episodes 2 --config "$tmp/dual.json"
    grep -q 'does not apply to method placeto' "$tmp/err" && ok || bad "placeto: $k not refused by name"
done
echo '{"gamma": 0.5}' > "$tmp/gamma.json"
expect_rc 1 "gdp given gamma" "$D" train --method gdp --graph "$G" --episodes 2 --config "$tmp/gamma.json"
grep -q 'key "gamma" does not apply to method gdp' "$tmp/err" && ok || bad "gdp: gamma not refused by name"
# place --help lists, after the shared table's keys, the keys each method refuses (it listed
# network, update_sel, sel_topological and GDP's gamma as their config keys, and place refused them):
# every key named there is refused, and every key refused above is named there
"$D" place --help > "$tmp/help"
for m in placeto gdp; do
    ref=$(sed -n "s/^ *refused for $m: //p" "$tmp/help" | tr -d ' ' | tr ',' ' ')
    [ -n "$ref" ] && ok || bad "place --help names no key refused for $m"
    for k in $ref; do
        case $k in network|placeto|gdp) echo "{\"$k\": {}}" ;; *) echo "{\"$k\": true}" ;; esac > "$tmp/ref.json"
        expect_rc 1 "$m given $k" "$D" place --graph "$G" --method $m --budget 2 --config "$tmp/ref.json"
        grep -q "key \"$k\" does not apply to method $m" "$tmp/err" && ok || bad "$m: help says $k is refused: $(cat "$tmp/err")"
    done
    for k in network update_sel sel_topological; do
        echo " $ref " | grep -q " $k " && ok || bad "place --help: $k not among the keys refused for $m ($ref)"
    done
done
sed -n "s/^ *refused for gdp: //p" "$tmp/help" | grep -q 'gamma' && ok || bad "place --help: gamma not refused for gdp"
sed -n "s/^ *refused for placeto: //p" "$tmp/help" | grep -q 'gamma' && bad "place --help: gamma refused for placeto" || ok
# every key they accept changes what they do: the same seed, with and without the key
run_ms() { "$D" train --method "$1" --graph "$G" --episodes 12 --seed 4 --quiet --config "$2" | sed -n "s/^$1-final  *\([0-9.e+-]*\).*/\1/p"; }
for m in placeto gdp; do
    echo '{"checkpoint_every": 4}' > "$tmp/base.json"
    base=$("$D" train --method $m --graph "$G" --episodes 12 --seed 4 --quiet --config "$tmp/base.json" --trajectory "$tmp/base-$m.h5" | md5sum)
    for k in '"stages": {"sim": {"exploration": "mixture"}}' '"stages": {"sim": {"baseline": "greedy"}}' \
             '"stages": {"sim": {"positive_only": true}}' '"stages": {"sim": {"entropy_weight": 0.5}}' \
             '"stages": {"sim": {"lr": 0.05}}' '"stages": {"sim": {"epsilon": 0.9}}'; do
        echo "{\"checkpoint_every\": 4, $k}" > "$tmp/k.json"
        "$D" train --method $m --graph "$G" --episodes 12 --seed 4 --quiet --config "$tmp/k.json" --force --trajectory "$tmp/k-$m.h5" >/dev/null 2>"$tmp/err" ||
            bad "$m with $k: $(cat "$tmp/err")"
        command -v h5dump >/dev/null 2>&1 || bad "h5dump (hdf5-tools) is needed"
        if command -v h5dump >/dev/null 2>&1; then
            h5dump -d /steps/plc_device "$tmp/base-$m.h5" > "$tmp/a.txt" 2>/dev/null
            h5dump -d /steps/plc_device "$tmp/k-$m.h5" > "$tmp/b.txt" 2>/dev/null
            h5dump -d /episodes/reward "$tmp/base-$m.h5" >> "$tmp/a.txt" 2>/dev/null
            h5dump -d /episodes/reward "$tmp/k-$m.h5" >> "$tmp/b.txt" 2>/dev/null
            sed -i 's/k-'$m'.h5/X/; s/base-'$m'.h5/X/' "$tmp/a.txt" "$tmp/b.txt"
            cmp -s "$tmp/a.txt" "$tmp/b.txt" && bad "$m: $k changed nothing" || ok
        fi
    done
    [ -n "$base" ] || bad "$m base run"
done
echo '{"gdp": {"hidden": 10, "heads": 4}}' > "$tmp/bad.json"
expect_rc 1 "gdp with a bad config" "$D" place --graph "$G" --method gdp --config "$tmp/bad.json"
grep -q 'multiple of gdp.heads' "$tmp/err" && grep -q bad.json "$tmp/err" && ok || bad "bad gdp config named"
echo '{"placeto": {"depth": 3}}' > "$tmp/bad2.json"
expect_rc 1 "placeto with an unknown key" "$D" place --graph "$G" --method placeto --config "$tmp/bad2.json"
grep -q 'placeto.depth' "$tmp/err" && ok || bad "unknown placeto key named"

# doppler train --method placeto|gdp: checkpoints that place --method reads back
for m in placeto gdp; do
    expect_rc 0 "train $m" "$D" train --method $m --graph "$G" --episodes 6 --seed 2 --quiet \
        --checkpoint "$tmp/$m.h5" --trajectory "$tmp/$m-traj.h5"
    grep -q "^$m " "$tmp/out" && grep -q "^cp " "$tmp/out" && ok || bad "train $m prints its makespan beside cp"
    ms_train=$(sed -n "s/^$m  *\([0-9.e+-]*\).*/\1/p" "$tmp/out")
    expect_rc 0 "place $m from its checkpoint" "$D" place --method $m --checkpoint "$tmp/$m.h5" --graph "$G"
    ms_place=$(sed -n 's/^makespan: \([0-9.e+-]*\).*/\1/p' "$tmp/out")
    [ -n "$ms_train" ] && [ "$ms_train" = "$ms_place" ] && ok || bad "$m: train printed $ms_train, place from the checkpoint gave $ms_place"
    expect_rc 0 "$m --init" "$D" train --method $m --graph "$G" --episodes 2 --quiet --init "$tmp/$m.h5"
    expect_rc 0 "$m print-config" "$D" train --method $m --print-config
    grep -q "\"method\": \"$m\"" "$tmp/out" && ok || bad "$m print-config names the method"
done
expect_rc 1 "placeto checkpoint given to gdp" "$D" place --method gdp --checkpoint "$tmp/placeto.h5" --graph "$G"
grep -q 'not a gdp checkpoint' "$tmp/err" && ok || bad "a checkpoint of another method is refused"
# the one trainer gives the baselines imitation (of the heuristic's devices) and the pipeline too
expect_rc 0 "placeto imitation" "$D" train --method placeto --graph "$G" --stage il --episodes 3 --quiet
expect_rc 0 "gdp pipeline" "$D" train --method gdp --graph "$G" --pipeline --episodes 3 --quiet
expect_rc 2 "unknown train method" "$D" train --method hierarchical --graph "$G"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
