#!/bin/sh
# bench_inputs.sh: huge inputs (issue 19). Peak RSS and seconds (GNU time, /usr/bin/time -v) of
#  - one Stage I episode of `doppler train` on a chain and on independent ops (default 5,000, 10,000 and
#    20,000 ops; target: linear in the ops, no n^2 term), and its refusal of a 10^6-op chain
#    before allocating (the networks' estimate against DOPPLER_MEM_LIMIT=4G);
#  - loading a topology of D GPUs on one switch with a host memory, peer-to-peer in groups of
#    256 (default D = 256, 1024, 4096; target: 1,024 devices under one second): the time of
#    `doppler place --method single` on a 4-op graph, which loads the topology and builds its
#    D x D route costs;
#  - reading a HEFT .in file of V tasks on 4 processors (default V = 20000; target: near-linear,
#    it used to be O(V E)), with `doppler graph info`;
#  - writing, reading, and reading and writing native JSON graph files: `graph gen llama-layer
#    --layers L --tp 8 --training --out` (default L = 8 and 83: 9,774 and 99,774 ops, 33 MB of
#    JSON), `graph info` and `graph convert` of the file (target: linear, memory about the text and
#    the graph, no tree of the whole text: at 99,774 ops 1.0, 0.5 and 1.1 CPU s and 59, 94 and 94
#    MiB at 5624fdf, against 2.2, 0.8 to 1.7 and 2.3 s and 264 to 272 MiB with Jansson's tree).
#   sh bench/bench_inputs.sh [BUILDDIR] [TRAIN_SIZES] [DEVICE_COUNTS] [IN_TASKS] [JSON_LAYERS]
# The training runs use train's default network (this project's DOPPLER: hidden 64, edge
# network 16 wide, twelve device features); TRAIN_CONFIG=FILE adds --config FILE (e.g. a file
# {"defaults": "authors"} for the authors' sizes: hidden 128, edge network 128 wide, five).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top}
train_sizes=${2:-5000 10000 20000}
device_counts=${3:-256 1024 4096}
in_tasks=${4:-20000}
json_layers=${5:-8 83}
doppler="$build/doppler"
set --
[ -z "${TRAIN_CONFIG:-}" ] || set -- --config "$TRAIN_CONFIG"
[ -x /usr/bin/time ] || { echo "bench_inputs: needs GNU time (/usr/bin/time)" >&2; exit 1; }
[ -x "$doppler" ] || { echo "bench_inputs: no doppler binary at $doppler (build first, or give the build folder)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0

# prints the wall and CPU (user + system) seconds and the peak RSS of a command (its output to
# $tmp/out); a command that fails prints its own error (the lines before time's report) and makes
# the script exit non-zero at the end
measure() {
    /usr/bin/time -v "$@" >"$tmp/out" 2>"$tmp/time" || {
        echo "failed: $*"
        sed '/^[[:space:]]*Command being timed:/,$d' "$tmp/time"
        failed=1
        return 0
    }
    awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]}
                /User time|System time/ {c += $2}
                /Maximum resident set size/ {m = $2 / 1024}
                END {printf "%8.2f s wall %8.2f s cpu %9.1f MiB peak RSS\n", s, c, m}' "$tmp/time"
}

# a native JSON graph: chain or independent ops (physical costs)
graph() {  # SHAPE N FILE
    awk -v n="$2" -v shape="$1" 'BEGIN {
        printf "{\"format\":\"doppler-graph\",\"name\":\"%s%d\",\"cost_kind\":\"physical\",\"ops\":[", shape, n
        for (i = 0; i < n; i++) printf "%s{\"name\":\"o%d\",\"kind\":\"matmul\",\"flops\":%d,\"out_bytes\":1e6}", i ? "," : "", i, 1e9 * (1 + i % 7)
        printf "],\"edges\":["
        if (shape == "chain") for (i = 0; i + 1 < n; i++) printf "%s{\"src\":\"o%d\",\"dst\":\"o%d\"}", i ? "," : "", i, i + 1
        printf "]}\n" }' > "$3"
}

echo "== doppler train --stage il --episodes 1 (4 devices): peak RSS"
for n in $train_sizes; do
    for shape in chain independent; do
        graph $shape "$n" "$tmp/g.json"
        printf "%-12s %8d ops " $shape "$n"
        rm -f "$tmp/c.h5"  # train refuses to start a new run over an existing checkpoint
        measure "$doppler" train --graph "$tmp/g.json" --stage il --episodes 1 --quiet --checkpoint "$tmp/c.h5" "$@"
    done
done
graph chain 1000000 "$tmp/g.json"
printf "%-12s %8d ops " chain 1000000
rm -f "$tmp/c.h5"
# under a 4 GiB limit: about 14 KiB per op would otherwise fit a large machine and train for hours
if DOPPLER_MEM_LIMIT=4G "$doppler" train --graph "$tmp/g.json" --stage il --episodes 1 --quiet --checkpoint "$tmp/c.h5" "$@" 2>"$tmp/err"; then
    echo "ran (more memory than its estimate?)"
elif grep -q 'DOPPLER_MEM_LIMIT)' "$tmp/err"; then
    echo "refused: $(cat "$tmp/err")"
else
    # only the memory estimate's refusal is the expected outcome; any other error is a failure
    echo "failed (not the memory refusal): $(cat "$tmp/err")"
    failed=1
fi

echo "== topology load (D GPUs on a switch, host memory, p2p groups of 256) + place --method single"
printf '{"format":"doppler-graph","name":"four","cost_kind":"physical","ops":[{"name":"a","flops":1e9,"out_bytes":1e6},{"name":"b","flops":1e9,"out_bytes":1e6},{"name":"c","flops":1e9,"out_bytes":1e6},{"name":"d","flops":1e9,"out_bytes":1e6}],"edges":[{"src":"a","dst":"b"},{"src":"a","dst":"c"},{"src":"b","dst":"d"},{"src":"c","dst":"d"}]}\n' > "$tmp/four.json"
for D in $device_counts; do
    awk -v D="$D" 'BEGIN {
        printf "{\"name\":\"star%d\",\"devices\":[", D
        for (d = 0; d < D; d++) printf "%s{\"name\":\"g%d\",\"kind\":\"gpu\",\"peak_flops\":1e12,\"mem_bandwidth_Bps\":1e12,\"memory_bytes\":1e10}", d ? "," : "", d
        printf "],\"nodes\":[{\"name\":\"sw\",\"kind\":\"switch\"},{\"name\":\"host\",\"kind\":\"host\"}],\"links\":["
        for (d = 0; d < D; d++) printf "{\"a\":\"g%d\",\"b\":\"sw\",\"kind\":\"pcie\",\"bandwidth_Bps\":1e10,\"latency_s\":1e-6},", d
        printf "{\"a\":\"sw\",\"b\":\"host\",\"kind\":\"host\",\"bandwidth_Bps\":2e10,\"latency_s\":1e-6}],\"peer_to_peer\":["
        for (k = 0; k * 256 < D; k++) {
            printf "%s[", k ? "," : ""
            for (d = k * 256; d < D && d < (k + 1) * 256; d++) printf "%s\"g%d\"", (d > k * 256 ? "," : ""), d
            printf "]"
        }
        printf "]}\n" }' > "$tmp/t.json"
    printf "%-12s %8d devices " star "$D"
    measure "$doppler" place --graph "$tmp/four.json" --method single --topology "$tmp/t.json"
done

echo "== HEFT .in file (V tasks, 4 processors, about 5 edges per task): graph info"
# task 1 feeds 2..8, task v feeds v + 7k (k = 1..4) below V and V itself: one entry, one exit
awk -v V="$in_tasks" 'BEGIN {
    srand(1)
    for (v = 2; v <= 8; v++) print 1, v, 5
    for (v = 2; v < V; v++) { for (k = 1; k <= 4; k++) if (v + 7 * k < V) print v, v + 7 * k, 1 + int(rand() * 50); print v, V, 3 }
}' > "$tmp/edges"
{
    echo "$in_tasks"; wc -l < "$tmp/edges"; echo 4
    cat "$tmp/edges"
    awk -v V="$in_tasks" 'BEGIN { srand(2); for (v = 0; v < V; v++) print 10 + int(rand() * 90), 10 + int(rand() * 90), 10 + int(rand() * 90), 10 + int(rand() * 90)
                                  for (p = 1; p <= 4; p++) for (q = p + 1; q <= 4; q++) print p, q, 1 }'
} > "$tmp/g.in"
printf "%-12s %8d tasks   " heft-in "$in_tasks"
measure "$doppler" graph info "$tmp/g.in"

echo "== native JSON graph files (llama-layer --tp 8 --training): write, read, read and write"
for L in $json_layers; do
    printf "%-12s %8s layers " gen "$L"
    measure "$doppler" graph gen llama-layer --layers "$L" --tp 8 --training --out "$tmp/l.json"
    printf "%-12s %8s bytes  " info "$(wc -c < "$tmp/l.json")"
    measure "$doppler" graph info "$tmp/l.json"
    printf "%-12s %8s        " convert ""
    measure "$doppler" graph convert "$tmp/l.json" "$tmp/l2.json"
    cmp -s "$tmp/l.json" "$tmp/l2.json" || { echo "convert: the written file differs from the one read"; failed=1; }
done
[ "$failed" = 0 ] || { echo "bench_inputs: a measurement failed (above)" >&2; exit 1; }
