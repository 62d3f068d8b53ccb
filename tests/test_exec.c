/* test_exec: the real executor. Correct numbers under every assignment tried (a ChainMM's output
 * is the matrix product, and equals the single-device run bit for bit), no deadlock on random
 * assignments of random DAGs, no buffer left behind, kernels planned as hand-computed. Checks
 * correctness only, never timing: the machine may be loaded. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_SET */
#include "dp_exec.h"
#include "dp_exec_backend.h"
#include "dp_graph.h"
#include "dp_test.h"

#include <errno.h>
#include <grp.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* ChainMM on a 2 x 2 block partition: X = A B C, each matrix n x n cut into four (n/2)^2 blocks.
 * A and B blocks come first, then the block products P = A_ij B_jk and their sums AB_ik, then
 * the C blocks, then Q = AB_ik C_kl and the sums X_il: 36 ops. An op's inputs are ordered by
 * producer id, so creating C after AB makes AB_ik the left operand of Q and C_kl the right. */
static dp_graph *chainmm(int n)
{
    const int h = n / 2;
    dp_graph_builder *b = dp_graph_builder_alloc("chainmm-test", "test", DP_GRAPH_COST_PHYSICAL);
    int64_t sh[2] = {h, h};
    const double blk = 4.0 * h * h, mm = 2.0 * h * h * h;
    int A[2][2], B[2][2], C[2][2], P[2][2][2], AB[2][2], Q[2][2][2];
    char nm[32];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            snprintf(nm, sizeof nm, "A%d%d", i, j);
            A[i][j] = dp_graph_builder_add_op(b, nm, "input", 0, blk);
            dp_graph_builder_set_op_info(b, A[i][j], NULL, NULL, 2, sh);
        }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            snprintf(nm, sizeof nm, "B%d%d", i, j);
            B[i][j] = dp_graph_builder_add_op(b, nm, "input", 0, blk);
            dp_graph_builder_set_op_info(b, B[i][j], NULL, NULL, 2, sh);
        }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++) {
                snprintf(nm, sizeof nm, "P%d%d%d", i, j, k);
                P[i][j][k] = dp_graph_builder_add_op(b, nm, "matmul", mm, blk);
                dp_graph_builder_set_op_info(b, P[i][j][k], NULL, "ij,jk->ik", 2, sh);
                dp_graph_builder_add_edge(b, A[i][j], P[i][j][k], blk);
                dp_graph_builder_add_edge(b, B[j][k], P[i][j][k], blk);
            }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            snprintf(nm, sizeof nm, "AB%d%d", i, k);
            AB[i][k] = dp_graph_builder_add_op(b, nm, "add", (double)h * h, blk);
            dp_graph_builder_set_op_info(b, AB[i][k], NULL, NULL, 2, sh);
            for (int j = 0; j < 2; j++) dp_graph_builder_add_edge(b, P[i][j][k], AB[i][k], blk);
        }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            snprintf(nm, sizeof nm, "C%d%d", i, j);
            C[i][j] = dp_graph_builder_add_op(b, nm, "input", 0, blk);
            dp_graph_builder_set_op_info(b, C[i][j], NULL, NULL, 2, sh);
        }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            for (int l = 0; l < 2; l++) {
                snprintf(nm, sizeof nm, "Q%d%d%d", i, k, l);
                Q[i][k][l] = dp_graph_builder_add_op(b, nm, "matmul", mm, blk);
                dp_graph_builder_set_op_info(b, Q[i][k][l], NULL, "ij,jk->ik", 2, sh);
                dp_graph_builder_add_edge(b, AB[i][k], Q[i][k][l], blk);
                dp_graph_builder_add_edge(b, C[k][l], Q[i][k][l], blk);
            }
    for (int i = 0; i < 2; i++)
        for (int l = 0; l < 2; l++) {
            snprintf(nm, sizeof nm, "X%d%d", i, l);
            int x = dp_graph_builder_add_op(b, nm, "add", (double)h * h, blk);
            dp_graph_builder_set_op_info(b, x, NULL, NULL, 2, sh);
            for (int k = 0; k < 2; k++) dp_graph_builder_add_edge(b, Q[i][k][l], x, blk);
        }
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

/* DOPPLER_EXEC_BACKEND=cuda runs the suite on the CUDA backend (a build --with-cuda, GPUs) */
static dp_exec *exec_new(const dp_graph *g, int D)
{
    dp_exec_options o;
    dp_exec_options_init(&o);
    const char *be = getenv("DOPPLER_EXEC_BACKEND");
    if (be && *be) o.backend = be;
    dp_error err;
    dp_exec *x = dp_exec_alloc(g, D, &o, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    return x;
}

/* run once and return every sink's output, concatenated (caller frees) */
static float *run_outputs(dp_exec *x, const dp_graph *g, const int *assign, int64_t *total)
{
    dp_error err;
    dp_exec_result r;
    ck_assert_msg(dp_exec_prepare(x, assign, &err) == DP_OK, "%s", err.msg);
    ck_assert_msg(dp_exec_run(x, &r, &err) == DP_OK, "%s", err.msg);
    ck_assert(r.makespan > 0);
    for (int v = 0; v < g->n_ops; v++) ck_assert(r.op_end[v] >= r.op_start[v]);
    /* a consumer never starts before its producer ended */
    for (int e = 0; e < g->n_edges; e++) ck_assert(r.op_start[g->edge_dst[e]] >= r.op_end[g->edge_src[e]]);
    const dp_exec_kernel *k = dp_exec_kernels(x);
    int64_t n = 0;
    for (int i = 0; i < g->n_sinks; i++) n += k[g->sinks[i]].out_elems;
    float *out = malloc((size_t)n * sizeof(float));
    int64_t at = 0;
    for (int i = 0; i < g->n_sinks; i++) {
        int v = g->sinks[i];
        ck_assert_int_eq(dp_exec_read_output(x, v, out + at, k[v].out_elems, &err), k[v].out_elems);
        at += k[v].out_elems;
    }
    *total = n;
    return out;
}

/* the executor's ChainMM equals A B C / (4 h^2) computed here with plain loops: each block
 * product is scaled by 1/h (alpha = 1/K) and each sum of two blocks averages them */
START_TEST(chainmm_is_the_product)
{
    const int n = 32, h = n / 2;
    dp_graph *g = chainmm(n);
    ck_assert_int_eq(g->n_ops, 36);
    dp_exec *x = exec_new(g, 2);
    int *assign = calloc(g->n_ops, sizeof(int));
    int64_t total;
    float *got = run_outputs(x, g, assign, &total);
    ck_assert_int_eq(total, (int64_t)n * n);
    /* the full matrices from the source blocks' deterministic values */
    double *M[3];
    const char *nm[3] = {"A", "B", "C"};
    for (int t = 0; t < 3; t++) {
        M[t] = calloc((size_t)n * n, sizeof(double));
        for (int bi = 0; bi < 2; bi++)
            for (int bj = 0; bj < 2; bj++) {
                char s[8];
                snprintf(s, sizeof s, "%s%d%d", nm[t], bi, bj);
                int v = dp_graph_find_op(g, s);
                ck_assert_int_ge(v, 0);
                for (int i = 0; i < h; i++)
                    for (int j = 0; j < h; j++)
                        M[t][(size_t)(bi * h + i) * n + bj * h + j] = dp_exec_value(1, (uint64_t)v + 1, (uint64_t)(i * h + j));
            }
    }
    double *AB = calloc((size_t)n * n, sizeof(double)), *X = calloc((size_t)n * n, sizeof(double));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++) AB[i * n + j] += M[0][i * n + k] * M[1][k * n + j];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++) X[i * n + j] += AB[i * n + k] * M[2][k * n + j];
    /* sinks X00, X01, X10, X11 in id order, each block row-major */
    int64_t at = 0;
    double maxerr = 0, maxabs = 0;
    for (int bi = 0; bi < 2; bi++)
        for (int bl = 0; bl < 2; bl++)
            for (int i = 0; i < h; i++)
                for (int j = 0; j < h; j++) {
                    double want = X[(size_t)(bi * h + i) * n + bl * h + j] / (4.0 * h * h);
                    double e = fabs(got[at++] - want);
                    if (e > maxerr) maxerr = e;
                    if (fabs(want) > maxabs) maxabs = fabs(want);
                }
    ck_assert_msg(maxabs > 1e-4, "degenerate test data");
    ck_assert_msg(maxerr <= 1e-5 * maxabs + 1e-7, "max error %g (max |x| %g)", maxerr, maxabs);
    for (int t = 0; t < 3; t++) free(M[t]);
    free(AB); free(X); free(got); free(assign);
    dp_exec_free(x);
    dp_graph_free(g);
}
END_TEST

/* every assignment tried gives the single-device output bit for bit */
START_TEST(chainmm_every_assignment_same_output)
{
    dp_graph *g = chainmm(48);
    const int D = 2;
    dp_exec *x = exec_new(g, D);
    int *assign = calloc(g->n_ops, sizeof(int));
    int64_t n0;
    float *ref = run_outputs(x, g, assign, &n0);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    for (int trial = 0; trial < 24; trial++) {
        for (int v = 0; v < g->n_ops; v++)
            assign[v] = trial == 0 ? 1 : trial == 1 ? v % 2 : trial == 2 ? (v / 4) % 2 : (int)gsl_rng_uniform_int(r, D);
        int64_t n1;
        float *got = run_outputs(x, g, assign, &n1);
        ck_assert_int_eq(n0, n1);
        ck_assert_msg(memcmp(ref, got, (size_t)n0 * sizeof(float)) == 0, "trial %d differs from one device", trial);
        free(got);
    }
    gsl_rng_free(r);
    free(ref); free(assign);
    dp_exec_free(x);
    dp_graph_free(g);
}
END_TEST

/* a random DAG of mixed kinds and shapes, edges only from lower to higher ids */
static dp_graph *random_dag(gsl_rng *r, int n)
{
    static const char *kinds[] = {"matmul", "add", "relu", "softmax", "reduce", "mul", "gelu"};
    dp_graph_builder *b = dp_graph_builder_alloc("random", "test", DP_GRAPH_COST_PHYSICAL);
    for (int v = 0; v < n; v++) {
        const char *k = kinds[gsl_rng_uniform_int(r, 7)];
        int64_t sh[2] = {8 + (int64_t)gsl_rng_uniform_int(r, 24), 8 + (int64_t)gsl_rng_uniform_int(r, 24)};
        double p = (double)(sh[0] * sh[1]);
        double work = strcmp(k, "matmul") == 0 ? 2.0 * p * (4 + gsl_rng_uniform_int(r, 28)) : p;
        dp_graph_builder_add_op(b, NULL, k, work, 4 * p);
        dp_graph_builder_set_op_info(b, v, NULL, NULL, 2, sh);
        int deg = v == 0 ? 0 : (int)gsl_rng_uniform_int(r, 4);
        for (int i = 0; i < deg; i++) {
            int u = (int)gsl_rng_uniform_int(r, (unsigned long)v);
            dp_graph_builder_add_edge(b, u, v, 4 * p);
        }
    }
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

/* random assignments of random DAGs on 1 to 4 devices (more devices than cores too) always
 * finish, and give the single-device numbers; buffers do not pile up between runs */
START_TEST(random_dags_no_deadlock)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    for (int gi = 0; gi < 8; gi++) {
        dp_graph *g = random_dag(r, 20 + (int)gsl_rng_uniform_int(r, 120));
        int D = 1 + gi % 4;
        dp_exec *x = exec_new(g, D);
        int *assign = calloc(g->n_ops, sizeof(int));
        int64_t n0;
        float *ref = run_outputs(x, g, assign, &n0);
        for (int trial = 0; trial < 10; trial++) {
            for (int v = 0; v < g->n_ops; v++) assign[v] = (int)gsl_rng_uniform_int(r, (unsigned long)D);
            int64_t n1;
            float *got = run_outputs(x, g, assign, &n1);
            ck_assert_msg(memcmp(ref, got, (size_t)n0 * sizeof(float)) == 0, "graph %d trial %d differs", gi, trial);
            free(got);
            /* live buffers: outputs + copies + one weight buffer per device, nothing else */
            dp_error err;
            dp_exec_result res;
            ck_assert_int_eq(dp_exec_run(x, &res, &err), DP_OK);
            ck_assert_int_eq(dp_exec_live_buffers(x), g->n_ops + res.n_copies + D);
            for (int c = 0; c < res.n_copies; c++) {
                ck_assert_int_ne(res.copy_dev[c], assign[res.copy_src[c]]);
                ck_assert(res.copy_end[c] >= res.copy_start[c]);
                ck_assert(res.copy_start[c] >= res.op_end[res.copy_src[c]]);
            }
        }
        free(ref); free(assign);
        dp_exec_free(x);
        dp_graph_free(g);
    }
    gsl_rng_free(r);
}
END_TEST

/* kernels as hand-computed: a 8x6 matmul with K = 4, scaled by 1/2 */
START_TEST(plan_hand)
{
    dp_graph_builder *b = dp_graph_builder_alloc("p", "test", DP_GRAPH_COST_PHYSICAL);
    int64_t sh[2] = {8, 6}, sh3[3] = {2, 4, 6};
    dp_graph_builder_add_op(b, "x", "input", 0, 4 * 48);
    dp_graph_builder_set_op_info(b, 0, NULL, NULL, 2, sh);
    dp_graph_builder_add_op(b, "y", "matmul", 2.0 * 8 * 6 * 4, 4 * 48);
    dp_graph_builder_set_op_info(b, 1, NULL, "ij,jk->ik", 2, sh);
    dp_graph_builder_add_op(b, "z", "relu", 48, 4 * 48);
    dp_graph_builder_set_op_info(b, 2, NULL, NULL, 3, sh3);
    dp_graph_builder_add_op(b, "w", "op", 10, 4 * 48);
    dp_graph_builder_set_op_info(b, 3, NULL, "bij->bi", 2, sh);
    dp_graph_builder_add_edge(b, 0, 1, 4 * 48);
    dp_graph_builder_add_edge(b, 1, 2, 4 * 48);
    dp_graph_builder_add_edge(b, 1, 3, 4 * 48);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_ptr_nonnull(g);
    dp_exec_options o;
    dp_exec_options_init(&o);
    o.scale = 0.5;
    dp_exec_kernel k[4];
    ck_assert_int_eq(dp_exec_plan(g, &o, k, &err), DP_OK);
    ck_assert_int_eq(k[0].cls, DP_EXEC_SOURCE);
    ck_assert_int_eq(k[0].out_elems, 12);
    ck_assert_int_eq(k[1].cls, DP_EXEC_GEMM);
    ck_assert_int_eq(k[1].m, 4);
    ck_assert_int_eq(k[1].n, 3);
    ck_assert_int_eq(k[1].k, 2);
    ck_assert_double_eq(k[1].flops, 48);
    ck_assert_double_eq(k[1].bytes, 4.0 * (12 + 12));
    ck_assert_int_eq(k[2].cls, DP_EXEC_ELEMWISE);
    ck_assert_int_eq(k[2].func, DP_EXEC_F_RELU);
    ck_assert_int_eq(k[2].out_elems, 1 * 2 * 3);   /* 2x4x6 halved: 1x2x3 */
    ck_assert_double_eq(k[2].flops, 48.0 * 6 / 48);
    ck_assert_int_eq(k[3].cls, DP_EXEC_REDUCE);     /* an einsum with a summed index */
    o.scale = 0;
    ck_assert_int_eq(dp_exec_plan(g, &o, k, &err), DP_EINVAL);
    /* auto scale: the total comes within one step of the target */
    double s = dp_exec_auto_scale(g, 100);
    ck_assert(s > 0 && s <= 1);
    dp_graph_free(g);
}
END_TEST

/* a DOPPLER-style time graph runs synthetic kernels of proportional work */
START_TEST(synthetic_kernels)
{
    dp_graph_builder *b = dp_graph_builder_alloc("t", "test", DP_GRAPH_COST_TIME);
    dp_graph_builder_add_op(b, NULL, NULL, 100, 400);
    dp_graph_builder_add_op(b, NULL, NULL, 300, 1200);
    dp_graph_builder_add_op(b, NULL, NULL, 200, 800);
    dp_graph_builder_add_edge(b, 0, 1, 400);
    dp_graph_builder_add_edge(b, 0, 2, 400);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    dp_exec_options o;
    dp_exec_options_init(&o);
    o.flops_per_unit = 2.0 * 64 * 64 * 10;   /* one unit = ten 64x64 tiles of K */
    o.bytes_per_unit = 4;
    dp_exec *x = dp_exec_alloc(g, 2, &o, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    const dp_exec_kernel *k = dp_exec_kernels(x);
    ck_assert_int_eq(k[0].cls, DP_EXEC_SYNTH);
    ck_assert_int_eq(k[0].k, 1000);
    ck_assert_int_eq(k[1].k, 3000);
    ck_assert_int_eq(k[1].out_elems, 1200);
    const dp_graph *xg = dp_exec_graph(x);
    ck_assert_int_eq(xg->cost_kind, DP_GRAPH_COST_PHYSICAL);
    ck_assert_double_eq(xg->work[2], 2.0 * 64 * 64 * 2000);
    ck_assert_double_eq(xg->edge_size[0], 1600);
    int a0[] = {0, 0, 0}, a1[] = {0, 1, 0};
    int64_t n0, n1;
    float *r0 = run_outputs(x, g, a0, &n0);
    float *r1 = run_outputs(x, g, a1, &n1);
    ck_assert(memcmp(r0, r1, (size_t)n0 * sizeof(float)) == 0);
    dp_exec_stats st;
    ck_assert_int_eq(dp_exec_measure(x, a1, 1, 3, NULL, &st, &err), DP_OK);
    ck_assert(st.min <= st.median && st.median <= st.max && st.repeats == 3);
    /* the oracle of Stage III: a positive makespan per call, errors passed on */
    dp_exec_oracle_ctx oc = {.x = x, .warmup = 1, .repeats = 3};
    double mk = 0;
    ck_assert_int_eq(dp_exec_oracle_cost(&oc, a0, &mk, &err), DP_OK);
    ck_assert(mk > 0);
    ck_assert_int_eq(oc.calls, 1);
    int bad[] = {0, 5, 0};
    ck_assert_int_eq(dp_exec_oracle_cost(&oc, bad, &mk, &err), DP_EINVAL);
    /* paired with a reference executor: the cost is the reference's first median times the
     * median ratio of each run to its reference run; the level is kept from the first call */
    dp_exec *rx = dp_exec_alloc(g, 2, &o, &err);
    ck_assert_msg(rx != NULL, "%s", err.msg);
    dp_exec_oracle_ctx pc = {.x = x, .warmup = 1, .repeats = 3, .ref_x = rx};
    ck_assert_int_eq(dp_exec_oracle_cost(&pc, a1, &mk, &err), DP_EINVAL);   /* the reference is not prepared */
    ck_assert(strstr(err.msg, "reference") != NULL);
    ck_assert_int_eq(dp_exec_prepare(rx, a1, &err), DP_OK);
    ck_assert_int_eq(dp_exec_oracle_cost(&pc, a1, &mk, &err), DP_OK);
    const double level = pc.ref_level;
    ck_assert(level > 0 && pc.ref_last == level && pc.calls == 1);
    /* the same placement as the reference: a ratio near 1. Only the scale is checked (a unit or
     * level error is off by 1e6 or more): these runs last microseconds, and under a loaded machine
     * (the sanitizer build beside other jobs) one median was measured at 0.11 of its reference */
    ck_assert_msg(mk > 1e-3 * level && mk < 1e3 * level, "cost %g against the reference's %g", mk, level);
    ck_assert_int_eq(dp_exec_oracle_cost(&pc, a0, &mk, &err), DP_OK);
    ck_assert(mk > 0 && pc.ref_level == level && pc.ref_last > 0 && pc.calls == 2);
    ck_assert_int_eq(dp_exec_oracle_cost(&pc, bad, &mk, &err), DP_EINVAL);
    ck_assert_int_eq(pc.calls, 2);
    /* a reference of another graph is refused */
    dp_graph *g8 = chainmm(8);
    dp_exec *ox = dp_exec_alloc(g8, 2, NULL, &err);
    ck_assert_msg(ox != NULL, "%s", err.msg);
    int *z8 = calloc((size_t)g8->n_ops, sizeof(int));
    ck_assert_int_eq(dp_exec_prepare(ox, z8, &err), DP_OK);
    pc.ref_x = ox;
    ck_assert_int_eq(dp_exec_oracle_cost(&pc, a0, &mk, &err), DP_EINVAL);
    free(z8);
    dp_exec_free(ox);
    dp_graph_free(g8);
    dp_exec_free(rx);
    free(r0); free(r1);
    dp_exec_free(x);
    dp_graph_free(g);
}
END_TEST

/* synthetic units past what the executor counts are refused, naming the op and the units: FLOPs
 * per unit giving 1e25 FLOPs (validate --target-flops 1e25) overflowed the int64 tile count, and
 * the executed graph's op -7.6e22 FLOPs was then blamed on the graph file (a review) */
START_TEST(synthetic_units_out_of_range)
{
    dp_graph_builder *b = dp_graph_builder_alloc("t", "test", DP_GRAPH_COST_TIME);
    dp_graph_builder_add_op(b, "a", NULL, 100, 400);
    dp_graph_builder_add_op(b, "b", NULL, 300, 1200);
    dp_graph_builder_add_edge(b, 0, 1, 400);
    dp_error err;
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_exec_kernel k[2];
    dp_exec_options o;
    dp_exec_options_init(&o);
    o.flops_per_unit = dp_exec_auto_scale(g, 1e25);
    ck_assert_int_eq(dp_exec_plan(g, &o, k, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 0 (\"a\")") && strstr(err.msg, "FLOPs per unit"), "%s", err.msg);
    ck_assert_ptr_null(dp_exec_plan_graph(g, &o, &err));
    ck_assert_msg(strstr(err.msg, "work must be") == NULL, "%s", err.msg);
    o.flops_per_unit = INFINITY;
    ck_assert_int_eq(dp_exec_plan(g, &o, k, &err), DP_EINVAL);
    /* DP_EXEC_MAX_FLOPS in all is planned exactly (tiles under 2^53; outputs of a float per
     * unit: at the default bytes per unit they are past any memory, and past 2^53 floats) */
    o.flops_per_unit = dp_exec_auto_scale(g, DP_EXEC_MAX_FLOPS);
    o.bytes_per_unit = 4;
    ck_assert_msg(dp_exec_plan(g, &o, k, &err) == DP_OK, "%s", err.msg);
    ck_assert(k[1].k > 0 && k[1].flops == 2.0 * 64 * 64 * (double)k[1].k);
    ck_assert_double_eq_tol(k[0].flops + k[1].flops, DP_EXEC_MAX_FLOPS, 1e-6 * DP_EXEC_MAX_FLOPS);
    dp_graph_free(g);
}
END_TEST

/* the nice the workers run at, read back: their inherited one without --nice, a raise as asked,
 * and where a lower value cannot be set (no CAP_SYS_NICE: an unprivileged user, here root
 * turned nobody in a child), the inherited one and the errno (the failure was ignored and
 * validate reported the nice asked for as applied: a review) */
static int nice_unprivileged(const dp_graph *g)
{
    if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) return 77;
    const struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_NICE, &none) != 0) return 77;
    errno = 0;
    const int cur = getpriority(PRIO_PROCESS, 0);
    if (errno || cur <= -20) return 77;
    dp_exec_options o;
    dp_exec_options_init(&o);
    o.nice = cur - 1;
    dp_error err;
    dp_exec *x = dp_exec_alloc(g, 2, &o, &err);
    if (!x) { fprintf(stderr, "dp_exec_alloc: %s\n", err.msg); return 1; }
    int e = 0;
    const int now = dp_exec_nice(x, &e);
    dp_exec_free(x);
    if (now != cur || (e != EACCES && e != EPERM)) {
        fprintf(stderr, "nice %d asked at nice %d without the right: reported %d, errno %d\n", cur - 1, cur, now, e);
        return 1;
    }
    return 0;
}

START_TEST(worker_nice_reported)
{
    dp_graph *g = chainmm(8);
    errno = 0;
    const int cur = getpriority(PRIO_PROCESS, 0);
    ck_assert_int_eq(errno, 0);
    dp_exec_options o;
    dp_exec_options_init(&o);
    dp_error err;
    int e = -1;
    dp_exec *x = dp_exec_alloc(g, 2, &o, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_exec_nice(x, &e), cur);
    ck_assert_int_eq(e, 0);
    dp_exec_free(x);
    o.nice = cur < 19 ? cur + 1 : 19;   /* a raise: always allowed */
    x = dp_exec_alloc(g, 2, &o, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_exec_nice(x, &e), o.nice);
    ck_assert_int_eq(e, 0);
    dp_exec_free(x);
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) _exit(nice_unprivileged(g));
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77)
        fprintf(stderr, "worker_nice_reported: a nice the process may not set not tried (cannot drop the right to lower it, "
                        "or at nice -20)\n");
    else
        ck_assert_msg(WEXITSTATUS(st) == 0, "a nice that could not be set was not reported (see stderr)");
    dp_graph_free(g);
}
END_TEST

START_TEST(bad_input)
{
    dp_graph *g = chainmm(8);
    dp_exec_options o;
    dp_exec_options_init(&o);
    o.backend = "tpu";
    dp_error err;
    ck_assert_ptr_null(dp_exec_alloc(g, 2, &o, &err));
    ck_assert_int_eq(err.code, DP_EUNSUPPORTED);
    dp_exec *x = exec_new(g, 2);
    int *a = calloc(g->n_ops, sizeof(int));
    dp_exec_result r;
    ck_assert_int_eq(dp_exec_run(x, &r, &err), DP_EINVAL);
    a[5] = 2;
    ck_assert_int_eq(dp_exec_prepare(x, a, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 5") != NULL, "%s", err.msg);
    free(a);
    dp_exec_free(x);
    dp_graph_free(g);
}
END_TEST

/* The CPU backend's devices run on the process's cores (sched_getaffinity), not on cores
 * 0..D-1: under `taskset -c K` every device is core K (its workers were pinned to core 1 as
 * well, overriding the mask: a new researcher's report) */
START_TEST(cpu_cores_follow_the_affinity)
{
    cpu_set_t old, one;
    ck_assert_int_eq(sched_getaffinity(0, sizeof old, &old), 0);
    int all[CPU_SETSIZE];
    const int n = dp_exec_cpu_cores(all, CPU_SETSIZE);
    ck_assert_int_eq(n, CPU_COUNT(&old));
    for (int i = 0; i < n; i++) ck_assert(CPU_ISSET(all[i], &old) && (i == 0 || all[i] > all[i - 1]));
    /* the last allowed core alone: the list is that core */
    CPU_ZERO(&one);
    CPU_SET(all[n - 1], &one);
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
    int c[4];
    const int k = dp_exec_cpu_cores(c, 4);
    /* a pinned device's worker stays on it (core 0 % cores before, whatever the mask) */
    void *ctx = NULL;
    dp_error err;
    ck_assert_int_eq(dp_exec_backend_cpu.open(1, 1, &ctx, &err), DP_OK);
    ck_assert_int_eq(dp_exec_backend_cpu.bind(ctx, 0, 0), DP_OK);
    cpu_set_t now;
    ck_assert_int_eq(sched_getaffinity(0, sizeof now, &now), 0);
    dp_exec_backend_cpu.close(ctx);
    ck_assert_int_eq(sched_setaffinity(0, sizeof old, &old), 0);
    ck_assert_int_eq(k, 1);
    ck_assert_int_eq(c[0], all[n - 1]);
    ck_assert_int_eq(CPU_COUNT(&now), 1);
    ck_assert(CPU_ISSET(all[n - 1], &now));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exec");
    TCase *t = tcase_create("exec");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, cpu_cores_follow_the_affinity);
    tcase_add_test(t, chainmm_is_the_product);
    tcase_add_test(t, chainmm_every_assignment_same_output);
    tcase_add_test(t, random_dags_no_deadlock);
    tcase_add_test(t, plan_hand);
    tcase_add_test(t, synthetic_kernels);
    tcase_add_test(t, synthetic_units_out_of_range);
    tcase_add_test(t, bad_input);
    tcase_add_test(t, worker_nice_reported);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
