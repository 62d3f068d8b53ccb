/* dp_graph_wfcommons.c: the WfCommons WfFormat reader (see dp_graph_formats.h). */
#include "dp_graph_format.h"
#include "dp_alloc.h"
#include "dp_file.h"
#include "dp_graph_formats.h"
#include "dp_json.h"
#include "dp_strmap.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct wf_task {
    const char *id;      /* borrowed from the JSON */
    const char *kind;
    double runtime;
    json_t *parents, *children;
    json_t *in_files, *out_files; /* 1.5: arrays of file ids; 1.4: NULL (files[] below) */
    json_t *files14;              /* 1.4: files [{link, name, path?, sizeInBytes}] */
} wf_task;

/* An op kind from a task's program: the program itself when it is one word (Pegasus: "mProject"),
 * else its first word's base name: a Nextflow record's program is the whole shell script
 * ("unicycler \\\n --threads 1 ..."), which made every task a kind of its own, up to 533
 * characters with line ends, and a graph DOT could not write (a review of WfInstances' 15
 * Nextflow files). "task" when there is none. buf (cap bytes) holds a word cut out. */
static const char *wf_kind(const char *prog, char *buf, size_t cap)
{
    if (!prog) return "task";
    const char *p = prog;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    size_t len = strcspn(p, " \t\n\r\\");
    if (len == 0) return "task";
    if (p == prog && p[len] == '\0') return prog; /* one word: as it is */
    const char *w = p;
    for (const char *q = p; q < p + len; q++)
        if (*q == '/' && q + 1 < p + len) w = q + 1;
    len -= (size_t)(w - p);
    if (len >= cap) len = cap - 1;
    memcpy(buf, w, len);
    buf[len] = '\0';
    return buf;
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
        int *p = dp_alloc_realloc(l->data, (size_t)cap * sizeof *p);
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

/* Sum of sizes of files both written by task a and read by task b. outs/ins hold per task sets
 * of file indices (sorted), fsize the size per file index. Indices, not pointers into the
 * pools: a graph without files has no pool at all (data NULL), and NULL + 0 is undefined. */
static double wf_shared_bytes(const int_lists *outs, int a, const int_lists *ins, int b, const double *fsize)
{
    double s = 0;
    int i = outs->ptr[a], i_end = outs->ptr[a + 1];
    int j = ins->ptr[b], j_end = ins->ptr[b + 1];
    while (i < i_end && j < j_end) {
        int fo = outs->data[i], fi = ins->data[j];
        if (fo < fi) i++;
        else if (fo > fi) j++;
        else { s += fsize[fo]; i++; j++; }
    }
    return s;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static dp_graph *wfcommons_from_json(json_t *root, const char *path, double bw, dp_error *err)
{
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    wf_task *tasks = NULL;
    dp_strmap tmap = {0}, fmap = {0};
    int_lists outs = {0}, ins = {0};
    double *fsize = NULL;
    char **fkeys = NULL; /* 1.4: owned path+name keys */
    int n_fkeys = 0, cap_fkeys = 0;
    int n = 0, n_files = 0;
    int *esrc = NULL, *edst = NULL;
    int n_e = 0, cap_e = 0;

    if (!(bw > 0)) { dp_error_set(err, DP_EINVAL, "%s: the bandwidth for WfCommons file sizes must be positive", path); return NULL; }
    const char *ver = dp_graph_json_str(root, "schemaVersion");
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
            /* (schema 1.2 lists "jobs": its file said only that no tasks were found; a review) */
            dp_error_set(err, DP_EINVAL, "%s: neither workflow.specification.tasks (schema 1.5) nor workflow.tasks (1.4) is an "
                         "array%s%s%s", path, ver ? "; schemaVersion " : "", ver ? ver : "",
                         ver && strcmp(ver, "1.4") < 0 ? ": only 1.4 (and 1.5 or later) are read" : "");
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
    tasks = dp_alloc_calloc(nt, sizeof *tasks);
    outs.ptr = dp_alloc_calloc(nt + 1, sizeof(int));
    ins.ptr = dp_alloc_calloc(nt + 1, sizeof(int));
    if (!tasks || !outs.ptr || !ins.ptr || dp_strmap_init(&tmap, nt * 2) != DP_OK || dp_strmap_init(&fmap, 64) != DP_OK) goto nomem;

    /* tasks and their ids (1.4: name and id both name a task) */
    for (int i = 0; i < n; i++) {
        json_t *t = json_array_get(jtasks, i);
        if (!json_is_object(t)) { dp_error_set(err, DP_EINVAL, "%s: %s[%d]: must be an object", path, tfield, i); goto done; }
        const char *id = dp_graph_json_str(t, "id"), *name = dp_graph_json_str(t, "name");
        if (v15 && !id) { dp_error_set(err, DP_EINVAL, "%s: %s[%d].id: missing or not a string", path, tfield, i); goto done; }
        if (!v15 && !name) { dp_error_set(err, DP_EINVAL, "%s: %s[%d].name: missing or not a string", path, tfield, i); goto done; }
        tasks[i].id = v15 ? id : name;
        int r = dp_strmap_put(&tmap, tasks[i].id, i);
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
            const char *cat = dp_graph_json_str(t, "category");
            json_t *cmd = json_object_get(t, "command");
            tasks[i].kind = cat ? cat : json_is_object(cmd) ? dp_graph_json_str(cmd, "program") : NULL;
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
            const char *id = dp_graph_json_str(json_array_get(jtasks, i), "id");
            if (id && dp_strmap_put(&tmap, id, i) < 0) goto nomem;
        }
    }

    /* files and their sizes */
    if (v15) {
        json_t *jf = json_object_get(spec, "files");
        if (jf && !json_is_array(jf)) { dp_error_set(err, DP_EINVAL, "%s: workflow.specification.files must be an array", path); goto done; }
        n_files = (int)json_array_size(jf);
        fsize = dp_alloc_calloc_n((size_t)n_files + 1, sizeof *fsize);
        if (!fsize) goto nomem;
        for (int f = 0; f < n_files; f++) {
            json_t *o = json_array_get(jf, f);
            const char *id = json_is_object(o) ? dp_graph_json_str(o, "id") : NULL;
            json_t *sz = json_is_object(o) ? json_object_get(o, "sizeInBytes") : NULL;
            if (!id) { dp_error_set(err, DP_EINVAL, "%s: workflow.specification.files[%d].id: missing or not a string", path, f); goto done; }
            if (!json_is_number(sz) || !(json_number_value(sz) >= 0) || !isfinite(json_number_value(sz))) {
                dp_error_set(err, DP_EINVAL, "%s: workflow.specification.files[%d].sizeInBytes: must be a non-negative number", path, f);
                goto done;
            }
            int r = dp_strmap_put(&fmap, id, f);
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
                    int f = json_is_string(x) ? dp_strmap_get(&fmap, json_string_value(x)) : -1;
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
        size_t *seen = dp_alloc_calloc(nt, sizeof *seen); /* per task, its entry's index + 1; 0: none yet */
        if (!seen) goto nomem;
        for (size_t j = 0; j < json_array_size(et); j++) {
            json_t *o = json_array_get(et, j);
            const char *id = json_is_object(o) ? dp_graph_json_str(o, "id") : NULL;
            int i = id ? dp_strmap_get(&tmap, id) : -1;
            if (i < 0) {
                dp_error_set(err, DP_EINVAL, "%s: workflow.execution.tasks[%zu].id: %s", path, j, id ? "no such task in the specification" : "missing or not a string");
                free(seen);
                goto done;
            }
            if (seen[i]) {
                /* two runtimes for one task: which one is meant is not known (the last one won) */
                dp_error_set(err, DP_EINVAL, "%s: workflow.execution.tasks[%zu]: task \"%s\" appears twice (first at [%zu])", path, j,
                             id, seen[i] - 1);
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
            if (json_is_object(cmd)) tasks[i].kind = dp_graph_json_str(cmd, "program");
            seen[i] = j + 1;
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
                const char *nm = json_is_object(o) ? dp_graph_json_str(o, "name") : NULL;
                const char *link = json_is_object(o) ? dp_graph_json_str(o, "link") : NULL;
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
                const char *fp = dp_graph_json_str(o, "path");
                size_t klen = strlen(nm) + (fp ? strlen(fp) : 0) + 1;
                char *key = dp_alloc_malloc(klen);
                if (!key) { free(fs); goto nomem; }
                snprintf(key, klen, "%s%s", fp ? fp : "", nm);
                int f = dp_strmap_get(&fmap, key);
                if (f < 0) {
                    if (n_fkeys == cap_fkeys) {
                        int cap = cap_fkeys ? 2 * cap_fkeys : 64;
                        char **p = dp_alloc_realloc(fkeys, (size_t)cap * sizeof *p);
                        double *q = dp_alloc_realloc(fs, (size_t)cap * sizeof *q);
                        if (p) fkeys = p;
                        if (q) fs = q;
                        if (!p || !q) { free(key); free(fs); goto nomem; }
                        cap_fkeys = cap;
                    }
                    f = n_fkeys;
                    fkeys[n_fkeys++] = key;
                    fs[f] = json_number_value(sz);
                    if (dp_strmap_put(&fmap, key, f) < 0) { free(fs); goto nomem; }
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
                int o = json_is_string(x) ? dp_strmap_get(&tmap, json_string_value(x)) : -1;
                if (o < 0) {
                    dp_error_set(err, DP_EINVAL, "%s: %s[%d].%s[%zu]: %s%s%s", path, tfield, i, k ? "children" : "parents", j,
                                 json_is_string(x) ? "no task \"" : "must be a task id", json_is_string(x) ? json_string_value(x) : "",
                                 json_is_string(x) ? "\"" : "");
                    goto done;
                }
                if (o == i) { dp_error_set(err, DP_EINVAL, "%s: %s[%d]: task \"%s\" depends on itself", path, tfield, i, tasks[i].id); goto done; }
                if (n_e == cap_e) {
                    int cap = cap_e ? 2 * cap_e : 256;
                    int *p = dp_alloc_realloc(esrc, (size_t)cap * sizeof *p);
                    if (p) esrc = p;
                    int *q = dp_alloc_realloc(edst, (size_t)cap * sizeof *q);
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
        const char *nm = dp_graph_json_str(root, "name");
        if (!nm) { dp_graph_file_stem(stem, sizeof stem, path); nm = stem; }
        b = dp_graph_builder_alloc(nm, path, DP_GRAPH_COST_TIME);
        if (!b) goto nomem;
        dp_graph_builder_set_time_unit(b, 1.0, "s");
        for (int i = 0; i < n; i++) {
            double ob = 0;
            for (int q = outs.ptr[i]; q < outs.ptr[i + 1]; q++) ob += fsize[outs.data[q]];
            char kbuf[128];
            if (dp_graph_builder_add_op(b, tasks[i].id, wf_kind(tasks[i].kind, kbuf, sizeof kbuf), tasks[i].runtime,
                                        isinf(bw) ? 0 : ob / bw) < 0)
                goto nomem;
        }
        /* de-duplicate (parent, child) pairs: sort pair keys */
        int64_t *key = dp_alloc_malloc_n((size_t)n_e + 1, sizeof *key);
        if (!key) goto nomem;
        for (int e = 0; e < n_e; e++) key[e] = (int64_t)esrc[e] * n + edst[e];
        /* the first copy of a pair is kept, in input order: later copies are found through a
         * sorted copy of the keys */
        int64_t *sorted = dp_alloc_malloc_n((size_t)n_e + 1, sizeof *sorted);
        if (!sorted) { free(key); goto nomem; }
        memcpy(sorted, key, (size_t)n_e * sizeof *key);
        qsort(sorted, (size_t)n_e, sizeof *sorted, cmp64);
        char *used = dp_alloc_calloc((size_t)n_e + 1, 1);
        if (!used) { free(key); free(sorted); goto nomem; }
        for (int e = 0; e < n_e; e++) {
            /* binary search the pair; "used" marks a pair already added */
            size_t lo = 0, hi = (size_t)n_e;
            while (lo < hi) { size_t mid = (lo + hi) / 2; if (sorted[mid] < key[e]) lo = mid + 1; else hi = mid; }
            if (used[lo]) continue;
            used[lo] = 1;
            int u = esrc[e], v = edst[e];
            double bytes = wf_shared_bytes(&outs, u, &ins, v, fsize);
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
    dp_strmap_free(&tmap);
    dp_strmap_free(&fmap);
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
    dp_json_arena *arena;
    json_t *root = dp_json_load_scoped(path, &arena, err);
    if (!root) return NULL;
    dp_graph *g = NULL;
    if (!json_is_object(root)) dp_error_set(err, DP_EINVAL, "%s: the top level must be a JSON object", path);
    else g = wfcommons_from_json(root, path, bandwidth_Bps, err);
    dp_json_scoped_free(root, arena);
    return g;
}

static int wfcommons_is_json(const dp_json_doc *doc)
{
    return dp_json_doc_type(doc, "workflow") >= 0 && dp_json_doc_type(doc, "schemaVersion") >= 0;
}

static dp_graph *wfcommons_from_json_default(json_t *root, const char *path, dp_error *err)
{
    return wfcommons_from_json(root, path, DP_GRAPH_WFCOMMONS_BANDWIDTH_BPS, err);
}

static dp_graph *wfcommons_read_default(const char *path, dp_error *err)
{
    return dp_graph_read_wfcommons(path, DP_GRAPH_WFCOMMONS_BANDWIDTH_BPS, err);
}

const dp_graph_format dp_graph_format_wfcommons = {
    .name = "wfcommons",
    .read = wfcommons_read_default,
    .is_json = wfcommons_is_json,
    .from_json = wfcommons_from_json_default,
};
