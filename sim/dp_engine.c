/* dp_engine.c: the one simulation entry point (see dp_engine.h). */
#include "dp_engine.h"
#include "dp_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_hisim.h"
#include "dp_sim.h"

struct dp_engine {
    const dp_graph *g;
    const dp_cost *c;
    dp_sim *fast;      /* the exact DOPPLER-compatible engine, or */
    dp_hisim *general; /* the general engine */
    int priority_queue;
    double *blevel;    /* (n_ops) default priorities of a priority queue */
    long sims, prefix_sims;
    int delta_mode;    /* dp_engine_set_delta: 1 on, 0 off, -1 (the default) by the graph's size */
    long delta_resumed, delta_full, delta_resimulated;
};

/* the most moved ops a delta run passes on to the exact engine's tables (dp_engine_run_delta_moved;
 * a move of annealing or local search moves one or two) */
#define ENGINE_MOVED_MAX 8

struct dp_engine_incumbent {
    dp_engine *e;
    dp_sim_prefix *p;  /* the incumbent's schedule (fast path with delta runs), else NULL */
    int set;           /* 1 once dp_engine_incumbent_set succeeded */
    int delta;         /* p holds the incumbent (delta runs were on at the set) */
    int complete;      /* the last delta run was complete (not stopped by its bound) */
    /* without delta runs: the incumbent's schedule, from its full run (valid until e's next run) */
    dp_engine_schedule sch;
    int have_sch;      /* sch is the incumbent's */
    int cand_sch;      /* sch is the last delta run's candidate's (a full run): the incumbent's once
                          accepted (a rejected one's was returned as the incumbent's: a review) */
    double *busy;      /* (n_devices) the incumbent's compute time per device (delta runs) */
    dp_hisim_delta *hd;/* the general engine's snapshots (where it supports them), else NULL */
    int hdelta;        /* hd holds the incumbent (delta runs were on at the set) */
    /* the exact engine's tables after this incumbent's last run (dp_sim_tables_gen; -1: not
     * known) hold the incumbent's assignment but for the ops last[0..n_last) */
    long gen;
    int last[ENGINE_MOVED_MAX], last_dev[ENGINE_MOVED_MAX], n_last; /* last_dev: their devices in that run */
};

dp_engine *dp_engine_alloc(const dp_graph *g, const dp_cost *c, const dp_machine *m, dp_error *err)
{
    if (!g || !c) {
        dp_error_set(err, DP_EINVAL, "engine: a graph and its cost tables are needed");
        return NULL;
    }
    if (m && m->topology && !m->topo) {
        dp_error_set(err, DP_EINVAL, "engine: machine topology %s is not loaded (dp_machine_load)", m->topology);
        return NULL;
    }
    if (m && m->n_devices != c->n_devices) {
        dp_error_set(err, DP_EINVAL, "engine: the machine has %d devices, the cost tables %d", m->n_devices, c->n_devices);
        return NULL;
    }
    /* the one entry point: no command, search or trainer simulates costs whose makespans would be
     * inf, NaN or overflowing (dp_machine_costs names the machine keys; here the tables may be a
     * caller's own) */
    if (dp_cost_check(g, c, NULL, err) != DP_OK) return NULL;
    dp_engine *e = dp_alloc_calloc(1, sizeof *e);
    if (!e) {
        dp_error_set(err, DP_ENOMEM, "out of memory");
        return NULL;
    }
    e->g = g;
    e->delta_mode = -1;
    e->c = c;
    if (m && dp_machine_general(m)) {
        e->general = dp_hisim_alloc(g, c, m->topo, &m->sim, err);
        e->priority_queue = m->sim.queue == DP_HISIM_QUEUE_PRIORITY;
    } else {
        e->fast = dp_sim_alloc(g, c, err);
    }
    if (!e->fast && !e->general) {
        free(e);
        return NULL;
    }
    if (e->priority_queue) {
        e->blevel = dp_alloc_malloc_n((size_t)g->n_ops, sizeof(double));
        if (!e->blevel) {
            dp_engine_free(e);
            dp_error_set(err, DP_ENOMEM, "out of memory");
            return NULL;
        }
        dp_cost_levels(g, c, e->blevel, NULL);
    }
    return e;
}

void dp_engine_free(dp_engine *e)
{
    if (!e) return;
    dp_sim_free(e->fast);
    dp_hisim_free(e->general);
    free(e->blevel);
    free(e);
}

/* the general engine's result as a schedule (its arrays) */
static void schedule_of_hisim(const dp_hisim_result *r, dp_engine_schedule *out)
{
    *out = (dp_engine_schedule){
        .makespan = r->makespan, .cost = r->penalised_makespan, .n_devices = r->n_devices, .busy = r->busy,
        .op_start = r->op_start, .op_end = r->op_end, .op_ready = r->op_ready, .xfer_start = r->xfer_start,
        .xfer_end = r->xfer_end, .mem_peak = r->mem_peak, .mem_excess = r->mem_excess, .n_transfers = r->n_transfers,
        .transfer_volume = r->transfer_volume, .n_events = r->n_events,
    };
}

static int engine_run(dp_engine *e, const int *assignment, const double *priority, int prefix, dp_engine_schedule *out,
                      dp_error *err)
{
    memset(out, 0, sizeof *out);
    if (!assignment) return dp_error_set(err, DP_EINVAL, "%s: no assignment to simulate", e->g->source);
    int rc;
    if (e->fast) {
        dp_sim_result r;
        rc = prefix ? dp_sim_run_prefix(e->fast, assignment, &r, err) : dp_sim_run(e->fast, assignment, &r, err);
        if (rc != DP_OK) return rc;
        *out = (dp_engine_schedule){
            .makespan = r.makespan, .cost = r.makespan, .n_devices = r.n_devices, .busy = r.busy,
            .op_start = r.op_start, .op_end = r.op_end, .op_ready = r.op_ready, .n_transfers = r.n_transfers,
            .transfer_volume = r.transfer_volume, .n_events = r.n_events,
        };
    } else {
        if (!priority && e->priority_queue) priority = e->blevel;
        dp_hisim_result r;
        rc = prefix ? dp_hisim_run_prefix(e->general, assignment, priority, &r, err)
                    : dp_hisim_run(e->general, assignment, priority, &r, err);
        if (rc != DP_OK) {
            if (rc == DP_ERANGE && !prefix) e->sims++; /* it ran, to the limit it exceeded */
            return rc;
        }
        schedule_of_hisim(&r, out);
    }
    if (prefix) e->prefix_sims++;
    else e->sims++;
    return DP_OK;
}

int dp_engine_run(dp_engine *e, const int *assignment, const double *priority, dp_engine_schedule *out, dp_error *err)
{
    return engine_run(e, assignment, priority, 0, out, err);
}

int dp_engine_run_prefix(dp_engine *e, const int *assignment, const double *priority, dp_engine_schedule *out, dp_error *err)
{
    return engine_run(e, assignment, priority, 1, out, err);
}

int dp_engine_run_batch(dp_engine *e, long n_batch, const int *assignments, const double *priority,
                        double *makespan, double *cost, double *busy, dp_error *err)
{
    const size_t n = (size_t)e->g->n_ops, D = (size_t)e->c->n_devices;
    for (long b = 0; b < n_batch; b++) {
        dp_engine_schedule s;
        int rc = dp_engine_run(e, assignments + (size_t)b * n, priority, &s, err);
        if (rc != DP_OK) {
            dp_error_prefix(err, "assignment %ld", b);
            return rc;
        }
        makespan[b] = s.makespan;
        if (cost) cost[b] = s.cost;
        if (busy) memcpy(busy + (size_t)b * D, s.busy, D * sizeof *busy);
    }
    return DP_OK;
}

void dp_engine_transfers(const dp_engine *e, const int *assignment, const dp_engine_schedule *s, double *start,
                         double *end)
{
    const dp_graph *g = e->g;
    for (int k = 0; k < g->n_edges; k++) {
        int a = assignment[g->edge_src[k]], b = assignment[g->edge_dst[k]];
        if (s->xfer_start) {
            start[k] = a != b ? s->xfer_start[k] : -1;
            end[k] = a != b ? s->xfer_end[k] : -1;
        } else if (a != b) {
            start[k] = s->op_end[g->edge_src[k]];
            end[k] = start[k] + dp_cost_comm(e->c, k, a, b);
        } else {
            start[k] = end[k] = -1;
        }
    }
}

int dp_engine_run_bounded(dp_engine *e, const int *assignment, double bound, double *cost, int *exceeded, dp_error *err)
{
    int ex = 0, rc;
    if (!assignment) return dp_error_set(err, DP_EINVAL, "%s: no assignment to simulate", e->g->source);
    if (e->fast) rc = dp_sim_run_bounded(e->fast, assignment, bound, cost, &ex, err);
    else rc = dp_hisim_run_bounded(e->general, assignment, e->priority_queue ? e->blevel : NULL, bound, cost, &ex, err);
    if (rc == DP_ERANGE) e->sims++; /* it ran, to the limit it exceeded */
    if (rc != DP_OK) return rc;
    e->sims++;
    if (exceeded) *exceeded = ex;
    return DP_OK;
}

dp_engine_incumbent *dp_engine_incumbent_alloc(dp_engine *e, dp_error *err)
{
    dp_engine_incumbent *inc = dp_alloc_calloc(1, sizeof *inc);
    if (inc) {
        inc->e = e;
        inc->gen = -1;
    }
    if (inc && e->fast &&
        (!(inc->p = dp_sim_prefix_alloc(e->g->n_ops, e->c->n_devices)) ||
         !(inc->busy = dp_alloc_malloc_n((size_t)e->c->n_devices, sizeof(double))))) {
        dp_sim_prefix_free(inc->p);
        free(inc);
        inc = NULL;
    }
    if (!inc) {
        dp_error_set(err, DP_ENOMEM, "%s: out of memory for the incumbent's schedule", e->g->source);
        return NULL;
    }
    if (e->general && dp_hisim_delta_supported(e->general) && !(inc->hd = dp_hisim_delta_alloc(e->general, err))) {
        free(inc);
        return NULL;
    }
    return inc;
}

void dp_engine_incumbent_free(dp_engine_incumbent *inc)
{
    if (!inc) return;
    dp_sim_prefix_free(inc->p);
    dp_hisim_delta_free(inc->hd);
    free(inc->busy);
    free(inc);
}

/* the statistics of p's runs since (r0, f0, k0) go to the engine's */
static void delta_count(dp_engine *e, const dp_sim_prefix *p, long r0, long f0, long k0)
{
    e->delta_resumed += p->n_resumed - r0;
    e->delta_full += p->n_full - f0;
    e->delta_resimulated += p->n_resimulated - k0;
}

int dp_engine_incumbent_set(dp_engine_incumbent *inc, const int *assignment, double *cost, dp_error *err)
{
    dp_engine *e = inc->e;
    inc->set = inc->complete = 0;
    inc->delta = e->fast && (e->delta_mode == 1 || (e->delta_mode < 0 && (e->g->n_ops >= DP_ENGINE_DELTA_MIN_OPS ||
                                                                          !dp_sim_op_order_on(e->fast))));
    inc->hdelta = inc->hd && e->delta_mode != 0;
    int rc;
    double c;
    if (inc->hdelta) {
        dp_hisim_result r;
        rc = dp_hisim_delta_set(inc->hd, assignment, &r, err);
        if (rc == DP_ERANGE) e->sims++; /* it ran, to the limit it exceeded */
        if (rc != DP_OK) return rc;
        e->sims++;
        e->delta_full++;
        c = r.penalised_makespan;
    } else if (inc->delta) {
        dp_sim_prefix *p = inc->p;
        const long r0 = p->n_resumed, f0 = p->n_full, k0 = p->n_resimulated;
        dp_sim_result r;
        if ((rc = dp_sim_prefix_set(e->fast, p, assignment, &r, err)) != DP_OK) return rc;
        delta_count(e, p, r0, f0, k0);
        e->sims++;
        c = r.makespan;
    } else {
        if ((rc = dp_engine_run(e, assignment, NULL, &inc->sch, err)) != DP_OK) return rc;
        inc->have_sch = 1;
        c = inc->sch.cost;
    }
    /* the exact engine's tables hold the incumbent (-1 where they do not, or it is not known) */
    inc->gen = e->fast && !inc->delta ? dp_sim_tables_gen(e->fast) : -1;
    inc->n_last = 0;
    inc->set = 1;
    if (cost) *cost = c;
    return DP_OK;
}

int dp_engine_run_delta(dp_engine_incumbent *inc, const int *assignment, double bound, double *cost, int *exceeded,
                        dp_error *err)
{
    return dp_engine_run_delta_moved(inc, assignment, NULL, -1, bound, cost, exceeded, err);
}

int dp_engine_run_delta_moved(dp_engine_incumbent *inc, const int *assignment, const int *moved, int n_moved,
                              double bound, double *cost, int *exceeded, dp_error *err)
{
    dp_engine *e = inc->e;
    if (!inc->set) return dp_error_set(err, DP_EINVAL, "delta run: the incumbent is not set (dp_engine_incumbent_set)");
    if (n_moved > 0 && !moved) return dp_error_set(err, DP_EINVAL, "delta run: %d moved ops and no list", n_moved);
    for (int i = 0; i < n_moved; i++)
        if (moved[i] < 0 || moved[i] >= e->g->n_ops)
            return dp_error_set(err, DP_EINVAL, "%s: delta run: moved op %d is not an op (0..%d)", e->g->source, moved[i],
                                e->g->n_ops - 1);
    const long gen = inc->gen;
    inc->gen = -1;
    int ex = 0, rc;
    inc->complete = inc->have_sch = inc->cand_sch = 0;
    if (inc->hdelta) {
        long r0, f0;
        dp_hisim_delta_stats(inc->hd, &r0, &f0, NULL);
        rc = dp_hisim_run_delta(inc->hd, assignment, bound, cost, &ex, err);
        if (rc == DP_ERANGE) e->sims++; /* it ran, to the limit it exceeded */
        if (rc != DP_OK) return rc;
        long r1, f1;
        dp_hisim_delta_stats(inc->hd, &r1, &f1, NULL);
        e->delta_resumed += r1 - r0;
        e->delta_full += f1 - f0;
        e->sims++;
    } else if (inc->delta) {
        dp_sim_prefix *p = inc->p;
        const long r0 = p->n_resumed, f0 = p->n_full, k0 = p->n_resimulated;
        if ((rc = dp_sim_run_delta(e->fast, p, assignment, bound, cost, &ex, err)) != DP_OK) return rc;
        delta_count(e, p, r0, f0, k0);
        e->sims++;
    } else if (bound == INFINITY) {
        /* a full run: its schedule is the incumbent's if it is accepted */
        if ((rc = dp_engine_run(e, assignment, NULL, &inc->sch, err)) != DP_OK) return rc;
        *cost = inc->sch.cost;
        inc->cand_sch = 1;
    } else if (e->fast) {
        /* the tables differ from assignment at most at the last run's moves and this one's */
        const int named = n_moved >= 0 && n_moved <= ENGINE_MOVED_MAX;
        int ch[2 * ENGINE_MOVED_MAX], k = -1;
        if (gen >= 0 && named) {
            k = 0;
            for (int i = 0; i < inc->n_last; i++) ch[k++] = inc->last[i];
            for (int i = 0; i < n_moved; i++) ch[k++] = moved[i];
        }
        rc = k >= 0 ? dp_sim_run_bounded_changed(e->fast, assignment, gen, ch, k, bound, cost, &ex, err)
                    : dp_sim_run_bounded(e->fast, assignment, bound, cost, &ex, err);
        if (rc == DP_ERANGE) e->sims++; /* it ran, to the limit it exceeded (dp_engine_run_bounded) */
        if (rc != DP_OK) return rc;
        e->sims++;
        if (named) {
            inc->gen = dp_sim_tables_gen(e->fast);
            for (int i = 0; i < n_moved; i++) {
                inc->last[i] = moved[i];
                inc->last_dev[i] = assignment[moved[i]];
            }
            inc->n_last = n_moved;
        }
    } else if ((rc = dp_engine_run_bounded(e, assignment, bound, cost, &ex, err)) != DP_OK) {
        return rc;
    }
    inc->complete = !ex;
    if (exceeded) *exceeded = ex;
    return DP_OK;
}

int dp_engine_incumbent_accept(dp_engine_incumbent *inc, const int *assignment, dp_error *err)
{
    dp_engine *e = inc->e;
    if (!inc->set || !inc->complete)
        return dp_error_set(err, DP_EINVAL, "delta run: only a complete delta run's assignment can become the incumbent");
    if (inc->hdelta) {
        if (!dp_hisim_delta_is_last(inc->hd, assignment))
            return dp_error_set(err, DP_EINVAL, "delta run: the assignment is not the last delta run's");
        const int rc = dp_hisim_delta_commit(inc->hd, assignment, err);
        if (rc == DP_OK) inc->complete = 0;
        return rc;
    }
    if (inc->delta) {
        const int rc = dp_sim_delta_commit(e->fast, inc->p, assignment, err);
        if (rc == DP_OK) inc->complete = 0;
        return rc;
    }
    /* the tables, the last run's, hold the new incumbent (inc->gen stays that run's). Another
     * assignment than the run's (the caller's promise) would leave them holding another than the
     * incumbent, and the next runs' costs wrong: refused where the run's moved ops tell (an
     * earlier candidate accepted after a later one's run gave 50 for 20: a review) */
    for (int i = 0; inc->gen >= 0 && i < inc->n_last; i++)
        if (assignment[inc->last[i]] != inc->last_dev[i])
            return dp_error_set(err, DP_EINVAL, "delta run: the assignment to accept is not the last delta run's (op %d)",
                                inc->last[i]);
    inc->complete = 0;
    inc->have_sch = inc->cand_sch;
    inc->cand_sch = 0;
    inc->n_last = 0;
    return DP_OK;
}

int dp_engine_incumbent_schedule(dp_engine_incumbent *inc, dp_engine_schedule *out, dp_error *err)
{
    if (!inc->set) return dp_error_set(err, DP_EINVAL, "incumbent: not set (dp_engine_incumbent_set)");
    if (inc->hdelta) {
        dp_hisim_result r;
        const int rc = dp_hisim_delta_result(inc->hd, &r, err);
        if (rc == DP_OK) schedule_of_hisim(&r, out);
        return rc;
    }
    if (!inc->delta) {
        if (!inc->have_sch)
            return dp_error_set(err, DP_EINVAL, "incumbent: its schedule was overwritten (a run of another assignment since)");
        *out = inc->sch;
        return DP_OK;
    }
    const dp_sim_prefix *p = inc->p;
    const dp_cost *c = inc->e->c;
    /* each device's compute time summed in its queue order, the order its starts added it in
     * the run: the run's sums bit for bit */
    for (int d = 0; d < c->n_devices; d++) {
        double b = 0;
        for (int i = 0; i < p->dev_n[d]; i++) b += dp_cost_op(c, p->dev_ops[d][i], d);
        inc->busy[d] = b;
    }
    *out = (dp_engine_schedule){
        .makespan = p->makespan, .cost = p->makespan, .n_devices = c->n_devices, .busy = inc->busy,
        .op_start = p->start, .op_end = p->end, .op_ready = p->ready,
    };
    return DP_OK;
}

void dp_engine_set_delta(dp_engine *e, int on)
{
    e->delta_mode = on < 0 ? -1 : on != 0;
}

void dp_engine_set_early_reject(dp_engine *e, int on)
{
    if (e->fast) dp_sim_set_early_reject(e->fast, on);
    if (e->general) dp_hisim_set_early_reject(e->general, on);
}

void dp_engine_delta_stats(const dp_engine *e, long *resumed, long *full, long *resimulated)
{
    if (resumed) *resumed = e->delta_resumed;
    if (full) *full = e->delta_full;
    if (resimulated) *resimulated = e->delta_resimulated;
}

static int engine_cost(void *ctx, const int *assignment, double *cost, dp_error *err)
{
    dp_engine_schedule s;
    int rc = dp_engine_run((dp_engine *)ctx, assignment, NULL, &s, err);
    if (rc == DP_OK) *cost = s.cost;
    return rc;
}

static int engine_cost_bounded(void *ctx, const int *assignment, double bound, double *cost, dp_error *err)
{
    return dp_engine_run_bounded((dp_engine *)ctx, assignment, bound, cost, NULL, err);
}

dp_oracle dp_engine_oracle(dp_engine *e)
{
    return (dp_oracle){.name = "simulator", .cost = engine_cost, .ctx = e, .cost_bounded = engine_cost_bounded,
                       .engine = e, .simulator = e};
}

int dp_engine_is_general(const dp_engine *e)
{
    return e->general != NULL;
}

int dp_engine_priority_queue(const dp_engine *e)
{
    return e->priority_queue;
}

uint64_t dp_engine_fingerprint(const dp_engine *e)
{
    return e->general ? dp_hisim_fingerprint(e->general) : 0;
}

struct dp_hisim *dp_engine_general_sim(dp_engine *e)
{
    return e->general;
}

struct dp_sim *dp_engine_fast_sim(dp_engine *e)
{
    return e->fast;
}

long dp_engine_simulations(const dp_engine *e)
{
    return e->sims;
}

long dp_engine_prefix_simulations(const dp_engine *e)
{
    return e->prefix_sims;
}

const dp_graph *dp_engine_graph(const dp_engine *e)
{
    return e->g;
}

const dp_cost *dp_engine_costs(const dp_engine *e)
{
    return e->c;
}

int dp_engine_write_trace(const dp_engine *e, const int *assignment, const char *path, dp_error *err)
{
    return e->fast ? dp_sim_write_trace(e->fast, assignment, path, err)
                   : dp_hisim_write_trace(e->general, assignment, path, err);
}

size_t dp_engine_oracle_size(void)
{
    return sizeof(dp_oracle);
}

size_t dp_engine_schedule_size(void)
{
    return sizeof(dp_engine_schedule);
}

double dp_engine_schedule_get_makespan(const dp_engine_schedule *s) { return s->makespan; }
double dp_engine_schedule_get_cost(const dp_engine_schedule *s) { return s->cost; }
double dp_engine_schedule_get_mem_excess(const dp_engine_schedule *s) { return s->mem_excess; }
long dp_engine_schedule_get_n_transfers(const dp_engine_schedule *s) { return s->n_transfers; }
double dp_engine_schedule_get_transfer_volume(const dp_engine_schedule *s) { return s->transfer_volume; }
long dp_engine_schedule_get_n_events(const dp_engine_schedule *s) { return s->n_events; }
const double *dp_engine_schedule_get_busy(const dp_engine_schedule *s) { return s->busy; }
const double *dp_engine_schedule_get_op_start(const dp_engine_schedule *s) { return s->op_start; }
const double *dp_engine_schedule_get_op_end(const dp_engine_schedule *s) { return s->op_end; }
const double *dp_engine_schedule_get_op_ready(const dp_engine_schedule *s) { return s->op_ready; }
const double *dp_engine_schedule_get_mem_peak(const dp_engine_schedule *s) { return s->mem_peak; }
