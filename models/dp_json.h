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
dp_graph *dp_json_to_graph(json_t *root, const char *path, dp_error *err);

/* The native JSON value of a graph (new reference; NULL when any Jansson allocation failed). */
json_t *dp_json_from_graph(const dp_graph *g);

/* Dump a JSON value to path atomically (temporary file + rename), flags as json_dumpf's. */
int dp_json_dump_atomic(json_t *value, const char *path, size_t flags, dp_error *err);

/* Memory Jansson needs to parse JSON text, an upper bound: DP_JSON_BYTES_PER_BYTE per byte, plus
 * DP_JSON_BYTES_PER_OBJECT per '{' and DP_JSON_BYTES_PER_ARRAY per '[' (an empty object takes
 * about 230 bytes, its hash table included, so "[{},{},...]" needs about 80 bytes per byte of
 * text, where a graph file needs about 30). Measured on Jansson 2.14 (glibc, 64-bit): per value,
 * 3 bytes of "{}," 232 MiB for 10^6, "[]," 141 MiB, "1," 50 MiB, "\"\"," 95 MiB. */
#define DP_JSON_BYTES_PER_BYTE 36.0
#define DP_JSON_BYTES_PER_OBJECT 240.0
#define DP_JSON_BYTES_PER_ARRAY 140.0

/* That bound for `size` bytes of text (counts its braces and brackets, strings' too). Readers call
 * dp_file_mem_check(path, ..., dp_json_parse_bytes(text, size)) before parsing. */
double dp_json_parse_bytes(const char *text, size_t size);

/* DP_OK when every key of the object o is among known (NULL-terminated), else DP_EINVAL naming
 * the first other key, where it is (origin: the file; where: the place in it, e.g. "topology" or
 * "devices.d1") and the keys known there ("FILE: WHERE: unknown key \"K\" (known: ...)"). For the
 * readers of files whose optional keys have defaults: a misspelt one ("efficency", "rotues") was
 * ignored and its default silently used (reviews of the eighteenth and twentieth sessions). */
int dp_json_known_keys(const json_t *o, const char *const *known, const char *origin, const char *where, dp_error *err);

/* A number for JSON output: json_real(x) when x is finite, JSON null otherwise (json_real
 * returns NULL for inf and NaN, and json_object_set_new would then silently drop the field).
 * NULL only when out of memory. */
json_t *dp_json_number(double x);

/* x as the shortest "%.*g" text (6 to 17 significant digits) that reads back to x exactly, in
 * buf (cap >= 32); returns buf. The one formatter of exact numbers in text: the DOT writer's,
 * the results CSV's and the schema's out-of-range messages. */
const char *dp_json_fmt_exact(double x, char *buf, size_t cap);

/* 1 when a and b are the same parameter value: numbers by value (4 is 4.0), two integers exactly
 * (past 2^53 distinct integers meet as doubles), anything else as json_equal. */
int dp_json_same_value(const json_t *a, const json_t *b);

/* A seed (0 .. 2^64-1) for a config: a JSON integer up to 2^63-1 (Jansson's integers are signed
 * 64-bit), beyond it a string of its digits. NULL only when out of memory. */
json_t *dp_json_seed(uint64_t seed);
/* The seed of v as dp_json_seed writes it (a non-negative integer, or a string of decimal
 * digits below 2^64): 0 with *seed set, -1 for anything else. */
int dp_json_seed_value(const json_t *v, uint64_t *seed);

/* The text of a JSON file (dp_file_read_text: BOM skipped, NUL refused) once dp_file_mem_check has found
 * that its parse fits in memory (DP_ENOMEM otherwise); for readers that parse it themselves.
 * Caller frees. */
char *dp_json_read_text(const char *path, size_t *size, dp_error *err);

/* Load a JSON file; errors name the file, line and column. A file whose parse would not fit in
 * memory (dp_file_mem_check of dp_json_parse_bytes) is refused before parsing (DP_ENOMEM). Read as
 * text (dp_file_read_text): a UTF-8 byte order mark is skipped, a NUL byte refused. */
json_t *dp_json_load(const char *path, dp_error *err);

/* dp_json_load for a reader that converts the tree and drops it before returning (the MSR and
 * WfCommons graph readers, and the native one where it needs the tree: dp_json_doc below): the
 * same checks and errors, but every value is allocated from one arena (*arena, an anonymous
 * mapping sized by dp_json_parse_bytes and touched only as used, in huge pages where the kernel
 * gives them) instead of one malloc per value, and dp_json_scoped_free(root, *arena) drops the
 * whole tree by unmapping it (EXPERIMENTS.md "Reading in one arena"). The values and the strings
 * they hold are valid until then only: the caller must not keep a reference (json_incref) or a
 * string past it, nor free a value of the tree on its own. Where no arena can be had (address
 * space, or 16 arenas live at once) *arena is NULL and the values are malloc'd, which
 * dp_json_scoped_free handles the same way. Jansson's allocator is process wide: the library
 * installs its own (malloc and free outside arenas) when it is loaded; a program that installs
 * another one (json_set_alloc_funcs) gets no arena from then on (*arena NULL, the values its
 * allocator's). */
typedef struct dp_json_arena dp_json_arena;
json_t *dp_json_load_scoped(const char *path, dp_json_arena **arena, dp_error *err);

/* Drop a tree of dp_json_load_scoped (root may be NULL) and release its arena (may be NULL). */
void dp_json_scoped_free(json_t *root, dp_json_arena *arena);

/* Arenas of dp_json_load_scoped not yet released, over the process (for tests: 0 once every
 * reader has returned). */
int dp_json_arenas_live(void);

/* For tests: arenas made from now on hold at most `bytes` (0: the parse's bound, the default), so
 * that a parse overflows into malloc and the tree is freed node by node. */
void dp_json_arena_set_limit(size_t bytes);

/* A JSON file whose top-level object is read one member at a time, and an array member one
 * element at a time (issue 30: a 99,774-op graph is 33 MB of text, and Jansson's tree of it
 * 223 MB). Jansson has no streaming parser, so dp_json_doc_open scans the text's structure
 * itself (brackets, commas, colons and string bounds; nothing is decoded there) and every piece
 * is then parsed on its own by Jansson (json_loadb of its bytes, JSON_REJECT_DUPLICATES): the
 * keys of the top level, each member's value when asked for, and each element of an array member
 * that dp_json_doc_each's caller does not parse itself. A document that is not valid JSON is refused with Jansson's own message for
 * the whole text ("PATH:LINE:COL: REASON", as dp_json_load's), whichever piece showed the fault;
 * and where the scan itself could not follow a text that Jansson accepts (a top level that is
 * not an object, or a fault of this scanner), the document holds Jansson's tree instead and
 * answers the same calls from it. Memory: the text (its size) plus the piece being parsed. */
typedef struct dp_json_doc dp_json_doc;

/* Read and scan path (dp_file_read_text: a UTF-8 byte order mark skipped, a NUL refused). NULL
 * with err set (DP_EIO, DP_ENOMEM, DP_EINVAL with Jansson's message) on a fault. */
dp_json_doc *dp_json_doc_open(const char *path, dp_error *err);
/* Free the document: its text, its member index and, in a document held as a tree, that tree (the
 * elements dp_json_doc_each lent are invalid after it). What the caller was given is the caller's:
 * dp_json_doc_members' and dp_json_doc_parse's new references, dp_json_doc_tree's tree. NULL is a
 * no-op. */
void dp_json_doc_close(dp_json_doc *d);

/* 1 when the top level is an object (the calls below need one; otherwise they find nothing). */
int dp_json_doc_is_object(const dp_json_doc *d);
/* The JSON type of member key's value (JSON_OBJECT, JSON_ARRAY, JSON_STRING, JSON_INTEGER or
 * JSON_REAL, JSON_TRUE, JSON_FALSE, JSON_NULL; a number's as its text reads: JSON_REAL with a
 * '.', 'e' or 'E'), or -1 when there is no such member. */
int dp_json_doc_type(const dp_json_doc *d, const char *key);
/* Elements of array member key (a scan, no parse), or -1 when absent or not an array. */
long dp_json_doc_length(const dp_json_doc *d, const char *key);
/* A new object holding every member except those named in skip (a NULL-terminated list; NULL
 * skips none), each value parsed: for the members small enough to hold as a tree. NULL with err
 * set when a value is not valid JSON (Jansson's message for the whole text) or memory ran out. */
json_t *dp_json_doc_members(dp_json_doc *d, const char *const *skip, dp_error *err);
/* For each element of array member key, in order: fn(d, elem, raw, len, index, ctx). In a
 * scanned document raw is the element's text (len bytes, not NUL-terminated; only its structure
 * checked) and elem NULL: fn parses the text itself or asks dp_json_doc_parse for Jansson's
 * value; in a document held as a tree elem is the element (borrowed) and raw NULL. Stops at the
 * first fn that returns non-zero and returns that; DP_EINVAL when key is not an array member. */
typedef int (*dp_json_doc_each_fn)(dp_json_doc *d, json_t *elem, const char *raw, size_t len, size_t i, void *ctx);
int dp_json_doc_each(dp_json_doc *d, const char *key, dp_json_doc_each_fn fn, void *ctx, dp_error *err);
/* Jansson's value (new reference) of an element's text given to fn by dp_json_doc_each; NULL with
 * err set when it is not valid JSON (Jansson's message for the whole text, as dp_json_load's). */
json_t *dp_json_doc_parse(dp_json_doc *d, const char *raw, size_t len, dp_error *err);
/* The whole document as a tree (dp_json_load_scoped's: free with dp_json_scoped_free(root,
 * *arena)), for formats read as a tree. NULL with err set on a fault. */
json_t *dp_json_doc_tree(dp_json_doc *d, dp_json_arena **arena, dp_error *err);

/* Parse JSON text held in memory (a config stored in a checkpoint); NULL with DP_EINVAL
 * "WHAT: line L: REASON" when it is not JSON. Caller json_decref's. */
json_t *dp_json_loads_text(const char *text, const char *what, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
