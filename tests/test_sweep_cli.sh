#!/bin/sh
# End-to-end test of doppler sweep and doppler report (not test_sweep.sh: its log would be
# tests/test_sweep.log, the Check suite's, and make check ran only one of them): a sweep of tiny runs killed midway
# (SIGKILL) and started again finishes with each run exactly once in the CSV and the HDF5 file;
# shards merged give the same rows as one sweep; reports print tables and draw plots.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER="$top_builddir/doppler"
GRAPH="$top_srcdir/tests/data/sweep-fork.json"
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-sweep-sh-XXXXXX")
pid=""
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- one grid value written twice (1 and 1.0) is refused: it made two runs of one point, a
# seed counted twice in a mean (a review) ----
cat > "$work/dup.json" <<JSON
{"name": "dup", "fixed": {"graph": "$GRAPH", "method": "random"}, "grid": {"seed": [1, 2, 1.0]}}
JSON
rc=0; "$DOPPLER" sweep "$work/dup.json" --out "$work/dup.h5" --quiet 2> "$work/dup.err" || rc=$?
[ $rc -ne 0 ] && grep -q 'grid.seed\[0\] and \[2\]: the same value written twice' "$work/dup.err" && [ ! -e "$work/dup.h5" ] ||
    fail "a grid value written twice: exit $rc, $(cat "$work/dup.err")"

# distinct integers past 2^53 are distinct values (compared as doubles they were refused as one)
cat > "$work/bigseed.json" <<JSON
{"name": "bigseed", "fixed": {"graph": "$GRAPH", "method": "random"}, "grid": {"seed": [9007199254740993, 9007199254740992]}}
JSON
[ "$("$DOPPLER" sweep "$work/bigseed.json" --list | wc -l)" -eq 2 ] || fail "two seeds past 2^53 are not two runs"
# a --where that matches nothing counts the other distinct values a key takes (it counted runs)
cat > "$work/six.json" <<JSON
{"name": "six", "fixed": {"graph": "$GRAPH"}, "grid": {"method": ["random", "cp"], "seed": [1, 2, 3, 4, 5, 6]}}
JSON
"$DOPPLER" sweep "$work/six.json" --out "$work/six.h5" --quiet || fail "the six-seed sweep"
"$DOPPLER" report "$work/six.h5" --table makespan --where seed=99 > /dev/null 2> "$work/six.err" && fail "--where seed=99 matched"
grep -q 'seed takes 1, 2, 3, 4 and 2 more' "$work/six.err" || fail "--where's values: $(cat "$work/six.err")"

# --where matches a number by value: 2000000000 is the 2.0e9 a config wrote (it matched nothing)
cat > "$work/real.json" <<JSON
{"name": "real", "fixed": {"graph": "$GRAPH", "method": "cp"}, "grid": {"bandwidth": [1.0e9, 2.0e9]}}
JSON
"$DOPPLER" sweep "$work/real.json" --out "$work/real.h5" --quiet 2> /dev/null || fail "the real-valued sweep"
"$DOPPLER" report "$work/real.h5" --table makespan --where bandwidth=2000000000 > "$work/real.md" 2> "$work/real.err" ||
    fail "--where bandwidth=2000000000 on 2.0e9: $(cat "$work/real.err")"

# ---- killed midway, started again: every run exactly once ----
# Each run repeats cp + simulation on the 10-op graph (timing_repeats) so that it lasts a
# noticeable time; 8 runs (the seed only makes them distinct runs).
cat > "$work/kill.json" <<JSON
{"name": "kill", "fixed": {"graph": "$GRAPH", "method": "cp", "devices": 4, "timing_repeats": 60000},
 "grid": {"seed": [1, 2, 3, 4, 5, 6, 7, 8]}}
JSON
"$DOPPLER" sweep "$work/kill.json" --out "$work/kill.h5" --jobs 1 --quiet &
pid=$!
# wait for two finished rows (header + 2 lines), then kill the sweep and its worker
i=0
while :; do
    n=$( (cat "$work/kill.csv" 2>/dev/null || true) | wc -l)
    [ "$n" -ge 3 ] && break
    kill -0 "$pid" 2>/dev/null || break
    i=$((i + 1))
    [ "$i" -gt 600 ] && fail "no row after 60 s"
    sleep 0.1
done
kill -9 "$pid" 2>/dev/null || fail "the sweep finished before it could be killed (runs too short)"
wait "$pid" 2>/dev/null || true
pid=""
done_rows=$(($(wc -l < "$work/kill.csv") - 1))
[ "$done_rows" -ge 2 ] && [ "$done_rows" -lt 8 ] || fail "expected 2..7 rows after the kill, got $done_rows"
"$DOPPLER" sweep "$work/kill.json" --out "$work/kill.h5" --jobs 1 2> "$work/restart.log" \
    || { cat "$work/restart.log" >&2; fail "restarted sweep failed"; }
grep -q "$done_rows of 8 runs already in" "$work/restart.log" || { cat "$work/restart.log" >&2; fail "restart did not skip the finished runs"; }
csv_rows=$(($(wc -l < "$work/kill.csv") - 1))
[ "$csv_rows" -eq 8 ] || fail "CSV has $csv_rows rows, expected 8"
dups=$(tail -n +2 "$work/kill.csv" | cut -d, -f1 | sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] || fail "CSV has a run twice"
"$DOPPLER" report "$work/kill.h5" --table runs > "$work/kill-h5.csv"
h5_rows=$(($(wc -l < "$work/kill-h5.csv") - 1))
[ "$h5_rows" -eq 8 ] || fail "HDF5 has $h5_rows rows, expected 8"
[ "$(tail -n +2 "$work/kill-h5.csv" | cut -d, -f1 | sort -u | wc -l)" -eq 8 ] || fail "HDF5 has a run twice"
# same keys in the same (expansion) order, every makespan 13 (hand-computed in test_sweep.c)
[ "$(tail -n +2 "$work/kill.csv" | cut -d, -f1,2)" = "$(tail -n +2 "$work/kill-h5.csv" | cut -d, -f1,2)" ] || fail "CSV and HDF5 rows differ"
[ "$(tail -n +2 "$work/kill-h5.csv" | cut -d, -f2 | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 " ] || fail "rows not in expansion order"
[ "$(tail -n +2 "$work/kill-h5.csv" | cut -d, -f11,12 | sort -u)" = "ok,13" ] || fail "unexpected status or makespan"
# a third start has nothing to do
"$DOPPLER" sweep "$work/kill.json" --out "$work/kill.h5" 2> "$work/third.log"
grep -q "8 of 8 runs already in" "$work/third.log" || fail "third start re-ran runs"
[ ! -e "$work/kill.lock" ] || fail "lock file left behind"
# one stray character (a space after a closing quote on line 2) is an error naming the line, and
# the journal is left as it is: it was taken for a line cut off by a kill, the CSV cut back to
# its header and every run done again ("4/4 done (0 earlier)": a review)
cp "$work/kill.csv" "$work/kill.good"
sed '2s/}","{/}" ,"{/' "$work/kill.good" > "$work/kill.csv"
cp "$work/kill.csv" "$work/kill.bad"
cmp -s "$work/kill.bad" "$work/kill.good" && fail "the edit of line 2 did nothing"
rc=0; "$DOPPLER" sweep "$work/kill.json" --out "$work/kill.h5" --quiet 2> "$work/stray.err" || rc=$?
[ $rc -ne 0 ] && grep -q "kill.csv:2:[0-9]*: ' ' where a comma or the end of the line belongs" "$work/stray.err" ||
    fail "a stray space on line 2 of the journal: exit $rc, $(cat "$work/stray.err")"
cmp -s "$work/kill.csv" "$work/kill.bad" || fail "the journal with a stray space was changed"
# a NUL byte in a complete line is refused naming the file and the line, by the sweep that resumes
# the journal and by report --compare, as every text input refuses it ("ok<NUL>" was read as the
# status ok: the sweep went on, the comparison passed)
soh=$(printf '\001')
sed "2s/,ok,/,ok$soh,/" "$work/kill.good" | tr '\001' '\000' > "$work/kill.csv"
cp "$work/kill.csv" "$work/kill.bad"
cp "$work/kill.csv" "$work/kill-nul.csv"
cmp -s "$work/kill.bad" "$work/kill.good" && fail "the NUL on line 2 was not written"
rc=0; "$DOPPLER" sweep "$work/kill.json" --out "$work/kill.h5" --quiet 2> "$work/nul.err" || rc=$?
[ $rc -ne 0 ] && grep -q "kill.csv:2:[0-9]*: a NUL byte" "$work/nul.err" ||
    fail "a NUL byte on line 2 of the journal: exit $rc, $(cat "$work/nul.err")"
cmp -s "$work/kill.csv" "$work/kill.bad" || fail "the journal with a NUL byte was changed"
rc=0; "$DOPPLER" report "$work/kill.h5" --compare "$work/kill-nul.csv" > /dev/null 2> "$work/nul.err" || rc=$?
[ $rc -ne 0 ] && grep -q "kill-nul.csv:2:[0-9]*: a NUL byte" "$work/nul.err" ||
    fail "report --compare with a NUL byte on line 2: exit $rc, $(cat "$work/nul.err")"
cp "$work/kill.good" "$work/kill.csv"

# ---- stopped by SIGINT: the HDF5 file holds every run the CSV does ----
# (the HDF5 file takes rows in batches past 16 runs; a stopped sweep left out up to a sixteenth,
# and report counted 201 of 207 runs without a word). Then a CSV ahead of its HDF5 file (a sweep
# killed, or still running) is said by report.
cat > "$work/intr.json" <<JSON
{"name": "intr", "fixed": {"graph": "$GRAPH", "method": "cp", "devices": 4, "timing_repeats": 2000},
 "grid": {"seed": [$(seq -s, 1 160)]}}
JSON
"$DOPPLER" sweep "$work/intr.json" --out "$work/intr.h5" --jobs 1 --quiet 2> /dev/null &
pid=$!
i=0
while :; do
    n=$( (cat "$work/intr.csv" 2>/dev/null || true) | wc -l)
    [ "$n" -ge 101 ] && break
    kill -0 "$pid" 2>/dev/null || break
    i=$((i + 1))
    [ "$i" -gt 1200 ] && fail "no 100 rows after 120 s"
    sleep 0.1
done
kill -INT "$pid" 2>/dev/null || fail "the sweep finished before it could be stopped (runs too short)"
wait "$pid" 2>/dev/null || true
pid=""
csv_rows=$(($(wc -l < "$work/intr.csv") - 1))
[ "$csv_rows" -lt 160 ] || fail "the sweep was not stopped"
h5_rows=$(($("$DOPPLER" report "$work/intr.h5" --table runs | wc -l) - 1))
[ "$h5_rows" -eq "$csv_rows" ] || fail "stopped by SIGINT: the HDF5 file holds $h5_rows runs, the CSV $csv_rows"
cp "$work/intr.h5" "$work/old.h5"
"$DOPPLER" sweep "$work/intr.json" --out "$work/intr.h5" --jobs 1 --quiet 2> /dev/null || fail "the stopped sweep resumed"
cp "$work/intr.csv" "$work/old.csv"
"$DOPPLER" report "$work/old.h5" --table runs > /dev/null 2> "$work/old.err" || fail "report of a file behind its CSV"
grep -q "old.h5 holds $csv_rows runs and .*old.csv 160" "$work/old.err" || { cat "$work/old.err" >&2; fail "a CSV ahead of its HDF5 file: not said"; }

# a worker stopped by SIGINT (a terminal's Ctrl-C reaches the workers with the sweep) is an
# interrupted run, not a failed one (3 of 8 interrupted sweeps recorded it as failed: a review)
cat > "$work/wint.json" <<JSON
{"name": "wint", "fixed": {"graph": "$GRAPH", "method": "anneal", "devices": 4, "budget": 100000000}, "grid": {"seed": [1, 2]}}
JSON
"$DOPPLER" sweep "$work/wint.json" --out "$work/wint.h5" --jobs 1 --quiet 2> /dev/null &
pid=$!
# (a worker found may be gone by the kill under load: look again until one is interrupted; the
# children from /proc, as a fresh Debian has no pgrep)
kids_of() {
    for st in /proc/[0-9]*/status; do
        awk -v p="$1" '/^PPid:/ { if ($2 == p) { split(FILENAME, a, "/"); print a[3] } }' "$st" 2> /dev/null || true
    done
}
i=0
while :; do
    kid=$(kids_of "$pid" | head -n 1)
    [ -n "$kid" ] && sleep 0.3 && kill -INT "$kid" 2> /dev/null && break
    i=$((i + 1))
    [ "$i" -gt 300 ] && fail "no worker interrupted after 60 s"
    kill -0 "$pid" 2> /dev/null || fail "the sweep ended before a worker could be interrupted"
    sleep 0.1
done
wait "$pid" 2>/dev/null && fail "a sweep whose worker was interrupted exited 0"
pid=""
! grep -q ",failed," "$work/wint.csv" 2> /dev/null || { cat "$work/wint.csv" >&2; fail "the interrupted run was recorded as failed"; }

# a label with a comma is one CSV field; LaTeX's special characters are escaped (a comma split its
# row, and ^ ~ \\ { } went raw into the tex: a review)
cat > "$work/esc.json" <<JSON
{"name": "esc", "fixed": {"graph": "$GRAPH", "devices": 4}, "grid": {"method": ["cp", "heft"]},
 "tables": {"main": {"rows": ["graph"], "cols": "method", "baselines": ["cp"], "labels": {"cp": "c,p ^~{}\\\\x"}}}}
JSON
"$DOPPLER" sweep "$work/esc.json" --out "$work/esc.h5" --quiet 2> /dev/null || fail "the esc sweep"
"$DOPPLER" report "$work/esc.h5" --table main --format csv > "$work/esc.csv" || fail "report csv"
python3 -c 'import csv, sys; rows = list(csv.reader(open(sys.argv[1]))); sys.exit(0 if len({len(r) for r in rows}) == 1 and "c,p ^~{}\\x mean" in rows[0] else 1)' "$work/esc.csv" ||
    { cat "$work/esc.csv" >&2; fail "a label with a comma split the CSV"; }
"$DOPPLER" report "$work/esc.h5" --table main --format tex > "$work/esc.tex" || fail "report tex"
grep -q 'c,p \\textasciicircum{}\\textasciitilde{}\\{\\}\\textbackslash{}x' "$work/esc.tex" || { cat "$work/esc.tex" >&2; fail "tex escaping"; }

# ---- a small grid: pool of 2, shards merged, report ----
cat > "$work/grid.json" <<JSON
{"name": "grid", "fixed": {"graph": "$GRAPH"},
 "grid": {"devices": [2, 4], "method": ["cp", "random", "round-robin"], "seed": [1, 2, 3]},
 "tables": {"main": {"rows": ["devices"], "cols": "method", "baselines": ["cp", "round-robin"], "title": "fork-join"}}}
JSON
"$DOPPLER" sweep "$work/grid.json" --out "$work/grid.h5" --jobs 2 --quiet
"$DOPPLER" sweep "$work/grid.json" --out "$work/s0.h5" --shard 0/2 --quiet
"$DOPPLER" sweep "$work/grid.json" --out "$work/s1.h5" --shard 1/2 --quiet
[ $(($(wc -l < "$work/s0.csv") + $(wc -l < "$work/s1.csv") - 2)) -eq 18 ] || fail "shards do not cover the 18 runs"
"$DOPPLER" sweep "$work/grid.json" --merge "$work/s0.h5" "$work/s1.h5" --out "$work/merged.h5" 2>/dev/null
"$DOPPLER" report "$work/grid.h5" --table runs | cut -d, -f1-12 > "$work/a.csv"
"$DOPPLER" report "$work/merged.h5" --table runs | cut -d, -f1-12 > "$work/b.csv"
cmp -s "$work/a.csv" "$work/b.csv" || { diff "$work/a.csv" "$work/b.csv" >&2; fail "merged shards differ from the pool's rows"; }
# merged into another folder, the rows' run files are found from the merged file (their paths
# stayed relative to the shards' folder: report found no assignment.json)
mkdir -p "$work/elsewhere"
"$DOPPLER" sweep "$work/grid.json" --merge "$work/s0.h5" "$work/s1.h5" --out "$work/elsewhere/m.h5" 2>/dev/null ||
    fail "a merge into another folder"
a=$(sed -n '2p' "$work/elsewhere/m.csv" | tr ',' '\n' | grep 'assignment.json' | head -n 1)
[ -n "$a" ] && [ -f "$work/elsewhere/$a" ] || fail "a merged row's assignment ($a) is not found from the merged file's folder"
"$DOPPLER" report "$work/grid.h5" --table main > "$work/main.md"
grep -q '^| 4 | \*\*13\*\* ± 0 | ' "$work/main.md" || { cat "$work/main.md" >&2; fail "table lacks the 4-device cp makespan 13"; }
# baselines that --where leaves out of the table: said (no best baseline, no ratios; it was silent)
# a --where that matches nothing says what the key takes (a graph's row label is not its value,
# the path: "no run matches" alone left that to guess; a review)
"$DOPPLER" report "$work/grid.h5" --table main --where graph=sweep-fork > /dev/null 2> "$work/err" &&
    fail "--where graph=LABEL matched"
grep -q 'no run matches where .*graph takes ".*sweep-fork.json"' "$work/err" || { cat "$work/err" >&2; fail "--where: values not said"; }
"$DOPPLER" report "$work/grid.h5" --table main --baselines cp --where method=random > /dev/null 2> "$work/err" ||
    { cat "$work/err" >&2; fail "report --where method=random"; }
grep -q "the table's baselines (cp) are no column here" "$work/err" || { cat "$work/err" >&2; fail "baselines filtered out: not said"; }
"$DOPPLER" report "$work/grid.h5" --table main > /dev/null 2> "$work/err"
grep -q "are no column here" "$work/err" && fail "the baselines' warning on a table that has them"
# random and round-robin count as baselines also as columns of the table's own method column (as
# the reference columns they stand for; EXPERIMENTS.md), so no column is left for a ratio
grep -q 'random (b)' "$work/main.md" && grep -q 'round-robin (b)' "$work/main.md" ||
    { cat "$work/main.md" >&2; fail "random and round-robin are not marked baselines"; }
"$DOPPLER" report "$work/grid.h5" --table main --format tex > "$work/main.tex" || fail "report tex"
grep -q 'toprule' "$work/main.tex" || fail "no tex table"
# the TeX table keeps its heading and its note (what a cell is, the units): both were dropped
grep -q '^\\textbf{fork-join}' "$work/main.tex" && grep -q 'footnotesize makespan: mean \$\\pm\$ sample standard deviation.*units: ' "$work/main.tex" ||
    { cat "$work/main.tex" >&2; fail "tex without its heading or note"; }
"$DOPPLER" report "$work/grid.h5" --table nosuch > /dev/null 2>&1 && fail "unknown table accepted"
# a plot to a file type gnuplot is not asked for is a usage error (exit 2; it was 1)
rc=0; "$DOPPLER" report "$work/grid.h5" --table main --plot bars --out "$work/x.jpg" > /dev/null 2> "$work/err" || rc=$?
[ $rc -eq 2 ] && grep -q "plots are written as .png or .svg" "$work/err" || fail "--out x.jpg: exit $rc, $(cat "$work/err")"
# misspelt names are refused by name, exit non-zero (each gave a plausible table of "-", exit 0,
# before 2026-12-06): a parameter of rows, cols or where; a baseline; a metric no run reports; a
# filter no run matches; --cols or --baselines on a table of explicit columns; a sweep config's
# table naming a parameter no run has
for bad in "--rows nosuch:no run has the parameter \"nosuch\"" "--cols nosuch:no run has the parameter \"nosuch\"" \
           "--where nosuch=1:no run has the parameter \"nosuch\"" "--where method=nosuch:no run matches where" \
           "--baselines nosuch:\"nosuch\" is no value of method" "--metric metrics.nosuch:no finished run reports it"; do
    opt=${bad%%:*}; msg=${bad#*:}
    # shellcheck disable=SC2086
    "$DOPPLER" report "$work/grid.h5" --table makespan $opt > /dev/null 2> "$work/err" && fail "report $opt accepted"
    grep -q "$msg" "$work/err" || { cat "$work/err" >&2; fail "report $opt: no message '$msg'"; }
done
# every metric the docs give as `--metric NAME` is one report knows (doc/sweep-format.md told
# users --metric penalised_makespan, which report refused as an unknown metric: a review)
for m in $(cat "$top_srcdir/doc/"*.md "$top_srcdir/README.md" | grep -o -- '--metric [a-z_.]*' | sed 's/^--metric //' | sort -u); do
    "$DOPPLER" report "$work/grid.h5" --table makespan --metric "$m" > /dev/null 2> "$work/err" || true
    if grep -q "unknown metric" "$work/err"; then fail "the docs' --metric $m: $(cat "$work/err")"; fi
done
# a results file of no run yet (a shard with none) gives the empty table, not "no run has the
# parameter graph"
printf '{"name": "z", "grid": {"method": ["cp"], "graph": ["%s"]}}' "$GRAPH" > "$work/z.json"
"$DOPPLER" sweep "$work/z.json" --out "$work/z.h5" --shard 1/2 --quiet || fail "an empty shard"
"$DOPPLER" report "$work/z.h5" --table makespan > "$work/z.md" 2> "$work/err" || { cat "$work/err" >&2; fail "report of no run"; }
sed 's/"title": "fork-join"}}}/"title": "fork-join"}, "cols2": {"rows": ["devices"], "columns": [{"label": "cp", "where": {"method": "cp"}}]}}}/' \
    "$work/grid.json" > "$work/cols2.json"
"$DOPPLER" sweep "$work/cols2.json" --out "$work/cols2.h5" --quiet || fail "the sweep of cols2.json"
rc=0; "$DOPPLER" report "$work/cols2.h5" --table cols2 --cols seed > /dev/null 2> "$work/err" || rc=$?
[ $rc -eq 2 ] && grep -q "names its own columns: --cols does not apply" "$work/err" ||
    { cat "$work/err" >&2; fail "--cols on a table of explicit columns: exit $rc"; }
# checked before any run (each failed run by run, devices 0, a message naming no parameter): a
# negative integer parameter, a checkpoint file that is not there
printf '{"grid": {"method": ["anneal"], "graph": ["%s"], "budget": [-5]}}' "$GRAPH" > "$work/negbudget.json"
"$DOPPLER" sweep "$work/negbudget.json" --out "$work/negbudget.h5" > /dev/null 2> "$work/err" && fail "budget -5 accepted"
grep -q 'parameter "budget" = -5: must be a non-negative integer; nothing was run' "$work/err" || { cat "$work/err" >&2; fail "budget -5: message"; }
printf '{"grid": {"method": ["improve"], "graph": ["%s"], "checkpoint": ["%s/none.h5"]}}' "$GRAPH" "$work" > "$work/nock.json"
"$DOPPLER" sweep "$work/nock.json" --out "$work/nock.h5" > /dev/null 2> "$work/err" && fail "a missing checkpoint accepted"
grep -q 'checkpoint ".*none.h5" (named by 1 run) is missing' "$work/err" || { cat "$work/err" >&2; fail "missing checkpoint: message"; }
[ ! -e "$work/nock.h5" ] && [ ! -e "$work/negbudget.h5" ] || fail "a refused sweep wrote its results file"
sed 's/"rows": \["devices"\]/"rows": ["nosuch"]/' "$work/grid.json" > "$work/badtable.json"
"$DOPPLER" sweep "$work/badtable.json" --list > /dev/null 2> "$work/err" && fail "a table of an unknown parameter accepted"
grep -q 'tables.main.rows: no run has the parameter "nosuch"' "$work/err" || { cat "$work/err" >&2; fail "no message on tables.main.rows"; }
# a table's misspelt key or baseline is refused before any run (a review: "colz", "metrc" and
# baseline "hef" ran the whole sweep, and only report refused them)
sed 's/"cols": "method"/"colz": "method"/' "$work/grid.json" > "$work/badtable2.json"
"$DOPPLER" sweep "$work/badtable2.json" --list > /dev/null 2> "$work/err" && fail "a table key colz accepted"
grep -q 'badtable2.json: unknown key "tables.main.colz"' "$work/err" || { cat "$work/err" >&2; fail "no message on tables.main.colz"; }
sed 's/"baselines": \["cp", "round-robin"\]/"baselines": ["cp", "hef"]/' "$work/grid.json" > "$work/badtable3.json"
grep -q '"hef"' "$work/badtable3.json" || fail "badtable3.json"
"$DOPPLER" sweep "$work/badtable3.json" --list > /dev/null 2> "$work/err" && fail "a baseline hef accepted"
grep -q 'tables.main.baselines: "hef" is no value of method' "$work/err" || { cat "$work/err" >&2; fail "no message on baseline hef"; }
"$DOPPLER" sweep "$work/grid.json" --list | wc -l | grep -qx 18 || fail "--list does not give 18 runs"
# every table is read by report's own parser at load: what report refuses is refused before any
# run, naming the file and the key (digits 99, rows 5, labels 3, columns "x", metric "nosuch" and
# the rest ran the whole grid, exit 0, and only report refused them: a review); a number is a
# baseline of cols devices, as --baselines 2 is
for bad in '"digits": 99|"tables.main.digits" = 99 out of range' '"rows": 5|tables.main.rows: expected a string' \
           '"labels": 3|tables.main.labels: expected an object' '"columns": "x"|tables.main.columns: expected a non-empty array' \
           '"metric": "nosuch"|tables.main.metric: unknown metric "nosuch"' \
           '"columns": [{"label": "a", "metric": "nosuch"}]|tables.main.columns\[0\]: unknown metric' \
           '"columns": [{"label": "a", "ratio": ["a", "b"]}]|tables.main.columns\[0\].ratio: no other column labelled "a"' \
           '"baselines": [true]|tables.main.baselines\[0\]: expected a string or a number' \
           '"cols": "devices", "baselines": [3]|tables.main.baselines: "3" is no value of devices'; do
    spec=${bad%%|*}; msg=${bad#*|}
    printf '{"fixed": {"graph": "%s"}, "grid": {"devices": [2, 4], "method": ["cp"]}, "tables": {"main": {%s}}}\n' "$GRAPH" "$spec" > "$work/badspec.json"
    rc=0; "$DOPPLER" sweep "$work/badspec.json" --out "$work/badspec.h5" --quiet > /dev/null 2> "$work/err" || rc=$?
    [ $rc -ne 0 ] && [ ! -e "$work/badspec.h5" ] || fail "a table of $spec: exit $rc, a results file"
    grep -q "badspec.json: $msg" "$work/err" || { cat "$work/err" >&2; fail "a table of $spec: no message '$msg'"; }
done
printf '{"name": "devb", "fixed": {"graph": "%s", "method": "cp"}, "grid": {"devices": [2, 4]},
 "tables": {"t": {"cols": "devices", "baselines": [2]}, "f": {"filter": {"devices": 3}}}}\n' "$GRAPH" > "$work/devb.json"
"$DOPPLER" sweep "$work/devb.json" --out "$work/devb.h5" --quiet || fail "a table of baselines [2] for cols devices"
"$DOPPLER" report "$work/devb.h5" --table t | grep -q '| 2 (b) |' || fail "baselines [2]: devices 2 is no baseline"
# a filter no run matches is known from the results only: report refuses it, naming the file
"$DOPPLER" report "$work/devb.h5" --table f > /dev/null 2> "$work/err" && fail "a filter that matches no run"
grep -q 'devb.h5: table f: no run matches where {"devices":3}' "$work/err" || { cat "$work/err" >&2; fail "the filter's message names no file"; }

# an edited config: --prune drops the rows of runs it no longer has (round-robin: 6 of 18)
# (the table's baselines edited too: a baseline no run has is refused before the sweep runs)
sed 's/"cp", "random", "round-robin"/"cp", "random"/; s/"baselines": \["cp", "round-robin"\]/"baselines": ["cp"]/' \
    "$work/grid.json" > "$work/grid2.json"
cp "$work/grid.h5" "$work/grid2.h5"
cp "$work/grid.csv" "$work/grid2.csv"
"$DOPPLER" sweep "$work/grid2.json" --out "$work/grid2.h5" --prune 2> "$work/prune.log"
grep -q 'dropped 6 rows' "$work/prune.log" || { cat "$work/prune.log" >&2; fail "--prune did not drop the 6 round-robin rows"; }
grep -q 'note: .*grid2.h5 holds 18 rows of another grid (sweep "grid")' "$work/prune.log" ||
    { cat "$work/prune.log" >&2; fail "no note that the file held another grid's rows"; }
[ $(($(wc -l < "$work/grid2.csv") - 1)) -eq 12 ] || fail "pruned CSV does not have 12 rows"

# ---- a failing run is recorded, reported, and retried on request ----
# (a device beyond the machine's: found when the run has the graph and its machine)
cat > "$work/bad.json" <<JSON
{"name": "bad", "fixed": {"graph": "$GRAPH", "method": "single", "devices": 2}, "grid": {"device": [0, 5]}}
JSON
if "$DOPPLER" sweep "$work/bad.json" --out "$work/bad.h5" 2> "$work/bad.log"; then fail "a failed run gave exit 0"; fi
grep -q 'only 2 devices' "$work/bad.log" || { cat "$work/bad.log" >&2; fail "the failure is not reported"; }
[ "$(tail -n +2 "$work/bad.csv" | cut -d, -f11 | sort | tr '\n' ' ')" = "failed ok " ] || fail "failed run not recorded"
"$DOPPLER" sweep "$work/bad.json" --out "$work/bad.h5" --retry-failed 2> "$work/bad2.log" || true
grep -q '1 of 2 runs already in' "$work/bad2.log" || fail "--retry-failed did not rerun only the failure"
# --keep-failed with a failed row kept: a failure of the sweep (it said "finished", exit 0: a review)
if "$DOPPLER" sweep "$work/bad.json" --out "$work/bad.h5" --keep-failed 2> "$work/bad3.log"; then fail "--keep-failed with a failed row: exit 0"; fi
grep -q '1 runs in .*bad.h5 failed before and were kept (--keep-failed)' "$work/bad3.log" && grep -q 'finished with failures' "$work/bad3.log" ||
    { cat "$work/bad3.log" >&2; fail "--keep-failed: the kept failure is not said"; }
# a merge reads every input before it writes: one missing leaves no results file (it wrote the
# others' rows); rows of another config are named, not dropped silently
mkdir -p "$work/mg"
if "$DOPPLER" sweep "$work/bad.json" --merge "$work/bad.h5" "$work/no-such.h5" --out "$work/mg/m.h5" 2> "$work/mg.log"; then
    fail "a merge with a missing input: exit 0"
fi
[ ! -e "$work/mg/m.h5" ] && [ ! -e "$work/mg/m.csv" ] || fail "a merge with a missing input wrote a results file"
sed 's/"devices": 2/"devices": 3/' "$work/bad.json" > "$work/other.json"
"$DOPPLER" sweep "$work/other.json" --merge "$work/bad.h5" --out "$work/mg/o.h5" 2> "$work/mg2.log" || true
grep -q 'warning: .*bad.h5: 2 rows are no run of this config' "$work/mg2.log" || { cat "$work/mg2.log" >&2; fail "another config's rows left out without a word"; }

# ---- wrong parameters are refused when the config is read: nothing is run or written ----
# (a misspelt parameter, an unknown method, a wrong value: each was found when its run started,
# after the results file was made)
for p in '"budgte": [10]' '"method": ["cp", "nosuch"]' '"devices": ["four"]' '"seed": [1.5]'; do
    case $p in *method*) m= ;; *) m='"method": "cp", ' ;; esac
    cat > "$work/typo.json" <<JSON
{"name": "typo", "fixed": {$m"graph": "$GRAPH"}, "grid": {$p}}
JSON
    rm -rf "$work/typo.h5" "$work/typo.csv" "$work/typo.runs"
    if "$DOPPLER" sweep "$work/typo.json" --out "$work/typo.h5" 2> "$work/typo.log"; then fail "sweep with $p gave exit 0"; fi
    grep -q 'typo.json: run [0-9a-f]* (.*): .*nothing was run or written' "$work/typo.log" || { cat "$work/typo.log" >&2; fail "no message naming the config and the run for $p"; }
    [ ! -e "$work/typo.h5" ] && [ ! -e "$work/typo.csv" ] && [ ! -e "$work/typo.runs" ] || fail "a sweep with $p wrote results"
done
# a gen: graph with a misspelt parameter or model is read as doppler graph gen reads it, before
# any run (both runs ran, failed, and gg.h5 and gg.csv were written; a new-user walkthrough)
cat > "$work/gg.json" <<JSON
{"name": "gg", "fixed": {"devices": 4}, "grid": {"graph": ["gen:llama-layer?tp=2&bogus=1", "gen:nomodel"], "method": ["cp"]}}
JSON
rc=0; "$DOPPLER" sweep "$work/gg.json" --out "$work/gg.h5" 2> "$work/gg.log" || rc=$?
[ $rc -eq 1 ] && grep -q 'gg.json: run [0-9a-f]* (.*gen:llama-layer?tp=2&bogus=1.*): parameter "graph": gen:llama-layer?tp=2&bogus=1: llama-layer: unknown parameter --bogus .* (and 1 more run); nothing was run or written' "$work/gg.log" &&
    [ ! -e "$work/gg.h5" ] && [ ! -e "$work/gg.csv" ] && [ ! -e "$work/gg.runs" ] ||
    { cat "$work/gg.log" >&2; fail "a misspelt gen: graph: exit $rc, not refused before the runs"; }
sed 's/"gen:llama-layer?tp=2&bogus=1", //' "$work/gg.json" > "$work/gg2.json"
rc=0; "$DOPPLER" sweep "$work/gg2.json" --out "$work/gg2.h5" 2> "$work/gg2.log" || rc=$?
[ $rc -eq 1 ] && grep -q "parameter \"graph\": gen:nomodel: unknown model 'nomodel' (known: chainmm," "$work/gg2.log" && [ ! -e "$work/gg2.h5" ] ||
    { cat "$work/gg2.log" >&2; fail "an unknown gen: model: exit $rc, not refused before the runs"; }
# values the spec's parser takes and the generator refuses (a range of its own, a check across
# parameters): each distinct gen: graph is generated once before any run (they started, failed,
# and the results files were made: a review)
for spec in 'llama-block?tp=64' 'llama-layer?heads=3' 'random?min-work=10&max-work=5'; do
    printf '{"name": "gv", "fixed": {"devices": 2, "method": "cp"}, "grid": {"graph": ["gen:%s", "gen:chainmm?matrices=3&n=100&blocks=1"], "seed": [1, 2]}}\n' "$spec" > "$work/gv.json"
    rc=0; "$DOPPLER" sweep "$work/gv.json" --out "$work/gv.h5" 2> "$work/gv.log" || rc=$?
    [ $rc -eq 1 ] && grep -q "gv.json: graph \"gen:.*\" (named by 2 runs) cannot be generated: .*; no run was started" "$work/gv.log" &&
        [ ! -e "$work/gv.h5" ] && [ ! -e "$work/gv.csv" ] && [ ! -e "$work/gv.runs" ] ||
        { cat "$work/gv.log" >&2; fail "gen:$spec: exit $rc, not refused before the runs (once for its two runs)"; }
    rc=0; "$DOPPLER" graph gen "${spec%%\?*}" $(echo "${spec#*\?}" | sed 's/^/--/; s/&/ --/g; s/=/ /g') --out "$work/gv-gen.json" > /dev/null 2> "$work/gv-gen.log" || rc=$?
    [ $rc -ne 0 ] && msg=$(sed -n 's/^doppler[^:]*: //p' "$work/gv-gen.log" | head -1) && [ -n "$msg" ] ||
        fail "graph gen accepted $spec (the sweep must agree with it)"
done
# with the other inputs: a missing graph file is said beside a graph that cannot be generated
# (the generator's error hid it: a review)
printf '{"name": "gw", "fixed": {"devices": 2, "method": "cp"}, "grid": {"graph": ["gen:llama-block?tp=64", "no-such-graph.json"]}}\n' > "$work/gw.json"
rc=0; "$DOPPLER" sweep "$work/gw.json" --out "$work/gw.h5" 2> "$work/gw.log" || rc=$?
[ $rc -eq 1 ] && grep -q 'cannot be generated: .*(also wrong: no-such-graph.json); no run was started' "$work/gw.log" && [ ! -e "$work/gw.h5" ] ||
    { cat "$work/gw.log" >&2; fail "a bad gen: graph and a missing file: exit $rc, not both said"; }
# a topology or calibration the runs cannot load, a calibration of another topology's devices, a
# calibration or memory_limit topology without a topology: refused before any run (every run
# failed on them after the results files were made: a review of the machine's inputs)
sed 's/"bandwidth_Bps": 6180000000.0/"bandwidth_Bps": -1/' "$top_srcdir/data/topologies/cpu-2core.json" > "$work/negbw.json"
sed 's/"c_s_per_byte": 3.143568953e-10/"c_s_per_byte": -1/' "$top_srcdir/data/calibrations/cpu-2core.json" > "$work/negcal.json"
CAL="$top_srcdir/data/calibrations/cpu-2core.json"
for case in "topology:negbw.json:cpu-2core:cannot be loaded: .*negbw.json: links\[0\].bandwidth_Bps: must be a positive finite number, got -1" \
            "calibration:negcal.json:cpu-2core:cannot be loaded: .*negcal.json: devices.core0.ops.input.c_s_per_byte: must lie in" \
            "calibration:$CAL:dgx1-v100:devices.core0: topology dgx1-v100 has no such device" \
            "calibration:$CAL::calibration times the devices of a topology" \
            "memory_limit:topology::memory_limit topology takes each device's memory_bytes from a topology"; do
    key=${case%%:*}; rest=${case#*:}; val=${rest%%:*}; rest=${rest#*:}; topo=${rest%%:*}; want=${rest#*:}
    case $val in /*|topology) ;; *) val="$work/$val" ;; esac
    extra=""; [ -n "$topo" ] && [ "$key" != topology ] && extra=", \"topology\": \"$topo\""
    printf '{"name": "mi", "fixed": {"graph": "%s", "method": "cp"%s}, "grid": {"%s": ["%s"], "seed": [1, 2]}}\n' \
        "$top_srcdir/data/graphs/chainmm.json" "$extra" "$key" "$val" > "$work/mi.json"
    rc=0; "$DOPPLER" sweep "$work/mi.json" --out "$work/mi.h5" 2> "$work/mi.log" || rc=$?
    [ $rc -eq 1 ] && grep -q "$want" "$work/mi.log" && grep -q "no run was started\|nothing was run or written" "$work/mi.log" &&
        [ ! -e "$work/mi.h5" ] && [ ! -e "$work/mi.csv" ] && [ ! -e "$work/mi.runs" ] ||
        { cat "$work/mi.log" >&2; fail "$key $val (topology '$topo'): exit $rc, not refused before the runs"; }
done
# devices beside a topology of another count: refused before any run; the topology's own count runs
printf '{"name": "md", "fixed": {"graph": "%s", "method": "cp", "devices": 4}, "grid": {"topology": ["cpu-2core", "pcie-gen3-4gpu"]}}\n' \
    "$top_srcdir/data/graphs/chainmm.json" > "$work/md.json"
rc=0; "$DOPPLER" sweep "$work/md.json" --out "$work/md.h5" 2> "$work/md.log" || rc=$?
[ $rc -eq 1 ] && grep -q "md.json: run [0-9a-f]* (.*cpu-2core.*): devices 4: topology cpu-2core has 2 devices; no run was started" "$work/md.log" &&
    [ ! -e "$work/md.h5" ] || { cat "$work/md.log" >&2; fail "devices 4 on cpu-2core: exit $rc, not refused before the runs"; }
sed 's/"cpu-2core", //' "$work/md.json" > "$work/md2.json"
"$DOPPLER" sweep "$work/md2.json" --out "$work/md2.h5" --quiet 2> "$work/md.log" || { cat "$work/md.log" >&2; fail "devices 4 on a 4-device topology"; }
# the same on the command line is a usage error (exit 2; it was 1, found as the machine loaded)
for o in "--calibration $CAL" "--memory-limit topology"; do
    rc=0; "$DOPPLER" simulate --graph "$top_srcdir/data/graphs/chainmm.json" --method cp $o > /dev/null 2> "$work/mi.log" || rc=$?
    [ $rc -eq 2 ] && grep -q "give --topology" "$work/mi.log" || { cat "$work/mi.log" >&2; fail "simulate $o without --topology: exit $rc"; }
done
# legitimate specs still run
cat > "$work/gok.json" <<JSON
{"name": "gok", "fixed": {"devices": 2, "method": "cp"}, "grid": {"graph": ["gen:chainmm?matrices=3&n=100&blocks=1&partition=2d", "gen:ffnn?layers=1&batch-blocks=1&feature-blocks=1&training=yes&optimizer=sgd"]}}
JSON
"$DOPPLER" sweep "$work/gok.json" --out "$work/gok.h5" --quiet 2> "$work/gok.log" || { cat "$work/gok.log" >&2; fail "legitimate gen: graphs"; }
# --out naming the config (gok.csv beside it) is refused saying so: it said "no CSV beside it to
# rebuild it from" with gok.csv there (a new-user walkthrough)
cp "$work/gok.json" "$work/gok.json.bak"; cp "$work/gok.csv" "$work/gok.csv.bak"
rc=0; "$DOPPLER" sweep "$work/gok.json" --out "$work/gok.json" 2> "$work/gok2.log" || rc=$?
[ $rc -eq 1 ] && grep -q "gok.json: not a readable HDF5 file, and there is no .*gok.json.csv to rebuild it from: --out names the results HDF5 file (.*gok.h5 for .*gok.csv, which was left alone)" "$work/gok2.log" &&
    ! grep -q 'no CSV beside it' "$work/gok2.log" && cmp -s "$work/gok.json" "$work/gok.json.bak" && cmp -s "$work/gok.csv" "$work/gok.csv.bak" ||
    { cat "$work/gok2.log" >&2; fail "--out naming the config: exit $rc, or the message does not say what is there"; }
# a damaged results file with its CSV beside it: report names the CSV and the sweep that rebuilds
# from it, and the sweep says the runs were recovered from the CSV (report did not mention the
# CSV; the sweep said "2 of 2 runs already in tr/gok.h5": a new-user walkthrough)
mkdir -p "$work/tr"
head -c 3000 "$work/gok.h5" > "$work/tr/gok.h5"; cp "$work/gok.csv" "$work/tr/"
rc=0; "$DOPPLER" report "$work/tr/gok.h5" --table makespan > /dev/null 2> "$work/tr.log" || rc=$?
[ $rc -eq 1 ] && grep -q "tr/gok.h5: not a readable HDF5 file; .*tr/gok.csv beside it holds 2 runs: doppler sweep CONFIG --out .*tr/gok.h5 rebuilds it from that" "$work/tr.log" ||
    { cat "$work/tr.log" >&2; fail "report of a damaged file with its CSV: exit $rc, the CSV not mentioned"; }
# the same of a missing file (it said "No such file or directory" alone: a review)
mkdir -p "$work/tm"; cp "$work/gok.csv" "$work/tm/"
rc=0; "$DOPPLER" report "$work/tm/gok.h5" --table makespan > /dev/null 2> "$work/tm.log" || rc=$?
[ $rc -eq 1 ] && grep -q "tm/gok.h5: No such file or directory; .*tm/gok.csv beside it holds 2 runs: doppler sweep CONFIG --out .*tm/gok.h5 rebuilds it from that" "$work/tm.log" ||
    { cat "$work/tm.log" >&2; fail "report of a missing file with its CSV: exit $rc, the CSV not mentioned"; }
"$DOPPLER" sweep "$work/gok.json" --out "$work/tr/gok.h5" 2> "$work/tr.log" || { cat "$work/tr.log" >&2; fail "the rebuild from the CSV"; }
grep -q "2 of 2 runs already in .*tr/gok.h5 (recovered from .*tr/gok.csv: the HDF5 file was not readable and was rebuilt from it), 0 to do" "$work/tr.log" ||
    { cat "$work/tr.log" >&2; fail "the rebuild does not say the runs came from the CSV"; }
"$DOPPLER" report "$work/tr/gok.h5" --table makespan > /dev/null || fail "report of the rebuilt file"
"$DOPPLER" sweep "$work/gok.json" --out "$work/tr/gok.h5" 2> "$work/tr.log"
grep -q "2 of 2 runs already in .*tr/gok.h5, 0 to do" "$work/tr.log" || { cat "$work/tr.log" >&2; fail "a whole file said recovered"; }

# a uniform machine's key beside a topology (failed when its run came, after the others had run:
# a review of the twentieth session)
cat > "$work/mix.json" <<JSON
{"name": "mix", "fixed": {"graph": "$GRAPH", "peak_flops": 1e12},
 "grid": [{"method": ["cp"]}, {"method": ["cp"], "topology": ["pcie-gen3-4gpu"]}]}
JSON
if "$DOPPLER" sweep "$work/mix.json" --out "$work/mix.h5" 2> "$work/mix.log"; then fail "peak_flops with a topology: exit 0"; fi
grep -q 'mix.json: run [0-9a-f]* (.*): peak_flops describes a uniform machine: not with a topology (pcie-gen3-4gpu).*nothing was run or written' "$work/mix.log" &&
    [ ! -e "$work/mix.h5" ] || { cat "$work/mix.log" >&2; fail "peak_flops with a topology not refused before the runs"; }

# ---- a config key of a run is refused when the config is read, as a parameter is: nothing is
# run or written ----
# (a misspelt cfg__ key, a value out of range, a nested unknown key, a train_config file or an
# anneal config file with an unknown key: each was found when its run started, after the results
# files were made, exit 1; a review). Each distinct config is built once, as its runs build it.
echo '{"gama": 1}' > "$work/ck-train.json"
echo '{"t00": 1}' > "$work/ck-anneal.json"
dop='"method": ["doppler"], "episodes_il": [2], "episodes_sim": [2]'
for c in "$dop, \"cfg__gama\": [0.5]|parameter \"cfg__gama\": config: unknown key \"gama\"" \
         "$dop, \"cfg__gamma\": [5]|parameter \"cfg__gamma\": config: \"gamma\" = 5 out of range" \
         "$dop, \"cfg__stages__sim__lr\": [0.01], \"cfg__stages__sim__lrr\": [0.1]|parameter \"cfg__stages__sim__lrr\": config: unknown key \"stages.sim.lrr\"" \
         "$dop, \"train_config\": [\"ck-train.json\"]|parameter \"train_config\": .*ck-train.json: config: unknown key \"gama\"" \
         "\"method\": [\"anneal\"], \"budget\": [20], \"config\": [\"ck-anneal.json\"]|parameter \"config\": .*ck-anneal.json: unknown key \"t00\""; do
    grid=${c%%|*}; msg=${c#*|}
    # runs 1..4 of one config (run 0 a placement): all refused, the shard's two
    printf '{"name": "ck", "grid": [{"graph": ["%s"], "method": ["cp"]}, {"graph": ["%s"], "seed": [1, 2, 3, 4], %s}]}\n' \
        "$GRAPH" "$GRAPH" "$grid" > "$work/ck.json"
    for mode in "|3 more runs" "--shard 1/2|1 more run"; do
        more=${mode#*|}; mode=${mode%%|*}
        rm -rf "$work/ck.h5" "$work/ck.csv" "$work/ck.runs"
        rc=0; "$DOPPLER" sweep "$work/ck.json" --out "$work/ck.h5" --quiet $mode 2> "$work/ck.err" || rc=$?
        [ $rc -ne 0 ] && [ ! -e "$work/ck.h5" ] && [ ! -e "$work/ck.csv" ] && [ ! -e "$work/ck.runs" ] ||
            fail "a sweep of $grid $mode: exit $rc, results written"
        grep -q "ck.json: run [0-9a-f]* (.*): $msg.* (and $more); nothing was run or written" "$work/ck.err" ||
            { cat "$work/ck.err" >&2; fail "a sweep of $grid $mode: no message '$msg' (and $more)"; }
    done
done
# a valid cfg__ key still runs
printf '{"name": "ckok", "grid": {"graph": ["%s"], %s, "cfg__gamma": [0.5], "cfg__network__hidden": [8], "seed": [1, 2]}}\n' \
    "$GRAPH" "$dop" > "$work/ckok.json"
"$DOPPLER" sweep "$work/ckok.json" --out "$work/ckok.h5" --quiet 2> "$work/ckok.err" || { cat "$work/ckok.err" >&2; fail "a valid cfg__gamma"; }
[ "$(tail -n +2 "$work/ckok.csv" | cut -d, -f11 | tr '\n' ' ')" = "ok ok " ] || fail "a valid cfg__gamma: $(cat "$work/ckok.csv")"

# ---- a missing input stops the sweep before any run; once it is there, the rerun runs all ----
cat > "$work/miss.json" <<JSON
{"name": "miss", "fixed": {"devices": 4}, "grid": {"graph": ["$work/late.json", "$GRAPH"], "method": ["cp", "round-robin"]}}
JSON
if "$DOPPLER" sweep "$work/miss.json" --out "$work/miss.h5" 2> "$work/miss.log"; then fail "a sweep with a missing graph gave exit 0"; fi
grep -q "graph \"$work/late.json\" (named by 2 runs) is missing" "$work/miss.log" || { cat "$work/miss.log" >&2; fail "the missing graph is not named"; }
grep -q 'no run was started' "$work/miss.log" || fail "the pre-flight message does not say no run started"
[ ! -e "$work/miss.csv" ] && [ ! -e "$work/miss.h5" ] || fail "a results file was written although nothing ran"
# a folder where the graph should be is said to be one (it said "No such file or directory"),
# as graph info says, absolute or relative to the config's folder
mkdir -p "$work/late.json" "$work/dirs/adir"
if "$DOPPLER" sweep "$work/miss.json" --out "$work/miss.h5" 2> "$work/miss.log"; then fail "a sweep with a folder for a graph gave exit 0"; fi
grep -q "graph \"$work/late.json\" (named by 2 runs) cannot be read: $work/late.json: is a directory, not a file" "$work/miss.log" ||
    { cat "$work/miss.log" >&2; fail "a folder for a graph: message"; }
[ ! -e "$work/miss.csv" ] && [ ! -e "$work/miss.h5" ] || fail "a results file was written for a folder graph"
echo '{"name": "dirs", "fixed": {"graph": "adir", "method": "cp"}}' > "$work/dirs/d.json"
if (cd "$work" && "$DOPPLER" sweep dirs/d.json --out "$work/dirs.h5" 2> "$work/dirs.log"); then fail "a relative folder for a graph: exit 0"; fi
grep -q 'graph "adir" (named by 1 run) cannot be read: .*dirs/adir: is a directory, not a file' "$work/dirs.log" ||
    { cat "$work/dirs.log" >&2; fail "a relative folder for a graph: message"; }
rmdir "$work/late.json"
cp "$GRAPH" "$work/late.json"
"$DOPPLER" sweep "$work/miss.json" --out "$work/miss.h5" 2> "$work/miss2.log" || { cat "$work/miss2.log" >&2; fail "rerun after the graph appeared failed"; }
[ "$(tail -n +2 "$work/miss.csv" | cut -d, -f11 | sort | uniq -c | tr -s ' ')" = " 4 ok" ] || fail "the rerun did not complete the 4 runs"
grep -q "finished: 4 runs in $work/miss.h5 and $work/miss.csv" "$work/miss2.log" || { cat "$work/miss2.log" >&2; fail "no closing line naming the files"; }
grep -q "doppler report $work/miss.h5 --table" "$work/miss2.log" || fail "the closing line does not give the report command"
# a graph that is there but broken: the runs fail, the exit status says so and how to retry;
# after the fix a plain rerun runs the failed runs again (and --keep-failed would not)
printf '{"ops": [' > "$work/broken.json"
sed "s|$work/late.json|$work/broken.json|" "$work/miss.json" > "$work/broken-sweep.json"
if "$DOPPLER" sweep "$work/broken-sweep.json" --out "$work/broken.h5" 2> "$work/broken.log"; then fail "failed runs gave exit 0"; fi
grep -q 'run the same command again' "$work/broken.log" || { cat "$work/broken.log" >&2; fail "no line on how to retry the failures"; }
"$DOPPLER" sweep "$work/broken-sweep.json" --out "$work/broken.h5" --keep-failed 2> "$work/broken-keep.log" || true
grep -q '4 of 4 runs already in' "$work/broken-keep.log" || { cat "$work/broken-keep.log" >&2; fail "--keep-failed ran the failed runs"; }
cp "$GRAPH" "$work/broken.json"
"$DOPPLER" sweep "$work/broken-sweep.json" --out "$work/broken.h5" 2> "$work/broken2.log" || { cat "$work/broken2.log" >&2; fail "the rerun after the fix failed"; }
grep -q 'running again the 2 runs that failed before' "$work/broken2.log" || { cat "$work/broken2.log" >&2; fail "the rerun did not say it retries the failures"; }
[ "$(tail -n +2 "$work/broken.csv" | cut -d, -f11 | sort | uniq -c | tr -s ' ')" = " 4 ok" ] || fail "the failed runs were not completed"
# an --out folder that does not exist is named as such
if "$DOPPLER" sweep "$work/miss.json" --out "$work/nosuch/r.h5" 2> "$work/nodir.log"; then fail "--out in a missing folder gave exit 0"; fi
grep -q "the folder $work/nosuch does not exist" "$work/nodir.log" || { cat "$work/nodir.log" >&2; fail "no clear message for a missing --out folder"; }

# ---- a training run gives in a sweep what it gives alone ----
# (pool workers exec a fresh doppler: a forked copy of the sweep process once trained differently)
net='"cfg__network__hidden": 8, "cfg__network__mlp_hidden": 8, "cfg__network__edge_hidden": 4, "cfg__network__steps": 2'
cat > "$work/trainA.json" <<JSON
{"name": "trainA", "fixed": {"graph": "$GRAPH", "method": "doppler", "episodes_il": 30, "episodes_sim": 10, $net},
 "grid": {"seed": [1, 2, 3]}}
JSON
sed 's/\[1, 2, 3\]/[3]/; s/trainA/trainB/' "$work/trainA.json" > "$work/trainB.json"
"$DOPPLER" sweep "$work/trainA.json" --out "$work/trainA.h5" --quiet
"$DOPPLER" sweep "$work/trainB.json" --out "$work/trainB.h5" --quiet
a=$("$DOPPLER" report "$work/trainA.h5" --table runs | awk -F, 'NR == 4 {print $1, $11, $12, $15}')
b=$("$DOPPLER" report "$work/trainB.h5" --table runs | awk -F, 'NR == 2 {print $1, $11, $12, $15}')
[ -n "$a" ] && [ "$a" = "$b" ] || fail "seed 3 trained as the third run of a sweep ($a) differs from a sweep of it alone ($b)"
# a run whose results row was lost after its Stage II checkpoint (as when the sweep is killed
# then) resumes from its run folder with every figure of the run that was not: Stage I's from
# stage1.json (makespan_stage1_last, best_sample_stage1 and simulations_stage1 were lost; a review)
cp "$work/trainB.h5" "$work/trainB0.h5"
rm -f "$work/trainB.h5" "$work/trainB.csv"
"$DOPPLER" sweep "$work/trainB.json" --out "$work/trainB.h5" --quiet
"$DOPPLER" report "$work/trainB.h5" --table runs | grep -q '""resumed_in_stage"":1' || fail "the run did not resume in Stage II"
"$DOPPLER" report "$work/trainB.h5" --compare "$work/trainB0.h5" > "$work/trainB.cmp" ||
    { cat "$work/trainB.cmp"; fail "the resumed run's figures differ from the run's own"; }

# ---- an edited config without --prune: a failed run it no longer has stays, and is not "run
# again" (it was dropped without a word and counted as run again; a review) ----
cat > "$work/ed.json" <<JSON
{"name": "ed", "fixed": {"graph": "$GRAPH", "devices": 4}, "grid": [{"method": ["single"], "device": [0, 3, 7]}, {"method": ["cp"]}]}
JSON
"$DOPPLER" sweep "$work/ed.json" --out "$work/ed.h5" --quiet 2> /dev/null && fail "device 7 of 4 did not fail"
sed 's/\[0, 3, 7\]/[0, 1]/' "$work/ed.json" > "$work/ed2.json" && mv "$work/ed2.json" "$work/ed.json"
"$DOPPLER" sweep "$work/ed.json" --out "$work/ed.h5" 2> "$work/ed.err" || { cat "$work/ed.err"; fail "the edited sweep"; }
! grep -q "running again" "$work/ed.err" || { cat "$work/ed.err"; fail "the edited sweep says it runs a failed run again"; }
[ "$("$DOPPLER" report "$work/ed.h5" --table runs | awk -F, 'NR > 1 {print $11}' | sort | tr '\n' ' ')" = "failed ok ok ok ok " ] ||
    fail "the edited sweep's rows: $("$DOPPLER" report "$work/ed.h5" --table runs | cut -d, -f4,11)"

# ---- Placeto and GDP in a sweep: trained for "episodes" episodes, as `doppler place --budget` ----
cat > "$work/pt.json" <<JSON
{"name": "pt", "fixed": {"graph": "$GRAPH", "devices": 4, "episodes": 20, "seed": 2},
 "grid": {"method": ["placeto", "gdp"]}}
JSON
"$DOPPLER" sweep "$work/pt.json" --out "$work/pt.h5" --quiet
for m in placeto gdp; do
    want=$("$DOPPLER" place --graph "$GRAPH" --method $m --budget 20 --seed 2 --devices 4 --json |
           sed 's/.*"makespan":\([^,]*\),.*/\1/')
    got=$("$DOPPLER" report "$work/pt.h5" --table runs | awk -F, -v m=$m '$4 == m {print $11, $12, $15}')
    [ "$got" = "ok $(printf '%g' "$want") 20" ] || fail "$m in a sweep: $got, doppler place gives makespan $want"
done
# a learned run resumed from its run folder's checkpoint with an edited train_config is refused
# naming the key (it went on with the new values and reported the old config's result under the
# file's name: a review); with the run's config it resumes
cat > "$work/ptc.json" <<JSON
{"name": "ptc", "fixed": {"graph": "$GRAPH", "devices": 4, "episodes": 20, "seed": 2, "method": "placeto",
 "train_config": "ptc-train.json"}}
JSON
echo '{"checkpoint_every": 5}' > "$work/ptc-train.json"
"$DOPPLER" sweep "$work/ptc.json" --out "$work/ptc.h5" --quiet || fail "the placeto sweep"
rm -f "$work/ptc.h5" "$work/ptc.csv"
echo '{"checkpoint_every": 5, "gamma": 0.5}' > "$work/ptc-train.json"
"$DOPPLER" sweep "$work/ptc.json" --out "$work/ptc.h5" --quiet 2> /dev/null && fail "a resume with an edited train_config ran"
grep -q 'trained with another config: gamma 0.99.* in the checkpoint, 0.5 here.*delete the folder to run it afresh' "$work/ptc.csv" ||
    fail "the edited train_config: $(cat "$work/ptc.csv")"
rm -f "$work/ptc.h5" "$work/ptc.csv"
echo '{"checkpoint_every": 5}' > "$work/ptc-train.json"
"$DOPPLER" sweep "$work/ptc.json" --out "$work/ptc.h5" --quiet || fail "the resume with the run's train_config"
cat > "$work/ptbad.json" <<JSON
{"name": "ptbad", "fixed": {"graph": "$GRAPH", "method": "gdp", "episodes_il": 5}, "grid": {"seed": [1]}}
JSON
"$DOPPLER" sweep "$work/ptbad.json" --out "$work/ptbad.h5" 2> "$work/ptbad.log" || true
grep -q 'not used by method gdp' "$work/ptbad.log" || fail "a DOPPLER-only parameter given to gdp is not refused"

# ---- plots (when gnuplot is installed) ----
if command -v "${GNUPLOT:-gnuplot}" > /dev/null 2>&1; then
    "$DOPPLER" report "$work/grid.h5" --table main --plot bars --out "$work/bars.png"
    "$DOPPLER" report "$work/grid.h5" --plot gantt --run 0 --out "$work/gantt.svg"
    "$DOPPLER" report "$work/grid.h5" --plot scatter --x metrics.lower_bound --y makespan --out "$work/scatter.png"
    for f in bars.png scatter.png; do
        [ "$(head -c 4 "$work/$f" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "$f is not a PNG"
    done
    grep -q '<svg' "$work/gantt.svg" || fail "gantt.svg is not an SVG"
fi
# a table's footnote names its metric's own units (issue 28): a table of seconds said "units: s",
# the makespan's, and one of transfer counts the same
cat > "$work/units.json" <<EOF
{"name": "units", "grid": {"graph": ["$(cd "$top_srcdir" && pwd)/data/graphs/chainmm-small.json"], "method": ["cp", "round-robin"]},
 "tables": {"ms": {"rows": "graph", "cols": "method"}, "sec": {"rows": "graph", "cols": "method", "metric": "seconds"},
            "tr": {"rows": "graph", "cols": "method", "metric": "metrics.transfers"}}}
EOF
(cd "$work" && "$DOPPLER" sweep units.json --jobs 1 > /dev/null 2>&1) || fail "the units sweep"
"$DOPPLER" report "$work/units.h5" --table ms | tail -n 1 | grep -q 'units: s\.$' || fail "makespan table: units s"
"$DOPPLER" report "$work/units.h5" --table sec | tail -n 1 | grep -q 'units: s, wall clock\.$' ||
    { "$DOPPLER" report "$work/units.h5" --table sec; fail "a table of seconds names wall-clock seconds"; }
"$DOPPLER" report "$work/units.h5" --table tr | tail -n 1 | grep -q 'units: count\.$' ||
    { "$DOPPLER" report "$work/units.h5" --table tr; fail "a table of transfers says count"; }
# the method table decides which parameters a placement run takes (issue 28): a budget for cp was
# accepted and ignored; now the config is refused when read, naming the parameter, nothing written
cat > "$work/cpbudget.json" <<EOF
{"name": "cpbudget", "grid": {"graph": ["$(cd "$top_srcdir" && pwd)/data/graphs/chainmm-small.json"], "method": ["cp", "anneal"], "budget": [100]}}
EOF
(cd "$work" && "$DOPPLER" sweep cpbudget.json --jobs 1 > /dev/null 2> cpbudget.err) && fail "a budget for cp was accepted"
grep -q 'parameter budget: for method anneal, local, exact.*; method cp does not use it' "$work/cpbudget.err" ||
    { cat "$work/cpbudget.err"; fail "the refusal names the parameter and the methods that read it"; }
[ ! -e "$work/cpbudget.h5" ] && [ ! -e "$work/cpbudget.csv" ] || fail "a refused config wrote results"
# ---- a placement read from a file (a user's own policy's): method "assignment:NAME", its file
# from parameter "assignment" with {graph} (the graph's name, fork-join here) and {devices} replaced; the run's makespan and metrics
# are simulate --assignment's, and it sits beside the methods in the report ----
"$DOPPLER" place --graph "$GRAPH" --devices 3 --method heft --out "$work/mine-fork-join-d3.json" > /dev/null || fail "place heft --out"
want=$("$DOPPLER" simulate --graph "$GRAPH" --devices 3 --assignment "$work/mine-fork-join-d3.json" --json |
       sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p')
cat > "$work/own.json" <<JSON
{"name": "own", "fixed": {"graph": "$GRAPH", "devices": 3},
 "grid": [{"method": ["cp", "heft"]}, {"method": ["assignment:mine"], "assignment": ["mine-{graph}-d{devices}.json"]}],
 "tables": {"main": {"rows": "graph", "cols": "method", "baselines": ["cp"]}}}
JSON
"$DOPPLER" sweep "$work/own.json" --out "$work/own.h5" --quiet || fail "a sweep with a placement from a file"
got=$(awk -F, '$4 == "assignment:mine" && $11 == "ok" { print $12 }' "$work/own.csv")
[ -n "$got" ] && awk -v a="$got" -v b="$want" 'BEGIN { exit !(a == b) }' || fail "the file's run gave $got, simulate $want"
"$DOPPLER" report "$work/own.h5" --table main | grep -q 'assignment:mine / best' || fail "the report has no column for the file's placement"
# {graph_file}: the graph parameter as written, made a file name (graphs that share a name), and
# assignment_file the path of the file read
gf=$(printf '%s' "$GRAPH" | sed 's/[^A-Za-z0-9._-]/_/g')
cp "$work/mine-fork-join-d3.json" "$work/by-$gf.json"
sed 's/mine-{graph}-d{devices}/by-{graph_file}/' "$work/own.json" > "$work/own5.json"
"$DOPPLER" sweep "$work/own5.json" --out "$work/own5.h5" --quiet || fail "a sweep with {graph_file}"
got=$(awk -F, '$4 == "assignment:mine" && $11 == "ok" { print $12 }' "$work/own5.csv")
[ "$got" = "$(awk -F, '$4 == "assignment:mine" && $11 == "ok" { print $12 }' "$work/own.csv")" ] || fail "{graph_file}: $got"
grep -q "assignment_file\"\":\"\"[^\"]*/by-$gf.json" "$work/own5.csv" || fail "assignment_file is not the path read: $(cat "$work/own5.csv")"
# the parameter belongs to the file's method; a placeholder other than {graph}, {devices},
# {seed} and a missing file are refused naming them (the latter before anything runs)
sed 's/"assignment:mine"\], "assignment"/"assignment:mine"], "budget": [3], "assignment"/' "$work/own.json" > "$work/own2.json"
"$DOPPLER" sweep "$work/own2.json" --out "$work/own2.h5" --quiet 2> "$work/own2.err" && fail "a budget for a file's placement"
grep -q 'parameter "budget" is not used by method assignment:mine' "$work/own2.err" || fail "own2: $(cat "$work/own2.err")"
sed 's/mine-{graph}-d{devices}/mine-{op}/' "$work/own.json" > "$work/own3.json"
"$DOPPLER" sweep "$work/own3.json" --out "$work/own3.h5" --quiet 2> "$work/own3.err" && fail "a placeholder {op}"
grep -q 'only {graph}, {graph_file}, {devices} and {seed} are replaced' "$work/own3.err" || fail "own3: $(cat "$work/own3.err")"
sed 's/mine-{graph}-d{devices}/absent/' "$work/own.json" > "$work/own4.json"
"$DOPPLER" sweep "$work/own4.json" --out "$work/own4.h5" --quiet 2> "$work/own4.err" && fail "a missing placement file"
grep -q 'assignment "absent.json" (named by 1 run) is missing' "$work/own4.err" && [ ! -e "$work/own4.h5" ] ||
    fail "own4: $(cat "$work/own4.err")"
# a budget of 0 is refused, as place --budget 0 is (it ran the default 20,000 simulations: a review)
cat > "$work/b0.json" <<JSON
{"name": "b0", "fixed": {"graph": "$GRAPH", "method": "anneal", "budget": 0}}
JSON
"$DOPPLER" sweep "$work/b0.json" --out "$work/b0.h5" --quiet 2> /dev/null && fail "a sweep with budget 0 ran"
grep -q 'failed,.*budget.* = 0: must be >= 1' "$work/b0.csv" || fail "budget 0: $(cat "$work/b0.csv")"
# ---- a review of sweeps in pieces ----
# failed rows of runs this invocation does not run stay: another shard's (they were dropped,
# "running again the 2 runs that failed before", and never run)
cat > "$work/fs.json" <<JSON
{"name": "fs", "fixed": {"graph": "$GRAPH", "devices": 4, "method": "single"}, "grid": {"device": [0, 7, 1, 9]}}
JSON
"$DOPPLER" sweep "$work/fs.json" --out "$work/fs.h5" --quiet 2> /dev/null && fail "devices 7 and 9 of 4 ran"
[ "$(grep -c ',failed,' "$work/fs.csv")" -eq 2 ] || fail "fs: 2 failed rows: $(cat "$work/fs.csv")"
"$DOPPLER" sweep "$work/fs.json" --out "$work/fs.h5" --shard 0/2 --quiet 2> "$work/fs.err" || true
[ "$(grep -c ',failed,' "$work/fs.csv")" -eq 2 ] || fail "shard 0/2 dropped shard 1's failed rows: $(cat "$work/fs.err")"
! grep -q "running again" "$work/fs.err" || fail "shard 0/2 says it runs shard 1's failed runs again: $(cat "$work/fs.err")"
# a merge runs nothing: the output's failed rows stay unless an input has the run ok; an ok row
# wins over a failed one whatever the order of the inputs (the first seen won)
"$DOPPLER" place --graph "$GRAPH" --devices 4 --method cp --out "$work/pl-good.json" > /dev/null
cat > "$work/mg.json" <<JSON
{"name": "mg", "fixed": {"graph": "$GRAPH", "devices": 4, "method": "assignment:mine", "assignment": "pl.json"},
 "grid": {"seed": [1, 2]}}
JSON
echo '{"assignment": [0]}' > "$work/pl.json"
(cd "$work" && "$DOPPLER" sweep mg.json --out bad.h5 --quiet 2> /dev/null) && fail "a placement of one op of many ran"
cp "$work/pl-good.json" "$work/pl.json"
(cd "$work" && "$DOPPLER" sweep mg.json --out good.h5 --quiet) || fail "the good placement"
for order in "bad.h5 good.h5" "good.h5 bad.h5"; do
    rm -f "$work/m.h5" "$work/m.csv"
    # shellcheck disable=SC2086
    (cd "$work" && "$DOPPLER" sweep mg.json --merge $order --out m.h5 --quiet 2> m.err) || fail "merge $order: $(cat "$work/m.err")"
    [ "$(grep -c ',ok,' "$work/m.csv")" -eq 2 ] && ! grep -q ',failed,' "$work/m.csv" || fail "merge $order kept a failed row"
    grep -q "failed rows of the inputs are of runs another input has ok" "$work/m.err" || fail "merge $order: no note"
done
# "--out R" and "--out R.h5" share R.csv and R.runs: one lock (R.lock; R.h5.lock and R.lock let
# both write them)
cat > "$work/lk.json" <<JSON
{"name": "lk", "fixed": {"graph": "$GRAPH", "method": "random"}, "grid": {"seed": [1, 2, 3, 4, 5, 6, 7, 8]}}
JSON
python3 - "$work/lk.lock" "$DOPPLER" "$work/lk.json" "$work/lk.h5" <<'PY' || fail "a second sweep wrote R.csv under another lock"
import fcntl, subprocess, sys
with open(sys.argv[1], "w") as f:
    fcntl.flock(f, fcntl.LOCK_EX)  # a sweep of --out R holds it (R.lock)
    p = subprocess.run([sys.argv[2], "sweep", sys.argv[3], "--out", sys.argv[4], "--quiet"], capture_output=True, text=True)
    sys.exit(0 if p.returncode != 0 and "another sweep is writing" in p.stderr else 1)
PY
# --quiet drops progress lines, not the notice that the file holds rows of another grid
cat > "$work/e.json" <<JSON
{"name": "e", "fixed": {"graph": "$GRAPH", "devices": 4}, "grid": {"method": ["cp"], "seed": [1, 2]}}
JSON
"$DOPPLER" sweep "$work/e.json" --out "$work/e.h5" --quiet
sed -i 's/"devices": 4/"devices": 2/' "$work/e.json"
"$DOPPLER" sweep "$work/e.json" --out "$work/e.h5" --quiet 2> "$work/e.err"
grep -q "holds 2 rows of another grid" "$work/e.err" || fail "--quiet hid the other grid's rows: $(cat "$work/e.err")"
# a shard stopped before it wrote its last runs to the HDF5 file has them in its CSV: a merge
# takes them from there (they were "in none of the files", exit 1: a review)
cat > "$work/lag.json" <<JSON
{"name": "lag", "fixed": {"graph": "$GRAPH", "devices": 4, "method": "cp"}, "grid": {"seed": [1, 2]}}
JSON
"$DOPPLER" sweep "$work/lag.json" --out "$work/lag.h5" --quiet || fail "lag 2"
cp "$work/lag.h5" "$work/lag2.h5"
sed -i 's/"seed": \[1, 2\]/"seed": [1, 2, 3]/' "$work/lag.json"
"$DOPPLER" sweep "$work/lag.json" --out "$work/lag.h5" --quiet 2> /dev/null || fail "lag 3"
cp "$work/lag2.h5" "$work/lag.h5"   # the HDF5 file of 2 runs beside the CSV of 3
"$DOPPLER" sweep "$work/lag.json" --merge "$work/lag.h5" --out "$work/lagm.h5" --quiet 2> "$work/lag.err" ||
    fail "the merge of a shard whose HDF5 file lags its CSV: $(cat "$work/lag.err")"
[ "$(grep -c ',ok,' "$work/lagm.csv")" -eq 3 ] || fail "lag: 3 runs merged: $(cat "$work/lagm.csv")"
grep -q "merging the CSV's" "$work/lag.err" || fail "lag: no note"
# a relative graph is looked for in the working folder first: shards run from two folders read two
# files of one name, and their merge or a resume from the other folder put rows of two graphs
# under "g.json" (a review: 24 and 168 ops); each run records its file's content (graph_hash) and
# both are refused, naming the graph; from the same folder they go through
mkdir -p "$work/A" "$work/B"
cp "$GRAPH" "$work/A/g.json"
cp "$top_srcdir/data/graphs/chainmm-small.json" "$work/B/g.json"
cat > "$work/A/rel.json" <<JSON
{"name": "rel", "fixed": {"graph": "g.json", "devices": 4}, "grid": {"method": ["cp", "heft"], "seed": [1, 2]}}
JSON
(cd "$work/A" && "$DOPPLER" sweep rel.json --shard 0/2 --out ../rel0.h5 --quiet) || fail "rel shard 0"
(cd "$work/B" && "$DOPPLER" sweep ../A/rel.json --shard 1/2 --out ../rel1.h5 --quiet) || fail "rel shard 1"
grep -q 'graph_hash' "$work/rel0.csv" || fail "no graph_hash in the metrics: $(cat "$work/rel0.csv")"
"$DOPPLER" sweep "$work/A/rel.json" --merge "$work/rel0.h5" "$work/rel1.h5" --out "$work/relm.h5" --quiet 2> "$work/rel.err" &&
    fail "rows of two graph files merged under one name"
grep -q 'graph "g.json" is two different files in these results' "$work/rel.err" || fail "rel merge: $(cat "$work/rel.err")"
(cd "$work/B" && "$DOPPLER" sweep ../A/rel.json --out ../rel0.h5 --quiet 2> ../rel.err) && fail "a resume from another folder ran"
grep -q 'graph "g.json" reads .*B/g.json now' "$work/rel.err" || fail "rel resume: $(cat "$work/rel.err")"
[ "$(wc -l < "$work/rel0.csv")" -eq 3 ] || fail "the refused resume wrote rows"
(cd "$work/A" && "$DOPPLER" sweep rel.json --out ../rel0.h5 --quiet) || fail "the resume from the run's folder"
# rows that are no run of the config (another grid's, or what --prune drops) are not compared:
# the config now without g.json runs from B with its own g.json (they were refused: a review)
cat > "$work/B/rel2.json" <<JSON
{"name": "rel", "fixed": {"graph": "g.json", "devices": 4}, "grid": {"method": ["etf"], "seed": [1, 2]}}
JSON
(cd "$work/B" && "$DOPPLER" sweep rel2.json --out ../rel0.h5 --quiet 2> ../rel.err) || fail "another grid's rows refused: $(cat "$work/rel.err")"
(cd "$work/B" && "$DOPPLER" sweep rel2.json --out ../rel0.h5 --prune --quiet 2> ../rel.err) || fail "--prune refused: $(cat "$work/rel.err")"
# a merge into a file whose runs of the config read another file is refused too
(cd "$work/A" && "$DOPPLER" sweep rel.json --out ../relA.h5 --quiet) || fail "relA"
"$DOPPLER" sweep "$work/A/rel.json" --merge "$work/rel1.h5" --out "$work/relA.h5" --quiet 2> "$work/rel.err" &&
    fail "a merge into a file of the other g.json"
grep -q 'graph "g.json" is two different files in these results' "$work/rel.err" || fail "rel merge into: $(cat "$work/rel.err")"
# a bundled topology not found (the data folder unknown outside the checkout) is named with the
# folders searched and DOPPLER_DATA, as place names it (the sweep said "no bundled topology of
# that name" alone: a new researcher's trial)
mkdir -p "$work/elsewhere"
printf '{"name": "t6", "fixed": {"graph": "%s", "topology": "a100-pcie-4gpu"}, "grid": {"method": ["cp"]}}\n' \
    "$(cd "$top_srcdir" && pwd)/data/graphs/chainmm-small.json" > "$work/elsewhere/t6.json"
rc=0
bin_abs=$(cd "$top_builddir" && pwd)/doppler
(cd "$work/elsewhere" && env -u DOPPLER_DATA "$bin_abs" sweep t6.json --out r.h5) > /dev/null 2> "$work/t6.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q 'a100-pcie-4gpu: no such topology file.*looked in data/topologies.*set DOPPLER_DATA' "$work/t6.err" ||
    fail "a topology not found by a sweep outside the checkout: rc $rc, $(cat "$work/t6.err")"
echo "test_sweep_cli.sh: ok"
