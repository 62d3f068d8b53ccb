/* dp_json.h: the Jansson side of models/: graph <-> JSON values, atomic JSON output.
 * Kept out of dp_graph.h so that users of the graph need not include jansson.h. */
#ifndef DP_JSON_H
#define DP_JSON_H

#include <jansson.h>

#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Build a graph from a parsed native-format JSON value (doc/graph-format.md). path names the
 * source in error messages. Returns NULL with err filled on any fault. */
dp_graph *dp_graph_from_json(json_t *root, const char *path, dp_error *err);

/* The native JSON value of a graph (new reference; NULL on allocation failure). */
json_t *dp_graph_to_json(const dp_graph *g);

/* Dump a JSON value to path atomically (temporary file + rename), flags as json_dumpf's. */
int dp_json_dump_atomic(json_t *value, const char *path, size_t flags, dp_error *err);

/* Memory Jansson needs to parse JSON, per byte of text (a graph file: 40 MB of text, 1.2 GiB
 * parsed): readers call dp_mem_check(path, ..., size * DP_JSON_BYTES_PER_BYTE) before parsing. */
#define DP_JSON_BYTES_PER_BYTE 32.0

/* A number for JSON output: json_real(x) when x is finite, JSON null otherwise (json_real
 * returns NULL for inf and NaN, and json_object_set_new would then silently drop the field).
 * NULL only when out of memory. */
json_t *dp_json_number(double x);

/* Load a JSON file; errors name the file, line and column. A file whose parse would not fit in
 * memory (dp_mem_check) is refused before parsing (DP_ENOMEM). */
json_t *dp_json_load(const char *path, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
