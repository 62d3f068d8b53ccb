/* dp_search.c: annealing, local search and exact branch and bound over assignments (dp_search.h). */
#include "dp_search.h"
#include "dp_engine.h"
#include "dp_alloc.h"
#include "dp_improve.h"
#include "dp_json.h"
#include "dp_place.h"
#include "dp_schema.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- trace ---------------- */

void dp_search_trace_clear(dp_search_trace *t)
{
    free(t->sims);
    free(t->best);
    memset(t, 0, sizeof *t);
}

int dp_search_trace_add(dp_search_trace *t, long sims, double best)
{
    if (t->n == t->cap) {
        long cap = t->cap ? 2 * t->cap : 64;
        long *s = dp_alloc_realloc(t->sims, (size_t)cap * sizeof *s);
        if (!s) return DP_ENOMEM;
        t->sims = s;
        double *b = dp_alloc_realloc(t->best, (size_t)cap * sizeof *b);
        if (!b) return DP_ENOMEM;
        t->best = b;
        t->cap = cap;
    }
    t->sims[t->n] = sims;
    t->best[t->n] = best;
    t->n++;
    return DP_OK;
}

/* ---------------- configuration ---------------- */

/* A start that spends no simulation (dp_search_check_config's rule), checked when read so that
 * the refusal names the file and the key. */
static int init_check(const char *s, char *why, size_t cap)
{
    const dp_place_method *m = strcmp(s, "best-instant") != 0 ? dp_place_find(s) : NULL;
    if (strcmp(s, "best-instant") == 0 || (m && !m->simulates)) return 0;
    char list[256] = "";
    for (const dp_place_method *q = dp_place_methods(); q->name; q++)
        if (!q->simulates) {
            strncat(list, q->name, sizeof list - strlen(list) - 1);
            strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
    snprintf(why, cap, "must be a placement method that spends no simulation (%sor best-instant)", list);
    return 1;
}

/* annealing's and local search's keys (dp_search.h) */
const dp_schema_key dp_search_anneal_keys[] = {
    {"budget", DP_SCHEMA_LONG, offsetof(dp_search_anneal_config, budget), 1, HUGE_VAL, NULL, 0, "20000",
     "simulations to spend, the start included", NULL, NULL, 0, NULL},
    {"t0", DP_SCHEMA_DOUBLE, offsetof(dp_search_anneal_config, t0), -HUGE_VAL, HUGE_VAL, NULL, 0, "0.01",
     "start temperature, a fraction of the start makespan", NULL, NULL, 0, NULL},
    {"t_end", DP_SCHEMA_DOUBLE, offsetof(dp_search_anneal_config, t_end), -HUGE_VAL, HUGE_VAL, NULL, 0, "1e-05",
     "final temperature, same unit; 0 < t_end <= t0", NULL, NULL, 0, NULL},
    {"schedule", DP_SCHEMA_ENUM, offsetof(dp_search_anneal_config, schedule), 0, 0, "geometric|linear", 0, "geometric",
     "temperature from t0 to t_end", NULL, NULL, 0, NULL},
    {"swap_prob", DP_SCHEMA_DOUBLE, offsetof(dp_search_anneal_config, swap_prob), -HUGE_VAL, HUGE_VAL, NULL, 0, "0.2",
     "chance that a move swaps the devices of two ops, in [0, 1]", NULL, NULL, 0, NULL},
    {"init", DP_SCHEMA_STRING, offsetof(dp_search_anneal_config, init), 0, 0, NULL, sizeof(((dp_search_anneal_config *)0)->init),
     "cp", "the start: an instant placement method or best-instant (its devices: on a priority queue every placement of the search runs with the b-levels, not the method's own priorities)", init_check, NULL, 0, NULL},
    {0},
};

static const dp_schema_section anneal_sections[] = {
    {"", dp_search_anneal_keys, "annealing's and local search's keys", NULL},
    {NULL, NULL, NULL, NULL},
};

const dp_schema_section *dp_search_config_sections(void)
{
    return anneal_sections;
}

void dp_search_anneal_config_init(dp_search_anneal_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    dp_schema_defaults(dp_search_anneal_keys, cfg);
}

int dp_search_anneal_config_load(dp_search_anneal_config *cfg, const char *path, dp_error *err)
{
    return dp_search_config_load_keys(cfg, path, NULL, NULL, err);
}

/* a search config: the keys of the table extra (into extra_obj), then annealing's (into cfg) */
typedef struct search_read {
    dp_search_anneal_config *cfg;
    const dp_schema_key *extra;
    void *extra_obj;
} search_read;

static int read_search(void *ctx, const json_t *root, const char *path, dp_error *err)
{
    (void)path; /* dp_schema_load puts it before the message */
    const search_read *r = ctx;
    if (!json_is_object(root)) return dp_error_set(err, DP_EINVAL, "the search config must be a JSON object");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)root, key, v) {
        const dp_schema_key *k = r->extra ? dp_schema_find(r->extra, key) : NULL;
        int rc;
        if (k) rc = dp_schema_set_json(k, r->extra_obj, v, NULL, NULL, err);
        else if ((k = dp_schema_find(dp_search_anneal_keys, key))) rc = dp_schema_set_json(k, r->cfg, v, NULL, NULL, err);
        else {
            char own[512] = "", known[512];
            if (r->extra) dp_schema_keys_text(r->extra, own, sizeof own);
            dp_schema_keys_text(dp_search_anneal_keys, known, sizeof known);
            rc = dp_error_set(err, DP_EINVAL, "unknown key \"%s\" (%s%s%s)", key, own, own[0] ? ", " : "", known);
        }
        if (rc != DP_OK) return rc;
    }
    return DP_OK;
}

int dp_search_config_load_keys(dp_search_anneal_config *cfg, const char *path, const dp_schema_key *extra, void *extra_obj,
                               dp_error *err)
{
    search_read r = {cfg, extra, extra_obj};
    return dp_schema_load(path, NULL, read_search, &r, err);
}

int dp_search_check_config(const dp_search_anneal_config *cfg, int annealing, dp_error *err)
{
    if (cfg->budget < 1) return dp_error_set(err, DP_EINVAL, "search: budget must be at least 1, got %ld", cfg->budget);
    if (!(cfg->swap_prob >= 0 && cfg->swap_prob <= 1))
        return dp_error_set(err, DP_EINVAL, "search: swap_prob must be in [0, 1], got %g", cfg->swap_prob);
    if (annealing && !(cfg->t_end > 0 && cfg->t0 >= cfg->t_end && isfinite(cfg->t0)))
        return dp_error_set(err, DP_EINVAL, "anneal: need 0 < t_end <= t0, got t0 %g, t_end %g", cfg->t0, cfg->t_end);
    if (strcmp(cfg->init, "anneal") == 0 || strcmp(cfg->init, "local") == 0 || strcmp(cfg->init, "exact") == 0)
        return dp_error_set(err, DP_EINVAL, "search: the start method cannot be a search (\"%s\")", cfg->init);
    /* best-instant's start spends 7 simulations (the six instant methods and the start's own
     * run): a smaller budget was spent 7 times without a word (a review) */
    if (!cfg->start && strcmp(cfg->init, "best-instant") == 0 && cfg->budget < 7)
        return dp_error_set(err, DP_EINVAL, "search: init \"best-instant\" spends 7 simulations (6 instant methods and the "
                            "start's run), budget %ld", cfg->budget);
    /* a start that simulates (a learned method training or reading a checkpoint the search is not
     * given) would spend simulations outside the budget: only instant methods start a search */
    const dp_place_method *m = strcmp(cfg->init, "best-instant") == 0 ? NULL : dp_place_find(cfg->init);
    if (m && m->simulates)
        return dp_error_set(err, DP_EINVAL,
                            "search: the start method must spend no simulation (an instant method or best-instant), got \"%s\"",
                            cfg->init);
    return DP_OK;
}

/* The instant methods "best-instant" tries, in this order (the first of equal makespans wins). */
static const char *const INSTANT_METHODS[] = {"round-robin", "cp", "heft", "cpop", "peft", "etf"};
#define N_INSTANT ((int)(sizeof INSTANT_METHODS / sizeof INSTANT_METHODS[0]))

int dp_search_start(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, const dp_search_anneal_config *cfg,
                    uint64_t seed, int *cur, long *sims, dp_error *err)
{
    const int n = g->n_ops, D = c->n_devices;
    if (sims) *sims = 0;
    if (cfg->start) {
        for (int v = 0; v < n; v++)
            if (cfg->start[v] < 0 || cfg->start[v] >= D)
                return dp_error_set(err, DP_EINVAL, "search: start device %d of op %d out of range 0..%d", cfg->start[v], v,
                                    D - 1);
        memcpy(cur, cfg->start, (size_t)n * sizeof(int));
        return DP_OK;
    }
    dp_place_options po;
    dp_place_options_init(&po);
    po.seed = seed;
    po.oracle = oracle;
    if (strcmp(cfg->init, "best-instant") != 0) return dp_place(cfg->init, g, c, &po, cur, NULL, NULL, err);
    if (!oracle) return dp_error_set(err, DP_EINVAL, "search: init \"best-instant\" needs a cost oracle to compare the methods");
    int *a = dp_alloc_malloc_n(n, sizeof(int));
    if (!a) return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the start placement", g->source);
    double best = 0;
    int rc = DP_OK, found = 0, over = 0;
    for (int i = 0; i < N_INSTANT; i++) {
        double ms;
        if ((rc = dp_place(INSTANT_METHODS[i], g, c, &po, a, NULL, NULL, err)) != DP_OK) break;
        rc = dp_oracle_cost(oracle, a, &ms, err);
        if (rc == DP_ERANGE) {
            /* a resource limit (memory capacity under the error policy): this method's placement
             * is not a start; the others may be (its run is counted, as the engine counts it) */
            if (sims) (*sims)++;
            over++;
            rc = DP_OK;
            continue;
        }
        if (rc != DP_OK) break;
        if (sims) (*sims)++;
        if (!found || ms < best) {
            best = ms;
            found = 1;
            memcpy(cur, a, (size_t)n * sizeof(int));
        }
    }
    free(a);
    if (rc == DP_OK && !found) {
        /* err holds the last method's (ETF's) fault */
        dp_error_prefix(err, "best-instant: the placements of all %d instant methods exceed a limit; ETF's", over);
        rc = DP_ERANGE;
    }
    return rc;
}

int dp_search_best_instant(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, uint64_t seed, int *assignment,
                           long *sims, dp_error *err)
{
    dp_search_anneal_config sc;
    dp_search_anneal_config_init(&sc);
    snprintf(sc.init, sizeof sc.init, "best-instant");
    return dp_search_start(g, c, oracle, &sc, seed, assignment, sims, err);
}

/* One move of annealing's neighbourhood applied to cur (see dp_search.h). */
void dp_search_propose(const dp_search_anneal_config *cfg, int n, int D, int *cur, gsl_rng *r, int *u_out, int *v_out,
                       int *du_out, int *dv_out)
{
    /* propose: swap two ops on different devices, or move one op */
    int u = (int)gsl_rng_uniform_int(r, (unsigned long)n), v = -1, du = cur[u], dv = -1;
    if (n > 1 && gsl_rng_uniform(r) < cfg->swap_prob) {
        v = (int)gsl_rng_uniform_int(r, (unsigned long)n);
        if (cur[v] == du) v = -1;
        else dv = cur[v];
    }
    if (v >= 0) {
        cur[u] = dv;
        cur[v] = du;
    } else if (cfg->proposal) {
        /* a device other than the current one, in proportion to the proposal's weights */
        const float *w = cfg->proposal + (size_t)u * D;
        double tot = 0;
        for (int d = 0; d < D; d++)
            if (d != du) tot += w[d] > 0 ? w[d] : 0;
        int d = -1;
        if (tot > 0) {
            double x = gsl_rng_uniform(r) * tot;
            for (int q = 0; q < D && d < 0; q++) {
                if (q == du || !(w[q] > 0)) continue;
                if ((x -= w[q]) < 0) d = q;
            }
        }
        if (d < 0) { /* no weight elsewhere (or rounding): uniformly */
            d = (int)gsl_rng_uniform_int(r, (unsigned long)(D - 1));
            d = d >= du ? d + 1 : d;
        }
        cur[u] = d;
    } else {
        int d = (int)gsl_rng_uniform_int(r, (unsigned long)(D - 1));
        cur[u] = d >= du ? d + 1 : d;
    }
    *u_out = u;
    *v_out = v;
    *du_out = du;
    *dv_out = dv;
}

/* ---------------- the search's generator: mt19937 with a look-ahead ---------------- */

/* The state of dp_search_rng_alloc's generator: mt19937's own state (GSL's, run by its own
 * functions) and one raw value drawn ahead of the stream (held). Every draw takes the held value
 * first, so the stream is mt19937's, value for value. */
typedef struct peek_state {
    unsigned long mt[627]; /* gsl_rng_mt19937's state (5,000 bytes on LP64: 624 words and an int) */
    unsigned long held;
    int has;
} peek_state;

static void peek_set(void *vs, unsigned long seed)
{
    peek_state *st = vs;
    gsl_rng_mt19937->set(st->mt, seed);
    st->has = 0;
}

static unsigned long peek_get(void *vs)
{
    peek_state *st = vs;
    if (st->has) {
        st->has = 0;
        return st->held;
    }
    return gsl_rng_mt19937->get(st->mt);
}

/* as mt19937's get_double: its 32-bit value over 2^32 */
static double peek_get_double(void *vs)
{
    return (double)peek_get(vs) / 4294967296.0;
}

static const gsl_rng_type peek_type = {"mt19937-peek", 0xffffffffUL, 0, sizeof(peek_state), peek_set, peek_get,
                                       peek_get_double};

gsl_rng *dp_search_rng_alloc(void)
{
    /* mt19937's range and state size as this type copies them (GSL's own, checked) */
    if (gsl_rng_mt19937->max != peek_type.max || gsl_rng_mt19937->min != peek_type.min ||
        gsl_rng_mt19937->size > sizeof(((peek_state *)0)->mt))
        return NULL;
    return gsl_rng_alloc(&peek_type);
}

/* the uniform gsl_rng_uniform(r) would return next, r (dp_search_rng_alloc's) keeping it for
 * that draw */
static double peek_uniform(gsl_rng *r)
{
    peek_state *st = r->state;
    if (!st->has) {
        st->held = gsl_rng_mt19937->get(st->mt);
        st->has = 1;
    }
    return (double)st->held / 4294967296.0;
}

double dp_search_temperature(const dp_search_anneal_config *cfg, double T0, double T1, long k, long K)
{
    return cfg->schedule == DP_SEARCH_ANNEAL_LINEAR ? T0 + (T1 - T0) * (K > 1 ? (double)k / (K - 1) : 1.0)
                                                    : T0 * pow(T1 / T0, K > 1 ? (double)k / (K - 1) : 1.0);
}

/* annealing's test of a worse move (delta > 0) at temperature T: one uniform draw */
static int accept_worse(double T, double delta, gsl_rng *r)
{
    return T > 0 && gsl_rng_uniform(r) < exp(-delta / T);
}

int dp_search_accept(const dp_search_anneal_config *cfg, int annealing, double T0, double T1, long k, long K, double delta,
                     gsl_rng *r)
{
    return delta <= 0 || (annealing && accept_worse(dp_search_temperature(cfg, T0, T1, k, K), delta, r));
}

double dp_search_accept_bound(int annealing, double T, double cur, gsl_rng *r)
{
    if (!annealing || !(T > 0)) return cur;
    const double u = peek_uniform(r);
    if (!(u > 0)) return INFINITY;
    /* accepted iff u < exp(-delta / T), i.e. delta < -T ln u: above cur + T (-ln u + 1e-6) the
     * move is rejected under any rounding of exp */
    return cur + T * (-log(u) + 1e-6);
}

/* ---------------- annealing and local search ---------------- */

static int search_run(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, const dp_search_anneal_config *cfg,
                      uint64_t seed, int annealing, int *assignment, dp_search_result *res, dp_error *err)
{
    memset(res, 0, sizeof *res);
    if (!oracle) return dp_error_set(err, DP_EINVAL, "search: a cost oracle is required (dp_engine_oracle)");
    int rc = dp_search_check_config(cfg, annealing, err);
    if (rc != DP_OK) return rc;
    const int n = g->n_ops, D = c->n_devices;
    int *cur = dp_alloc_malloc_n(n, sizeof(int)), *best = dp_alloc_malloc_n(n, sizeof(int));
    gsl_rng *r = dp_search_rng_alloc();
    /* the simulator's oracle: each move is a delta run from the current assignment's schedule
     * (dp_engine_run_delta: the same costs as the oracle's bounded ones within the bound, bit
     * for bit, and the same verdict above it) */
    dp_engine_incumbent *inc = NULL;
    if (!cur || !best || !r) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory for the search", g->source); goto done; }
    if (oracle->engine && !(inc = dp_engine_incumbent_alloc(oracle->engine, err))) { rc = err ? err->code : DP_ENOMEM; goto done; }
    gsl_rng_set(r, (unsigned long)seed);
    long start_sims;
    if ((rc = dp_search_start(g, c, oracle, cfg, seed, cur, &start_sims, err)) != DP_OK) goto done;
    double ms;
    if ((rc = inc ? dp_engine_incumbent_set(inc, cur, &ms, err) : dp_oracle_cost(oracle, cur, &ms, err)) != DP_OK) goto done;
    double cur_ms = ms, best_ms = ms;
    memcpy(best, cur, (size_t)n * sizeof(int));
    res->start = cur_ms;
    res->sims = 1 + start_sims;
    if (dp_search_trace_add(&res->trace, res->sims, best_ms) != DP_OK) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
    const double T0 = cfg->t0 * cur_ms, T1 = cfg->t_end * cur_ms;
    const long K = cfg->budget > res->sims ? cfg->budget - res->sims : 0; /* moves to try */
    for (long k = 0; k < K && D > 1; k++) {
        int u, v, du, dv;
        dp_search_propose(cfg, n, D, cur, r, &u, &v, &du, &dv);
        /* bounded simulation: a cost above the bound is rejected whatever it is exactly, so the
         * simulation stops once its clock passes it, or once a device's work left shows the
         * makespan will (early rejection; the same decisions, issue 31) */
        const double T = annealing ? dp_search_temperature(cfg, T0, T1, k, K) : 0;
        const double bound = dp_search_accept_bound(annealing, T, cur_ms, r);
        const int moved[2] = {u, v};
        if ((rc = dp_search_move_over_limit(inc ? dp_engine_run_delta_moved(inc, cur, moved, v >= 0 ? 2 : 1, bound, &ms,
                                                                             NULL, err)
                                                : dp_oracle_cost_bounded(oracle, cur, bound, &ms, err),
                                            &ms)) != DP_OK)
            goto done;
        res->sims++;
        double delta = ms - cur_ms;
        int accept = delta <= 0 || (annealing && accept_worse(T, delta, r));
        if (accept) {
            /* accepted: its cost is at most the bound, so its run was complete */
            if (inc && (rc = dp_engine_incumbent_accept(inc, cur, err)) != DP_OK) goto done;
            cur_ms = ms;
            res->accepted++;
            if (cur_ms < best_ms) {
                best_ms = cur_ms;
                memcpy(best, cur, (size_t)n * sizeof(int));
                if (dp_search_trace_add(&res->trace, res->sims, best_ms) != DP_OK) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
            }
        } else if (v >= 0) {
            cur[u] = du;
            cur[v] = dv;
        } else {
            cur[u] = du;
        }
        if (cfg->progress && ((k + 1) % 4096 == 0 || k + 1 == K)) cfg->progress(res->sims, cfg->budget, cfg->progress_ctx);
    }
    res->best = best_ms;
    memcpy(assignment, best, (size_t)n * sizeof(int));
done:
    if (rc != DP_OK) dp_search_trace_clear(&res->trace);
    dp_engine_incumbent_free(inc);
    gsl_rng_free(r);
    free(cur);
    free(best);
    return rc;
}

int dp_search_anneal(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, const dp_search_anneal_config *cfg,
                     uint64_t seed, int *assignment, dp_search_result *res, dp_error *err)
{
    return search_run(g, c, oracle, cfg, seed, 1, assignment, res, err);
}

int dp_search_local(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, const dp_search_anneal_config *cfg,
                    uint64_t seed, int *assignment, dp_search_result *res, dp_error *err)
{
    return search_run(g, c, oracle, cfg, seed, 0, assignment, res, err);
}

/* ---------------- exact branch and bound ---------------- */

void dp_search_exact_config_init(dp_search_exact_config *cfg)
{
    cfg->max_ops = 24;
    cfg->max_nodes = 200000000L;
    cfg->anneal_budget = 2000;
    cfg->list_start = 1;
    cfg->max_streams = 1;
    cfg->machine = NULL;
}

/* Devices a and b are interchangeable when swapping them leaves every cost unchanged and the
 * machine (m, NULL: none beyond the costs) treats them alike: copy engines, memory and the rest
 * are not in the cost tables (devices equal by cost but one with a single copy engine were a
 * class, and the optimum was missed: a review) */
static int interchangeable(const dp_cost *c, const dp_machine *m, int a, int b)
{
    const int D = c->n_devices;
    if (m && !dp_machine_devices_alike(m, a, b)) return 0;
    for (int v = 0; v < c->n_ops; v++)
        if (dp_cost_op(c, v, a) != dp_cost_op(c, v, b)) return 0;
#define SAME(x, y) (c->latency[x] == c->latency[y] && c->inv_bw[x] == c->inv_bw[y])
    if (!SAME((size_t)a * D + b, (size_t)b * D + a)) return 0;
    for (int x = 0; x < D; x++) {
        if (x == a || x == b) continue;
        if (!SAME((size_t)a * D + x, (size_t)b * D + x) || !SAME((size_t)x * D + a, (size_t)x * D + b)) return 0;
    }
#undef SAME
    return 1;
}

static const char *const START_METHODS[] = {"cp", "heft", "cpop", "peft", "etf"};

int dp_search_exact(const dp_graph *g, const dp_cost *c, const dp_oracle *oracle, const dp_search_exact_config *cfg_in,
                    int *assignment, dp_search_exact_result *res, dp_error *err)
{
    dp_search_exact_config cfg;
    if (cfg_in) cfg = *cfg_in;
    else dp_search_exact_config_init(&cfg);
    memset(res, 0, sizeof *res);
    const int n = g->n_ops, D = c->n_devices;
    if (!oracle) return dp_error_set(err, DP_EINVAL, "exact: a cost oracle is required (dp_engine_oracle)");
    if (cfg.max_streams > 1)
        return dp_error_set(err, DP_EINVAL, "exact: its bounds assume one op at a time per device; the machine runs %d streams",
                            cfg.max_streams);
    if (n > cfg.max_ops)
        return dp_error_set(err, DP_ERANGE, "%s: exact search is for small graphs: %d ops, limit %d", g->source, n,
                            cfg.max_ops);
    /* the bounds take a transfer's time from the cost tables, a lower bound on it under every
     * transfer model but FIFO in chunks: pipelined over a staged route, a transfer ends before
     * its store-and-forward time in the tables (37.8 against 50.8 ms on pcie-gen3-4gpu, a review),
     * so there they take none (weaker pruning, the same optimum) */
    const int comm_in_bounds = !(cfg.machine && cfg.machine->sim.transfer_model == DP_TRANSFER_FIFO && cfg.machine->sim.chunks > 1);
    int rc = DP_OK;
    int *dev = dp_alloc_malloc_n(n, sizeof(int)), *best = dp_alloc_malloc_n(n, sizeof(int)), *tmp = dp_alloc_malloc_n(n, sizeof(int));
    int *cls = dp_alloc_malloc_n(D, sizeof(int)), *used = dp_alloc_calloc_n(D, sizeof(int));
    int *cand = dp_alloc_malloc_n((size_t)n * D, sizeof(int)), *n_cand = dp_alloc_malloc_n(n, sizeof(int)), *ci = dp_alloc_malloc_n(n, sizeof(int));
    double *cand_key = dp_alloc_malloc_n(D, sizeof(double));
    double *f = dp_alloc_malloc_n(n, sizeof(double)), *tail = dp_alloc_malloc_n(n, sizeof(double)), *minw = dp_alloc_malloc_n(n, sizeof(double));
    double *rest = dp_alloc_malloc_n((size_t)n + 1, sizeof(double)), *chain = dp_alloc_malloc_n((size_t)n + 1, sizeof(double));
    double *load = dp_alloc_calloc_n(D, sizeof(double));
    double *head = dp_alloc_malloc_n((size_t)(n + 1) * D, sizeof(double)), *tl = dp_alloc_malloc_n((size_t)(n + 1) * D, sizeof(double));
    if (!head || !tl || !dev || !best || !tmp || !cls || !used || !cand || !n_cand || !ci || !cand_key || !f || !tail ||
        !minw || !rest || !chain || !load) {
        rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory for the exact search", g->source);
        goto done;
    }
    /* static quantities: minimal op times, tails (longest path after v by min op time), suffix
     * sums of min op time in topological order, the global lower bound */
    for (int v = 0; v < n; v++) {
        minw[v] = dp_cost_op(c, v, 0);
        for (int d = 1; d < D; d++) if (dp_cost_op(c, v, d) < minw[v]) minw[v] = dp_cost_op(c, v, d);
    }
    for (int k = n - 1; k >= 0; k--) {
        int v = g->topo[k];
        double t = 0;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) {
            int x = g->edge_dst[e];
            if (minw[x] + tail[x] > t) t = minw[x] + tail[x];
        }
        tail[v] = t;
    }
    rest[n] = 0;
    for (int k = n - 1; k >= 0; k--) rest[k] = rest[k + 1] + minw[g->topo[k]];
    res->lower_bound = dp_cost_lower_bound(g, c);
    for (int d = 0; d < D; d++) {
        cls[d] = d;
        for (int a = 0; a < d; a++)
            if (cls[a] == a && interchangeable(c, cfg.machine, a, d)) { cls[d] = a; break; }
    }
    /* incumbent: the best of the list schedulers */
    double best_ms = INFINITY, ms;
    dp_place_options po;
    dp_place_options_init(&po);
    po.oracle = oracle;
    for (size_t i = 0; i < (cfg.list_start ? sizeof START_METHODS / sizeof *START_METHODS : 1); i++) {
        if (!cfg.list_start) {
            memset(tmp, 0, (size_t)n * sizeof(int));
            /* an assignment over a resource limit (memory under the error policy) is a candidate
             * of infinite makespan, as in the other searches (one start or leaf over the limit
             * ended exact with the limit's error while feasible assignments existed: a review) */
            if ((rc = dp_search_move_over_limit(dp_oracle_cost(oracle, tmp, &ms, err), &ms)) != DP_OK) goto done;
            best_ms = ms;
            memcpy(best, tmp, (size_t)n * sizeof(int));
            break;
        }
        if ((rc = dp_place(START_METHODS[i], g, c, &po, tmp, NULL, NULL, err)) != DP_OK) goto done;
        if ((rc = dp_search_move_over_limit(dp_oracle_cost(oracle, tmp, &ms, err), &ms)) != DP_OK) goto done;
        if (ms < best_ms || isinf(best_ms)) { best_ms = ms; memcpy(best, tmp, (size_t)n * sizeof(int)); }
    }
    if (cfg.anneal_budget > 1 && D > 1) {
        dp_search_anneal_config ac;
        dp_search_anneal_config_init(&ac);
        ac.budget = cfg.anneal_budget;
        dp_search_result ar;
        rc = dp_search_anneal(g, c, oracle, &ac, 1, tmp, &ar, err);
        if (rc == DP_ERANGE) { /* its start over the limit: no incumbent from it */
            rc = DP_OK;
            if (err) dp_error_clear(err);
        }
        else if (rc != DP_OK) goto done;
        else {
            dp_search_trace_clear(&ar.trace);
            if (ar.best < best_ms) { best_ms = ar.best; memcpy(best, tmp, (size_t)n * sizeof(int)); }
        }
    }
    res->start = best_ms;
    /* with integer-like costs a bound equal to the incumbent cannot be beaten; allow rounding,
     * relative to the makespan (1e-9 * max(1, best) was 1e-9 in absolute terms below 1: on a graph
     * of nanosecond makespans a placement 22% better was pruned and the incumbent "proven"; a
     * review) */
    const double eps = isfinite(best_ms) ? 1e-9 * best_ms : 0; /* (every start over a limit: none) */
    int proven = 1;
    if (res->lower_bound < best_ms - eps) {
        /* iterative depth-first search: depth k assigns op topo[k]; chain[k] is the bound (a)
         * over ops topo[0..k-1] */
        double assigned = 0;
        int k = 0;
        chain[0] = 0;
        for (int d = 0; d < D; d++) { head[d] = INFINITY; tl[d] = INFINITY; }
        n_cand[0] = -1; /* candidates of a depth are built when it is entered */
        while (k >= 0) {
            int v = g->topo[k];
            if (n_cand[k] < 0) {
                /* enter depth k: candidate devices in order of v's data-ready finish */
                int nc = 0;
                for (int d = 0; d < D; d++) {
                    if (!used[d]) {
                        int first = 1; /* the lowest unused device of its class */
                        for (int a = 0; a < d; a++) if (cls[a] == cls[d] && !used[a]) { first = 0; break; }
                        if (!first) continue;
                    }
                    double t = 0;
                    for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
                        int e = g->pred_edge[q], u = g->edge_src[e];
                        double a = f[u] + (comm_in_bounds ? dp_cost_comm(c, e, dev[u], d) : 0);
                        if (a > t) t = a;
                    }
                    double key = t + dp_cost_op(c, v, d);
                    int i = nc++;
                    while (i > 0 && cand_key[i - 1] > key) {
                        cand_key[i] = cand_key[i - 1];
                        cand[(size_t)k * D + i] = cand[(size_t)k * D + i - 1];
                        i--;
                    }
                    cand_key[i] = key;
                    cand[(size_t)k * D + i] = d;
                }
                n_cand[k] = nc;
                ci[k] = 0;
            } else {
                /* undo the previous choice at this depth */
                int d = dev[v];
                double w = dp_cost_op(c, v, d);
                load[d] -= w;
                assigned -= w;
                used[d]--;
                ci[k]++;
            }
            if (ci[k] >= n_cand[k]) {
                n_cand[k] = -1;
                k--;
                continue;
            }
            if (++res->nodes > cfg.max_nodes) { proven = 0; break; }
            int d = cand[(size_t)k * D + ci[k]];
            double w = dp_cost_op(c, v, d);
            double t = 0;
            for (int q = g->pred_ptr[v]; q < g->pred_ptr[v + 1]; q++) {
                int e = g->pred_edge[q], u = g->edge_src[e];
                double a = f[u] + (comm_in_bounds ? dp_cost_comm(c, e, dev[u], d) : 0);
                if (a > t) t = a;
            }
            dev[v] = d;
            f[v] = t + w;
            load[d] += w;
            assigned += w;
            used[d]++;
            chain[k + 1] = fmax(chain[k], f[v] + tail[v]);
            double *h1 = head + (size_t)(k + 1) * D, *t1 = tl + (size_t)(k + 1) * D;
            memcpy(h1, head + (size_t)k * D, (size_t)D * sizeof(double));
            memcpy(t1, tl + (size_t)k * D, (size_t)D * sizeof(double));
            if (t < h1[d]) h1[d] = t;
            if (tail[v] < t1[d]) t1[d] = tail[v];
            double lb = fmax(chain[k + 1], (assigned + rest[k + 1]) / D);
            /* one-device relaxation: d cannot start its ops before the earliest of their data-ready
             * times, and the last of them still has its shortest tail to run afterwards */
            if (h1[d] + load[d] + t1[d] > lb) lb = h1[d] + load[d] + t1[d];
            if (lb >= best_ms - eps) continue; /* pruned: undone on the next pass at this depth */
            if (k + 1 < n) {
                k++;
                n_cand[k] = -1;
                continue;
            }
            res->leaves++;
            if ((rc = dp_search_move_over_limit(dp_oracle_cost(oracle, dev, &ms, err), &ms)) != DP_OK) goto done;
            if (ms < best_ms - eps) {
                best_ms = ms;
                memcpy(best, dev, (size_t)n * sizeof(int));
                if (best_ms <= res->lower_bound + eps) break; /* cannot do better */
            }
        }
    }
    if (isinf(best_ms)) {
        rc = dp_error_set(err, DP_ERANGE, "%s: exact: every assignment it simulated exceeds a resource limit (memory capacity "
                          "under the error policy)", g->source);
        goto done;
    }
    res->makespan = best_ms;
    res->proven = proven;
    memcpy(assignment, best, (size_t)n * sizeof(int));
done:
    free(dev); free(best); free(tmp); free(cls); free(used); free(cand); free(n_cand); free(ci); free(cand_key);
    free(f); free(tail); free(minw); free(rest); free(chain); free(load); free(head); free(tl);
    return rc;
}

/* ---------------- as placement methods ---------------- */

/* The config a search placement runs with (annealing 0: local search): o->config's keys over the
 * defaults, o->budget over the file's, checked. The one reading of it, for the placement and for
 * its check before any graph (dp_search_place_anneal_config, dp_search_place_local_config). */
static int place_search_config(int annealing, const dp_place_options *o, dp_search_anneal_config *cfg, dp_error *err)
{
    dp_search_anneal_config_init(cfg);
    if (o->config && dp_search_anneal_config_load(cfg, o->config, err) != DP_OK) return err ? err->code : DP_EINVAL;
    /* --budget replaces the file's before the values are checked (a file's budget of 3 was
     * refused though --budget 20 replaced it: a review) */
    if (o->budget > 0) cfg->budget = o->budget;
    /* the file's values together, naming it, for the search that reads them (temperatures in the
     * wrong order were found when the search started, without the file's name; local search
     * reads none: a review) */
    if (o->config && dp_search_check_config(cfg, annealing, err) != DP_OK) {
        dp_error_prefix(err, "%s", o->config);
        return err ? err->code : DP_EINVAL;
    }
    return DP_OK;
}

int dp_search_place_anneal_config(const dp_place_options *o, dp_error *err)
{
    dp_search_anneal_config cfg;
    return place_search_config(1, o, &cfg, err);
}

int dp_search_place_local_config(const dp_place_options *o, dp_error *err)
{
    dp_search_anneal_config cfg;
    return place_search_config(0, o, &cfg, err);
}

static int place_search(int annealing, const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                        int *assignment, int *has_priority, dp_error *err)
{
    dp_search_anneal_config cfg;
    int rc0 = place_search_config(annealing, o, &cfg, err);
    if (rc0 != DP_OK) return rc0;
    cfg.progress = o->progress;
    cfg.progress_ctx = o->progress_ctx;
    dp_search_result res;
    int rc = o->proposals ? dp_improve_propose_search(o->proposals, annealing, g, c, o->oracle, &cfg, o->seed, assignment, &res, err)
                          : search_run(g, c, o->oracle, &cfg, o->seed, annealing, assignment, &res, err);
    if (rc == DP_OK) dp_search_trace_clear(&res.trace);
    if (has_priority) *has_priority = 0;
    return rc;
}

int dp_search_place_anneal(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                    double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    return place_search(1, g, c, o, assignment, has_priority, err);
}

int dp_search_place_local(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                   double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    return place_search(0, g, c, o, assignment, has_priority, err);
}

int dp_search_place_exact(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                   double *priority, int *has_priority, dp_error *err)
{
    (void)priority;
    dp_search_exact_config cfg;
    dp_search_exact_config_init(&cfg);
    if (o->budget > 0) cfg.max_nodes = o->budget;
    if (o->machine) cfg.max_streams = dp_machine_max_streams(o->machine);
    cfg.machine = o->machine;
    dp_search_exact_result res;
    if (has_priority) *has_priority = 0;
    const int rc = dp_search_exact(g, c, o->oracle, &cfg, assignment, &res, err);
    if (rc == DP_OK && o->exact_proven) *o->exact_proven = res.proven;
    return rc;
}
