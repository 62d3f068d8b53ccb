/* test_hisim_delta: the general engine's delta runs (sim/dp_hisim.h "delta runs", issue 31 item
 * 1): a run resumed from a snapshot of the incumbent's run gives dp_hisim_run_bounded's verdict
 * and, within the bound, its cost bit for bit, on every machine option that supports them; a
 * committed candidate's result is dp_hisim_run's bit for bit; the searches take the same moves
 * with delta runs on and off. */
#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_graph.h"
#include "dp_hisim.h"
#include "dp_machine.h"
#include "dp_search.h"
#include "dp_test.h"

#include <gsl/gsl_rng.h>
#include <math.h>

/* A random DAG of n ops in FLOPs and bytes: each op after the first few takes 1 to 3 inputs from
 * earlier ops (some repeated), works and sizes on a coarse grid so that events coincide. */
static dp_graph *random_graph(gsl_rng *r, int n)
{
    dp_graph_builder *b = dp_graph_builder_alloc("rnd", "rnd", DP_GRAPH_COST_PHYSICAL);
    for (int i = 0; i < n; i++)
        dp_graph_builder_add_op(b, NULL, i % 3 ? "matmul" : "add", (double)(1 + gsl_rng_uniform_int(r, 4)) * 1e10,
                                (double)(1 + gsl_rng_uniform_int(r, 3)) * 4e7);
    for (int v = 3; v < n; v++) {
        const int k = 1 + (int)gsl_rng_uniform_int(r, 3);
        for (int j = 0; j < k; j++) {
            const int u = (int)gsl_rng_uniform_int(r, (unsigned long)v);
            dp_graph_builder_add_edge(b, u, v, (double)(1 + gsl_rng_uniform_int(r, 3)) * 4e7);
        }
    }
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

static void same_result(const dp_hisim_result *a, const dp_hisim_result *b, int n, int m, int D, const char *what)
{
    ck_assert_msg(a->makespan == b->makespan, "%s: makespan %.17g != %.17g", what, a->makespan, b->makespan);
    ck_assert_msg(a->penalised_makespan == b->penalised_makespan, "%s: penalised", what);
    ck_assert_msg(a->mem_excess == b->mem_excess, "%s: excess", what);
    ck_assert_msg(a->n_transfers == b->n_transfers && a->transfer_volume == b->transfer_volume, "%s: transfers", what);
    ck_assert_msg(a->n_events == b->n_events, "%s: events %ld != %ld", what, a->n_events, b->n_events);
    for (int d = 0; d < D; d++) {
        ck_assert_msg(a->busy[d] == b->busy[d], "%s: busy %d", what, d);
        ck_assert_msg(a->mem_peak[d] == b->mem_peak[d], "%s: peak %d", what, d);
    }
    for (int v = 0; v < n; v++) {
        ck_assert_msg(a->op_start[v] == b->op_start[v] && a->op_end[v] == b->op_end[v] && a->op_ready[v] == b->op_ready[v],
                      "%s: op %d %.17g %.17g against %.17g %.17g", what, v, a->op_start[v], a->op_end[v], b->op_start[v],
                      b->op_end[v]);
        ck_assert_msg(a->op_stream[v] == b->op_stream[v], "%s: stream of op %d", what, v);
    }
    for (int e = 0; e < m; e++)
        ck_assert_msg(a->xfer_request[e] == b->xfer_request[e] && a->xfer_start[e] == b->xfer_start[e] &&
                      a->xfer_end[e] == b->xfer_end[e], "%s: edge %d %.17g %.17g against %.17g %.17g", what, e,
                      a->xfer_start[e], a->xfer_end[e], b->xfer_start[e], b->xfer_end[e]);
}

/* the machines: every transfer model, chunks, streams, copy engines on and off, a memory limit
 * under either policy, interference (a calibration that slows ops by copies and busy peers), and
 * the uniform machine's general engine (two streams). NULL-ended key, value lists. */
static const char *const M_FIXED[] = {"topology", "pcie-gen3-4gpu", "transfer", "fixed", NULL};
static const char *const M_FIFO[] = {"topology", "pcie-gen3-4gpu", "transfer", "fifo", "chunks", "3", NULL};
static const char *const M_MAXMIN[] = {"topology", "dgx1-v100", "transfer", "maxmin", NULL};
static const char *const M_STREAMS[] = {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", "streams", "2", NULL};
static const char *const M_NO_CE[] = {"topology", "dgx1-v100", "transfer", "fifo", "copy_engines", "off", NULL};
static const char *const M_PENALTY[] = {"topology", "pcie-gen3-4gpu", "transfer", "maxmin", "memory_limit", "6e8",
                                        "memory_policy", "penalty", "memory_penalty", "2", NULL};
static const char *const M_ERROR[] = {"topology", "pcie-gen3-4gpu", "transfer", "fifo", "memory_limit", "1.6e9", NULL};
static const char *const M_UNIFORM[] = {"streams", "2", NULL};

typedef struct delta_case {
    dp_machine m;
    dp_graph *g;
    dp_cost *c;
    dp_hisim *s, *ref;
    dp_hisim_delta *d;
} delta_case;

static void case_make(delta_case *x, const char *const *kv, const char *calib, gsl_rng *r, int n)
{
    dp_error err;
    dp_test_machine_make(&x->m, kv);
    if (calib) {
        char buf[1024];
        ck_assert_msg(dp_machine_set(&x->m, "calibration", dp_test_path(buf, sizeof buf, dp_test_srcdir(), calib), &err) ==
                      DP_OK, "%s", err.msg);
        ck_assert_msg(dp_machine_load(&x->m, &err) == DP_OK, "%s", err.msg);
    }
    x->g = random_graph(r, n);
    x->c = dp_machine_costs(&x->m, x->g, &err);
    ck_assert_msg(x->c != NULL, "%s", err.msg);
    x->s = dp_hisim_alloc(x->g, x->c, x->m.topo, &x->m.sim, &err);
    x->ref = dp_hisim_alloc(x->g, x->c, x->m.topo, &x->m.sim, &err);
    ck_assert_msg(x->s && x->ref, "%s", err.msg);
    ck_assert(dp_hisim_delta_supported(x->s));
    x->d = dp_hisim_delta_alloc(x->s, &err);
    ck_assert_msg(x->d != NULL, "%s", err.msg);
}

static void case_free(delta_case *x)
{
    dp_hisim_delta_free(x->d);
    dp_hisim_free(x->s);
    dp_hisim_free(x->ref);
    dp_cost_free(x->c);
    dp_graph_free(x->g);
    dp_machine_free(&x->m);
}

/* moves moves of one or two ops from a random incumbent, each against dp_hisim_run_bounded on a
 * second workspace; a share commit of those within the bound committed and compared with
 * dp_hisim_run (a small share: commits run again from their snapshot; a large one: delta runs
 * record, DELTA_RECORD_RATE). Returns the runs resumed from a snapshot. */
static long random_moves(delta_case *x, gsl_rng *r, int moves, double commit, const char *what)
{
    const int n = x->g->n_ops, m = x->g->n_edges, D = x->c->n_devices;
    int *a = malloc(sizeof(int) * (size_t)n), *inc = malloc(sizeof(int) * (size_t)n);
    dp_error err;
    int rc = DP_ERANGE;
    dp_hisim_result rd, rr;
    /* an incumbent within the memory limit (the error policy refuses the others) */
    for (int tries = 0; rc == DP_ERANGE && tries < 200; tries++) {
        for (int v = 0; v < n; v++) a[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        rc = dp_hisim_delta_set(x->d, a, &rd, &err);
    }
    ck_assert_msg(rc == DP_OK, "%s: %s", what, err.msg);
    ck_assert_int_eq(dp_hisim_run(x->ref, a, NULL, &rr, &err), DP_OK);
    same_result(&rd, &rr, n, m, D, what);
    memcpy(inc, a, sizeof(int) * (size_t)n);
    double inc_cost = rd.penalised_makespan;
    int commits = 0, over = 0, within = 0, errors = 0;
    for (int k = 0; k < moves; k++) {
        const int u = (int)gsl_rng_uniform_int(r, (unsigned long)n);
        a[u] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        if (gsl_rng_uniform(r) < 0.3) {
            const int v = (int)gsl_rng_uniform_int(r, (unsigned long)n);
            a[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
        }
        const double bound = gsl_rng_uniform(r) < 0.2 ? INFINITY : inc_cost * (0.85 + 0.3 * gsl_rng_uniform(r));
        double cd = -1, cr = -1;
        int ed = -1, er = -1;
        const int rcd = dp_hisim_run_delta(x->d, a, bound, &cd, &ed, &err);
        const int rcr = dp_hisim_run_bounded(x->ref, a, NULL, bound, &cr, &er, &err);
        ck_assert_msg(rcd == rcr, "%s move %d: delta rc %d, full rc %d", what, k, rcd, rcr);
        if (rcd != DP_OK) {
            errors++;
            memcpy(a, inc, sizeof(int) * (size_t)n);
            continue;
        }
        ck_assert_msg(ed == er, "%s move %d: verdict %d against %d (cost %.17g, %.17g, bound %.17g)", what, k, ed, er, cd, cr,
                      bound);
        if (!er) ck_assert_msg(cd == cr, "%s move %d: cost %.17g against %.17g", what, k, cd, cr);
        else ck_assert_msg(cd > bound, "%s move %d: over the bound at %.17g <= %.17g", what, k, cd, bound);
        over += er;
        within += !er;
        if (!ed && gsl_rng_uniform(r) < commit) {
            ck_assert_msg(dp_hisim_delta_commit(x->d, a, &err) == DP_OK, "%s: %s", what, err.msg);
            ck_assert_int_eq(dp_hisim_delta_result(x->d, &rd, &err), DP_OK);
            ck_assert_int_eq(dp_hisim_run(x->ref, a, NULL, &rr, &err), DP_OK);
            same_result(&rd, &rr, n, m, D, what);
            memcpy(inc, a, sizeof(int) * (size_t)n);
            inc_cost = rd.penalised_makespan;
            commits++;
        } else {
            memcpy(a, inc, sizeof(int) * (size_t)n);
        }
    }
    ck_assert_msg(commits > 5 && over > 5 && within > 5, "%s: %d commits, %d over, %d within the bound", what, commits, over,
                  within);
    if (getenv("DP_TEST_VERBOSE")) fprintf(stderr, "%s: %d commits, %d over, %d within, %d errors\n", what, commits, over, within, errors);
    long resumed;
    dp_hisim_delta_stats(x->d, &resumed, NULL, NULL);
    free(a);
    free(inc);
    return resumed;
}

START_TEST(delta_same_as_full_on_every_option)
{
    const char *const *machines[] = {M_FIXED, M_FIFO, M_MAXMIN, M_STREAMS, M_NO_CE, M_PENALTY, M_ERROR, M_UNIFORM};
    const char *names[] = {"fixed", "fifo 3 chunks", "maxmin dgx1", "2 streams", "no copy engines", "penalty", "error policy",
                           "uniform 2 streams"};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    for (size_t i = 0; i < sizeof machines / sizeof *machines; i++)
        for (int rep = 0; rep < 3; rep++) {
            delta_case x;
            case_make(&x, machines[i], NULL, r, 20 + 25 * rep);
            char what[96];
            snprintf(what, sizeof what, "%s, graph %d", names[i], rep);
            const long resumed = random_moves(&x, r, 300, rep == 1 ? 0.95 : 0.3, what);
            ck_assert_msg(resumed > 30, "%s: %ld runs resumed from a snapshot", what, resumed);
            case_free(&x);
        }
    gsl_rng_free(r);
}
END_TEST

/* interference (a calibration of two CPU cores whose copies and busy peers slow ops: op ends
 * move, stale end events stay in the heap) */
START_TEST(delta_same_as_full_with_interference)
{
    static const char *const kv[] = {"topology", "cpu-2core", NULL};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 32);
    for (int rep = 0; rep < 3; rep++) {
        delta_case x;
        case_make(&x, kv, "data/calibrations/cpu-2core.json", r, 25 + 15 * rep);
        const long resumed = random_moves(&x, r, 300, rep == 1 ? 0.95 : 0.3, "interference");
        ck_assert_msg(resumed > 30, "%ld runs resumed", resumed);
        case_free(&x);
    }
    gsl_rng_free(r);
}
END_TEST

/* Events that vanish in rounding: op times of 1e17 s and transfers of 1 s (time costs), so a
 * transfer's end is its start and events keep coming at an instant after its first ones ran. A
 * snapshot is only taken before the first event of an instant (snap_take's next > now): one
 * taken between the events of an instant is not the state before it. Uniform machine, two
 * streams a device (the general engine). */
START_TEST(delta_same_as_full_with_vanishing_delays)
{
    static const char *const kv[] = {"streams", "2", NULL};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77);
    for (int rep = 0; rep < 4; rep++) {
        const int n = 30 + 10 * rep;
        dp_graph_builder *b = dp_graph_builder_alloc("vanish", "vanish", DP_GRAPH_COST_TIME);
        for (int i = 0; i < n; i++)
            dp_graph_builder_add_op(b, NULL, NULL, gsl_rng_uniform(r) < 0.5 ? 1e17 : (double)(1 + gsl_rng_uniform_int(r, 3)),
                                    1);
        for (int v = 2; v < n; v++) {
            const int k = 1 + (int)gsl_rng_uniform_int(r, 2);
            for (int j = 0; j < k; j++) dp_graph_builder_add_edge(b, (int)gsl_rng_uniform_int(r, (unsigned long)v), v, 1);
        }
        dp_error err;
        delta_case x;
        dp_test_machine_make(&x.m, kv);
        x.g = dp_graph_builder_finish(b, &err);
        dp_graph_builder_free(b);
        ck_assert_msg(x.g != NULL, "%s", err.msg);
        x.c = dp_machine_costs(&x.m, x.g, &err);
        ck_assert_msg(x.c != NULL, "%s", err.msg);
        x.s = dp_hisim_alloc(x.g, x.c, x.m.topo, &x.m.sim, &err);
        x.ref = dp_hisim_alloc(x.g, x.c, x.m.topo, &x.m.sim, &err);
        x.d = dp_hisim_delta_alloc(x.s, &err);
        ck_assert_msg(x.s && x.ref && x.d, "%s", err.msg);
        random_moves(&x, r, 400, rep % 2 ? 0.95 : 0.3, "vanishing delays");
        case_free(&x);
    }
    gsl_rng_free(r);
}
END_TEST

/* The snapshots' memory is estimated from what a snapshot saves, the transfer model's state
 * included: FIFO chunk positions and links, 8 bytes a chunk, were left out of an estimate by op
 * and edge counts (1,024 chunks an edge: 748 MB of snapshots where a run takes 39 MB, a review);
 * and a graph whose snapshots would pass the cap keeps fewer. */
START_TEST(delta_snapshot_bytes_count_the_transfer_model)
{
    static const char *const kv[] = {"topology", "pcie-gen3-4gpu", "transfer", "fifo", "chunks", "1024", NULL};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 8);
    delta_case x;
    case_make(&x, kv, NULL, r, 60);
    double bytes;
    const int K = dp_hisim_delta_slots(x.d, &bytes);
    ck_assert_msg(bytes >= 8.0 * ((double)x.g->n_edges + 1) * 1024, "%.0f bytes a snapshot for %d edges of 1,024 chunks",
                  bytes, x.g->n_edges);
    ck_assert(K >= 1 && 2.0 * K * bytes <= 256.0 * 1024 * 1024);
    case_free(&x);
    gsl_rng_free(r);
}
END_TEST

/* priority queues and bulk-synchronous mode have no delta runs: refused, and the engine's
 * searches run each candidate in full there */
START_TEST(delta_refused_where_unsupported)
{
    static const char *const prio[] = {"topology", "pcie-gen3-4gpu", "queue", "priority", NULL};
    static const char *const bsp[] = {"topology", "pcie-gen3-4gpu", "mode", "bsp", NULL};
    const char *const *ms[] = {prio, bsp};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    for (int i = 0; i < 2; i++) {
        dp_machine m;
        dp_test_machine_make(&m, ms[i]);
        dp_graph *g = random_graph(r, 12);
        dp_error err;
        dp_cost *c = dp_machine_costs(&m, g, &err);
        dp_hisim *s = dp_hisim_alloc(g, c, m.topo, &m.sim, &err);
        ck_assert(s && !dp_hisim_delta_supported(s));
        ck_assert(dp_hisim_delta_alloc(s, &err) == NULL);
        ck_assert_int_eq(err.code, DP_EINVAL);
        dp_hisim_free(s);
        dp_cost_free(c);
        dp_graph_free(g);
        dp_machine_free(&m);
    }
    gsl_rng_free(r);
}
END_TEST

/* A commit of the last delta run, complete and recorded, takes no run; any other assignment is
 * committed by a run from the incumbent's snapshot (a run stopped by its bound, another
 * assignment than the last run's): the incumbent is then that assignment's full run. Without an
 * incumbent, runs and commits are refused. */
START_TEST(delta_commit_any_assignment)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    delta_case x;
    case_make(&x, M_MAXMIN, NULL, r, 30);
    const int n = x.g->n_ops;
    int a[30], b[30];
    dp_error err;
    for (int v = 0; v < n; v++) a[v] = v % 4;
    double cost;
    int ex;
    ck_assert_int_eq(dp_hisim_run_delta(x.d, a, INFINITY, &cost, &ex, &err), DP_EINVAL); /* no incumbent */
    ck_assert_int_eq(dp_hisim_delta_commit(x.d, a, &err), DP_EINVAL);
    dp_hisim_result rd, rr;
    ck_assert_int_eq(dp_hisim_delta_set(x.d, a, &rd, &err), DP_OK);
    /* a delta run checks the ops it moved: a device out of range, a placed op whose producer is
     * absent (a run that removes an op runs in full, checking every op) */
    memcpy(b, a, sizeof b);
    b[n - 1] = x.c->n_devices;
    ck_assert_int_eq(dp_hisim_run_delta(x.d, b, INFINITY, &cost, &ex, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "outside 0.."));
    int w = -1;
    for (int v = 0; v < n && w < 0; v++)
        if (x.g->pred_ptr[v + 1] > x.g->pred_ptr[v]) w = v;
    memcpy(b, a, sizeof b);
    b[x.g->edge_src[x.g->pred_edge[x.g->pred_ptr[w]]]] = -1;
    ck_assert_int_eq(dp_hisim_run_delta(x.d, b, INFINITY, &cost, &ex, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "is placed but its predecessor"));
    ck_assert_int_eq(dp_hisim_delta_result(x.d, &rd, &err), DP_OK); /* the incumbent as it was */
    ck_assert_int_eq(dp_hisim_run(x.ref, a, NULL, &rr, &err), DP_OK);
    same_result(&rd, &rr, n, x.g->n_edges, x.c->n_devices, "incumbent after refused runs");
    memcpy(b, a, sizeof b);
    b[n - 1] = (b[n - 1] + 1) % 4;
    ck_assert_int_eq(dp_hisim_run_delta(x.d, b, 0, &cost, &ex, &err), DP_OK); /* stopped by its bound */
    ck_assert(ex && !dp_hisim_delta_is_last(x.d, b));
    ck_assert_int_eq(dp_hisim_delta_commit(x.d, b, &err), DP_OK);
    ck_assert_int_eq(dp_hisim_delta_result(x.d, &rd, &err), DP_OK);
    ck_assert_int_eq(dp_hisim_run(x.ref, b, NULL, &rr, &err), DP_OK);
    same_result(&rd, &rr, n, x.g->n_edges, x.c->n_devices, "commit after a bounded run");
    b[3] = (b[3] + 1) % 4;
    ck_assert_int_eq(dp_hisim_run_delta(x.d, b, INFINITY, &cost, &ex, &err), DP_OK);
    ck_assert(!ex && dp_hisim_delta_is_last(x.d, b));
    b[0] = (b[0] + 1) % 4; /* not the run's assignment */
    ck_assert(!dp_hisim_delta_is_last(x.d, b));
    ck_assert_int_eq(dp_hisim_delta_commit(x.d, b, &err), DP_OK);
    ck_assert_int_eq(dp_hisim_delta_result(x.d, &rd, &err), DP_OK);
    ck_assert_int_eq(dp_hisim_run(x.ref, b, NULL, &rr, &err), DP_OK);
    same_result(&rd, &rr, n, x.g->n_edges, x.c->n_devices, "commit of another assignment");
    /* most runs committed: delta runs record; a plain run of the workspace between a delta run
     * and its commit overwrites the run's records in s, so the commit runs again */
    for (int k = 0; k < 30; k++) {
        b[k % n] = (b[k % n] + 1) % 4;
        ck_assert_int_eq(dp_hisim_run_delta(x.d, b, INFINITY, &cost, &ex, &err), DP_OK);
        ck_assert_int_eq(dp_hisim_delta_commit(x.d, b, &err), DP_OK);
    }
    b[7] = (b[7] + 1) % 4;
    ck_assert_int_eq(dp_hisim_run_delta(x.d, b, INFINITY, &cost, &ex, &err), DP_OK);
    ck_assert_int_eq(dp_hisim_run(x.s, a, NULL, &rr, &err), DP_OK); /* another assignment, plainly */
    ck_assert_int_eq(dp_hisim_delta_commit(x.d, b, &err), DP_OK);
    ck_assert_int_eq(dp_hisim_delta_result(x.d, &rd, &err), DP_OK);
    ck_assert_int_eq(dp_hisim_run(x.ref, b, NULL, &rr, &err), DP_OK);
    same_result(&rd, &rr, n, x.g->n_edges, x.c->n_devices, "commit after a plain run of the workspace");
    case_free(&x);
    gsl_rng_free(r);
}
END_TEST

/* The assignment environment's use: the incumbent a placed prefix (ops of device -1 absent), each
 * candidate the prefix plus one ready op on each device (dp_hisim_run_delta_result: the full
 * prefix run's records), one of them committed; ops added in a random topological order. Every
 * candidate's records are dp_hisim_run_prefix's, and the placed ops' outputs are held for the
 * new op (memory: peaks equal, penalties and errors included). */
START_TEST(delta_prefix_growth)
{
    const char *const *machines[] = {M_FIXED, M_FIFO, M_MAXMIN, M_STREAMS, M_PENALTY, M_ERROR, M_UNIFORM};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 41);
    for (size_t i = 0; i < sizeof machines / sizeof *machines; i++) {
        delta_case x;
        case_make(&x, machines[i], NULL, r, 40);
        const dp_graph *g = x.g;
        const int n = g->n_ops, m = g->n_edges, D = x.c->n_devices;
        int *a = malloc(sizeof(int) * (size_t)n), *left = malloc(sizeof(int) * (size_t)n), *ready = malloc(sizeof(int) * (size_t)n);
        int n_ready = 0;
        for (int v = 0; v < n; v++) {
            a[v] = -1;
            left[v] = g->pred_ptr[v + 1] - g->pred_ptr[v];
            if (!left[v]) ready[n_ready++] = v;
        }
        dp_error err;
        dp_hisim_result rd, rr;
        ck_assert_int_eq(dp_hisim_delta_set(x.d, a, &rd, &err), DP_OK);
        int steps = 0, errors = 0;
        while (n_ready > 0) {
            const int k = (int)gsl_rng_uniform_int(r, (unsigned long)n_ready), v = ready[k];
            int chosen = -1;
            for (int dev = 0; dev < D; dev++) {
                a[v] = dev;
                const int rc = dp_hisim_run_delta_result(x.d, a, &rd, &err);
                const int rcr = dp_hisim_run_prefix(x.ref, a, NULL, &rr, &err);
                ck_assert_msg(rc == rcr, "machine %zu step %d device %d: rc %d against %d", i, steps, dev, rc, rcr);
                if (rc != DP_OK) {
                    errors++;
                    continue;
                }
                char what[64];
                snprintf(what, sizeof what, "machine %zu step %d device %d", i, steps, dev);
                same_result(&rd, &rr, n, m, D, what);
                if (chosen < 0 || gsl_rng_uniform(r) < 0.3) chosen = dev;
            }
            if (chosen < 0) break; /* every device over the memory limit: the prefix ends here */
            a[v] = chosen;
            ck_assert_msg(dp_hisim_delta_commit(x.d, a, &err) == DP_OK, "%s", err.msg);
            if (steps % 7 == 0) {
                ck_assert_int_eq(dp_hisim_delta_result(x.d, &rd, &err), DP_OK);
                ck_assert_int_eq(dp_hisim_run_prefix(x.ref, a, NULL, &rr, &err), DP_OK);
                same_result(&rd, &rr, n, m, D, "committed prefix");
            }
            ready[k] = ready[--n_ready];
            for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
                if (--left[g->edge_dst[e]] == 0) ready[n_ready++] = g->edge_dst[e];
            steps++;
        }
        ck_assert_int_ge(steps, 10);
        long resumed;
        dp_hisim_delta_stats(x.d, &resumed, NULL, NULL);
        ck_assert_msg(resumed > steps, "machine %zu: %ld of %d steps' runs resumed", i, resumed, steps * D);
        if (getenv("DP_TEST_VERBOSE")) fprintf(stderr, "prefix machine %zu: %d steps, %ld resumed, %d errors\n", i, steps, resumed, errors);
        free(a);
        free(left);
        free(ready);
        case_free(&x);
    }
    gsl_rng_free(r);
}
END_TEST

/* annealing and local search through the engine: the same result and placement with delta runs
 * on (snapshots) and off (every candidate in full), on the general engine */
START_TEST(searches_same_with_and_without_delta)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9);
    const char *const *machines[] = {M_MAXMIN, M_FIFO, M_PENALTY};
    for (int i = 0; i < 3; i++) {
        dp_machine m;
        dp_test_machine_make(&m, machines[i]);
        dp_graph *g = random_graph(r, 60);
        dp_error err;
        dp_cost *c = dp_machine_costs(&m, g, &err);
        dp_engine *e = dp_engine_alloc(g, c, &m, &err);
        ck_assert_msg(e != NULL, "%s", err.msg);
        const dp_oracle o = dp_engine_oracle(e);
        int best[2][60];
        double cost[2];
        for (int annealing = 1; annealing >= 0; annealing--) {
            for (int on = 0; on < 2; on++) {
                dp_engine_set_delta(e, on);
                dp_search_anneal_config cfg;
                dp_search_anneal_config_init(&cfg);
                cfg.budget = 3000;
                dp_search_result res;
                const int rc = annealing ? dp_search_anneal(g, c, &o, &cfg, 7, best[on], &res, &err)
                                         : dp_search_local(g, c, &o, &cfg, 7, best[on], &res, &err);
                ck_assert_msg(rc == DP_OK, "%s", err.msg);
                cost[on] = res.best;
                dp_search_trace_clear(&res.trace);
            }
            ck_assert_msg(cost[0] == cost[1], "machine %d, %s: %.17g without delta runs, %.17g with", i,
                          annealing ? "annealing" : "local search", cost[0], cost[1]);
            ck_assert(memcmp(best[0], best[1], sizeof(int) * (size_t)g->n_ops) == 0);
        }
        long resumed;
        dp_engine_delta_stats(e, &resumed, NULL, NULL);
        ck_assert_msg(resumed > 500, "machine %d: %ld runs resumed", i, resumed);
        dp_engine_free(e);
        dp_cost_free(c);
        dp_graph_free(g);
        dp_machine_free(&m);
    }
    gsl_rng_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hisim_delta");
    TCase *t = tcase_create("delta");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, delta_same_as_full_on_every_option);
    tcase_add_test(t, delta_same_as_full_with_interference);
    tcase_add_test(t, delta_same_as_full_with_vanishing_delays);
    tcase_add_test(t, delta_snapshot_bytes_count_the_transfer_model);
    tcase_add_test(t, delta_refused_where_unsupported);
    tcase_add_test(t, delta_commit_any_assignment);
    tcase_add_test(t, delta_prefix_growth);
    tcase_add_test(t, searches_same_with_and_without_delta);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
