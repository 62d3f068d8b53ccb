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

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
