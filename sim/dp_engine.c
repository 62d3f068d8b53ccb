/* dp_engine.c: the one simulation entry point (see dp_engine.h). */
#include "dp_engine.h"
#include "dp_alloc.h"

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

static int engine_run(dp_engine *e, const int *assignment, const double *priority, int prefix, dp_engine_schedule *out,
                      dp_error *err)
{
    memset(out, 0, sizeof *out);
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
        if (rc != DP_OK) return rc;
        *out = (dp_engine_schedule){
            .makespan = r.makespan, .cost = r.penalised_makespan, .n_devices = r.n_devices, .busy = r.busy,
            .op_start = r.op_start, .op_end = r.op_end, .op_ready = r.op_ready, .xfer_start = r.xfer_start,
            .xfer_end = r.xfer_end, .mem_peak = r.mem_peak, .mem_excess = r.mem_excess, .n_transfers = r.n_transfers,
            .transfer_volume = r.transfer_volume, .n_events = r.n_events,
        };
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
    if (e->fast) rc = dp_sim_run_bounded(e->fast, assignment, bound, cost, &ex, err);
    else rc = dp_hisim_run_bounded(e->general, assignment, e->priority_queue ? e->blevel : NULL, bound, cost, &ex, err);
    if (rc != DP_OK) return rc;
    e->sims++;
    if (exceeded) *exceeded = ex;
    return DP_OK;
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
                       .engine = e};
}

int dp_engine_is_general(const dp_engine *e)
{
    return e->general != NULL;
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
