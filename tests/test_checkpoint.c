/* test_checkpoint: the HDF5 files of a training run (policy/dp_h5io.h) on their own: a checkpoint
 * written and read back bit for bit (parameters, Adam moments and step count, counters, the RNG
 * state, the best parameters and assignment, the run id), a read without Adam resetting the moments, a
 * tensor of another shape refused with its name, no temporary file left behind, and the
 * trajectory file's create, append, count and truncate; every string attribute fixed-length
 * (never HDF5's global heap) and a variable-length one refused unread, naming file and
 * attribute. */
#include "dp_h5io.h"
#include "dp_nn.h"
#include "dp_mpnn.h"
#include "dp_runtime.h"
#include "dp_alloc.h"
#include "dp_test.h"

#include <dirent.h>
#include <gsl/gsl_rng.h>
#include <hdf5.h>
#include <math.h>
#include <sys/stat.h>

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "%s/dp-ckpt-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

static int files_in_dir(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* 1 when tensors of a and b (the same layout) hold the same values (the padding between
 * tensors, dp_nn_params_alloc's alignment, is not stored) */
static int same_tensors(const dp_nn_params *a, const float *x, const float *y)
{
    for (int i = 0; i < a->n_tensors; i++) {
        size_t off = a->t[i].offset, k = (size_t)a->t[i].rows * a->t[i].cols;
        if (memcmp(x + off, y + off, k * sizeof(float)) != 0) return 0;
    }
    return 1;
}

/* a block of two tensors (rows x cols given), every float distinct */
static void block(dp_nn_params *p, int r0, int c0, float base)
{
    dp_nn_params_init(p);
    ck_assert_int_ge(dp_nn_params_add(p, "w", r0, c0), 0);
    ck_assert_int_ge(dp_nn_params_add(p, "b", 1, c0), 0);
    ck_assert_int_eq(dp_nn_params_alloc(p), DP_OK);
    for (size_t i = 0; i < p->n; i++) {
        p->param[i] = base + 0.25f * (float)i;
        p->m[i] = -0.5f * (float)i;
        p->v[i] = 1e-3f * (float)(i + 1);
    }
    p->adam_t = 17;
}

START_TEST(round_trip)
{
    make_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/run.h5", dir);
    dp_nn_params sel, plc, sel2, plc2;
    block(&sel, 3, 4, 1.0f);
    block(&plc, 2, 5, -7.0f);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    for (int i = 0; i < 100; i++) gsl_rng_get(r);
    int best[6] = {0, 1, 1, 0, 2, 1};
    float *sel_best = calloc(sel.n, sizeof(float)), *plc_best = calloc(plc.n, sizeof(float));
    for (size_t i = 0; i < sel.n; i++) sel_best[i] = (float)i / 3;
    for (size_t i = 0; i < plc.n; i++) plc_best[i] = -(float)i / 7;
    dp_h5io_ckpt ck = {.graph = "g", .n_ops = 6, .n_devices = 3, .trained_on = "{\"train\": []}", .features = "doppler",
                  .config_json = "{\"x\": 1}", .stage = 1, .episode = 123,
                  .running_sum = -4.5, .running_count = 9, .best_makespan = 3.25, .best_assignment = best,
                  .traj_episodes = 123, .traj_steps = 738, .rng_state = gsl_rng_state(r), .rng_size = gsl_rng_size(r),
                  .sel_best = sel_best, .plc_best = plc_best, .has_best = 1, .best_greedy = 2.5};
    snprintf(ck.rng_name, sizeof ck.rng_name, "%s", gsl_rng_name(r));
    snprintf(ck.run_id, sizeof ck.run_id, "%s", "00112233445566778899aabbccddeeff");
    dp_error err;
    ck_assert_msg(dp_h5io_ckpt_write(path, &ck, &sel, &plc, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(files_in_dir(), 1);   /* the temporary name is gone */
    /* read into fresh blocks of the same layout */
    block(&sel2, 3, 4, 0);
    block(&plc2, 2, 5, 0);
    int best2[6] = {0};
    float *sel_best2 = calloc(sel.n, sizeof(float)), *plc_best2 = calloc(plc.n, sizeof(float));
    gsl_rng *r2 = gsl_rng_alloc(gsl_rng_mt19937);
    dp_h5io_ckpt in = {.n_ops = 6, .n_devices = 3, .same_graph = 1, .best_assignment = best2, .rng_state = gsl_rng_state(r2), .rng_size = gsl_rng_size(r2),
                  .sel_best = sel_best2, .plc_best = plc_best2};
    ck_assert_msg(dp_h5io_ckpt_read(path, &in, &sel2, &plc2, 1, &err) == DP_OK, "%s", err.msg);
    ck_assert_str_eq(in.graph, "g");
    ck_assert_str_eq(in.run_id, "00112233445566778899aabbccddeeff");
    ck_assert_str_eq(in.config_json, "{\"x\": 1}");
    ck_assert_int_eq(in.stage, 1);
    ck_assert_int_eq(in.episode, 123);
    ck_assert_double_eq(in.running_sum, -4.5);
    ck_assert_int_eq(in.running_count, 9);
    ck_assert_double_eq(in.best_makespan, 3.25);
    ck_assert_int_eq(in.traj_steps, 738);
    ck_assert_int_eq(in.has_best, 1);
    ck_assert_double_eq(in.best_greedy, 2.5);
    ck_assert_int_eq(memcmp(best, best2, sizeof best), 0);
    ck_assert(same_tensors(&sel, sel.param, sel2.param));
    ck_assert(same_tensors(&plc, plc.param, plc2.param));
    ck_assert(same_tensors(&sel, sel.m, sel2.m));
    ck_assert(same_tensors(&plc, plc.v, plc2.v));
    ck_assert_int_eq(sel2.adam_t, 17);
    ck_assert(same_tensors(&sel, sel_best, sel_best2));
    ck_assert(same_tensors(&plc, plc_best, plc_best2));
    ck_assert(!same_tensors(&plc, plc.param, plc_best2));   /* the best block is its own */
    /* the generator continues where it stopped */
    ck_assert_str_eq(in.rng_name, gsl_rng_name(r));
    for (int i = 0; i < 5; i++) ck_assert_uint_eq(gsl_rng_get(r2), gsl_rng_get(r));
    free((char *)in.graph);
    free(in.config_json);
    /* without Adam (a new stage from --init): parameters read, moments and steps reset */
    dp_h5io_ckpt in2 = {.n_ops = 6, .n_devices = 3, .best_assignment = best2, .rng_state = gsl_rng_state(r2), .rng_size = gsl_rng_size(r2)};
    for (size_t i = 0; i < sel2.n; i++) sel2.m[i] = 99;
    ck_assert_msg(dp_h5io_ckpt_read(path, &in2, &sel2, &plc2, 0, &err) == DP_OK, "%s", err.msg);
    ck_assert(same_tensors(&sel, sel.param, sel2.param));
    for (size_t i = 0; i < sel2.n; i++) ck_assert_float_eq(sel2.m[i], 0);
    ck_assert_int_eq(sel2.adam_t, 0);
    free((char *)in2.graph);
    free(in2.config_json);
    /* a network of another shape is refused, naming the tensor */
    dp_nn_params wide;
    block(&wide, 3, 6, 0);
    dp_h5io_ckpt in3 = {.n_ops = 6, .n_devices = 3, .same_graph = 1, .best_assignment = best2, .rng_state = gsl_rng_state(r2), .rng_size = gsl_rng_size(r2)};
    ck_assert_int_ne(dp_h5io_ckpt_read(path, &in3, &wide, &plc2, 1, &err), DP_OK);
    ck_assert_msg(strstr(err.msg, "w") != NULL && strstr(err.msg, "shape") != NULL, "%s", err.msg);
    free((char *)in3.graph);
    free(in3.config_json);
    /* what it says about itself */
    dp_h5io_ckpt_info info;
    ck_assert_int_eq(dp_h5io_ckpt_read_info(path, &info, &err), DP_OK);
    ck_assert_int_eq(info.version, DP_H5IO_CKPT_VERSION);
    ck_assert(info.n_ops == 6 && info.n_devices == 3);
    ck_assert_str_eq(info.trained_on, "{\"train\": []}");
    dp_h5io_ckpt_info_free(&info);
    /* the config alone */
    char *json = NULL;
    ck_assert_int_eq(dp_h5io_ckpt_read_config(path, &json, &err), DP_OK);
    ck_assert_str_eq(json, "{\"x\": 1}");
    free(json);
    dp_nn_params_free(&wide);
    dp_nn_params_free(&sel); dp_nn_params_free(&plc); dp_nn_params_free(&sel2); dp_nn_params_free(&plc2);
    gsl_rng_free(r); gsl_rng_free(r2);
    free(sel_best); free(plc_best); free(sel_best2); free(plc_best2);
    remove_dir();
}
END_TEST

START_TEST(trajectory_rows)
{
    make_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/run.traj.h5", dir);
    dp_error err;
    ck_assert_msg(dp_h5io_traj_create(path, "g", 3, 2, "sim", "s", "{}", "0123456789abcdef0123456789abcdef", &err) == DP_OK, "%s", err.msg);
    long ne = -1, ns = -1;
    ck_assert_int_eq(dp_h5io_traj_count(path, &ne, &ns, &err), DP_OK);
    ck_assert(ne == 0 && ns == 0);
    char rid[40];
    ck_assert_int_eq(dp_h5io_traj_run_id(path, rid, sizeof rid, &err), DP_OK);
    ck_assert_str_eq(rid, "0123456789abcdef0123456789abcdef");
    dp_h5io_traj_episode ep[2] = {{.stage = 1, .episode = 0, .makespan = 5, .step_offset = 0, .n_steps = 3},
                             {.stage = 1, .episode = 1, .makespan = 4, .step_offset = 3, .n_steps = 3}};
    dp_h5io_traj_step st[6];
    for (int i = 0; i < 6; i++) st[i] = (dp_h5io_traj_step){.sel_op = i % 3, .sel_logp = -0.5f, .ready = 1, .plc_device = i % 2};
    ck_assert_msg(dp_h5io_traj_append(path, ep, 1, st, 3, &err) == DP_OK, "%s", err.msg);
    ck_assert_msg(dp_h5io_traj_append(path, ep + 1, 1, st + 3, 3, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(dp_h5io_traj_count(path, &ne, &ns, &err), DP_OK);
    ck_assert(ne == 2 && ns == 6);
    ck_assert_int_eq(files_in_dir(), 1);
    /* chunks are sized to the graph: two episodes of a 3-op graph are not a 16,384-row chunk of
     * steps and a 1,024-row chunk of episodes (460 kB before; about 20 kB now) */
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_msg(sb.st_size < 60000, "trajectory of 2 episodes of 3 ops is %lld bytes", (long long)sb.st_size);
    /* a resumed run cuts the file back to what its checkpoint accounts for */
    ck_assert_msg(dp_h5io_traj_truncate(path, 1, 3, &err) == DP_OK, "%s", err.msg);
    ck_assert_int_eq(dp_h5io_traj_count(path, &ne, &ns, &err), DP_OK);
    ck_assert(ne == 1 && ns == 3);
    /* a file that is not there */
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none.h5", dir);
    ck_assert_int_ne(dp_h5io_traj_count(missing, &ne, &ns, &err), DP_OK);
    ck_assert(strstr(err.msg, "none.h5") != NULL);
    remove_dir();
}
END_TEST

/* 1 when the attribute name at the root of path is a fixed-length string */
static int fixed_string_attr(const char *path, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    ck_assert_int_ge(a, 0);
    hid_t t = H5Aget_type(a);
    int fixed = H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) == 0 && H5Tget_cset(t) == H5T_CSET_UTF8;
    H5Tclose(t);
    H5Aclose(a);
    H5Fclose(f);
    return fixed;
}

/* replace the root attribute name of path by a variable-length string (as versions before 3
 * wrote them) */
static void make_vlen_attr(const char *path, const char *name, const char *value)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    ck_assert_int_ge(H5Adelete(f, name), 0);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(a, 0);
    ck_assert_int_ge(H5Awrite(a, t, &value), 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    ck_assert_int_ge(H5Fclose(f), 0);
}

START_TEST(strings_never_variable_length)
{
    make_dir();
    char ck_path[512], tj_path[512];
    snprintf(ck_path, sizeof ck_path, "%s/c.h5", dir);
    snprintf(tj_path, sizeof tj_path, "%s/t.h5", dir);
    dp_nn_params sel, plc;
    block(&sel, 2, 3, 1.0f);
    block(&plc, 3, 2, 2.0f);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    int assign[3] = {0, 1, 0};
    dp_h5io_ckpt ck = {.graph = "g\u00e9", .n_ops = 3, .n_devices = 2, .config_json = "{\"seed\": 1}", .stage = 0,
                  .rng_state = gsl_rng_state(r), .rng_size = gsl_rng_size(r), .best_assignment = assign};
    snprintf(ck.rng_name, sizeof ck.rng_name, "%s", gsl_rng_name(r));
    snprintf(ck.run_id, sizeof ck.run_id, "%s", "00ff");
    dp_error err;
    ck_assert_msg(dp_h5io_ckpt_write(ck_path, &ck, &sel, &plc, &err) == DP_OK, "%s", err.msg);
    ck_assert_msg(dp_h5io_traj_create(tj_path, "g", 3, 2, "sim", "s", "{}", "00ff", &err) == DP_OK, "%s", err.msg);
    const char *ck_attrs[] = {"format", "graph", "config", "run_id", "rng_name", "features", "trained_on"};
    for (size_t i = 0; i < sizeof ck_attrs / sizeof *ck_attrs; i++)
        ck_assert_msg(fixed_string_attr(ck_path, ck_attrs[i]), "checkpoint attribute %s", ck_attrs[i]);
    const char *tj_attrs[] = {"format", "graph", "oracle", "time_unit", "config", "run_id"};
    for (size_t i = 0; i < sizeof tj_attrs / sizeof *tj_attrs; i++)
        ck_assert_msg(fixed_string_attr(tj_path, tj_attrs[i]), "trajectory attribute %s", tj_attrs[i]);
    char *json = NULL;
    ck_assert_msg(dp_h5io_ckpt_read_config(ck_path, &json, &err) == DP_OK, "%s", err.msg);
    ck_assert_str_eq(json, "{\"seed\": 1}");
    free(json);
    dp_h5io_ckpt_info info;
    ck_assert_msg(dp_h5io_ckpt_read_info(ck_path, &info, &err) == DP_OK, "%s", err.msg);
    ck_assert_str_eq(info.graph, "g\u00e9");
    dp_h5io_ckpt_info_free(&info);
    /* a variable-length string (a file of an earlier version, or a crafted one) is refused unread,
     * naming the file and the attribute */
    make_vlen_attr(ck_path, "config", "{}");
    ck_assert_int_eq(dp_h5io_ckpt_read_config(ck_path, &json, &err), DP_EUNSUPPORTED);
    ck_assert_ptr_null(json);
    ck_assert_msg(strstr(err.msg, ck_path) && strstr(err.msg, "\"config\"") && strstr(err.msg, "variable-length"), "%s", err.msg);
    ck_assert_int_eq(dp_h5io_ckpt_read_info(ck_path, &info, &err), DP_EUNSUPPORTED);
    make_vlen_attr(ck_path, "format", "doppler-checkpoint");
    ck_assert_int_eq(dp_h5io_ckpt_read_config(ck_path, &json, &err), DP_EUNSUPPORTED);
    ck_assert_msg(strstr(err.msg, "\"format\"") != NULL, "%s", err.msg);
    make_vlen_attr(tj_path, "run_id", "00ff");
    char rid[40];
    ck_assert_int_eq(dp_h5io_traj_run_id(tj_path, rid, sizeof rid, &err), DP_EUNSUPPORTED);
    ck_assert_msg(strstr(err.msg, tj_path) && strstr(err.msg, "\"run_id\""), "%s", err.msg);
    dp_nn_params_free(&sel);
    dp_nn_params_free(&plc);
    gsl_rng_free(r);
    remove_dir();
}
END_TEST

/* set the root attribute name of path (an existing scalar of type t) to *value */
static void set_attr(const char *path, const char *name, hid_t t, const void *value)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    ck_assert_int_ge(a, 0);
    ck_assert_int_ge(H5Awrite(a, t, value), 0);
    H5Aclose(a);
    ck_assert_int_ge(H5Fclose(f), 0);
}

/* A counter out of range (a damaged or crafted file) is refused by name: a negative episode
 * corrupted the heap on resume, a negative trajectory count truncated the trajectory to an
 * unreadable file, stage 7 was taken (a review) */
START_TEST(counters_out_of_range)
{
    make_dir();
    char path[512], bad[512];
    snprintf(path, sizeof path, "%s/c.h5", dir);
    snprintf(bad, sizeof bad, "%s/bad.h5", dir);
    dp_nn_params sel, plc;
    block(&sel, 2, 3, 1.0f);
    block(&plc, 3, 2, 2.0f);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    int assign[3] = {0, 1, 0}, assign2[3];
    dp_h5io_ckpt ck = {.graph = "g", .n_ops = 3, .n_devices = 2, .config_json = "{}", .stage = 1, .episode = 40,
                       .running_count = 3, .traj_episodes = 40, .traj_steps = 120, .rng_state = gsl_rng_state(r),
                       .rng_size = gsl_rng_size(r), .best_assignment = assign};
    snprintf(ck.rng_name, sizeof ck.rng_name, "%s", gsl_rng_name(r));
    dp_error err;
    ck_assert_msg(dp_h5io_ckpt_write(path, &ck, &sel, &plc, &err) == DP_OK, "%s", err.msg);
    static const struct { const char *name; int is32, isdbl; double v; } cases[] = {
        {"stage", 1, 0, 7}, {"stage", 1, 0, -1}, {"episode", 0, 0, -5}, {"running_count", 0, 0, -1},
        {"running_sum", 0, 1, NAN}, {"traj_episodes", 0, 0, -10}, {"traj_steps", 0, 0, -1},
        {"simulations", 0, 0, -3}, {"stale", 0, 0, -2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *in = fopen(path, "rb"), *out = fopen(bad, "wb");
        int ch;
        while ((ch = fgetc(in)) != EOF) fputc(ch, out);
        fclose(in);
        fclose(out);
        const int32_t v32 = (int32_t)cases[i].v;
        const int64_t v64 = (int64_t)cases[i].v;
        const double vd = cases[i].v;
        if (cases[i].is32) set_attr(bad, cases[i].name, H5T_NATIVE_INT32, &v32);
        else if (cases[i].isdbl) set_attr(bad, cases[i].name, H5T_NATIVE_DOUBLE, &vd);
        else set_attr(bad, cases[i].name, H5T_NATIVE_INT64, &v64);
        dp_h5io_ckpt rd = {.n_ops = 3, .n_devices = 2, .same_graph = 1, .best_assignment = assign2,
                           .rng_state = gsl_rng_state(r), .rng_size = gsl_rng_size(r)};
        ck_assert_int_eq(dp_h5io_ckpt_read(bad, &rd, &sel, &plc, 1, &err), DP_EINVAL);
        ck_assert_msg(strstr(err.msg, cases[i].name) && strstr(err.msg, "out of range"), "%s: %s", cases[i].name, err.msg);
        free((char *)rd.graph);
        free(rd.config_json);
    }
    dp_nn_params_free(&sel);
    dp_nn_params_free(&plc);
    gsl_rng_free(r);
    remove_dir();
}
END_TEST

/* every free function takes NULL (six crashed on it: a review of the public headers) */
START_TEST(frees_take_null)
{
    dp_alloc_table_free(NULL);
    dp_nn_params_free(NULL);
    dp_mpnn_free(NULL);
    dp_h5io_ckpt_info_free(NULL);
    dp_runtime_traj_free(NULL);
    dp_runtime_select_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("checkpoint");
    TCase *t = tcase_create("checkpoint");
    tcase_add_test(t, round_trip);
    tcase_add_test(t, trajectory_rows);
    tcase_add_test(t, strings_never_variable_length);
    tcase_add_test(t, counters_out_of_range);
    tcase_add_test(t, frees_take_null);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
