/* test_heft_data: HEFT and CPOP on the files of ../shared/data/heft-topcuoglu2002 (SKIP when the
 * shared data is absent). Reference numbers: the published HEFT 80 / CPOP 86 of Topcuoglu et al.
 * 2002 with their schedules (as written by nedjulius/heft-cpop-simulator's .out files), the
 * random-graph value 184.1923 asserted by mackncheesiest/heft's tests (tolerance 1e-3 relative
 * there), and the HEFT/CPOP makespans of nedjulius's experiments (one implementation's results,
 * listed in ../shared/data/README.md section 2). */
#include "dp_hetero.h"
#include "dp_hisim.h"
#include "dp_list.h"
#include "dp_sim.h"
#include "dp_test.h"

#include <math.h>

static const char *dir;

static char *path_of(char *buf, size_t cap, const char *rel)
{
    snprintf(buf, cap, "%s/heft-topcuoglu2002/%s", dir, rel);
    return buf;
}

/* Parse a nedjulius .out file: per task start, finish, processor (1-based); returns the task
 * count and the total execution time in *total. */
static int read_out(const char *path, double *start, double *finish, int *proc, int cap, double *total)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char line[256];
    int task = -1, n = 0;
    *total = NAN;
    while (fgets(line, sizeof line, f)) {
        int t;
        double x;
        if (sscanf(line, "--- task %d ---", &t) == 1) {
            task = t - 1;
            ck_assert(task >= 0 && task < cap);
            if (t > n) n = t;
        } else if (sscanf(line, "Start time: %lf", &x) == 1) start[task] = x;
        else if (sscanf(line, "Finish time: %lf", &x) == 1) finish[task] = x;
        else if (sscanf(line, "Processor: %d", &t) == 1) proc[task] = t;
        else if (sscanf(line, "Total execution time: %lf", &x) == 1) *total = x;
    }
    fclose(f);
    return n;
}

/* s equals the .out schedule task by task */
static void assert_same_schedule(const dp_list_schedule *s, const char *out)
{
    double st[64], fi[64], total;
    int pr[64];
    int n = read_out(out, st, fi, pr, 64, &total);
    ck_assert_int_eq(n, s->n_ops);
    ck_assert_double_eq(total, s->makespan);
    for (int v = 0; v < n; v++) {
        ck_assert_msg(s->device[v] == pr[v] - 1, "%s: task %d on P%d, expected P%d", out, v + 1, s->device[v] + 1, pr[v]);
        ck_assert_double_eq(s->start[v], st[v]);
        ck_assert_double_eq(s->finish[v], fi[v]);
    }
}

static double sim_makespan(const dp_graph *g, const dp_cost *c, const int *a)
{
    dp_error err;
    dp_sim *sim = dp_sim_alloc(g, c, &err);
    dp_sim_result r;
    ck_assert_int_eq(dp_sim_run(sim, a, &r, &err), DP_OK);
    double m = r.makespan;
    dp_sim_free(sim);
    return m;
}

START_TEST(paper_example_in)
{
    char p[1024], q[1024];
    dp_graph *g;
    dp_cost *c;
    dp_error err;
    ck_assert_msg(dp_hetero_read(path_of(p, sizeof p, "paper-example.in"), &g, &c, &err) == DP_OK, "%s", err.msg);
    dp_list_schedule *s = dp_list_schedule_alloc(g->n_ops, c->n_devices);
    ck_assert_int_eq(dp_list_heft(g, c, s, &err), DP_OK);
    ck_assert_double_eq(s->makespan, 80);
    assert_same_schedule(s, path_of(q, sizeof q, "paper-example--heft.out"));
    ck_assert_double_eq(sim_makespan(g, c, s->device), 80);
    ck_assert_int_eq(dp_list_cpop(g, c, s, &err), DP_OK);
    ck_assert_double_eq(s->makespan, 86);
    assert_same_schedule(s, path_of(q, sizeof q, "paper-example--cpop.out"));
    ck_assert_double_eq(sim_makespan(g, c, s->device), 86);
    dp_list_schedule_free(s);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(canonical_csv)
{
    char e[1024], cn[1024], bw[1024];
    path_of(e, sizeof e, "canonicalgraph_task_exe_time.csv");
    path_of(cn, sizeof cn, "canonicalgraph_task_connectivity.csv");
    for (int startup = 0; startup < 2; startup++) {
        path_of(bw, sizeof bw, startup ? "canonicalgraph_resource_BW_startup.csv" : "canonicalgraph_resource_BW.csv");
        dp_graph *g;
        dp_cost *c;
        dp_error err;
        ck_assert_msg(dp_hetero_read_csv(e, cn, bw, &g, &c, &err) == DP_OK, "%s", err.msg);
        ck_assert_int_eq(g->n_ops, 10);
        ck_assert_int_eq(g->n_edges, 15);
        dp_list_schedule *s = dp_list_schedule_alloc(10, 3);
        ck_assert_int_eq(dp_list_heft(g, c, s, &err), DP_OK);
        ck_assert_double_eq(s->makespan, 80);
        ck_assert_int_eq(dp_list_cpop(g, c, s, &err), DP_OK);
        ck_assert_double_eq(s->makespan, 86);
        dp_list_schedule_free(s);
        dp_cost_free(c);
        dp_graph_free(g);
    }
}
END_TEST

START_TEST(random_graph_184)
{
    char p[1024];
    dp_graph *g;
    dp_cost *c;
    dp_error err;
    ck_assert_msg(dp_hetero_read(path_of(p, sizeof p, "randomgraph_task_exe_time.csv"), &g, &c, &err) == DP_OK, "%s",
                  err.msg);
    dp_list_schedule *s = dp_list_schedule_alloc(g->n_ops, c->n_devices);
    ck_assert_int_eq(dp_list_heft(g, c, s, &err), DP_OK);
    /* mackncheesiest/heft: 184.1923 within 1e-3 relative. Ours is 184.1293 with the same
     * assignment: a valid schedule (checked) 0.063 shorter. Every start and end is that
     * implementation's but task 9's end: its 184.1923 takes task 9 on P_2 as 15.9218 s where the
     * CSV gives 15.8588 (an independent oracle's check, a review). */
    ck_assert(fabs(s->makespan - 184.1923) <= 1e-3 * 184.1923);
    ck_assert_int_eq(dp_list_check(g, c, s, &err), DP_OK);
    const int expect[10] = {2, 0, 1, 0, 2, 2, 1, 0, 1, 2};
    for (int v = 0; v < 10; v++) ck_assert_int_eq(s->device[v], expect[v]);
    dp_list_schedule_free(s);
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

/* nedjulius's HEFT and CPOP makespans (README section 2). That CPOP appends each op after the last
 * op of its device (no insertion) and takes ready ops of equal priority in the order of its C++
 * std::priority_queue (libc++): with append_only and DP_LIST_TIES_HEAP our CPOP gives its
 * makespans and its very schedules on every case, 3-2 and 3-4 included, where every op has the
 * same priority (lowest id first gives 65 and 55 there). */
START_TEST(nedjulius_cross_checks)
{
    static const struct { const char *name; double heft, cpop, cpop_by_id; } cases[] = {
        {"1-2", 16, 16, 16},       {"1-4", 16, 16, 16},       {"2-2", 2001, 2402, 2402}, {"2-4", 2001, 2002, 2002},
        {"3-2", 65, 60, 65},       {"3-4", 50, 50, 55},       {"4-2", 300, 300, 300},    {"4-4", 300, 300, 300},
        {"5-2", 137, 152, 152},    {"5-4", 123, 137, 137},
    };
    int checked = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char p[1024], rel[128];
        snprintf(rel, sizeof rel, "nedjulius-experiments/%s.in", cases[i].name);
        if (access(path_of(p, sizeof p, rel), R_OK) != 0) continue;
        dp_graph *g;
        dp_cost *c;
        dp_error err;
        ck_assert_msg(dp_hetero_read(p, &g, &c, &err) == DP_OK, "%s", err.msg);
        dp_list_schedule *s = dp_list_schedule_alloc(g->n_ops, c->n_devices);
        ck_assert_int_eq(dp_list_heft(g, c, s, &err), DP_OK);
        ck_assert_msg(s->makespan == cases[i].heft, "%s: HEFT %g, reference %g", cases[i].name, s->makespan, cases[i].heft);
        s->append_only = 1;
        ck_assert_int_eq(dp_list_cpop(g, c, s, &err), DP_OK);
        ck_assert_int_eq(dp_list_check(g, c, s, &err), DP_OK);
        ck_assert_msg(s->makespan == cases[i].cpop_by_id, "%s: CPOP by id %g, expected %g", cases[i].name, s->makespan,
                      cases[i].cpop_by_id);
        s->ties = DP_LIST_TIES_HEAP;
        ck_assert_int_eq(dp_list_cpop(g, c, s, &err), DP_OK);
        ck_assert_int_eq(dp_list_check(g, c, s, &err), DP_OK);
        ck_assert_msg(s->makespan == cases[i].cpop, "%s: CPOP %g, reference %g", cases[i].name, s->makespan, cases[i].cpop);
        snprintf(rel, sizeof rel, "nedjulius-experiments/%s--cpop.out", cases[i].name);
        if (access(path_of(p, sizeof p, rel), R_OK) == 0) assert_same_schedule(s, p);
        dp_list_schedule_free(s);
        dp_cost_free(c);
        dp_graph_free(g);
        checked++;
    }
    ck_assert_int_ge(checked, 1);
}
END_TEST

/* HEFT's assignment simulated with its ranks as the queue priorities (work-conserving, ties first
 * come first served) gives HEFT's own schedule length on every nedjulius example: no HEFT
 * schedule there keeps a device idle while a ready op waits for it. On 5-2 FIFO queues give 163
 * (tasks 2 and 3 become ready together on P1 when task 1 ends; FIFO runs 2 first, HEFT runs 3,
 * rank 143 against 95), the priority queue HEFT's 137, start for start. */
START_TEST(priority_queue_realises_heft)
{
    static const char *cases[] = {"1-2", "1-4", "2-2", "2-4", "3-2", "3-4", "4-2", "4-4", "5-2", "5-4"};
    int checked = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char p[1024], rel[128];
        snprintf(rel, sizeof rel, "nedjulius-experiments/%s.in", cases[i]);
        if (access(path_of(p, sizeof p, rel), R_OK) != 0) continue;
        dp_graph *g;
        dp_cost *c;
        dp_error err;
        ck_assert_msg(dp_hetero_read(p, &g, &c, &err) == DP_OK, "%s", err.msg);
        dp_list_schedule *s = dp_list_schedule_alloc(g->n_ops, c->n_devices);
        ck_assert_int_eq(dp_list_heft(g, c, s, &err), DP_OK);
        dp_hisim_options o;
        dp_hisim_options_init(&o);
        o.queue = DP_HISIM_QUEUE_PRIORITY;
        dp_hisim *h = dp_hisim_alloc(g, c, NULL, &o, &err);
        dp_hisim_result r;
        ck_assert_int_eq(dp_hisim_run(h, s->device, s->priority, &r, &err), DP_OK);
        ck_assert_msg(r.makespan == s->makespan, "%s: priority-queue simulation %g, HEFT %g", cases[i], r.makespan,
                      s->makespan);
        if (strcmp(cases[i], "5-2") == 0) {
            ck_assert_double_eq(s->makespan, 137);
            for (int v = 0; v < g->n_ops; v++) ck_assert_double_eq(r.op_start[v], s->start[v]);
            ck_assert_double_eq(sim_makespan(g, c, s->device), 163);
        }
        dp_hisim_free(h);
        dp_list_schedule_free(s);
        dp_cost_free(c);
        dp_graph_free(g);
        checked++;
    }
    ck_assert_int_ge(checked, 1);
}
END_TEST

int main(void)
{
    dir = dp_test_shared();
    if (!dir) {
        return dp_test_missing_data("the shared data");
    }
    char p[1024];
    snprintf(p, sizeof p, "%s/heft-topcuoglu2002", dir);
    if (access(p, R_OK) != 0) {
        return dp_test_missing_data(p);
    }
    Suite *s = suite_create("heft_data");
    TCase *t = tcase_create("heft_data");
    tcase_add_test(t, paper_example_in);
    tcase_add_test(t, canonical_csv);
    tcase_add_test(t, random_graph_184);
    tcase_add_test(t, nedjulius_cross_checks);
    tcase_add_test(t, priority_queue_realises_heft);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
