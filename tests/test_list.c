/* test_list: list schedulers (HEFT, CPOP, PEFT, ETF), the heterogeneous example reader, and the
 * searches over assignments (annealing, local search, exact branch and bound). Needs no shared
 * data: the Topcuoglu example is built from the values printed in the paper. */
#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_hetero.h"
#include "dp_hisim.h"
#include "dp_list.h"
#include "dp_place.h"
#include "dp_search.h"
#include "dp_sim.h"
#include "dp_test.h"

#include <gsl/gsl_rng.h>
#include <math.h>

/* Topcuoglu, Hariri and Wu 2002, Fig. 2: 10 tasks on 3 processors, all link rates 1. Op ids are
 * the paper's task numbers minus one. */
static void topcuoglu(dp_graph **gout, dp_costs **cout)
{
    static const double W[10][3] = {{14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17}, {12, 13, 10},
                                     {13, 16, 9}, {7, 15, 11},  {5, 11, 14},  {18, 12, 20}, {21, 7, 16}};
    static const int E[15][3] = {{1, 2, 18}, {1, 3, 12}, {1, 4, 9},  {1, 5, 11}, {1, 6, 14},
                                 {2, 8, 19}, {2, 9, 16}, {3, 7, 23}, {4, 8, 27}, {4, 9, 23},
                                 {5, 9, 13}, {6, 8, 15}, {7, 10, 17}, {8, 10, 11}, {9, 10, 13}};
    dp_graph_builder *b = dp_graph_builder_alloc("topcuoglu", "test", DP_COST_TIME);
    for (int v = 0; v < 10; v++) {
        char nm[8];
        snprintf(nm, sizeof nm, "%d", v + 1);
        dp_graph_builder_add_op(b, nm, NULL, (W[v][0] + W[v][1] + W[v][2]) / 3, 0);
    }
    for (int e = 0; e < 15; e++) dp_graph_builder_add_edge(b, E[e][0] - 1, E[e][1] - 1, E[e][2]);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_ptr_nonnull(g);
    dp_costs *c = dp_costs_alloc(g, 3);
    for (int v = 0; v < 10; v++)
        for (int p = 0; p < 3; p++) c->op_time[v * 3 + p] = W[v][p];
    memcpy(c->edge_data, g->edge_size, (size_t)g->n_edges * sizeof(double));
    dp_costs_update_homogeneous(c);
    *gout = g;
    *cout = c;
}

/* published schedule: task, processor (1-based), start, finish */
static void assert_schedule(const dp_list_schedule *s, const int expect[10][4])
{
    for (int i = 0; i < 10; i++) {
        int v = expect[i][0] - 1;
        ck_assert_msg(s->device[v] == expect[i][1] - 1, "task %d on P%d, expected P%d", v + 1, s->device[v] + 1,
                      expect[i][1]);
        ck_assert_double_eq(s->start[v], expect[i][2]);
        ck_assert_double_eq(s->finish[v], expect[i][3]);
    }
}

START_TEST(topcuoglu_ranks)
{
    dp_graph *g;
    dp_costs *c;
    topcuoglu(&g, &c);
    double ru[10], rd[10];
    dp_list_rank_upward(g, c, ru);
    dp_list_rank_downward(g, c, rd);
    /* published upward ranks (Topcuoglu et al. 2002, Table 1; mackncheesiest/heft test_mean_ranku) */
    const double up[10] = {108, 77, 80, 80, 69, 63.333333333333333, 42.666666666666667, 35.666666666666667,
                           44.333333333333333, 14.666666666666667};
    const double down[10] = {0, 31, 25, 22, 24, 27, 62.333333333333333, 66.666666666666667, 63.666666666666667,
                             93.333333333333333};
    for (int v = 0; v < 10; v++) {
        ck_assert_double_eq_tol(ru[v], up[v], 1e-9);
        ck_assert_double_eq_tol(rd[v], down[v], 1e-9);
    }
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(topcuoglu_heft_80)
{
    dp_graph *g;
    dp_costs *c;
    topcuoglu(&g, &c);
    dp_list_schedule *s = dp_list_schedule_alloc(10, 3);
    dp_error err;
    ck_assert_int_eq(dp_list_heft(g, c, s, &err), DP_OK);
    ck_assert_double_eq(s->makespan, 80);
    const int heft[10][4] = {{1, 3, 0, 9},   {2, 1, 27, 40}, {3, 3, 9, 28},  {4, 2, 18, 26}, {5, 3, 28, 38},
                             {6, 2, 26, 42}, {7, 3, 38, 49}, {8, 1, 57, 62}, {9, 2, 56, 68}, {10, 2, 73, 80}};
    assert_schedule(s, heft);
    ck_assert_int_eq(dp_list_check(g, c, s, &err), DP_OK);
    /* the FIFO simulation of this assignment: reported beside the schedule length (same here) */
    dp_sim *sim = dp_sim_alloc(g, c, &err);
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(sim, s->device, &r, &err), DP_OK);
    ck_assert_double_eq(r.makespan, 80);
    dp_sim_free(sim);
    dp_list_schedule_free(s);
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(topcuoglu_cpop_86)
{
    dp_graph *g;
    dp_costs *c;
    topcuoglu(&g, &c);
    dp_list_schedule *s = dp_list_schedule_alloc(10, 3);
    dp_error err;
    ck_assert_int_eq(dp_list_cpop(g, c, s, &err), DP_OK);
    ck_assert_double_eq(s->makespan, 86);
    const int cpop[10][4] = {{1, 2, 0, 16},  {2, 2, 16, 35}, {3, 1, 28, 39}, {4, 3, 25, 42}, {5, 2, 35, 48},
                             {6, 3, 42, 51}, {7, 1, 39, 46}, {8, 3, 54, 68}, {9, 2, 65, 77}, {10, 2, 79, 86}};
    assert_schedule(s, cpop);
    /* priority = rank_u + rank_d; the critical path 1, 2, 9, 10 has priority 108 */
    ck_assert_double_eq_tol(s->priority[0], 108, 1e-9);
    ck_assert_double_eq_tol(s->priority[8], 108, 1e-9);
    ck_assert_int_eq(dp_list_check(g, c, s, &err), DP_OK);
    /* the append-only variant gives the same schedule here (no gap is used) */
    s->append_only = 1;
    ck_assert_int_eq(dp_list_cpop(g, c, s, &err), DP_OK);
    ck_assert_double_eq(s->makespan, 86);
    dp_list_schedule_free(s);
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

/* Simulating a list schedule's assignment with its priorities as the queue discipline (work
 * conserving, ties first come first served) realises the schedule itself when the schedule never
 * keeps a device idle while a lower-priority op is ready for it: each op starts when the schedule
 * says. Returns 1 when every start matches; *ms is the simulated makespan. */
static int realised(const dp_graph *g, const dp_costs *c, const dp_list_schedule *s, dp_queue_kind q, double *ms)
{
    dp_error err;
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    o.queue = q;
    dp_hisim *h = dp_hisim_alloc(g, c, NULL, &o, &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    dp_hisim_result r;
    ck_assert_int_eq(dp_hisim_run(h, s->device, s->priority, &r, &err), DP_OK);
    int same = 1;
    for (int v = 0; v < g->n_ops; v++) same &= r.op_start[v] == s->start[v];
    *ms = r.makespan;
    dp_hisim_free(h);
    return same;
}

/* Topcuoglu's example: HEFT (80) and CPOP (86) schedules are realised start for start by the
 * priority queue; so is our PEFT schedule (85), which the FIFO queue turns into 93: on P2 tasks 2
 * (rank_oct 29.67) and 4 (31) both become ready at 16 when task 1 ends; PEFT runs 4 first, FIFO
 * runs 2 (its edge comes first). The priority queue must choose among both, not grant the first
 * ready event the free device. */
START_TEST(priority_queue_realises_list_schedules)
{
    dp_graph *g;
    dp_costs *c;
    topcuoglu(&g, &c);
    dp_list_schedule *s = dp_list_schedule_alloc(10, 3);
    dp_error err;
    double ms;
    ck_assert_int_eq(dp_list_heft(g, c, s, &err), DP_OK);
    ck_assert(realised(g, c, s, DP_QUEUE_PRIORITY, &ms));
    ck_assert_double_eq(ms, 80);
    ck_assert_int_eq(dp_list_cpop(g, c, s, &err), DP_OK);
    ck_assert(realised(g, c, s, DP_QUEUE_PRIORITY, &ms));
    ck_assert_double_eq(ms, 86);
    ck_assert_int_eq(dp_list_peft(g, c, s, &err), DP_OK);
    ck_assert_double_eq(s->makespan, 85);
    ck_assert(realised(g, c, s, DP_QUEUE_PRIORITY, &ms));
    ck_assert_double_eq(ms, 85);
    ck_assert(!realised(g, c, s, DP_QUEUE_FIFO, &ms));
    ck_assert_double_eq(ms, 93);
    dp_list_schedule_free(s);
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

/* PEFT's OCT by hand on a, b -> c with two processors:
 *   a -> c (comm 4), b -> c (comm 2), op times a (2, 3), b (1, 1), c (5, 2), rate 1.
 *   OCT(c, .) = 0. OCT(a, p) = min_q (OCT(c,q) + w(c,q) + [q != p] 4):
 *     p=0: min(5 + 0, 2 + 4) = 5; p=1: min(5 + 4, 2) = 2.  OCT(b, 0) = min(5, 2 + 2) = 4, OCT(b, 1) = 2.
 *   rank_oct: a 3.5, b 3, c 0. */
START_TEST(peft_oct_by_hand)
{
    dp_graph_builder *b = dp_graph_builder_alloc("peft", "test", DP_COST_TIME);
    dp_graph_builder_add_op(b, "a", NULL, 2.5, 4);
    dp_graph_builder_add_op(b, "b", NULL, 1, 2);
    dp_graph_builder_add_op(b, "c", NULL, 3.5, 0);
    dp_graph_builder_add_edge(b, 0, 2, 4);
    dp_graph_builder_add_edge(b, 1, 2, 2);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    dp_costs *c = dp_costs_alloc(g, 2);
    const double w[3][2] = {{2, 3}, {1, 1}, {5, 2}};
    for (int v = 0; v < 3; v++)
        for (int p = 0; p < 2; p++) c->op_time[v * 2 + p] = w[v][p];
    memcpy(c->edge_data, g->edge_size, 2 * sizeof(double));
    dp_costs_update_homogeneous(c);
    double oct[6];
    dp_list_oct(g, c, oct);
    const double expect[6] = {5, 2, 4, 2, 0, 0};
    for (int k = 0; k < 6; k++) ck_assert_double_eq(oct[k], expect[k]);
    dp_list_schedule *s = dp_list_schedule_alloc(3, 2);
    ck_assert_int_eq(dp_list_peft(g, c, s, &err), DP_OK);
    ck_assert_double_eq(s->priority[0], 3.5);
    ck_assert_double_eq(s->priority[1], 3);
    /* a first: O_EFT p0 = 2 + 5 = 7, p1 = 3 + 2 = 5 -> p1 [0,3]. b: p0 1 + 4 = 5, p1 (after a) 4 + 2 = 6
     * -> p0 [0,1]. c: p0 max(3+4, 1) + 5 = 12, p1 max(3, 1+2) + 2 = 5 -> p1 [3,5]. */
    ck_assert_int_eq(s->device[0], 1);
    ck_assert_int_eq(s->device[1], 0);
    ck_assert_int_eq(s->device[2], 1);
    ck_assert_double_eq(s->makespan, 5);
    dp_list_schedule_free(s);
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

/* ETF by hand on the fork-join s(1) -> x, y, z (4) -> t(1), comm 2 out of s and 3 into t, on two
 * identical devices: s d0 [0,1]. Ready x, y, z: EST 1 on d0, 3 on d1: all tie at 1 on d0 with the
 * same static level -> x (lowest id) d0 [1,5]. Then y: d0 5, d1 3 -> y d1 [3,7]. z: d0 5, d1 7 ->
 * d0 [5,9]. t: d0 max(9, 7+3) = 10, d1 max(7, 9+3) = 12 -> d0 [10,11]. */
static dp_graph *fork_join(void)
{
    dp_graph_builder *b = dp_graph_builder_alloc("fj", "fj", DP_COST_TIME);
    const double comp[] = {1, 4, 4, 4, 1}, comm[] = {2, 3, 3, 3, 0};
    for (int i = 0; i < 5; i++) dp_graph_builder_add_op(b, NULL, NULL, comp[i], comm[i]);
    int es[][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}};
    for (int e = 0; e < 6; e++) dp_graph_builder_add_edge(b, es[e][0], es[e][1], comm[es[e][0]]);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    return g;
}

START_TEST(etf_by_hand)
{
    dp_graph *g = fork_join();
    dp_error err;
    dp_costs *c = dp_costs_graph(g, 2, &err);
    dp_list_schedule *s = dp_list_schedule_alloc(5, 2);
    ck_assert_int_eq(dp_list_etf(g, c, s, &err), DP_OK);
    const int dev[5] = {0, 0, 1, 0, 0};
    const double st[5] = {0, 1, 3, 5, 10};
    for (int v = 0; v < 5; v++) {
        ck_assert_int_eq(s->device[v], dev[v]);
        ck_assert_double_eq(s->start[v], st[v]);
    }
    ck_assert_double_eq(s->makespan, 11);
    ck_assert_double_eq(s->priority[0], 6); /* static level 1 + 4 + 1 */
    dp_list_schedule_free(s);
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

/* a random DAG: n ops, edge i -> j (i < j) with probability p, integer costs */
static dp_graph *random_dag(gsl_rng *r, int n, double p, int comm_max)
{
    dp_graph_builder *b = dp_graph_builder_alloc("rand", "rand", DP_COST_TIME);
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
static dp_costs *random_hetero(gsl_rng *r, const dp_graph *g, int D)
{
    dp_costs *c = dp_costs_alloc(g, D);
    for (int v = 0; v < g->n_ops; v++)
        for (int d = 0; d < D; d++) c->op_time[v * D + d] = 1 + (double)gsl_rng_uniform_int(r, 12);
    memcpy(c->edge_data, g->edge_size, (size_t)g->n_edges * sizeof(double));
    for (int a = 0; a < D; a++)
        for (int b2 = 0; b2 < D; b2++)
            if (a != b2) {
                c->inv_bw[a * D + b2] = 0.5 + gsl_rng_uniform(r);
                c->latency[a * D + b2] = (double)gsl_rng_uniform_int(r, 3);
            }
    dp_costs_update_homogeneous(c);
    return c;
}

static const char *const LIST_METHODS[] = {"heft", "cpop", "peft", "etf"};

START_TEST(list_schedules_feasible)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    typedef int (*fn_t)(const dp_graph *, const dp_costs *, dp_list_schedule *, dp_error *);
    fn_t fns[4] = {dp_list_heft, dp_list_cpop, dp_list_peft, dp_list_etf};
    for (int trial = 0; trial < 60; trial++) {
        int n = 2 + (int)gsl_rng_uniform_int(r, 40), D = 1 + (int)gsl_rng_uniform_int(r, 4);
        dp_graph *g = random_dag(r, n, 0.15, 10);
        dp_costs *c = trial % 2 ? random_hetero(r, g, D) : dp_costs_graph(g, D, NULL);
        dp_list_schedule *s = dp_list_schedule_alloc(n, D);
        for (int m = 0; m < 4; m++)
            for (int app = 0; app < 2; app++) {
                dp_error err;
                s->append_only = app;
                ck_assert_int_eq(fns[m](g, c, s, &err), DP_OK);
                ck_assert_msg(dp_list_check(g, c, s, &err) == DP_OK, "%s trial %d: %s", LIST_METHODS[m], trial, err.msg);
                double mx = 0;
                for (int v = 0; v < n; v++) mx = fmax(mx, s->finish[v]);
                ck_assert_double_eq(s->makespan, mx);
                /* every op appears once in the order */
                int seen[64] = {0};
                for (int k = 0; k < n; k++) seen[s->order[k]]++;
                for (int v = 0; v < n; v++) ck_assert_int_eq(seen[v], 1);
                /* no schedule beats the lower bound */
                ck_assert(s->makespan >= dp_costs_lower_bound(g, c) - 1e-9);
            }
        dp_list_schedule_free(s);
        dp_costs_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(list_place_registry)
{
    dp_graph *g;
    dp_costs *c;
    topcuoglu(&g, &c);
    for (int m = 0; m < 4; m++) {
        int a[10];
        double pr[10];
        int hp = 0;
        dp_error err;
        ck_assert_int_eq(dp_place(LIST_METHODS[m], g, c, NULL, a, pr, &hp, &err), DP_OK);
        ck_assert_int_eq(hp, 1);
        for (int v = 0; v < 10; v++) ck_assert(a[v] >= 0 && a[v] < 3);
    }
    int a[10];
    dp_error err;
    dp_place("heft", g, c, NULL, a, NULL, NULL, &err);
    ck_assert_int_eq(a[0], 2); /* task 1 on P3 */
    /* a schedule of the wrong size is refused */
    dp_list_schedule *s = dp_list_schedule_alloc(9, 3);
    ck_assert_int_eq(dp_list_heft(g, c, s, &err), DP_EINVAL);
    dp_list_schedule_free(s);
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

/* ---------------- the heterogeneous reader ---------------- */

static char *write_tmp(const char *suffix, const char *text, char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/dp_test_list_XXXXXX%s", suffix);
    int fd = mkstemps(buf, (int)strlen(suffix));
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return buf;
}

START_TEST(hetero_read_in)
{
    /* 3 tasks, P = 3: 1 -> 2 (data 6), 1 -> 3 (data 4); rates 1-2: 2, 1-3: 1, 2-3: 4 */
    const char *text = "3\n2\n3\n\n1 2 6\n1 3 4.5\n\n1 2 3\n4 5 6\n7 8 9.5\n\n1 2 2\n1 3 1\n2 3 4\n";
    char path[64];
    write_tmp(".in", text, path, sizeof path);
    dp_graph *g;
    dp_costs *c;
    dp_error err;
    ck_assert_int_eq(dp_hetero_read(path, &g, &c, &err), DP_OK);
    unlink(path);
    ck_assert_int_eq(g->n_ops, 3);
    ck_assert_int_eq(g->n_edges, 2);
    ck_assert_int_eq(c->n_devices, 3);
    ck_assert_str_eq(g->op_name[0], "1");
    ck_assert_double_eq(dp_costs_op(c, 2, 2), 9.5);
    ck_assert_double_eq(dp_costs_op(c, 1, 0), 4);
    ck_assert_double_eq(g->work[0], 2);
    ck_assert_int_eq(c->homogeneous, 0);
    /* edge 1 -> 3 carries 4.5: at rate 4 between processors 2 and 3 it takes 1.125, either way */
    int e13 = g->edge_dst[0] == 2 ? 0 : 1;
    ck_assert_double_eq(dp_costs_comm(c, e13, 1, 2), 1.125);
    ck_assert_double_eq(dp_costs_comm(c, e13, 2, 1), 1.125);
    ck_assert_double_eq(dp_costs_comm(c, e13, 0, 1), 2.25);
    ck_assert_double_eq(dp_costs_comm(c, e13, 1, 1), 0);
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(hetero_read_csv_startup)
{
    char dir[] = "/tmp/dp_test_csv_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char exe[128], conn[128], bw[128];
    snprintf(exe, sizeof exe, "%s/x_task_exe_time.csv", dir);
    snprintf(conn, sizeof conn, "%s/x_task_connectivity.csv", dir);
    snprintf(bw, sizeof bw, "%s/x_resource_BW.csv", dir);
    FILE *f = fopen(exe, "w");
    fputs("TP,P_0,P_1\nT_0,1,2\nT_1,3,4\n", f);
    fclose(f);
    f = fopen(conn, "w");
    fputs("T,T_0,T_1\nT_0,0,10\nT_1,0,0\n", f);
    fclose(f);
    f = fopen(bw, "w");
    fputs("P,P_0,P_1\nP_0,0,5\nP_1,2,0\nStartup,1.5,0.5\n", f);
    fclose(f);
    dp_graph *g;
    dp_costs *c;
    dp_error err;
    ck_assert_msg(dp_hetero_read(exe, &g, &c, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 2);
    ck_assert_str_eq(g->op_name[1], "T_1");
    /* 0 -> 1: startup of the sender 1.5 + 10 / 5; 1 -> 0: 0.5 + 10 / 2 */
    ck_assert_double_eq(dp_costs_comm(c, 0, 0, 1), 3.5);
    ck_assert_double_eq(dp_costs_comm(c, 0, 1, 0), 5.5);
    dp_costs_free(c);
    dp_graph_free(g);
    /* without the rate file: rate 1 and no start-up */
    unlink(bw);
    ck_assert_int_eq(dp_hetero_read(exe, &g, &c, &err), DP_OK);
    ck_assert_double_eq(dp_costs_comm(c, 0, 0, 1), 10);
    dp_costs_free(c);
    dp_graph_free(g);
    unlink(exe);
    unlink(conn);
    rmdir(dir);
}
END_TEST

START_TEST(hetero_bad_inputs)
{
    char dir[1024], list[1100];
    snprintf(dir, sizeof dir, "%s/tests/bad-hetero", dp_test_srcdir());
    snprintf(list, sizeof list, "%s/EXPECTED", dir);
    FILE *f = fopen(list, "r");
    ck_assert_msg(f != NULL, "cannot open %s", list);
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = 0;
        char *tab = strchr(line, '\t');
        ck_assert_ptr_nonnull(tab);
        *tab = 0;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, line);
        dp_error err;
        dp_error_clear(&err);
        dp_graph *g = (dp_graph *)1;
        dp_costs *c = (dp_costs *)1;
        ck_assert_msg(dp_hetero_read(path, &g, &c, &err) != DP_OK, "%s: accepted a bad input", line);
        ck_assert(g == NULL && c == NULL);
        ck_assert_msg(strstr(err.msg, tab + 1) != NULL, "%s: message \"%s\" lacks \"%s\"", line, err.msg, tab + 1);
        /* the message names the file at fault (for CSV sets: one of the PREFIX_* files) */
        char stem[2048];
        snprintf(stem, sizeof stem, "%s", line);
        char *us = strstr(stem, "_task_");
        if (us) us[1] = 0;
        ck_assert_msg(strstr(err.msg, stem) != NULL, "%s: message \"%s\" does not name the file", line, err.msg);
        n++;
    }
    fclose(f);
    ck_assert_int_ge(n, 10);
    dp_graph *g;
    dp_costs *c;
    dp_error err;
    ck_assert_int_eq(dp_hetero_read("graph.txt", &g, &c, &err), DP_EINVAL);
    ck_assert_int_eq(dp_hetero_read("/nonexistent/x.in", &g, &c, &err), DP_EIO);
}
END_TEST

/* ---------------- searches ---------------- */

/* the best simulated makespan over all D^n assignments */
static double brute_force(const dp_graph *g, const dp_costs *c)
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

static double simulate(const dp_graph *g, const dp_costs *c, const int *a)
{
    dp_error err;
    dp_sim *sim = dp_sim_alloc(g, c, &err);
    dp_sim_result r;
    dp_sim_run(sim, a, &r, &err);
    double m = r.makespan;
    dp_sim_free(sim);
    return m;
}

static const char *const ALL_METHODS[] = {"cp", "heft", "cpop", "peft", "etf", "anneal", "local",
                                          "random", "round-robin", "single"};

/* The fork-join by hand (any D >= 2): optimum 11. If x, y, z are not all on s's device, an op away
 * from s starts at >= 1 + 2 and ends at >= 7, and t waits for it until >= 10 unless t sits with it;
 * then s's device ops or another remote op feed t no earlier than 10 as well (two of x, y, z after
 * s on one device end at 9, plus transfer 3 when t is elsewhere; or both remote). So t starts at
 * >= 10 and ends at >= 11; all on one device: 14. Reached by s, x, y, t on d0 and z on d1. */
START_TEST(exact_fork_join_hand)
{
    dp_graph *g = fork_join();
    for (int D = 2; D <= 4; D++) {
        dp_error err;
        dp_costs *c = dp_costs_graph(g, D, &err);
        int a[5];
        dp_exact_result res;
        dp_test_sim sim = dp_test_sim_make(g, c);
        dp_place_options o;
        dp_place_options_init(&o);
        o.oracle = &sim.oracle;
        ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, NULL, a, &res, &err), DP_OK);
        ck_assert_int_eq(res.proven, 1);
        ck_assert_double_eq(res.makespan, 11);
        ck_assert_double_eq(simulate(g, c, a), 11);
        ck_assert_double_eq(brute_force(g, c), 11);
        /* no method beats it */
        for (size_t m = 0; m < sizeof ALL_METHODS / sizeof *ALL_METHODS; m++) {
            int b[5];
            ck_assert_int_eq(dp_place(ALL_METHODS[m], g, c, &o, b, NULL, NULL, &err), DP_OK);
            ck_assert_msg(simulate(g, c, b) >= 11, "%s beat the optimum", ALL_METHODS[m]);
        }
        dp_test_sim_free(&sim);
        dp_costs_free(c);
    }
    dp_graph_free(g);
}
END_TEST

/* Two chains a1 -> a2 and b1 -> b2 (each op 3) with transfers of 10, and a join j (1) fed by a2
 * and b2 with transfers 1: on two devices the chains go to different devices (no 10-transfer), one
 * chain's end ships to j: 3 + 3 + 1 + 1 = 8. On one device: 13. Any cross-device chain edge costs
 * 10 more. So the optimum is 8, with lower bound max(7, 13/2) = 7 not reached. */
START_TEST(exact_two_chains_hand)
{
    dp_graph_builder *b = dp_graph_builder_alloc("chains", "test", DP_COST_TIME);
    const double w[5] = {3, 3, 3, 3, 1};
    for (int v = 0; v < 5; v++) dp_graph_builder_add_op(b, NULL, NULL, w[v], 0);
    dp_graph_builder_add_edge(b, 0, 1, 10);
    dp_graph_builder_add_edge(b, 2, 3, 10);
    dp_graph_builder_add_edge(b, 1, 4, 1);
    dp_graph_builder_add_edge(b, 3, 4, 1);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    dp_costs *c = dp_costs_graph(g, 2, &err);
    int a[5];
    dp_exact_result res;
    dp_test_sim sim = dp_test_sim_make(g, c);
    ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, NULL, a, &res, &err), DP_OK);
    dp_test_sim_free(&sim);
    ck_assert_double_eq(res.lower_bound, 7);
    ck_assert_double_eq(res.makespan, 8);
    ck_assert_int_eq(res.proven, 1);
    ck_assert_int_ne(a[0], a[2]);
    ck_assert_int_eq(a[0], a[1]);
    ck_assert_int_eq(a[2], a[3]);
    ck_assert_double_eq(brute_force(g, c), 8);
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

/* Exact equals brute force on random small graphs, homogeneous and heterogeneous (where only
 * interchangeable devices are treated as symmetric), and no method beats it. */
START_TEST(exact_matches_brute_force)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    int improved = 0;
    for (int trial = 0; trial < 60; trial++) {
        int D = 2 + trial % 3;
        int n = D == 4 ? 4 + (int)gsl_rng_uniform_int(r, 4) : 4 + (int)gsl_rng_uniform_int(r, 6);
        dp_graph *g = random_dag(r, n, 0.3, 8);
        dp_error err;
        dp_costs *c = trial % 4 == 3 ? random_hetero(r, g, D) : dp_costs_graph(g, D, &err);
        int a[16];
        dp_exact_result res;
        dp_exact_config cfg;
        dp_exact_config_init(&cfg);
        /* with the annealed incumbent, with the list schedulers' only, and from all-on-one-device
         * (where the search itself must find the optimum) */
        cfg.anneal_budget = trial % 3 == 0 ? 200 : 0;
        cfg.list_start = trial % 3 != 2;
        dp_test_sim sim = dp_test_sim_make(g, c);
        ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, &cfg, a, &res, &err), DP_OK);
        ck_assert_int_eq(res.proven, 1);
        double bf = brute_force(g, c);
        ck_assert_msg(fabs(res.makespan - bf) < 1e-9, "trial %d: exact %g, brute force %g", trial, res.makespan, bf);
        ck_assert_double_eq(simulate(g, c, a), res.makespan);
        ck_assert(res.makespan >= res.lower_bound - 1e-9);
        ck_assert(res.makespan <= res.start);
        improved += res.makespan < res.start;
        for (size_t m = 0; m < sizeof ALL_METHODS / sizeof *ALL_METHODS; m++) {
            int b[16];
            dp_place_options o;
            dp_place_options_init(&o);
            o.budget = 300;
            o.oracle = &sim.oracle;
            ck_assert_int_eq(dp_place(ALL_METHODS[m], g, c, &o, b, NULL, NULL, &err), DP_OK);
            ck_assert_msg(simulate(g, c, b) >= res.makespan - 1e-9, "%s beat exact", ALL_METHODS[m]);
        }
        dp_test_sim_free(&sim);
        dp_costs_free(c);
        dp_graph_free(g);
    }
    /* the search had work to do (the start was not already optimal) in many trials */
    ck_assert_int_ge(improved, 15);
    gsl_rng_free(r);
}
END_TEST

START_TEST(exact_limits)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    dp_graph *g = random_dag(r, 30, 0.1, 5);
    dp_error err;
    dp_costs *c = dp_costs_graph(g, 2, &err);
    int a[30];
    dp_exact_result res;
    dp_test_sim sim = dp_test_sim_make(g, c);
    ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, NULL, a, &res, &err), DP_ERANGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "30 ops"));
    /* a node limit leaves the result unproven but valid (the incumbent or better) */
    dp_exact_config cfg;
    dp_exact_config_init(&cfg);
    cfg.max_ops = 30;
    cfg.max_nodes = 50;
    cfg.anneal_budget = 0;
    ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, &cfg, a, &res, &err), DP_OK);
    ck_assert(res.proven == 0 || res.makespan <= res.lower_bound + 1e-9);
    ck_assert_double_eq(simulate(g, c, a), res.makespan);
    /* more than one stream per device breaks the bounds: refused */
    cfg.max_streams = 2;
    ck_assert_int_eq(dp_search_exact(g, c, &sim.oracle, &cfg, a, &res, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "streams"));
    /* no oracle: refused, not silently a private engine */
    ck_assert_int_eq(dp_search_exact(g, c, NULL, NULL, a, &res, &err), DP_EINVAL);
    dp_test_sim_free(&sim);
    dp_costs_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

START_TEST(anneal_and_local)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    dp_graph *g = random_dag(r, 40, 0.08, 6);
    dp_error err;
    dp_costs *c = dp_costs_graph(g, 4, &err);
    dp_anneal_config cfg;
    dp_anneal_config_init(&cfg);
    cfg.budget = 3000;
    dp_test_sim sim = dp_test_sim_make(g, c);
    const dp_oracle *or = &sim.oracle;
    for (int annealing = 0; annealing < 2; annealing++)
        for (int sched = 0; sched < 2; sched++) {
            cfg.schedule = sched ? DP_ANNEAL_LINEAR : DP_ANNEAL_GEOMETRIC;
            int a[40], b[40];
            dp_search_result res, res2;
            int (*fn)(const dp_graph *, const dp_costs *, const dp_oracle *, const dp_anneal_config *, uint64_t, int *,
                      dp_search_result *, dp_error *) = annealing ? dp_search_anneal : dp_search_local;
            ck_assert_int_eq(fn(g, c, or, &cfg, 9, a, &res, &err), DP_OK);
            ck_assert_int_eq(res.sims, 3000);
            ck_assert(res.best <= res.start);
            ck_assert_double_eq(simulate(g, c, a), res.best);
            /* the start is cp's assignment */
            int s[40];
            dp_place("cp", g, c, NULL, s, NULL, NULL, &err);
            ck_assert_double_eq(res.start, simulate(g, c, s));
            /* trace: starts at 1 sim, strictly decreasing, ends at the best */
            ck_assert_int_ge(res.trace.n, 1);
            ck_assert_int_eq(res.trace.sims[0], 1);
            for (long k = 1; k < res.trace.n; k++) {
                ck_assert(res.trace.best[k] < res.trace.best[k - 1]);
                ck_assert(res.trace.sims[k] > res.trace.sims[k - 1]);
            }
            ck_assert_double_eq(res.trace.best[res.trace.n - 1], res.best);
            /* same seed, same result */
            ck_assert_int_eq(fn(g, c, or, &cfg, 9, b, &res2, &err), DP_OK);
            ck_assert_double_eq(res2.best, res.best);
            ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
            dp_search_trace_clear(&res.trace);
            dp_search_trace_clear(&res2.trace);
        }
    /* a bad config */
    cfg.t_end = 1;
    cfg.t0 = 0.5;
    int a[40];
    dp_search_result res;
    ck_assert_int_eq(dp_search_anneal(g, c, or, &cfg, 1, a, &res, &err), DP_EINVAL);
    dp_anneal_config_init(&cfg);
    snprintf(cfg.init, sizeof cfg.init, "anneal");
    ck_assert_int_eq(dp_search_anneal(g, c, or, &cfg, 1, a, &res, &err), DP_EINVAL);
    snprintf(cfg.init, sizeof cfg.init, "nosuch");
    ck_assert_int_eq(dp_search_anneal(g, c, or, &cfg, 1, a, &res, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "nosuch"));
    ck_assert_int_eq(dp_search_anneal(g, c, NULL, &cfg, 1, a, &res, &err), DP_EINVAL);
    dp_test_sim_free(&sim);
    dp_costs_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

START_TEST(anneal_config_file)
{
    char path[64];
    write_tmp(".json", "{\"budget\": 77, \"t0\": 0.2, \"t_end\": 0.001, \"schedule\": \"linear\", \"swap_prob\": 0.5, "
                       "\"init\": \"heft\"}", path, sizeof path);
    dp_anneal_config cfg;
    dp_anneal_config_init(&cfg);
    dp_error err;
    ck_assert_int_eq(dp_anneal_config_load(&cfg, path, &err), DP_OK);
    unlink(path);
    ck_assert_int_eq(cfg.budget, 77);
    ck_assert_double_eq(cfg.t0, 0.2);
    ck_assert_double_eq(cfg.t_end, 0.001);
    ck_assert_int_eq(cfg.schedule, DP_ANNEAL_LINEAR);
    ck_assert_double_eq(cfg.swap_prob, 0.5);
    ck_assert_str_eq(cfg.init, "heft");
    write_tmp(".json", "{\"budegt\": 5}", path, sizeof path);
    ck_assert_int_eq(dp_anneal_config_load(&cfg, path, &err), DP_EINVAL);
    unlink(path);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown key \"budegt\""));
    write_tmp(".json", "{\"schedule\": \"cubic\"}", path, sizeof path);
    ck_assert_int_eq(dp_anneal_config_load(&cfg, path, &err), DP_EINVAL);
    unlink(path);
    /* through the registry, budget from the options */
    dp_graph *g = fork_join();
    dp_costs *c = dp_costs_graph(g, 2, &err);
    dp_place_options o;
    dp_place_options_init(&o);
    o.budget = 500;
    int a[5];
    /* a method that simulates refuses to run without the machine's oracle */
    ck_assert_int_eq(dp_place("anneal", g, c, &o, a, NULL, NULL, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "oracle"));
    dp_test_sim sim = dp_test_sim_make(g, c);
    o.oracle = &sim.oracle;
    ck_assert_int_eq(dp_place("anneal", g, c, &o, a, NULL, NULL, &err), DP_OK);
    ck_assert_double_eq(simulate(g, c, a), 11);
    dp_test_sim_free(&sim);
    dp_costs_free(c);
    dp_graph_free(g);
}
END_TEST

/* search at inference: annealing from a given start never ends worse than it, and its moves
 * follow the proposal: with all weight on device 0, a moved op only ever lands on device 0 */
START_TEST(anneal_start_and_proposal)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 8);
    dp_graph *g = random_dag(r, 30, 0.1, 6);
    dp_error err;
    dp_costs *c = dp_costs_graph(g, 4, &err);
    dp_test_sim sim = dp_test_sim_make(g, c);
    int start[30], a[30];
    for (int v = 0; v < 30; v++) start[v] = 1 + v % 3; /* devices 1..3, never 0 */
    float prop[30 * 4];
    for (int v = 0; v < 30; v++)
        for (int d = 0; d < 4; d++) prop[v * 4 + d] = d == 0;
    dp_anneal_config cfg;
    dp_anneal_config_init(&cfg);
    cfg.budget = 400;
    cfg.swap_prob = 0;
    cfg.start = start;
    cfg.proposal = prop;
    dp_search_result res;
    ck_assert_int_eq(dp_search_local(g, c, &sim.oracle, &cfg, 3, a, &res, &err), DP_OK);
    ck_assert_double_eq(res.start, simulate(g, c, start));
    ck_assert(res.best <= res.start);
    ck_assert_double_eq(simulate(g, c, a), res.best);
    /* a move from elsewhere lands on device 0; only an op already on 0 (no proposed alternative)
     * moves uniformly, so most moved ops sit on 0 */
    int moved = 0, on0 = 0;
    for (int v = 0; v < 30; v++) {
        moved += a[v] != start[v];
        on0 += a[v] != start[v] && a[v] == 0;
    }
    ck_assert_int_gt(moved, 0);
    ck_assert_msg(2 * on0 > moved, "%d of %d moved ops on device 0", on0, moved);
    dp_search_trace_clear(&res.trace);
    /* through the registry: --refine from cp is never worse than cp */
    dp_place_options o;
    dp_place_options_init(&o);
    o.oracle = &sim.oracle;
    int b[30];
    ck_assert_int_eq(dp_place("cp", g, c, &o, b, NULL, NULL, &err), DP_OK);
    const double cp_ms = simulate(g, c, b);
    o.refine = "anneal";
    o.refine_budget = 300;
    const long s0 = dp_engine_simulations(sim.engine);
    ck_assert_int_eq(dp_place("cp", g, c, &o, b, NULL, NULL, &err), DP_OK);
    ck_assert_int_eq(dp_engine_simulations(sim.engine) - s0, 300);
    ck_assert(simulate(g, c, b) <= cp_ms);
    o.refine = "tabu";
    ck_assert_int_eq(dp_place("cp", g, c, &o, b, NULL, NULL, &err), DP_EINVAL);
    dp_test_sim_free(&sim);
    dp_costs_free(c);
    dp_graph_free(g);
    gsl_rng_free(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("list");
    TCase *t = tcase_create("list");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, topcuoglu_ranks);
    tcase_add_test(t, anneal_start_and_proposal);
    tcase_add_test(t, topcuoglu_heft_80);
    tcase_add_test(t, topcuoglu_cpop_86);
    tcase_add_test(t, priority_queue_realises_list_schedules);
    tcase_add_test(t, peft_oct_by_hand);
    tcase_add_test(t, etf_by_hand);
    tcase_add_test(t, list_schedules_feasible);
    tcase_add_test(t, list_place_registry);
    tcase_add_test(t, hetero_read_in);
    tcase_add_test(t, hetero_read_csv_startup);
    tcase_add_test(t, hetero_bad_inputs);
    tcase_add_test(t, exact_fork_join_hand);
    tcase_add_test(t, exact_two_chains_hand);
    tcase_add_test(t, exact_matches_brute_force);
    tcase_add_test(t, exact_limits);
    tcase_add_test(t, anneal_and_local);
    tcase_add_test(t, anneal_config_file);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return dp_test_run(suite());
}
