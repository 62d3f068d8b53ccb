#!/bin/sh
# test_transfer.sh: graph- and machine-independent DOPPLER models (issue 16, item 1). A
# checkpoint trained on the 24-op chainmm-small places the 168-op FFNN on 4 and 8 devices, on a
# topology, and a DOPPLER graph file; one of another device feature set, network size or state is
# refused naming what differs; --resume on another graph is refused; the checkpoint records what
# it was trained on. Training on a distribution (item 2): --graphs (files, folders, generator
# specs), --validation, --family with seeded draws, one graph per batch, resume on the same
# graphs, --init fine-tuning from a general model, test graphs refused (item 4).
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
bin="$top_builddir/doppler"
small="$top_srcdir/data/graphs/chainmm-small.json"
ffnn="$top_srcdir/data/graphs/ffnn.json"
command -v h5dump >/dev/null 2>&1 || { echo "h5dump not found (Debian package hdf5-tools): skip"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-transfer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat > "$tmp/cfg.json" <<EOF2
{"defaults": "authors", "network": {"hidden": 8, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4}, "checkpoint_every": 10, "seed": 3}
EOF2
"$bin" train --graph "$small" --config "$tmp/cfg.json" --pipeline --episodes 10 --checkpoint "$tmp/ck.h5" --quiet \
    > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; fail "train on chainmm-small"; }

# the checkpoint says what it was trained on, its feature set and its format version
h5dump -w 0 -a /trained_on "$tmp/ck.h5" | tr -d " \n" | grep -q '"graph":"chainmm-small","n_ops":24,"n_devices":4' ||
    fail "trained_on records the graph, its ops and devices"
h5dump -a /features "$tmp/ck.h5" | grep -q '"doppler"' || fail "the checkpoint records its feature set"
h5dump -a /version "$tmp/ck.h5" | grep -q '(0): 3' || fail "checkpoint format version 3"

# it places other graphs, device counts and machines (it used to answer "made for 24 ops on 4
# devices, not 168 ops on 4 devices")
for d in 4 8; do
    "$bin" place --graph "$ffnn" --devices $d --method doppler --checkpoint "$tmp/ck.h5" --json > "$tmp/p$d" 2> "$tmp/e$d" ||
        { cat "$tmp/e$d"; fail "ffnn on $d devices"; }
    grep -q '"makespan"' "$tmp/p$d" || fail "a makespan for ffnn on $d devices"
done
"$bin" place --graph "$ffnn" --topology "$top_srcdir/data/topologies/dgx1-v100.json" --method doppler \
    --checkpoint "$tmp/ck.h5" --out "$tmp/a.json" > /dev/null 2> "$tmp/et" || { cat "$tmp/et"; fail "ffnn on dgx1-v100"; }
grep -q '"devices":\[0' "$tmp/a.json" || fail "an assignment file on the topology"
SH=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
if [ -f "$SH/doppler-graphs/ffnn_192nodes.txt" ]; then
    "$bin" place --graph "$SH/doppler-graphs/ffnn_192nodes.txt" --method doppler --checkpoint "$tmp/ck.h5" > "$tmp/pd" 2> "$tmp/ed" ||
        { cat "$tmp/ed"; fail "a DOPPLER graph file"; }
    grep -q 'DOPPLER units' "$tmp/pd" || fail "the DOPPLER graph in DOPPLER units"
else
    echo "($SH/doppler-graphs absent: the DOPPLER graph file case skipped)"
fi

# --init on another graph and device count: fine-tuning starts from the parameters
"$bin" train --graph "$ffnn" --devices 8 --config "$tmp/cfg.json" --stage sim --episodes 2 --init "$tmp/ck.h5" \
    --checkpoint "$tmp/ft.h5" --quiet > /dev/null 2> "$tmp/ei" || { cat "$tmp/ei"; fail "--init on ffnn, 8 devices"; }

# incompatible checkpoints are refused, naming what differs: every network key of the method's
# config table is compared, each named as the table spells it (a real, slope, and a switch,
# cp_embeddings, of DOPPLER's; a key of Placeto's below)
# refused_init NAME CONFIG MESSAGE: a run from ck.h5 under config CONFIG exits 1 naming MESSAGE
refused_init() {
    printf '%s\n' "$2" > "$tmp/$1.json"
    "$bin" train --graph "$small" --config "$tmp/$1.json" --stage sim --episodes 2 --init "$tmp/ck.h5" > /dev/null 2> "$tmp/$1.err"
    [ $? -eq 1 ] || fail "$1: must exit 1"
    grep -qF "$3" "$tmp/$1.err" || { cat "$tmp/$1.err"; fail "$1: $3"; }
}
refused_init features '{"defaults": "authors", "network": {"hidden": 8, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4, "features": "engine"}, "state": "engine"}' \
    'feature set (network.features) "doppler" in the checkpoint, "engine" here'
refused_init wide '{"defaults": "authors", "network": {"hidden": 16, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4}}' \
    'network.hidden 8 in the checkpoint, 16 here'
refused_init state '{"defaults": "authors", "network": {"hidden": 8, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4}, "state": "engine"}' \
    'state "append" in the checkpoint, "engine" here'
refused_init slope '{"defaults": "authors", "network": {"hidden": 8, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4, "slope": 0.25}}' \
    'incompatible checkpoint: network.slope 0.1 in the checkpoint, 0.25 here'
refused_init cp '{"defaults": "authors", "network": {"hidden": 8, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4, "cp_embeddings": false}}' \
    'incompatible checkpoint: network.cp_embeddings true in the checkpoint, false here'
# --resume continues the same run: not on another graph
"$bin" train --graph "$ffnn" --config "$tmp/cfg.json" --stage sim --episodes 20 --checkpoint "$tmp/ck.h5" --resume \
    > /dev/null 2> "$tmp/e4"
[ $? -eq 1 ] || fail "--resume on another graph must exit 1"
grep -q 'a run on other graphs' "$tmp/e4" || { cat "$tmp/e4"; fail "--resume on another graph named"; }
# Placeto's parameters are sized by the device count: its checkpoint stays on its machine
"$bin" train --method placeto --graph "$small" --episodes 2 --checkpoint "$tmp/pl.h5" --quiet > /dev/null 2> "$tmp/e5" ||
    { cat "$tmp/e5"; fail "placeto train"; }
"$bin" place --graph "$small" --devices 3 --method placeto --checkpoint "$tmp/pl.h5" > /dev/null 2> "$tmp/e6"
[ $? -eq 1 ] || fail "a placeto checkpoint of 4 devices on 3 must exit 1"
grep -q 'a placeto checkpoint of 4 devices, not 3' "$tmp/e6" || { cat "$tmp/e6"; fail "placeto's device count named"; }
printf '{"placeto": {"mlp_hidden": 16}}\n' > "$tmp/plw.json"
"$bin" train --method placeto --graph "$small" --config "$tmp/plw.json" --episodes 2 --init "$tmp/pl.h5" --quiet > /dev/null 2> "$tmp/e9"
[ $? -eq 1 ] || fail "another placeto width must exit 1"
grep -q 'incompatible checkpoint: placeto.mlp_hidden 64 in the checkpoint, 16 here' "$tmp/e9" || { cat "$tmp/e9"; fail "placeto's width named"; }
# ---- training on a distribution (item 2) ----
tiny="$top_srcdir/tests/data/tiny-doppler.txt"
mkdir "$tmp/folder"
"$bin" graph gen chainmm --matrices 3 --blocks 2 --out "$tmp/folder/a.json" > /dev/null || fail "gen a"
"$bin" graph gen random --n 17 --seed 4 --out "$tmp/folder/b.json" > /dev/null || fail "gen b"
cat > "$tmp/b4.json" <<EOF2
{"defaults": "authors", "network": {"hidden": 8, "mlp_hidden": 8, "steps": 2, "edge_hidden": 4}, "checkpoint_every": 8, "seed": 3, "batch": 4}
EOF2
# a file, a folder and a generator spec for training, a file for validation; each batch of 4
# episodes is on one graph (the trajectory's step counts come in runs of 4)
"$bin" train --graph "$tiny" --graphs "$tmp/folder,gen:ffnn?layers=2&batch-blocks=1&feature-blocks=2" \
    --validation "$small" --config "$tmp/b4.json" --stage il --episodes 24 --checkpoint "$tmp/d.h5" \
    --trajectory "$tmp/d.traj.h5" > "$tmp/dout" 2> "$tmp/derr" || { cat "$tmp/derr"; fail "train on a list"; }
grep -q '4 training and 1 validation graphs' "$tmp/derr" || { cat "$tmp/derr"; fail "the graphs listed"; }
h5dump -w 0 -a /trained_on "$tmp/d.h5" | tr -d " \n" > "$tmp/on"
grep -q '"train":\[{"graph":"tiny-doppler"' "$tmp/on" && grep -q '"validation":\[{"graph":"chainmm-small","n_ops":24' "$tmp/on" ||
    { cat "$tmp/on"; fail "trained_on: train and validation lists"; }
grep -q 'relative to the critical-path rollout (in the training state) over the validation graphs' "$tmp/dout" || fail "the figures' unit said"
h5dump -d /episodes/n_steps -y -w 0 "$tmp/d.traj.h5" | tr -cs '0-9\n' ' ' > "$tmp/ns"
python3 - "$tmp/ns" <<'PY' || fail "a batch samples one graph"
import sys
rows = [int(x) for line in open(sys.argv[1]) for x in line.split()]
rows = rows[-24:]
assert len(rows) == 24, rows
batches = [rows[i:i + 4] for i in range(0, 24, 4)]
assert all(len(set(b)) == 1 for b in batches), batches
assert len(set(rows)) > 1, rows  # more than one graph sampled
PY
# generated families: the same seed draws the same graphs; validation graphs drawn apart
for k in 1 2; do
    "$bin" train --family chainmm,daggen --family-count 3 --val-count 2 --family-seed 7 --config "$tmp/b4.json" \
        --stage il --episodes 4 --checkpoint "$tmp/f$k.h5" --quiet > /dev/null 2> "$tmp/ferr" || { cat "$tmp/ferr"; fail "train --family"; }
    h5dump -w 0 -a /trained_on "$tmp/f$k.h5" | tr -d " \n" | grep -o "{\"train\".*" > "$tmp/fon$k"
done
cmp -s "$tmp/fon1" "$tmp/fon2" || fail "--family-seed draws the same graphs"
grep -q '"validation":\[{"graph":"chainmm' "$tmp/fon1" || { cat "$tmp/fon1"; fail "validation graphs drawn from the family"; }
# the wide corpus's families (issue 29): a short run draws one graph of each and trains on them
"$bin" train --family stg,layered,forkjoin,seriesparallel,workflow,cnn,rnn,transformer,moe --family-count 9 --val-count 1 \
    --family-seed 5 --config "$tmp/b4.json" --stage il --episodes 2 --checkpoint "$tmp/wide.h5" --quiet > /dev/null \
    2> "$tmp/werr" || { cat "$tmp/werr"; fail "train --family on the new families"; }
h5dump -w 0 -a /trained_on "$tmp/wide.h5" | tr -d " \n" > "$tmp/won"
for m in stg layered forkjoin seriesparallel workflow cnn rnn transformer moe; do
    grep -q "\"graph\":\"${m}_" "$tmp/won" || { cat "$tmp/won"; fail "train --family: a $m graph among the training graphs"; }
done
# --family all: the wide corpus in its commands' order, the same draws as the list written out
for k in all list; do
    fams=all
    [ $k = list ] && fams=stg,layered,forkjoin,seriesparallel,workflow,cnn,rnn,transformer,moe,daggen,chainmm,ffnn,llama-block,llama-layer
    "$bin" train --family $fams --family-count 14 --val-count 0 --family-seed 3 --config "$tmp/b4.json" --stage il \
        --episodes 1 --checkpoint "$tmp/all-$k.h5" --quiet > /dev/null 2> "$tmp/aerr" || { cat "$tmp/aerr"; fail "train --family $k"; }
    h5dump -w 0 -a /trained_on "$tmp/all-$k.h5" | tr -d " \n" | grep -o "{\"train\".*" > "$tmp/aon-$k"
done
cmp -s "$tmp/aon-all" "$tmp/aon-list" || { cat "$tmp/aon-all"; fail "--family all draws what the fourteen families written out draw"; }
grep -q '"graph":"llama_layer' "$tmp/aon-all" || { cat "$tmp/aon-all"; fail "--family all: a llama-layer graph among the training graphs"; }
# --speed-range: heterogeneous devices, each graph's speeds drawn in the range from the family
# seed (the same on a second run), printed beside it; refused without a distribution
for k in 1 2; do
    "$bin" train --family stg,cnn --family-count 2 --val-count 1 --family-seed 5 --config "$tmp/b4.json" --stage il \
        --episodes 1 --speed-range 0.25:4 --checkpoint "$tmp/sp$k.h5" > "$tmp/sp$k" 2>&1 || { cat "$tmp/sp$k"; fail "train --speed-range"; }
    grep 'device speeds' "$tmp/sp$k" | sed 's/.*(device speeds //' > "$tmp/spd$k"
done
[ "$(wc -l < "$tmp/spd1")" -eq 3 ] || { cat "$tmp/sp1"; fail "--speed-range: speeds printed for 3 graphs"; }
cmp -s "$tmp/spd1" "$tmp/spd2" || fail "--speed-range: the same seed draws the same speeds"
awk -F'[.][.]|)' '{ if (!($1 >= 0.25 && $2 <= 4 && $1 < $2)) exit 1 }' "$tmp/spd1" ||
    { cat "$tmp/spd1"; fail "--speed-range: speeds within 0.25..4 and not all equal"; }
"$bin" train --graph "$small" --speed-range 1:2 --episodes 1 > /dev/null 2> "$tmp/sperr" && fail "--speed-range without a distribution"
grep -q 'per graph of a distribution' "$tmp/sperr" || { cat "$tmp/sperr"; fail "--speed-range refusal explained"; }
# --devices-range: each drawn graph on a uniform machine of its own device count: the same graphs
# drawn, every count within the range and not all equal, the same seed the same counts; a range of
# one count trains exactly as --devices of that count; refused with --devices, --topology, and
# without a distribution
for r in 2:16 4:4 fixed4 none; do
    opt="--devices-range $r"; [ "$r" = fixed4 ] && opt="--devices 4"; [ "$r" = none ] && opt=""
    "$bin" train --family chainmm,stg --family-count 5 --val-count 2 --family-seed 7 --config "$tmp/b4.json" $opt \
        --stage il --episodes 4 --checkpoint "$tmp/dv-$r.h5" > /dev/null 2> "$tmp/dv-$r.err" || { cat "$tmp/dv-$r.err"; fail "train $opt"; }
    awk '/ ops / && ($1 == "train" || $1 == "validation") { print $2 }' "$tmp/dv-$r.err" > "$tmp/dv-$r.names"
done
cmp -s "$tmp/dv-none.names" "$tmp/dv-2:16.names" || fail "--devices-range changed the graphs drawn"
sed -n 's/.* ops *\([0-9]*\) devices .*/\1/p' "$tmp/dv-2:16.err" > "$tmp/dvs"
[ "$(wc -l < "$tmp/dvs")" -eq 7 ] || { cat "$tmp/dv-2:16.err"; fail "--devices-range: each graph's device count printed"; }
awk '$1 < 2 || $1 > 16 { bad = 1 } { seen[$1] = 1 } END { n = 0; for (k in seen) n++; exit bad || n < 3 }' "$tmp/dvs" ||
    { cat "$tmp/dvs"; fail "--devices-range: counts within 2..16 and not all the same"; }
h5diff -d 0 "$tmp/dv-4:4.h5" "$tmp/dv-fixed4.h5" /plc/param /plc/param > /dev/null || fail "--devices-range 4:4 trains as --devices 4"
for bad in "--devices-range 0:4" "--devices-range 2.5:4" "--devices-range 8:2" "--devices-range 2:16 --devices 4" \
           "--devices-range 2:16 --topology dgx1-v100"; do
    "$bin" train --family chainmm $bad --stage il --episodes 1 > /dev/null 2> "$tmp/dverr"
    [ $? -eq 2 ] || { cat "$tmp/dverr"; fail "train $bad must exit 2"; }
done
"$bin" train --graph "$small" --devices-range 2:4 --episodes 1 > /dev/null 2> "$tmp/dverr"
[ $? -eq 2 ] && grep -q 'per graph of a distribution' "$tmp/dverr" || { cat "$tmp/dverr"; fail "--devices-range without a distribution"; }
# a graph made for 4 devices on a drawn count: the warning names the draw, not --devices, which was
# not given (a review)
"$bin" train --graphs "$top_srcdir/data/graphs/llama-block.json,$top_srcdir/data/graphs/ffnn.json" --devices-range 8:8 \
    --config "$tmp/b4.json" --stage il --episodes 1 --checkpoint "$tmp/dvw.h5" > /dev/null 2> "$tmp/dverr" || { cat "$tmp/dverr"; fail "dvw"; }
grep -q "placing it on 8 (train --devices-range's draw)" "$tmp/dverr" || { cat "$tmp/dverr"; fail "--devices-range: the warning's source"; }
echo "--devices-range: counts drawn per graph within the range, one count as --devices, bad uses refused"
# --bandwidth-range: each drawn graph on a uniform machine of its own (log-uniform link
# bandwidth): the same graphs are drawn, each bandwidth within the range and not all equal; a
# range of one value at the default bandwidth trains exactly as without it, one at another does not
for r in none 1e9:1.2e10 1.2e10:1.2e10 1e9:1e9; do
    opt=""; [ "$r" = none ] || opt="--bandwidth-range $r"
    "$bin" train --family chainmm,ffnn --family-count 3 --val-count 1 --family-seed 7 --config "$tmp/b4.json" $opt \
        --stage il --episodes 4 --checkpoint "$tmp/bw-$r.h5" > /dev/null 2> "$tmp/bw-$r.err" || { cat "$tmp/bw-$r.err"; fail "train $opt"; }
    awk '/ ops / && ($1 == "train" || $1 == "validation") { print $2 }' "$tmp/bw-$r.err" > "$tmp/bw-$r.names"
done
cmp -s "$tmp/bw-none.names" "$tmp/bw-1e9:1.2e10.names" || fail "--bandwidth-range changed the graphs drawn"
[ "$(wc -l < "$tmp/bw-none.names")" -eq 4 ] || fail "4 graphs listed"
sed -n 's/.*(links \([0-9.e+]*\) bytes\/s)$/\1/p' "$tmp/bw-1e9:1.2e10.err" > "$tmp/bws"
[ "$(wc -l < "$tmp/bws")" -eq 4 ] || { cat "$tmp/bw-1e9:1.2e10.err"; fail "each graph's bandwidth printed"; }
awk '$1 < 1e9 * 0.999 || $1 > 1.2e10 * 1.001 { bad = 1 } { seen[$1] = 1 } END { n = 0; for (k in seen) n++; exit bad || n < 2 }' "$tmp/bws" ||
    { cat "$tmp/bws"; fail "bandwidths within [1e9, 1.2e10] and not all the same"; }
h5diff -d 0 "$tmp/bw-none.h5" "$tmp/bw-1.2e10:1.2e10.h5" /plc/param /plc/param > /dev/null ||
    fail "--bandwidth-range 1.2e10:1.2e10 (the default bandwidth) trains as without it"
h5diff -d 0 "$tmp/bw-none.h5" "$tmp/bw-1e9:1e9.h5" /plc/param /plc/param > /dev/null &&
    fail "--bandwidth-range 1e9:1e9 must change the costs (and so the training)"
# the first graph too (the trainer's own, read again): its costs in trained_on differ from a run
# without the range (it was costed on the default bandwidth while listed with its drawn one)
for r in none 1e9:1e9; do
    opt=""; [ "$r" = none ] || opt="--bandwidth-range $r"
    "$bin" train --graph "$small" --graphs "$ffnn" --config "$tmp/b4.json" $opt --stage il --episodes 4 --checkpoint "$tmp/bw0-$r.h5" \
        --quiet > /dev/null 2>&1 || fail "train --graph --graphs $opt"
    h5dump -w 0 -a /trained_on "$tmp/bw0-$r.h5" | tr -d ' \n' | sed 's/.*"graph":"chainmm-small"[^}]*"costs":"\([0-9a-f]*\)".*/\1/' > "$tmp/bw0-$r.fp"
done
[ -s "$tmp/bw0-none.fp" ] && ! cmp -s "$tmp/bw0-none.fp" "$tmp/bw0-1e9:1e9.fp" ||
    { cat "$tmp/bw0-none.fp" "$tmp/bw0-1e9:1e9.fp"; fail "--bandwidth-range must cost the first graph on its drawn bandwidth"; }
for bad in 5:1 1e9 0:1e9 x:1e9 1e-301:1e9 1e9:1e31; do
    "$bin" train --family chainmm --bandwidth-range "$bad" --stage il --episodes 1 > /dev/null 2>&1
    [ $? -eq 2 ] || fail "--bandwidth-range $bad must exit 2"
done
"$bin" train --graph "$tiny" --bandwidth-range 1e9:2e9 --stage il --episodes 1 > /dev/null 2>&1
[ $? -eq 2 ] || fail "--bandwidth-range without a distribution must exit 2"
# --comm-ratio-range: each drawn graph on a uniform machine of DOPPLER's communication rule
# (a transfer takes R x its producer's time) with a ratio of its own: the same graphs drawn, each
# ratio within the range and not all equal; a range of one value trains exactly as the machine
# option --comm-ratio of that value, and not as without it; refused with --comm-ratio (and
# --bandwidth-range with --comm-ratio), and without a distribution
for r in 2:8 4:4 fixed4; do
    opt="--comm-ratio-range $r"; [ "$r" = fixed4 ] && opt="--comm-ratio 4"
    "$bin" train --family chainmm,ffnn --family-count 3 --val-count 1 --family-seed 7 --config "$tmp/b4.json" $opt \
        --stage il --episodes 4 --checkpoint "$tmp/cr-$r.h5" > /dev/null 2> "$tmp/cr-$r.err" || { cat "$tmp/cr-$r.err"; fail "train $opt"; }
done
awk '/ ops / && ($1 == "train" || $1 == "validation") { print $2 }' "$tmp/cr-2:8.err" > "$tmp/cr.names"
cmp -s "$tmp/bw-none.names" "$tmp/cr.names" || fail "--comm-ratio-range changed the graphs drawn"
sed -n 's/.*(comm \([0-9.e+]*\) x time)$/\1/p' "$tmp/cr-2:8.err" > "$tmp/crs"
[ "$(wc -l < "$tmp/crs")" -eq 4 ] || { cat "$tmp/cr-2:8.err"; fail "each graph's communication ratio printed"; }
awk '$1 < 2 * 0.999 || $1 > 8 * 1.001 { bad = 1 } { seen[$1] = 1 } END { n = 0; for (k in seen) n++; exit bad || n < 2 }' "$tmp/crs" ||
    { cat "$tmp/crs"; fail "ratios within [2, 8] and not all the same"; }
h5diff -d 0 "$tmp/cr-4:4.h5" "$tmp/cr-fixed4.h5" /plc/param /plc/param > /dev/null ||
    fail "--comm-ratio-range 4:4 trains as --comm-ratio 4"
h5diff -d 0 "$tmp/bw-none.h5" "$tmp/cr-4:4.h5" /plc/param /plc/param > /dev/null &&
    fail "--comm-ratio-range 4:4 must change the costs (and so the training)"
# both ranges: each graph on one kind of machine (a coin per graph), with the very draw the
# option alone gives it: its line names links or a ratio, never both, and both kinds appear
"$bin" train --family chainmm,ffnn --family-count 3 --val-count 1 --family-seed 7 --config "$tmp/b4.json" \
    --comm-ratio-range 2:8 --bandwidth-range 1e9:1.2e10 --stage il --episodes 4 --checkpoint "$tmp/mix.h5" > /dev/null 2> "$tmp/mix.err" ||
    { cat "$tmp/mix.err"; fail "train with both ranges"; }
awk '/ ops / && ($1 == "train" || $1 == "validation")' "$tmp/mix.err" > "$tmp/mix.lines"
awk '/ ops / && ($1 == "train" || $1 == "validation")' "$tmp/bw-1e9:1.2e10.err" > "$tmp/bw.lines"
awk '/ ops / && ($1 == "train" || $1 == "validation")' "$tmp/cr-2:8.err" > "$tmp/cr.lines"
[ "$(wc -l < "$tmp/mix.lines")" -eq 4 ] || { cat "$tmp/mix.err"; fail "4 graphs listed with both ranges"; }
nl=0; nc=0
for i in 1 2 3 4; do
    line=$(sed -n "${i}p" "$tmp/mix.lines")
    case $line in
    *"(links "*"(comm "*|*"(comm "*"(links "*) fail "graph $i on both kinds of machine: $line" ;;
    *"(links "*) nl=$((nl + 1)); [ "$line" = "$(sed -n "${i}p" "$tmp/bw.lines")" ] || fail "graph $i: not its --bandwidth-range draw: $line" ;;
    *"(comm "*) nc=$((nc + 1)); [ "$line" = "$(sed -n "${i}p" "$tmp/cr.lines")" ] || fail "graph $i: not its --comm-ratio-range draw: $line" ;;
    *) fail "graph $i on no drawn machine: $line" ;;
    esac
done
[ "$nl" -gt 0 ] && [ "$nc" -gt 0 ] || { cat "$tmp/mix.lines"; fail "both kinds of machine among the 4 graphs (links $nl, ratios $nc)"; }
for opt in "--comm-ratio 4 --bandwidth-range 1e9:2e9" "--comm-ratio 4 --comm-ratio-range 2:8" "--comm-ratio-range 0:1" \
           "--comm-ratio-range 3" "--comm-ratio -1" "--comm-ratio-range 1e31:1e31" "--comm-ratio-range 1e300:1e300"; do
    "$bin" train --family chainmm $opt --stage il --episodes 1 > /dev/null 2> "$tmp/crerr"
    [ $? -eq 2 ] || { cat "$tmp/crerr"; fail "train $opt must exit 2"; }
done
"$bin" train --graph "$tiny" --comm-ratio-range 2:8 --stage il --episodes 1 > /dev/null 2>&1
[ $? -eq 2 ] || fail "--comm-ratio-range without a distribution must exit 2"
# costs beyond float's range (here the bandwidth key's least value) are refused as such, not as
# "out of memory for the DOPPLER networks" (the range options allowed ratios up to 1e308 and
# met that message): since issue 33 at the cost tables, naming the machine keys, before any
# network sees them; the largest comm_ratio trains
"$bin" train --graph "$ffnn" --config "$tmp/b4.json" --bandwidth 1e-300 --stage il --episodes 1 > /dev/null 2> "$tmp/rerr"
[ $? -eq 1 ] && grep -q "ffnn.json: .*a makespan would overflow; machine keys bandwidth (1e-300 B/s)" "$tmp/rerr" ||
    { cat "$tmp/rerr"; fail "costs beyond float's range named as such"; }
"$bin" train --family chainmm --family-count 1 --val-count 1 --config "$tmp/b4.json" --comm-ratio-range 1e30:1e30 --stage il \
    --episodes 1 > /dev/null 2> "$tmp/rerr" || { cat "$tmp/rerr"; fail "--comm-ratio-range 1e30:1e30 trains"; }
# --comm-ratio on a graph of times of its own (a DOPPLER file) changes nothing, and says so on
# stderr (it was silent, as if the file's transfers had been costed by it); on a graph in FLOPs
# and bytes it says nothing
"$bin" place --graph "$tiny" --method cp --json > "$tmp/t0.json" 2> /dev/null || fail "place the tiny DOPPLER file"
"$bin" place --graph "$tiny" --method cp --comm-ratio 8 --json > "$tmp/t8.json" 2> "$tmp/t8.err" || fail "place it with --comm-ratio"
cmp -s "$tmp/t0.json" "$tmp/t8.json" || fail "--comm-ratio must not change a DOPPLER file's costs"
grep -q "warning: comm_ratio 8 changes nothing on graph .*transfers have times of their own" "$tmp/t8.err" ||
    { cat "$tmp/t8.err"; fail "--comm-ratio on a graph of times warns that it changes nothing"; }
"$bin" place --graph "$ffnn" --method cp --comm-ratio 8 > /dev/null 2> "$tmp/f8.err" || fail "place ffnn with --comm-ratio"
grep -q "changes nothing" "$tmp/f8.err" && fail "--comm-ratio on a graph in FLOPs and bytes warns"
"$bin" place --graph "$ffnn" --method cp --comm-ratio 8 --json 2> /dev/null | grep -q '"transfer_volume_units":"s of transfer"' ||
    fail "under --comm-ratio the transfer volume is in seconds"
# A task graph without transfer costs of its own (a Kasahara STG file: a -> b, a -> c, times 2,
# 3, 4) is costed by --comm-ratio (issue 29: DOPPLER's rule must apply to any such graph; it was
# refused as a graph of times). Hand values with a, b on device 0 and c on device 1: without a
# ratio the transfer is free, c runs 2..6; R = 1: a's output takes 1 x 2, c runs 4..8; R = 4:
# 8, c runs 10..14.
printf '3\n0 0 0\n1 2 1 0\n2 3 1 1\n3 4 1 1\n4 0 2 2 3\n' > "$tmp/t.stg"
echo '{"devices": [0, 0, 1]}' > "$tmp/t.assign.json"
for rw in 0:6.0 1:8.0 4:14.0; do
    got=$("$bin" simulate --graph "$tmp/t.stg" --devices 2 --assignment "$tmp/t.assign.json" --comm-ratio "${rw%%:*}" --json 2> "$tmp/stg.err" |
          sed -n 's/.*"makespan":\([^,]*\).*/\1/p')
    [ "$got" = "${rw#*:}" ] || fail "STG task graph under --comm-ratio ${rw%%:*}: makespan $got, by hand ${rw#*:}"
    grep -q "changes nothing" "$tmp/stg.err" && fail "--comm-ratio on a task graph without transfer costs warns"
done
# network.magnitude: a model with the magnitude inputs trains and places any graph; --init of it
# under a config without them is refused naming the key
sed 's/"edge_hidden": 4}/"edge_hidden": 4, "features": "engine", "magnitude": true}/' "$tmp/b4.json" > "$tmp/mag.json"
grep -q '"magnitude": true' "$tmp/mag.json" || fail "the magnitude config"
"$bin" train --family chainmm,ffnn --family-count 2 --val-count 1 --family-seed 7 --config "$tmp/mag.json" --comm-ratio-range 2:8 \
    --stage il --episodes 4 --checkpoint "$tmp/mag.h5" --quiet > /dev/null 2> "$tmp/merr" || { cat "$tmp/merr"; fail "train with network.magnitude"; }
"$bin" place --graph "$ffnn" --devices 3 --method doppler --checkpoint "$tmp/mag.h5" > /dev/null 2> "$tmp/merr" ||
    { cat "$tmp/merr"; fail "place with a magnitude checkpoint"; }
sed 's/"magnitude": true/"magnitude": false/' "$tmp/mag.json" > "$tmp/nomag.json"
"$bin" train --graph "$small" --init "$tmp/mag.h5" --config "$tmp/nomag.json" --stage sim --episodes 4 --quiet > /dev/null 2> "$tmp/merr"
[ $? -eq 1 ] && grep -q 'network.magnitude true in the checkpoint, false here' "$tmp/merr" ||
    { cat "$tmp/merr"; fail "--init of a magnitude checkpoint without them refused naming network.magnitude"; }
# a run of --comm-ratio-range resumes on the same ratios only: another range is refused naming
# the graph and the options that change its costs (--comm-ratio-range was missing from them)
for opt in "--comm-ratio-range 2:9" "--comm-ratio 4"; do
    "$bin" train --family chainmm,ffnn --family-count 2 --val-count 1 --family-seed 7 --config "$tmp/mag.json" $opt \
        --stage il --episodes 8 --checkpoint "$tmp/mag.h5" --resume --quiet > /dev/null 2> "$tmp/rerr"
    [ $? -eq 1 ] && grep -q 'costs differ: train graph [a-z].*--comm-ratio, --comm-ratio-range' "$tmp/rerr" ||
        { cat "$tmp/rerr"; fail "--resume of a --comm-ratio-range run with $opt refused naming the graph and --comm-ratio-range"; }
done
"$bin" train --family chainmm,ffnn --family-count 2 --val-count 1 --family-seed 7 --config "$tmp/mag.json" --comm-ratio-range 2:8 \
    --stage il --episodes 8 --checkpoint "$tmp/mag.h5" --resume --quiet > /dev/null 2> "$tmp/rerr" ||
    { cat "$tmp/rerr"; fail "--resume of a --comm-ratio-range run with the same range"; }
# a run of --bandwidth-range resumes on the same costs: resumed with another range, or without
# one, it is refused naming the graph whose costs differ (it used to train on other costs
# silently); with the same range it continues
"$bin" train --family chainmm,ffnn --family-count 2 --val-count 1 --family-seed 7 --config "$tmp/b4.json" \
    --bandwidth-range 1e9:2e9 --stage il --episodes 8 --checkpoint "$tmp/bwr.h5" --quiet > /dev/null 2>&1 || fail "a short run of --bandwidth-range"
for opt in "" "--bandwidth-range 3e9:4e9"; do
    "$bin" train --family chainmm,ffnn --family-count 2 --val-count 1 --family-seed 7 --config "$tmp/b4.json" $opt \
        --stage il --episodes 16 --checkpoint "$tmp/bwr.h5" --resume --quiet > /dev/null 2> "$tmp/rerr"
    [ $? -eq 1 ] && grep -q 'costs differ: train graph [a-z]' "$tmp/rerr" ||
        { cat "$tmp/rerr"; fail "--resume of a --bandwidth-range run ${opt:-without it} refused naming the graph"; }
done
"$bin" train --family chainmm,ffnn --family-count 2 --val-count 1 --family-seed 7 --config "$tmp/b4.json" --bandwidth-range 1e9:2e9 \
    --stage il --episodes 16 --checkpoint "$tmp/bwr.h5" --resume --quiet > /dev/null 2> "$tmp/rerr" ||
    { cat "$tmp/rerr"; fail "--resume with the same --bandwidth-range"; }
# a run on several graphs resumes on the same graphs, not on others
"$bin" train --graph "$tiny" --graphs "$small" --config "$tmp/b4.json" --stage il --episodes 8 --checkpoint "$tmp/r.h5" \
    --quiet > /dev/null 2>&1 || fail "a short run on two graphs"
"$bin" train --graph "$tiny" --graphs "$small" --config "$tmp/b4.json" --stage il --episodes 16 --checkpoint "$tmp/r.h5" \
    --resume --quiet > "$tmp/rout" 2> "$tmp/rerr" || { cat "$tmp/rerr"; fail "--resume on the same two graphs"; }
grep -q '16 episodes' "$tmp/rout" || { cat "$tmp/rout"; fail "resumed to 16 episodes"; }
"$bin" train --graph "$tiny" --graphs "$ffnn" --config "$tmp/b4.json" --stage il --episodes 16 --checkpoint "$tmp/r.h5" \
    --resume --quiet > /dev/null 2> "$tmp/rerr"
[ $? -eq 1 ] && grep -q 'a run on other graphs' "$tmp/rerr" || { cat "$tmp/rerr"; fail "--resume on other graphs refused"; }
# fine-tuning the general model on one graph, and placing with it
"$bin" train --graph "$ffnn" --init "$tmp/f1.h5" --config "$tmp/b4.json" --stage sim --episodes 4 --checkpoint "$tmp/ft2.h5" \
    --quiet > /dev/null 2> "$tmp/ferr" || { cat "$tmp/ferr"; fail "--init from a family checkpoint"; }
# test graphs are refused as training or validation graphs
spec=$(grep '^gen:' "$top_srcdir/data/testsets/transfer.txt" | head -1)
"$bin" train --graph "$tiny" --graphs "$spec" --config "$tmp/b4.json" --stage il --episodes 4 > /dev/null 2> "$tmp/e7"
[ $? -eq 1 ] && grep -q 'a test graph' "$tmp/e7" || { cat "$tmp/e7"; fail "a test-set spec refused for training"; }
cp "$tiny" "$tmp/chain_mm_112nodes.txt"
"$bin" train --graph "$tiny" --validation "$tmp/chain_mm_112nodes.txt" --config "$tmp/b4.json" --stage il --episodes 4 > /dev/null 2> "$tmp/e8"
[ $? -eq 1 ] && grep -q 'chain_mm_112nodes.txt: a test graph' "$tmp/e8" || { cat "$tmp/e8"; fail "a DOPPLER file refused for validation"; }
# ... by their content too (the structure and costs, data/testsets/doppler-graphs.txt): a test-set
# graph written to a file, and a DOPPLER graph file copied under another name or converted to JSON
"$bin" graph gen chainmm --matrices 5 --blocks 3 --n 12000 --partition 3d --out "$tmp/my-chain.json" || fail "graph gen"
"$bin" train --graph "$tiny" --graphs "$tmp/my-chain.json" --config "$tmp/b4.json" --stage il --episodes 4 > /dev/null 2> "$tmp/e7b"
[ $? -eq 1 ] && grep -q 'my-chain.json: a test graph, the same structure and costs as gen:chainmm?matrices=5&blocks=3&n=12000&partition=3d' \
    "$tmp/e7b" || { cat "$tmp/e7b"; fail "a test-set graph in a file of another name refused"; }
sh_data=${DOPPLER_SHARED_DATA:-$top_srcdir/../shared/data}
if [ -f "$sh_data/doppler-graphs/ffnn_192nodes.txt" ]; then
    cp "$sh_data/doppler-graphs/ffnn_192nodes.txt" "$tmp/mine.txt"
    "$bin" graph convert "$sh_data/doppler-graphs/transformer_block_215nodes.txt" "$tmp/block.json" || fail "graph convert"
    for f in mine.txt block.json; do
        "$bin" train --graph "$tiny" --validation "$tmp/$f" --config "$tmp/b4.json" --stage il --episodes 4 > /dev/null 2> "$tmp/e8b"
        [ $? -eq 1 ] && grep -q "$f: a test graph, the same structure and costs as .* of the DOPPLER graph files" "$tmp/e8b" ||
            { cat "$tmp/e8b"; fail "a DOPPLER file as $f refused"; }
    done
    # every DOPPLER file's hash is listed
    for f in "$sh_data"/doppler-graphs/*.txt; do
        h=$("$bin" graph info "$f" | sed -n 's/^content hash: *\([0-9a-f]*\).*/\1/p')
        grep -q "^$h $(basename "$f")\$" "$top_srcdir/data/testsets/doppler-graphs.txt" || fail "$f: hash $h not in data/testsets/doppler-graphs.txt"
    done
elif [ "${DOPPLER_REQUIRE_SHARED_DATA:-}" = 1 ]; then
    fail "no DOPPLER graph files in $sh_data (DOPPLER_REQUIRE_SHARED_DATA=1)"
fi
"$bin" train --family nope --config "$tmp/b4.json" --stage il --episodes 4 > /dev/null 2> "$tmp/e9"
[ $? -eq 2 ] && grep -q "unknown graph family 'nope'" "$tmp/e9" || { cat "$tmp/e9"; fail "an unknown family named"; }
"$bin" train --method placeto --graph "$tiny" --graphs "$small" --stage sim --episodes 4 > /dev/null 2> "$tmp/e10"
[ $? -eq 1 ] && grep -q 'only doppler' "$tmp/e10" || { cat "$tmp/e10"; fail "placeto on several graphs refused"; }
echo "transfer: chainmm-small's checkpoint places ffnn on 4 and 8 devices and dgx1-v100; incompatible ones refused"
