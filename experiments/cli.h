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

#endif

/* ---- the machine a command simulates ---- */

typedef struct dp_cli_machine {
    int n_devices;         /* --devices N (default 4) */
    double peak_flops;     /* --peak-flops: uniform machine, FLOP/s per device (physical graphs) */
    double bandwidth_Bps;  /* --bandwidth: uniform machine, bytes/s per link */
    double latency_s;      /* --latency: uniform machine, seconds per transfer */
} dp_cli_machine;

/* Defaults: 4 devices; uniform machine 1e13 FLOP/s, 1.2e10 B/s, 1e-5 s (a PCIe Gen3 x16 class
 * GPU box). */
void dp_cli_machine_init(dp_cli_machine *m);

/* Option ids for getopt_long shared by place/simulate/... (values above 1000). */
enum { DP_OPT_DEVICES = 1001, DP_OPT_PEAK_FLOPS, DP_OPT_BANDWIDTH, DP_OPT_LATENCY };
#define DP_CLI_MACHINE_OPTIONS \
    {"devices", required_argument, NULL, DP_OPT_DEVICES}, \
    {"peak-flops", required_argument, NULL, DP_OPT_PEAK_FLOPS}, \
    {"bandwidth", required_argument, NULL, DP_OPT_BANDWIDTH}, \
    {"latency", required_argument, NULL, DP_OPT_LATENCY}
#define DP_CLI_MACHINE_HELP \
    "  --devices N          number of identical devices (default 4)\n" \
    "  --peak-flops F       FLOP/s per device, for graphs in FLOPs and bytes (default 1e13)\n" \
    "  --bandwidth B        bytes per second per link, for such graphs (default 1.2e10)\n" \
    "  --latency S          seconds per transfer, for such graphs (default 1e-5)\n"

/* Handle a machine option; returns 1 if it was one (0 otherwise, -1 with a usage message
 * printed for a bad value: the caller returns DP_EXIT_USAGE). */
int dp_cli_machine_option(dp_cli_machine *m, int opt, const char *arg, const char *cmd);

/* The cost tables of g on the machine: DOPPLER-compatible/classic costs for time graphs,
 * the uniform machine for physical graphs. */
dp_costs *dp_cli_machine_costs(const dp_cli_machine *m, const dp_graph *g, dp_error *err);
