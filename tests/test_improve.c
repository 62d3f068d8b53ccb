/* test_improve.c: the learned improvement method (policy/dp_improve.h): the policy's gradient
 * against finite differences, the search (never worse than its start, the budget spent exactly,
 * deterministic per seed; with restarts: never worse than its first run alone, whose trace it
 * starts with, the restarts' simulations counted; its config keys and their refusal), through the
 * placement registry and as annealing's proposals), training (deterministic per seed; a resumed
 * run equals an uninterrupted one; model selection on validation graphs), the checkpoint round
 * trip and the refusal of other checkpoints naming
 * what differs, and features that do not depend on the graph's time unit. */
#include "dp_engine.h"
#include "dp_gen.h"
#include "dp_gradcheck.h"
#include "dp_h5io.h"
#include "dp_improve.h"
#include "dp_machine.h"
#include "dp_place.h"
#include "dp_test.h"
#include "dp_train.h"

#include <gsl/gsl_rng.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPEC "gen:llama-layer?seq=4096&heads=32&tp=2&hidden-blocks=2&softmax=fused"

typedef struct fixture {
    dp_graph *g;
    dp_cost *c;
    dp_engine *e;
    dp_oracle o;
} fixture;

static fixture fixture_make(const char *spec, int D)
{
    fixture f;
    dp_error err;
    f.g = dp_gen_spec(spec, &err);
    ck_assert_msg(f.g != NULL, "%s", err.msg);
    dp_machine m;
    dp_machine_init(&m);
    m.n_devices = D;
    m.devices_given = 1;
    f.c = dp_machine_costs(&m, f.g, &err);
    ck_assert_msg(f.c != NULL, "%s", err.msg);
    f.e = dp_engine_alloc(f.g, f.c, &m, &err);
    ck_assert_msg(f.e != NULL, "%s", err.msg);
    f.o = dp_engine_oracle(f.e);
    dp_machine_free(&m);
    return f;
}

static void fixture_free(fixture *f)
{
    dp_engine_free(f->e);
    dp_cost_free(f->c);
    dp_graph_free(f->g);
}

static dp_improve_model *random_model(uint64_t seed)
{
    dp_error err;
    dp_improve_config cfg;
    dp_improve_config_default(&cfg);
    cfg.arch.hidden = 8;
    dp_improve_model *m = dp_improve_model_alloc(&cfg.arch, &err);
    ck_assert_ptr_nonnull(m);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)seed);
    ck_assert_int_eq(dp_improve_model_init(m, r), DP_OK);
    /* larger last layers than the initialisation's, so the gradient is not near zero */
    for (int b = 0; b < 2; b++) {
        dp_nn_params *p = b ? dp_improve_move_params(m) : dp_improve_op_params(m);
        float *w3 = dp_nn_param(p, 4);
        for (int j = 0; j < p->t[4].cols; j++) w3[j] = (float)(gsl_rng_uniform(r) - 0.5);
    }
    gsl_rng_free(r);
    return m;
}

/* ---- the gradient of -log pi(v, d) against finite differences ---- */

typedef struct gc_ctx {
    dp_improve_state *s;
    const int *a;
    const dp_engine_schedule *sch;
    int v, d;
} gc_ctx;

static double gc_loss(void *p)
{
    gc_ctx *x = p;
    dp_improve_state_set(x->s, x->a, x->sch); /* the op network's forward with the changed parameter */
    return -dp_improve_state_logp(x->s, x->v, x->d);
}

START_TEST(policy_gradient_check)
{
    fixture f = fixture_make(SPEC, 4);
    dp_error err;
    dp_improve_model *m = random_model(3);
    dp_improve_state *s = dp_improve_state_alloc(m, f.g, f.c, &err);
    ck_assert_ptr_nonnull(s);
    int *a = malloc((size_t)f.g->n_ops * sizeof(int));
    dp_place_options po;
    dp_place_options_init(&po);
    po.seed = 5;
    ck_assert_int_eq(dp_place("random", f.g, f.c, &po, a, NULL, NULL, &err), DP_OK);
    dp_engine_schedule sch;
    ck_assert_int_eq(dp_engine_run(f.e, a, NULL, &sch, &err), DP_OK);
    dp_improve_state_set(s, a, &sch);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int trial = 0; trial < 3; trial++) {
        dp_nn_params *op = dp_improve_op_params(m), *mv = dp_improve_move_params(m);
        dp_nn_params_zero_grad(op);
        dp_nn_params_zero_grad(mv);
        int v, d;
        double logmu;
        /* epsilon 0: the behaviour policy is the policy, so -log mu = -log pi(v, d) */
        dp_improve_state_sample(s, 0.0, r, &v, &d, &logmu, 1);
        ck_assert_int_ne(d, a[v]);
        ck_assert(fabs(logmu - dp_improve_state_logp(s, v, d)) < 1e-5);
        gc_ctx x = {s, a, &sch, v, d};
        float *gop = malloc(op->n * sizeof(float)), *gmv = malloc(mv->n * sizeof(float));
        memcpy(gop, op->grad, op->n * sizeof(float));
        memcpy(gmv, mv->grad, mv->n * sizeof(float));
        ck_assert_int_eq(dp_gradcheck("op", op->param, gop, op->n, 1, gc_loss, &x, 1e-2, 5e-2, 2e-3), 0);
        ck_assert_int_eq(dp_gradcheck("move", mv->param, gmv, mv->n, 1, gc_loss, &x, 1e-2, 5e-2, 2e-3), 0);
        free(gop);
        free(gmv);
    }
    gsl_rng_free(r);
    free(a);
    dp_improve_state_free(s);
    dp_improve_model_free(m);
    fixture_free(&f);
}
END_TEST

/* ---- search ---- */

static double simulate(fixture *f, const int *a)
{
    dp_error err;
    double ms;
    ck_assert_int_eq(dp_oracle_cost(&f->o, a, &ms, &err), DP_OK);
    return ms;
}

/* an oracle that is not an engine's (it asks one) */
static int wrapped_cost(void *ctx, const int *a, double *cost, dp_error *err)
{
    return dp_oracle_cost(ctx, a, cost, err);
}

START_TEST(search_budget_never_worse_deterministic)
{
    fixture f = fixture_make(SPEC, 4);
    const int n = f.g->n_ops;
    dp_error err;
    dp_improve_model *m = random_model(7);
    int *a = malloc((size_t)n * sizeof(int)), *b = malloc((size_t)n * sizeof(int));
    for (int greedy = 0; greedy <= 1; greedy++)
        for (int mixk = 0; mixk < 3; mixk++) {
            const double mix = mixk * 0.5;
            static const char *const starts[] = {"cp", "round-robin", "random"};
            for (int st = 0; st < 3; st++) {
                dp_improve_search_config cfg;
                dp_improve_search_config_init(&cfg);
                cfg.greedy = greedy;
                cfg.mix = mix;
                cfg.anneal.budget = 150 + 37 * st;
                snprintf(cfg.anneal.init, sizeof cfg.anneal.init, "%s", starts[st]);
                dp_search_result res, res2;
                const long before = dp_engine_simulations(f.e);
                ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 11, a, &res, &err), DP_OK);
                /* the budget, exactly: counted by the search and by the engine */
                ck_assert_int_eq(res.sims, cfg.anneal.budget);
                ck_assert_int_eq(dp_engine_simulations(f.e) - before, cfg.anneal.budget);
                /* never worse than the start, and the returned placement is the best reported */
                ck_assert(res.best <= res.start);
                ck_assert_double_eq(simulate(&f, a), res.best);
                for (long k = 1; k < res.trace.n; k++) ck_assert(res.trace.best[k] < res.trace.best[k - 1]);
                ck_assert_double_eq(res.trace.best[res.trace.n - 1], res.best);
                /* the same seed, the same placement */
                ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 11, b, &res2, &err), DP_OK);
                ck_assert_mem_eq(a, b, (size_t)n * sizeof(int));
                ck_assert_int_eq(res2.accepted, res.accepted);
                dp_search_trace_clear(&res.trace);
                dp_search_trace_clear(&res2.trace);
            }
        }
    /* a search that improves: from round-robin, greedy, 400 simulations */
    dp_improve_search_config cfg;
    dp_improve_search_config_init(&cfg);
    cfg.anneal.budget = 400;
    snprintf(cfg.anneal.init, sizeof cfg.anneal.init, "random");
    dp_search_result res;
    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 2, a, &res, &err), DP_OK);
    ck_assert(res.best < res.start);
    dp_search_trace_clear(&res.trace);
    /* budget 1: the start only */
    cfg.anneal.budget = 1;
    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 2, a, &res, &err), DP_OK);
    ck_assert_int_eq(res.sims, 1);
    ck_assert_double_eq(res.best, res.start);
    dp_search_trace_clear(&res.trace);
    /* an oracle that is no engine is refused */
    dp_oracle wrapped = {.name = "wrapped", .cost = wrapped_cost, .ctx = &f.o};
    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &wrapped, &cfg, 2, a, &res, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "engine"));
    free(a);
    free(b);
    dp_improve_model_free(m);
    fixture_free(&f);
}
END_TEST

/* restarts: the budget split among R runs, the later ones from the best seen (or the start) */
START_TEST(search_restarts)
{
    fixture f = fixture_make(SPEC, 4);
    const int n = f.g->n_ops;
    dp_error err;
    dp_improve_model *m = random_model(7);
    int *a = malloc((size_t)n * sizeof(int)), *b = malloc((size_t)n * sizeof(int));
    static const int Rs[] = {2, 3, 7};
    for (int ri = 0; ri < 3; ri++)
        for (int perturb = 0; perturb <= 5; perturb += 5)
            for (int from_start = 0; from_start <= 1; from_start++)
                for (int greedy = 0; greedy <= 1; greedy++) {
                    const int R = Rs[ri];
                    dp_improve_search_config cfg;
                    dp_improve_search_config_init(&cfg);
                    cfg.restarts = R;
                    cfg.min_run = 0; /* runs as short as the budget makes them */
                    cfg.perturb = perturb;
                    cfg.restart_from_start = from_start;
                    cfg.greedy = greedy;
                    cfg.first_share = ri == 2 ? 0.5 : 0; /* R = 7: run 0 gets half the moves */
                    cfg.anneal.budget = 160 + 13 * ri;
                    snprintf(cfg.anneal.init, sizeof cfg.anneal.init, "random");
                    dp_search_result res, res2, one;
                    const long before = dp_engine_simulations(f.e);
                    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 5, a, &res, &err), DP_OK);
                    /* every simulation counted: the restarts' first placements included */
                    ck_assert_int_eq(res.sims, cfg.anneal.budget);
                    ck_assert_int_eq(dp_engine_simulations(f.e) - before, cfg.anneal.budget);
                    ck_assert(res.best <= res.start);
                    ck_assert_double_eq(simulate(&f, a), res.best);
                    for (long k = 1; k < res.trace.n; k++) {
                        ck_assert(res.trace.best[k] < res.trace.best[k - 1]);
                        ck_assert(res.trace.sims[k] > res.trace.sims[k - 1]);
                    }
                    ck_assert_double_eq(res.trace.best[res.trace.n - 1], res.best);
                    /* run 0 is a one-run search with run 0's share: K = budget - 1 moves (a
                     * random start spends none), run 0 gets ceil(K / R), or floor(K / 2) with
                     * first_share 0.5. Its trace is the prefix of this one's, and the restarts
                     * never return worse than it. */
                    const long K = cfg.anneal.budget - 1, K0 = ri == 2 ? K / 2 : K / R + (K % R ? 1 : 0);
                    dp_improve_search_config c1 = cfg;
                    c1.restarts = 1;
                    c1.first_share = 0;
                    c1.anneal.budget = 1 + K0;
                    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &c1, 5, b, &one, &err), DP_OK);
                    ck_assert(res.best <= one.best);
                    long k = 0;
                    for (; k < res.trace.n && res.trace.sims[k] <= 1 + K0; k++) {
                        ck_assert_int_lt(k, one.trace.n);
                        ck_assert_int_eq(res.trace.sims[k], one.trace.sims[k]);
                        ck_assert_double_eq(res.trace.best[k], one.trace.best[k]);
                    }
                    ck_assert_int_eq(k, one.trace.n);
                    /* the same seed, the same placement */
                    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 5, b, &res2, &err), DP_OK);
                    ck_assert_mem_eq(a, b, (size_t)n * sizeof(int));
                    ck_assert_int_eq(res2.accepted, res.accepted);
                    dp_search_trace_clear(&res.trace);
                    dp_search_trace_clear(&res2.trace);
                    dp_search_trace_clear(&one.trace);
                }
    /* min_run: 160 moves with at least 50 per run are 3 runs (floor(160 / 50)), the same search
     * as "restarts": 3; with at least 1000 per run, the one-run search */
    for (int q = 0; q < 2; q++) {
        dp_improve_search_config cm, cr;
        dp_improve_search_config_init(&cm);
        cm.restarts = 10;
        cm.min_run = q ? 1000 : 50;
        cm.anneal.budget = 161;
        snprintf(cm.anneal.init, sizeof cm.anneal.init, "random");
        cr = cm;
        cr.min_run = 0;
        cr.restarts = q ? 1 : 3;
        dp_search_result r1, r2;
        ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cm, 4, a, &r1, &err), DP_OK);
        ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cr, 4, b, &r2, &err), DP_OK);
        ck_assert_int_eq(r1.sims, 161);
        ck_assert_mem_eq(a, b, (size_t)n * sizeof(int));
        ck_assert_int_eq(r1.trace.n, r2.trace.n);
        for (long k = 0; k < r1.trace.n; k++) ck_assert_int_eq(r1.trace.sims[k], r2.trace.sims[k]);
        ck_assert_int_eq(r1.accepted, r2.accepted);
        dp_search_trace_clear(&r1.trace);
        dp_search_trace_clear(&r2.trace);
    }
    /* more runs than moves: the runs without a move are skipped, the budget is still exact */
    dp_improve_search_config cfg;
    dp_improve_search_config_init(&cfg);
    cfg.restarts = 50;
    cfg.min_run = 0;
    cfg.anneal.budget = 9;
    dp_search_result res;
    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 1, a, &res, &err), DP_OK);
    ck_assert_int_eq(res.sims, 9);
    dp_search_trace_clear(&res.trace);
    /* bad values are refused naming the field */
    cfg.restarts = 0;
    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 1, a, &res, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "restarts"));
    cfg.restarts = 2;
    cfg.perturb = -1;
    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 1, a, &res, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "perturb"));
    free(a);
    free(b);
    dp_improve_model_free(m);
    fixture_free(&f);
}
END_TEST

/* active search fine-tunes a copy of the model with the search's own simulations: the budget is
 * exact, the result never worse than the start and the same per seed, the moves differ from the
 * fixed model's (its parameters changed), and the caller's model is left as it was */
START_TEST(search_active)
{
    fixture f = fixture_make(SPEC, 4);
    const int n = f.g->n_ops;
    dp_error err;
    dp_improve_model *m = random_model(11);
    const dp_nn_params *po = dp_improve_op_params(m), *pm = dp_improve_move_params(m);
    float *before = malloc((po->n + pm->n) * sizeof(float));
    memcpy(before, po->param, po->n * sizeof(float));
    memcpy(before + po->n, pm->param, pm->n * sizeof(float));
    int *a = malloc((size_t)n * sizeof(int)), *b = malloc((size_t)n * sizeof(int)), *c = malloc((size_t)n * sizeof(int));
    dp_improve_search_config cfg;
    dp_improve_search_config_init(&cfg);
    cfg.anneal.budget = 300;
    cfg.greedy = 1;
    cfg.mix = 0;
    snprintf(cfg.anneal.init, sizeof cfg.anneal.init, "cp");
    dp_search_result fixed, act, again;
    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 3, a, &fixed, &err), DP_OK);
    cfg.active_lr = 0.05;
    cfg.active_batch = 4;
    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 3, b, &act, &err), DP_OK);
    ck_assert_int_eq(act.sims, 300);
    ck_assert(act.best <= act.start);
    ck_assert_double_eq(act.best, simulate(&f, b));
    ck_assert_int_eq(memcmp(po->param, before, po->n * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(pm->param, before + po->n, pm->n * sizeof(float)), 0);
    /* the same start and random stream: the first active_batch policy moves are the fixed model's;
     * after its first Adam step the two searches part */
    int same = fixed.accepted == act.accepted && memcmp(a, b, (size_t)n * sizeof(int)) == 0 && fixed.trace.n == act.trace.n;
    for (long k = 0; same && k < fixed.trace.n; k++) same = fixed.trace.sims[k] == act.trace.sims[k];
    ck_assert_msg(!same, "active search made the fixed model's moves");
    ck_assert_int_eq(dp_improve_search(m, f.g, f.c, &f.o, &cfg, 3, c, &again, &err), DP_OK);
    ck_assert_mem_eq(b, c, (size_t)n * sizeof(int));
    ck_assert_int_eq(again.accepted, act.accepted);
    dp_search_trace_clear(&fixed.trace);
    dp_search_trace_clear(&act.trace);
    dp_search_trace_clear(&again.trace);
    free(before);
    free(a);
    free(b);
    free(c);
    dp_improve_model_free(m);
    fixture_free(&f);
}
END_TEST

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
}

START_TEST(search_config_keys)
{
    char path[512];
    snprintf(path, sizeof path, "%s/dp-imp-cfg-%ld.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    dp_error err;
    dp_improve_search_config cfg;
    dp_improve_search_config_init(&cfg);
    write_text(path, "{\"restarts\": 6, \"perturb\": 12, \"restart_from\": \"start\", \"mix\": 0.3, \"accept\": \"greedy\", \"budget\": 77, \"first_share\": 0.25}");
    ck_assert_int_eq(dp_improve_search_config_load(&cfg, path, &err), DP_OK);
    ck_assert_int_eq(cfg.restarts, 6);
    ck_assert_int_eq(cfg.perturb, 12);
    ck_assert_int_eq(cfg.restart_from_start, 1);
    ck_assert(cfg.mix == 0.3);
    ck_assert_int_eq(cfg.greedy, 1);
    ck_assert_int_eq(cfg.anneal.budget, 77);
    ck_assert(cfg.first_share == 0.25);
    write_text(path, "{\"min_run\": 2000}");
    ck_assert_int_eq(dp_improve_search_config_load(&cfg, path, &err), DP_OK);
    ck_assert_int_eq(cfg.min_run, 2000);
    write_text(path, "{\"active_lr\": 0.001, \"active_batch\": 8}");
    ck_assert_int_eq(dp_improve_search_config_load(&cfg, path, &err), DP_OK);
    ck_assert(cfg.active_lr == 0.001);
    ck_assert_int_eq(cfg.active_batch, 8);
    write_text(path, "{\"restart_from\": \"best\"}");
    ck_assert_int_eq(dp_improve_search_config_load(&cfg, path, &err), DP_OK);
    ck_assert_int_eq(cfg.restart_from_start, 0);
    static const char *const bad[][2] = {
        {"{\"restarts\": 0}", "restarts"},       {"{\"restarts\": 1001}", "restarts"}, {"{\"restarts\": 2.5}", "restarts"},
        {"{\"restarts\": \"4\"}", "restarts"},   {"{\"perturb\": -1}", "perturb"},     {"{\"perturb\": 1.5}", "perturb"},
        {"{\"restart_from\": \"x\"}", "restart_from"}, {"{\"restart_from\": 1}", "restart_from"}, {"{\"mix\": 2}", "mix"},
        {"{\"first_share\": 1.5}", "first_share"}, {"{\"first_share\": \"half\"}", "first_share"},
        {"{\"min_run\": -1}", "min_run"}, {"{\"min_run\": 2.5}", "min_run"},
        {"{\"restart\": 4}", "restart"}, {"{\"active_lr\": -0.1}", "active_lr"}, {"{\"active_lr\": 2}", "active_lr"},
        {"{\"active_batch\": 0}", "active_batch"}, {"{\"active_batch\": 1.5}", "active_batch"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i][0]);
        dp_improve_search_config c2;
        dp_improve_search_config_init(&c2);
        ck_assert_int_eq(dp_improve_search_config_load(&c2, path, &err), DP_EINVAL);
        ck_assert_msg(strstr(err.msg, bad[i][1]) != NULL, "%s: %s", bad[i][0], err.msg);
        ck_assert_msg(strstr(err.msg, path) != NULL, "%s: %s", bad[i][0], err.msg);
    }
    unlink(path);
}
END_TEST

/* ---- training, checkpoints ---- */

static void tmp_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/dp-imp-%ld-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(), name);
}

static dp_improve_model *train_small(fixture *f, int nf, uint64_t seed, const char *ckpt, const char *traj, long *sims)
{
    dp_error err;
    dp_improve_config cfg;
    dp_improve_config_default(&cfg);
    cfg.arch.hidden = 8;
    cfg.episodes = 16;
    cfg.batch = 4;
    cfg.horizon = 6;
    cfg.seed = seed;
    cfg.checkpoint_every = 8;
    dp_improve_model *m = dp_improve_model_alloc(&cfg.arch, &err);
    ck_assert_ptr_nonnull(m);
    const dp_graph *g[2];
    const dp_cost *c[2];
    dp_engine *e[2];
    for (int i = 0; i < nf; i++) {
        g[i] = f[i].g;
        c[i] = f[i].c;
        e[i] = f[i].e;
    }
    dp_improve_io io = {ckpt, traj, NULL, NULL, 0, NULL};
    dp_improve_result res;
    int rc = dp_improve_train(m, &cfg, 1, nf, g, c, e, NULL, &io, &res, &err);
    ck_assert_msg(rc == DP_OK, "%s", err.msg);
    if (sims) *sims = res.simulations;
    return m;
}

START_TEST(train_deterministic_and_checkpoint_round_trip)
{
    fixture f[2] = {fixture_make(SPEC, 4), fixture_make("gen:ffnn?layers=2&batch=2048&in-features=16384&hidden=4096&out-features=16384&batch-blocks=1&feature-blocks=2", 8)};
    char ck[512], tj[512];
    tmp_path(ck, sizeof ck, "ck.h5");
    tmp_path(tj, sizeof tj, "traj.h5");
    long sims1 = 0, sims2 = 0;
    dp_improve_model *m1 = train_small(f, 2, 9, ck, tj, &sims1);
    dp_improve_model *m2 = train_small(f, 2, 9, NULL, NULL, &sims2);
    /* 16 episodes of 1 + 6 simulations */
    ck_assert_int_eq(sims1, 16 * 7);
    ck_assert_int_eq(sims2, sims1);
    for (int b = 0; b < 2; b++) {
        dp_nn_params *p1 = b ? dp_improve_move_params(m1) : dp_improve_op_params(m1);
        dp_nn_params *p2 = b ? dp_improve_move_params(m2) : dp_improve_op_params(m2);
        ck_assert_mem_eq(p1->param, p2->param, p1->n * sizeof(float));
    }
    /* training changed the parameters */
    dp_improve_model *m0 = random_model(1);
    dp_error err;
    /* the trajectory has one row per episode and per move */
    long ne, ns;
    ck_assert_int_eq(dp_h5io_traj_count(tj, &ne, &ns, &err), DP_OK);
    ck_assert_int_eq(ne, 16);
    ck_assert_int_eq(ns, 16 * 6);
    /* the checkpoint gives the same parameters and the same search */
    dp_improve_model *ml = NULL;
    ck_assert_int_eq(dp_improve_model_load(ck, &ml, &err), DP_OK);
    ck_assert_int_eq(dp_improve_model_arch(ml)->hidden, 8);
    for (int b = 0; b < 2; b++) {
        dp_nn_params *p1 = b ? dp_improve_move_params(m1) : dp_improve_op_params(m1);
        dp_nn_params *pl = b ? dp_improve_move_params(ml) : dp_improve_op_params(ml);
        ck_assert_int_eq(p1->n, pl->n);
        ck_assert_mem_eq(p1->param, pl->param, p1->n * sizeof(float));
    }
    /* fine-tuning starts from the loaded parameters (learning rate 0: they stay as loaded), a fresh
     * run from cfg.seed's */
    {
        dp_improve_config tc;
        dp_improve_config_default(&tc);
        tc.arch.hidden = 8;
        tc.episodes = 4;
        tc.batch = 4;
        tc.horizon = 3;
        tc.lr = tc.lr_final = 0;
        const dp_graph *g1[1] = {f[0].g};
        const dp_cost *c1[1] = {f[0].c};
        dp_engine *e1[1] = {f[0].e};
        dp_improve_model *mf = NULL;
        ck_assert_int_eq(dp_improve_model_load(ck, &mf, &err), DP_OK);
        ck_assert_int_eq(dp_improve_train(mf, &tc, 0, 1, g1, c1, e1, NULL, NULL, NULL, &err), DP_OK);
        ck_assert_mem_eq(dp_improve_op_params(mf)->param, dp_improve_op_params(m1)->param, dp_improve_op_params(m1)->n * sizeof(float));
        ck_assert_int_eq(dp_improve_train(mf, &tc, 1, 1, g1, c1, e1, NULL, NULL, NULL, &err), DP_OK);
        ck_assert(memcmp(dp_improve_op_params(mf)->param, dp_improve_op_params(m1)->param, dp_improve_op_params(m1)->n * sizeof(float)) != 0);
        dp_improve_model_free(mf);
    }
    int *a = malloc((size_t)f[1].g->n_ops * sizeof(int)), *b = malloc((size_t)f[1].g->n_ops * sizeof(int));
    dp_improve_search_config cfg;
    dp_improve_search_config_init(&cfg);
    cfg.anneal.budget = 120;
    dp_search_result r1, r2;
    ck_assert_int_eq(dp_improve_search(m1, f[1].g, f[1].c, &f[1].o, &cfg, 3, a, &r1, &err), DP_OK);
    ck_assert_int_eq(dp_improve_search(ml, f[1].g, f[1].c, &f[1].o, &cfg, 3, b, &r2, &err), DP_OK);
    ck_assert_mem_eq(a, b, (size_t)f[1].g->n_ops * sizeof(int));
    dp_search_trace_clear(&r1.trace);
    dp_search_trace_clear(&r2.trace);
    /* through the registry: place --method improve --checkpoint, and annealing with its proposals;
     * each spends its budget exactly */
    dp_place_options po;
    dp_place_options_init(&po);
    po.oracle = &f[1].o;
    po.checkpoint = ck;
    po.budget = 97;
    long before = dp_engine_simulations(f[1].e);
    ck_assert_int_eq(dp_place("improve", f[1].g, f[1].c, &po, a, NULL, NULL, &err), DP_OK);
    ck_assert_int_eq(dp_engine_simulations(f[1].e) - before, 97);
    po.checkpoint = NULL;
    po.proposals = ck;
    before = dp_engine_simulations(f[1].e);
    ck_assert_int_eq(dp_place("anneal", f[1].g, f[1].c, &po, a, NULL, NULL, &err), DP_OK);
    ck_assert_int_eq(dp_engine_simulations(f[1].e) - before, 97);
    /* improve without a checkpoint says what it needs */
    po.proposals = NULL;
    ck_assert_int_eq(dp_place("improve", f[1].g, f[1].c, &po, a, NULL, NULL, &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "--checkpoint"));
    free(a);
    free(b);
    dp_improve_model_free(ml);
    dp_improve_model_free(m0);
    dp_improve_model_free(m1);
    dp_improve_model_free(m2);
    unlink(ck);
    unlink(tj);
    fixture_free(&f[0]);
    fixture_free(&f[1]);
}
END_TEST

START_TEST(wrong_checkpoints_refused)
{
    fixture f = fixture_make(SPEC, 4);
    dp_error err;
    char ck[512], bad[512];
    tmp_path(ck, sizeof ck, "doppler.h5");
    tmp_path(bad, sizeof bad, "features.h5");
    /* a DOPPLER checkpoint */
    dp_train_config tc;
    dp_train_config_default(&tc);
    tc.arch.hidden = 8;
    tc.arch.mlp_hidden = 8;
    tc.arch.steps = 1;
    tc.arch.edge_hidden = 4;
    dp_train *tr = dp_train_alloc(f.g, f.c, &tc, &f.o, &err);
    ck_assert_ptr_nonnull(tr);
    dp_train_io io = {NULL, ck, NULL, NULL, NULL, NULL};
    ck_assert_int_eq(dp_train_run(tr, DP_TRAIN_STAGE_IL, 1, &io, &err), DP_OK);
    dp_train_free(tr);
    dp_improve_model *m = NULL;
    ck_assert_int_eq(dp_improve_model_load(ck, &m, &err), DP_EINVAL);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(err.msg, "not an improve checkpoint (made by doppler)") != NULL, "%s", err.msg);
    /* an improvement checkpoint given to --method doppler names the method */
    long sims;
    dp_improve_model *mi = train_small(&f, 1, 2, bad, NULL, &sims);
    dp_place_options po;
    dp_place_options_init(&po);
    po.oracle = &f.o;
    po.checkpoint = bad;
    int *a = malloc((size_t)f.g->n_ops * sizeof(int));
    ck_assert_int_eq(dp_place("doppler", f.g, f.c, &po, a, NULL, NULL, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "got \"improve\"") != NULL, "%s", err.msg);
    /* another feature set */
    dp_improve_config cfg;
    dp_improve_config_default(&cfg);
    cfg.arch.hidden = 8;
    char *cj = dp_improve_config_to_json(&cfg);
    char *p = strstr(cj, DP_IMPROVE_FEATURES_NAME);
    ck_assert_ptr_nonnull(p);
    p[strlen(DP_IMPROVE_FEATURES_NAME) - 1] = '0'; /* improve-v1 -> improve-v0 */
    dp_h5io_ckpt w;
    memset(&w, 0, sizeof w);
    w.graph = f.g->name;
    w.n_ops = f.g->n_ops;
    w.n_devices = 4;
    w.config_json = cj;
    w.features = "improve-v0";
    unsigned char st[8] = {0};
    w.rng_state = st;
    w.rng_size = sizeof st;
    snprintf(w.rng_name, sizeof w.rng_name, "mt19937");
    w.best_assignment = a;
    for (int v = 0; v < f.g->n_ops; v++) a[v] = 0;
    ck_assert_int_eq(dp_h5io_ckpt_write(bad, &w, dp_improve_op_params(mi), dp_improve_move_params(mi), &err), DP_OK);
    free(cj);
    ck_assert_int_eq(dp_improve_model_load(bad, &m, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "\"improve-v0\": the improvement policy's feature set is improve-v1") != NULL, "%s", err.msg);
    free(a);
    dp_improve_model_free(mi);
    unlink(ck);
    unlink(bad);
    fixture_free(&f);
}
END_TEST

/* The features read times relative to the makespan: the same graph in another time unit (every
 * cost times 1000) gives the same features. */
START_TEST(features_unit_free)
{
    dp_error err;
    fixture f = fixture_make(SPEC, 4);
    dp_machine mach;
    dp_machine_init(&mach);
    mach.n_devices = 4;
    mach.devices_given = 1;
    dp_cost *c2 = dp_machine_costs(&mach, f.g, &err);
    dp_machine_free(&mach);
    ck_assert_ptr_nonnull(c2);
    ck_assert_int_eq(c2->n_devices, 4);
    ck_assert_int_eq(f.c->n_devices, 4);
    const size_t no = (size_t)f.g->n_ops * c2->n_devices;
    for (size_t k = 0; k < no; k++) c2->op_time[k] *= 1000;
    for (int k = 0; k < c2->n_devices * c2->n_devices; k++) {
        c2->latency[k] *= 1000;
        c2->inv_bw[k] *= 1000;
    }
    dp_engine *e2 = dp_engine_alloc(f.g, c2, NULL, &err);
    ck_assert_ptr_nonnull(e2);
    dp_improve_model *m = random_model(4);
    dp_improve_state *s1 = dp_improve_state_alloc(m, f.g, f.c, &err), *s2 = dp_improve_state_alloc(m, f.g, c2, &err);
    int *a = malloc((size_t)f.g->n_ops * sizeof(int));
    dp_place_options po;
    dp_place_options_init(&po);
    po.seed = 3;
    ck_assert_int_eq(dp_place("random", f.g, f.c, &po, a, NULL, NULL, &err), DP_OK);
    dp_engine_schedule sch;
    ck_assert_int_eq(dp_engine_run(f.e, a, NULL, &sch, &err), DP_OK);
    dp_improve_state_set(s1, a, &sch);
    ck_assert_int_eq(dp_engine_run(e2, a, NULL, &sch, &err), DP_OK);
    dp_improve_state_set(s2, a, &sch);
    const float *x1 = dp_improve_state_op_features(s1), *x2 = dp_improve_state_op_features(s2);
    for (size_t k = 0; k < (size_t)f.g->n_ops * DP_IMPROVE_OP_FEATURES; k++) ck_assert(fabsf(x1[k] - x2[k]) < 1e-4f);
    float *y1 = malloc((size_t)4 * DP_IMPROVE_MOVE_FEATURES * sizeof(float)), *y2 = malloc((size_t)4 * DP_IMPROVE_MOVE_FEATURES * sizeof(float));
    for (int v = 0; v < f.g->n_ops; v += 7) {
        dp_improve_state_move_features(s1, v, y1);
        dp_improve_state_move_features(s2, v, y2);
        for (int k = 0; k < 4 * DP_IMPROVE_MOVE_FEATURES; k++)
            ck_assert_msg(fabsf(y1[k] - y2[k]) < 1e-4f, "op %d feature %d: %g and %g", v, k, y1[k], y2[k]);
    }
    free(y1);
    free(y2);
    free(a);
    dp_improve_state_free(s1);
    dp_improve_state_free(s2);
    dp_improve_model_free(m);
    dp_engine_free(e2);
    dp_cost_free(c2);
    fixture_free(&f);
}
END_TEST

/* A state set again and again (the search's: a move, then another) sorts its ops starting from
 * the last state's order (sort_by_start: insertion, qsort past a budget): its features are those
 * of a new state set once, bit for bit, after single moves (the insertion), after placements
 * drawn afresh (the budget's qsort) and after swaps back and forth */
START_TEST(state_set_again_same_features)
{
    /* the Llama layer, and a wide random DAG, whose ops' start order a new placement shuffles
     * past the insertion's budget */
    static const char *const specs[] = {SPEC, "gen:random?n=120&fat=0.9"};
    const char *spec = specs[_i];
    dp_error err;
    fixture f = fixture_make(spec, 4);
    const int n = f.g->n_ops, D = 4;
    dp_improve_model *m = random_model(5);
    dp_improve_state *kept = dp_improve_state_alloc(m, f.g, f.c, &err);
    ck_assert_ptr_nonnull(kept);
    int *a = malloc((size_t)n * sizeof(int));
    float *y1 = malloc((size_t)D * DP_IMPROVE_MOVE_FEATURES * sizeof(float)), *y2 = malloc((size_t)D * DP_IMPROVE_MOVE_FEATURES * sizeof(float));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    for (int v = 0; v < n; v++) a[v] = (int)gsl_rng_uniform_int(r, D);
    for (int step = 0; step < 120; step++) {
        if (step % 40 == 39) { /* a placement drawn afresh: most ops out of the last order */
            for (int v = 0; v < n; v++) a[v] = (int)gsl_rng_uniform_int(r, D);
        } else if (step % 3 == 2) { /* a swap of two ops' devices */
            const int u = (int)gsl_rng_uniform_int(r, n), v = (int)gsl_rng_uniform_int(r, n), t = a[u];
            a[u] = a[v];
            a[v] = t;
        } else { /* one op moved */
            a[gsl_rng_uniform_int(r, n)] = (int)gsl_rng_uniform_int(r, D);
        }
        dp_engine_schedule sch;
        ck_assert_int_eq(dp_engine_run(f.e, a, NULL, &sch, &err), DP_OK);
        dp_improve_state_set(kept, a, &sch);
        dp_improve_state *fresh = dp_improve_state_alloc(m, f.g, f.c, &err);
        ck_assert_ptr_nonnull(fresh);
        dp_improve_state_set(fresh, a, &sch);
        ck_assert_msg(memcmp(dp_improve_state_op_features(kept), dp_improve_state_op_features(fresh),
                             (size_t)n * DP_IMPROVE_OP_FEATURES * sizeof(float)) == 0, "%s, step %d: op features differ",
                      spec, step);
        for (int v = 0; v < n; v += 5) {
            dp_improve_state_move_features(kept, v, y1);
            dp_improve_state_move_features(fresh, v, y2);
            ck_assert_msg(memcmp(y1, y2, (size_t)D * DP_IMPROVE_MOVE_FEATURES * sizeof(float)) == 0,
                          "%s, step %d, op %d: move features differ", spec, step, v);
        }
        dp_improve_state_free(fresh);
    }
    gsl_rng_free(r);
    free(y1);
    free(y2);
    free(a);
    dp_improve_state_free(kept);
    dp_improve_model_free(m);
    fixture_free(&f);
}
END_TEST

/* ---- resume and model selection ---- */

typedef struct stop_ctx {
    long at;                      /* stop once this many episodes are done */
    volatile sig_atomic_t flag;
} stop_ctx;

static void stop_at(const dp_improve_progress *p, void *ctx)
{
    stop_ctx *s = ctx;
    if (p->episode >= s->at) s->flag = 1;
}

static void small_config(dp_improve_config *cfg)
{
    dp_improve_config_default(cfg);
    cfg->arch.hidden = 8;
    cfg->episodes = 24;
    cfg->batch = 4;
    cfg->horizon = 5;
    cfg->seed = 5;
    cfg->checkpoint_every = 8;
    cfg->eval_every = 8;
    cfg->eval_budget = 100;
    cfg->lr = 0.05; /* large, so that the parameters move and the evaluations differ */
    cfg->lr_final = 0.05;
}

static void assert_same_params(dp_improve_model *a, dp_improve_model *b, const char *what)
{
    for (int k = 0; k < 2; k++) {
        dp_nn_params *pa = k ? dp_improve_move_params(a) : dp_improve_op_params(a);
        dp_nn_params *pb = k ? dp_improve_move_params(b) : dp_improve_op_params(b);
        ck_assert_int_eq(pa->n, pb->n);
        ck_assert_msg(memcmp(pa->param, pb->param, pa->n * sizeof(float)) == 0, "%s: block %d differs", what, k);
    }
}

static void assert_same_rows(const char *a, const char *b)
{
    dp_error err;
    long ea, sa, va, eb, sb, vb;
    ck_assert_int_eq(dp_h5io_traj_count_rows(a, &ea, &sa, &va, &err), DP_OK);
    ck_assert_int_eq(dp_h5io_traj_count_rows(b, &eb, &sb, &vb, &err), DP_OK);
    ck_assert_int_eq(ea, eb);
    ck_assert_int_eq(sa, sb);
    ck_assert_int_eq(va, vb);
}

/* A copy of checkpoint src at dst in the layout written before the improvement method had its
 * own checkpoint groups: its networks in DOPPLER's /sel and /plc, the first graph's best
 * placement in /best_assignment. */
static void copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    ck_assert(in && out);
    char buf[65536];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0) ck_assert_uint_eq(fwrite(buf, 1, k, out), k);
    fclose(in);
    ck_assert_int_eq(fclose(out), 0);
}

static void old_layout_copy(const char *src, const char *dst, int n_ops)
{
    copy_file(src, dst);
    hid_t f = H5Fopen(dst, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    ck_assert(H5Lexists(f, "op", H5P_DEFAULT) > 0 && H5Lexists(f, "sel", H5P_DEFAULT) == 0);
    ck_assert_int_ge(H5Lmove(f, "op", f, "sel", H5P_DEFAULT, H5P_DEFAULT), 0);
    ck_assert_int_ge(H5Lmove(f, "move", f, "plc", H5P_DEFAULT, H5P_DEFAULT), 0);
    hsize_t n = (hsize_t)n_ops;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(f, "best_assignment", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int *zero = calloc((size_t)n_ops, sizeof(int));
    ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, zero), 0);
    free(zero);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
}

/* A run stopped at a batch boundary and resumed from its checkpoint ends with exactly the
 * parameters, Adam state, model selection, counters and trajectory rows of an uninterrupted
 * run; the model-selected parameters are the best scored on the validation graph, and what
 * dp_improve_model_load gives (the final ones: dp_improve_model_load_final); the evaluations
 * change nothing of the training. */
/* The trajectory's rows reach its file where a checkpoint is written (every checkpoint_every
 * episodes), not after every batch: each append rewrites the file whole, and one a batch wrote
 * 6.7 GB for an 8.8 MB file at 12,000 episodes (a walkthrough). Seen from the progress callback,
 * called after each batch: the file's episode rows are always a multiple of checkpoint_every
 * (batch 4, every 12), and all 24 at the end. */
typedef struct traj_watch {
    const char *path;
    long every, seen_bad, calls;
} traj_watch;

static void watch_rows(const dp_improve_progress *p, void *ctx)
{
    traj_watch *w = ctx;
    long ep = 0, st = 0, ev = 0;
    dp_error err;
    w->calls++;
    if (access(w->path, F_OK) != 0) return;
    ck_assert_msg(dp_h5io_traj_count_rows(w->path, &ep, &st, &ev, &err) == DP_OK, "%s", err.msg);
    if (ep % w->every != 0) w->seen_bad++;
    (void)p;
}

START_TEST(train_trajectory_at_checkpoints)
{
    fixture f = fixture_make(SPEC, 4);
    const dp_graph *g[1] = {f.g};
    const dp_cost *c[1] = {f.c};
    dp_engine *e[1] = {f.e};
    const int val[1] = {0};
    dp_error err;
    dp_improve_config cfg;
    small_config(&cfg);
    cfg.checkpoint_every = 12;
    char ck[512], tj[512];
    tmp_path(ck, sizeof ck, "tw.h5");
    tmp_path(tj, sizeof tj, "tw.traj.h5");
    unlink(ck);
    unlink(tj);
    traj_watch w = {tj, 12, 0, 0};
    dp_improve_model *m = dp_improve_model_alloc(&cfg.arch, &err);
    dp_improve_io io = {ck, tj, watch_rows, &w, 0, NULL};
    dp_improve_result r;
    ck_assert_msg(dp_improve_train(m, &cfg, 1, 1, g, c, e, val, &io, &r, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(r.episodes, 24);
    ck_assert_int_eq(w.calls, 6);
    ck_assert_msg(w.seen_bad == 0, "the trajectory file held rows between checkpoints %ld times", w.seen_bad);
    long ep = 0, st = 0, ev = 0;
    ck_assert_int_eq(dp_h5io_traj_count_rows(tj, &ep, &st, &ev, &err), DP_OK);
    ck_assert_int_eq(ep, 24);
    dp_improve_model_free(m);
    fixture_free(&f);
}
END_TEST

START_TEST(train_resume_exact_and_model_selection)
{
    /* f[0] the validation graph, f[1] the training graph */
    fixture f[2] = {fixture_make(SPEC, 4), fixture_make("gen:ffnn?layers=2&batch=2048&in-features=16384&hidden=4096&out-features=16384&batch-blocks=1&feature-blocks=2", 4)};
    const dp_graph *g[2] = {f[0].g, f[1].g};
    const dp_cost *c[2] = {f[0].c, f[1].c};
    dp_engine *e[2] = {f[0].e, f[1].e};
    const int val[2] = {1, 0};
    dp_error err;
    dp_improve_config cfg;
    small_config(&cfg);
    char cka[512], ckb[512], tja[512], tjb[512];
    tmp_path(cka, sizeof cka, "res-a.h5");
    tmp_path(ckb, sizeof ckb, "res-b.h5");
    tmp_path(tja, sizeof tja, "res-a.traj.h5");
    tmp_path(tjb, sizeof tjb, "res-b.traj.h5");
    /* uninterrupted */
    dp_improve_model *ma = dp_improve_model_alloc(&cfg.arch, &err);
    dp_improve_io ioa = {cka, tja, NULL, NULL, 0, NULL};
    dp_improve_result ra;
    ck_assert_msg(dp_improve_train(ma, &cfg, 1, 2, g, c, e, val, &ioa, &ra, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(ra.stopped, 0);
    ck_assert_int_eq(ra.episodes, 24);
    ck_assert_int_eq(ra.simulations, 24 * 6);
    /* the start, episodes 8, 16 and 24 */
    ck_assert_int_eq(ra.evaluations, 4);
    ck_assert_int_eq(ra.eval_simulations, 4 * 100);
    ck_assert(ra.selected_score <= ra.final_score);
    ck_assert(isfinite(ra.selected_score) && ra.selected_score >= 1.0);
    /* stopped after 12 episodes (a batch boundary between checkpoints), then resumed by a new model */
    dp_improve_model *mb = dp_improve_model_alloc(&cfg.arch, &err);
    stop_ctx sc = {12, 0};
    dp_improve_io iob = {ckb, tjb, stop_at, &sc, 0, &sc.flag};
    dp_improve_result rb;
    ck_assert_msg(dp_improve_train(mb, &cfg, 1, 2, g, c, e, val, &iob, &rb, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(rb.stopped, 1);
    ck_assert_int_eq(rb.episodes, 12);
    dp_improve_model_free(mb);
    /* issue 28: the method's own checkpoint groups (/op, /move), and a checkpoint of the layout
     * before (DOPPLER's /sel and /plc) still resumes, to the same end */
    char cko[512], tjo[512];
    tmp_path(cko, sizeof cko, "res-old.h5");
    tmp_path(tjo, sizeof tjo, "res-old.traj.h5");
    old_layout_copy(ckb, cko, g[0]->n_ops);
    copy_file(tjb, tjo);
    mb = dp_improve_model_alloc(&cfg.arch, &err);
    dp_improve_io iob2 = {ckb, tjb, NULL, NULL, 1, NULL};
    ck_assert_msg(dp_improve_train(mb, &cfg, 1, 2, g, c, e, val, &iob2, &rb, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(rb.stopped, 0);
    ck_assert_int_eq(rb.episodes, ra.episodes);
    ck_assert_int_eq(rb.simulations, ra.simulations);
    ck_assert_int_eq(rb.eval_simulations, ra.eval_simulations);
    ck_assert_int_eq(rb.evaluations, ra.evaluations);
    ck_assert(rb.final_score == ra.final_score && rb.selected_score == ra.selected_score);
    ck_assert_int_eq(rb.selected_episode, ra.selected_episode);
    ck_assert_int_eq(rb.selected_simulations, ra.selected_simulations);
    assert_same_params(ma, mb, "resumed against uninterrupted");
    for (int k = 0; k < 2; k++) { /* the Adam state too */
        dp_nn_params *pa = k ? dp_improve_move_params(ma) : dp_improve_op_params(ma);
        dp_nn_params *pb = k ? dp_improve_move_params(mb) : dp_improve_op_params(mb);
        ck_assert_int_eq(pa->adam_t, pb->adam_t);
        ck_assert_mem_eq(pa->m, pb->m, pa->n * sizeof(float));
        ck_assert_mem_eq(pa->v, pb->v, pa->n * sizeof(float));
    }
    assert_same_rows(tja, tjb);
    dp_improve_model *mo = dp_improve_model_alloc(&cfg.arch, &err);
    dp_improve_io ioo = {cko, tjo, NULL, NULL, 1, NULL};
    dp_improve_result ro;
    ck_assert_msg(dp_improve_train(mo, &cfg, 1, 2, g, c, e, val, &ioo, &ro, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(ro.episodes, ra.episodes);
    ck_assert(ro.final_score == ra.final_score && ro.selected_score == ra.selected_score);
    assert_same_params(ma, mo, "resumed from the old layout against uninterrupted");
    assert_same_rows(tja, tjo);
    dp_improve_model_free(mo);
    hid_t hf = H5Fopen(cko, H5F_ACC_RDONLY, H5P_DEFAULT); /* rewritten in the method's own groups */
    ck_assert(H5Lexists(hf, "op", H5P_DEFAULT) > 0 && H5Lexists(hf, "sel", H5P_DEFAULT) == 0 &&
              H5Lexists(hf, "best_assignment", H5P_DEFAULT) == 0);
    H5Fclose(hf);
    /* the checkpoints: the same final and model-selected parameters */
    dp_improve_model *fa = NULL, *fb = NULL, *sa = NULL, *sb = NULL;
    ck_assert_int_eq(dp_improve_model_load_final(cka, &fa, &err), DP_OK);
    ck_assert_int_eq(dp_improve_model_load_final(ckb, &fb, &err), DP_OK);
    ck_assert_int_eq(dp_improve_model_load(cka, &sa, &err), DP_OK);
    ck_assert_int_eq(dp_improve_model_load(ckb, &sb, &err), DP_OK);
    assert_same_params(fa, ma, "final of the checkpoint");
    assert_same_params(fb, ma, "final of the resumed checkpoint");
    assert_same_params(sa, sb, "model-selected of both checkpoints");
    /* the old layout loads for placing too: the same model-selected parameters */
    old_layout_copy(cka, cko, g[0]->n_ops);
    dp_improve_model *so = NULL;
    ck_assert_msg(dp_improve_model_load(cko, &so, &err) == DP_OK, "%s", err.msg);
    assert_same_params(sa, so, "model-selected of the old layout");
    dp_improve_model_free(so);
    /* the model-selected parameters score what training said on the validation graph */
    dp_improve_search_config scfg;
    dp_improve_search_config_init(&scfg);
    scfg.anneal.budget = cfg.eval_budget;
    snprintf(scfg.anneal.init, sizeof scfg.anneal.init, "cp"); /* model selection searches from cp */
    int *a = malloc((size_t)f[0].g->n_ops * sizeof(int));
    dp_search_result r;
    const double lb = dp_cost_lower_bound(f[0].g, f[0].c);
    ck_assert_int_eq(dp_improve_search(sa, f[0].g, f[0].c, &f[0].o, &scfg, cfg.seed, a, &r, &err), DP_OK);
    ck_assert(r.best / lb == ra.selected_score);
    dp_search_trace_clear(&r.trace);
    ck_assert_int_eq(dp_improve_search(fa, f[0].g, f[0].c, &f[0].o, &scfg, cfg.seed, a, &r, &err), DP_OK);
    ck_assert(r.best / lb == ra.final_score);
    dp_search_trace_clear(&r.trace);
    /* in this run the parameters of episode 16 score best: neither the start's nor the final ones,
     * and place uses them, not the final ones */
    ck_assert_int_eq(ra.selected_episode, 16);
    ck_assert(ra.selected_score < ra.final_score);
    ck_assert(memcmp(dp_improve_op_params(sa)->param, dp_improve_op_params(fa)->param,
                         dp_improve_op_params(fa)->n * sizeof(float)) != 0 ||
                  memcmp(dp_improve_move_params(sa)->param, dp_improve_move_params(fa)->param,
                         dp_improve_move_params(fa)->n * sizeof(float)) != 0);
    /* the evaluations change nothing of the training: without the validation graph, the same
     * final parameters */
    dp_improve_model *mc = dp_improve_model_alloc(&cfg.arch, &err);
    dp_improve_result rc;
    ck_assert_int_eq(dp_improve_train(mc, &cfg, 1, 1, g + 1, c + 1, e + 1, NULL, NULL, &rc, &err), DP_OK);
    ck_assert_int_eq(rc.evaluations, 0);
    ck_assert(isnan(rc.selected_score));
    assert_same_params(mc, ma, "without validation graphs");
    /* a resume on other graphs is refused naming both */
    dp_improve_io iod = {cka, NULL, NULL, NULL, 1, NULL};
    ck_assert_int_eq(dp_improve_train(mc, &cfg, 1, 1, g + 1, c + 1, e + 1, NULL, &iod, &rc, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "a run on other graphs") != NULL, "%s", err.msg);
    free(a);
    dp_improve_model_free(fa); dp_improve_model_free(fb); dp_improve_model_free(sa); dp_improve_model_free(sb);
    dp_improve_model_free(ma); dp_improve_model_free(mb); dp_improve_model_free(mc);
    unlink(cka); unlink(ckb); unlink(tja); unlink(tjb); unlink(cko); unlink(tjo);
    fixture_free(&f[0]);
    fixture_free(&f[1]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("improve");
    TCase *t = tcase_create("improve");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, policy_gradient_check);
    tcase_add_test(t, search_budget_never_worse_deterministic);
    tcase_add_test(t, search_restarts);
    tcase_add_test(t, search_config_keys);
    tcase_add_test(t, search_active);
    tcase_add_test(t, train_deterministic_and_checkpoint_round_trip);
    tcase_add_test(t, wrong_checkpoints_refused);
    tcase_add_test(t, features_unit_free);
    tcase_add_loop_test(t, state_set_again_same_features, 0, 2);
    tcase_add_test(t, train_trajectory_at_checkpoints);
    tcase_add_test(t, train_resume_exact_and_model_selection);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return dp_test_run(suite());
}
