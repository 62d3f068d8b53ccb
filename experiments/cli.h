/* cli.h: what the doppler subcommands share: error reporting, loading graphs, cost models and
 * assignments, printing numbers. Only experiments/ prints or exits. */
#ifndef DP_CLI_H
#define DP_CLI_H

#include <stdio.h>

#include "dp_cost.h"
#include "dp_error.h"
#include "dp_graph.h"

/* Exit statuses: 0 success, 1 runtime error (bad input file, ...), 2 bad usage. */
#define DP_EXIT_ERROR 1
#define DP_EXIT_USAGE 2

/* Print "doppler: MESSAGE" to stderr and return DP_EXIT_ERROR. */
int dp_cli_fail(const dp_error *err);
/* Print "doppler CMD: MESSAGE\nTry 'doppler CMD --help'." and return DP_EXIT_USAGE. */
int dp_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The usage error for getopt_long's '?' (opterr 0): "option '--x' needs a value" when the option
 * exists and its value is missing (optopt set: a long option, or a short one that optstring gives
 * an argument), else "unknown option '--x'". Returns DP_EXIT_USAGE. */
int dp_cli_option_error(const char *cmd, const char *optstring, char *const *argv);

/* Parse a whole string as an int / double / uint64 within [lo, hi]; 0 on success, -1 if not. */
int dp_cli_parse_int(const char *s, long lo, long hi, int *out);
int dp_cli_parse_double(const char *s, double *out);
int dp_cli_parse_u64(const char *s, unsigned long long *out);

/* Format a double for people: the fewest digits (6 to 10 significant) that read back exactly, else
 * 10 significant digits (DOPPLER-unit makespans such as 2200.14 print exactly). buf >= 32.
 * JSON output keeps full precision instead. */
const char *dp_cli_fmt(double x, char *buf, size_t cap);

/* Read an assignment for n ops on n_devices devices: JSON {"devices": [d0, ...]} or one line of
 * comma-separated device ids (DOPPLER's real-system loop format). Errors name the file and the
 * position. */
int dp_cli_read_assignment(const char *path, int n_ops, int n_devices, int *out, dp_error *err);

/* Write {"graph", "method", "n_devices", "devices": [...], "makespan", "units"} atomically. */
int dp_cli_write_assignment(const char *path, const dp_graph *g, const char *method, int n_devices,
                            const int *assignment, double makespan_printed, dp_error *err);

/* The bundled data directory (DP_DATADIR at install, or $DOPPLER_DATA, or ./data when run from
 * the source tree); resolves "data/graphs/x.json" style names. Returns path or a static buffer. */
const char *dp_cli_data_path(const char *rel);


/* ---- the machine a command simulates ---- */

#include "dp_costmodel.h"
#include "dp_hisim.h"
#include "dp_topology.h"

typedef struct dp_cli_machine {
    int n_devices;         /* --devices N (default 4); with a topology: its device count */
    int devices_given;     /* 1 when --devices was on the command line */
    double peak_flops;     /* --peak-flops: uniform machine, FLOP/s per device (physical graphs) */
    double bandwidth_Bps;  /* --bandwidth: uniform machine, bytes/s per link */
    double latency_s;      /* --latency: uniform machine, seconds per transfer */
    const char *topology;  /* --topology FILE|NAME (NULL: the DOPPLER-compatible / uniform model) */
    const char *calibration; /* --calibration FILE */
    dp_hisim_options sim;  /* --transfer-model, --chunks, --mode, --streams, --queue, --memory-limit,
                              --memory-policy, --memory-penalty, --copy-engines */
    dp_topology *topo;     /* loaded by dp_cli_machine_costs; freed by dp_cli_machine_free */
    dp_calib *calib;
} dp_cli_machine;

/* Defaults: 4 devices; uniform machine 1e13 FLOP/s, 1.2e10 B/s, 1e-5 s (a PCIe Gen3 x16 class
 * GPU box); no topology; the simulator options of dp_hisim_options_init. */
void dp_cli_machine_init(dp_cli_machine *m);
void dp_cli_machine_free(dp_cli_machine *m);

/* Option ids for getopt_long shared by place/simulate/... (values above 1000). */
enum { DP_OPT_DEVICES = 1001, DP_OPT_PEAK_FLOPS, DP_OPT_BANDWIDTH, DP_OPT_LATENCY, DP_OPT_TOPOLOGY,
       DP_OPT_CALIBRATION, DP_OPT_TRANSFER_MODEL, DP_OPT_CHUNKS, DP_OPT_MODE, DP_OPT_STREAMS, DP_OPT_QUEUE,
       DP_OPT_MEMORY_LIMIT, DP_OPT_MEMORY_POLICY, DP_OPT_MEMORY_PENALTY, DP_OPT_COPY_ENGINES };
#define DP_CLI_MACHINE_OPTIONS \
    {"devices", required_argument, NULL, DP_OPT_DEVICES}, \
    {"peak-flops", required_argument, NULL, DP_OPT_PEAK_FLOPS}, \
    {"bandwidth", required_argument, NULL, DP_OPT_BANDWIDTH}, \
    {"latency", required_argument, NULL, DP_OPT_LATENCY}, \
    {"topology", required_argument, NULL, DP_OPT_TOPOLOGY}, \
    {"calibration", required_argument, NULL, DP_OPT_CALIBRATION}, \
    {"transfer-model", required_argument, NULL, DP_OPT_TRANSFER_MODEL}, \
    {"chunks", required_argument, NULL, DP_OPT_CHUNKS}, \
    {"mode", required_argument, NULL, DP_OPT_MODE}, \
    {"streams", required_argument, NULL, DP_OPT_STREAMS}, \
    {"queue", required_argument, NULL, DP_OPT_QUEUE}, \
    {"memory-limit", required_argument, NULL, DP_OPT_MEMORY_LIMIT}, \
    {"memory-policy", required_argument, NULL, DP_OPT_MEMORY_POLICY}, \
    {"memory-penalty", required_argument, NULL, DP_OPT_MEMORY_PENALTY}, \
    {"copy-engines", required_argument, NULL, DP_OPT_COPY_ENGINES}
#define DP_CLI_MACHINE_HELP \
    "Machine:\n" \
    "  --devices N          number of identical devices (default 4): the DOPPLER-compatible model\n" \
    "  --peak-flops F       FLOP/s per device, for graphs in FLOPs and bytes (default 1e13)\n" \
    "  --bandwidth B        bytes per second per link, for such graphs (default 1.2e10)\n" \
    "  --latency S          seconds per transfer, for such graphs (default 1e-5)\n" \
    "  --topology T         a topology JSON file or a bundled name (doppler topology list)\n" \
    "  --calibration FILE   measured op and route costs (doppler-calibration JSON) for the topology\n" \
    "Simulator:\n" \
    "  --transfer-model M   fixed (default: latency + bytes/bandwidth, no contention), fifo (per-link\n" \
    "                       FIFO, store and forward), maxmin (max-min fair sharing); fifo and maxmin\n" \
    "                       need --topology\n" \
    "  --chunks K           fifo: cut each transfer into K chunks (default 1)\n" \
    "  --mode M             async (default, work-conserving) or bsp (bulk-synchronous, level by level)\n" \
    "  --streams K          compute streams per device (default: the topology's, else 1)\n" \
    "  --queue Q            fifo (default) or priority (the method's priority, else the b-level)\n" \
    "  --memory-limit B     bytes per device, or 'topology' for each device's memory_bytes (default none)\n" \
    "  --memory-policy P    error (default: an over-capacity run fails) or penalty\n" \
    "  --memory-penalty W   penalty policy: penalised makespan = makespan x (1 + W x excess) (default 1)\n" \
    "  --copy-engines on|off  limit concurrent transfers by the topology's copy engines (default on)\n"

/* Handle a machine option; returns 1 if it was one (0 otherwise, -1 with a usage message
 * printed for a bad value: the caller returns DP_EXIT_USAGE). */
int dp_cli_machine_option(dp_cli_machine *m, int opt, const char *arg, const char *cmd);

/* The path of a topology given as a FILE or a bundled NAME (data/topologies/NAME.json);
 * NULL when neither exists. Returns path or a static buffer. */
const char *dp_cli_topology_path(const char *name_or_file);

/* Load the topology and calibration named by m (if any) into m->topo, m->calib. */
int dp_cli_machine_load(dp_cli_machine *m, dp_error *err);

/* The cost tables of g on the machine: with a topology, its cost model (roofline or
 * calibration; m->n_devices becomes the topology's device count); else DOPPLER-compatible /
 * classic costs for time graphs and the uniform machine for physical graphs. */
dp_costs *dp_cli_machine_costs(dp_cli_machine *m, const dp_graph *g, dp_error *err);

/* 1 when the general engine (dp_hisim) is needed: a topology or non-default simulator options. */
int dp_cli_machine_needs_hisim(const dp_cli_machine *m);

#endif
