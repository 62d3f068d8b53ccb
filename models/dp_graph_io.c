/* dp_graph_io.c: the table of graph formats (one file each, dp_graph_format.h) and the choice
 * among them: dp_graph_read and dp_graph_write by name or file name ending, .json files by
 * content; helpers the task-graph readers share. */
#include "dp_graph_format.h"
#include "dp_file.h"
#include "dp_graph_formats.h"
#include "dp_json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ".json" without a named format: native, WfCommons or MSR, told apart by content */
static int json_any_write(const dp_graph *g, const char *path, dp_error *err)
{
    return dp_graph_write_json(g, path, err);
}

static const dp_graph_format format_json_any = {
    .name = "json",
    .ext = {".json"},
    .read = dp_graph_read_json_any,
    .write = json_any_write,
};

/* in the order messages list them */
static const dp_graph_format *const formats[] = {
    &dp_graph_format_doppler, &format_json_any, &dp_graph_format_native, &dp_graph_format_wfcommons,
    &dp_graph_format_msr, &dp_graph_format_stg, &dp_graph_format_dot,
};
#define N_FORMATS ((int)(sizeof formats / sizeof formats[0]))

/* which JSON format a document is, asked in this order (a WfCommons document may hold any key) */
static const dp_graph_format *const json_formats[] = {
    &dp_graph_format_wfcommons, &dp_graph_format_msr, &dp_graph_format_native,
};

static const dp_graph_format *by_name(const char *name)
{
    for (int i = 0; i < N_FORMATS; i++)
        if (strcmp(formats[i]->name, name) == 0) return formats[i];
    return NULL;
}

/* the format whose file name ending path has (writing: among the writable ones), or NULL */
static const dp_graph_format *by_ending(const char *path, int writing)
{
    const char *dot = strrchr(dp_file_path_stem(path), '.');
    if (!dot) return NULL;
    for (int i = 0; i < N_FORMATS; i++) {
        if (writing && !formats[i]->write) continue;
        for (int k = 0; k < 3 && formats[i]->ext[k]; k++)
            if (strcmp(dot, formats[i]->ext[k]) == 0) return formats[i];
    }
    return NULL;
}

/* "a, b, c": the formats' names (writing: those with a file name ending and a writer) */
static const char *format_list(char *buf, size_t cap, int writing)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_FORMATS; i++) {
        if (writing && (!formats[i]->write || !formats[i]->ext[0])) continue;
        int w = snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", formats[i]->name);
        if (w < 0 || (size_t)w >= cap - n) break;
        n += (size_t)w;
    }
    return buf;
}

static int ends_with(const char *s, const char *suffix)
{
    const size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

const char *dp_graph_hetero_format(const char *path, const char *format)
{
    if (format) {
        if (strcmp(format, "heft-in") == 0) return "heft-in";
        if (strcmp(format, "heft-csv") == 0) return "heft-csv";
        return NULL;
    }
    if (!path) return NULL;
    if (ends_with(path, ".in")) return "heft-in";
    if (ends_with(path, "_task_exe_time.csv")) return "heft-csv";
    return NULL;
}

/* The heterogeneous examples (machine/dp_hetero.h) carry their own processors: not a graph
 * format. 1 with the refusal in err when path (or format) is one. */
static int hetero_example(const char *path, const char *format, dp_error *err)
{
    const char *h = dp_graph_hetero_format(path, format);
    if (!h) return 0;
    dp_error_set(err, DP_EINVAL, "%s: a HEFT example (format %s) carries its own processors: graph info and place "
                 "read it; as a graph alone it has no format here", path, h);
    return 1;
}

dp_graph *dp_graph_read(const char *path, const char *format, dp_error *err)
{
    if (!path) {
        dp_error_set(err, DP_EINVAL, "graph: no file name given (NULL path)");
        return NULL;
    }
    if (hetero_example(path, format, err)) return NULL;
    const dp_graph_format *f = format ? by_name(format) : by_ending(path, 0);
    if (!f && !format) {
        struct stat st;
        if (stat(path, &st) != 0)
            dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
        else if (S_ISDIR(st.st_mode)) /* said "cannot tell the graph format" */
            dp_error_set(err, DP_EIO, "%s: is a directory, not a graph file", path);
        else
            dp_error_set(err, DP_EINVAL, "%s: cannot tell the graph format from the file name; give --format", path);
        return NULL;
    }
    if (!f || !f->read) {
        char list[128];
        dp_error_set(err, DP_EINVAL, "%s: unknown graph format \"%s\" (%s; place and graph info also read heft-in and "
                     "heft-csv)", path, format, format_list(list, sizeof list, 0));
        return NULL;
    }
    return f->read(path, err);
}

/* the format dp_graph_write writes path in (dp_graph_write_format) */
static const dp_graph_format *writer_of(const char *path, const char *format, dp_error *err)
{
    const dp_graph_format *f;
    if (format) f = by_name(format);
    else if (!path || strcmp(path, "-") == 0) f = &format_json_any;
    else if (!(f = by_ending(path, 1))) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) dp_error_set(err, DP_EIO, "%s: is a directory", path);
        else dp_error_set(err, DP_EINVAL, "%s: cannot tell the output format from the file name (.json, .dot or .txt)", path);
        return NULL;
    }
    if (!f || !f->write) {
        char list[128];
        dp_error_set(err, DP_EINVAL, "%s%sunknown output format \"%s\" (%s)", path ? path : "", path ? ": " : "", format,
                     format_list(list, sizeof list, 1));
        return NULL;
    }
    return f;
}

const char *dp_graph_write_format(const char *path, const char *format, dp_error *err)
{
    const dp_graph_format *f = writer_of(path, format, err);
    return f ? f->name : NULL;
}

int dp_graph_write_format_check(const char *format, dp_error *err)
{
    return dp_graph_write_format(NULL, format, err) ? DP_OK : DP_EINVAL;
}

int dp_graph_format_check(const char *format, dp_error *err)
{
    if (!format || strcmp(format, "heft-in") == 0 || strcmp(format, "heft-csv") == 0) return DP_OK;
    const dp_graph_format *f = by_name(format);
    if (f && f->read) return DP_OK;
    char list[128];
    return dp_error_set(err, DP_EINVAL, "unknown graph format \"%s\" (%s; place and graph info also read heft-in and "
                        "heft-csv)", format, format_list(list, sizeof list, 0));
}

dp_graph *dp_graph_read_json_any(const char *path, dp_error *err)
{
    dp_json_doc *doc = dp_json_doc_open(path, err);
    if (!doc) return NULL;
    dp_graph *g = NULL;
    const dp_graph_format *f = NULL;
    if (dp_json_doc_is_object(doc))
        for (size_t i = 0; i < sizeof json_formats / sizeof json_formats[0] && !f; i++)
            if (json_formats[i]->is_json(doc)) f = json_formats[i];
    if (!dp_json_doc_is_object(doc)) {
        dp_error_set(err, DP_EINVAL, "%s: the top level must be a JSON object", path);
    } else if (!f) {
        /* the scan chose no format by the top-level keys alone: a text Jansson refuses is named
         * as such first (the fault may be anywhere the scan does not look) */
        dp_json_arena *arena;
        json_t *root = dp_json_doc_tree(doc, &arena, err);
        if (root)
            dp_error_set(err, DP_EINVAL, "%s: not a graph: no \"ops\" (native format), \"workflow\" and \"schemaVersion\" "
                         "(WfCommons) or \"nodes\" and \"edges\" (MSR)", path);
        dp_json_scoped_free(root, arena);
    } else if (f->from_doc) {
        g = f->from_doc(doc, path, err);
    } else {
        dp_json_arena *arena;
        json_t *root = dp_json_doc_tree(doc, &arena, err);
        if (root) g = f->from_json(root, path, err);
        dp_json_scoped_free(root, arena);
    }
    dp_json_doc_close(doc);
    return g;
}

int dp_graph_write(const dp_graph *g, const char *path, const char *format, dp_error *err)
{
    const dp_graph_format *f = writer_of(path, format, err);
    if (!f) {
        /* the library's words, not one command's option (Graph.write said "give --to"); the
         * commands refuse such a name first, naming their own (graph gen said "graph convert
         * --to": a review) */
        if (!format && err && err->code == DP_EINVAL) {
            char msg[DP_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            dp_error_set(err, DP_EINVAL, "%s: name the format (graph convert --to, Graph.write(path, format))", msg);
        }
        return err && err->code ? err->code : DP_EINVAL;
    }
    return f->write(g, path, err);
}

/* ---------------- helpers of the task-graph readers ---------------- */

void dp_graph_file_stem(char *buf, size_t cap, const char *path)
{
    snprintf(buf, cap, "%s", dp_file_path_stem(path));
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = '\0';
}

void dp_graph_out_size_from_edges(dp_graph *g)
{
    for (int v = 0; v < g->n_ops; v++) {
        double m = 0;
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++)
            if (g->edge_size[e] > m) m = g->edge_size[e];
        g->out_size[v] = m;
    }
}
