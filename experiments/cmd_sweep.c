/* doppler sweep: expand a sweep config and run it (local process pool, MPI ranks or a shard),
 * appending each finished run to the results file. */
#include "cli.h"
#include "results.h"
#include "commands.h"
#include "dp_file.h"
#include "sweep.h"
#include "sweep_exec.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void sweep_usage(FILE *f)
{
    fprintf(f,
            "Usage: doppler sweep CONFIG [--jobs N] [--out RESULTS.h5] [--shard I/N] [OPTIONS]\n"
            "       mpirun -n K doppler sweep CONFIG [--out RESULTS.h5]\n"
            "       doppler sweep CONFIG --merge SHARD.h5... --out RESULTS.h5\n\n"
            "Expand a sweep config (a grid over graphs, machines, methods, seeds and hyperparameters;\n"
            "doc/sweep-format.md) and run every run, appending each finished run at once to the\n"
            "results file (HDF5, /runs) and to the CSV beside it. Started again, a sweep skips the\n"
            "runs already in the file, so a killed sweep loses only the runs that were running, and\n"
            "runs again the runs that failed (their cause may be gone). Before the first run every\n"
            "input file the config names (graphs, topologies, calibrations, configs, checkpoints,\n"
            "placements without placeholders) is checked.\n\n"
            "Options:\n"
            "  --out FILE        HDF5 results file (default NAME.h5, NAME from the config); the CSV\n"
            "                    is FILE with .csv (a FILE ending in .csv is refused), run files go\n"
            "                    to FILE without .h5 plus .runs/KEY/\n"
            "  --jobs N          runs at once in the local pool of worker processes (default: one\n"
            "                    per core the process may use: taskset narrows it); under mpirun\n"
            "                    each rank but 0 runs one at a time\n"
            "  --shard I/N       only the runs whose index mod N is I (Slurm job arrays); merge\n"
            "                    the shards' files afterwards with --merge\n"
            "  --merge FILE...   put the rows of these results files (shards) into --out\n"
            "  --keep-failed     keep the rows of runs that failed instead of running them again\n"
            "  --prune           drop the rows of runs the config no longer has (after an edit)\n"
            "  --timeout S       kill a run after S seconds (recorded as failed)\n"
            "  --list            print the runs (index, key, parameters) and exit\n"
            "  --quiet           no progress lines on stderr\n"
            "  -h, --help        this help\n\n"
            "Exit status: 0 when every run succeeded, 1 when a run failed or on errors (with\n"
            "--merge also when a run of the config is in none of the files), 2 usage.\n"
            "This build %s MPI.\n",
            dp_sweep_have_mpi() ? "has" : "does not have (configure --with-mpi)");
}

/* Under mpirun the ranks other than 0 read the same options and config and take the same way
 * out; they print nothing until the runs (rank 0 alone prints: the help, the list and every error
 * came once per rank; a review): their stdout and stderr go to /dev/null until restore_output */
static int saved_fd[2] = {-1, -1};
/* their stderr meanwhile: kept (a temporary file), for a rank that fails before the sweep to
 * show (flush_captured) */
static FILE *captured;

static void silence_output(void)
{
    int null = open("/dev/null", O_WRONLY);
    if (null < 0) return;
    captured = tmpfile();
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 2; i++) {
        saved_fd[i] = dup(i + 1);
        dup2(i == 1 && captured ? fileno(captured) : null, i + 1);
    }
    close(null);
}

/* after restore_output: what the rank wrote to stderr while silenced, to stderr, each line
 * prefixed with the rank */
static void flush_captured(void)
{
    if (!captured) return;
    char line[1024];
    rewind(captured);
    while (fgets(line, sizeof line, captured)) fprintf(stderr, "[rank %d] %s", dp_sweep_mpi_rank(), line);
    fclose(captured);
    captured = NULL;
}

static void restore_output(void)
{
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 2; i++)
        if (saved_fd[i] >= 0) {
            dup2(saved_fd[i], i + 1);
            close(saved_fd[i]);
            saved_fd[i] = -1;
        }
}

static int sweep_main(int argc, char **argv, int mpi);

int cmd_sweep(int argc, char **argv)
{
    /* a pool worker (--run-one) inherits the MPI launcher's environment: it must not join MPI */
    int worker = 0;
    for (int i = 1; i < argc; i++) worker |= strcmp(argv[i], "--run-one") == 0;
    const int mpi = worker ? 0 : dp_sweep_mpi_init(&argc, &argv);
    if (mpi && dp_sweep_mpi_rank() != 0) silence_output();
    const int status = sweep_main(argc, argv, mpi);
    restore_output();
    if (mpi && status != 0 && !dp_sweep_mpi_started()) {
        /* a rank that failed before the sweep stops every rank (the others waited for it
         * forever: a review); where not every rank failed (a config missing on one host), its
         * error, silenced on ranks other than 0, is shown; where every rank did (a bad config),
         * rank 0's alone */
        int all_failed = 0;
        dp_sweep_mpi_sync(1, &all_failed);
        if (!all_failed && dp_sweep_mpi_rank() != 0) flush_captured();
    }
    if (captured) fclose(captured);
    captured = NULL;
    dp_sweep_mpi_finalize();
    return status;
}

static int sweep_main(int argc, char **argv, int mpi)
{
    enum { O_JOBS = 1, O_OUT, O_SHARD, O_MERGE, O_RETRY, O_TIMEOUT, O_LIST, O_QUIET, O_PRUNE, O_RUN_ONE, O_RESULT_FD, O_KEEP, O_HELP };
    static const struct option opts[] = {
        {"jobs", required_argument, NULL, O_JOBS}, {"out", required_argument, NULL, O_OUT},
        {"shard", required_argument, NULL, O_SHARD}, {"merge", no_argument, NULL, O_MERGE},
        {"retry-failed", no_argument, NULL, O_RETRY}, {"keep-failed", no_argument, NULL, O_KEEP}, {"timeout", required_argument, NULL, O_TIMEOUT},
        {"list", no_argument, NULL, O_LIST}, {"quiet", no_argument, NULL, O_QUIET},
        {"prune", no_argument, NULL, O_PRUNE}, {"run-one", required_argument, NULL, O_RUN_ONE},
        {"result-fd", required_argument, NULL, O_RESULT_FD},
        {"help", no_argument, NULL, O_HELP}, {NULL, 0, NULL, 0}};
    dp_sweep_options o;
    dp_sweep_options_init(&o);
    o.out = NULL;
    int merge = 0, list = 0, result_fd = -1;
    long run_one = -1;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hj:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
        case O_JOBS:
            if (dp_cli_parse_int(optarg, 1, 4096, &o.jobs) != 0) return dp_cli_usage_error("sweep", "--jobs: expected 1..4096, got '%s'", optarg);
            break;
        case 'o':
        case O_OUT: o.out = optarg; break;
        case O_SHARD:
            if (dp_sweep_parse_shard(optarg, &o.shard_i, &o.shard_n) != 0)
                return dp_cli_usage_error("sweep", "--shard: expected I/N with 0 <= I < N, got '%s'", optarg);
            break;
        case O_MERGE: merge = 1; break;
        case O_RETRY: o.retry_failed = 1; break; /* the default now; accepted for old scripts */
        case O_KEEP: o.keep_failed = 1; break;
        case O_PRUNE: o.prune = 1; break;
        case O_RUN_ONE: /* internal: a pool worker */
            run_one = strtol(optarg, NULL, 10);
            break;
        case O_RESULT_FD:
            if (dp_cli_parse_int(optarg, 0, 1 << 20, &result_fd) != 0) return dp_cli_usage_error("sweep", "--result-fd: a file descriptor");
            break;
        case O_TIMEOUT:
            if (dp_cli_parse_double(optarg, &o.timeout_s) != 0 || !(o.timeout_s > 0))
                return dp_cli_usage_error("sweep", "--timeout: expected a positive number of seconds, got '%s'", optarg);
            break;
        case O_LIST: list = 1; break;
        case O_QUIET: o.progress = 0; break;
        case 'h':
        case O_HELP: sweep_usage(stdout); return 0;
        default: return dp_cli_option_error("sweep", "hj:o:", opts, argv);
        }
    }
    if (optind >= argc) return dp_cli_usage_error("sweep", "CONFIG is required");
    const char *config = argv[optind++];
    if (!merge && optind < argc) return dp_cli_usage_error("sweep", "unexpected argument '%s'", argv[optind]);
    if (merge && optind >= argc) return dp_cli_usage_error("sweep", "--merge needs the results files to merge");
    if (merge && o.shard_n > 1) return dp_cli_usage_error("sweep", "--merge and --shard do not go together");

    dp_error err;
    dp_error_clear(&err);
    dp_sweep *s = dp_sweep_load(config, &err);
    if (!s) return dp_cli_fail(&err);
    /* every run's parameters, as soon as the config is read (a pool worker's parent did) */
    if (run_one < 0 && !merge && dp_sweep_check_runs(s, o.shard_i, o.shard_n, &err) != DP_OK) {
        dp_sweep_free(s);
        return dp_cli_fail(&err);
    }
    /* --out names the HDF5 file; its CSV is made beside it: a .csv there would get HDF5 bytes */
    size_t lo = o.out ? strlen(o.out) : 0;
    if (lo >= 4 && strcmp(o.out + lo - 4, ".csv") == 0) {
        dp_sweep_free(s);
        return dp_cli_usage_error("sweep", "--out %s: --out names the HDF5 results file (for example %.*s.h5); "
                                  "the CSV is written beside it", o.out, (int)(lo - 4), o.out);
    }
    char def_out[1024];
    if (!o.out) {
        snprintf(def_out, sizeof def_out, "%s.h5", s->name);
        o.out = def_out;
    }
    if (run_one >= 0) {
        int rc = dp_sweep_run_one(s, &o, run_one, result_fd >= 0 ? result_fd : 1, &err);
        dp_sweep_free(s);
        return rc == DP_OK ? 0 : dp_cli_fail(&err);
    }
    if (list) {
        for (long k = 0; k < s->n_runs; k++)
            if (dp_sweep_in_shard(k, o.shard_i, o.shard_n)) printf("%ld\t%s\t%s\n", k, s->runs[k].key, s->runs[k].params_text);
        dp_sweep_free(s);
        return 0;
    }
    dp_sweep_summary sum;
    int rc;
    if (merge && mpi && dp_sweep_mpi_rank() != 0) {
        /* rank 0 alone merges (every rank merged into one file: the lock refused all but one,
         * exit 1; a review) */
        dp_sweep_free(s);
        return 0;
    }
    if (merge) rc = dp_sweep_merge(s, &o, argv + optind, argc - optind, &sum, &err);
    else if (mpi) {
        restore_output(); /* a worker rank's own faults are said */
        rc = dp_sweep_execute_mpi(s, &o, &sum, &err);
    }
    else rc = dp_sweep_execute(s, &o, &sum, &err);
    int status = 0;
    if (rc != DP_OK) status = dp_cli_fail(&err);
    else if (sum.total > 0 || merge) {
        if (merge) {
            long missing = 0;
            fprintf(stderr, "doppler sweep %s: merged %ld rows into %s (%ld were there)", s->name, sum.done, o.out, sum.skipped);
            missing = sum.total - sum.skipped - sum.done;
            if (missing > 0) fprintf(stderr, "; %ld runs of the config are in none of the files", missing);
            fprintf(stderr, "\n");
            /* a merge that lacks runs is written (it holds what there is) but is not a success:
             * the last step of a cluster job must not pass with a shard missing */
            if (missing > 0) status = DP_EXIT_ERROR;
        }
        if (sum.failed > 0 && merge) {
            /* a merge runs nothing: its failed rows are the shards' (it said "run the same command
             * again: it runs the failed runs again", with an empty key: a review) */
            fprintf(stderr, "doppler sweep %s: %ld of the %ld merged rows are failed runs (see the error column of %s); "
                    "run the sweep on it to run them again\n", s->name, sum.failed, sum.done, o.out);
            status = DP_EXIT_ERROR;
        } else if (sum.failed > 0) {
            fprintf(stderr, "doppler sweep %s: %ld of %ld runs failed (the first: %s; see the error column of %s); "
                    "once the cause is fixed, run the same command again: it runs the failed runs again\n",
                    s->name, sum.failed, sum.done, sum.first_failed, o.out);
            status = DP_EXIT_ERROR;
        }
        /* failed rows kept from before (--keep-failed) are failures of this sweep too: it said
         * "finished", exit 0 (a review) */
        if (sum.kept_failed > 0) {
            fprintf(stderr, "doppler sweep %s: %ld runs in %s failed before and were kept (--keep-failed); run without it to "
                    "run them again\n", s->name, sum.kept_failed, o.out);
            status = DP_EXIT_ERROR;
        }
    }
    if (rc == DP_OK && !merge && o.progress && sum.total > 0) {
        /* where the results are and how to look at them */
        char *csv = dp_results_csv_path(o.out);
        const char *slash = strrchr(o.out, '/');
        const char *base = slash ? slash + 1 : o.out;
        size_t bl = strlen(base);
        if (bl > 3 && strcmp(base + bl - 3, ".h5") == 0) bl -= 3;
        json_t *tables = json_object_get(s->config, "tables");
        const char *first = NULL, *k;
        json_t *v;
        json_object_foreach(tables, k, v) { if (!first || strcmp(k, "main") == 0) first = k; }
        char q[8300];
        fprintf(stderr, "doppler sweep %s: %s: %ld runs in %s and %s (run files in %.*s%.*s.runs/); tables: doppler report %s --table %s%s\n",
                s->name, sum.failed || sum.kept_failed ? "finished with failures" : "finished", sum.total, o.out, csv ? csv : "",
                slash ? (int)(slash - o.out + 1) : 0, o.out, (int)bl, base, dp_file_shell_word(o.out, q, sizeof q),
                first ? first : "makespan",
                first ? " (--list-tables for the others)" : "");
        free(csv);
    }    dp_sweep_free(s);
    return status;
}
