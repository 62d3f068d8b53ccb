/* bench_env_size: the engine state's cost per step on large graphs (issues 15 and 16).
 *
 * For a graph file on D devices (the default machine: the exact DOPPLER-compatible engine), one
 * critical-path episode in the engine state (dp_env.h): each step selects the ready op of
 * highest b-level and scores every device (dp_env_cp_place: D estimates, as a PLC policy's
 * features ask for), then places it. Prints the CPU time of the episode, the steps whose run
 * resumed at the placed op's READY or simulated from the start (dp_sim_prefix_add), the ops
 * simulated again per step, the steps whose op arrives on its device no later than a placed op
 * of it (an overtake or a tie: each one a prefix simulation before the runs were resumed), and
 * the estimates that needed a run (an exact tie of arrival times on the device) against those
 * the local rule answered.
 *
 * Besides the critical-path order (ORDER "cp"), ORDER "random" selects a uniformly random ready op
 * each step (GSL mt19937, SEED; the device is still the earliest start): ops placed long after
 * the ops that follow them in time, as a learned SEL may place them, the case in which a step
 * simulates many ops again. Prints beside the ops simulated again per step (k) the ops whose
 * times the step changed (dp_sim_prefix.n_retimed): the least any exact incremental state must
 * rewrite, so k / retimed is the most a finer exact method could save.
 *
 * CONVERGE 1 (the default) lets a step's run stop once its state is the prefix's again with the
 * placed op done (dp_sim_set_converge_prefix); 0 simulates every op ending at or after the
 * op's READY, as before that existed: the same schedules either way, so the same makespan, and
 * with 1 "ops simulated again" counts only the ops a converged run reached.
 *
 * Usage: bench_env_size GRAPH [DEVICES [ORDER [SEED [CONVERGE]]]]   (bench/env-size.sh runs it) */
#include "dp_engine.h"
#include "dp_env.h"
#include "dp_problem.h"
#include "dp_sim.h"
#include "dp_machine.h"

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_env_size GRAPH [DEVICES [ORDER [SEED [CONVERGE]]]]\n");
        return 2;
    }
    const char *order = argc > 3 ? argv[3] : "cp";
    const int random_order = !strcmp(order, "random");
    if (!random_order && strcmp(order, "cp")) {
        fprintf(stderr, "bench_env_size: ORDER \"%s\": cp or random\n", order);
        return 2;
    }
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, argc > 4 ? strtoul(argv[4], NULL, 10) : 1);
    dp_error err;
    dp_graph *g = dp_graph_read(argv[1], NULL, &err);
    if (!g) {
        fprintf(stderr, "bench_env_size: %s\n", err.msg);
        return 1;
    }
    dp_machine m;
    dp_machine_init(&m);
    if (dp_machine_set(&m, "devices", argc > 2 ? argv[2] : "4", &err) != DP_OK || dp_machine_load(&m, &err) != DP_OK) {
        fprintf(stderr, "bench_env_size: %s\n", err.msg);
        return 1;
    }
    dp_problem *prob = dp_problem_alloc(g, &m, &err);
    const dp_cost *c = prob ? prob->costs : NULL;
    dp_env *env = prob ? dp_env_alloc(g, c, &err) : NULL;
    if (!env || dp_env_set_state(env, DP_ENV_STATE_ENGINE, prob->engine, &err) != DP_OK) {
        fprintf(stderr, "bench_env_size: %s\n", err.msg);
        return 1;
    }
    dp_env_set_ready_order(env, DP_ENV_READY_BY_BLEVEL);
    const int converge = argc > 5 ? atoi(argv[5]) != 0 : 1;
    dp_sim_set_converge_prefix(dp_engine_fast_sim(prob->engine), converge);
    const dp_sim_prefix *p = env->prefix;
    clock_t t0 = clock();
    int kmax = 0;
    long step_full = 0, probes = 0, overtakes = 0;
    while (!dp_env_done(env)) {
        int v = random_order ? env->ready[gsl_rng_uniform_int(rng, (unsigned long)env->n_ready)] : dp_env_cp_select(env);
        long runs = env->n_resim;
        int d = dp_env_cp_place(env, v);
        probes += env->n_resim - runs;
        long full = p->n_full;
        /* v arrives on d (at r) no later than a placed op of d: it overtakes it or ties with it */
        const double r = env->cand_ready[d];
        if (p->dev_n[d] > 0 && p->ready[p->dev_ops[d][p->dev_n[d] - 1]] >= r) overtakes++;
        if (dp_env_step(env, v, d, &err) != DP_OK) {
            fprintf(stderr, "bench_env_size: %s\n", err.msg);
            return 1;
        }
        if (p->n_changed > kmax) kmax = p->n_changed;
        step_full += p->n_full - full;
    }
    double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
    const long n = g->n_ops;
    printf("%s: %ld ops, %d devices: %s-order episode in the engine state, convergence %s: %.3f s CPU (%.1f us "
           "per step), makespan %.6g\n", g->name, n, c->n_devices, order, converge ? "on" : "off", cpu,
           cpu * 1e6 / (double)n, dp_env_makespan(env) / g->time_scale);
    printf("  commits whose run converged: %ld\n", p->n_converged);
    printf("  steps: %ld resumed at the op's READY, %ld simulated from the start; ops simulated again per run "
           "%.1f, at most %d in a step (of %ld placed at the end)\n", n - step_full, step_full,
           (double)p->n_resimulated / (double)(p->n_resumed + p->n_full), kmax, n);
    printf("  ops whose times a step changed (retimed) per step %.1f: %.2f simulated again per op retimed\n",
           (double)p->n_retimed / (double)n, (double)p->n_resimulated / (double)(p->n_retimed > 0 ? p->n_retimed : 1));
    printf("  steps whose op arrives no later than a placed op of its device: %ld\n", overtakes);
    printf("  estimates: %ld of %ld needed a run (a tie of arrival times on the device; from the start at time 0)\n",
           probes, n * c->n_devices);
    dp_env_free(env);
    dp_problem_free(prob);
    dp_machine_free(&m);
    dp_graph_free(g);
    gsl_rng_free(rng);
    return 0;
}
