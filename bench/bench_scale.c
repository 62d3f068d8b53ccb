/* bench_scale: time and peak memory of loading, placing (critical path) and simulating a very
 * large chain or star (tests/dp_scale_graphs.h).
 *
 *   bench_scale SHAPE N FORMAT [ORDER]
 *     SHAPE chain | star | istar; N ops; FORMAT doppler | json;
 *     ORDER blevel (default: the cp method, ready set as a b-level heap) | id (the same choices
 *     with the ready set kept sorted by id, O(ready) per step: for comparison).
 *
 * Prints one line: shape, n, format, seconds for write/read/place/simulate, peak RSS (MiB, from
 * getrusage) after each phase, and whether the makespan equals the hand-computed one. Exit 1 on
 * any error or a wrong makespan. */
#include "dp_cost.h"
#include "dp_env.h"
#include "dp_graph.h"
#include "dp_place.h"
#include "dp_scale_graphs.h"
#include "dp_sim.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

static int place_cp_by_id(const dp_graph *g, const dp_cost *c, int *a, dp_error *err)
{
    dp_env *env = dp_env_alloc(g, c, err);
    if (!env) return DP_ENOMEM;
    while (!dp_env_done(env)) {
        int v = dp_env_cp_select(env);
        if (dp_env_step(env, v, dp_env_cp_place(env, v), err) != DP_OK) { dp_env_free(env); return DP_EINVAL; }
    }
    memcpy(a, env->assignment, (size_t)g->n_ops * sizeof(int));
    dp_env_free(env);
    return DP_OK;
}

int main(int argc, char **argv)
{
    /* every word checked (an unknown shape, format or order ran as istar, doppler or blevel and
     * printed the word given: a review) */
    char *end = NULL;
    const long n = argc >= 4 ? strtol(argv[2], &end, 10) : 0;
    if (argc < 4 || argc > 5 || (strcmp(argv[1], "chain") && strcmp(argv[1], "star") && strcmp(argv[1], "istar")) ||
        !end || *end || n < 2 || (strcmp(argv[3], "doppler") && strcmp(argv[3], "json")) ||
        (argc == 5 && strcmp(argv[4], "blevel") && strcmp(argv[4], "id"))) {
        fprintf(stderr, "usage: bench_scale chain|star|istar N doppler|json [blevel|id]   (N at least 2)\n");
        return 2;
    }
    dp_scale_shape shape = strcmp(argv[1], "chain") == 0 ? DP_SCALE_CHAIN
                         : strcmp(argv[1], "star") == 0 ? DP_SCALE_STAR : DP_SCALE_ISTAR;
    int json = strcmp(argv[3], "json") == 0;
    int by_id = argc > 4 && strcmp(argv[4], "id") == 0;
    const int D = 4;
    char path[] = "/tmp/dp_bench_scale_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    double t0 = now_s();
    if (dp_scale_write(path, shape, n, json) != 0) { unlink(path); return 1; }
    double t1 = now_s(), m0 = peak_mib();
    dp_error err;
    dp_graph *g = dp_graph_read(path, json ? "json" : "doppler", &err);
    unlink(path);
    if (!g) { fprintf(stderr, "%s\n", err.msg); return 1; }
    double t2 = now_s(), m1 = peak_mib();
    dp_cost *c = dp_cost_graph(g, D, &err);
    int *a = malloc((size_t)n * sizeof *a);
    if (!c || !a) return 1;
    int rc = by_id ? place_cp_by_id(g, c, a, &err) : dp_place("cp", g, c, NULL, a, NULL, NULL, &err);
    if (rc != DP_OK) { fprintf(stderr, "%s\n", err.msg); return 1; }
    double t3 = now_s(), m2 = peak_mib();
    dp_sim *s = dp_sim_alloc(g, c, &err);
    dp_sim_result r;
    if (!s || dp_sim_run(s, a, &r, &err) != DP_OK) { fprintf(stderr, "%s\n", err.msg); return 1; }
    double t4 = now_s(), m3 = peak_mib();
    int ok = r.makespan == dp_scale_makespan(shape, n, D);
    printf("%s n=%ld edges=%d %s order=%s: write %.2fs read %.2fs place %.2fs simulate %.2fs | "
           "peak RSS MiB: after write %.0f, read %.0f, place %.0f, simulate %.0f | makespan %.0f %s\n",
           argv[1], n, g->n_edges, json ? "json" : "doppler", by_id ? "id" : "blevel", t1 - t0, t2 - t1,
           t3 - t2, t4 - t3, m0, m1, m2, m3, r.makespan, ok ? "(as computed by hand)" : "WRONG");
    dp_sim_free(s);
    free(a);
    dp_cost_free(c);
    dp_graph_free(g);
    return ok ? 0 : 1;
}
