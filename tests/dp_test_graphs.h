/* dp_test_graphs.h: small graphs, cost tables and reference computations shared by the list
 * scheduler and search suites (test_list.c, test_search.c). */
#ifndef DP_TEST_GRAPHS_H
#define DP_TEST_GRAPHS_H

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_sim.h"

/* ETF by hand on the fork-join s(1) -> x, y, z (4) -> t(1), comm 2 out of s and 3 into t, on two
 * identical devices: s d0 [0,1]. Ready x, y, z: EST 1 on d0, 3 on d1: all tie at 1 on d0 with the
 * same static level -> x (lowest id) d0 [1,5]. Then y: d0 5, d1 3 -> y d1 [3,7]. z: d0 5, d1 7 ->
 * d0 [5,9]. t: d0 max(9, 7+3) = 10, d1 max(7, 9+3) = 12 -> d0 [10,11]. */
static inline dp_graph *fork_join(void)
{
    dp_graph_builder *b = dp_graph_builder_alloc("fj", "fj", DP_GRAPH_COST_TIME);
    const double comp[] = {1, 4, 4, 4, 1}, comm[] = {2, 3, 3, 3, 0};
    for (int i = 0; i < 5; i++) dp_graph_builder_add_op(b, NULL, NULL, comp[i], comm[i]);
    int es[][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}};
    for (int e = 0; e < 6; e++) dp_graph_builder_add_edge(b, es[e][0], es[e][1], comm[es[e][0]]);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    return g;
}

/* a random DAG: n ops, edge i -> j (i < j) with probability p, integer costs */
static inline dp_graph *random_dag(gsl_rng *r, int n, double p, int comm_max)
{
    dp_graph_builder *b = dp_graph_builder_alloc("rand", "rand", DP_GRAPH_COST_TIME);
    for (int i = 0; i < n; i++) dp_graph_builder_add_op(b, NULL, NULL, 1 + (double)gsl_rng_uniform_int(r, 9), 0);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (gsl_rng_uniform(r) < p)
                dp_graph_builder_add_edge(b, i, j, comm_max ? (double)gsl_rng_uniform_int(r, (unsigned long)comm_max + 1) : 0);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    return g;
}

/* random heterogeneous costs on top of g */
static inline dp_cost *random_hetero(gsl_rng *r, const dp_graph *g, int D)
{
    dp_cost *c = dp_cost_alloc(g, D);
    for (int v = 0; v < g->n_ops; v++)
        for (int d = 0; d < D; d++) c->op_time[v * D + d] = 1 + (double)gsl_rng_uniform_int(r, 12);
    memcpy(c->edge_data, g->edge_size, (size_t)g->n_edges * sizeof(double));
    for (int a = 0; a < D; a++)
        for (int b2 = 0; b2 < D; b2++)
            if (a != b2) {
                c->inv_bw[a * D + b2] = 0.5 + gsl_rng_uniform(r);
                c->latency[a * D + b2] = (double)gsl_rng_uniform_int(r, 3);
            }
    dp_cost_update_homogeneous(c);
    return c;
}

static inline char *write_tmp(const char *suffix, const char *text, char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/dp_test_list_XXXXXX%s", suffix);
    int fd = mkstemps(buf, (int)strlen(suffix));
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return buf;
}

/* the best simulated makespan over all D^n assignments */
static inline double brute_force(const dp_graph *g, const dp_cost *c)
{
    const int n = g->n_ops, D = c->n_devices;
    int a[16] = {0};
    dp_error err;
    dp_sim *sim = dp_sim_alloc(g, c, &err);
    double best = INFINITY;
    for (;;) {
        dp_sim_result r;
        dp_sim_run(sim, a, &r, &err);
        if (r.makespan < best) best = r.makespan;
        int k = 0;
        while (k < n && ++a[k] == D) a[k++] = 0;
        if (k == n) break;
    }
    dp_sim_free(sim);
    return best;
}

static inline double simulate(const dp_graph *g, const dp_cost *c, const int *a)
{
    dp_error err;
    dp_sim *sim = dp_sim_alloc(g, c, &err);
    dp_sim_result r;
    dp_sim_run(sim, a, &r, &err);
    double m = r.makespan;
    dp_sim_free(sim);
    return m;
}

#endif
