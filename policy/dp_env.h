/* dp_env.h: the assignment environment, the sequential decision process both DOPPLER policies
 * and the list heuristics act in (Yao et al. 2026, section "the decision process").
 *
 * State: the ready set (unassigned ops whose predecessors are all assigned; it starts with the
 * sources), the partial assignment, and per-op and per-device times of the placed prefix. A step
 * assigns one ready op v to a device d; successors whose predecessors are now all assigned join
 * the ready set. How the times are estimated is the environment's *state* (dp_env_set_state):
 *
 * Append state (DP_ENV_STATE_APPEND, the default, the authors' environment): v's estimated start
 * on d is
 *
 *   est(v, d) = max( avail(d), max over in-edges e = (u, v) of end(u) + comm(e, dev(u), d) )
 *
 * (inputs' estimated finish plus the transfer time where the input sits on another device, and
 * the device's estimated availability), its estimated end is est + op_time(v, d), and avail(d)
 * becomes that end: each op is appended to its device in the order the ops are *placed*. This is
 * the list-scheduling estimate of the authors' env.py, kept exact for the reproduction.
 *
 * Engine state (DP_ENV_STATE_ENGINE, this project's): the times are the schedule the machine's
 * engine (dp_engine.h) gives the placed prefix, simulated as a graph of the placed ops alone
 * (dp_engine_run_prefix): devices serve ops first come first served in the order their inputs
 * *arrive* (not the order they were placed), transfers follow the machine's transfer model.
 * est(v, d) is the start the engine gives v when the prefix plus v on d is simulated. After the
 * last step the state is the engine's schedule of the whole assignment: dp_env_makespan equals
 * dp_engine_run's makespan for every assignment and placement order (tests/test_env.c). How it
 * is kept, and what it costs, per episode of n ops on D devices:
 *   - exact fast path (dp_engine_is_general 0: fixed delays, one FIFO slot per device): a step
 *     placing v on d does not simulate the prefix again. v has no placed successor, so the
 *     engine's schedule of the prefix plus v is the prefix's up to the instant r at which v's
 *     inputs are all on d (v's READY); the step resumes the engine at the start of instant r
 *     from a state rebuilt out of the prefix's schedule and the places its ops' events took in
 *     the engine's event order (dp_sim_prefix_add, dp_sim.h), so only the ops ending at or
 *     after r are simulated again, exact ties of the event order included. Each device's ops
 *     are kept in queue order (dp_sim_prefix.dev_ops), along which arrival, start and end
 *     never decrease: the ops ending at or after r are a suffix of each list, found by binary
 *     search, so a step costs O(D log n + k log k) for those k ops (r = 0, v a source: the
 *     prefix from the start). Estimates: est(v, d) = max(r, latest end of the ops of d that
 *     arrived before r): those are ahead of v in d's first-come-first-served queue and
 *     untouched by v (zero-time ops included: a device freed and not yet released when v
 *     arrives grants the head of its queue, tests/test_env.c zero_time_race); a binary search
 *     of d's list, O(in-degree + log n). When an op of d arrives exactly at r (the engine's
 *     event order decides which is first) the run is resumed at r, not committed; except for
 *     a source (r = 0), which the engine makes ready after the sources of lower id and before
 *     every other op arriving at 0: another binary search. The engine
 *     features' sums over d's ops (columns 6, 8, 9) read a range of the list likewise.
 *     Measured (bench/env-size.sh, llama-layer --layers 52: 10,117 ops, 4 devices): about 22
 *     ops simulated again per step, a quarter of the estimates meet a tie; a critical-path
 *     episode 0.05 s of CPU (0.009 s at 2,163 ops), `doppler place --method doppler` 0.49 s,
 *     against 8.2 s when a step simulated the whole prefix on every overtake or tie. k is
 *     small when ops are placed roughly in the order they run (the ready set's frontier); an
 *     op placed long after the ops that follow it in time (a side branch of low b-level left
 *     to the end) makes k, and that step, O(n). A probe (an estimate that meets a tie) runs
 *     only until v starts (dp_sim_prefix_add, commit 0). A commit's run stops once v is done
 *     and its state is the prefix's again (convergence, dp_sim_set_converge_prefix, on by
 *     default): later events are the prefix's, their sequence numbers above the run's (moved
 *     up only when the run's do not fit below them), which keeps the order of equal-time
 *     events that later resumed runs rebuild; and the ops not ready at r are set up only when
 *     the run reaches them (dp_sim.h), so a probe or a commit that converges costs about the
 *     ops it reaches (since 7778de6 without a pass over the k). Measured (bench_env_size, llama-layer --layers 26 --tp 8 --training, 31,374 ops, 8
 *     devices, cp order): 3.8 to 4.2 s CPU against 6.7 with convergence off and 7.2 to 7.3
 *     before either; the zero-shot rollout at 99,774 ops in EXPERIMENTS.md. The ops whose
 *     times a commit changes (dp_sim_prefix.n_retimed,
 *     the least any exact state rewrites) grow with n in the critical-path order too:
 *     bench_env_size on llama-layer --layers 1, 3, 8, 26 --tp 8 --training (1,374 to 31,374
 *     ops, 8 devices): 22.6, 41.6, 111.5, 355.9 per step in the cp order, against k 147, 373,
 *     923, 2,891 per run; 8.8, 6.9, 6.8, 6.6 (k 63) in a random order. So no exact state is
 *     O(1) per step for every order: in the cp order the op times a step changes grow with n
 *     on these graphs (log-log slope 0.9), so an episode's work grows faster than n whatever
 *     the method; coarsening (dp_coarse.h: fewer steps, on the group graph) cuts n instead.
 *     tests/test_env.c compares every estimate and the whole state at every step, bit for bit,
 *     with the prefix simulated from the start (random DAGs with integer and zero times,
 *     repeated edges, 1 to 6 devices).
 *   - general engine (contention: max-min or FIFO links, copy engines, streams, priority queues,
 *     memory, bulk-synchronous): a later transfer shares links with earlier ones, so no local
 *     rule is exact: each est(v, d) asked for simulates the prefix plus v on d (cached for the
 *     step, and the chosen device's schedule becomes the new state): D prefix simulations per
 *     step when every device is scored, O(n^2 D) events per episode. With FIFO queues in
 *     asynchronous mode each of them resumes from a snapshot of the prefix's run before v's
 *     producers' first end (dp_hisim.h "delta runs": the whole event state, the transfer
 *     model's included; the same schedule bit for bit), 3 to 12 times faster on forward graphs;
 *     with priority queues or bulk-synchronous levels each runs the prefix from time 0. Above
 *     DP_ENV_GENERAL_EXACT_MAX_OPS ops (20,000) the state is kept on a surrogate instead, the
 *     DOPPLER-compatible engine of the same cost tables on the exact fast path (below).
 * A prefix's schedule is exact for the prefix, not a promise about the final schedule: an op
 * placed later can become ready on a device before an op placed earlier and run ahead of it
 * (first come first served), delaying it. Unplaced ops leave the placed ops' times unchanged
 * only when ops are placed in the order of their (final) ready times; the SEL orders of DOPPLER
 * (b-level, learned) are not that order. bench/bench_env.c measures how often it happens.
 *
 * The ready set is kept in increasing op id order, so "lowest id" tie-breaks are a scan. That
 * costs O(ready) per step, which a policy that scores every ready op pays anyway; a list
 * scheduler that only wants the op of highest b-level can switch the environment to
 * DP_ENV_READY_BY_BLEVEL (dp_env_set_ready_order), a binary max-heap keyed by (b-level, -id):
 * dp_env_cp_select is then O(1) and a step O(deg log ready), so a 10^6-op star places in
 * seconds instead of hours (bench/bench_scale.sh). A greedy policy whose scores are fixed for the
 * episode (DOPPLER's static SEL) likewise keeps the heap on its own scores, DP_ENV_READY_BY_KEY
 * (dp_env_set_ready_key): ready[0] is then its choice, the highest score, lowest id among equals.
 */
#ifndef DP_ENV_H
#define DP_ENV_H

#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_graph.h"
#include "dp_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How env->ready is ordered (the set is the same either way). */
typedef enum {
    DP_ENV_READY_BY_ID = 0,    /* increasing op id (default): O(ready) per step */
    DP_ENV_READY_BY_BLEVEL = 1, /* binary max-heap on (b-level, -id): ready[0] is the critical-path
                                 * choice; O(log ready) per insertion or removal */
    DP_ENV_READY_BY_KEY = 2     /* binary max-heap on (key[v], -id) with the caller's key
                                 * (dp_env_set_ready_key); O(log ready) as BY_BLEVEL */
} dp_env_ready_order;

/* How the placed prefix's times are estimated (see the top of this file). */
typedef enum {
    DP_ENV_STATE_APPEND = 0, /* append each op to its device in placement order (the authors') */
    DP_ENV_STATE_ENGINE = 1  /* the machine's engine on the placed prefix (exact) */
} dp_env_state;

/* Which device features a PLC policy reads (dp_env_device_features_of). */
typedef enum {
    DP_ENV_FEATURES_DOPPLER = 0, /* the authors' five */
    DP_ENV_FEATURES_ENGINE = 1,  /* those five and seven non-myopic ones (list below) */
    DP_ENV_FEATURES_HINT = 2     /* those twelve and the hint: the device a reference placement
                                    (dp_env_set_hint) gives the op (column 12 below) */
} dp_env_features;

typedef struct dp_env_ranked dp_env_ranked;

typedef struct dp_env {
    const dp_graph *g;
    const dp_cost *c;
    int n_ops, n_devices;
    int step;              /* ops assigned so far */
    int *assignment;       /* (n_ops) device of each op, -1 while unassigned */
    int *order;            /* (n_ops) ops in the order they were assigned (first `step` valid) */
    int *ready;            /* ready set, n_ready entries, ordered as ready_order says */
    int n_ready;
    dp_env_ready_order ready_order;
    int *ready_pos;        /* (n_ops) BY_BLEVEL, BY_KEY: index of each op in ready, -1 when absent */
    const double *ready_key; /* (n_ops) the heap's key: blevel for BY_BLEVEL, the caller's for
                                BY_KEY (borrowed); NULL for BY_ID */
    int *unassigned_preds; /* (n_ops) in-edges whose source is not yet assigned */
    double *est_start;     /* (n_ops) estimated start of assigned ops */
    double *est_end;       /* (n_ops) estimated end of assigned ops */
    double *dev_avail;     /* (n_devices) estimated time each device becomes free */
    double *dev_work;      /* (n_devices) total op time already assigned to each device */
    double *blevel;        /* (n_ops) b-level with mean costs (dp_cost_levels) */
    double *tlevel;        /* (n_ops) t-level with mean costs */
    double *est_ready;     /* (n_ops) when each assigned op's inputs are all on its device (append:
                              the latest input arrival of the estimate; engine: the time the
                              engine queues it) */
    /* engine state */
    dp_env_state state;
    dp_engine *engine;     /* engine state: the engine simulating prefixes (not owned) */
    int general;           /* 1 when that engine is the general one */
    unsigned char *first_copy; /* (n_edges) 1 unless the edge repeats an earlier (src, dst) pair */
    double *mean_comm;  /* (n_edges) each edge's dp_cost_mean_comm, computed once: on devices that
                         * differ it sums over every pair of devices, and the per-step features
                         * asked it per device and out-edge at every step (cubic in the devices:
                         * 1,024 drawn speeds took over ten minutes for one episode; a review) */
    int *dev_first, *dev_lastop, *op_next; /* the assigned ops of each device, a list in placement order */
    /* the step's candidate placements, a cache: valid for op cand_v while step == cand_step */
    int cand_v, cand_step;
    unsigned char *cand_state;  /* (D) 0 not probed, 1 probed by the local rule, 2 simulated */
    unsigned char *cand_append; /* (D) 1 when v would queue behind every placed op of d */
    double *cand_start, *cand_ready; /* (D) v's start and input arrival on each device */
    double *cand_sched;    /* (D, 3, n_ops) simulated candidates' start, end, ready (engine state) */
    long n_resim;          /* prefix simulations run by this environment (probes and steps): on the
                              fast path resumed ones (dp_sim_prefix_add), on the general engine
                              resumed from a snapshot (hdelta) or full */
    dp_sim_prefix *prefix; /* fast path: the prefix's schedule and event order (dp_sim.h) */
    struct dp_env_ranked { int rank, op; } *by_rank; /* (n_ops + 1) fast path: scratch of the features,
                                                        ops in the order they were placed */
    uint64_t *rank_bits;   /* (n_ops / 64 + 1) fast path: the features' bitmap of ranks */
    int general_exact_max; /* DP_ENV_GENERAL_EXACT_MAX_OPS unless changed before dp_env_set_state
                              (tests lower it) */
    const int *hint;       /* (n_ops) the reference placement of DP_ENV_FEATURES_HINT's column 12
                              (dp_env_set_hint, borrowed), or NULL */
    dp_sim *surrogate;     /* general engine above DP_ENV_GENERAL_EXACT_MAX_OPS ops: the
                              DOPPLER-compatible engine on the same cost tables, whose fast path
                              keeps the state (owned); NULL otherwise */
    struct dp_hisim_delta *hdelta; /* general engine's exact state, where it supports delta runs
                              (FIFO queues, asynchronous mode): the placed prefix as the incumbent
                              of delta runs, each candidate resumed from a snapshot of it
                              (dp_hisim.h; owned); NULL otherwise */
    int hdelta_set;        /* hdelta's incumbent is the placed prefix (0 after a reset) */
} dp_env;

/* The largest graph whose engine state follows a general engine exactly (issue 30 item 4). The
 * general engine's state costs D prefix simulations per step, O(n^2 D) events per episode (top
 * of this file): measured on the DGX-1 topology (8 devices, Llama-7B training graphs), 1.8 CPU s
 * at 1,374 ops, 18.7 at 3,774, 51 at 6,174, about 50 CPU minutes extrapolated at 38,574 (before
 * delta runs; each candidate now resumes from a snapshot of the prefix's run: 0.46, 2.95 and 8.71
 * CPU s a rollout there, still O(n^2 D), EXPERIMENTS.md "Delta runs on the general engine"). Above
 * this size dp_env_set_state keeps the state on a surrogate instead: the DOPPLER-compatible
 * engine (dp_sim.h: every transfer its contention-free time from the cost tables, one FIFO
 * slot per device) on env's own graph and costs, with the exact fast path's incremental prefix
 * (dp_sim_prefix_add), so a step costs what it costs on the uniform machine. The estimates
 * and features are then the contention-free schedule's, not the general engine's (link
 * sharing, copy engines, streams, memory are not in them), and dp_env_makespan is that
 * schedule's; the placement's makespan is still the general engine's (the caller's oracle
 * simulates it once). Graphs of at most this many ops keep the exact state, bit for bit. */
#define DP_ENV_GENERAL_EXACT_MAX_OPS 20000
/* (the threshold in force is env->general_exact_max, this value after dp_env_alloc) */

/* 1 when env's state follows the machine's engine exactly (the engine state without the
 * surrogate above), 0 for the append state and for the surrogate: what a caller tells its users
 * of the estimates (Python's Env.exact). */
int dp_env_state_exact(const dp_env *env);

/* Reading the state without laying out dp_env (bindings: Python's doppler.Env). Counts: the op
 * and device counts, step (ops assigned so far), n_ready (entries of the ready set), n_resim
 * (prefix simulations this environment ran, see the field). Arrays, const pointers into env,
 * allocated once by dp_env_alloc (the same address for the environment's life; the contents
 * change with each step and reset): assignment (n_ops ints, -1 while unassigned), ready (n_ops
 * ints, the first n_ready valid, ordered as ready_order says), est_start, est_end and est_ready
 * (n_ops doubles, valid for assigned ops), dev_avail and dev_work (n_devices doubles); times in
 * the cost model's unit. env must be non-NULL (unchecked). */
int dp_env_get_n_ops(const dp_env *env);
int dp_env_get_n_devices(const dp_env *env);
int dp_env_get_step(const dp_env *env);
int dp_env_get_n_ready(const dp_env *env);
long dp_env_get_n_resim(const dp_env *env);
const int *dp_env_get_assignment(const dp_env *env);
const int *dp_env_get_ready(const dp_env *env);
const double *dp_env_get_est_start(const dp_env *env);
const double *dp_env_get_est_end(const dp_env *env);
const double *dp_env_get_est_ready(const dp_env *env);
const double *dp_env_get_dev_avail(const dp_env *env);
const double *dp_env_get_dev_work(const dp_env *env);

/* Allocate an environment for g under c; computes b- and t-levels once. NULL with err on failure:
 * DP_EINVAL when g or c is NULL or c is another graph's tables (its op or edge count differs),
 * DP_ENOMEM. */
dp_env *dp_env_alloc(const dp_graph *g, const dp_cost *c, dp_error *err);
/* Free the environment and what it owns (its arrays, the prefix and the surrogate simulator);
 * not what it borrows: g, c, the engine of dp_env_set_state, the ready keys and the hint. The
 * pointers of the dp_env_get_* accessors are invalid after it. NULL is a no-op. */
void dp_env_free(dp_env *env);

/* Start a new episode: nothing assigned, ready set = sources. */
void dp_env_reset(dp_env *env);

/* Choose the state (see the top of this file) and start a new episode. engine (required for
 * DP_ENV_STATE_ENGINE, ignored for append) must simulate env's graph under env's cost tables
 * (dp_engine_graph, dp_engine_costs) and outlive the environment or the next dp_env_set_state;
 * the environment runs dp_engine_run_prefix on it, which overwrites the engine's last
 * dp_engine_schedule (one thread). Errors (DP_EINVAL): no engine, or one of another graph or costs;
 * DP_ENOMEM. On error the state is unchanged. */
int dp_env_set_state(dp_env *env, dp_env_state state, dp_engine *engine, dp_error *err);

/* "append" / "engine", and the parse of those names (DP_OK or DP_EINVAL). */
const char *dp_env_state_name(dp_env_state s);
int dp_env_state_parse(const char *name, dp_env_state *s);

/* Choose how env->ready is ordered (see dp_env_ready_order) and start a new episode. The
 * critical-path choices (dp_env_cp_select and the *_all marks) are the same in both orders;
 * only positions in env->ready differ. */
void dp_env_set_ready_order(dp_env *env, dp_env_ready_order order);

/* Order env->ready as a binary max-heap on (key[v], -id) (DP_ENV_READY_BY_KEY) and start a new
 * episode: ready[0] is the ready op of highest key, the lowest id among equal keys, which is what
 * a greedy choice by a scan of the id-ordered set gives (`>` over increasing ids). key: n_ops
 * numbers, borrowed while this order is in force (NaN keys are not allowed: a NaN compares
 * false both ways). NULL returns to DP_ENV_READY_BY_ID. */
void dp_env_set_ready_key(dp_env *env, const double *key);

/* 1 when every op is assigned. */
static inline int dp_env_done(const dp_env *env) { return env->step == env->n_ops; }

/* Estimated earliest start of ready op v on device d under the state (top of this file). In
 * the engine state the answer may cost a prefix simulation; it is cached for the step (the
 * cache lives in env and is filled through this const pointer: one thread per env). An
 * engine error gives +infinity (a memory capacity exceeded under the error policy only when v
 * is the last op: a prefix's memory is not the placement's, dp_hisim_run_prefix). v must be
 * ready and d in range (unchecked: this is the policies' inner loop; a non-ready op reads past
 * the cost tables); callers that cannot promise it use dp_env_est_start_checked. */
double dp_env_est_start(const dp_env *env, int v, int d);

/* dp_env_est_start with its arguments checked: *start filled and DP_OK, or DP_EINVAL (nothing
 * written) when v is out of range or not in the ready set, or d is out of range. */
int dp_env_est_start_checked(const dp_env *env, int v, int d, double *start, dp_error *err);

/* Assign ready op v to device d and update the state. Returns DP_OK, or DP_EINVAL when v is not
 * ready or d is out of range; in the engine state also the engine's errors (DP_ERANGE: a
 * memory capacity exceeded under the error policy, by the complete assignment at the last step:
 * dp_hisim_run_prefix; the state is then unchanged). */
int dp_env_step(dp_env *env, int v, int d, dp_error *err);

/* The latest estimated end of the assigned ops (0 before the first step): in the engine state,
 * after the last step, the engine's makespan of the assignment. */
double dp_env_makespan(const dp_env *env);

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
 * Times in the cost model's unit. v must be ready (unchecked, as dp_env_est_start). */
#define DP_ENV_N_DEVICE_FEATURES 5
void dp_env_device_features(const dp_env *env, int v, double *feat);

/* The device features of set fs for ready op v, written to feat (n_devices, dp_env_n_features(fs)).
 * DP_ENV_FEATURES_DOPPLER: the five above. DP_ENV_FEATURES_ENGINE: those five, then
 *   5 est_end      v's estimated end on d: est(v, d) + op_time(v, d) (time)
 *   6 idle_gap     the idle time v would open on d: est(v, d) - the latest end of a placed op of
 *                  d ending by est(v, d) (0 when none) (time; 0 when d is busy right up to v)
 *   7 dev_idle     d's idle time so far: latest end of its placed ops - their total op time
 *                  (time; with several streams per device it can be negative)
 *   8 overtaken    total op time of the placed ops of d whose inputs arrive on d after v's
 *                  would (r_d(v) below): the committed work v gets ahead of, first come first
 *                  served, and delays (time)
 *   9 bpath_load   busy fraction of d over the window [est_end, est_end + L), L = blevel(v) -
 *                  mean_op(v), the rest of v's b-path (mean costs): the time d's placed ops
 *                  occupy in that window / L, 0 when L = 0 (dimensionless, 0..1 with one stream):
 *                  how much committed work v's critical successors would meet if they followed
 *                  v onto d
 *   10 in_traffic  transfer time of v's inputs that are on other devices: sum over v's in-edges
 *                  e = (u, v) (repeats once) with dev(u) != d of comm(e, dev(u), d) (time)
 *   11 out_traffic mean transfer time v's output will need towards where its successors' other
 *                  inputs already are: sum over out-edges e = (v, w) (repeats once) of
 *                  mean_comm(e) x (1 - share_d(w)), share_d(w) = edge_data of w's placed
 *                  in-edges from ops on d / of all its placed in-edges from ops other than v
 *                  (0 when w has none) (time)
 * DP_ENV_FEATURES_HINT: those twelve, then
 *   12 hint        1 when the reference placement of dp_env_set_hint puts v on d, else 0 (0 on
 *                  every device while none is set): the policy can follow a placement made
 *                  before the rollout (the trainer's is the best instant method's, dp_train.h)
 *                  and learn where to leave it
 * r_d(v), v's input arrival on d, is the engine's in the engine state and the append estimate's
 * latest input arrival in the append state (est_ready of the placed ops likewise). Times are in
 * the cost model's unit, from the state's schedule. The DOPPLER PLC network z-scores every
 * column over the devices at each step (dp_doppler.h), so a column's unit and any per-step
 * constant do not reach the network; only how devices differ does (with network.magnitude it
 * also reads each column centred over the devices in units of the graph's lower bound, which
 * keeps by how much; columns 9 and 12, which have no time unit, centred only). As for
 * dp_env_est_start, v must be ready (unchecked: an op not in the ready set gives numbers that
 * mean nothing, one out of range reads past the tables); feat holds n_devices x
 * dp_env_n_features(fs) doubles. */
#define DP_ENV_N_ENGINE_FEATURES 12 /* DP_ENV_FEATURES_ENGINE's columns */
#define DP_ENV_HINT_COLUMN 12       /* DP_ENV_FEATURES_HINT's hint, its last column */
#define DP_ENV_MAX_DEVICE_FEATURES (DP_ENV_HINT_COLUMN + 1)
/* dp_env_n_features: the columns of set fs (5, 12 or 13; 5 for a value outside the
 * enumeration); dp_env_device_features_of: the features above. */
int dp_env_n_features(dp_env_features fs);
void dp_env_device_features_of(const dp_env *env, dp_env_features fs, int v, double *feat);

/* "doppler" / "engine" / "hint", and the parse of those names (DP_OK or DP_EINVAL). */
const char *dp_env_features_name(dp_env_features fs);
int dp_env_features_parse(const char *name, dp_env_features *fs);

/* The reference placement read by DP_ENV_FEATURES_HINT's column 12: hint (n_ops devices in
 * 0..n_devices-1, borrowed: it must outlive env or be replaced), or NULL for none. Kept across
 * dp_env_reset. */
void dp_env_set_hint(dp_env *env, const int *hint);

/* The critical-path heuristic's choices (Kwok and Ahmad 1999, as DOPPLER's teacher):
 * SEL: the ready op of highest b-level, ties by lowest id in every ready order (O(ready) by id
 * or by a key, O(1) by b-level); -1
 * when the ready set is empty. PLC: the device of earliest estimated start for v under the
 * state, ties by lowest device id: the append estimate in the append state (the authors'
 * teacher), the engine's exact start in the engine state (this project's teacher). dp_env_cp_place
 * and dp_env_cp_place_all take a ready v only (unchecked, as dp_env_est_start: pass
 * dp_env_cp_select's -1 on to them and they read past the tables). */
int dp_env_cp_select(const dp_env *env);
int dp_env_cp_place(const dp_env *env, int v);

/* Every heuristic-optimal action (all ties), for imitation: marks[i] = 1 for ready-set index i
 * whose b-level equals the maximum (within a relative 1e-12); returns how many. */
int dp_env_cp_select_all(const dp_env *env, unsigned char *marks);
/* The same marks for a given list of k ops (a ready set rebuilt by the caller, as the trainer's
 * backward pass does): marks[i] = 1 when ops[i]'s b-level equals the list's maximum. */
int dp_env_cp_select_marks(const dp_env *env, const int *ops, int k, unsigned char *marks);
/* marks[d] = 1 for devices whose estimated start equals the minimum; returns how many. */
int dp_env_cp_place_all(const dp_env *env, int v, unsigned char *marks);

#ifdef __cplusplus
}
#endif
#endif
