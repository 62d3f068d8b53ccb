/* dp_calib.c: fitting the affine cost model to a profile, calibration files, cost tables. */
#include "dp_calib.h"
#include "dp_json.h"

#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the fit ---- */

/* regressor j of sample i: 1, FLOPs or bytes */
static double reg(int j, double f, double b)
{
    return j == 0 ? 1.0 : j == 1 ? f : b;
}

/* Least squares on relative error for the regressors in mask (bit 0: 1, bit 1: F, bit 2: B).
 * Fills coef[3] (zeros for the absent ones) and the relative residuals' sum of squares.
 * Returns 0, or -1 when the fit is impossible (too few samples, GSL failure). */
static int fit_subset(int n, const double *F, const double *B, const double *y, int mask, int robust,
                      double coef[3], double *sse)
{
    int cols[3], p = 0;
    for (int j = 0; j < 3; j++)
        if (mask & (1 << j)) cols[p++] = j;
    if (n < p + 1 || p == 0) return -1;
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, (size_t)p);
    gsl_vector *t = gsl_vector_alloc((size_t)n), *c = gsl_vector_alloc((size_t)p);
    gsl_matrix *cov = gsl_matrix_alloc((size_t)p, (size_t)p);
    int rc = -1;
    if (!X || !t || !c || !cov) goto done;
    /* row i divided by y_i: the residual is the relative error */
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < p; k++) gsl_matrix_set(X, (size_t)i, (size_t)k, reg(cols[k], F[i], B[i]) / y[i]);
        gsl_vector_set(t, (size_t)i, 1.0);
    }
    /* columns of very different magnitudes (1, 1e9 FLOPs): scale each to unit max for the SVD */
    double colscale[3];
    for (int k = 0; k < p; k++) {
        double mx = 0;
        for (int i = 0; i < n; i++) mx = fmax(mx, fabs(gsl_matrix_get(X, (size_t)i, (size_t)k)));
        colscale[k] = mx > 0 ? mx : 1;
        for (int i = 0; i < n; i++) gsl_matrix_set(X, (size_t)i, (size_t)k, gsl_matrix_get(X, (size_t)i, (size_t)k) / colscale[k]);
    }
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int st;
    if (robust) {
        gsl_multifit_robust_workspace *w = gsl_multifit_robust_alloc(gsl_multifit_robust_bisquare, (size_t)n, (size_t)p);
        st = w ? gsl_multifit_robust(X, t, c, cov, w) : -1;
        if (w) gsl_multifit_robust_free(w);
    } else {
        gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc((size_t)n, (size_t)p);
        double chisq;
        st = w ? gsl_multifit_linear(X, t, c, cov, &chisq, w) : -1;
        if (w) gsl_multifit_linear_free(w);
    }
    gsl_set_error_handler(old);
    /* robust fits report non-convergence (GSL_EMAXITER) but still return usable estimates */
    if (st != 0 && !(robust && st == GSL_EMAXITER)) goto done;
    coef[0] = coef[1] = coef[2] = 0;
    for (int k = 0; k < p; k++) coef[cols[k]] = gsl_vector_get(c, (size_t)k) / colscale[k];
    double s = 0;
    for (int i = 0; i < n; i++) {
        double pred = coef[0] + coef[1] * F[i] + coef[2] * B[i];
        double r = (pred - y[i]) / y[i];
        s += r * r;
    }
    *sse = s;
    rc = 0;
done:
    gsl_matrix_free(X); gsl_vector_free(t); gsl_vector_free(c); gsl_matrix_free(cov);
    return rc;
}

static void fit_stats(int n, const double *F, const double *B, const double *y, const double coef[3],
                      dp_calib_fit_info *info)
{
    double mean = gsl_stats_mean(y, 1, (size_t)n), ss_res = 0, ss_tot = 0, rel2 = 0, relmax = 0;
    for (int i = 0; i < n; i++) {
        double pred = coef[0] + coef[1] * F[i] + coef[2] * B[i];
        ss_res += (pred - y[i]) * (pred - y[i]);
        ss_tot += (y[i] - mean) * (y[i] - mean);
        double r = fabs(pred - y[i]) / y[i];
        rel2 += r * r;
        relmax = fmax(relmax, r);
    }
    info->n = n;
    info->r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
    info->rms_rel = sqrt(rel2 / n);
    info->max_rel = relmax;
}

/* The model for samples (F, B, y), allowed regressors in `allowed` (bits as fit_subset). */
static int fit_model(int n, const double *F, const double *B, const double *y, int allowed, dp_calib_coef *out,
                     dp_calib_fit_info *info)
{
    double best_bic = INFINITY, best[3] = {0, 0, 0};
    int best_mask = 0;
    for (int mask = 1; mask < 8; mask++) {
        if ((mask & allowed) != mask) continue;
        double c[3], sse;
        if (fit_subset(n, F, B, y, mask, 0, c, &sse) != 0) continue;
        if (c[0] < 0 || c[1] < 0 || c[2] < 0) continue;
        int p = __builtin_popcount((unsigned)mask);
        double bic = n * log(fmax(sse, 1e-300) / n) + p * log((double)n);
        if (bic < best_bic) {
            best_bic = bic;
            best_mask = mask;
            memcpy(best, c, sizeof best);
        }
    }
    if (!best_mask) return -1;
    /* outliers (a preempted run on a shared machine): refit robustly when a relative residual
     * lies beyond 4 robust standard deviations */
    double *r = malloc((size_t)n * sizeof(double));
    if (!r) return -1;
    for (int i = 0; i < n; i++) r[i] = (best[0] + best[1] * F[i] + best[2] * B[i] - y[i]) / y[i];
    gsl_sort(r, 1, (size_t)n);
    double med = gsl_stats_median_from_sorted_data(r, 1, (size_t)n);
    for (int i = 0; i < n; i++) r[i] = fabs(r[i] - med);
    gsl_sort(r, 1, (size_t)n);
    double mad = 1.4826 * gsl_stats_median_from_sorted_data(r, 1, (size_t)n);
    double worst = r[n - 1];
    free(r);
    int robust = 0;
    int p = __builtin_popcount((unsigned)best_mask);
    if (n > p + 2 && worst > 4 * mad && mad > 0) {
        double c[3], sse;
        if (fit_subset(n, F, B, y, best_mask, 1, c, &sse) == 0 && c[0] >= 0 && c[1] >= 0 && c[2] >= 0) {
            memcpy(best, c, sizeof best);
            robust = 1;
        }
    }
    out->a_s = best[0];
    out->b_s_per_flop = best[1];
    out->c_s_per_byte = best[2];
    fit_stats(n, F, B, y, best, info);
    info->robust = robust;
    int k = 0;
    if (best_mask & 1) info->terms[k++] = '1';
    if (best_mask & 2) info->terms[k++] = 'F';
    if (best_mask & 4) info->terms[k++] = 'B';
    info->terms[k] = 0;
    return 0;
}

void dp_calib_free(dp_calib *c)
{
    if (!c) return;
    for (int d = 0; d < c->n_devices && c->dev; d++) {
        dp_calib_device *v = &c->dev[d];
        free(v->name);
        for (int k = 0; k < v->n_kinds; k++) free(v->kind[k]);
        free(v->kind);
        free(v->coef);
        free(v->info);
    }
    free(c->dev);
    for (int r = 0; r < c->n_routes && c->route; r++) {
        free(c->route[r].src);
        free(c->route[r].dst);
    }
    free(c->route);
    free(c->machine);
    free(c);
}

static dp_calib *calib_new(const char *machine, int n_devices, int n_routes)
{
    dp_calib *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->machine = strdup(machine ? machine : "");
    c->n_devices = n_devices;
    c->dev = calloc((size_t)(n_devices > 0 ? n_devices : 1), sizeof *c->dev);
    c->n_routes = n_routes;
    c->route = calloc((size_t)(n_routes > 0 ? n_routes : 1), sizeof *c->route);
    if (!c->machine || !c->dev || !c->route) { dp_calib_free(c); return NULL; }
    return c;
}

dp_calib *dp_calib_fit(const dp_profile *p, dp_error *err)
{
    const int D = p->n_devices;
    int n_routes = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) n_routes += a != b;
    dp_calib *c = calib_new(p->machine, D, n_routes);
    const int nmax = (p->n_ops > p->n_copies ? p->n_ops : p->n_copies) + 1;
    double *F = malloc((size_t)nmax * sizeof(double)), *B = malloc((size_t)nmax * sizeof(double)),
           *Y = malloc((size_t)nmax * sizeof(double));
    if (!c || !F || !B || !Y) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    for (int d = 0; d < D; d++) {
        dp_calib_device *dv = &c->dev[d];
        dv->name = strdup(p->device[d]);
        dv->kind = calloc((size_t)p->n_ops + 1, sizeof(char *));
        dv->coef = calloc((size_t)p->n_ops + 1, sizeof(dp_calib_coef));
        dv->info = calloc((size_t)p->n_ops + 1, sizeof(dp_calib_fit_info));
        if (!dv->name || !dv->kind || !dv->coef || !dv->info) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
        /* kinds of this device, in first-seen order */
        for (int i = 0; i < p->n_ops; i++) {
            if (p->ops[i].device != d) continue;
            int seen = 0;
            for (int k = 0; k < dv->n_kinds; k++) seen |= strcmp(dv->kind[k], p->ops[i].kind) == 0;
            if (!seen && !(dv->kind[dv->n_kinds++] = strdup(p->ops[i].kind))) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
        }
        if (dv->n_kinds == 0) { dp_error_set(err, DP_EINVAL, "profile: no op samples for device %s", dv->name); goto fail; }
        for (int k = 0; k <= dv->n_kinds; k++) {
            /* k == n_kinds: the default, over every kind */
            int n = 0;
            for (int i = 0; i < p->n_ops; i++) {
                const dp_profile_op *o = &p->ops[i];
                if (o->device != d || o->seconds <= 0 || (k < dv->n_kinds && strcmp(o->kind, dv->kind[k]) != 0)) continue;
                F[n] = o->flops; B[n] = o->bytes; Y[n] = o->seconds; n++;
            }
            dp_calib_coef *co = k < dv->n_kinds ? &dv->coef[k] : &dv->def;
            dp_calib_fit_info *in = k < dv->n_kinds ? &dv->info[k] : &dv->def_info;
            if (fit_model(n, F, B, Y, 7, co, in) != 0) {
                dp_error_set(err, DP_EINVAL, "profile: cannot fit kind %s on %s (%d usable samples)",
                             k < dv->n_kinds ? dv->kind[k] : "default", dv->name, n);
                goto fail;
            }
        }
    }
    int r = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b) continue;
            dp_calib_route *rt = &c->route[r++];
            rt->src = strdup(p->device[a]);
            rt->dst = strdup(p->device[b]);
            if (!rt->src || !rt->dst) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
            int n = 0;
            for (int i = 0; i < p->n_copies; i++) {
                const dp_profile_copy *cp = &p->copies[i];
                if (cp->src != a || cp->dst != b || cp->seconds <= 0) continue;
                F[n] = 0; B[n] = cp->bytes; Y[n] = cp->seconds; n++;
            }
            dp_calib_coef co;
            /* latency + bytes / bandwidth: regressors 1 and bytes only */
            if (fit_model(n, F, B, Y, 1 | 4, &co, &rt->info) != 0) {
                dp_error_set(err, DP_EINVAL, "profile: cannot fit route %s -> %s (%d usable samples)", rt->src, rt->dst, n);
                goto fail;
            }
            rt->latency_s = co.a_s;
            /* a zero slope (copies too small to see) leaves the bandwidth unmeasured: 1e18 B/s,
             * finite because JSON has no infinity, and beyond any real link */
            rt->bandwidth_Bps = co.c_s_per_byte > 0 ? 1.0 / co.c_s_per_byte : 1e18;
        }
    free(F); free(B); free(Y);
    return c;
fail:
    free(F); free(B); free(Y);
    dp_calib_free(c);
    return NULL;
}

/* ---- files ---- */

static json_t *coef_json(const dp_calib_coef *c)
{
    return json_pack("{s:f,s:f,s:f}", "a_s", c->a_s, "b_s_per_flop", c->b_s_per_flop, "c_s_per_byte", c->c_s_per_byte);
}

int dp_calib_save(const dp_calib *c, const char *path, dp_error *err)
{
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("doppler-calibration"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "machine", json_string(c->machine));
    json_t *devs = json_object();
    for (int d = 0; d < c->n_devices; d++) {
        const dp_calib_device *dv = &c->dev[d];
        json_t *ops = json_object();
        for (int k = 0; k < dv->n_kinds; k++) json_object_set_new(ops, dv->kind[k], coef_json(&dv->coef[k]));
        json_t *o = json_object();
        json_object_set_new(o, "ops", ops);
        json_object_set_new(o, "default", coef_json(&dv->def));
        json_object_set_new(devs, dv->name, o);
    }
    json_object_set_new(root, "devices", devs);
    json_t *routes = json_array();
    for (int r = 0; r < c->n_routes; r++) {
        const dp_calib_route *rt = &c->route[r];
        json_array_append_new(routes, json_pack("{s:s,s:s,s:f,s:f}", "src", rt->src, "dst", rt->dst, "latency_s",
                                                rt->latency_s, "bandwidth_Bps", rt->bandwidth_Bps));
    }
    json_object_set_new(root, "routes", routes);
    int rc = dp_json_dump_atomic(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10), err);
    json_decref(root);
    return rc;
}

static int read_coef(json_t *o, const char *path, const char *where, dp_calib_coef *c, dp_error *err)
{
    double a = -1, b = -1, cc = -1;
    if (!json_is_object(o) ||
        json_unpack(o, "{s:F,s:F,s:F}", "a_s", &a, "b_s_per_flop", &b, "c_s_per_byte", &cc) != 0 ||
        !(a >= 0 && b >= 0 && cc >= 0 && isfinite(a + b + cc)))
        return dp_error_set(err, DP_EINVAL, "%s: %s: needs finite numbers a_s, b_s_per_flop, c_s_per_byte >= 0", path, where);
    c->a_s = a;
    c->b_s_per_flop = b;
    c->c_s_per_byte = cc;
    return DP_OK;
}

dp_calib *dp_calib_load(const char *path, dp_error *err)
{
    json_t *root = dp_json_load(path, err);
    if (!root) return NULL;
    dp_calib *c = NULL;
    json_t *fmt = json_object_get(root, "format"), *ver = json_object_get(root, "version");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "doppler-calibration") != 0) {
        dp_error_set(err, DP_EINVAL, "%s: field \"format\" must be \"doppler-calibration\"", path);
        goto fail;
    }
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        dp_error_set(err, DP_EINVAL, "%s: field \"version\" must be 1", path);
        goto fail;
    }
    json_t *devs = json_object_get(root, "devices"), *routes = json_object_get(root, "routes");
    if (!json_is_object(devs) || json_object_size(devs) == 0) {
        dp_error_set(err, DP_EINVAL, "%s: field \"devices\" must be a non-empty object", path);
        goto fail;
    }
    if (!json_is_array(routes)) {
        dp_error_set(err, DP_EINVAL, "%s: field \"routes\" must be an array", path);
        goto fail;
    }
    json_t *m = json_object_get(root, "machine");
    c = calib_new(json_is_string(m) ? json_string_value(m) : "", (int)json_object_size(devs), (int)json_array_size(routes));
    if (!c) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    const char *name;
    json_t *dv;
    int d = 0;
    char where[256];
    json_object_foreach(devs, name, dv) {
        dp_calib_device *cd = &c->dev[d++];
        cd->name = strdup(name);
        json_t *ops = json_object_get(dv, "ops");
        if (!json_is_object(ops)) {
            dp_error_set(err, DP_EINVAL, "%s: devices.%s.ops must be an object", path, name);
            goto fail;
        }
        snprintf(where, sizeof where, "devices.%s.default", name);
        if (read_coef(json_object_get(dv, "default"), path, where, &cd->def, err) != DP_OK) goto fail;
        cd->kind = calloc(json_object_size(ops) + 1, sizeof(char *));
        cd->coef = calloc(json_object_size(ops) + 1, sizeof(dp_calib_coef));
        if (!cd->name || !cd->kind || !cd->coef) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
        const char *kind;
        json_t *co;
        json_object_foreach(ops, kind, co) {
            snprintf(where, sizeof where, "devices.%s.ops.%s", name, kind);
            if (read_coef(co, path, where, &cd->coef[cd->n_kinds], err) != DP_OK) goto fail;
            cd->kind[cd->n_kinds++] = strdup(kind);
        }
    }
    size_t i;
    json_t *ro;
    json_array_foreach(routes, i, ro) {
        const char *s = NULL, *t = NULL;
        double lat = -1, bw = -1;
        if (json_unpack(ro, "{s:s,s:s,s:F,s:F}", "src", &s, "dst", &t, "latency_s", &lat, "bandwidth_Bps", &bw) != 0 ||
            !(lat >= 0 && isfinite(lat) && bw > 0 && isfinite(bw)) || dp_calib_find_device(c, s) < 0 ||
            dp_calib_find_device(c, t) < 0) {
            dp_error_set(err, DP_EINVAL, "%s: routes[%zu]: needs src and dst among the devices, latency_s >= 0, bandwidth_Bps > 0", path, i);
            goto fail;
        }
        c->route[i].src = strdup(s);
        c->route[i].dst = strdup(t);
        c->route[i].latency_s = lat;
        c->route[i].bandwidth_Bps = bw;
    }
    json_decref(root);
    return c;
fail:
    dp_calib_free(c);
    json_decref(root);
    return NULL;
}

int dp_calib_find_device(const dp_calib *c, const char *name)
{
    for (int d = 0; d < c->n_devices; d++)
        if (c->dev[d].name && strcmp(c->dev[d].name, name) == 0) return d;
    return -1;
}

double dp_calib_op_time(const dp_calib *c, int d, const char *kind, double flops, double bytes)
{
    const dp_calib_device *dv = &c->dev[d];
    const dp_calib_coef *co = &dv->def;
    for (int k = 0; k < dv->n_kinds; k++)
        if (strcmp(dv->kind[k], kind) == 0) co = &dv->coef[k];
    return co->a_s + co->b_s_per_flop * flops + co->c_s_per_byte * bytes;
}

dp_costs *dp_calib_costs(const dp_calib *c, const dp_graph *g, const char *const *dev_names, int D, dp_error *err)
{
    if (g->cost_kind != DP_COST_PHYSICAL) {
        dp_error_set(err, DP_EINVAL, "%s: a calibration needs a graph in FLOPs and bytes (run it through the executor's scaling first)",
                     g->source);
        return NULL;
    }
    int *idx = malloc((size_t)D * sizeof(int));
    dp_costs *k = dp_costs_alloc(g, D);
    if (!idx || !k) { free(idx); dp_costs_free(k); dp_error_set(err, DP_ENOMEM, "out of memory"); return NULL; }
    for (int d = 0; d < D; d++) {
        idx[d] = dp_calib_find_device(c, dev_names[d]);
        if (idx[d] < 0) {
            dp_error_set(err, DP_EINVAL, "calibration has no device \"%s\"", dev_names[d]);
            goto fail;
        }
    }
    for (int v = 0; v < g->n_ops; v++) {
        double bytes = g->out_size[v];
        for (int i = g->pred_ptr[v]; i < g->pred_ptr[v + 1]; i++) bytes += g->edge_size[g->pred_edge[i]];
        for (int d = 0; d < D; d++)
            k->op_time[(size_t)v * D + d] = dp_calib_op_time(c, idx[d], g->op_kind[v], g->work[v], bytes);
    }
    for (int e = 0; e < g->n_edges; e++) k->edge_data[e] = g->edge_size[e];
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b) continue;
            int found = -1;
            for (int r = 0; r < c->n_routes; r++)
                if (strcmp(c->route[r].src, dev_names[a]) == 0 && strcmp(c->route[r].dst, dev_names[b]) == 0) found = r;
            if (found < 0) {
                dp_error_set(err, DP_EINVAL, "calibration has no route %s -> %s", dev_names[a], dev_names[b]);
                goto fail;
            }
            k->latency[a * D + b] = c->route[found].latency_s;
            k->inv_bw[a * D + b] = 1.0 / c->route[found].bandwidth_Bps;
        }
    k->time_scale = 1.0;
    dp_costs_update_homogeneous(k);
    free(idx);
    return k;
fail:
    free(idx);
    dp_costs_free(k);
    return NULL;
}
