/* bench_place: the CPU time of one placement by a learned method inside a running process
 * (issue 16's "time per placement": a sweep, the Python interface or a service places many
 * graphs in one process, so the process start and the dynamic linker, about 20 ms of a
 * `doppler place` run, are not the placement's). Each repetition is one dp_place call: it reads
 * the checkpoint (its config and parameters), binds the model to the graph (node features,
 * paths), runs the greedy rollout (SEL and PLC with the environment's state) and simulates the
 * placement once. Prints the graph's size, the makespan, and the median, minimum and maximum CPU
 * time per call (CLOCK_PROCESS_CPUTIME_ID, one BLAS thread).
 *
 * Usage: bench_place GRAPH CHECKPOINT [REPS] [MACHINE_KEY=VALUE ...]
 *   e.g. bench_place llama-403.json zs.h5 20 comm_ratio=4 devices=8 */
#include "dp_engine.h"
#include "dp_machine.h"
#include "dp_place.h"
#include "dp_problem.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_place GRAPH CHECKPOINT [REPS] [MACHINE_KEY=VALUE ...]\n");
        return 2;
    }
    openblas_set_num_threads(1);
    const int reps = argc > 3 ? atoi(argv[3]) : 20;
    if (reps < 1 || reps > 100000) {
        fprintf(stderr, "bench_place: REPS must be 1..100000, got '%s'\n", argv[3]);
        return 2;
    }
    dp_error err;
    dp_graph *g = dp_graph_read(argv[1], NULL, &err);
    if (!g) {
        fprintf(stderr, "bench_place: %s\n", err.msg);
        return 1;
    }
    dp_machine m;
    dp_machine_init(&m);
    for (int i = 4; i < argc; i++) {
        char key[64];
        const char *eq = strchr(argv[i], '=');
        if (!eq || (size_t)(eq - argv[i]) >= sizeof key) {
            fprintf(stderr, "bench_place: expected KEY=VALUE, got '%s'\n", argv[i]);
            return 2;
        }
        memcpy(key, argv[i], (size_t)(eq - argv[i]));
        key[eq - argv[i]] = '\0';
        if (dp_machine_set(&m, key, eq + 1, &err) != DP_OK) {
            fprintf(stderr, "bench_place: %s\n", err.msg);
            return 2;
        }
    }
    dp_problem *prob = dp_problem_alloc(g, &m, &err);
    if (!prob) {
        fprintf(stderr, "bench_place: %s\n", err.msg);
        return 1;
    }
    const dp_cost *c = prob->costs;
    dp_engine *e = prob->engine;
    dp_place_options o;
    dp_place_options_init(&o);
    o.checkpoint = argv[2];
    o.oracle = &prob->oracle;
    int *assign = malloc((size_t)g->n_ops * sizeof *assign);
    double *prio = malloc((size_t)g->n_ops * sizeof *prio), *t = malloc((size_t)reps * sizeof *t);
    if (!assign || !prio || !t) {
        fprintf(stderr, "bench_place: out of memory\n");
        return 1;
    }
    double ms = 0;
    for (int r = 0; r < reps; r++) {
        const double t0 = cpu_ms();
        if (dp_place("doppler", g, c, &o, assign, prio, NULL, &err) != DP_OK) {
            fprintf(stderr, "bench_place: %s\n", err.msg);
            return 1;
        }
        t[r] = cpu_ms() - t0;
        dp_engine_schedule s;
        if (r == 0 && dp_engine_run(e, assign, NULL, &s, &err) == DP_OK) ms = s.makespan / g->time_scale;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    printf("%s: %d ops on %d devices, makespan %.7g %s; CPU ms per placement: median %.1f, min %.1f, max %.1f (%d calls)\n",
           g->name, g->n_ops, c->n_devices, ms, g->time_unit, t[reps / 2], t[0], t[reps - 1], reps);
    free(t);
    free(prio);
    free(assign);
    dp_problem_free(prob);
    dp_machine_free(&m);
    dp_graph_free(g);
    return 0;
}
