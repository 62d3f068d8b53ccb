/* dp_sim_shared.h (internal): what the two engines share, written once.
 *
 * The exact DOPPLER-compatible engine (dp_sim.c) and the general engine (dp_hisim.c) run the same
 * events in the same order (dp_sim.h); where their handlers do the same thing, they call these.
 * Everything here is static inline: the exact engine's loop stays as fast as it was.
 */
#ifndef DP_SIM_SHARED_H
#define DP_SIM_SHARED_H

#include "dp_graph.h"

#include <float.h>
#include <jansson.h>

/* Early rejection (issue 31; dp_sim_set_early_reject, dp_hisim_set_early_reject): a device busy
 * until end, with rest seconds of work not yet started, runs that work one op at a time and never
 * faster than its op times, so no schedule ends before end + rest. rest is a difference of
 * floating-point sums of op times and a device's last end a sum of as many, each within a
 * relative (terms) DBL_EPSILON or so of its exact value; dp_sim_lb_scale(terms), 1 less 1e-9 and
 * 8 terms DBL_EPSILON, scales the bound down below that rounding, so dp_sim_work_lb never
 * exceeds the makespan. */
static inline double dp_sim_lb_scale(double terms)
{
    return 1 - (1e-9 + 8.0 * terms * DBL_EPSILON);
}

static inline __attribute__((always_inline)) double dp_sim_work_lb(double end, double rest, double lb_scale)
{
    return (end + rest) * lb_scale;
}

/* The copies op u's finish sends, in edge order: send(s, e, du, dv) for every successor edge e
 * of u whose consumer is placed (device >= 0: an absent op of a prefix run is not), du and dv
 * being the producer's and the consumer's devices (equal for a local edge). With first_copy
 * (per edge, 1 for the first edge of its (u, consumer) pair), only first copies are sent (the
 * general engine); with NULL every edge is (the exact engine, as the reference simulator: the
 * repeated edges' copies are counted, and ignored when they arrive). Always inlined, so that send
 * is a known callee where it is called: the exact engine's send is always_inline itself, which
 * would not build at -O1 otherwise ("indirect function call with a yet undetermined callee"). */
static inline __attribute__((always_inline)) void dp_sim_send_outputs(const dp_graph *g, const int *dev, int u,
                                                                     const unsigned char *first_copy,
                                                                     void (*send)(void *s, int e, int du, int dv),
                                                                     void *s)
{
    const int du = dev[u];
    for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
        if (first_copy && !first_copy[e]) continue;
        int dv = dev[g->edge_dst[e]];
        if (dv < 0) continue;
        send(s, e, du, dv);
    }
}

/* The fields every engine's result begins with (dp_sim_result, dp_hisim_result), from an
 * engine's records of the same names: its makespan, device count D, busy, n_transfers, volume,
 * start, end, ready and n_events (the arrays stay the engine's). */
#define DP_SIM_RESULT_RECORDS(res, s)            \
    do {                                         \
        (res)->makespan = (s)->makespan;         \
        (res)->n_devices = (s)->D;               \
        (res)->busy = (s)->busy;                 \
        (res)->n_transfers = (s)->n_transfers;   \
        (res)->transfer_volume = (s)->volume;    \
        (res)->op_start = (s)->start;            \
        (res)->op_end = (s)->end;                \
        (res)->op_ready = (s)->ready;            \
        (res)->n_events = (s)->n_events;         \
    } while (0)

/* A Chrome trace's root object ({"displayTimeUnit": "ms", "otherData": {"graph": ...,
 * "time_unit": ...}}); *meta is its otherData, for the engine to add to (the root owns it). */
static inline json_t *dp_sim_trace_root(const dp_graph *g, json_t **meta)
{
    json_t *root = json_object();
    json_object_set_new(root, "displayTimeUnit", json_string("ms"));
    *meta = json_object();
    json_object_set_new(*meta, "graph", json_string(g->name));
    json_object_set_new(*meta, "time_unit", json_string(g->time_unit));
    json_object_set_new(root, "otherData", *meta);
    return root;
}

#endif
