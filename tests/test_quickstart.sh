#!/bin/sh
# test_quickstart.sh: scripts/quickstart.sh on the built checkout (no install, no build) with a
# short training: every method's row with its makespan to 4 significant digits and the
# simulations it spent, DOPPLER's simulations the training's plus one, annealing at the same
# count, the best row named, agreement counted with ties apart, and the traces it names exist.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-quickstart-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
DOPPLER=$(cd "$top_builddir" && pwd)/doppler DOPPLER_QUICKSTART_BUILD=0 QUICKSTART_EPISODES=12 QUICKSTART_OUT="$tmp/q" \
    sh "$top_srcdir/scripts/quickstart.sh" > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "quickstart failed"; }
cat "$tmp/out"
row() { awk -v m="$1" '$1 == m { print; exit }' "$tmp/out"; }
for m in round-robin cp heft anneal doppler; do
    r=$(row "$m")
    [ -n "$r" ] || fail "no row for $m"
    # makespan: exactly 4 significant digits (0.08010, 0.1031, 1200), then an integer count
    echo "$r" | grep -Eq "^ *$m +(0\.0*[1-9][0-9]{3}|[1-9]\.[0-9]{3}|[1-9][0-9]\.[0-9]{2}|[1-9][0-9]{2}\.[0-9]|[1-9][0-9]{3}) +[0-9]+ " \
        || fail "$m's row is not makespan to 4 significant digits and simulations: '$r'"
done
[ "$(row round-robin | awk '{print $3}')" = 0 ] || fail "round-robin spends no simulation"
[ "$(row anneal | awk '{print $3}')" = 20000 ] || fail "anneal's default budget is 20000 simulations"
train=$(sed -n 's/.*(\([0-9]*\) training + 1 to place; model-selected.*/\1/p' "$tmp/out")
[ -n "$train" ] && [ "$train" -gt 24 ] || fail "DOPPLER's training simulations (2 stages of 12 episodes and evaluations)"
[ "$(row doppler | awk '{print $3}')" -eq $((train + 1)) ] || fail "doppler's simulations = training + 1"
grep -Eq "^  anneal +[0-9.]+ +$train +\(annealing given the simulations" "$tmp/out" || fail "annealing at DOPPLER's simulations"
# the final parameters beside the model-selected ones (the project's rule: both reported; the
# quickstart printed the model-selected row only), at the same simulations
f=$(grep -E "^  doppler +[0-9.]+ +[0-9]+ +\(final parameters" "$tmp/out") || fail "no row for DOPPLER's final parameters"
[ "$(echo "$f" | awk '{print $3}')" -eq $((train + 1)) ] || fail "doppler's final row: simulations = training + 1: $f"
final_ms=$(sed -n 's/^doppler-final  *\([^ ]*\) .*/\1/p' "$tmp/q/train.txt")
[ "$(echo "$f" | awk '{print $2}')" = "$(awk -v x="$final_ms" 'BEGIN { s = sprintf("%#.4g", x); sub(/\.$/, "", s); print s }')" ] \
    || fail "the final row's makespan is not train's final one ($final_ms): $f"
grep -q '^  lower bound ' "$tmp/out" || fail "the lower bound row"
# the best row named is the smallest makespan printed
best=$(sed -n 's/^Best here: \([^ ]*\) .*/\1/p' "$tmp/out")
min=$(awk '/^  (round-robin|cp|heft|anneal|doppler) +[0-9]/ { if (m == "" || $2 + 0 < m + 0) { m = $2; n = $1 } } END { print n }' "$tmp/out")
[ "$best" = "$min" ] || fail "best '$best', smallest row '$min'"
# agreement: unique-choice steps and ties apart, never more than the steps
a=$(grep '^  doppler  *SEL ' "$tmp/out") || fail "no agreement line"
echo "$a" | awk '{ sub(/%/, ""); } { u1 = $3; n = $5; u2 = $9; t1 = $16; t2 = $(NF - 1);
    if (!(n == 223 && u1 + t1 <= n && u2 + t2 <= n)) exit 1 }' || fail "agreement counts: $a"
grep -q 'heuristic ties counts as' "$tmp/out" || fail "the quickstart says how ties count"
for t in "$best.trace.json" doppler.trace.json; do
    grep -q "$t" "$tmp/out" || fail "the trace $t is not named"
    grep -q '"traceEvents"' "$tmp/q/$t" || fail "$t is not a Chrome trace"
done
# every Next: line works as printed, from another folder, with no doppler on PATH (it printed
# "doppler ..." and gave "command not found" on a fresh machine)
sed -n '/^Next:/,$p' "$tmp/out" | sed 's/^Next://' | awk '/\\$/ { sub(/\\$/, ""); printf "%s", $0; next } { print }' > "$tmp/next"
[ "$(wc -l < "$tmp/next")" -ge 2 ] || fail "fewer than 2 Next: commands: $(cat "$tmp/next")"
mkdir "$tmp/elsewhere"
while IFS= read -r cmd; do
    case $cmd in *" report --plot "*) command -v gnuplot > /dev/null 2>&1 || { echo "no gnuplot: not run: $cmd"; continue; } ;; esac
    (cd "$tmp/elsewhere" && PATH=/usr/bin:/bin sh -c "$cmd") > "$tmp/next.log" 2>&1 \
        || { cat "$tmp/next.log"; fail "the printed Next: command failed: $cmd"; }
done < "$tmp/next"
[ ! -x "$(command -v gnuplot || echo /nonexistent)" ] || [ -s "$tmp/elsewhere/learning.png" ] || fail "the Next: learning curve learning.png was not written"
exit 0
