#!/bin/sh
# The config tables (models/dp_schema.h) as users see them: the man page's CONFIG KEYS section is
# what `doppler config --man` prints; `doppler place --help` and `doppler train --help` list every
# key of each method's config table; bad configs are refused naming the file and the key.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
bin="$top_builddir/doppler"
G="$top_srcdir/data/graphs/chainmm-small.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# the man page's section is generated from the tables
"$top_srcdir/scripts/man-config-keys.sh" "$bin" "$top_srcdir/doc/doppler.1" || fail "doc/doppler.1 CONFIG KEYS is not the tables'"

# each method's config keys, from the table, in place --help (under that method or the one sharing its config)
"$bin" place --help > "$tmp/help" || fail "place --help"
"$bin" train --help > "$tmp/thelp" || fail "train --help"
for m in anneal local improve placeto gdp; do
    "$bin" config "$m" > "$tmp/keys" || fail "doppler config $m"
    n=0
    # key lines: two spaces, a name (object.key), spaces, its kind
    for k in $(sed -n 's/^  \([a-z0-9_.S]*[a-z0-9_]\)  .*/\1/p' "$tmp/keys"); do
        last=${k##*.}
        tr -s ' \n' '  ' < "$tmp/help" | grep -q "[ {]$last[,;}]\|[ {]$last\$\|[ {]$last " || fail "place --help lacks $m's key $k"
        [ "$m" = placeto ] && { tr -s ' \n' '  ' < "$tmp/thelp" | grep -q "[ {]$last[,;} ]" || fail "train --help lacks $k"; }
        n=$((n + 1))
    done
    [ "$n" -ge 6 ] || fail "doppler config $m lists $n keys"
done
# the machine's keys (sim/dp_machine.c's table): doppler config machine lists the 16, each
# command's --help has its option line, the man page's CONFIG KEYS has it (checked above)
"$bin" config machine > "$tmp/mkeys" || fail "doppler config machine"
n=0
for k in $(sed -n 's/^  \([a-z_]*\)  .*/\1/p' "$tmp/mkeys"); do
    case $k in transfer) o=transfer-model ;; *) o=$(echo "$k" | tr _ -) ;; esac
    for c in place train "graph info" validate; do
        # shellcheck disable=SC2086
        "$bin" $c --help 2> /dev/null | grep -q "^  --$o " || fail "$c --help lacks --$o"
    done
    n=$((n + 1))
done
[ "$n" -eq 16 ] || fail "doppler config machine lists $n keys"
# every option a command's --help lists is in the man page (the machine keys through CONFIG KEYS
# above): report --compare, calibrate's, validate's, train's Stage III and place's --ties were in
# --help only
mkeys=$(sed -n 's/^  \([a-z_]*\)  .*/\1/p' "$tmp/mkeys" | tr _ - | sed 's/^transfer$/transfer-model/')
sed 's/\\f[BIRP]//g; s/\\-/-/g' "$top_srcdir/doc/doppler.1" > "$tmp/man.txt"
for c in graph place simulate calibrate validate train topology sweep report config; do
    for o in $("$bin" $c --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
        echo "$mkeys" | grep -qx -- "${o#--}" && continue
        grep -q -- "$o\([^a-z0-9-]\|\$\)" "$tmp/man.txt" || fail "doc/doppler.1 lacks $c's $o (in $c --help)"
    done
done
grep -q "^  memory_limit  *NUMBER in (0, 1e+30\] or topology" "$tmp/mkeys" || fail "memory_limit's kind"
# a bad machine value is refused naming the option as given, once
"$bin" place --graph "$G" --memory-limit lots > /dev/null 2> "$tmp/err"; [ $? -eq 2 ] || fail "memory-limit lots: exit 2"
grep -q "^doppler place: --memory-limit: must be a number in (0, 1e+30\] or \"topology\", got 'lots'" "$tmp/err" || { cat "$tmp/err"; fail "memory-limit lots: the message"; }
# the sweep config's keys, and a sweep config's unknown key named with its file
"$bin" config sweep > "$tmp/skeys" || fail "doppler config sweep"
for k in name repetitions; do grep -q "^  $k  " "$tmp/skeys" || fail "doppler config sweep lacks $k"; done
for k in fixed grid tables.T; do grep -q "^  $k: " "$tmp/skeys" || fail "doppler config sweep lacks $k"; done
# "plots" was documented ("report plots by name") and read by nothing: neither listed nor accepted
grep -q "^  plots" "$tmp/skeys" && fail "doppler config sweep lists plots, which nothing reads"
for k in cols metric title digits; do grep -q "^  tables.T.$k  " "$tmp/skeys" || fail "doppler config sweep lacks tables.T.$k"; done
printf '{"fixed": {"graph": "%s", "method": "cp"}, "repetition": 2}\n' "$G" > "$tmp/sw.json"
"$bin" sweep "$tmp/sw.json" --out "$tmp/sw.h5" --quiet > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "sweep repetition: exit 1"
grep -q "sw.json: unknown key \"repetition\" (known: name, repetitions, " "$tmp/err" || { cat "$tmp/err"; fail "sweep repetition: the message"; }
[ ! -e "$tmp/sw.h5" ] || fail "sweep repetition: a file was written"

"$bin" config nope > /dev/null 2> "$tmp/err"; [ $? -eq 2 ] || fail "doppler config nope: exit 2"
grep -q "no config called 'nope'" "$tmp/err" || fail "doppler config nope: the message"

# refusals name the file, the key and the range (from the table)
printf '{"stages": {"sim": {"lr": 11}}}\n' > "$tmp/lr.json"
"$bin" train --config "$tmp/lr.json" --print-config > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "lr 11: exit 1"
grep -q "lr.json: config: \"stages.sim.lr\" = 11 out of range \[0, 10\]" "$tmp/err" || { cat "$tmp/err"; fail "lr 11: the message"; }
# a non-object "adam" was called an unknown key
printf '{"adam": 3}\n' > "$tmp/adam.json"
"$bin" train --config "$tmp/adam.json" --print-config > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "adam 3: exit 1"
grep -q "adam.json: config: \"adam\" must be an object" "$tmp/err" || { cat "$tmp/err"; fail "adam 3: the message"; }
printf '{"network": {"hiden": 3}}\n' > "$tmp/typo.json"
"$bin" train --config "$tmp/typo.json" --print-config > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "typo: exit 1"
grep -q "unknown key \"network.hiden\" (known: hidden, mlp_hidden, steps" "$tmp/err" || { cat "$tmp/err"; fail "typo: the known keys"; }
printf '{"budget": 0}\n' > "$tmp/b0.json"
"$bin" place --graph "$G" --method anneal --config "$tmp/b0.json" > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "budget 0: exit 1"
grep -q "b0.json: \"budget\" = 0 out of range \[1, inf\]" "$tmp/err" || { cat "$tmp/err"; fail "budget 0: the message"; }
printf '{"accept": "sometimes"}\n' > "$tmp/acc.json"
"$bin" place --graph "$G" --method improve --checkpoint "$tmp/none.h5" --config "$tmp/acc.json" > /dev/null 2> "$tmp/err"
grep -q "acc.json: \"accept\" must be \"anneal\" or \"greedy\"" "$tmp/err" || { cat "$tmp/err"; fail "accept: the message"; }
echo "config keys: ok"
