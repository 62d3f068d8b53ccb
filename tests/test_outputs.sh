#!/bin/sh
# Outputs (issue 19): special files are written in place or refused, never replaced; a symbolic
# link's target is written (the link stays); temporary files of dead writers go on the next
# write into their folder; a new training run does not silently replace a checkpoint or a
# trajectory (--force), and --resume refuses another run's trajectory (run ids).
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER="$(cd "$top_builddir" && pwd)/doppler"
top_srcdir=$(cd "$top_srcdir" && pwd)
GRAPH="$top_srcdir/data/graphs/chainmm-small.json"
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-outputs-XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1

# ---- special files ----
# a FIFO is written in place: the reader gets the whole graph, the FIFO stays a FIFO
mkfifo "$work/fifo"
cat "$work/fifo" > "$work/from-fifo" &
reader=$!
"$DOPPLER" graph convert "$GRAPH" "$work/fifo" --to json || fail "writing into a FIFO failed"
wait "$reader"
[ -p "$work/fifo" ] || fail "the FIFO was replaced"
"$DOPPLER" graph convert "$GRAPH" "$work/plain.json" --to json
cmp -s "$work/from-fifo" "$work/plain.json" || fail "the FIFO's reader got another text"
# a link to /dev/null: written in place, the link and /dev/null stay
ln -s /dev/null "$work/null-link"
"$DOPPLER" graph convert "$GRAPH" "$work/null-link" --to json || fail "writing to a link to /dev/null failed"
[ -L "$work/null-link" ] && [ -c /dev/null ] || fail "the link to /dev/null or /dev/null was replaced"
# a link to a file (there or not yet): its target is written, the link stays
ln -s target.json "$work/link.json"
"$DOPPLER" graph convert "$GRAPH" "$work/link.json" || fail "writing through a dangling link failed"
[ -L "$work/link.json" ] || fail "the link was replaced by a file"
cmp -s "$work/target.json" "$work/plain.json" || fail "the link's target does not hold the graph"
"$DOPPLER" graph convert "$GRAPH" "$work/link.json" || fail "writing through a link failed"
[ -L "$work/link.json" ] || fail "the link was replaced by a file (second write)"
# a directory is refused, with the reason
mkdir "$work/dir"
if "$DOPPLER" graph convert "$GRAPH" "$work/dir" --to json 2> "$work/err"; then fail "writing over a directory succeeded"; fi
grep -q "dir: is a directory" "$work/err" || { cat "$work/err" >&2; fail "no \"is a directory\""; }

# ---- temporary files of dead writers ----
sh -c 'exit 0' &
dead=$!
wait "$dead" || true
kill -0 "$dead" 2> /dev/null && fail "pid $dead still alive"
touch "$work/out.json.tmp.$dead.0" "$work/out.json.tmp.$dead" "$work/other.h5.tmp.$dead.7" "$work/out.json.tmp.$$.0"
"$DOPPLER" graph convert "$GRAPH" "$work/out.json"
[ ! -e "$work/out.json.tmp.$dead.0" ] && [ ! -e "$work/out.json.tmp.$dead" ] && [ ! -e "$work/other.h5.tmp.$dead.7" ] \
    || fail "temporary files of a dead writer left"
[ -e "$work/out.json.tmp.$$.0" ] || fail "a live writer's temporary file was removed"

# ---- training: --force, run ids ----
cat > "$work/tiny.json" <<JSON
{"network": {"hidden": 8, "mlp_hidden": 8, "edge_hidden": 8, "steps": 1}, "checkpoint_every": 5}
JSON
train() { "$DOPPLER" train --graph "$GRAPH" --config "$work/tiny.json" --stage il --episodes 10 --quiet "$@" > /dev/null; }
train --checkpoint "$work/a.h5" --trajectory "$work/a.traj.h5" || fail "run a"
cp "$work/a.h5" "$work/a.h5.orig"
cp "$work/a.traj.h5" "$work/a.traj.h5.orig"
# a new run over a's checkpoint (or trajectory) is refused, and leaves them alone
if train --checkpoint "$work/a.h5" 2> "$work/err"; then fail "a new run replaced a checkpoint without --force"; fi
grep -q "a.h5 exists already.*--resume.*--force" "$work/err" || { cat "$work/err" >&2; fail "no message naming the checkpoint and --force"; }
if train --checkpoint "$work/new.h5" --trajectory "$work/a.traj.h5" 2> "$work/err"; then fail "a new run replaced a trajectory without --force"; fi
cmp -s "$work/a.h5" "$work/a.h5.orig" && cmp -s "$work/a.traj.h5" "$work/a.traj.h5.orig" || fail "a refused run changed a's files"
# run b; resuming a's checkpoint with b's trajectory is refused, and b's trajectory is left alone
train --checkpoint "$work/b.h5" --trajectory "$work/b.traj.h5" --seed 2 || fail "run b"
cp "$work/b.traj.h5" "$work/b.traj.h5.orig"
if "$DOPPLER" train --graph "$GRAPH" --config "$work/tiny.json" --stage il --episodes 20 --quiet \
    --checkpoint "$work/a.h5" --trajectory "$work/b.traj.h5" --resume > /dev/null 2> "$work/err"; then
    fail "resume accepted another run's trajectory"
fi
grep -q "b.traj.h5: the trajectory of another run" "$work/err" || { cat "$work/err" >&2; fail "no message naming the foreign trajectory"; }
cmp -s "$work/b.traj.h5" "$work/b.traj.h5.orig" || fail "the refused resume changed b's trajectory"
# with its own trajectory a resumes; --force starts afresh over it
"$DOPPLER" train --graph "$GRAPH" --config "$work/tiny.json" --stage il --episodes 20 --quiet \
    --checkpoint "$work/a.h5" --trajectory "$work/a.traj.h5" --resume > /dev/null || fail "resume with the run's own trajectory"
train --checkpoint "$work/a.h5" --trajectory "$work/a.traj.h5" --force || fail "--force"

# ---- hyperparameters and seeds ----
echo '{"adam": {"eps": 0}}' > "$work/eps0.json"
if "$DOPPLER" train --config "$work/eps0.json" --print-config > /dev/null 2> "$work/err"; then fail "adam.eps 0 accepted"; fi
grep -q 'eps0.json: config: "adam.eps" = 0 out of range' "$work/err" || { cat "$work/err" >&2; fail "no message on adam.eps"; }
# seed 2^64-1 survives the config text (a checkpoint's config) unchanged, and a run with it resumes
"$DOPPLER" train --seed 18446744073709551615 --print-config > "$work/seed.json"
"$DOPPLER" train --config "$work/seed.json" --print-config | grep -q '"seed": "18446744073709551615"' || fail "seed 2^64-1 not kept"
train --checkpoint "$work/s.h5" --seed 18446744073709551615 || fail "training with seed 2^64-1"
"$DOPPLER" train --graph "$GRAPH" --config "$work/tiny.json" --stage il --episodes 20 --quiet \
    --checkpoint "$work/s.h5" --resume > /dev/null || fail "resuming a run of seed 2^64-1"
# a directory given as a JSON input is named as such
if "$DOPPLER" train --config "$work/dir" --print-config 2> "$work/err"; then fail "a directory as config accepted"; fi
grep -q "dir: is a directory" "$work/err" || { cat "$work/err" >&2; fail "no \"is a directory\" for a JSON input"; }

# ---- sweep outputs: a name cannot leave the working folder; --out FILE.csv is refused ----
mkdir "$work/sw"
cat > "$work/sw/evil.json" <<JSON
{"name": "../escaped", "fixed": {"graph": "$top_srcdir/tests/data/sweep-fork.json", "method": "cp", "devices": 2}}
JSON
if (cd "$work/sw" && "$DOPPLER" sweep evil.json --quiet 2> "$work/err"); then fail "a sweep name with .. was accepted"; fi
grep -q '"name" must be a plain file name .*got "../escaped"' "$work/err" || { cat "$work/err" >&2; fail "no message on the name"; }
[ ! -e "$work/escaped.h5" ] && [ ! -e "$work/escaped.csv" ] || fail "the sweep wrote outside its working folder"
sed 's#"../escaped"#"ok"#' "$work/sw/evil.json" > "$work/sw/ok.json"
if "$DOPPLER" sweep "$work/sw/ok.json" --out "$work/sw/r.csv" --quiet 2> "$work/err"; then fail "--out r.csv was accepted"; fi
grep -q "names the HDF5 results file" "$work/err" || { cat "$work/err" >&2; fail "no message on --out .csv"; }
[ ! -e "$work/sw/r.csv" ] || fail "--out r.csv wrote r.csv"

# ---- messages name the file and its folder, never a temporary name, never "doppler: doppler:" ----
cd "$work"
if "$DOPPLER" place --graph "$GRAPH" --method cp --out nodir/a.json > /dev/null 2> "$work/err"; then fail "--out nodir/a.json accepted"; fi
grep -q "nodir/a.json: cannot write it: the folder nodir does not exist" "$work/err" || { cat "$work/err" >&2; fail "place --out into a missing folder: no file and folder named"; }
grep -q '\.tmp\.' "$work/err" && { cat "$work/err" >&2; fail "the message names a temporary file"; }
: > "$work/afile"
if "$DOPPLER" graph convert "$GRAPH" afile/g.json 2> "$work/err"; then fail "a file as a folder accepted"; fi
grep -q "afile/g.json: cannot write it: afile is not a folder" "$work/err" || { cat "$work/err" >&2; fail "no message on a file given as folder"; }
if "$DOPPLER" place --graph "$GRAPH" --method doppler > /dev/null 2> "$work/err"; then fail "doppler without a checkpoint accepted"; fi
grep -q 'doppler: doppler:' "$work/err" && { cat "$work/err" >&2; fail "a doubled prefix"; }
grep -q -- '--checkpoint FILE is required' "$work/err" || { cat "$work/err" >&2; fail "no message on the missing checkpoint"; }
# a folder where no file can be made (as root, access() passes on /sys; a user's chmod 555
# folder is the same case): train refuses its checkpoint before training and leaves no
# trajectory (it trained to its first checkpoint, 100 episodes, then failed: a review)
unwritable=""
if [ -d /sys ] && ! (: > /sys/doppler-probe) 2> /dev/null; then unwritable=/sys
elif [ "$(id -u)" != 0 ]; then mkdir "$work/ro" && chmod 555 "$work/ro" && unwritable="$work/ro"; fi
rm -f /sys/doppler-probe 2> /dev/null # (a /sys that took the file: a bare folder, in a chroot)
if [ -n "$unwritable" ]; then
    if "$DOPPLER" train --graph "$GRAPH" --config "$work/tiny.json" --stage il --episodes 300 \
        --checkpoint "$unwritable/c.h5" --trajectory "$work/orphan.traj.h5" > "$work/out" 2> "$work/err"; then
        fail "a checkpoint in $unwritable was accepted"
    fi
    grep -q "$unwritable/c.h5: cannot write it in the folder $unwritable" "$work/err" || { cat "$work/err" >&2; fail "no message on the unwritable checkpoint folder"; }
    [ ! -e "$work/orphan.traj.h5" ] || fail "train left a trajectory behind its refused checkpoint"
    grep -q "episode" "$work/err" "$work/out" && { cat "$work/err" >&2; fail "train trained before refusing its checkpoint"; }
    # place checks --out and --trace before any work, the graph's reading included (it searched
    # to its budget, then failed: a review); a graph file that is not there shows the order
    for o in --out --trace; do
        if "$DOPPLER" place --graph "$work/no-such-graph.json" --method anneal --budget 100000 $o "$unwritable/a.json" \
            > /dev/null 2> "$work/err"; then fail "place $o into $unwritable accepted"; fi
        grep -q "$unwritable/a.json: cannot write it in the folder $unwritable" "$work/err" ||
            { cat "$work/err" >&2; fail "place $o into $unwritable: not refused before the work"; }
    done
fi
# the commands messages suggest are pasted into a shell: a path with a space or a quote is one
# word (train printed --checkpoint sp ace/c.h5, mkdir -p a b: a review)
mkdir "$work/sp ace"
"$DOPPLER" train --graph "$GRAPH" --config "$work/tiny.json" --stage il --episodes 2 --quiet \
    --checkpoint "$work/sp ace/it's.h5" > "$work/out" 2> "$work/err" || { cat "$work/err" >&2; fail "train into a folder with a space"; }
cmd=$(sed -n 's/^checkpoint: .* (place with: \(doppler place .*\))$/\1/p' "$work/out")
[ -n "$cmd" ] || { cat "$work/out" >&2; fail "train printed no place command"; }
(PATH="$(dirname "$DOPPLER"):$PATH" sh -c "$cmd" > /dev/null 2> "$work/err") || { cat "$work/err" >&2; fail "the printed place command failed: $cmd"; }
rc=0; "$DOPPLER" place --graph "$GRAPH" --method cp --out "$work/no dir/x.json" > /dev/null 2> "$work/err" || rc=$?
grep -q "mkdir -p '$work/no dir')" "$work/err" || { cat "$work/err" >&2; fail "mkdir advice: the folder not one shell word"; }
# the output checks' order and their edges (a review of d17c079): usage errors first (status
# 2), an empty name is one; --print-config writes nothing, so checks none; /dev/stdout under a
# pipe is written in place (the pipe's "pipe:[N]" link made it a missing file, after the work);
# validate's plot, a file renamed into place, is refused as /dev/null before any measurement
rc=0; "$DOPPLER" place --graph "$GRAPH" --method cp --out nodir/x.json --format-out xml > /dev/null 2> "$work/err" || rc=$?
[ $rc -eq 2 ] && grep -q -- "--format-out: text or json" "$work/err" || { cat "$work/err" >&2; fail "a usage error after an unwritable --out: exit $rc"; }
mkdir "$work/empty-name"
rc=0; (cd "$work/empty-name" && "$DOPPLER" place --graph "$GRAPH" --method cp --out '') > /dev/null 2> "$work/err" || rc=$?
[ $rc -eq 2 ] && grep -q -- "--out '': name a file" "$work/err" || { cat "$work/err" >&2; fail "--out '': exit $rc"; }
[ -z "$(ls -A "$work/empty-name")" ] || fail "--out '' left a file: $(ls -A "$work/empty-name")"
rc=0; "$DOPPLER" train --graph "$GRAPH" --checkpoint nodir/c.h5 --print-config > /dev/null 2> "$work/err" || rc=$?
[ $rc -eq 0 ] || { cat "$work/err" >&2; fail "train --print-config with a checkpoint in a missing folder: exit $rc"; }
"$DOPPLER" place --graph "$GRAPH" --method cp --json --out /dev/stdout 2> "$work/err" | cat > "$work/stdout.json"
grep -q '"devices"' "$work/stdout.json" || { cat "$work/err" >&2; fail "place --out /dev/stdout into a pipe: no assignment"; }
# /dev/stdout (and /dev/fd/N) into a file is the descriptor, appended in its mode: replaced
# through the /proc link, `--out /dev/stdout >> log` lost the log's lines and the report (a review)
echo prior > "$work/app.txt"
"$DOPPLER" place --graph "$GRAPH" --method cp --out /dev/stdout >> "$work/app.txt" 2> "$work/err" || { cat "$work/err" >&2; fail "place --out /dev/stdout >> file"; }
[ "$(head -n 1 "$work/app.txt")" = prior ] && grep -q '"devices"' "$work/app.txt" && grep -q '^makespan:' "$work/app.txt" ||
    { cat "$work/app.txt" >&2; fail "--out /dev/stdout >> file: the file's line, the assignment or the report lost"; }
"$DOPPLER" place --graph "$GRAPH" --method cp --out /dev/fd/5 5> "$work/fd5.json" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; fail "place --out /dev/fd/5"; }
grep -q '"devices"' "$work/fd5.json" || fail "--out /dev/fd/5: no assignment"
# a file made whole and renamed into place (an HDF5 checkpoint or results file, a plot) cannot go
# to a descriptor: refused before the work (a PNG renamed over /dev/stdout replaced it as root;
# HDF5 images were appended to a redirected stdout, the reader seeing the first: a review)
rc=0; "$DOPPLER" train --graph "$GRAPH" --config "$work/tiny.json" --stage il --episodes 2 --checkpoint /dev/stdout > "$work/ck.out" 2> "$work/err" || rc=$?
[ $rc -eq 2 ] && grep -q "an HDF5 file is written, name one" "$work/err" && [ ! -s "$work/ck.out" ] || { cat "$work/err" >&2; fail "train --checkpoint /dev/stdout: exit $rc"; }
rc=0; "$DOPPLER" sweep "$work/sw/ok.json" --out /dev/stdout > /dev/null 2> "$work/err" || rc=$?
[ $rc -eq 1 ] && grep -q "a descriptor" "$work/err" || { cat "$work/err" >&2; fail "sweep --out /dev/stdout: exit $rc"; }
ln -s /dev/fd/1 "$work/plot-link.png"
rc=0; "$DOPPLER" validate --graph "$GRAPH" --assignments 2 --methods cp --repeats 1 --target-flops 1e6 --plot "$work/plot-link.png" \
    > "$work/out" 2> "$work/err" || rc=$?
[ $rc -eq 1 ] && grep -q "a descriptor" "$work/err" && ! grep -q "MAPE" "$work/out" && [ -L "$work/plot-link.png" ] ||
    { cat "$work/err" >&2; fail "validate --plot to a link to /dev/fd/1: exit $rc, or the link replaced"; }
# two outputs on one descriptor interleave: the same output, into a pipe as into a file
for redirect in pipe file; do
    rc=0
    if [ $redirect = pipe ]; then
        "$DOPPLER" place --graph "$GRAPH" --method cp --out /dev/stdout --trace /dev/stdout 2> "$work/err" | cat > /dev/null || true
        grep -q "name the same file" "$work/err" || { cat "$work/err" >&2; fail "--out and --trace /dev/stdout into a pipe accepted"; }
    else
        "$DOPPLER" place --graph "$GRAPH" --method cp --out /dev/stdout --trace /dev/stdout > "$work/two.out" 2> "$work/err" || rc=$?
        [ $rc -eq 2 ] && grep -q "name the same file" "$work/err" || { cat "$work/err" >&2; fail "--out and --trace /dev/stdout into a file: exit $rc"; }
    fi
done
rc=0; "$DOPPLER" validate --graph "$GRAPH" --assignments 2 --methods cp --repeats 1 --target-flops 1e6 --plot /dev/null \
    > "$work/out" 2> "$work/err" || rc=$?
[ $rc -eq 1 ] && grep -q "/dev/null: is a character device" "$work/err" && ! grep -q "MAPE" "$work/out" ||
    { cat "$work/err" >&2; fail "validate --plot /dev/null: exit $rc, or refused after the measurement"; }
if command -v "${GNUPLOT:-gnuplot}" > /dev/null 2>&1; then
    "$DOPPLER" sweep "$work/sw/ok.json" --out "$work/sw/r.h5" --quiet 2> "$work/err" || { cat "$work/err" >&2; fail "the sweep for a plot failed"; }
    if "$DOPPLER" report "$work/sw/r.h5" --plot bars --out nodir/x.png 2> "$work/err"; then fail "a plot into a missing folder accepted"; fi
    grep -q "nodir/x.png: cannot write it: the folder nodir does not exist" "$work/err" || { cat "$work/err" >&2; fail "report --plot into a missing folder: no file and folder named"; }
fi
echo "PASS"
