/* dp_graph_format.h (internal, not installed): what a graph format gives the format table.
 *
 * Each format is one file (models/dp_graph_doppler.c, _native.c, _stg.c, _wfcommons.c, _msr.c,
 * _dot.c) that defines a dp_graph_format; models/dp_graph_io.c holds the table, dp_graph_read,
 * dp_graph_write and dp_graph_read_json_any, which choose a format by name, by file name
 * ending or (.json) by content. The public readers and writers (dp_graph.h,
 * dp_graph_formats.h) stay the formats' entry points. A format file includes this header and
 * never the table's: the formats do not depend on each other or on the dispatch.
 *
 * Adding a format is one file and one line in dp_graph_io.c's table. */
#ifndef DP_GRAPH_FORMAT_H
#define DP_GRAPH_FORMAT_H

#include "dp_graph.h"
#include "dp_json.h"

#include <jansson.h>
#include <stddef.h>

typedef struct dp_graph_format {
    const char *name;     /* what --format (reading) or --to (writing) takes */
    const char *ext[3];   /* file name endings that select it when no format is named
                           * (NULL-terminated; none: reached by name or content only) */
    /* Read a file; NULL: the format is not read by name. */
    dp_graph *(*read)(const char *path, dp_error *err);
    /* Write g atomically; NULL: read only. */
    int (*write)(const dp_graph *g, const char *path, dp_error *err);
    /* JSON formats: 1 when a scanned .json document (an object: dp_json_doc) is of this format,
     * by its top-level keys ... */
    int (*is_json)(const dp_json_doc *doc);
    /* ... and the reader of such a document (path: for messages): from_doc reads the document
     * member by member where the format has one (native: an op at a time), else from_json reads
     * its tree (dp_json_doc_tree). */
    dp_graph *(*from_doc)(dp_json_doc *doc, const char *path, dp_error *err);
    dp_graph *(*from_json)(json_t *root, const char *path, dp_error *err);
} dp_graph_format;

extern const dp_graph_format dp_graph_format_doppler;
extern const dp_graph_format dp_graph_format_native;
extern const dp_graph_format dp_graph_format_stg;
extern const dp_graph_format dp_graph_format_wfcommons;
extern const dp_graph_format dp_graph_format_msr;
extern const dp_graph_format dp_graph_format_dot;

/* Helpers of the task-graph readers (dp_graph_io.c). */

/* The file name of path without folders and without its last extension ("a/b.stg" -> "b"):
 * the graph's name when the file names none. */
void dp_graph_file_stem(char *buf, size_t cap, const char *path);

/* For time graphs read from task-graph files: an op's output size is the largest transfer
 * time among its out-edges (the DOPPLER-compatible model reads edge sizes, not this). */
void dp_graph_out_size_from_edges(dp_graph *g);

/* The string member key of JSON object o, or NULL when absent or not a string. */
static inline const char *dp_graph_json_str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

#endif
