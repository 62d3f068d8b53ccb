/* bench_learned: the learned methods side by side on DOPPLER's graphs (DOPPLER-compatible cost
 * model, dp_cost_graph), one BLAS thread, one process.
 *
 *   bench_learned episode [GRAPH_DIR [REPS]]
 *     seconds per episode, inference (greedy rollout with the simulator) and training (rollout,
 *     loss, backward, Adam), of DOPPLER (dp_train_bench), Placeto and GDP (the same trainer, dp_agent.h),
 *     measured in the same run on every graph, beside the DOPPLER authors' figures for DOPPLER
 *     and Placeto (Yao et al. 2026; their machine and PyTorch code).
 *
 *   bench_learned table [GRAPH_DIR [EPISODES [SEED]]]
 *     on the four 4-GPU graphs: makespan and seconds of critical path, HEFT, Placeto, GDP,
 *     annealing (its default 20000 simulations) and DOPPLER. The learned methods get the same
 *     number of episodes (EPISODES, default 200): Placeto and GDP that many of the "sim" stage,
 *     DOPPLER half of Stage I (imitation) then half of Stage II; each then places greedily with
 *     its best-greedy parameters (model selection at checkpoint boundaries, every 100 episodes).
 *     Default hyperparameters otherwise (dp_train_config_default).
 *
 * Makespans are in DOPPLER units (simulated time / 1e10). Output: markdown tables on stdout.
 * Exit 77 when the graphs are absent. Build: make bench/bench_learned (EXTRA_PROGRAMS). */
#include "dp_engine.h"
#include "dp_place.h"
#include "dp_sim.h"
#include "dp_train.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
    const char *name, *file;
    int devices;
    double infer, train, p_infer, p_train; /* the authors' seconds: DOPPLER, then Placeto */
} G[] = {
    {"ChainMM", "chain_mm_112nodes.txt", 4, 1.18, 1.84, 2.24, 3.72},
    {"FFNN", "ffnn_192nodes.txt", 4, 2.87, 4.25, 5.63, 9.24},
    {"Llama-block", "transformer_block_215nodes.txt", 4, 2.46, 3.65, 5.71, 9.40},
    {"Llama-layer", "full_transformer_layer_261nodes.txt", 4, 3.29, 4.95, 7.16, 11.89},
    {"8-GPU block", "8gpu_transformer_block.txt", 8, 4.63, 7.24, 9.65, 14.50},
    {"8-GPU layer", "8gpu_full_transformer.txt", 8, 5.53, 9.01, 12.93, 19.05},
};
#define N_GRAPHS (sizeof G / sizeof G[0])

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int fail(const dp_error *err)
{
    fprintf(stderr, "bench_learned: %s\n", err->msg);
    return 1;
}

static int load(const char *dir, size_t i, dp_graph **g, dp_cost **c, dp_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, G[i].file);
    *g = dp_graph_read(path, NULL, err);
    if (!*g) return 77;
    *c = dp_cost_graph(*g, G[i].devices, err);
    return *c ? 0 : 1;
}

static int episode_times(const char *dir, int reps)
{
    dp_train_config dcfg;
    dp_train_config_default(&dcfg);
    dp_train_config pcfg, gcfg;
    dp_train_config_default(&pcfg);
    dp_train_config_default(&gcfg);
    pcfg.method = DP_AGENT_PLACETO;
    gcfg.method = DP_AGENT_GDP;
    printf("Seconds per episode, one core, %d repetitions after 2 warm-up ones; default sizes (DOPPLER %d/%d/%d steps, "
           "Placeto %d/%d, GDP %d/%d layers/%d heads).\n\n",
           reps, dcfg.arch.hidden, dcfg.arch.mlp_hidden, dcfg.arch.steps, pcfg.placeto.hidden, pcfg.placeto.mlp_hidden,
           gcfg.gdp.hidden, gcfg.gdp.layers, gcfg.gdp.heads);
    printf("| graph | ops | dev | DOPPLER inf | DOPPLER train | Placeto inf | Placeto train | GDP inf | GDP train | "
           "Placeto/DOPPLER train | authors DOPPLER inf/train | authors Placeto inf/train |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < N_GRAPHS; i++) {
        dp_error err;
        dp_graph *g = NULL;
        dp_cost *c = NULL;
        int rc = load(dir, i, &g, &c, &err);
        if (rc) {
            fprintf(stderr, "bench_learned: %s\n", err.msg);
            return rc;
        }
        double di = 0, dt = 0, pi = 0, pt = 0, gi = 0, gt = 0;
        dp_engine *eng = dp_engine_alloc(g, c, NULL, &err);
        if (!eng) return fail(&err);
        const dp_oracle oracle = dp_engine_oracle(eng);
        dp_train *dtr = dp_train_alloc(g, c, &dcfg, &oracle, &err);
        if (!dtr || dp_train_bench(dtr, 2, &di, &dt, &err) || dp_train_bench(dtr, reps, &di, &dt, &err)) return fail(&err);
        dp_train_free(dtr);
        dp_train *ptr = dp_train_alloc(g, c, &pcfg, &oracle, &err);
        if (!ptr || dp_train_bench(ptr, 2, &pi, &pt, &err) || dp_train_bench(ptr, reps, &pi, &pt, &err)) return fail(&err);
        dp_train_free(ptr);
        dp_train *gtr = dp_train_alloc(g, c, &gcfg, &oracle, &err);
        if (!gtr || dp_train_bench(gtr, 2, &gi, &gt, &err) || dp_train_bench(gtr, reps, &gi, &gt, &err)) return fail(&err);
        dp_train_free(gtr);
        dp_engine_free(eng);
        printf("| %s | %d | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.1f | %.2f / %.2f | %.2f / %.2f |\n", G[i].name,
               g->n_ops, G[i].devices, di, dt, pi, pt, gi, gt, pt / dt, G[i].infer, G[i].train, G[i].p_infer, G[i].p_train);
        fflush(stdout);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    return 0;
}

typedef struct row {
    const char *method;
    double makespan, seconds;
} row;

static int simulate(const dp_graph *g, const dp_cost *c, const int *as, double *ms, dp_error *err)
{
    dp_engine *e = dp_engine_alloc(g, c, NULL, err);
    if (!e) return err->code;
    dp_engine_schedule res;
    int rc = dp_engine_run(e, as, NULL, &res, err);
    dp_engine_free(e);
    *ms = res.makespan / g->time_scale;
    return rc;
}

static int table(const char *dir, long episodes, uint64_t seed)
{
    printf("Makespan (DOPPLER units) and seconds spent, one core; learned methods: %ld episodes each "
           "(DOPPLER: %ld imitation + %ld simulator RL), seed %llu, greedy placement with the best-greedy parameters; "
           "annealing: 20000 simulations.\n\n",
           episodes, episodes / 2, episodes - episodes / 2, (unsigned long long)seed);
    const char *cols[] = {"cp", "heft", "placeto", "gdp", "anneal", "doppler"};
    printf("| graph | ops |");
    for (size_t k = 0; k < 6; k++) printf(" %s | s |", cols[k]);
    printf("\n|---|---:|");
    for (size_t k = 0; k < 6; k++) printf("---:|---:|");
    printf("\n");
    for (size_t i = 0; i < N_GRAPHS; i++) {
        if (G[i].devices != 4) continue;
        dp_error err;
        dp_graph *g = NULL;
        dp_cost *c = NULL;
        int rc = load(dir, i, &g, &c, &err);
        if (rc) {
            fprintf(stderr, "bench_learned: %s\n", err.msg);
            return rc;
        }
        dp_engine *eng = dp_engine_alloc(g, c, NULL, &err);
        if (!eng) return fail(&err);
        const dp_oracle oracle = dp_engine_oracle(eng);
        int *as = malloc((size_t)g->n_ops * sizeof(int));
        if (!as) return 1;
        row r[6];
        for (size_t k = 0; k < 6; k++) {
            double t0 = now_s();
            if (strcmp(cols[k], "doppler") == 0) {
                dp_train_config cfg;
                dp_train_config_default(&cfg);
                cfg.seed = seed;
                dp_train *tr = dp_train_alloc(g, c, &cfg, &oracle, &err);
                double ms;
                if (!tr || dp_train_run(tr, DP_TRAIN_STAGE_IL, episodes / 2, NULL, &err) ||
                    dp_train_run(tr, DP_TRAIN_STAGE_SIM, episodes - episodes / 2, NULL, &err))
                    return fail(&err);
                /* the best-greedy parameters, as place --method doppler and the baselines use */
                dp_train_use_best(tr);
                if (dp_train_place(tr, 0, seed, as, &ms, NULL, &err)) return fail(&err);
                dp_train_free(tr);
            } else {
                dp_place_options o;
                dp_place_options_init(&o);
                o.seed = seed;
                o.oracle = &oracle;
                if (strcmp(cols[k], "placeto") == 0 || strcmp(cols[k], "gdp") == 0) o.budget = episodes;
                if (dp_place(cols[k], g, c, &o, as, NULL, NULL, &err) != DP_OK) return fail(&err);
            }
            r[k].seconds = now_s() - t0;
            if (simulate(g, c, as, &r[k].makespan, &err) != DP_OK) return fail(&err);
            fprintf(stderr, "bench_learned: %s %s %.6g in %.1f s\n", G[i].name, cols[k], r[k].makespan, r[k].seconds);
        }
        printf("| %s | %d |", G[i].name, g->n_ops);
        for (size_t k = 0; k < 6; k++) printf(" %.4g | %.1f |", r[k].makespan, r[k].seconds);
        printf("\n");
        fflush(stdout);
        free(as);
        dp_engine_free(eng);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "episode") != 0 && strcmp(argv[1], "table") != 0)) {
        fprintf(stderr, "usage: bench_learned episode [GRAPH_DIR [REPS]]\n"
                        "       bench_learned table [GRAPH_DIR [EPISODES [SEED]]]\n");
        return 2;
    }
    const char *dir = argc > 2 ? argv[2] : "../shared/data/doppler-graphs";
    openblas_set_num_threads(1);
    if (strcmp(argv[1], "episode") == 0) return episode_times(dir, argc > 3 ? atoi(argv[3]) : 5);
    return table(dir, argc > 3 ? atol(argv[3]) : 200, argc > 4 ? strtoull(argv[4], NULL, 10) : 1);
}
