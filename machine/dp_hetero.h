/* dp_hetero.h: readers for heterogeneous scheduling examples: a task graph together with its own
 * cost tables (op time per processor, per-link transfer rates and start-up costs).
 *
 * These are the inputs of the HEFT literature (Topcuoglu, Hariri and Wu, "Performance-effective
 * and low-complexity task scheduling for heterogeneous computing", IEEE TPDS 13(3), 2002), as
 * found in ../shared/data/heft-topcuoglu2002 (see its README, section 2). Unlike other graph files
 * they fix the machine: the number of processors and every cost come from the file, so a reader
 * returns the graph and the dp_cost together.
 *
 * Cost model produced (see machine/dp_cost.h):
 *   op_time[v][p]  = the computation cost of task v on processor p
 *   edge_data[e]   = the data volume on edge e
 *   inv_bw[a][b]   = 1 / rate(a, b)              (transfer time = data / rate)
 *   latency[a][b]  = startup[a]                  (a per-processor start-up cost added to every
 *                                                 transfer leaving a; 0 when the file has none)
 * Transfers between tasks on the same processor are free. The graph is DP_GRAPH_COST_TIME with
 * work = mean op time over processors and edge_size = data volume (the transfer time at rate 1),
 * so graph-only tools see sensible numbers; schedulers must use the dp_cost.
 * Op names are the file's task labels ("1".."V" for .in files, numbered as in the paper;
 * "T_0".. or "T0".. for the CSV files).
 */
#ifndef DP_HETERO_H
#define DP_HETERO_H

#include "dp_cost.h"
#include "dp_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plain text format of nedjulius/heft-cpop-simulator (its experiments folder, files ending in .in): a stream of numbers
 * separated by white space: V, E, P; then E triples "from to data" (tasks numbered from 1); then
 * V rows of P computation costs; then P(P-1)/2 triples "p q rate" (processors numbered from 1,
 * each unordered pair once; transfer time = data / rate, symmetric). Numbers are decimal (digits,
 * a point, an exponent; subnormal ones read as such), in the CSV files too: C's hexadecimal
 * ("0x2", "0x1p3"), "inf" and "nan" are refused.
 * On success *g and *c are set (free with dp_graph_free / dp_cost_free) and DP_OK returned.
 * Errors (DP_EIO, DP_EINVAL naming file, line and what is wrong: a missing or extra number, a
 * task or processor id out of range, a negative or non-finite cost, a rate <= 0, a pair given
 * twice or missing, a cycle; DP_ERANGE naming the file when a makespan could overflow, checked
 * as every machine's costs are (dp_cost_check: a rate of 1e-300); DP_ENOMEM) leave *g and *c
 * NULL. */
int dp_hetero_read_in(const char *path, dp_graph **g, dp_cost **c, dp_error *err);

/* The CSV files of mackncheesiest/heft (test/canonicalgraph_*.csv):
 *   exe_path:  header "TP,P_0,..,P_{P-1}", then one row per task "T_i,w_i0,..";
 *   conn_path: an n x n matrix with header row and header column; entry (i, j) > 0 is the data
 *              volume of edge i -> j (0: no edge);
 *   bw_path:   a P x P matrix of link rates with header row and column (the diagonal is unused,
 *              transfers on one processor are free), optionally followed by a row
 *              "Startup,s_0,..,s_{P-1}" of per-processor start-up costs.
 * bw_path may be NULL: then every rate is 1 and there is no start-up cost. The matrices are read
 * by position, so their row and column labels must be exe_path's task labels (conn_path) and
 * processor labels (bw_path), in its order; a label matches spelled with or without underscores
 * (the published canonicalgraph files label task 0 "T_0" in one file and "T0" in the other).
 * Errors as above (naming the file and line), plus mismatched task counts or labels between the
 * files (naming the label and the one expected) and a rate of 0 between distinct processors. */
int dp_hetero_read_csv(const char *exe_path, const char *conn_path, const char *bw_path,
                       dp_graph **g, dp_cost **c, dp_error *err);

/* Dispatch on the name: "*.in" -> dp_hetero_read_in; "PREFIX_task_exe_time.csv" ->
 * dp_hetero_read_csv with PREFIX_task_connectivity.csv and PREFIX_resource_BW.csv beside it
 * (the rate file is optional). Anything else: DP_EINVAL. */
int dp_hetero_read(const char *path, dp_graph **g, dp_cost **c, dp_error *err);

/* 1 when path names a file dp_hetero_read understands (by its name only: dp_graph_hetero_format,
 * which dp_graph_read refuses such a file by). */
int dp_hetero_is_hetero_path(const char *path);

/* The two formats by name, for --format: "heft-in" (the .in text, dp_hetero_read_in) and
 * "heft-csv" (the CSV triple, named by its PREFIX_task_exe_time.csv). dp_hetero_format is 1 when
 * format is one of them, or format is NULL and path's name is one (dp_graph_hetero_format);
 * dp_hetero_read_format then reads path as that format (heft-in whatever the file's name). */
int dp_hetero_format(const char *path, const char *format);
int dp_hetero_read_format(const char *path, const char *format, dp_graph **g, dp_cost **c, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
