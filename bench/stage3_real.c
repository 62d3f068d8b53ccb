/* stage3_real: DOPPLER's Stage III end to end on the real executor (Yao et al. 2026: REINFORCE
 * on measured makespans), with the stages before it on the calibrated simulator.
 *
 *   1. the graph as executed (scaled) on the topology's devices, costs from the calibration;
 *   2. Stage I (imitation) and Stage II (REINFORCE on the simulator) -> a Stage II checkpoint;
 *   3. a fresh trainer initialised from that checkpoint runs Stage III against the real
 *      executor (the dp_oracle of dp_exec_oracle_cost), logging every episode to the HDF5
 *      trajectory layout of policy/dp_h5io.h, and checkpoints;
 *   4. the measured makespan of the critical-path heuristic and of the greedy policy before and
 *      after Stage III (the median of --measure interleaved passes).
 *
 * Usage: bench/stage3_real --graph G [--topology T] [--calibration C] [--il N] [--sim N]
 *        [--real N] [--repeats R] [--measure R] [--out DIR] [--seed S] [--target-flops F]
 *        [--reference M]   (each Stage III run paired with a run of method M's placement:
 *                           dp_exec_oracle_ctx.ref_x)
 * A long run (minutes): not part of make check or make bench; run it on a quiet machine.
 */
#include "cli.h"
#include "dp_engine.h"
#include "dp_exec.h"
#include "dp_place.h"
#include "dp_train.h"
#include "dp_validate.h"
#include "exec_cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void progress(const dp_train_progress *p, void *ctx)
{
    (void)ctx;
    long every = p->stage == DP_TRAIN_STAGE_REAL ? 10 : 100;
    if (p->episode % every != 0 && !p->final) return;
    fprintf(stderr, "  stage %s episode %ld/%ld: makespan %.4g best %.4g running avg %.4g (%.1f episodes/s)\n",
            dp_train_stage_name(p->stage), p->episode, p->episodes, p->makespan, p->best, p->running_avg, p->episodes_per_s);
}

/* the makespans of k assignments measured in `passes` interleaved passes (each pass: prepare,
 * a warm-up run and a measured run of every assignment in turn, so that the host's drift falls
 * on all alike): the median and quartiles of each one's runs (not doppler validate's
 * normalised statistic: with 3 assignments, two of them often the same, a pass's median is one
 * of them and would pin it) */
static int measure(dp_exec *x, const int *const *as, int k, int passes, double *med, double *q25, double *q75, dp_error *err)
{
    double *t = malloc((size_t)k * (size_t)passes * sizeof(double));
    if (!t) return dp_error_set(err, DP_ENOMEM, "out of memory");
    int rc = DP_OK;
    for (int p = 0; p < passes && rc == DP_OK; p++)
        for (int i = 0; i < k && rc == DP_OK; i++) {
            dp_exec_result res;
            if ((rc = dp_exec_prepare(x, as[i], err)) != DP_OK) break;
            if ((rc = dp_exec_run(x, &res, err)) != DP_OK) break;
            if ((rc = dp_exec_run(x, &res, err)) != DP_OK) break;
            t[(size_t)i * passes + p] = res.makespan;
        }
    if (rc == DP_OK && dp_validate_measured(t, k, passes, 0, 1, DP_VALIDATE_MEDIAN, med, q25, q75) != 0)
        rc = dp_error_set(err, DP_EINVAL, "stage3_real: a run gave no positive, finite makespan");
    free(t);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"graph", required_argument, NULL, 'g'}, {"il", required_argument, NULL, 'i'},
        {"sim", required_argument, NULL, 's'}, {"real", required_argument, NULL, 'r'},
        {"repeats", required_argument, NULL, 'R'}, {"measure", required_argument, NULL, 'm'},
        {"out", required_argument, NULL, 'o'}, {"seed", required_argument, NULL, 'S'},
        {"target-flops", required_argument, NULL, 'f'}, {"reference", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        DP_CLI_MACHINE_OPTIONS, {NULL, 0, NULL, 0}};
    const char *graph = NULL, *out = ".", *reference = NULL;
    int n_il = 300, n_sim = 300, n_real = 50, repeats = 3, meas = 9;
    unsigned long long seed = 1;
    double target = 2e10;
    dp_machine mach;
    dp_machine_init(&mach);
    int c, li = 0;
    while ((c = getopt_long(argc, argv, "h", opts, &li)) != -1) {
        int r = dp_cli_machine_option(&mach, c, optarg, "stage3_real");
        if (r < 0) return 2;
        if (r > 0) continue;
        switch (c) {
        case 'g': graph = optarg; break;
        /* every number checked, as train's are (atoi took --repeats 0 and printed "the median of 0
         * runs" while the oracle ran 3; --target-flops 0 ran a graph of 40 FLOPs: a review) */
        case 'i': if (dp_cli_parse_int(optarg, 0, 100000000, &n_il)) goto bad; break;
        case 's': if (dp_cli_parse_int(optarg, 0, 100000000, &n_sim)) goto bad; break;
        case 'r': if (dp_cli_parse_int(optarg, 1, 100000000, &n_real)) goto bad; break;
        case 'R': if (dp_cli_parse_int(optarg, 1, 1000, &repeats)) goto bad; break;
        case 'm': if (dp_cli_parse_int(optarg, 1, 1000, &meas)) goto bad; break;
        case 'o': out = optarg; break;
        case 'S': if (dp_cli_parse_u64(optarg, &seed)) goto bad; break;
        case 'f': if (dp_cli_parse_double(optarg, &target) || !(target > 0)) goto bad; break;
        case 'P': reference = optarg; break;
        default:
            fprintf(stderr, "usage: stage3_real --graph G [--topology T] [--calibration C] [--il N] [--sim N] [--real N]\n"
                            "       [--repeats R] [--measure R] [--out DIR] [--seed S] [--target-flops F] [--reference M]\n");
            return c == 'h' ? 0 : 2;
        }
        continue;
    bad:
        fprintf(stderr, "stage3_real: --%s: bad value '%s' (--il, --sim: 0 or more; --real at least 1; --repeats, --measure "
                        "1..1000; --seed a non-negative integer; --target-flops a positive number)\n", opts[li].name, optarg);
        return 2;
    }
    if (!graph || n_real < 1 || meas < 1) {
        fprintf(stderr, "stage3_real: --graph is required; --real and --measure at least 1\n");
        return 2;
    }
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = dp_graph_read(graph, NULL, &err);
    if (!g) return dp_cli_fail(&err);
    dp_exec_options xo;
    dp_exec_options_init(&xo);
    dp_cli_real real;
    if (dp_cli_real_open(&real, g, &mach, &xo, 0, target, repeats, &err) != DP_OK) return dp_cli_fail(&err);
    if (reference && dp_cli_real_reference(&real, g, reference, &err) != DP_OK) {
        dp_cli_real_close(&real);
        return dp_cli_fail(&err);
    }
    const dp_graph *xg = real.xg;
    const int n = xg->n_ops;
    char ck2[4096], ck3[4096], tr2[4096], tr3[4096];
    snprintf(ck2, sizeof ck2, "%s/stage2.ckpt.h5", out);
    snprintf(tr2, sizeof tr2, "%s/stage12.traj.h5", out);
    snprintf(ck3, sizeof ck3, "%s/stage3.ckpt.h5", out);
    snprintf(tr3, sizeof tr3, "%s/stage3.traj.h5", out);
    dp_train_config cfg;
    dp_train_config_default(&cfg);
    cfg.seed = seed;
    int *a_cp = malloc((size_t)n * sizeof(int)), *a_before = malloc((size_t)n * sizeof(int)),
        *a_after = malloc((size_t)n * sizeof(int));
    dp_train *t2 = NULL, *t3 = NULL;
    dp_engine *eng = NULL;
    int status = 1;
    fprintf(stderr, "stage3_real: %s, %d ops, %.3g FLOPs executed on %d devices of %s (calibration %s)\n", g->name, n,
            dp_graph_total_work(xg), real.costs->n_devices, mach.topo->name, mach.calibration ? mach.calibration : "none");
    /* stages I and II on the simulator, as the paper does before real execution */
    if (!(eng = dp_engine_alloc(xg, real.costs, &mach, &err))) goto fail;
    const dp_oracle sim_oracle = dp_engine_oracle(eng);
    if (!(t2 = dp_train_alloc(xg, real.costs, &cfg, &sim_oracle, &err))) goto fail;
    dp_train_io io;
    memset(&io, 0, sizeof io);
    io.progress = progress;
    io.trajectory = tr2;
    io.checkpoint = ck2;
    if (n_il > 0 && dp_train_run(t2, DP_TRAIN_STAGE_IL, n_il, &io, &err) != DP_OK) goto fail;
    if (n_sim > 0 && dp_train_run(t2, DP_TRAIN_STAGE_SIM, n_sim, &io, &err) != DP_OK) goto fail;
    double sim_before;
    if (dp_train_place(t2, 0, seed, a_before, &sim_before, NULL, &err) != DP_OK) goto fail;
    /* stage III from the stage II checkpoint, against real execution */
    if (!(t3 = dp_train_alloc(xg, real.costs, &cfg, &real.oracle, &err))) goto fail;
    if (dp_train_init_from(t3, ck2, &err) != DP_OK) goto fail;
    io.trajectory = tr3;
    io.checkpoint = ck3;
    double t0_calls = (double)real.ctx.calls;
    if (dp_train_run(t3, DP_TRAIN_STAGE_REAL, n_real, &io, &err) != DP_OK) goto fail;
    double after_ms;
    if (dp_train_place(t3, 0, seed, a_after, &after_ms, NULL, &err) != DP_OK) goto fail;
    dp_place_options po;
    dp_place_options_init(&po);
    if (dp_place("cp", xg, real.costs, &po, a_cp, NULL, NULL, &err) != DP_OK) goto fail;
    /* before and after, measured now, interleaved in the same minute */
    double m[3], q1[3], q3[3];
    const int *as[3] = {a_cp, a_before, a_after};
    const char *label[3] = {"critical path (cp)", "DOPPLER after stage II", "DOPPLER after stage III"};
    if (measure(real.x, as, 3, meas, m, q1, q3, &err) != DP_OK) goto fail;
    printf("stage III: %d episodes on the real executor (%ld oracle calls, each the median of %d runs%s%s)\n", n_real,
           (long)(real.ctx.calls - t0_calls), repeats, reference ? " relative to paired runs of the placement of " : "",
           reference ? reference : "");
    if (reference)
        printf("reference %s: %.3f ms at the first call, %.3f ms at the last (the host's drift the pairing took out)\n", reference,
               real.ctx.ref_level * 1e3, real.ctx.ref_last * 1e3);
    printf("trajectory: %s (stages I+II: %s), checkpoints: %s, %s\n", tr3, tr2, ck2, ck3);
    printf("%-26s %12s %20s\n", "assignment", "measured_ms", "q25..q75_ms");
    for (int k = 0; k < 3; k++) printf("%-26s %12.3f %9.3f..%-9.3f\n", label[k], m[k] * 1e3, q1[k] * 1e3, q3[k] * 1e3);
    if (reference) {
        /* what the pairing buys: the greedy placement after Stage III costed 30 times by the
         * plain oracle and by the paired one, alternately; the spread of each */
        enum { K = 30 };
        double plain[K], paired[K];
        dp_exec_oracle_ctx pc = real.ctx;
        pc.ref_x = NULL;
        for (int k = 0; k < K; k++) {
            if (dp_exec_oracle_cost(&pc, a_after, &plain[k], &err) != DP_OK) goto fail;
            if (dp_exec_oracle_cost(&real.ctx, a_after, &paired[k], &err) != DP_OK) goto fail;
        }
        /* each as one row of K runs: median and quartiles */
        double qp[3], qr[3];
        if (dp_validate_measured(plain, 1, K, 0, 1, DP_VALIDATE_MEDIAN, &qp[1], &qp[0], &qp[2]) != 0 ||
            dp_validate_measured(paired, 1, K, 0, 1, DP_VALIDATE_MEDIAN, &qr[1], &qr[0], &qr[2]) != 0) {
            dp_error_set(&err, DP_EINVAL, "stage3_real: an oracle call gave no positive, finite makespan");
            goto fail;
        }
        printf("oracle on the greedy placement after Stage III, %d calls each, alternately: plain median %.3f ms, "
               "interquartile range %.2f%%; paired with %s: median %.3f ms, interquartile range %.2f%%\n", K, qp[1] * 1e3,
               100 * (qp[2] - qp[0]) / qp[1], reference, qr[1] * 1e3, 100 * (qr[2] - qr[0]) / qr[1]);
    }
    int changed = 0;
    for (int v = 0; v < n; v++) changed += a_before[v] != a_after[v];
    printf("ops whose device changed in stage III: %d of %d; measured after / before: %.3f\n", changed, n, m[2] / m[1]);
    status = 0;
    goto done;
fail:
    status = dp_cli_fail(&err);
done:
    dp_train_free(t2);
    dp_train_free(t3);
    dp_engine_free(eng);
    free(a_cp); free(a_before); free(a_after);
    dp_cli_real_close(&real);
    dp_machine_free(&mach);
    dp_graph_free(g);
    return status;
}
