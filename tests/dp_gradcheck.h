/* dp_gradcheck.h: compare analytic gradients with central finite differences (GSL's
 * gsl_deriv_central), for the layer and network tests. The networks compute in float, so the
 * loss is evaluated in double from float data and the tolerance allows float rounding: an entry
 * passes when |analytic - numeric| <= rtol * max(|analytic|, |numeric|) + atol + 4 * abserr,
 * abserr being GSL's own error estimate of the difference quotient, for the step h or, failing
 * that, h/4 or h/16 (a step across a ReLU kink is no test of the gradient). */
#ifndef DP_GRADCHECK_H
#define DP_GRADCHECK_H

#include <gsl/gsl_deriv.h>
#include <math.h>
#include <stdio.h>

typedef double (*dp_gc_loss)(void *ctx);

typedef struct dp_gc_arg {
    float *x;
    size_t i;
    dp_gc_loss loss;
    void *ctx;
} dp_gc_arg;

static double dp_gc_eval(double xi, void *p)
{
    dp_gc_arg *a = p;
    float keep = a->x[a->i];
    a->x[a->i] = (float)xi;
    double L = a->loss(a->ctx);
    a->x[a->i] = keep;
    return L;
}

/* Check grad[i] against dL/dx[i] for i in 0..n-1 with stride `stride` (1: every entry).
 * h is the finite-difference step. Returns the number of failing entries (printing the first few
 * with `what`). */
static inline int dp_gradcheck(const char *what, float *x, const float *grad, size_t n, size_t stride,
                               dp_gc_loss loss, void *ctx, double h, double rtol, double atol)
{
    int bad = 0;
    dp_gc_arg a = {.x = x, .i = 0, .loss = loss, .ctx = ctx};
    gsl_function F = {.function = dp_gc_eval, .params = &a};
    if (stride < 1) stride = 1;
    for (size_t i = 0; i < n; i += stride) {
        a.i = i;
        double num = 0, abserr = 0, an = grad[i];
        int ok = 0;
        /* a step that straddles a ReLU kink (the networks have many) gives a wrong difference
         * quotient; smaller steps then agree. An entry fails only if no step agrees. */
        for (double hh = h; hh >= h / 16 && !ok; hh /= 4) {
            gsl_deriv_central(&F, (double)x[i], hh, &num, &abserr);
            double tol = rtol * fmax(fabs(an), fabs(num)) + atol + 4 * abserr;
            ok = fabs(an - num) <= tol;
        }
        if (!ok) {
            if (bad < 5)
                fprintf(stderr, "gradcheck %s[%zu]: analytic %.6g numeric %.6g (abserr %.2g)\n", what, i, an, num, abserr);
            bad++;
        }
    }
    return bad;
}

#endif
