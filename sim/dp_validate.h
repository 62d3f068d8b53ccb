/* dp_validate.h: how far simulated makespans are from measured ones (doppler validate).
 *
 * A simulator is worth training against when it predicts the machine: its error on each
 * assignment (mean absolute percentage error) and whether it ranks assignments as the machine
 * does (Kendall's rank correlation; DOPPLER's Stage II learns from the ranking, not the value).
 */
#ifndef DP_VALIDATE_H
#define DP_VALIDATE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Mean over i of |sim[i] - meas[i]| / meas[i] (a fraction, not a percentage). meas[i] > 0. */
double dp_validate_mape(const double *meas, const double *sim, int n);

/* Kendall's tau-b between x and y (n >= 2): (concordant - discordant) pairs over
 * sqrt((pairs - ties in x) (pairs - ties in y)) (Kendall 1945, tau-b; the variant
 * scipy.stats.kendalltau computes). O(n^2). Returns 0 when either side is all ties. */
double dp_validate_kendall_tau(const double *x, const double *y, int n);

/* Pearson correlation of x and y (0 when either has no spread). */
double dp_validate_pearson(const double *x, const double *y, int n);

#ifdef __cplusplus
}
#endif
#endif
