#!/bin/sh
#SBATCH --job-name=doppler-merge
#SBATCH --cpus-per-task=1
#SBATCH --time=00:30:00
#SBATCH --output=slurm-%j.out
# After the array of scripts/slurm/sweep-array.sh (doc/cluster.md):
#   sbatch --dependency=afterany:ARRAY_JOB_ID scripts/slurm/sweep-merge.sh CONFIG DIR
# joins DIR/part-*.h5 into DIR/results.h5 (and DIR/results.csv), rows in the config's order.
# Exit status 1 when a run failed or is in none of the parts (a task that did not finish):
# submit that shard again (sweep-array.sh with N given), then this script again.
# DOPPLER: the doppler command (default: doppler on PATH).
set -eu
[ $# -eq 2 ] || { echo "usage: sbatch $0 CONFIG DIR" >&2; exit 2; }
ls "$2"/part-*.h5 > /dev/null 2>&1 || { echo "$0: no $2/part-*.h5: did the array run?" >&2; exit 1; }
exec "${DOPPLER:-doppler}" sweep "$1" --merge "$2"/part-*.h5 --out "$2/results.h5"
