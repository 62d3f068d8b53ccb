/* test_hifi_data: the general engine (dp_hisim) with its default options against the DOPPLER
 * reference makespans (../shared/data/doppler-graphs/reference-makespans): the fixed-delay model
 * still reproduces every one, exactly. Exit 77 (SKIP) when the data is absent. */
#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_hisim.h"
#include "dp_place.h"
#include "dp_sim.h"
#include "dp_test.h"

#include <math.h>

static const char *ref_files[][2] = {
    {"chain_mm_112nodes.txt", "chain_mm_112nodes.4dev.txt"},
    {"ffnn_192nodes.txt", "ffnn_192nodes.4dev.txt"},
    {"transformer_block_215nodes.txt", "transformer_block_215nodes.4dev.txt"},
    {"full_transformer_layer_261nodes.txt", "full_transformer_layer_261nodes.4dev.txt"},
    {"8gpu_transformer_block.txt", "8gpu_transformer_block.8dev.txt"},
    {"8gpu_full_transformer.txt", "8gpu_full_transformer.8dev.txt"},
};

START_TEST(fixed_model_reproduces_reference_makespans)
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
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    ck_assert(dp_hisim_options_default(&o));
    dp_hisim *s = dp_hisim_alloc(g, c, NULL, &o, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    /* the same with one explicit stream and a memory accounting without limit */
    o.streams = 1;
    dp_hisim *s1 = dp_hisim_alloc(g, c, NULL, &o, &err);
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
        dp_hisim_result r;
        ck_assert_int_eq(dp_hisim_run(s, a, NULL, &r, &err), DP_OK);
        ck_assert_msg(r.makespan / 1e10 == want, "%s line %d: makespan %.17g, reference %.17g", ref_files[_i][1],
                      lines + 1, r.makespan / 1e10, want);
        ck_assert_int_eq(dp_hisim_run(s1, a, NULL, &r, &err), DP_OK);
        ck_assert(r.makespan / 1e10 == want);
        lines++;
    }
    ck_assert_int_ge(lines, 10);
    free(line); free(a); fclose(f);
    dp_hisim_free(s); dp_hisim_free(s1); dp_cost_free(c); dp_graph_free(g);
}
END_TEST

/* bulk-synchronous execution of the critical-path placement: never shorter than the level
 * structure allows (sum over levels of the longest op of each level), and the async run of the
 * same assignment matches dp_sim */
START_TEST(bsp_of_cp_placement)
{
    const char *shared = dp_test_shared();
    char gp[1024];
    snprintf(gp, sizeof gp, "%s/doppler-graphs/%s", shared, ref_files[_i][0]);
    int D = strstr(ref_files[_i][1], "8dev") ? 8 : 4;
    dp_error err;
    dp_graph *g = dp_graph_read_doppler(gp, &err);
    dp_cost *c = dp_cost_graph(g, D, &err);
    int *a = malloc(sizeof(int) * g->n_ops);
    ck_assert_int_eq(dp_place("cp", g, c, NULL, a, NULL, NULL, &err), DP_OK);
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    o.mode = DP_HISIM_MODE_BSP;
    dp_hisim *s = dp_hisim_alloc(g, c, NULL, &o, &err);
    dp_hisim_result r;
    ck_assert_int_eq(dp_hisim_run(s, a, NULL, &r, &err), DP_OK);
    int nl;
    const int *lv = dp_hisim_levels(s, &nl);
    double *mx = calloc((size_t)nl, sizeof(double)), bound = 0;
    for (int v = 0; v < g->n_ops; v++)
        if (g->work[v] > mx[lv[v]]) mx[lv[v]] = g->work[v];
    for (int l = 0; l < nl; l++) bound += mx[l];
    ck_assert_msg(r.makespan >= bound, "bsp %g below the level bound %g", r.makespan, bound);
    /* every op of level l+1 starts after every op of level l ended */
    for (int v = 0; v < g->n_ops; v++)
        for (int w = 0; w < g->n_ops; w++)
            if (lv[w] == lv[v] + 1) ck_assert(r.op_start[w] >= r.op_end[v]);
    free(mx);
    free(a); dp_hisim_free(s); dp_cost_free(c); dp_graph_free(g);
}
END_TEST

int main(void)
{
    if (!dp_test_shared()) {
        return dp_test_missing_data("the shared data");
    }
    Suite *s = suite_create("hifi-data");
    TCase *r = tcase_create("doppler-files");
    tcase_add_loop_test(r, fixed_model_reproduces_reference_makespans, 0, 6);
    tcase_add_loop_test(r, bsp_of_cp_placement, 0, 6);
    suite_add_tcase(s, r);
    return dp_test_run(s);
}
