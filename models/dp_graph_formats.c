/* dp_graph_formats.c: STG, WfCommons, MSR dnn-partitioning and DOT task-graph readers; DOT
 * writer; format dispatch for .json files and for writing. */
#include "dp_graph_formats.h"
#include "dp_file.h"
#include "dp_json.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- helpers ---------------- */

/* A string -> int map (open addressing, FNV-1a); keys are borrowed, not copied. */
typedef struct strmap {
    const char **key;
    int *val;
    size_t cap, n;
} strmap;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    return h;
}

static int strmap_init(strmap *m, size_t expect)
{
    m->cap = 16;
    while (m->cap < 2 * expect + 2) m->cap <<= 1;
    m->n = 0;
    m->key = calloc(m->cap, sizeof *m->key);
    m->val = dp_malloc_n(m->cap, sizeof *m->val);
    return m->key && m->val ? DP_OK : DP_ENOMEM;
}

static void strmap_free(strmap *m)
{
    free(m->key);
    free(m->val);
}

/* Value of key, or -1. */
static int strmap_get(const strmap *m, const char *key)
{
    size_t h = (size_t)fnv1a(key) & (m->cap - 1);
    while (m->key[h]) {
        if (strcmp(m->key[h], key) == 0) return m->val[h];
        h = (h + 1) & (m->cap - 1);
    }
    return -1;
}

/* Insert key -> val unless present; returns the value now stored (the old one if present), or
 * DP_ENOMEM (negative) when growing fails. */
static int strmap_put(strmap *m, const char *key, int val)
{
    if (2 * (m->n + 1) > m->cap) {
        strmap g;
        g.cap = m->cap * 2;
        g.n = 0;
        g.key = calloc(g.cap, sizeof *g.key);
        g.val = dp_malloc_n(g.cap, sizeof *g.val);
        if (!g.key || !g.val) { strmap_free(&g); return DP_ENOMEM; }
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i]) {
                size_t h = (size_t)fnv1a(m->key[i]) & (g.cap - 1);
                while (g.key[h]) h = (h + 1) & (g.cap - 1);
                g.key[h] = m->key[i];
                g.val[h] = m->val[i];
                g.n++;
            }
        strmap_free(m);
        *m = g;
    }
    size_t h = (size_t)fnv1a(key) & (m->cap - 1);
    while (m->key[h]) {
        if (strcmp(m->key[h], key) == 0) return m->val[h];
        h = (h + 1) & (m->cap - 1);
    }
    m->key[h] = key;
    m->val[h] = val;
    m->n++;
    return val;
}

static void file_stem(char *buf, size_t cap, const char *path)
{
    snprintf(buf, cap, "%s", dp_path_stem(path));
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = '\0';
}

/* Shortest "%.*g" that reads back exactly. */
static const char *fmt_num(double x, char *buf, size_t cap)
{
    for (int p = 6; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, x);
        if (strtod(buf, NULL) == x) break;
    }
    return buf;
}

/* For time graphs read from task-graph files: an op's output size is the largest transfer
 * time among its out-edges (the DOPPLER-compatible model reads edge sizes, not this). */
static void out_size_from_edges(dp_graph *g)
{
    for (int v = 0; v < g->n_ops; v++) {
        double m = 0;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
            if (g->edge_size[e] > m) m = g->edge_size[e];
        g->out_size[v] = m;
    }
}

/* ---------------- STG ---------------- */

typedef struct tok_stream {
    const char *path;
    const char *p, *end;
    int line;
    int tok_line;
} tok_stream;

/* Next whitespace-separated token ('#' comments skipped); returns its length (0 at the end). */
static size_t next_token(tok_stream *s, const char **start)
{
    for (;;) {
        while (s->p < s->end && isspace((unsigned char)*s->p)) {
            if (*s->p == '\n') s->line++;
            s->p++;
        }
        if (s->p < s->end && *s->p == '#') {
            while (s->p < s->end && *s->p != '\n') s->p++;
            continue;
        }
        break;
    }
    *start = s->p;
    s->tok_line = s->line;
    while (s->p < s->end && !isspace((unsigned char)*s->p) && *s->p != '#') s->p++;
    return (size_t)(s->p - *start);
}

/* Read an integer token in [lo, hi]; what names the field in the error. */
static int stg_int(tok_stream *s, long long lo, long long hi, const char *what, long long *out, dp_error *err)
{
    const char *t;
    int last = s->tok_line;
    size_t n = next_token(s, &t);
    if (n == 0)  /* named at the last line with a token */
        return dp_error_set(err, DP_EINVAL, "%s:%d: truncated file: expected %s, found the end", s->path, last, what);
    char buf[64];
    if (n >= sizeof buf)
        return dp_error_set(err, DP_EINVAL, "%s:%d: expected %s, found a %zu-character token", s->path, s->tok_line, what, n);
    memcpy(buf, t, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end || errno)
        return dp_error_set(err, DP_EINVAL, "%s:%d: expected %s (an integer), found '%s'", s->path, s->tok_line, what, buf);
    if (v < lo || v > hi)
        return dp_error_set(err, DP_EINVAL, "%s:%d: %s: %lld is out of range %lld..%lld", s->path, s->tok_line, what, v, lo, hi);
    *out = v;
    return DP_OK;
}

dp_graph *dp_graph_read_stg(const char *path, dp_error *err)
{
    size_t size;
    char *text = dp_read_text(path, &size, err);
    if (!text) return NULL;
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    tok_stream s = {path, text, text + size, 1, 1};
    long long n;
    char what[96];
    if (stg_int(&s, 0, DP_GRAPH_MAX_ELEMS - 2, "the task count", &n, err) != DP_OK) goto done;
    if (n == 0) { dp_error_set(err, DP_EINVAL, "%s:%d: the task count is 0", path, s.tok_line); goto done; }
    char stem[256];
    file_stem(stem, sizeof stem, path);
    b = dp_graph_builder_alloc(stem, path, DP_COST_TIME);
    if (!b) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    for (long long i = 0; i <= n + 1; i++) {
        long long id, np, t;
        snprintf(what, sizeof what, "task id %lld", i);
        if (stg_int(&s, 0, n + 1, what, &id, err) != DP_OK) goto done;
        if (id != i) {
            dp_error_set(err, DP_EINVAL, "%s:%d: task %lld expected here (tasks are listed in order 0..%lld), found %lld",
                         path, s.tok_line, i, n + 1, id);
            goto done;
        }
        snprintf(what, sizeof what, "the processing time of task %lld", i);
        if (stg_int(&s, 0, (long long)1 << 52, what, &t, err) != DP_OK) goto done;
        int tl = s.tok_line;
        if ((i == 0 || i == n + 1) && t != 0) {
            dp_error_set(err, DP_EINVAL, "%s:%d: task %lld is the dummy %s task and must have processing time 0, found %lld",
                         path, tl, i, i == 0 ? "entry" : "exit", t);
            goto done;
        }
        snprintf(what, sizeof what, "the predecessor count of task %lld", i);
        if (stg_int(&s, 0, n + 1, what, &np, err) != DP_OK) goto done;
        if (i == 0 && np != 0) {
            dp_error_set(err, DP_EINVAL, "%s:%d: task 0 is the dummy entry task and must have no predecessors", path, s.tok_line);
            goto done;
        }
        if (i >= 1 && i <= n) {
            /* real task i is op i - 1 (predecessors may name later tasks: finish() checks) */
            char nm[24];
            snprintf(nm, sizeof nm, "%lld", i);
            if (dp_graph_builder_add_op(b, nm, "task", (double)t, 0) < 0) {
                dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
                goto done;
            }
        }
        for (long long k = 0; k < np; k++) {
            long long p;
            snprintf(what, sizeof what, "predecessor %lld of task %lld", k + 1, i);
            if (stg_int(&s, 0, n, what, &p, err) != DP_OK) goto done;
            if (p == i) { dp_error_set(err, DP_EINVAL, "%s:%d: task %lld lists itself as a predecessor", path, s.tok_line, i); goto done; }
            if (p == 0 || i == n + 1) continue; /* edges of the dummy tasks */
            if (dp_graph_builder_add_edge(b, (int)(p - 1), (int)(i - 1), 0) < 0) {
                dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
                goto done;
            }
        }
    }
    {
        const char *t;
        if (next_token(&s, &t) != 0) {
            dp_error_set(err, DP_EINVAL, "%s:%d: unexpected text after the %lld task records (comments start with '#')",
                         path, s.tok_line, n + 2);
            goto done;
        }
    }
    g = dp_graph_builder_finish(b, err);
done:
    dp_graph_builder_free(b);
    free(text);
    return g;
}

/* ---------------- WfCommons WfFormat ---------------- */

typedef struct wf_task {
    const char *id;      /* borrowed from the JSON */
    const char *kind;
    double runtime;
    json_t *parents, *children;
    json_t *in_files, *out_files; /* 1.5: arrays of file ids; 1.4: NULL (files[] below) */
    json_t *files14;              /* 1.4: files [{link, name, path?, sizeInBytes}] */
} wf_task;

/* Sum of sizes of files both written by task a and read by task b. out/in are per task sets
 * of file indices (sorted), sizes per file index. */
static double wf_shared_bytes(const int *a_out, int na, const int *b_in, int nb, const double *fsize)
{
    double s = 0;
    int i = 0, j = 0;
    while (i < na && j < nb) {
        if (a_out[i] < b_in[j]) i++;
        else if (a_out[i] > b_in[j]) j++;
        else { s += fsize[a_out[i]]; i++; j++; }
    }
    return s;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* A sorted, de-duplicated int list in a shared pool. */
typedef struct int_lists {
    int *ptr;   /* n + 1 */
    int *data;
    int n_data, cap_data;
} int_lists;

static int lists_push(int_lists *l, int v)
{
    if (l->n_data == l->cap_data) {
        int cap = l->cap_data ? 2 * l->cap_data : 256;
        int *p = realloc(l->data, (size_t)cap * sizeof *p);
        if (!p) return DP_ENOMEM;
        l->data = p;
        l->cap_data = cap;
    }
    l->data[l->n_data++] = v;
    return DP_OK;
}

static void lists_close(int_lists *l, int i)
{
    int lo = l->ptr[i];
    int n = l->n_data - lo;
    /* an empty list may have no storage at all (data NULL): qsort must not see it */
    if (n > 1) qsort(l->data + lo, (size_t)n, sizeof(int), cmp_int);
    int k = 0;
    for (int j = 0; j < n; j++)
        if (k == 0 || l->data[lo + k - 1] != l->data[lo + j]) l->data[lo + k++] = l->data[lo + j];
    l->n_data = lo + k;
    l->ptr[i + 1] = l->n_data;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static const char *jstr(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static dp_graph *wfcommons_from_json(json_t *root, const char *path, double bw, dp_error *err)
{
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    wf_task *tasks = NULL;
    strmap tmap = {0}, fmap = {0};
    int_lists outs = {0}, ins = {0};
    double *fsize = NULL;
    char **fkeys = NULL; /* 1.4: owned path+name keys */
    int n_fkeys = 0, cap_fkeys = 0;
    int n = 0, n_files = 0;
    int *esrc = NULL, *edst = NULL;
    int n_e = 0, cap_e = 0;

    if (!(bw > 0)) { dp_error_set(err, DP_EINVAL, "%s: the bandwidth for WfCommons file sizes must be positive", path); return NULL; }
    const char *ver = jstr(root, "schemaVersion");
    json_t *wf = json_object_get(root, "workflow");
    if (!json_is_object(wf)) { dp_error_set(err, DP_EINVAL, "%s: field \"workflow\" must be an object", path); return NULL; }
    json_t *spec = json_object_get(wf, "specification");
    int v15 = spec != NULL;
    json_t *jtasks;
    if (v15) {
        if (!json_is_object(spec)) { dp_error_set(err, DP_EINVAL, "%s: workflow.specification must be an object", path); return NULL; }
        jtasks = json_object_get(spec, "tasks");
        if (!json_is_array(jtasks)) { dp_error_set(err, DP_EINVAL, "%s: workflow.specification.tasks must be an array", path); return NULL; }
    } else {
        jtasks = json_object_get(wf, "tasks");
        if (!json_is_array(jtasks)) {
            dp_error_set(err, DP_EINVAL, "%s: neither workflow.specification.tasks (schema 1.5) nor workflow.tasks (1.4) is an array%s%s",
                         path, ver ? "; schemaVersion " : "", ver ? ver : "");
            return NULL;
        }
        if (ver && strcmp(ver, "1.4") != 0) {
            dp_error_set(err, DP_EINVAL, "%s: schemaVersion \"%s\" with workflow.tasks: only 1.4 (and 1.5 or later, with "
                         "workflow.specification) are read", path, ver);
            return NULL;
        }
    }
    size_t nt = json_array_size(jtasks);
    if (nt == 0) { dp_error_set(err, DP_EINVAL, "%s: the workflow has no tasks", path); return NULL; }
    if (nt > DP_GRAPH_MAX_ELEMS) { dp_error_set(err, DP_ENOMEM, "%s: %zu tasks is beyond the limit", path, nt); return NULL; }
    n = (int)nt;
    const char *tfield = v15 ? "workflow.specification.tasks" : "workflow.tasks";
    tasks = calloc(nt, sizeof *tasks);
    outs.ptr = calloc(nt + 1, sizeof(int));
    ins.ptr = calloc(nt + 1, sizeof(int));
    if (!tasks || !outs.ptr || !ins.ptr || strmap_init(&tmap, nt * 2) != DP_OK || strmap_init(&fmap, 64) != DP_OK) goto nomem;

    /* tasks and their ids (1.4: name and id both name a task) */
    for (int i = 0; i < n; i++) {
        json_t *t = json_array_get(jtasks, i);
        if (!json_is_object(t)) { dp_error_set(err, DP_EINVAL, "%s: %s[%d]: must be an object", path, tfield, i); goto done; }
        const char *id = jstr(t, "id"), *name = jstr(t, "name");
        if (v15 && !id) { dp_error_set(err, DP_EINVAL, "%s: %s[%d].id: missing or not a string", path, tfield, i); goto done; }
        if (!v15 && !name) { dp_error_set(err, DP_EINVAL, "%s: %s[%d].name: missing or not a string", path, tfield, i); goto done; }
        tasks[i].id = v15 ? id : name;
        int r = strmap_put(&tmap, tasks[i].id, i);
        if (r < 0) goto nomem;
        if (r != i) { dp_error_set(err, DP_EINVAL, "%s: %s[%d]: task \"%s\" appears twice (first at [%d])", path, tfield, i, tasks[i].id, r); goto done; }
        tasks[i].parents = json_object_get(t, "parents");
        tasks[i].children = json_object_get(t, "children");
        for (int k = 0; k < 2; k++) {
            json_t *a = k ? tasks[i].children : tasks[i].parents;
            if (a && !json_is_array(a)) { dp_error_set(err, DP_EINVAL, "%s: %s[%d].%s: must be an array", path, tfield, i, k ? "children" : "parents"); goto done; }
        }
        if (v15) {
            tasks[i].in_files = json_object_get(t, "inputFiles");
            tasks[i].out_files = json_object_get(t, "outputFiles");
            if ((tasks[i].in_files && !json_is_array(tasks[i].in_files)) || (tasks[i].out_files && !json_is_array(tasks[i].out_files))) {
                dp_error_set(err, DP_EINVAL, "%s: %s[%d]: inputFiles and outputFiles must be arrays", path, tfield, i);
                goto done;
            }
        } else {
            tasks[i].files14 = json_object_get(t, "files");
            if (tasks[i].files14 && !json_is_array(tasks[i].files14)) { dp_error_set(err, DP_EINVAL, "%s: %s[%d].files: must be an array", path, tfield, i); goto done; }
            const char *cat = jstr(t, "category");
            json_t *cmd = json_object_get(t, "command");
            tasks[i].kind = cat ? cat : json_is_object(cmd) ? jstr(cmd, "program") : NULL;
            json_t *rt = json_object_get(t, "runtimeInSeconds");
            if (!json_is_number(rt)) {
                dp_error_set(err, DP_EINVAL, "%s: %s[%d].runtimeInSeconds: %s", path, tfield, i,
                             rt ? "must be a number" : "missing (schema 1.3 and older are not read)");
                goto done;
            }
            tasks[i].runtime = json_number_value(rt);
        }
    }
    if (!v15) {
        /* 1.4: a task's id also names it, where it differs from the name */
        for (int i = 0; i < n; i++) {
            const char *id = jstr(json_array_get(jtasks, i), "id");
            if (id && strmap_put(&tmap, id, i) < 0) goto nomem;
        }
    }

    /* files and their sizes */
    if (v15) {
        json_t *jf = json_object_get(spec, "files");
        if (jf && !json_is_array(jf)) { dp_error_set(err, DP_EINVAL, "%s: workflow.specification.files must be an array", path); goto done; }
        n_files = (int)json_array_size(jf);
        fsize = dp_calloc_n((size_t)n_files + 1, sizeof *fsize);
        if (!fsize) goto nomem;
        for (int f = 0; f < n_files; f++) {
            json_t *o = json_array_get(jf, f);
            const char *id = json_is_object(o) ? jstr(o, "id") : NULL;
            json_t *sz = json_is_object(o) ? json_object_get(o, "sizeInBytes") : NULL;
            if (!id) { dp_error_set(err, DP_EINVAL, "%s: workflow.specification.files[%d].id: missing or not a string", path, f); goto done; }
            if (!json_is_number(sz) || !(json_number_value(sz) >= 0) || !isfinite(json_number_value(sz))) {
                dp_error_set(err, DP_EINVAL, "%s: workflow.specification.files[%d].sizeInBytes: must be a non-negative number", path, f);
                goto done;
            }
            int r = strmap_put(&fmap, id, f);
            if (r < 0) goto nomem;
            if (r != f) { dp_error_set(err, DP_EINVAL, "%s: workflow.specification.files[%d]: file \"%s\" appears twice", path, f, id); goto done; }
            fsize[f] = json_number_value(sz);
        }
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < 2; k++) {
                json_t *a = k ? tasks[i].out_files : tasks[i].in_files;
                int_lists *l = k ? &outs : &ins;
                for (size_t j = 0; j < json_array_size(a); j++) {
                    json_t *x = json_array_get(a, j);
                    int f = json_is_string(x) ? strmap_get(&fmap, json_string_value(x)) : -1;
                    if (f < 0) {
                        dp_error_set(err, DP_EINVAL, "%s: %s[%d].%s[%zu]: %s%s%s", path, tfield, i, k ? "outputFiles" : "inputFiles", j,
                                     json_is_string(x) ? "no file \"" : "must be a file id", json_is_string(x) ? json_string_value(x) : "",
                                     json_is_string(x) ? "\" in workflow.specification.files" : "");
                        goto done;
                    }
                    if (lists_push(l, f) != DP_OK) goto nomem;
                }
                lists_close(l, i);
            }
        }
        /* runtimes and programs from the execution record */
        json_t *ex = json_object_get(wf, "execution");
        json_t *et = json_is_object(ex) ? json_object_get(ex, "tasks") : NULL;
        if (!json_is_array(et)) { dp_error_set(err, DP_EINVAL, "%s: workflow.execution.tasks: missing or not an array (runtimes are needed)", path); goto done; }
        char *seen = calloc(nt, 1);
        if (!seen) goto nomem;
        for (size_t j = 0; j < json_array_size(et); j++) {
            json_t *o = json_array_get(et, j);
            const char *id = json_is_object(o) ? jstr(o, "id") : NULL;
            int i = id ? strmap_get(&tmap, id) : -1;
            if (i < 0) {
                dp_error_set(err, DP_EINVAL, "%s: workflow.execution.tasks[%zu].id: %s", path, j, id ? "no such task in the specification" : "missing or not a string");
                free(seen);
                goto done;
            }
            json_t *rt = json_object_get(o, "runtimeInSeconds");
            if (!json_is_number(rt)) {
                dp_error_set(err, DP_EINVAL, "%s: workflow.execution.tasks[%zu].runtimeInSeconds: missing or not a number", path, j);
                free(seen);
                goto done;
            }
            tasks[i].runtime = json_number_value(rt);
            json_t *cmd = json_object_get(o, "command");
            if (json_is_object(cmd)) tasks[i].kind = jstr(cmd, "program");
            seen[i] = 1;
        }
        for (int i = 0; i < n; i++)
            if (!seen[i]) {
                dp_error_set(err, DP_EINVAL, "%s: task \"%s\" has no entry in workflow.execution.tasks (no runtime)", path, tasks[i].id);
                free(seen);
                goto done;
            }
        free(seen);
    } else {
        /* 1.4: files are per task; the same file (path + name) read and written links tasks */
        double *fs = NULL;
        for (int i = 0; i < n; i++) {
            json_t *a = tasks[i].files14;
            for (size_t j = 0; j < json_array_size(a); j++) {
                json_t *o = json_array_get(a, j);
                const char *nm = json_is_object(o) ? jstr(o, "name") : NULL;
                const char *link = json_is_object(o) ? jstr(o, "link") : NULL;
                json_t *sz = json_is_object(o) ? json_object_get(o, "sizeInBytes") : NULL;
                if (!nm || !link || (strcmp(link, "input") != 0 && strcmp(link, "output") != 0)) {
                    dp_error_set(err, DP_EINVAL, "%s: %s[%d].files[%zu]: needs a \"name\" and a \"link\" (input or output)", path, tfield, i, j);
                    free(fs);
                    goto done;
                }
                if (!json_is_number(sz) || !(json_number_value(sz) >= 0) || !isfinite(json_number_value(sz))) {
                    dp_error_set(err, DP_EINVAL, "%s: %s[%d].files[%zu].sizeInBytes: must be a non-negative number", path, tfield, i, j);
                    free(fs);
                    goto done;
                }
                const char *fp = jstr(o, "path");
                size_t klen = strlen(nm) + (fp ? strlen(fp) : 0) + 1;
                char *key = malloc(klen);
                if (!key) { free(fs); goto nomem; }
                snprintf(key, klen, "%s%s", fp ? fp : "", nm);
                int f = strmap_get(&fmap, key);
                if (f < 0) {
                    if (n_fkeys == cap_fkeys) {
                        int cap = cap_fkeys ? 2 * cap_fkeys : 64;
                        char **p = realloc(fkeys, (size_t)cap * sizeof *p);
                        double *q = realloc(fs, (size_t)cap * sizeof *q);
                        if (p) fkeys = p;
                        if (q) fs = q;
                        if (!p || !q) { free(key); free(fs); goto nomem; }
                        cap_fkeys = cap;
                    }
                    f = n_fkeys;
                    fkeys[n_fkeys++] = key;
                    fs[f] = json_number_value(sz);
                    if (strmap_put(&fmap, key, f) < 0) { free(fs); goto nomem; }
                } else {
                    free(key);
                }
                if (lists_push(strcmp(link, "output") == 0 ? &outs : &ins, f) != DP_OK) { free(fs); goto nomem; }
            }
            lists_close(&outs, i);
            lists_close(&ins, i);
        }
        fsize = fs;
        n_files = n_fkeys;
    }

    /* edges: parents and children, both directions, merged */
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            json_t *a = k ? tasks[i].children : tasks[i].parents;
            for (size_t j = 0; j < json_array_size(a); j++) {
                json_t *x = json_array_get(a, j);
                int o = json_is_string(x) ? strmap_get(&tmap, json_string_value(x)) : -1;
                if (o < 0) {
                    dp_error_set(err, DP_EINVAL, "%s: %s[%d].%s[%zu]: %s%s%s", path, tfield, i, k ? "children" : "parents", j,
                                 json_is_string(x) ? "no task \"" : "must be a task id", json_is_string(x) ? json_string_value(x) : "",
                                 json_is_string(x) ? "\"" : "");
                    goto done;
                }
                if (o == i) { dp_error_set(err, DP_EINVAL, "%s: %s[%d]: task \"%s\" depends on itself", path, tfield, i, tasks[i].id); goto done; }
                if (n_e == cap_e) {
                    int cap = cap_e ? 2 * cap_e : 256;
                    int *p = realloc(esrc, (size_t)cap * sizeof *p);
                    if (p) esrc = p;
                    int *q = realloc(edst, (size_t)cap * sizeof *q);
                    if (q) edst = q;
                    if (!p || !q) goto nomem;
                    cap_e = cap;
                }
                esrc[n_e] = k ? i : o;
                edst[n_e] = k ? o : i;
                n_e++;
            }
        }
    }
    {
        char stem[256];
        const char *nm = jstr(root, "name");
        if (!nm) { file_stem(stem, sizeof stem, path); nm = stem; }
        b = dp_graph_builder_alloc(nm, path, DP_COST_TIME);
        if (!b) goto nomem;
        dp_graph_builder_set_time_unit(b, 1.0, "s");
        for (int i = 0; i < n; i++) {
            double ob = 0;
            for (int q = outs.ptr[i]; q < outs.ptr[i + 1]; q++) ob += fsize[outs.data[q]];
            if (dp_graph_builder_add_op(b, tasks[i].id, tasks[i].kind ? tasks[i].kind : "task", tasks[i].runtime, isinf(bw) ? 0 : ob / bw) < 0)
                goto nomem;
        }
        /* de-duplicate (parent, child) pairs: sort pair keys */
        int64_t *key = dp_malloc_n((size_t)n_e + 1, sizeof *key);
        if (!key) goto nomem;
        for (int e = 0; e < n_e; e++) key[e] = (int64_t)esrc[e] * n + edst[e];
        /* the first copy of a pair is kept, in input order: later copies are found through a
         * sorted copy of the keys */
        int64_t *sorted = dp_malloc_n((size_t)n_e + 1, sizeof *sorted);
        if (!sorted) { free(key); goto nomem; }
        memcpy(sorted, key, (size_t)n_e * sizeof *key);
        qsort(sorted, (size_t)n_e, sizeof *sorted, cmp64);
        char *used = calloc((size_t)n_e + 1, 1);
        if (!used) { free(key); free(sorted); goto nomem; }
        for (int e = 0; e < n_e; e++) {
            /* binary search the pair; "used" marks a pair already added */
            size_t lo = 0, hi = (size_t)n_e;
            while (lo < hi) { size_t mid = (lo + hi) / 2; if (sorted[mid] < key[e]) lo = mid + 1; else hi = mid; }
            if (used[lo]) continue;
            used[lo] = 1;
            int u = esrc[e], v = edst[e];
            double bytes = wf_shared_bytes(outs.data + outs.ptr[u], outs.ptr[u + 1] - outs.ptr[u], ins.data + ins.ptr[v],
                                           ins.ptr[v + 1] - ins.ptr[v], fsize);
            if (dp_graph_builder_add_edge(b, u, v, isinf(bw) ? 0 : bytes / bw) < 0) { free(key); free(sorted); free(used); goto nomem; }
        }
        free(key);
        free(sorted);
        free(used);
    }
    g = dp_graph_builder_finish(b, err);
    goto done;
nomem:
    dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
done:
    for (int f = 0; f < n_fkeys; f++) free(fkeys[f]);
    free(fkeys);
    free(tasks);
    strmap_free(&tmap);
    strmap_free(&fmap);
    free(outs.ptr); free(outs.data);
    free(ins.ptr); free(ins.data);
    free(fsize);
    free(esrc);
    free(edst);
    dp_graph_builder_free(b);
    return g;
}

dp_graph *dp_graph_read_wfcommons(const char *path, double bandwidth_Bps, dp_error *err)
{
    json_t *root = dp_json_load(path, err);
    if (!root) return NULL;
    dp_graph *g = NULL;
    if (!json_is_object(root)) dp_error_set(err, DP_EINVAL, "%s: the top level must be a JSON object", path);
    else g = wfcommons_from_json(root, path, bandwidth_Bps, err);
    json_decref(root);
    return g;
}

/* ---------------- MSR dnn-partitioning ---------------- */

static int cmp_id_index(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Index of node id in the sorted (id, index) pairs, or -1. */
static int msr_lookup(const long long *pairs, int n, long long id)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (pairs[2 * mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && pairs[2 * lo] == id ? (int)pairs[2 * lo + 1] : -1;
}

/* A JSON number or boolean as 0/1 (the files use both for flags). */
static int json_flag(json_t *v, int dflt)
{
    if (!v) return dflt;
    if (json_is_boolean(v)) return json_is_true(v);
    if (json_is_number(v)) return json_number_value(v) != 0;
    return -1;
}

static dp_graph *msr_from_json(json_t *root, const char *path, dp_error *err)
{
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    long long *pairs = NULL;
    strmap names = {0};
    char **owned = NULL;
    json_t *nodes = json_object_get(root, "nodes"), *edges = json_object_get(root, "edges");
    if (!json_is_array(nodes)) { dp_error_set(err, DP_EINVAL, "%s: field \"nodes\" must be an array", path); return NULL; }
    if (!json_is_array(edges)) { dp_error_set(err, DP_EINVAL, "%s: field \"edges\" must be an array", path); return NULL; }
    size_t nn = json_array_size(nodes), ne = json_array_size(edges);
    if (nn == 0) { dp_error_set(err, DP_EINVAL, "%s: the graph has no nodes", path); return NULL; }
    if (nn > DP_GRAPH_MAX_ELEMS || ne > DP_GRAPH_MAX_ELEMS) { dp_error_set(err, DP_ENOMEM, "%s: graph beyond the size limit", path); return NULL; }
    int n = (int)nn;
    pairs = dp_malloc_n(2 * nn, sizeof *pairs);
    owned = calloc(nn, sizeof *owned);
    if (!pairs || !owned || strmap_init(&names, nn) != DP_OK) goto nomem;
    for (int i = 0; i < n; i++) {
        json_t *o = json_array_get(nodes, i);
        json_t *id = json_is_object(o) ? json_object_get(o, "id") : NULL;
        if (!json_is_integer(id)) { dp_error_set(err, DP_EINVAL, "%s: nodes[%d].id: missing or not an integer", path, i); goto done; }
        pairs[2 * i] = json_integer_value(id);
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, nn, 2 * sizeof *pairs, cmp_id_index);
    for (int i = 1; i < n; i++)
        if (pairs[2 * i] == pairs[2 * i - 2]) {
            dp_error_set(err, DP_EINVAL, "%s: nodes[%lld].id: id %lld is used by nodes[%lld] too", path, pairs[2 * i + 1],
                         pairs[2 * i], pairs[2 * i - 1]);
            goto done;
        }
    {
        char stem[256];
        file_stem(stem, sizeof stem, path);
        b = dp_graph_builder_alloc(stem, path, DP_COST_TIME);
        if (!b) goto nomem;
        dp_graph_builder_set_time_unit(b, 1.0, "ms (profiled)");
    }
    for (int i = 0; i < n; i++) {
        json_t *o = json_array_get(nodes, i);
        json_t *lat = json_object_get(o, "fpgaLatency");
        if (!json_is_number(lat) || !(json_number_value(lat) >= 0) || !isfinite(json_number_value(lat))) {
            dp_error_set(err, DP_EINVAL, "%s: nodes[%d].fpgaLatency: %s", path, i,
                         json_is_number(lat) ? "must be finite and non-negative" : "missing or not a number");
            goto done;
        }
        json_t *cl = json_object_get(o, "cpuLatency");
        if (cl && !json_is_number(cl)) { dp_error_set(err, DP_EINVAL, "%s: nodes[%d].cpuLatency: must be a number", path, i); goto done; }
        int fpga = json_flag(json_object_get(o, "supportedOnFpga"), 1);
        int bwd = json_flag(json_object_get(o, "isBackwardNode"), 0);
        if (fpga < 0 || bwd < 0) {
            dp_error_set(err, DP_EINVAL, "%s: nodes[%d].%s: must be a boolean or 0/1", path, i, fpga < 0 ? "supportedOnFpga" : "isBackwardNode");
            goto done;
        }
        const char *nm = jstr(o, "name");
        long long id = json_integer_value(json_object_get(o, "id"));
        if (!nm) {
            owned[i] = malloc(32);
            if (!owned[i]) goto nomem;
            snprintf(owned[i], 32, "node%lld", id);
            nm = owned[i];
        }
        int r = strmap_put(&names, nm, i);
        if (r < 0) goto nomem;
        if (r != i) {
            /* a repeated name: made unique with the id (the builder rejects any clash left) */
            size_t len = strlen(nm) + 32;
            char *uniq = malloc(len);
            if (!uniq) goto nomem;
            snprintf(uniq, len, "%s#%lld", nm, id);
            free(owned[i]);
            owned[i] = uniq;
            nm = uniq;
            if (strmap_put(&names, nm, i) < 0) goto nomem;
        }
        int op = dp_graph_builder_add_op(b, nm, bwd ? "backward" : "forward", json_number_value(lat), 0);
        if (op < 0) goto nomem;
        if (!fpga) dp_graph_builder_set_op_info(b, op, "cpu-only", NULL, 0, NULL);
    }
    for (size_t e = 0; e < ne; e++) {
        json_t *o = json_array_get(edges, e);
        if (!json_is_object(o)) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu]: must be an object", path, e); goto done; }
        const char *key[2] = {"sourceId", "destId"};
        int end[2];
        for (int k = 0; k < 2; k++) {
            json_t *v = json_object_get(o, key[k]);
            if (!json_is_integer(v)) { dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: missing or not an integer", path, e, key[k]); goto done; }
            end[k] = msr_lookup(pairs, n, json_integer_value(v));
            if (end[k] < 0) {
                dp_error_set(err, DP_EINVAL, "%s: edges[%zu].%s: no node with id %lld", path, e, key[k], (long long)json_integer_value(v));
                goto done;
            }
        }
        json_t *c = json_object_get(o, "cost");
        if (!json_is_number(c) || !(json_number_value(c) >= 0) || !isfinite(json_number_value(c))) {
            dp_error_set(err, DP_EINVAL, "%s: edges[%zu].cost: must be a finite non-negative number", path, e);
            goto done;
        }
        if (dp_graph_builder_add_edge(b, end[0], end[1], json_number_value(c)) < 0) goto nomem;
    }
    g = dp_graph_builder_finish(b, err);
    if (g) out_size_from_edges(g);
    goto done;
nomem:
    dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
done:
    if (owned) for (size_t i = 0; i < nn; i++) free(owned[i]);
    free(owned);
    free(pairs);
    strmap_free(&names);
    dp_graph_builder_free(b);
    return g;
}

dp_graph *dp_graph_read_msr(const char *path, dp_error *err)
{
    json_t *root = dp_json_load(path, err);
    if (!root) return NULL;
    dp_graph *g = NULL;
    if (!json_is_object(root)) dp_error_set(err, DP_EINVAL, "%s: the top level must be a JSON object", path);
    else g = msr_from_json(root, path, err);
    json_decref(root);
    return g;
}

dp_graph *dp_graph_read_json_any(const char *path, dp_error *err)
{
    json_t *root = dp_json_load(path, err);
    if (!root) return NULL;
    dp_graph *g = NULL;
    if (!json_is_object(root))
        dp_error_set(err, DP_EINVAL, "%s: the top level must be a JSON object", path);
    else if (json_object_get(root, "workflow") && json_object_get(root, "schemaVersion"))
        g = wfcommons_from_json(root, path, DP_WFCOMMONS_BANDWIDTH_BPS, err);
    else if (json_object_get(root, "nodes") && json_object_get(root, "edges") && !json_object_get(root, "ops"))
        g = msr_from_json(root, path, err);
    else if (!json_object_get(root, "ops"))
        dp_error_set(err, DP_EINVAL, "%s: not a graph: no \"ops\" (native format), \"workflow\" and \"schemaVersion\" "
                     "(WfCommons) or \"nodes\" and \"edges\" (MSR)", path);
    else
        g = dp_graph_from_json(root, path, err);
    json_decref(root);
    return g;
}

/* ---------------- DOT task graphs (reader) ---------------- */

typedef enum {
    DT_EOF, DT_ID, DT_LBRACE, DT_RBRACE, DT_LBRACK, DT_RBRACK, DT_EQ, DT_SEMI, DT_COMMA, DT_COLON,
    DT_ARROW, DT_DASHES
} dot_ttype;

typedef struct dot_tok {
    dot_ttype type;
    int line;
    int quoted;
    size_t str;  /* offset of the NUL-terminated text in the arena (DT_ID) */
} dot_tok;

typedef struct dot_lex {
    const char *path;
    dot_tok *tok;
    int n_tok, cap_tok;
    char *arena;
    size_t n_arena, cap_arena;
} dot_lex;

static int arena_put(dot_lex *L, const char *s, size_t n, size_t *off)
{
    if (L->n_arena + n + 1 > L->cap_arena) {
        size_t cap = L->cap_arena ? L->cap_arena : 4096;
        while (L->n_arena + n + 1 > cap) cap *= 2;
        char *p = realloc(L->arena, cap);
        if (!p) return DP_ENOMEM;
        L->arena = p;
        L->cap_arena = cap;
    }
    *off = L->n_arena;
    memcpy(L->arena + L->n_arena, s, n);
    L->arena[L->n_arena + n] = '\0';
    L->n_arena += n + 1;
    return DP_OK;
}

static int tok_push(dot_lex *L, dot_ttype t, int line, int quoted, size_t str)
{
    if (L->n_tok == L->cap_tok) {
        int cap = L->cap_tok ? 2 * L->cap_tok : 256;
        if (cap > DP_GRAPH_MAX_ELEMS) return DP_ENOMEM;
        dot_tok *p = realloc(L->tok, (size_t)cap * sizeof *p);
        if (!p) return DP_ENOMEM;
        L->tok = p;
        L->cap_tok = cap;
    }
    L->tok[L->n_tok].type = t;
    L->tok[L->n_tok].line = line;
    L->tok[L->n_tok].quoted = quoted;
    L->tok[L->n_tok].str = str;
    L->n_tok++;
    return DP_OK;
}

static int is_id_start(int c) { return isalpha(c) || c == '_' || c >= 0x80; }
static int is_id_char(int c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* Split the whole text into tokens (IDs, numerals and quoted strings all become DT_ID). */
static int dot_tokenize(dot_lex *L, const char *s, size_t n, dp_error *err)
{
    int line = 1;
    size_t i = 0;
    int at_line_start = 1;
    char *sbuf = NULL;
    size_t scap = 0;
    while (i < n) {
        int c = (unsigned char)s[i];
        if (c == '\n') { line++; i++; at_line_start = 1; continue; }
        if (isspace(c)) { i++; continue; }
        if (c == '#' && at_line_start) {  /* preprocessor output lines are ignored */
            while (i < n && s[i] != '\n') i++;
            continue;
        }
        at_line_start = 0;
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') i++;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            int start = line;
            i += 2;
            while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) { if (s[i] == '\n') line++; i++; }
            if (i + 1 >= n) { free(sbuf); return dp_error_set(err, DP_EINVAL, "%s:%d: unterminated comment", L->path, start); }
            i += 2;
            continue;
        }
        int rc = DP_OK;
        size_t off = 0;
        if (c == '"') {
            int start = line;
            size_t k = 0;
            i++;
            for (;;) {
                if (i >= n) { free(sbuf); return dp_error_set(err, DP_EINVAL, "%s:%d: unterminated string", L->path, start); }
                char ch = s[i];
                if (ch == '"') { i++; break; }
                if (ch == '\\' && i + 1 < n && (s[i + 1] == '"' || s[i + 1] == '\n' || s[i + 1] == '\r')) {
                    if (s[i + 1] == '"') { ch = '"'; i += 2; }
                    else { /* line continuation */
                        i += 2;
                        if (s[i - 1] == '\r' && i < n && s[i] == '\n') i++;
                        line++;
                        continue;
                    }
                } else {
                    if (ch == '\n') line++;
                    i++;
                }
                if (k + 2 > scap) {
                    size_t cap = scap ? 2 * scap : 256;
                    char *p = realloc(sbuf, cap);
                    if (!p) { free(sbuf); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", L->path); }
                    sbuf = p;
                    scap = cap;
                }
                sbuf[k++] = ch;
            }
            rc = arena_put(L, sbuf ? sbuf : "", k, &off);
            if (rc == DP_OK) rc = tok_push(L, DT_ID, start, 1, off);
        } else if (is_id_start(c)) {
            size_t j = i;
            while (j < n && is_id_char((unsigned char)s[j])) j++;
            rc = arena_put(L, s + i, j - i, &off);
            if (rc == DP_OK) rc = tok_push(L, DT_ID, line, 0, off);
            i = j;
        } else if (isdigit(c) || c == '.' || (c == '-' && i + 1 < n && (isdigit((unsigned char)s[i + 1]) || s[i + 1] == '.'))) {
            size_t j = i + (c == '-');
            while (j < n && (isdigit((unsigned char)s[j]) || s[j] == '.')) j++;
            rc = arena_put(L, s + i, j - i, &off);
            if (rc == DP_OK) rc = tok_push(L, DT_ID, line, 0, off);
            i = j;
        } else if (c == '-' && i + 1 < n && (s[i + 1] == '>' || s[i + 1] == '-')) {
            rc = tok_push(L, s[i + 1] == '>' ? DT_ARROW : DT_DASHES, line, 0, 0);
            i += 2;
        } else {
            dot_ttype t;
            switch (c) {
            case '{': t = DT_LBRACE; break;
            case '}': t = DT_RBRACE; break;
            case '[': t = DT_LBRACK; break;
            case ']': t = DT_RBRACK; break;
            case '=': t = DT_EQ; break;
            case ';': t = DT_SEMI; break;
            case ',': t = DT_COMMA; break;
            case ':': t = DT_COLON; break;
            case '<':
                free(sbuf);
                return dp_error_set(err, DP_EINVAL, "%s:%d: HTML strings (<...>) are not supported", L->path, line);
            default:
                free(sbuf);
                return dp_error_set(err, DP_EINVAL, "%s:%d: unexpected character '%c'", L->path, line, isprint(c) ? c : '?');
            }
            rc = tok_push(L, t, line, 0, 0);
            i++;
        }
        if (rc != DP_OK) { free(sbuf); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", L->path); }
    }
    free(sbuf);
    return tok_push(L, DT_EOF, line, 0, 0) == DP_OK ? DP_OK : dp_error_set(err, DP_ENOMEM, "%s: out of memory", L->path);
}

static int dot_kw(const dot_lex *L, const dot_tok *t, const char *kw)
{
    return t->type == DT_ID && !t->quoted && strcasecmp(L->arena + t->str, kw) == 0;
}

static const char *dot_ttype_name(dot_ttype t)
{
    static const char *names[] = {"the end of the file", "an identifier", "'{'", "'}'", "'['", "']'", "'='", "';'",
                                  "','", "':'", "'->'", "'--'"};
    return names[t];
}

typedef struct dot_node {
    const char *name;
    double weight;  /* NAN: not given */
    const char *kind;
    int line;
} dot_node;

typedef struct dot_attrs {
    int has_weight;
    double weight;
    const char *kind;
} dot_attrs;

typedef struct dot_scope {
    double node_w, edge_w;  /* NAN: no default */
    const char *node_kind;
} dot_scope;

/* Parse "[a=b, ...][...]" at *pos (if present) into attrs. */
static int dot_attr_list(const dot_lex *L, int *pos, dot_attrs *a, dp_error *err)
{
    a->has_weight = 0;
    a->kind = NULL;
    while (L->tok[*pos].type == DT_LBRACK) {
        (*pos)++;
        for (;;) {
            const dot_tok *t = &L->tok[*pos];
            if (t->type == DT_RBRACK) { (*pos)++; break; }
            if (t->type == DT_COMMA || t->type == DT_SEMI) { (*pos)++; continue; }
            if (t->type != DT_ID)
                return dp_error_set(err, DP_EINVAL, "%s:%d: expected an attribute name, found %s", L->path, t->line, dot_ttype_name(t->type));
            const char *key = L->arena + t->str;
            (*pos)++;
            if (L->tok[*pos].type != DT_EQ)
                return dp_error_set(err, DP_EINVAL, "%s:%d: expected '=' after attribute %s", L->path, L->tok[*pos].line, key);
            (*pos)++;
            const dot_tok *v = &L->tok[*pos];
            if (v->type != DT_ID)
                return dp_error_set(err, DP_EINVAL, "%s:%d: expected a value for attribute %s, found %s", L->path, v->line, key,
                                    dot_ttype_name(v->type));
            const char *val = L->arena + v->str;
            (*pos)++;
            if (strcmp(key, "Weight") == 0) {
                char *end;
                double w = strtod(val, &end);
                if (end == val || *end || !isfinite(w) || w < 0)
                    return dp_error_set(err, DP_EINVAL, "%s:%d: Weight must be a finite non-negative number, got \"%s\"", L->path,
                                        v->line, val);
                a->has_weight = 1;
                a->weight = w;
            } else if (strcmp(key, "kind") == 0) {
                a->kind = val;
            }
        }
    }
    return DP_OK;
}

typedef struct dot_graph {
    dot_node *node;
    int n_node, cap_node;
    int *esrc, *edst, *eline;
    double *ew;
    int n_edge, cap_edge;
    strmap ids;
} dot_graph;

/* The node named by token t (created with the scope's defaults on first sight), or negative. */
static int dot_node_of(const dot_lex *L, dot_graph *G, const dot_tok *t, const dot_scope *sc)
{
    const char *name = L->arena + t->str;
    int i = strmap_get(&G->ids, name);
    if (i >= 0) return i;
    if (G->n_node == G->cap_node) {
        int cap = G->cap_node ? 2 * G->cap_node : 64;
        if (cap > DP_GRAPH_MAX_ELEMS) return DP_ENOMEM;
        dot_node *p = realloc(G->node, (size_t)cap * sizeof *p);
        if (!p) return DP_ENOMEM;
        G->node = p;
        G->cap_node = cap;
    }
    i = G->n_node++;
    G->node[i].name = name;
    G->node[i].weight = sc->node_w;
    G->node[i].kind = sc->node_kind;
    G->node[i].line = t->line;
    return strmap_put(&G->ids, name, i);
}

static int dot_add_edge(dot_graph *G, int u, int v, double w, int line)
{
    if (G->n_edge == G->cap_edge) {
        int cap = G->cap_edge ? 2 * G->cap_edge : 64;
        if (cap > DP_GRAPH_MAX_ELEMS) return DP_ENOMEM;
        int *a = realloc(G->esrc, (size_t)cap * sizeof *a);
        if (a) G->esrc = a;
        int *b = realloc(G->edst, (size_t)cap * sizeof *b);
        if (b) G->edst = b;
        int *c = realloc(G->eline, (size_t)cap * sizeof *c);
        if (c) G->eline = c;
        double *d = realloc(G->ew, (size_t)cap * sizeof *d);
        if (d) G->ew = d;
        if (!a || !b || !c || !d) return DP_ENOMEM;
        G->cap_edge = cap;
    }
    G->esrc[G->n_edge] = u;
    G->edst[G->n_edge] = v;
    G->ew[G->n_edge] = w;
    G->eline[G->n_edge] = line;
    G->n_edge++;
    return DP_OK;
}

/* Skip an optional ":port[:compass]" after a node id. */
static void dot_skip_port(const dot_lex *L, int *pos)
{
    for (int k = 0; k < 2 && L->tok[*pos].type == DT_COLON && L->tok[*pos + 1].type == DT_ID; k++) *pos += 2;
}

dp_graph *dp_graph_read_dot(const char *path, dp_error *err)
{
    size_t size;
    char *text = dp_read_text(path, &size, err);
    if (!text) return NULL;
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    dot_lex L = {path, NULL, 0, 0, NULL, 0, 0};
    dot_graph G;
    memset(&G, 0, sizeof G);
    dot_scope *stack = NULL;
    int depth = 0, cap_stack = 0;
    char gname[256];
    file_stem(gname, sizeof gname, path);
    if (dot_tokenize(&L, text, size, err) != DP_OK) goto done;
    if (strmap_init(&G.ids, 64) != DP_OK) goto nomem;
    int pos = 0;
    if (dot_kw(&L, &L.tok[pos], "strict")) pos++;
    if (dot_kw(&L, &L.tok[pos], "graph")) {
        dp_error_set(err, DP_EINVAL, "%s:%d: an undirected graph is not a task graph (expected digraph)", path, L.tok[pos].line);
        goto done;
    }
    if (!dot_kw(&L, &L.tok[pos], "digraph")) {
        dp_error_set(err, DP_EINVAL, "%s:%d: expected \"digraph\", found %s", path, L.tok[pos].line,
                     L.tok[pos].type == DT_ID ? L.arena + L.tok[pos].str : dot_ttype_name(L.tok[pos].type));
        goto done;
    }
    pos++;
    if (L.tok[pos].type == DT_ID) {
        snprintf(gname, sizeof gname, "%s", L.arena + L.tok[pos].str);
        pos++;
    }
    if (L.tok[pos].type != DT_LBRACE) {
        dp_error_set(err, DP_EINVAL, "%s:%d: expected '{', found %s", path, L.tok[pos].line, dot_ttype_name(L.tok[pos].type));
        goto done;
    }
    pos++;
    cap_stack = 8;
    stack = malloc((size_t)cap_stack * sizeof *stack);
    if (!stack) goto nomem;
    stack[0].node_w = stack[0].edge_w = NAN;
    stack[0].node_kind = NULL;
    depth = 1;
    while (depth > 0) {
        const dot_tok *t = &L.tok[pos];
        dot_scope *sc = &stack[depth - 1];
        dot_attrs a;
        if (t->type == DT_EOF) { dp_error_set(err, DP_EINVAL, "%s:%d: truncated file: missing '}'", path, t->line); goto done; }
        if (t->type == DT_RBRACE) { depth--; pos++; continue; }
        if (t->type == DT_SEMI || t->type == DT_COMMA) { pos++; continue; }
        if (t->type == DT_LBRACE || dot_kw(&L, t, "subgraph")) {
            /* a subgraph: a scope for defaults; its nodes and edges are the graph's */
            if (t->type != DT_LBRACE) {
                pos++;
                if (L.tok[pos].type == DT_ID) pos++;
                if (L.tok[pos].type != DT_LBRACE) {
                    dp_error_set(err, DP_EINVAL, "%s:%d: expected '{' after subgraph", path, L.tok[pos].line);
                    goto done;
                }
            }
            pos++;
            if (depth == cap_stack) {
                dot_scope *p = realloc(stack, (size_t)cap_stack * 2 * sizeof *p);
                if (!p) goto nomem;
                stack = p;
                cap_stack *= 2;
            }
            stack[depth] = stack[depth - 1];
            depth++;
            continue;
        }
        if ((dot_kw(&L, t, "graph") || dot_kw(&L, t, "node") || dot_kw(&L, t, "edge")) && L.tok[pos + 1].type == DT_LBRACK) {
            int is_node = dot_kw(&L, t, "node"), is_edge = dot_kw(&L, t, "edge");
            pos++;
            if (dot_attr_list(&L, &pos, &a, err) != DP_OK) goto done;
            if (is_node && a.has_weight) sc->node_w = a.weight;
            if (is_node && a.kind) sc->node_kind = a.kind;
            if (is_edge && a.has_weight) sc->edge_w = a.weight;
            continue;
        }
        if (t->type != DT_ID) {
            dp_error_set(err, DP_EINVAL, "%s:%d: expected a statement, found %s", path, t->line, dot_ttype_name(t->type));
            goto done;
        }
        if (L.tok[pos + 1].type == DT_EQ) {  /* graph attribute: ignored */
            if (L.tok[pos + 2].type != DT_ID) {
                dp_error_set(err, DP_EINVAL, "%s:%d: expected a value after '='", path, L.tok[pos + 2].line);
                goto done;
            }
            pos += 3;
            continue;
        }
        int first = pos;
        pos++;
        dot_skip_port(&L, &pos);
        if (L.tok[pos].type == DT_DASHES) {
            dp_error_set(err, DP_EINVAL, "%s:%d: '--' is an undirected edge; task graphs use '->'", path, L.tok[pos].line);
            goto done;
        }
        if (L.tok[pos].type == DT_ARROW) {
            int start = pos;
            /* count the chain, then read the attributes, then add the edges */
            while (L.tok[pos].type == DT_ARROW) {
                pos++;
                if (L.tok[pos].type != DT_ID) {
                    dp_error_set(err, DP_EINVAL, "%s:%d: expected a node after '->'%s", path, L.tok[pos].line,
                                 L.tok[pos].type == DT_LBRACE ? " (subgraphs as edge ends are not supported)" : "");
                    goto done;
                }
                pos++;
                dot_skip_port(&L, &pos);
            }
            if (dot_attr_list(&L, &pos, &a, err) != DP_OK) goto done;
            double w = a.has_weight ? a.weight : sc->edge_w;
            if (isnan(w)) { dp_error_set(err, DP_EINVAL, "%s:%d: edge from %s has no Weight", path, t->line, L.arena + t->str); goto done; }
            int u = dot_node_of(&L, &G, &L.tok[first], sc);
            if (u < 0) goto nomem;
            for (int q = start; q < pos && L.tok[q].type == DT_ARROW;) {
                q++;
                int v = dot_node_of(&L, &G, &L.tok[q], sc);
                if (v < 0) goto nomem;
                if (dot_add_edge(&G, u, v, w, L.tok[q].line) != DP_OK) goto nomem;
                u = v;
                q++;
                while (q < pos && L.tok[q].type == DT_COLON) q += 2;
            }
            continue;
        }
        if (dot_attr_list(&L, &pos, &a, err) != DP_OK) goto done;
        int v = dot_node_of(&L, &G, t, sc);
        if (v < 0) goto nomem;
        if (a.has_weight) G.node[v].weight = a.weight;
        if (a.kind) G.node[v].kind = a.kind;
    }
    if (L.tok[pos].type != DT_EOF) {
        dp_error_set(err, DP_EINVAL, "%s:%d: unexpected %s after the graph's closing '}'", path, L.tok[pos].line,
                     dot_ttype_name(L.tok[pos].type));
        goto done;
    }
    if (G.n_node == 0) { dp_error_set(err, DP_EINVAL, "%s: the graph has no nodes", path); goto done; }
    b = dp_graph_builder_alloc(gname, path, DP_COST_TIME);
    if (!b) goto nomem;
    for (int i = 0; i < G.n_node; i++) {
        if (isnan(G.node[i].weight)) {
            dp_error_set(err, DP_EINVAL, "%s:%d: node %s has no Weight", path, G.node[i].line, G.node[i].name);
            goto done;
        }
        if (dp_graph_builder_add_op(b, G.node[i].name, G.node[i].kind ? G.node[i].kind : "task", G.node[i].weight, 0) < 0) goto nomem;
    }
    for (int e = 0; e < G.n_edge; e++)
        if (dp_graph_builder_add_edge(b, G.esrc[e], G.edst[e], G.ew[e]) < 0) goto nomem;
    g = dp_graph_builder_finish(b, err);
    if (g) out_size_from_edges(g);
    goto done;
nomem:
    dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
done:
    free(stack);
    free(G.node);
    free(G.esrc); free(G.edst); free(G.eline); free(G.ew);
    strmap_free(&G.ids);
    free(L.tok);
    free(L.arena);
    dp_graph_builder_free(b);
    free(text);
    return g;
}

/* ---------------- DOT writer ---------------- */

static void dot_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if (*s == '\n') { fputs("\\n", f); continue; }
        fputc(*s, f);
    }
    fputc('"', f);
}

static void dot_write_node(FILE *f, const dp_graph *g, int v, const char *color)
{
    char w[40], lab[64];
    fprintf(f, "  ");
    dot_quoted(f, g->op_name[v]);
    fprintf(f, " [label=");
    snprintf(lab, sizeof lab, "%.4g %s", g->work[v], g->cost_kind == DP_COST_PHYSICAL ? "FLOPs" : g->time_unit);
    fputc('"', f);
    for (const char *s = g->op_name[v]; *s; s++) { if (*s == '"' || *s == '\\') fputc('\\', f); fputc(*s, f); }
    fputs("\\n", f);
    for (const char *s = g->op_kind[v]; *s; s++) { if (*s == '"' || *s == '\\') fputc('\\', f); fputc(*s, f); }
    fputs("\\n", f);
    for (const char *s = lab; *s; s++) { if (*s == '"' || *s == '\\') fputc('\\', f); fputc(*s, f); }
    fputc('"', f);
    fprintf(f, ", kind=");
    dot_quoted(f, g->op_kind[v]);
    fprintf(f, ", Weight=%s, fillcolor=\"%s\"];\n", fmt_num(g->work[v], w, sizeof w), color);
}

int dp_graph_write_dot(const dp_graph *g, const char *path, const int *assignment, int n_devices, dp_error *err)
{
    /* ColorBrewer Set3: pale, distinct, readable under black text */
    static const char *palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                    "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
    const int n_pal = (int)(sizeof palette / sizeof palette[0]);
    if (assignment)
        for (int v = 0; v < g->n_ops; v++)
            if (assignment[v] < 0 || assignment[v] >= n_devices)
                return dp_error_set(err, DP_EINVAL, "%s: op %d (\"%s\"): device %d outside 0..%d", path, v, g->op_name[v],
                                    assignment[v], n_devices - 1);
    /* colour per kind, in order of first appearance */
    int *color = dp_malloc_n((size_t)g->n_ops, sizeof *color);
    strmap kinds;
    if (!color || strmap_init(&kinds, 16) != DP_OK) {
        free(color);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    }
    int n_kinds = 0;
    for (int v = 0; v < g->n_ops; v++) {
        int k = strmap_put(&kinds, g->op_kind[v], n_kinds);
        if (k < 0) { free(color); strmap_free(&kinds); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); }
        if (k == n_kinds) n_kinds++;
        color[v] = k % n_pal;
    }
    strmap_free(&kinds);
    char tmp[4200];
    FILE *f = dp_atomic_open(path, tmp, sizeof tmp, err);
    if (!f) { free(color); return err ? err->code : DP_EIO; }
    char b1[40];
    fprintf(f, "digraph ");
    dot_quoted(f, g->name);
    fprintf(f, " {\n  graph [label=");
    char lab[512];
    snprintf(lab, sizeof lab, "%s: %d ops, %d edges (%s)", g->name, g->n_ops, g->n_edges,
             g->cost_kind == DP_COST_PHYSICAL ? "FLOPs and bytes" : g->time_unit);
    dot_quoted(f, lab);
    fprintf(f, ", labelloc=t];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n");
    if (assignment) {
        for (int d = 0; d < n_devices; d++) {
            fprintf(f, "  subgraph \"cluster_device%d\" {\n    label=\"device %d\";\n    style=dashed;\n", d, d);
            for (int v = 0; v < g->n_ops; v++)
                if (assignment[v] == d) { fputs("  ", f); dot_write_node(f, g, v, palette[color[v]]); }
            fprintf(f, "  }\n");
        }
    } else {
        for (int v = 0; v < g->n_ops; v++) dot_write_node(f, g, v, palette[color[v]]);
    }
    for (int e = 0; e < g->n_edges; e++) {
        fprintf(f, "  ");
        dot_quoted(f, g->op_name[g->edge_src[e]]);
        fprintf(f, " -> ");
        dot_quoted(f, g->op_name[g->edge_dst[e]]);
        fprintf(f, " [Weight=%s];\n", fmt_num(g->edge_size[e], b1, sizeof b1));
    }
    fprintf(f, "}\n");
    free(color);
    if (ferror(f)) {
        dp_atomic_abort(f, tmp);
        return dp_error_set(err, DP_EIO, "%s: write failed", path);
    }
    return dp_atomic_commit(f, tmp, path, err);
}

int dp_graph_write(const dp_graph *g, const char *path, const char *format, dp_error *err)
{
    const char *fmt = format;
    if (!fmt) {
        const char *dot = strrchr(dp_path_stem(path), '.');
        if (dot && strcmp(dot, ".json") == 0) fmt = "json";
        else if (dot && (strcmp(dot, ".dot") == 0 || strcmp(dot, ".gv") == 0)) fmt = "dot";
        else if (strcmp(path, "-") == 0) fmt = "json";
        else return dp_error_set(err, DP_EINVAL, "%s: cannot tell the output format from the file name (.json or .dot); give --to", path);
    }
    if (strcmp(fmt, "json") == 0 || strcmp(fmt, "native") == 0) return dp_graph_write_json(g, path, err);
    if (strcmp(fmt, "dot") == 0) return dp_graph_write_dot(g, path, NULL, 0, err);
    return dp_error_set(err, DP_EINVAL, "%s: unknown output format \"%s\" (json, dot)", path, fmt);
}
