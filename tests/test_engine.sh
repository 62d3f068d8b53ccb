#!/bin/sh
# One machine, one engine: over a grid of graphs, machine options and methods, `doppler place`,
# `doppler simulate --assignment`, the heuristics table of `doppler train` and a sweep row give
# the same makespan for the same placement (they all simulate through dp_engine). And the searches
# optimise the machine's own model: anneal and local under max-min on dgx1-v100 are never worse
# (under max-min) than the cp placement they start from.
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
doppler_cmd() { ${DOPPLER_VALGRIND:-} "$top_builddir/doppler" "$@"; }
DOPPLER=doppler_cmd
DOPPLER_DATA="${DOPPLER_DATA:-$top_srcdir/data}"; export DOPPLER_DATA
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
json_ms() { sed 's/.*"makespan":\([^,]*\),.*/\1/' "$1"; }
# numeric equality of two decimal strings (both printed with 17 significant digits)
same() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 == b + 0) }'; }

G1="$top_srcdir/data/graphs/chainmm-small.json"
G2="$top_srcdir/tests/data/forkjoin-physical.json"
# machine option sets, as command-line options and as sweep parameters (same order)
set_cli() {
    case $1 in
    0) echo "--devices 4" ;;
    1) echo "--topology pcie-gen3-4gpu" ;;
    2) echo "--topology dgx1-v100 --transfer-model fifo" ;;
    3) echo "--topology dgx1-v100 --transfer-model maxmin" ;;
    4) echo "--topology dgx1-v100 --transfer-model maxmin --copy-engines off" ;;
    5) echo "--topology pcie-gen3-4gpu --streams 2" ;;
    6) echo "--topology pcie-gen3-4gpu --mode bsp" ;;
    7) echo "--devices 4 --queue priority" ;;
    esac
}
set_json() {
    case $1 in
    0) echo '"devices": [4]' ;;
    1) echo '"topology": ["pcie-gen3-4gpu"]' ;;
    2) echo '"topology": ["dgx1-v100"], "transfer": ["fifo"]' ;;
    3) echo '"topology": ["dgx1-v100"], "transfer": ["maxmin"]' ;;
    4) echo '"topology": ["dgx1-v100"], "transfer": ["maxmin"], "copy_engines": ["off"]' ;;
    5) echo '"topology": ["pcie-gen3-4gpu"], "streams": [2]' ;;
    6) echo '"topology": ["pcie-gen3-4gpu"], "mode": ["bsp"]' ;;
    7) echo '"devices": [4], "queue": ["priority"]' ;;
    esac
}
printf '{"network": {"hidden": 4, "mlp_hidden": 4, "edge_hidden": 4, "steps": 1}}\n' > "$tmp/tiny.json"

checked=0
for G in "$G1" "$G2"; do
    for k in 0 1 2 3 4 5 6 7; do
        opts=$(set_cli $k)
        # sweep rows of the same graph, machine and methods
        cat > "$tmp/sweep.json" <<EOF
{"name": "engine", "grid": [{"graph": ["$G"], $(set_json $k), "method": ["cp", "round-robin", "heft"]},
                            {"graph": ["$G"], $(set_json $k), "method": ["anneal"], "budget": [40]}]}
EOF
        rm -f "$tmp/engine.h5" "$tmp/engine.csv"
        # shellcheck disable=SC2086
        $DOPPLER sweep "$tmp/sweep.json" --jobs 1 --quiet --out "$tmp/engine.h5" >/dev/null 2>"$tmp/err" ||
            fail "sweep $opts: $(cat "$tmp/err")"
        for m in cp round-robin heft anneal; do
            # shellcheck disable=SC2086
            # the budget only where the method reads it (the method table refuses it elsewhere)
            b=""; [ "$m" = anneal ] && b="--budget 40"
            if ! $DOPPLER place --graph "$G" --method $m $b $opts --json --out "$tmp/a.json" >"$tmp/p.json" 2>"$tmp/err"; then
                fail "place $m $opts: $(cat "$tmp/err")"
                continue
            fi
            # shellcheck disable=SC2086
            $DOPPLER simulate --graph "$G" --assignment "$tmp/a.json" $opts --json >"$tmp/s.json" 2>"$tmp/err" ||
                fail "simulate $m $opts: $(cat "$tmp/err")"
            p=$(json_ms "$tmp/p.json"); s=$(json_ms "$tmp/s.json")
            same "$p" "$s" || fail "$G $opts $m: place $p, simulate --assignment $s"
            row=$(awk -F, -v m="$m" '$4 == m { print $12 }' "$tmp/engine.csv")
            [ -n "$row" ] && same "$p" "$row" || fail "$G $opts $m: place $p, sweep row '$row'"
            checked=$((checked + 1))
        done
    done
done
# the heuristics table of train simulates on the machine given to train
for k in 0 1 3 5; do
    opts=$(set_cli $k)
    # shellcheck disable=SC2086
    $DOPPLER train --graph "$G1" $opts --stage il --episodes 1 --config "$tmp/tiny.json" >"$tmp/t.out" 2>"$tmp/err" ||
        fail "train $opts: $(cat "$tmp/err")"
    for m in cp round-robin random; do
        t=$(awk -v m="$m" '$1 == m { print $2 }' "$tmp/t.out")
        # shellcheck disable=SC2086
        p=$($DOPPLER place --graph "$G1" --method $m $opts | sed -n 's/^makespan: \([^ ]*\) .*/\1/p')
        [ -n "$t" ] && [ "$t" = "$p" ] || fail "train $opts: $m row '$t', place '$p'"
        checked=$((checked + 1))
    done
done

# the searches optimise the max-min makespan: never worse than their start (cp), under max-min
for m in anneal local; do
    opts="--topology dgx1-v100 --transfer-model maxmin"
    # shellcheck disable=SC2086
    cp_ms=$($DOPPLER place --graph "$G1" --method cp $opts --json | sed 's/.*"makespan":\([^,]*\),.*/\1/')
    # shellcheck disable=SC2086
    s_ms=$($DOPPLER place --graph "$G1" --method $m --budget 300 $opts --json | sed 's/.*"makespan":\([^,]*\),.*/\1/')
    awk -v a="$s_ms" -v b="$cp_ms" 'BEGIN { exit !(a + 0 <= b + 0) }' || fail "$m under maxmin: $s_ms worse than its start cp $cp_ms"
done

echo "$checked placements compared across place, simulate, sweep and train"
[ "$checked" -ge 70 ] || fail "only $checked comparisons ran"
[ "$fails" -eq 0 ] || exit 1
