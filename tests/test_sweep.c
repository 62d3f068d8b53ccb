/* test_sweep: sweep configs and run keys, results files (CSV/HDF5, recovery after a kill), the
 * run dispatcher, and report tables. */
#define _GNU_SOURCE /* nftw, open_memstream */
#include "dp_test.h"

#include <ftw.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <hdf5.h>

#include "report.h"
#include "dp_h5io.h"
#include "dp_file.h"
#include "results.h"
#include "run.h"
#include "dp_place.h"
#include "sweep.h"

static dp_sweep *sweep_from_text(const char *text, dp_error *err)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    ck_assert_msg(v != NULL, "test config does not parse: %s", je.text);
    dp_sweep *s = dp_sweep_from_json(v, "t.json", err);
    json_decref(v);
    return s;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

/* remove a scratch folder and what is in it */
static void rm_tree(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* a scratch folder per test */
static const char *scratch(char *buf, size_t cap)
{
    const char *t = getenv("TMPDIR");
    snprintf(buf, cap, "%s/dp-sweep-test-XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(buf));
    return buf;
}

/* ------------------------------------------------------------ sweeps ---- */

START_TEST(expansion_order)
{
    dp_error err;
    dp_sweep *s = sweep_from_text("{\"fixed\": {\"devices\": 4}, \"grid\": {\"method\": [\"cp\", \"random\"],"
                                  " \"seed\": [1, 2, 3]}, \"repetitions\": 2}", &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->n_runs, 12);
    /* first axis slowest, rep innermost */
    static const char *want_m[] = {"cp", "cp", "cp", "cp", "cp", "cp", "random"};
    static const int want_seed[] = {1, 1, 2, 2, 3, 3, 1};
    for (int k = 0; k < 7; k++) {
        json_t *p = s->runs[k].params;
        ck_assert_int_eq(s->runs[k].index, k);
        ck_assert_str_eq(json_string_value(json_object_get(p, "method")), want_m[k]);
        ck_assert_int_eq(json_integer_value(json_object_get(p, "seed")), want_seed[k]);
        ck_assert_int_eq(json_integer_value(json_object_get(p, "rep")), k % 2);
        ck_assert_int_eq(json_integer_value(json_object_get(p, "devices")), 4);
    }
    ck_assert_str_eq(s->runs[0].params_text, "{\"devices\":4,\"method\":\"cp\",\"rep\":0,\"seed\":1}");
    ck_assert_str_eq(s->name, "t");
    dp_sweep_free(s);
}
END_TEST

START_TEST(keys_are_stable)
{
    /* the key is FNV-1a 64 of "dp1:" + canonical text, computed by hand (Python) */
    dp_error err;
    dp_sweep *s = sweep_from_text("{\"grid\": {\"b\": [\"x\"], \"a\": [1, 2.5]}, \"repetitions\": 2}", &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->n_runs, 4);
    ck_assert_str_eq(s->runs[0].key, "bc3672db860c2c8d"); /* {"a":1,"b":"x","rep":0} */
    ck_assert_str_eq(s->runs[3].key, "1537c3af0d94ee14"); /* {"a":2.5,"b":"x","rep":1} */
    /* the same points written in another order, with a fixed value instead of a one-value axis */
    dp_sweep *t = sweep_from_text("{\"fixed\": {\"b\": \"x\"}, \"grid\": {\"a\": [2.5, 1]}, \"repetitions\": 2}", &err);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t->runs[0].key, s->runs[2].key);
    ck_assert_str_eq(t->runs[3].key, s->runs[1].key);
    /* all keys distinct */
    for (long i = 0; i < s->n_runs; i++)
        for (long j = i + 1; j < s->n_runs; j++) ck_assert_str_ne(s->runs[i].key, s->runs[j].key);
    dp_sweep_free(s);
    dp_sweep_free(t);
}
END_TEST

START_TEST(union_of_grids_dedups)
{
    dp_error err;
    dp_sweep *s = sweep_from_text("{\"fixed\": {\"g\": \"x\"}, \"grid\": [{\"method\": [\"cp\", \"heft\"]},"
                                  " {\"method\": [\"doppler\", \"cp\"], \"lr\": [0.001]}, {\"method\": [\"heft\"]}]}", &err);
    ck_assert_ptr_nonnull(s);
    /* cp, heft, doppler+lr, cp+lr; the last heft repeats the second run */
    ck_assert_int_eq(s->n_runs, 4);
    ck_assert_str_eq(json_string_value(json_object_get(s->runs[2].params, "method")), "doppler");
    ck_assert_ptr_nonnull(json_object_get(s->runs[3].params, "lr"));
    for (long k = 0; k < s->n_runs; k++) ck_assert_int_eq(s->runs[k].index, k);
    dp_sweep_free(s);
}
END_TEST

START_TEST(bad_configs)
{
    static const struct { const char *text, *needle; } cases[] = {
        {"{\"grid\": {\"a\": [1]}, \"grdi\": {}}", "unknown key \"grdi\" (known: name, repetitions, description, comment, fixed, grid, tables)"},
        /* documented once, read by nothing: refused, saying so (a misspelt plot spec was accepted) */
        {"{\"grid\": {\"a\": [1]}, \"plots\": {\"fig\": {\"kind\": \"bars\", \"tabel\": \"nosuch\"}}}", "\"plots\": not read"},
        {"{\"grid\": {\"a\": []}}", "grid.a: must be a non-empty array"},
        {"{\"grid\": {\"a\": 3}}", "grid.a: must be a non-empty array"},
        {"{\"grid\": {\"a\": [[1]]}}", "grid.a[0]"},
        {"{\"fixed\": {\"a\": 1}, \"grid\": {\"a\": [1]}}", "also in \"fixed\""},
        {"{\"grid\": {\"Bad\": [1]}}", "grid.Bad"},
        {"{\"grid\": {\"rep\": [1]}}", "grid.rep"},
        {"{\"grid\": [{\"a\": [1]}, {\"b\": {}}]}", "grid[1]"},
        {"{\"grid\": {\"a\": [1]}, \"repetitions\": 0}", "repetitions"},
        {"{\"name\": \"x\"}", "needs \"grid\" or \"fixed\""},
        {"[1]", "JSON object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dp_error err;
        dp_error_clear(&err);
        dp_sweep *s = sweep_from_text(cases[i].text, &err);
        ck_assert_msg(s == NULL, "config %zu accepted", i);
        ck_assert_int_eq(err.code, DP_EINVAL);
        ck_assert_msg(strstr(err.msg, cases[i].needle) != NULL, "config %zu: message \"%s\" lacks \"%s\"", i, err.msg, cases[i].needle);
        ck_assert_msg(strstr(err.msg, "t.json") != NULL, "config %zu: message \"%s\" does not name the file", i, err.msg);
    }
}
END_TEST

START_TEST(too_many_runs)
{
    dp_error err;
    dp_sweep *s = sweep_from_text("{\"grid\": {\"a\": [1,2,3,4,5,6,7,8,9,10], \"b\": [1,2,3,4,5,6,7,8,9,10],"
                                  " \"c\": [1,2,3,4,5,6,7,8,9,10], \"d\": [1,2,3,4,5,6,7,8,9,10]}, \"repetitions\": 1001}", &err);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err.msg, "more than") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(shards)
{
    int i, n;
    ck_assert_int_eq(dp_sweep_parse_shard("1/4", &i, &n), 0);
    ck_assert_int_eq(i, 1);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(dp_sweep_parse_shard("4/4", &i, &n), -1);
    ck_assert_int_eq(dp_sweep_parse_shard("-1/4", &i, &n), -1);
    ck_assert_int_eq(dp_sweep_parse_shard("1/", &i, &n), -1);
    ck_assert_int_eq(dp_sweep_parse_shard("1/4x", &i, &n), -1);
    /* every run in exactly one shard */
    for (long k = 0; k < 20; k++) {
        int c = 0;
        for (int s = 0; s < 3; s++) c += dp_sweep_in_shard(k, s, 3);
        ck_assert_int_eq(c, 1);
    }
}
END_TEST

/* ----------------------------------------------------------- results ---- */

static void make_row(dp_result *r, const char *method, long seed, double makespan, const char *status)
{
    char text[256];
    snprintf(text, sizeof text, "{\"graph\": \"shared:doppler-graphs/g.txt\", \"method\": \"%s\", \"seed\": %ld, \"rep\": 0, \"devices\": 4}", method, seed);
    json_error_t je;
    json_t *p = json_loads(text, 0, &je);
    ck_assert_ptr_nonnull(p);
    char key[DP_SWEEP_KEY_LEN + 1];
    dp_sweep_key(p, key);
    ck_assert_int_eq(dp_result_init(r), DP_OK);
    ck_assert_int_eq(dp_result_set_params(r, key, seed, p), DP_OK);
    json_decref(p);
    dp_result_set(&r->status, status);
    r->makespan = makespan;
    r->seconds = 0.25;
    dp_result_set(&r->units, "s");
    dp_result_set(&r->metrics, "{\"lower_bound\":1.5}");
}

static void free_rows(dp_result *rows, long n)
{
    for (long i = 0; i < n; i++) dp_result_free(&rows[i]);
    free(rows);
}

START_TEST(csv_and_h5_roundtrip)
{
    char dir[256], h5[300], csv[300];
    scratch(dir, sizeof dir);
    snprintf(h5, sizeof h5, "%s/r.h5", dir);
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    dp_result rows[3];
    make_row(&rows[0], "cp", 1, 0.1 + 0.2, "ok");
    make_row(&rows[1], "random", 2, NAN, "failed");
    dp_result_set(&rows[1].error, "a message, with \"quotes\"\nand a newline");
    make_row(&rows[2], "heft", 3, 1e-300, "ok");
    dp_error err;
    ck_assert_int_eq(dp_results_write_csv(csv, rows, 3, &err), DP_OK);
    ck_assert_int_eq(dp_results_write_h5(h5, rows, 3, "s", "{\"x\":1}", &err), DP_OK);
    for (int pass = 0; pass < 2; pass++) {
        dp_result *back = NULL;
        long n = 0;
        char *cfg = NULL;
        if (pass == 0) ck_assert_int_eq(dp_results_read_csv(csv, &back, &n, NULL, &err), DP_OK);
        else {
            ck_assert_int_eq(dp_results_read_h5(h5, &back, &n, &cfg, &err), DP_OK);
            ck_assert_str_eq(cfg, "{\"x\":1}");
        }
        ck_assert_int_eq(n, 3);
        for (int i = 0; i < 3; i++) {
            ck_assert_str_eq(back[i].key, rows[i].key);
            ck_assert_str_eq(back[i].params, rows[i].params);
            ck_assert_str_eq(back[i].error, rows[i].error);
            ck_assert_str_eq(back[i].metrics, rows[i].metrics);
            ck_assert_str_eq(back[i].graph, "shared:doppler-graphs/g.txt");
            ck_assert_int_eq(back[i].devices, 4);
            if (isnan(rows[i].makespan)) ck_assert(isnan(back[i].makespan));
            else ck_assert(back[i].makespan == rows[i].makespan); /* exact: shortest round-trip text */
        }
        free_rows(back, n);
        free(cfg);
    }
    /* strings fixed-length (never HDF5's global heap, dp_h5file.h); a variable-length one, as
     * results format 1 wrote them, is refused unread naming the file and the attribute */
    hid_t f = H5Fopen(h5, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    hid_t d = H5Dopen2(f, "runs", H5P_DEFAULT), dt = H5Dget_type(d);
    for (int c = 0; c < H5Tget_nmembers(dt); c++) {
        hid_t m = H5Tget_member_type(dt, (unsigned)c);
        if (H5Tget_class(m) == H5T_STRING) ck_assert_int_eq(H5Tis_variable_str(m), 0);
        H5Tclose(m);
    }
    H5Tclose(dt);
    H5Dclose(d);
    ck_assert_int_ge(H5Adelete(f, "format"), 0);
    hid_t vt = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    H5Tset_size(vt, H5T_VARIABLE);
    hid_t a = H5Acreate2(f, "format", vt, sp, H5P_DEFAULT, H5P_DEFAULT);
    const char *old = "doppler-results 1";
    ck_assert_int_ge(H5Awrite(a, vt, &old), 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(vt);
    ck_assert_int_ge(H5Fclose(f), 0);
    dp_result *back = NULL;
    long n = 0;
    ck_assert_int_eq(dp_results_read_h5(h5, &back, &n, NULL, &err), DP_EUNSUPPORTED);
    ck_assert_msg(strstr(err.msg, h5) && strstr(err.msg, "\"format\" is a variable-length string"), "%s", err.msg);
    for (int i = 0; i < 3; i++) dp_result_free(&rows[i]);
    rm_tree(dir);
}
END_TEST

START_TEST(recovery_after_kill)
{
    char dir[256], h5[300], csv[300];
    scratch(dir, sizeof dir);
    snprintf(h5, sizeof h5, "%s/r.h5", dir);
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    dp_error err;
    dp_results *r = dp_results_open(h5, "s", "{}", &err);
    ck_assert_ptr_nonnull(r);
    /* a second writer is refused while the first holds the lock */
    dp_error e2;
    ck_assert_ptr_null(dp_results_open(h5, "s", "{}", &e2));
    ck_assert_msg(strstr(e2.msg, "another sweep") != NULL, "%s", e2.msg);
    dp_result rows[3];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "cp", 2, 11, "ok");
    make_row(&rows[2], "cp", 3, 12, "failed");
    for (int i = 0; i < 3; i++) ck_assert_int_eq(dp_results_append(r, &rows[i], &err), DP_OK);
    ck_assert_int_eq(dp_results_append(r, &rows[1], &err), DP_EINVAL); /* each run once */
    dp_results_close(r);

    /* a kill in the middle of the next CSV line, and before the HDF5 element */
    FILE *f = fopen(csv, "a");
    fputs("deadbeef00000000,7,g,cp,4,,,,9,0,ok,1", f);
    fclose(f);
    r = dp_results_open(h5, "s", "{}", &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_results_count(r), 3);
    ck_assert_ptr_null(dp_results_find(r, "deadbeef00000000"));
    ck_assert_ptr_nonnull(dp_results_find(r, rows[2].key));
    dp_results_close(r);
    dp_result *back;
    long n;
    ck_assert_int_eq(dp_results_read_csv(csv, &back, &n, NULL, &err), DP_OK);
    ck_assert_int_eq(n, 3);
    free_rows(back, n);

    /* a kill between the CSV line and the HDF5 element: the HDF5 file is rebuilt from the CSV */
    ck_assert_int_eq(dp_results_write_h5(h5, rows, 2, "s", "{}", &err), DP_OK);
    r = dp_results_open(h5, "s", "{}", &err);
    ck_assert_ptr_nonnull(r);
    dp_results_close(r);
    ck_assert_int_eq(dp_results_read_h5(h5, &back, &n, NULL, &err), DP_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(back[2].key, rows[2].key);
    free_rows(back, n);

    /* an unreadable HDF5 file (killed inside the HDF5 library) is rebuilt the same way */
    f = fopen(h5, "w");
    fputs("garbage", f);
    fclose(f);
    r = dp_results_open(h5, "s", "{}", &err);
    ck_assert_ptr_nonnull(r);
    /* retrying failures drops their rows */
    long dropped = 0;
    ck_assert_int_eq(dp_results_drop_failed(r, &dropped, &err), DP_OK);
    ck_assert_int_eq(dropped, 1);
    ck_assert_int_eq(dp_results_count(r), 2);
    dp_results_close(r);
    ck_assert_int_eq(dp_results_read_h5(h5, &back, &n, NULL, &err), DP_OK);
    ck_assert_int_eq(n, 2);
    free_rows(back, n);

    /* a foreign CSV is refused, not overwritten */
    f = fopen(csv, "w");
    fputs("a,b\n1,2\n", f);
    fclose(f);
    ck_assert_ptr_null(dp_results_open(h5, "s", "{}", &err));
    ck_assert_msg(strstr(err.msg, "not a doppler results CSV") != NULL, "%s", err.msg);
    for (int i = 0; i < 3; i++) dp_result_free(&rows[i]);
    rm_tree(dir);
}
END_TEST

START_TEST(finalize_sorts_by_index)
{
    char dir[256], h5[300];
    scratch(dir, sizeof dir);
    snprintf(h5, sizeof h5, "%s/r.h5", dir);
    dp_error err;
    dp_results *r = dp_results_open(h5, "s", "{}", &err);
    ck_assert_ptr_nonnull(r);
    dp_result rows[3];
    make_row(&rows[0], "cp", 3, 10, "ok");
    make_row(&rows[1], "cp", 1, 11, "ok");
    make_row(&rows[2], "cp", 2, 12, "ok");
    for (int i = 0; i < 3; i++) ck_assert_int_eq(dp_results_append(r, &rows[i], &err), DP_OK);
    ck_assert_int_eq(dp_results_finalize(r, &err), DP_OK);
    /* the append fd follows the rewritten CSV */
    dp_result extra;
    make_row(&extra, "cp", 4, 13, "ok");
    ck_assert_int_eq(dp_results_append(r, &extra, &err), DP_OK);
    dp_results_close(r);
    dp_result *back;
    long n;
    ck_assert_int_eq(dp_results_read_h5(h5, &back, &n, NULL, &err), DP_OK);
    ck_assert_int_eq(n, 4);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(back[i].seed, i + 1);
    free_rows(back, n);
    for (int i = 0; i < 3; i++) dp_result_free(&rows[i]);
    dp_result_free(&extra);
    rm_tree(dir);
}
END_TEST

/* --------------------------------------------------------------- runs ---- */

static json_t *params_of(const char *fmt, const char *graph)
{
    char text[1024];
    snprintf(text, sizeof text, fmt, graph);
    json_error_t je;
    json_t *p = json_loads(text, 0, &je);
    ck_assert_msg(p != NULL, "%s", je.text);
    return p;
}

START_TEST(run_dispatch)
{
    char graph[512], dir[256], rundir[300];
    snprintf(graph, sizeof graph, "%s/tests/data/sweep-fork.json", dp_test_srcdir());
    scratch(dir, sizeof dir);
    snprintf(rundir, sizeof rundir, "%s/k1", dir);
    dp_run_context ctx = {.config_dir = ".", .run_dir = rundir, .run_dir_rel = "r.runs/k1"};
    dp_error err;
    dp_result r;
    dp_result_init(&r);
    /* the fork-join graph (tests/data/sweep-fork.json) on 4 devices under critical-path
     * placement: branch b3-c3 (5+4) stays with a on device 0 and ends at 11, the others start at
     * 2+1 and end at 11, 11, 10; z waits for remote inputs (+1): 12 + 1 = 13 */
    json_t *p = params_of("{\"graph\": \"%s\", \"method\": \"cp\", \"devices\": 4, \"seed\": 1, \"timing_repeats\": 3}", graph);
    ck_assert_msg(dp_run_execute(p, &ctx, &r, &err) == DP_OK, "%s", err.msg);
    ck_assert_str_eq(r.status, "ok");
    ck_assert_double_eq(r.makespan, 13.0);
    ck_assert(r.seconds > 0);
    ck_assert_str_eq(r.assignment, "r.runs/k1/assignment.json");
    char apath[400];
    snprintf(apath, sizeof apath, "%s/assignment.json", rundir);
    ck_assert_int_eq(access(apath, R_OK), 0);
    int known;
    ck_assert_double_eq(dp_report_metric(&r, "metrics.ops", &known), 10.0);
    json_decref(p);
    /* one device: the sum of the work, 35 */
    p = params_of("{\"graph\": \"%s\", \"method\": \"cp\", \"devices\": 1}", graph);
    ck_assert_int_eq(dp_run_execute(p, &ctx, &r, &err), DP_OK);
    ck_assert_double_eq(r.makespan, 35.0);
    /* a run without "seed" uses seed 1, and its row says so (it said 0) */
    dp_result row;
    dp_result_init(&row);
    ck_assert_int_eq(dp_result_set_params(&row, "k", 0, p), DP_OK);
    ck_assert_int_eq(row.seed, DP_RESULT_SEED_DEFAULT);
    ck_assert_int_eq(row.seed, 1);
    dp_result_free(&row);
    json_decref(p);
    /* bulk-synchronous execution of the same cp assignment (a on device 0 with b3, c3 and z; each
     * other branch on its own device): level 1 (the b's) ends when b1 ends at 3 + 6 = 9; level 2
     * (the c's) ends when c2's result reaches z's device at 9 + 5 + 1 = 15; z runs 15..16 */
    p = params_of("{\"graph\": \"%s\", \"method\": \"cp\", \"devices\": 4, \"mode\": \"bsp\"}", graph);
    ck_assert_msg(dp_run_execute(p, &ctx, &r, &err) == DP_OK, "%s", err.msg);
    ck_assert_double_eq(r.makespan, 16.0);
    json_decref(p);
    /* a bundled topology under two transfer models: the machine's device count, and contention
     * can only slow transfers down */
    double fixed_ms = 0;
    for (int t = 0; t < 2; t++) {
        p = params_of(t ? "{\"graph\": \"gen:chainmm?matrices=4&n=4096&blocks=2\", \"method\": \"cp\", \"topology\": \"pcie-gen3-4gpu\", \"transfer\": \"maxmin\"%s}"
                        : "{\"graph\": \"gen:chainmm?matrices=4&n=4096&blocks=2\", \"method\": \"cp\", \"topology\": \"pcie-gen3-4gpu\", \"transfer\": \"fixed\"%s}", "");
        ck_assert_msg(dp_run_execute(p, &ctx, &r, &err) == DP_OK, "%s", err.msg);
        ck_assert_int_eq(r.devices, 4);
        if (t == 0) fixed_ms = r.makespan;
        else ck_assert(r.makespan >= fixed_ms);
        json_decref(p);
    }
    /* a generated graph: a chain of 3 matrices, one block, 2 products (2 ops, 1 edge) */
    p = params_of("{\"graph\": \"gen:chainmm?matrices=3&n=100&blocks=1&partition=2d\", \"method\": \"cp\"%s}", "");
    ck_assert_msg(dp_run_execute(p, &ctx, &r, &err) == DP_OK, "%s", err.msg);
    ck_assert_double_eq(dp_report_metric(&r, "metrics.ops", &known), 2.0);
    ck_assert_str_eq(r.units, "s");
    json_decref(p);
    /* DOPPLER through the dispatcher: a tiny network, 4 + 4 episodes; files in the run folder */
    p = params_of("{\"graph\": \"%s\", \"method\": \"doppler\", \"episodes_il\": 4, \"episodes_sim\": 4,"
                  " \"cfg__network__hidden\": 8, \"cfg__network__mlp_hidden\": 8, \"cfg__network__edge_hidden\": 4,"
                  " \"cfg__network__steps\": 1, \"bench_reps\": 1}", graph);
    ck_assert_msg(dp_run_execute(p, &ctx, &r, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(r.episodes, 8);
    ck_assert(r.makespan >= 12.0); /* the longest chain a-b3-c3-z has 2 + 5 + 4 + 1 = 12 */
    ck_assert(!isnan(dp_report_metric(&r, "metrics.makespan_stage1", &known)));
    ck_assert(dp_report_metric(&r, "metrics.makespan_stage2", &known) == r.makespan);
    ck_assert(dp_report_metric(&r, "metrics.training_s", &known) > 0);
    ck_assert_str_eq(r.trajectory, "r.runs/k1/trajectory.h5");
    snprintf(apath, sizeof apath, "%s/trajectory.h5", rundir);
    ck_assert_int_eq(access(apath, R_OK), 0);
    json_decref(p);
    p = params_of("{\"graph\": \"%s\", \"method\": \"doppler\", \"cfg__network__nosuch\": 1}", graph);
    ck_assert_int_ne(dp_run_execute(p, &ctx, &r, &err), DP_OK);
    ck_assert_msg(strstr(r.error, "nosuch") != NULL, "%s", r.error);
    json_decref(p);
    /* a misspelt hyperparameter, an unknown method, a missing graph: failed rows with reasons */
    static const struct { const char *fmt, *needle; } bad[] = {
        {"{\"graph\": \"%s\", \"method\": \"cp\", \"learning_rat\": 0.1}", "learning_rat"},
        {"{\"graph\": \"%s\", \"method\": \"nosuch\"}", "unknown method"},
        {"{\"graph\": \"%s.missing\", \"method\": \"cp\"}", "missing"},
        {"{\"graph\": \"%s\", \"method\": \"cp\", \"devices\": \"four\"}", "devices"},
        {"{\"graph\": \"%s\", \"method\": \"cp\", \"transfer\": \"teleport\"}", "transfer"},
        {"{\"graph\": \"%s\", \"method\": \"cp\", \"topology\": \"no-such-machine\"}", "no-such-machine"},
        {"{\"graph\": \"%s\"}", "\"method\" is required"},
        {"{\"graph\": \"gen:chainmm?bogus=1\", \"method\": \"cp\"%.0s}", "bogus"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = params_of(bad[i].fmt, graph);
        ck_assert_int_ne(dp_run_execute(p, &ctx, &r, &err), DP_OK);
        ck_assert_str_eq(r.status, "failed");
        ck_assert(isnan(r.makespan));
        ck_assert_msg(strstr(r.error, bad[i].needle) != NULL, "case %zu: \"%s\"", i, r.error);
        json_decref(p);
    }
    dp_result_free(&r);
    rm_tree(dir);
}
END_TEST

/* Issue 28: a sweep's runs follow the method table (policy/dp_place.c) and nothing else: every
 * row that trains declares its sweep parameters, each admitted by dp_run_check for that method and
 * refused for a placement method; a parameter outside a row's list is refused naming it. run.c
 * had its own runners[] and parameter lists by method name. */
START_TEST(run_params_from_method_table)
{
    dp_error err;
    int n_train = 0;
    for (const dp_place_method *m = dp_place_methods(); m->name; m++) {
        json_t *p = json_pack("{s:s, s:s}", "graph", "gen:chainmm", "method", m->name);
        if (m->sweep_run == DP_PLACE_SWEEP_PLACE) {
            ck_assert_ptr_null(m->sweep_params);
            json_object_set_new(p, "episodes", json_integer(3));
            ck_assert_int_eq(dp_run_check(p, &err), DP_EINVAL);
            ck_assert_msg(strstr(err.msg, "\"episodes\"") != NULL, "%s: %s", m->name, err.msg);
            json_decref(p);
            continue;
        }
        n_train++;
        ck_assert_ptr_nonnull(m->sweep_params);
        for (int i = 0; m->sweep_params[i]; i++) {
            const char *k = m->sweep_params[i];
            if (strcmp(k, "method") == 0) continue;
            char key[64];
            snprintf(key, sizeof key, "%s", k);
            size_t n = strlen(key);
            if (key[n - 1] == '*') snprintf(key + n - 1, sizeof key - (n - 1), "network__hidden");
            json_object_set_new(p, key, json_integer(1));
        }
        ck_assert_msg(dp_run_check(p, &err) == DP_OK, "%s: %s", m->name, err.msg);
        json_object_set_new(p, "refine_budget", json_integer(1));
        ck_assert_int_eq(dp_run_check(p, &err), DP_EINVAL);
        ck_assert_msg(strstr(err.msg, "refine_budget") && strstr(err.msg, m->name), "%s: %s", m->name, err.msg);
        json_decref(p);
    }
    ck_assert_int_eq(n_train, 3); /* doppler, placeto, gdp */
    ck_assert_int_eq(dp_place_find("doppler")->sweep_run, DP_PLACE_SWEEP_STAGES);
    ck_assert_int_eq(dp_place_find("gdp")->sweep_run, DP_PLACE_SWEEP_AGENT);
}
END_TEST

/* A run's configs are built before any run by the run's own construction (dp_run_check_config):
 * a cfg__ key refused names its parameter and the key, a valid one passes, a config file of a
 * placement method is read by the method's own reading (dp_place_method.check_config, which every
 * method that takes a config has). A misspelt cfg__ key failed each run, after the results file
 * was made (a review). */
START_TEST(run_configs_checked)
{
    dp_error err;
    json_t *p = json_pack("{s:s, s:s, s:f}", "graph", "gen:chainmm", "method", "doppler", "cfg__gama", 0.5);
    ck_assert_int_eq(dp_run_check(p, &err), DP_OK);
    ck_assert_int_eq(dp_run_check_config(p, NULL, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "parameter \"cfg__gama\": config: unknown key \"gama\"") == err.msg, "%s", err.msg);
    json_object_del(p, "cfg__gama");
    json_object_set_new(p, "cfg__stages__sim__lr", json_real(0.01));
    json_object_set_new(p, "cfg__gamma", json_integer(5));
    ck_assert_int_eq(dp_run_check_config(p, NULL, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "parameter \"cfg__gamma\": config: \"gamma\" = 5 out of range") == err.msg, "%s", err.msg);
    json_object_set_new(p, "cfg__gamma", json_real(0.5));
    ck_assert_msg(dp_run_check_config(p, NULL, &err) == DP_OK, "%s", err.msg);
    ck_assert(dp_run_is_config_param("cfg__gamma") && dp_run_is_config_param("train_config") && !dp_run_is_config_param("seed"));
    json_decref(p);
    for (const dp_place_method *m = dp_place_methods(); m->name; m++)
        ck_assert_msg(!(m->options & DP_PLACE_OPT_CONFIG) == !m->check_config, "%s: a config without check_config", m->name);
}
END_TEST

START_TEST(resolve_paths)
{
    char buf[1024];
    dp_error err;
    setenv("DOPPLER_SHARED_DATA", "/nonexistent-dir", 1);
    ck_assert_ptr_null(dp_run_resolve_path("shared:x/y.txt", "/nonexistent-cfg", buf, sizeof buf, &err));
    ck_assert_msg(strstr(err.msg, "shared:x/y.txt") != NULL, "%s", err.msg);
    char cfgdir[512];
    snprintf(cfgdir, sizeof cfgdir, "%s/tests", dp_test_srcdir());
    /* relative to the config's folder when not in the working folder */
    ck_assert_ptr_nonnull(dp_run_resolve_path("data/sweep-fork.json", cfgdir, buf, sizeof buf, &err));
    unsetenv("DOPPLER_SHARED_DATA");
}
END_TEST

/* ------------------------------------------------------------ reports ---- */

START_TEST(table_mean_sd_ratio)
{
    /* cp: 10, 12 (mean 11, sd sqrt(2)); heft: 9, 9, 12 (mean 10, sd sqrt(3)); doppler: 8 and a
     * failure; a second graph with only cp */
    dp_result rows[8];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "cp", 2, 12, "ok");
    make_row(&rows[2], "heft", 1, 9, "ok");
    make_row(&rows[3], "heft", 2, 9, "ok");
    make_row(&rows[4], "heft", 3, 12, "ok");
    make_row(&rows[5], "doppler", 1, 8, "ok");
    make_row(&rows[6], "doppler", 2, NAN, "failed");
    make_row(&rows[7], "cp", 1, 5, "ok");
    json_error_t je;
    json_t *p = json_loads(rows[7].params, 0, &je);
    json_object_set_new(p, "graph", json_string("data:graphs/other.json"));
    char *t = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
    dp_result_set(&rows[7].params, t);
    free(t);
    json_decref(p);
    dp_report_spec spec;
    ck_assert_int_eq(dp_report_spec_init(&spec), DP_OK);
    ck_assert_int_eq(dp_report_spec_set_list(&spec.baselines, &spec.n_baselines, "cp,heft"), DP_OK);
    spec.references = 0; /* the reference columns: table_references */
    dp_report_table tab;
    dp_error err;
    ck_assert_int_eq(dp_report_build(rows, 8, &spec, &tab, &err), DP_OK);
    ck_assert_int_eq(tab.n_rows, 2);
    ck_assert_int_eq(tab.n_cols, 3);
    ck_assert_str_eq(tab.row_keys[0], "g");
    ck_assert_str_eq(tab.row_keys[1], "other");
    ck_assert_str_eq(tab.col_labels[0], "cp");
    ck_assert_str_eq(tab.col_labels[2], "doppler");
    ck_assert_double_eq_tol(tab.mean[0], 11.0, 1e-12);
    ck_assert_double_eq_tol(tab.sd[0], sqrt(2.0), 1e-12);
    ck_assert_double_eq_tol(tab.mean[1], 10.0, 1e-12);
    ck_assert_double_eq_tol(tab.sd[1], sqrt(3.0), 1e-12);
    ck_assert_double_eq_tol(tab.mean[2], 8.0, 1e-12);
    ck_assert(isnan(tab.sd[2]));
    ck_assert_int_eq(tab.n[2], 1);
    ck_assert_int_eq(tab.n_failed[2], 1);
    ck_assert_int_eq(tab.best[0], 1); /* heft */
    ck_assert_int_eq(tab.best[1], 0); /* cp: the only baseline there */
    ck_assert(isnan(tab.mean[1 * 3 + 1]));
    /* markdown: the ratio of doppler to heft, 8 / 10 */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(dp_report_write(f, &tab, "md", &err), DP_OK);
    fclose(f);
    ck_assert_msg(strstr(buf, "| g | 11 ± 1.4 | **10** ± 1.7 | 8 (1 failed) | heft | 0.800 (-20.0%) |") != NULL, "%s", buf);
    free(buf);
    f = open_memstream(&buf, &len);
    ck_assert_int_eq(dp_report_write(f, &tab, "csv", &err), DP_OK);
    fclose(f);
    ck_assert_msg(strstr(buf, "g,11,1.4142135623730951,2,0,10,1.7320508075688772,3,0,8,,1,1,heft,0.80000000000000004") != NULL, "%s", buf);
    free(buf);
    ck_assert_int_eq(dp_report_write(stdout, &tab, "html", &err), DP_EINVAL);
    dp_report_table_free(&tab);
    /* a filter and another metric */
    spec.filter = json_pack("{s:[s,s]}", "method", "cp", "doppler");
    free(spec.metric);
    spec.metric = strdup("metrics.lower_bound");
    ck_assert_int_eq(dp_report_build(rows, 8, &spec, &tab, &err), DP_OK);
    ck_assert_int_eq(tab.n_cols, 2);
    ck_assert_double_eq_tol(tab.mean[0], 1.5, 1e-15);
    dp_report_table_free(&tab);
    free(spec.metric);
    spec.metric = strdup("nonsense");
    ck_assert_int_eq(dp_report_build(rows, 8, &spec, &tab, &err), DP_EINVAL);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 8; i++) dp_result_free(&rows[i]);
}
END_TEST

/* The reference columns: round-robin, random (mean over seeds), single device from runs the
 * table's method filter leaves out, the lower bound of the row's runs and the best known of
 * data/best-known.json (ChainMM on 4 devices: 1200.07; not on 8 devices, nor bulk-synchronous);
 * round-robin counts as a baseline and beats cp; a units column when the units differ. */
static void set_param(dp_result *r, const char *name, json_t *value)
{
    json_error_t je;
    json_t *p = json_loads(r->params, 0, &je);
    json_object_set_new(p, name, value);
    char *t = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
    dp_result_set(&r->params, t);
    free(t);
    json_decref(p);
}

START_TEST(table_references)
{
    char data[1024];
    snprintf(data, sizeof data, "%s/data", dp_test_srcdir());
    setenv("DOPPLER_DATA", data, 1);
    dp_result rows[9];
    make_row(&rows[0], "cp", 1, 1700, "ok");
    make_row(&rows[1], "round-robin", 1, 1500, "ok");
    make_row(&rows[2], "random", 1, 3000, "ok");
    make_row(&rows[3], "random", 2, 4000, "ok");
    make_row(&rows[4], "single", 1, 4800, "ok");
    make_row(&rows[5], "doppler", 1, 1600, "ok");
    make_row(&rows[6], "cp", 1, 0.5, "ok");       /* a generated graph, in seconds */
    make_row(&rows[7], "round-robin", 1, 0.4, "ok");
    make_row(&rows[8], "cp", 2, 9999, "ok");      /* bulk-synchronous: not a reference run */
    for (int i = 0; i < 6; i++) {
        set_param(&rows[i], "graph", json_string("shared:doppler-graphs/chain_mm_112nodes.txt"));
        dp_result_set(&rows[i].units, "DOPPLER units (simulated time / 1e10)");
        rows[i].devices = 4;
    }
    set_param(&rows[6], "graph", json_string("gen:chainmm"));
    set_param(&rows[7], "graph", json_string("gen:chainmm"));
    set_param(&rows[8], "graph", json_string("shared:doppler-graphs/chain_mm_112nodes.txt"));
    set_param(&rows[8], "mode", json_string("bsp"));
    dp_result_set(&rows[8].units, "DOPPLER units (simulated time / 1e10)");
    const char *cfg = "{\"tables\": {\"t\": {\"columns\": ["
                      "{\"label\": \"critical path\", \"where\": {\"method\": \"cp\"}, \"baseline\": true},"
                      "{\"label\": \"DOPPLER\", \"where\": {\"method\": \"doppler\"}}],"
                      "\"filter\": {\"method\": [\"cp\", \"doppler\"]}, \"references\": {\"where\": {\"seed\": [1, 2]}}}}}";
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    dp_error err;
    int found;
    ck_assert_int_eq(dp_report_spec_from_config(&spec, cfg, "t", &found, &err), DP_OK);
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 9, &spec, &tab, &err), DP_OK);
    ck_assert_int_eq(tab.n_rows, 2);
    ck_assert_int_eq(tab.n_cols, 7);
    const char *want[] = {"critical path", "DOPPLER", "round-robin", "random (mean)", "single device", "lower bound", "best known"};
    for (int c = 0; c < 7; c++) ck_assert_str_eq(tab.col_labels[c], want[c]);
    ck_assert_double_eq_tol(tab.mean[0], (1700 + 9999) / 2.0, 1e-9); /* cp mixes modes: the table's own column */
    ck_assert_double_eq_tol(tab.mean[2], 1500, 1e-12);
    ck_assert_double_eq_tol(tab.mean[3], 3500, 1e-12);
    ck_assert_double_eq_tol(tab.mean[4], 4800, 1e-12);
    ck_assert_double_eq_tol(tab.mean[5], 1.5, 1e-12);
    ck_assert_double_eq_tol(tab.mean[6], 1200.07, 1e-9);
    ck_assert_int_eq(tab.n[6], 1);                    /* one reference value (its n was 0 in CSV) */
    ck_assert_int_eq(tab.n[1 * 7 + 6], 0);
    ck_assert(tab.is_baseline[2] && tab.is_baseline[3] && tab.is_baseline[4]);
    ck_assert(!tab.is_baseline[5] && tab.is_reference[5] && tab.is_reference[6]);
    ck_assert_int_eq(tab.best[0], 2);                 /* round-robin beats cp */
    ck_assert(isnan(tab.mean[1 * 7 + 6]));            /* no best known for a generated graph */
    ck_assert_double_eq_tol(tab.mean[1 * 7 + 2], 0.4, 1e-12);
    ck_assert(tab.mixed_units);
    ck_assert_str_eq(tab.row_units[1], "s");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(dp_report_write(f, &tab, "md", &err), DP_OK);
    fclose(f);
    ck_assert_msg(strstr(buf, "| chain_mm_112nodes | DOPPLER units | ") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "units column: DOPPLER units (simulated time / 1e10); s)") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "| gen:chainmm | s | ") != NULL || strstr(buf, "| chainmm | s | ") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "best known: data/best-known.json") != NULL, "%s", buf);
    free(buf);
    dp_report_table_free(&tab);
    /* "references": false */
    spec.references = 0;
    ck_assert_int_eq(dp_report_build(rows, 9, &spec, &tab, &err), DP_OK);
    ck_assert_int_eq(tab.n_cols, 2);
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 9; i++) dp_result_free(&rows[i]);
}
END_TEST

/* Two graphs of one file name in different folders are two rows, labelled by their folders
 * (they were one row, their makespans averaged: 128.5 of 78 and 179, a review); the best known
 * is of the one-stream FIFO machine only (streams 2 had ChainMM's 1200.07 beside a round-robin
 * placement of 800.1). */
START_TEST(table_same_file_names_and_best_known_machine)
{
    char data[1024];
    snprintf(data, sizeof data, "%s/data", dp_test_srcdir());
    setenv("DOPPLER_DATA", data, 1);
    dp_result rows[7];
    make_row(&rows[0], "cp", 1, 78, "ok");
    make_row(&rows[1], "cp", 1, 179, "ok");
    set_param(&rows[0], "graph", json_string("shared:stg/50/rand0000.stg"));
    set_param(&rows[1], "graph", json_string("shared:stg/100/rand0000.stg"));
    make_row(&rows[2], "cp", 1, 1700, "ok");
    make_row(&rows[3], "cp", 1, 1200, "ok");
    make_row(&rows[4], "cp", 1, 1700, "ok");
    make_row(&rows[5], "cp", 1, 1700, "ok");
    make_row(&rows[6], "cp", 1, 1700, "ok");
    for (int i = 2; i < 7; i++) {
        set_param(&rows[i], "graph", json_string("shared:doppler-graphs/chain_mm_112nodes.txt"));
        rows[i].devices = 4;
    }
    set_param(&rows[2], "streams", json_integer(1));
    set_param(&rows[3], "streams", json_integer(2));
    set_param(&rows[4], "queue", json_string("priority"));
    set_param(&rows[5], "queue", json_string("fifo"));
    /* numeric keys at their defaults, written otherwise than the key table's text (1.2e10) */
    set_param(&rows[6], "bandwidth", json_integer(12000000000LL));
    set_param(&rows[6], "peak_flops", json_real(1e13));
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    dp_error err;
    int found;
    ck_assert_int_eq(dp_report_spec_from_config(&spec, "{\"tables\": {\"t\": {\"rows\": [\"graph\", \"streams\", \"queue\", \"bandwidth\"], "
                                                 "\"cols\": \"method\"}}}", "t", &found, &err), DP_OK);
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 7, &spec, &tab, &err), DP_OK);
    ck_assert_int_eq(tab.n_rows, 7);
    ck_assert_str_eq(tab.row_keys[0 * 4], "stg/50/rand0000");
    ck_assert_str_eq(tab.row_keys[1 * 4], "stg/100/rand0000");
    ck_assert_str_eq(tab.row_keys[2 * 4], "chain_mm_112nodes"); /* no other of its name: as before */
    int bk = -1;
    for (int c = 0; c < tab.n_cols; c++)
        if (strcmp(tab.col_labels[c], "best known") == 0) bk = c;
    ck_assert_int_ge(bk, 0);
    ck_assert_double_eq_tol(tab.mean[0 * tab.n_cols], 78, 1e-12);
    ck_assert_double_eq_tol(tab.mean[1 * tab.n_cols], 179, 1e-12);
    ck_assert_double_eq_tol(tab.mean[2 * tab.n_cols + bk], 1200.07, 1e-9); /* streams 1 given: the default */
    ck_assert(isnan(tab.mean[3 * tab.n_cols + bk]));                     /* streams 2 */
    ck_assert(isnan(tab.mean[4 * tab.n_cols + bk]));                     /* a priority queue */
    ck_assert_double_eq_tol(tab.mean[5 * tab.n_cols + bk], 1200.07, 1e-9); /* fifo given: the default */
    ck_assert_double_eq_tol(tab.mean[6 * tab.n_cols + bk], 1200.07, 1e-9); /* bandwidth and peak_flops at theirs */
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 7; i++) dp_result_free(&rows[i]);
}
END_TEST

/* A table by method whose runs include round-robin and random shows each once: the reference
 * columns do not repeat a method column (they did: "round-robin" twice, "random" beside
 * "random (mean)"); single device, absent from the runs, is still added. */
START_TEST(table_references_not_repeated)
{
    dp_result rows[5];
    make_row(&rows[0], "cp", 1, 1700, "ok");
    make_row(&rows[1], "round-robin", 1, 1500, "ok");
    make_row(&rows[2], "random", 1, 3000, "ok");
    make_row(&rows[3], "random", 2, 4000, "ok");
    make_row(&rows[4], "single", 1, 4800, "ok");
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    spec.filter = json_pack("{s:[s,s,s]}", "method", "cp", "round-robin", "random");
    dp_error err;
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 5, &spec, &tab, &err), DP_OK);
    int rr = 0, rnd = 0, single = 0;
    for (int c = 0; c < tab.n_cols; c++) {
        rr += strcmp(tab.col_labels[c], "round-robin") == 0;
        rnd += strncmp(tab.col_labels[c], "random", 6) == 0;
        single += strcmp(tab.col_labels[c], "single device") == 0;
    }
    ck_assert_int_eq(rr, 1);
    ck_assert_int_eq(rnd, 1);
    ck_assert_int_eq(single, 1);
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 5; i++) dp_result_free(&rows[i]);
}
END_TEST

/* A review's three report faults, each on the same runs: (a) round-robin as a column of the
 * table's own method column was no baseline, as a reference column it was one, so a method's
 * ratio to the best baseline flipped with the layout (0.922 against 1.305 on ChainMM); (b) the
 * reference "random (mean)" pooled single random placements with random search (samples 50);
 * (c) a cell of runs on 4 and 8 devices was pooled without the pooled-machines note. */
START_TEST(table_baselines_by_layout)
{
    dp_result rows[7];
    make_row(&rows[0], "cp", 1, 1700, "ok");
    make_row(&rows[1], "round-robin", 1, 1200, "ok");
    make_row(&rows[2], "anneal", 1, 1500, "ok");
    make_row(&rows[3], "random", 1, 3000, "ok");
    make_row(&rows[4], "random", 2, 4000, "ok");
    make_row(&rows[5], "random", 3, 1300, "ok");
    set_param(&rows[5], "samples", json_integer(50));
    make_row(&rows[6], "cp", 2, 1100, "ok");
    for (int k = 0; k < 2; k++) {
        dp_report_spec spec;
        dp_report_spec_init(&spec);
        spec.baselines = calloc(1, sizeof(char *));
        spec.baselines[0] = strdup("cp");
        spec.n_baselines = 1;
        /* k 0: every method a column; k 1: round-robin and random left to the reference columns */
        if (k == 1) spec.filter = json_pack("{s:[s,s]}", "method", "cp", "anneal");
        dp_error err;
        dp_report_table tab;
        ck_assert_int_eq(dp_report_build(rows, 6, &spec, &tab, &err), DP_OK);
        int rr = -1, rnd = -1;
        for (int c = 0; c < tab.n_cols; c++) {
            if (strcmp(tab.col_labels[c], "round-robin") == 0) rr = c;
            if (strncmp(tab.col_labels[c], "random", 6) == 0) rnd = c;
        }
        ck_assert_int_ge(rr, 0);
        ck_assert_msg(tab.is_baseline[rr], "layout %d: round-robin is no baseline", k);
        ck_assert_int_eq(tab.best[0], rr);
        if (k == 1) ck_assert_double_eq_tol(tab.mean[rnd], 3500, 1e-12); /* not 2766.7 with the search */
        ck_assert(!tab.pooled_machines);
        dp_report_table_free(&tab);
        dp_report_spec_free(&spec);
    }
    /* (c): one cp run on 8 devices in the cell of the other on 4 */
    rows[6].devices = 8;
    set_param(&rows[6], "devices", json_integer(8));
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    dp_error err;
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 7, &spec, &tab, &err), DP_OK);
    ck_assert_msg(tab.pooled_machines, "4 and 8 devices pooled without a word");
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 7; i++) dp_result_free(&rows[i]);
}
END_TEST

/* A table of penalised makespans (metrics.penalised_makespan) has the reference columns of a
 * makespan table, in its own metric: round-robin, random and single device count as baselines,
 * as columns of their own or added beside, with their penalised figures (a review: in such a
 * table random was a plain column, "random / best = 7.822", and the lower bound was gone); the
 * lower bound bounds the penalised makespan too. A metric that is no makespan (memory_excess)
 * gets none: those columns stay plain. */
START_TEST(table_references_in_the_tables_metric)
{
    dp_result rows[6];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "round-robin", 1, 12, "ok");
    make_row(&rows[2], "random", 1, 20, "ok");
    make_row(&rows[3], "random", 2, 30, "ok");
    make_row(&rows[4], "single", 1, 40, "ok");
    make_row(&rows[5], "anneal", 1, 9, "ok");
    const double pen[6] = {15, 13, 50, 70, 40, 9}, exc[6] = {0.25, 0.05, 0.75, 1, 0, 0};
    for (int i = 0; i < 6; i++) {
        char m[160];
        snprintf(m, sizeof m, "{\"lower_bound\":1.5,\"penalised_makespan\":%g,\"memory_excess\":%g}", pen[i], exc[i]);
        dp_result_set(&rows[i].metrics, m);
    }
    for (int k = 0; k < 2; k++) {
        dp_report_spec spec;
        dp_report_spec_init(&spec);
        free(spec.metric);
        spec.metric = strdup("metrics.penalised_makespan");
        dp_report_spec_set_list(&spec.baselines, &spec.n_baselines, "cp");
        /* k 0: every method a column; k 1: random and single left to the reference columns */
        if (k == 1) spec.filter = json_pack("{s:[s,s,s]}", "method", "cp", "round-robin", "anneal");
        dp_error err;
        dp_report_table tab;
        ck_assert_int_eq(dp_report_build(rows, 6, &spec, &tab, &err), DP_OK);
        int rr = -1, rnd = -1, one = -1, lb = -1;
        for (int c = 0; c < tab.n_cols; c++) {
            if (strcmp(tab.col_labels[c], "round-robin") == 0) rr = c;
            if (strncmp(tab.col_labels[c], "random", 6) == 0) rnd = c;
            if (strncmp(tab.col_labels[c], "single", 6) == 0) one = c;
            if (strcmp(tab.col_labels[c], "lower bound") == 0) lb = c;
        }
        ck_assert_msg(rr >= 0 && rnd >= 0 && one >= 0 && lb >= 0, "layout %d: a reference column is missing", k);
        ck_assert_msg(tab.is_baseline[rr] && tab.is_baseline[rnd] && tab.is_baseline[one], "layout %d: no baselines", k);
        ck_assert_double_eq_tol(tab.mean[rnd], 60, 1e-12); /* penalised, not the makespans' 25 */
        ck_assert_double_eq_tol(tab.mean[one], 40, 1e-12);
        ck_assert_double_eq_tol(tab.mean[lb], 1.5, 1e-12);
        ck_assert_int_eq(tab.best[0], rr);                 /* 13, below cp's 15 */
        dp_report_table_free(&tab);
        dp_report_spec_free(&spec);
    }
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    free(spec.metric);
    spec.metric = strdup("metrics.memory_excess");
    dp_report_spec_set_list(&spec.baselines, &spec.n_baselines, "cp");
    dp_error err;
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 6, &spec, &tab, &err), DP_OK);
    ck_assert_int_eq(tab.n_cols, 5);
    for (int c = 0; c < tab.n_cols; c++) ck_assert_int_eq(tab.is_baseline[c], strcmp(tab.col_labels[c], "cp") == 0);
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 6; i++) dp_result_free(&rows[i]);
}
END_TEST

/* A ratio over a best baseline whose mean is 0 (anneal's memory_excess) is "-" in md and tex and
 * empty in CSV, as 0 / 0 was (it printed "inf (+inf%)"), and the note says why; so is an
 * explicit "ratio" column over 0. */
START_TEST(table_ratio_over_zero)
{
    dp_result rows[2];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "anneal", 1, 9, "ok");
    dp_result_set(&rows[0].metrics, "{\"memory_excess\":0.5}");
    dp_result_set(&rows[1].metrics, "{\"memory_excess\":0}");
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    free(spec.metric);
    spec.metric = strdup("metrics.memory_excess");
    dp_report_spec_set_list(&spec.baselines, &spec.n_baselines, "anneal");
    dp_error err;
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 2, &spec, &tab, &err), DP_OK);
    const char *fmt[] = {"md", "tex", "csv"}, *want[] = {"| anneal | - |", "& anneal & - \\\\", ",anneal,\n"};
    for (int k = 0; k < 3; k++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_int_eq(dp_report_write(f, &tab, fmt[k], &err), DP_OK);
        fclose(f);
        ck_assert_msg(strstr(buf, want[k]) != NULL && strstr(buf, "inf") == NULL, "%s: %s", fmt[k], buf);
        if (k < 2) ck_assert_msg(strstr(buf, "- where the best baseline's mean is 0") != NULL, "%s", buf);
        free(buf);
    }
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    dp_report_spec_init(&spec);
    int found;
    const char *cfg = "{\"tables\": {\"t\": {\"metric\": \"metrics.memory_excess\", \"columns\": ["
                      "{\"label\": \"A\", \"where\": {\"method\": \"cp\"}}, {\"label\": \"B\", \"where\": {\"method\": \"anneal\"}},"
                      "{\"label\": \"A / B\", \"ratio\": [\"A\", \"B\"]}]}}}";
    ck_assert_int_eq(dp_report_spec_from_config(&spec, cfg, "t", &found, &err), DP_OK);
    ck_assert_int_eq(dp_report_build(rows, 2, &spec, &tab, &err), DP_OK);
    ck_assert_int_eq(tab.n_cols, 3);
    ck_assert_msg(isnan(tab.mean[2]), "A / B over 0: %g", tab.mean[2]);
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 2; i++) dp_result_free(&rows[i]);
}
END_TEST

/* A review's report faults on one set of runs (cp, round-robin, random and anneal on 2 and 4
 * devices): (a) with the devices as columns, the reference columns pooled the row's runs of both
 * device counts (round-robin's mean of 2 and 4 devices was the best baseline of cp's column of
 * 4): such a row gets no reference value and the table says so; explicit columns of 4 devices get
 * the references of 4 devices only; (b) a column "random" holding random search (samples 200)
 * was made a baseline; (c) anneal's budgets 10 and 300 pooled in one cell without a word; (d)
 * the CSV table dropped the failed runs' counts. */
START_TEST(table_machines_params_failed)
{
    dp_result rows[12];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "cp", 1, 6, "ok");
    make_row(&rows[2], "round-robin", 1, 9, "ok");
    make_row(&rows[3], "round-robin", 1, 5, "ok");
    make_row(&rows[4], "random", 1, 20, "ok");
    make_row(&rows[5], "random", 1, 12, "ok");
    make_row(&rows[6], "random", 2, 7, "ok"); /* random search, 4 devices */
    set_param(&rows[6], "samples", json_integer(200));
    make_row(&rows[7], "anneal", 1, 5.5, "ok");
    set_param(&rows[7], "budget", json_integer(10));
    make_row(&rows[8], "anneal", 2, 4.5, "ok");
    set_param(&rows[8], "budget", json_integer(300));
    make_row(&rows[9], "cp", 2, NAN, "failed");
    make_row(&rows[10], "anneal", 3, 4.9, "ok");
    set_param(&rows[10], "budget", json_integer(10));
    make_row(&rows[11], "anneal", 3, 5.7, "ok");
    set_param(&rows[11], "budget", json_integer(10));
    /* rows 0, 2, 4: 2 devices; the others 4 */
    for (int i = 0; i < 12; i++) {
        const int d = i == 0 || i == 2 || i == 4 || i == 11 ? 2 : 4;
        rows[i].devices = d;
        set_param(&rows[i], "devices", json_integer(d));
    }
    dp_error err;
    dp_report_table tab;
    /* (a) the devices as columns, cp's runs: no reference value, the note */
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    free(spec.cols);
    spec.cols = strdup("devices");
    spec.filter = json_pack("{s:s}", "method", "cp");
    spec.baselines = calloc(1, sizeof(char *));
    spec.baselines[0] = strdup("2");
    spec.n_baselines = 1;
    ck_assert_int_eq(dp_report_build(rows, 12, &spec, &tab, &err), DP_OK);
    ck_assert(tab.refs_left_out);
    for (int c = 0; c < tab.n_cols; c++) {
        ck_assert_msg(strcmp(tab.col_labels[c], "round-robin") != 0 || isnan(tab.mean[c]), "round-robin %g pools 2 and 4 devices",
                      tab.mean[c]);
        if (strcmp(tab.col_labels[c], "2") == 0) ck_assert_int_eq(tab.best[0], c);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(dp_report_write(f, &tab, "md", &err), DP_OK);
    fclose(f);
    ck_assert_msg(strstr(buf, "have no round-robin") != NULL, "%s", buf);
    free(buf);
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    /* explicit columns of 4 devices: round-robin of 4 devices only (5, not 7) */
    dp_report_spec_init(&spec);
    int found;
    ck_assert_int_eq(dp_report_spec_from_config(&spec, "{\"tables\": {\"t\": {\"columns\": ["
                                                 "{\"label\": \"cp@4\", \"where\": {\"method\": \"cp\", \"devices\": 4}, \"baseline\": true},"
                                                 "{\"label\": \"anneal@4\", \"where\": {\"method\": \"anneal\", \"devices\": 4}}]}}}",
                                                 "t", &found, &err), DP_OK);
    ck_assert_int_eq(dp_report_build(rows, 12, &spec, &tab, &err), DP_OK);
    ck_assert(!tab.refs_left_out);
    int rr = -1;
    for (int c = 0; c < tab.n_cols; c++)
        if (strcmp(tab.col_labels[c], "round-robin") == 0) rr = c;
    ck_assert_int_ge(rr, 0);
    ck_assert_double_eq_tol(tab.mean[rr], 5, 1e-12);
    ck_assert_int_eq(tab.best[0], rr);
    /* (c) anneal@4 pools budgets 10 and 300 */
    ck_assert_ptr_nonnull(tab.pooled_params);
    ck_assert_str_eq(tab.pooled_params, "budget");
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    /* (b) by method on 4 devices: "random" holds a search, so it is no baseline, and the single
     * placements' mean is added beside it; (d) cp's failed run in the CSV */
    dp_report_spec_init(&spec);
    spec.filter = json_pack("{s:i}", "devices", 4);
    spec.baselines = calloc(1, sizeof(char *));
    spec.baselines[0] = strdup("cp");
    spec.n_baselines = 1;
    ck_assert_int_eq(dp_report_build(rows, 12, &spec, &tab, &err), DP_OK);
    int rnd = -1, rmean = -1, cp = -1;
    for (int c = 0; c < tab.n_cols; c++) {
        if (strcmp(tab.col_labels[c], "random") == 0) rnd = c;
        if (strcmp(tab.col_labels[c], "random (mean)") == 0) rmean = c;
        if (strcmp(tab.col_labels[c], "cp") == 0) cp = c;
    }
    ck_assert(rnd >= 0 && rmean >= 0 && cp >= 0);
    ck_assert(!tab.is_baseline[rnd] && tab.is_baseline[rmean]);
    ck_assert_double_eq_tol(tab.mean[rmean], 12, 1e-12);
    ck_assert_ptr_nonnull(tab.pooled_params);
    ck_assert_msg(strstr(tab.pooled_params, "samples") && strstr(tab.pooled_params, "budget"), "%s", tab.pooled_params);
    ck_assert_int_eq(tab.n_failed[cp], 1);
    buf = NULL;
    f = open_memstream(&buf, &len);
    ck_assert_int_eq(dp_report_write(f, &tab, "csv", &err), DP_OK);
    fclose(f);
    ck_assert_msg(strstr(buf, ",cp mean,cp sd,cp n,cp failed,") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, ",6,,1,1,") != NULL, "cp: mean 6, one run, one failed: %s", buf);
    free(buf);
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 12; i++) dp_result_free(&rows[i]);
}
END_TEST

/* A config's references.where chooses the reference runs itself: table 3's columns are async and
 * bsp runs of one graph, its references the async runs; the row-machine rule left them out (the
 * table lost its round-robin, random, single device, lower bound and best known columns) */
START_TEST(table_references_where_chooses)
{
    dp_result rows[4];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "cp", 1, 12, "ok");
    set_param(&rows[1], "mode", json_string("bsp"));
    make_row(&rows[2], "round-robin", 1, 9, "ok");
    make_row(&rows[3], "round-robin", 1, 30, "ok");
    set_param(&rows[3], "mode", json_string("bsp"));
    const char *cfg = "{\"tables\": {\"t\": {\"columns\": ["
                      "{\"label\": \"async\", \"where\": {\"method\": \"cp\", \"mode\": \"async\"}},"
                      "{\"label\": \"bsp\", \"where\": {\"method\": \"cp\", \"mode\": \"bsp\"}}],"
                      "\"references\": {\"where\": {\"mode\": \"async\"}}}}}";
    set_param(&rows[0], "mode", json_string("async"));
    set_param(&rows[2], "mode", json_string("async"));
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    dp_error err;
    int found;
    ck_assert_int_eq(dp_report_spec_from_config(&spec, cfg, "t", &found, &err), DP_OK);
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 4, &spec, &tab, &err), DP_OK);
    int rr = -1;
    for (int c = 0; c < tab.n_cols; c++)
        if (strcmp(tab.col_labels[c], "round-robin") == 0) rr = c;
    ck_assert_int_ge(rr, 0);
    ck_assert_double_eq_tol(tab.mean[rr], 9, 1e-12);
    ck_assert(!tab.refs_left_out);
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 4; i++) dp_result_free(&rows[i]);
}
END_TEST

/* A reference column's failed runs are counted in its cell, as a method column's are (an added
 * round-robin column dropped its failed runs without a count: a review) */
START_TEST(table_reference_failed_counted)
{
    dp_result rows[3];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "round-robin", 1, 9, "ok");
    make_row(&rows[2], "round-robin", 2, NAN, "failed");
    /* the ok runs on the machine's 4 devices, the failed one with the parameter's 0 (not given:
     * never known) */
    rows[0].devices = rows[1].devices = 4;
    rows[2].devices = 0;
    json_t *p2 = json_loads(rows[2].params, 0, NULL);
    json_object_del(p2, "devices");
    char *t2 = json_dumps(p2, JSON_COMPACT | JSON_SORT_KEYS);
    dp_result_set(&rows[2].params, t2);
    free(t2);
    json_decref(p2);
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    spec.filter = json_pack("{s:s}", "method", "cp");
    dp_error err;
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 3, &spec, &tab, &err), DP_OK);
    int rr = -1;
    for (int c = 0; c < tab.n_cols; c++)
        if (strcmp(tab.col_labels[c], "round-robin") == 0) rr = c;
    ck_assert_int_ge(rr, 0);
    ck_assert_int_eq(tab.n[rr], 1);
    ck_assert_int_eq(tab.n_failed[rr], 1);
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 3; i++) dp_result_free(&rows[i]);
}
END_TEST

/* A table whose columns are all baselines or references has no ratio column, and its note does
 * not explain one (it said "X / best is X's mean over the best baseline's": a new user's trial) */
START_TEST(table_note_without_ratio_columns)
{
    dp_result rows[2];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "random", 1, 20, "ok");
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    spec.baselines = calloc(1, sizeof(char *));
    spec.baselines[0] = strdup("cp");
    spec.n_baselines = 1;
    dp_error err;
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 2, &spec, &tab, &err), DP_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(dp_report_write(f, &tab, "md", &err), DP_OK);
    fclose(f);
    ck_assert_msg(strstr(buf, "X / best") == NULL && strstr(buf, "no ratio column") != NULL, "%s", buf);
    free(buf);
    dp_report_table_free(&tab);
    /* seconds per episode of runs none of which trains: refused, as a metrics.NAME none reports */
    free(spec.metric);
    spec.metric = strdup("seconds_per_episode");
    ck_assert_int_eq(dp_report_build(rows, 2, &spec, &tab, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "no finished run reports it") != NULL, "%s", err.msg);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 2; i++) dp_result_free(&rows[i]);
}
END_TEST

/* --compare: an infinite makespan differs from a finite one (inf / inf is NaN, and NaN > tol was
 * false: "0 differ"), a missing one (NaN) from a value, without "(+nan%)" or "(+inf%)"; the same
 * infinite value on both sides is equal. */
START_TEST(compare_not_finite)
{
    const double a[] = {INFINITY, NAN, INFINITY, 12.5}, b[] = {12.5, 12.5, INFINITY, 12.5};
    const char *want[] = {"makespan: new inf, reference 12.5\n", "makespan: new (none), reference 12.5\n", NULL, NULL};
    for (int k = 0; k < 4; k++) {
        dp_result x, y;
        make_row(&x, "cp", 1, a[k], "ok");
        make_row(&y, "cp", 1, b[k], "ok");
        char *buf = NULL;
        size_t len = 0;
        long nd = -1;
        dp_error err;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_int_eq(dp_report_compare(f, &x, 1, &y, 1, 1e-6, &nd, &err), DP_OK);
        fclose(f);
        ck_assert_msg(nd == (want[k] != NULL), "%d: %ld differ: %s", k, nd, buf);
        if (want[k]) ck_assert_msg(strstr(buf, want[k]) != NULL, "%d: %s", k, buf);
        ck_assert_msg(strstr(buf, "nan") == NULL && strstr(buf, "inf%") == NULL, "%d: %s", k, buf);
        free(buf);
        dp_result_free(&x);
        dp_result_free(&y);
    }
}
END_TEST

/* An HDF5 results file is checked as a CSV one is, by the same function, the error naming the file,
 * the row and the run: an infinite makespan or seconds, an ok run without a makespan (NaN). The
 * reader took both: a NaN makespan of an ok run was dropped from its cell (n = 1), an inf one
 * made the cell's mean inf and moved the best baseline (a review). A failed run's NaN is its
 * missing makespan. */
START_TEST(results_h5_not_finite_refused)
{
    char dir[256], path[300];
    scratch(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/r.h5", dir);
    for (int k = 0; k < 4; k++) {
        dp_result rows[2];
        make_row(&rows[0], "cp", 1, 12.5, "ok");
        make_row(&rows[1], "heft", 2, 11, k == 3 ? "failed" : "ok");
        if (k == 0) rows[1].makespan = INFINITY;
        if (k == 1) rows[1].makespan = NAN;
        if (k == 2) rows[1].seconds = -INFINITY;
        if (k == 3) rows[1].makespan = NAN;
        dp_error err;
        ck_assert_int_eq(dp_results_write_h5(path, rows, 2, "s", "{}", &err), DP_OK);
        dp_result *back = NULL;
        long n = 0;
        const int rc = dp_results_read_h5(path, &back, &n, NULL, &err);
        if (k == 3) {
            ck_assert_int_eq(rc, DP_OK);
            ck_assert_int_eq(n, 2);
            free_rows(back, n);
        } else {
            const char *want[] = {"makespan: not a finite number (inf)", "makespan: missing in a finished run",
                                  "seconds: not a finite number (-inf)"};
            char where[400];
            snprintf(where, sizeof where, "%s: row 2 (run %s): %s", path, rows[1].key, want[k]);
            ck_assert_int_eq(rc, DP_EINVAL);
            ck_assert_msg(strstr(err.msg, where) != NULL, "%d: %s", k, err.msg);
        }
        for (int i = 0; i < 2; i++) dp_result_free(&rows[i]);
    }
    rm_tree(dir);
}
END_TEST

/* A results CSV's nan or inf (the writer leaves a missing value empty) and an ok run without a
 * makespan are refused naming the line (a nan makespan was dropped from its cell, an inf one made
 * the cell's mean NaN); a reference CSV must be whole (an empty or cut-off one compared as 0 and
 * 2 runs without a word: a review) */
START_TEST(results_csv_not_finite_refused)
{
    char dir[256], path[300];
    scratch(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/r.csv", dir);
    dp_result row;
    make_row(&row, "cp", 1, 12.5, "ok");
    dp_error err;
    ck_assert_int_eq(dp_results_write_csv(path, &row, 1, &err), DP_OK);
    dp_result_free(&row);
    size_t len;
    char *text = dp_file_read(path, &len, &err);
    ck_assert_ptr_nonnull(text);
    const char *bad[] = {"nan", "inf", "-inf", ""}, *want[] = {"not a finite number", "not a finite number", "not a finite number",
                                                            "makespan: missing in a finished run"};
    for (int k = 0; k < 4; k++) {
        char *p = strstr(text, ",12.5,");
        ck_assert_ptr_nonnull(p);
        FILE *f = fopen(path, "w");
        fprintf(f, "%.*s,%s,%s", (int)(p - text), text, bad[k], p + 6);
        fclose(f);
        dp_result *rows = NULL;
        long n = 0;
        ck_assert_int_eq(dp_results_read_csv(path, &rows, &n, NULL, &err), DP_EINVAL);
        ck_assert_msg(strstr(err.msg, "r.csv:2: ") && strstr(err.msg, want[k]), "%s: %s", bad[k], err.msg);
    }
    /* whole: a cut-off last line and an empty file */
    FILE *f = fopen(path, "w");
    fwrite(text, 1, len - 5, f);
    fclose(f);
    dp_result *rows = NULL;
    long n = 0;
    ck_assert_int_eq(dp_results_read_csv(path, &rows, &n, NULL, &err), DP_OK); /* the journal's reader */
    ck_assert_int_eq(n, 0);
    free(rows);
    ck_assert_int_eq(dp_results_read_csv_whole(path, &rows, &n, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "r.csv:2: the line is cut off") != NULL, "%s", err.msg);
    f = fopen(path, "w");
    fclose(f);
    ck_assert_int_eq(dp_results_read_csv_whole(path, &rows, &n, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "empty") != NULL, "%s", err.msg);
    free(text);
    rm_tree(dir);
}
END_TEST

/* Only a last line without a final newline is a torn line (a kill during the journal's one
 * write()): a stray character after a quoted field or a quote never closed elsewhere is an error
 * naming the line, and a resumed sweep truncates nothing. Both were taken for a cut-off line:
 * one space after a closing quote on line 2 made dp_results_open cut the journal back to its
 * header and the sweep ran its 4 runs again (a review). A quoted field may hold a line end (an
 * error message's): lines are counted in the file. */
START_TEST(results_csv_malformed_not_torn)
{
    char dir[256], path[300], h5[300];
    scratch(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/r.csv", dir);
    snprintf(h5, sizeof h5, "%s/r.h5", dir);
    dp_result rows3[3];
    for (int k = 0; k < 3; k++) make_row(&rows3[k], "cp", k + 1, 10 + k, "ok");
    dp_result_set(&rows3[0].error, "two\nlines");
    dp_error err;
    ck_assert_int_eq(dp_results_write_csv(path, rows3, 3, &err), DP_OK);
    for (int k = 0; k < 3; k++) dp_result_free(&rows3[k]);
    size_t len;
    char *text = dp_file_read(path, &len, &err);
    ck_assert_ptr_nonnull(text);
    dp_result *rows = NULL;
    long n = 0, good = 0;
    ck_assert_int_eq(dp_results_read_csv(path, &rows, &n, &good, &err), DP_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(rows[0].error, "two\nlines");
    ck_assert_int_eq(good, (long)len);
    free_rows(rows, n);
    /* a space after the closing quote of the second row's params: that row is on line 4 (the
     * first row's error holds a line end) */
    char *second = strstr(text, "\"two\nlines\"");
    ck_assert_ptr_nonnull(second);
    second = strchr(second, '\n') + 1;
    second = strchr(second, '\n') + 1;
    char *q = strstr(second, "}\",");
    ck_assert_ptr_nonnull(q);
    FILE *f = fopen(path, "w");
    fprintf(f, "%.*s}\" ,%s", (int)(q - text), text, q + 3);
    fclose(f);
    struct stat st0, st1;
    ck_assert_int_eq(stat(path, &st0), 0);
    ck_assert_int_eq(dp_results_read_csv(path, &rows, &n, &good, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "r.csv:4:") && strstr(err.msg, "' ' where a comma or the end of the line belongs"), "%s",
                  err.msg);
    ck_assert_ptr_null(dp_results_open(h5, "s", "{}", &err));
    ck_assert_msg(strstr(err.msg, "r.csv:4:") != NULL, "%s", err.msg);
    ck_assert_int_eq(stat(path, &st1), 0);
    ck_assert_int_eq(st1.st_size, st0.st_size); /* nothing cut */
    /* a quote never closed, in a file that ends with a newline: an error; without the newline, a
     * torn last line the journal's reader drops (and a whole file's reader names) */
    for (int torn = 0; torn < 2; torn++) {
        f = fopen(path, "w");
        fprintf(f, "%sx,\"open%s", text, torn ? "" : "\n");
        fclose(f);
        rows = NULL;
        int rc = dp_results_read_csv(path, &rows, &n, &good, &err);
        if (!torn) {
            ck_assert_int_eq(rc, DP_EINVAL);
            ck_assert_msg(strstr(err.msg, "r.csv:6: a quoted field that is never closed") != NULL, "%s", err.msg);
            ck_assert_ptr_null(dp_results_open(h5, "s", "{}", &err));
            ck_assert_int_eq(stat(path, &st1), 0);
            ck_assert_int_eq(st1.st_size, (off_t)len + 8);
        } else {
            ck_assert_int_eq(rc, DP_OK);
            ck_assert_int_eq(n, 3);
            ck_assert_int_eq(good, (long)len);
            free_rows(rows, n);
            ck_assert_int_eq(dp_results_read_csv_whole(path, &rows, &n, &err), DP_EINVAL);
            ck_assert_msg(strstr(err.msg, "r.csv:6: the line is cut off (no final newline)") != NULL, "%s", err.msg);
        }
    }
    free(text);
    rm_tree(dir);
}
END_TEST

/* A finished run for which the table's metric is undefined (seconds_per_episode of a method
 * without episodes) is not a failed run: every cell read "- (1 failed)" of runs all "ok" (a
 * review); a failed run still counts */
START_TEST(table_metric_undefined_not_failed)
{
    dp_result rows[3];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "doppler", 1, 8, "ok");
    make_row(&rows[2], "doppler", 2, 9, "failed");
    dp_result_set(&rows[1].metrics, "{\"seconds_per_episode\": 0.5}");
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    free(spec.metric);
    spec.metric = strdup("metrics.seconds_per_episode");
    dp_error err;
    dp_report_table tab;
    ck_assert_int_eq(dp_report_build(rows, 3, &spec, &tab, &err), DP_OK);
    for (int c = 0; c < tab.n_cols; c++) {
        if (strcmp(tab.col_labels[c], "cp") == 0) {
            ck_assert_int_eq(tab.n[c], 0);
            ck_assert_int_eq(tab.n_failed[c], 0);
        }
        if (strcmp(tab.col_labels[c], "doppler") == 0) {
            ck_assert_int_eq(tab.n[c], 1);
            ck_assert_int_eq(tab.n_failed[c], 1);
            ck_assert_double_eq_tol(tab.mean[c], 0.5, 1e-15);
        }
    }
    dp_report_table_free(&tab);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 3; i++) dp_result_free(&rows[i]);
}
END_TEST

START_TEST(table_explicit_columns)
{
    /* one "doppler" run gives two columns (its makespan and a metric of it); a column of
     * published figures stands beside them, keyed by the row label */
    dp_result rows[3];
    make_row(&rows[0], "cp", 1, 10, "ok");
    make_row(&rows[1], "doppler", 1, 8, "ok");
    make_row(&rows[2], "doppler", 2, 6, "ok");
    dp_result_set(&rows[1].metrics, "{\"makespan_stage1\": 9}");
    dp_result_set(&rows[2].metrics, "{\"makespan_stage1\": 11}");
    const char *cfg = "{\"tables\": {\"t\": {\"columns\": ["
                      "{\"label\": \"critical path\", \"where\": {\"method\": \"cp\"}, \"baseline\": true},"
                      "{\"label\": \"DOPPLER I\", \"where\": {\"method\": \"doppler\"}, \"metric\": \"metrics.makespan_stage1\"},"
                      "{\"label\": \"DOPPLER II\", \"where\": {\"method\": \"doppler\"}},"
                      "{\"label\": \"paper\", \"values\": {\"G\": 139}}], \"labels\": {\"g\": \"G\"}, \"references\": false}}}";
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    dp_error err;
    int found;
    ck_assert_int_eq(dp_report_spec_from_config(&spec, cfg, "t", &found, &err), DP_OK);
    dp_report_table tab;
    ck_assert_msg(dp_report_build(rows, 3, &spec, &tab, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(tab.n_rows, 1);
    ck_assert_int_eq(tab.n_cols, 4);
    ck_assert_str_eq(tab.row_keys[0], "G");
    ck_assert_double_eq_tol(tab.mean[0], 10, 1e-12);
    ck_assert_double_eq_tol(tab.mean[1], 10, 1e-12); /* (9 + 11) / 2 */
    ck_assert_double_eq_tol(tab.mean[2], 7, 1e-12);  /* (8 + 6) / 2 */
    ck_assert_double_eq_tol(tab.mean[3], 139, 1e-12);
    ck_assert_int_eq(tab.is_reference[3], 1);
    ck_assert_int_eq(tab.best[0], 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(dp_report_write(f, &tab, "md", &err), DP_OK);
    fclose(f);
    /* ratios for the DOPPLER columns only, not for the published figures */
    ck_assert_msg(strstr(buf, "| G | **10** | 10 ± 1.4 | 7 ± 1.4 | 139 | critical path | 1.000 (+0.0%) | 0.700 (-30.0%) |") != NULL, "%s", buf);
    ck_assert_ptr_null(strstr(buf, "paper / best"));
    free(buf);
    dp_report_table_free(&tab);
    ck_assert_int_eq(dp_report_spec_from_config(&spec, "{\"tables\": {\"t\": {\"columns\": [{\"where\": {}}]}}}", "t", &found, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "label") != NULL, "%s", err.msg);
    dp_report_spec_free(&spec);
    for (int i = 0; i < 3; i++) dp_result_free(&rows[i]);
}
END_TEST

START_TEST(table_spec_from_config)
{
    dp_report_spec spec;
    dp_report_spec_init(&spec);
    dp_error err;
    int found;
    const char *cfg = "{\"tables\": {\"t1\": {\"rows\": [\"graph\", \"topology\"], \"cols\": \"variant\","
                      " \"baselines\": \"cp\", \"labels\": {\"chain_mm_112nodes\": \"ChainMM\"}, \"digits\": 3}}}";
    ck_assert_int_eq(dp_report_spec_from_config(&spec, cfg, "t1", &found, &err), DP_OK);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(spec.n_rows, 2);
    ck_assert_str_eq(spec.rows[1], "topology");
    ck_assert_str_eq(spec.cols, "variant");
    ck_assert_int_eq(spec.n_baselines, 1);
    ck_assert_int_eq(spec.digits, 3);
    char lab[64];
    json_t *v = json_string("shared:doppler-graphs/chain_mm_112nodes.txt");
    dp_report_value_label("graph", v, spec.labels, lab, sizeof lab);
    ck_assert_str_eq(lab, "ChainMM");
    json_decref(v);
    ck_assert_int_eq(dp_report_spec_from_config(&spec, cfg, "t2", &found, &err), DP_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(dp_report_spec_from_config(&spec, "{\"tables\": {\"t\": {\"rowz\": 1}}}", "t", &found, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "rowz") != NULL, "%s", err.msg);
    dp_report_spec_free(&spec);
}
END_TEST

START_TEST(learning_curve_plot)
{
    /* a trajectory file with the dp_h5io layout's two columns the plot reads */
    char dir[256], traj[300], png[300];
    scratch(dir, sizeof dir);
    snprintf(traj, sizeof traj, "%s/traj.h5", dir);
    snprintf(png, sizeof png, "%s/learn.png", dir);
    dp_error err;
    dp_report_plot_opts po = {.title = "t", .window = 5};
    /* not a trajectory: a clear error */
    FILE *f = fopen(traj, "w");
    fputs("x", f);
    fclose(f);
    ck_assert_int_eq(dp_report_plot_learning(traj, &po, png, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "not an HDF5 file") && strstr(err.msg, traj), "%s", err.msg);
    hid_t h = H5Fcreate(traj, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g = H5Gcreate2(h, "episodes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    double m[40];
    int st[40];
    for (int i = 0; i < 40; i++) { m[i] = 100 - i; st[i] = i < 20 ? 0 : 1; }
    hsize_t n = 40;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(g, "makespan", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m);
    H5Dclose(d);
    H5Gclose(g);
    H5Fclose(h);
    /* an HDF5 file with two of the columns but none of the layout's attributes: the one reader
     * (dp_h5io_traj_read) refuses it; the plot had read it as a trajectory */
    h = H5Fopen(traj, H5F_ACC_RDWR, H5P_DEFAULT);
    d = H5Dcreate2(h, "/episodes/stage", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, st);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(h);
    ck_assert_int_eq(dp_report_plot_learning(traj, &po, png, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "not a doppler trajectory file") != NULL, "%s", err.msg);
    /* the layout as training writes it, without its stage column: refused naming the column */
    dp_h5io_traj_episode rows[40];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 40; i++) { rows[i].makespan = m[i]; rows[i].stage = st[i]; rows[i].episode = i < 20 ? i : i - 20; }
    ck_assert_int_eq(dp_h5io_traj_create(traj, "g", 4, 2, "sim", "ms", "{}", "", &err), DP_OK);
    ck_assert_int_eq(dp_h5io_traj_append(traj, rows, 40, NULL, 0, &err), DP_OK);
    h = H5Fopen(traj, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(H5Ldelete(h, "/episodes/stage", H5P_DEFAULT), 0);
    H5Fclose(h);
    ck_assert_int_eq(dp_report_plot_learning(traj, &po, png, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "/episodes/stage") != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_h5io_traj_create(traj, "g", 4, 2, "sim", "ms", "{}", "", &err), DP_OK);
    ck_assert_int_eq(dp_h5io_traj_append(traj, rows, 40, NULL, 0, &err), DP_OK);
    if (system("command -v gnuplot > /dev/null 2>&1") == 0) {
        ck_assert_msg(dp_report_plot_learning(traj, &po, png, &err) == DP_OK, "%s", err.msg);
        struct stat sb;
        ck_assert_int_eq(stat(png, &sb), 0);
        ck_assert(sb.st_size > 1000);
    }
    rm_tree(dir);
}
END_TEST

/* Issue 19: the lock was unlinked before it was released, so a sweep that had opened the old lock
 * file could lock it after the release while a third sweep locked the path's new file: both
 * wrote, and rows were lost. Here many processes take turns on one results file as fast as they
 * can (open, append their own rows, close; "another sweep" means try again): at the end every
 * row is in both files exactly once. */
#define RACE_PROCS 4
#define RACE_ROUNDS 15
START_TEST(lock_race_loses_nothing)
{
    char dir[256], h5[300], csv[300];
    scratch(dir, sizeof dir);
    snprintf(h5, sizeof h5, "%s/r.h5", dir);
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    pid_t kids[RACE_PROCS];
    for (int p = 0; p < RACE_PROCS; p++) {
        kids[p] = fork();
        ck_assert_int_ge(kids[p], 0);
        if (kids[p] == 0) {
            for (int round = 0; round < RACE_ROUNDS; round++) {
                dp_error e;
                dp_results *r;
                while (!(r = dp_results_open(h5, "race", "{}", &e))) {
                    if (!strstr(e.msg, "another sweep")) _exit(2);
                }
                dp_result row;
                make_row(&row, "cp", (long)(p * 1000 + round), 1.0 + round, "ok");
                int rc = dp_results_append(r, &row, &e);
                dp_result_free(&row);
                dp_results_close(r);
                if (rc != DP_OK) _exit(3);
            }
            _exit(0);
        }
    }
    for (int p = 0; p < RACE_PROCS; p++) {
        int st;
        ck_assert_int_eq(waitpid(kids[p], &st, 0), kids[p]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d: status %d", p, st);
    }
    dp_error err;
    dp_results *r = dp_results_open(h5, "race", "{}", &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_results_count(r), RACE_PROCS * RACE_ROUNDS);
    for (int p = 0; p < RACE_PROCS; p++)
        for (int round = 0; round < RACE_ROUNDS; round++) {
            dp_result row;
            make_row(&row, "cp", (long)(p * 1000 + round), 0, "ok");
            ck_assert_msg(dp_results_find(r, row.key) != NULL, "row %d/%d lost", p, round);
            dp_result_free(&row);
        }
    dp_results_close(r);
    dp_result *back;
    long n;
    ck_assert_int_eq(dp_results_read_csv(csv, &back, &n, NULL, &err), DP_OK);
    ck_assert_int_eq(n, RACE_PROCS * RACE_ROUNDS);
    free_rows(back, n);
    ck_assert_int_eq(dp_results_read_h5(h5, &back, &n, NULL, &err), DP_OK);
    ck_assert_int_eq(n, RACE_PROCS * RACE_ROUNDS);
    free_rows(back, n);
    rm_tree(dir);
}
END_TEST

/* The progress line's ETA: with no run of a method finished, the others' estimate is a lower
 * bound ("more than 5s"), but one that rounds to 0s said "ETA more than 0s (no doppler run finished
 * yet)": now that there is no estimate yet (a new-user walkthrough) */
START_TEST(eta_text)
{
    char b[160];
    dp_sweep_eta_text(3, 0.3, "doppler", b, sizeof b);
    ck_assert_str_eq(b, "unknown (no doppler run finished yet)");
    dp_sweep_eta_text(3, 0, "doppler", b, sizeof b);
    ck_assert_str_eq(b, "unknown (no doppler run finished yet)");
    dp_sweep_eta_text(3, 0.5, "doppler", b, sizeof b);
    ck_assert_str_eq(b, "more than 1s (no doppler run finished yet)");
    dp_sweep_eta_text(3, 125, "doppler", b, sizeof b);
    ck_assert_str_eq(b, "more than 2m05s (no doppler run finished yet)");
    dp_sweep_eta_text(3, 0.3, NULL, b, sizeof b);
    ck_assert_str_eq(b, "0s"); /* every method known: the estimate, short as it is */
    dp_sweep_eta_text(0, 40, "doppler", b, sizeof b);
    ck_assert_str_eq(b, "0s");
    dp_sweep_format_duration(7500, b, sizeof b);
    ck_assert_str_eq(b, "2h05m");
}
END_TEST

/* Issue 19: opening a results file scanned for duplicate keys in O(n^2) (10.7 s at 50,000 rows).
 * 50,000 rows and one duplicate: the file opens with the duplicate dropped (the time is
 * bench/'s business; a quadratic scan would take many seconds here). */
START_TEST(large_results_file_opens)
{
    char dir[256], h5[300], csv[300];
    scratch(dir, sizeof dir);
    snprintf(h5, sizeof h5, "%s/r.h5", dir);
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    const long N = 50000;
    dp_result *rows = calloc((size_t)N + 1, sizeof *rows);
    ck_assert_ptr_nonnull(rows);
    for (long i = 0; i < N; i++) make_row(&rows[i], "random", i, 1.0, "ok");
    ck_assert_int_eq(dp_result_copy(&rows[N], &rows[17]), DP_OK);
    dp_error err;
    ck_assert_int_eq(dp_results_write_csv(csv, rows, N + 1, &err), DP_OK);
    dp_results *r = dp_results_open(h5, "big", "{}", &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_results_count(r), N);
    ck_assert_ptr_nonnull(dp_results_find(r, rows[N - 1].key));
    dp_results_close(r);
    dp_result *back;
    long n;
    ck_assert_int_eq(dp_results_read_h5(h5, &back, &n, NULL, &err), DP_OK);
    ck_assert_int_eq(n, N);
    free_rows(back, n);
    free_rows(rows, N + 1);
    rm_tree(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_add_test(tc, expansion_order);
    tcase_add_test(tc, keys_are_stable);
    tcase_add_test(tc, union_of_grids_dedups);
    tcase_add_test(tc, bad_configs);
    tcase_add_test(tc, too_many_runs);
    tcase_add_test(tc, shards);
    tcase_add_test(tc, csv_and_h5_roundtrip);
    tcase_add_test(tc, recovery_after_kill);
    tcase_add_test(tc, finalize_sorts_by_index);
    tcase_add_test(tc, run_dispatch);
    tcase_add_test(tc, resolve_paths);
    tcase_add_test(tc, run_params_from_method_table);
    tcase_add_test(tc, run_configs_checked);
    tcase_add_test(tc, table_mean_sd_ratio);
    tcase_add_test(tc, table_references);
    tcase_add_test(tc, table_same_file_names_and_best_known_machine);
    tcase_add_test(tc, table_references_not_repeated);
    tcase_add_test(tc, table_baselines_by_layout);
    tcase_add_test(tc, table_references_in_the_tables_metric);
    tcase_add_test(tc, table_ratio_over_zero);
    tcase_add_test(tc, table_machines_params_failed);
    tcase_add_test(tc, results_csv_not_finite_refused);
    tcase_add_test(tc, results_csv_malformed_not_torn);
    tcase_add_test(tc, results_h5_not_finite_refused);
    tcase_add_test(tc, compare_not_finite);
    tcase_add_test(tc, table_note_without_ratio_columns);
    tcase_add_test(tc, table_references_where_chooses);
    tcase_add_test(tc, table_reference_failed_counted);
    tcase_add_test(tc, table_metric_undefined_not_failed);
    tcase_add_test(tc, table_explicit_columns);
    tcase_add_test(tc, table_spec_from_config);
    tcase_add_test(tc, learning_curve_plot);
    tcase_add_test(tc, lock_race_loses_nothing);
    tcase_add_test(tc, large_results_file_opens);
    tcase_add_test(tc, eta_text);
    suite_add_tcase(s, tc);
    return dp_test_run(s);
}
