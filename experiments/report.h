/* report.h: tables and plots from sweep results (results.h).
 *
 * A table groups the successful runs by the values of its row parameters (e.g. graph) and its
 * column parameter (e.g. method), and shows in each cell the mean and the sample standard
 * deviation of a metric over the runs that fall in it (the seeds and repetitions). With
 * baselines named (values of the column parameter), each row also gets the best baseline (the
 * smallest mean among them: makespans and seconds are better low) and, for every other column,
 * the ratio of its mean to that best baseline ("-", empty in CSV, where a mean is missing or the
 * best baseline's is 0).
 *
 * Table layouts come from the sweep config's "tables" object (stored in the results file), by
 * name, or from options:
 *
 *   "tables": { "NAME": { "rows": "graph" or ["graph", "topology"], "cols": "method",
 *                         "metric": "makespan", "baselines": ["cp", "heft"],
 *                         "filter": {"transfer": "fixed", "method": ["cp", "doppler"]},
 *                         "labels": {"chain_mm_112nodes": "ChainMM"}, "title": "...",
 *                         "digits": 4 } }
 *
 * A baseline may be a number (of "cols": "devices", "baselines": [2]), read as its label ("2").
 *
 * Explicit columns replace "cols" when a column is not one value of one parameter: a run may
 * fall in several (one DOPPLER run gives the makespans after Stage I and after Stage II), and
 * published figures can stand beside measured ones:
 *
 *   "columns": [ {"label": "critical path", "where": {"method": "cp"}, "baseline": true},
 *                {"label": "DOPPLER (I)", "where": {"method": "doppler"},
 *                 "metric": "metrics.makespan_stage1"},
 *                {"label": "paper", "values": {"ChainMM": 139}},      (keyed by row label)
 *                {"label": "A / B", "ratio": ["DOPPLER (I)", "critical path"]} ]
 *
 * A "ratio" column is the quotient of the means of two other columns (by label), e.g. to set a
 * measured ratio beside a published one when the published figures are in other units.
 *
 * Metrics: makespan, seconds, episodes, seconds_per_episode (seconds / episodes), or
 * metrics.NAME (a number in the run's metrics object). Grouping keys are parameter names (any
 * key of the run's params); graph and topology values print as their file stem.
 *
 * Reference columns. Every makespan table (metric makespan, metrics.makespan* or
 * metrics.penalised_makespan*) ends, by default, with the figures any result should be read
 * against, each where the results have it: round-robin, random (the mean over its seeds),
 * single device (runs of those methods in the row: the table's filter without its "method",
 * plus the references' own "where"), in the table's metric (a run without it left out), the
 * lower bound (metrics.lower_bound of the row's runs: it bounds a penalised makespan too) and
 * the best known makespan (data/best-known.json, for DOPPLER's graphs on the DOPPLER-compatible
 * machine they were made for, which has no memory penalty). Round-robin, random and single count
 * as baselines when the table has baselines; the lower bound and the best known are shown, never
 * compared. A table of another metric (seconds, episodes, metrics.memory_excess, ...) has none,
 * and columns of those methods are plain columns in it (a baseline only when named). "references": false turns them off; {"where": {"mode": "async"}} restricts the
 * runs they come from. A table whose rows have different units gets a units column.
 */
#ifndef DP_REPORT_H
#define DP_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "dp_error.h"
#include "results.h"

typedef struct dp_report_spec {
    char **rows;        /* grouping parameters of the table's rows */
    int n_rows;
    char *cols;         /* grouping parameter of the columns */
    char *metric;
    char **baselines;   /* column values that are baselines */
    int n_baselines;
    json_t *filter;     /* object: param -> value or array of values (NULL: all rows) */
    json_t *labels;     /* object: value text -> label (NULL: none) */
    json_t *columns;    /* array of explicit columns (NULL: one per value of cols), see above */
    char *title;
    int digits;         /* significant digits of means (default 4) */
    int references;     /* 1 (default): append the reference columns (above) */
    json_t *ref_where;  /* extra conditions on the runs of the reference columns (NULL: none) */
} dp_report_spec;

/* Defaults: rows graph, cols method, metric makespan, no baselines, 4 digits. */
int dp_report_spec_init(dp_report_spec *s);
void dp_report_spec_free(dp_report_spec *s);
/* Fill a spec from a table object of the config (fields above; its scalar keys through the
 * table dp_sweep_table_keys, sweep.h); errors name the field
 * ("tables.T.digits" = 0 out of range [1, 17]; unknown key "tables.T.x" (known: ...)). */
int dp_report_spec_from_json(dp_report_spec *s, const json_t *o, const char *name, dp_error *err);
/* The checks of a spec that need no run (dp_report_build makes them first; doppler sweep makes
 * them at config load, after dp_report_spec_from_json): a metric dp_report_metric knows, the
 * table's and each explicit column's; a row parameter; a "ratio" column's labels those of other
 * columns. Errors (DP_EINVAL) begin with where and the field ("tables.T.metric: unknown metric
 * ..."); where NULL: no field ("unknown metric ..."). */
int dp_report_spec_check(const dp_report_spec *s, const char *where, dp_error *err);
/* Find table NAME in a config text; DP_OK and *found = 1 when it is there. */
int dp_report_spec_from_config(dp_report_spec *s, const char *config_text, const char *name, int *found,
                               dp_error *err);
/* Split "a,b,c" into the array (replacing it). */
int dp_report_spec_set_list(char ***list, int *n, const char *csv);

typedef struct dp_report_table {
    char *title, *metric, *units;  /* units: the distinct units of the rows used, "; "-joined */
    int n_keys;                    /* row grouping parameters */
    char **key_names;              /* (n_keys) */
    int n_rows, n_cols;
    char **row_keys;               /* (n_rows, n_keys) label of each row's value of each key */
    char **col_labels;             /* (n_cols) */
    char *col_name;                /* the column parameter (method, devices, ...); "column" for a
                                      table of explicit columns */
    double *mean, *sd;             /* (n_rows, n_cols); NaN when no run / fewer than 2 runs */
    long *n, *n_failed;            /* (n_rows, n_cols) runs that succeeded / failed in the cell */
    int *is_baseline;              /* (n_cols) */
    int *is_reference;             /* (n_cols) 1: published figures ("values"), not runs */
    int per_column_metric;         /* 1: explicit columns that name their own metric */
    int *best;                     /* (n_rows) column of the best baseline, -1 when none */
    char **row_units;              /* (n_rows) units of each row's runs ("" when none) */
    int mixed_units;               /* 1 when rows have different units: a units column */
    int pooled_machines;           /* 1 when a cell's runs differ in a machine key (comm_ratio,
                                      bandwidth, streams, ...) that is neither a row nor a column:
                                      its mean pools machines, not only seeds */
    char *pooled_params;           /* NULL, or the names (", "-joined) of the parameters other than
                                      seed, rep, the machine's keys, the rows' and the columns' in
                                      which some cell's runs differ (anneal's budget 10 and 300 in
                                      one cell): its mean pools them too */
    char **row_machines;           /* (n_rows) the machines of each row's successful runs (device
                                      count and machine keys, one a line), NULL for a row whose
                                      columns are different machines (no two share one: --cols
                                      devices), which gets no reference column's value */
    int refs_left_out;             /* 1 when some row has row_machines NULL and references on */
    int digits;
    json_t *path_labels;           /* graph and topology values whose file names coincide (two
                                      rand0000.stg of different folders): value -> the label that
                                      tells them apart (their folders; NULL when none) */
} dp_report_table;

/* Build a table from rows (as dp_results_read_h5 gives them). Errors: an unknown metric or a
 * metric missing from a run (DP_EINVAL). A table with no matching run is not an error. */
int dp_report_build(const dp_result *rows, long n, const dp_report_spec *spec, dp_report_table *t,
                    dp_error *err);
void dp_report_table_free(dp_report_table *t);

/* The metric value of a run (NaN when the run has no such metric); *known = 0 for an unknown
 * metric name. */
double dp_report_metric(const dp_result *r, const char *metric, int *known);
/* The graph and topology values among rows' parameters whose labels (dp_report_value_label)
 * coincide, each with a label that tells it apart: the path after a "shared:" or "data:" prefix
 * less the extension ("stg/50/rand0000"), or the whole value when that coincides too; NULL when
 * none do (the usual case) or out of memory. Owned by the caller (json_decref). */
json_t *dp_report_path_labels(const dp_result *rows, long n);
/* dp_report_value_label, with path_labels (dp_report_path_labels; may be NULL) first */
void dp_report_value_label_in(const char *param, const json_t *value, const json_t *labels, const json_t *path_labels,
                              char *buf, size_t cap);

/* The label of a parameter value: graph and topology values as their file stem without the
 * extension, strings as they are, numbers as JSON writes them; then mapped through labels. */
void dp_report_value_label(const char *param, const json_t *value, const json_t *labels, char *buf, size_t cap);

/* Write a table as "md" (GitHub markdown: mean ± sd cells, then best baseline and ratios),
 * "csv" (one column per mean, sd and n) or "tex" (a booktabs tabular). */
int dp_report_write(FILE *f, const dp_report_table *t, const char *format, dp_error *err);

/* The raw rows as CSV (every column), for scripts and tests. */
int dp_report_write_runs(FILE *f, const dp_result *rows, long n, dp_error *err);

/* Compare the runs of a results file with a reference (e.g. the committed results of a table),
 * run by run (matched by key): a run only on one side, a status that differs, a makespan or a
 * numeric metric whose relative difference |a - b| / max(|a|, |b|) exceeds rel_tol (both NaN
 * or both absent are equal, as is one value on both sides; an infinite or missing value against
 * another differs, printed "inf" or "(none)", without a percentage; a metric the reference does not record is new in this version and
 * not compared, one it records but the new run lacks is a difference). Wall-clock figures (the seconds column, metrics whose name
 * contains "seconds" or ends in "_s") are not compared: they measure the machine. One line per
 * difference goes to f ("KEY graph method seed S: what: new X, reference Y"), then a summary
 * line. *n_diff (may be NULL) is the number of runs that differ. Returns DP_OK. */
int dp_report_compare(FILE *f, const dp_result *rows, long n, const dp_result *ref, long n_ref, double rel_tol,
                      long *n_diff, dp_error *err);

/* ---- plots (gnuplot) ---- */

/* The gnuplot terminal for an output path: "svg" for .svg; "pngcairo" for .png when the installed
 * gnuplot has it, else "png". NULL for other extensions. */
const char *dp_report_terminal(const char *out);

/* Put a plot gnuplot wrote to tmp in place at target (the file dp_file_output_target gave for
 * the user's path): first checks that tmp is complete, a PNG ending in its IEND chunk or an SVG
 * ending in "</svg>" (gnuplot's cairo terminals exit 0 after a failed write, so a full disk left
 * a cut-off PNG in place: a review of the eighteenth session), then renames it over target.
 * tmp is removed on any failure; target is then unchanged. Errors (DP_EIO) name path. */
int dp_report_plot_commit(const char *tmp, const char *target, const char *path, dp_error *err);

/* Bars per column value (method) per row (graph) of a table; with baselines the bars are the
 * ratio to the best baseline of the row, with standard deviations as error bars. Without
 * baselines, when the rows are in different units or the drawn means span more than
 * DP_REPORT_BARS_SPAN (largest / smallest), each row is divided by its own mean of the first
 * drawn column that has a positive mean in every row (a dashed line at 1): one linear axis
 * over makespans of 84 and 4800 left the small graphs' bars about 1% of the height (issue 32).
 * Otherwise the bars are in the metric's units. */
#define DP_REPORT_BARS_SPAN 10.0
int dp_report_plot_bars(const dp_report_table *t, const char *out, dp_error *err);

/* Gantt chart of one run's schedule: devices as rows, ops as boxes (start to end), cross-device
 * transfers as arrows from the producer's end to the arrival on the consumer's device.
 * results_dir resolves the run's assignment path. */
int dp_report_plot_gantt(const dp_result *run, const char *results_dir, const char *out, dp_error *err);

/* Options of the plots. */
typedef struct dp_report_ref_line {
    const char *label;       /* e.g. "cp", "best known" */
    double value;            /* in the plot's unit (NaN: not drawn) */
} dp_report_ref_line;
typedef struct dp_report_plot_opts {
    const char *title;       /* NULL or "": a default title saying what is drawn */
    int log_x, log_y;        /* scatter: logarithmic axes (points <= 0 on them are left out) */
    int window;              /* learning: episodes in the moving mean (< 1: episodes / 50) */
    const dp_report_ref_line *refs; /* learning: horizontal reference lines */
    int n_refs;
} dp_report_plot_opts;

/* Scatter of any two metrics (dp_report_metric names) over the successful runs: one colour per
 * graph, one symbol per method, axis labels with the metrics' units (dp_report_metric_unit; the
 * distinct units of the points joined when graphs differ). When both axes are in one and the same
 * unit (simulated against measured makespan, makespan against lower bound) the axes share a range
 * and the line y = x is drawn; otherwise each axis has its own range. o may be NULL. */
int dp_report_plot_scatter(const dp_result *rows, long n, const char *xmetric, const char *ymetric,
                           const json_t *filter, const dp_report_plot_opts *o, const char *out, dp_error *err);
/* The unit of a metric of run r into buf (cap bytes): the run's time unit for makespans, lower
 * bounds and best known values, "s, wall clock" for seconds, "count", "fraction", "bytes"; "" when
 * unknown. */
void dp_report_metric_unit(const dp_result *r, const char *metric, char *buf, size_t cap);

/* Learning curve of a training run from its trajectory file (policy/dp_h5io.h layout): each
 * episode's makespan as a dot and a trailing mean over o->window episodes as a line, one colour per
 * stage (a window of 1: the episodes joined, labelled as episodes, not as a "mean of 1"); the
 * greedy placement of every model-selection evaluation (/evaluations, when the file has it) as
 * black circles, joined by a line only when there are DP_REPORT_LEARNING_JOIN or more (three
 * evaluations 100 episodes apart joined drew a trend that was not measured); o->refs as
 * horizontal lines, each its own dash and colour, references whose values print the same to 4
 * digits drawn once under one label naming them all ("cp and round-robin (84.18)"); the y axis in
 * the file's time_unit. o may be NULL. */
#define DP_REPORT_LEARNING_JOIN 6
int dp_report_plot_learning(const char *trajectory, const dp_report_plot_opts *o, const char *out, dp_error *err);

/* Reference lines for the learning curve of training run `run` of rows: the mean makespan of the
 * rows' cp and round-robin runs on the same graph and machine (devices, topology, transfer, mode,
 * units, and every other machine key: bandwidth, comm_ratio, streams, ..., a default value given
 * or not alike), and the best known makespan (data/best-known.json) where known. Fills refs (cap
 * entries) and returns how many. */
int dp_report_run_references(const dp_result *rows, long n, const dp_result *run, dp_report_ref_line *refs, int cap);

/* 1 when run r passes filter (every filtered parameter equal to the value or one of the list). */
int dp_report_filter_match(const dp_result *r, const json_t *filter);

#endif
