/* test_list: list schedulers (HEFT, CPOP, PEFT, ETF), the heterogeneous example reader, and the
 * searches over assignments (annealing, local search, exact branch and bound). Needs no shared
 * data: the Topcuoglu example is built from the values printed in the paper. */
#include "dp_coarse.h"
#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_hetero.h"
#include "dp_hisim.h"
#include "dp_list.h"
#include "dp_place.h"
#include "dp_search.h"
#include "dp_sim.h"
#include "dp_test.h"
#include "dp_test_graphs.h"

#include <gsl/gsl_rng.h>
#include <math.h>

/* Topcuoglu, Hariri and Wu 2002, Fig. 2: 10 tasks on 3 processors, all link rates 1. Op ids are
 * the paper's task numbers minus one. */
static void topcuoglu(dp_graph **gout, dp_cost **cout)
{
    static const double W[10][3] = {{14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17}, {12, 13, 10},
                                     {13, 16, 9}, {7, 15, 11},  {5, 11, 14},  {18, 12, 20}, {21, 7, 16}};
    static const int E[15][3] = {{1, 2, 18}, {1, 3, 12}, {1, 4, 9},  {1, 5, 11}, {1, 6, 14},
                                 {2, 8, 19}, {2, 9, 16}, {3, 7, 23}, {4, 8, 27}, {4, 9, 23},
                                 {5, 9, 13}, {6, 8, 15}, {7, 10, 17}, {8, 10, 11}, {9, 10, 13}};
    dp_graph_builder *b = dp_graph_builder_alloc("topcuoglu", "test", DP_GRAPH_COST_TIME);
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
    dp_cost *c = dp_cost_alloc(g, 3);
    for (int v = 0; v < 10; v++)
        for (int p = 0; p < 3; p++) c->op_time[v * 3 + p] = W[v][p];
    memcpy(c->edge_data, g->edge_size, (size_t)g->n_edges * sizeof(double));
    dp_cost_update_homogeneous(c);
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
    dp_cost *c;
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
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(topcuoglu_heft_80)
{
    dp_graph *g;
    dp_cost *c;
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
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(topcuoglu_cpop_86)
{
    dp_graph *g;
    dp_cost *c;
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
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* Simulating a list schedule's assignment with its priorities as the queue discipline (work
 * conserving, ties first come first served) realises the schedule itself when the schedule never
 * keeps a device idle while a lower-priority op is ready for it: each op starts when the schedule
 * says. Returns 1 when every start matches; *ms is the simulated makespan. */
static int realised(const dp_graph *g, const dp_cost *c, const dp_list_schedule *s, dp_hisim_queue_kind q, double *ms)
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
    dp_cost *c;
    topcuoglu(&g, &c);
    dp_list_schedule *s = dp_list_schedule_alloc(10, 3);
    dp_error err;
    double ms;
    ck_assert_int_eq(dp_list_heft(g, c, s, &err), DP_OK);
    ck_assert(realised(g, c, s, DP_HISIM_QUEUE_PRIORITY, &ms));
    ck_assert_double_eq(ms, 80);
    ck_assert_int_eq(dp_list_cpop(g, c, s, &err), DP_OK);
    ck_assert(realised(g, c, s, DP_HISIM_QUEUE_PRIORITY, &ms));
    ck_assert_double_eq(ms, 86);
    ck_assert_int_eq(dp_list_peft(g, c, s, &err), DP_OK);
    ck_assert_double_eq(s->makespan, 85);
    ck_assert(realised(g, c, s, DP_HISIM_QUEUE_PRIORITY, &ms));
    ck_assert_double_eq(ms, 85);
    ck_assert(!realised(g, c, s, DP_HISIM_QUEUE_FIFO, &ms));
    ck_assert_double_eq(ms, 93);
    dp_list_schedule_free(s);
    dp_cost_free(c);
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
    dp_graph_builder *b = dp_graph_builder_alloc("peft", "test", DP_GRAPH_COST_TIME);
    dp_graph_builder_add_op(b, "a", NULL, 2.5, 4);
    dp_graph_builder_add_op(b, "b", NULL, 1, 2);
    dp_graph_builder_add_op(b, "c", NULL, 3.5, 0);
    dp_graph_builder_add_edge(b, 0, 2, 4);
    dp_graph_builder_add_edge(b, 1, 2, 2);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    dp_cost *c = dp_cost_alloc(g, 2);
    const double w[3][2] = {{2, 3}, {1, 1}, {5, 2}};
    for (int v = 0; v < 3; v++)
        for (int p = 0; p < 2; p++) c->op_time[v * 2 + p] = w[v][p];
    memcpy(c->edge_data, g->edge_size, 2 * sizeof(double));
    dp_cost_update_homogeneous(c);
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
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST


START_TEST(etf_by_hand)
{
    dp_graph *g = fork_join();
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 2, &err);
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
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST



static const char *const LIST_METHODS[] = {"heft", "cpop", "peft", "etf"};
typedef int (*list_fn_t)(const dp_graph *, const dp_cost *, dp_list_schedule *, dp_error *);
static const list_fn_t LIST_FNS[4] = {dp_list_heft, dp_list_cpop, dp_list_peft, dp_list_etf};

/* a random trial's problem: 2 to 41 ops, 1 to 4 devices, heterogeneous costs on odd trials */
static dp_graph *random_problem(gsl_rng *r, int trial, dp_cost **c)
{
    const int n = 2 + (int)gsl_rng_uniform_int(r, 40), D = 1 + (int)gsl_rng_uniform_int(r, 4);
    dp_graph *g = random_dag(r, n, 0.15, 10);
    *c = trial % 2 ? random_hetero(r, g, D) : dp_cost_graph(g, D, NULL);
    return g;
}

START_TEST(list_schedules_feasible)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    for (int trial = 0; trial < 60; trial++) {
        dp_cost *c;
        dp_graph *g = random_problem(r, trial, &c);
        const int n = g->n_ops, D = c->n_devices;
        dp_list_schedule *s = dp_list_schedule_alloc(n, D);
        for (int m = 0; m < 4; m++)
            for (int app = 0; app < 2; app++) {
                dp_error err;
                s->append_only = app;
                ck_assert_int_eq(LIST_FNS[m](g, c, s, &err), DP_OK);
                ck_assert_msg(dp_list_check(g, c, s, &err) == DP_OK, "%s trial %d: %s", LIST_METHODS[m], trial, err.msg);
                double mx = 0;
                for (int v = 0; v < n; v++) mx = fmax(mx, s->finish[v]);
                ck_assert_double_eq(s->makespan, mx);
                /* every op appears once in the order */
                int seen[64] = {0};
                for (int k = 0; k < n; k++) seen[s->order[k]]++;
                for (int v = 0; v < n; v++) ck_assert_int_eq(seen[v], 1);
                /* no schedule beats the lower bound */
                ck_assert(s->makespan >= dp_cost_lower_bound(g, c) - 1e-9);
            }
        dp_list_schedule_free(s);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(list_place_registry)
{
    dp_graph *g;
    dp_cost *c;
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
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* dp_place_options.list_schedule_out: the schedule a list scheduler placed by, the same as the
 * method run alone with the same append_only and ties (doppler place reported it by scheduling a
 * second time: ETF twice on every graph); another method, and --coarsen's inner placement of the
 * group graph, leave it as it was */
START_TEST(list_place_schedule_out)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 13);
    for (int trial = 0; trial < 20; trial++) {
        dp_cost *c;
        dp_graph *g = random_problem(r, trial, &c);
        const int n = g->n_ops, D = c->n_devices;
        dp_list_schedule *want = dp_list_schedule_alloc(n, D), *got = dp_list_schedule_alloc(n, D);
        int a[64];
        double pr[64];
        for (int m = 0; m < 4; m++)
            for (int k = 0; k < 4; k++) {
                dp_error err;
                dp_place_options o;
                dp_place_options_init(&o);
                o.list_append_only = k & 1;
                o.list_ties = k >> 1 ? DP_LIST_TIES_HEAP : DP_LIST_TIES_ID;
                o.list_schedule_out = got;
                got->makespan = -1;
                ck_assert_int_eq(dp_place(LIST_METHODS[m], g, c, &o, a, pr, NULL, &err), DP_OK);
                want->append_only = o.list_append_only;
                want->ties = o.list_ties;
                ck_assert_int_eq(LIST_FNS[m](g, c, want, &err), DP_OK);
                ck_assert_int_eq(got->append_only, want->append_only);
                ck_assert_int_eq(got->ties, want->ties);
                ck_assert(got->makespan == want->makespan);
                for (int v = 0; v < n; v++) {
                    ck_assert_int_eq(got->device[v], want->device[v]);
                    ck_assert_int_eq(a[v], want->device[v]);
                    ck_assert(got->start[v] == want->start[v] && got->finish[v] == want->finish[v]);
                    ck_assert(got->priority[v] == want->priority[v] && pr[v] == want->priority[v]);
                    ck_assert_int_eq(got->order[v], want->order[v]);
                }
            }
        /* not a list scheduler: untouched */
        dp_place_options o;
        dp_place_options_init(&o);
        o.list_schedule_out = got;
        got->makespan = -1;
        dp_error err;
        ck_assert_int_eq(dp_place("round-robin", g, c, &o, a, NULL, NULL, &err), DP_OK);
        ck_assert(got->makespan == -1);
        /* --coarsen: the method schedules the group graph, not this one */
        dp_coarse_report rep;
        ck_assert_int_eq(dp_coarse_place("heft", g, c, &o, DP_COARSE_PACKED, 4, a, &rep, &err), DP_OK);
        ck_assert(got->makespan == -1);
        dp_list_schedule_free(want);
        dp_list_schedule_free(got);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

/* ---------------- the heterogeneous reader ---------------- */


START_TEST(hetero_read_in)
{
    /* 3 tasks, P = 3: 1 -> 2 (data 6), 1 -> 3 (data 4); rates 1-2: 2, 1-3: 1, 2-3: 4 */
    const char *text = "3\n2\n3\n\n1 2 6\n1 3 4.5\n\n1 2 3\n4 5 6\n7 8 9.5\n\n1 2 2\n1 3 1\n2 3 4\n";
    char path[64];
    write_tmp(".in", text, path, sizeof path);
    dp_graph *g;
    dp_cost *c;
    dp_error err;
    ck_assert_int_eq(dp_hetero_read(path, &g, &c, &err), DP_OK);
    unlink(path);
    ck_assert_int_eq(g->n_ops, 3);
    ck_assert_int_eq(g->n_edges, 2);
    ck_assert_int_eq(c->n_devices, 3);
    ck_assert_str_eq(g->op_name[0], "1");
    ck_assert_double_eq(dp_cost_op(c, 2, 2), 9.5);
    ck_assert_double_eq(dp_cost_op(c, 1, 0), 4);
    ck_assert_double_eq(g->work[0], 2);
    ck_assert_int_eq(c->homogeneous, 0);
    /* edge 1 -> 3 carries 4.5: at rate 4 between processors 2 and 3 it takes 1.125, either way */
    int e13 = g->edge_dst[0] == 2 ? 0 : 1;
    ck_assert_double_eq(dp_cost_comm(c, e13, 1, 2), 1.125);
    ck_assert_double_eq(dp_cost_comm(c, e13, 2, 1), 1.125);
    ck_assert_double_eq(dp_cost_comm(c, e13, 0, 1), 2.25);
    ck_assert_double_eq(dp_cost_comm(c, e13, 1, 1), 0);
    dp_cost_free(c);
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
    dp_cost *c;
    dp_error err;
    ck_assert_msg(dp_hetero_read(exe, &g, &c, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 2);
    ck_assert_str_eq(g->op_name[1], "T_1");
    /* 0 -> 1: startup of the sender 1.5 + 10 / 5; 1 -> 0: 0.5 + 10 / 2 */
    ck_assert_double_eq(dp_cost_comm(c, 0, 0, 1), 3.5);
    ck_assert_double_eq(dp_cost_comm(c, 0, 1, 0), 5.5);
    dp_cost_free(c);
    dp_graph_free(g);
    /* without the rate file: rate 1 and no start-up */
    unlink(bw);
    ck_assert_int_eq(dp_hetero_read(exe, &g, &c, &err), DP_OK);
    ck_assert_double_eq(dp_cost_comm(c, 0, 0, 1), 10);
    dp_cost_free(c);
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
        dp_cost *c = (dp_cost *)1;
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
    dp_cost *c;
    dp_error err;
    ck_assert_int_eq(dp_hetero_read("graph.txt", &g, &c, &err), DP_EINVAL);
    ck_assert_int_eq(dp_hetero_read("/nonexistent/x.in", &g, &c, &err), DP_EIO);
}
END_TEST

/* ---------------- searches ---------------- */



static Suite *suite(void)
{
    Suite *s = suite_create("list");
    TCase *t = tcase_create("list");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, topcuoglu_ranks);
    tcase_add_test(t, topcuoglu_heft_80);
    tcase_add_test(t, topcuoglu_cpop_86);
    tcase_add_test(t, priority_queue_realises_list_schedules);
    tcase_add_test(t, peft_oct_by_hand);
    tcase_add_test(t, etf_by_hand);
    tcase_add_test(t, list_schedules_feasible);
    tcase_add_test(t, list_place_registry);
    tcase_add_test(t, list_place_schedule_out);
    tcase_add_test(t, hetero_read_in);
    tcase_add_test(t, hetero_read_csv_startup);
    tcase_add_test(t, hetero_bad_inputs);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return dp_test_run(suite());
}
