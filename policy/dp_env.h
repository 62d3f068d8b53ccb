/* dp_env.h: the assignment environment, the sequential decision process both DOPPLER policies
 * and the list heuristics act in (Yao et al. 2026, section "the decision process").
 *
 * State: the ready set (unassigned ops whose predecessors are all assigned; it starts with the
 * sources), the partial assignment, and per-device estimates. A step assigns one ready op v to a
 * device d: v's estimated start is
 *
 *   est(v, d) = max( avail(d), max over in-edges e = (u, v) of end(u) + comm(e, dev(u), d) )
 *
 * (inputs' estimated finish plus the transfer time where the input sits on another device, and
 * the device's estimated availability), its estimated end is est + op_time(v, d), and avail(d)
 * becomes that end. This is the append-at-the-end list-scheduling estimate. Successors whose
 * predecessors are now all assigned join the ready set.
 *
 * The ready set is kept in increasing op id order, so "lowest id" tie-breaks are a scan. That
 * costs O(ready) per step, which a policy that scores every ready op pays anyway; a list
 * scheduler that only wants the op of highest b-level can switch the environment to
 * DP_ENV_READY_BY_BLEVEL (dp_env_set_ready_order), a binary max-heap keyed by (b-level, -id):
 * dp_env_cp_select is then O(1) and a step O(deg log ready), so a 10^6-op star places in
 * seconds instead of hours (bench/bench_scale.sh).
 */
#ifndef DP_ENV_H
#define DP_ENV_H

#include "dp_cost.h"
#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How env->ready is ordered (the set is the same either way). */
typedef enum {
    DP_ENV_READY_BY_ID = 0,    /* increasing op id (default): O(ready) per step */
    DP_ENV_READY_BY_BLEVEL = 1 /* binary max-heap on (b-level, -id): ready[0] is the critical-path
                                * choice; O(log ready) per insertion or removal */
} dp_env_ready_order;

typedef struct dp_env {
    const dp_graph *g;
    const dp_costs *c;
    int n_ops, n_devices;
    int step;              /* ops assigned so far */
    int *assignment;       /* (n_ops) device of each op, -1 while unassigned */
    int *order;            /* (n_ops) ops in the order they were assigned (first `step` valid) */
    int *ready;            /* ready set, n_ready entries, ordered as ready_order says */
    int n_ready;
    dp_env_ready_order ready_order;
    int *ready_pos;        /* (n_ops) BY_BLEVEL: index of each op in ready, -1 when absent */
    int *unassigned_preds; /* (n_ops) in-edges whose source is not yet assigned */
    double *est_start;     /* (n_ops) estimated start of assigned ops */
    double *est_end;       /* (n_ops) estimated end of assigned ops */
    double *dev_avail;     /* (n_devices) estimated time each device becomes free */
    double *dev_work;      /* (n_devices) total op time already assigned to each device */
    double *blevel;        /* (n_ops) b-level with mean costs (dp_costs_levels) */
    double *tlevel;        /* (n_ops) t-level with mean costs */
} dp_env;

/* Allocate an environment for g under c; computes b- and t-levels once. NULL with err on failure. */
dp_env *dp_env_alloc(const dp_graph *g, const dp_costs *c, dp_error *err);
void dp_env_free(dp_env *env);

/* Start a new episode: nothing assigned, ready set = sources. */
void dp_env_reset(dp_env *env);

/* Choose how env->ready is ordered (see dp_env_ready_order) and start a new episode. The
 * critical-path choices (dp_env_cp_select and the *_all marks) are the same in both orders;
 * only positions in env->ready differ. */
void dp_env_set_ready_order(dp_env *env, dp_env_ready_order order);

/* 1 when every op is assigned. */
static inline int dp_env_done(const dp_env *env) { return env->step == env->n_ops; }

/* Estimated earliest start of ready op v on device d (formula above). */
double dp_env_est_start(const dp_env *env, int v, int d);

/* Assign ready op v to device d and update the state. Returns DP_OK, or DP_EINVAL when v is not
 * ready or d is out of range. */
int dp_env_step(dp_env *env, int v, int d, dp_error *err);

/* Index of op v in env->ready, or -1. O(log ready) by id, O(1) by b-level. */
int dp_env_ready_index(const dp_env *env, int v);

/* The five device features the DOPPLER PLC policy sees for ready op v (Yao et al. 2026; the
 * authors' env._compute_device_state), written to feat (n_devices, 5), row d:
 *   0 total op time already assigned to d (dev_work)
 *   1 total op time of v's distinct predecessors placed on d
 *   2 earliest estimated start of those predecessors (0 when none)
 *   3 latest estimated end of those predecessors (0 when none)
 *   4 v's estimated earliest start on d (dp_env_est_start: inputs' arrival and d's availability;
 *     the authors' code used the device's total assigned work here, see doc/doppler-vs-reference.md)
 * Times in the cost model's unit. */
#define DP_ENV_N_DEVICE_FEATURES 5
void dp_env_device_features(const dp_env *env, int v, double *feat);

/* The critical-path heuristic's choices (Kwok and Ahmad 1999, as DOPPLER's teacher):
 * SEL: the ready op of highest b-level, ties by lowest id (O(ready) by id, O(1) by b-level); -1
 * when the ready set is empty. PLC: the device of earliest estimated start for v, ties by lowest
 * device id. */
int dp_env_cp_select(const dp_env *env);
int dp_env_cp_place(const dp_env *env, int v);

/* Every heuristic-optimal action (all ties), for imitation: marks[i] = 1 for ready-set index i
 * whose b-level equals the maximum (within a relative 1e-12); returns how many. */
int dp_env_cp_select_all(const dp_env *env, unsigned char *marks);
/* marks[d] = 1 for devices whose estimated start equals the minimum; returns how many. */
int dp_env_cp_place_all(const dp_env *env, int v, unsigned char *marks);

#ifdef __cplusplus
}
#endif
#endif
