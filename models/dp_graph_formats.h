/* dp_graph_formats.h: readers of the task-graph formats other communities publish, and the
 * Graphviz DOT writer. (DOPPLER text and native JSON are in dp_graph.h.)
 *
 * Every reader validates and fails with DP_EINVAL (DP_EIO when the file cannot be read) and a
 * message naming the file and the line or JSON field at fault; the graph's own checks (ids,
 * cycles, finite non-negative costs, dp_graph_builder_finish) follow. All give DP_GRAPH_COST_TIME
 * graphs: op work and edge sizes are durations in the file's unit (the classic task-graph
 * model: an edge costs its size when its ops sit on different devices).
 */
#ifndef DP_GRAPH_FORMATS_H
#define DP_GRAPH_FORMATS_H

#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kasahara Standard Task Graph Set (Tobita and Kasahara, J. Scheduling 5(5), 2002), .stg: the
 * number n of real tasks, then n + 2 records "id time n_pred pred...", read as a stream of
 * integers (long predecessor lists wrap), tasks numbered 0..n+1 in order; '#' starts a comment
 * to the end of the line. Task 0 (the dummy entry) and task n+1 (the dummy exit) must have
 * processing time 0; they are DROPPED with their edges, since the format defines them as
 * zero-cost markers: the graph has the n real tasks, named by their STG number ("1".."n"),
 * and the real edges only (rand0000 of the 50-task set: 50 ops, 96 edges). The STG model has no
 * communication: edge sizes are 0. Unit: the file's time units. */
dp_graph *dp_graph_read_stg(const char *path, dp_error *err);

/* WfCommons WfFormat JSON (Coleman et al., FGCS 128, 2022), schema 1.4 (workflow.tasks with
 * files[] {link, name, sizeInBytes}, parents/children by name or id) and 1.5 (and later 1.x:
 * workflow.specification.{tasks, files} + workflow.execution.tasks with runtimeInSeconds).
 * Op = task (named by its id, kind = its program or category), work = runtimeInSeconds.
 * Edge parent -> child (from parents and children, duplicates merged): the bytes of the files
 * the parent writes and the child reads, turned into a transfer time at bandwidth_Bps bytes per
 * second (the graph holds durations only: a time graph cannot hold bytes). An op's output size
 * is the bytes of all its output files / bandwidth_Bps. bandwidth_Bps must be positive
 * (INFINITY gives free transfers). Unit: seconds. */
#define DP_GRAPH_WFCOMMONS_BANDWIDTH_BPS 1.25e8  /* default: 1 Gbit/s Ethernet, as between cluster nodes */
dp_graph *dp_graph_read_wfcommons(const char *path, double bandwidth_Bps, dp_error *err);

/* The profiled DNN graphs of msr-fiddle/dnn-partitioning (Tarnawski et al., NeurIPS 2020):
 * {"nodes": [{id, fpgaLatency, cpuLatency, supportedOnFpga, isBackwardNode, size, name, ...}],
 *  "edges": [{sourceId, destId, cost}]}. Op work = fpgaLatency (the accelerator, here GPU,
 * profile), edge size = cost; ops named by "name" (made unique with "#id" when repeated),
 * kind "forward" or "backward", op_type "cpu-only" where supportedOnFpga is 0. cpuLatency,
 * colorClass, size and the device limits are not kept. Unit: the profile's (ms). */
dp_graph *dp_graph_read_msr(const char *path, dp_error *err);

/* Task graphs in Graphviz DOT with Weight attributes (Sinnen, "Task Scheduling for Parallel
 * Systems", 2007; the optimal-scheduling inputs in ../shared/data/sinnen-optimal-dot):
 * digraph NAME { a [Weight=5]; a -> b [Weight=15]; ... }. Node Weight = computation time, edge
 * Weight = communication time; "node [Weight=w]" / "edge [...]" set defaults; a "kind"
 * attribute sets the op kind (as the DOT writer writes it); other attributes are ignored.
 * Subgraphs are read as scopes (their nodes and edges belong to the graph). A node or edge
 * without a Weight is an error, as are undirected graphs and HTML strings. Ops are numbered in
 * order of first appearance. Hand-written tokenizer (IDs, numerals, quoted strings with
 * escapes and line continuations, comments). Unit: the file's time units. */
dp_graph *dp_graph_read_dot(const char *path, dp_error *err);

/* Write g as Graphviz DOT for viewing: one node per op (label: name, kind, work; fill colour by
 * kind; attributes Weight = work and kind), edges with Weight = size, so that
 * dp_graph_read_dot() reads a time graph back. assignment (n_ops device ids, or NULL) groups
 * the ops of each device in a cluster "device d". Atomic write. */
int dp_graph_write_dot(const dp_graph *g, const char *path, const int *assignment, int n_devices,
                       dp_error *err);

/* A .json file of any kind: native (doc/graph-format.md), WfCommons or MSR, told apart by
 * content (WfCommons: "schemaVersion" and "workflow"; MSR: "nodes" and "edges"; native: "ops"). */
dp_graph *dp_graph_read_json_any(const char *path, dp_error *err);

/* Write g in format "json" (native) or "dot", or by extension when format is NULL
 * (.json, .dot/.gv). */
int dp_graph_write(const dp_graph *g, const char *path, const char *format, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
