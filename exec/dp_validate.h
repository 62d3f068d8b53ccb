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

/* How one assignment's measured makespan is made from its runs (doppler validate --statistic). */
typedef enum dp_validate_statistic {
    /* The median over passes of the run's time relative to its pass, times the median pass:
     * measured[i] = M x median_p (t[i][p] / m[p]), m[p] = median over assignments i of t[i][p],
     * M = median over p of m[p]. A pass runs every assignment once, within seconds, so a drift
     * of the host's speed between passes (3 to 13% between minutes on a shared VM) multiplies
     * a whole pass alike and cancels in t / m: the ranking then compares assignments run side
     * by side (a blocked design; the pass is the block). The level stays the median run's.
     * Needs many assignments: with a few (under 5), a pass's median is one of them, and that
     * one's relative time is 1 whatever it ran; use MEDIAN there. */
    DP_VALIDATE_NORMALISED = 0,
    DP_VALIDATE_MEDIAN,      /* the median of the assignment's runs */
    DP_VALIDATE_MIN          /* the least disturbed run */
} dp_validate_statistic;

/* The measured makespan of each of n_rows assignments from their runs.
 *  t:        (n_rows, n_passes) seconds, row-major, passes in the order they ran (pass p ran
 *            every assignment once);
 *  first, step: use passes first, first + step, ... < n_passes only (0, 1: all of them; 0, 2
 *            and 1, 2: the two halves of a split-half check);
 *  out:      (n_rows) the statistic, seconds;
 *  q25, q75: (n_rows) or NULL: the quartiles of the values the statistic is the median of (the
 *            runs, for NORMALISED scaled by M), for error bars.
 * Returns 0, or -1 when no pass is selected, n_rows < 1, a time is not positive and finite, or
 * memory runs out. */
int dp_validate_measured(const double *t, int n_rows, int n_passes, int first, int step, dp_validate_statistic st,
                         double *out, double *q25, double *q75);

/* Mean over i of |sim[i] - meas[i]| / meas[i] (a fraction, not a percentage). meas[i] > 0. */
double dp_validate_mape(const double *meas, const double *sim, int n);

/* The MAPE of the simulated makespans scaled by `level` (mean over i of |level sim[i] - meas[i]|
 * / meas[i]), skipping index `skip` (-1: none). doppler validate passes level = measured /
 * simulated of the single-device placement and skips it: the error of the model of parallel
 * execution, apart from how fast the host runs now against when it was profiled (on a shared
 * VM that speed moved 17% within 6 minutes). 0 when no index is left. */
double dp_validate_mape_scaled(const double *meas, const double *sim, int n, double level, int skip);

/* Kendall's tau-b between x and y (n >= 2): (concordant - discordant) pairs over
 * sqrt((pairs - ties in x) (pairs - ties in y)) (Kendall 1945, tau-b; the variant
 * scipy.stats.kendalltau computes). O(n^2). NAN when either side is all ties (undefined, as
 * scipy's; it said 0, which read as "no agreement", on identical assignments: a review of the
 * eighteenth session). */
double dp_validate_kendall_tau(const double *x, const double *y, int n);

/* Pearson correlation of x and y (NAN when either has no spread or n < 2: undefined). */
double dp_validate_pearson(const double *x, const double *y, int n);

#ifdef __cplusplus
}
#endif
#endif
