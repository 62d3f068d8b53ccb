/* sweep.c: sweep config parsing and deterministic expansion (see sweep.h). */
#include "sweep.h"
#include "dp_alloc.h"
#include "dp_file.h"
#include "dp_json.h"
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = dp_alloc_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

char *dp_sweep_canonical(const json_t *params)
{
    return json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY);
}

uint64_t dp_sweep_hash(const char *text)
{
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h;
}

void dp_sweep_key(const json_t *params, char key[DP_SWEEP_KEY_LEN + 1])
{
    char *c = dp_sweep_canonical(params);
    /* the "dp1:" prefix versions the key: a change of canonical form changes every key */
    size_t n = strlen(c ? c : "") + 5;
    char *t = dp_alloc_malloc(n);
    if (t) snprintf(t, n, "dp1:%s", c ? c : "");
    snprintf(key, DP_SWEEP_KEY_LEN + 1, "%016" PRIx64, dp_sweep_hash(t ? t : ""));
    free(t);
    free(c);
}

int dp_sweep_parse_shard(const char *text, int *i, int *n)
{
    if (!text) return -1;
    char *end;
    long a = strtol(text, &end, 10);
    if (end == text || *end != '/') return -1;
    const char *q = end + 1;
    long b = strtol(q, &end, 10);
    if (end == q || *end || b < 1 || b > 1000000 || a < 0 || a >= b) return -1;
    *i = (int)a;
    *n = (int)b;
    return 0;
}

void dp_sweep_format_duration(double s, char *buf, size_t cap)
{
    if (!isfinite(s) || s < 0) { snprintf(buf, cap, "?"); return; }
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60) snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
    else snprintf(buf, cap, "%lds", t);
}

void dp_sweep_eta_text(long remaining, double left_s, const char *unknown, char *buf, size_t cap)
{
    char d[32];
    dp_sweep_format_duration(left_s, d, sizeof d);
    if (!remaining) snprintf(buf, cap, "0s");
    /* the known part rounds to 0s (or is not a number): "more than 0s" said nothing (a new-user
     * walkthrough) */
    else if (unknown && (strcmp(d, "0s") == 0 || strcmp(d, "?") == 0))
        snprintf(buf, cap, "unknown (no %s run finished yet)", unknown);
    else if (unknown) snprintf(buf, cap, "more than %s (no %s run finished yet)", d, unknown);
    else snprintf(buf, cap, "%s", d);
}

static int valid_name(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

static int is_scalar(const json_t *v)
{
    return json_is_string(v) || json_is_integer(v) || json_is_real(v) || json_is_boolean(v);
}

void dp_sweep_free(dp_sweep *s)
{
    if (!s) return;
    for (long k = 0; k < s->n_runs; k++) {
        json_decref(s->runs[k].params);
        free(s->runs[k].params_text);
    }
    free(s->runs);
    json_decref(s->config);
    free(s->name);
    free(s->path);
    free(s->dir);
    free(s->config_text);
    free(s);
}

/* Open-addressing set of keys, to drop a grid point that repeats an earlier one. */
typedef struct keyset {
    uint64_t *slot;
    size_t cap;
} keyset;

static int keyset_add(keyset *ks, uint64_t h)
{
    if (h == 0) h = 1; /* 0 marks an empty slot */
    size_t i = (size_t)(h * 0x9E3779B97F4A7C15ULL) & (ks->cap - 1);
    while (ks->slot[i]) {
        if (ks->slot[i] == h) return 0;
        i = (i + 1) & (ks->cap - 1);
    }
    ks->slot[i] = h;
    return 1;
}

static int check_grid(const json_t *grid, const json_t *fixed, const char *path, int gi, int ngrids,
                      long *points, dp_error *err)
{
    char where[64];
    if (ngrids > 1) snprintf(where, sizeof where, "grid[%d]", gi);
    else snprintf(where, sizeof where, "grid");
    if (!json_is_object(grid))
        return dp_error_set(err, DP_EINVAL, "%s: \"%s\" must be an object of parameter: [values]", path, where);
    long p = 1;
    const char *name;
    json_t *vals;
    json_object_foreach((json_t *)grid, name, vals) {
        if (!valid_name(name))
            return dp_error_set(err, DP_EINVAL, "%s: %s.%s: parameter names are lowercase letters, digits and _", path, where, name);
        if (strcmp(name, "rep") == 0)
            return dp_error_set(err, DP_EINVAL, "%s: %s.rep: \"rep\" is set by \"repetitions\"", path, where);
        if (json_object_get(fixed, name))
            return dp_error_set(err, DP_EINVAL, "%s: %s.%s: also in \"fixed\"", path, where, name);
        if (!json_is_array(vals) || json_array_size(vals) == 0)
            return dp_error_set(err, DP_EINVAL, "%s: %s.%s: must be a non-empty array of values", path, where, name);
        for (size_t k = 0; k < json_array_size(vals); k++) {
            const json_t *x = json_array_get(vals, k);
            if (!is_scalar(x))
                return dp_error_set(err, DP_EINVAL, "%s: %s.%s[%zu]: values are strings, numbers or booleans", path, where, name, k);
            /* one value twice in other spellings (1 and 1.0) made two runs of one point: a seed
             * counted twice in a mean, a standard deviation of 0 over one run (a review) */
            for (size_t j = 0; j < k && json_is_number(x); j++) {
                const json_t *y = json_array_get(vals, j);
                if (!json_equal(x, y) && dp_json_same_value(x, y)) /* one value, other spellings */
                    return dp_error_set(err, DP_EINVAL, "%s: %s.%s[%zu] and [%zu]: the same value written twice (%.17g)", path,
                                        where, name, j, k, json_number_value(x));
            }
        }
        long n = (long)json_array_size(vals);
        if (p > DP_SWEEP_MAX_RUNS / n)
            return dp_error_set(err, DP_EINVAL, "%s: %s: more than %ld runs", path, where, DP_SWEEP_MAX_RUNS);
        p *= n;
    }
    *points = p;
    return DP_OK;
}

#define RS(f) offsetof(dp_report_spec, f)

/* A report table's scalar keys (report.h, dp_report_spec_from_json; dp_report_spec_init gives the
 * same defaults: tests/test_machine_keys.c) */
const dp_schema_key dp_sweep_table_keys[] = {
    {"cols", DP_SCHEMA_NAME, RS(cols), 0, 0, "PARAM", 0, "method", "the run parameter whose values are the columns",
     NULL, NULL, 0, NULL},
    {"metric", DP_SCHEMA_NAME, RS(metric), 0, 0, "METRIC", 0, "makespan",
     "what a cell shows: makespan, seconds, episodes, seconds_per_episode or metrics.NAME (a run's metric)", NULL,
     NULL, 0, NULL},
    {"title", DP_SCHEMA_NAME, RS(title), 0, 0, "TEXT", 0, NULL, "the table's heading (markdown and plots); not given: none", NULL,
     NULL, 0, NULL},
    {"digits", DP_SCHEMA_INT, RS(digits), 1, 17, NULL, 0, "4", "significant digits of the means", NULL, NULL, 0, NULL},
    {0},
};

/* a table's keys outside dp_sweep_table_keys, read below */
const char *const dp_sweep_table_others[] = {"rows", "baselines", "columns", "filter", "labels", "references",
                                              "comment", NULL};

/* "name": it makes the default output NAME.h5 in the working folder, so a plain file name */
static int plain_name(const char *nm, char *why, size_t cap)
{
    if (!strchr(nm, '/') && strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0 && nm[0] != '-') return 0;
    snprintf(why, cap, "must be a plain file name (no '/', not . or .., no leading '-'): it names the default "
                       "output NAME.h5 in the working folder (give --out for another place)");
    return 1;
}

static const dp_schema_key config_keys[] = {
    {"name", DP_SCHEMA_STRING, offsetof(dp_sweep_config, name), 0, 0, NULL, sizeof(((dp_sweep_config *)0)->name), "",
     "the sweep's name: the default output NAME.h5 (and NAME.csv) in the working folder, and the name reports "
     "show; not given: the config file's name without .json",
     plain_name, NULL, DP_SCHEMA_UNSET, NULL},
    {"repetitions", DP_SCHEMA_INT, offsetof(dp_sweep_config, repetitions), 1, 100000, NULL, 0, "1",
     "each grid point is run R times, as parameter rep = 0..R-1", NULL, NULL, 0, NULL},
    {0},
};

/* the top level's keys outside the table */
static const char *const config_others[] = {"description", "comment", "fixed", "grid", "tables", NULL};

static const dp_schema_section config_sections[] = {
    {"", config_keys,
     "a sweep config: every run's parameters are fixed + one point of grid + rep; description and comment are "
     "free text",
     config_others},
    {"fixed", NULL,
     "parameters every run shares, name: value (a string, number or boolean; names of lowercase letters, "
     "digits and _): method, graph, format, the machine keys (doppler config machine), the method's options "
     "and config keys as the method table lists them; checked run by run before anything runs, naming the "
     "run and the parameter",
     NULL},
    {"grid", NULL,
     "name: [values] axes, every combination run (first axis slowest), or an array of such objects (a "
     "union of grids); a name in both fixed and grid is refused",
     NULL},
    {"tables.T", dp_sweep_table_keys,
     "report table T (doppler report --table T; doc/sweep-format.md); besides these: rows (parameters of the "
     "rows, default graph), baselines, columns, filter, labels, references, comment",
     dp_sweep_table_others},
    {NULL, NULL, NULL, NULL},
};

const dp_schema_section *dp_sweep_config_sections(void)
{
    return config_sections;
}

/* Whether some run of s has parameter name ("status": a run's result, every run has one) */
static int sweep_has_param(const dp_sweep *s, const char *name)
{
    if (strcmp(name, "status") == 0) return 1;
    for (long i = 0; i < s->n_runs; i++)
        if (json_object_get(s->runs[i].params, name)) return 1;
    return 0;
}

/* Whether some run of s has value (a string) for parameter name, or labels (a table's "labels":
 * value -> label) gives it as some value's label */
static int sweep_has_value(const dp_sweep *s, const char *name, const char *value, const json_t *labels)
{
    for (long i = 0; i < s->n_runs; i++) {
        const json_t *v = json_object_get(s->runs[i].params, name);
        if (json_is_string(v) && strcmp(json_string_value(v), value) == 0) return 1;
        /* or its label, as report matches it: a graph's stem, a number as JSON writes it (2,
         * 0.5: a baseline of cols devices) */
        char b[512];
        if (v) dp_report_value_label(name, v, NULL, b, sizeof b);
        if (v && strcmp(b, value) == 0) return 1;
    }
    const char *k;
    json_t *l;
    json_object_foreach((json_t *)labels, k, l) if (json_is_string(l) && strcmp(json_string_value(l), value) == 0) return 1;
    return 0;
}

/* Each report table is read by the parser report uses (dp_report_spec_from_json, then
 * dp_report_spec_check), so that what report would refuse is refused here, before any run, naming
 * the file and the key: a helper's review found digits 99, "baselines": [2] for cols devices
 * (now a number is a baseline as --baselines 2 is), "rows": 5, "labels": 3, "columns": "x" and
 * "metric": "nosuch" accepted by sweep, the whole grid run, and refused by report. Then the
 * parameters each table names (its rows, cols and filter keys) are the runs' (a misspelt one made
 * a table of "-"), and its baselines values of its column parameter or their labels ("hef").
 * What only the results can tell (a filter that matches no run) is report's. */
static int check_tables(const dp_sweep *s, const char *src, dp_error *err)
{
    const char *t;
    json_t *o;
    json_object_foreach(json_object_get(s->config, "tables"), t, o) {
        dp_report_spec spec;
        if (dp_report_spec_init(&spec) != DP_OK) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", src);
        char where[256];
        snprintf(where, sizeof where, "tables.%s.", t);
        int rc = dp_report_spec_from_json(&spec, o, t, err);
        if (rc == DP_OK) rc = dp_report_spec_check(&spec, where, err);
        if (rc != DP_OK) {
            dp_report_spec_free(&spec);
            dp_error_prefix(err, "%s", src);
            return rc;
        }
        for (int i = 0; !spec.columns && i < spec.n_baselines; i++)
            if (!sweep_has_value(s, spec.cols, spec.baselines[i], spec.labels)) {
                rc = dp_error_set(err, DP_EINVAL, "%s: tables.%s.baselines: \"%s\" is no value of %s in any run", src, t,
                                  spec.baselines[i], spec.cols);
                break;
            }
        const char *bad = NULL, *field = NULL;
        for (int i = 0; rc == DP_OK && !bad && i < spec.n_rows; i++)
            if (!sweep_has_param(s, spec.rows[i])) bad = spec.rows[i], field = "rows";
        if (rc == DP_OK && !bad && !spec.columns && !sweep_has_param(s, spec.cols)) bad = spec.cols, field = "cols";
        const char *k;
        json_t *v;
        json_object_foreach(spec.filter, k, v) {
            (void)v;
            if (rc == DP_OK && !bad && !sweep_has_param(s, k)) bad = k, field = "filter";
        }
        if (bad)
            rc = dp_error_set(err, DP_EINVAL, "%s: tables.%s.%s: no run has the parameter \"%s\" (a run's parameters are "
                              "fixed's, grid's, rep and status)", src, t, field, bad);
        dp_report_spec_free(&spec);
        if (rc != DP_OK) return rc;
    }
    return DP_OK;
}

dp_sweep *dp_sweep_from_json(json_t *config, const char *path, dp_error *err)
{
    const char *src = path ? path : "(config)";
    if (!json_is_object(config)) {
        dp_error_set(err, DP_EINVAL, "%s: a sweep config is a JSON object", src);
        return NULL;
    }
    /* "plots" was documented ("report plots by name") and read by nothing: a plot spec with a
     * misspelt key was accepted and report --plot NAME knew no such plot (a review) */
    if (json_object_get(config, "plots")) {
        dp_error_set(err, DP_EINVAL, "%s: \"plots\": not read (report draws plots from options: doppler report RESULTS.h5 "
                     "--table T --plot bars, or --plot scatter|gantt|learning; see doc/sweep-format.md): remove the key", src);
        return NULL;
    }
    dp_sweep_config c;
    dp_schema_defaults(config_keys, &c);
    if (dp_schema_from_json(config_keys, &c, config, src, NULL, config_others, err) != DP_OK) return NULL;
    json_t *fixed = json_object_get(config, "fixed");
    json_t *grid = json_object_get(config, "grid");
    if (fixed && !json_is_object(fixed)) { dp_error_set(err, DP_EINVAL, "%s: \"fixed\" must be an object", src); return NULL; }
    if (!grid && !fixed) { dp_error_set(err, DP_EINVAL, "%s: needs \"grid\" or \"fixed\"", src); return NULL; }
    const long R = c.repetitions;
    const char *k;
    json_t *v;
    json_t *empty_fixed = fixed ? NULL : json_object();
    if (!fixed) fixed = empty_fixed;
    json_object_foreach(fixed, k, v) {
        if (!valid_name(k) || strcmp(k, "rep") == 0) {
            dp_error_set(err, DP_EINVAL, "%s: fixed.%s: parameter names are lowercase letters, digits and _ (not \"rep\")", src, k);
            json_decref(empty_fixed);
            return NULL;
        }
        if (!is_scalar(v)) {
            dp_error_set(err, DP_EINVAL, "%s: fixed.%s: values are strings, numbers or booleans", src, k);
            json_decref(empty_fixed);
            return NULL;
        }
    }
    /* the list of grids: an object is one grid, an array a union, absent = one empty grid */
    json_t *grids = json_array();
    if (!grid) json_array_append_new(grids, json_object());
    else if (json_is_array(grid)) {
        if (json_array_size(grid) == 0) {
            dp_error_set(err, DP_EINVAL, "%s: \"grid\" is an empty array", src);
            json_decref(grids); json_decref(empty_fixed);
            return NULL;
        }
        for (size_t i = 0; i < json_array_size(grid); i++) json_array_append(grids, json_array_get(grid, i));
    } else json_array_append(grids, grid);

    int ng = (int)json_array_size(grids);
    long total = 0;
    for (int gi = 0; gi < ng; gi++) {
        long pts = 0;
        if (check_grid(json_array_get(grids, gi), fixed, src, gi, json_is_array(grid) ? ng : 1, &pts, err) != DP_OK) {
            json_decref(grids); json_decref(empty_fixed);
            return NULL;
        }
        if (pts > DP_SWEEP_MAX_RUNS / R || total > DP_SWEEP_MAX_RUNS - pts * R) {
            dp_error_set(err, DP_EINVAL, "%s: more than %ld runs", src, DP_SWEEP_MAX_RUNS);
            json_decref(grids); json_decref(empty_fixed);
            return NULL;
        }
        total += pts * R;
    }
    /* Each run keeps its parameters as a JSON object and as text: about 160 bytes per parameter
     * (measured: 10^5 runs of 8 parameters take 130 MB). A config of a few hundred bytes can ask
     * for 10^7 runs: refuse what memory cannot hold before expanding. */
    {
        size_t n_params = json_object_size(fixed) + 1, most = 0;
        for (int gi = 0; gi < ng; gi++) {
            json_t *gr = json_array_get(grids, gi);
            if (json_is_object(gr) && json_object_size(gr) > most) most = json_object_size(gr);
        }
        n_params += most;
        if (dp_file_mem_check(src, "expanding the sweep", (double)total * (200.0 + 160.0 * (double)n_params), err) != DP_OK) {
            json_decref(grids); json_decref(empty_fixed);
            return NULL;
        }
    }

    dp_sweep *s = dp_alloc_calloc(1, sizeof *s);
    keyset ks = {NULL, 16};
    while (ks.cap < (size_t)total * 2) ks.cap *= 2;
    ks.slot = dp_alloc_calloc(ks.cap, sizeof(uint64_t));
    if (!s || !ks.slot || !(s->runs = dp_alloc_calloc_n((size_t)total, sizeof(dp_sweep_run)))) goto nomem;
    s->config = json_incref(config);
    s->path = xstrdup(path ? path : "");
    {
        const char *slash = path ? strrchr(path, '/') : NULL;
        if (slash) {
            s->dir = dp_alloc_malloc((size_t)(slash - path) + 2);
            if (s->dir) {
                memcpy(s->dir, path, (size_t)(slash - path));
                s->dir[slash - path] = '\0';
                if (slash == path) strcpy(s->dir, "/");
            }
        } else s->dir = xstrdup(".");
    }
    if (c.name[0]) s->name = xstrdup(c.name);
    else {
        const char *stem = path ? dp_file_path_stem(path) : "sweep";
        s->name = xstrdup(stem);
        char *dot = s->name ? strrchr(s->name, '.') : NULL;
        if (dot && dot != s->name) *dot = '\0';
    }
    s->config_text = json_dumps(config, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (!s->path || !s->dir || !s->name || !s->config_text) goto nomem;

    for (int gi = 0; gi < ng; gi++) {
        json_t *g = json_array_get(grids, gi);
        size_t na = json_object_size(g);
        const char **names = dp_alloc_calloc_n(na + 1, sizeof(char *));
        json_t **axes = dp_alloc_calloc_n(na + 1, sizeof(json_t *));
        size_t *idx = dp_alloc_calloc_n(na + 1, sizeof(size_t));
        if (!names || !axes || !idx) { free(names); free(axes); free(idx); goto nomem; }
        size_t a = 0;
        json_object_foreach(g, k, v) { names[a] = k; axes[a] = v; a++; }
        for (;;) {
            for (long r = 0; r < R; r++) {
                json_t *p = json_deep_copy(fixed);
                if (!p) { free(names); free(axes); free(idx); goto nomem; }
                for (size_t j = 0; j < na; j++) json_object_set(p, names[j], json_array_get(axes[j], idx[j]));
                json_object_set_new(p, "rep", json_integer(r));
                dp_sweep_run *run = &s->runs[s->n_runs];
                dp_sweep_key(p, run->key);
                if (!keyset_add(&ks, strtoull(run->key, NULL, 16))) { json_decref(p); continue; }
                run->params = p;
                run->params_text = dp_sweep_canonical(p);
                if (!run->params_text) { free(names); free(axes); free(idx); goto nomem; }
                run->index = s->n_runs++;
            }
            /* odometer: last axis fastest */
            size_t j = na;
            while (j > 0) {
                j--;
                if (++idx[j] < json_array_size(axes[j])) break;
                idx[j] = 0;
                if (j == 0) { j = (size_t)-1; break; }
            }
            if (na == 0 || j == (size_t)-1) break;
        }
        free(names);
        free(axes);
        free(idx);
    }
    free(ks.slot);
    json_decref(grids);
    json_decref(empty_fixed);
    if (check_tables(s, src, err) != DP_OK) {
        dp_sweep_free(s);
        return NULL;
    }
    return s;
nomem:
    free(ks.slot);
    json_decref(grids);
    json_decref(empty_fixed);
    dp_sweep_free(s);
    dp_error_set(err, DP_ENOMEM, "%s: out of memory expanding the sweep", src);
    return NULL;
}

dp_sweep *dp_sweep_load(const char *path, dp_error *err)
{
    json_t *cfg = dp_json_load(path, err);
    if (!cfg) return NULL;
    dp_sweep *s = dp_sweep_from_json(cfg, path, err);
    json_decref(cfg);
    return s;
}

int dp_sweep_param_str(const json_t *params, const char *name, const char *def, const char **out,
                       dp_error *err)
{
    json_t *v = json_object_get(params, name);
    if (!v) { *out = def; return DP_OK; }
    if (!json_is_string(v)) return dp_error_set(err, DP_EINVAL, "parameter \"%s\": expected a string", name);
    *out = json_string_value(v);
    return DP_OK;
}

int dp_sweep_param_int(const json_t *params, const char *name, long def, long *out, dp_error *err)
{
    json_t *v = json_object_get(params, name);
    if (!v) { *out = def; return DP_OK; }
    if (json_is_integer(v)) { *out = (long)json_integer_value(v); return DP_OK; }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (x == floor(x) && fabs(x) < 9e15) { *out = (long)x; return DP_OK; }
    }
    return dp_error_set(err, DP_EINVAL, "parameter \"%s\": expected an integer", name);
}

int dp_sweep_param_num(const json_t *params, const char *name, double def, double *out, dp_error *err)
{
    json_t *v = json_object_get(params, name);
    if (!v) { *out = def; return DP_OK; }
    if (!json_is_number(v)) return dp_error_set(err, DP_EINVAL, "parameter \"%s\": expected a number", name);
    *out = json_number_value(v);
    return DP_OK;
}
