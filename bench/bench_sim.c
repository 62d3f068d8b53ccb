/* bench_sim: time one simulation of each graph given on the command line (DOPPLER-compatible
 * model, critical-path assignment), median of many runs, in microseconds.
 * Usage: bench_sim [--devices N] [--min-seconds S] [--runs N] [--event-loop] GRAPH...
 * --runs N: exactly N runs per graph, no calibration batches (for perf stat and cachegrind:
 * counts per simulation = the program's counts / N, less the set-up, which --runs 0 measures).
 * --event-loop: every run through the event loop (dp_sim_set_op_order 0), for the same binary's
 * time without the op-order run (issue 31). The column op_order says how runs were computed. */
#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_place.h"
#include "dp_sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* a whole number lo..hi, or a finite number lo..hi: the whole text (atoi's 0 for "abc" gave a
 * segfault on --devices abc, a review) */
static int arg_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int arg_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
}

#define BENCH_SIM_USAGE \
    "usage: bench_sim [--devices N (1..4096)] [--min-seconds S (0..1e6)] [--runs N (0..1e12)] [--event-loop] GRAPH...\n"

int main(int argc, char **argv)
{
    int D = 4;
    double min_s = 0.5;
    long runs = -1;
    int i = 1, event_loop = 0;
    for (; i < argc && argv[i][0] == '-'; i++) {
        long v = 0;
        const char *bad = NULL; /* the option whose value is refused, with its range */
        if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
            if (arg_long(argv[++i], 1, 4096, &v)) bad = "--devices: expected 1..4096";
            D = (int)v;
        } else if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc) {
            if (arg_double(argv[++i], 0, 1e6, &min_s)) bad = "--min-seconds: expected 0..1e6";
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            if (arg_long(argv[++i], 0, 1000000000000L, &runs)) bad = "--runs: expected 0..1e12";
        } else if (strcmp(argv[i], "--event-loop") == 0) {
            event_loop = 1;
        } else {
            fprintf(stderr, BENCH_SIM_USAGE);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "bench_sim: %s, got '%s'\n" BENCH_SIM_USAGE, bad, argv[i]);
            return 2;
        }
    }
    printf("%-40s %6s %6s %8s %12s %12s %10s %9s\n", "graph", "ops", "edges", "devices", "median_us", "min_us", "events",
           "op_order");
    for (; i < argc; i++) {
        dp_error err;
        dp_graph *g = dp_graph_read(argv[i], NULL, &err);
        if (!g) { fprintf(stderr, "bench_sim: %s\n", err.msg); return 1; }
        int d = D;
        if (strstr(argv[i], "8gpu")) d = 8;
        dp_cost *c = dp_cost_uniform(g, d, 1e13, 1.2e10, 1e-5, &err);
        dp_sim *s = c ? dp_sim_alloc(g, c, &err) : NULL;
        int *a = malloc(sizeof(int) * (size_t)g->n_ops);
        if (!c || !s || !a || dp_place("cp", g, c, NULL, a, NULL, NULL, &err) != DP_OK) {
            fprintf(stderr, "bench_sim: %s: %s\n", argv[i], a ? err.msg : "out of memory");
            return 1;
        }
        if (event_loop) dp_sim_set_op_order(s, 0);
        /* one checked run: the timed ones below then repeat it */
        dp_sim_result r;
        if (dp_sim_run(s, a, &r, &err) != DP_OK) { fprintf(stderr, "bench_sim: %s: %s\n", argv[i], err.msg); return 1; }
        if (runs >= 0) {
            double b0 = now_s();
            for (long k = 0; k < runs; k++) dp_sim_run(s, a, &r, &err);
            double us = runs > 0 ? (now_s() - b0) / (double)runs * 1e6 : 0;
            printf("%-40s %6d %6d %8d %12.3f %12.3f %10ld %9s\n", g->name, g->n_ops, g->n_edges, d, us, us,
                   runs > 0 ? r.n_events : 0L, dp_sim_op_order_runs(s) > 0 ? "yes" : "no");
            free(a);
            dp_sim_free(s); dp_cost_free(c); dp_graph_free(g);
            continue;
        }
        /* batches of runs; per-run time of each batch; median over batches */
        int batch = 1;
        double t0 = now_s();
        while (now_s() - t0 < 0.01) {
            for (int k = 0; k < batch; k++) dp_sim_run(s, a, &r, &err);
            batch *= 2;
        }
        int nb = 0, cap = 4096;
        double *per = malloc(sizeof(double) * cap);
        t0 = now_s();
        while ((now_s() - t0 < min_s || nb < 11) && nb < cap) {
            double b0 = now_s();
            for (int k = 0; k < batch; k++) dp_sim_run(s, a, &r, &err);
            per[nb++] = (now_s() - b0) / batch * 1e6;
        }
        qsort(per, nb, sizeof(double), cmp_double);
        printf("%-40s %6d %6d %8d %12.3f %12.3f %10ld %9s\n", g->name, g->n_ops, g->n_edges, d, per[nb / 2], per[0],
               r.n_events, dp_sim_op_order_runs(s) > 0 ? "yes" : "no");
        free(per); free(a);
        dp_sim_free(s); dp_cost_free(c); dp_graph_free(g);
    }
    return 0;
}
