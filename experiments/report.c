/* report.c: tables from sweep results (see report.h); their plots are report_plot.c's. */
#include "report.h"
#include "dp_json.h"
#include "sweep.h"
#include "dp_alloc.h"
#include "report_impl.h"
#include "cli.h"
#include "dp_file.h"
#include "dp_h5io.h"
#include "dp_sim.h"
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_statistics_double.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *dp_report_strdup(const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *d = dp_alloc_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void dp_report_list_free(char **l, int n)
{
    for (int i = 0; i < n; i++) free(l[i]);
    free(l);
}

/* ----------------------------------------------------------- the spec ---- */

int dp_report_spec_init(dp_report_spec *s)
{
    memset(s, 0, sizeof *s);
    s->digits = 4;
    s->references = 1;
    s->cols = dp_report_strdup("method");
    s->metric = dp_report_strdup("makespan");
    if (!s->cols || !s->metric || dp_report_spec_set_list(&s->rows, &s->n_rows, "graph") != DP_OK) {
        dp_report_spec_free(s);
        return DP_ENOMEM;
    }
    return DP_OK;
}

void dp_report_spec_free(dp_report_spec *s)
{
    dp_report_list_free(s->rows, s->n_rows);
    dp_report_list_free(s->baselines, s->n_baselines);
    free(s->cols);
    free(s->metric);
    free(s->title);
    json_decref(s->filter);
    json_decref(s->labels);
    json_decref(s->columns);
    json_decref(s->ref_where);
    memset(s, 0, sizeof *s);
}

int dp_report_spec_set_list(char ***list, int *n, const char *csv)
{
    dp_report_list_free(*list, *n);
    *list = NULL;
    *n = 0;
    if (!csv || !*csv) return DP_OK;
    int cap = 1;
    for (const char *p = csv; *p; p++) cap += *p == ',';
    char **l = dp_alloc_calloc((size_t)cap, sizeof *l);
    if (!l) return DP_ENOMEM;
    int k = 0;
    const char *p = csv;
    while (*p) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (len > 0) {
            l[k] = dp_alloc_malloc(len + 1);
            if (!l[k]) { dp_report_list_free(l, k); return DP_ENOMEM; }
            memcpy(l[k], p, len);
            l[k][len] = '\0';
            k++;
        }
        if (!q) break;
        p = q + 1;
    }
    *list = l;
    *n = k;
    return DP_OK;
}

/* A field that is a string or an array of strings, as a list; with numbers 1, numbers too, as
 * their labels (dp_report_value_label: 2, 0.5), so that "baselines": [2] of a table of
 * "cols": "devices" is --baselines 2 (it was refused at report time only). */
static int json_list(const json_t *v, char ***list, int *n, int numbers, const char *where, dp_error *err)
{
    if (json_is_string(v)) return dp_report_spec_set_list(list, n, json_string_value(v)) == DP_OK ? DP_OK : dp_error_set(err, DP_ENOMEM, "out of memory");
    if (!json_is_array(v)) return dp_error_set(err, DP_EINVAL, "%s: expected a string or an array of strings", where);
    dp_report_list_free(*list, *n);
    *n = 0;
    *list = dp_alloc_calloc(json_array_size(v) + 1, sizeof(char *));
    if (!*list) return dp_error_set(err, DP_ENOMEM, "out of memory");
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *x = json_array_get(v, i);
        if (numbers && json_is_number(x)) {
            char lab[64];
            dp_report_value_label("", x, NULL, lab, sizeof lab);
            (*list)[(*n)++] = dp_report_strdup(lab);
            continue;
        }
        if (!json_is_string(x))
            return dp_error_set(err, DP_EINVAL, "%s[%zu]: expected a string%s", where, i, numbers ? " or a number" : "");
        (*list)[(*n)++] = dp_report_strdup(json_string_value(x));
    }
    return DP_OK;
}

int dp_report_spec_from_json(dp_report_spec *s, const json_t *o, const char *name, dp_error *err)
{
    if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "tables.%s: expected an object", name);
    char where[256];
    snprintf(where, sizeof where, "tables.%s.", name);
    int rc = dp_schema_from_json(dp_sweep_table_keys, s, o, NULL, where, dp_sweep_table_others, err);
    if (rc != DP_OK) return rc;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        snprintf(where, sizeof where, "tables.%s.%s", name, k);
        if (strcmp(k, "rows") == 0) {
            if (json_list(v, &s->rows, &s->n_rows, 0, where, err) != DP_OK) return DP_EINVAL;
        } else if (strcmp(k, "baselines") == 0) {
            if (json_list(v, &s->baselines, &s->n_baselines, 1, where, err) != DP_OK) return DP_EINVAL;
        } else if (strcmp(k, "filter") == 0 || strcmp(k, "labels") == 0) {
            if (!json_is_object(v)) return dp_error_set(err, DP_EINVAL, "%s: expected an object", where);
            json_t **f = strcmp(k, "filter") == 0 ? &s->filter : &s->labels;
            json_decref(*f);
            *f = json_incref(v);
        } else if (strcmp(k, "columns") == 0) {
            if (!json_is_array(v) || json_array_size(v) == 0) return dp_error_set(err, DP_EINVAL, "%s: expected a non-empty array of column objects", where);
            for (size_t c = 0; c < json_array_size(v); c++) {
                json_t *col = json_array_get(v, c);
                const char *ck;
                json_t *cv;
                if (!json_is_object(col) || !json_is_string(json_object_get(col, "label")))
                    return dp_error_set(err, DP_EINVAL, "%s[%zu]: a column is an object with a \"label\"", where, c);
                json_object_foreach(col, ck, cv) {
                    int ok = (strcmp(ck, "label") == 0) || (strcmp(ck, "where") == 0 && json_is_object(cv)) ||
                             (strcmp(ck, "metric") == 0 && json_is_string(cv)) || (strcmp(ck, "baseline") == 0 && json_is_boolean(cv)) ||
                             (strcmp(ck, "values") == 0 && json_is_object(cv)) || strcmp(ck, "comment") == 0 ||
                             (strcmp(ck, "ratio") == 0 && json_is_array(cv) && json_array_size(cv) == 2 &&
                              json_is_string(json_array_get(cv, 0)) && json_is_string(json_array_get(cv, 1)));
                    if (!ok) return dp_error_set(err, DP_EINVAL, "%s[%zu].%s: unknown field or wrong type (label, where: object, metric: string, baseline: boolean, values: object, ratio: [label, label])", where, c, ck);
                }
            }
            json_decref(s->columns);
            s->columns = json_incref(v);
        } else if (strcmp(k, "references") == 0) {
            if (json_is_boolean(v)) s->references = json_is_true(v);
            else if (json_is_object(v) && json_is_object(json_object_get(v, "where")) && json_object_size(v) == 1) {
                s->references = 1;
                json_decref(s->ref_where);
                s->ref_where = json_incref(json_object_get(v, "where"));
            } else return dp_error_set(err, DP_EINVAL, "%s: expected true, false or {\"where\": {...}}", where);
        }
    }
    return DP_OK;
}

int dp_report_spec_from_config(dp_report_spec *s, const char *config_text, const char *name, int *found, dp_error *err)
{
    *found = 0;
    if (!config_text || !*config_text) return DP_OK;
    json_error_t je;
    json_t *cfg = json_loads(config_text, 0, &je);
    if (!cfg) return dp_error_set(err, DP_EINVAL, "the stored sweep config does not parse: %s", je.text);
    json_t *t = json_object_get(json_object_get(cfg, "tables"), name);
    int rc = DP_OK;
    if (t) {
        *found = 1;
        rc = dp_report_spec_from_json(s, t, name, err);
    }
    json_decref(cfg);
    return rc;
}

/* ------------------------------------------------------------- values ---- */

void dp_report_value_label(const char *param, const json_t *value, const json_t *labels, char *buf, size_t cap)
{
    dp_report_value_label_in(param, value, labels, NULL, buf, cap);
}

void dp_report_value_label_in(const char *param, const json_t *value, const json_t *labels, const json_t *path_labels,
                              char *buf, size_t cap)
{
    const json_t *pl = path_labels && json_is_string(value) && (strcmp(param, "graph") == 0 || strcmp(param, "topology") == 0)
                           ? json_object_get(path_labels, json_string_value(value))
                           : NULL;
    if (json_is_string(pl)) snprintf(buf, cap, "%s", json_string_value(pl));
    else if (!value) snprintf(buf, cap, "-");
    else if (json_is_string(value)) {
        const char *s = json_string_value(value);
        if (strcmp(param, "graph") == 0 && strncmp(s, "gen:", 4) == 0) {
            snprintf(buf, cap, "%s", s + 4);
        } else if (strcmp(param, "graph") == 0 || strcmp(param, "topology") == 0) {
            const char *b = strrchr(s, '/');
            if (!b) b = strrchr(s, ':');
            b = b ? b + 1 : s;
            const char *dot = strrchr(b, '.');
            snprintf(buf, cap, "%.*s", (int)(dot && dot != b ? (size_t)(dot - b) : strlen(b)), b);
        } else snprintf(buf, cap, "%s", s);
    } else {
        char *t = json_dumps(value, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        snprintf(buf, cap, "%s", t ? t : "?");
        free(t);
    }
    json_t *l = labels ? json_object_get(labels, buf) : NULL;
    if (json_is_string(l)) snprintf(buf, cap, "%s", json_string_value(l));
}

/* The label of a graph or topology value that tells it apart from another of the same file
 * name: the path after a "shared:" or "data:" prefix, less the extension; the whole value when
 * that still coincides (caller's buf) */
static void long_path_label(const char *s, char *buf, size_t cap)
{
    const char *c = strchr(s, ':');
    const char *b = c && (strncmp(s, "shared:", 7) == 0 || strncmp(s, "data:", 5) == 0) ? c + 1 : s;
    const char *slash = strrchr(b, '/'), *dot = strrchr(b, '.');
    size_t len = dot && (!slash || dot > slash + 1) && dot != b ? (size_t)(dot - b) : strlen(b);
    snprintf(buf, cap, "%.*s", (int)len, b);
}

/* The values of graph and topology among rows' parameters whose labels coincide, each with a
 * label that tells it apart (NULL when none: the usual case). The tables grouped runs by
 * label, so two graphs named alike were one row, their makespans averaged (a review). */
json_t *dp_report_path_labels(const dp_result *rows, long n)
{
    static const char *params[] = {"graph", "topology"};
    json_t *out = NULL, *by[2] = {json_object(), json_object()}; /* per param: short label -> {value: true} */
    for (long i = 0; i < n && by[0] && by[1]; i++) {
        json_error_t je;
        json_t *p = json_loads(rows[i].params, 0, &je);
        for (int q = 0; q < 2 && p; q++) {
            json_t *v = json_object_get(p, params[q]);
            if (!json_is_string(v)) continue;
            char lab[512];
            dp_report_value_label(params[q], v, NULL, lab, sizeof lab);
            json_t *set = json_object_get(by[q], lab);
            if (!set) json_object_set_new(by[q], lab, set = json_object());
            if (set) json_object_set_new(set, json_string_value(v), json_true());
        }
        json_decref(p);
    }
    for (int q = 0; q < 2; q++) {
        json_t *by_label = by[q];
        if (!by_label) continue;
        const char *lab;
        json_t *set;
        json_object_foreach(by_label, lab, set) {
            if (json_object_size(set) < 2) continue;
            if (!out) out = json_object();
            if (!out) break;
            /* the folders tell them apart, else the whole values do */
            json_t *seen = json_object();
            const char *val;
            json_t *x;
            int clash = 0;
            json_object_foreach(set, val, x) {
                (void)x;
                char l2[512];
                long_path_label(val, l2, sizeof l2);
                clash |= seen && json_object_get(seen, l2) != NULL;
                if (seen) json_object_set_new(seen, l2, json_true());
            }
            json_decref(seen);
            json_object_foreach(set, val, x) {
                (void)x;
                char l2[512];
                if (clash) snprintf(l2, sizeof l2, "%s", val);
                else long_path_label(val, l2, sizeof l2);
                json_object_set_new(out, val, json_string(l2));
            }
        }
        json_decref(by_label);
    }
    return out;
}

double dp_report_metric(const dp_result *r, const char *metric, int *known)
{
    *known = 1;
    if (strcmp(metric, "makespan") == 0) return r->makespan;
    if (strcmp(metric, "seconds") == 0) return r->seconds;
    if (strcmp(metric, "episodes") == 0) return (double)r->episodes;
    if (strcmp(metric, "seconds_per_episode") == 0) return r->episodes > 0 ? r->seconds / (double)r->episodes : NAN;
    if (strncmp(metric, "metrics.", 8) == 0) {
        json_error_t je;
        json_t *m = json_loads(r->metrics, 0, &je);
        json_t *v = json_object_get(m, metric + 8);
        double x = json_is_number(v) ? json_number_value(v) : NAN;
        json_decref(m);
        return x;
    }
    *known = 0;
    return NAN;
}

/* numbers by value (4 is 4.0: --where comm_ratio=4 matched no run whose config wrote 4.0; a
 * review), two integers exactly, the rest as JSON */
static int value_matches(const json_t *v, const json_t *want)
{
    if (json_is_array(want)) {
        for (size_t i = 0; i < json_array_size(want); i++)
            if (dp_json_same_value(v, json_array_get(want, i))) return 1;
        return 0;
    }
    return dp_json_same_value(v, want);
}

int dp_report_filter_match(const dp_result *r, const json_t *filter)
{
    if (!filter || json_object_size(filter) == 0) return 1;
    json_error_t je;
    json_t *p = json_loads(r->params, 0, &je);
    int ok = 1;
    const char *k;
    json_t *want;
    json_object_foreach((json_t *)filter, k, want) {
        json_t *v = json_object_get(p, k);
        if (strcmp(k, "status") == 0) {
            json_t *s = json_string(r->status);
            ok = value_matches(s, want);
            json_decref(s);
        } else ok = v && value_matches(v, want);
        if (!ok) break;
    }
    json_decref(p);
    return ok;
}

/* ------------------------------------------------------------- tables ---- */

int dp_report_list_find(char **labels, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(labels[i], s) == 0) return i;
    return -1;
}

void dp_report_table_free(dp_report_table *t)
{
    json_decref(t->path_labels);
    free(t->title);
    free(t->metric);
    free(t->units);
    dp_report_list_free(t->key_names, t->n_keys);
    dp_report_list_free(t->row_keys, t->n_rows * t->n_keys);
    dp_report_list_free(t->col_labels, t->n_cols);
    free(t->mean);
    free(t->sd);
    free(t->n);
    free(t->n_failed);
    free(t->is_baseline);
    free(t->is_reference);
    free(t->best);
    dp_report_list_free(t->row_units, t->n_rows);
    dp_report_list_free(t->row_machines, t->n_rows);
    free(t->pooled_params);
    free(t->col_name);
    memset(t, 0, sizeof *t);
}

/* Is `metric` a name dp_report_metric knows? */
static int metric_known(const char *metric)
{
    int known;
    dp_result probe;
    memset(&probe, 0, sizeof probe);
    probe.metrics = (char *)"{}";
    dp_report_metric(&probe, metric, &known);
    return known;
}

static int grow(void **a, int *cap, int n, size_t sz)
{
    if (n < *cap) return 0;
    int nc = *cap ? *cap * 2 : 16;
    void *b = dp_alloc_realloc(*a, (size_t)nc * sz);
    if (!b) return -1;
    *a = b;
    *cap = nc;
    return 0;
}

/* Append one column to a built table (the cell arrays are row-major: re-laid out). */
static int table_add_column(dp_report_table *t, const char *label, int baseline, int reference, const double *mean,
                            const double *sd, const long *cnt, const long *failed)
{
    const int NR = t->n_rows, NC = t->n_cols, NC1 = NC + 1;
    size_t cells = (size_t)(NR ? NR : 1) * (size_t)NC1;
    double *m = dp_alloc_malloc_n(cells, sizeof(double)), *s = dp_alloc_malloc_n(cells, sizeof(double));
    long *nn = dp_alloc_calloc_n(cells, sizeof(long)), *nf = dp_alloc_calloc_n(cells, sizeof(long));
    int *isb = dp_alloc_realloc(t->is_baseline, (size_t)NC1 * sizeof(int));
    if (isb) t->is_baseline = isb;
    int *isr = dp_alloc_realloc(t->is_reference, (size_t)NC1 * sizeof(int));
    if (isr) t->is_reference = isr;
    char **cl = dp_alloc_realloc(t->col_labels, (size_t)NC1 * sizeof(char *));
    if (cl) t->col_labels = cl;
    if (!m || !s || !nn || !nf || !isb || !isr || !cl) { free(m); free(s); free(nn); free(nf); return DP_ENOMEM; }
    for (int r = 0; r < NR; r++) {
        for (int c = 0; c < NC; c++) {
            m[(size_t)r * NC1 + c] = t->mean[(size_t)r * NC + c];
            s[(size_t)r * NC1 + c] = t->sd[(size_t)r * NC + c];
            nn[(size_t)r * NC1 + c] = t->n[(size_t)r * NC + c];
            nf[(size_t)r * NC1 + c] = t->n_failed[(size_t)r * NC + c];
        }
        m[(size_t)r * NC1 + NC] = mean[r];
        s[(size_t)r * NC1 + NC] = sd[r];
        nn[(size_t)r * NC1 + NC] = cnt[r];
        nf[(size_t)r * NC1 + NC] = failed ? failed[r] : 0;
    }
    free(t->mean); free(t->sd); free(t->n); free(t->n_failed);
    t->mean = m; t->sd = s; t->n = nn; t->n_failed = nf;
    t->is_baseline[NC] = baseline;
    t->is_reference[NC] = reference;
    t->col_labels[NC] = dp_report_strdup(label);
    t->n_cols = NC1;
    return DP_OK;
}

/* The best known makespans (data/best-known.json), loaded once; NULL when absent. */
static json_t *best_known(void)
{
    static json_t *bk;
    static int tried;
    if (!tried) {
        tried = 1;
        json_error_t je;
        bk = json_load_file(dp_cli_data_path("data/best-known.json"), 0, &je);
    }
    return bk;
}

/* 1 when every machine key params give other than devices has its default value on a machine
 * without a topology (its table's default text; streams 1, the streams of a machine without a
 * topology: streams 1 and queue "fifo" given are the default machine, streams 2 is not) */
static int run_machine_default(const json_t *params)
{
    dp_machine m, m0;
    dp_machine_init(&m);
    dp_machine_init(&m0);
    int same = 1;
    for (const dp_schema_key *k = dp_machine_keys(); k->key && same; k++) {
        json_t *v = json_object_get(params, k->key);
        if (!v || strcmp(k->key, "devices") == 0) continue;
        dp_error err;
        char a[512], b[512];
        if (dp_machine_set_json(&m, k->key, v, &err) != DP_OK) same = 0;
        else {
            dp_schema_value_text(k, &m, a, sizeof a);
            /* the default as the machine holds it when set from its text, so that 1.2e10 and
             * 12000000000 compare equal (they did not: a review); a default that is no value
             * of the key ("0": not given) is compared as text */
            if (k->def && dp_machine_set(&m0, k->key, k->def, &err) == DP_OK) dp_schema_value_text(k, &m0, b, sizeof b);
            else snprintf(b, sizeof b, "%s", k->def ? k->def : "");
            same = strcmp(a, b) == 0 || (strcmp(k->key, "streams") == 0 && strcmp(a, "1") == 0);
        }
    }
    dp_machine_free(&m);
    dp_machine_free(&m0);
    return same;
}

/* A run's best known makespan: its graph is in the file (by file name), on the device count of
 * the entry and on the DOPPLER-compatible machine: every other machine key at its default (no
 * topology, fixed transfers, asynchronous, one stream, FIFO, ...; streams 2 and a priority
 * queue had the one-stream FIFO figure, above a round-robin placement of theirs: a review).
 * NaN if not. */
static double run_best_known(const json_t *params, long devices)
{
    json_t *g;
    const char *spec = json_string_value(json_object_get(params, "graph"));
    if (!spec || strncmp(spec, "gen:", 4) == 0) return NAN;
    char stem[256];
    json_t *gv = json_string(spec);
    dp_report_value_label("graph", gv, NULL, stem, sizeof stem);
    json_decref(gv);
    g = json_object_get(json_object_get(best_known(), "graphs"), stem);
    if (!g) return NAN;
    const char *topo = json_string_value(json_object_get(params, "topology"));
    const char *tr = json_string_value(json_object_get(params, "transfer"));
    const char *mode = json_string_value(json_object_get(params, "mode"));
    if ((topo && *topo) || (tr && strcmp(tr, "fixed") != 0) || (mode && strcmp(mode, "async") != 0)) return NAN;
    if (json_integer_value(json_object_get(g, "devices")) != devices) return NAN;
    if (!run_machine_default(params)) return NAN;
    json_t *m = json_object_get(g, "makespan");
    return json_is_number(m) ? json_number_value(m) : NAN;
}

static int same_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* A run's machine keys other than devices (dp_machine_keys: bandwidth, comm_ratio, streams, ...)
 * as canonical JSON text, defaults left out (dp_machine_to_json), so that a key given at its
 * default value and one not given compare equal; a value the machine refuses is kept as
 * written. Owned by the caller; NULL when out of memory or params are not JSON. */
static char *run_machine_text(const char *params)
{
    json_error_t je;
    json_t *p = json_loads(params ? params : "{}", 0, &je);
    if (!p) return NULL;
    dp_machine m;
    dp_machine_init(&m);
    json_t *odd = json_object();
    for (const dp_schema_key *k = dp_machine_keys(); k->key; k++) {
        json_t *v = json_object_get(p, k->key);
        if (!v || strcmp(k->key, "devices") == 0) continue;
        dp_error err;
        if (dp_machine_set_json(&m, k->key, v, &err) != DP_OK) json_object_set(odd, k->key, v);
    }
    json_t *j = dp_machine_to_json(&m);
    char *text = NULL;
    if (j && odd) {
        json_object_set(j, "unparsed", odd);
        text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    }
    json_decref(j);
    json_decref(odd);
    json_decref(p);
    dp_machine_free(&m);
    return text;
}

/* a run's "samples" parameter (0 when not given or not an integer) */
static long run_samples(const dp_result *r)
{
    json_error_t je;
    json_t *p = json_loads(r->params ? r->params : "{}", 0, &je);
    json_t *v = json_object_get(p, "samples");
    const long s = json_is_integer(v) ? (long)json_integer_value(v) : 0;
    json_decref(p);
    return s;
}

/* A run's machine as one text: its device count and run_machine_text (mtext); owned by the
 * caller, NULL when out of memory */
static char *run_machine_key(const dp_result *r, const char *mtext)
{
    const char *m = mtext ? mtext : "?";
    const size_t cap = strlen(m) + 32;
    char *k = dp_alloc_malloc(cap);
    if (k) snprintf(k, cap, "%ld|%s", r->devices, m);
    return k;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The set of the texts keys[0..k) (sorted in place), one a line, duplicates once; owned by the
 * caller ("" for none), NULL when out of memory */
static char *text_set(char **keys, size_t k)
{
    qsort(keys, k, sizeof *keys, cmp_str);
    size_t len = 1;
    for (size_t j = 0; j < k; j++) len += strlen(keys[j]) + 1;
    char *s = dp_alloc_malloc(len), *p = s;
    if (!s) return NULL;
    *p = '\0';
    for (size_t j = 0; j < k; j++) {
        if (j && strcmp(keys[j], keys[j - 1]) == 0) continue;
        if (p != s) *p++ = '\n';
        const size_t L = strlen(keys[j]);
        memcpy(p, keys[j], L + 1);
        p += L;
    }
    return s;
}

/* Whether line key is in the set (text_set's) */
static int set_has(const char *set, const char *key)
{
    const size_t L = strlen(key);
    for (const char *p = set; *p;) {
        const char *e = strchr(p, '\n');
        const size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == L && memcmp(p, key, L) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Whether some line of set (run_machine_key's texts) has the machine keys mtext, on any device
 * count */
static int set_has_machine(const char *set, const char *mtext)
{
    const size_t L = strlen(mtext);
    for (const char *p = set; *p;) {
        const char *e = strchr(p, '\n'), *bar = strchr(p, '|');
        const size_t n = e ? (size_t)(e - p) : strlen(p);
        if (bar && bar < p + n && (size_t)(p + n - bar - 1) == L && memcmp(bar + 1, mtext, L) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Whether the sets a and b (text_set's) share a line */
static int sets_meet(const char *a, const char *b)
{
    int meet = 0;
    char *c = dp_report_strdup(a), *save = NULL;
    for (char *q = c ? strtok_r(c, "\n", &save) : NULL; q && !meet; q = strtok_r(NULL, "\n", &save)) meet = set_has(b, q);
    free(c);
    return meet;
}

/* The set a with b's lines added (both text_set's); owned by the caller, NULL when out of
 * memory */
static char *set_union(const char *a, const char *b)
{
    size_t cap = strlen(a) + strlen(b) + 2;
    char *u = dp_alloc_malloc(cap), *c = dp_report_strdup(b), *save = NULL;
    if (!u || !c) { free(u); free(c); return NULL; }
    const size_t La = strlen(a);
    memcpy(u, a, La + 1);
    char *p = u + La;
    for (char *q = strtok_r(c, "\n", &save); q; q = strtok_r(NULL, "\n", &save))
        if (!set_has(u, q)) {
            if (p != u) *p++ = '\n';
            const size_t L = strlen(q);
            memcpy(p, q, L + 1);
            p += L;
        }
    free(c);
    return u;
}

/* A run's parameters that tell experiments apart within a cell: every one but seed, rep, the
 * machine's keys (pooled_machines' business), the rows' keys and the column's (cols, or the
 * keys of the column's where); NULL when params are not JSON */
static json_t *run_design(const dp_result *r, const dp_report_spec *spec, const json_t *where)
{
    json_error_t je;
    json_t *p = json_loads(r->params ? r->params : "{}", 0, &je);
    if (!p) return NULL;
    json_object_del(p, "seed");
    json_object_del(p, "rep");
    for (const dp_schema_key *k = dp_machine_keys(); k->key; k++) json_object_del(p, k->key);
    json_object_del(p, "devices");
    for (int k = 0; k < spec->n_rows; k++) json_object_del(p, spec->rows[k]);
    if (where) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)where, k, v) {
            (void)v;
            json_object_del(p, k);
        }
    } else if (spec->cols) json_object_del(p, spec->cols);
    return p;
}

/* Add to the ", "-joined list *names (owned) each key whose value differs between a and b */
static void add_differing(const json_t *a, const json_t *b, char **names)
{
    const json_t *ab[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)ab[s], k, v) {
            json_t *o = json_object_get(ab[1 - s], k);
            if (o && json_equal(v, o)) continue;
            int seen = 0;
            const size_t L = strlen(k);
            for (const char *q = *names; q && !seen && (q = strstr(q, k)) != NULL; q++)
                seen = (q == *names || q[-1] == ' ') && (q[L] == ',' || q[L] == '\0');
            if (seen) continue;
            const size_t cap = (*names ? strlen(*names) : 0) + L + 3;
            char *n = dp_alloc_malloc(cap);
            if (!n) return;
            snprintf(n, cap, "%s%s%s", *names ? *names : "", *names ? ", " : "", k);
            free(*names);
            *names = n;
        }
    }
}

int dp_report_run_references(const dp_result *rows, long n, const dp_result *run, dp_report_ref_line *refs, int cap)
{
    static const char *const methods[] = {"cp", "round-robin"};
    int k = 0;
    char *machine = run_machine_text(run->params);
    for (int m = 0; m < 2 && k < cap; m++) {
        double sum = 0;
        long cnt = 0;
        for (long i = 0; i < n; i++) {
            const dp_result *r = &rows[i];
            if (strcmp(r->status, "ok") != 0 || strcmp(r->method, methods[m]) != 0 || isnan(r->makespan)) continue;
            if (!same_str(r->graph, run->graph) || r->devices != run->devices || !same_str(r->topology, run->topology) ||
                !same_str(r->transfer, run->transfer) || !same_str(r->mode, run->mode) || !same_str(r->units, run->units))
                continue;
            /* the rest of the machine too: a sweep over comm_ratio or bandwidth has cp runs of
             * each (their mean was the reference of all) */
            char *mr = run_machine_text(r->params);
            const int same = mr && machine && strcmp(mr, machine) == 0;
            free(mr);
            if (!same) continue;
            sum += r->makespan;
            cnt++;
        }
        if (cnt) refs[k++] = (dp_report_ref_line){methods[m], sum / (double)cnt};
    }
    free(machine);
    json_error_t je;
    json_t *p = json_loads(run->params, 0, &je);
    double bk = p ? run_best_known(p, run->devices) : NAN;
    json_decref(p);
    if (!isnan(bk) && k < cap) refs[k++] = (dp_report_ref_line){"best known", bk};
    return k;
}

/* The row (index in t) of a run, from its labels; -1 when the table has no such row. */
static int run_row_of(const dp_result *r, const dp_report_spec *spec, const dp_report_table *t)
{
    json_error_t je;
    json_t *p = json_loads(r->params, 0, &je);
    if (!p) return -1;
    char lab[512];
    int found = -1;
    for (int row = 0; row < t->n_rows && found < 0; row++) {
        int same = 1;
        for (int k = 0; k < t->n_keys && same; k++) {
            dp_report_value_label_in(spec->rows[k], json_object_get(p, spec->rows[k]), spec->labels, t->path_labels, lab, sizeof lab);
            same = strcmp(lab, t->row_keys[(size_t)row * t->n_keys + k]) == 0;
        }
        if (same) found = row;
    }
    json_decref(p);
    return found;
}

/* Whether a metric is a makespan (report.h's reference columns go beside it): makespan, and a
 * run's metrics makespan* (stage, last) and penalised_makespan* (makespan x (1 + penalty x excess):
 * the lower bound bounds it too). Only "makespan" was: a table of penalised makespans had no
 * reference columns, and its round-robin, random and single device columns were no baselines (a
 * review). */
static int metric_is_makespan(const char *m)
{
    return strcmp(m, "makespan") == 0 || strncmp(m, "metrics.makespan", 16) == 0 ||
           strncmp(m, "metrics.penalised_makespan", 26) == 0;
}

/* The reference columns (report.h) and the units of each row, after the columns of the spec. */
static int table_add_references(const dp_result *rows, long n, const dp_report_spec *spec, dp_report_table *t)
{
    const int NR = t->n_rows;
    int *row_of = dp_alloc_malloc_n(n ? (size_t)n : 1, sizeof(int));
    double *mean = dp_alloc_malloc_n(NR ? (size_t)NR : 1, sizeof(double)), *sd = dp_alloc_malloc_n(NR ? (size_t)NR : 1, sizeof(double));
    double *vals = dp_alloc_malloc_n(n ? (size_t)n : 1, sizeof(double));
    long *cnt = dp_alloc_calloc_n(NR ? (size_t)NR : 1, sizeof(long)), *failed = dp_alloc_calloc_n(NR ? (size_t)NR : 1, sizeof(long));
    json_t *rowfilter = spec->filter ? json_deep_copy(spec->filter) : json_object();
    t->row_units = dp_alloc_calloc_n(NR ? (size_t)NR : 1, sizeof(char *));
    int rc = DP_OK;
    if (!row_of || !mean || !sd || !vals || !cnt || !failed || !rowfilter || !t->row_units) { rc = DP_ENOMEM; goto done; }
    json_object_del(rowfilter, "method");
    /* only beside makespans: a column of another metric (seconds per episode) is another table */
    int makespans = metric_is_makespan(spec->metric);
    for (size_t c = 0; makespans && spec->columns && c < json_array_size(spec->columns); c++) {
        const char *m = json_string_value(json_object_get(json_array_get(spec->columns, c), "metric"));
        makespans = !m || metric_is_makespan(m);
    }
    const int refs = spec->references && makespans;
    int left_out = 0;
    for (long i = 0; i < n && refs; i++) {
        row_of[i] = -1;
        if (!dp_report_filter_match(&rows[i], rowfilter) || !dp_report_filter_match(&rows[i], spec->ref_where)) continue;
        const int r = run_row_of(&rows[i], spec, t);
        if (r < 0) continue;
        /* the config's references.where chooses the reference runs itself (table 3's columns are
         * async and bsp runs, its references the async ones: they were left out by the rule
         * below) */
        if (spec->ref_where && json_object_size(spec->ref_where) > 0) {
            row_of[i] = r;
            continue;
        }
        /* a reference run counts for its row on the row's machines only (t->row_machines) */
        if (!t->row_machines[r]) {
            left_out = 1;
            continue;
        }
        char *mt = run_machine_text(rows[i].params), *key = mt ? run_machine_key(&rows[i], mt) : NULL;
        if (!key) {
            free(mt);
            rc = DP_ENOMEM;
            goto done;
        }
        /* a failed run's device count is its parameter's, 0 where none was given (it never learnt
         * the machine's): it counts for a row with its machine keys on any device count (it was
         * dropped without a count: a review) */
        if (set_has(t->row_machines[r], key) || (strcmp(rows[i].status, "ok") != 0 && set_has_machine(t->row_machines[r], mt)))
            row_of[i] = r;
        free(mt);
        free(key);
    }
    /* units of each row: those of its ok runs (the table's own runs) */
    int n_unit_kinds = 0;
    const char *first_unit = NULL;
    for (int r = 0; r < NR; r++) t->row_units[r] = dp_report_strdup("");
    /* the units of the table's metric (a makespan's are its run's; seconds, counts and fractions
     * have their own: dp_report_metric_unit), not always the makespan's */
    char mu[128], first_mu[128] = "";
    for (long i = 0; i < n; i++) {
        if (strcmp(rows[i].status, "ok") != 0 || !rows[i].units[0] || !dp_report_filter_match(&rows[i], spec->filter)) continue;
        int r = run_row_of(&rows[i], spec, t);
        if (r < 0) continue;
        dp_report_metric_unit(&rows[i], spec->metric, mu, sizeof mu);
        if (!mu[0]) continue;
        if (!t->row_units[r][0]) { free(t->row_units[r]); t->row_units[r] = dp_report_strdup(mu); }
        if (!first_unit) { snprintf(first_mu, sizeof first_mu, "%s", mu); first_unit = first_mu; n_unit_kinds = 1; }
        else if (strcmp(first_unit, mu) != 0) n_unit_kinds = 2;
    }
    t->mixed_units = n_unit_kinds > 1;
    if (!refs) goto done;
    t->refs_left_out = left_out;
    int has_baselines = 0;
    for (int c = 0; c < t->n_cols; c++) has_baselines |= t->is_baseline[c];
    static const struct { const char *method, *label; } trivial[] = {
        {"round-robin", "round-robin"}, {"random", "random (mean)"}, {"single", "single device"}};
    for (int m = 0; m < 3; m++) {
        /* a method the table already has as a column of its own is not repeated; that column
         * counts as a baseline as the reference column would (EXPERIMENTS.md: round-robin,
         * random and single device count as baselines; as ordinary columns they did not, and on
         * ChainMM, where round-robin is optimal, a method's ratio read 0.922 in one table and
         * 1.305 in another of the same runs) */
        int own = 0;
        for (int c = 0; c < t->n_cols && !spec->columns && spec->cols && strcmp(spec->cols, "method") == 0; c++)
            if (!t->is_reference[c] && strcmp(t->col_labels[c], trivial[m].method) == 0) {
                /* a column "random" with random search in it (samples > 1) is no baseline: the
                 * reference column of single random placements is added beside it (it was made
                 * one, its mean pooling the searches': a review) */
                int search = 0;
                for (long i = 0; i < n && m == 1 && !search; i++)
                    search = strcmp(rows[i].method, "random") == 0 && dp_report_filter_match(&rows[i], spec->filter) &&
                             run_samples(&rows[i]) > 1;
                if (search) continue;
                own = 1;
                if (has_baselines) t->is_baseline[c] = 1;
            }
        if (own) continue;
        int any = 0;
        for (int r = 0; r < NR; r++) {
            size_t k = 0;
            failed[r] = 0;
            /* random (mean): single random placements (samples 0 or 1), not random search; its
             * failed runs counted in the cell, as a method column's are (they were dropped
             * without a count: a review) */
            for (long i = 0; i < n; i++) {
                if (row_of[i] != r || strcmp(rows[i].method, trivial[m].method) != 0 || (m == 1 && run_samples(&rows[i]) > 1))
                    continue;
                if (strcmp(rows[i].status, "ok") != 0) {
                    failed[r]++;
                    continue;
                }
                /* the table's metric, as the columns beside (a table of penalised makespans
                 * showed round-robin's plain makespan: a review); a run without it is left out */
                int known;
                const double x = dp_report_metric(&rows[i], spec->metric, &known);
                if (!isnan(x)) vals[k++] = x;
            }
            cnt[r] = (long)k;
            mean[r] = k ? gsl_stats_mean(vals, 1, k) : NAN;
            sd[r] = k >= 2 ? gsl_stats_sd(vals, 1, k) : NAN;
            any |= k > 0 || failed[r] > 0;
        }
        if (any && (rc = table_add_column(t, trivial[m].label, has_baselines, 0, mean, sd, cnt, failed)) != DP_OK) goto done;
    }
    /* the lower bound and the best known: figures to read against, never "baselines" */
    int any_lb = 0, any_bk = 0;
    for (int r = 0; r < NR; r++) {
        size_t k = 0;
        for (long i = 0; i < n; i++) {
            if (row_of[i] != r || strcmp(rows[i].status, "ok") != 0) continue;
            int known;
            double lb = dp_report_metric(&rows[i], "metrics.lower_bound", &known);
            if (!isnan(lb)) vals[k++] = lb;
        }
        mean[r] = k ? gsl_stats_mean(vals, 1, k) : NAN;
        sd[r] = NAN;
        cnt[r] = (long)k;
        any_lb |= k > 0;
    }
    if (any_lb && (rc = table_add_column(t, "lower bound", 0, 1, mean, sd, cnt, NULL)) != DP_OK) goto done;
    for (int r = 0; r < NR; r++) {
        mean[r] = NAN;
        cnt[r] = 0;
        for (long i = 0; i < n && isnan(mean[r]); i++) {
            if (row_of[i] != r) continue;
            json_error_t je;
            json_t *p = json_loads(rows[i].params, 0, &je);
            long dev = rows[i].devices;
            mean[r] = run_best_known(p, dev);
            json_decref(p);
        }
        cnt[r] = !isnan(mean[r]); /* one reference value (its n was 0 beside its mean in CSV) */
        any_bk |= !isnan(mean[r]);
    }
    if (any_bk && (rc = table_add_column(t, "best known", 0, 1, mean, sd, cnt, NULL)) != DP_OK) goto done;
    for (int r = 0; r < NR; r++) {
        t->best[r] = -1;
        for (int c = 0; c < t->n_cols; c++) {
            double m = t->mean[(size_t)r * t->n_cols + c];
            if (t->is_baseline[c] && !isnan(m) && (t->best[r] < 0 || m < t->mean[(size_t)r * t->n_cols + t->best[r]])) t->best[r] = c;
        }
    }
done:
    json_decref(rowfilter);
    free(row_of);
    free(mean);
    free(sd);
    free(vals);
    free(cnt);
    free(failed);
    return rc;
}

/* Whether some run has parameter name ("status": every run): a table grouped or filtered by a
 * misspelt one was a table of "-" with status 0 */
static int param_known(const dp_result *rows, long n, const char *name)
{
    if (strcmp(name, "status") == 0) return 1;
    for (long i = 0; i < n; i++) {
        json_error_t je;
        json_t *p = json_loads(rows[i].params, 0, &je);
        const int has = json_object_get(p, name) != NULL;
        json_decref(p);
        if (has) return 1;
    }
    return 0;
}

/* DP_EINVAL naming the parameter and what the runs have (the first run's parameters) */
static int unknown_param(const dp_result *rows, long n, const char *what, const char *name, dp_error *err)
{
    char known[1024] = "";
    json_error_t je;
    json_t *p = n ? json_loads(rows[0].params, 0, &je) : NULL;
    const char *k;
    json_t *v;
    json_object_foreach(p, k, v) {
        (void)v;
        size_t L = strlen(known);
        snprintf(known + L, sizeof known - L, "%s%s", L ? ", " : "", k);
    }
    json_decref(p);
    return dp_error_set(err, DP_EINVAL, "%s: no run has the parameter \"%s\" (the runs' parameters: %s, status)", what, name,
                        known[0] ? known : "none");
}

int dp_report_spec_check(const dp_report_spec *spec, const char *where, dp_error *err)
{
    const char *w = where ? where : "";
    if (!metric_known(spec->metric))
        return dp_error_set(err, DP_EINVAL, "%s%sunknown metric \"%s\" (makespan, seconds, episodes, seconds_per_episode, metrics.NAME)",
                            w, where ? "metric: " : "", spec->metric);
    if (spec->n_rows < 1) return dp_error_set(err, DP_EINVAL, "%s%sa table needs at least one row parameter", w, where ? "rows: " : "");
    const size_t NX = spec->columns ? json_array_size(spec->columns) : 0;
    for (size_t c = 0; c < NX; c++) {
        json_t *col = json_array_get(spec->columns, c);
        json_t *m = json_object_get(col, "metric"), *ratio = json_object_get(col, "ratio");
        if (json_is_string(m) && !metric_known(json_string_value(m)))
            return dp_error_set(err, DP_EINVAL, "%scolumns[%zu]: unknown metric \"%s\"", w, c, json_string_value(m));
        for (size_t k = 0; k < json_array_size(ratio); k++) {
            const char *lab = json_string_value(json_array_get(ratio, k));
            int found = 0;
            for (size_t d = 0; d < NX && lab && !found; d++)
                found = d != c && json_is_string(json_object_get(json_array_get(spec->columns, d), "label")) &&
                        strcmp(json_string_value(json_object_get(json_array_get(spec->columns, d), "label")), lab) == 0;
            if (!found) return dp_error_set(err, DP_EINVAL, "%scolumns[%zu].ratio: no other column labelled \"%s\"", w, c, lab ? lab : "");
        }
    }
    return DP_OK;
}

int dp_report_build(const dp_result *rows, long n, const dp_report_spec *spec, dp_report_table *t, dp_error *err)
{
    memset(t, 0, sizeof *t);
    int rc0 = dp_report_spec_check(spec, NULL, err);
    if (rc0 != DP_OK) return rc0;
    size_t NX = spec->columns ? json_array_size(spec->columns) : 0;
    /* (no run yet, as in a sweep stopped before its first run ended: the empty table) */
    for (int k = 0; k < spec->n_rows && n > 0; k++)
        if (!param_known(rows, n, spec->rows[k])) return unknown_param(rows, n, "rows", spec->rows[k], err);
    if (!NX && n > 0 && !param_known(rows, n, spec->cols)) return unknown_param(rows, n, "cols", spec->cols, err);
    {
        const char *k;
        json_t *v;
        json_object_foreach(spec->filter, k, v) {
            (void)v;
            if (n > 0 && !param_known(rows, n, k)) return unknown_param(rows, n, "where", k, err);
        }
    }
    if (strncmp(spec->metric, "metrics.", 8) == 0 || strcmp(spec->metric, "seconds_per_episode") == 0) {
        /* a metric no finished run reports (each cell said "- (N failed)"; seconds_per_episode
         * of runs none of which trains was a table of "-": a review) */
        long have = 0;
        for (long i = 0; i < n && !have; i++) {
            int known;
            have = strcmp(rows[i].status, "ok") == 0 && !isnan(dp_report_metric(&rows[i], spec->metric, &known));
        }
        long ok = 0;
        for (long i = 0; i < n; i++) ok += strcmp(rows[i].status, "ok") == 0;
        if (!have && ok > 0)
            return dp_error_set(err, DP_EINVAL, "metric \"%s\": no finished run reports it", spec->metric);
    }
    const int K = spec->n_rows;
    t->path_labels = dp_report_path_labels(rows, n);
    int *run_row = dp_alloc_malloc_n(n ? (size_t)n : 1, sizeof(int));
    int *run_col = dp_alloc_malloc_n(n ? (size_t)n : 1, sizeof(int));
    char **rk = NULL, **cl = NULL, **rjoin = NULL, **mtext = NULL, **mkey = NULL, **kbuf = NULL, **cellset = NULL,
         **rowset = NULL, *pooled_params = NULL;
    int nr = 0, nc = 0, rcap = 0, ccap = 0, rkcap = 0;
    char *units = dp_report_strdup("");
    double *vals = NULL;
    int rc = DP_OK;
    if (!run_row || !run_col || !units) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    if (NX) {
        nc = ccap = (int)NX;
        cl = dp_alloc_calloc(NX, sizeof(char *));
        if (!cl) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
        for (size_t c = 0; c < NX; c++) cl[c] = dp_report_strdup(json_string_value(json_object_get(json_array_get(spec->columns, c), "label")));
    }
    /* rows (and, without explicit columns, columns) in order of first appearance */
    for (long i = 0; i < n; i++) {
        run_row[i] = run_col[i] = -1;
        if (!dp_report_filter_match(&rows[i], spec->filter)) continue;
        json_error_t je;
        json_t *p = json_loads(rows[i].params, 0, &je);
        if (!p) continue;
        char lab[512], join[4096] = "";
        for (int k = 0; k < K; k++) {
            dp_report_value_label_in(spec->rows[k], json_object_get(p, spec->rows[k]), spec->labels, t->path_labels, lab, sizeof lab);
            if (k) strncat(join, " / ", sizeof join - strlen(join) - 1);
            strncat(join, lab, sizeof join - strlen(join) - 1);
        }
        int r = dp_report_list_find(rjoin, nr, join);
        if (r < 0) {
            if (grow((void **)&rjoin, &rcap, nr, sizeof(char *))) {
                json_decref(p);
                rc = dp_error_set(err, DP_ENOMEM, "out of memory");
                goto fail;
            }
            while (rkcap < (nr + 1) * K) {
                if (grow((void **)&rk, &rkcap, rkcap, sizeof(char *))) { json_decref(p); rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
            }
            for (int k = 0; k < K; k++) {
                dp_report_value_label_in(spec->rows[k], json_object_get(p, spec->rows[k]), spec->labels, t->path_labels, lab, sizeof lab);
                rk[(size_t)nr * K + k] = dp_report_strdup(lab);
            }
            rjoin[nr] = dp_report_strdup(join);
            r = nr++;
        }
        run_row[i] = r;
        if (!NX) {
            dp_report_value_label_in(spec->cols, json_object_get(p, spec->cols), spec->labels, t->path_labels, lab, sizeof lab);
            int c = dp_report_list_find(cl, nc, lab);
            if (c < 0) {
                if (grow((void **)&cl, &ccap, nc, sizeof(char *))) { json_decref(p); rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
                cl[nc] = dp_report_strdup(lab);
                c = nc++;
            }
            run_col[i] = c;
        }
        json_decref(p);
        char mu[128] = "";
        if (strcmp(rows[i].status, "ok") == 0 && rows[i].units[0])
            dp_report_metric_unit(&rows[i], spec->metric, mu, sizeof mu);
        if (mu[0]) {
            /* the distinct units of the table's metric, "; "-joined */
            const char *u = mu;
            int seen = 0;
            size_t L = strlen(u);
            for (const char *q = units; !seen && (q = strstr(q, u)) != NULL; q++)
                seen = (q == units || q[-1] == ' ') && (q[L] == ';' || q[L] == '\0');
            if (!seen) {
                size_t NL = strlen(units) + L + 3;
                char *nu = dp_alloc_malloc(NL);
                if (nu) {
                    snprintf(nu, NL, "%s%s%s", units, *units ? "; " : "", u);
                    free(units);
                    units = nu;
                }
            }
        }
    }
    if (nr == 0 && n > 0) {
        /* the values the filter's keys take, so that a label (a graph's name where the runs hold
         * its path) is told from a value (it said only that nothing matched; a review) */
        char *w = json_dumps(spec->filter, JSON_COMPACT), takes[1024] = "";
        const char *fk;
        json_t *fv;
        json_object_foreach(spec->filter, fk, fv) {
            json_t *seen = json_array();
            for (long i = 0; i < n && seen; i++) {
                json_t *p = json_loads(rows[i].params, 0, NULL);
                json_t *x = p ? json_object_get(p, fk) : NULL;
                int dup = !x;
                for (size_t j = 0; !dup && j < json_array_size(seen); j++) dup = json_equal(json_array_get(seen, j), x);
                if (!dup) json_array_append(seen, x);
                json_decref(p);
            }
            /* the first four distinct values, then how many other distinct ones (it counted runs) */
            const size_t more = seen && json_array_size(seen) > 4 ? json_array_size(seen) - 4 : 0;
            while (seen && json_array_size(seen) > 4) json_array_remove(seen, json_array_size(seen) - 1);
            size_t L = strlen(takes);
            snprintf(takes + L, sizeof takes - L, "; %s takes ", fk);
            for (size_t j = 0; seen && j < json_array_size(seen); j++) {
                char *txt = json_dumps(json_array_get(seen, j), JSON_COMPACT | JSON_ENCODE_ANY);
                L = strlen(takes);
                snprintf(takes + L, sizeof takes - L, "%s%s", j ? ", " : "", txt ? txt : "?");
                free(txt);
            }
            L = strlen(takes);
            if (!seen || json_array_size(seen) == 0) snprintf(takes + L, sizeof takes - L, "no value (no run has it)");
            else if (more) snprintf(takes + L, sizeof takes - L, " and %zu more", more);
            json_decref(seen);
        }
        rc = dp_error_set(err, DP_EINVAL, "no run matches where %s (of %ld runs)%s", w ? w : "?", n, takes);
        free(w);
        goto fail;
    }
    for (int b = 0; b < spec->n_baselines && !NX && n > 0; b++) {
        /* a baseline is a value of the column parameter (or its label) in some run, the filter's
         * or not: one that is none gave a table without baselines or ratios */
        char lab[512], v[512];
        json_t *sv = json_string(spec->baselines[b]);
        dp_report_value_label_in(spec->cols, sv, spec->labels, t->path_labels, lab, sizeof lab);
        json_decref(sv);
        int found = 0;
        for (long i = 0; i < n && !found; i++) {
            json_error_t je;
            json_t *p = json_loads(rows[i].params, 0, &je);
            json_t *x = json_object_get(p, spec->cols);
            if (x) {
                dp_report_value_label_in(spec->cols, x, spec->labels, t->path_labels, v, sizeof v);
                found = strcmp(v, lab) == 0 || strcmp(v, spec->baselines[b]) == 0 ||
                        (json_is_string(x) && strcmp(json_string_value(x), spec->baselines[b]) == 0);
            }
            json_decref(p);
        }
        if (!found) {
            rc = dp_error_set(err, DP_EINVAL, "baselines: \"%s\" is no value of %s in these runs", spec->baselines[b],
                              spec->cols);
            goto fail;
        }
    }
    size_t cells = (size_t)(nr ? nr : 1) * (nc ? nc : 1);
    t->mean = dp_alloc_malloc_n(cells, sizeof(double));
    t->sd = dp_alloc_malloc_n(cells, sizeof(double));
    t->n = dp_alloc_calloc_n(cells, sizeof(long));
    t->n_failed = dp_alloc_calloc_n(cells, sizeof(long));
    t->is_baseline = dp_alloc_calloc_n(nc ? (size_t)nc : 1, sizeof(int));
    t->is_reference = dp_alloc_calloc_n(nc ? (size_t)nc : 1, sizeof(int));
    t->best = dp_alloc_malloc_n(nr ? (size_t)nr : 1, sizeof(int));
    vals = dp_alloc_malloc_n(n ? (size_t)n : 1, sizeof(double));
    if (!t->mean || !t->sd || !t->n || !t->n_failed || !t->is_baseline || !t->is_reference || !t->best || !vals) {
        rc = dp_error_set(err, DP_ENOMEM, "out of memory");
        goto fail;
    }
    mtext = dp_alloc_calloc(n ? (size_t)n : 1, sizeof(char *)); /* each run's machine (run_machine_text), as needed */
    mkey = dp_alloc_calloc(n ? (size_t)n : 1, sizeof(char *));  /* and with its device count (run_machine_key) */
    kbuf = dp_alloc_malloc_n(n ? (size_t)n : 1, sizeof(char *));
    cellset = dp_alloc_calloc(cells, sizeof(char *));
    rowset = dp_alloc_calloc(nr ? (size_t)nr : 1, sizeof(char *));
    if (!mtext || !mkey || !kbuf || !cellset || !rowset) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    for (int c = 0; c < nc; c++) {
        json_t *col = NX ? json_array_get(spec->columns, (size_t)c) : NULL;
        json_t *where = json_object_get(col, "where"), *values = json_object_get(col, "values");
        json_t *ratio = json_object_get(col, "ratio");
        if (ratio) {
            /* the quotient of two other columns' means: filled below, once they are */
            t->is_reference[c] = 1;
            for (int r = 0; r < nr; r++) t->mean[(size_t)r * nc + c] = t->sd[(size_t)r * nc + c] = NAN;
            continue;
        }
        json_t *jm = json_object_get(col, "metric");
        const char *metric = json_is_string(jm) ? json_string_value(jm) : spec->metric;
        if (json_is_string(jm) && strcmp(metric, spec->metric) != 0) t->per_column_metric = 1;
        t->is_reference[c] = values != NULL;
        for (int r = 0; r < nr; r++) {
            size_t cell = (size_t)r * nc + c;
            if (values) {
                /* published figures: shown as they are, no runs behind them */
                json_t *v = json_object_get(values, rjoin[r]);
                t->mean[cell] = json_is_number(v) ? json_number_value(v) : NAN;
                t->sd[cell] = NAN;
                continue;
            }
            size_t m = 0, nk = 0;
            long failed = 0, devices = -1;
            const char *machine = NULL;
            json_t *design0 = NULL;
            for (long i = 0; i < n; i++) {
                if (run_row[i] != r) continue;
                if (NX ? !dp_report_filter_match(&rows[i], where) : run_col[i] != c) continue;
                if (!mtext[i]) mtext[i] = run_machine_text(rows[i].params);
                if (!machine) machine = mtext[i];
                else if (mtext[i] && strcmp(mtext[i], machine) != 0) t->pooled_machines = 1;
                /* the other parameters: a cell of anneal's budgets 10 and 300 was one mean "over
                 * seeds and repetitions" without a word (a review) */
                json_t *design = run_design(&rows[i], spec, NX ? where : NULL);
                if (!design0) design0 = design;
                else if (design) {
                    if (!json_equal(design, design0)) add_differing(design0, design, &pooled_params);
                    json_decref(design);
                }
                /* the device count too (run_machine_text leaves it out): a cell of 4 and 8
                 * devices was pooled without a word (a review) */
                if (strcmp(rows[i].status, "ok") == 0) {
                    if (devices < 0) devices = rows[i].devices;
                    else if (rows[i].devices != devices) t->pooled_machines = 1;
                    if (!mkey[i] && !(mkey[i] = run_machine_key(&rows[i], mtext[i]))) {
                        json_decref(design0);
                        rc = dp_error_set(err, DP_ENOMEM, "out of memory");
                        goto fail;
                    }
                    kbuf[nk++] = mkey[i];
                }
                if (strcmp(rows[i].status, "ok") != 0) { failed++; continue; }
                int known;
                const double x = dp_report_metric(&rows[i], metric, &known);
                /* a finished run for which the metric is undefined (seconds_per_episode of a
                 * method without episodes) is no failed run: it was counted as one */
                if (isnan(x)) continue;
                vals[m++] = x;
            }
            json_decref(design0);
            /* the cell's machines, for the row's reference columns (table_add_references) */
            if (!(cellset[cell] = text_set(kbuf, nk))) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
            t->n[cell] = (long)m;
            t->n_failed[cell] = failed;
            t->mean[cell] = m ? gsl_stats_mean(vals, 1, m) : NAN;
            t->sd[cell] = m >= 2 ? gsl_stats_sd(vals, 1, m) : NAN;
        }
        if (json_is_true(json_object_get(col, "baseline"))) t->is_baseline[c] = 1;
        for (int b = 0; b < spec->n_baselines; b++) {
            char lab[512];
            json_t *sv = json_string(spec->baselines[b]);
            dp_report_value_label_in(spec->cols, sv, spec->labels, t->path_labels, lab, sizeof lab);
            json_decref(sv);
            if (strcmp(lab, cl[c]) == 0 || strcmp(spec->baselines[b], cl[c]) == 0) t->is_baseline[c] = 1;
        }
    }
    /* each row's machines: the union of its cells'; none (NULL) when two of its cells have no
     * machine in common, as the columns of --cols devices do (the reference columns pooled the
     * row's runs of every device count, and round-robin's mean of 2 and 4 devices was the best
     * baseline of a column of 4: a review) */
    for (int r = 0; r < nr; r++) {
        int split = 0;
        rowset[r] = dp_report_strdup("");
        for (int c = 0; c < nc && rowset[r] && !split; c++) {
            const char *a = cellset[(size_t)r * nc + c];
            if (!a || !*a) continue;
            for (int c2 = 0; c2 < c && !split; c2++) {
                const char *b = cellset[(size_t)r * nc + c2];
                split = b && *b && !sets_meet(a, b);
            }
            char *u = set_union(rowset[r], a);
            free(rowset[r]);
            rowset[r] = u;
        }
        if (!rowset[r] && !split) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
        if (split) {
            free(rowset[r]);
            rowset[r] = NULL;
        }
    }
    for (int c = 0; c < nc; c++) {
        json_t *ratio = json_object_get(NX ? json_array_get(spec->columns, (size_t)c) : NULL, "ratio");
        if (!ratio) continue;
        int a = dp_report_list_find(cl, nc, json_string_value(json_array_get(ratio, 0)));
        int b = dp_report_list_find(cl, nc, json_string_value(json_array_get(ratio, 1)));
        if (a < 0 || b < 0) {
            rc = dp_error_set(err, DP_EINVAL, "columns[%d].ratio: no column labelled \"%s\"", c,
                              json_string_value(json_array_get(ratio, a < 0 ? 0 : 1)));
            goto fail;
        }
        for (int r = 0; r < nr; r++) t->mean[(size_t)r * nc + c] = dp_report_ratio(t->mean[(size_t)r * nc + a], t->mean[(size_t)r * nc + b]);
    }
    for (int r = 0; r < nr; r++) {
        t->best[r] = -1;
        for (int c = 0; c < nc; c++) {
            double m = t->mean[(size_t)r * nc + c];
            if (t->is_baseline[c] && !isnan(m) && (t->best[r] < 0 || m < t->mean[(size_t)r * nc + t->best[r]])) t->best[r] = c;
        }
    }
    t->n_keys = K;
    t->key_names = dp_alloc_calloc((size_t)K, sizeof(char *));
    if (!t->key_names) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    for (int k = 0; k < K; k++) t->key_names[k] = dp_report_strdup(spec->rows[k]);
    t->n_rows = nr;
    t->n_cols = nc;
    t->row_keys = rk;
    t->col_labels = cl;
    t->title = dp_report_strdup(spec->title ? spec->title : "");
    t->metric = dp_report_strdup(spec->metric);
    t->units = units;
    t->digits = spec->digits;
    t->row_machines = rowset;
    t->col_name = dp_report_strdup(NX || !spec->cols ? "column" : spec->cols);
    t->pooled_params = pooled_params;
    dp_report_list_free(rjoin, nr);
    if (mtext) dp_report_list_free(mtext, (int)n);
    if (mkey) dp_report_list_free(mkey, (int)n);
    if (cellset) dp_report_list_free(cellset, (int)cells);
    free(kbuf);
    free(run_row);
    free(run_col);
    free(vals);
    if (table_add_references(rows, n, spec, t) != DP_OK) {
        dp_report_table_free(t);
        return dp_error_set(err, DP_ENOMEM, "out of memory");
    }
    return DP_OK;
fail:
    dp_report_list_free(rjoin, nr);
    if (mtext) dp_report_list_free(mtext, (int)n);
    if (mkey) dp_report_list_free(mkey, (int)n);
    if (cellset) dp_report_list_free(cellset, (int)(nr ? nr : 1) * (nc ? nc : 1));
    if (rowset) dp_report_list_free(rowset, nr);
    free(kbuf);
    free(pooled_params);
    dp_report_list_free(rk, nr * K);
    dp_report_list_free(cl, nc);
    free(units);
    free(run_row);
    free(run_col);
    free(vals);
    t->n_rows = t->n_cols = t->n_keys = 0;
    t->row_keys = t->col_labels = NULL;
    t->units = NULL;
    dp_report_table_free(t);
    return rc;
}

double dp_report_ratio(double a, double b)
{
    return b == 0 || isnan(a) || isnan(b) ? NAN : a / b;
}

void dp_report_fmt_g(double x, int digits, char *buf, size_t cap)
{
    if (isnan(x)) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%.*g", digits, x);
}

/* the ratio columns: every column that is not a baseline, when there are baselines */
int dp_report_has_ratios(const dp_report_table *t)
{
    for (int c = 0; c < t->n_cols; c++)
        if (t->is_baseline[c]) return 1;
    return 0;
}

/* s in a markdown cell (| escaped) or as LaTeX text: the ten special characters escaped or
 * spelled out (only _ % & # $ were: a ^, ~, \, { or } in a graph's name broke the table, a review) */
static void put_escaped(FILE *f, const char *s, int tex)
{
    for (; *s; s++) {
        if (tex) {
            switch (*s) {
            case '\\': fputs("\\textbackslash{}", f); continue;
            case '^': fputs("\\textasciicircum{}", f); continue;
            case '~': fputs("\\textasciitilde{}", f); continue;
            case '_': case '%': case '&': case '#': case '$': case '{': case '}': fputc('\\', f); break;
            default: break;
            }
        } else if (*s == '|') {
            fputc('\\', f);
        }
        fputc(*s, f);
    }
}

/* s as one CSV field (RFC 4180: quoted when it holds a comma, a quote or a line end; a label with
 * a comma split its row: a review) */
static void put_csv(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) { fputs(s, f); return; }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* put_csv of a label with a suffix (" mean", " / best baseline") */
static void put_csv2(FILE *f, const char *s, const char *suffix)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", s, suffix);
    put_csv(f, buf);
}

int dp_report_write(FILE *f, const dp_report_table *t, const char *format, dp_error *err)
{
    int md = strcmp(format, "md") == 0, csv = strcmp(format, "csv") == 0, tex = strcmp(format, "tex") == 0;
    if (!md && !csv && !tex) return dp_error_set(err, DP_EINVAL, "unknown format \"%s\" (md, csv, tex)", format);
    int ratios = dp_report_has_ratios(t);
    char a[64], b[64];
    const int NC = t->n_cols;
    if (csv) {
        for (int k = 0; k < t->n_keys; k++) { if (k) fputc(',', f); put_csv(f, t->key_names[k]); }
        if (t->mixed_units) fprintf(f, ",units");
        for (int c = 0; c < NC; c++) {
            fputc(',', f); put_csv2(f, t->col_labels[c], " mean");
            fputc(',', f); put_csv2(f, t->col_labels[c], " sd");
            fputc(',', f); put_csv2(f, t->col_labels[c], " n");
            fputc(',', f); put_csv2(f, t->col_labels[c], " failed");
        }
        if (ratios) {
            fprintf(f, ",best baseline");
            for (int c = 0; c < NC; c++)
                if (!t->is_baseline[c] && !t->is_reference[c]) { fputc(',', f); put_csv2(f, t->col_labels[c], " / best baseline"); }
        }
        fputc('\n', f);
        for (int r = 0; r < t->n_rows; r++) {
            for (int k = 0; k < t->n_keys; k++) { if (k) fputc(',', f); put_csv(f, t->row_keys[(size_t)r * t->n_keys + k]); }
            if (t->mixed_units) { fputc(',', f); put_csv(f, t->row_units[r]); }
            for (int c = 0; c < NC; c++) {
                size_t i = (size_t)r * NC + c;
                dp_report_fmt_g(t->mean[i], 17, a, sizeof a);
                dp_report_fmt_g(t->sd[i], 17, b, sizeof b);
                fprintf(f, ",%s,%s,%ld,%ld", isnan(t->mean[i]) ? "" : a, isnan(t->sd[i]) ? "" : b, t->n[i], t->n_failed[i]);
            }
            if (ratios) {
                double best = t->best[r] >= 0 ? t->mean[(size_t)r * NC + t->best[r]] : NAN;
                fputc(',', f);
                put_csv(f, t->best[r] >= 0 ? t->col_labels[t->best[r]] : "");
                for (int c = 0; c < NC; c++) {
                    if (t->is_baseline[c] || t->is_reference[c]) continue;
                    double q = dp_report_ratio(t->mean[(size_t)r * NC + c], best);
                    dp_report_fmt_g(q, 17, a, sizeof a);
                    fprintf(f, ",%s", isnan(q) ? "" : a);
                }
            }
            fputc('\n', f);
        }
        return ferror(f) ? dp_error_set(err, DP_EIO, "write error") : DP_OK;
    }
    /* md and tex share the cell texts */
    int ncols_out = t->n_keys + (t->mixed_units ? 1 : 0) + NC + (ratios ? 1 : 0);
    for (int c = 0; ratios && c < NC; c++) ncols_out += !t->is_baseline[c] && !t->is_reference[c];
    const char *sep = md ? " | " : " & ";
    if (md && t->title[0]) fprintf(f, "**%s**\n\n", t->title);
    if (tex && t->title[0]) { /* the heading, as md's (it was dropped: a review) */
        fputs("\\textbf{", f);
        put_escaped(f, t->title, 1);
        fputs("}\\par\\smallskip\n", f);
    }
    if (tex) {
        fprintf(f, "\\begin{tabular}{");
        for (int k = 0; k < ncols_out; k++) fputc(k < t->n_keys + t->mixed_units ? 'l' : 'r', f);
        fprintf(f, "}\n\\toprule\n");
    }
    if (md) fprintf(f, "| ");
    for (int k = 0; k < t->n_keys; k++) { if (k) fputs(sep, f); put_escaped(f, t->key_names[k], tex); }
    if (t->mixed_units) { fputs(sep, f); fputs("units", f); }
    for (int c = 0; c < NC; c++) {
        fputs(sep, f);
        put_escaped(f, t->col_labels[c], tex);
        if (t->is_baseline[c] && ratios) fputs(md ? " (b)" : " (b)", f);
    }
    if (ratios) {
        fputs(sep, f);
        fputs("best baseline", f);
        for (int c = 0; c < NC; c++) {
            if (t->is_baseline[c] || t->is_reference[c]) continue;
            fputs(sep, f);
            put_escaped(f, t->col_labels[c], tex);
            fputs(" / best", f);
        }
    }
    fputs(md ? " |\n|" : " \\\\\n\\midrule\n", f);
    if (md) {
        for (int k = 0; k < ncols_out; k++) fputs(k < t->n_keys + t->mixed_units ? "---|" : "---:|", f);
        fputc('\n', f);
    }
    for (int r = 0; r < t->n_rows; r++) {
        if (md) fprintf(f, "| ");
        for (int k = 0; k < t->n_keys; k++) { if (k) fputs(sep, f); put_escaped(f, t->row_keys[(size_t)r * t->n_keys + k], tex); }
        if (t->mixed_units) {
            /* the unit's name without its explanation, which the footer gives once */
            const char *u = t->row_units[r], *paren = strstr(u, " (");
            char shortu[128];
            snprintf(shortu, sizeof shortu, "%.*s", paren ? (int)(paren - u) : (int)strlen(u), u);
            fputs(sep, f);
            put_escaped(f, shortu, tex);
        }
        for (int c = 0; c < NC; c++) {
            size_t i = (size_t)r * NC + c;
            fputs(sep, f);
            dp_report_fmt_g(t->mean[i], t->digits, a, sizeof a);
            int bold = ratios && c == t->best[r];
            if (bold) fputs(md ? "**" : "\\textbf{", f);
            fputs(a, f);
            if (bold) fputs(md ? "**" : "}", f);
            if (!isnan(t->sd[i])) {
                dp_report_fmt_g(t->sd[i], 2, b, sizeof b);
                fprintf(f, md ? " ± %s" : " $\\pm$ %s", b);
            }
            if (t->n_failed[i]) fprintf(f, " (%ld failed)", t->n_failed[i]);
        }
        if (ratios) {
            double best = t->best[r] >= 0 ? t->mean[(size_t)r * NC + t->best[r]] : NAN;
            fputs(sep, f);
            if (t->best[r] >= 0) put_escaped(f, t->col_labels[t->best[r]], tex);
            else fputs("-", f);
            for (int c = 0; c < NC; c++) {
                if (t->is_baseline[c] || t->is_reference[c]) continue;
                double q = dp_report_ratio(t->mean[(size_t)r * NC + c], best);
                fputs(sep, f);
                if (isnan(q)) fputs("-", f);
                else fprintf(f, "%.3f (%+.1f%s)", q, 100.0 * (q - 1.0), tex ? "\\%" : "%");
            }
        }
        fputs(md ? " |\n" : " \\\\\n", f);
    }
    if (tex) fprintf(f, "\\bottomrule\n\\end{tabular}\n");
    /* the note: what a cell is, its units, the marks. The TeX table had none (numbers without
     * their units, a review): there it follows the tabular, escaped, in small type */
    char *note = NULL;
    size_t note_len = 0;
    FILE *nf = open_memstream(&note, &note_len);
    if (!nf) return dp_error_set(err, DP_ENOMEM, "out of memory");
    if (t->per_column_metric) fprintf(nf, "Each column's metric (default %s): mean", t->metric);
    else fprintf(nf, "%s: mean", t->metric);
    fprintf(nf, " \xc2\xb1 sample standard deviation over seeds and repetitions");
    if (t->pooled_machines)
        fprintf(nf, " (and machines: some cells pool runs whose machine keys, such as devices, comm_ratio or bandwidth, differ; "
                    "make the key a row or column, or filter with where)");
    if (t->pooled_params)
        fprintf(nf, " (and %s: some cells pool runs that differ in %s; make %s a row or column, or filter with where)",
                t->pooled_params, strchr(t->pooled_params, ',') ? "them" : "it", strchr(t->pooled_params, ',') ? "each" : "it");
    if (t->refs_left_out)
        fprintf(nf, "; rows whose columns are runs on different machines (such as --cols devices) have no round-robin, "
                    "random, single device, lower bound or best known value: make the machine key a row");
    if (t->mixed_units) fprintf(nf, "; each row in its own units (units column: %s)", t->units);
    else if (t->units && *t->units) fprintf(nf, "; units: %s", t->units);
    int ratio_cols = 0;
    for (int c = 0; c < NC; c++) ratio_cols += !t->is_baseline[c] && !t->is_reference[c];
    int zero_best = 0; /* a row whose best baseline's mean is 0: its ratios are "-" */
    for (int r = 0; ratios && r < t->n_rows; r++) zero_best |= t->best[r] >= 0 && t->mean[(size_t)r * NC + t->best[r]] == 0;
    if (ratios)
        fprintf(nf, "; (b) marks the baselines, the best one in bold%s%s",
                ratio_cols ? "; X / best is X's mean over the best baseline's (lower is better)"
                           : " (every other column is a reference: no ratio column)",
                ratio_cols && zero_best ? ", - where the best baseline's mean is 0" : "");
    for (int c = 0; c < NC; c++)
        if (strcmp(t->col_labels[c], "best known") == 0) {
            json_t *src = json_object_get(best_known(), "source");
            fprintf(nf, "; best known: data/best-known.json (%s)", json_is_string(src) ? json_string_value(src) : "");
            break;
        }
    fputc('.', nf);
    if (fclose(nf) != 0 || !note) {
        free(note);
        return dp_error_set(err, DP_ENOMEM, "out of memory");
    }
    if (md) fprintf(f, "\n%s\n", note);
    if (tex) {
        fputs("\\par\\smallskip{\\footnotesize ", f);
        /* each plus-minus sign as TeX's, the rest escaped */
        for (char *p = note, *q; *p; p = q + 2) {
            q = strstr(p, "\xc2\xb1");
            if (!q) { put_escaped(f, p, 1); break; }
            *q = '\0';
            put_escaped(f, p, 1);
            fputs("$\\pm$", f);
        }
        fputs("}\n", f);
    }
    free(note);
    return ferror(f) ? dp_error_set(err, DP_EIO, "write error") : DP_OK;
}

int dp_report_write_runs(FILE *f, const dp_result *rows, long n, dp_error *err)
{
    /* the CSV writer of results.c, through a temporary path would be atomic; stdout is a stream */
    int nc;
    const dp_result_column *cols = dp_result_columns(&nc);
    for (int c = 0; c < nc; c++) fprintf(f, "%s%s", c ? "," : "", cols[c].name);
    fputc('\n', f);
    for (long i = 0; i < n; i++) {
        for (int c = 0; c < nc; c++) {
            const char *base = (const char *)&rows[i] + cols[c].offset;
            if (c) fputc(',', f);
            if (cols[c].type == DP_COL_INT) fprintf(f, "%ld", *(const long *)base);
            else if (cols[c].type == DP_COL_DBL) {
                double x = *(const double *)base;
                if (isfinite(x)) fprintf(f, "%.17g", x);
            } else {
                const char *s = *(char *const *)base;
                if (strpbrk(s, ",\"\n\r")) {
                    fputc('"', f);
                    for (; *s; s++) {
                        if (*s == '"') fputc('"', f);
                        fputc(*s, f);
                    }
                    fputc('"', f);
                } else fputs(s, f);
            }
        }
        fputc('\n', f);
    }
    return ferror(f) ? dp_error_set(err, DP_EIO, "write error") : DP_OK;
}

/* ------------------------------------------------------------ compare ---- */

/* what --compare leaves out: wall-clock times, and how a run got there (resumed_in_stage: a run
 * killed and resumed has the figures of one that was not; it was reported as a difference one
 * way and not the other: a review) */
static int wall_clock_metric(const char *name)
{
    size_t L = strlen(name);
    return strstr(name, "seconds") != NULL || (L > 2 && strcmp(name + L - 2, "_s") == 0) ||
           strcmp(name, "resumed_in_stage") == 0;
}

/* Both NaN (none) or the same value are equal; else a non-finite value on either side differs
 * (inf against a finite value was equal: inf / inf is NaN, and NaN > tol false; a review) */
static int differs(double a, double b, double tol)
{
    if ((isnan(a) && isnan(b)) || a == b) return 0;
    if (!isfinite(a) || !isfinite(b)) return 1;
    double m = fmax(fabs(a), fabs(b));
    return m > 0 && fabs(a - b) / m > tol;
}

/* a compared value: "(none)" for NaN (a missing value), else %.10g (inf as "inf") */
static const char *cmp_value(double x, char *buf, size_t cap)
{
    if (isnan(x)) snprintf(buf, cap, "(none)");
    else snprintf(buf, cap, "%.10g", x);
    return buf;
}

static const dp_result *find_key(const dp_result *rows, long n, const char *key)
{
    for (long i = 0; i < n; i++)
        if (strcmp(rows[i].key, key) == 0) return &rows[i];
    return NULL;
}

static void run_name(const dp_result *r, char *buf, size_t cap)
{
    char g[256];
    json_error_t je;
    json_t *p = json_loads(r->params, 0, &je);
    dp_report_value_label("graph", json_object_get(p, "graph"), NULL, g, sizeof g);
    json_decref(p);
    snprintf(buf, cap, "%s %s %s seed %ld", r->key, g, r->method, r->seed);
}

int dp_report_compare(FILE *f, const dp_result *rows, long n, const dp_result *ref, long n_ref, double rel_tol,
                      long *n_diff, dp_error *err)
{
    long nd = 0, both = 0, only_new = 0, only_ref = 0;
    char name[512];
    for (long i = 0; i < n; i++) {
        const dp_result *a = &rows[i], *b = find_key(ref, n_ref, a->key);
        run_name(a, name, sizeof name);
        if (!b) {
            char x[64];
            fprintf(f, "%s: not in the reference (status %s, makespan %s)\n", name, a->status, cmp_value(a->makespan, x, sizeof x));
            only_new++;
            nd++;
            continue;
        }
        both++;
        int d = 0;
        if (strcmp(a->status, b->status) != 0) {
            fprintf(f, "%s: status: new %s, reference %s%s%s\n", name, a->status, b->status, a->error[0] ? "; new error: " : "", a->error);
            d = 1;
        } else if (differs(a->makespan, b->makespan, rel_tol)) {
            char x[64], y[64];
            fprintf(f, "%s: makespan: new %s, reference %s", name, cmp_value(a->makespan, x, sizeof x),
                    cmp_value(b->makespan, y, sizeof y));
            /* the change in percent where it is a number (it printed "(+nan%)" and "(+inf%)") */
            if (isfinite(a->makespan) && isfinite(b->makespan) && b->makespan != 0)
                fprintf(f, " (%+.3g%%)", 100.0 * (a->makespan - b->makespan) / b->makespan);
            fputc('\n', f);
            d = 1;
        }
        json_error_t je;
        json_t *ma = json_loads(a->metrics, 0, &je), *mb = json_loads(b->metrics, 0, &je);
        const char *k;
        json_t *v;
        json_object_foreach(ma, k, v) {
            if (!json_is_number(v) || wall_clock_metric(k)) continue;
            json_t *w = json_object_get(mb, k);
            /* a metric the reference does not record is new in this version, not a difference */
            if (!w || !json_is_number(w)) continue;
            double x = json_number_value(v), y = json_number_value(w);
            if (differs(x, y, rel_tol)) {
                char xs[64], ys[64];
                fprintf(f, "%s: metrics.%s: new %s, reference %s\n", name, k, cmp_value(x, xs, sizeof xs), cmp_value(y, ys, sizeof ys));
                d = 1;
            }
        }
        json_object_foreach(mb, k, v) {
            if (!json_is_number(v) || wall_clock_metric(k) || json_object_get(ma, k)) continue;
            fprintf(f, "%s: metrics.%s: new (none), reference %.10g\n", name, k, json_number_value(v));
            d = 1;
        }
        json_decref(ma);
        json_decref(mb);
        nd += d;
    }
    for (long j = 0; j < n_ref; j++) {
        if (find_key(rows, n, ref[j].key)) continue;
        run_name(&ref[j], name, sizeof name);
        char x[64];
        fprintf(f, "%s: in the reference only (status %s, makespan %s)\n", name, ref[j].status, cmp_value(ref[j].makespan, x, sizeof x));
        only_ref++;
        nd++;
    }
    fprintf(f, "%ld runs compared, %ld differ beyond a relative tolerance of %g (makespans and metrics; wall-clock seconds not compared)",
            both, nd - only_new - only_ref, rel_tol);
    if (only_new || only_ref) fprintf(f, "; %ld runs only in the new results, %ld only in the reference", only_new, only_ref);
    fprintf(f, "\n");
    if (n_diff) *n_diff = nd;
    return ferror(f) ? dp_error_set(err, DP_EIO, "write error") : DP_OK;
}
