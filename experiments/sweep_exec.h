/* sweep_exec.h: running a sweep's runs and writing their results.
 *
 * Local pool: up to `jobs` runs at once, each in a child process (fork, then exec of this same
 * program with --run-one, so that no library state of the parent leaks into a run) that executes
 * the run (run.h) and sends its result row as JSON through a pipe; the parent is the only writer
 * of the results file. Processes rather than threads because
 *   - a run that crashes (a bug in a method, an abort in a library, the kernel's OOM killer)
 *     takes only its own process down: the sweep records it as failed and goes on;
 *   - the serial HDF5 library that trajectory and checkpoint writers use is not thread-safe,
 *     and OpenBLAS and GSL state stay private to each run;
 *   - a run can be stopped (--timeout) by killing its process, which threads cannot do safely.
 * A fork per run costs about a millisecond, nothing beside runs of interest. Children die with
 * their parent (PR_SET_PDEATHSIG), so a killed sweep leaves no orphans behind.
 *
 * MPI (configure --with-mpi, launched by mpirun with 2 or more ranks): rank 0 hands out runs
 * one at a time to the ranks that ask (a dynamic work queue) and writes the results file; the
 * other ranks execute each run in a forked child as the pool does. Every rank expands the
 * config itself, so only run indices and result rows travel.
 *
 * Sharding (--shard I/N): only the runs with index mod N == I; each shard writes its own file,
 * and `doppler sweep CONFIG --merge SHARD.h5... --out ALL.h5` puts them together.
 */
#ifndef DP_SWEEP_EXEC_H
#define DP_SWEEP_EXEC_H

#include "sweep.h"

typedef struct dp_sweep_options {
    const char *out;      /* results file (.h5); its CSV and run folder sit beside it */
    int jobs;             /* local pool size; 0: one per online core */
    int shard_i, shard_n; /* this shard (n = 1: everything) */
    int retry_failed;     /* (default, kept for old scripts) run again the runs whose row says failed */
    int keep_failed;      /* 1: keep the rows of failed runs instead of running them again */
    int prune;            /* drop the rows of runs the config no longer has */
    double timeout_s;     /* per run; 0: none */
    int progress;         /* 1: progress lines on stderr */
} dp_sweep_options;

void dp_sweep_options_init(dp_sweep_options *o);

/* Pre-flight: every input file a run of this shard names (parameters graph, except gen:
 * graphs; topology, when a file or a bundled name; calibration; config; train_config) must
 * resolve (run.h, dp_run_resolve_path) before the first run starts; each distinct gen: graph is
 * generated, each topology and calibration file loaded (dp_topology_load, dp_calib_load), and each
 * run's devices against its topology's count and its calibration against the topology's device
 * names (dp_costmodel_check_names).
 * Returns DP_OK; DP_EIO whose message names the config, the parameter, the missing or wrong file
 * (with the reader's message), how many runs name it, and the other wrong files; or DP_EINVAL
 * naming the first run whose devices or calibration do not fit its topology, and how many more.
 * Checks each distinct value once. */
int dp_sweep_check_inputs(const dp_sweep *s, int shard_i, int shard_n, dp_error *err);
/* Pre-flight of the parameters (run.h, dp_run_check) of every run of the shard, and of the configs
 * they build (dp_run_check_config: DOPPLER's training config with its cfg__ keys, a train_config
 * or a method's config file; each distinct one once, over the runs that give it the same
 * dp_run_is_config_param parameters): the first wrong run in expansion order names its run, its
 * parameters and what is wrong, with how many more runs are wrong. doppler sweep checks them when
 * it has read the config, before anything is run or written, whether it runs a pool, MPI ranks
 * (every rank) or a shard; a misspelt parameter or config key used to be found when its run
 * started, after the results file was made. */
int dp_sweep_check_runs(const dp_sweep *s, int shard_i, int shard_n, dp_error *err);

/* The folder of a results path must exist: DP_OK, or DP_EIO naming it (and `mkdir -p`). */
int dp_sweep_check_out(const char *out, dp_error *err);

typedef struct dp_sweep_summary {
    long total;      /* runs of this shard */
    long skipped;    /* already in the results file */
    long done;       /* finished now (ok or failed) */
    long failed;     /* of those, failed */
    long retried;    /* rows of failed runs dropped at the start to run them again */
    long kept_failed; /* of the skipped, rows of failed runs kept (--keep-failed) */
    char first_failed[DP_SWEEP_KEY_LEN + 1]; /* key of the first run that failed now ("" none) */
    int interrupted; /* stopped by SIGINT or SIGTERM before the end */
} dp_sweep_summary;

/* Run the sweep with the local pool. Returns DP_OK when every run was executed (some may have
 * failed: see sum->failed), or an error (results file locked or unwritable, interrupted). */
int dp_sweep_execute(const dp_sweep *s, const dp_sweep_options *o, dp_sweep_summary *sum, dp_error *err);

/* Execute run k of s in this process and write its result row (JSON) to fd, then _exit: what a
 * pool worker process runs after exec (`doppler sweep CONFIG --run-one K --result-fd FD`). */
int dp_sweep_run_one(const dp_sweep *s, const dp_sweep_options *o, long k, int fd, dp_error *err);

/* Merge the rows of other results files (shards) into o->out: rows of runs of this sweep that
 * the file lacks are appended; then the file is rewritten in expansion order. */
int dp_sweep_merge(const dp_sweep *s, const dp_sweep_options *o, char **inputs, int n_inputs,
                   dp_sweep_summary *sum, dp_error *err);

/* MPI: 1 when this process was started by an MPI launcher with 2 or more ranks and this build
 * has MPI (it then calls MPI_Init); 0 otherwise. */
int dp_sweep_mpi_init(int *argc, char ***argv);
/* Run the sweep over the MPI ranks (after dp_sweep_mpi_init returned 1); every rank calls it.
 * Rank 0 fills sum. Calls MPI_Finalize. */
int dp_sweep_execute_mpi(const dp_sweep *s, const dp_sweep_options *o, dp_sweep_summary *sum, dp_error *err);
/* This process's MPI rank (0 without MPI or outside MPI_Init .. MPI_Finalize). */
int dp_sweep_mpi_rank(void);
/* MPI_Finalize once, when MPI was initialised and not finalised yet (a no-op otherwise): every
 * way out of a command that called dp_sweep_mpi_init, its early exits included (--help, --list,
 * errors: without it mpirun reported the rank as exiting improperly, exit 1). */
void dp_sweep_mpi_finalize(void);
/* Every rank's sweep passes here once, before any run: dp_sweep_execute_mpi calls it with failed
 * 0, and a rank that failed before it (its config, an option, a file) with failed 1 (cmd_sweep),
 * so that a rank's failure stops every rank (the others waited for it forever: rank 0 for its
 * READY, a worker for its run; a review). Returns the lowest failed rank, or -1 when none failed;
 * *all_failed (may be NULL) 1 when every rank failed. dp_sweep_mpi_started: 1 once this rank has
 * passed it. Without MPI: -1, and 1. */
int dp_sweep_mpi_sync(int failed, int *all_failed);
int dp_sweep_mpi_started(void);
/* 1 when this build has MPI. */
int dp_sweep_have_mpi(void);

#endif
