/* test_coarse.c: the coarsened placement (policy/dp_coarse.h): groups by hand on small graphs,
 * the group graph acyclic and convex groups on random DAGs, expansion, the pipeline with a
 * refinement that is never worse than its start. */
#include "dp_coarse.h"
#include "dp_problem.h"
#include "dp_test.h"
#include "dp_test_graphs.h"

#include <gsl/gsl_randist.h>

/* a -> b -> c -> e, a -> d -> e (ids 0..4), unit times, no transfer cost */
static dp_graph *diamond_chain(void)
{
    dp_graph_builder *b = dp_graph_builder_alloc("dc", "dc", DP_GRAPH_COST_TIME);
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) dp_graph_builder_add_op(b, names[i], NULL, 1, 0);
    const int es[][2] = {{0, 1}, {1, 2}, {0, 3}, {2, 4}, {3, 4}};
    for (int e = 0; e < 5; e++) dp_graph_builder_add_edge(b, es[e][0], es[e][1], 2);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_ptr_nonnull(g);
    return g;
}

/* The chains rule, worked by hand (dp_coarse.h). b-levels a 4, b 3, c 2, d 2, e 1 (unit times; transfer
 * cost 2 on 2 devices: mean comm 2, so a 10, b 7, c 4, d 4, e 1). Largest group 2: forward pass:
 * a starts G0; b (its only input in G0) joins: G0 = {a, b} full; c then d (equal b-levels, lower
 * id first) start G1 = {c}, G2 = {d}; e has inputs in G1 and G2: G3 = {e}. Backward pass on
 * the groups (sizes 2, 1, 1, 1): {e} starts; {c} (t-level 4, as {d}'s: the lower id first) has its only successor in {e}'s group: joins, which is then full; {d} starts one;
 * {a, b} feeds two groups: starts one. Reversed numbering: {a, b} 0, {d} 1, {c, e} 2. Later
 * passes merge nothing (every remaining merge would exceed 2 ops). Largest group 5: everything
 * in one group (each op's inputs all in the group of a). */
START_TEST(groups_by_hand)
{
    dp_graph *g = diamond_chain();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    ck_assert_ptr_nonnull(c);
    int group_of[5], ng = 0;
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_CHAINS, 2, group_of, &ng, &err), DP_OK);
    ck_assert_int_eq(ng, 3);
    const int want2[] = {0, 0, 2, 1, 2};
    for (int v = 0; v < 5; v++) ck_assert_int_eq(group_of[v], want2[v]);
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_CHAINS, 5, group_of, &ng, &err), DP_OK);
    ck_assert_int_eq(ng, 1);
    for (int v = 0; v < 5; v++) ck_assert_int_eq(group_of[v], 0);
    /* largest group 1: every op its own group, numbered in a topological order */
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_CHAINS, 1, group_of, &ng, &err), DP_OK);
    ck_assert_int_eq(ng, 5);
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_CHAINS, 0, group_of, &ng, &err), DP_EINVAL);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* The packed rule, worked by hand (dp_coarse.h). Sources p, q, r (ids 0-2); sinks s2, s3, s4
 * (ids 3-5) each read p and q, s5 (id 6) reads r; times 1, except s2..s4 0.25 each; no transfer
 * cost. The chains rule gives {p}, {q}, {r, s5} (s5's only input is r) and one group per s2..s4
 * (inputs in two groups, and p and q each feed three groups): 6 groups. No merge keeps the
 * critical path (2: r then s5): s2 into the later of p's and q's groups would start after the
 * other source (1), end at 2.25 and hold back s3 and s4, p or q into a sink's group likewise.
 * Sink packing: s2..s4 share their latest input group, fit in one group of 5, and end together
 * at 1 + 0.75 <= 2; {r, s5} is a sink too, with no input: a pack of its own (next fit alone
 * would have put its 2 ops with the 3 others). So 4 groups: p's and q's numbered 0 and 1, then
 * the packs. Largest group 2: s2..s4 go 2 + 1. With unit times for s2..s4 a pack of two would
 * end at 3, past the critical path: no packing, 6 groups. An unknown rule is refused. */
START_TEST(packed_by_hand)
{
    for (int unit = 0; unit < 2; unit++) {
    dp_graph_builder *b = dp_graph_builder_alloc("sinks", "sinks", DP_GRAPH_COST_TIME);
    const char *names[] = {"p", "q", "r", "s2", "s3", "s4", "s5"};
    for (int i = 0; i < 7; i++) dp_graph_builder_add_op(b, names[i], NULL, i >= 3 && i <= 5 && !unit ? 0.25 : 1, 0);
    for (int k = 3; k <= 5; k++) {
        dp_graph_builder_add_edge(b, 0, k, 0);
        dp_graph_builder_add_edge(b, 1, k, 0);
    }
    dp_graph_builder_add_edge(b, 2, 6, 0);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_ptr_nonnull(g);
    dp_cost *c = dp_cost_graph(g, 2, &err);
    ck_assert_ptr_nonnull(c);
    int group_of[7], ng = 0;
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_CHAINS, 5, group_of, &ng, &err), DP_OK);
    ck_assert_int_eq(ng, 6);
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_PACKED, 5, group_of, &ng, &err), DP_OK);
    if (unit) {
        ck_assert_int_eq(ng, 6);
        ck_assert(group_of[3] != group_of[4] && group_of[4] != group_of[5] && group_of[3] != group_of[5]);
        dp_cost_free(c);
        dp_graph_free(g);
        continue;
    }
    ck_assert_int_eq(ng, 4);
    ck_assert(group_of[0] <= 1 && group_of[1] <= 1 && group_of[0] != group_of[1]);
    ck_assert_int_ge(group_of[3], 2);
    ck_assert_int_eq(group_of[4], group_of[3]);
    ck_assert_int_eq(group_of[5], group_of[3]);
    ck_assert_int_ge(group_of[2], 2);
    ck_assert_int_eq(group_of[6], group_of[2]);
    ck_assert_int_ne(group_of[2], group_of[3]);
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_PACKED, 2, group_of, &ng, &err), DP_OK);
    ck_assert_int_eq(ng, 5);
    ck_assert_int_eq((group_of[3] == group_of[4]) + (group_of[4] == group_of[5]) + (group_of[3] == group_of[5]), 1);
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_PACKED, 0, group_of, &ng, &err), DP_EINVAL);
    ck_assert_int_eq(dp_coarse_groups(g, c, (dp_coarse_rule)7, 2, group_of, &ng, &err), DP_EINVAL);
    dp_coarse_rule rule = DP_COARSE_PACKED;
    ck_assert_int_eq(dp_coarse_rule_parse("chains", &rule), DP_OK);
    ck_assert_int_eq(rule, DP_COARSE_CHAINS);
    ck_assert_int_eq(dp_coarse_rule_parse("packed", &rule), DP_OK);
    ck_assert_int_eq(rule, DP_COARSE_PACKED);
    ck_assert_int_eq(dp_coarse_rule_parse("intervals", &rule), DP_EINVAL);
    ck_assert_int_eq(rule, DP_COARSE_PACKED);
    dp_cost_free(c);
    dp_graph_free(g);
    }
}
END_TEST

/* the critical path by work of a grouping's group graph: mean op times, no transfers */
static double work_cp(const dp_graph *g, const dp_cost *c, const int *group_of, int ng)
{
    dp_graph *gg;
    dp_cost *gc;
    dp_error err;
    ck_assert_int_eq(dp_coarse_graph(g, c, group_of, ng, &gg, &gc, &err), DP_OK);
    double *fin = calloc((size_t)ng, sizeof(double)), cp = 0;
    for (int k = 0; k < ng; k++) { /* numbered topologically */
        double start = 0;
        for (int q = gg->pred_ptr[k]; q < gg->pred_ptr[k + 1]; q++) {
            const int u = gg->edge_src[gg->pred_edge[q]];
            if (fin[u] > start) start = fin[u];
        }
        fin[k] = start + dp_cost_mean_op(gc, k);
        if (fin[k] > cp) cp = fin[k];
    }
    free(fin);
    dp_graph_free(gg);
    dp_cost_free(gc);
    return cp;
}

/* Independent components are never packed together (issue 30, a bug found by trying): four
 * chains of 8 unit ops with no edge between them (data-parallel replicas). The chains rule gives
 * one group per chain at largest group 32; no merge keeps the critical path (8). Each chain is a
 * group that feeds nothing and has no input group: sink packing used to pack all four into one
 * group of 32 (critical path 32, every op on one device: `doppler place --coarsen 32` 4 times
 * the plain makespan, and ffnn_192nodes.txt's 4 components one group at --coarsen 1000). A
 * group with no input group shares no input with another, so it keeps a group of its own. */
START_TEST(packed_keeps_components_apart)
{
    dp_graph_builder *b = dp_graph_builder_alloc("replicas", "replicas", DP_GRAPH_COST_TIME);
    for (int v = 0; v < 32; v++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 7; i++) dp_graph_builder_add_edge(b, 8 * r + i, 8 * r + i + 1, 1);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_ptr_nonnull(g);
    dp_cost *c = dp_cost_graph(g, 4, &err);
    ck_assert_ptr_nonnull(c);
    int group_of[32], ng = 0;
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_PACKED, 32, group_of, &ng, &err), DP_OK);
    ck_assert_int_eq(ng, 4);
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 8; i++) {
            ck_assert_int_eq(group_of[8 * r + i], group_of[8 * r]);
            if (r > 0) ck_assert_int_ne(group_of[8 * r], group_of[0]);
        }
    ck_assert_double_eq_tol(work_cp(g, c, group_of, ng), 8.0, 1e-12);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* Sink packing keeps the critical path by work (issue 30, found by trying the packed rule): one
 * source feeding 4 chains of 7 unit ops, largest group 16. The chains rule's groups end on the
 * chains' tails, which feed nothing and share their latest input group; packing them next fit
 * without looking at the path put two tails that each end at the critical path into one group,
 * which then ends past it: `doppler place --devices 4 --method cp --coarsen 16` gave 29 against
 * 20 with the chains rule. A sink now joins a pack only when the pack still ends within it. */
START_TEST(packed_sinks_keep_critical_path)
{
    dp_graph_builder *b = dp_graph_builder_alloc("fan", "fan", DP_GRAPH_COST_TIME);
    for (int v = 0; v < 29; v++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
    for (int r = 0; r < 4; r++) {
        dp_graph_builder_add_edge(b, 0, 1 + 7 * r, 1);
        for (int i = 0; i < 6; i++) dp_graph_builder_add_edge(b, 1 + 7 * r + i, 2 + 7 * r + i, 1);
    }
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_ptr_nonnull(g);
    dp_cost *c = dp_cost_graph(g, 4, &err);
    ck_assert_ptr_nonnull(c);
    int ch[29], pk[29], nch = 0, npk = 0;
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_CHAINS, 16, ch, &nch, &err), DP_OK);
    ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_PACKED, 16, pk, &npk, &err), DP_OK);
    const double a = work_cp(g, c, ch, nch), p = work_cp(g, c, pk, npk);
    ck_assert_msg(p <= a * (1 + 1e-12), "packed critical path %g, chains %g", p, a);
    ck_assert_int_le(npk, nch);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* The packed rule keeps the critical path by work: on random DAGs the packed grouping's group
 * graph has at most the chains grouping's critical path by work (to rounding) and at most its
 * groups. With one sink (an op that reads every other sink, so sink packing has one group to
 * pack and changes nothing) this checks the merges alone; with several, sink packing too. */
START_TEST(packed_keeps_critical_path)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    int fewer = 0;
    for (int trial = 0; trial < 60; trial++) {
        const int n = 6 + (int)gsl_rng_uniform_int(r, 80), max_group = 2 + (int)gsl_rng_uniform_int(r, 10);
        const int one_sink = trial % 2;
        dp_graph_builder *b = dp_graph_builder_alloc("cp", "cp", DP_GRAPH_COST_TIME);
        for (int i = 0; i < n; i++) dp_graph_builder_add_op(b, NULL, NULL, 1 + (double)gsl_rng_uniform_int(r, 9), 0);
        int *out = calloc((size_t)n, sizeof(int));
        const double p = (1 + 2 * gsl_rng_uniform(r)) / n;
        for (int i = 0; i < n - 1; i++)
            for (int j = i + 1; j < n - 1; j++)
                if (gsl_rng_uniform(r) < p) {
                    dp_graph_builder_add_edge(b, i, j, (double)gsl_rng_uniform_int(r, 4));
                    out[i] = 1;
                }
        for (int i = 0; i < n - 1; i++)
            if (one_sink && !out[i]) dp_graph_builder_add_edge(b, i, n - 1, 1);
        free(out);
        dp_error err;
        dp_graph *g = dp_graph_builder_finish(b, &err);
        dp_graph_builder_free(b);
        ck_assert_ptr_nonnull(g);
        dp_cost *c = random_hetero(r, g, 1 + (int)gsl_rng_uniform_int(r, 4));
        int *ch = malloc((size_t)n * sizeof(int)), *pk = malloc((size_t)n * sizeof(int)), nch = 0, npk = 0;
        ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_CHAINS, max_group, ch, &nch, &err), DP_OK);
        ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_PACKED, max_group, pk, &npk, &err), DP_OK);
        ck_assert_int_le(npk, nch);
        const double a = work_cp(g, c, ch, nch), bcp = work_cp(g, c, pk, npk);
        ck_assert_msg(bcp <= a * (1 + 1e-9), "trial %d (%s): packed critical path %g, chains %g", trial,
                      one_sink ? "one sink" : "several sinks", bcp, a);
        fewer += one_sink && npk < nch;
        free(ch); free(pk);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    ck_assert_int_gt(fewer, 0); /* the merges happen: the test is not vacuous */
    gsl_rng_free(r);
}
END_TEST

/* The group graph of the hand grouping: ops {a, b}, {d}, {c, e}; times summed per device; edges
 * a -> d (2), b -> c (2), d -> e (2): three group edges of data 2 each, group 0's in the order
 * its ops (a, then b) reach them; the names. */
START_TEST(group_graph_by_hand)
{
    dp_graph *g = diamond_chain();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
    const int group_of[] = {0, 0, 2, 1, 2};
    dp_graph *gg;
    dp_cost *gc;
    ck_assert_int_eq(dp_coarse_graph(g, c, group_of, 3, &gg, &gc, &err), DP_OK);
    ck_assert_int_eq(gg->n_ops, 3);
    ck_assert_int_eq(gg->n_edges, 3);
    ck_assert_str_eq(gg->op_name[0], "a+1");
    ck_assert_str_eq(gg->op_name[1], "d");
    ck_assert_str_eq(gg->op_name[2], "c+1");
    for (int d = 0; d < 2; d++) {
        ck_assert_double_eq(dp_cost_op(gc, 0, d), 2);
        ck_assert_double_eq(dp_cost_op(gc, 1, d), 1);
        ck_assert_double_eq(dp_cost_op(gc, 2, d), 2);
    }
    for (int e = 0; e < 3; e++) ck_assert_double_eq(dp_cost_comm(gc, e, 0, 1), dp_cost_comm(c, 0, 0, 1));
    ck_assert_int_eq(gg->edge_src[0], 0);
    ck_assert_int_eq(gg->edge_dst[0], 1);   /* a -> d */
    ck_assert_int_eq(gg->edge_src[1], 0);
    ck_assert_int_eq(gg->edge_dst[1], 2);   /* b -> c */
    ck_assert_int_eq(gg->edge_src[2], 1);
    ck_assert_int_eq(gg->edge_dst[2], 2);
    dp_graph_free(gg);
    dp_cost_free(gc);
    /* a grouping against the edges (e before c's group) is refused, naming the edge */
    const int bad[] = {0, 0, 2, 1, 0};
    ck_assert_int_eq(dp_coarse_graph(g, c, bad, 3, &gg, &gc, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "\"c\" -> \"e\""));
    ck_assert_ptr_null(gg);
    const int out_of_range[] = {0, 0, 3, 1, 2};
    ck_assert_int_eq(dp_coarse_graph(g, c, out_of_range, 3, &gg, &gc, &err), DP_EINVAL);
    const int empty_group[] = {0, 0, 2, 2, 2};
    ck_assert_int_eq(dp_coarse_graph(g, c, empty_group, 3, &gg, &gc, &err), DP_EINVAL);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* Random DAGs, both rules: every op in a group of at most max_group ops; every edge goes from a group to
 * itself or to a later one (a topological numbering: the group graph is acyclic, and
 * dp_coarse_graph's builder finds no cycle); every group convex (no path leaves it and comes
 * back: a group's ops reachable from it through other groups are none); the group graph's op
 * times sum to the graph's; expanding a group assignment gives each op its group's device. */
START_TEST(random_groups)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    for (int trial = 0; trial < 80; trial++) {
        const dp_coarse_rule rule = trial % 2 ? DP_COARSE_CHAINS : DP_COARSE_PACKED;
        const int n = 5 + (int)gsl_rng_uniform_int(r, 60), D = 1 + (int)gsl_rng_uniform_int(r, 4);
        const int max_group = 1 + (int)gsl_rng_uniform_int(r, 12);
        dp_graph *g = random_dag(r, n, 0.02 + 0.2 * gsl_rng_uniform(r), 5);
        dp_cost *c = random_hetero(r, g, D);
        dp_error err;
        int *group_of = malloc((size_t)n * sizeof(int)), ng = 0;
        ck_assert_int_eq(dp_coarse_groups(g, c, rule, max_group, group_of, &ng, &err), DP_OK);
        int *size = calloc((size_t)ng, sizeof(int));
        for (int v = 0; v < n; v++) {
            ck_assert_int_ge(group_of[v], 0);
            ck_assert_int_lt(group_of[v], ng);
            size[group_of[v]]++;
        }
        for (int k = 0; k < ng; k++) {
            ck_assert_int_ge(size[k], 1);
            ck_assert_int_le(size[k], max_group);
        }
        for (int e = 0; e < g->n_edges; e++) ck_assert_int_le(group_of[g->edge_src[e]], group_of[g->edge_dst[e]]);
        /* convexity: from each group, the ops reachable by paths that leave it are outside it */
        unsigned char *seen = malloc((size_t)n);
        for (int k = 0; k < ng; k++) {
            memset(seen, 0, (size_t)n);
            for (int v = 0; v < n; v++) /* ids are a topological order (random_dag: i -> j, i < j) */
                for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
                    int w = g->edge_dst[e];
                    if ((group_of[v] == k && group_of[w] != k) || (seen[v] && group_of[v] != k)) seen[w] = 1;
                }
            for (int v = 0; v < n; v++) ck_assert(!(seen[v] && group_of[v] == k));
        }
        free(seen);
        dp_graph *gg;
        dp_cost *gc;
        ck_assert_int_eq(dp_coarse_graph(g, c, group_of, ng, &gg, &gc, &err), DP_OK);
        ck_assert_int_eq(gg->n_ops, ng);
        for (int d = 0; d < D; d++) {
            double a = 0, b = 0;
            for (int v = 0; v < n; v++) a += dp_cost_op(c, v, d);
            for (int k = 0; k < ng; k++) b += dp_cost_op(gc, k, d);
            ck_assert_double_eq_tol(a, b, 1e-9 * a);
        }
        int *ga = malloc((size_t)ng * sizeof(int)), *asg = malloc((size_t)n * sizeof(int));
        for (int k = 0; k < ng; k++) ga[k] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        dp_coarse_expand(n, group_of, ga, asg);
        for (int v = 0; v < n; v++) ck_assert_int_eq(asg[v], ga[group_of[v]]);
        free(ga); free(asg); free(size); free(group_of);
        dp_graph_free(gg);
        dp_cost_free(gc);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

/* The packed rule on random DAGs whose ids are not a topological order and whose edges repeat
 * (a random permutation of the ops; a quarter of the edges given twice): every op in exactly one
 * group of 1 to max_group ops; every edge from a group to itself or a later one (the group graph
 * acyclic, which dp_coarse_graph's builder checks again); the same groups on a second call; and
 * on the sparse ones (at most 2 edges per op on average) at least n / max_group groups and not
 * more than the ops. */
START_TEST(random_packed_repeated_edges)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    for (int trial = 0; trial < 60; trial++) {
        const int n = 2 + (int)gsl_rng_uniform_int(r, 200), max_group = 1 + (int)gsl_rng_uniform_int(r, 20);
        const double p = (0.5 + 3 * gsl_rng_uniform(r)) / n;
        int *perm = malloc((size_t)n * sizeof(int));
        for (int i = 0; i < n; i++) perm[i] = i;
        gsl_ran_shuffle(r, perm, (size_t)n, sizeof(int));
        dp_graph_builder *b = dp_graph_builder_alloc("rep", "rep", DP_GRAPH_COST_TIME);
        for (int i = 0; i < n; i++) dp_graph_builder_add_op(b, NULL, NULL, 1, 0);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (gsl_rng_uniform(r) < p) {
                    const int reps = gsl_rng_uniform(r) < 0.25 ? 2 : 1;
                    for (int k = 0; k < reps; k++) dp_graph_builder_add_edge(b, perm[i], perm[j], 1);
                }
        dp_error err;
        dp_graph *g = dp_graph_builder_finish(b, &err);
        dp_graph_builder_free(b);
        ck_assert_ptr_nonnull(g);
        dp_cost *c = dp_cost_graph(g, 2, &err);
        ck_assert_ptr_nonnull(c);
        int *group_of = malloc((size_t)n * sizeof(int)), *again = malloc((size_t)n * sizeof(int)), ng = 0, ng2 = 0;
        ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_PACKED, max_group, group_of, &ng, &err), DP_OK);
        ck_assert_int_eq(dp_coarse_groups(g, c, DP_COARSE_PACKED, max_group, again, &ng2, &err), DP_OK);
        ck_assert_int_eq(ng, ng2);
        ck_assert_int_ge(ng, (n + max_group - 1) / max_group);
        ck_assert_int_le(ng, n);
        int *size = calloc((size_t)ng, sizeof(int));
        for (int v = 0; v < n; v++) {
            ck_assert_int_eq(group_of[v], again[v]);
            ck_assert(group_of[v] >= 0 && group_of[v] < ng);
            size[group_of[v]]++;
        }
        for (int k = 0; k < ng; k++) ck_assert(size[k] >= 1 && size[k] <= max_group);
        for (int e = 0; e < g->n_edges; e++) ck_assert_int_le(group_of[g->edge_src[e]], group_of[g->edge_dst[e]]);
        dp_graph *gg;
        dp_cost *gc;
        ck_assert_int_eq(dp_coarse_graph(g, c, group_of, ng, &gg, &gc, &err), DP_OK);
        ck_assert_int_eq(gg->n_ops, ng);
        dp_graph_free(gg);
        dp_cost_free(gc);
        free(size); free(group_of); free(again); free(perm);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

/* The pipeline: cp on the groups, then local search on the whole graph from the expansion. The
 * result is never worse than the expansion under the oracle; the report counts the groups and
 * the simulations on the group graph (cp: none); every op gets a device in range. */
START_TEST(pipeline_refines)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    dp_graph *g = random_dag(r, 120, 0.04, 6);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    ck_assert_ptr_nonnull(c);
    dp_machine m;
    const char *kv[] = {"devices", "3", NULL};
    dp_test_machine_make(&m, kv);
    dp_problem *p = dp_problem_alloc_with_costs(g, c, &m, &err);
    ck_assert_ptr_nonnull(p);
    dp_place_options o;
    dp_place_options_init(&o);
    o.oracle = &p->oracle;
    int *plain = malloc((size_t)g->n_ops * sizeof(int)), *refined = malloc((size_t)g->n_ops * sizeof(int));
    dp_coarse_report rep;
    ck_assert_int_eq(dp_coarse_place("cp", g, c, &o, DP_COARSE_PACKED, 6, plain, &rep, &err), DP_OK);
    ck_assert_int_ge(rep.n_groups, (g->n_ops + 5) / 6);
    ck_assert_int_lt(rep.n_groups, g->n_ops);
    ck_assert_int_le(rep.largest_group, 6);
    ck_assert_int_eq(rep.group_simulations, 0);
    for (int v = 0; v < g->n_ops; v++) ck_assert(plain[v] >= 0 && plain[v] < 3);
    o.refine = "local";
    o.refine_budget = 60;
    const long before = dp_engine_simulations(p->engine);
    ck_assert_int_eq(dp_coarse_place("cp", g, c, &o, DP_COARSE_PACKED, 6, refined, &rep, &err), DP_OK);
    ck_assert_int_le(dp_engine_simulations(p->engine) - before, 60);
    ck_assert_int_gt(dp_engine_simulations(p->engine) - before, 1);
    double ms_plain, ms_refined;
    ck_assert_int_eq(dp_oracle_cost(&p->oracle, plain, &ms_plain, &err), DP_OK);
    ck_assert_int_eq(dp_oracle_cost(&p->oracle, refined, &ms_refined, &err), DP_OK);
    ck_assert(ms_refined <= ms_plain);
    /* a method that simulates runs on the group graph's own engine: anneal spends its budget there */
    o.refine = NULL;
    o.budget = 40;
    ck_assert_int_eq(dp_coarse_place("anneal", g, c, &o, DP_COARSE_PACKED, 6, refined, &rep, &err), DP_OK);
    ck_assert_int_eq(rep.group_simulations, 40);
    ck_assert_int_eq(dp_coarse_place("no-such-method", g, c, &o, DP_COARSE_PACKED, 6, refined, &rep, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "no-such-method"));
    free(plain); free(refined);
    dp_problem_free(p);
    dp_machine_free(&m);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

/* The expanded oracle (dp_coarse_problem_expand_oracle): a group assignment costs what its
 * expansion costs on the graph's oracle, bounded or not, and its engine is the group graph's; the
 * coarsened problem is the one dp_coarse_place places (same groups). */
START_TEST(expanded_oracle)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    dp_graph *g = random_dag(r, 90, 0.05, 5);
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 3, &err);
    ck_assert_ptr_nonnull(c);
    dp_machine m;
    const char *kv[] = {"devices", "3", NULL};
    dp_test_machine_make(&m, kv);
    dp_problem *p = dp_problem_alloc_with_costs(g, c, &m, &err);
    ck_assert_ptr_nonnull(p);
    dp_coarse_problem cp;
    ck_assert_int_eq(dp_coarse_problem_init(&cp, g, c, DP_COARSE_PACKED, 5, &err), DP_OK);
    ck_assert_int_eq(dp_coarse_problem_expand_oracle(&cp, NULL, &err), DP_EINVAL);
    ck_assert_int_eq(dp_coarse_problem_expand_oracle(&cp, &p->oracle, &err), DP_OK);
    ck_assert_ptr_null(cp.expanded.engine); /* no engine's own costs: searches go through cost */
    ck_assert_ptr_eq(cp.expanded.state_engine, cp.problem->engine);
    ck_assert_int_eq(cp.graph->n_ops, cp.n_groups);
    int *ga = malloc((size_t)cp.n_groups * sizeof(int)), *a = malloc((size_t)g->n_ops * sizeof(int));
    for (int trial = 0; trial < 50; trial++) {
        for (int k = 0; k < cp.n_groups; k++) ga[k] = (int)gsl_rng_uniform_int(r, 3);
        dp_coarse_expand(g->n_ops, cp.group_of, ga, a);
        double want, got, want_b, got_b, group;
        ck_assert_int_eq(dp_oracle_cost(&p->oracle, a, &want, &err), DP_OK);
        ck_assert_int_eq(dp_oracle_cost(&cp.expanded, ga, &got, &err), DP_OK);
        ck_assert(got == want);
        const double bound = want * (trial % 2 ? 0.7 : 1.3);
        ck_assert_int_eq(dp_oracle_cost_bounded(&p->oracle, a, bound, &want_b, &err), DP_OK);
        ck_assert_int_eq(dp_oracle_cost_bounded(&cp.expanded, ga, bound, &got_b, &err), DP_OK);
        ck_assert(got_b == want_b);
        /* the group graph's own makespan is another number in general: the oracle is not it */
        ck_assert_int_eq(dp_oracle_cost(&cp.problem->oracle, ga, &group, &err), DP_OK);
        ck_assert(group > 0);
    }
    ck_assert_int_eq(cp.expanded_calls, 100);
    /* the same groups as dp_coarse_place's */
    dp_place_options o;
    dp_place_options_init(&o);
    o.oracle = &p->oracle;
    dp_coarse_report rep;
    ck_assert_int_eq(dp_coarse_place("cp", g, c, &o, DP_COARSE_PACKED, 5, a, &rep, &err), DP_OK);
    ck_assert_int_eq(rep.n_groups, cp.n_groups);
    for (int v = 0; v < g->n_ops; v++)
        for (int u = 0; u < v; u++)
            if (cp.group_of[u] == cp.group_of[v]) ck_assert_int_eq(a[u], a[v]);
    free(ga); free(a);
    dp_coarse_problem_free(&cp);
    dp_coarse_problem_free(&cp); /* freed twice: a no-op */
    dp_problem_free(p);
    dp_machine_free(&m);
    dp_cost_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("coarse");
    TCase *t = tcase_create("core");
    tcase_add_test(t, groups_by_hand);
    tcase_add_test(t, packed_by_hand);
    tcase_add_test(t, packed_sinks_keep_critical_path);
    tcase_add_test(t, packed_keeps_critical_path);
    tcase_add_test(t, packed_keeps_components_apart);
    tcase_add_test(t, group_graph_by_hand);
    tcase_add_test(t, random_groups);
    tcase_add_test(t, random_packed_repeated_edges);
    tcase_add_test(t, pipeline_refines);
    tcase_add_test(t, expanded_oracle);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return dp_test_run(suite());
}
