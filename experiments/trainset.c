/* trainset.c: the graphs of a `doppler train` run (see trainset.h). */
#include "trainset.h"
#include "dp_alloc.h"
#include "dp_gen.h"

#include <dirent.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dp_trainset_free(dp_trainset *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->src[i]);
        if (s->coarse && s->coarse[i]) { /* it owns g[i] and p[i] */
            dp_coarse_problem_free(s->coarse[i]);
            free(s->coarse[i]);
            dp_problem_free(s->orig_p[i]);
            if (s->own) dp_cost_free(s->own[i]);
            dp_graph_free(s->orig[i]);
            continue;
        }
        if (s->p) dp_problem_free(s->p[i]);
        if (s->own) dp_cost_free(s->own[i]);
        if (s->g) dp_graph_free(s->g[i]);
    }
    free(s->src); free(s->validation); free(s->g); free(s->p); free(s->own); free((void *)s->c); free(s->e); free(s->bw); free(s->cr); free(s->dv);
    free(s->coarse); free(s->orig); free(s->orig_p); free(s->drawn_hash);
    memset(s, 0, sizeof *s);
}

/* --speed-range: graph i's device speeds, log-uniform in the range, device by device from a
 * generator seeded with sp_seed + i; with c, every op time on device d is divided by speed d (the
 * transfers stay: a device computes faster, its links do not change). The slowest and fastest
 * speeds go to *lo and *hi. DP_OK or DP_ENOMEM. */
static int graph_speeds(const dp_trainset *s, int i, int n_devices, dp_cost *c, double *lo, double *hi)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return DP_ENOMEM;
    gsl_rng_set(r, s->sp_seed + (unsigned long)i);
    const double a = log(s->draws.sp[0]), b = log(s->draws.sp[1]);
    *lo = INFINITY;
    *hi = 0;
    for (int d = 0; d < n_devices; d++) {
        const double sp = exp(a + gsl_rng_uniform(r) * (b - a));
        if (sp < *lo) *lo = sp;
        if (sp > *hi) *hi = sp;
        if (c)
            for (int v = 0; v < c->n_ops; v++) c->op_time[(size_t)v * c->n_devices + d] /= sp;
    }
    gsl_rng_free(r);
    if (c) dp_cost_update_homogeneous(c);
    return DP_OK;
}

const char *dp_trainset_note(const dp_trainset *s, int i)
{
    static char buf[160];
    size_t n = 0;
    buf[0] = '\0';
    const dp_graph *g = s->coarse && s->coarse[i] ? s->orig[i] : s->g[i];
    if (g->cost_kind == DP_GRAPH_COST_PHYSICAL) {
        /* to the last digit: place --comm-ratio / --bandwidth with it gives train's figure (3
         * digits gave another makespan: a review) */
        if (s->cr && s->cr[i] > 0) n = (size_t)snprintf(buf, sizeof buf, "  (comm %.17g x time)", s->cr[i]);
        else if (s->bw) n = (size_t)snprintf(buf, sizeof buf, "  (links %.17g bytes/s)", s->bw[i]);
    }
    double lo, hi;
    if (s->draws.sp[0] > 0 && s->c && s->c[i] && n < sizeof buf &&
        graph_speeds(s, i, s->c[i]->n_devices, NULL, &lo, &hi) == DP_OK)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "  (device speeds %.3g..%.3g)", lo, hi);
    if (s->coarse && s->coarse[i] && n < sizeof buf)
        snprintf(buf + n, sizeof buf - n, "  (grouped from %d ops)", g->n_ops);
    return buf;
}

const dp_oracle *dp_trainset_oracle(const dp_trainset *s, int i)
{
    return s->coarse && s->coarse[i] ? &s->coarse[i]->expanded : &s->p[i]->oracle;
}

dp_problem *dp_trainset_problem(const dp_trainset *s, int i, dp_machine *m, const dp_graph *g, dp_cost **own,
                                dp_error *err)
{
    *own = NULL;
    const double keep_bw = m->bandwidth_Bps, keep_cr = m->comm_ratio;
    const int keep_nd = m->n_devices, keep_given = m->devices_given;
    if (s->bw) m->bandwidth_Bps = s->bw[i];
    if (s->cr) m->comm_ratio = s->cr[i];
    if (s->dv) {
        m->n_devices = s->dv[i];
        m->devices_given = 1;
    }
    dp_problem *p = NULL;
    if (s->draws.sp[0] > 0) {
        dp_cost *c = dp_machine_costs(m, g, err);
        double lo, hi;
        if (c && graph_speeds(s, i, c->n_devices, c, &lo, &hi) != DP_OK) {
            dp_cost_free(c);
            c = NULL;
            dp_error_set(err, DP_ENOMEM, "out of memory");
        }
        if (c && !(p = dp_problem_alloc_with_costs(g, c, m, err))) dp_cost_free(c);
        else *own = c;
    } else {
        p = dp_problem_alloc(g, m, err);
    }
    /* only what the draws set goes back: loading a topology (the first problem) sets the machine's
     * device count, which the next graph's problem must keep */
    if (s->bw) m->bandwidth_Bps = keep_bw;
    if (s->cr) m->comm_ratio = keep_cr;
    if (s->dv) {
        m->n_devices = keep_nd;
        m->devices_given = keep_given;
    } else if (!m->topo && !keep_given) {
        /* a graph made for a device count (a Llama graph's tp) sets the uniform machine's to it
         * (dp_machine_costs): the next graph, made for none, takes the machine's own again (it
         * took the graph before it's: an STG graph listed on 4 devices trained and was reported
         * on 2 after a tp-2 Llama graph; a review) */
        m->n_devices = keep_nd;
    }
    return p;
}

/* n draws, log-uniform in [lo, hi], from a generator of their own seeded with seed (so that the
 * graphs drawn do not change); NULL when out of memory */
static double *draw_log_uniform(int n, double lo, double hi, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double *x = r ? dp_alloc_malloc((size_t)(n > 0 ? n : 1) * sizeof *x) : NULL;
    if (x) {
        gsl_rng_set(r, seed);
        for (int i = 0; i < n; i++) x[i] = exp(log(lo) + gsl_rng_uniform(r) * (log(hi) - log(lo)));
    }
    if (r) gsl_rng_free(r);
    return x;
}

static int trainset_push(dp_trainset *s, const char *src, int validation, dp_error *err)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        char **a = dp_alloc_realloc(s->src, (size_t)cap * sizeof *a);
        if (a) s->src = a;
        int *v = dp_alloc_realloc(s->validation, (size_t)cap * sizeof *v);
        if (v) s->validation = v;
        if (!a || !v) return dp_error_set(err, DP_ENOMEM, "out of memory");
        s->cap = cap;
    }
    if (!(s->src[s->n] = dp_alloc_strdup(src))) return dp_error_set(err, DP_ENOMEM, "out of memory");
    s->validation[s->n++] = validation;
    return DP_OK;
}

static int is_graph_file(const char *name)
{
    static const char *const ext[] = {".json", ".txt", ".stg", ".dot"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t k = strlen(ext[i]);
        if (n > k && strcmp(name + n - k, ext[i]) == 0) return 1;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "A,B,C": each a graph file, a folder (its .json, .txt, .stg and .dot files, in name order) or a
 * generator spec gen:MODEL?NAME=VALUE&... */
static int trainset_add_list(dp_trainset *s, const char *list, int validation, dp_error *err)
{
    /* a list that names nothing ("" or ",") is refused: --validation '' dropped the four drawn
     * validation graphs and trained with none, saying "validation" (a review) */
    if (strspn(list, ",") == strlen(list))
        return dp_error_set(err, DP_EINVAL, "%s: no graph named (a comma-separated list of files, folders or gen: specs)",
                            validation ? "--validation" : "--graphs");
    char *copy = dp_alloc_strdup(list), *save = NULL;
    if (!copy) return dp_error_set(err, DP_ENOMEM, "out of memory");
    int rc = DP_OK;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == DP_OK; tok = strtok_r(NULL, ",", &save)) {
        if (!*tok) continue;
        DIR *d = strncmp(tok, "gen:", 4) == 0 ? NULL : opendir(tok);
        if (!d) {
            rc = trainset_push(s, tok, validation, err);
            continue;
        }
        char **names = NULL;
        int nn = 0, cap = 0;
        struct dirent *de;
        while ((de = readdir(d)) && rc == DP_OK) {
            if (de->d_name[0] == '.' || !is_graph_file(de->d_name)) continue;
            if (nn == cap) {
                cap = cap ? 2 * cap : 16;
                char **x = dp_alloc_realloc(names, (size_t)cap * sizeof *x);
                if (!x) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); break; }
                names = x;
            }
            size_t len = strlen(tok) + strlen(de->d_name) + 2;
            if (!(names[nn] = dp_alloc_malloc(len))) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); break; }
            snprintf(names[nn++], len, "%s/%s", tok, de->d_name);
        }
        closedir(d);
        if (rc == DP_OK && nn == 0) rc = dp_error_set(err, DP_EINVAL, "%s: a folder without graph files (.json, .txt, .stg, .dot)", tok);
        if (nn > 1) qsort(names, (size_t)nn, sizeof *names, cmp_str);
        for (int i = 0; i < nn; i++) {
            if (rc == DP_OK) rc = trainset_push(s, names[i], validation, err);
            free(names[i]);
        }
        free(names);
    }
    free(copy);
    return rc;
}

static int in_testset(char *const *t, int nt, const char *spec)
{
    for (int i = 0; i < nt; i++)
        if (strcmp(t[i], spec) == 0) return 1;
    return 0;
}

/* Draw count graphs of the families (comma-separated) from r, round robin over the families,
 * redrawing any spec of the test set or drawn before, and any graph with a test graph's content. */
static int trainset_add_family(dp_trainset *s, const char *families, int count, gsl_rng *r, int validation,
                               const dp_testset *test, dp_error *err)
{
    /* "all": the wide corpus, in its commands' order (dp_gen.h) */
    char *copy = dp_alloc_strdup(strcmp(families, "all") == 0 ? DP_GEN_WIDE_CORPUS : families), *save = NULL;
    if (!copy) return dp_error_set(err, DP_ENOMEM, "out of memory");
    enum { MAX_FAMILIES = 64 };
    const char *fam[MAX_FAMILIES];
    int nf = 0, rc = DP_OK;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == DP_OK; tok = strtok_r(NULL, ",", &save))
        if (*tok) {
            if (nf == MAX_FAMILIES) rc = dp_error_set(err, DP_EINVAL, "--family: more than %d families named", MAX_FAMILIES);
            else fam[nf++] = tok;
        }
    if (rc == DP_OK && nf == 0) rc = dp_error_set(err, DP_EINVAL, "--family: no family named");
    for (int i = 0; i < count && rc == DP_OK; i++) {
        char spec[1024];
        int tries = 0, dup;
        do {
            if ((rc = dp_gen_family_spec(fam[i % nf], r, spec, sizeof spec, err)) != DP_OK) break;
            dup = in_testset(test->spec, test->n_spec, spec) || in_testset(s->src, s->n, spec);
            uint64_t h = 0;
            if (!dup) {
                dp_graph *g = dp_gen_spec(spec, err);
                if (!g) { rc = err->code ? err->code : DP_EINVAL; break; }
                dup = dp_testset_match(test, g) != NULL;
                /* by content too: two specs can make one graph (a CNN whose reduce-every is at
                 * least its modules reduces nowhere, as with 0), and a validation graph equal
                 * to a training graph was drawn (5 of the first 300 family seeds of cnn; a
                 * review) */
                h = dp_graph_content_hash(g);
                for (int k = 0; k < s->n_drawn && !dup; k++) dup = s->drawn_hash[k] == h;
                dp_graph_free(g);
            }
            if (!dup) {
                if (s->n_drawn == s->drawn_cap) {
                    int cap = s->drawn_cap ? 2 * s->drawn_cap : 16;
                    uint64_t *a = dp_alloc_realloc(s->drawn_hash, (size_t)cap * sizeof *a);
                    if (!a) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); break; }
                    s->drawn_hash = a;
                    s->drawn_cap = cap;
                }
                s->drawn_hash[s->n_drawn++] = h;
            }
        } while (dup && ++tries < 1000);
        if (rc == DP_OK && dup) rc = dp_error_set(err, DP_EINVAL, "--family %s: no new graph in 1000 draws", fam[i % nf]);
        if (rc == DP_OK) rc = trainset_push(s, spec, validation, err);
    }
    free(copy);
    return rc;
}

int dp_trainset_load(dp_trainset *s, const char *format, dp_machine *m, const dp_testset *test, int refuse_test,
                     dp_error *err)
{
    s->g = dp_alloc_calloc((size_t)s->n + 1, sizeof *s->g);
    s->p = dp_alloc_calloc((size_t)s->n + 1, sizeof *s->p);
    s->own = dp_alloc_calloc((size_t)s->n + 1, sizeof *s->own);
    s->c = dp_alloc_calloc((size_t)s->n + 1, sizeof *s->c);
    s->e = dp_alloc_calloc((size_t)s->n + 1, sizeof *s->e);
    if (!s->g || !s->p || !s->own || !s->c || !s->e) return dp_error_set(err, DP_ENOMEM, "out of memory");
    if (s->coarsen > 0 && (!(s->coarse = dp_alloc_calloc((size_t)s->n + 1, sizeof *s->coarse)) ||
                           !(s->orig = dp_alloc_calloc((size_t)s->n + 1, sizeof *s->orig)) ||
                           !(s->orig_p = dp_alloc_calloc((size_t)s->n + 1, sizeof *s->orig_p))))
        return dp_error_set(err, DP_ENOMEM, "out of memory");
    for (int i = 0; i < s->n; i++) {
        const char *src = s->src[i];
        const char *role = s->validation[i] ? "validation" : "training";
        if (refuse_test && (strncmp(src, "gen:", 4) == 0 ? in_testset(test->spec, test->n_spec, src) : dp_testset_is_doppler_file(src)))
            return dp_error_set(err, DP_EINVAL, "%s: a test graph (data/testsets/transfer.txt and the DOPPLER graph files are "
                                "never trained or model-selected on), given as a %s graph", src, role);
        s->g[i] = strncmp(src, "gen:", 4) == 0 ? dp_gen_spec(src, err) : dp_graph_read(src, format, err);
        if (!s->g[i]) return err->code ? err->code : DP_EINVAL;
        /* by content too: a test graph renamed, copied or converted */
        const char *same = refuse_test ? dp_testset_match(test, s->g[i]) : NULL;
        if (same)
            return dp_error_set(err, DP_EINVAL, "%s: a test graph, the same structure and costs as %s (data/testsets/transfer.txt "
                                "and the DOPPLER graph files are never trained or model-selected on), given as a %s graph",
                                src, same, role);
        /* --bandwidth-range, --comm-ratio-range: this graph's own uniform machine */
        if (!(s->p[i] = dp_trainset_problem(s, i, m, s->g[i], &s->own[i], err))) return err->code ? err->code : DP_EINVAL;
        if (s->coarsen > 0) { /* --coarsen: the group graph replaces the graph, on its costs there */
            dp_coarse_problem *cp = dp_alloc_malloc(sizeof *cp);
            if (!cp) return dp_error_set(err, DP_ENOMEM, "out of memory");
            int rc = dp_coarse_problem_init(cp, s->g[i], s->p[i]->costs, s->coarsen_rule, s->coarsen, err);
            if (rc == DP_OK && (rc = dp_coarse_problem_expand_oracle(cp, &s->p[i]->oracle, err)) != DP_OK)
                dp_coarse_problem_free(cp);
            if (rc != DP_OK) {
                free(cp);
                dp_error_prefix(err, "%s", src);
                return rc;
            }
            s->orig_p[i] = s->p[i];
            s->orig[i] = s->g[i];
            s->coarse[i] = cp;
            s->g[i] = cp->graph;
            s->p[i] = cp->problem;
        }
        s->c[i] = s->p[i]->costs;
        s->e[i] = s->p[i]->engine;
    }
    /* a validation graph given (--validation) is held out: none is a training graph, by content
     * (the same file, a copy, a folder in both lists, one spec written two ways; --graph G
     * --validation G model-selected on the graph it trained on: a walkthrough). A drawn one is
     * redrawn past every graph drawn before (trainset_add_family), not past the given training
     * graphs, which are read only here: refusing it would end a run for a draw (a review) */
    uint64_t *h = dp_alloc_malloc_n((size_t)s->n + 1, sizeof *h);
    if (!h) return dp_error_set(err, DP_ENOMEM, "out of memory");
    for (int i = 0; i < s->n; i++) h[i] = dp_graph_content_hash(s->orig && s->orig[i] ? s->orig[i] : s->g[i]);
    int rc = DP_OK;
    for (int i = 0; i < s->n && rc == DP_OK; i++)
        for (int j = 0; j < s->n && rc == DP_OK && s->validation[i] && i < s->given_end; j++)
            if (!s->validation[j] && h[j] == h[i])
                rc = dp_error_set(err, DP_EINVAL, "%s: validation graph %s is training graph %s (%s) too, the same structure "
                                  "and costs: validation graphs are held out", s->src[i], s->g[i]->name, s->g[j]->name,
                                  s->src[j]);
    free(h);
    return rc;
}

int dp_trainset_assemble(dp_trainset *gs, dp_testset *test, const char *graph, const char *graphs, const char *family,
                         int family_count, unsigned long family_seed, const char *validation, int *val_count,
                         dp_error *err)
{
    int rc = dp_testset_load(test, err);
    if (rc == DP_OK && graph) rc = trainset_push(gs, graph, 0, err);
    if (rc == DP_OK && graphs) rc = trainset_add_list(gs, graphs, 0, err);
    gsl_rng *fr = gsl_rng_alloc(gsl_rng_mt19937);
    if (!fr) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
    else gsl_rng_set(fr, family_seed);
    if (rc == DP_OK && family) rc = trainset_add_family(gs, family, family_count, fr, 0, test, err);
    if (rc == DP_OK && validation) rc = trainset_add_list(gs, validation, 1, err);
    gs->given_end = gs->n;
    /* as DOPPLER's trainer: four validation graphs drawn from --family unless --validation */
    if (*val_count < 0) *val_count = family && !validation ? 4 : 0;
    if (rc == DP_OK && *val_count > 0) rc = trainset_add_family(gs, family, *val_count, fr, 1, test, err);
    if (fr) gsl_rng_free(fr);
    if (rc == DP_OK && (gs->n == 0 || gs->validation[0]))
        rc = dp_error_set(err, DP_EINVAL, "no training graph: give --graph, --graphs or --family");
    /* --bandwidth-range, --comm-ratio-range: log-uniform, one draw per graph in the set's order, from
     * generators of their own (seeded from the family seed), so the graphs drawn do not change */
    const dp_trainset_draws *d = &gs->draws;
    gs->sp_seed = family_seed ^ 0x73706565UL;
    if (rc == DP_OK && d->bw[0] > 0 && !(gs->bw = draw_log_uniform(gs->n, d->bw[0], d->bw[1], family_seed ^ 0x62616e64UL)))
        rc = dp_error_set(err, DP_ENOMEM, "out of memory");
    if (rc == DP_OK && d->cr[0] > 0 && !(gs->cr = draw_log_uniform(gs->n, d->cr[0], d->cr[1], family_seed ^ 0x636f6d6dUL)))
        rc = dp_error_set(err, DP_ENOMEM, "out of memory");
    /* --devices-range: log-uniform over [lo, hi + 1) rounded down, so each count of the range can
     * be drawn and small counts as often per doubling as large ones */
    if (rc == DP_OK && d->dv[0] > 0) {
        double *x = draw_log_uniform(gs->n, d->dv[0], d->dv[1] + 1, family_seed ^ 0x64657673UL);
        if (!x || !(gs->dv = dp_alloc_malloc((size_t)gs->n * sizeof *gs->dv))) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
        for (int i = 0; rc == DP_OK && i < gs->n; i++) gs->dv[i] = x[i] >= d->dv[1] ? d->dv[1] : (int)x[i];
        free(x);
    }
    /* both ranges: each graph on one kind of machine, a fair coin from a third generator; a
     * graph of the bandwidth kind gets comm_ratio 0 (off), and either keeps its own draw above */
    if (rc == DP_OK && gs->bw && gs->cr) {
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        if (!r) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
        else {
            gsl_rng_set(r, family_seed ^ 0x6d697864UL);
            for (int i = 0; i < gs->n; i++)
                if (gsl_rng_uniform(r) >= 0.5) gs->cr[i] = 0;
            gsl_rng_free(r);
        }
    }
    return rc;
}
