/* dp_h5io.c: trajectory and checkpoint files in HDF5 (see dp_h5io.h).
 *
 * Every file is built or changed in memory and written whole through dp_h5file_commit (a
 * temporary name, checked writes and fsync, a rename): a full disk or any other failed write
 * leaves the previous file as it was and an error naming the file and the cause. Every HDF5
 * call's result is checked; the helpers return -1 on any failure. */
#include "dp_h5io.h"
#include "dp_alloc.h"
#include "dp_h5file.h"
#include "dp_alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static int attr_write(hid_t loc, const char *name, hid_t type, const void *val)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    if (sp < 0) return -1;
    hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    int bad = a < 0 || H5Awrite(a, type, val) < 0;
    if (a >= 0 && H5Aclose(a) < 0) bad = 1;
    if (H5Sclose(sp) < 0) bad = 1;
    return bad ? -1 : 0;
}

/* Strings are fixed-length UTF-8 (dp_h5file.h: never the global heap; h5py reads them as bytes). */
static int attr_str(hid_t loc, const char *name, const char *s)
{
    return dp_h5file_attr_write_str(loc, name, s);
}

static int attr_read(hid_t loc, const char *name, hid_t type, void *val)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return -1;
    /* a crafted file's variable-length type is never converted (dp_h5file.h) */
    hid_t ft = H5Aget_type(a);
    herr_t rc = ft < 0 || dp_h5file_type_has_vlen_str(ft) ? -1 : H5Aread(a, type, val);
    if (ft >= 0) H5Tclose(ft);
    H5Aclose(a);
    return rc < 0 ? -1 : 0;
}

/* A string attribute, malloc'd, or NULL with err naming path and the attribute (a
 * variable-length string, as files before version 3 held, is refused: dp_h5file.h). */
static char *attr_read_str(hid_t loc, const char *path, const char *name, dp_error *err)
{
    return dp_h5file_attr_read_str(loc, path, name, err);
}

/* DP_OK when the root's attribute format is want; else the refusal of a variable-length string
 * (a file of an earlier version) or "PATH: not a doppler WHAT". */
static int check_format(hid_t f, const char *path, const char *want, const char *what, dp_error *err)
{
    dp_error e;
    dp_error_clear(&e);
    char *fmt = attr_read_str(f, path, "format", &e);
    int ok = fmt && strcmp(fmt, want) == 0;
    free(fmt);
    if (ok) return DP_OK;
    if (!fmt && e.code == DP_EUNSUPPORTED) return dp_error_set(err, e.code, "%s", e.msg);
    return dp_error_set(err, DP_EINVAL, "%s: not a doppler %s", path, what);
}

/* The checkpoint's format version: DP_H5IO_CKPT_VERSION only. Versions 1 and 2 held variable-length
 * strings (refused by check_format before this is reached, unless crafted). */
static int check_version_of(hid_t f, const char *path, const char *what, int want, int32_t *ver, dp_error *err)
{
    *ver = 0;
    if (attr_read(f, "version", H5T_NATIVE_INT32, ver) || *ver != want)
        return dp_error_set(err, DP_EINVAL, "%s: %s format version %d, this build reads version %d only", path, what, (int)*ver,
                            want);
    return DP_OK;
}

static int check_version(hid_t f, const char *path, int32_t *ver, dp_error *err)
{
    return check_version_of(f, path, "checkpoint", DP_H5IO_CKPT_VERSION, ver, err);
}

/* A trajectory file of this format version: DP_H5IO_TRAJ_VERSION only (versions 1 and 2 held
 * variable-length strings, refused by check_format first). */
static int check_traj(hid_t f, const char *path, dp_error *err)
{
    int rc = check_format(f, path, "doppler-trajectory", "trajectory file", err);
    int32_t ver;
    if (rc == DP_OK) rc = check_version_of(f, path, "trajectory", DP_H5IO_TRAJ_VERSION, &ver, err);
    return rc;
}

int dp_h5io_traj_check(const char *path, dp_error *err)
{
    quiet();
    hid_t f = dp_h5file_open_read(path, "the trajectory file", err);
    if (f < 0) return err ? err->code : DP_EIO;
    int rc = check_traj(f, path, err);
    H5Fclose(f);
    return rc;
}

/* An optional string attribute (absent in files of earlier versions): *out NULL when absent. */
static int attr_read_opt_str(hid_t loc, const char *path, const char *name, char **out, dp_error *err)
{
    *out = NULL;
    if (H5Aexists(loc, name) <= 0) return DP_OK;
    *out = attr_read_str(loc, path, name, err);
    return *out ? DP_OK : (err ? err->code : DP_EINVAL);
}

/* ---- trajectory ---- */

/* One table per group: each column's name, its HDF5 type and where it lives in the row struct
 * (dp_h5io.h); the writer packs and the reader unpacks rows through these tables, so the layout
 * is written down once. */
typedef struct { const char *name; hid_t (*type)(void); size_t offset; } field;

static hid_t t_i32(void) { return H5T_NATIVE_INT32; }
static hid_t t_i64(void) { return H5T_NATIVE_INT64; }
static hid_t t_u64(void) { return H5T_NATIVE_UINT64; }
static hid_t t_f64(void) { return H5T_NATIVE_DOUBLE; }
static hid_t t_f32(void) { return H5T_NATIVE_FLOAT; }

#define EP(m) offsetof(dp_h5io_traj_episode, m)
#define ST(m) offsetof(dp_h5io_traj_step, m)
#define EV(m) offsetof(dp_h5io_traj_eval, m)
static const field ep_fields[] = {
    {"stage", t_i32, EP(stage)}, {"episode", t_i64, EP(episode)}, {"seed", t_u64, EP(seed)},
    {"makespan", t_f64, EP(makespan)}, {"reward", t_f64, EP(reward)}, {"wall_s", t_f64, EP(wall_s)},
    {"lr", t_f64, EP(lr)}, {"epsilon", t_f64, EP(epsilon)}, {"sel_agree", t_f64, EP(sel_agree)},
    {"plc_agree", t_f64, EP(plc_agree)}, {"step_offset", t_i64, EP(step_offset)}, {"n_steps", t_i32, EP(n_steps)},
};
static const field st_fields[] = {
    {"sel_op", t_i32, ST(sel_op)}, {"sel_logp", t_f32, ST(sel_logp)}, {"ready", t_i32, ST(ready)},
    {"plc_device", t_i32, ST(plc_device)}, {"plc_logp", t_f32, ST(plc_logp)},
};
static const field ev_fields[] = {
    {"stage", t_i32, EV(stage)}, {"episode", t_i64, EV(episode)}, {"makespan", t_f64, EV(makespan)},
    {"best", t_f64, EV(best)}, {"simulations", t_i64, EV(simulations)}, {"unix_s", t_f64, EV(unix_s)},
};
#undef EP
#undef ST
#undef EV
#define N_EP_FIELDS ((int)(sizeof ep_fields / sizeof ep_fields[0]))
#define N_ST_FIELDS ((int)(sizeof st_fields / sizeof st_fields[0]))
#define N_EV_FIELDS ((int)(sizeof ev_fields / sizeof ev_fields[0]))

static int make_group(hid_t f, const char *gname, const field *fs, int nf, hsize_t chunk)
{
    hid_t g = H5Gcreate2(f, gname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return -1;
    int bad = 0;
    for (int i = 0; i < nf && !bad; i++) {
        hsize_t dims = 0, maxd = H5S_UNLIMITED;
        hid_t sp = H5Screate_simple(1, &dims, &maxd);
        hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
        /* Fletcher32: a flipped bit in a row is refused on reading */
        bad = sp < 0 || pl < 0 || H5Pset_chunk(pl, 1, &chunk) < 0 || H5Pset_fletcher32(pl) < 0;
        hid_t d = bad ? -1 : H5Dcreate2(g, fs[i].name, fs[i].type(), sp, H5P_DEFAULT, pl, H5P_DEFAULT);
        if (d < 0 || H5Dclose(d) < 0) bad = 1;
        if (pl >= 0 && H5Pclose(pl) < 0) bad = 1;
        if (sp >= 0 && H5Sclose(sp) < 0) bad = 1;
    }
    if (H5Gclose(g) < 0) bad = 1;
    return bad ? -1 : 0;
}

int dp_h5io_traj_create(const char *path, const char *graph, int n_ops, int n_devices, const char *oracle,
                   const char *time_unit, const char *config_json, const char *run_id, dp_error *err)
{
    quiet();
    hid_t f = dp_h5file_create(path, err);
    if (f < 0) return DP_EIO;
    int32_t ver = DP_H5IO_TRAJ_VERSION, no = n_ops, nd = n_devices;
    /* chunks sized to the graph: about 16 episodes of steps per chunk, between 256 and 16,384
     * rows, so that a trajectory of a 12-op graph is not 450 kB of empty chunk */
    hsize_t step_chunk = 256;
    while (step_chunk < 16384 && step_chunk < (hsize_t)(n_ops > 0 ? n_ops : 1) * 16) step_chunk *= 2;
    int bad = attr_str(f, "format", "doppler-trajectory") || attr_write(f, "version", H5T_NATIVE_INT32, &ver) ||
              attr_str(f, "graph", graph ? graph : "") || attr_write(f, "n_ops", H5T_NATIVE_INT32, &no) ||
              attr_write(f, "n_devices", H5T_NATIVE_INT32, &nd) || attr_str(f, "oracle", oracle ? oracle : "") ||
              attr_str(f, "time_unit", time_unit ? time_unit : "") || attr_str(f, "config", config_json ? config_json : "{}") ||
              attr_str(f, "run_id", run_id ? run_id : "") ||
              make_group(f, "episodes", ep_fields, N_EP_FIELDS, 256) || make_group(f, "steps", st_fields, N_ST_FIELDS, step_chunk) ||
              make_group(f, "evaluations", ev_fields, N_EV_FIELDS, 256);
    if (bad) {
        dp_h5file_discard(f);
        return dp_error_set(err, DP_EIO, "%s: cannot build the trajectory file (HDF5 error)", path);
    }
    return dp_h5file_commit(f, path, "the trajectory file", err);
}

static long dset_len(hid_t loc, const char *name)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) return -1;
    hid_t sp = H5Dget_space(d);
    hsize_t n = 0;
    int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 && H5Sget_simple_extent_dims(sp, &n, NULL) == 1;
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(d);
    return ok ? (long)n : -1;
}

/* rows of /evaluations: 0 in a file of version 1, which has no such group */
static long evals_len(hid_t f)
{
    return H5Lexists(f, "evaluations", H5P_DEFAULT) > 0 ? dset_len(f, "evaluations/makespan") : 0;
}

int dp_h5io_traj_count_rows(const char *path, long *n_episodes, long *n_steps, long *n_evaluations, dp_error *err)
{
    quiet();
    hid_t f = dp_h5file_open_read(path, "the trajectory file", err);
    if (f < 0) return err ? err->code : DP_EIO;
    *n_episodes = dset_len(f, "episodes/makespan");
    *n_steps = dset_len(f, "steps/sel_op");
    long ne = evals_len(f);
    if (n_evaluations) *n_evaluations = ne;
    H5Fclose(f);
    if (*n_episodes < 0 || *n_steps < 0 || ne < 0) return dp_error_set(err, DP_EINVAL, "%s: not a doppler trajectory file", path);
    return DP_OK;
}

int dp_h5io_traj_count(const char *path, long *n_episodes, long *n_steps, dp_error *err)
{
    return dp_h5io_traj_count_rows(path, n_episodes, n_steps, NULL, err);
}

int dp_h5io_traj_run_id(const char *path, char *run_id, size_t cap, dp_error *err)
{
    quiet();
    hid_t f = dp_h5file_open_read(path, "the trajectory file", err);
    if (f < 0) return err ? err->code : DP_EIO;
    char *id = NULL;
    int rc = check_traj(f, path, err);
    if (rc == DP_OK) rc = attr_read_opt_str(f, path, "run_id", &id, err);
    H5Fclose(f);
    if (rc != DP_OK) return rc;
    snprintf(run_id, cap, "%s", id ? id : "");
    free(id);
    return DP_OK;
}

static int set_len(hid_t g, const field *fs, int nf, hsize_t n)
{
    for (int i = 0; i < nf; i++) {
        hid_t d = H5Dopen2(g, fs[i].name, H5P_DEFAULT);
        if (d < 0) return -1;
        herr_t rc = H5Dset_extent(d, &n);
        if (H5Dclose(d) < 0) rc = -1;
        if (rc < 0) return -1;
    }
    return 0;
}

int dp_h5io_traj_truncate_rows(const char *path, long n_episodes, long n_steps, long n_evaluations, dp_error *err)
{
    quiet();
    long ne, ns, nv;
    int rc = dp_h5io_traj_count_rows(path, &ne, &ns, &nv, err);
    if (rc != DP_OK) return rc;
    if (ne < n_episodes || ns < n_steps)
        return dp_error_set(err, DP_EINVAL, "%s: has %ld episodes and %ld steps, fewer than the checkpoint's %ld and %ld",
                            path, ne, ns, n_episodes, n_steps);
    if (n_evaluations > nv)
        return dp_error_set(err, DP_EINVAL, "%s: has %ld evaluation rows, fewer than the checkpoint's %ld", path, nv,
                            n_evaluations);
    if (n_evaluations < 0) n_evaluations = nv; /* a checkpoint that does not count them */
    if (ne == n_episodes && ns == n_steps && nv == n_evaluations) return DP_OK;
    hid_t f = dp_h5file_open_image(path, err);
    if (f < 0) return err ? err->code : DP_EIO;
    hid_t ge = H5Gopen2(f, "episodes", H5P_DEFAULT), gs = H5Gopen2(f, "steps", H5P_DEFAULT);
    int bad = ge < 0 || gs < 0 || set_len(ge, ep_fields, N_EP_FIELDS, (hsize_t)n_episodes) ||
              set_len(gs, st_fields, N_ST_FIELDS, (hsize_t)n_steps);
    if (ge >= 0 && H5Gclose(ge) < 0) bad = 1;
    if (gs >= 0 && H5Gclose(gs) < 0) bad = 1;
    if (!bad && nv != n_evaluations) {
        hid_t gv = H5Gopen2(f, "evaluations", H5P_DEFAULT);
        bad = gv < 0 || set_len(gv, ev_fields, N_EV_FIELDS, (hsize_t)n_evaluations);
        if (gv >= 0 && H5Gclose(gv) < 0) bad = 1;
    }
    if (bad) {
        dp_h5file_discard(f);
        return dp_error_set(err, DP_EIO, "%s: cannot truncate the trajectory file (HDF5 error)", path);
    }
    return dp_h5file_commit(f, path, "the trajectory file", err);
}

int dp_h5io_traj_truncate(const char *path, long n_episodes, long n_steps, dp_error *err)
{
    return dp_h5io_traj_truncate_rows(path, n_episodes, n_steps, -1, err);
}

static int append_field(hid_t g, const char *name, hid_t type, const void *data, hsize_t k)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d < 0) return -1;
    hid_t sp = H5Dget_space(d);
    hsize_t n0 = 0;
    int bad = sp < 0 || H5Sget_simple_extent_dims(sp, &n0, NULL) != 1;
    if (sp >= 0 && H5Sclose(sp) < 0) bad = 1;
    hsize_t n1 = n0 + k;
    if (!bad && H5Dset_extent(d, &n1) >= 0) {
        hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &k, NULL);
        bad = fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &n0, NULL, &k, NULL) < 0 ||
              H5Dwrite(d, type, ms, fs, H5P_DEFAULT, data) < 0;
        if (ms >= 0 && H5Sclose(ms) < 0) bad = 1;
        if (fs >= 0 && H5Sclose(fs) < 0) bad = 1;
    } else {
        bad = 1;
    }
    if (H5Dclose(d) < 0) bad = 1;
    return bad ? -1 : 0;
}

/* Append n rows (structs of row_size bytes) to group g, one column at a time packed into buf
 * (n x 8 bytes) through the group's field table. */
static int append_group(hid_t g, const field *fs, int nf, const void *rows, size_t row_size, long n, void *buf)
{
    for (int j = 0; j < nf; j++) {
        size_t w = H5Tget_size(fs[j].type());
        for (long i = 0; i < n; i++) memcpy((char *)buf + (size_t)i * w, (const char *)rows + (size_t)i * row_size + fs[j].offset, w);
        if (append_field(g, fs[j].name, fs[j].type(), buf, (hsize_t)n)) return -1;
    }
    return 0;
}

int dp_h5io_traj_append_rows(const char *path, const dp_h5io_traj_episode *ep, long n_ep, const dp_h5io_traj_step *st, long n_st,
                        const dp_h5io_traj_eval *ev, long n_ev, dp_error *err)
{
    quiet();
    if (n_ep <= 0 && n_st <= 0 && n_ev <= 0) return DP_OK;
    /* append to a copy in memory and write it whole over the file: a crash or a full disk at any
     * moment leaves the old or the new file whole (a few milliseconds per flush for a
     * 10^4-episode run) */
    size_t nmax = (size_t)(n_ep > n_st ? n_ep : n_st);
    if ((size_t)n_ev > nmax) nmax = (size_t)n_ev;
    void *buf = dp_alloc_malloc(nmax * 8);
    if (!buf) return dp_error_set(err, DP_ENOMEM, "%s: out of memory for %zu rows", path, nmax);
    hid_t f = dp_h5file_open_image(path, err);
    if (f < 0) {
        free(buf);
        return err ? err->code : DP_EIO;
    }
    hid_t ge = H5Gopen2(f, "episodes", H5P_DEFAULT), gs = H5Gopen2(f, "steps", H5P_DEFAULT);
    int bad = ge < 0 || gs < 0;
    if (!bad && n_ep > 0) bad = append_group(ge, ep_fields, N_EP_FIELDS, ep, sizeof *ep, n_ep, buf);
    if (!bad && n_st > 0) bad = append_group(gs, st_fields, N_ST_FIELDS, st, sizeof *st, n_st, buf);
    if (!bad && n_ev > 0) {
        /* a file of version 1 (a run resumed across the upgrade) gets the group now */
        if (H5Lexists(f, "evaluations", H5P_DEFAULT) <= 0) bad = make_group(f, "evaluations", ev_fields, N_EV_FIELDS, 256);
        hid_t gv = bad ? -1 : H5Gopen2(f, "evaluations", H5P_DEFAULT);
        bad |= gv < 0;
        if (!bad) bad = append_group(gv, ev_fields, N_EV_FIELDS, ev, sizeof *ev, n_ev, buf);
        if (gv >= 0 && H5Gclose(gv) < 0) bad = 1;
    }
    if (ge >= 0 && H5Gclose(ge) < 0) bad = 1;
    if (gs >= 0 && H5Gclose(gs) < 0) bad = 1;
    free(buf);
    if (bad) {
        dp_h5file_discard(f);
        return dp_error_set(err, DP_EIO, "%s: cannot append to the trajectory file (HDF5 error; not a doppler trajectory?)", path);
    }
    return dp_h5file_commit(f, path, "the trajectory file", err);
}

int dp_h5io_traj_append(const char *path, const dp_h5io_traj_episode *ep, long n_ep, const dp_h5io_traj_step *st, long n_st,
                   dp_error *err)
{
    return dp_h5io_traj_append_rows(path, ep, n_ep, st, n_st, NULL, 0, err);
}

/* Read every column of group gname into n rows (structs of row_size bytes, malloc'd into *rows)
 * through its field table; a missing group (evaluations in a version 1 layout) is 0 rows when
 * optional. The columns must all be 1-D and of one length. */
static int read_group(hid_t f, const char *path, const char *gname, const field *fs, int nf, size_t row_size, int optional,
                      void **rows, long *n, dp_error *err)
{
    *rows = NULL;
    *n = 0;
    if (optional && H5Lexists(f, gname, H5P_DEFAULT) <= 0) return DP_OK;
    char name[96];
    long len = -1;
    for (int j = 0; j < nf; j++) {
        snprintf(name, sizeof name, "%s/%s", gname, fs[j].name);
        long lj = H5Lexists(f, gname, H5P_DEFAULT) > 0 && H5Lexists(f, name, H5P_DEFAULT) > 0 ? dset_len(f, name) : -1;
        if (lj < 0) return dp_error_set(err, DP_EINVAL, "%s: no 1-D dataset /%s (not a doppler trajectory file)", path, name);
        if (j > 0 && lj != len)
            return dp_error_set(err, DP_EINVAL, "%s: /%s has %ld rows, /%s/%s %ld: a damaged trajectory file", path, name, lj, gname,
                                fs[0].name, len);
        len = lj;
    }
    char *out = dp_alloc_malloc_n(len > 0 ? (size_t)len : 1, row_size);
    void *col = dp_alloc_malloc_n(len > 0 ? (size_t)len : 1, 8);
    if (!out || !col) {
        free(out);
        free(col);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory for %ld rows of /%s", path, len, gname);
    }
    memset(out, 0, (len > 0 ? (size_t)len : 1) * row_size);
    for (int j = 0; j < nf && len > 0; j++) {
        snprintf(name, sizeof name, "%s/%s", gname, fs[j].name);
        hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
        int bad = d < 0 || H5Dread(d, fs[j].type(), H5S_ALL, H5S_ALL, H5P_DEFAULT, col) < 0;
        if (d >= 0) H5Dclose(d);
        if (bad) {
            free(out);
            free(col);
            return dp_error_set(err, DP_EINVAL, "%s: /%s cannot be read (a column of another type, or it fails its checksum: the file is damaged)",
                                path, name);
        }
        size_t w = H5Tget_size(fs[j].type());
        for (long i = 0; i < len; i++) memcpy(out + (size_t)i * row_size + fs[j].offset, (char *)col + (size_t)i * w, w);
    }
    free(col);
    *rows = out;
    *n = len;
    return DP_OK;
}

/* A string attribute of the root, malloc'd: "" when absent (run_id of older files). */
static int root_str(hid_t f, const char *path, const char *name, char **out, dp_error *err)
{
    int rc = attr_read_opt_str(f, path, name, out, err);
    if (rc == DP_OK && !*out && !(*out = dp_alloc_strdup(""))) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
    return rc;
}

int dp_h5io_traj_read(const char *path, dp_h5io_traj *t, dp_error *err)
{
    memset(t, 0, sizeof *t);
    quiet();
    hid_t f = dp_h5file_open_read(path, "the trajectory file", err);
    if (f < 0) return err ? err->code : DP_EIO;
    int rc = check_traj(f, path, err);
    int32_t no = 0, nd = 0;
    if (rc == DP_OK && (attr_read(f, "n_ops", H5T_NATIVE_INT32, &no) || attr_read(f, "n_devices", H5T_NATIVE_INT32, &nd)))
        rc = dp_error_set(err, DP_EINVAL, "%s: no integer attributes n_ops and n_devices (not a doppler trajectory file)", path);
    t->version = DP_H5IO_TRAJ_VERSION;
    t->n_ops = no;
    t->n_devices = nd;
    if (rc == DP_OK) rc = root_str(f, path, "graph", &t->graph, err);
    if (rc == DP_OK) rc = root_str(f, path, "oracle", &t->oracle, err);
    if (rc == DP_OK) rc = root_str(f, path, "time_unit", &t->time_unit, err);
    if (rc == DP_OK) rc = root_str(f, path, "config", &t->config_json, err);
    if (rc == DP_OK) rc = root_str(f, path, "run_id", &t->run_id, err);
    void *rows;
    if (rc == DP_OK && (rc = read_group(f, path, "episodes", ep_fields, N_EP_FIELDS, sizeof *t->episodes, 0, &rows, &t->n_episodes, err)) == DP_OK)
        t->episodes = rows;
    if (rc == DP_OK && (rc = read_group(f, path, "steps", st_fields, N_ST_FIELDS, sizeof *t->steps, 0, &rows, &t->n_steps, err)) == DP_OK)
        t->steps = rows;
    if (rc == DP_OK &&
        (rc = read_group(f, path, "evaluations", ev_fields, N_EV_FIELDS, sizeof *t->evaluations, 1, &rows, &t->n_evaluations, err)) == DP_OK)
        t->evaluations = rows;
    H5Fclose(f);
    if (rc != DP_OK) dp_h5io_traj_free(t);
    return rc;
}

void dp_h5io_traj_free(dp_h5io_traj *t)
{
    if (!t) return;
    free(t->graph);
    free(t->oracle);
    free(t->time_unit);
    free(t->config_json);
    free(t->run_id);
    free(t->episodes);
    free(t->steps);
    free(t->evaluations);
    memset(t, 0, sizeof *t);
}

dp_h5io_traj *dp_h5io_traj_open(const char *path, dp_error *err)
{
    dp_h5io_traj *t = dp_alloc_calloc(1, sizeof *t);
    if (!t) {
        dp_error_set(err, DP_ENOMEM, "%s: out of memory", path ? path : "trajectory");
        return NULL;
    }
    if (dp_h5io_traj_read(path, t, err) != DP_OK) {
        free(t);
        return NULL;
    }
    return t;
}

void dp_h5io_traj_close(dp_h5io_traj *t)
{
    dp_h5io_traj_free(t);
    free(t);
}

int dp_h5io_traj_get_int(const dp_h5io_traj *t, const char *name)
{
    if (strcmp(name, "version") == 0) return t->version;
    if (strcmp(name, "n_ops") == 0) return t->n_ops;
    if (strcmp(name, "n_devices") == 0) return t->n_devices;
    return -1;
}

const char *dp_h5io_traj_get_text(const dp_h5io_traj *t, const char *name)
{
    /* (dp_h5io_traj_read gives every text, "" when the file has none) */
    return strcmp(name, "graph") == 0 ? t->graph : strcmp(name, "oracle") == 0 ? t->oracle
         : strcmp(name, "time_unit") == 0 ? t->time_unit : strcmp(name, "config") == 0 ? t->config_json
         : strcmp(name, "run_id") == 0 ? t->run_id : NULL;
}

/* A table's columns, row size, row count and rows (t may be NULL for the columns alone); -1
 * for an unknown table. */
static int traj_table(const dp_h5io_traj *t, const char *table, const field **fs, size_t *row, long *n,
                      const char **rows)
{
    if (strcmp(table, "episodes") == 0) {
        *fs = ep_fields, *row = sizeof(dp_h5io_traj_episode);
        if (t) *n = t->n_episodes, *rows = (const char *)t->episodes;
        return N_EP_FIELDS;
    }
    if (strcmp(table, "steps") == 0) {
        *fs = st_fields, *row = sizeof(dp_h5io_traj_step);
        if (t) *n = t->n_steps, *rows = (const char *)t->steps;
        return N_ST_FIELDS;
    }
    if (strcmp(table, "evaluations") == 0) {
        *fs = ev_fields, *row = sizeof(dp_h5io_traj_eval);
        if (t) *n = t->n_evaluations, *rows = (const char *)t->evaluations;
        return N_EV_FIELDS;
    }
    return -1;
}

long dp_h5io_traj_get_n_rows(const dp_h5io_traj *t, const char *table)
{
    const field *fs;
    size_t row;
    long n = 0;
    const char *rows;
    return traj_table(t, table, &fs, &row, &n, &rows) < 0 ? -1 : n;
}

/* 'i', 'l', 'u', 'f', 'd' and the byte size of a column type */
static char column_code(hid_t (*type)(void), size_t *size)
{
    const char code = type == t_i32 ? 'i' : type == t_i64 ? 'l' : type == t_u64 ? 'u' : type == t_f32 ? 'f' : 'd';
    if (size) *size = code == 'i' || code == 'f' ? 4 : 8;
    return code;
}

const char *dp_h5io_traj_column_name(const char *table, int i)
{
    const field *fs;
    size_t row;
    int nf = traj_table(NULL, table, &fs, &row, NULL, NULL);
    return i >= 0 && i < nf ? fs[i].name : NULL;
}

char dp_h5io_traj_column_type(const char *table, int i)
{
    const field *fs;
    size_t row;
    int nf = traj_table(NULL, table, &fs, &row, NULL, NULL);
    return i >= 0 && i < nf ? column_code(fs[i].type, NULL) : 0;
}

int dp_h5io_traj_get_column(const dp_h5io_traj *t, const char *table, const char *column, void *out, dp_error *err)
{
    const field *fs;
    size_t row;
    long n = 0;
    const char *rows = NULL;
    int nf = traj_table(t, table, &fs, &row, &n, &rows);
    if (nf < 0) return dp_error_set(err, DP_EINVAL, "trajectory: no table \"%s\" (episodes, steps, evaluations)", table);
    for (int i = 0; i < nf; i++) {
        if (strcmp(fs[i].name, column) != 0) continue;
        size_t size;
        column_code(fs[i].type, &size);
        for (long r = 0; r < n; r++) memcpy((char *)out + (size_t)r * size, rows + (size_t)r * row + fs[i].offset, size);
        return DP_OK;
    }
    return dp_error_set(err, DP_EINVAL, "trajectory: table \"%s\" has no column \"%s\"", table, column);
}

/* ---- checkpoints ---- */

/* A fixed-size dataset, chunked whole with HDF5's Fletcher32 checksum, so that a flipped bit
 * is refused when the checkpoint is loaded instead of being trained or placed with. */
static int write_dset(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data)
{
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t pl = dp_h5file_checked_dcpl(rank, dims);
    int bad = sp < 0 || pl < 0;
    hid_t d = bad ? -1 : H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    if (d < 0 || H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) bad = 1;
    if (d >= 0 && H5Dclose(d) < 0) bad = 1;
    if (pl >= 0 && pl != H5P_DEFAULT && H5Pclose(pl) < 0) bad = 1;
    if (sp >= 0 && H5Sclose(sp) < 0) bad = 1;
    return bad ? -1 : 0;
}

static int write_block(hid_t f, const char *name, const dp_nn_params *p, const float *best)
{
    hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return -1;
    int64_t t = p->adam_t;
    int bad = attr_write(g, "adam_t", H5T_NATIVE_INT64, &t);
    const char *sub[4] = {"param", "adam_m", "adam_v", "best"};
    const float *buf[4] = {p->param, p->m, p->v, best};
    for (int s = 0; s < (best ? 4 : 3) && !bad; s++) {
        hid_t h = H5Gcreate2(g, sub[s], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (h < 0) { bad = 1; break; }
        for (int i = 0; i < p->n_tensors && !bad; i++) {
            hsize_t dims[2] = {(hsize_t)p->t[i].rows, (hsize_t)p->t[i].cols};
            bad |= write_dset(h, p->t[i].name, H5T_NATIVE_FLOAT, 2, dims, buf[s] + p->t[i].offset);
        }
        if (H5Gclose(h) < 0) bad = 1;
    }
    if (H5Gclose(g) < 0) bad = 1;
    return bad ? -1 : 0;
}

int dp_h5io_ckpt_write(const char *path, const dp_h5io_ckpt *ck, const dp_nn_params *sel, const dp_nn_params *plc,
                  dp_error *err)
{
    quiet();
    hid_t f = dp_h5file_create(path, err);
    if (f < 0) return DP_EIO;
    int32_t ver = DP_H5IO_CKPT_VERSION, no = ck->n_ops, nd = ck->n_devices;
    int bad = attr_str(f, "format", "doppler-checkpoint") || attr_write(f, "version", H5T_NATIVE_INT32, &ver) ||
              attr_str(f, "trained_on", ck->trained_on ? ck->trained_on : "{}") ||
              attr_str(f, "features", ck->features ? ck->features : "") ||
              attr_str(f, "graph", ck->graph ? ck->graph : "") || attr_write(f, "n_ops", H5T_NATIVE_INT32, &no) ||
              attr_write(f, "n_devices", H5T_NATIVE_INT32, &nd) ||
              attr_str(f, "config", ck->config_json ? ck->config_json : "{}") ||
              attr_str(f, "run_id", ck->run_id) ||
              attr_write(f, "stage", H5T_NATIVE_INT32, &ck->stage) ||
              attr_write(f, "episode", H5T_NATIVE_INT64, &ck->episode) ||
              attr_write(f, "running_sum", H5T_NATIVE_DOUBLE, &ck->running_sum) ||
              attr_write(f, "running_count", H5T_NATIVE_INT64, &ck->running_count) ||
              attr_write(f, "best_makespan", H5T_NATIVE_DOUBLE, &ck->best_makespan) ||
              attr_write(f, "traj_episodes", H5T_NATIVE_INT64, &ck->traj_episodes) ||
              attr_write(f, "traj_steps", H5T_NATIVE_INT64, &ck->traj_steps) ||
              attr_write(f, "traj_evaluations", H5T_NATIVE_INT64, &ck->traj_evaluations) ||
              attr_write(f, "simulations", H5T_NATIVE_INT64, &ck->simulations) ||
              attr_write(f, "stage_simulations0", H5T_NATIVE_INT64, &ck->stage_simulations0) ||
              attr_write(f, "stale", H5T_NATIVE_INT64, &ck->stale) ||
              attr_write(f, "last_greedy", H5T_NATIVE_DOUBLE, &ck->last_greedy) ||
              attr_write(f, "seconds", H5T_NATIVE_DOUBLE, &ck->seconds) ||
              attr_write(f, "stage_seconds0", H5T_NATIVE_DOUBLE, &ck->stage_seconds0) || attr_str(f, "rng_name", ck->rng_name);
    /* the makespans in the unit every command prints, beside the raw ones */
    if (!bad && ck->time_scale > 0) {
        const double sc = ck->time_scale, bm = ck->best_makespan / sc;
        bad = attr_str(f, "time_unit", ck->time_unit ? ck->time_unit : "") ||
              attr_write(f, "time_scale", H5T_NATIVE_DOUBLE, &sc) ||
              attr_write(f, "best_makespan_printed", H5T_NATIVE_DOUBLE, &bm);
        if (!bad && ck->has_best) {
            const double bg = ck->best_greedy / sc;
            bad = attr_write(f, "best_greedy_printed", H5T_NATIVE_DOUBLE, &bg);
        }
    }
    if (!bad) {
        hsize_t n = ck->rng_size;
        bad |= write_dset(f, "rng_state", H5T_NATIVE_UINT8, 1, &n, ck->rng_state);
        n = (hsize_t)ck->n_ops;
        if (ck->best_assignment) bad |= write_dset(f, "best_assignment", H5T_NATIVE_INT, 1, &n, ck->best_assignment);
        const char *b0 = ck->blocks[0] ? ck->blocks[0] : "sel", *b1 = ck->blocks[1] ? ck->blocks[1] : "plc";
        bad |= write_block(f, b0, sel, ck->has_best ? ck->sel_best : NULL) ||
               write_block(f, b1, plc, ck->has_best ? ck->plc_best : NULL);
        if (ck->has_best) bad |= attr_write(f, "best_greedy", H5T_NATIVE_DOUBLE, &ck->best_greedy);
        if (!bad && ck->method_state) bad |= attr_str(f, "method_state", ck->method_state);
        if (!bad && ck->n_method_ints > 0) {
            const hsize_t d1 = (hsize_t)ck->n_method_ints;
            bad |= write_dset(f, "method_ints", H5T_NATIVE_INT, 1, &d1, ck->method_ints);
        }
        if (!bad && ck->sil_n > 0) {
            const int32_t k = ck->sil_n;
            const hsize_t d1 = (hsize_t)k, d2[2] = {(hsize_t)k, (hsize_t)ck->n_ops};
            bad |= attr_write(f, "sil_n", H5T_NATIVE_INT32, &k) ||
                   write_dset(f, "sil_makespan", H5T_NATIVE_DOUBLE, 1, &d1, ck->sil_ms) ||
                   write_dset(f, "sil_ops", H5T_NATIVE_INT, 2, d2, ck->sil_ops) ||
                   write_dset(f, "sil_dev", H5T_NATIVE_INT, 2, d2, ck->sil_dev);
        }
        if (!bad && ck->sil_graphs > 0) {
            size_t placements = 0, steps = 0;
            for (int i = 0; i < ck->sil_graphs; i++) {
                placements += (size_t)ck->sil_graph_n[i];
                steps += (size_t)ck->sil_graph_n[i] * (size_t)ck->sil_graph_ops[i];
            }
            if (placements > 0) {
                const int32_t k = ck->sil_graphs;
                const hsize_t dg = (hsize_t)k, dp = (hsize_t)placements, ds = (hsize_t)steps;
                bad |= attr_write(f, "sil_graphs", H5T_NATIVE_INT32, &k) ||
                       write_dset(f, "sil_graph_n", H5T_NATIVE_INT, 1, &dg, ck->sil_graph_n) ||
                       write_dset(f, "sil_all_makespan", H5T_NATIVE_DOUBLE, 1, &dp, ck->sil_all_ms) ||
                       write_dset(f, "sil_all_ops", H5T_NATIVE_INT, 1, &ds, ck->sil_all_ops) ||
                       write_dset(f, "sil_all_dev", H5T_NATIVE_INT, 1, &ds, ck->sil_all_dev);
            }
        }
    }
    if (bad) {
        dp_h5file_discard(f);
        return dp_error_set(err, DP_EIO, "%s: cannot build the checkpoint (HDF5 error)", path);
    }
    return dp_h5file_commit(f, path, "the checkpoint", err);
}

int dp_h5io_ckpt_read_config(const char *path, char **json, dp_error *err)
{
    quiet();
    hid_t f = dp_h5file_open_read(path, "the checkpoint", err);
    if (f < 0) return err ? err->code : DP_EIO;
    *json = NULL;
    int rc = check_format(f, path, "doppler-checkpoint", "checkpoint", err);
    if (rc == DP_OK && !(*json = attr_read_str(f, path, "config", err))) rc = err ? err->code : DP_EINVAL;
    H5Fclose(f);
    return rc;
}

int dp_h5io_ckpt_read_info(const char *path, dp_h5io_ckpt_info *info, dp_error *err)
{
    memset(info, 0, sizeof *info);
    quiet();
    hid_t f = dp_h5file_open_read(path, "the checkpoint", err);
    if (f < 0) return err ? err->code : DP_EIO;
    int rc = check_format(f, path, "doppler-checkpoint", "checkpoint", err);
    int32_t ver = 0, no = 0, nd = 0;
    if (rc != DP_OK) {
    } else if ((rc = check_version(f, path, &ver, err)) != DP_OK) {
    } else if (attr_read(f, "n_ops", H5T_NATIVE_INT32, &no) || attr_read(f, "n_devices", H5T_NATIVE_INT32, &nd)) {
        rc = dp_error_set(err, DP_EINVAL, "%s: checkpoint attributes n_ops, n_devices missing", path);
    } else {
        info->version = ver;
        info->n_ops = no;
        info->n_devices = nd;
        if (!(info->graph = attr_read_str(f, path, "graph", err)) || !(info->config_json = attr_read_str(f, path, "config", err)))
            rc = err ? err->code : DP_EINVAL;
        else
            rc = attr_read_opt_str(f, path, "trained_on", &info->trained_on, err);
        if (rc == DP_OK && H5Aexists(f, "traj_episodes") > 0 &&
            attr_read(f, "traj_episodes", H5T_NATIVE_INT64, &info->traj_episodes))
            rc = dp_error_set(err, DP_EINVAL, "%s: attribute traj_episodes cannot be read", path);
    }
    H5Fclose(f);
    if (rc != DP_OK) dp_h5io_ckpt_info_free(info);
    return rc;
}

void dp_h5io_ckpt_info_free(dp_h5io_ckpt_info *info)
{
    if (!info) return;
    free(info->graph);
    free(info->config_json);
    free(info->trained_on);
    memset(info, 0, sizeof *info);
}

/* Read a fixed-size dataset of the expected shape. Returns 0, -2 when it is missing or of
 * another shape, -3 when its bytes cannot be read (a failed Fletcher32 checksum: damaged). */
static int read_dset(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *want, void *data)
{
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return -2;
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) return -2;
    hid_t sp = H5Dget_space(d);
    hsize_t dims[4] = {0, 0, 0, 0};
    int r = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
    int rc = -2;
    if (r == rank && r <= 4 && H5Sget_simple_extent_dims(sp, dims, NULL) == r) {
        rc = 0;
        for (int i = 0; i < rank; i++)
            if (dims[i] != want[i]) rc = -2;
        hid_t ft = rc == 0 ? H5Dget_type(d) : -1;
        if (rc == 0 && (ft < 0 || dp_h5file_type_has_vlen_str(ft))) rc = -2; /* never converted (dp_h5file.h) */
        if (ft >= 0) H5Tclose(ft);
        if (rc == 0) rc = H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 ? -3 : 0;
    }
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(d);
    return rc;
}

static const char *dset_problem(int r)
{
    return r == -3 ? "fails its checksum or cannot be read: the file is damaged" : "has another shape or is missing";
}

static int read_block(hid_t f, const char *path, const char *name, dp_nn_params *p, int with_adam, float *best,
                      dp_error *err)
{
    hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
    if (g < 0) return dp_error_set(err, DP_EINVAL, "%s: no /%s group", path, name);
    int64_t t = 0;
    if (attr_read(g, "adam_t", H5T_NATIVE_INT64, &t) != 0) {
        H5Gclose(g);
        return dp_error_set(err, DP_EINVAL, "%s: /%s has no readable attribute adam_t", path, name);
    }
    const char *sub[4] = {"param", "adam_m", "adam_v", "best"};
    float *buf[4] = {p->param, p->m, p->v, best};
    int rc = DP_OK;
    for (int s = 0; s < 4 && rc == DP_OK; s++) {
        if ((s == 1 || s == 2) && !with_adam) continue;
        if (s == 3 && !best) continue;
        hid_t h = H5Gopen2(g, sub[s], H5P_DEFAULT);
        if (h < 0) { rc = dp_error_set(err, DP_EINVAL, "%s: no /%s/%s group", path, name, sub[s]); break; }
        for (int i = 0; i < p->n_tensors; i++) {
            hsize_t dims[2] = {(hsize_t)p->t[i].rows, (hsize_t)p->t[i].cols};
            int r = read_dset(h, p->t[i].name, H5T_NATIVE_FLOAT, 2, dims, buf[s] + p->t[i].offset);
            if (r == -3) {
                rc = dp_error_set(err, DP_EINVAL, "%s: /%s/%s/%s %s", path, name, sub[s], p->t[i].name, dset_problem(r));
                break;
            }
            if (r != 0) {
                rc = dp_error_set(err, DP_EINVAL, "%s: /%s/%s/%s %s (expected %d x %d: was the checkpoint made with other network sizes?)",
                                  path, name, sub[s], p->t[i].name, dset_problem(r), p->t[i].rows, p->t[i].cols);
                break;
            }
        }
        H5Gclose(h);
    }
    H5Gclose(g);
    if (rc == DP_OK) {
        if (with_adam) {
            p->adam_t = (long)t;
        } else {
            memset(p->m, 0, p->n * sizeof(float));
            memset(p->v, 0, p->n * sizeof(float));
            p->adam_t = 0;
        }
    }
    return rc;
}

/* The buffers of several graphs (dp_h5io_ckpt.sil_graphs), when the file has them and the caller
 * resumes the same run: each graph's placements in range of its own ops and devices. */
static int read_sil_graphs(hid_t f, const char *path, dp_h5io_ckpt *ck, dp_error *err)
{
    const int want = ck->sil_graphs;
    ck->sil_graph_n = NULL;
    ck->sil_all_ms = NULL;
    ck->sil_all_ops = ck->sil_all_dev = NULL;
    if (!ck->same_graph || want <= 0 || H5Aexists(f, "sil_graphs") <= 0) return DP_OK; /* not asked for, or none */
    int32_t k = 0;
    if (attr_read(f, "sil_graphs", H5T_NATIVE_INT32, &k) || k < 1 || k > (1 << 20))
        return dp_error_set(err, DP_EINVAL, "%s: attribute sil_graphs missing or out of range", path);
    if (k != want)
        return dp_error_set(err, DP_EINVAL, "%s: self-imitation buffers of %d graphs, this run has %d", path, (int)k, want);
    const hsize_t dg = (hsize_t)k;
    int *cnt = dp_alloc_malloc((size_t)k * sizeof *cnt);
    if (!cnt) return dp_error_set(err, DP_ENOMEM, "out of memory");
    int bad = read_dset(f, "sil_graph_n", H5T_NATIVE_INT, 1, &dg, cnt) != 0;
    size_t placements = 0, steps = 0;
    for (int i = 0; !bad && i < k; i++) {
        bad = cnt[i] < 0 || cnt[i] > (1 << 16);
        placements += (size_t)cnt[i];
        steps += (size_t)cnt[i] * (size_t)ck->sil_graph_ops[i];
    }
    double *ms = bad ? NULL : dp_alloc_malloc(placements * sizeof *ms + 1);
    int *ops = bad ? NULL : dp_alloc_malloc(steps * sizeof *ops + 1), *dev = bad ? NULL : dp_alloc_malloc(steps * sizeof *dev + 1);
    if (!bad && (!ms || !ops || !dev)) {
        free(cnt); free(ms); free(ops); free(dev);
        return dp_error_set(err, DP_ENOMEM, "out of memory for the self-imitation buffers of %s", path);
    }
    const hsize_t dp = (hsize_t)placements, ds = (hsize_t)steps;
    if (!bad) bad = read_dset(f, "sil_all_makespan", H5T_NATIVE_DOUBLE, 1, &dp, ms) ||
                    read_dset(f, "sil_all_ops", H5T_NATIVE_INT, 1, &ds, ops) ||
                    read_dset(f, "sil_all_dev", H5T_NATIVE_INT, 1, &ds, dev);
    size_t o = 0;
    for (int i = 0; !bad && i < k; i++)
        for (size_t t = 0; !bad && t < (size_t)cnt[i] * (size_t)ck->sil_graph_ops[i]; t++, o++)
            bad = ops[o] < 0 || ops[o] >= ck->sil_graph_ops[i] || dev[o] < 0 || dev[o] >= ck->sil_graph_devices[i];
    if (bad) {
        free(cnt); free(ms); free(ops); free(dev);
        return dp_error_set(err, DP_EINVAL, "%s: the self-imitation buffers (sil_graph_n, sil_all_makespan, sil_all_ops, "
                            "sil_all_dev) are missing, of another shape or out of range", path);
    }
    ck->sil_graph_n = cnt;
    ck->sil_all_ms = ms;
    ck->sil_all_ops = ops;
    ck->sil_all_dev = dev;
    return DP_OK;
}

int dp_h5io_ckpt_read(const char *path, dp_h5io_ckpt *ck, dp_nn_params *sel, dp_nn_params *plc, int with_adam, dp_error *err)
{
    quiet();
    hid_t f = dp_h5file_open_read(path, "the checkpoint", err);
    if (f < 0) return err ? err->code : DP_EIO;
    int rc = check_format(f, path, "doppler-checkpoint", "checkpoint", err);
    if (rc != DP_OK) goto out;
    int32_t no = 0, nd = 0, ver = 0;
    if ((rc = check_version(f, path, &ver, err)) != DP_OK) goto out;
    if (attr_read(f, "n_ops", H5T_NATIVE_INT32, &no) || attr_read(f, "n_devices", H5T_NATIVE_INT32, &nd)) {
        rc = dp_error_set(err, DP_EINVAL, "%s: checkpoint attributes n_ops, n_devices missing", path);
        goto out;
    }
    if (ck->same_graph && (no != ck->n_ops || nd != ck->n_devices)) {
        rc = dp_error_set(err, DP_EINVAL, "%s: made for %d ops on %d devices, not %d ops on %d devices", path, no, nd,
                          ck->n_ops, ck->n_devices);
        goto out;
    }
    if (!(ck->graph = attr_read_str(f, path, "graph", err)) || !(ck->config_json = attr_read_str(f, path, "config", err))) {
        rc = err ? err->code : DP_EINVAL;
        goto out;
    }
    if (attr_read(f, "stage", H5T_NATIVE_INT32, &ck->stage) || attr_read(f, "episode", H5T_NATIVE_INT64, &ck->episode) ||
        attr_read(f, "running_sum", H5T_NATIVE_DOUBLE, &ck->running_sum) ||
        attr_read(f, "running_count", H5T_NATIVE_INT64, &ck->running_count) ||
        attr_read(f, "best_makespan", H5T_NATIVE_DOUBLE, &ck->best_makespan) ||
        attr_read(f, "traj_episodes", H5T_NATIVE_INT64, &ck->traj_episodes) ||
        attr_read(f, "traj_steps", H5T_NATIVE_INT64, &ck->traj_steps)) {
        rc = dp_error_set(err, DP_EINVAL, "%s: checkpoint attributes missing", path);
        goto out;
    }
    /* counters of this version; a checkpoint of an older one has neither */
    ck->traj_evaluations = -1;
    ck->simulations = 0;
    ck->stage_simulations0 = -1;
    ck->stale = 0;
    if (H5Aexists(f, "stale") > 0 && attr_read(f, "stale", H5T_NATIVE_INT64, &ck->stale)) {
        rc = dp_error_set(err, DP_EINVAL, "%s: attribute stale cannot be read", path);
        goto out;
    }
    ck->seconds = ck->stage_seconds0 = -1;
    if ((H5Aexists(f, "seconds") > 0 && attr_read(f, "seconds", H5T_NATIVE_DOUBLE, &ck->seconds)) ||
        (H5Aexists(f, "stage_seconds0") > 0 && attr_read(f, "stage_seconds0", H5T_NATIVE_DOUBLE, &ck->stage_seconds0))) {
        rc = dp_error_set(err, DP_EINVAL, "%s: attribute seconds or stage_seconds0 cannot be read", path);
        goto out;
    }
    if (!(ck->seconds >= -1) || !(ck->stage_seconds0 >= -1) || !isfinite(ck->seconds) || !isfinite(ck->stage_seconds0))
        ck->seconds = ck->stage_seconds0 = -1; /* a damaged clock: the resumed run counts from now */
    ck->last_greedy = NAN;
    if (H5Aexists(f, "last_greedy") > 0 && attr_read(f, "last_greedy", H5T_NATIVE_DOUBLE, &ck->last_greedy)) {
        rc = dp_error_set(err, DP_EINVAL, "%s: attribute last_greedy cannot be read", path);
        goto out;
    }
    if ((H5Aexists(f, "traj_evaluations") > 0 && attr_read(f, "traj_evaluations", H5T_NATIVE_INT64, &ck->traj_evaluations)) ||
        (H5Aexists(f, "simulations") > 0 && attr_read(f, "simulations", H5T_NATIVE_INT64, &ck->simulations)) ||
        (H5Aexists(f, "stage_simulations0") > 0 &&
         attr_read(f, "stage_simulations0", H5T_NATIVE_INT64, &ck->stage_simulations0))) {
        rc = dp_error_set(err, DP_EINVAL, "%s: attribute traj_evaluations, simulations or stage_simulations0 cannot be read", path);
        goto out;
    }
    /* counters in range: a negative episode or trajectory count corrupted the heap on resume and
     * truncated a trajectory to an unreadable file (a review) */
    {
        const char *bad = ck->stage < 0 || ck->stage > 2 ? "stage" /* dp_train_stage_kind */
                          : ck->episode < 0                                              ? "episode"
                          : ck->running_count < 0                                        ? "running_count"
                          : !isfinite(ck->running_sum)                                   ? "running_sum"
                          : ck->traj_episodes < 0                                        ? "traj_episodes"
                          : ck->traj_steps < 0                                           ? "traj_steps"
                          : ck->traj_evaluations < -1                                    ? "traj_evaluations"
                          : ck->simulations < 0                                          ? "simulations"
                          : ck->stage_simulations0 < -1                                  ? "stage_simulations0"
                          : ck->stale < 0                                                ? "stale"
                                                                                         : NULL;
        if (bad) {
            rc = dp_error_set(err, DP_EINVAL, "%s: attribute %s out of range (a damaged checkpoint)", path, bad);
            goto out;
        }
    }
    char *rn = attr_read_str(f, path, "rng_name", err), *id = NULL;
    if (!rn || (rc = attr_read_opt_str(f, path, "run_id", &id, err)) != DP_OK) {
        free(rn);
        rc = err ? err->code : DP_EINVAL;
        goto out;
    }
    snprintf(ck->rng_name, sizeof ck->rng_name, "%s", rn);
    snprintf(ck->run_id, sizeof ck->run_id, "%s", id ? id : "");
    free(rn);
    free(id);
    hsize_t n = ck->rng_size;
    int r;
    if (ck->rng_state && (r = read_dset(f, "rng_state", H5T_NATIVE_UINT8, 1, &n, ck->rng_state)) != 0) {
        rc = dp_error_set(err, DP_EINVAL, "%s: rng_state %s", path,
                          r == -3 ? dset_problem(r) : "missing or of another generator size");
        goto out;
    }
    n = (hsize_t)ck->n_ops;
    if (ck->same_graph && ck->best_assignment && (r = read_dset(f, "best_assignment", H5T_NATIVE_INT, 1, &n, ck->best_assignment)) != 0) {
        rc = dp_error_set(err, DP_EINVAL, "%s: best_assignment %s", path, dset_problem(r));
        goto out;
    }
    ck->sil_n = 0;
    ck->sil_ms = NULL;
    ck->sil_ops = ck->sil_dev = NULL;
    if (ck->same_graph && H5Aexists(f, "sil_n") > 0) {
        int32_t k = 0;
        if (attr_read(f, "sil_n", H5T_NATIVE_INT32, &k) || k < 1 || k > (1 << 16)) {
            rc = dp_error_set(err, DP_EINVAL, "%s: attribute sil_n missing or out of range", path);
            goto out;
        }
        const hsize_t d1 = (hsize_t)k, d2[2] = {(hsize_t)k, (hsize_t)ck->n_ops};
        ck->sil_ms = dp_alloc_malloc((size_t)k * sizeof *ck->sil_ms);
        ck->sil_ops = dp_alloc_malloc((size_t)k * (size_t)ck->n_ops * sizeof(int) + 1);
        ck->sil_dev = dp_alloc_malloc((size_t)k * (size_t)ck->n_ops * sizeof(int) + 1);
        int bad = !ck->sil_ms || !ck->sil_ops || !ck->sil_dev;
        if (!bad) bad = read_dset(f, "sil_makespan", H5T_NATIVE_DOUBLE, 1, &d1, ck->sil_ms) ||
                        read_dset(f, "sil_ops", H5T_NATIVE_INT, 2, d2, ck->sil_ops) ||
                        read_dset(f, "sil_dev", H5T_NATIVE_INT, 2, d2, ck->sil_dev);
        for (size_t i = 0; !bad && i < (size_t)k * (size_t)ck->n_ops; i++)
            bad = ck->sil_ops[i] < 0 || ck->sil_ops[i] >= ck->n_ops || ck->sil_dev[i] < 0 || ck->sil_dev[i] >= ck->n_devices;
        if (bad) {
            free(ck->sil_ms); free(ck->sil_ops); free(ck->sil_dev);
            ck->sil_ms = NULL;
            ck->sil_ops = ck->sil_dev = NULL;
            rc = dp_error_set(err, DP_EINVAL, "%s: the self-imitation buffer (sil_makespan, sil_ops, sil_dev) is missing, "
                              "of another shape or out of range", path);
            goto out;
        }
        ck->sil_n = k;
    }
    if ((rc = read_sil_graphs(f, path, ck, err)) != DP_OK) goto out;
    ck->has_best = H5Aexists(f, "best_greedy") > 0;
    ck->best_greedy = INFINITY;
    if (ck->has_best && attr_read(f, "best_greedy", H5T_NATIVE_DOUBLE, &ck->best_greedy) != 0) {
        rc = dp_error_set(err, DP_EINVAL, "%s: attribute best_greedy cannot be read", path);
        goto out;
    }
    if (ck->read_method_state && (rc = attr_read_opt_str(f, path, "method_state", &ck->method_state, err)) != DP_OK) goto out;
    if (ck->method_ints) {
        const hsize_t d1 = (hsize_t)ck->n_method_ints;
        if ((r = read_dset(f, "method_ints", H5T_NATIVE_INT, 1, &d1, ck->method_ints)) != 0) {
            rc = dp_error_set(err, DP_EINVAL, "%s: method_ints %s (expected %lld entries)", path, dset_problem(r),
                              (long long)ck->n_method_ints);
            goto out;
        }
    }
    /* the method's own groups, or DOPPLER's in a file written before it had them */
    const char *b0 = "sel", *b1 = "plc";
    if (ck->blocks[0] && H5Lexists(f, ck->blocks[0], H5P_DEFAULT) > 0) {
        b0 = ck->blocks[0];
        b1 = ck->blocks[1] ? ck->blocks[1] : "plc";
    }
    if ((rc = read_block(f, path, b0, sel, with_adam, ck->has_best ? ck->sel_best : NULL, err)) != DP_OK) goto out;
    rc = read_block(f, path, b1, plc, with_adam, ck->has_best ? ck->plc_best : NULL, err);
out:
    H5Fclose(f);
    return rc;
}

int dp_h5io_ckpt_read_best_sample(const char *path, const char *graph, int n_ops, int n_devices, int *assignment,
                                  double *makespan, int *found, dp_error *err)
{
    *found = 0;
    quiet();
    hid_t f = dp_h5file_open_read(path, "the checkpoint", err);
    if (f < 0) return err ? err->code : DP_EIO;
    int rc = DP_OK;
    char *name = NULL;
    int32_t no = 0, nd = 0;
    double best = INFINITY;
    if ((rc = check_format(f, path, "doppler-checkpoint", "checkpoint", err)) != DP_OK) goto out;
    if (!(name = attr_read_str(f, path, "graph", err))) {
        rc = err ? err->code : DP_EINVAL;
        goto out;
    }
    /* another graph, device count or no sample yet: nothing to give (not an error) */
    if ( strcmp(name, graph ? graph : "") != 0 || attr_read(f, "n_ops", H5T_NATIVE_INT32, &no) ||
        attr_read(f, "n_devices", H5T_NATIVE_INT32, &nd) || no != n_ops || nd != n_devices ||
        attr_read(f, "best_makespan", H5T_NATIVE_DOUBLE, &best) || !isfinite(best) || H5Lexists(f, "best_assignment", H5P_DEFAULT) <= 0)
        goto out;
    hsize_t n = (hsize_t)n_ops;
    int r = read_dset(f, "best_assignment", H5T_NATIVE_INT, 1, &n, assignment);
    if (r != 0) {
        rc = dp_error_set(err, DP_EINVAL, "%s: best_assignment %s", path, dset_problem(r));
        goto out;
    }
    for (int v = 0; v < n_ops; v++)
        if (assignment[v] < 0 || assignment[v] >= n_devices) {
            rc = dp_error_set(err, DP_EINVAL, "%s: best_assignment[%d] = %d is not a device of 0..%d", path, v, assignment[v],
                              n_devices - 1);
            goto out;
        }
    if (makespan) *makespan = best;
    *found = 1;
out:
    free(name);
    H5Fclose(f);
    return rc;
}

/* ---- run identifiers ---- */

void dp_h5io_run_id_new(char *buf, size_t cap)
{
    unsigned char b[16];
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        while (got < sizeof b) {
            ssize_t r = read(fd, b + got, sizeof b - got);
            if (r <= 0) break;
            got += (size_t)r;
        }
        close(fd);
    }
    if (got < sizeof b) {
        /* no /dev/urandom: the time and the process id, mixed (splitmix64) */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        for (size_t i = 0; i < sizeof b; i++) {
            x += 0x9e3779b97f4a7c15ull;
            uint64_t z = x;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            b[i] = (unsigned char)(z ^ (z >> 31));
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < sizeof b && k + 2 < cap; i++, k += 2) snprintf(buf + k, 3, "%02x", b[i]);
    if (cap) buf[k < cap ? k : cap - 1] = '\0';
}

int dp_h5io_traj_check_run(const char *trajectory, const char *checkpoint, const char *run_id, dp_error *err)
{
    if (!run_id || !run_id[0]) return DP_OK; /* a checkpoint of an older version: nothing to compare */
    char other[64];
    int rc = dp_h5io_traj_run_id(trajectory, other, sizeof other, err);
    if (rc != DP_OK) return rc;
    if (strcmp(other, run_id) != 0)
        return dp_error_set(err, DP_EINVAL, "%s: the trajectory of another run (run id \"%s\"), not of the run of %s (run id %s): "
                            "give that run's own trajectory file, or start a new run", trajectory, other, checkpoint, run_id);
    return DP_OK;
}

/* The entry of a trained_on list without its "costs" (the graph, its size and device count). */
static int same_graph_entry(json_t *a, json_t *b)
{
    static const char *keys[3] = {"graph", "n_ops", "n_devices"};
    for (int k = 0; k < 3; k++)
        if (!json_equal(json_object_get(a, keys[k]), json_object_get(b, keys[k]))) return 0;
    return 1;
}

int dp_h5io_trained_on_check(const char *path, const char *theirs, const char *mine, dp_error *err)
{
    if (!theirs) return DP_OK;
    if (!mine) return dp_error_set(err, DP_ENOMEM, "out of memory");
    if (strcmp(theirs, mine) == 0) return DP_OK;
    json_t *t = json_loads(theirs, 0, NULL), *m = json_loads(mine, 0, NULL);
    int rc = DP_OK, other = !t || !m;
    static const char *lists[2] = {"train", "validation"};
    for (int l = 0; l < 2 && !other && rc == DP_OK; l++) {
        json_t *lt = json_object_get(t, lists[l]), *lm = json_object_get(m, lists[l]);
        if (!json_is_array(lt) || !json_is_array(lm) || json_array_size(lt) != json_array_size(lm)) {
            other = 1;
            break;
        }
        for (size_t i = 0; i < json_array_size(lt) && !other && rc == DP_OK; i++) {
            json_t *a = json_array_get(lt, i), *b = json_array_get(lm, i);
            if (!same_graph_entry(a, b)) {
                other = 1;
                break;
            }
            /* the costs' fingerprint (absent in files before 2026-12-02), then the simulator's
             * beyond the costs (absent before 2026-12-06 and where the oracle is no simulator) */
            static const struct { const char *key, *what, *options; } fp[2] = {
                {"costs", "costs", "another machine than the run's: --devices, --bandwidth, --bandwidth-range, --comm-ratio, "
                 "--comm-ratio-range, --peak-flops, --latency, --topology or --calibration"},
                {"engine", "simulator", "other simulator options than the run's: --transfer, --chunks, --mode, --streams, "
                 "--queue, --memory-limit, --memory-policy, --memory-penalty, --copy-engines, or the topology's devices "
                 "and links"}};
            for (int f = 0; f < 2 && rc == DP_OK; f++) {
                json_t *va = json_object_get(a, fp[f].key), *vb = json_object_get(b, fp[f].key);
                if (va && !json_equal(va, vb))
                    rc = dp_error_set(err, DP_EINVAL, "%s: the %s differ%s: %s graph %s was trained on %s of fingerprint %s, "
                                      "here %s %s (%s): --resume continues the same run", path, fp[f].what,
                                      f ? "s" : "", lists[l], json_string_value(json_object_get(a, "graph")),
                                      f ? "a simulator" : "costs", json_is_string(va) ? json_string_value(va) : "?",
                                      f ? "it is" : "they are", json_is_string(vb) ? json_string_value(vb) : "none", fp[f].options);
            }
        }
    }
    json_decref(t);
    json_decref(m);
    if (other)
        rc = dp_error_set(err, DP_EINVAL, "%s: a run on other graphs (%s), not on these (%s): --resume continues the same run",
                          path, theirs, mine);
    return rc;
}
