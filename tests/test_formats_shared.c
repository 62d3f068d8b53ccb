/* test_formats_shared.c: every graph under ../shared/data/{stg, wfcommons, sinnen-optimal-dot,
 * msr-dnn-partitioning} loads, places (critical path) and simulates; task counts, edge counts,
 * total work and critical paths are checked against the numbers the data README gives and
 * against the files' own headers (STG "# Edges" and "# CP Length", Sinnen "No of edges" and
 * "Total sequential time"). Exits 77 (SKIP) when the shared data is absent. */
#define _XOPEN_SOURCE 700
#include "dp_test.h"

#include <ftw.h>
#include <math.h>

#include "dp_cost.h"
#include "dp_file.h"
#include "dp_graph_formats.h"
#include "dp_place.h"
#include "dp_sim.h"

static const char *shared;
static int n_loaded;
static char failure[2048];

/* Critical path by op time alone (one device: no transfer costs). */
static double cp_compute(const dp_graph *g)
{
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 1, &err);
    double cp = dp_cost_critical_path(g, c);
    dp_cost_free(c);
    return cp;
}

static double sum_edges(const dp_graph *g)
{
    double s = 0;
    for (int e = 0; e < g->n_edges; e++) s += g->edge_size[e];
    return s;
}

/* The number after `key` in text (skipping spaces, ':', '=' and quotes), or NAN. */
static double header_number(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    if (!p) return NAN;
    p += strlen(key);
    while (*p == ' ' || *p == ':' || *p == '=' || *p == '"' || *p == '\t') p++;
    char *end;
    double x = strtod(p, &end);
    return end == p ? NAN : x;
}

static int check_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type != FTW_F || failure[0]) return 0;
    const char *stem = dp_file_path_stem(path);
    const char *dot = strrchr(stem, '.');
    if (!dot) return 0;
    /* not graphs: the WfFormat JSON schema, the MSR expert splits, the STG optimal-value tables */
    if (strcmp(stem, "wfcommons-schema.json") == 0 || strstr(path, "/human-experts/") || strcmp(dot, ".csv") == 0)
        return 0;
    if (strcmp(dot, ".stg") != 0 && strcmp(dot, ".json") != 0 && strcmp(dot, ".dot") != 0) return 0;
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = dp_graph_read(path, NULL, &err);
    if (!g) {
        snprintf(failure, sizeof failure, "%s", err.msg);
        return 1;
    }
    n_loaded++;
    size_t size;
    char *text = dp_file_read(path, &size, &err);
    if (strcmp(dot, ".stg") == 0) {
        double edges = header_number(text, "# Edges"), cp = header_number(text, "# CP Length");
        if (!isnan(edges) && edges != g->n_edges)
            snprintf(failure, sizeof failure, "%s: %d edges, the header says %g", path, g->n_edges, edges);
        else if (!isnan(cp) && cp != cp_compute(g))
            snprintf(failure, sizeof failure, "%s: critical path %g, the header says %g", path, cp_compute(g), cp);
    }
    if (strcmp(dot, ".dot") == 0) {
        double edges = header_number(text, "\"No of edges\""), nodes = header_number(text, "\"No of nodes\"");
        double seq = header_number(text, "\"Total sequential time\"");
        if ((!isnan(edges) && edges != g->n_edges) || (!isnan(nodes) && nodes != g->n_ops) ||
            (!isnan(seq) && seq != dp_graph_total_work(g)))
            snprintf(failure, sizeof failure, "%s: %d ops, %d edges, work %g disagree with the graph attributes",
                     path, g->n_ops, g->n_edges, dp_graph_total_work(g));
    }
    free(text);
    /* critical-path placement and simulation on 4 identical devices (classic model) */
    dp_cost *c = dp_cost_graph(g, 4, &err);
    int *a = malloc((size_t)g->n_ops * sizeof *a);
    dp_place_options po;
    dp_place_options_init(&po);
    dp_sim *sim = NULL;
    dp_sim_result r;
    if (!c || !a || dp_place("cp", g, c, &po, a, NULL, NULL, &err) != DP_OK || !(sim = dp_sim_alloc(g, c, &err)) ||
        dp_sim_run(sim, a, &r, &err) != DP_OK)
        snprintf(failure, sizeof failure, "%s: placement or simulation failed: %s", path, err.msg);
    else if (!(r.makespan >= dp_cost_lower_bound(g, c) * (1 - 1e-12)))
        snprintf(failure, sizeof failure, "%s: makespan %g below the lower bound", path, r.makespan);
    dp_sim_free(sim);
    free(a);
    dp_cost_free(c);
    dp_graph_free(g);
    return failure[0] != 0;
}

START_TEST(every_file_loads)
{
    static const char *dirs[] = {"stg", "wfcommons", "sinnen-optimal-dot", "msr-dnn-partitioning"};
    for (int i = 0; i < 4; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", shared, dirs[i]);
        if (access(path, R_OK) != 0) continue;
        int before = n_loaded;
        nftw(path, check_file, 16, FTW_PHYS);
        ck_assert_msg(!failure[0], "%s", failure);
        ck_assert_msg(n_loaded > before, "%s: no graph found", path);
    }
}
END_TEST

static dp_graph *load(const char *rel, double wf_bandwidth)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", shared, rel);
    if (access(path, R_OK) != 0) return NULL;
    dp_error err;
    dp_graph *g = wf_bandwidth > 0 ? dp_graph_read_wfcommons(path, wf_bandwidth, &err) : dp_graph_read(path, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    return g;
}

START_TEST(stg_reference_numbers)
{
    /* ../shared/data/README.md section 1: tasks, real edges (headers), total work, CP */
    static const struct { const char *f; int n, m; double sum, cp; } c[] = {
        {"stg/50/rand0000.stg", 50, 96, 262, 55},
        {"stg/100/rand0000.stg", 100, 570, -1, -1},
        {"stg/app/fpppp.stg", 334, 1145, 7129, 1062},
        {"stg/app/robot.stg", 88, 131, 2483, 569},
        {"stg/app/sparse.stg", 96, 67, 1936, 122},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        dp_graph *g = load(c[i].f, 0);
        if (!g) continue;
        ck_assert_int_eq(g->n_ops, c[i].n);
        ck_assert_int_eq(g->n_edges, c[i].m);
        if (c[i].sum >= 0) ck_assert_double_eq(dp_graph_total_work(g), c[i].sum);
        if (c[i].cp >= 0) ck_assert_double_eq(cp_compute(g), c[i].cp);
        dp_graph_free(g);
    }
}
END_TEST

START_TEST(wfcommons_reference_numbers)
{
    /* README section 4: tasks, edges, total runtime, CP by runtime, edge bytes (bandwidth 1 B/s
     * makes an edge's time its byte count) */
    static const struct { const char *f; int n, m; double sum, cp, bytes; } c[] = {
        {"wfcommons/montage-chameleon-2mass-005d-001.json", 58, 114, 221.726, 21.385, 549181584},
        {"wfcommons/epigenomics-chameleon-hep-1seq-100k-001.json", 41, 48, 539.307, 104.822, 353323676},
        {"wfcommons/seismology-chameleon-100p-001.json", 101, 100, 71.893, 2.840, 605920},
        {"wfcommons/blast-chameleon-small-001.json", 43, 120, 382.913, 10.413, 794},
        {"wfcommons/helloworld-chain-5-chameleon.json", 5, 4, 501.24, 501.24, 66666668},
        {"wfcommons/helloworld-forkjoin-10-chameleon.json", 10, 16, 1028.704, 307.36, 145454560},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        dp_graph *g = load(c[i].f, 1.0);
        if (!g) continue;
        ck_assert_int_eq(g->n_ops, c[i].n);
        ck_assert_int_eq(g->n_edges, c[i].m);
        ck_assert_double_eq_tol(dp_graph_total_work(g), c[i].sum, 1e-3);
        ck_assert_double_eq_tol(cp_compute(g), c[i].cp, 1e-3);
        ck_assert_double_eq(sum_edges(g), c[i].bytes);
        dp_graph_free(g);
    }
}
END_TEST

START_TEST(msr_reference_numbers)
{
    /* README section 5 */
    static const struct { const char *f; int n, m; double sum; } c[] = {
        {"msr-dnn-partitioning/latency-inputs/LayerGraphs/bert24_inference.json", 32, 55, 92.406},
        {"msr-dnn-partitioning/latency-inputs/LayerGraphs/gnmt_inference.json", 96, 122, -1},
        {"msr-dnn-partitioning/latency-inputs/LayerGraphs/inceptionv3_inference.json", 326, 363, -1},
        {"msr-dnn-partitioning/latency-inputs/LayerGraphs/resnet50_inference.json", 177, 193, -1},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        dp_graph *g = load(c[i].f, 0);
        if (!g) continue;
        ck_assert_int_eq(g->n_ops, c[i].n);
        ck_assert_int_eq(g->n_edges, c[i].m);
        if (c[i].sum >= 0) ck_assert_double_eq_tol(dp_graph_total_work(g), c[i].sum, 1e-9);
        dp_graph_free(g);
    }
}
END_TEST

int main(void)
{
    shared = dp_test_shared();
    if (!shared) {
        return dp_test_missing_data("the shared data");
    }
    Suite *s = suite_create("formats_shared");
    TCase *t = tcase_create("shared");
    tcase_add_test(t, every_file_loads);
    tcase_add_test(t, stg_reference_numbers);
    tcase_add_test(t, wfcommons_reference_numbers);
    tcase_add_test(t, msr_reference_numbers);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
