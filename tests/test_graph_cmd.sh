#!/bin/sh
# End-to-end tests of doppler graph gen / convert: usage errors, generated sizes, the bundled
# graphs in data/graphs are exactly what scripts/gen-graphs.sh produces, every bundled graph
# places (critical path) and simulates, DOT output with and without an assignment, and
# conversions of the shared task-graph files when ../shared/data is present.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
# make check-valgrind sets DOPPLER_VALGRIND: every run of the command then goes through memcheck
doppler_cmd() { ${DOPPLER_VALGRIND:-} "$top_builddir/doppler" "$@"; }
D=doppler_cmd
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
field() { sed -n "s/^$1: *\([^ ]*\).*/\1/p" "$tmp/out"; }

expect_rc 0 "gen --help" "$D" graph gen --help
grep -q 'llama-layer' "$tmp/out" && grep -q -- '--partition' "$tmp/out" && ok || bad "gen --help lists models and parameters"
expect_rc 0 "gen MODEL --help" "$D" graph gen random --help
grep -q -- '--density' "$tmp/out" && ok || bad "gen random --help lists its parameters"
expect_rc 2 "gen unknown model" "$D" graph gen resnet --out "$tmp/x.json"
expect_rc 2 "gen without --out" "$D" graph gen chainmm
expect_rc 2 "gen unknown parameter" "$D" graph gen chainmm --bocks 2 --out "$tmp/x.json"
grep -q 'unknown parameter --bocks' "$tmp/err" && ok || bad "unknown parameter named"
expect_rc 2 "gen bad value" "$D" graph gen llama-block --heads 30 --out "$tmp/x.json"
grep -q 'multiple of heads' "$tmp/err" && ok || bad "bad value explained"
[ ! -e "$tmp/x.json" ] && ok || bad "no output written on error"
# an output name of no format is refused before any work, naming the command's own --to (graph gen
# said "name the format (graph convert --to, ...)" after generating; a review)
for c in "graph gen chainmm --out $tmp/c.stg" "graph convert $top_srcdir/data/graphs/chainmm-small.json $tmp/c.stg"; do
    cmd=$(echo "$c" | cut -d' ' -f1-2)
    # shellcheck disable=SC2086
    expect_rc 2 "$c" "$D" $c
    grep -q "^doppler $cmd: .*c.stg: cannot tell the output format from the file name (.json, .dot or .txt): give --to json, dot or doppler" "$tmp/err" &&
        ! grep -q "graph convert --to" "$tmp/err" && [ ! -e "$tmp/c.stg" ] && ok || bad "$c: $(cat "$tmp/err")"
done
expect_rc 0 "gen --to dot to any name" "$D" graph gen chainmm --out "$tmp/c.stg" --to dot
grep -q 'digraph' "$tmp/c.stg" && ok || bad "gen --to dot: DOT written"

expect_rc 0 "gen chainmm 2d" "$D" graph gen chainmm --matrices 3 --n 64 --blocks 4 --partition 2d --out "$tmp/c2.json"
expect_rc 0 "info" "$D" graph info "$tmp/c2.json"
[ "$(field ops)" = 32 ] && [ "$(field edges)" = 64 ] && ok || bad "2D ChainMM of 3 matrices in 4x4 blocks: 32 ops, 64 edges"
expect_rc 0 "gen random key=value" "$D" graph gen random --n=300 --seed=3 --out "$tmp/r.json"
expect_rc 0 "info random" "$D" graph info "$tmp/r.json"
[ "$(field ops)" = 300 ] && ok || bad "random --n=300 gives 300 ops"
expect_rc 0 "gen to dot" "$D" graph gen ffnn --layers 1 --out-features 8192 --out "$tmp/f.dot"
grep -q 'digraph' "$tmp/f.dot" && ok || bad "DOT written"

# training graphs (issue 30): --training alone is a flag; the 2-matrix ChainMM unblocked has the
# forward product, the loss's gradient, the two transposed products and two Adam updates:
# 128 + 16 + 2 x 128 + 2 x 12 x 16 = 784 FLOPs (tests/test_gen.c checks each op)
expect_rc 0 "gen --training" "$D" graph gen chainmm --matrices 2 --n 4 --blocks 1 --training --out "$tmp/ct.json"
grep -q '6 ops, 5 edges, total work 784 FLOPs' "$tmp/out" && ok || { bad "2-matrix ChainMM training graph: 6 ops, 5 edges, 784 FLOPs"; cat "$tmp/out"; }
expect_rc 0 "gen --training=no" "$D" graph gen chainmm --matrices 2 --n 4 --blocks 1 --training=no --optimizer sgd --out "$tmp/cf.json"
grep -q '1 ops, 0 edges, total work 128 FLOPs' "$tmp/out" && ok || bad "--training=no gives the forward graph"
expect_rc 0 "gen --training --optimizer sgd" "$D" graph gen chainmm --matrices 2 --n 4 --blocks 1 --training --optimizer sgd --out "$tmp/cs.json"
grep -q 'train_sgd, 6 ops, 5 edges, total work 464 FLOPs' "$tmp/out" && ok || bad "SGD updates: 2 FLOPs per element"
expect_rc 2 "gen --training=maybe" "$D" graph gen ffnn --training=maybe --out "$tmp/y.json"
grep -q -- '--training: expected yes or no' "$tmp/err" && ok || bad "bad --training value explained"
expect_rc 2 "gen --training VALUE" "$D" graph gen ffnn --training yes --out "$tmp/y.json"
grep -q "unexpected argument 'yes'" "$tmp/err" && ok || bad "--training takes no separate value"
[ ! -e "$tmp/y.json" ] && ok || bad "no training graph written on error"
expect_rc 0 "gen llama-layer --training" "$D" graph gen llama-layer --layers 2 --tp 8 --training --out "$tmp/lt.json"
expect_rc 0 "place a training graph" "$D" place --graph "$tmp/lt.json" --method cp --devices 8

# the bundled graphs are reproducible and place + simulate on 4 devices
mkdir "$tmp/graphs"
expect_rc 0 "gen-graphs.sh" sh "$top_srcdir/scripts/gen-graphs.sh" "$top_builddir/doppler" "$tmp/graphs"
n=0
for f in "$tmp"/graphs/*.json; do
    b=$(basename "$f")
    n=$((n + 1))
    cmp -s "$f" "$top_srcdir/data/graphs/$b" && ok || bad "data/graphs/$b differs from what gen-graphs.sh makes (run make graphs)"
    expect_rc 0 "place cp $b" "$D" place --graph "$top_srcdir/data/graphs/$b" --devices 4 --method cp
    grep -q '^makespan: [0-9]' "$tmp/out" && ok || bad "place cp $b prints a makespan"
    # on bundled machines: a 4-GPU PCIe box, and an 8-GPU DGX-1 for the 8-way variants
    case "$b" in *tp8*) topo=dgx1-v100 ;; *) topo=pcie-gen3-4gpu ;; esac
    expect_rc 0 "place cp $b on $topo" "$D" place --graph "$top_srcdir/data/graphs/$b" --topology "$topo" --method cp \
        --transfer-model maxmin
    grep -q '^makespan: [0-9]' "$tmp/out" && ok || bad "place cp $b on $topo prints a makespan"
done
[ "$n" -ge 7 ] && ok || bad "gen-graphs.sh made $n graphs"

# convert: JSON -> DOT -> (time graph) with the same structure; DOT with an assignment
S="$top_srcdir/data/graphs/chainmm-small.json"
expect_rc 0 "convert to dot" "$D" graph convert "$S" "$tmp/s.dot"
expect_rc 0 "info dot" "$D" graph info "$tmp/s.dot"
[ "$(field ops)" = 24 ] && [ "$(field edges)" = 24 ] && ok || bad "DOT of chainmm-small reads back with 24 ops, 24 edges"
expect_rc 0 "place for clusters" "$D" place --graph "$S" --method round-robin --out "$tmp/a.json"
expect_rc 0 "convert with assignment" "$D" graph convert "$S" "$tmp/a.dot" --assignment "$tmp/a.json"
grep -q 'cluster_device3' "$tmp/a.dot" && ok || bad "assignment clusters written"
expect_rc 2 "assignment needs dot" "$D" graph convert "$S" "$tmp/a2.json" --assignment "$tmp/a.json"
# --devices without --assignment: a usage error (accepted and ignored: a review)
expect_rc 2 "convert --devices without an assignment" "$D" graph convert "$S" "$tmp/a3.dot" --devices 3
expect_rc 2 "convert one file" "$D" graph convert "$S"
# an output name of no format: a usage error before reading, as --to bogus (exit 1 once read)
expect_rc 2 "convert unknown output" "$D" graph convert "$S" "$tmp/s.yaml"
expect_rc 1 "wf-bandwidth on a native file" "$D" graph convert "$S" "$tmp/w.json" --wf-bandwidth 1e9
grep -q -- '--wf-bandwidth reads a WfCommons workflow (JSON)' "$tmp/err" && ok || bad "wf-bandwidth on a native file: $(cat "$tmp/err")"
# a heterogeneous example's lower bound counts the compute streams (--streams 2): four tasks of 10
# on two processors run in 10, and the bound said 20 (work over devices, not streams: a review)
mkdir -p "$tmp/het"
printf 'TP,P_0,P_1\nT_0,10,10\nT_1,10,10\nT_2,10,10\nT_3,10,10\n' > "$tmp/het/ind_task_exe_time.csv"
printf 'T,T_0,T_1,T_2,T_3\nT_0,0,0,0,0\nT_1,0,0,0,0\nT_2,0,0,0,0\nT_3,0,0,0,0\n' > "$tmp/het/ind_task_connectivity.csv"
printf 'P,P_0,P_1\nP_0,0,1\nP_1,1,0\nStartup,0,0\n' > "$tmp/het/ind_resource_BW.csv"
expect_rc 0 "graph info of an example, 2 streams" "$D" graph info "$tmp/het/ind_task_exe_time.csv" --streams 2
grep -q '^lower bound: *10 ' "$tmp/out" && ok || bad "the example's bound with 2 streams: $(grep 'lower bound' "$tmp/out")"
expect_rc 0 "place an example, 2 streams" "$D" place --graph "$tmp/het/ind_task_exe_time.csv" --method round-robin --streams 2 --json
grep -q '"makespan":10\(\.0\)*[,}]' "$tmp/out" && ok || bad "the example on 2 streams: $(cat "$tmp/out")"
# another --format with --wf-bandwidth is a usage error (it was read as WfCommons all the same)
expect_rc 2 "wf-bandwidth with --format msr" "$D" graph convert "$S" "$tmp/w.json" --format msr --wf-bandwidth 1e9

# a graph made for a device count: gen --tp 8 records it, place defaults to it and warns when
# --devices says otherwise (the 8-GPU Llama layer on the old default of 4 gave another makespan)
expect_rc 0 "gen llama-layer --tp 8" "$D" graph gen llama-layer --tp 8 --out "$tmp/l8.json"
grep -q '"devices": 8' "$tmp/l8.json" && ok || bad "gen --tp 8 does not record 8 devices in the JSON"
expect_rc 0 "place tp8 default devices" "$D" place --graph "$tmp/l8.json" --method cp
grep -q ', 8 devices, cp' "$tmp/out" && ok || bad "a --tp 8 graph is not placed on 8 devices by default"
grep -q 'warning' "$tmp/err" && bad "a warning without --devices" || ok
expect_rc 0 "place tp8 on 4" "$D" place --graph "$tmp/l8.json" --method cp --devices 4
grep -q ', 4 devices, cp' "$tmp/out" && ok || bad "--devices 4 not obeyed"
grep -q 'was made for 8 devices; placing it on 4' "$tmp/err" && ok || bad "no warning for --devices 4 on an 8-device graph"
printf '{"format": "doppler-graph", "version": 1, "cost_kind": "time", "devices": 0, "ops": [{"name": "a", "time": 1}], "edges": []}' > "$tmp/d0.json"
expect_rc 1 "devices 0 refused" "$D" graph info "$tmp/d0.json"
grep -q 'field "devices" must be an integer 1..4096' "$tmp/err" && ok || bad "a bad devices field is not named"

# graph info reads the heterogeneous examples place reads (heft-in, heft-csv), with their own
# processors: the HEFT paper's 10-task example, whose upward rank of task 1 is 108
cat > "$tmp/paper.in" <<'EOF'
10
15
3
1 2 18
1 3 12
1 4 9
1 5 11
1 6 14
2 8 19
2 9 16
3 7 23
4 8 27
4 9 23
5 9 13
6 8 15
7 10 17
8 10 11
9 10 13
14 16 9
13 19 18
11 13 19
13 8 17
12 13 10
13 16 9
7 15 11
5 11 14
18 12 20
21 7 16
1 2 1
1 3 1
2 3 1
EOF
expect_rc 0 "info .in" "$D" graph info "$tmp/paper.in"
[ "$(field ops)" = 10 ] && [ "$(field edges)" = 15 ] && [ "$(field devices)" = 3 ] && ok || bad "info .in: 10 ops, 15 edges, 3 devices"
[ "$(field 'critical path')" = 108 ] && ok || bad "info .in: critical path 108 (the paper's rank_u of task 1): $(field 'critical path')"
cp "$tmp/paper.in" "$tmp/paper.txt"
expect_rc 0 "info --format heft-in" "$D" graph info --format heft-in "$tmp/paper.txt"
[ "$(field ops)" = 10 ] && ok || bad "info --format heft-in: 10 ops"
expect_rc 0 "place --format heft-in" "$D" place --format heft-in --graph "$tmp/paper.txt" --method heft
grep -q "^makespan: 80 " "$tmp/out" && ok || bad "place --format heft-in: HEFT's makespan 80"
expect_rc 1 "info .in --devices" "$D" graph info --devices 3 "$tmp/paper.in"
grep -q "fixes the machine" "$tmp/err" && ok || bad "info .in --devices: message"
# a comm ratio on a heterogeneous example is refused (it was ignored without a word), as devices
# and a topology are; and "single device" is the simulated makespan of every op on device 0 (the
# sum of op times: 3 streams ran them in 117 where info said 298: a review)
for c in "graph info --comm-ratio 4 $tmp/paper.in" "place --comm-ratio 4 --graph $tmp/paper.in --method cp"; do
    # shellcheck disable=SC2086
    expect_rc 1 "$c" "$D" $c
    grep -q "fixes the machine.*comm_ratio does not apply" "$tmp/err" && ok || bad "$c: $(cat "$tmp/err")"
done
expect_rc 0 "info .in --streams 3" "$D" graph info --streams 3 "$tmp/paper.in"
s3=$(field 'single device')
expect_rc 0 "place .in single --streams 3" "$D" place --graph "$tmp/paper.in" --method single --streams 3
[ -n "$s3" ] && grep -q "^makespan: $s3 " "$tmp/out" && ok || bad "info --streams 3: single device $s3, place single: $(grep ^makespan "$tmp/out")"
# a HEFT CSV triple whose labels are quoted in one file and not in the other (R's write.csv quotes
# them) is one machine: the connectivity's "T0" was refused against the execution times' T_0
printf 'TP,P_0,P_1\nT_0,1,2\nT_1,3,4\n' > "$tmp/q_task_exe_time.csv"
printf '"T","T0","T1"\n"T0",0,5\n"T1",0,0\n' > "$tmp/q_task_connectivity.csv"
expect_rc 0 "info a HEFT CSV pair with quoted labels in one file" "$D" graph info "$tmp/q_task_exe_time.csv"
[ "$(field edges)" = 1 ] && ok || bad "info a HEFT CSV pair with quoted labels: $(cat "$tmp/out")"
# a label is shown in a message with its control bytes escaped: one holding ESC [ 3 1 m and a
# carriage return was echoed raw (the terminal turned red, the line was overwritten)
printf 'T,T0,T\033[31m\r1\nT0,0,5\nT1,0,0\n' > "$tmp/q_task_connectivity.csv"
expect_rc 1 "info a HEFT CSV with a control byte in a label" "$D" graph info "$tmp/q_task_exe_time.csv"
[ "$(tr -d '\033\r' < "$tmp/err" | wc -c)" -eq "$(wc -c < "$tmp/err")" ] && ok || bad "a label's ESC or CR printed raw"
grep -q 'q_task_connectivity.csv:1: column 3 is labelled "T\\x1b\[31m\\r1"' "$tmp/err" && ok ||
    bad "a label with control bytes: $(od -c "$tmp/err" | head -n 8)"
printf '"T","T0","T1"\n"T0",0,5\n"T1",0,0\n' > "$tmp/q_task_connectivity.csv"
# numbers are decimal, subnormal ones included: "1e-308" was refused ("expected the data volume"),
# while C's hexadecimal "0x2" and "0x1p3" were read (tests/bad-hetero/hex-*)
printf '2 1 2\n1 2 1e-308\n1 2\n3 4\n1 2 1e-308\n' > "$tmp/sub.in"
expect_rc 0 "info .in with subnormal numbers" "$D" graph info "$tmp/sub.in"
[ "$(field edges)" = 1 ] && ok || bad "info .in with subnormal numbers: $(cat "$tmp/out")"
# an example whose transfers overflow (a rate of 1e-300) is refused when read, as place refused it:
# info printed "critical path: 5e+300" and "single device: over the memory limit", exit 0
for f in tiny-rate.in tiny-rate_task_exe_time.csv; do
    expect_rc 1 "info $f" "$D" graph info "$top_srcdir/tests/bad-hetero/$f"
    grep -q "$f: .*a makespan would overflow" "$tmp/err" && ok || bad "info $f: message $(cat "$tmp/err")"
    ! grep -q "critical path\|memory limit" "$tmp/out" && ok || bad "info $f: printed $(cat "$tmp/out")"
done
expect_rc 1 "convert .in" "$D" graph convert "$tmp/paper.in" "$tmp/paper.json"
grep -q "format heft-in" "$tmp/err" && ok || bad "convert .in: names the format"
# a HEFT example is told by its name (dp_graph_hetero_format) wherever a graph is read, as place
# tells it: train said "cannot tell the graph format from the file name; give --format" of a CSV
# triple, and with --format heft-csv refused it as an example; its --help said "any format doppler
# place reads" (a review)
for c in "train --graph $tmp/q_task_exe_time.csv --episodes 1" "train --format heft-csv --graph $tmp/q_task_exe_time.csv --episodes 1" \
         "train --graph $tmp/paper.in --episodes 1" "graph convert $tmp/q_task_exe_time.csv $tmp/q.json"; do
    # shellcheck disable=SC2086
    expect_rc 1 "$c" "$D" $c
    grep -q "a HEFT example (format heft-[a-z]*) carries its own processors" "$tmp/err" && ok || bad "$c: $(cat "$tmp/err")"
done
expect_rc 0 "train --help" "$D" train --help
tr -s ' \n' '  ' < "$tmp/out" | grep -q -- "--graph FILE the dataflow graph, in a graph format .*; not the heterogeneous examples .*heft-in, heft-csv" &&
    ! grep -q "any format doppler place reads" "$tmp/out" && ok || bad "train --help: --graph names the formats it does not take"

# CPOP's append-only mode and tie order from the command line: 18 tasks of one priority (a fork of
# 8 chains of 2, nedjulius-experiments/3-2): lowest id first gives 65, a C++ priority queue's
# order with appending gives that implementation's 60
{
    echo 18; echo 24; echo 2
    for v in 2 3 4 5 6 7 8 9; do echo "1 $v 10"; done
    for v in 2 3 4 5 6 7 8 9; do echo "$v $((v + 8)) 10"; done
    for v in 10 11 12 13 14 15 16 17; do echo "$v 18 10"; done
    for v in $(seq 18); do echo "5 5"; done
    echo "1 2 1"
} > "$tmp/ties.in"
expect_rc 0 "cpop by id" "$D" place --graph "$tmp/ties.in" --method cpop
grep -q "^schedule length (cpop's own schedule, not simulated): 65 " "$tmp/out" && ok || bad "cpop by id: 65"
expect_rc 0 "cpop append, heap ties" "$D" place --graph "$tmp/ties.in" --method cpop --append-only --ties heap
grep -q "^schedule length (cpop's own schedule, not simulated): 60 " "$tmp/out" && ok || bad "cpop --append-only --ties heap: 60"
expect_rc 2 "--ties unknown" "$D" place --graph "$tmp/ties.in" --method cpop --ties random

# shared task graphs: only when present, unless DOPPLER_REQUIRE_SHARED_DATA=1 (CI) makes them required
SH=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
if [ "${DOPPLER_REQUIRE_SHARED_DATA:-0}" = 1 ]; then
    [ -f "$SH/stg/50/rand0000.stg" ] || bad "$SH/stg/50/rand0000.stg absent and DOPPLER_REQUIRE_SHARED_DATA=1"
    [ -f "$SH/wfcommons/helloworld-chain-5-chameleon.json" ] ||
        bad "$SH/wfcommons/helloworld-chain-5-chameleon.json absent and DOPPLER_REQUIRE_SHARED_DATA=1"
fi
if [ -f "$SH/stg/50/rand0000.stg" ]; then
    expect_rc 0 "convert stg" "$D" graph convert "$SH/stg/50/rand0000.stg" "$tmp/stg.json"
    expect_rc 0 "info stg json" "$D" graph info "$tmp/stg.json"
    [ "$(field ops)" = 50 ] && [ "$(field edges)" = 96 ] && ok || bad "rand0000: 50 ops, 96 edges after conversion"
fi
if [ -f "$SH/doppler-graphs/8gpu_full_transformer.txt" ]; then
    expect_rc 0 "place 8gpu file" "$D" place --graph "$SH/doppler-graphs/8gpu_full_transformer.txt" --method cp
    grep -q ', 8 devices, cp' "$tmp/out" && grep -q '^makespan: 272.8' "$tmp/out" && ok || bad "8gpu_full_transformer: cp on 8 devices by default, 272.8"
fi
if [ -f "$SH/wfcommons/helloworld-chain-5-chameleon.json" ]; then
    expect_rc 0 "convert wfcommons" "$D" graph convert "$SH/wfcommons/helloworld-chain-5-chameleon.json" "$tmp/wf.json" --wf-bandwidth 1
    grep -q '"comm": 16666667' "$tmp/wf.json" && ok || bad "helloworld chain: an edge of 16666667 bytes at 1 B/s"
fi

# the training corpus's generators (issue 29): each writes a graph; the task-graph ones write
# DOPPLER's .txt too, which reads back as the same graph
for m in stg layered forkjoin seriesparallel workflow cnn rnn transformer moe; do
    expect_rc 0 "gen $m" "$D" graph gen $m --out "$tmp/g-$m.json"
done
expect_rc 0 "gen forkjoin 2 branches" "$D" graph gen forkjoin --stages 1 --branches 2 --length 1 --out "$tmp/fj.json"
expect_rc 0 "info forkjoin" "$D" graph info "$tmp/fj.json"
[ "$(field ops)" = 4 ] && [ "$(field edges)" = 4 ] && ok || bad "fork-join of 2 branches of 1 task: 4 ops, 4 edges"
expect_rc 2 "gen stg bad method" "$D" graph gen stg --method fifo --out "$tmp/bad.json"
grep -q 'expected one of sameprob' "$tmp/err" && ok || bad "stg --method: the methods listed"
expect_rc 0 "gen stg .txt" "$D" graph gen stg --n 60 --ccr 2 --out "$tmp/stg60.txt"
expect_rc 0 "info stg .txt" "$D" graph info "$tmp/stg60.txt"
h1=$(field "content hash")
expect_rc 0 "info stg .json" "$D" graph gen stg --n 60 --ccr 2 --out "$tmp/stg60.json"
expect_rc 0 "info stg .json" "$D" graph info "$tmp/stg60.json"
[ -n "$h1" ] && [ "$(field "content hash")" = "$h1" ] && ok || bad "a generated STG graph: the same content as DOPPLER text and JSON"
expect_rc 1 "gen cnn .txt" "$D" graph gen cnn --out "$tmp/cnn.txt"
grep -q 'FLOPs and bytes' "$tmp/err" && [ ! -e "$tmp/cnn.txt" ] && ok || bad "a FLOPs-and-bytes graph is refused as DOPPLER text, nothing written"
# converted: the refusal is the input graph's, named with the file it was read from (it read
# "ff.txt: graph ffnn is in FLOPs and bytes", as if ff.txt were at fault: a walkthrough)
expect_rc 1 "convert ffnn .txt" "$D" graph convert "$top_srcdir/data/graphs/ffnn.json" "$tmp/ff.txt"
grep -q "ff.txt: cannot write graph ffnn (read from .*data/graphs/ffnn.json) in DOPPLER's format: its costs are FLOPs and bytes" "$tmp/err" &&
    [ ! -e "$tmp/ff.txt" ] && ok || bad "convert of a FLOPs-and-bytes graph to .txt: $(cat "$tmp/err")"

# graph convert to DOPPLER's .txt: an STG graph under --comm-ratio 4 (DOPPLER's rule) places as
# the STG file does under place --comm-ratio 4: the same assignment, the makespan / 1e10
printf '4\n0 0 0\n1 3 1 0\n2 5 1 0\n3 2 1 1\n4 7 3 1 2 3\n5 0 1 4\n' > "$tmp/t.stg"
expect_rc 0 "convert stg --comm-ratio" "$D" graph convert "$tmp/t.stg" --out "$tmp/t4.txt" --comm-ratio 4
[ "$(tail -n 4 "$tmp/t4.txt" | tr '\n' ' ')" = "3,12 5,20 2,8 7,28 " ] && ok || bad "comm = 4 x comp on every op line"
expect_rc 0 "place stg ratio 4" "$D" place --graph "$tmp/t.stg" --comm-ratio 4 --devices 2 --method heft --out "$tmp/a1.json" --json
m1=$(sed -n 's/.*"makespan":\([^,]*\),.*/\1/p' "$tmp/out")
expect_rc 0 "place converted" "$D" place --graph "$tmp/t4.txt" --devices 2 --method heft --out "$tmp/a2.json" --json
m2=$(sed -n 's/.*"makespan":\([^,]*\),.*/\1/p' "$tmp/out")
d1=$(sed -n 's/.*"devices":\(\[[^]]*\]\).*/\1/p' "$tmp/a1.json")
[ -n "$d1" ] && [ "$d1" = "$(sed -n 's/.*"devices":\(\[[^]]*\]\).*/\1/p' "$tmp/a2.json")" ] && ok ||
    bad "the converted graph gets the same heft assignment"
awk -v a="$m1" -v b="$m2" 'BEGIN { d = a - b * 1e10; exit !(a > 0 && d < 1e-9 * a && -d < 1e-9 * a) }' && ok ||
    bad "converted makespan $m2 x 1e10 is not the STG makespan $m1"
expect_rc 1 "convert ratio 0.5" "$D" graph convert "$tmp/t.stg" --out "$tmp/t05.txt" --comm-ratio 0.5
grep -q 'not a whole number' "$tmp/err" && [ ! -e "$tmp/t05.txt" ] && ok || bad "a fractional time is refused, nothing written"
expect_rc 0 "convert ratio 0.5 scaled" "$D" graph convert "$tmp/t.stg" --out "$tmp/t05.txt" --comm-ratio 0.5 --time-scale 2
expect_rc 2 "convert ratio to json" "$D" graph convert "$tmp/t.stg" --out "$tmp/t.json" --comm-ratio 4
expect_rc 2 "convert OUT twice" "$D" graph convert "$tmp/t.stg" "$tmp/x.txt" --out "$tmp/y.txt"
if [ -f "$SH/doppler-graphs/ffnn_192nodes.txt" ]; then
    for f in "$SH"/doppler-graphs/*.txt; do
        b=$(basename "$f")
        expect_rc 0 "info $b" "$D" graph info "$f"
        h=$(field "content hash")
        expect_rc 0 "convert $b" "$D" graph convert "$f" --out "$tmp/rt-$b"
        expect_rc 0 "info converted $b" "$D" graph info "$tmp/rt-$b"
        [ "$(field "content hash")" = "$h" ] && ok || bad "$b: DOPPLER text written back is the same graph"
        # and as DOT: weights of 1e+12 file units are quoted IDs (DOT numerals have no exponent;
        # the reader refused "Weight=1e+12" the writer had written, on 5 of the 10 files)
        expect_rc 0 "convert $b to dot" "$D" graph convert "$f" --out "$tmp/rt-$b.dot"
        expect_rc 0 "info $b as dot" "$D" graph info "$tmp/rt-$b.dot"
        [ "$(field "content hash")" = "$h" ] && ok || bad "$b: DOT written back is the same graph"
    done
    # a DOPPLER file's op label is in DOPPLER units (100, not the file's 1e+12)
    grep -q 'label="op0\\n[^"]*\\n100 DOPPLER units' "$tmp/rt-chain_mm_112nodes.txt.dot" && ok ||
        bad "DOT label of a DOPPLER file's op: $(grep -m1 'label=' "$tmp/rt-chain_mm_112nodes.txt.dot")"
fi

# a graph in FLOPs and bytes written as DOT reads back as the same graph (issue 33: its FLOPs and
# bytes were read back as times, the transfers all but vanished): the same makespan, to the last bit
chain="$top_srcdir/data/graphs/chainmm-small.json"
expect_rc 0 "convert FLOPs-and-bytes graph to dot" "$D" graph convert "$chain" "$tmp/rt.dot"
grep -q 'doppler_costs="flops-bytes"' "$tmp/rt.dot" && ok || bad "the DOT file says its costs are FLOPs and bytes"
a=$("$D" place --graph "$chain" --method cp --json | sed -n 's/.*"makespan":\([^,]*\).*/\1/p')
b=$("$D" place --graph "$tmp/rt.dot" --method cp --json | sed -n 's/.*"makespan":\([^,]*\).*/\1/p')
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "the DOT round trip changes the makespan: $a against $b"
sed 's/doppler_costs="flops-bytes"/doppler_costs="kg"/' "$tmp/rt.dot" > "$tmp/bad.dot"
expect_rc 1 "a bad doppler_costs" "$D" place --graph "$tmp/bad.dot" --method cp
grep -q 'doppler_costs must be' "$tmp/err" && ok || bad "a bad doppler_costs is named"

# what DOT lost (a review of the eighteenth session): an op's output bytes (a sink's, on a
# topology), the printed unit and the device count, the op order under --assignment; the bracket
# form of graph attributes was ignored; a strict digraph's repeats were kept silently; names with
# backslashes changed
expect_rc 0 "convert to json" "$D" graph convert "$tmp/rt.dot" "$tmp/rt-back.json"
a=$("$D" place --graph "$chain" --topology a100-pcie-4gpu --method cp --json | sed -n 's/.*"makespan":\([^,]*\).*/\1/p')
b=$("$D" place --graph "$tmp/rt.dot" --topology a100-pcie-4gpu --method cp --json | sed -n 's/.*"makespan":\([^,]*\).*/\1/p')
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "DOT round trip on a topology (out bytes): $a against $b"
llama="$top_srcdir/data/graphs/llama-block-tp8.json"
expect_rc 0 "convert an 8-device graph to dot" "$D" graph convert "$llama" "$tmp/l8.dot"
a=$("$D" place --graph "$llama" --method cp --json | sed -n 's/.*"n_devices":\([0-9]*\).*"makespan":\([^,]*\).*"units":"\([^"]*\)".*/\1 \2 \3/p')
b=$("$D" place --graph "$tmp/l8.dot" --method cp --json | sed -n 's/.*"n_devices":\([0-9]*\).*"makespan":\([^,]*\).*"units":"\([^"]*\)".*/\1 \2 \3/p')
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "DOT round trip: devices, makespan, unit: $a against $b"
printf '[%s]\n' "$(awk 'BEGIN { for (i = 0; i < 24; i++) printf "%s%d", i ? "," : "", (i * 7) % 3 }')" > "$tmp/asg3.json"
expect_rc 0 "dot with an assignment" "$D" graph convert "$chain" "$tmp/as.dot" --assignment "$tmp/asg3.json"
a=$("$D" simulate --graph "$chain" --devices 3 --assignment "$tmp/asg3.json" --json | sed -n 's/.*"makespan":\([^,]*\).*/\1/p')
b=$("$D" simulate --graph "$tmp/as.dot" --devices 3 --assignment "$tmp/asg3.json" --json | sed -n 's/.*"makespan":\([^,]*\).*/\1/p')
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "DOT with clusters keeps the op order: $a against $b"
printf 'digraph g {\n  graph [doppler_costs="flops-bytes"];\n  a [Weight=2000000000, out_bytes=8];\n  b [Weight=1000000000];\n  a -> b [Weight=4000000];\n}\n' > "$tmp/ga.dot"
expect_rc 0 "graph [attr] form" "$D" graph info "$tmp/ga.dot"
grep -q "FLOPs and bytes" "$tmp/out" && ok || bad "graph [doppler_costs=...] read: $(cat "$tmp/out")"
printf 'strict digraph g {\n  a [Weight=1]; b [Weight=1];\n  a -> b [Weight=3];\n  a -> b [Weight=5];\n}\n' > "$tmp/st.dot"
expect_rc 1 "strict digraph with a repeated edge" "$D" graph info "$tmp/st.dot"
grep -q "strict digraph merges the repeated edge a -> b" "$tmp/err" && ok || bad "strict repeat: $(cat "$tmp/err")"
printf '{"name": "bs", "cost_kind": "time", "ops": [{"name": "a\\\\b", "kind": "k\\nx", "time": 1}, {"name": "c", "time": 1}], "edges": [{"src": 0, "dst": 1, "size": 1}]}\n' > "$tmp/bs.json"
expect_rc 0 "backslash names to dot" "$D" graph convert "$tmp/bs.json" "$tmp/bs.dot"
expect_rc 0 "and back" "$D" graph convert "$tmp/bs.dot" "$tmp/bs2.json"
grep -q '"a\\\\b"' "$tmp/bs2.json" && grep -q '"k\\nx"' "$tmp/bs2.json" && ok ||
    bad "backslash and newline through DOT: $(cat "$tmp/bs2.json")"

# .txt has no device count: converting an 8-device graph to a file not named 8gpu_* says so
printf '{"name": "d8", "cost_kind": "time", "devices": 8, "ops": [{"name": "a", "time": 2}, {"name": "b", "time": 3}], "edges": [{"src": 0, "dst": 1, "size": 4}]}\n' > "$tmp/d8.json"
expect_rc 0 "8-device graph to .txt" "$D" graph convert "$tmp/d8.json" "$tmp/l8.txt"
grep -q "made for 8 devices" "$tmp/err" && ok || bad "no note on the lost device count: $(cat "$tmp/err")"
expect_rc 0 "8-device graph to 8gpu_.txt" "$D" graph convert "$tmp/d8.json" "$tmp/8gpu_l8.txt"
[ ! -s "$tmp/err" ] && ok || bad "a note for an 8gpu_ file: $(cat "$tmp/err")"

# a review of the twentieth session: each of these held the wrong value before its fix
# (1) R x comp x S whole but for rounding: 0.1 x 3 x 10 came out 3.0000000000000004, refused
expect_rc 0 "convert ratio 0.1 scaled 10" "$D" graph convert "$tmp/t.stg" --out "$tmp/t01.txt" --comm-ratio 0.1 --time-scale 10
[ "$(tail -n 4 "$tmp/t01.txt" | tr '\n' ' ')" = "30,3 50,5 20,2 70,7 " ] && ok || bad "comm = 0.1 x comp: $(tail -n 4 "$tmp/t01.txt" | tr '\n' ' ')"
# (2) a DOPPLER cost above 2^53 was read as a nearby other number, and written back as that one
printf '3\n\n0,1\n2,2\n9007199254740993,6\n4,8\n2,4' > "$tmp/p53.txt"
expect_rc 1 "a cost above 2^53" "$D" graph info "$tmp/p53.txt"
grep -q 'p53.txt:5:1: computation cost 9007199254740993 is above 2^53' "$tmp/err" && ok || bad "above 2^53: $(cat "$tmp/err")"
printf '3\n\n0,1\n2,2\n9007199254740992,6\n4,8\n2,4' > "$tmp/p52.txt"
expect_rc 0 "a cost of 2^53" "$D" graph info "$tmp/p52.txt"
# (3) a time unit ending in a backslash was written to DOT, which its reader then refused
printf '{"name": "g", "cost_kind": "time", "time_unit": "u\\\\", "ops": [{"name": "a", "time": 1}], "edges": []}' > "$tmp/tu.json"
expect_rc 1 "a time unit ending in a backslash to dot" "$D" graph convert "$tmp/tu.json" "$tmp/tu.dot"
grep -q 'time unit "u\\" has a backslash (an odd run of them) at its end' "$tmp/err" && [ ! -e "$tmp/tu.dot" ] && ok || bad "time unit backslash: $(cat "$tmp/err")"
# (4) one device limit for every reader: JSON took 100000 (then a message naming no file), DOT
# 65536 and 0
printf '{"devices": 100000, "cost_kind": "time", "ops": [{"name": "a", "time": 1}], "edges": []}' > "$tmp/dv.json"
expect_rc 1 "devices above the machine's limit" "$D" graph info "$tmp/dv.json"
grep -q 'dv.json: field "devices" must be an integer 1..4096' "$tmp/err" && ok || bad "JSON devices: $(cat "$tmp/err")"
printf 'digraph g {\n  doppler_devices=0;\n  a [Weight=1];\n}\n' > "$tmp/dv0.dot"
expect_rc 1 "doppler_devices 0" "$D" graph info "$tmp/dv0.dot"
grep -q 'dv0.dot:2: doppler_devices must be a whole number 1..4096' "$tmp/err" && ok || bad "DOT devices: $(cat "$tmp/err")"
# (5) place --out or --trace naming the graph replaced it, exit 0
cp "$top_srcdir/data/graphs/chainmm-small.json" "$tmp/own.json"
expect_rc 2 "place --out onto its graph" "$D" place --graph "$tmp/own.json" --method heft --out "$tmp/own.json"
grep -q -- '--out names the file of --graph' "$tmp/err" && cmp -s "$tmp/own.json" "$top_srcdir/data/graphs/chainmm-small.json" && ok ||
    bad "place --out onto its graph: $(cat "$tmp/err")"
expect_rc 2 "place --trace onto its graph" "$D" place --graph "$tmp/own.json" --method heft --trace "$tmp/../$(basename "$tmp")/own.json"
cmp -s "$tmp/own.json" "$top_srcdir/data/graphs/chainmm-small.json" && ok || bad "place --trace replaced its graph"
# (6) graph info --comm-ratio on a graph with its own transfer times: place warns, info said nothing
printf '2\n\n0\n1\n3,4\n5,0' > "$tmp/own2.txt"
expect_rc 0 "info --comm-ratio on own transfer times" "$D" graph info "$tmp/own2.txt" --comm-ratio 2
grep -q 'comm_ratio 2 changes nothing' "$tmp/err" && ok || bad "graph info --comm-ratio: no warning"
# (6b) peak_flops, bandwidth and latency on a graph of times (a DOPPLER .txt file, STG) change
# nothing, as comm_ratio on its own transfer times does, and were ignored without a word (place
# printed the makespan without them); so do bandwidth and latency under a comm_ratio that applies.
# The one warning says it, on every command that takes machine options
for o in "--peak-flops 1e9" "--bandwidth 1" "--latency 3"; do
    k=$(echo "$o" | sed 's/--\([a-z-]*\) .*/\1/' | tr - _)
    for c in "place --graph $tmp/own2.txt --method cp" "graph info $tmp/own2.txt" "place --graph $tmp/t.stg --method cp" \
             "train --graph $tmp/t.stg --devices 2 --episodes 1 --quiet" "simulate --graph $tmp/t.stg --assignment $tmp/a1.json"; do
        # shellcheck disable=SC2086
        expect_rc 0 "$c $o" "$D" $c $o
        grep -q "warning: $k [^ ]* changes nothing on graph" "$tmp/err" && ok || bad "$c $o: no warning: $(cat "$tmp/err")"
    done
done
expect_rc 0 "bandwidth under comm_ratio" "$D" place --graph "$tmp/own.json" --method cp --comm-ratio 4 --bandwidth 1 --latency 2
grep -q "warning: bandwidth 1 changes nothing on graph chainmm-small: under comm_ratio 4" "$tmp/err" &&
    grep -q "warning: latency 2 changes nothing" "$tmp/err" && ok || bad "bandwidth, latency under comm_ratio: $(cat "$tmp/err")"
for o in "--peak-flops 1e9 --comm-ratio 4" "--peak-flops 1e9 --bandwidth 1 --latency 2"; do
    # shellcheck disable=SC2086
    expect_rc 0 "place FLOPs and bytes $o" "$D" place --graph "$tmp/own.json" --method cp $o
    ! grep -q "changes nothing" "$tmp/err" && ok || bad "$o on a graph in FLOPs and bytes warned: $(cat "$tmp/err")"
done
printf '{"fixed": {"method": "cp", "devices": 2, "peak_flops": 1e9}, "grid": {"graph": ["%s"]}}\n' "$tmp/t.stg" > "$tmp/pf.json"
expect_rc 0 "sweep peak_flops on a graph of times" "$D" sweep "$tmp/pf.json" --out "$tmp/pf.h5" --quiet
grep -q "warning: peak_flops 1e+09 changes nothing on graph t" "$tmp/err" && ok || bad "sweep peak_flops: $(cat "$tmp/err")"
# a graph named in 3,000 characters: dp_machine_warnings cut its text at 4 kB, the first line
# short and the other two gone (a review)
long=$(printf 'N%.0s' $(seq 3000))
expect_rc 0 "convert for a long name" "$D" graph convert "$tmp/t.stg" "$tmp/long.json"
sed "s/\"name\": \"t\"/\"name\": \"$long\"/" "$tmp/long.json" > "$tmp/long2.json"
expect_rc 0 "warnings of a long-named graph" "$D" place --graph "$tmp/long2.json" --method cp --peak-flops 1e9 --bandwidth 1 --latency 2
for k in "peak_flops 1e+09" "bandwidth 1" "latency 2"; do
    grep -q "warning: $k changes nothing on graph $long: its costs are times, as its file gives them, not the FLOPs and bytes that peak_flops, bandwidth and latency turn into times$" "$tmp/err" && ok ||
        bad "$k on a long-named graph: $(cut -c1-80 "$tmp/err")"
done
# (8) a flag the model does not have took the next option as its value ("unexpected argument")
expect_rc 2 "gen random --training" "$D" graph gen random --training --out "$tmp/x.json"
grep -q 'random: unknown parameter --training (known: ' "$tmp/err" && ok || bad "gen --training: $(cat "$tmp/err")"
expect_rc 2 "gen cnn ... --training" "$D" graph gen cnn --out "$tmp/x.json" --training
grep -q 'cnn: unknown parameter --training' "$tmp/err" && ok || bad "gen cnn --training: $(cat "$tmp/err")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
