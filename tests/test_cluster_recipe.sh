#!/bin/sh
# The Slurm job-array recipe of doc/cluster.md, run as the document writes it: its submission
# block (with this test's config, shard count and folder) against a stand-in for sbatch that
# runs the array's tasks at once on this machine, then the merge. The merged file must have the
# rows of the same sweep run by one local pool; the scripts the document shows must be the ones
# in scripts/slurm/; a merge with a shard missing fails, and the shard submitted again (N given)
# completes it; an array whose ids are not 0..N-1 is refused.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER=$(cd "$top_builddir" && pwd)/doppler
srcdir=$(cd "$top_srcdir" && pwd)
DOC="$srcdir/doc/cluster.md"
GRAPH="$srcdir/tests/data/sweep-fork.json"
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-cluster-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

# the ```sh block after the first line of the document that contains $1
doc_block() {
    awk -v m="$1" 'found == 0 && index($0, m) { found = 1; next }
        found == 1 && /^```sh$/ { found = 2; next }
        found == 2 && /^```$/ { exit }
        found == 2 { print }' "$DOC"
}

# ---- the document shows the scripts as they are ----
for s in sweep-array.sh sweep-merge.sh; do
    doc_block "checks that this block is scripts/slurm/$s" > "$work/doc-$s"
    [ -s "$work/doc-$s" ] || fail "doc/cluster.md has no block for scripts/slurm/$s"
    cmp -s "$work/doc-$s" "$srcdir/scripts/slurm/$s" ||
        { diff "$work/doc-$s" "$srcdir/scripts/slurm/$s" >&2; fail "doc/cluster.md shows another scripts/slurm/$s"; }
done

# ---- a stand-in for sbatch ----
# Options from the script's #SBATCH lines, then from the command line (--name=value, or
# --parsable). An array job runs all its tasks at once in the background with Slurm's array
# variables, a plain job in the foreground; both are done when sbatch returns, so a dependency
# only has to name a job submitted before. Each task's output goes to $SLURM_STATE/JOB[_TASK].out,
# its exit status to $SLURM_STATE/JOB[_TASK].status.
mkdir "$work/bin" "$work/slurm"
cat > "$work/bin/sbatch" <<'SBATCH'
#!/bin/sh
set -eu
state=${SLURM_STATE:?}
opts=""
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
    opts="$opts $1"
    shift
done
[ $# -ge 1 ] || { echo "sbatch: no script" >&2; exit 1; }
script=$1
shift
[ -r "$script" ] || { echo "sbatch: $script: no such file" >&2; exit 1; }
parsable=0 array="" cpus=""
for o in $(sed -n 's/^#SBATCH[[:space:]][[:space:]]*//p' "$script") $opts; do
    case $o in
    --parsable) parsable=1 ;;
    --array=*) array=${o#--array=} ;;
    --cpus-per-task=*) cpus=${o#--cpus-per-task=} ;;
    --dependency=*)
        for j in $(echo "${o#--dependency=}" | cut -d: -f2- | tr ':' ' '); do
            [ -e "$state/job-$j" ] || { echo "sbatch: dependency on unknown job $j" >&2; exit 1; }
        done ;;
    --job-name=* | --time=* | --output=* | --partition=* | --mem=*) ;;
    *) echo "sbatch: option $o not known to this stand-in" >&2; exit 1 ;;
    esac
done
jid=$(($(cat "$state/last" 2> /dev/null || echo 1000) + 1))
echo "$jid" > "$state/last"
touch "$state/job-$jid"
[ -n "$cpus" ] && export SLURM_CPUS_PER_TASK="$cpus"
if [ -n "$array" ]; then
    ids=""
    for r in $(echo "${array%%%*}" | tr ',' ' '); do
        case $r in
        *-*) ids="$ids $(seq "${r%-*}" "${r#*-}")" ;;
        *) ids="$ids $r" ;;
        esac
    done
    count=$(echo $ids | wc -w)
    min=$(echo $ids | tr ' ' '\n' | sort -n | head -1)
    max=$(echo $ids | tr ' ' '\n' | sort -n | tail -1)
    for i in $ids; do
        (
            st=0
            SLURM_JOB_ID=$jid SLURM_ARRAY_JOB_ID=$jid SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=$count \
                SLURM_ARRAY_TASK_MIN=$min SLURM_ARRAY_TASK_MAX=$max sh "$script" "$@" > "$state/${jid}_$i.out" 2>&1 || st=$?
            echo "$st" > "$state/${jid}_$i.status"
        ) &
    done
    wait
else
    st=0
    SLURM_JOB_ID=$jid sh "$script" "$@" > "$state/$jid.out" 2>&1 || st=$?
    echo "$st" > "$state/$jid.status"
fi
if [ "$parsable" -eq 1 ]; then echo "$jid"; else echo "Submitted batch job $jid"; fi
SBATCH
chmod +x "$work/bin/sbatch"
PATH="$work/bin:$PATH"
SLURM_STATE="$work/slurm"
export PATH SLURM_STATE DOPPLER
# every task and job that ran, and its exit status (JOB[_TASK] STATUS), sorted
statuses() { for f in "$SLURM_STATE"/*.status; do echo "$(basename "$f" .status) $(cat "$f")"; done | sort; }

# ---- the sweep: 18 runs, 3 shards; and the same on one machine ----
cat > "$work/grid.json" <<JSON
{"name": "grid", "fixed": {"graph": "$GRAPH"},
 "grid": {"devices": [2, 3, 4], "method": ["cp", "random", "round-robin"], "seed": [1, 2]}}
JSON
mkdir "$work/pool"
"$DOPPLER" sweep "$work/grid.json" --out "$work/pool/results.h5" --jobs 2 --quiet

# ---- the document's submission block, run from the source tree ----
doc_block "tests/test_cluster_recipe.sh runs this block" > "$work/doc-recipe.sh"
grep -q 'sbatch' "$work/doc-recipe.sh" || fail "doc/cluster.md: no submission block"
# its three settings, replaced by this test's
[ "$(grep -c -E '^(config|n|dir)=' "$work/doc-recipe.sh")" -eq 3 ] || fail "doc/cluster.md: the block no longer sets config, n and dir"
{
    echo "config='$work/grid.json'"
    echo "n=3"
    echo "dir='$work/cluster'"
    grep -v -E '^(config|n|dir)=' "$work/doc-recipe.sh"
} > "$work/recipe.sh"
(cd "$srcdir" && sh -eu "$work/recipe.sh") > "$work/recipe.log" 2>&1 || { cat "$work/recipe.log" >&2; fail "the recipe failed"; }
# three array tasks and the merge, each with status 0
[ "$(statuses | tr '\n' ' ')" = "1001_0 0 1001_1 0 1001_2 0 1002 0 " ] ||
    { statuses >&2; cat "$SLURM_STATE"/*.out >&2; fail "the array tasks and the merge did not all succeed"; }
for i in 0 1 2; do
    [ -f "$work/cluster/part-$i.h5" ] || fail "task $i wrote no part-$i.h5"
done
# each task ran its shard only: 6 of the 18 runs
for i in 0 1 2; do
    [ "$(($(wc -l < "$work/cluster/part-$i.csv") - 1))" -eq 6 ] || fail "part-$i has $(($(wc -l < "$work/cluster/part-$i.csv") - 1)) rows, expected 6"
done

# ---- the merged rows are the pool's ----
# every column but the timing ones (seconds, the 14th; finished, the last; the first 13 hold no
# quoted comma), with the run folder's name made neutral (pool: results.runs, shards: part-I.runs)
untimed() { sed -E 's/^(([^,]*,){13})[^,]*,/\1/; s/,[^,]*$//; s#(results|part-[0-9]+)\.runs/#RUNS/#g' "$1"; }
[ "$(($(wc -l < "$work/cluster/results.csv") - 1))" -eq 18 ] || fail "merged CSV has $(($(wc -l < "$work/cluster/results.csv") - 1)) rows, expected 18"
untimed "$work/pool/results.csv" > "$work/pool.rows"
untimed "$work/cluster/results.csv" > "$work/cluster.rows"
cmp -s "$work/pool.rows" "$work/cluster.rows" || { diff "$work/pool.rows" "$work/cluster.rows" >&2; fail "merged CSV rows differ from the pool's"; }
"$DOPPLER" report "$work/pool/results.h5" --table runs > "$work/pool-h5.csv"
"$DOPPLER" report "$work/cluster/results.h5" --table runs > "$work/cluster-h5.csv"
untimed "$work/pool-h5.csv" > "$work/pool.rows"
untimed "$work/cluster-h5.csv" > "$work/cluster.rows"
cmp -s "$work/pool.rows" "$work/cluster.rows" || { diff "$work/pool.rows" "$work/cluster.rows" >&2; fail "merged HDF5 rows differ from the pool's"; }
# the assignment files the merged rows name exist beside results.h5 and are the pool's
tail -n +2 "$work/cluster/results.csv" | grep -o -E '(part-[0-9]+)\.runs/[0-9a-f]{16}/assignment\.json' > "$work/files"
[ "$(wc -l < "$work/files")" -eq 18 ] || fail "merged rows name $(wc -l < "$work/files") assignment files, expected 18"
while read -r f; do
    cmp -s "$work/cluster/$f" "$work/pool/results.runs/${f#*.runs/}" || fail "$f differs from the pool's or is missing"
done < "$work/files"

# ---- a shard missing: the merge fails; the shard again (N given), then the merge passes ----
mkdir "$work/partial"
for i in 0 1; do cp -r "$work/cluster/part-$i.h5" "$work/cluster/part-$i.csv" "$work/cluster/part-$i.runs" "$work/partial/"; done
st=0
sh "$srcdir/scripts/slurm/sweep-merge.sh" "$work/grid.json" "$work/partial" > "$work/partial.log" 2>&1 || st=$?
[ "$st" -eq 1 ] || { cat "$work/partial.log" >&2; fail "a merge without shard 2 exited with $st, expected 1"; }
grep -q "6 runs of the config are in none of the files" "$work/partial.log" || { cat "$work/partial.log" >&2; fail "the merge did not say what is missing"; }
(cd "$srcdir" && sbatch --array=2 scripts/slurm/sweep-array.sh "$work/grid.json" "$work/partial" 3) > /dev/null
[ "$(cat "$SLURM_STATE/1003_2.status")" = 0 ] || { cat "$SLURM_STATE/1003_2.out" >&2; fail "shard 2 of 3 submitted alone failed"; }
sh "$srcdir/scripts/slurm/sweep-merge.sh" "$work/grid.json" "$work/partial" > "$work/partial.log" 2>&1 ||
    { cat "$work/partial.log" >&2; fail "the merge after the missing shard failed"; }
untimed "$work/partial/results.csv" > "$work/partial.rows"
untimed "$work/pool/results.csv" > "$work/pool.rows"
cmp -s "$work/pool.rows" "$work/partial.rows" || fail "rows after the shard submitted again differ from the pool's"

# ---- an array that is not 0..N-1, without N: refused before any run ----
(cd "$srcdir" && sbatch --array=1-3 scripts/slurm/sweep-array.sh "$work/grid.json" "$work/wrong") > /dev/null
for i in 1 2 3; do
    [ "$(cat "$SLURM_STATE/1004_$i.status")" = 2 ] || fail "task $i of --array=1-3 exited $(cat "$SLURM_STATE/1004_$i.status"), expected 2"
done
grep -q "are not shards 0 to 2" "$SLURM_STATE/1004_1.out" || fail "the refusal does not say why"
[ ! -e "$work/wrong" ] || fail "a refused task wrote results"
echo "test_cluster_recipe.sh: ok"
