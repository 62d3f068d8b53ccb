/* dp_validate.c: error and rank statistics of simulated against measured makespans. */
#include "dp_validate.h"
#include "dp_alloc.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

int dp_validate_measured(const double *t, int n_rows, int n_passes, int first, int step, dp_validate_statistic st,
                         double *out, double *q25, double *q75)
{
    if (n_rows < 1 || n_passes < 1 || first < 0 || step < 1 || first >= n_passes) return -1;
    const int np = (n_passes - first + step - 1) / step;
    for (int i = 0; i < n_rows; i++)
        for (int p = first; p < n_passes; p += step)
            if (!(isfinite(t[(size_t)i * n_passes + p]) && t[(size_t)i * n_passes + p] > 0)) return -1;
    double *m = dp_alloc_malloc((size_t)np * sizeof(double));
    double *v = dp_alloc_malloc((size_t)(np > n_rows ? np : n_rows) * sizeof(double));
    if (!m || !v) { free(m); free(v); return -1; }
    double M = 1;
    if (st == DP_VALIDATE_NORMALISED) {
        for (int k = 0; k < np; k++) {
            const int p = first + k * step;
            for (int i = 0; i < n_rows; i++) v[i] = t[(size_t)i * n_passes + p];
            gsl_sort(v, 1, (size_t)n_rows);
            m[k] = gsl_stats_median_from_sorted_data(v, 1, (size_t)n_rows);
        }
        for (int k = 0; k < np; k++) v[k] = m[k];
        gsl_sort(v, 1, (size_t)np);
        M = gsl_stats_median_from_sorted_data(v, 1, (size_t)np);
    }
    for (int i = 0; i < n_rows; i++) {
        for (int k = 0; k < np; k++) {
            const double x = t[(size_t)i * n_passes + first + k * step];
            v[k] = st == DP_VALIDATE_NORMALISED ? M * x / m[k] : x;
        }
        gsl_sort(v, 1, (size_t)np);
        out[i] = st == DP_VALIDATE_MIN ? v[0] : gsl_stats_median_from_sorted_data(v, 1, (size_t)np);
        if (q25) q25[i] = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)np, 0.25);
        if (q75) q75[i] = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)np, 0.75);
    }
    free(m);
    free(v);
    return 0;
}

double dp_validate_mape_scaled(const double *meas, const double *sim, int n, double level, int skip)
{
    double s = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (i == skip) continue;
        s += fabs(level * sim[i] - meas[i]) / meas[i];
        k++;
    }
    return k ? s / k : 0;
}

double dp_validate_mape(const double *meas, const double *sim, int n)
{
    return dp_validate_mape_scaled(meas, sim, n, 1.0, -1);
}

double dp_validate_kendall_tau(const double *x, const double *y, int n)
{
    double conc = 0, disc = 0, tx = 0, ty = 0, pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double a = x[i] - x[j], b = y[i] - y[j];
            pairs++;
            if (a == 0) tx++;
            if (b == 0) ty++;
            if (a == 0 || b == 0) continue;
            if ((a > 0) == (b > 0)) conc++;
            else disc++;
        }
    double den = sqrt((pairs - tx) * (pairs - ty));
    return den > 0 ? (conc - disc) / den : NAN;
}

double dp_validate_pearson(const double *x, const double *y, int n)
{
    if (n < 2) return NAN;
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) { mx += x[i]; my += y[i]; }
    mx /= n; my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}
