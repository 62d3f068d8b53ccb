/* dp_calib_fit.c: the calibration's fit to a profile (see dp_calib_fit.h). */
#include "dp_calib_fit.h"
#include "dp_alloc.h"

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
static int fit_model(int n, const double *F, const double *B, const double *y, int allowed, dp_calib_affine *out,
                     dp_calib_fit_info *info)
{
    double best_bic = INFINITY, best[3] = {0, 0, 0};
    int best_mask = 0;
    /* two samples of a two-term model {1, x} (a route's latency + bytes / bandwidth, a
     * memory-bound kind): least squares needs a third sample, but the line through the two is
     * exact; it is taken when both coefficients come out >= 0 (a route of two copy sizes was fitted
     * by its mean time alone, bandwidth at the cap, R^2 -0.78) */
    if (n == 2 && (allowed == (1 | 2) || allowed == (1 | 4))) {
        const int j = allowed == (1 | 2) ? 1 : 2;
        const double x0 = reg(j, F[0], B[0]), x1 = reg(j, F[1], B[1]);
        if (x0 != x1) {
            const double slope = (y[1] - y[0]) / (x1 - x0), icpt = y[0] - slope * x0;
            if (slope >= 0 && icpt >= 0 && isfinite(slope) && isfinite(icpt)) {
                best[0] = icpt;
                best[j] = slope;
                best_mask = allowed;
                best_bic = -INFINITY;
            }
        }
    }
    for (int mask = 1; mask < 8 && best_bic > -INFINITY; mask++) {
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
    double *r = dp_alloc_malloc((size_t)n * sizeof(double));
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

dp_calib *dp_calib_fit(const dp_profile *p, dp_error *err)
{
    const int D = p->n_devices;
    int n_routes = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) n_routes += a != b;
    dp_calib *c = dp_calib_alloc(p->machine, D, n_routes);
    int nmax = (p->n_ops > p->n_copies ? p->n_ops : p->n_copies) + 1;
    if (p->n_itf + 1 > nmax) nmax = p->n_itf + 1;
    double *F = dp_alloc_malloc((size_t)nmax * sizeof(double)), *B = dp_alloc_malloc((size_t)nmax * sizeof(double)),
           *Y = dp_alloc_malloc((size_t)nmax * sizeof(double));
    if (!c || !F || !B || !Y) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    for (int d = 0; d < D; d++) {
        dp_calib_device *dv = &c->dev[d];
        dv->name = dp_alloc_strdup(p->device[d]);
        dv->op_kind = dp_alloc_calloc((size_t)p->n_ops + 1, sizeof(char *));
        dv->op = dp_alloc_calloc((size_t)p->n_ops + 1, sizeof(dp_calib_affine));
        dv->op_info = dp_alloc_calloc((size_t)p->n_ops + 1, sizeof(dp_calib_fit_info));
        if (!dv->name || !dv->op_kind || !dv->op || !dv->op_info) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
        /* kinds of this device, in first-seen order */
        for (int i = 0; i < p->n_ops; i++) {
            if (p->ops[i].device != d || p->ops[i].graph_op) continue;
            int seen = 0;
            for (int k = 0; k < dv->n_ops; k++) seen |= strcmp(dv->op_kind[k], p->ops[i].kind) == 0;
            if (!seen && !(dv->op_kind[dv->n_ops++] = dp_alloc_strdup(p->ops[i].kind))) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
        }
        if (dv->n_ops == 0) { dp_error_set(err, DP_EINVAL, "profile: no op samples for device %s", dv->name); goto fail; }
        dv->has_default = 1;
        for (int k = 0; k <= dv->n_ops; k++) {
            /* k == n_kinds: the default, over every kind */
            int n = 0;
            for (int i = 0; i < p->n_ops; i++) {
                const dp_profile_op *o = &p->ops[i];
                if (o->device != d || o->graph_op || o->seconds <= 0 || (k < dv->n_ops && strcmp(o->kind, dv->op_kind[k]) != 0))
                    continue;
                F[n] = o->flops; B[n] = o->bytes; Y[n] = o->seconds; n++;
            }
            dp_calib_affine *co = k < dv->n_ops ? &dv->op[k] : &dv->def;
            dp_calib_fit_info *in = k < dv->n_ops ? &dv->op_info[k] : &dv->def_info;
            /* memory-bound kinds: {1, bytes} (their FLOP counts are a generator's convention) */
            const int allowed = k < dv->n_ops && dp_profile_kind_memory_bound(dv->op_kind[k]) ? 1 | 4 : 7;
            if (fit_model(n, F, B, Y, allowed, co, in) != 0) {
                dp_error_set(err, DP_EINVAL, "profile: cannot fit kind %s on %s (%d usable samples)",
                             k < dv->n_ops ? dv->op_kind[k] : "default", dv->name, n);
                goto fail;
            }
        }
    }
    /* graph ops: the median per (kind, FLOPs, bytes) of each device */
    for (int d = 0; d < D; d++) {
        dp_calib_device *dv = &c->dev[d];
        dv->measured = dp_alloc_calloc((size_t)p->n_ops + 1, sizeof *dv->measured);
        if (!dv->measured) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
        for (int i = 0; i < p->n_ops; i++) {
            const dp_profile_op *o = &p->ops[i];
            if (o->device != d || !o->graph_op) continue;
            int seen = 0;
            for (int j = 0; j < dv->n_measured && !seen; j++)
                seen = strcmp(dv->measured[j].kind, o->kind) == 0 && dv->measured[j].flops == o->flops && dv->measured[j].bytes == o->bytes;
            if (seen) continue;
            int n = 0;
            for (int j = i; j < p->n_ops; j++) {
                const dp_profile_op *q = &p->ops[j];
                if (q->device == d && q->graph_op && strcmp(q->kind, o->kind) == 0 && q->flops == o->flops && q->bytes == o->bytes)
                    Y[n++] = q->seconds;
            }
            gsl_sort(Y, 1, (size_t)n);
            dp_calib_measured *m = &dv->measured[dv->n_measured];
            if (!(m->kind = dp_alloc_strdup(o->kind))) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
            m->flops = o->flops;
            m->bytes = o->bytes;
            m->seconds = gsl_stats_median_from_sorted_data(Y, 1, (size_t)n);
            dv->n_measured++;
        }
        /* the order dp_calib_find_measured searches, as a file read back has it */
        dp_calib_sort_measured(dv);
    }
    /* interference */
    for (int d = 0; d < D; d++) {
        dp_calib_device *dv = &c->dev[d];
        double ov = 0, st = 0;
        int n = 0;
        for (int i = 0; i < p->n_itf; i++) {
            const dp_profile_itf *t = &p->itf[i];
            if (t->device != d) continue;
            if (strcmp(t->kind, "copy_in") == 0) { ov += t->x; st += t->y; dv->n_copy_in++; }
            else if (t->x > 0) Y[n++] = (t->y / t->x - 1.0) / t->peers;
        }
        if (ov > 0) dv->copy_in = st / ov;
        if (n > 0) {
            gsl_sort(Y, 1, (size_t)n);
            dv->peer_busy = gsl_stats_median_from_sorted_data(Y, 1, (size_t)n);
            dv->n_peer_busy = n;
        }
        dv->has_interference = dv->n_copy_in > 0 || dv->n_peer_busy > 0;
        dv->copy_in = dv->copy_in < 0 ? 0 : dv->copy_in > 100 ? 100 : dv->copy_in;
        dv->peer_busy = dv->peer_busy < 0 ? 0 : dv->peer_busy > 100 ? 100 : dv->peer_busy;
    }
    int r = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b) continue;
            dp_calib_route *rt = &c->route[r++];
            rt->src = dp_alloc_strdup(p->device[a]);
            rt->dst = dp_alloc_strdup(p->device[b]);
            if (!rt->src || !rt->dst) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
            int n = 0;
            for (int i = 0; i < p->n_copies; i++) {
                const dp_profile_copy *cp = &p->copies[i];
                if (cp->src != a || cp->dst != b || cp->seconds <= 0) continue;
                F[n] = 0; B[n] = cp->bytes; Y[n] = cp->seconds; n++;
            }
            dp_calib_affine co;
            /* latency + bytes / bandwidth: regressors 1 and bytes only */
            if (fit_model(n, F, B, Y, 1 | 4, &co, &rt->info) != 0) {
                dp_error_set(err, DP_EINVAL, "profile: cannot fit route %s -> %s (%d usable samples)", rt->src, rt->dst, n);
                goto fail;
            }
            rt->latency_s = co.a_s;
            /* a zero slope (copies too small to see) leaves the bandwidth unmeasured: the cap */
            rt->bandwidth_Bps = co.c_s_per_byte > 0 ? fmin(1.0 / co.c_s_per_byte, DP_CALIB_BANDWIDTH_CAP)
                                                    : DP_CALIB_BANDWIDTH_CAP;
        }
    free(F); free(B); free(Y);
    return c;
fail:
    free(F); free(B); free(Y);
    dp_calib_free(c);
    return NULL;
}

