#!/bin/sh
# Full disk (issue 19): training and a sweep write onto a tmpfs too small for them, at 20 sizes.
# Never a signal; either success or exit 1 with "No space left on device" naming the file; no
# temporary file left; the files left at their final paths are their last good versions: a
# training resumed from them on a large disk ends equal (h5diff) to an uninterrupted run, a
# sweep started again ends with the same rows as an uninterrupted sweep, and no file holds zero
# rows (the old writer left rows of zeros and died with SIGSEGV inside libhdf5 at exit).
# Needs root (mount -t tmpfs): SKIP (exit 77) otherwise, or when mount or h5diff is missing.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER="$top_builddir/doppler"
GRAPH="$top_srcdir/data/graphs/chainmm-small.json"
SWEEP_GRAPH="$top_srcdir/tests/data/sweep-fork.json"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root (mount -t tmpfs)"; exit 77; }
command -v h5diff > /dev/null 2>&1 || { echo "SKIP: h5diff missing (Debian package hdf5-tools)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-fulldisk-XXXXXX")
mnt="$work/mnt"
big="$work/big"
mkdir -p "$mnt" "$big"
cleanup() {
    umount "$mnt" 2> /dev/null || true
    umount "$big" 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
mount -t tmpfs -o size=64m tmpfs "$big" 2> /dev/null || { echo "SKIP: mount -t tmpfs fails here"; exit 77; }

# a small network and frequent checkpoints: many writes, each fast
cat > "$work/tiny.json" <<JSON
{"network": {"hidden": 8, "mlp_hidden": 8, "edge_hidden": 8, "steps": 1}, "checkpoint_every": 5}
JSON
export OPENBLAS_NUM_THREADS=1
train() { "$DOPPLER" train --graph "$GRAPH" --config "$work/tiny.json" --pipeline --episodes 20 --quiet "$@"; }

# what an uninterrupted run writes
mkdir "$big/ref"
train --checkpoint "$big/ref/c.h5" --trajectory "$big/ref/t.h5" > /dev/null || fail "reference training failed"

# A sweep of 12 short runs (its per-run files go beside the results file).
cat > "$work/sweep.json" <<JSON
{"name": "full", "fixed": {"graph": "$SWEEP_GRAPH", "devices": 4},
 "grid": {"method": ["cp", "random", "round-robin"], "seed": [1, 2, 3, 4]}}
JSON
mkdir "$big/sref"
"$DOPPLER" sweep "$work/sweep.json" --out "$big/sref/r.h5" --jobs 1 --quiet 2> "$work/sweep.err" \
    || { cat "$work/sweep.err" >&2; fail "reference sweep failed"; }
rows() { tail -n +2 "$1" | cut -d, -f1,12 | sort; }
rows "$big/sref/r.csv" > "$work/sref.rows"
[ "$(wc -l < "$work/sref.rows")" -eq 12 ] || fail "reference sweep: not 12 rows"

# The outcome of one command on the small disk: exit 0, or 1 with the cause and a file named;
# never a signal; no temporary file left.
check_outcome() { # what rc errfile
    [ "$2" -lt 128 ] || { cat "$3" >&2; fail "$1: killed by signal $(($2 - 128))"; }
    if [ "$2" -ne 0 ]; then
        [ "$2" -eq 1 ] || { cat "$3" >&2; fail "$1: exit status $2, expected 1"; }
        grep -q "No space left on device" "$3" || { cat "$3" >&2; fail "$1: no \"No space left on device\""; }
        grep -q "$mnt/" "$3" || { cat "$3" >&2; fail "$1: the message names no file"; }
    fi
    ! ls -a "$mnt" | grep -q '\.tmp\.' || { ls -la "$mnt" >&2; fail "$1: temporary files left"; }
}

# 20 sizes each (KiB): training's files need about 1.5 MiB, the sweep's about 100 KiB
train_sizes="8 16 24 32 48 64 96 128 192 256 320 384 448 512 640 768 896 1024 1280 1536"
sweep_sizes="4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 64 68 72 76 80"
failures=0
i=0
for size in $train_sizes; do
    i=$((i + 1))
    ssize=$(echo $sweep_sizes | cut -d' ' -f$i)
    mount -t tmpfs -o size=${size}k tmpfs "$mnt" || fail "mount size=${size}k"
    # ---- training ----
    rc=0
    train --checkpoint "$mnt/c.h5" --trajectory "$mnt/t.h5" > /dev/null 2> "$work/err" || rc=$?
    check_outcome "train on ${size}k" "$rc" "$work/err"
    [ "$rc" -eq 0 ] || failures=$((failures + 1))
    echo "${size}k: train exit $rc"
    tsize=$size
    trial="$big/t$size"
    mkdir "$trial"
    if [ -f "$mnt/c.h5" ]; then
        # the files left are a good state of the run: resumed, it ends as the uninterrupted run
        cp "$mnt/c.h5" "$mnt/t.h5" "$trial/"
        train --checkpoint "$trial/c.h5" --trajectory "$trial/t.h5" --resume > /dev/null 2> "$work/err2" \
            || { cat "$work/err2" >&2; fail "${size}k: resuming from the files left failed"; }
        h5diff --exclude-attribute / "$big/ref/c.h5" "$trial/c.h5" > "$work/diff" 2>&1 \
            || { head -20 "$work/diff" >&2; fail "${size}k: checkpoint after resume differs from the uninterrupted run's"; }
        h5diff --exclude-attribute / --exclude-path /episodes/wall_s --exclude-path /evaluations/unix_s "$big/ref/t.h5" "$trial/t.h5" > "$work/diff" 2>&1 \
            || { head -20 "$work/diff" >&2; fail "${size}k: trajectory after resume differs from the uninterrupted run's"; }
    elif [ -f "$mnt/t.h5" ]; then
        # no checkpoint yet: the trajectory is a readable file whose rows are real (none zero)
        h5dump -d /steps/ready "$mnt/t.h5" > "$work/dump" 2>&1 || fail "${size}k: the trajectory left does not read"
        ! grep -q "^ *([0-9]*): .*\b0\b" "$work/dump" || fail "${size}k: a trajectory row of zeros"
    fi
    rm -f "$mnt"/*
    umount "$mnt"
    # ---- sweep ----
    size=$ssize
    mount -t tmpfs -o size=${size}k tmpfs "$mnt" || fail "mount size=${size}k"
    rc=0
    "$DOPPLER" sweep "$work/sweep.json" --out "$mnt/r.h5" --jobs 1 --quiet > /dev/null 2> "$work/err" || rc=$?
    check_outcome "sweep on ${size}k" "$rc" "$work/err"
    [ "$rc" -eq 0 ] || failures=$((failures + 1))
    echo "${size}k: sweep exit $rc, $(($(cat "$mnt/r.csv" 2> /dev/null | wc -l) - 1)) rows in the CSV"
    mkdir "$trial/s"
    cp -r "$mnt"/. "$trial/s/"
    if [ -f "$trial/s/r.h5" ]; then
        # the HDF5 file left reads, and holds only rows of the CSV
        "$DOPPLER" report "$trial/s/r.h5" --table runs > "$work/h5rows" 2> "$work/err2" \
            || { cat "$work/err2" >&2; fail "${size}k: the results file left does not read"; }
        tail -n +2 "$work/h5rows" | cut -d, -f1 | sort > "$work/h5keys"
        tail -n +2 "$trial/s/r.csv" | cut -d, -f1 | sort > "$work/csvkeys"
        [ -z "$(comm -23 "$work/h5keys" "$work/csvkeys")" ] || fail "${size}k: results HDF5 rows missing from the CSV"
    fi
    # started again on a large disk (runs that failed for want of disk run again), the sweep
    # ends with the uninterrupted sweep's rows
    "$DOPPLER" sweep "$work/sweep.json" --out "$trial/s/r.h5" --jobs 1 --retry-failed --quiet > /dev/null 2> "$work/err2" \
        || { cat "$work/err2" >&2; fail "${size}k: the sweep started again failed"; }
    rows "$trial/s/r.csv" | cmp -s - "$work/sref.rows" || { rows "$trial/s/r.csv" | diff - "$work/sref.rows" >&2 || true; grep -v ",ok," "$trial/s/r.csv" >&2 || true; fail "${size}k: the sweep started again has other rows"; }
    rm -rf "$big/t$tsize"
    umount "$mnt"
done
# the graph writers name the cause too (native JSON and DOT said "write failed" alone)
mount -t tmpfs -o size=16k tmpfs "$mnt" || fail "mount size=16k"
for out in g.json g.dot; do
    rc=0
    "$DOPPLER" graph gen llama-layer --layers 2 --tp 8 --out "$mnt/$out" > /dev/null 2> "$work/err" || rc=$?
    [ "$rc" -eq 1 ] || { cat "$work/err" >&2; fail "graph gen --out $out on 16k: exit $rc, expected 1"; }
    check_outcome "graph gen --out $out on 16k" "$rc" "$work/err"
done
umount "$mnt"
# a plot onto a disk too small for it: exit 1 and nothing at its path (gnuplot's cairo terminal
# exits 0 after a failed write, and a cut-off PNG was renamed into place with exit 0: a review of
# the eighteenth session), at several sizes; an SVG too
if command -v gnuplot > /dev/null 2>&1; then
    "$DOPPLER" report "$big/sref/r.h5" --plot bars --out "$work/full.png" > /dev/null 2>&1 ||
        fail "the plot on a large disk failed"
    for size in 4 8 12 16 20; do
        for ext in png svg; do
            mount -t tmpfs -o size=${size}k tmpfs "$mnt" || fail "mount size=${size}k"
            rc=0
            "$DOPPLER" report "$big/sref/r.h5" --plot bars --out "$mnt/p.$ext" > /dev/null 2> "$work/err" || rc=$?
            if [ "$rc" -ne 0 ]; then
                [ "$rc" -eq 1 ] && grep -q "p.$ext" "$work/err" && [ ! -e "$mnt/p.$ext" ] ||
                    { cat "$work/err" >&2; fail "plot .$ext on ${size}k: exit $rc, or a file left"; }
                [ -z "$(ls "$mnt")" ] || fail "plot .$ext on ${size}k: left $(ls "$mnt")"
                failures=$((failures + 1))
            elif [ "$ext" = png ]; then
                cmp -s "$mnt/p.png" "$work/full.png" || fail "plot on ${size}k: exit 0 with another file than the full plot"
            fi
            umount "$mnt"
        done
    done
fi
# most sizes must have been too small, or the test tests nothing
[ "$failures" -ge 30 ] || fail "only $failures of 40 commands met a full disk"
echo "PASS: 20 disk sizes, $failures commands met a full disk"
