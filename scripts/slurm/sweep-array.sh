#!/bin/sh
#SBATCH --job-name=doppler-sweep
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --output=slurm-%A_%a.out
# One shard of a doppler sweep per task of a Slurm job array (doc/cluster.md):
#   sbatch --array=0-$((N - 1)) scripts/slurm/sweep-array.sh CONFIG DIR
#   sbatch --array=3,5 scripts/slurm/sweep-array.sh CONFIG DIR N    # again: only shards 3 and 5 of N
# Task I of N runs the runs whose index mod N is I, as many at once as it has CPUs, into
# DIR/part-I.h5 (with DIR/part-I.csv and the run files in DIR/part-I.runs/). A task requeued or
# submitted again skips the runs already in its file. N: the array's task count unless given.
# scripts/slurm/sweep-merge.sh joins the parts. DOPPLER: the doppler command (default: on PATH).
set -eu
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: sbatch --array=0-N1 $0 CONFIG DIR [N]" >&2; exit 2; }
config=$1
dir=$2
i=${SLURM_ARRAY_TASK_ID:?not a task of a Slurm job array: submit with sbatch --array=0-N1}
if [ $# -eq 3 ]; then
    n=$3
else
    n=${SLURM_ARRAY_TASK_COUNT:?not a task of a Slurm job array}
    # N from the array: its task ids must be exactly 0..N-1
    if [ "${SLURM_ARRAY_TASK_MIN:-0}" -ne 0 ] || [ "${SLURM_ARRAY_TASK_MAX:-$((n - 1))}" -ne $((n - 1)) ]; then
        echo "$0: tasks ${SLURM_ARRAY_TASK_MIN:-?} to ${SLURM_ARRAY_TASK_MAX:-?} are not shards 0 to $((n - 1)): submit --array=0-$((n - 1)), or give N" >&2
        exit 2
    fi
fi
mkdir -p "$dir"
exec "${DOPPLER:-doppler}" sweep "$config" --shard "$i/$n" --jobs "${SLURM_CPUS_PER_TASK:-1}" --out "$dir/part-$i.h5"
