/* doppler train: train the DOPPLER policies (Stage I imitation, Stage II simulator RL, Stage III
 * real-execution RL) on a graph, with HDF5 trajectories, checkpoints and resume. */
#include "cli.h"
#include "dp_alloc.h"
#include "dp_engine.h"
#include "dp_file.h"
#include "dp_problem.h"
#include "dp_gen.h"
#include "commands.h"
#include "dp_place.h"
#include "dp_train.h"
#include "dp_h5io.h"
#include "dp_improve.h"
#include "dp_json.h"
#include "exec_cli.h"
#include "sweep_exec.h"
#include "testset.h"
#include "trainset.h"

#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_MPI
#include <limits.h>
#include <mpi.h>
#endif

static volatile sig_atomic_t stop_flag = 0;

/* ---- data-parallel ranks: `mpirun -n R doppler train` (dp_train_comm) ---- */

#ifdef HAVE_MPI
static double cpu_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static double wall_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
/* this rank's CPU and wall-clock seconds inside the exchanges (OpenMPI polls while it waits for
 * the other ranks, so waiting costs CPU too) */
static double xchg_cpu_s, xchg_wall_s;

/* dp_train_comm's allgather over MPI_COMM_WORLD: each rank's bytes, in rank order */
static int mpi_allgather(void *ctx, const void *mine, const size_t *counts, void *all, dp_error *err)
{
    (void)ctx;
    const double c0 = cpu_now_s(), w0 = wall_now_s();
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int cnt[size], displ[size], rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t off = 0;
    for (int r = 0; r < size; r++) {
        if (counts[r] > INT_MAX || off > INT_MAX)
            return dp_error_set(err, DP_EINVAL, "a batch's exchange between ranks is over %d bytes: give a smaller batch", INT_MAX);
        cnt[r] = (int)counts[r];
        displ[r] = (int)off;
        off += counts[r];
    }
    const int rc = MPI_Allgatherv(mine, cnt[rank], MPI_BYTE, all, cnt, displ, MPI_BYTE, MPI_COMM_WORLD);
    xchg_cpu_s += cpu_now_s() - c0;
    xchg_wall_s += wall_now_s() - w0;
    if (rc != MPI_SUCCESS) return dp_error_set(err, DP_EIO, "MPI_Allgatherv failed");
    return DP_OK;
}

/* After a run on every rank (not --quiet): each rank's CPU seconds, those outside the exchanges
 * (its own work: rollouts, backward, what every rank repeats) and its seconds in the exchanges,
 * on stderr by rank 0. On a shared machine the wall clock says little; the work per rank says
 * what the ranks split. */
static void ranks_report(int rank, int size, int print)
{
    double mine[3] = {cpu_now_s(), xchg_cpu_s, xchg_wall_s}, all[3 * size];
    MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank != 0 || !print) return;
    for (int r = 0; r < size; r++)
        fprintf(stderr, "doppler train: rank %d: %.2f s CPU, %.2f s of it outside the exchanges; %.2f s (wall) in the exchanges\n", r,
                all[3 * r], all[3 * r] - all[3 * r + 1], all[3 * r + 2]);
}
#endif

/* rank 0 was not told --quiet */
static int ranks_print;

/* The ranks of this run (NULL: one process, also under `mpirun -n 1`). */
static const dp_train_comm *train_comm;

/* 1 once this rank has taken part in ranks_sync */
static int ranks_synced;

/* Every rank has passed the checks of its arguments and files (failed = 0), or has not (1: it
 * returned with its error before the run, and joins here from cmd_train): none writes before (a
 * rank that found a file it was told not to replace must not find the one rank 0 has just
 * written), and a rank's failure ends every rank (the others waited here for it forever: a
 * review, a graph missing on one host). Returns 0 when every rank passed, else DP_EXIT_ERROR. */
static int ranks_sync(int failed)
{
    if (!train_comm || ranks_synced) return 0;
    ranks_synced = 1;
    const int size = train_comm->size;
    size_t *counts = calloc((size_t)size, sizeof *counts);
    unsigned char *all = calloc((size_t)size, 1);
    if (!counts || !all) {
        fprintf(stderr, "doppler train: out of memory\n");
        exit(DP_EXIT_ERROR);
    }
    for (int r = 0; r < size; r++) counts[r] = 1;
    const unsigned char mine = (unsigned char)(failed != 0);
    dp_error e;
    if (train_comm->allgather(train_comm->ctx, &mine, counts, all, &e) != DP_OK) {
        fprintf(stderr, "doppler train: %s\n", e.msg);
        exit(DP_EXIT_ERROR);
    }
    int first = -1;
    for (int r = 0; r < size && first < 0; r++)
        if (all[r]) first = r;
    free(counts);
    free(all);
    if (first < 0) return 0;
    if (!failed)
        fprintf(stderr, "doppler train: rank %d: stopped: rank %d failed before the run (its error above)\n",
                train_comm->rank, first);
    return DP_EXIT_ERROR;
}

/* A rank that fails mid-run ends every rank: the others would wait for it in the next exchange. */
static int ranks_fail(int status)
{
#ifdef HAVE_MPI
    if (train_comm) MPI_Abort(MPI_COMM_WORLD, status);
#endif
    return status;
}

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* The schedule of assign on g (engine eng), as a closing table's row reports it: with coarse
 * (train --coarsen: g is its group graph), a run of the graph's own engine (the expanded
 * oracle's inner one) on the expansion, as place --coarsen reports it. */
static int row_schedule(dp_engine *eng, const int *assign, const dp_coarse_problem *coarse, dp_engine_schedule *s,
                        dp_error *err)
{
    if (!coarse) return dp_engine_run(eng, assign, NULL, s, err);
    dp_coarse_expand(coarse->n_ops, coarse->group_of, assign, coarse->scratch);
    return dp_engine_run(coarse->inner.engine, coarse->scratch, NULL, s, err);
}

/* The instant heuristics' rows of the closing table, simulated by the machine's engine (the same
 * one that scored training, so every row is in one model): cp, round-robin, random and single
 * (device 0) on g, and the lower bound (dp_cost_lower_bound) (cost
 * tables cost, engine eng), each the makespan of its schedule (row_schedule). penalised (the
 * memory penalty policy: training scores the penalised makespan): each row gives that too, as
 * "makespan (penalised P)". With jo (train --json) they go into it as "makespan_cp",
 * "makespan_round-robin", "makespan_random", "makespan_single", "lower_bound" (and
 * "penalised_makespan_cp", ...) instead. */
static int print_heuristics(const dp_graph *g, const dp_cost *cost, dp_engine *eng, const dp_machine *mach, int *assign,
                            const dp_coarse_problem *coarse, int penalised, json_t *jo, dp_error *err)
{
    /* single and the lower bound too: the table read as DOPPLER beating cp where one device was
     * twenty times faster than both (a new researcher's GPT training step on a topology) */
    static const char *const heur[] = {"cp", "round-robin", "random", "single"};
    const dp_oracle oracle = dp_engine_oracle(eng);
    for (size_t i = 0; i < sizeof heur / sizeof heur[0]; i++) {
        dp_place_options o;
        dp_place_options_init(&o);
        o.oracle = &oracle;
        o.machine = mach;
        dp_engine_schedule s;
        int rc = dp_place(heur[i], g, cost, &o, assign, NULL, NULL, err);
        if (rc == DP_OK) rc = row_schedule(eng, assign, coarse, &s, err);
        char b[40], b2[40];
        if (rc == DP_ERANGE) {
            /* a row over a memory limit (error policy; single, every op on device 0, the likeliest)
             * is said so, and the table goes on: it ended a run that had trained (a review) */
            snprintf(b, sizeof b, "makespan_%s", heur[i]);
            if (jo) json_object_set_new(jo, b, json_null());
            else printf("%-14s over the memory limit\n", heur[i]);
            dp_error_clear(err);
            continue;
        }
        if (rc != DP_OK) return rc;
        if (jo) {
            snprintf(b, sizeof b, "makespan_%s", heur[i]);
            json_object_set_new(jo, b, dp_json_number(s.makespan / g->time_scale));
            snprintf(b, sizeof b, "penalised_makespan_%s", heur[i]);
            if (penalised) json_object_set_new(jo, b, dp_json_number(s.cost / g->time_scale));
        } else if (penalised) {
            printf("%-14s %s (penalised %s)\n", heur[i], dp_cli_fmt(s.makespan / g->time_scale, b, sizeof b),
                   dp_cli_fmt(s.cost / g->time_scale, b2, sizeof b2));
        } else {
            printf("%-14s %s\n", heur[i], dp_cli_fmt(s.makespan / g->time_scale, b, sizeof b));
        }
    }
    /* the graph's bound (with --coarsen the original graph's, as every row is its placement's: it
     * was the group graph's, above the graph's own bound: a review) */
    const dp_graph *lg = coarse ? dp_engine_graph(coarse->inner.engine) : g;
    const dp_cost *lc = coarse ? dp_engine_costs(coarse->inner.engine) : cost;
    const double lb = dp_cost_lower_bound(lg, lc) / lg->time_scale;
    if (isnan(lb)) return dp_error_set(err, DP_ENOMEM, "out of memory for the lower bound"); /* its only NaN */
    char b[40];
    if (jo) json_object_set_new(jo, "lower_bound", dp_json_number(lb));
    else printf("%-14s %s   (critical path without communication, or work over compute streams)\n", "lower bound",
                dp_cli_fmt(lb, b, sizeof b));
    return DP_OK;
}


/* One line of the closing agreement block: unique-choice agreement over all steps, then the ties. */
static void print_agreement(const char *label, const dp_train_agreement *a)
{
    const double n = a->steps > 0 ? a->steps : 1;
    printf("  %-14s SEL %d of %d steps (%.1f%%), PLC %d of %d (%.1f%%); heuristic ties: SEL %d steps (the policy "
           "took a tied choice on %d), PLC %d (%d)\n",
           label, a->unique[0], a->steps, 100 * a->unique[0] / n, a->unique[1], a->steps, 100 * a->unique[1] / n,
           a->tied[0], a->in_tie[0], a->tied[1], a->in_tie[1]);
}


/* "LO:HI" with min <= LO <= HI <= max (min > 0: the machine key's own bounds, dp_machine_set) into
 * r[0], r[1]; 0, or -1 on bad input (r unchanged) */
static int parse_range(const char *arg, double min, double max, double r[2])
{
    const char *colon = strchr(arg, ':');
    char lo[64];
    double a, b;
    if (!colon || (size_t)(colon - arg) >= sizeof lo) return -1;
    memcpy(lo, arg, (size_t)(colon - arg));
    lo[colon - arg] = '\0';
    if (dp_cli_parse_double(lo, &a) != 0 || dp_cli_parse_double(colon + 1, &b) != 0 || !(a >= min) || !(b >= a) || !(b <= max))
        return -1;
    r[0] = a;
    r[1] = b;
    return 0;
}

static void train_usage(FILE *f)
{
    fprintf(f, "Usage: doppler train --graph FILE [--stage il|sim|real | --pipeline] [OPTIONS]\n\n"
               "Train DOPPLER's SEL and PLC policies (Yao et al., ICLR 2026) on a graph: Stage I imitates the\n"
               "critical-path heuristic, Stage II is REINFORCE against the simulator, Stage III against real\n"
               "execution. At the end the greedy policy's makespan is printed beside the heuristics'.\n\n"
               "Options:\n"
               "  --graph FILE         the dataflow graph, in a graph format (DOPPLER .txt, native, WfCommons or\n"
               "                       MSR .json, Kasahara .stg, DOT: doc/graph-format.md); not the heterogeneous\n"
               "                       examples place and graph info read (HEFT's FILE.in, the CSV triple's\n"
               "                       PREFIX_task_exe_time.csv: formats heft-in, heft-csv), which carry their\n"
               "                       own processors and op times where train places on the machine its\n"
               "                       options give\n"
               "  --format F           graph format when the extension does not tell\n"
               "  --config FILE        JSON config (any subset of the keys --print-config shows)\n"
               "  --print-config       print the full config in force and exit (defaults of method doppler:\n"
               "                       this project's DOPPLER, bench/doppler-project.json; a config with\n"
               "                       \"defaults\": \"authors\" gives the authors', doc/estimators.md)\n"
               "  --method M           doppler (default), or a learned baseline: placeto (Addanki et al. 2019)\n"
               "                       or gdp (Zhou et al. 2019), trained by REINFORCE in the sim stage (as\n"
               "                       the authors train them; --stage il imitates cp for them too)\n"
               "                       (same config keys, plus \"placeto\"/\"gdp\" network sizes; doc/baselines.md),\n"
               "                       or improve: the learned improvement method (doc/improve.md; its own\n"
               "                       config keys, --print-config; --graph, --graphs, --family, --validation,\n"
               "                       --val-count (model selection: the search at eval_budget simulations\n"
               "                       on them), --episodes, --resume, --init FILE to fine-tune)\n"
               "  --stage S            il (default; sim for placeto and gdp), sim or real\n"
               "  --pipeline           run Stage I then Stage II\n"
               "  --episodes N         episodes per stage (overrides the config; for quick runs)\n"
               "  --seed S             random seed (overrides the config); the generators (GSL's mt19937)\n"
               "                       take it modulo 2^32: S and S + 2^32 train alike\n"
               "  --init CKPT          start from the parameters of a checkpoint (e.g. Stage I's, or a general\n"
               "                       model trained on other graphs and device counts: fine-tuning)\n"
               "Training on a distribution of graphs (doppler and improve; one model, each batch samples a graph):\n"
               "  --graphs LIST        more training graphs, comma-separated: files, folders (their .json,\n"
               "                       .txt, .stg, .dot files) or generator specs gen:MODEL?NAME=VALUE&...\n"
               "  --family LIST        generated training graphs with randomised parameters, round robin over\n"
               "                       the families chainmm, ffnn, llama-block, llama-layer, daggen, and the\n"
               "                       wide corpus's task graphs stg, layered, forkjoin, seriesparallel,\n"
               "                       workflow (ccr 0.1..10) and DNN operator graphs cnn, rnn, transformer,\n"
               "                       moe (9 to 6144 ops; ranges: models/dp_gen.h, doc/graph-format.md);\n"
               "                       llama-train: llama-layer's draws as training steps (backward, Adam);\n"
               "                       'all': the wide corpus, all fourteen (stg, layered, forkjoin,\n"
               "                       seriesparallel, workflow, cnn, rnn, transformer, moe, daggen, chainmm,\n"
               "                       ffnn, llama-block, llama-layer, in that order); --family-count N of\n"
               "                       them (default 16)\n"
               "  --family-seed S      the draws' seed (default: the run's seed; modulo 2^32, as --seed)\n"
               "  --bandwidth-range LO:HI  each training and validation graph on a uniform machine of its\n"
               "                       own: link bandwidth drawn log-uniformly in [LO, HI] bytes/s (graphs in\n"
               "                       FLOPs and bytes; one draw per graph, from the family seed), so the model\n"
               "                       sees communication-bound and compute-bound regimes; it overrides\n"
               "                       --bandwidth; needs --graphs, --family or --validation; not with --topology\n"
               "  --comm-ratio-range LO:HI  each training and validation graph in FLOPs and bytes on a uniform\n"
               "                       machine of its own with --comm-ratio R (DOPPLER's rule: a transfer takes\n"
               "                       R times its producer op's time; R = 4 in all six DOPPLER files), R drawn\n"
               "                       log-uniformly in [LO, HI] per graph from the family seed; needs a\n"
               "                       distribution as above; not with --comm-ratio or --topology. With\n"
               "                       --bandwidth-range too, each graph is on one kind of machine or the\n"
               "                       other (a fair coin per graph). A run resumes only on the same draws\n"
               "  --speed-range LO:HI  heterogeneous devices: each training and validation graph's devices get\n"
               "                       speeds drawn log-uniformly in [LO, HI] (0.001..1000; one per device,\n"
               "                       from the family seed), an op's time on a device divided by its speed,\n"
               "                       transfers unchanged; any graph kind; needs a distribution; not with\n"
               "                       --topology\n"
               "  --devices-range LO:HI  each training and validation graph on a uniform machine of its own\n"
               "                       device count, drawn log-uniformly in LO..HI (1..4096; one draw per graph,\n"
               "                       from the family seed), so one model learns to place on few and on many\n"
               "                       devices; needs a distribution; not with --devices or --topology\n"
               "  --validation LIST    validation graphs (same syntax): model selection keeps the parameters\n"
               "                       of the best mean greedy makespan relative to the critical-path\n"
               "                       rollout in the training state (not place --method cp's schedule)\n"
               "                       over them; --val-count M more drawn from --family (default 4\n"
               "                       with --family and no --validation)\n"
               "                       The test set (data/testsets/transfer.txt) and the DOPPLER graph files\n"
               "                       are refused as training or validation graphs, and never drawn, by\n"
               "                       name and by content (a renamed, copied or converted one too)\n"
               "  --coarsen N          train on each graph's group graph, groups of at most N ops, as\n"
               "                       doppler place --coarsen N places it (doc/coarsen.md): the policy then\n"
               "                       learns the graphs --coarsen shows it; --coarsen-rule packed|chains\n"
               "  --checkpoint FILE    checkpoint file, written every checkpoint_every episodes and at the end\n"
               "  --trajectory FILE    HDF5 trajectory file (per episode and per step records)\n"
               "  --resume             continue the run of --checkpoint exactly where it stopped, with\n"
               "                       the run's config (the checkpoint's; --config, --seed, --coarsen\n"
               "                       that say otherwise are refused; --episodes, or the episode\n"
               "                       counts --config gives, may change the count)\n"
               "  --force              start a new run even where --checkpoint or --trajectory exist\n"
               "                       (replacing them)\n"
               "  --quiet              no progress on stderr\n"
               "  --json               the closing figures as one JSON object on stdout (makespans at full\n"
               "                       precision: \"makespan\" is what doppler place --json gives from the\n"
               "                       checkpoint, \"makespan_final\" the final parameters' on one graph;\n"
               "                       under --memory-policy penalty also \"penalised_makespan\" and\n"
               "                       the rows' penalised figures, and for the final parameters\n"
               "                       \"penalised_makespan_final\" instead of \"makespan_final\"; with\n"
               "                       --stage real \"makespan\" and \"makespan_final\"\n"
               "                       are measured on the executor, on the graph as executed, and\n"
               "                       \"measured\": true says so; the heuristics' rows are simulated)\n"
               "Stage III (real execution; the machine is --topology, default cpu-2core, its devices the\n"
               "executor's devices, with --calibration for the costs the policies' features use):\n"
               "  --scale S            scale every dimension of the graph's kernels by S, (0, 1]\n"
               "  --target-flops F     instead, scale the graph to F FLOPs in all, at most 1e18, not with\n"
               "                       --scale (default for stage real 2e10); given with --stage il|sim\n"
               "                       or --pipeline, those stages train on the same executed graph, so\n"
               "                       their checkpoint fits Stage III (--init)\n"
               "  --real-repeats R     the real cost of an episode: median of R runs after a warm-up (default 3)\n"
               "  --real-reference M   pair each of those runs with a run of method M's placement (e.g. cp)\n"
               "                       and take the cost as M's first median x the median ratio: the host's\n"
               "                       drift between minutes leaves the rewards (twice the runs per episode)\n"
               "  --nice N             nice value of the executor's worker threads (negative: root)\n"
               );
    dp_cli_print_machine_help(f);
    fprintf(f, "  -h, --help           this help\n\n"
               "Progress goes to stderr: a bar on a terminal, a line every 5%% otherwise. SIGINT or SIGTERM\n"
               "stops after the current batch with a checkpoint (resume with --resume).\n"
               "Makespans of DOPPLER graph files are in DOPPLER units (simulated time / 1e10).\n"
               "mpirun -n R doppler train ... trains data-parallel (this build %s MPI): rank r rolls out the\n"
               "episodes j of each batch with j mod R = r, gradients are summed in episode order, rank 0\n"
               "prints and writes; the checkpoint is the single process's bit for bit (doc/cluster.md).\n",
               dp_sweep_have_mpi() ? "has" : "does not have");
    /* from the tables the config readers use (dp_schema.h) */
    fprintf(f, "\nConfig keys (--config FILE; kinds, ranges, defaults: doppler config train, doppler config\n"
               "train-improve):\n");
    dp_cli_help_config_keys(f, "  doppler, placeto, gdp: ", dp_train_config_sections());
    dp_cli_help_config_keys(f, "  improve: ", dp_improve_config_sections());
}

/* --print-config: the config text with reals to 15 significant digits, as people write them
 * (0.9, not the 0.90000000000000002 of the exact 17 digits the checkpoint keeps). */
static void print_config(const char *text)
{
    json_error_t je;
    json_t *o = text ? json_loads(text, 0, &je) : NULL;
    char *s = o ? json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15)) : NULL;
    printf("%s\n", s ? s : text ? text : "");
    free(s);
    json_decref(o);
}

typedef struct progress_state {
    int tty;
    int quiet;
    long last_line;
} progress_state;

static void on_progress(const dp_train_progress *p, void *ctx)
{
    progress_state *s = ctx;
    if (s->quiet) return;
    char b1[40], b2[40], b3[40], b4[40];
    if (s->tty) {
        int width = 24, fill = (int)(width * (double)p->episode / (double)(p->episodes ? p->episodes : 1));
        char bar[32];
        for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
        bar[width] = '\0';
        fprintf(stderr, "\r[%s] %ld/%ld [%s] eps %.3f lr %.2e makespan %s best %s avg %s greedy %s %.0f ep/s ", dp_train_stage_name(p->stage),
                p->episode, p->episodes, bar, p->epsilon, p->lr, dp_cli_fmt(p->makespan, b1, sizeof b1),
                dp_cli_fmt(p->best, b2, sizeof b2), dp_cli_fmt(p->running_avg, b3, sizeof b3), dp_cli_fmt(p->greedy, b4, sizeof b4),
                p->episodes_per_s);
        if (p->final) fputc('\n', stderr);
    } else {
        long every = p->episodes / 20 > 0 ? p->episodes / 20 : 1;
        if (p->episode % every == 0 || p->final) {
            fprintf(stderr, "train %s: episode %ld/%ld epsilon %.3f lr %.3g makespan %.6g best %.6g avg %.6g greedy %.6g agree %.2f/%.2f %.1f ep/s\n",
                    dp_train_stage_name(p->stage), p->episode, p->episodes, p->epsilon, p->lr, p->makespan, p->best, p->running_avg,
                    p->greedy, p->sel_agree, p->plc_agree, p->episodes_per_s);
        }
    }
}

/* ---- train --method improve: the learned improvement method (policy/dp_improve.h) ---- */

static void improve_progress(const dp_improve_progress *p, void *ctx)
{
    const int *quiet = ctx;
    if (*quiet) return;
    long every = p->episodes / 20 > 0 ? p->episodes / 20 : 1;
    static long last_shown = -1;
    if (p->episode / every != last_shown || p->final) {
        last_shown = p->episode / every;
        fprintf(stderr, "train improve: episode %ld/%ld lr %.3g batch gain %.4f end/lower bound %.4f simulations %ld\n",
                p->episode, p->episodes, p->lr, p->gain, p->ratio, p->simulations);
    }
}

static void print_score(const char *label, double score, long episode, long sims)
{
    printf("  %-15s %.6g  (parameters of episode %ld, after %ld training simulations)\n", label, score, episode, sims);
}

/* The improvement policy's own loop (its episodes are moves on complete placements, not the
 * constructive episodes of dp_train): the same graph sets, test-set refusal, validation graphs,
 * Adam, checkpoint and trajectory writers, resume. Returns the exit status. */

/* The first key, as a dotted path, whose value differs between the JSON objects a and b (a's
 * keys in a's order, then b's keys a lacks), into out; 0 when they are equal. What a resumed run
 * refuses by name (--resume continues with the checkpoint's config). */
static int json_first_difference(json_t *a, json_t *b, const char *prefix, char *out, size_t cap)
{
    const char *k;
    json_t *va, *vb;
    json_object_foreach(a, k, va) {
        char path[256];
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", k);
        vb = json_object_get(b, k);
        if (json_is_object(va) && json_is_object(vb)) {
            if (json_first_difference(va, vb, path, out, cap)) return 1;
        } else if (!vb || !json_equal(va, vb)) {
            snprintf(out, cap, "%s", path);
            return 1;
        }
    }
    json_object_foreach(b, k, vb) {
        if (json_object_get(a, k)) continue;
        snprintf(out, cap, "%s%s%s", prefix, *prefix ? "." : "", k);
        return 1;
    }
    return 0;
}

/* json_first_difference of two configs given as JSON text (the key into out; "" when either does
 * not parse, which cannot happen for the writers' own text) */
static int config_first_difference(const char *a, const char *b, char *out, size_t cap)
{
    json_t *ja = a ? json_loads(a, 0, NULL) : NULL, *jb = b ? json_loads(b, 0, NULL) : NULL;
    out[0] = 0;
    const int d = ja && jb ? json_first_difference(ja, jb, "", out, cap) : 0;
    json_decref(ja);
    json_decref(jb);
    return d;
}

static int train_improve(const char *graph, const char *format, const char *graphs, const char *family, int family_count,
                         int have_family_seed, unsigned long long family_seed, const char *validation, int val_count,
                         const char *config, int have_seed, unsigned long long seed, long episodes, const char *init,
                         const char *ckpt, const char *traj, int resume, int quiet, int print_cfg, int as_json,
                         const dp_trainset_draws *draws, dp_machine *mach)
{
    dp_error err;
    dp_error_clear(&err);
    dp_improve_config cfg;
    dp_improve_config_default(&cfg);
    if (config && dp_improve_config_load(&cfg, config, &err) != DP_OK) return dp_cli_fail(&err);
    if (have_seed) cfg.seed = seed;
    if (resume) {
        /* the run continues with its own config, the checkpoint's: a --config or --seed that
         * says otherwise is refused naming the key (--episodes may change the total) */
        if (!ckpt) return dp_cli_usage_error("train", "--resume needs --checkpoint FILE");
        if (init) return dp_cli_usage_error("train", "--resume and --init exclude each other");
        dp_improve_config run;
        if (dp_improve_config_from_checkpoint(&run, ckpt, &err) != DP_OK) return dp_cli_fail(&err);
        long file_episodes = run.episodes;
        if (config || have_seed) {
            /* what the command line says: the keys the config file sets, then --seed */
            dp_improve_config want = run;
            if (config && dp_improve_config_load(&want, config, &err) != DP_OK) return dp_cli_fail(&err);
            if (have_seed) want.seed = seed;
            file_episodes = want.episodes; /* the file's, or the run's where it gives none */
            want.episodes = run.episodes;
            char *a = dp_improve_config_to_json(&run), *b = dp_improve_config_to_json(&want), key[256];
            const int differs = config_first_difference(a, b, key, sizeof key);
            free(a);
            free(b);
            if (differs)
                return dp_cli_usage_error("train", "--resume continues the run of %s with the checkpoint's config, and %s gives "
                                          "another \"%s\"", ckpt, have_seed && strcmp(key, "seed") == 0 ? "--seed" : config, key);
        }
        cfg = run;
        /* the config file's episode count is the run's new total, as --episodes is (it was
         * dropped: a run of 200 resumed with a config of 400 trained nothing: a review) */
        cfg.episodes = file_episodes;
    }
    if (episodes > 0) cfg.episodes = episodes;
    if (print_cfg) {
        char *s = dp_improve_config_to_json(&cfg);
        print_config(s);
        free(s);
        return 0;
    }
    if (!graph && !graphs && !family) return dp_cli_usage_error("train", "--graph FILE (or --graphs, --family) is required");
    if (val_count > 0 && !family) return dp_cli_usage_error("train", "--val-count draws from --family: give one");
    openblas_set_num_threads(1);
    dp_trainset gs;
    memset(&gs, 0, sizeof gs);
    gs.draws = *draws;
    int status = DP_EXIT_ERROR;
    dp_testset test;
    int rc = dp_trainset_assemble(&gs, &test, graph, graphs, family, family_count,
                                (unsigned long)(have_family_seed ? family_seed : cfg.seed), validation, &val_count, &err);
    int n_val = 0;
    for (int i = 0; i < gs.n; i++) n_val += gs.validation[i];
    if (rc == DP_OK) rc = dp_trainset_load(&gs, format, mach, &test, graphs || family || n_val > 0, &err);
    dp_improve_model *m = NULL;
    if (rc == DP_OK && init) {
        /* fine-tuning: the checkpoint's (model-selected) parameters and network size */
        if ((rc = dp_improve_model_load(init, &m, &err)) == DP_OK) cfg.arch = *dp_improve_model_arch(m);
    } else if (rc == DP_OK && !(m = dp_improve_model_alloc(&cfg.arch, &err))) {
        rc = err.code;
    }
    if (rc == DP_OK && !quiet) {
        fprintf(stderr, "doppler train --method improve: %d training and %d validation graphs; rewards in units of each graph's "
                        "lower bound\n", gs.n - n_val, n_val);
        for (int i = 0; i < gs.n; i++)
            fprintf(stderr, "  %-10s %-44s %5d ops  %d devices  %s%s\n", gs.validation[i] ? "validation" : "train", gs.g[i]->name,
                    gs.g[i]->n_ops, gs.c[i]->n_devices, gs.src[i], dp_trainset_note(&gs, i));
    }
    /* dp_improve_train runs whole batches: say so in the count it reports, and on stderr (504
     * episodes for --episodes 500 went without a word: a review) */
    if (cfg.batch > 0 && cfg.episodes % cfg.batch) {
        const long want = cfg.episodes;
        cfg.episodes += cfg.batch - cfg.episodes % cfg.batch;
        if (rc == DP_OK && !quiet)
            fprintf(stderr, "doppler train --method improve: note: %ld episodes, rounded up to %ld (whole batches of %d)\n", want,
                    (long)cfg.episodes, cfg.batch);
    }
    dp_improve_result res;
    memset(&res, 0, sizeof res);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rc == DP_OK) {
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        dp_improve_io io = {ckpt, traj, improve_progress, &quiet, resume, &stop_flag};
        rc = dp_improve_train(m, &cfg, init == NULL, gs.n, (const dp_graph *const *)gs.g, (const dp_cost *const *)gs.c, gs.e,
                              gs.validation, &io, &res, &err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc == DP_OK && res.stopped) {
        fprintf(stderr, "doppler train: stopped at episode %ld of %ld%s\n", res.episodes, cfg.episodes,
                ckpt ? "; continue with --resume" : "");
        status = DP_EXIT_ERROR;
    } else if (rc == DP_OK && as_json) {
        /* --json: the figures of the text below, one object (it printed the text until 2026-12-06) */
        json_t *o = json_object();
        json_object_set_new(o, "method", json_string("improve"));
        json_object_set_new(o, "episodes", json_integer(cfg.episodes));
        json_object_set_new(o, "moves_per_episode", json_integer(cfg.horizon));
        json_object_set_new(o, "training_graphs", json_integer(gs.n - n_val));
        json_object_set_new(o, "validation_graphs", json_integer(n_val));
        json_object_set_new(o, "simulations", json_integer(res.simulations));
        json_object_set_new(o, "seconds", json_real((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)));
        json_object_set_new(o, "resumed", json_boolean(resume)); /* then seconds are this part's */
        if (res.evaluations > 0) {
            json_object_set_new(o, "evaluations", json_integer(res.evaluations));
            json_object_set_new(o, "evaluation_simulations", json_integer(res.eval_simulations));
            json_object_set_new(o, "score_final", dp_json_number(res.final_score));
            json_object_set_new(o, "score_model_selected", dp_json_number(res.selected_score));
            json_object_set_new(o, "model_selected_episode", json_integer(res.selected_episode));
            json_object_set_new(o, "model_selected_simulations", json_integer(res.selected_simulations));
        }
        if (ckpt) json_object_set_new(o, "checkpoint", json_string(ckpt));
        json_dumpf(o, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17));
        putchar('\n');
        json_decref(o);
        status = 0;
    } else if (rc == DP_OK) {
        /* episodes and evaluations come in whole batches (dp_improve_train rounds them up): the
         * figures printed are the rounded ones (it printed "every 30 episodes" for evaluations at
         * 0, 32, 64, 96 and 104: a review) */
        printf("improve: %ld episodes of %d moves on %d graphs, %ld simulations, %.1f s%s\n", cfg.episodes, cfg.horizon, gs.n - n_val,
               res.simulations, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
               resume ? " (this part of a resumed run)" : "");
        if (res.evaluations > 0) {
            printf("model selection on %d validation graphs: %d evaluations (every %ld episodes, the start and the end), "
                   "%ld simulations\n  (score: mean over the graphs of the best makespan / lower bound of the search at %ld "
                   "simulations from cp, seed %llu)\n",
                   n_val, res.evaluations, res.eval_every, res.eval_simulations, cfg.eval_budget, (unsigned long long)cfg.seed);
            print_score("final", res.final_score, res.episodes, res.simulations);
            print_score("model-selected", res.selected_score, res.selected_episode, res.selected_simulations);
        }
        if (ckpt) {
            char q[8300];
            printf("checkpoint: %s (%s; place any graph with: doppler place --method improve --checkpoint %s --graph G --budget N)\n",
                   ckpt, res.evaluations > 0 ? "place uses the model-selected parameters, --parameters final the final ones"
                                             : "the final parameters", dp_file_shell_word(ckpt, q, sizeof q));
        }
        status = 0;
    } else {
        status = dp_cli_fail(&err);
    }
    dp_improve_model_free(m);
    dp_trainset_free(&gs);
    dp_testset_free(&test);
    return status;
}

static int train_main(int argc, char **argv);

int cmd_train(int argc, char **argv)
{
    if (!dp_sweep_mpi_init(&argc, &argv)) return train_main(argc, argv); /* one process (mpirun -n 1 too) */
#ifdef HAVE_MPI
    dp_train_comm cm = {0, 1, mpi_allgather, NULL};
    MPI_Comm_rank(MPI_COMM_WORLD, &cm.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &cm.size);
    train_comm = &cm;
    const int status = train_main(argc, argv);
    if (status != 0) ranks_sync(1); /* failed before the run: the others wait in ranks_sync for this rank's word */
    train_comm = NULL;
    if (status == 0) ranks_report(cm.rank, cm.size, ranks_print); /* every rank ended the run alike */
    MPI_Finalize();
    return status;
#else
    return train_main(argc, argv);
#endif
}

static int train_main(int argc, char **argv)
{
    enum { O_GRAPH = 1, O_FORMAT, O_CONFIG, O_PRINT, O_STAGE, O_PIPE, O_EPIS, O_SEED, O_INIT, O_CKPT, O_TRAJ, O_RESUME,
           O_QUIET, O_HELP, O_SCALE, O_TARGET, O_REAL_REPEATS, O_NICE, O_METHOD, O_REAL_REF, O_FORCE, O_GRAPHS, O_FAMILY,
           O_FAMILY_COUNT, O_FAMILY_SEED, O_VALIDATION, O_VAL_COUNT, O_BW_RANGE, O_COMM_RATIO, O_JSON, O_SPEED_RANGE, O_DEVICES_RANGE,
           O_COARSEN, O_COARSEN_RULE };
    static const struct option opts[] = {
        {"graph", required_argument, NULL, O_GRAPH}, {"format", required_argument, NULL, O_FORMAT},
        {"config", required_argument, NULL, O_CONFIG}, {"print-config", no_argument, NULL, O_PRINT},
        {"stage", required_argument, NULL, O_STAGE}, {"pipeline", no_argument, NULL, O_PIPE},
        {"episodes", required_argument, NULL, O_EPIS}, {"seed", required_argument, NULL, O_SEED},
        {"init", required_argument, NULL, O_INIT}, {"checkpoint", required_argument, NULL, O_CKPT},
        {"trajectory", required_argument, NULL, O_TRAJ}, {"resume", no_argument, NULL, O_RESUME},
        {"force", no_argument, NULL, O_FORCE},
        {"quiet", no_argument, NULL, O_QUIET}, {"help", no_argument, NULL, O_HELP},
        {"scale", required_argument, NULL, O_SCALE}, {"target-flops", required_argument, NULL, O_TARGET},
        {"real-repeats", required_argument, NULL, O_REAL_REPEATS}, {"real-reference", required_argument, NULL, O_REAL_REF}, {"nice", required_argument, NULL, O_NICE},
        {"method", required_argument, NULL, O_METHOD}, {"graphs", required_argument, NULL, O_GRAPHS},
        {"family", required_argument, NULL, O_FAMILY}, {"family-count", required_argument, NULL, O_FAMILY_COUNT},
        {"family-seed", required_argument, NULL, O_FAMILY_SEED}, {"validation", required_argument, NULL, O_VALIDATION},
        {"val-count", required_argument, NULL, O_VAL_COUNT}, {"bandwidth-range", required_argument, NULL, O_BW_RANGE},
        {"comm-ratio-range", required_argument, NULL, O_COMM_RATIO}, {"json", no_argument, NULL, O_JSON},
        {"speed-range", required_argument, NULL, O_SPEED_RANGE}, {"devices-range", required_argument, NULL, O_DEVICES_RANGE},
        {"coarsen", required_argument, NULL, O_COARSEN}, {"coarsen-rule", required_argument, NULL, O_COARSEN_RULE},
        DP_CLI_MACHINE_OPTIONS, {NULL, 0, NULL, 0}};
    const char *graphs = NULL, *family = NULL, *validation = NULL;
    int family_count = 16, val_count = -1, have_family_seed = 0, have_family_count = 0;
    unsigned long long family_seed = 0;
    dp_trainset_draws draws = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    const char *graph = NULL, *format = NULL, *config = NULL, *init = NULL, *ckpt = NULL, *traj = NULL;
    int method = -1; /* -1: as the config says (default doppler), else a dp_agent_kind */
    int improve = 0;  /* --method improve: the learned improvement method (dp_improve.h) */
    int stage = DP_TRAIN_STAGE_IL, pipeline = 0, resume = 0, force = 0, quiet = 0, print_cfg = 0, have_seed = 0, have_stage = 0;
    int as_json = 0;
    int coarsen = 0, coarsen_rule_set = 0; /* --coarsen N, --coarsen-rule R: train on group graphs */
    dp_coarse_rule coarsen_rule = DP_COARSE_PACKED;
    long episodes = 0;
    unsigned long long seed = 0;
    double x_scale = 0, x_target = 0;
    int xsize = 0; /* --scale, --target-flops given (dp_cli_exec_size_option) */
    int x_repeats = 3, x_nice = 0;
    const char *x_reference = NULL;
    dp_machine mach;
    dp_machine_init(&mach);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int r = dp_cli_machine_option(&mach, c, optarg, "train");
        if (r < 0) return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
        if (r > 0) continue;
        int iv;
        switch (c) {
        case O_GRAPH: graph = optarg; break;
        case O_FORMAT: format = optarg; break;
        case O_CONFIG: config = optarg; break;
        case O_PRINT: print_cfg = 1; break;
        case O_STAGE:
            if (dp_train_stage_parse(optarg, &stage) != DP_OK) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--stage: il, sim or real, got '%s'", optarg));
            have_stage = 1;
            break;
        case O_PIPE: pipeline = 1; break;
        case O_EPIS:
            if (dp_cli_parse_int(optarg, 1, 1000000000L, &iv) != 0) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--episodes: expected 1..1000000000, got '%s'", optarg));
            episodes = iv;
            break;
        case O_SEED:
            if (dp_cli_parse_u64(optarg, &seed) != 0) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--seed: expected a non-negative integer, got '%s'", optarg));
            have_seed = 1;
            break;
        case O_INIT: init = optarg; break;
        case O_GRAPHS: graphs = optarg; break;
        case O_FAMILY: family = optarg; break;
        case O_VALIDATION: validation = optarg; break;
        case O_FAMILY_COUNT:
            if (dp_cli_parse_int(optarg, 1, 100000, &family_count) != 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--family-count: expected 1..100000, got '%s'", optarg));
            have_family_count = 1;
            break;
        case O_VAL_COUNT:
            if (dp_cli_parse_int(optarg, 0, 100000, &val_count) != 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--val-count: expected 0..100000, got '%s'", optarg));
            break;
        case O_FAMILY_SEED:
            if (dp_cli_parse_u64(optarg, &family_seed) != 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--family-seed: expected a non-negative integer, got '%s'", optarg));
            have_family_seed = 1;
            break;
        case O_BW_RANGE:
            if (parse_range(optarg, 1e-300, 1e30, draws.bw) != 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--bandwidth-range: expected LO:HI bytes per second, "
                                                                     "0 < LO <= HI <= 1e30 (as --bandwidth), got '%s'", optarg));
            break;
        case O_COMM_RATIO:
            if (parse_range(optarg, 1e-300, 1e30, draws.cr) != 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--comm-ratio-range: expected LO:HI, 0 < LO <= HI <= 1e30 "
                                                                     "(as --comm-ratio; DOPPLER's files: 4:4), got '%s'", optarg));
            break;
        case O_SPEED_RANGE:
            if (parse_range(optarg, 1e-3, 1e3, draws.sp) != 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--speed-range: expected LO:HI, device speeds "
                                                                     "0.001 <= LO <= HI <= 1000, got '%s'", optarg));
            break;
        case O_DEVICES_RANGE: {
            double dr[2];
            if (parse_range(optarg, 1, 4096, dr) != 0 || dr[0] != floor(dr[0]) || dr[1] != floor(dr[1]))
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--devices-range: expected LO:HI device counts, "
                                                                     "1 <= LO <= HI <= 4096, got '%s'", optarg));
            draws.dv[0] = (int)dr[0];
            draws.dv[1] = (int)dr[1];
            break;
        }
        case O_CKPT: ckpt = optarg; break;
        case O_TRAJ: traj = optarg; break;
        case O_RESUME: resume = 1; break;
        case O_FORCE: force = 1; break;
        case O_QUIET: quiet = 1; break;
        case O_JSON: as_json = 1; break;
        case O_METHOD:
            if (strcmp(optarg, "improve") == 0) improve = 1;
            else if (dp_agent_parse(optarg, &method) != DP_OK)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--method: doppler, placeto, gdp or improve, got '%s'", optarg));
            break;
        case O_SCALE:
            if (dp_cli_exec_size_option("train", &xsize, 1) != 0) return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
            if (dp_cli_parse_double(optarg, &x_scale) != 0 || !(x_scale > 0 && x_scale <= 1))
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--scale: expected a number in (0, 1], got '%s'", optarg));
            break;
        case O_TARGET:
            if (dp_cli_exec_size_option("train", &xsize, 2) != 0 || dp_cli_parse_target_flops("train", optarg, &x_target) != 0)
                return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
            break;
        case O_REAL_REPEATS:
            if (dp_cli_parse_int(optarg, 1, 1000, &x_repeats) != 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--real-repeats: expected 1..1000, got '%s'", optarg));
            break;
        case O_REAL_REF:
            if (!dp_place_find(optarg)) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--real-reference: unknown method '%s'", optarg));
            x_reference = optarg;
            break;
        case O_NICE:
            if (dp_cli_parse_int(optarg, -20, 19, &x_nice) != 0) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--nice: expected -20..19, got '%s'", optarg));
            break;
        case O_COARSEN:
            if (dp_cli_parse_int(optarg, 1, 1 << 28, &coarsen) != 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--coarsen: expected 1..268435456 (ops per group), got '%s'", optarg));
            break;
        case O_COARSEN_RULE:
            if (dp_coarse_rule_parse(optarg, &coarsen_rule) != DP_OK)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--coarsen-rule: expected packed or chains, got '%s'", optarg));
            coarsen_rule_set = 1;
            break;
        case 'h': case O_HELP: train_usage(stdout); return dp_cli_machine_done(&mach, 0);
        default: return dp_cli_machine_done(&mach, dp_cli_option_error("train", "h", opts, argv));
        }
    }
    if ((coarsen || coarsen_rule_set) && improve)
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--coarsen trains a constructive policy (doppler, placeto, gdp) on "
                                                             "group graphs in the simulator: not with --method improve"));
    if (optind < argc) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "unexpected argument '%s'", argv[optind]));
    /* Stage III's machine is cpu-2core unless --topology says otherwise (dp_cli_real_open): the keys
     * are checked against it, so that its --calibration needs no --topology */
    if (stage == DP_TRAIN_STAGE_REAL && !pipeline && !mach.topology && dp_machine_set(&mach, "topology", "cpu-2core", NULL) != DP_OK)
        return dp_cli_machine_done(&mach, 1);
    if (dp_cli_check_format("train", format) || dp_cli_check_machine("train", &mach)) return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
    if (family) {
        dp_error fe;
        if (dp_gen_family_check(family, &fe) != DP_OK)
            return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--family: %s", fe.msg));
    }
    /* as --val-count: a --family option without --family was ignored without a word (a review) */
    if ((have_family_count || have_family_seed) && !family)
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "%s draws from --family: give one",
                                                             have_family_count ? "--family-count" : "--family-seed"));
    const int rank = train_comm ? train_comm->rank : 0;
    if (rank != 0) quiet = 1; /* rank 0 alone prints and writes */
    ranks_print = !quiet;
    if (!ckpt && !print_cfg && !quiet)
        fprintf(stderr, "doppler train: note: no --checkpoint: the trained parameters are not kept (give --checkpoint FILE "
                        "to place with them)\n");
    if (ckpt && traj && dp_file_same_output(ckpt, traj))
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--checkpoint and --trajectory name the same file (%s): "
                                                             "the checkpoint would replace the trajectory", traj));
    if (!print_cfg) {
        /* an output is a file of its own: not standard output, an empty name or a directory
         * (each trained to its first checkpoint, then failed; "-" wrote HDF5 into stdout), not
         * an input (--force replaced the graph or the config with the checkpoint; a review), and
         * one that can be made (dp_cli_files_distinct); --print-config writes none of them */
        const dp_cli_file outs[2] = {{"--checkpoint", ckpt}, {"--trajectory", traj}};
        struct stat st;
        for (int i = 0; i < 2; i++) {
            const char *o = outs[i].path;
            if (!o) continue;
            if (!*o || strcmp(o, "-") == 0 || dp_file_is_descriptor(o))
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "%s '%s': an HDF5 file is written, name one",
                                                                     outs[i].option, o));
            if (stat(o, &st) == 0 && S_ISDIR(st.st_mode))
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "%s %s: is a directory; name a file",
                                                                     outs[i].option, o));
        }
        enum { MAX_INS = 64 };
        dp_cli_file ins[MAX_INS];
        char lists[2][4096];
        int n_ins = 0;
        ins[n_ins++] = (dp_cli_file){"--graph", graph};
        ins[n_ins++] = (dp_cli_file){"--config", config};
        ins[n_ins++] = (dp_cli_file){"--init", init};
        const char *list_opt[2] = {"--graphs", "--validation"}, *list[2] = {graphs, validation};
        for (int l = 0; l < 2; l++) {
            if (!list[l]) continue;
            snprintf(lists[l], sizeof lists[l], "%s", list[l]);
            for (char *sv = NULL, *t = strtok_r(lists[l], ",", &sv); t && n_ins < MAX_INS; t = strtok_r(NULL, ",", &sv))
                ins[n_ins++] = (dp_cli_file){list_opt[l], t};
        }
        const int rc = dp_cli_files_distinct("train", outs, 2, ins, n_ins);
        if (rc) return dp_cli_machine_done(&mach, rc);
    }
    if (!print_cfg && !resume && !force) {
        /* a fresh start would replace a run's files: say so instead */
        const char *outs[2] = {ckpt, traj};
        for (int i = 0; i < 2; i++)
            if (outs[i] && access(outs[i], F_OK) == 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "%s exists already: continue its run with --resume, or "
                                                                     "give --force to start a new run over it", outs[i]));
    }
    if (resume && ckpt && !traj && !print_cfg) {
        /* a run that writes a trajectory goes on writing it: resumed without it, its rows had a
         * gap that a later resume with the file appended after without a word (a review) */
        dp_h5io_ckpt_info info;
        dp_error e;
        if (dp_h5io_ckpt_read_info(ckpt, &info, &e) == DP_OK) {
            const long long n = (long long)info.traj_episodes;
            dp_h5io_ckpt_info_free(&info);
            if (n > 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "%s: its run writes a trajectory (%lld episode "
                                                                     "rows so far): resume with --trajectory FILE, that "
                                                                     "file, so that its rows go on without a gap", ckpt, n));
        }
    }
    if ((draws.bw[0] > 0 || draws.cr[0] > 0) && (mach.topology || (!graphs && !family && !validation)))
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "%s draws a uniform machine per graph of a distribution: "
                                                             "give --graphs or --family, and no --topology",
                                                             draws.bw[0] > 0 ? "--bandwidth-range" : "--comm-ratio-range"));
    if (draws.sp[0] > 0 && (mach.topology || (!graphs && !family && !validation)))
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--speed-range draws the device speeds of a uniform machine "
                                                             "per graph of a distribution: give --graphs or --family, and no "
                                                             "--topology (a topology gives each device its own peak_flops)"));
    if (draws.dv[0] > 0 && (mach.topology || mach.devices_given || (!graphs && !family && !validation)))
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--devices-range draws the device count of a uniform "
                                                             "machine per graph of a distribution: give --graphs or --family, "
                                                             "and neither --devices nor --topology"));
    if (draws.cr[0] > 0 && mach.comm_ratio > 0)
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--comm-ratio-range draws each graph's --comm-ratio: "
                                                             "give one or the other"));
    if (draws.bw[0] > 0 && mach.comm_ratio > 0)
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--bandwidth-range and --comm-ratio exclude each other "
                                                             "(under a comm_ratio no transfer depends on the bandwidth; "
                                                             "--comm-ratio-range mixes the two kinds of machine)"));
    if (improve) {
        if (train_comm)
            return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--method improve trains in one process, not over %d "
                                                                 "MPI ranks", train_comm->size));
        if (have_stage || pipeline || x_scale > 0 || x_target > 0)
            return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--method improve trains on --graph, --graphs and --family "
                                                                 "(--validation, --val-count, --init, --resume; no --stage, --pipeline, "
                                                                 "--scale, --target-flops)"));
        return dp_cli_machine_done(&mach, train_improve(graph, format, graphs, family, family_count, have_family_seed, family_seed,
                                                        validation, val_count, config, have_seed, seed, episodes, init, ckpt, traj,
                                                        resume, quiet, print_cfg, as_json, &draws, &mach));
    }
    dp_error err;
    dp_error_clear(&err);
    dp_train_config cfg;
    if (dp_train_config_resolve(&cfg, method, config, &err) != DP_OK) {
        if (method >= 0 && config && strstr(err.msg, "a config of method"))
            return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--method %s, but %s", dp_agent_name(method), err.msg));
        return dp_cli_machine_done(&mach, dp_cli_fail(&err));
    }
    /* the learned baselines learn by reinforcement in their papers: Stage II unless told */
    if (cfg.method != DP_AGENT_DOPPLER && !have_stage && !pipeline) stage = DP_TRAIN_STAGE_SIM;
    if (have_seed) cfg.seed = seed;
    /* --coarsen N and --coarsen-rule over the config's "coarsen" and "coarsen_rule" (recorded with
     * the checkpoint: a resumed run must group as the run did) */
    if (coarsen) cfg.coarsen = coarsen;
    if (coarsen_rule_set) cfg.coarsen_rule = (int)coarsen_rule;
    if (resume && ckpt) {
        long file_episodes[DP_TRAIN_N_STAGES] = {0};
        int file_episodes_set[DP_TRAIN_N_STAGES] = {0};
        /* the run continues with its own config, the checkpoint's (its "config" attribute): a
         * --config, --seed, --method or --coarsen that says otherwise is refused naming the key;
         * --episodes may change every stage's count (the run's own is in its config, below).
         * Until 2026-12-06 a resumed run took the command line's config: another lr or seed was
         * used silently, and a run of --episodes N went on with the config's count */
        char *text = NULL;
        if (dp_h5io_ckpt_read_config(ckpt, &text, &err) != DP_OK) return dp_cli_machine_done(&mach, dp_cli_fail(&err));
        dp_train_config run;
        dp_train_config_default(&run);
        run.method = DP_AGENT_DOPPLER; /* a checkpoint's config without "method" is DOPPLER's */
        const int rc = dp_train_config_from_json_text(&run, text, &err);
        free(text);
        if (rc != DP_OK) {
            dp_error_prefix(&err, "%s", ckpt);
            return dp_cli_machine_done(&mach, dp_cli_fail(&err));
        }
        if (config || have_seed || method >= 0 || coarsen || coarsen_rule_set) {
            /* what the command line says: the config file as a new run reads it (its "defaults"
             * too), where only the command line sets a value (the seed, the grouping, the method
             * when the file names none) the run's unless given, then the options */
            dp_train_config want = run;
            if (config) {
                json_t *fj = json_load_file(config, 0, NULL);
                json_t *fst = json_object_get(fj, "stages");
                for (int k = 0; k < DP_TRAIN_N_STAGES; k++)
                    file_episodes_set[k] = json_object_get(json_object_get(fst, dp_train_stage_name(k)), "episodes") != NULL;
                const int m = method >= 0 ? method : json_object_get(fj, "method") ? -1 : run.method;
                const int rcr = dp_train_config_resolve(&want, m, config, &err);
                if (rcr == DP_OK) {
                    if (!json_object_get(fj, "seed")) want.seed = run.seed;
                    if (!json_object_get(fj, "coarsen")) want.coarsen = run.coarsen;
                    if (!json_object_get(fj, "coarsen_rule")) want.coarsen_rule = run.coarsen_rule;
                    if (!json_object_get(fj, "pipeline")) want.pipeline = run.pipeline;
                }
                json_decref(fj);
                if (rcr != DP_OK) return dp_cli_machine_done(&mach, dp_cli_fail(&err));
                /* a demonstrations checkpoint named relative to the config's folder is stored as
                 * resolved: another spelling of the same file is the same */
                if (want.demo_checkpoint[0] && run.demo_checkpoint[0] &&
                    dp_file_same_output(want.demo_checkpoint, run.demo_checkpoint))
                    memcpy(want.demo_checkpoint, run.demo_checkpoint, sizeof want.demo_checkpoint);
            }
            if (have_seed) want.seed = seed;
            if (method >= 0) want.method = method;
            if (coarsen) want.coarsen = coarsen;
            if (coarsen_rule_set) want.coarsen_rule = (int)coarsen_rule;
            for (int k = 0; k < DP_TRAIN_N_STAGES; k++) {
                file_episodes[k] = want.stage[k].episodes;
                want.stage[k].episodes = run.stage[k].episodes;
            }
            char *a = dp_train_config_to_json(&run), *b = dp_train_config_to_json(&want), key[256];
            const int differs = config_first_difference(a, b, key, sizeof key);
            free(a);
            free(b);
            if (differs && strncmp(key, "coarsen", 7) == 0) {
                char ta[64], tb[64];
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "%s: the run trained with %s, this one has %s: "
                                                                     "resume it with the run's grouping (or none)", ckpt,
                                                                     dp_coarse_options_text(run.coarsen, (dp_coarse_rule)run.coarsen_rule, ta, sizeof ta),
                                                                     dp_coarse_options_text(want.coarsen, (dp_coarse_rule)want.coarsen_rule, tb, sizeof tb)));
            }
            /* another method first: its defaults differ in other keys too (a Placeto checkpoint
             * resumed as gdp named "gamma", a key no one gave: a review) */
            if (differs && method >= 0 && run.method != want.method)
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--resume continues the run of %s, a %s run, "
                                                                     "and --method gives %s", ckpt,
                                                                     dp_agent_name(run.method), dp_agent_name(want.method)));
            if (differs) {
                const char *by = have_seed && strcmp(key, "seed") == 0      ? "--seed"
                                 : method >= 0 && strcmp(key, "method") == 0 ? "--method"
                                 : config                                    ? config
                                                                             : "the command line";
                return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--resume continues the run of %s with the "
                                                                     "checkpoint's config, and %s gives another \"%s\"",
                                                                     ckpt, by, key));
            }
        }
        cfg = run;
        /* a stage's episode count the config file gives is the run's new total, as --episodes is
         * (it was left out of the comparison and then dropped: a run of 200 episodes resumed with
         * a config of 400 trained nothing and exited 0: a review) */
        for (int k = 0; k < DP_TRAIN_N_STAGES; k++)
            if (file_episodes_set[k]) cfg.stage[k].episodes = file_episodes[k];
        /* a --pipeline run continues as one (its config records it); a --stage given is the
         * checkpoint's to decide, as for any resumed run (below: "continuing that stage") */
        if (run.pipeline && have_stage && !quiet)
            fprintf(stderr, "doppler train: %s is a --pipeline run: continuing the pipeline (--stage does not apply)\n",
                    ckpt);
        if (run.pipeline) {
            pipeline = 1;
            have_stage = 0;
        }
        if (cfg.method != DP_AGENT_DOPPLER && !have_stage && !pipeline) stage = DP_TRAIN_STAGE_SIM;
    } else if (cfg.pipeline && !have_stage) {
        pipeline = 1; /* the config file's "pipeline": true, as --pipeline */
    }
    cfg.pipeline = pipeline; /* recorded with the checkpoint */
    if (coarsen_rule_set && !cfg.coarsen) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--coarsen-rule needs --coarsen N"));
    /* --episodes N is every stage's count, recorded in the checkpoint's config: a resumed run goes on
     * to the same N without being told again */
    if (episodes > 0)
        for (int k = 0; k < DP_TRAIN_N_STAGES; k++) cfg.stage[k].episodes = episodes;
    coarsen = cfg.coarsen;
    coarsen_rule = (dp_coarse_rule)cfg.coarsen_rule;
    if (coarsen && (stage == DP_TRAIN_STAGE_REAL || x_scale > 0 || x_target > 0))
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--coarsen (config \"coarsen\") trains on group graphs in the "
                                                             "simulator: not with stage real, --scale or --target-flops"));
    if (print_cfg) {
        ranks_print = 0;
        if (rank != 0) return dp_cli_machine_done(&mach, 0);
        char *s = dp_train_config_to_json_all(&cfg);
        print_config(s);
        free(s);
        return dp_cli_machine_done(&mach, 0);
    }
    const int many = graphs || family || validation;
    const int use_set = many || coarsen > 0; /* --coarsen: one graph too goes through the set, which groups it */
    if (!graph && !many) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--graph FILE (or --graphs, --family) is required"));
    if (many && (stage == DP_TRAIN_STAGE_REAL || x_scale > 0 || x_target > 0))
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "stage real, --scale and --target-flops train on one graph, not with --graphs, --family or --validation"));
    if (val_count > 0 && !family) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--val-count draws from --family: give one"));
    if (pipeline && have_stage) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "give --stage or --pipeline, not both"));
    if (resume && !ckpt) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--resume needs --checkpoint FILE"));
    if (resume && init) return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--resume and --init exclude each other"));
    if (x_reference && (stage != DP_TRAIN_STAGE_REAL || pipeline))
        return dp_cli_machine_done(&mach, dp_cli_usage_error("train", "--real-reference is for --stage real (the costs measured on the executor)"));

    /* one BLAS thread: the matrices are small, and runs must be reproducible */
    openblas_set_num_threads(1);
    int status = DP_EXIT_ERROR;
    dp_cost *real_cost = NULL, *speed_cost = NULL;
    dp_problem *prob = NULL;
    dp_train *tr = NULL;
    int *assign = NULL;
    /* the graphs of a distribution: those listed, then the drawn ones; the first training graph
     * is the trainer's first (its placement is printed, --resume and best_assignment refer to it) */
    dp_trainset gs;
    memset(&gs, 0, sizeof gs);
    gs.draws = draws;
    gs.coarsen = coarsen;
    gs.coarsen_rule = coarsen_rule;
    dp_testset test;
    memset(&test, 0, sizeof test);
    if (use_set) {
        int rc = dp_trainset_assemble(&gs, &test, graph, graphs, family, family_count,
                                    (unsigned long)(have_family_seed ? family_seed : cfg.seed), validation, &val_count, &err);
        /* one --graph alone is trained on as its own placement search (dp_trainset_load) */
        if (rc == DP_OK) rc = dp_trainset_load(&gs, format, &mach, &test, many, &err);
        if (rc != DP_OK) {
            dp_trainset_free(&gs);
            dp_testset_free(&test);
            return dp_cli_machine_done(&mach, dp_cli_fail(&err));
        }
        graph = gs.src[0];
    }
    /* --coarsen: the first graph is the set's group graph, its problem the set's (borrowed) */
    dp_graph *g0 = coarsen ? NULL
                   : many && strncmp(graph, "gen:", 4) == 0 ? dp_gen_spec(graph, &err) : dp_graph_read(graph, format, &err);
    if (!g0 && !coarsen) {
        dp_trainset_free(&gs);
        dp_testset_free(&test);
        return dp_cli_machine_done(&mach, dp_cli_fail(&err));
    }
    /* Stage III trains on the graph as the real executor runs it (every dimension scaled), with
     * the real executor as the cost oracle; --scale or --target-flops put the earlier stages on
     * that same graph, so that a Stage II checkpoint describes what Stage III runs */
    dp_cli_real real;
    memset(&real, 0, sizeof real);
    dp_graph *g = coarsen ? gs.g[0] : g0, *gx = NULL;
    dp_problem *prob_set = NULL; /* --coarsen: the set's problem of the first graph (not freed here) */
    if (stage == DP_TRAIN_STAGE_REAL && !pipeline) {
        dp_exec_options xo;
        dp_exec_options_init(&xo);
        xo.nice = x_nice;
        if (dp_cli_real_open(&real, g0, &mach, &xo, x_scale, x_target > 0 ? x_target : 2e10, x_repeats, &err) != DP_OK) goto fail;
        if (x_reference && dp_cli_real_reference(&real, g0, x_reference, &err) != DP_OK) goto fail;
        g = (dp_graph *)real.xg;
        real_cost = real.costs;
        real.costs = NULL; /* freed below, after the problem that reads them */
        if (!quiet)
            fprintf(stderr, "doppler train: stage real on %d %s devices of %s: %s as executed (%.3g FLOPs), oracle = median of %d runs%s%s\n",
                    mach.topo->n_devices, dp_exec_backend_name(real.x), mach.topo->name, g->name, dp_graph_total_work(g),
                    real.ctx.repeats, x_reference ? ", each relative to a run of the placement of " : "", x_reference ? x_reference : "");
    } else {
        if (x_scale > 0 || x_target > 0) {
            /* place --scale/--target-flops places this same graph (dp_cli_exec_graph) */
            if (!(gx = dp_cli_exec_graph(g0, graph, x_scale, x_target, &err))) goto fail;
            g = gx;
        }
        /* --bandwidth-range, --comm-ratio-range: the first graph on its own machine too (it was
         * costed on the machine's bandwidth while listed with its drawn one) */
        if (coarsen) prob_set = gs.p[0];
        else prob = dp_trainset_problem(&gs, 0, &mach, g, &speed_cost, &err); /* the machine as it is without draws */
    }
    if (real_cost) prob = dp_problem_alloc_with_costs(g, real_cost, &mach, &err);
    if (prob_set) prob = prob_set;
    if (!prob) goto fail;
    {
        /* the machine's keys apply to the graph itself, on the device count it is placed on (a
         * graph of a set made for a count is placed on it: dp_trainset_problem) */
        const int nd_keep = mach.n_devices;
        if (!mach.topo) mach.n_devices = prob->costs->n_devices;
        dp_cli_warn_machine(&mach, coarsen ? gs.orig[0] : g);
        mach.n_devices = nd_keep;
    }
    const dp_cost *cost = prob->costs;
    dp_engine *eng = prob->engine;
    /* allocated with the simulator's oracle so that an engine state describes its engine
     * (dp_env.h); Stage III then scores with real execution */
    tr = dp_train_alloc(g, cost, &cfg, coarsen ? dp_trainset_oracle(&gs, 0) : &prob->oracle, &err);
    if (!tr) goto fail;
    if (real.x) dp_train_set_oracle(tr, &real.oracle);
    for (int i = 1; i < gs.n; i++) {
        if (dp_train_add_graph(tr, gs.g[i], gs.c[i], dp_trainset_oracle(&gs, i), gs.validation[i], &err) != DP_OK) {
            dp_error_prefix(&err, "%s", gs.src[i]);
            goto fail;
        }
    }
    if (gs.n > 1 && !quiet) {
        int nt = 0, nv = 0;
        dp_train_n_graphs(tr, &nt, &nv);
        if (cfg.reference_best_instant)
            fprintf(stderr, "doppler train: %d training and %d validation graphs; makespans in units of each graph's "
                            "best instant placement\n", nt, nv);
        else
            fprintf(stderr, "doppler train: %d training and %d validation graphs; makespans in units of each graph's "
                            "critical-path rollout in the training state (SEL the ready op of highest b-level, PLC "
                            "the device of earliest start as the state estimates it: not place --method cp's list "
                            "schedule, often better)\n", nt, nv);
        for (int i = 0; i < gs.n; i++)
            fprintf(stderr, "  %-10s %-44s %4d ops  %2d devices  %s%s\n", gs.validation[i] ? "validation" : "train",
                    gs.g[i]->name, gs.g[i]->n_ops, gs.c[i]->n_devices, gs.src[i], dp_trainset_note(&gs, i));
    }
    if (init && dp_train_init_from(tr, init, &err) != DP_OK) goto fail;
    if (init && !quiet)
        dp_cli_note_checkpoint_coarsen("train", "this training", init, cfg.coarsen, (dp_coarse_rule)cfg.coarsen_rule);
    int stages[2] = {stage, DP_TRAIN_STAGE_SIM}, n_stages = 1;
    if (pipeline) {
        stages[0] = DP_TRAIN_STAGE_IL;
        n_stages = 2;
    }
    for (int k = 0; k < n_stages; k++)
        if (train_comm && dp_train_comm_check(&cfg, stages[k], train_comm->size, &err) != DP_OK) {
            status = dp_cli_fail(&err); /* every rank says it: the same config */
            goto done;
        }
    if (ranks_sync(0) != 0) {
        status = DP_EXIT_ERROR;
        goto done;
    }
    if (train_comm && !quiet)
        fprintf(stderr, "doppler train: %d MPI ranks; each rolls out its share of every batch's episodes\n", train_comm->size);
    if (resume) {
        if (dp_train_resume(tr, ckpt, rank == 0 ? traj : NULL, &err) != DP_OK) goto fail;
        int s = dp_train_current_stage(tr);
        if (!pipeline && s != stage) {
            if (have_stage)
                fprintf(stderr, "doppler train: %s is a checkpoint of stage %s; continuing that stage\n", ckpt, dp_train_stage_name(s));
            stages[0] = s;
        }
    }
    if (cfg.demo_method[0]) { /* offered to a self-imitation buffer only: say when none takes them */
        int takes = 0;
        for (int k = 0; k < n_stages; k++)
            takes |= cfg.stage[stages[k]].sil_weight > 0 || cfg.stage[stages[k]].distill > 0;
        if (!takes)
            fprintf(stderr, "doppler train: note: no stage run here has self-imitation (sil_weight) or distillation (distill): "
                            "the \"demonstrations\" of the config are not made\n");
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    progress_state ps = {isatty(2), quiet, 0};
    dp_train_io io = {rank == 0 ? traj : NULL, rank == 0 ? ckpt : NULL, rank == 0 ? on_progress : NULL, &ps, &stop_flag,
                      train_comm};
    const long eps_of[2] = {episodes, episodes};
    assign = dp_alloc_malloc_n(g->n_ops, sizeof(int));
    if (!assign) { dp_error_set(&err, DP_ENOMEM, "out of memory"); goto fail; }
    dp_train_pipeline_result pr;
    if (dp_train_pipeline(tr, stages, eps_of, n_stages, 1, 0, cfg.seed, &io, &pr, assign, &err) != DP_OK) goto fail;
    if (pr.stopped) {
        status = DP_EXIT_ERROR;
        if (rank != 0) goto done;
        fprintf(stderr, "doppler train: stopped at %s episode %ld%s\n", dp_train_stage_name(dp_train_current_stage(tr)),
                dp_train_episode(tr), ckpt ? "; continue with --resume" : "");
        status = DP_EXIT_ERROR;
        goto done;
    }
    if (rank != 0) { /* rank 0 prints the results */
        status = 0;
        goto done;
    }
    const double sc = gs.n > 1 ? 1 : g->time_scale;
    char b[40], b2[40], b3[40];
    /* --json: one object on stdout, every makespan at full precision (17 significant digits),
     * in the units the table would print: what a script compares with doppler place --json */
    json_t *jo = as_json ? json_object() : NULL, *jstages = as_json ? json_array() : NULL;
    if (as_json && (!jo || !jstages)) { json_decref(jo); json_decref(jstages); dp_error_set(&err, DP_ENOMEM, "out of memory"); goto fail; }
    if (jo) {
        json_object_set_new(jo, "graph", json_string(g->name));
        json_object_set_new(jo, "method", json_string(dp_agent_name(cfg.method)));
        json_object_set_new(jo, "n_devices", json_integer(cost->n_devices)); /* the first graph's (its machine's) */
        json_object_set_new(jo, "units", json_string(gs.n > 1 ? (cfg.reference_best_instant ? "ratio to the best instant placement"
                                                                                 : "ratio to the critical-path rollout in the training state")
                                                         : g->time_unit));
        json_object_set_new(jo, "stages", jstages);
    }
    if (gs.n > 1 && !jo)
        printf("the stage figures below are the mean greedy makespan relative to the %s over the %s graphs "
               "(best sampled: the best ratio of any training rollout); the table is %s's\n",
               cfg.reference_best_instant ? "best instant placement" : "critical-path rollout (in the training state)",
               gs.n > 1 && val_count + (validation ? 1 : 0) > 0 ? "validation" : "training", g->name);
    char coarse_hint[64] = "";
    if (coarsen) {
        char text[56];
        snprintf(coarse_hint, sizeof coarse_hint, " %s", dp_coarse_options_text(coarsen, coarsen_rule, text, sizeof text));
    }
    if (!jo && coarsen)
        printf("coarsened (--coarsen %d, %s): the policy places every graph's group graph (%s's %d ops are %d groups); "
               "every makespan below is the expanded placement's, each op on its group's device, on the graph's own "
               "machine, as doppler place --coarsen reports it (doc/coarsen.md)\n", coarsen,
               dp_coarse_rule_name(coarsen_rule), gs.orig[0]->name, gs.orig[0]->n_ops, g->n_ops);
    if (jo && coarsen) json_object_set_new(jo, "coarsen", json_pack("{s:i,s:s,s:i,s:i}", "max_group", coarsen, "rule",
                                                                     dp_coarse_rule_name(coarsen_rule),
                                                                     "n_ops", gs.orig[0]->n_ops, "n_groups", g->n_ops));
    if (!jo)
        printf("graph %s: %d ops, %d edges, %d devices; trained %s%s\n", g->name, g->n_ops, g->n_edges, cost->n_devices,
               pipeline ? "il then sim" : dp_train_stage_name(stages[0]), episodes ? " (episodes overridden)" : "");
    /* what each stage left: the final parameters' placement, the model-selected one (the next
     * stage starts from it), the best rollout seen, and the simulations spent */
    for (int k = 0; k < pr.n_stages; k++) {
        const dp_train_pipeline_stage *r = &pr.stage[k];
        if (jo) {
            json_t *js = json_object();
            json_object_set_new(js, "stage", json_string(dp_train_stage_name(r->stage)));
            /* a stage finished before the checkpoint this run resumed is done, its figures in
             * the run that ran it */
            json_object_set_new(js, "done", json_boolean(r->done || r->before_resume));
            if (r->before_resume) json_object_set_new(js, "before_resume", json_true());
            if (r->done) {
                json_object_set_new(js, "episodes", json_integer(r->episodes));
                json_object_set_new(js, "simulations", json_integer(r->sims));
                json_object_set_new(js, "final", dp_json_number(r->final_greedy / sc));
                json_object_set_new(js, "model_selected", dp_json_number(r->selected_greedy / sc));
                json_object_set_new(js, "best_sampled", dp_json_number(r->best_sample / sc));
                json_object_set_new(js, "seconds", json_real(r->seconds)); /* wall-clock, this process's part */
            }
            json_array_append_new(jstages, js);
            continue;
        }
        if (!r->done) {
            printf("stage %-4s  (done before the checkpoint this run resumed)\n", dp_train_stage_name(r->stage));
            continue;
        }
        printf("stage %-4s  %ld episodes, %ld simulations: final %s, model-selected %s, best sampled %s\n",
               dp_train_stage_name(r->stage), r->episodes, r->sims, dp_cli_fmt(r->final_greedy / sc, b, sizeof b),
               dp_cli_fmt(r->selected_greedy / sc, b2, sizeof b2), dp_cli_fmt(r->best_sample / sc, b3, sizeof b3));
    }
    /* the memory penalty policy: training scores (and the stages' figures above are) the penalised
     * makespan; the table gives each row's makespan, as place does, with its penalised one */
    const int penalised = mach.sim.memory_policy == DP_HISIM_MEMORY_PENALTY && mach.sim.memory_limit != 0 && !real.x;
    if (penalised && !jo)
        printf("(--memory-policy penalty: the stages' figures are penalised makespans, what training scores)\n");
    if (real.x && !jo)
        printf("(stage real: the doppler rows are measured on the real executor, median of %d runs; the\n"
               " heuristics' rows are simulated with the machine's costs: compare them with doppler validate)\n",
               real.ctx.repeats);
    if (ckpt && jo) json_object_set_new(jo, "checkpoint", json_string(ckpt));
    if (jo) {
        /* stage real's doppler figures are runs of the executor, not what place simulates from
         * the checkpoint, as --help said of "makespan" (a review) */
        json_object_set_new(jo, "measured", json_boolean(real.x != NULL));
        if (real.x) json_object_set_new(jo, "measured_repeats", json_integer(real.ctx.repeats));
    }
    const dp_train_pipeline_stage *last = &pr.stage[pr.n_stages - 1];
    /* --json: the hashes of the last stage's model-selected parameters (those `place` uses) and of
     * its final ones: the same command and seed give the same numbers on any machine of this
     * kind (the products are the project's own, nn/dp_nn.h), and on any number of MPI ranks.
     * Until 2026-12-07 the man page called the first the final parameters' (a review) */
    char hx[24], hxf[24];
    snprintf(hx, sizeof hx, "%016llx", last->selected_fnv1a);
    snprintf(hxf, sizeof hxf, "%016llx", last->final_fnv1a);
    const dp_coarse_problem *coarse0 = coarsen ? gs.coarse[0] : NULL;
    dp_engine_schedule ds;
    if (gs.n > 1) {
        /* the table is of the first graph: its own greedy placements */
        double ms1 = 0;
        int *a2 = dp_alloc_malloc_n((size_t)g->n_ops, sizeof(int));
        if (!a2) { json_decref(jo); dp_error_set(&err, DP_ENOMEM, "out of memory"); goto fail; }
        int rc2 = dp_train_place(tr, 0, cfg.seed, a2, &ms1, NULL, &err);
        if (rc2 == DP_OK && penalised) rc2 = row_schedule(eng, a2, coarse0, &ds, &err);
        free(a2);
        if (rc2 != DP_OK) { json_decref(jo); goto fail; }
        const double ms1_plain = penalised ? ds.makespan : ms1;
        if (jo) {
            json_object_set_new(jo, "parameters_fnv1a", json_string(hx));
            json_object_set_new(jo, "parameters_final_fnv1a", json_string(hxf));
            json_object_set_new(jo, "makespan", dp_json_number(ms1_plain / g->time_scale));
            if (penalised) json_object_set_new(jo, "penalised_makespan", dp_json_number(ms1 / g->time_scale));
            json_object_set_new(jo, "makespan_units", json_string(g->time_unit));
        } else {
            printf("%-14s %s %s\n", "method", "makespan", g->time_unit);
            if (penalised)
                printf("%-14s %s (penalised %s)   (greedy, model-selected parameters, on %s)\n", dp_agent_name(cfg.method),
                       dp_cli_fmt(ms1_plain / g->time_scale, b, sizeof b), dp_cli_fmt(ms1 / g->time_scale, b2, sizeof b2),
                       g->name);
            else
                printf("%-14s %s   (greedy, model-selected parameters, on %s)\n", dp_agent_name(cfg.method),
                       dp_cli_fmt(ms1 / g->time_scale, b, sizeof b), g->name);
        }
        if (print_heuristics(g, cost, eng, &mach, assign, coarse0, penalised, jo, &err) != DP_OK) { json_decref(jo); goto fail; }
        /* every simulation of the run: on several graphs also each graph's reference placement,
         * made when it is bound (the unit of its makespans; with the hint feature, the hint's six
         * too), which no stage's figure holds, and the table's placement above (the stages' lines
         * were 7 short of the calls made: a walkthrough) */
        const long sims_all = dp_train_simulations(tr);
        if (jo) json_object_set_new(jo, "simulations", json_integer(sims_all));
        else
            printf("simulations in all: %ld (the stages' above; each graph's reference placement, made when it was "
                   "bound, with its hint's where the network reads one; the placement in this table)\n", sims_all);
        char q[8300];
        if (ckpt && !jo) printf("checkpoint: %s (place any graph with: doppler place --method %s --checkpoint %s --graph G%s; "
                                "the model-selected parameters, or the final ones with --parameters final)\n", ckpt,
                                dp_agent_name(cfg.method), dp_file_shell_word(ckpt, q, sizeof q), coarse_hint);
    } else {
        char label[32];
        snprintf(label, sizeof label, "%s-final", dp_agent_name(cfg.method));
        /* assign: the model-selected parameters' placement (dp_train_pipeline), its schedule for
         * the makespan under the penalty policy (the final parameters' placement is not kept:
         * its penalised makespan only) */
        if (penalised && row_schedule(eng, assign, coarse0, &ds, &err) != DP_OK) { json_decref(jo); goto fail; }
        if (jo) {
            json_object_set_new(jo, "parameters_fnv1a", json_string(hx));
            json_object_set_new(jo, "parameters_final_fnv1a", json_string(hxf));
            if (penalised) {
                json_object_set_new(jo, "penalised_makespan_final", dp_json_number(last->final_greedy / sc));
                json_object_set_new(jo, "makespan", dp_json_number(ds.makespan / sc));
                json_object_set_new(jo, "penalised_makespan", dp_json_number(last->selected_greedy / sc));
            } else {
                json_object_set_new(jo, "makespan_final", dp_json_number(last->final_greedy / sc));
                json_object_set_new(jo, "makespan", dp_json_number(last->selected_greedy / sc));
            }
        } else if (penalised) {
            printf("%-14s %s %s\n", "method", "makespan", g->time_unit);
            printf("%-14s penalised %s   (greedy, final parameters)\n", label,
                   dp_cli_fmt(last->final_greedy / sc, b, sizeof b));
            printf("%-14s %s (penalised %s)   (greedy, best parameters at a checkpoint evaluation: what place --method "
                   "%s uses)\n", dp_agent_name(cfg.method), dp_cli_fmt(ds.makespan / sc, b, sizeof b),
                   dp_cli_fmt(last->selected_greedy / sc, b2, sizeof b2), dp_agent_name(cfg.method));
        } else {
            printf("%-14s %s %s\n", "method", "makespan", g->time_unit);
            printf("%-14s %s   (greedy, final parameters)\n", label, dp_cli_fmt(last->final_greedy / sc, b, sizeof b));
            printf("%-14s %s   (greedy, best parameters at a checkpoint evaluation: what place --method %s uses)\n",
                   dp_agent_name(cfg.method), dp_cli_fmt(last->selected_greedy / sc, b, sizeof b), dp_agent_name(cfg.method));
        }
        if (print_heuristics(g, cost, eng, &mach, assign, coarse0, penalised, jo, &err) != DP_OK) { json_decref(jo); goto fail; }
        if (last->agreement.steps > 0 && !jo) {
            /* the teachers the run imitated (sel_teacher, network.features "hint": a review found
             * the critical-path heuristic's named where the hint's device was counted) */
            printf("agreement with the teachers (SEL: %s; PLC: %s), steps where the heuristic ties between choices "
                   "counted as disagreement:\n",
                   cfg.sel_teacher_etf ? "the ready ops of earliest start over the devices, ETF's" : "the ready op of highest b-level",
                   cfg.method == DP_AGENT_DOPPLER && cfg.arch.device_features == DP_ENV_FEATURES_HINT
                       ? "the device of the op in the best instant placement, the hint"
                       : "the device of earliest estimated start");
            print_agreement(label, &last->agreement);
            print_agreement(dp_agent_name(cfg.method), &last->agreement_selected);
        }
        if (ckpt && !jo) {
            /* the machine it trained on, so that the command places on it (a Stage III run on
             * cpu-2core printed a command that placed on 4 uniform devices: a review) */
            char mhint[1024], xhint[96] = "";
            dp_cli_machine_args(&mach, mhint, sizeof mhint);
            /* the graph Stages I and II trained on (place sizes it the same way: dp_cli_exec_graph;
             * without these the command placed the file's graph, 46.3 s where train reported
             * 0.0922 s: a review) */
            if (gx && x_scale > 0) snprintf(xhint, sizeof xhint, " --scale %.17g", x_scale);
            else if (gx && x_target > 0) snprintf(xhint, sizeof xhint, " --target-flops %.17g", x_target);
            char qc[8300], qg[8300];
            printf("checkpoint: %s (place with: doppler place --method %s --checkpoint %s --graph %s%s%s%s)\n", ckpt,
                   dp_agent_name(cfg.method), dp_file_shell_word(ckpt, qc, sizeof qc), dp_file_shell_word(graph, qg, sizeof qg),
                   xhint, mhint, coarse_hint);
            if (stage == DP_TRAIN_STAGE_REAL)
                printf("(Stage III's makespans above were measured on the graph as executed, scaled; place simulates the "
                       "file's graph on the machine)\n");
        }
    }
    if (jo) {
        json_dumpf(jo, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17));
        putchar('\n');
        json_decref(jo);
    }
    status = 0;
    goto done;
fail:
    status = ranks_fail(dp_cli_fail(&err));
done:
    free(assign);
    dp_train_free(tr);
    if (prob != prob_set) dp_problem_free(prob);
    dp_cost_free(real_cost);
    dp_cost_free(speed_cost);
    dp_cli_real_close(&real); /* g may be its executed graph */
    dp_graph_free(gx);
    dp_graph_free(g0);
    dp_trainset_free(&gs);
    dp_testset_free(&test);
    dp_machine_free(&mach);
    return status;
}

