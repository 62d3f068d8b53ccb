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
echo '{"gdp": {"hidden": 16, "heads": 2, "layers": 1}, "placeto": {"hidden": 8}}' > "$tmp/small.json"
expect_rc 0 "gdp with config" "$D" place --graph "$G" --method gdp --budget 2 --config "$tmp/small.json"
expect_rc 0 "placeto with config" "$D" place --graph "$G" --method placeto --budget 2 --config "$tmp/small.json"
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
expect_rc 2 "placeto does no imitation" "$D" train --method placeto --graph "$G" --stage il
expect_rc 2 "placeto has no pipeline" "$D" train --method placeto --graph "$G" --pipeline
expect_rc 2 "unknown train method" "$D" train --method hierarchical --graph "$G"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
