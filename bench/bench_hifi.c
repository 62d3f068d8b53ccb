/* bench_hifi: the general engine (dp_hisim) on a layered random DAG.
 *
 *  1. time per simulation and events per second for each transfer model (fixed, fifo, maxmin)
 *     on V ops over a topology (default: 1e5 ops on dgx1-v100, 8 devices, random assignment;
 *     target: max-min under 1 s);
 *  2. the workspace bytes (engine + transfer model) for V = V/8, V/4, V/2, V: bytes / (V + E)
 *     should stay flat (memory linear in V + E).
 *
 * The graph: DAGGEN's layered random DAG from models/dp_gen.h made physical (see layered_dag).
 *
 * Usage: bench_hifi [--ops V] [--seed S] [--min-seconds T] TOPOLOGY.json */
#include "dp_cost.h"
#include "dp_costmodel.h"
#include "dp_gen.h"
#include "dp_graph.h"
#include "dp_hisim.h"
#include "dp_topology.h"
#include "dp_transfer.h"

#include <gsl/gsl_rng.h>
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

/* DAGGEN's layered random DAG (models/dp_gen.h: n ops, fat 0.5, density 0.01 so that a task has
 * 1 to about 3 parents from the previous level, work in [1, 100], ccr 1) turned physical: a work
 * unit is 1e9 FLOPs and a comm unit 1e6 bytes (ops of 1e9 .. 1e11 FLOPs, tensors of 1 .. 100 MB). */
static dp_graph *layered_dag(int V, unsigned long seed)
{
    dp_gen_random_opts o;
    dp_gen_random_defaults(&o);
    o.n = V;
    o.fat = 0.5;
    o.density = 0.01;
    o.seed = seed;
    dp_error err;
    dp_graph *t = dp_gen_random(&o, &err);
    if (!t) { fprintf(stderr, "bench_hifi: %s\n", err.msg); return NULL; }
    dp_graph_builder *b = dp_graph_builder_alloc("daggen-physical", "bench_hifi (dp_gen_random)", DP_GRAPH_COST_PHYSICAL);
    for (int v = 0; v < t->n_ops; v++) dp_graph_builder_add_op(b, NULL, "op", t->work[v] * 1e9, t->out_size[v] * 1e6);
    for (int e = 0; e < t->n_edges; e++) dp_graph_builder_add_edge(b, t->edge_src[e], t->edge_dst[e], t->edge_size[e] * 1e6);
    dp_graph *g = dp_graph_builder_finish(b, &err);
    if (!g) fprintf(stderr, "bench_hifi: %s\n", err.msg);
    dp_graph_builder_free(b);
    dp_graph_free(t);
    return g;
}

int main(int argc, char **argv)
{
    int V = 100000;
    unsigned long seed = 1;
    double min_s = 1.0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc) V = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc) min_s = atof(argv[++i]);
        else break;
    }
    if (i != argc - 1 || V < 8) {
        fprintf(stderr, "usage: bench_hifi [--ops V] [--seed S] [--min-seconds T] TOPOLOGY.json\n");
        return 2;
    }
    dp_error err;
    dp_topology *t = dp_topology_load(argv[i], &err);
    if (!t) { fprintf(stderr, "bench_hifi: %s\n", err.msg); return 1; }
    dp_graph *g = layered_dag(V, seed);
    if (!g) return 1;
    dp_cost *c = dp_costmodel_costs(g, t, NULL, &err);
    if (!c) { fprintf(stderr, "bench_hifi: %s\n", err.msg); return 1; }
    const int D = t->n_devices;
    int *a = malloc(sizeof(int) * (size_t)g->n_ops);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed + 1);
    for (int v = 0; v < g->n_ops; v++) a[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
    gsl_rng_free(r);
    printf("graph: layered random DAG (DAGGEN, fat 0.5, density 0.01), %d ops, %d edges (seed %lu); topology %s, "
           "%d devices; random assignment\n", g->n_ops, g->n_edges, seed, t->name, D);
    printf("%-8s %12s %12s %12s %14s %14s\n", "model", "seconds/sim", "runs", "events", "events/s", "makespan_s");
    double maxmin_s = 0;
    for (int m = 0; m < 3; m++) {
        dp_hisim_options o;
        dp_hisim_options_init(&o);
        o.transfer_model = (dp_transfer_kind)m;
        dp_hisim *s = dp_hisim_alloc(g, c, t, &o, &err);
        if (!s) { fprintf(stderr, "bench_hifi: %s\n", err.msg); return 1; }
        dp_hisim_result res;
        if (dp_hisim_run(s, a, NULL, &res, &err) != DP_OK) { fprintf(stderr, "bench_hifi: %s\n", err.msg); return 1; }
        int runs = 0;
        double best = 1e300, t0 = now_s();
        while (runs < 3 || now_s() - t0 < min_s) {
            double b0 = now_s();
            dp_hisim_run(s, a, NULL, &res, &err);
            double dt = now_s() - b0;
            if (dt < best) best = dt;
            runs++;
        }
        printf("%-8s %12.4f %12d %12ld %14.4g %14.6g\n", dp_transfer_kind_name((dp_transfer_kind)m), best, runs, res.n_events,
               res.n_events / best, res.makespan);
        if (m == DP_TRANSFER_MAXMIN) maxmin_s = best;
        dp_hisim_free(s);
    }
    printf("max-min on %d ops: %.3f s per simulation (target < 1 s): %s\n", g->n_ops, maxmin_s, maxmin_s < 1 ? "met" : "MISSED");
    free(a);
    dp_cost_free(c);
    dp_graph_free(g);

    printf("\nworkspace memory (engine + transfer model, after one run), max-min:\n");
    printf("%10s %10s %14s %16s\n", "ops", "edges", "bytes", "bytes/(V+E)");
    for (int k = 3; k >= 0; k--) {
        int v = V >> k;
        dp_graph *h = layered_dag(v, seed);
        dp_cost *hc = dp_costmodel_costs(h, t, NULL, &err);
        int *ha = malloc(sizeof(int) * (size_t)h->n_ops);
        gsl_rng *rr = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(rr, seed + 1);
        for (int q = 0; q < h->n_ops; q++) ha[q] = (int)gsl_rng_uniform_int(rr, (unsigned long)D);
        gsl_rng_free(rr);
        dp_hisim_options o;
        dp_hisim_options_init(&o);
        o.transfer_model = DP_TRANSFER_MAXMIN;
        dp_hisim *s = dp_hisim_alloc(h, hc, t, &o, &err);
        dp_hisim_result res;
        dp_hisim_run(s, ha, NULL, &res, &err);
        size_t bytes = dp_hisim_workspace_bytes(s);
        printf("%10d %10d %14zu %16.2f\n", h->n_ops, h->n_edges, bytes, (double)bytes / (h->n_ops + h->n_edges));
        dp_hisim_free(s);
        free(ha);
        dp_cost_free(hc);
        dp_graph_free(h);
    }
    dp_topology_free(t);
    return 0;
}
