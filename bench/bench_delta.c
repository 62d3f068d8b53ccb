/* bench_delta: annealing's moves per CPU second with delta runs on and off (dp_engine_set_delta),
 * one binary, the same seed (issue 31: the choice of DP_ENGINE_DELTA_MIN_OPS, sim/dp_engine.h).
 * Usage: bench_delta [--budget N] [--devices D] [--only on|off] [--set KEY=VALUE ...] GRAPH...
 * --only runs one of the two (the other's columns print 0), for a profiler or cachegrind.
 * --set gives a machine key (doppler config machine: topology=dgx1-v100, transfer=maxmin,
 * streams=2, ...): the graph is then placed on that machine (dp_machine_costs), on the general
 * engine where the keys ask for it, whose delta runs restore snapshots (sim/dp_hisim.h).
 * A native JSON graph (FLOPs and bytes) is placed on D uniform devices (1e13 FLOP/s, 12 GB/s,
 * 10 us) with DOPPLER's comm ratio 4; a DOPPLER text graph on D devices (8 for 8gpu_ files) with
 * its own costs. Prints per graph: ops, moves per second with delta runs on and off, and the best
 * makespan of each; exits 1 when the two differ (they must not: delta runs are exact). */
#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_graph.h"
#include "dp_machine.h"
#include "dp_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long budget = 20000;
    int D = 4, i = 1, status = 0, only = -1, machine = 0;
    dp_machine m;
    dp_machine_init(&m);
    dp_error merr;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) budget = atol(argv[++i]);
        else if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc) D = atoi(argv[++i]);
        else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && strchr(argv[i + 1], '=')) {
            char key[64];
            const char *kv = argv[++i], *eq = strchr(kv, '=');
            snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
            if (dp_machine_set(&m, key, eq + 1, &merr) != DP_OK) { fprintf(stderr, "bench_delta: %s\n", merr.msg); return 2; }
            machine = 1;
        }
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc && (strcmp(argv[i + 1], "on") == 0 || strcmp(argv[i + 1], "off") == 0))
            only = strcmp(argv[++i], "on") == 0;
        else { fprintf(stderr, "usage: bench_delta [--budget N] [--devices D] [--only on|off] [--set KEY=VALUE ...] GRAPH...\n"); return 2; }
    }
    if (machine && dp_machine_load(&m, &merr) != DP_OK) { fprintf(stderr, "bench_delta: %s\n", merr.msg); return 2; }
    printf("%-56s %7s %12s %12s %22s %22s\n", "graph", "ops", "delta_on", "delta_off", "best_on", "best_off");
    for (; i < argc; i++) {
        dp_error err;
        dp_graph *g = dp_graph_read(argv[i], NULL, &err);
        if (!g) { fprintf(stderr, "bench_delta: %s\n", err.msg); return 1; }
        const int d = strstr(argv[i], "8gpu") ? 8 : D;
        dp_cost *c;
        if (machine) {
            c = dp_machine_costs(&m, g, &err);
        } else if (g->cost_kind == DP_GRAPH_COST_PHYSICAL) {
            c = dp_cost_uniform(g, d, 1e13, 1.2e10, 1e-5, &err);
            if (c && dp_cost_set_comm_ratio(c, g, 4, &err) != DP_OK) { dp_cost_free(c); c = NULL; }
        } else {
            c = dp_cost_graph(g, d, &err);
        }
        dp_engine *e = c ? dp_engine_alloc(g, c, machine ? &m : NULL, &err) : NULL;
        int *a = malloc(sizeof(int) * (size_t)g->n_ops);
        if (!e || !a) { fprintf(stderr, "bench_delta: %s\n", err.msg); return 1; }
        const dp_oracle o = dp_engine_oracle(e);
        double rate[2] = {0, 0}, best[2] = {0, 0};
        for (int on = 1; on >= 0; on--) {
            if (only >= 0 && on != only) continue;
            dp_engine_set_delta(e, on);
            dp_search_anneal_config cfg;
            dp_search_anneal_config_init(&cfg);
            cfg.budget = budget;
            dp_search_result res;
            const double t0 = cpu_s();
            if (dp_search_anneal(g, c, &o, &cfg, 1, a, &res, &err) != DP_OK) {
                fprintf(stderr, "bench_delta: %s\n", err.msg);
                return 1;
            }
            rate[on] = (double)res.sims / (cpu_s() - t0);
            if (on) {
                long resumed, full, resim;
                dp_engine_delta_stats(e, &resumed, &full, &resim);
                fprintf(stderr, "%s: %ld resumed, %ld from 0, %.3f of the ops simulated a run, %ld accepted\n", g->name, resumed, full,
                        (double)resim / ((double)(resumed + full) * g->n_ops), res.accepted);
            }
            best[on] = res.best;
            dp_search_trace_clear(&res.trace);
        }
        printf("%-56s %7d %12.0f %12.0f %22.17g %22.17g\n", g->name, g->n_ops, rate[1], rate[0], best[1], best[0]);
        if (only < 0 && best[0] != best[1]) status = 1;
        free(a);
        dp_engine_free(e);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    dp_machine_free(&m);
    return status;
}
