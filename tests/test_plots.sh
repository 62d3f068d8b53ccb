#!/bin/sh
# test_plots.sh: what `doppler report --plot` asks gnuplot to draw, read from the script handed to
# a stand-in gnuplot ($GNUPLOT), on a sweep of two graphs in different units (DOPPLER units, time units):
# the scatter of any two metrics (its own range per axis and no y = x line unless both axes share
# a unit; log axes; one colour per graph, one symbol per method; units in the axis labels), the
# learning curve (units, the greedy evaluations of the trajectory, cp and round-robin reference
# lines from the same results), default titles on every plot; then the real gnuplot draws them.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER=$(cd "$top_builddir" && pwd)/doppler
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-plots-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
G1=$(cd "$top_srcdir" && pwd)/tests/data/sweep-fork.json
G2=$(cd "$top_srcdir" && pwd)/tests/data/tiny-doppler.txt
cat > "$work/s.json" <<JSON
{"name": "plots", "fixed": {"devices": 2},
 "grid": [{"graph": ["$G1"], "method": ["doppler"], "episodes_il": [12], "episodes_sim": [12], "seed": [1],
           "cfg__network__hidden": [8], "cfg__network__mlp_hidden": [8], "cfg__network__edge_hidden": [4],
           "cfg__network__steps": [2], "cfg__checkpoint_every": [4]},
          {"graph": ["$G1", "$G2"], "method": ["cp", "round-robin"]}]}
JSON
"$DOPPLER" sweep "$work/s.json" --out "$work/r.h5" --quiet > /dev/null || fail "the sweep failed"
# the stand-in: keeps the script and its data, writes a token output file (complete: an SVG's
# closing tag, a PNG's IEND chunk; the report checks that before putting it in place)
cat > "$work/gp" <<'SH'
#!/bin/sh
[ "$1" = -e ] && exit 0
cp "$1" "$KEEP.gp"
cp "$(dirname "$1")/data.dat" "$KEEP.dat" 2> /dev/null || true
out=$(sed -n "s/^set output '\(..*\)'$/\1/p" "$1")
case "$out" in
*.png) printf 'plot\000\000\000\000IEND\256B`\202' > "$out" ;;
*) echo '<svg>plot</svg>' > "$out" ;;
esac
SH
chmod +x "$work/gp"
plot() { name=$1; shift; KEEP="$work/$name" GNUPLOT="$work/gp" "$DOPPLER" report "$work/r.h5" "$@" --out "$work/$name.svg" || fail "$name: report failed"; }
has() { grep -q -- "$2" "$work/$1.gp" || { cat "$work/$1.gp" >&2; fail "$1: no '$2' in the script"; }; }
hasnt() { ! grep -q -- "$2" "$work/$1.gp" || { cat "$work/$1.gp" >&2; fail "$1: '$2' in the script"; }; }

# makespan against wall-clock seconds, log axes: no y = x, units on both axes, each axis its range
plot sc1 --plot scatter --x seconds --y makespan --log xy
has sc1 "set logscale x"
has sc1 "set logscale y"
has sc1 "set xlabel 'seconds (s, wall clock)'"
has sc1 "set ylabel 'makespan (time units; DOPPLER units (simulated time / 1e10))'"
hasnt sc1 "nohead dt 2"
hasnt sc1 "set xrange"
has sc1 "^set title 'makespan against seconds: 5 runs, 2 graphs, 3 methods'"
# a colour per graph, a symbol per method: a block for each of the 5 pairs with runs (of 2 x 3; an
# empty block merged with its neighbour's separator, so gnuplot drew every later block in another
# pair's colour and symbol: a review), indexed 0 to 4 as the data file holds them; the legend 2
# colours + 3 symbols
[ "$(grep -c "index [0-9]* using 1:2 with points" "$work/sc1.gp")" -eq 5 ] || fail "sc1: 5 data blocks"
[ "$(sed -n 's/.*index \([0-9]*\) using 1:2 with points.*/\1/p' "$work/sc1.gp" | tr '\n' ' ')" = "0 1 2 3 4 " ] || fail "sc1: block indices"
[ "$(awk 'BEGIN { b = 0 } NF == 2 { if (!inb) { b++; inb = 1 } } NF == 0 { inb = 0 } END { print b }' "$work/sc1.dat")" -eq 5 ] ||
    fail "sc1: 5 blocks of points in the data"
has sc1 "title 'sweep-fork'"
has sc1 "title 'tiny-doppler'"
has sc1 "title 'round-robin'"
# the x values are the seconds, not 0 (the old scatter put them all at the shared range's edge)
awk 'NF == 2 && $1 + 0 > 0 { n++ } END { exit !(n == 5) }' "$work/sc1.dat" || fail "sc1: 5 points with seconds > 0"
# two graphs of one file name in different folders: two colours, labelled by their folders (one
# "g" for both, their points in one colour, while the tables had them apart: a review)
mkdir -p "$work/a" "$work/b"
cp "$G2" "$work/a/g.txt"
cp "$G1" "$work/b/g.json"
cat > "$work/same.json" <<JSON
{"name": "same", "fixed": {"devices": 2, "method": "cp"}, "grid": {"graph": ["$work/a/g.txt", "$work/b/g.json"]}}
JSON
"$DOPPLER" sweep "$work/same.json" --out "$work/same.h5" --quiet > /dev/null || fail "the sweep of two g files failed"
KEEP="$work/same" GNUPLOT="$work/gp" "$DOPPLER" report "$work/same.h5" --plot scatter --x metrics.lower_bound --y makespan \
    --out "$work/same.svg" || fail "same: report failed"
has same "title '$work/a/g'"
has same "title '$work/b/g'"
# makespan against the lower bound on one graph: one unit, so y = x and a shared range
plot sc2 --plot scatter --x metrics.lower_bound --y makespan --where graph="$G2"
has sc2 "set xlabel 'metrics.lower_bound (DOPPLER units (simulated time / 1e10))'"
has sc2 "nohead dt 2"
has sc2 "(dashed: y = x)"
# a log axis over less than two decades gets tics of its own, each labelled (gnuplot labels powers
# of 10 only: makespans of one graph, inside one decade, had no number on the axis: a review)
plot sc3 --plot scatter --x metrics.lower_bound --y makespan --where graph="$G2" --log y
has sc3 "^set ytics ("
hasnt sc3 "^set xtics ("
# learning curve: units, evaluations, reference lines of the same graph and machine
plot learn --plot learning --run 0
has learn "set ylabel 'makespan (time units), lower is better'"
# 6 evaluations (3 a stage, 4 episodes apart) are joined by a line
has learn "with linespoints pt 6 ps 1.5 lw 1.5 lc rgb '#000000' title 'greedy placement at each of the 6 model-selection evaluations'"
has learn "title 'cp ("
has learn "title 'round-robin ("
has learn "^set title 'Learning curve: doppler on sweep-fork, 2 devices, seed 1"
# evaluations at 0, 4, 8, 12 of both stages: 8 rows in the last block
[ "$(awk 'BEGIN { RS = "\n\n\n" } END { print NR }' "$work/learn.dat")" -ge 3 ] || fail "learn: stage and evaluation blocks"
# a standalone trajectory with --reference lines and a --title
traj=$(cd "$work" && find r.runs -name trajectory.h5 | head -n 1)
KEEP="$work/learn2" GNUPLOT="$work/gp" "$DOPPLER" report --plot learning --trajectory "$work/$traj" \
    --reference cp=0.5 --reference "best known=0.25" --title "my run" --out "$work/learn2.svg" || fail "learning from --trajectory"
has learn2 "^set title 'my run'"
has learn2 "title 'best known (0.25)'"
# 24 episodes: a moving mean of one episode was drawn as a line labelled "mean of 1"; now the
# episodes are one series named as episodes. With --reference lines that print the same value,
# one line names both (two dashed lines on top of each other read as one line)
hasnt learn2 "mean of 1'"
has learn2 "title 'Stage I (imitation): each episode'"
KEEP="$work/learn3" GNUPLOT="$work/gp" "$DOPPLER" report --plot learning --trajectory "$work/$traj" --window 3 \
    --reference cp=84.18 --reference round-robin=84.18 --reference "best known=56.7" --out "$work/learn3.svg" || fail "learn3"
has learn3 "title 'Stage I (imitation): mean of the last 3 episodes'"
has learn3 "title 'cp and round-robin (84.18)'"
hasnt learn3 "title 'round-robin (84.18)'"
has learn3 "title 'best known (56.7)'"
# each reference line its own dash: cp's and best known's differ
[ "$(grep -o "with lines dt [0-9]* lw 2 lc rgb '#[0-9a-f]*'" "$work/learn3.gp" | sort -u | wc -l)" -eq 2 ] ||
    fail "learn3: two reference lines, each its own dash and colour"
# an improvement policy's trajectory: its one stage and its evaluations named as what they are
# (the legend said "Stage II (simulator RL)" and "greedy placement": a walkthrough)
"$DOPPLER" train --method improve --graph "$top_srcdir/data/graphs/chainmm-small.json" --validation "$top_srcdir/data/graphs/ffnn.json" \
    --episodes 16 --quiet --checkpoint "$work/imp.h5" --trajectory "$work/imp.traj.h5" > /dev/null 2> "$work/imp.err" ||
    { cat "$work/imp.err" >&2; fail "train --method improve for its learning curve"; }
KEEP="$work/learn4" GNUPLOT="$work/gp" "$DOPPLER" report --plot learning --trajectory "$work/imp.traj.h5" --out "$work/learn4.svg" || fail "learn4"
has learn4 "improvement policy (REINFORCE on moves)"
has learn4 "search score (validation mean) at"
hasnt learn4 "Stage II"
hasnt learn4 "greedy placement"
"$DOPPLER" report --plot learning --trajectory "$work/$traj" --reference nonumber --out "$work/x.svg" 2> /dev/null && fail "--reference without =VALUE accepted"
"$DOPPLER" report "$work/r.h5" --table makespan --log x > /dev/null 2>&1 && fail "--log without a scatter accepted"
# the transfer volume's unit as each run recorded it: the file's unit for a graph of times (it
# said bytes for any graph but DOPPLER's files), seconds under comm_ratio (it said bytes)
plot vol1 --plot scatter --x metrics.transfers --y metrics.transfer_volume --where graph="$G1"
has vol1 "set ylabel 'metrics.transfer_volume (file units (comm))'"
GF=$(cd "$top_srcdir" && pwd)/data/graphs/ffnn.json
cat > "$work/cr.json" <<JSON
{"name": "cr", "fixed": {"devices": 2, "method": "cp"}, "grid": {"graph": ["$GF"], "comm_ratio": [0, 4]}}
JSON
"$DOPPLER" sweep "$work/cr.json" --out "$work/cr.h5" --quiet > /dev/null || fail "the comm_ratio sweep failed"
for w in 0:bytes "4:s of transfer"; do
    KEEP="$work/vol2" GNUPLOT="$work/gp" "$DOPPLER" report "$work/cr.h5" --plot scatter --x metrics.transfers \
        --y metrics.transfer_volume --where "comm_ratio=${w%%:*}" --out "$work/vol2.svg" || fail "vol2: report failed"
    has vol2 "set ylabel 'metrics.transfer_volume (${w#*:})'"
done
# a table whose cells pool runs of two machines (comm_ratio 0 and 4, neither a row nor a column)
# says so, on stderr and under the table (it printed their mean as if over seeds); with the
# machine key as the column, or filtered to one value, it does not
"$DOPPLER" report "$work/cr.h5" --table makespan --rows graph --cols method > "$work/t.md" 2> "$work/t.err" || fail "table of cr.h5"
grep -q "warning: some cells pool runs on different machines" "$work/t.err" || { cat "$work/t.err" >&2; fail "pooled machines: no warning"; }
grep -q "(and machines: some cells pool runs" "$work/t.md" || { cat "$work/t.md" >&2; fail "pooled machines: not said under the table"; }
for opt in "--cols comm_ratio" "--cols method --where comm_ratio=4"; do
    # shellcheck disable=SC2086
    "$DOPPLER" report "$work/cr.h5" --table makespan --rows graph $opt > "$work/t.md" 2> "$work/t.err" || fail "table of cr.h5 $opt"
    grep -q "pool" "$work/t.err" "$work/t.md" && { cat "$work/t.md" >&2; fail "pooled machines said with $opt"; }
done
# the learning curve's reference lines come from cp runs on the run's own machine: a sweep with
# cp at comm_ratio 0 and 4 drew the mean of both beside a run trained at 4
GS=$(cd "$top_srcdir" && pwd)/data/graphs/chainmm-small.json
cat > "$work/lc.json" <<JSON
{"name": "lc", "fixed": {"devices": 2, "graph": "$GS"},
 "grid": [{"method": ["doppler"], "comm_ratio": [4], "episodes_il": [4], "episodes_sim": [4], "seed": [1],
           "cfg__network__hidden": [8], "cfg__network__mlp_hidden": [8], "cfg__network__edge_hidden": [4],
           "cfg__network__steps": [2], "cfg__checkpoint_every": [4]},
          {"method": ["cp"], "comm_ratio": [0, 4]}]}
JSON
"$DOPPLER" sweep "$work/lc.json" --out "$work/lc.h5" --quiet > /dev/null || fail "the learning-curve sweep failed"
cp4=$("$DOPPLER" place --graph "$GS" --devices 2 --method cp --comm-ratio 4 --json | sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p')
KEEP="$work/lc" GNUPLOT="$work/gp" "$DOPPLER" report "$work/lc.h5" --plot learning --run 0 --out "$work/lc.svg" || fail "lc: report failed"
# 4 evaluations (0 and 4 of each stage) are markers, not joined (three evaluations joined by a
# line drew a steady descent nobody measured)
has lc "with points pt 6 ps 1.5 lw 1.5 lc rgb '#000000' title 'greedy placement at the 4 model-selection evaluations'"
grep "title 'cp (" "$work/lc.gp" | awk -v want="$cp4" '{ x = $1 + 0; exit !(x > want * (1 - 1e-9) && x < want * (1 + 1e-9)) }' ||
    { grep "title 'cp (" "$work/lc.gp" >&2; fail "lc: the cp reference is cp's makespan at comm_ratio 4 ($cp4)"; }
# bars: a title by default
plot bars --table makespan --plot bars
has bars "^set title 'makespan by graph and method"
# by another column parameter: its name (it said "and method" whatever the columns were: a review)
plot barsd --table makespan --plot bars --cols devices --where method=cp
has barsd "^set title 'makespan by graph and devices"

# bars of a table without baselines: makespans 1000x apart (chainmm's 5.5 s, a fork-join's
# 0.008 s) in one linear axis made the small graph's bars invisible (table 3's figure: 84 to
# 4800), so each graph's bars are relative to its first column (cp), a dashed line at 1; rows
# within 10x (chainmm, ffnn: 8.3x) stay in their units
GC=$(cd "$top_srcdir" && pwd)/data/graphs/chainmm.json
GK=$(cd "$top_srcdir" && pwd)/tests/data/forkjoin-physical.json
cat > "$work/span.json" <<JSON
{"name": "span", "fixed": {"devices": 2}, "grid": {"graph": ["$GC", "$GK", "$GF"], "method": ["cp", "round-robin"]}}
JSON
"$DOPPLER" sweep "$work/span.json" --out "$work/span.h5" --quiet > /dev/null || fail "the span sweep failed"
KEEP="$work/span" GNUPLOT="$work/gp" "$DOPPLER" report "$work/span.h5" --table makespan --plot bars \
    --out "$work/span.svg" || fail "span: report failed"
has span "set ylabel 'makespan / cp of the same graph'"
has span "first 1 nohead dt 2"
has span "^set title 'makespan by graph and method, relative to cp, mean over seeds"
# every row's cp bar is 1, round-robin's its ratio (chainmm 4.8 / 5.534)
awk 'NF >= 5 { if ($2 + 0 != 1) bad = 1; n++ } END { exit bad || n != 3 }' "$work/span.dat" ||
    { cat "$work/span.dat" >&2; fail "span: cp's bars are not 1 in every row"; }
cat > "$work/near.json" <<JSON
{"name": "near", "fixed": {"devices": 2}, "grid": {"graph": ["$GC", "$GF"], "method": ["cp", "round-robin"]}}
JSON
"$DOPPLER" sweep "$work/near.json" --out "$work/near.h5" --quiet > /dev/null || fail "the near sweep failed"
KEEP="$work/near" GNUPLOT="$work/gp" "$DOPPLER" report "$work/near.h5" --table makespan --plot bars \
    --out "$work/near.svg" || fail "near: report failed"
has near "set ylabel 'makespan (s)'"
hasnt near "nohead dt 2"
# rows far apart and no column in every row (round-robin only on one graph, cp only on the other):
# refused, not drawn absolute on one axis (the small row's bars were invisible: a review)
cat > "$work/gap.json" <<JSON
{"name": "gap", "fixed": {"devices": 2}, "grid": [{"graph": ["$GC"], "method": ["cp"]}, {"graph": ["$GK"], "method": ["round-robin"]}]}
JSON
"$DOPPLER" sweep "$work/gap.json" --out "$work/gap.h5" --quiet > /dev/null || fail "the gap sweep failed"
if KEEP="$work/gap" GNUPLOT="$work/gp" "$DOPPLER" report "$work/gap.h5" --table makespan --plot bars --out "$work/gap.svg" 2> "$work/gap.err"; then
    fail "gap: bars with no column in every row were drawn"
fi
grep -q "no column has a value in every row" "$work/gap.err" || { cat "$work/gap.err" >&2; fail "gap: the refusal"; }
[ ! -e "$work/gap.svg" ] || fail "gap: a plot was written"
# failed runs left out of the bars are said (the plot looked complete: a review)
cat > "$work/fl.json" <<JSON
{"name": "fl", "fixed": {"devices": 2, "graph": "$GC"}, "grid": [{"method": ["cp"]}, {"method": ["single"], "device": [5]}]}
JSON
"$DOPPLER" sweep "$work/fl.json" --out "$work/fl.h5" --quiet > /dev/null 2>&1 || true
KEEP="$work/fl" GNUPLOT="$work/gp" "$DOPPLER" report "$work/fl.h5" --table makespan --plot bars --out "$work/fl.svg" 2> "$work/fl.err" ||
    { cat "$work/fl.err" >&2; fail "fl: report failed"; }
grep -q "warning: the bars leave out failed runs: 0 cells draw .*, 1 cells of failed runs alone have no bar" "$work/fl.err" ||
    { cat "$work/fl.err" >&2; fail "fl: failed runs left out without a word"; }

# the real gnuplot draws them
if command -v gnuplot > /dev/null 2>&1; then
    "$DOPPLER" report "$work/r.h5" --plot scatter --x seconds --y makespan --log xy --out "$work/s.png" || fail "gnuplot scatter"
    "$DOPPLER" report "$work/r.h5" --plot learning --run 0 --out "$work/l.png" || fail "gnuplot learning"
    for f in s.png l.png; do
        [ "$(head -c 4 "$work/$f" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "$f is not a PNG"
    done
fi
echo "test_plots.sh: ok"
