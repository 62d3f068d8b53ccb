/* test_doppler_data: the DOPPLER paper's graph files (../shared/data/doppler-graphs, or
 * $DOPPLER_SHARED_DATA): reading, the reference makespans, single-device sums, and the
 * critical-path heuristic against random placement. Exit 77 (SKIP) when the data is absent. */
#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_place.h"
#include "dp_sim.h"
#include "dp_test.h"

#include <math.h>

/* DOPPLER files read as the reference reads them: op and edge counts of the paper's table */
static const struct { const char *file; int ops, edges; double sum; } dg[] = {
    {"chain_mm_112nodes.txt", 76, 80, 4800.28},
    {"gdp_chain_mm_112nodes.txt", 76, 80, 4800.28},
    {"ffnn_192nodes.txt", 180, 208, 226.7832},
    {"transformer_block_215nodes.txt", 182, 234, 388.6778},
    {"full_transformer_layer_261nodes.txt", 229, 284, 388.977},
    {"8gpu_transformer_block.txt", 302, 398, 777.2231},
    {"8gpu_full_transformer.txt", 367, 470, 777.8565},
};

START_TEST(doppler_files)
{
    const char *shared = dp_test_shared();
    char p[1024];
    snprintf(p, sizeof p, "%s/doppler-graphs/%s", shared, dg[_i].file);
    dp_error err;
    dp_graph *g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, dg[_i].ops);
    ck_assert_int_eq(g->n_edges, dg[_i].edges);
    ck_assert_int_eq(g->n_repeated_edges, 0);
    ck_assert_msg(fabs(dp_graph_total_work(g) / 1e10 - dg[_i].sum) < 5e-5, "sum %.10g", dp_graph_total_work(g) / 1e10);
    for (int v = 0; v < g->n_ops; v++) ck_assert_double_eq(g->out_size[v], 4 * g->work[v]);
    for (int e = 0; e < g->n_edges; e++) ck_assert_double_eq(g->edge_size[e], g->out_size[g->edge_src[e]]);
    if (strncmp(dg[_i].file, "gdp_", 4) == 0) ck_assert_str_eq(g->op_type[0], "einsummable");
    dp_graph_free(g);
}
END_TEST

/* Every line of ../shared/data/doppler-graphs/reference-makespans reproduced exactly. */
static const char *ref_files[][2] = {
    {"chain_mm_112nodes.txt", "chain_mm_112nodes.4dev.txt"},
    {"ffnn_192nodes.txt", "ffnn_192nodes.4dev.txt"},
    {"transformer_block_215nodes.txt", "transformer_block_215nodes.4dev.txt"},
    {"full_transformer_layer_261nodes.txt", "full_transformer_layer_261nodes.4dev.txt"},
    {"8gpu_transformer_block.txt", "8gpu_transformer_block.8dev.txt"},
    {"8gpu_full_transformer.txt", "8gpu_full_transformer.8dev.txt"},
};

START_TEST(reference_makespans)
{
    const char *shared = dp_test_shared();
    char gp[1024], rp[1024];
    snprintf(gp, sizeof gp, "%s/doppler-graphs/%s", shared, ref_files[_i][0]);
    snprintf(rp, sizeof rp, "%s/doppler-graphs/reference-makespans/%s", shared, ref_files[_i][1]);
    int D = strstr(ref_files[_i][1], "8dev") ? 8 : 4;
    dp_error err;
    dp_graph *g = dp_graph_read_doppler(gp, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_cost *c = dp_cost_graph(g, D, &err);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    FILE *f = fopen(rp, "r");
    ck_assert_ptr_nonnull(f);
    char *line = NULL;
    size_t cap = 0;
    int lines = 0;
    int *a = malloc(sizeof(int) * g->n_ops);
    while (getline(&line, &cap, f) > 0) {
        char *sp = strrchr(line, ' ');
        if (!sp) continue;
        double want = strtod(sp + 1, NULL);
        char *p = line;
        for (int i = 0; i < g->n_ops; i++) {
            a[i] = (int)strtol(p, &p, 10);
            if (*p == ',') p++;
        }
        ck_assert_ptr_eq(p, sp);
        dp_sim_result r;
        ck_assert_int_eq(dp_sim_run(s, a, &r, &err), DP_OK);
        double got = r.makespan / 1e10;
        ck_assert_msg(got == want, "%s line %d: makespan %.17g, reference %.17g", ref_files[_i][1], lines + 1, got, want);
        lines++;
    }
    ck_assert_int_ge(lines, 10);
    free(line); free(a); fclose(f);
    dp_sim_free(s); dp_cost_free(c); dp_graph_free(g);
}
END_TEST

/* On one device the makespan is the sum of comp, on every DOPPLER graph. */
START_TEST(single_device_sum)
{
    const char *shared = dp_test_shared();
    char gp[1024];
    snprintf(gp, sizeof gp, "%s/doppler-graphs/%s", shared, ref_files[_i][0]);
    dp_error err;
    dp_graph *g = dp_graph_read_doppler(gp, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_cost *c = dp_cost_graph(g, 4, &err);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    int *a = calloc(g->n_ops, sizeof(int));
    dp_sim_result r;
    dp_sim_run(s, a, &r, &err);
    ck_assert_double_eq(r.makespan, dp_graph_total_work(g));
    free(a); dp_sim_free(s); dp_cost_free(c); dp_graph_free(g);
}
END_TEST


/* critical path beats the mean of 100 random assignments on each graph */
START_TEST(cp_beats_random)
{
    const char *shared = dp_test_shared();
    char gp[1024];
    snprintf(gp, sizeof gp, "%s/doppler-graphs/%s", shared, ref_files[_i][0]);
    int D = strstr(ref_files[_i][1], "8dev") ? 8 : 4;
    dp_error err;
    dp_graph *g = dp_graph_read_doppler(gp, &err);
    dp_cost *c = dp_cost_graph(g, D, &err);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    int *a = malloc(sizeof(int) * g->n_ops);
    dp_place_options o;
    dp_place_options_init(&o);
    dp_sim_result r;
    ck_assert_int_eq(dp_place("cp", g, c, &o, a, NULL, NULL, &err), DP_OK);
    dp_sim_run(s, a, &r, &err);
    double cp = r.makespan, mean = 0;
    for (int k = 0; k < 100; k++) {
        o.seed = (uint64_t)k + 1;
        dp_place("random", g, c, &o, a, NULL, NULL, &err);
        dp_sim_run(s, a, &r, &err);
        mean += r.makespan / 100;
    }
    ck_assert_msg(cp < mean, "%s: cp %g not below random mean %g", ref_files[_i][0], cp / 1e10, mean / 1e10);
    ck_assert_double_ge(cp, dp_cost_lower_bound(g, c));
    free(a); dp_sim_free(s); dp_cost_free(c); dp_graph_free(g);
}
END_TEST

int main(void)
{
    if (!dp_test_shared()) {
        return dp_test_missing_data("the shared data");
    }
    Suite *s = suite_create("doppler-data");
    TCase *r = tcase_create("doppler-files");
    tcase_add_loop_test(r, doppler_files, 0, (int)(sizeof dg / sizeof dg[0]));
    tcase_add_loop_test(r, reference_makespans, 0, 6);
    tcase_add_loop_test(r, single_device_sum, 0, 6);
    tcase_add_loop_test(r, cp_beats_random, 0, 6);
    suite_add_tcase(s, r);
    return dp_test_run(s);
}
