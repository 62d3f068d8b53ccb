/* sweep_exec.c: the local process pool, the MPI work queue and the results writer
 * (see sweep_exec.h). */
#define _GNU_SOURCE
#include "config.h"
#include "dp_alloc.h"
#include "dp_file.h"
#include "dp_calib.h"
#include "dp_costmodel.h"
#include "dp_topology.h"
#include "dp_exec_backend.h"
#include "dp_gen.h"
#include "sweep_exec.h"
#include "results.h"
#include "run.h"

#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_MPI
#include <mpi.h>
#endif

void dp_sweep_options_init(dp_sweep_options *o)
{
    memset(o, 0, sizeof *o);
    o->out = "results.h5";
    o->shard_n = 1;
    o->progress = 1;
}

/* ----------------------------------------------------- pre-flight ---- */

int dp_sweep_check_out(const char *out, dp_error *err)
{
    if (dp_file_is_descriptor(out))
        return dp_error_set(err, DP_EIO, "--out %s: a descriptor: the results are an HDF5 file and its CSV, name a file", out);
    char dir[PATH_MAX];
    const char *slash = strrchr(out, '/');
    if (!slash) return DP_OK;
    snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
    struct stat st;
    if (stat(dir, &st) != 0)
    {
        char q[PATH_MAX + 64];
        return dp_error_set(err, DP_EIO, "--out %s: the folder %s does not exist (create it first: mkdir -p %s)", out, dir,
                            dp_file_shell_word(dir, q, sizeof q));
    }
    if (!S_ISDIR(st.st_mode)) return dp_error_set(err, DP_EIO, "--out %s: %s is not a folder", out, dir);
    return DP_OK;
}

/* A run's parameters that build its configs (dp_run_is_config_param) as canonical text: the runs
 * of one text build one config, checked once (a sweep of thousands of runs has a handful) */
typedef struct config_of_run {
    char *text;
    long k;
} config_of_run;

static int config_of_run_cmp(const void *pa, const void *pb)
{
    const config_of_run *a = pa, *b = pb;
    const int c = strcmp(a->text, b->text);
    return c ? c : (a->k > b->k) - (a->k < b->k);
}

static char *config_text(const json_t *params)
{
    json_t *sub = json_object();
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)params, name, v)
        if (dp_run_is_config_param(name)) json_object_set(sub, name, v);
    char *text = sub ? dp_sweep_canonical(sub) : NULL;
    json_decref(sub);
    return text;
}

/* A failing check of run k (message ek) for dp_sweep_check_runs: the earliest run's message is
 * the one said; each run counts once however many of its checks fail */
static void run_bad(long k, const dp_error *ek, unsigned char *bad, long *first, dp_error *e)
{
    bad[k] = 1;
    if (*first < 0 || k < *first) {
        *first = k;
        *e = *ek;
    }
}

/* the runs group[i..j) that share group[i].text (sorted by config_of_run_cmp) */
static long group_end(const config_of_run *group, long i, long n)
{
    long j = i + 1;
    while (j < n && strcmp(group[j].text, group[i].text) == 0) j++;
    return j;
}

int dp_sweep_check_runs(const dp_sweep *s, int shard_i, int shard_n, dp_error *err)
{
    long first = -1, n_cfg = 0;
    dp_error e;
    dp_error_clear(&e);
    const size_t nr = (size_t)(s->n_runs ? s->n_runs : 1);
    config_of_run *cfg = dp_alloc_malloc_n(nr, sizeof *cfg);
    unsigned char *bad = dp_alloc_calloc_n(nr, 1);
    if (!cfg || !bad) {
        free(cfg);
        free(bad);
        return dp_error_set(err, DP_ENOMEM, "out of memory");
    }
    int rc = DP_OK;
    for (long k = 0; k < s->n_runs && rc == DP_OK; k++) {
        if (!dp_sweep_in_shard(k, shard_i, shard_n)) continue;
        dp_error ek;
        dp_error_clear(&ek);
        if (dp_run_check(s->runs[k].params, &ek) == DP_OK) {
            /* its configs are checked below, once per distinct one */
            if (!(cfg[n_cfg].text = config_text(s->runs[k].params))) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
            else cfg[n_cfg++].k = k;
            continue;
        }
        run_bad(k, &ek, bad, &first, &e);
    }
    /* each distinct config built as its runs would build it (dp_run_check_config): a misspelt
     * cfg__ key or a bad train_config or config file was found when the runs ran, after the
     * results file was made (a review) */
    if (rc == DP_OK) qsort(cfg, (size_t)n_cfg, sizeof *cfg, config_of_run_cmp);
    for (long i = 0, j; rc == DP_OK && i < n_cfg; i = j) {
        j = group_end(cfg, i, n_cfg);
        dp_error ek;
        dp_error_clear(&ek);
        const int rck = dp_run_check_config(s->runs[cfg[i].k].params, s->dir, &ek);
        if (rck == DP_ENOMEM) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
        if (rck == DP_OK || rc != DP_OK) continue;
        for (long q = i; q < j; q++) run_bad(cfg[q].k, &ek, bad, &first, &e);
    }
    for (long i = 0; i < n_cfg; i++) free(cfg[i].text);
    free(cfg);
    long n_bad = 0;
    for (long k = 0; k < s->n_runs; k++) n_bad += bad[k];
    free(bad);
    if (rc != DP_OK) return rc;
    if (first < 0) return DP_OK;
    char more[64] = "";
    if (n_bad > 1) snprintf(more, sizeof more, " (and %ld more run%s)", n_bad - 1, n_bad == 2 ? "" : "s");
    return dp_error_set(err, DP_EINVAL, "%s: run %s (%s): %s%s; nothing was run or written", s->path[0] ? s->path : s->name,
                        s->runs[first].key, s->runs[first].params_text, e.msg, more);
}

/* The parameters that name input files, and whether a plain word is a bundled name. */
static const char *const input_params[] = {"graph", "topology", "calibration", "config", "train_config", "checkpoint",
                                           "proposals", "assignment", NULL};

int dp_sweep_check_inputs(const dp_sweep *s, int shard_i, int shard_n, dp_error *err)
{
    /* distinct (parameter, value) pairs in first-seen order, with how many runs name each */
    typedef struct {
        const char *param, *value;
        long runs;
        int missing; /* 1: not there, 2: there but not a readable file (a folder), 3: a gen: graph
                      * that cannot be generated, 4: a topology or calibration file that cannot be
                      * loaded */
        dp_topology *topo; /* a topology, loaded (its devices are a calibration's) */
        dp_calib *calib;   /* a calibration, loaded */
        char msg[sizeof(((dp_error *)0)->msg)];
    } input;
    input *in = NULL;
    long n = 0, cap = 0, n_missing = 0, first = -1;
    int rc = DP_OK;
    for (long k = 0; k < s->n_runs; k++) {
        if (!dp_sweep_in_shard(k, shard_i, shard_n)) continue;
        for (int p = 0; input_params[p]; p++) {
            json_t *v = json_object_get(s->runs[k].params, input_params[p]);
            if (!json_is_string(v)) continue;
            const char *val = json_string_value(v);
            /* a placement's file named by {graph}, {devices} or {seed}: looked for when it runs */
            if (strcmp(input_params[p], "assignment") == 0 && strchr(val, '{')) continue;
            long i = 0;
            while (i < n && !(strcmp(in[i].param, input_params[p]) == 0 && strcmp(in[i].value, val) == 0)) i++;
            if (i == n) {
                if (n == cap) {
                    long nc = cap ? 2 * cap : 16;
                    input *ni = dp_alloc_realloc(in, (size_t)nc * sizeof *ni);
                    if (!ni) { free(in); return dp_error_set(err, DP_ENOMEM, "out of memory"); }
                    in = ni;
                    cap = nc;
                }
                memset(&in[n], 0, sizeof in[n]);
                in[n].param = input_params[p];
                in[n].value = val;
                char buf[PATH_MAX];
                dp_error e;
                dp_error_clear(&e);
                int bundled = strcmp(input_params[p], "topology") == 0 && !strchr(val, '/') && !strchr(val, ':') && !strstr(val, ".json");
                if (strcmp(input_params[p], "graph") == 0 && strncmp(val, "gen:", 4) == 0) {
                    /* a generated graph, made once here and freed: dp_run_check read its spec's
                     * names and values (dp_gen_spec_check), but a generator's ranges and its
                     * checks across parameters (tp against heads) are made as it generates
                     * (llama-block?tp=64 started its runs, which failed after the results files
                     * were made: a review). About a second for the largest generators. */
                    dp_graph *g = dp_gen_spec(val, &e);
                    if (g) dp_graph_free(g);
                    else if (e.code == DP_ENOMEM) { free(in); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", val); }
                    else {
                        in[n].missing = 3;
                        snprintf(in[n].msg, sizeof in[n].msg, "%s", e.msg);
                    }
                } else if (bundled) {
                    if (!dp_cli_topology_path(val)) {
                        in[n].missing = 1;
                        dp_machine_topology_missing(val, &e);
                        snprintf(in[n].msg, sizeof in[n].msg, "%s", e.msg);
                    }
                } else if (!dp_run_resolve_path(val, s->dir, buf, sizeof buf, &e)) {
                    in[n].missing = e.code == DP_EINVAL ? 2 : 1; /* 2: there, but not a readable file */
                    snprintf(in[n].msg, sizeof in[n].msg, "%s", e.msg);
                }
                /* a topology or calibration that is there is read here, as the runs read it: a
                 * wrong one (a negative bandwidth, a misspelt key) failed every run naming it,
                 * after the results files were made (a review of the machine's inputs) */
                const int is_topo = strcmp(input_params[p], "topology") == 0;
                if (!in[n].missing && (is_topo || strcmp(input_params[p], "calibration") == 0)) {
                    const char *path = bundled ? dp_cli_topology_path(val) : buf;
                    if (is_topo) in[n].topo = dp_topology_load(path, &e);
                    else in[n].calib = dp_calib_load(path, &e);
                    if (!in[n].topo && !in[n].calib) {
                        if (e.code == DP_ENOMEM) rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", val);
                        in[n].missing = 4;
                        snprintf(in[n].msg, sizeof in[n].msg, "%s", e.msg);
                    }
                }
                if (in[n].missing) {
                    n_missing++;
                    if (first < 0) first = n;
                }
                n++;
            }
            in[i].runs++;
        }
    }
    if (rc != DP_OK) first = -1;
    if (first >= 0) {
        char more[1024] = "";
        for (long i = 0; i < n; i++) {
            if (!in[i].missing || i == first) continue;
            size_t L = strlen(more);
            if (L > 900) { strcat(more, ", ..."); break; }
            snprintf(more + L, sizeof more - L, "%s%s", L ? ", " : "", in[i].value);
        }
        rc = dp_error_set(err, DP_EIO, "%s: %s \"%s\" (named by %ld run%s) %s: %s%s%s%s; no run was started",
                          s->path[0] ? s->path : s->name, in[first].param, in[first].value, in[first].runs,
                          in[first].runs == 1 ? "" : "s",
                          in[first].missing == 4   ? "cannot be loaded"
                          : in[first].missing == 3 ? "cannot be generated"
                          : in[first].missing == 2 ? "cannot be read"
                                                   : "is missing",
                          in[first].msg, n_missing > 1 ? " (also wrong: " : "", more, n_missing > 1 ? ")" : "");
    }
    /* each run's topology against its devices, and its calibration against its topology: device
     * and route names the topology has (each run failed on them after the results files were
     * made: a review) */
    long n_bad = 0, bad_run = -1;
    dp_error bad;
    dp_error_clear(&bad);
    for (long k = 0; k < s->n_runs && rc == DP_OK; k++) {
        if (!dp_sweep_in_shard(k, shard_i, shard_n)) continue;
        const dp_topology *t = NULL;
        const dp_calib *c = NULL;
        for (long i = 0; i < n; i++) {
            json_t *v = json_object_get(s->runs[k].params, in[i].param);
            if (!json_is_string(v) || strcmp(json_string_value(v), in[i].value) != 0) continue;
            if (in[i].topo) t = in[i].topo;
            if (in[i].calib) c = in[i].calib;
        }
        /* devices given beside a topology of another count (dp_machine_load refuses it) */
        json_t *jd = json_object_get(s->runs[k].params, "devices");
        const int devices_off = t && json_is_integer(jd) && json_integer_value(jd) != t->n_devices;
        if (devices_off) {
            if (bad_run < 0)
                dp_error_set(&bad, DP_EINVAL, "devices %lld: topology %s has %d devices", (long long)json_integer_value(jd),
                             t->name, t->n_devices);
        }
        if (devices_off || (t && c && dp_costmodel_check_names(t, c, bad_run < 0 ? &bad : NULL) != DP_OK)) {
            if (bad_run < 0) bad_run = k;
            n_bad++;
        }
    }
    if (rc == DP_OK && bad_run >= 0) {
        char more[64] = "";
        if (n_bad > 1) snprintf(more, sizeof more, " (and %ld more run%s)", n_bad - 1, n_bad == 2 ? "" : "s");
        rc = dp_error_set(err, DP_EINVAL, "%s: run %s (%s): %s%s; no run was started", s->path[0] ? s->path : s->name,
                          s->runs[bad_run].key, s->runs[bad_run].params_text, bad.msg, more);
    }
    for (long i = 0; i < n; i++) {
        dp_topology_free(in[i].topo);
        dp_calib_free(in[i].calib);
    }
    free(in);
    return rc;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------- the collector ---- */

/* What the writer of a results file keeps: the open file, the runs still to do, the counts. */
typedef struct collector {
    const dp_sweep *s;
    const dp_sweep_options *o;
    dp_results *res;
    char out_dir[PATH_MAX];   /* folder of the results file */
    char runs_rel[PATH_MAX];  /* "<stem>.runs": the run folders, relative to out_dir */
    long *pending;            /* run indices still to do, in expansion order */
    long n_pending, next;
    dp_sweep_summary *sum;
    double t0, last_print;
    long last_done;
    int running;
    int jobs;                 /* runs at once (for the ETA) */
    char note[PATH_MAX + 96]; /* recovered_note's text */
    double *t_started;        /* (n_runs) when each running run started; NaN otherwise */
    /* wall seconds of the runs finished now, per method (the ETA's estimate of a run) */
    struct eta_method { const char *method; double sum_s; long n; } *eta;
    int n_eta;
} collector;

static const char *run_method(const dp_sweep *s, long k)
{
    const char *m = json_string_value(json_object_get(s->runs[k].params, "method"));
    return m ? m : "";
}

static struct eta_method *eta_find(collector *c, const char *method)
{
    for (int i = 0; i < c->n_eta; i++)
        if (strcmp(c->eta[i].method, method) == 0) return &c->eta[i];
    return NULL;
}

static void split_out(const char *out, char *dir, size_t dcap, char *rel, size_t rcap)
{
    const char *slash = strrchr(out, '/');
    if (slash) snprintf(dir, dcap, "%.*s", (int)(slash - out), out);
    else snprintf(dir, dcap, ".");
    if (slash == out) snprintf(dir, dcap, "/");
    const char *base = slash ? slash + 1 : out;
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".h5") == 0) n -= 3;
    snprintf(rel, rcap, "%.*s.runs", (int)n, base);
}

/* Rows of runs the config still has (a sorted copy of the keys, searched by bsearch). */
typedef struct keyset_ctx {
    const char **keys;
    long n;
} keyset_ctx;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int keep_in_config(const dp_result *row, void *ctx)
{
    const keyset_ctx *k = ctx;
    const char *key = row->key;
    return bsearch(&key, k->keys, (size_t)k->n, sizeof(char *), cmp_str) != NULL;
}

/* The keys of the runs of s in shard shard_i of shard_n (0 of 1: every run), sorted for
 * keep_in_config; k->keys malloc'd. DP_OK or DP_ENOMEM. */
static int keyset_of_runs(const dp_sweep *s, int shard_i, int shard_n, keyset_ctx *k)
{
    k->n = 0;
    k->keys = dp_alloc_malloc_n(s->n_runs ? (size_t)s->n_runs : 1, sizeof(char *));
    if (!k->keys) return DP_ENOMEM;
    for (long i = 0; i < s->n_runs; i++)
        if (dp_sweep_in_shard(i, shard_i, shard_n)) k->keys[k->n++] = s->runs[i].key;
    qsort(k->keys, (size_t)k->n, sizeof(char *), cmp_str);
    return DP_OK;
}

/* a row to keep when failed runs are run again: an ok one, or a failed one of a run this config
 * does not have (it stays, as the other rows of another grid do; it was dropped without a word,
 * and counted as run again: a review) */
static int keep_unless_retried(const dp_result *row, void *ctx)
{
    return strcmp(row->status, "ok") == 0 || !keep_in_config(row, ctx);
}

/* A row's graph file record: its "graph" parameter (NULL for a generated graph or none) and its
 * metrics' graph_hash (0 when it has none: a failed run, a generated graph, an older file) */
static const char *row_graph(const dp_result *r, json_t **params_out, uint64_t *hash)
{
    *hash = 0;
    *params_out = NULL;
    json_t *m = json_loads(r->metrics ? r->metrics : "{}", 0, NULL);
    const char *h = json_string_value(json_object_get(m, "graph_hash"));
    if (h) *hash = strtoull(h, NULL, 16);
    json_decref(m);
    if (!*hash) return NULL;
    json_t *p = json_loads(r->params ? r->params : "{}", 0, NULL);
    const char *g = json_string_value(json_object_get(p, "graph"));
    if (!g || strncmp(g, "gen:", 4) == 0) {
        json_decref(p);
        return NULL;
    }
    *params_out = p;
    return g;
}

/* The graph files of the runs already in res against the files they name now (resolved as a
 * run resolves them, from the working folder, then the config's): a relative "graph" resumed
 * from another working folder, or a graph file edited since, would put rows of two graphs under
 * one name (a review: shards from two folders merged rows of 24 and 168 ops as "g.json").
 * DP_EINVAL naming the graph, both contents and what to do; a file that no longer resolves is
 * not compared (its runs fail when run). */
static int check_graph_files(const dp_sweep *s, const dp_results *res, const char *out, const keyset_ctx *runs,
                             dp_error *err)
{
    typedef struct { char *value; uint64_t now; int ok; } seen_t;
    seen_t *seen = NULL;
    long n_seen = 0;
    int rc = DP_OK;
    for (long i = 0; i < dp_results_count(res) && rc == DP_OK; i++) {
        json_t *p;
        uint64_t h;
        /* rows of runs of this config only: another grid's rows in the file, or rows --prune is
         * about to drop, are not runs this sweep adds to (they were refused: a review) */
        if (!keep_in_config(dp_results_row(res, i), (void *)runs)) continue;
        const char *g = row_graph(dp_results_row(res, i), &p, &h);
        if (!g) continue;
        long j = 0;
        while (j < n_seen && strcmp(seen[j].value, g) != 0) j++;
        if (j == n_seen) {
            seen_t *ns = dp_alloc_realloc(seen, (size_t)(n_seen + 1) * sizeof *seen);
            if (!ns) { json_decref(p); rc = dp_error_set(err, DP_ENOMEM, "out of memory"); break; }
            seen = ns;
            seen[j].value = strdup(g);
            char path[PATH_MAX];
            dp_error e;
            seen[j].ok = seen[j].value && dp_run_resolve_path(g, s->dir, path, sizeof path, &e) &&
                         dp_run_file_hash(path, &seen[j].now, &e) == DP_OK;
            n_seen++;
        }
        if (seen[j].ok && seen[j].now != h) {
            char path[PATH_MAX] = "", abs_path[PATH_MAX];
            dp_error e;
            dp_run_resolve_path(g, s->dir, path, sizeof path, &e);
            if (realpath(path, abs_path)) snprintf(path, sizeof path, "%s", abs_path); /* which folder it came from */
            rc = dp_error_set(err, DP_EINVAL, "%s: graph \"%s\" reads %s now (content %016llx), and the runs of it already in "
                              "%s read another file or version of it (content %016llx): resumed from another working folder, "
                              "or the file was edited since; run from the folder they ran in, or write to another --out "
                              "(nothing was run)", s->path[0] ? s->path : s->name, g, path, (unsigned long long)seen[j].now,
                              out, (unsigned long long)h);
        }
        json_decref(p);
    }
    for (long j = 0; j < n_seen; j++) free(seen[j].value);
    free(seen);
    return rc;
}

/* Open the results file of a sweep (merging: of a merge, which runs nothing, so no failed row is
 * dropped to be run again here: dp_sweep_merge replaces those an input has an ok row of). */
static int collector_open(collector *c, const dp_sweep *s, const dp_sweep_options *o, int merging, dp_sweep_summary *sum,
                          dp_error *err)
{
    memset(c, 0, sizeof *c);
    memset(sum, 0, sizeof *sum);
    c->s = s;
    c->o = o;
    c->sum = sum;
    split_out(o->out, c->out_dir, sizeof c->out_dir, c->runs_rel, sizeof c->runs_rel);
    c->res = dp_results_open(o->out, s->name, s->config_text, err);
    if (!c->res) return err ? err->code : DP_EIO;
    const char *stored = dp_results_stored_config(c->res);
    /* said with --quiet too, which drops progress lines only: the rows of two grids side by side
     * was a file no line mentioned (a review) */
    if (stored && dp_results_count(c->res) > 0) {
        /* another sweep's file (or an edited config): its rows stay and the file now says this
         * config; say so (it took the file over without a word) */
        json_t *a = json_loads(stored, 0, NULL);
        json_t *ga = json_object_get(a, "grid"), *gb = json_object_get(s->config, "grid");
        json_t *fa = json_object_get(a, "fixed"), *fb = json_object_get(s->config, "fixed");
        if (a && (!json_equal(ga ? ga : json_null(), gb ? gb : json_null()) ||
                  !json_equal(fa ? fa : json_null(), fb ? fb : json_null()))) {
            json_t *nm = json_object_get(a, "name");
            fprintf(stderr, "doppler sweep %s: note: %s holds %ld rows of another grid (%s%s%s); they stay, under this "
                            "config (--prune drops the runs it does not have)\n", s->name, o->out, dp_results_count(c->res),
                    json_is_string(nm) ? "sweep \"" : "an edited config", json_is_string(nm) ? json_string_value(nm) : "",
                    json_is_string(nm) ? "\"" : "");
        }
        json_decref(a);
    }
    /* the config's runs, by key */
    keyset_ctx ks = {NULL, 0}, mine = {NULL, 0}; /* and those of this shard, the runs this sweep runs */
    if (keyset_of_runs(s, 0, 1, &ks) != DP_OK || keyset_of_runs(s, o->shard_i, o->shard_n, &mine) != DP_OK) {
        free(ks.keys);
        free(mine.keys);
        return dp_error_set(err, DP_ENOMEM, "out of memory");
    }
    if (!merging && check_graph_files(s, c->res, o->out, &ks, err) != DP_OK) {
        free(ks.keys);
        free(mine.keys);
        return err->code;
    }
    /* failed runs of this config are run again: the cause (a missing file, a method not built
     * yet) may be gone; those of this shard only (another shard's were dropped, counted as run
     * again, and never run: a review), none in a merge */
    const int retry = !o->keep_failed && !merging;
    if (retry && dp_results_filter(c->res, keep_unless_retried, &mine, &sum->retried, err) != DP_OK) {
        free(ks.keys);
        free(mine.keys);
        return err->code;
    }
    free(mine.keys);
    if (sum->retried && o->progress)
        fprintf(stderr, "doppler sweep %s: running again the %ld runs that failed before (--keep-failed keeps them)\n", s->name, sum->retried);
    if (o->prune) {
        long dropped = 0;
        int rc = dp_results_filter(c->res, keep_in_config, &ks, &dropped, err);
        free(ks.keys);
        ks.keys = NULL;
        if (rc != DP_OK) return rc;
        if (dropped && o->progress) fprintf(stderr, "doppler sweep %s: dropped %ld rows of runs no longer in the config\n", s->name, dropped);
    }
    free(ks.keys);
    c->pending = dp_alloc_malloc_n(s->n_runs ? (size_t)s->n_runs : 1, sizeof(long));
    c->t_started = dp_alloc_malloc_n(s->n_runs ? (size_t)s->n_runs : 1, sizeof(double));
    c->eta = dp_alloc_calloc_n(s->n_runs ? (size_t)s->n_runs : 1, sizeof *c->eta);
    if (!c->pending || !c->t_started || !c->eta) return dp_error_set(err, DP_ENOMEM, "out of memory");
    for (long k = 0; k < s->n_runs; k++) c->t_started[k] = NAN;
    c->jobs = 1;
    for (long k = 0; k < s->n_runs; k++) {
        if (!dp_sweep_in_shard(k, o->shard_i, o->shard_n)) continue;
        sum->total++;
        const dp_result *had = dp_results_find(c->res, s->runs[k].key);
        if (had) {
            sum->skipped++;
            if (had->status && strcmp(had->status, "ok") != 0) sum->kept_failed++;
        } else {
            c->pending[c->n_pending++] = k;
        }
    }
    c->t0 = c->last_print = now_s();
    return DP_OK;
}

/* The time left: each run still to do or running lasts as long as the runs of its method that
 * finished now did on average (a sweep mixes millisecond heuristics with minutes of training,
 * so one mean over all runs says "0s" while the long ones have not started), spread over the
 * jobs. *unknown is the method of a run still to do of which no run has finished (then the
 * figure is a lower bound). */
static double eta_s(collector *c, const char **unknown)
{
    double t = now_s(), work = 0;
    *unknown = NULL;
    for (long i = 0; i < c->n_pending; i++) {
        long k = c->pending[i];
        int running = !isnan(c->t_started[k]);
        if (i < c->next && !running) continue; /* finished */
        const struct eta_method *e = eta_find(c, run_method(c->s, k));
        if (!e) {
            if (!*unknown) *unknown = run_method(c->s, k);
            continue;
        }
        double est = e->sum_s / (double)e->n;
        if (running) est -= t - c->t_started[k];
        if (est > 0) work += est;
    }
    return work / (double)(c->jobs > 0 ? c->jobs : 1);
}

static void progress(collector *c, int force)
{
    if (!c->o->progress) return;
    double t = now_s();
    /* at most once a second when runs finish, once a minute while they do not */
    long seen = c->sum->done;
    if (!force && (t - c->last_print < 1.0 || (seen == c->last_done && t - c->last_print < 60.0))) return;
    c->last_print = t;
    c->last_done = seen;
    dp_sweep_summary *m = c->sum;
    long remaining = m->total - m->skipped - m->done;
    double el = t - c->t0;
    char e1[32], eta[160];
    dp_sweep_format_duration(el, e1, sizeof e1);
    const char *unknown = NULL;
    double left = remaining ? eta_s(c, &unknown) : 0;
    dp_sweep_eta_text(remaining, left, unknown, eta, sizeof eta);
    fprintf(stderr, "doppler sweep %s: %ld/%ld done (%ld earlier), %ld failed, %d running, elapsed %s, ETA %s\n",
            c->s->name, m->skipped + m->done, m->total, m->skipped, m->failed, c->running, e1, eta);
}

/* After "N runs already in OUT": where they came from when the HDF5 file was not there to hold
 * them (it said "22 of 22 runs already in s1.h5" of a damaged s1.h5 rebuilt from s1.csv) */
static const char *recovered_note(collector *c)
{
    const int how = c->res ? dp_results_recovered(c->res) : 0;
    if (!how) return "";
    snprintf(c->note, sizeof c->note, " (recovered from %s: %s)", dp_results_csv_of(c->res),
             how == 1 ? "the HDF5 file was not readable and was rebuilt from it" : "the HDF5 file was not there and was rebuilt from it");
    return c->note;
}

/* A run starts (for the ETA). */
static void collector_started(collector *c, long k) { c->t_started[k] = now_s(); }

/* Write one finished run; a write error stops the sweep (the results would be lost). */
static int collector_record(collector *c, dp_result *row, dp_error *err)
{
    int rc = dp_results_append(c->res, row, err);
    if (rc != DP_OK) return rc;
    c->sum->done++;
    long k = row->index;
    if (k >= 0 && k < c->s->n_runs && strcmp(c->s->runs[k].key, row->key) == 0) {
        /* its wall time (the pool's clock; MPI rows: the method's own seconds) for the ETA */
        double wall = !isnan(c->t_started[k]) ? now_s() - c->t_started[k] : row->seconds;
        c->t_started[k] = NAN;
        const char *method = run_method(c->s, k);
        struct eta_method *e = eta_find(c, method);
        if (!e) {
            e = &c->eta[c->n_eta++];
            e->method = method;
        }
        if (isfinite(wall) && wall >= 0) {
            e->sum_s += wall;
            e->n++;
        } else if (e->n == 0) {
            c->n_eta--; /* no usable time */
        }
    }
    if (strcmp(row->status, "ok") != 0) {
        if (!c->sum->first_failed[0]) snprintf(c->sum->first_failed, sizeof c->sum->first_failed, "%s", row->key);
        c->sum->failed++;
        if (c->o->progress)
            fprintf(stderr, "doppler sweep %s: run %s (%s, %s, seed %ld) failed: %s\n", c->s->name, row->key,
                    row->graph, row->method, row->seed, row->error);
    }
    /* the last line is always printed; others at most once a second, after the next spawn */
    if (c->sum->done + c->sum->skipped == c->sum->total) progress(c, 1);
    return DP_OK;
}

static int collector_close(collector *c, int finalize, dp_error *err)
{
    int rc = DP_OK;
    if (c->res && finalize) {
        /* rows of this config sort by their index in it; others (an older config) after them */
        for (long i = 0; i < dp_results_count(c->res); i++) {
            const dp_result *r = dp_results_row(c->res, i);
            dp_results_set_index(c->res, r->key, c->s->n_runs + i);
        }
        for (long k = 0; k < c->s->n_runs; k++) dp_results_set_index(c->res, c->s->runs[k].key, k);
        rc = dp_results_finalize(c->res, err);
    } else if (c->res) {
        /* stopped early (a signal, an error): the HDF5 file gets the rows the CSV has, which it
         * took in batches; a review's report of a sweep stopped by SIGINT counted 201 of the 207
         * runs done. Best effort: the CSV keeps them whatever this does */
        dp_error e2;
        (void)dp_results_write_pending(c->res, &e2);
    }
    dp_results_close(c->res);
    c->res = NULL;
    free(c->pending);
    c->pending = NULL;
    free(c->t_started);
    c->t_started = NULL;
    free(c->eta);
    c->eta = NULL;
    return rc;
}

/* ------------------------------------------------------ worker children ---- */

typedef struct child {
    pid_t pid;
    int fd;
    long k;          /* run index */
    char *buf;
    size_t len, cap;
    double t_start;
    int timed_out;
} child;

static void child_main(const collector *c, long k, int wfd)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    const dp_sweep_run *run = &c->s->runs[k];
    dp_result r;
    dp_error err;
    dp_error_clear(&err);
    if (dp_result_init(&r) != DP_OK || dp_result_set_params(&r, run->key, run->index, run->params) != DP_OK) _exit(3);
    char dir[2 * PATH_MAX + 32], rel[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/%s/%s", c->out_dir, c->runs_rel, run->key);
    snprintf(rel, sizeof rel, "%s/%s", c->runs_rel, run->key);
    dp_run_context ctx = {c->s->dir, dir, rel};
    dp_run_execute(run->params, &ctx, &r, &err);
    json_t *j = dp_result_to_json(&r);
    char *t = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    if (!t) _exit(3);
    size_t n = strlen(t), off = 0;
    while (off < n) {
        ssize_t w = write(wfd, t + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(4);
        off += (size_t)w;
    }
    _exit(0);
}

static int child_spawn(const collector *c, long k, child *ch, dp_error *err)
{
    int p[2];
    if (pipe(p) != 0) return dp_error_set(err, DP_EIO, "pipe: %s", strerror(errno));
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return dp_error_set(err, DP_EIO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(5); /* the parent died before the line above */
        /* a fresh program image: no state of the parent (HDF5's library state, OpenBLAS's thread
         * pool, GSL, allocator) leaks into the run; a forked copy that ran training directly
         * gave different results from a standalone run */
        char idx[32], fd[32];
        snprintf(idx, sizeof idx, "%ld", k);
        snprintf(fd, sizeof fd, "%d", p[1]);
        const char *self = getenv("DOPPLER_SWEEP_SELF");
        execl(self && *self ? self : "/proc/self/exe", "doppler", "sweep", c->s->path, "--run-one", idx, "--result-fd", fd,
              "--out", c->o->out, (char *)NULL);
        /* exec failed: run here rather than not at all */
        child_main(c, k, p[1]);
    }
    close(p[1]);
    memset(ch, 0, sizeof *ch);
    ch->pid = pid;
    ch->fd = p[0];
    ch->k = k;
    ch->t_start = now_s();
    return DP_OK;
}

/* Read what is available; returns 1 while the pipe is open, 0 at end of file. */
static int child_read(child *ch)
{
    for (;;) {
        if (ch->len + 4096 > ch->cap) {
            size_t nc = ch->cap ? ch->cap * 2 : 8192;
            char *nb = dp_alloc_realloc(ch->buf, nc);
            if (!nb) return 0;
            ch->buf = nb;
            ch->cap = nc;
        }
        ssize_t r = read(ch->fd, ch->buf + ch->len, ch->cap - ch->len - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return 0;
        ch->len += (size_t)r;
        ch->buf[ch->len] = '\0';
        return 1;
    }
}

/* Reap the child and turn what it sent into a row; a child that died leaves a failed row.
 * Returns 1, or 0 when the child was stopped by SIGINT or SIGTERM without a result (*sig: the
 * signal): an interrupted run, not a result (a terminal's Ctrl-C reaches the workers with the
 * sweep, and 3 of 8 interrupted sweeps recorded the run as failed: a review). */
static int child_finish(const collector *c, child *ch, dp_result *row, int *sig)
{
    int status = 0;
    while (waitpid(ch->pid, &status, 0) < 0 && errno == EINTR) {}
    close(ch->fd);
    const dp_sweep_run *run = &c->s->runs[ch->k];
    dp_result_init(row);
    int got = 0;
    if (ch->len > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        json_error_t je;
        json_t *j = json_loadb(ch->buf, ch->len, 0, &je);
        dp_error e;
        got = j && dp_result_from_json(row, j, &e) == DP_OK && strcmp(row->key, run->key) == 0;
        json_decref(j);
    }
    if (!got && !ch->timed_out && WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)) {
        dp_result_free(row);
        dp_result_init(row);
        *sig = WTERMSIG(status);
        return 0;
    }
    if (!got) {
        dp_result_free(row);
        dp_result_init(row);
        dp_result_set_params(row, run->key, run->index, run->params);
        char msg[256];
        if (ch->timed_out) snprintf(msg, sizeof msg, "timed out after %g s (worker process killed)", c->o->timeout_s);
        else if (WIFSIGNALED(status)) snprintf(msg, sizeof msg, "worker process killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        else snprintf(msg, sizeof msg, "worker process exited with status %d without a result", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        dp_result_set(&row->status, "failed");
        dp_result_set(&row->error, msg);
        time_t t = time(NULL);
        struct tm tm;
        char when[32];
        gmtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        dp_result_set(&row->finished, when);
    }
    free(ch->buf);
    ch->buf = NULL;
    return 1;
}

int dp_sweep_run_one(const dp_sweep *s, const dp_sweep_options *o, long k, int fd, dp_error *err)
{
    if (k < 0 || k >= s->n_runs) return dp_error_set(err, DP_EINVAL, "--run-one %ld: the config has %ld runs", k, s->n_runs);
    collector c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.o = o;
    split_out(o->out, c.out_dir, sizeof c.out_dir, c.runs_rel, sizeof c.runs_rel);
    openblas_set_num_threads(1);
    child_main(&c, k, fd); /* does not return */
    return DP_OK;
}

/* ---------------------------------------------------------- local pool ---- */

static volatile sig_atomic_t stop_signal = 0;
static void on_stop(int sig) { stop_signal = sig; }

/* SIGINT and SIGTERM set stop_signal (cleared here) until the old actions are put back */
static void catch_stop(struct sigaction *old_int, struct sigaction *old_term)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, old_int);
    sigaction(SIGTERM, &sa, old_term);
    stop_signal = 0;
}

int dp_sweep_execute(const dp_sweep *s, const dp_sweep_options *o, dp_sweep_summary *sum, dp_error *err)
{
    collector c;
    memset(sum, 0, sizeof *sum);
    int rc = dp_sweep_check_out(o->out, err);
    if (rc == DP_OK) rc = dp_sweep_check_runs(s, o->shard_i, o->shard_n, err);
    if (rc == DP_OK) rc = dp_sweep_check_inputs(s, o->shard_i, o->shard_n, err);
    if (rc != DP_OK) return rc;
    rc = collector_open(&c, s, o, 0, sum, err);
    if (rc != DP_OK) { collector_close(&c, 0, NULL); return rc; }
    /* default: one a core this process may run on (taskset, cpusets), not one a core online */
    int jobs = o->jobs;
    if (jobs <= 0) jobs = dp_exec_cpu_count(); /* the executor's count: one mechanism */
    if (jobs < 1) jobs = 1;
    if (jobs > c.n_pending) jobs = c.n_pending > 0 ? (int)c.n_pending : 1;
    c.jobs = jobs;
    /* runs go in parallel processes: one BLAS thread each */
    openblas_set_num_threads(1);
    if (o->progress && c.n_pending < sum->total)
        fprintf(stderr, "doppler sweep %s: %ld of %ld runs already in %s%s, %ld to do\n", s->name, sum->skipped, sum->total, o->out,
                recovered_note(&c), c.n_pending);
    child *kids = dp_alloc_calloc_n((size_t)jobs, sizeof(child));
    struct pollfd *pfd = dp_alloc_calloc_n((size_t)jobs, sizeof(struct pollfd));
    if (!kids || !pfd) { free(kids); free(pfd); collector_close(&c, 0, NULL); return dp_error_set(err, DP_ENOMEM, "out of memory"); }
    struct sigaction old_int, old_term;
    catch_stop(&old_int, &old_term);
    int n_kids = 0;
    while (rc == DP_OK && !stop_signal && (c.next < c.n_pending || n_kids > 0)) {
        while (n_kids < jobs && c.next < c.n_pending && !stop_signal) {
            if ((rc = child_spawn(&c, c.pending[c.next], &kids[n_kids], err)) != DP_OK) break;
            collector_started(&c, c.pending[c.next]);
            c.next++;
            n_kids++;
            c.running = n_kids;
        }
        if (rc != DP_OK || n_kids == 0) break;
        progress(&c, 0);
        for (int i = 0; i < n_kids; i++) { pfd[i].fd = kids[i].fd; pfd[i].events = POLLIN; pfd[i].revents = 0; }
        int timeout_ms = o->timeout_s > 0 ? 200 : 1000;
        int pr = poll(pfd, (nfds_t)n_kids, timeout_ms);
        if (pr < 0 && errno != EINTR) { rc = dp_error_set(err, DP_EIO, "poll: %s", strerror(errno)); break; }
        double t = now_s();
        for (int i = 0; i < n_kids; i++) {
            int open_ = 1;
            if (pr > 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) open_ = child_read(&kids[i]);
            if (open_ && o->timeout_s > 0 && t - kids[i].t_start > o->timeout_s && !kids[i].timed_out) {
                kill(kids[i].pid, SIGKILL);
                kids[i].timed_out = 1;
            }
            if (open_) continue;
            dp_result row;
            int sig = 0;
            const int result = child_finish(&c, &kids[i], &row, &sig);
            /* keep kids[] and pfd[] aligned: move the last child into slot i */
            kids[i] = kids[n_kids - 1];
            pfd[i] = pfd[n_kids - 1];
            n_kids--;
            c.running = n_kids;
            i--;
            if (!result) {
                /* interrupted: the sweep stops as on its own SIGINT (which may come a moment later) */
                if (!stop_signal) stop_signal = sig;
                continue;
            }
            rc = collector_record(&c, &row, err);
            dp_result_free(&row);
            if (rc != DP_OK) break;
        }
    }
    /* stopping early: end our own children (by pid) and reap them */
    for (int i = 0; i < n_kids; i++) {
        kill(kids[i].pid, SIGKILL);
        while (waitpid(kids[i].pid, NULL, 0) < 0 && errno == EINTR) {}
        close(kids[i].fd);
        free(kids[i].buf);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    free(kids);
    free(pfd);
    if (stop_signal && rc == DP_OK) {
        sum->interrupted = 1;
        rc = dp_error_set(err, DP_EIO, "interrupted by signal %d: %ld runs not done; run the same command again to finish",
                          (int)stop_signal, sum->total - sum->skipped - sum->done);
        collector_close(&c, 0, NULL);
        return rc;
    }
    if (rc != DP_OK) {
        collector_close(&c, 0, NULL);
        return rc;
    }
    return collector_close(&c, 1, err);
}

/* The path of folder `to` relative to folder `from` (both existing; resolved by realpath), into
 * out: "" when they are the same, else "a/b", "../c", ... Returns 0, or -1 when either cannot be
 * resolved or out is too small. */
static int relative_folder(const char *from, const char *to, char *out, size_t cap)
{
    char a[PATH_MAX], b[PATH_MAX];
    if (!realpath(from, a) || !realpath(to, b)) return -1;
    /* the common prefix, on whole components */
    size_t i = 0, last = 0;
    while (a[i] && b[i] && a[i] == b[i]) {
        if (a[i] == '/') last = i;
        i++;
    }
    if ((!a[i] || a[i] == '/') && (!b[i] || b[i] == '/')) last = i;
    size_t n = 0;
    out[0] = '\0';
    /* up from `from` past the common part */
    for (const char *p = a + last; *p; p++)
        if (*p == '/' && p[1]) {
            if (n + 4 > cap) return -1;
            n += (size_t)snprintf(out + n, cap - n, "%s..", n ? "/" : "");
        }
    /* down into `to` */
    const char *rest = b + last;
    while (*rest == '/') rest++;
    if (*rest) {
        const int k = snprintf(out + n, cap - n, "%s%s", n ? "/" : "", rest);
        if (k < 0 || (size_t)k >= cap - n) return -1;
    }
    return 0;
}

/* A merged row's run-file paths (relative to its results file's folder) made relative to the
 * merged file's: prefix is the shard's folder as seen from the merged file's ("" keeps them) */
static int rebase_run_files(dp_result *r, const char *prefix)
{
    char **f[3] = {&r->assignment, &r->trajectory, &r->checkpoint};
    for (int k = 0; k < 3 && prefix[0]; k++) {
        if (!*f[k] || !(*f[k])[0] || (*f[k])[0] == '/') continue;
        const size_t len = strlen(prefix) + strlen(*f[k]) + 2;
        char *p = malloc(len);
        if (!p) return DP_ENOMEM;
        snprintf(p, len, "%s/%s", prefix, *f[k]);
        free(*f[k]);
        *f[k] = p;
    }
    return DP_OK;
}

int dp_sweep_merge(const dp_sweep *s, const dp_sweep_options *o, char **inputs, int n_inputs,
                   dp_sweep_summary *sum, dp_error *err)
{
    collector c;
    dp_sweep_options all = *o;
    all.shard_i = 0;
    all.shard_n = 1;
    /* every input read before the output is opened: a missing or unreadable one left a results
     * file of the others' rows that looked complete (a review) */
    dp_result **in_rows = dp_alloc_calloc_n(n_inputs > 0 ? (size_t)n_inputs : 1, sizeof *in_rows);
    long *in_n = dp_alloc_calloc_n(n_inputs > 0 ? (size_t)n_inputs : 1, sizeof *in_n);
    int rc = in_rows && in_n ? DP_OK : dp_error_set(err, DP_ENOMEM, "out of memory");
    for (int f = 0; f < n_inputs && rc == DP_OK; f++) {
        rc = dp_results_read_h5(inputs[f], &in_rows[f], &in_n[f], NULL, err);
        /* a shard killed before it wrote its last runs to the HDF5 file has them in its CSV, the
         * journal (they were "in none of the files": a review): the CSV's complete rows then */
        dp_result *crows = NULL;
        long cn = rc == DP_OK ? dp_results_read_journal(inputs[f], &crows) : -1;
        if (cn > in_n[f]) {
            fprintf(stderr, "doppler sweep %s: note: the CSV beside %s holds %ld runs, the file %ld (a shard stopped before it "
                            "wrote them to the HDF5 file): merging the CSV's\n", s->name, inputs[f], cn, in_n[f]);
            for (long i = 0; i < in_n[f]; i++) dp_result_free(&in_rows[f][i]);
            free(in_rows[f]);
            in_rows[f] = crows;
            in_n[f] = cn;
            crows = NULL;
            cn = 0;
        }
        for (long i = 0; i < cn; i++) dp_result_free(&crows[i]);
        free(crows);
    }
    /* one graph file per "graph" value across the inputs and the output's rows (when it exists),
     * checked before the output is opened: shards run from two working folders read two files of
     * one relative name (a review) */
    dp_result *out_rows = NULL;
    long out_n = 0;
    if (rc == DP_OK && access(o->out, R_OK) == 0) {
        dp_error e2;
        if (dp_results_read_h5(o->out, &out_rows, &out_n, NULL, &e2) != DP_OK) out_n = 0; /* its own error comes at open */
        /* of its rows, those of this config's runs (another grid's rows stay as they are, as a
         * sweep's resume leaves them: check_graph_files) */
        keyset_ctx runs = {NULL, 0};
        long kept = 0;
        const int have_keys = keyset_of_runs(s, 0, 1, &runs) == DP_OK;
        for (long i = 0; i < out_n; i++) {
            if (have_keys && keep_in_config(&out_rows[i], &runs)) out_rows[kept++] = out_rows[i];
            else dp_result_free(&out_rows[i]);
        }
        out_n = kept;
        free(runs.keys);
    }
    if (rc == DP_OK) {
        typedef struct { const char *value, *where; uint64_t hash; json_t *p; } first_t;
        first_t *fs = NULL;
        long nf = 0;
        for (int f = -1; f < n_inputs && rc == DP_OK; f++) {
            const long nr = f < 0 ? out_n : in_n[f];
            for (long i = 0; i < nr && rc == DP_OK; i++) {
                json_t *p;
                uint64_t h;
                const char *g = row_graph(f < 0 ? &out_rows[i] : &in_rows[f][i], &p, &h);
                if (!g) continue;
                long j = 0;
                while (j < nf && strcmp(fs[j].value, g) != 0) j++;
                if (j < nf) {
                    if (fs[j].hash != h)
                        rc = dp_error_set(err, DP_EINVAL, "graph \"%s\" is two different files in these results (content "
                                          "%016llx in %s, %016llx in %s): shards run from different working folders, or the "
                                          "file edited between them; nothing was merged", g, (unsigned long long)fs[j].hash,
                                          fs[j].where, (unsigned long long)h, f < 0 ? o->out : inputs[f]);
                    json_decref(p);
                    continue;
                }
                first_t *nfs = dp_alloc_realloc(fs, (size_t)(nf + 1) * sizeof *fs);
                if (!nfs) { json_decref(p); rc = dp_error_set(err, DP_ENOMEM, "out of memory"); break; }
                fs = nfs;
                fs[nf++] = (first_t){g, f < 0 ? o->out : inputs[f], h, p};
            }
        }
        for (long j = 0; j < nf; j++) json_decref(fs[j].p);
        free(fs);
    }
    for (long i = 0; i < out_n; i++) dp_result_free(&out_rows[i]);
    free(out_rows);
    const int opened = rc == DP_OK;
    if (opened) rc = collector_open(&c, s, &all, 1, sum, err);
    if (rc != DP_OK) {
        if (opened) collector_close(&c, 0, NULL);
        for (int f = 0; in_rows && f < n_inputs; f++) {
            for (long i = 0; i < in_n[f]; i++) dp_result_free(&in_rows[f][i]);
            free(in_rows[f]);
        }
        free(in_rows);
        free(in_n);
        return rc;
    }
    /* a run with an ok row in some input: that row is the run's, whatever the order of the inputs
     * and a failed row the output or an earlier input has (the first row seen won: a failed
     * timeout beside the same run's ok row, by the order of the files: a review) */
    long n_ok = 0, *foreign = dp_alloc_calloc_n(n_inputs > 0 ? (size_t)n_inputs : 1, sizeof(long));
    if (!foreign) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
    for (int f = 0; f < n_inputs; f++) n_ok += in_n[f];
    keyset_ctx okset = {dp_alloc_malloc_n(n_ok ? (size_t)n_ok : 1, sizeof(char *)), 0};
    if (!okset.keys) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
    for (int f = 0; f < n_inputs && rc == DP_OK; f++)
        for (long i = 0; i < in_n[f]; i++)
            if (strcmp(in_rows[f][i].status, "ok") == 0) okset.keys[okset.n++] = in_rows[f][i].key;
    if (rc == DP_OK) {
        qsort(okset.keys, (size_t)okset.n, sizeof(char *), cmp_str);
        long replaced = 0;
        rc = dp_results_filter(c.res, keep_unless_retried, &okset, &replaced, err);
        if (rc == DP_OK && replaced > 0)
            fprintf(stderr, "doppler sweep %s: note: %ld failed rows of %s replaced by the ok rows of the same runs in the "
                            "inputs\n", s->name, replaced, o->out);
    }
    long disagree = 0;
    for (int f = 0; f < n_inputs && rc == DP_OK; f++)
        for (long i = 0; i < in_n[f]; i++) {
            const char *key = in_rows[f][i].key;
            disagree += strcmp(in_rows[f][i].status, "ok") != 0 &&
                        bsearch(&key, okset.keys, (size_t)okset.n, sizeof(char *), cmp_str) != NULL;
        }
    if (disagree > 0)
        fprintf(stderr, "doppler sweep %s: note: %ld failed rows of the inputs are of runs another input has ok: the ok "
                        "rows are kept\n", s->name, disagree);
    /* ok rows first (pass 0), then the failed rows of runs no input has ok (pass 1) */
    for (int pass = 0; pass < 2 * n_inputs; pass++) {
        const int f = pass % n_inputs, want_ok = pass < n_inputs;
        dp_result *rows = in_rows[f];
        const long n = in_n[f];
        /* the shard's run files stay where they are: their paths, relative to the shard's
         * folder, are made relative to the merged file's (a merge into another folder left
         * them pointing nowhere: a review's report --plot gantt found no assignment.json) */
        char in_dir[PATH_MAX], in_rel[PATH_MAX], prefix[PATH_MAX];
        split_out(inputs[f], in_dir, sizeof in_dir, in_rel, sizeof in_rel);
        if (relative_folder(c.out_dir, in_dir, prefix, sizeof prefix) != 0) prefix[0] = '\0';
        for (long i = 0; i < n; i++) {
            if ((strcmp(rows[i].status, "ok") == 0) != want_ok) continue;
            if (rc == DP_OK && rebase_run_files(&rows[i], prefix) != DP_OK) rc = dp_error_set(err, DP_ENOMEM, "out of memory");
            if (rc == DP_OK && !dp_results_find(c.res, rows[i].key)) {
                long k = -1;
                for (long j = 0; j < s->n_runs && k < 0; j++)
                    if (strcmp(s->runs[j].key, rows[i].key) == 0) k = j;
                if (k >= 0) {
                    rc = dp_results_append(c.res, &rows[i], err);
                    if (rc == DP_OK) {
                        sum->done++;
                        if (strcmp(rows[i].status, "ok") != 0) sum->failed++;
                    }
                } else {
                    foreign[f]++;
                }
            }
        }
    }
    /* rows of no run of this config (another config's shard) were dropped without a word */
    for (int f = 0; f < n_inputs; f++)
        if (foreign[f] > 0)
            fprintf(stderr, "doppler sweep %s: warning: %s: %ld rows are no run of this config (another config's results?); "
                    "left out\n", s->name, inputs[f], foreign[f]);
    free(foreign);
    free(okset.keys);
    for (int f = 0; f < n_inputs; f++) {
        for (long i = 0; i < in_n[f]; i++) dp_result_free(&in_rows[f][i]);
        free(in_rows[f]);
    }
    free(in_rows);
    free(in_n);
    if (rc != DP_OK) { collector_close(&c, 0, NULL); return rc; }
    return collector_close(&c, 1, err);
}

/* ------------------------------------------------------------------ MPI ---- */

int dp_sweep_have_mpi(void)
{
#ifdef HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

#ifdef HAVE_MPI
enum { TAG_READY = 1, TAG_RESULT, TAG_RUN, TAG_STOP };

int dp_sweep_mpi_init(int *argc, char ***argv)
{
    /* only under a launcher: a plain `doppler sweep` must not need an MPI runtime */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK")) return 0;
    MPI_Init(argc, argv);
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        MPI_Finalize();
        return 0;
    }
    return 1;
}

int dp_sweep_mpi_rank(void)
{
    int on = 0, done = 0, rank = 0;
    MPI_Initialized(&on);
    MPI_Finalized(&done);
    if (on && !done) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static int mpi_started = 0;

int dp_sweep_mpi_started(void)
{
    return mpi_started;
}

int dp_sweep_mpi_sync(int failed, int *all_failed)
{
    mpi_started = 1;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int in[2] = {failed ? rank : size, failed ? 1 : 0}, first, nf;
    MPI_Allreduce(&in[0], &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&in[1], &nf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all_failed) *all_failed = nf == size;
    return first < size ? first : -1;
}

void dp_sweep_mpi_finalize(void)
{
    int on = 0, done = 0;
    MPI_Initialized(&on);
    MPI_Finalized(&done);
    if (on && !done) MPI_Finalize();
}

/* A worker rank: ask, run in a child, send the row back, until told to stop. */
static void mpi_worker(const dp_sweep *s, const dp_sweep_options *o)
{
    collector c; /* only the fields children need */
    memset(&c, 0, sizeof c);
    c.s = s;
    c.o = o;
    split_out(o->out, c.out_dir, sizeof c.out_dir, c.runs_rel, sizeof c.runs_rel);
    openblas_set_num_threads(1);
    MPI_Send(NULL, 0, MPI_CHAR, 0, TAG_READY, MPI_COMM_WORLD);
    for (;;) {
        long k;
        MPI_Status st;
        MPI_Recv(&k, 1, MPI_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == TAG_STOP) break;
        child ch;
        dp_error err;
        dp_result row;
        char *text = NULL;
        if (child_spawn(&c, k, &ch, &err) == DP_OK) {
            for (;;) {
                struct pollfd p = {ch.fd, POLLIN, 0};
                int pr = poll(&p, 1, o->timeout_s > 0 ? 200 : -1);
                if (pr > 0 && !child_read(&ch)) break;
                if (o->timeout_s > 0 && now_s() - ch.t_start > o->timeout_s && !ch.timed_out) {
                    kill(ch.pid, SIGKILL);
                    ch.timed_out = 1;
                }
            }
            int sig = 0;
            if (!child_finish(&c, &ch, &row, &sig)) {
                /* an MPI rank reports every run it was given (rank 0 has no interruption path for
                 * one worker's run: doc/cluster.md): as a failure, as before */
                const dp_sweep_run *run = &s->runs[k];
                char msg[128];
                snprintf(msg, sizeof msg, "worker process killed by signal %d (%s)", sig, strsignal(sig));
                dp_result_set_params(&row, run->key, run->index, run->params);
                dp_result_set(&row.status, "failed");
                dp_result_set(&row.error, msg);
            }
        } else {
            const dp_sweep_run *run = &s->runs[k];
            dp_result_init(&row);
            dp_result_set_params(&row, run->key, run->index, run->params);
            dp_result_set(&row.status, "failed");
            dp_result_set(&row.error, err.msg);
        }
        json_t *j = dp_result_to_json(&row);
        text = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
        json_decref(j);
        dp_result_free(&row);
        const char *msg = text ? text : "";
        MPI_Send(msg, (int)strlen(msg), MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
        free(text);
    }
}

int dp_sweep_execute_mpi(const dp_sweep *s, const dp_sweep_options *o, dp_sweep_summary *sum, dp_error *err)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int first_failed = dp_sweep_mpi_sync(0, NULL);
    if (first_failed >= 0) {
        /* MPI is finalized by the caller (cmd_sweep) once this error is printed: MPI_Finalize
         * waits for every rank, so the failed rank's exit, on which mpirun ends the job, comes
         * after it (finalized here, the message was lost when mpirun was quicker: test_sweep_mpi.sh
         * failed so under load) */
        memset(sum, 0, sizeof *sum);
        return dp_error_set(err, DP_EINVAL, "rank %d failed before the sweep (its error above): every rank stops",
                            first_failed);
    }
    if (rank != 0) {
        mpi_worker(s, o);
        MPI_Finalize();
        memset(sum, 0, sizeof *sum);
        return DP_OK;
    }
    collector c;
    memset(&c, 0, sizeof c);
    memset(sum, 0, sizeof *sum);
    int rc = dp_sweep_check_out(o->out, err);
    if (rc == DP_OK) rc = dp_sweep_check_runs(s, o->shard_i, o->shard_n, err);
    if (rc == DP_OK) rc = dp_sweep_check_inputs(s, o->shard_i, o->shard_n, err);
    if (rc == DP_OK) rc = collector_open(&c, s, o, 0, sum, err);
    int ok = rc == DP_OK;
    if (ok && o->progress)
        fprintf(stderr, "doppler sweep %s: %ld runs to do over %d MPI worker ranks (%ld already in %s%s)\n", s->name,
                c.n_pending, size - 1, sum->skipped, o->out, recovered_note(&c));
    int active = size - 1;
    char *buf = NULL;
    int cap = 0;
    /* SIGINT and SIGTERM (Slurm's scancel and time limit) end the sweep with the rows received
     * written to the HDF5 file too, as the pool does: rank 0 died in MPI_Probe, its file behind
     * the CSV (a review); it polls so that the signal is seen */
    struct sigaction old_int, old_term;
    catch_stop(&old_int, &old_term);
    while (active > 0) {
        MPI_Status st;
        int flag = 0;
        while (!stop_signal) {
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            if (flag) break;
            const struct timespec pause = {0, 200000}; /* 0.2 ms */
            nanosleep(&pause, NULL);
        }
        if (stop_signal) {
            sum->interrupted = 1;
            collector_close(&c, 0, NULL);
            fprintf(stderr, "doppler sweep: interrupted by signal %d: %ld runs not done; run the same command again to "
                    "finish\n", (int)stop_signal, sum->total - sum->skipped - sum->done);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 1); /* the workers stop with it (mpirun sent them the signal too) */
        }
        int n;
        MPI_Get_count(&st, MPI_CHAR, &n);
        if (n + 1 > cap) {
            cap = n + 1;
            char *nb = dp_alloc_realloc(buf, (size_t)cap);
            if (!nb) { MPI_Abort(MPI_COMM_WORLD, 1); }
            buf = nb;
        }
        MPI_Recv(buf, n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        buf[n] = '\0';
        if (st.MPI_TAG == TAG_RESULT) {
            c.running--;
            json_error_t je;
            json_t *j = json_loads(buf, 0, &je);
            dp_result row;
            dp_result_init(&row);
            if (ok && (!j || dp_result_from_json(&row, j, err) != DP_OK)) {
                rc = dp_error_set(err, DP_EINVAL, "rank %d sent a malformed result", st.MPI_SOURCE);
                ok = 0;
            }
            if (ok && (rc = collector_record(&c, &row, err)) != DP_OK) ok = 0;
            dp_result_free(&row);
            json_decref(j);
        }
        if (ok && c.next < c.n_pending) {
            long k = c.pending[c.next++];
            c.running++;
            c.jobs = size - 1;
            collector_started(&c, k);
            MPI_Send(&k, 1, MPI_LONG, st.MPI_SOURCE, TAG_RUN, MPI_COMM_WORLD);
            progress(&c, 0);
        } else {
            long none = -1;
            MPI_Send(&none, 1, MPI_LONG, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
            active--;
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    free(buf);
    int rc2 = collector_close(&c, ok, err);
    MPI_Finalize();
    return ok ? rc2 : rc;
}
#else
int dp_sweep_mpi_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int dp_sweep_mpi_rank(void)
{
    return 0;
}

void dp_sweep_mpi_finalize(void)
{
}

int dp_sweep_mpi_started(void)
{
    return 1;
}

int dp_sweep_mpi_sync(int failed, int *all_failed)
{
    (void)failed;
    if (all_failed) *all_failed = 0;
    return -1;
}

int dp_sweep_execute_mpi(const dp_sweep *s, const dp_sweep_options *o, dp_sweep_summary *sum, dp_error *err)
{
    (void)s; (void)o; (void)sum;
    return dp_error_set(err, DP_EUNSUPPORTED, "this doppler was built without MPI (configure --with-mpi)");
}
#endif
