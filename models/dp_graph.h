/* dp_graph.h: the dataflow graph, immutable once built.
 *
 * A graph G = (V, E) of operations (ops) and edges. Each op has a work figure and an output
 * size; each edge u->v carries a data size (normally u's output). What the numbers mean is given
 * by the graph's cost kind:
 *
 *   DP_GRAPH_COST_PHYSICAL  work in FLOPs (multiply-add = 2), sizes in bytes (generators, native JSON)
 *   DP_GRAPH_COST_TIME      work is a duration and an edge's size is its transfer duration when the
 *                     two ops sit on different devices, both in the graph's own time unit
 *                     (DOPPLER files, STG, DOT task graphs, HEFT examples). time_scale says how
 *                     printed times are scaled: DOPPLER's files use simulated time / 1e10.
 *
 * Building: a dp_graph_builder collects ops and edges in any order; dp_graph_builder_finish()
 * validates (ids, finite non-negative numbers, no cycle), builds CSR adjacency both ways, a
 * topological order (Kahn's algorithm, no recursion), sources and sinks. After that the graph is
 * read-only and may be shared between threads.
 *
 * Edge order (matters for the DOPPLER-compatible simulator, see sim/dp_sim.h): out-edges of an
 * op are listed grouped by destination in the order each destination first appears among that
 * op's edges in the input, a repeated edge right after its first copy.
 */
#ifndef DP_GRAPH_H
#define DP_GRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "dp_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DP_GRAPH_COST_PHYSICAL = 0, DP_GRAPH_COST_TIME = 1 } dp_graph_cost_kind;

#define DP_GRAPH_MAX_DIMS 8

typedef struct dp_graph {
    int n_ops;
    int n_edges;
    dp_graph_cost_kind cost_kind;
    double time_scale;      /* printed time = simulated time / time_scale (1 unless DOPPLER: 1e10) */
    char *time_unit;        /* human name of the printed unit ("s", "DOPPLER units (time/1e10)") */
    char *name;             /* graph name (file stem or generator name) */
    char *source;           /* where it was read from ("path/to/file.txt"), or generator */
    int devices;            /* devices the graph was made for, when it says: a generated Llama
                             * graph's tensor-parallel degree, DOPPLER's 8gpu_ files (8), a JSON
                             * file's "devices"; 0 when it does not say. Commands default
                             * --devices to it and warn when a given count differs. */

    /* per op, arrays of n_ops */
    char **op_name;         /* unique, never NULL */
    char **op_kind;         /* "matmul", "add", "op", ... never NULL */
    char **op_type;         /* optional secondary type (DOPPLER gdp_ files); NULL when absent */
    char **op_einsum;       /* optional einsum or shape text; NULL when absent */
    int *op_ndim;           /* rank of the output shape, 0 when unknown */
    int64_t *op_shape;      /* (n_ops, DP_GRAPH_MAX_DIMS) output shape, valid for op_ndim entries */
    double *work;           /* FLOPs (PHYSICAL) or duration (TIME) */
    double *out_size;       /* output bytes (PHYSICAL) or transfer duration of its output (TIME) */

    /* per edge, arrays of n_edges, sorted by source in CSR order (see above) */
    int *edge_src;
    int *edge_dst;
    double *edge_size;      /* bytes (PHYSICAL) or transfer duration (TIME) */

    /* CSR, both ways: out-edges of op u are succ_edge[succ_ptr[u] .. succ_ptr[u+1]) (edge ids,
     * and since edges are sorted by source, succ_edge[i] == i); in-edges of v are
     * pred_edge[pred_ptr[v] .. pred_ptr[v+1]), in increasing edge id. */
    int *succ_ptr;          /* n_ops + 1 */
    int *pred_ptr;          /* n_ops + 1 */
    int *pred_edge;         /* n_edges */
    int *n_unique_pred;     /* per op: number of distinct predecessors (repeated edges once) */
    int n_repeated_edges;   /* edges that repeat an earlier (src, dst) pair */

    int *topo;              /* n_ops: a topological order (Kahn's, first in first out: the sources in
                             * increasing id, then each op queued when the last of its in-edges
                             * is taken, ops taken in queue order and their out-edges in edge
                             * order; not the lowest ready id first: round-robin follows this) */
    int *sources;           /* ops with no in-edge, increasing id */
    int n_sources;
    int *sinks;             /* ops with no out-edge, increasing id */
    int n_sinks;
} dp_graph;

/* Reading a graph without laying out dp_graph (bindings: Python's doppler.Graph). g must be
 * non-NULL (unchecked); pointers point into g and live as long as it.
 *   dp_graph_get_n_ops, _n_edges, _cost_kind, _time_scale (printed = simulated / it), _devices
 *     (0 when the graph does not say), _time_unit, _name, _source (NUL-ended text, never NULL
 *     for a built graph's unit and name; source may be NULL): the fields of the same names.
 *   dp_graph_get_work, _out_size (n_ops doubles; FLOPs and bytes, or durations: cost_kind),
 *     _edge_src, _edge_dst (n_edges ints), _edge_size (n_edges doubles), _succ_ptr, _pred_ptr
 *     (n_ops + 1 ints, CSR offsets), _topo (n_ops ints, a topological order).
 *   dp_graph_get_sources, _sinks: the ops without in-, or out-edges (increasing id), their count
 *     in *n (n may be NULL).
 *   dp_graph_get_op_name, _op_kind: op v's name and kind (v in 0 .. n_ops - 1, unchecked).
 *   dp_graph_get_op_shape: op v's output shape: returns its rank (0 when unknown, at most
 *     DP_GRAPH_MAX_DIMS) and points *dims at its sizes (dims may be NULL). */
int dp_graph_get_n_ops(const dp_graph *g);
int dp_graph_get_n_edges(const dp_graph *g);
int dp_graph_get_cost_kind(const dp_graph *g);
double dp_graph_get_time_scale(const dp_graph *g);
int dp_graph_get_devices(const dp_graph *g);
const char *dp_graph_get_time_unit(const dp_graph *g);
const char *dp_graph_get_name(const dp_graph *g);
const char *dp_graph_get_source(const dp_graph *g);
const double *dp_graph_get_work(const dp_graph *g);
const double *dp_graph_get_out_size(const dp_graph *g);
const int *dp_graph_get_edge_src(const dp_graph *g);
const int *dp_graph_get_edge_dst(const dp_graph *g);
const double *dp_graph_get_edge_size(const dp_graph *g);
const int *dp_graph_get_succ_ptr(const dp_graph *g);
const int *dp_graph_get_pred_ptr(const dp_graph *g);
const int *dp_graph_get_topo(const dp_graph *g);
const int *dp_graph_get_sources(const dp_graph *g, int *n);
const int *dp_graph_get_sinks(const dp_graph *g, int *n);
const char *dp_graph_get_op_name(const dp_graph *g, int v);
const char *dp_graph_get_op_kind(const dp_graph *g, int v);
int dp_graph_get_op_shape(const dp_graph *g, int v, const int64_t **dims);

/* Largest graph accepted by builders and readers (ops or edges): beyond it sizes are rejected
 * before allocation with DP_ENOMEM. */
#define DP_GRAPH_MAX_ELEMS (1 << 28)

/* The most devices a machine has (the devices option, a topology's devices, dp_cost's tables) and
 * so the most a graph file may say it was made for (the native "devices", DOT's doppler_devices:
 * readers refuse more, naming the file and the field). */
#define DP_GRAPH_MAX_DEVICES 4096

typedef struct dp_graph_builder dp_graph_builder;

/* Start a graph. name and source are copied (either may be NULL). */
dp_graph_builder *dp_graph_builder_alloc(const char *name, const char *source,
                                         dp_graph_cost_kind kind);
/* Free the builder and everything it still holds (its arrays and its copies of the strings; a
 * successful dp_graph_builder_finish handed the op strings to the graph, which keeps them). A
 * graph it built lives on. NULL is a no-op. */
void dp_graph_builder_free(dp_graph_builder *b);

/* The device count the graph was made for (dp_graph.devices; 0: not said). */
void dp_graph_builder_set_devices(dp_graph_builder *b, int devices);
/* Time scale and unit name for printed times (see dp_graph.time_scale). Returns DP_OK, or
 * DP_ENOMEM when the name could not be copied; dp_graph_builder_finish then fails (DP_ENOMEM)
 * too, so a caller may check either. */
int dp_graph_builder_set_time_unit(dp_graph_builder *b, double scale, const char *unit);

/* Add an op; returns its id (0, 1, ... in call order) or a negative DP_E* status.
 * name may be NULL (then "op<ID>"); kind may be NULL (then "op"). Strings are copied.
 * Numbers are checked in finish(), not here, so the error can name the op. */
int dp_graph_builder_add_op(dp_graph_builder *b, const char *name, const char *kind,
                            double work, double out_size);
/* Refuse, before building it, a graph of `ops` ops and `edges` edges that memory cannot hold
 * (the builder's arrays and strings and the graph's copy, an upper estimate of about 600 bytes an
 * op and 80 an edge): DP_OK, or DP_ENOMEM with dp_file_mem_check's message naming source ("SOURCE:
 * reading a graph of N ops and M edges needs about X MiB of memory, more than the Y MiB
 * available"). For readers that know both counts before adding anything. */
int dp_graph_mem_check(const char *source, double ops, double edges, dp_error *err);
/* The name op (0 <= op < ops added) has in the builder: its own, or "op<ID>" when it was added
 * without one; valid until the builder is freed, or, after a successful dp_graph_builder_finish
 * (which moves the names to the graph; the builder then has no ops), as long as the graph. */
const char *dp_graph_builder_op_name(const dp_graph_builder *b, int op);
/* Optional attributes of an op already added: op_type and einsum (copied; NULL leaves the op's
 * unchanged) and its output's shape (ndim entries, copied; NULL only when ndim is 0; ndim at most
 * DP_GRAPH_MAX_DIMS). Returns DP_OK; DP_EINVAL (op out of range, ndim out of range, shape NULL
 * with ndim > 0); DP_ENOMEM (a copy failed; nothing changed). */
int dp_graph_builder_set_op_info(dp_graph_builder *b, int op, const char *op_type,
                                 const char *einsum, int ndim, const int64_t *shape);
/* Add an edge src -> dst carrying size (bytes or duration). Returns its input index or a
 * negative status. Ids are checked in finish(). */
int dp_graph_builder_add_edge(dp_graph_builder *b, int src, int dst, double size);
/* Before each growth of its arrays (doubling) the builder checks that memory can hold the graph
 * so grown (dp_file_mem_check: available memory, ulimits, DOPPLER_MEM_LIMIT); a refusal makes
 * add_op / add_edge return DP_ENOMEM and leaves its message here ("SOURCE: graph NAME, grown to N
 * ops and M edges, needs about X MiB of memory, more than the Y MiB available"); code DP_OK when
 * nothing was refused. Generators and readers report it instead of a bare "out of memory". */
const dp_error *dp_graph_builder_error(const dp_graph_builder *b);

/* Validate and build. The builder must still be freed. On success the op strings move to the
 * graph and the builder holds no ops (names got from dp_graph_builder_op_name are the graph's
 * now; finished again it builds nothing: DP_EINVAL, an empty graph). On error returns NULL
 * and fills err with a message naming the graph source and the op or edge at fault:
 * ids out of range, self loops, a cycle (an op on it is named), non-finite or negative numbers,
 * duplicate op names, an empty graph, op strings (name, kind, type, einsum) that are not valid
 * UTF-8 (JSON, the native format, cannot hold them: a conversion would lose them). An invalid
 * byte in the graph name (taken from a file name) is replaced by '?'. */
dp_graph *dp_graph_builder_finish(dp_graph_builder *b, dp_error *err);

/* Free a graph (of dp_graph_builder_finish, a reader or a generator) and everything it owns: its
 * arrays and strings (op names, kinds, types, einsums, the graph's name, source and time unit),
 * so pointers into it are invalid after it. NULL is a no-op. */
void dp_graph_free(dp_graph *g);

/* Name where g came from (copied into g->source, which every message about g names): what an
 * importer read through a temporary file says it imported (Python's Graph.from_torch and
 * from_onnx; their messages named the deleted temporary file: a review). Must be valid UTF-8.
 * DP_OK; DP_EINVAL (g or source NULL, or not UTF-8; g unchanged); DP_ENOMEM (g unchanged). */
int dp_graph_set_source(dp_graph *g, const char *source);

/* Look an op up by name; -1 if absent. O(n). */
int dp_graph_find_op(const dp_graph *g, const char *name);

/* Sums over the graph. */
double dp_graph_total_work(const dp_graph *g);

/* FNV-1a (64 bits) of n bytes at p, continuing from h (start: 14695981039346656037): the one
 * hash behind dp_graph_content_hash and dp_cost_fingerprint. */
uint64_t dp_graph_hash_bytes(uint64_t h, const void *p, size_t n);
/* A 64-bit FNV-1a hash of the graph's content: its cost kind, op and edge counts, every op's work
 * and output size (0 for a sink: its output goes nowhere) and every edge's source, destination
 * and size (the doubles' bits, -0 as 0), in id order. Names, kinds, shapes, the source path, the file format and the time unit do not
 * enter, so a graph renamed, copied or converted to another format (graph convert) keeps its
 * hash; reordering its ops changes it. The test-graph guard of `doppler train` compares it. */
uint64_t dp_graph_content_hash(const dp_graph *g);

/* ---- readers and writers ---- */

/* DOPPLER's compute_graph/ *.txt format (Yao et al. 2026, utils.py::_read_compute_graph):
 * line 1: N, total node count including inputs; line 2: input ids (only counted: n = N - count);
 * lines 3 and 4: edge sources and destinations (op ids 0..n-1); then n lines comp,comm[,type].
 * Every run of digits on a line is one number, as the reference reads it. Costs are kept as
 * given (DP_GRAPH_COST_TIME, time_scale 1e10); edge size = comm of the source op.
 * Errors (DP_EINVAL/DP_EIO) name the file and line. */
dp_graph *dp_graph_read_doppler(const char *path, dp_error *err);

/* Write g in DOPPLER's format, so that their code and dp_graph_read_doppler read it: node count
 * = op count, an empty line of inputs (ops are not inputs), the edges in g's order (dp_graph_read_doppler
 * gives back the same order and dp_graph_content_hash), then per op "comp,comm[,type]" (type:
 * op_type when it is letters, digits and '_' only). Op names are not kept (DOPPLER's ops are
 * numbered). comm is the transfer time of every out-edge of the op (a sink: its out_size), so g
 * must be a time graph whose out-edges of one op carry one time. comm_ratio R > 0 (DOPPLER's
 * rule, as the machine's comm_ratio, dp_machine.h) writes comm = R x work instead, for a graph
 * whose edges carry no transfer time of their own (STG, DOT without sizes). Every time is
 * multiplied by time_scale (> 0; 1 keeps them) and must then be a whole number up to 2^53.
 * DOPPLER's times are read back with time_scale 1e10 (printed time = time / 1e10), so printed
 * makespans of a converted graph are its own / 1e10; simulated makespans are unchanged (times
 * time_scale). Errors (DP_EINVAL, nothing written) name the file and the op at fault: a graph in
 * FLOPs and bytes, differing out-edge times, a ratio for a graph with its own transfer times, a
 * time that is not a whole number. Atomic write. */
int dp_graph_write_doppler_ratio(const dp_graph *g, const char *path, double comm_ratio, double time_scale,
                                 dp_error *err);
/* dp_graph_write_doppler_ratio(g, path, 0, 1, err): the graph's own costs, unscaled. */
int dp_graph_write_doppler(const dp_graph *g, const char *path, dp_error *err);

/* The native JSON graph format (doc/graph-format.md). The file is read an op and an edge at a
 * time (dp_json.h dp_json_doc), with no tree of the whole text: memory is the text and the graph
 * (99,774 ops, 33 MB of JSON: `graph info` peaks at 94 MiB, against 272 MiB with Jansson's
 * tree). What it accepts, the graph it gives and every message are those of dp_json_to_graph on
 * dp_json_load's tree of the same file (tests/test_models.c json_doc_same_as_tree,
 * fuzz/fuzz_graph_json.c). */
dp_graph *dp_graph_read_json(const char *path, dp_error *err);
/* Written atomically an op and an edge at a time: the text of json_dumpf(dp_json_from_graph(g),
 * JSON_INDENT(1) | JSON_REAL_PRECISION(17)) and a newline, byte for byte, without that tree.
 * DP_OK, DP_EIO (write failed, nothing left behind) or DP_ENOMEM. */
int dp_graph_write_json(const dp_graph *g, const char *path, dp_error *err);

/* Read any supported format, chosen by `format` ("doppler", "json", "native", "wfcommons",
 * "msr", "stg", "dot") or, when format is NULL, by the file's extension (.txt -> doppler,
 * .json -> json, .stg -> stg, .dot/.gv -> dot). "json" tells native, WfCommons and MSR files
 * apart by content (dp_graph_formats.h, which also has the other readers and the writers). */
dp_graph *dp_graph_read(const char *path, const char *format, dp_error *err);
/* The heterogeneous scheduling example (machine/dp_hetero.h) a graph file is, as every command
 * tells it: "heft-in" or "heft-csv" when format is one of them, else, format NULL, when path's
 * name is one (FILE.in: heft-in; PREFIX_task_exe_time.csv: heft-csv); NULL when it is not one.
 * Such a file carries its own processors and op times: dp_graph_read refuses it naming the
 * format, place, graph info and sweeps read it with dp_hetero_read_format. The one test of the
 * names (train said "cannot tell the graph format" of a CSV triple place read: a review). */
const char *dp_graph_hetero_format(const char *path, const char *format);
/* DP_OK when format names a format some reader reads (those above, or the heterogeneous
 * examples' heft-in and heft-csv, machine/dp_hetero.h; NULL: by extension), else DP_EINVAL
 * listing them: for a command to refuse a misspelt --format as a usage error before any work. */
int dp_graph_format_check(const char *format, dp_error *err);
/* The same for an output format (dp_graph_write's: json, dot, doppler). */
int dp_graph_write_format_check(const char *format, dp_error *err);
/* The output format dp_graph_write writes path in (its format's name): format when given, else
 * by path's ending (.json, .dot or .gv, .txt; path NULL or "-": json). NULL when there is none,
 * with DP_EINVAL naming format (a format without a writer) or path ("cannot tell the output
 * format from the file name"), or DP_EIO when path is a directory: for a command to refuse an
 * output name before any work, in its own words (graph gen named graph convert's --to: a
 * review). */
const char *dp_graph_write_format(const char *path, const char *format, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
