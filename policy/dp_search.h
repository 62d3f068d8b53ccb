/* dp_search.h: search over assignments with the simulator as the cost: simulated annealing, plain
 * local search, and an exact branch and bound for small graphs.
 *
 * The cost of an assignment is what the caller's cost oracle (dp_oracle.h) gives it: the
 * machine's engine (dp_engine_oracle: the DOPPLER-compatible engine, or the general one with its
 * transfer model, copy engines, streams, memory) or real execution. The cost tables c only give
 * the heuristics that make the start. Every method here therefore optimises over
 * ASSIGNMENTS ONLY: the order of ops on a device is the simulator's (first come first served),
 * not a free choice. The optimum over assignments can thus lie above the optimum over full
 * schedules (assignment and order, with idle time allowed) that the task-scheduling literature
 * reports (Sinnen's optimal A* results, the STG optimal tables); it can never lie below it, since
 * every simulated run is a feasible schedule of the classic model (no contention,
 * non-preemptive, communication paid between distinct devices only).
 */
#ifndef DP_SEARCH_H
#define DP_SEARCH_H

#include <math.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>
#include <jansson.h>

#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_oracle.h"
#include "dp_place.h"
#include "dp_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------- trace: the best makespan against simulations spent ---------------- */

typedef struct dp_search_trace {
    long n;            /* points recorded */
    long cap;
    long *sims;        /* simulations spent when the best improved (the first point: the start's,
                        * 1 plus those that chose it: 7 with init "best-instant") */
    double *best;      /* best makespan then (raw graph time unit) */
} dp_search_trace;

/* Free the trace's arrays (the struct itself is the caller's) and zero it. */
void dp_search_trace_clear(dp_search_trace *t);

/* ---------------- annealing and local search ---------------- */

typedef enum { DP_SEARCH_ANNEAL_GEOMETRIC = 0, DP_SEARCH_ANNEAL_LINEAR = 1 } dp_search_anneal_schedule;

typedef struct dp_search_anneal_config {
    long budget;                 /* simulations to spend, the start included (default 20000) */
    double t0;                   /* start temperature as a fraction of the start makespan (0.01) */
    double t_end;                /* final temperature, same unit (1e-5); t_end <= t0 */
    dp_search_anneal_schedule schedule; /* T_k = T0 (T_end/T0)^(k/(K-1)) or linear T0 + (T_end - T0) k/(K-1) */
    double swap_prob;            /* chance that a move swaps the devices of two ops (0.2); otherwise
                                  * one op moves to another device */
    char init[32];               /* placement method giving the start ("cp"; any registered
                                  * method that spends no simulation: not the searches, not the
                                  * learned methods, DP_EINVAL naming it), or "best-instant":
                                  * the best under the oracle of round-robin, cp, heft, cpop,
                                  * peft and etf (6 simulations, counted in the budget) */
    const int *start;            /* (n_ops) the start assignment instead of init's (NULL: init) */
    const float *proposal;       /* (n_ops, n_devices) move proposals: a moved op u goes to device
                                  * d != its current one with probability proportional to
                                  * proposal[u * D + d] (e.g. a learned policy's probabilities,
                                  * dp_train_policy_probs); an op already on the only
                                  * weighted device moves uniformly; NULL: uniformly */
    /* called every 4096 moves and at the end with the simulations spent and the budget (NULL:
     * none; doppler place prints a progress line from it once a search has run 2 s) */
    void (*progress)(long done, long total, void *ctx);
    void *progress_ctx;
} dp_search_anneal_config;

/* Defaults as above. */
void dp_search_anneal_config_init(dp_search_anneal_config *cfg);

/* Read a JSON object {"budget", "t0", "t_end", "schedule": "geometric"|"linear", "swap_prob",
 * "init"} over the defaults; every key is optional, unknown keys are an error (a typo should not
 * silently run the default). DP_EIO/DP_EINVAL name the file and the key. */
int dp_search_anneal_config_load(dp_search_anneal_config *cfg, const char *path, dp_error *err);
/* The table of those keys (dp_schema.h): their types, ranges, defaults and help. */
extern const dp_schema_key dp_search_anneal_keys[];
/* The same as the sections of a config (dp_place_method.config of anneal and local). */
const dp_schema_section *dp_search_config_sections(void);
/* dp_search_anneal_config_load for a search with keys of its own beside annealing's (the
 * improvement search, dp_improve_search_config_load): a key of the table extra (may be NULL) is
 * read into extra_obj, one of annealing's into cfg; a key neither knows is DP_EINVAL "PATH:
 * unknown key "K" (KEYS)", a bad value "PATH: "K" must be ..." (dp_schema.h). */
int dp_search_config_load_keys(dp_search_anneal_config *cfg, const char *path, const dp_schema_key *extra, void *extra_obj,
                               dp_error *err);

typedef struct dp_search_result {
    double start;          /* makespan of the start assignment */
    double best;           /* best makespan found (raw graph time unit) */
    long sims;             /* simulations spent */
    long accepted;         /* moves accepted */
    dp_search_trace trace; /* improvements of the best; owned: dp_search_trace_clear() it */
} dp_search_result;

/* Simulated annealing (Kirkpatrick, Gelatt and Vecchi 1983) over assignments: from the start
 * assignment, each step proposes a neighbour (move one op or swap two, chosen uniformly with a
 * GSL mt19937 generator seeded with `seed`, which takes it modulo 2^32 and 0 as 4357: those
 * seeds are one stream), simulates it, and accepts it when it is no worse or
 * with probability exp(-(new - current) / T_k); the best assignment seen is kept and written to
 * `assignment` (n_ops). With one device the start is returned. Errors: the start method's, or
 * DP_EINVAL for a bad config (budget < 1, or below 7 with init "best-instant" and no start given,
 * t0 < t_end, t_end <= 0, swap_prob outside [0, 1]). */
int dp_search_anneal(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, const dp_search_anneal_config *cfg,
                     uint64_t seed, int *assignment, dp_search_result *res, dp_error *err);

/* Plain local search: the same neighbourhood and budget, accepting a neighbour only when its
 * makespan is no worse than the current one (sideways moves let it cross plateaus; there is no
 * temperature). t0, t_end and schedule are ignored. */
int dp_search_local(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, const dp_search_anneal_config *cfg,
                    uint64_t seed, int *assignment, dp_search_result *res, dp_error *err);

/* The pieces of the loop above, shared with the learned improvement search (dp_improve.h), so
 * that both search one neighbourhood under one acceptance rule:
 * dp_search_check_config: DP_EINVAL for a bad config (as dp_search_anneal's; annealing 0: the
 *   temperatures are not checked);
 * dp_search_start: the start assignment (cfg->start, else method cfg->init with seed) into cur
 *   (n_ops); *sims (when not NULL) = the simulations spent choosing it (init "best-instant": one
 *   per instant method, the best kept, ties to the first; a method whose simulation exceeds a
 *   resource limit, DP_ERANGE (memory capacity under the error policy), is passed over (its run
 *   counted, as dp_engine_simulations counts it), and DP_ERANGE is returned only when every
 *   method's does; otherwise 0);
 *   the caller simulates the start itself, so a search spends 1 + *sims before its first move;
 *   DP_EINVAL for "best-instant" without an oracle, or an instant method's error;
 * dp_search_propose: one move of the neighbourhood applied to cur (n ops, D devices): with
 *   probability cfg->swap_prob a swap of u and v (v >= 0, devices du and dv exchanged), else op u
 *   moved from du to another device (v = -1), drawn by cfg->proposal or uniformly; undo by
 *   cur[u] = du and, for a swap, cur[v] = dv;
 * dp_search_accept: 1 when a move of makespan change delta is accepted at step k of K moves:
 *   delta <= 0, or (annealing) with probability exp(-delta / T_k), T_k going from T0 to T1 (raw
 *   time units) by cfg->schedule;
 * dp_search_temperature: T_k, the temperature of step k of K (raw time units): from T0 to T1
 *   by cfg->schedule (linear, or geometric: T0 (T1 / T0)^(k / (K - 1))); T1 at K <= 1;
 * dp_search_rng_alloc: the searches' generator: GSL's mt19937, the same stream value for value
 *   (gsl_rng_set, gsl_rng_uniform and gsl_rng_uniform_int give what they give on
 *   gsl_rng_mt19937), whose next uniform dp_search_accept_bound can read without drawing it (no
 *   copy of the 5,000-byte state: issue 31). Free with gsl_rng_free. NULL when out of memory
 *   (or when the GSL linked has an mt19937 of another range or a larger state than this build
 *   knows);
 * dp_search_accept_bound: the largest cost (raw time units) that the acceptance test at
 *   temperature T (dp_search_temperature's of the step; annealing 0: local search) can still
 *   accept from a current cost cur, with a margin: a move whose cost is above it is rejected
 *   whatever the simulation's tail, so it can be simulated with that bound
 *   (dp_oracle_cost_bounded). Local search and a temperature of 0: cur. Annealing: cur + T
 *   (-ln u + 1e-6), u the uniform the acceptance test would draw next, read ahead from r (which
 *   must come from dp_search_rng_alloc; the draw stays r's next), so the draws and the decisions
 *   are those of full simulations (the 1e-6 of log-space margin keeps every rounding of exp and
 *   log on the reject side); INFINITY when u is 0;
 * dp_search_trace_add: append a point to a trace (DP_OK or DP_ENOMEM). */
int dp_search_check_config(const dp_search_anneal_config *cfg, int annealing, dp_error *err);
/* The best instant placement into assignment (n_ops): dp_search_start with init "best-instant" and
 * no start (the best under oracle of round-robin, cp, HEFT, CPOP, PEFT and ETF, ties to the
 * first, a method over a resource limit passed over); *sims (may be NULL) its simulations.
 * Errors as dp_search_start's. The trainer's reference, hint and demonstration use it. */
int dp_search_best_instant(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, uint64_t seed, int *assignment,
                           long *sims, dp_error *err);

/* A move's simulation that exceeded a resource limit (rc DP_ERANGE: memory capacity under the
 * error policy) is a move of infinite cost, rejected, its simulation counted (the engine counts
 * it); the search goes on from its current placement. Returns rc, DP_ERANGE made DP_OK with *ms
 * INFINITY. */
static inline int dp_search_move_over_limit(int rc, double *ms)
{
    if (rc != DP_ERANGE) return rc;
    *ms = INFINITY;
    return DP_OK;
}
/* The rest of the loop's pieces, dp_search_start to dp_search_trace_add: see the comment above
 * dp_search_check_config. */
int dp_search_start(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, const dp_search_anneal_config *cfg,
                    uint64_t seed, int *cur, long *sims, dp_error *err);
void dp_search_propose(const dp_search_anneal_config *cfg, int n, int D, int *cur, gsl_rng *r, int *u, int *v, int *du,
                       int *dv);
int dp_search_accept(const dp_search_anneal_config *cfg, int annealing, double T0, double T1, long k, long K, double delta,
                     gsl_rng *r);
double dp_search_temperature(const dp_search_anneal_config *cfg, double T0, double T1, long k, long K);
gsl_rng *dp_search_rng_alloc(void);
double dp_search_accept_bound(int annealing, double T, double cur, gsl_rng *r);
int dp_search_trace_add(dp_search_trace *t, long sims, double best);

/* ---------------- exact branch and bound ---------------- */

typedef struct dp_search_exact_config {
    int max_ops;          /* refuse larger graphs with DP_ERANGE (default 24) */
    long max_nodes;       /* stop after this many search nodes, result not proven (default 2e8) */
    long anneal_budget;   /* simulations of annealing (seed 1) that improve the start incumbent
                           * (default 2000; 0: none) */
    int list_start;       /* 1 (default): the list schedulers give the start incumbent; 0: the
                           * start is every op on device 0 (for testing the search itself) */
    int max_streams;      /* the machine's most compute streams on one device (default 1): the
                           * bounds below need 1, larger is refused (DP_EINVAL) */
    const dp_machine *machine; /* the machine simulated (default NULL: its devices differ by the
                           * cost tables only); devices are symmetric only where
                           * dp_machine_devices_alike says so too */
} dp_search_exact_config;

/* Set cfg (non-NULL, unchecked) to the defaults: max_ops 24, max_nodes 2e8, anneal_budget 2000,
 * list schedulers' start (list_start 1), max_streams 1, machine NULL. dp_search_exact with a NULL
 * config uses these. */
void dp_search_exact_config_init(dp_search_exact_config *cfg);

typedef struct dp_search_exact_result {
    double makespan;      /* best simulated makespan (optimal over assignments when proven) */
    double lower_bound;   /* max(critical path by min op time, total min op time / devices) */
    double start;         /* the best list-scheduling start (incumbent) it improved on */
    long nodes;           /* search nodes visited (partial assignments) */
    long leaves;          /* complete assignments simulated */
    int proven;           /* 1 when the search finished: makespan is the optimum over assignments */
} dp_search_exact_result;

/* Branch and bound over assignments (ops in topological order, devices tried in order of the
 * earliest data-ready finish). Pruning: a partial assignment is cut when its lower bound is no
 * better than the incumbent; the bound is the largest of (a) the longest chain through an
 * assigned op, counting op times and transfers where both ends are assigned, plus the longest
 * path of minimal op times after it, (b) for each device, the earliest data-ready time of its
 * ops + their total op time + the shortest such tail among them (one-machine relaxation),
 * (c) (op time assigned + minimal op time of the rest) / devices. All three hold for any
 * schedule of a completion, so for its simulation too, where a transfer takes at least its
 * cost-table time; on a machine (cfg->machine) whose transfers go FIFO in chunks, pipelined over
 * a staged route and so faster than the table's store and forward, the bounds count no transfer
 * time (weaker pruning, the same optimum; the relative tolerance of rounding is 1e-9 of the
 * makespan). Device symmetry: devices whose costs are
 * interchangeable (same op times, same links to every other device) and which cfg->machine
 * treats alike (dp_machine_devices_alike: copy engines, memory, streams, interference) form a
 * class, and among a class's unused devices only the lowest is tried. The incumbent starts as the best simulated
 * assignment of cp, heft, cpop, peft, etf and a short annealing run. Each leaf is simulated. The best assignment goes to
 * `assignment`. Errors: DP_ERANGE for too many ops, DP_ENOMEM. */
int dp_search_exact(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, const dp_search_exact_config *cfg,
                    int *assignment, dp_search_exact_result *res, dp_error *err);

/* As placement methods (registered as anneal, local and exact). They simulate with o->oracle
 * (required), read o->config (anneal and local: the JSON above) and o->budget (simulations for
 * anneal/local; nodes for exact), seed from o->seed; exact reads o->machine's streams.
 * has_priority = 0. */
int dp_search_place_anneal(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                    double *priority, int *has_priority, dp_error *err);
int dp_search_place_local(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                   double *priority, int *has_priority, dp_error *err);
int dp_search_place_exact(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                   double *priority, int *has_priority, dp_error *err);
/* anneal's and local's check_config (dp_place.h): o->config read over the defaults, o->budget
 * over its budget, and checked (dp_search_check_config), as the placement does before it
 * searches; DP_OK, or DP_EIO/DP_EINVAL naming the file and the key. */
int dp_search_place_anneal_config(const dp_place_options *o, dp_error *err);
int dp_search_place_local_config(const dp_place_options *o, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
