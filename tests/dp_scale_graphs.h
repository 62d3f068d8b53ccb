/* dp_scale_graphs.h: very large chain and star graphs written straight to a file (DOPPLER text or
 * native JSON), for the scale test (tests/test_scale.c, 10^5 ops) and the scale benchmark
 * (bench/bench_scale.c, 10^6 ops). Costs are chosen so that the critical-path placement and the
 * makespan are known by hand:
 *
 *   chain  op i -> op i+1, comp 1 + i % 3, comm 5: cp keeps every op on device 0 (a transfer
 *          only delays), makespan = sum of comp.
 *   star   op 0 -> ops 1..n-1, every comp 1, comm 0: after the centre, the leaves spread over
 *          the D devices, makespan = 1 + ceil((n - 1) / D).
 *   istar  ops 0..n-2 -> op n-1 (in-star), comp 1, comm 0: makespan = ceil((n - 1) / D) + 1.
 */
#ifndef DP_SCALE_GRAPHS_H
#define DP_SCALE_GRAPHS_H

#include <stdio.h>
#include <string.h>

typedef enum { DP_SCALE_CHAIN, DP_SCALE_STAR, DP_SCALE_ISTAR } dp_scale_shape;

static inline long dp_scale_n_edges(dp_scale_shape s, long n) { (void)s; return n - 1; }
static inline long dp_scale_src(dp_scale_shape s, long n, long e)
{
    return s == DP_SCALE_CHAIN ? e : s == DP_SCALE_STAR ? 0 : e;
}
static inline long dp_scale_dst(dp_scale_shape s, long n, long e)
{
    return s == DP_SCALE_CHAIN ? e + 1 : s == DP_SCALE_STAR ? e + 1 : n - 1;
}
static inline long dp_scale_comp(dp_scale_shape s, long i) { return s == DP_SCALE_CHAIN ? 1 + i % 3 : 1; }
static inline long dp_scale_comm(dp_scale_shape s) { return s == DP_SCALE_CHAIN ? 5 : 0; }

/* The hand-computed makespan on D identical devices under cp (see above). */
static inline double dp_scale_makespan(dp_scale_shape s, long n, int D)
{
    if (s == DP_SCALE_CHAIN) {
        double t = 0;
        for (long i = 0; i < n; i++) t += (double)dp_scale_comp(s, i);
        return t;
    }
    return 1.0 + (double)((n - 1 + D - 1) / D);
}

/* Write the graph as DOPPLER text (json = 0), native JSON with edges by op index (json = 1)
 * or native JSON with named ops and edges by name (json = 2). Returns 0 or -1. */
static inline int dp_scale_write(const char *path, dp_scale_shape s, long n, int json)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    const long m = dp_scale_n_edges(s, n);
    if (!json) {
        fprintf(f, "%ld\n\n", n);
        for (long e = 0; e < m; e++) fprintf(f, e ? ",%ld" : "%ld", dp_scale_src(s, n, e));
        fputc('\n', f);
        for (long e = 0; e < m; e++) fprintf(f, e ? ",%ld" : "%ld", dp_scale_dst(s, n, e));
        fputc('\n', f);
        for (long i = 0; i < n; i++) fprintf(f, "%ld,%ld\n", dp_scale_comp(s, i), dp_scale_comm(s));
    } else {
        fprintf(f, "{\"cost_kind\": \"time\", \"ops\": [\n");
        for (long i = 0; i < n; i++) {
            fprintf(f, "%s{\"time\": %ld, \"comm\": %ld", i ? ",\n" : "", dp_scale_comp(s, i), dp_scale_comm(s));
            fprintf(f, json == 2 ? ", \"name\": \"n%ld\"}" : "}", i);
        }
        fprintf(f, "],\n\"edges\": [\n");
        for (long e = 0; e < m; e++)
            fprintf(f, json == 2 ? "%s{\"src\": \"n%ld\", \"dst\": \"n%ld\"}" : "%s{\"src\": %ld, \"dst\": %ld}",
                    e ? ",\n" : "", dp_scale_src(s, n, e), dp_scale_dst(s, n, e));
        fprintf(f, "]}\n");
    }
    return fclose(f) == 0 ? 0 : -1;
}

#endif
