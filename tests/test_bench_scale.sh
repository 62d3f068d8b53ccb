#!/bin/sh
# bench/scale.sh's imported-model part (issue 30), without torch: a stand-in interpreter
# (DOPPLER_PYTHON, which `doppler graph import` runs) writes a generated graph where the import
# would and prints the importer's summary line; the bench places that graph by the same methods
# as the Llama graph, and its table's makespans are those of `doppler place` on that graph. Where
# the interpreter lacks torch (the importer's "is not installed" message) or cannot run, the part
# says so and the exit status is the Llama part's (0); a failed import (no such model) exits 1.
# The importer itself (`doppler graph import torchvision:M --training`) is tested in
# tests/python/test_importers.py.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
bin="$top_builddir/doppler"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-bench-scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
DOPPLER_DATA=${DOPPLER_DATA:-$top_srcdir/data}
export DOPPLER_DATA
# scripts/install-deps.sh installs it: under CI a missing one is a failure, not a skip
if [ ! -x /usr/bin/time ]; then
    [ "${CI:-}" = true ] && { echo "FAIL: /usr/bin/time not found (apt-get install time; scripts/install-deps.sh)"; exit 1; }
    echo "SKIP: /usr/bin/time not found (apt-get install time)"
    exit 77
fi

"$bin" graph gen ffnn --training --out "$tmp/ffnn.json" > /dev/null || fail "graph gen ffnn"
# the stand-in: called as PY -c BOOTSTRAP TREE torchvision:M --training ... --out FILE
cat > "$tmp/py" <<EOF
#!/bin/sh
case " \$* " in
    *" torchvision:nonesuch "*) echo "doppler graph import: torchvision:nonesuch: no such model" >&2; exit 1 ;;
    *" torchvision:notorch "*) echo "doppler graph import: doppler.importers: Python's torch is not installed (Debian: apt-get install python3-torch)" >&2; exit 1 ;;
esac
while [ \$# -gt 1 ]; do [ "\$1" = --out ] && out=\$2; shift; done
cp "$tmp/ffnn.json" "\$out"
echo "\$out: 7 ops, 8 edges, 9e+09 FLOPs, parameters 10 bytes"
EOF
chmod +x "$tmp/py"
export DOPPLER_PYTHON="$tmp/py"
run() { # env assignments...; sets out, rc
    rc=0
    out=$(env "$@" top_srcdir="$top_srcdir" DOPPLER="$bin" CKPT=unused SWEEP_LAYERS= \
        METHODS="round-robin heft" MACHINE="--devices 4" sh "$top_srcdir/bench/scale.sh" 2>&1) || rc=$?
}

run LAYERS= TORCH_MODEL=resnet18 TORCH_INPUT=2x3x8x8
[ "$rc" = 0 ] || { echo "$out"; fail "the imported graph: exit $rc"; }
echo "$out" | grep -q '^# graph import torchvision:resnet18 --training --optimizer sgd --input-shape 2x3x8x8: 7 ops, 8 edges, 9e+09 FLOPs, parameters 10 bytes; ' \
    || { echo "$out"; fail "the import's line"; }
for m in round-robin heft; do
    want=$("$bin" place --graph "$tmp/ffnn.json" --devices 4 --method $m --json | sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p')
    want=$(printf %.6g "$want")
    echo "$out" | grep -q "^| $m | $want | " || { echo "$out"; fail "$m: makespan $want expected"; }
done
# the instant methods on pairs (INSTANT_COARSEN's default 2): heft --coarsen 2 is place's
want=$("$bin" place --graph "$tmp/ffnn.json" --devices 4 --method heft --coarsen 2 --json | sed -n 's/.*"makespan":\([-0-9.e+]*\).*/\1/p')
want=$(printf %.6g "$want")
echo "$out" | grep -q "^| heft --coarsen 2 | $want | " || { echo "$out"; fail "heft --coarsen 2: makespan $want expected"; }
echo "$out" | grep -q '^# graph gen llama-layer' && fail "LAYERS= ran the Llama table"

# no torch, no interpreter: said and skipped; the Llama table still there, exit 0
run LAYERS=1 TORCH_MODEL=notorch
[ "$rc" = 0 ] || { echo "$out"; fail "no torch: exit $rc"; }
echo "$out" | grep -q "^# torchvision:notorch skipped: .*Python's torch is not installed" || { echo "$out"; fail "no torch: the skip line"; }
echo "$out" | grep -q '^# graph gen llama-layer --layers 1 --tp 8 --training: 1374 ops' || { echo "$out"; fail "no torch: the Llama table"; }
run LAYERS=1 DOPPLER_PYTHON="$tmp/none"
[ "$rc" = 0 ] || { echo "$out"; fail "no interpreter: exit $rc"; }
echo "$out" | grep -q "^# torchvision:resnet50 skipped: doppler graph import: cannot run $tmp/none" || { echo "$out"; fail "no interpreter: the skip line"; }
# a failed import is a failure
run LAYERS= TORCH_MODEL=nonesuch
[ "$rc" = 1 ] || { echo "$out"; fail "a failed import: exit $rc, expected 1"; }
echo "$out" | grep -q '^# graph import torchvision:nonesuch: failed (exit 1: .*no such model)' || { echo "$out"; fail "a failed import: its line"; }
# TORCH_MODEL= skips the part without a word
run LAYERS=1 TORCH_MODEL=
[ "$rc" = 0 ] || fail "TORCH_MODEL=: exit $rc"
echo "$out" | grep -q torchvision && { echo "$out"; fail "TORCH_MODEL= ran the import"; }
echo "bench/scale.sh places an imported graph and skips the part without torch"
