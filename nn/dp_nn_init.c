/* dp_nn_init.c: orthogonal initialisation (GSL's QR). Kept apart from dp_nn.c because GSL's
 * linear-algebra headers declare their own CBLAS, which clashes with OpenBLAS's cblas.h. */
#include "dp_nn.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>

int dp_nn_init_orthogonal(float *w, int rows, int cols, double gain, gsl_rng *r)
{
    /* QR of a tall Gaussian matrix A (m x k, m >= k) with GSL's blocked QR (gsl_linalg_QR_decomp_r:
     * Q = I - V T V^T, V unit lower trapezoidal in A's lower part). The thin Q (m x k) is
     * [I; 0] - V (T V1^T), V1 the top k x k block of V: one GEMM, never the m x m Q. When the
     * weight is wide (rows < cols) we orthonormalise its rows, i.e. work on the transpose. */
    int tall = rows >= cols;
    size_t m = tall ? (size_t)rows : (size_t)cols, k = tall ? (size_t)cols : (size_t)rows;
    /* T zeroed: QR_decomp_r writes only its upper triangle, and T V1^T reads all of it */
    gsl_matrix *a = gsl_matrix_alloc(m, k), *t = gsl_matrix_calloc(k, k);
    gsl_matrix *v = gsl_matrix_calloc(m, k), *wk = gsl_matrix_alloc(k, k), *q = gsl_matrix_calloc(m, k);
    int rc = DP_ENOMEM;
    if (!a || !t || !v || !wk || !q) goto out;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < k; j++) gsl_matrix_set(a, i, j, gsl_ran_gaussian(r, 1.0));
    if (gsl_linalg_QR_decomp_r(a, t) != 0) {
        rc = DP_EINVAL;
        goto out;
    }
    /* GSL fills only T's upper triangle and leaves the rest as it found it: the product below
     * uses all of T, so the strict lower triangle must be zero (it was uninitialised heap, which
     * gave weights of 1e8 and beyond whenever the heap held old data: a fresh process's clean
     * heap hid it from the tests) */
    for (size_t i = 1; i < k; i++)
        for (size_t j = 0; j < i; j++) gsl_matrix_set(t, i, j, 0.0);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < k && j <= i; j++) gsl_matrix_set(v, i, j, i == j ? 1.0 : gsl_matrix_get(a, i, j));
    /* wk = T V1^T */
    gsl_matrix_const_view v1 = gsl_matrix_const_submatrix(v, 0, 0, k, k);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, t, &v1.matrix, 0.0, wk);
    for (size_t j = 0; j < k; j++) gsl_matrix_set(q, j, j, 1.0);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, -1.0, v, wk, 1.0, q);
    for (size_t j = 0; j < k; j++) {
        /* the sign of R's diagonal makes the distribution uniform (Haar), as PyTorch does */
        double s = gsl_matrix_get(a, j, j) < 0 ? -gain : gain;
        for (size_t i = 0; i < m; i++) {
            double x = s * gsl_matrix_get(q, i, j);
            if (tall) w[i * (size_t)cols + j] = (float)x;
            else w[j * (size_t)cols + i] = (float)x;
        }
    }
    rc = DP_OK;
out:
    if (a) gsl_matrix_free(a);
    if (t) gsl_matrix_free(t);
    if (v) gsl_matrix_free(v);
    if (wk) gsl_matrix_free(wk);
    if (q) gsl_matrix_free(q);
    return rc;
}
