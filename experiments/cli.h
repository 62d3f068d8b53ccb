/* cli.h: what the doppler subcommands share: error reporting, loading graphs, cost models and
 * assignments, printing numbers. Only experiments/ prints or exits. */
#ifndef DP_CLI_H
#define DP_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "dp_cost.h"
#include "dp_error.h"
#include "dp_graph.h"
#include "dp_schema.h"
#include "dp_coarse.h"

/* Exit statuses: 0 success, 1 runtime error (bad input file, ...), 2 bad usage. */
#define DP_EXIT_ERROR 1
#define DP_EXIT_USAGE 2

/* Print "doppler: MESSAGE" to stderr and return DP_EXIT_ERROR. */
int dp_cli_fail(const dp_error *err);
/* Help lines are at most this many columns wide. */
#define DP_CLI_HELP_WIDTH 100
/* Print one option of a help text: lead (the option, padded to its description's column), then
 * text wrapped at spaces to DP_CLI_HELP_WIDTH columns, continuation lines under its first word. */
void dp_cli_help_option(FILE *f, const char *lead, const char *text);
/* A config's keys on one wrapped line after lead, from its tables (dp_schema.h): a top level's
 * keys, then each object's as "adam.{beta1, beta2, ...}". */
void dp_cli_help_config_keys(FILE *f, const char *lead, const dp_schema_section *sections);
/* Every key of a config's tables, one entry each: its name (with its object's), kind, default and
 * help; man != 0: as troff (.TP entries) for the man page, else as help text. */
void dp_cli_print_config(FILE *f, const dp_schema_section *sections, int man);
/* 0 when the machine's keys go together (dp_machine_check_keys: a key where it cannot apply), else
 * the usage error naming the key (DP_EXIT_USAGE; found when the engine was made, exit 1: a review). */
int dp_cli_check_machine(const char *cmd, const dp_machine *m);
/* 0 when format (a --format value; NULL: not given) names a format the readers read, else the
 * usage error naming them (DP_EXIT_USAGE; a misspelt --format exited 1 after reading started:
 * a review). */
int dp_cli_check_format(const char *cmd, const char *format);
/* The same for an output format: to (a --to value: dp_graph_write_format_check), or when to is
 * NULL the ending of out (the output file; NULL: not given), the usage error then naming cmd's
 * --to (dp_graph_write_format; graph gen named graph convert --to: a review). */
int dp_cli_check_write_format(const char *cmd, const char *to, const char *out);
/* Print "doppler CMD: MESSAGE\nTry 'doppler CMD --help'." and return DP_EXIT_USAGE. */
int dp_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A command's files, each an option name and its path (NULL or "-": not given; "-" is stdout):
 * DP_EXIT_USAGE with an error naming both options when an output would replace an input or
 * another output (dp_file_same_output: the same file after links); then 1 (dp_cli_fail's status,
 * the message printed) when an output cannot be made (dp_file_output_target: its folder missing,
 * not writable or taking no file, a directory in its place; a character device or FIFO, written
 * in place, is not tried), so that a command says so before its work; else 0. place --out on its
 * --graph, validate --out and --plot on one file, calibrate fit --out on its profile replaced
 * the other file without a word (reviews of the twentieth session). */
typedef struct dp_cli_file { const char *option, *path; } dp_cli_file;
int dp_cli_files_distinct(const char *cmd, const dp_cli_file *outs, int n_outs, const dp_cli_file *ins, int n_ins);

/* A note on stderr (doppler CMD: note: ...) when the learned method's checkpoint ckpt was trained
 * with another grouping than what uses it ("this placement", "this training": coarsen, rule;
 * train --coarsen N records its grouping in the config): the model places any graph, but it
 * learned the graphs --coarsen showed it. Nothing when the checkpoint cannot be read here (the
 * command reports that). place --checkpoint and train --init (which said nothing: a review). */
void dp_cli_note_checkpoint_coarsen(const char *cmd, const char *what, const char *ckpt, int coarsen, dp_coarse_rule rule);
/* place's and simulate's notes on their checkpoint, its info read once: the grouping note above
 * ("this placement"), and, without coarsening, a note when ckpt trained on graph g (its name and
 * op count, among its training or validation graphs: the record dp_runtime_trained_on writes)
 * but never on this machine: none of those entries has this device count, cost fingerprint
 * (dp_cost_fingerprint of c) and simulator fingerprint (dp_engine_fingerprint of e, where
 * recorded). A placement from a checkpoint runs on the machine the options give, whatever the
 * training's (transfer to another machine is a use, doc/transfer.md); a place that left out
 * train's --comm-ratio or --devices placed on another machine without a word (a review). Nothing
 * when the file or its record cannot be read. */
void dp_cli_note_checkpoint_place(const char *cmd, const char *ckpt, int coarsen, dp_coarse_rule rule, const dp_graph *g,
                                  const dp_cost *c, const dp_engine *e);


/* The usage error for getopt_long's '?' (opterr 0): "option '--x' needs a value" when the option
 * exists and its value is missing (optopt set: a long option, or a short one that optstring gives
 * an argument), "ambiguous option '--de' (--device, --devices)" when it is the prefix of several
 * of longopts (the command's table, ended by a NULL name: getopt_long takes a prefix that names
 * one option only), else "unknown option '--x'". Returns DP_EXIT_USAGE. */
int dp_cli_option_error(const char *cmd, const char *optstring, const struct option *longopts, char *const *argv);

/* Parse a whole string as an int / double / uint64 within [lo, hi]; 0 on success, -1 if not. */
int dp_cli_parse_int(const char *s, long lo, long hi, int *out);
int dp_cli_parse_double(const char *s, double *out);
int dp_cli_parse_u64(const char *s, unsigned long long *out);

/* Format a double for people: the fewest digits (6 to 10 significant) that read back exactly, else
 * 10 significant digits (DOPPLER-unit makespans such as 2200.14 print exactly). buf >= 32.
 * JSON output keeps full precision instead. */
const char *dp_cli_fmt(double x, char *buf, size_t cap);

/* Read an assignment for n ops on n_devices devices: JSON {"devices": [d0, ...]} (what place --out
 * writes), a JSON array [d0, ...], or device ids separated by commas or white space (DOPPLER's
 * real-system loop format: one line, comma-separated), read as text (dp_file_read_text: a UTF-8
 * byte order mark dropped, a NUL byte refused naming PATH:LINE:COL). Errors name the file and
 * the position.
 * graph_name (may be NULL): the graph it is read for; a JSON object whose "graph" names another
 * gets a warning on stderr (ops are matched by index). priority (n_ops, may be NULL): the
 * object's "priority" array when it has one (*has_priority 1; finite numbers, else an error),
 * else *has_priority 0. */
int dp_cli_read_assignment(const char *path, const char *graph_name, int n_ops, int n_devices, int *out,
                           double *priority, int *has_priority, dp_error *err);

/* Write {"graph", "method", "n_devices", "devices": [...], "makespan", "units"} atomically, and
 * "priority": [...] when priority is not NULL (n_ops: the queue priorities the makespan was
 * simulated with, on a priority queue; the cost model's internal unit, higher first). */
int dp_cli_write_assignment(const char *path, const dp_graph *g, const char *method, int n_devices,
                            const int *assignment, const double *priority, double makespan_printed, dp_error *err);

/* The bundled data directory (DP_DATADIR at install, or $DOPPLER_DATA, or ./data when run from
 * the source tree); resolves "data/graphs/x.json" style names. Returns path or a static buffer. */
const char *dp_cli_data_path(const char *rel);


/* ---- the machine a command simulates (sim/dp_machine.h) ---- */

#include "dp_machine.h"
/* m's options as a command line would give them (" --topology T --transfer-model maxmin ..."):
 * every key of m that differs from its default (dp_machine_to_json's), --devices only when given,
 * numbers to 17 digits, in buf (cap bytes; cut short with "..." when longer). For the commands
 * that print the command to use a result with (train's "place with"). Returns buf. */
const char *dp_cli_machine_args(const dp_machine *m, char *buf, size_t cap);

/* getopt_long ids of the machine keys: DP_OPT_MACHINE + the key's index in dp_machine_keys()
 * (the macro below lists them in that order: tests/test_machine_keys.c checks it against the
 * table; test_cli.sh checks every option). */
#define DP_OPT_MACHINE 1001
#define DP_CLI_MACHINE_OPTIONS \
    {"devices", required_argument, NULL, DP_OPT_MACHINE + 0}, \
    {"peak-flops", required_argument, NULL, DP_OPT_MACHINE + 1}, \
    {"bandwidth", required_argument, NULL, DP_OPT_MACHINE + 2}, \
    {"latency", required_argument, NULL, DP_OPT_MACHINE + 3}, \
    {"comm-ratio", required_argument, NULL, DP_OPT_MACHINE + 4}, \
    {"topology", required_argument, NULL, DP_OPT_MACHINE + 5}, \
    {"calibration", required_argument, NULL, DP_OPT_MACHINE + 6}, \
    {"transfer-model", required_argument, NULL, DP_OPT_MACHINE + 7}, \
    {"chunks", required_argument, NULL, DP_OPT_MACHINE + 8}, \
    {"mode", required_argument, NULL, DP_OPT_MACHINE + 9}, \
    {"streams", required_argument, NULL, DP_OPT_MACHINE + 10}, \
    {"queue", required_argument, NULL, DP_OPT_MACHINE + 11}, \
    {"memory-limit", required_argument, NULL, DP_OPT_MACHINE + 12}, \
    {"memory-policy", required_argument, NULL, DP_OPT_MACHINE + 13}, \
    {"memory-penalty", required_argument, NULL, DP_OPT_MACHINE + 14}, \
    {"copy-engines", required_argument, NULL, DP_OPT_MACHINE + 15}

/* The machine options' help lines ("Machine:" and one line per key: --OPTION VALUE, help, default),
 * from the machine's table (dp_machine_keys). */
void dp_cli_print_machine_help(FILE *f);

/* Handle a getopt id: 1 if it was a machine option (set through dp_machine_set), 0 otherwise,
 * -1 with a usage message printed for a bad value (the caller returns DP_EXIT_USAGE). */
int dp_cli_machine_option(dp_machine *m, int opt, const char *arg, const char *cmd);

/* Free the machine a command parsed and return status: for the command's early returns. */
int dp_cli_machine_done(dp_machine *m, int status);

/* The path of a topology given as a FILE or a bundled NAME (dp_machine_topology_path); NULL
 * when neither exists or name_or_file is NULL (no topology). Returns path or a static buffer. */
const char *dp_cli_topology_path(const char *name_or_file);

/* After dp_machine_costs: a warning on stderr when g was made for another device count than
 * the machine's (dp_machine_devices_differ), then one for each of dp_machine_warnings' lines (a
 * uniform machine key that changes nothing on g, a calibration lacking some devices or whose
 * measured ops include none of g's), prefixed
 * "doppler: warning: ". place, simulate, train, graph info, validate and sweep runs call it. */
void dp_cli_warn_machine(const dp_machine *m, const dp_graph *g);

/* The unit of a schedule's transfer volume (dp_engine_schedule.transfer_volume) of g on m:
 * "bytes", or "s of transfer" under comm_ratio (an edge's size is then its duration,
 * dp_cost_set_comm_ratio), or time_units (the caller's name of the file's own cost unit) for a
 * graph of times. A static string or time_units. */
const char *dp_cli_volume_unit(const dp_graph *g, const dp_machine *m, const char *time_units);

#endif
