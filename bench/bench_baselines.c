/* bench_baselines: the baseline tables of the report (markdown on stdout).
 *
 *   stg       the 50-task STG graphs on 2 and 4 devices (no communication): cp, HEFT, CPOP, PEFT,
 *             ETF and annealing against the published optima (stg/optimal_values)
 *   sinnen    Sinnen's DOT graphs (communication costs): exact search and every method against the
 *             published optimal makespans for their processor counts
 *   doppler   the four 4-GPU DOPPLER graphs (DOPPLER-compatible model): makespans and seconds
 *   trace     annealing: best makespan against simulations spent on each DOPPLER graph
 *
 * Every makespan is the simulated one (work-conserving FIFO engine) unless marked "own": the list
 * schedulers' own schedule lengths. Usage:
 *   bench_baselines [--budget N] [--seed S] [stg|sinnen|doppler|trace ...]
 * DOPPLER_SHARED_DATA overrides ../shared/data. */
#include "dp_engine.h"
#include "dp_cost.h"
#include "dp_list.h"
#include "dp_place.h"
#include "dp_search.h"
#include "dp_sim.h"
#include "dp_graph_formats.h"
#include "../tests/dp_test_taskgraph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *shared;
static long budget = 20000;
static unsigned long long seed = 1;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double sim_ms(const dp_graph *g, const dp_cost *c, const int *a)
{
    dp_error err;
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    dp_engine_schedule r;
    if (!e || dp_engine_run(e, a, NULL, &r, &err) != DP_OK) {
        fprintf(stderr, "bench_baselines: %s\n", err.msg);
        exit(1);
    }
    dp_engine_free(e);
    return r.makespan;
}

/* run a registered method; returns the simulated makespan, seconds in *sec */
static double run_method(const char *m, const dp_graph *g, const dp_cost *c, int *a, double *sec)
{
    dp_place_options o;
    dp_place_options_init(&o);
    o.seed = seed;
    o.budget = strcmp(m, "exact") == 0 ? 0 : budget;
    dp_error err;
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    if (!e) {
        fprintf(stderr, "bench_baselines: %s\n", err.msg);
        exit(1);
    }
    const dp_oracle oracle = dp_engine_oracle(e);
    o.oracle = &oracle;
    double t = now_s();
    if (dp_place(m, g, c, &o, a, NULL, NULL, &err) != DP_OK) {
        fprintf(stderr, "bench_baselines: %s on %s: %s\n", m, g->name, err.msg);
        exit(1);
    }
    if (sec) *sec = now_s() - t;
    dp_engine_free(e);
    return sim_ms(g, c, a);
}

static double own_length(const char *m, const dp_graph *g, const dp_cost *c)
{
    dp_list_schedule *s = dp_list_schedule_alloc(g->n_ops, c->n_devices);
    dp_error err;
    if (strcmp(m, "heft") == 0) dp_list_heft(g, c, s, &err);
    else if (strcmp(m, "cpop") == 0) dp_list_cpop(g, c, s, &err);
    else if (strcmp(m, "peft") == 0) dp_list_peft(g, c, s, &err);
    else dp_list_etf(g, c, s, &err);
    double x = s->makespan;
    dp_list_schedule_free(s);
    return x;
}

/* the optimum of graph rel (e.g. "50/rand0000.stg") on m devices from the STG tables; a 4-field
 * line gives lower bound and best known: *lo and *hi differ */
static int stg_optimum(int size, int m, const char *rel, double *lo, double *hi)
{
    char p[1024], line[512];
    snprintf(p, sizeof p, "%s/stg/optimal_values/Case%d_%d_OPT.csv", shared, size, m);
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        char *comma = strchr(line, ',');
        if (!comma) continue;
        *comma = 0;
        if (strcmp(line, rel) != 0) continue;
        int mm;
        double a, b;
        int k = sscanf(comma + 1, "%d,%lf,%lf", &mm, &a, &b);
        if (k >= 2) { *lo = a; *hi = k == 3 ? b : a; found = 0; }
        break;
    }
    fclose(f);
    return found;
}

static const char *const LIST[] = {"heft", "cpop", "peft", "etf"};

static void table_stg(void)
{
    printf("\n### STG 50-task graphs (no communication), simulated makespans\n\n");
    printf("Own schedule lengths of the list schedulers in parentheses when they differ from the simulation.\n"
           "anneal: %ld simulations, seed %llu, start cp.\n\n", budget, seed);
    printf("| graph | m | optimum | LB | cp | heft | cpop | peft | etf | anneal | anneal s |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < 10; i++) {
        char rel[64], p[1024];
        snprintf(rel, sizeof rel, "50/rand%04d.stg", i);
        snprintf(p, sizeof p, "%s/stg/%s", shared, rel);
        if (access(p, R_OK) != 0) continue;
        dp_error rerr;
        dp_graph *g = dp_graph_read_stg(p, &rerr);
        if (!g) { fprintf(stderr, "bench_baselines: cannot read %s\n", p); exit(1); }
        for (int m = 2; m <= 4; m += 2) {
            dp_error err;
            dp_cost *c = dp_cost_graph(g, m, &err);
            int *a = malloc(g->n_ops * sizeof(int));
            double lo = NAN, hi = NAN;
            stg_optimum(50, m, rel, &lo, &hi);
            char opt[64];
            if (lo == hi) snprintf(opt, sizeof opt, "%g", lo);
            else snprintf(opt, sizeof opt, "%g..%g", lo, hi);
            printf("| %s | %d | %s | %g | %g", rel, m, opt, ceil(dp_cost_lower_bound(g, c) - 1e-9),
                   run_method("cp", g, c, a, NULL));
            for (int k = 0; k < 4; k++) {
                double x = run_method(LIST[k], g, c, a, NULL), y = own_length(LIST[k], g, c);
                if (x == y) printf(" | %g", x);
                else printf(" | %g (%g)", x, y);
            }
            double sec;
            double an = run_method("anneal", g, c, a, &sec);
            printf(" | %g | %.2f |\n", an, sec);
            free(a);
            dp_cost_free(c);
        }
        dp_graph_free(g);
    }
}

/* published optima of the Milestone-1 graphs (../shared/data/README.md section 3) */
static const struct { const char *file; double p2, p4; } MILESTONE[] = {
    {"Nodes_7_OutTree.dot", 28, 22},       {"Nodes_8_Random.dot", 581, 581}, {"Nodes_9_SeriesParallel.dot", 55, 55},
    {"Nodes_10_Random.dot", 50, 50},       {"Nodes_11_OutTree.dot", 350, 227},
};

static void sinnen_row(const char *file, const dp_graph *g, int P, double opt)
{
    dp_error err;
    dp_cost *c = dp_cost_graph(g, P, &err);
    int *a = malloc(g->n_ops * sizeof(int));
    dp_search_exact_config cfg;
    dp_search_exact_config_init(&cfg);
    dp_search_exact_result er;
    dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
    if (!e) { fprintf(stderr, "%s\n", err.msg); exit(1); }
    const dp_oracle oracle = dp_engine_oracle(e);
    double t = now_s();
    if (dp_search_exact(g, c, &oracle, &cfg, a, &er, &err) != DP_OK) { fprintf(stderr, "%s\n", err.msg); exit(1); }
    dp_engine_free(e);
    double sec = now_s() - t;
    printf("| %s | %d | %g | %g%s (%.2fs) | %g", file, P, opt, er.makespan, er.proven ? "" : "?", sec,
           run_method("cp", g, c, a, NULL));
    for (int k = 0; k < 4; k++) {
        double x = run_method(LIST[k], g, c, a, NULL), y = own_length(LIST[k], g, c);
        if (x == y) printf(" | %g", x);
        else printf(" | %g (%g)", x, y);
    }
    printf(" | %g | %g |\n", run_method("anneal", g, c, a, NULL), run_method("local", g, c, a, NULL));
    free(a);
    dp_cost_free(c);
}

static void table_sinnen(void)
{
    printf("\n### Sinnen's optimal-schedule graphs (communication costs), simulated makespans\n\n");
    printf("exact = branch and bound over assignments, each simulated (FIFO); \"?\" = node limit hit, not proven.\n"
           "Own schedule lengths of the list schedulers in parentheses when they differ.\n\n");
    printf("| graph | P | optimum | exact | cp | heft | cpop | peft | etf | anneal | local |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    char p[1024];
    for (size_t i = 0; i < sizeof MILESTONE / sizeof *MILESTONE; i++) {
        snprintf(p, sizeof p, "%s/sinnen-optimal-dot/%s", shared, MILESTONE[i].file);
        if (access(p, R_OK) != 0) continue;
        int procs;
        double len;
        dp_error rerr;
        dp_graph *g = dp_graph_read_dot(p, &rerr);
        dp_test_dot_reference(p, &procs, &len);
        if (!g) { fprintf(stderr, "bench_baselines: cannot read %s\n", p); exit(1); }
        sinnen_row(MILESTONE[i].file, g, 2, MILESTONE[i].p2);
        sinnen_row(MILESTONE[i].file, g, 4, MILESTONE[i].p4);
        dp_graph_free(g);
    }
    static const char *const FULL[] = {
        "4p_Pipeline_Nodes_10_CCR_1.97_WeightType_Random.dot",
        "4p_Random_Nodes_10_Density_0.60_CCR_2.00_WeightType_Random.dot",
        "4p_Random_Nodes_10_Density_1.40_CCR_1.85_WeightType_Random.dot",
        "4p_Random_Nodes_10_Density_1.50_CCR_10.00_WeightType_Random.dot",
        "4p_Random_Nodes_10_Density_2.00_CCR_1.02_WeightType_Random.dot",
        "4p_Random_Nodes_10_Density_2.30_CCR_0.10_WeightType_Random.dot",
        "4p_Random_Nodes_10_Density_4.50_CCR_0.99_WeightType_Random.dot",
        "4p_SeriesParallel-MaxBf-5_Nodes_10_CCR_1.00_WeightType_Random.dot",
        "4p_Random_Nodes_10_Density_1.30_CCR_0.10_WeightType_Random.dot",
        "4p_Random_Nodes_10_Density_1.50_CCR_2.03_WeightType_Random.dot",
        "4p_Random_Nodes_10_Density_4.50_CCR_0.10_WeightType_Random.dot",
        "4p_OutTree-Unbalanced-MaxBf-3_Nodes_10_CCR_1.00_WeightType_Random.dot",
        "8p_InTree-Balanced-MaxBf-3_Nodes_10_CCR_1.00_WeightType_Random.dot",
    };
    for (size_t i = 0; i < sizeof FULL / sizeof *FULL; i++) {
        snprintf(p, sizeof p, "%s/sinnen-optimal-dot/%s", shared, FULL[i]);
        if (access(p, R_OK) != 0) continue;
        int procs;
        double len;
        dp_error rerr;
        dp_graph *g = dp_graph_read_dot(p, &rerr);
        dp_test_dot_reference(p, &procs, &len);
        if (!g || procs < 1) { fprintf(stderr, "bench_baselines: cannot read %s\n", p); exit(1); }
        sinnen_row(FULL[i], g, procs, len);
        dp_graph_free(g);
    }
}

static const char *const DOPPLER[] = {"chain_mm_112nodes", "ffnn_192nodes", "transformer_block_215nodes",
                                      "full_transformer_layer_261nodes"};

static void table_doppler(void)
{
    printf("\n### DOPPLER graphs, 4 devices, DOPPLER-compatible model (DOPPLER units, simulated time / 1e10)\n\n");
    printf("Seconds per method in parentheses (one core). anneal/local: %ld simulations, seed %llu.\n\n", budget, seed);
    printf("| graph | LB | cp | heft | cpop | peft | etf | local | anneal |\n|---|---|---|---|---|---|---|---|---|\n");
    static const char *const M[] = {"cp", "heft", "cpop", "peft", "etf", "local", "anneal"};
    for (size_t i = 0; i < sizeof DOPPLER / sizeof *DOPPLER; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/doppler-graphs/%s.txt", shared, DOPPLER[i]);
        dp_error err;
        dp_graph *g = dp_graph_read(p, NULL, &err);
        if (!g) continue;
        dp_cost *c = dp_cost_graph(g, 4, &err);
        int *a = malloc(g->n_ops * sizeof(int));
        const double sc = g->time_scale;
        printf("| %s | %.6g", DOPPLER[i], dp_cost_lower_bound(g, c) / sc);
        for (size_t k = 0; k < sizeof M / sizeof *M; k++) {
            double sec, x = run_method(M[k], g, c, a, &sec);
            printf(" | %.6g (%.3fs)", x / sc, sec);
        }
        printf(" |\n");
        free(a);
        dp_cost_free(c);
        dp_graph_free(g);
    }
}

static void table_trace(void)
{
    printf("\n### Annealing: best makespan against simulations spent (DOPPLER graphs, 4 devices; seed %llu)\n\n",
           seed);
    static const long marks[] = {1, 100, 300, 1000, 3000, 10000, 20000, 50000, 100000};
    printf("| graph |");
    for (size_t k = 0; k < sizeof marks / sizeof *marks && marks[k] <= budget; k++) printf(" %ld |", marks[k]);
    printf(" s/1000 sims |\n|---|");
    for (size_t k = 0; k < sizeof marks / sizeof *marks && marks[k] <= budget; k++) printf("---|");
    printf("---|\n");
    for (size_t i = 0; i < sizeof DOPPLER / sizeof *DOPPLER; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/doppler-graphs/%s.txt", shared, DOPPLER[i]);
        dp_error err;
        dp_graph *g = dp_graph_read(p, NULL, &err);
        if (!g) continue;
        dp_cost *c = dp_cost_graph(g, 4, &err);
        int *a = malloc(g->n_ops * sizeof(int));
        dp_search_anneal_config cfg;
        dp_search_anneal_config_init(&cfg);
        cfg.budget = budget;
        dp_search_result res;
        dp_engine *e = dp_engine_alloc(g, c, NULL, &err);
        if (!e) { fprintf(stderr, "%s\n", err.msg); exit(1); }
        const dp_oracle oracle = dp_engine_oracle(e);
        double t = now_s();
        dp_search_anneal(g, c, &oracle, &cfg, seed, a, &res, &err);
        dp_engine_free(e);
        double sec = now_s() - t;
        printf("| %s |", DOPPLER[i]);
        for (size_t k = 0; k < sizeof marks / sizeof *marks && marks[k] <= budget; k++) {
            double best = NAN;
            for (long j = 0; j < res.trace.n && res.trace.sims[j] <= marks[k]; j++) best = res.trace.best[j];
            printf(" %.6g |", best / g->time_scale);
        }
        printf(" %.4f |\n", sec / res.sims * 1000);
        dp_search_trace_clear(&res.trace);
        free(a);
        dp_cost_free(c);
        dp_graph_free(g);
    }
}

int main(int argc, char **argv)
{
    shared = getenv("DOPPLER_SHARED_DATA");
    if (!shared || !*shared) shared = "../shared/data";
    int any = 0, want[4] = {0, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) budget = atol(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "stg") == 0) want[0] = any = 1;
        else if (strcmp(argv[i], "sinnen") == 0) want[1] = any = 1;
        else if (strcmp(argv[i], "doppler") == 0) want[2] = any = 1;
        else if (strcmp(argv[i], "trace") == 0) want[3] = any = 1;
        else {
            fprintf(stderr, "usage: bench_baselines [--budget N] [--seed S] [stg|sinnen|doppler|trace ...]\n");
            return 2;
        }
    }
    if (budget < 1) { fprintf(stderr, "bench_baselines: --budget must be positive\n"); return 2; }
    if (access(shared, R_OK) != 0) { fprintf(stderr, "bench_baselines: %s not found\n", shared); return 1; }
    if (!any || want[0]) table_stg();
    if (!any || want[1]) table_sinnen();
    if (!any || want[2]) table_doppler();
    if (!any || want[3]) table_trace();
    return 0;
}
