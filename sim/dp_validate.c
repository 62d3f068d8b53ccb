/* dp_validate.c: error and rank statistics of simulated against measured makespans. */
#include "dp_validate.h"

#include <math.h>

double dp_validate_mape(const double *meas, const double *sim, int n)
{
    if (n <= 0) return 0;
    double s = 0;
    for (int i = 0; i < n; i++) s += fabs(sim[i] - meas[i]) / meas[i];
    return s / n;
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
    return den > 0 ? (conc - disc) / den : 0.0;
}

double dp_validate_pearson(const double *x, const double *y, int n)
{
    if (n < 2) return 0;
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) { mx += x[i]; my += y[i]; }
    mx /= n; my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0.0;
}
