#!/bin/sh
# bench/zeroshot-demos.sh's argument handling (issue 29 item 3's script; a bug found by trying,
# issue 30): a bad VARIANTS, SEEDS, EPISODES or JOBS value, or IMPROVE naming a missing file or
# a directory, is refused before anything runs (the script used to train the improvement policy
# first, about 4 CPU minutes, then refuse VARIANTS=E; EPISODES=abc was a Python traceback after
# it, SEEDS=x ran training runs, IMPROVE=/tmp passed). DOPPLER is a stand-in that records every
# call, so nothing trains here.
set -u
top_srcdir=${top_srcdir:-.}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dp-zeroshot-args-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
printf '#!/bin/sh\necho "$*" >> "%s/calls"\nexit 3\n' "$tmp" > "$tmp/doppler"
chmod +x "$tmp/doppler"
: > "$tmp/improve.h5"
# refused ENV... WORD: exit non-zero, a message naming WORD on stderr, no doppler call
refused() {
    word=$1; shift
    rm -f "$tmp/calls"
    env "$@" DOPPLER="$tmp/doppler" OUTDIR="$tmp/out" sh "$top_srcdir/bench/zeroshot-demos.sh" > "$tmp/out.txt" 2> "$tmp/err.txt"
    rc=$?
    [ "$rc" -ne 0 ] || fail "$*: exit 0"
    grep -q "zeroshot-demos: .*$word" "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "$*: no message naming $word"; }
    [ ! -f "$tmp/calls" ] || { cat "$tmp/calls"; fail "$*: doppler ran before the refusal"; }
}
refused VARIANTS VARIANTS=E
refused VARIANTS "VARIANTS=A E" IMPROVE="$tmp/improve.h5"
refused IMPROVE IMPROVE="$tmp/missing.h5"
refused IMPROVE IMPROVE="$tmp"
refused VARIANTS VARIANTS=E IMPROVE="$tmp/missing.h5"
refused EPISODES EPISODES=abc
refused EPISODES EPISODES=0 IMPROVE="$tmp/improve.h5"
refused SEEDS SEEDS=x
refused SEEDS "SEEDS=1 -2"
refused JOBS JOBS=0
echo "bench/zeroshot-demos.sh refuses bad arguments before running anything"
