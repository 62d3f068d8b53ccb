/* dp_nn_init.c: orthogonal initialisation (GSL's QR). Kept apart from dp_nn.c because GSL's
 * linear-algebra headers declare their own CBLAS, which clashes with OpenBLAS's cblas.h. */
#include "dp_nn.h"

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>

int dp_nn_init_orthogonal(float *w, int rows, int cols, double gain, gsl_rng *r)
{
    /* QR of a tall Gaussian matrix A (m x k, m >= k): Q's k columns are orthonormal. When the
     * weight is wide (rows < cols) we orthonormalise its rows, i.e. work on the transpose. */
    int tall = rows >= cols;
    size_t m = tall ? (size_t)rows : (size_t)cols, k = tall ? (size_t)cols : (size_t)rows;
    gsl_matrix *a = gsl_matrix_alloc(m, k);
    gsl_vector *tau = gsl_vector_alloc(k);
    gsl_matrix *q = gsl_matrix_alloc(m, m);
    gsl_matrix *rr = gsl_matrix_alloc(m, k);
    if (!a || !tau || !q || !rr) {
        if (a) gsl_matrix_free(a);
        if (tau) gsl_vector_free(tau);
        if (q) gsl_matrix_free(q);
        if (rr) gsl_matrix_free(rr);
        return DP_ENOMEM;
    }
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < k; j++) gsl_matrix_set(a, i, j, gsl_ran_gaussian(r, 1.0));
    gsl_linalg_QR_decomp(a, tau);
    gsl_linalg_QR_unpack(a, tau, q, rr);
    for (size_t j = 0; j < k; j++) {
        double s = gsl_matrix_get(rr, j, j) < 0 ? -gain : gain;
        for (size_t i = 0; i < m; i++) {
            double x = s * gsl_matrix_get(q, i, j);
            if (tall) w[i * (size_t)cols + j] = (float)x;
            else w[j * (size_t)cols + i] = (float)x;
        }
    }
    gsl_matrix_free(a);
    gsl_vector_free(tau);
    gsl_matrix_free(q);
    gsl_matrix_free(rr);
    return DP_OK;
}

