/* bench_env: does the environment's state describe the scorer? (issue 15, item 1)
 *
 * For each DOPPLER graph (4 devices, 8 for the 8gpu_ files, the DOPPLER-compatible engine) the
 * critical-path placement and annealing's (dp_place "anneal", --budget simulations, seeds
 * 1..--seeds: `doppler place --method anneal --budget N --seed S`) are replayed through the
 * environment: at each step the ready op of highest b-level (cp's SEL order) goes to the device
 * the placement gives it. Under the authors' append state and under the engine state it prints:
 *   agree   the fraction of steps whose device is among the earliest-estimated-start devices
 *           (what a policy imitating the teacher would choose);
 *   final   the environment's estimate after the last step (dp_env_makespan), beside the
 *           simulated makespan, and whether the estimate ranks the annealing placement below cp
 *           as the simulator does;
 *   moved   (engine state) the fraction of steps after which some earlier-placed op's time
 *           changed: how often a prefix's schedule is not final under this SEL order;
 *   resim   (engine state) prefix simulations per episode, and microseconds per replayed
 *           episode in each state;
 * and the makespan of cp re-derived from the exact state (b-level SEL, the engine's earliest
 * start: Stage I's teacher in the engine state). Makespans in DOPPLER units.
 *
 * Usage: bench_env [--budget N] [--seeds K] [GRAPH_DIR]   (default ../shared/data/doppler-graphs,
 * or $DOPPLER_SHARED_DATA/doppler-graphs) */
#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_env.h"
#include "dp_graph.h"
#include "dp_place.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct replay {
    double agree, final_est, moved, resim, us;
} replay;

/* Replay assignment a through env in b-level order; the environment's state is set by caller. */
static int replay_once(dp_env *env, const int *a, replay *out, dp_error *err)
{
    const int n = env->n_ops, D = env->n_devices;
    unsigned char *marks = malloc((size_t)D);
    double *prev = malloc((size_t)n * sizeof *prev);
    if (!marks || !prev) { free(marks); free(prev); return dp_error_set(err, DP_ENOMEM, "out of memory"); }
    dp_env_reset(env);
    long resim0 = env->n_resim;
    int agree = 0, moved = 0;
    while (!dp_env_done(env)) {
        int v = dp_env_cp_select(env);
        dp_env_cp_place_all(env, v, marks);
        agree += marks[a[v]];
        for (int i = 0; i < env->step; i++) prev[env->order[i]] = env->est_end[env->order[i]];
        int rc = dp_env_step(env, v, a[v], err);
        if (rc != DP_OK) { free(marks); free(prev); return rc; }
        int mv = 0;
        for (int i = 0; i + 1 < env->step && !mv; i++) mv = prev[env->order[i]] != env->est_end[env->order[i]];
        moved += mv;
    }
    out->agree = (double)agree / n;
    out->moved = (double)moved / n;
    out->final_est = dp_env_makespan(env);
    out->resim = (double)(env->n_resim - resim0);
    free(marks);
    free(prev);
    return DP_OK;
}

/* microseconds per replay episode without the bookkeeping above: SEL, the teacher's device
 * scores (every device probed, as a policy's features need) and the step */
static double time_episode(dp_env *env, const int *a)
{
    const int D = env->n_devices;
    int reps = 0;
    double t0 = now_s(), t;
    volatile double sink = 0;
    do {
        dp_env_reset(env);
        dp_error err;
        while (!dp_env_done(env)) {
            int v = dp_env_cp_select(env);
            for (int d = 0; d < D; d++) sink += dp_env_est_start(env, v, d);
            dp_env_step(env, v, a[v], &err);
        }
        reps++;
        t = now_s() - t0;
    } while (t < 0.2 || reps < 3);
    (void)sink;
    return t / reps * 1e6;
}

int main(int argc, char **argv)
{
    long budget = 20000;
    int seeds = 3;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) budget = atol(argv[++i]);
        else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) seeds = atoi(argv[++i]);
        else if (argv[i][0] != '-') dir = argv[i];
        else { fprintf(stderr, "usage: bench_env [--budget N] [--seeds K] [GRAPH_DIR]\n"); return 2; }
    }
    char dbuf[4096];
    if (!dir) {
        const char *sh = getenv("DOPPLER_SHARED_DATA");
        snprintf(dbuf, sizeof dbuf, "%s/doppler-graphs", sh && *sh ? sh : "../shared/data");
        dir = dbuf;
    }
    static const struct { const char *file, *label; int devices; } graphs[] = {
        {"chain_mm_112nodes", "ChainMM", 4},
        {"ffnn_192nodes", "FFNN", 4},
        {"transformer_block_215nodes", "Llama-block", 4},
        {"full_transformer_layer_261nodes", "Llama-layer", 4},
        {"8gpu_transformer_block", "8-GPU block", 8},
        {"8gpu_full_transformer", "8-GPU layer", 8},
    };
    printf("# replay of cp's and annealing's placements (budget %ld, seeds 1..%d) through the environment,\n"
           "# ops in b-level order; makespans in DOPPLER units (simulated time / 1e10)\n", budget, seeds);
    printf("%-12s %-9s %9s | %6s %9s | %6s %9s %6s %7s | %9s %9s\n", "graph", "placement", "simulated", "agreeA",
           "finalA", "agreeE", "finalE", "movedE", "resimE", "us_append", "us_engine");
    for (size_t gi = 0; gi < sizeof graphs / sizeof graphs[0]; gi++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s.txt", dir, graphs[gi].file);
        dp_error err;
        dp_graph *g = dp_graph_read(path, NULL, &err);
        if (!g) { fprintf(stderr, "bench_env: %s\n", err.msg); return 1; }
        const double ts = g->time_scale;
        dp_cost *c = dp_cost_graph(g, graphs[gi].devices, &err);
        dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
        dp_oracle o = dp_engine_oracle(e);
        dp_env *app = dp_env_alloc(g, c, &err), *eng = dp_env_alloc(g, c, &err);
        if (!c || !e || !app || !eng || dp_env_set_state(eng, DP_ENV_STATE_ENGINE, e, &err) != DP_OK) {
            fprintf(stderr, "bench_env: %s\n", err.msg);
            return 1;
        }
        const int n = g->n_ops;
        int *a = malloc((size_t)n * sizeof *a);
        double cp_sim = 0, cp_estA = 0, cp_estE = 0;
        int rankA = 0, rankE = 0, rankS = 0;
        double sum_agreeA = 0, sum_agreeE = 0;
        for (int k = 0; k <= seeds; k++) {
            dp_place_options po;
            dp_place_options_init(&po);
            po.oracle = &o;
            po.budget = budget;
            po.seed = (uint64_t)k;
            if (dp_place(k == 0 ? "cp" : "anneal", g, c, &po, a, NULL, NULL, &err) != DP_OK) {
                fprintf(stderr, "bench_env: %s\n", err.msg);
                return 1;
            }
            double sim;
            dp_oracle_cost(&o, a, &sim, &err);
            replay ra, re;
            if (replay_once(app, a, &ra, &err) != DP_OK || replay_once(eng, a, &re, &err) != DP_OK) {
                fprintf(stderr, "bench_env: %s\n", err.msg);
                return 1;
            }
            if (re.final_est != sim) {
                fprintf(stderr, "bench_env: %s: engine state's final estimate %.17g differs from the simulated %.17g\n",
                        graphs[gi].file, re.final_est, sim);
                return 1;
            }
            char label[32];
            snprintf(label, sizeof label, k == 0 ? "cp" : "anneal s%d", k);
            printf("%-12s %-9s %9.2f | %6.3f %9.2f | %6.3f %9.2f %6.3f %7.0f | %9.0f %9.0f\n", graphs[gi].label, label,
                   sim / ts, ra.agree, ra.final_est / ts, re.agree, re.final_est / ts, re.moved, re.resim,
                   time_episode(app, a), time_episode(eng, a));
            if (k == 0) {
                cp_sim = sim;
                cp_estA = ra.final_est;
                cp_estE = re.final_est;
            } else {
                rankS += sim < cp_sim;
                rankA += (ra.final_est < cp_estA) == (sim < cp_sim);
                rankE += (re.final_est < cp_estE) == (sim < cp_sim);
                sum_agreeA += ra.agree;
                sum_agreeE += re.agree;
            }
        }
        /* cp re-derived from the exact state: b-level SEL, the engine's earliest start */
        dp_env_reset(eng);
        while (!dp_env_done(eng)) {
            int v = dp_env_cp_select(eng);
            dp_env_step(eng, v, dp_env_cp_place(eng, v), &err);
        }
        double cpe;
        dp_oracle_cost(&o, eng->assignment, &cpe, &err);
        printf("%-12s annealing better than cp (simulated) in %d/%d; estimate ranks them as the simulator in "
               "%d/%d (append), %d/%d (engine); mean agree %.3f (append), %.3f (engine); cp from the exact state %.2f "
               "(cp %.2f)\n",
               graphs[gi].label, rankS, seeds, rankA, seeds, rankE, seeds, sum_agreeA / seeds, sum_agreeE / seeds,
               cpe / ts, cp_sim / ts);
        fflush(stdout);
        free(a);
        dp_env_free(app);
        dp_env_free(eng);
        dp_engine_free(e);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    return 0;
}
