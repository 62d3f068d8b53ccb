# shellcheck shell=sh disable=SC2154
# bench/lib.sh, sourced by the benches: the checkpoints the transfer benches (transfer.sh,
# transfer-size.sh, transfer-improve.sh) share through CKPT_DIR, made in one place, and the best
# known makespans of DOPPLER's graphs read from their one file (data/best-known.json).
#
# bench_ckpt CK SETTINGS COMMAND...: reuse the checkpoint CK when it is there, else run
# COMMAND --checkpoint CK.part and move CK.part to CK when COMMAND succeeds, so that a killed
# run leaves no CK to be mistaken for a finished one. SETTINGS (one line: what makes the
# checkpoint, e.g. "COUNT=96 EPISODES=300 CONFIG=<cksum> ...") is kept in CK.settings; a CK
# made with other settings is refused (a checkpoint of another COUNT, EPISODES, CONFIG or
# FAMILIES under the same name was reused silently before). A CK without CK.settings (made
# before they were recorded) is reused with a note on stderr. Returns COMMAND's status, 1 on
# refusal, 0 on reuse.
bench_ckpt() {
    _ck=$1; _set=$2; shift 2
    if [ -f "$_ck" ]; then
        if [ ! -f "$_ck.settings" ]; then
            echo "bench: reusing $_ck (made before its settings were recorded; not checked)" >&2
        elif [ "$(cat "$_ck.settings")" != "$_set" ]; then
            echo "bench: $_ck was made with other settings ($(cat "$_ck.settings")), not ($_set): remove it or choose another CKPT_DIR" >&2
            return 1
        fi
        return 0
    fi
    # a CKPT_DIR given but not made yet is made (train could not write in it)
    mkdir -p "$(dirname "$_ck")" || return 1
    rm -f "$_ck.part"
    "$@" --checkpoint "$_ck.part" || return $?
    mv "$_ck.part" "$_ck" && printf '%s\n' "$_set" > "$_ck.settings"
}

# bench_improve_ckpt SEED: CKPT_DIR/improve-SEED.h5, the general improvement policy trained on
# generated graphs only (FAMILIES, 32 of them, IMPROVE_EPISODES episodes, the run's seed).
bench_improve_ckpt() {
    bench_ckpt "$CKPT_DIR/improve-$1.h5" "FAMILIES=$FAMILIES COUNT=32 EPISODES=$IMPROVE_EPISODES" \
        "$bin" train --method improve --family "$FAMILIES" --family-count 32 --seed "$1" --episodes "$IMPROVE_EPISODES" --quiet > /dev/null
}

# bench_config_sum FILE: a checksum of a config file's bytes (for SETTINGS)
bench_config_sum() {
    cksum < "$1" | cut -d ' ' -f 1
}

# bench_best_known NAME: the best known makespan of DOPPLER graph NAME (chain_mm_112nodes, with or
# without .txt) from data/best-known.json under ${top_srcdir:-$top}; NA when it has none
bench_best_known() {
    python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["graphs"].get(sys.argv[2])
print(g["makespan"] if g else "NA")' "${top_srcdir:-$top}/data/best-known.json" "${1%.txt}"
}
