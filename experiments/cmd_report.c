/* doppler report: tables and plots from a sweep's results file. */
#include "cli.h"
#include "dp_alloc.h"
#include "commands.h"
#include "dp_file.h"
#include "report.h"
#include "results.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void report_usage(FILE *f)
{
    fprintf(f,
            "Usage: doppler report RESULTS.h5 --table NAME [--format md|csv|tex] [OPTIONS]\n"
            "       doppler report RESULTS.h5 --plot bars|gantt|scatter|learning --out FILE.png|svg [OPTIONS]\n\n"
            "Tables of a sweep's results: the mean and standard deviation of a metric over seeds\n"
            "and repetitions, rows by graph (or any parameters), columns by method (or any\n"
            "parameter), and with baselines the best baseline of each row and every other\n"
            "column's ratio to it. Table layouts come from the sweep config's \"tables\" (stored in\n"
            "the results file); built in: runs (every row, CSV), makespan, seconds.\n\n"
            "Options:\n"
            "  --table NAME        the table to print (--list-tables shows the config's)\n"
            "  --format F          md (default), csv or tex\n"
            "  --rows P[,P...]     row parameters (default graph)\n"
            "  --cols P            column parameter (default method)\n"
            "  --metric M          makespan, seconds, episodes, seconds_per_episode, metrics.NAME\n"
            "  --baselines A,B     column values that are baselines (adds best baseline, ratios);\n"
            "                      with any, round-robin, random and single device count as\n"
            "                      baselines too (as columns of their own or added beside)\n"
            "  --where P=V         only runs whose parameter P is V (repeatable)\n"
            "  --out FILE          write the table or plot to FILE (atomically; default stdout)\n"
            "  --plot KIND         bars: the table as bars (ratios to the best baseline when it has\n"
            "                      baselines; else, when rows' units differ or their means span\n"
            "                      over 10x, each row over its first column's mean);\n"
            "                      gantt: the schedule of one run (--run KEY|INDEX);\n"
            "                      scatter: --x METRIC against --y METRIC, one point per run\n"
            "  --run KEY|INDEX     the run a Gantt chart shows\n"
            "  --x M, --y M        the metrics of a scatter plot (any --metric name): one colour per\n"
            "                      graph, one symbol per method, units on the axes; y = x drawn when\n"
            "                      both are in one unit\n"
            "  --log x|y|xy        scatter: logarithmic axes\n"
            "  --plot learning     makespan against episode, one colour per stage, the greedy\n"
            "                      placement of every model-selection evaluation (an improvement\n"
            "                      policy's: its search score), and reference\n"
            "                      lines, of a training run (--run KEY|INDEX: cp, round-robin of the\n"
            "                      results on the same graph and machine, and the best known) or of\n"
            "                      --trajectory FILE; --window N episodes in the moving mean\n"
            "                      (default: episodes / 50 from 200 episodes on, 1 below: no mean)\n"
            "  --reference L=V     learning: a reference line labelled L at makespan V (repeatable)\n"
            "  --title T           the plot's title (default: what it shows)\n"
            "  --list-tables       the table names of the stored config\n"
            "  --compare REF       compare the runs with a reference results file (.h5 or .csv),\n"
            "                      run by run: makespans and metrics beyond --tolerance, status,\n"
            "                      runs on one side only, metrics the reference has and the runs\n"
            "                      lack (one only the runs have is new, not a difference; wall-clock\n"
            "                      seconds and resumed_in_stage are not compared); exit status 1\n"
            "                      when any differs\n"
            "  --tolerance R       relative tolerance of --compare (default 1e-6)\n"
            "  -h, --help          this help\n");
}

static int add_where(json_t *filter, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) return -1;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    const char *val = eq + 1;
    /* a number or boolean when it reads as one, else a string */
    json_error_t je;
    json_t *v = json_loads(val, JSON_DECODE_ANY, &je);
    if (!v || json_is_object(v) || json_is_array(v) || json_is_null(v)) {
        json_decref(v);
        v = json_string(val);
    }
    json_t *old = json_object_get(filter, name);
    if (old) {
        if (!json_is_array(old)) {
            json_t *a = json_array();
            json_array_append(a, old);
            json_object_set_new(filter, name, a);
            old = a;
        }
        json_array_append_new(old, v);
    } else json_object_set_new(filter, name, v);
    return 0;
}

static const dp_result *find_run(const dp_result *rows, long n, const char *id)
{
    for (long i = 0; i < n; i++)
        if (strcmp(rows[i].key, id) == 0) return &rows[i];
    char *end;
    long k = strtol(id, &end, 10);
    if (*id && !*end)
        for (long i = 0; i < n; i++)
            if (rows[i].index == k) return &rows[i];
    return NULL;
}

int cmd_report(int argc, char **argv)
{
    enum { O_TABLE = 1, O_FORMAT, O_ROWS, O_COLS, O_METRIC, O_BASE, O_WHERE, O_OUT, O_PLOT, O_RUN, O_X, O_Y, O_LIST, O_TRAJ, O_WINDOW, O_COMPARE, O_TOL, O_HELP, O_LOG, O_REF, O_TITLE };
    static const struct option opts[] = {
        {"table", required_argument, NULL, O_TABLE}, {"format", required_argument, NULL, O_FORMAT},
        {"rows", required_argument, NULL, O_ROWS}, {"cols", required_argument, NULL, O_COLS},
        {"metric", required_argument, NULL, O_METRIC}, {"baselines", required_argument, NULL, O_BASE},
        {"where", required_argument, NULL, O_WHERE}, {"out", required_argument, NULL, O_OUT},
        {"plot", required_argument, NULL, O_PLOT}, {"run", required_argument, NULL, O_RUN},
        {"x", required_argument, NULL, O_X}, {"y", required_argument, NULL, O_Y},
        {"list-tables", no_argument, NULL, O_LIST}, {"trajectory", required_argument, NULL, O_TRAJ},
        {"window", required_argument, NULL, O_WINDOW}, {"log", required_argument, NULL, O_LOG},
        {"reference", required_argument, NULL, O_REF}, {"title", required_argument, NULL, O_TITLE}, {"compare", required_argument, NULL, O_COMPARE},
        {"tolerance", required_argument, NULL, O_TOL}, {"help", no_argument, NULL, O_HELP}, {NULL, 0, NULL, 0}};
    const char *table = NULL, *format = "md", *rows_opt = NULL, *cols = NULL, *metric = NULL, *base = NULL;
    const char *out = NULL, *plotk = NULL, *run_id = NULL, *xm = "makespan", *ym = "metrics.measured_makespan";
    const char *traj = NULL, *compare = NULL;
    double tol = 1e-6;
    int list = 0, window = 0;
    enum { MAX_REFS = 16 };
    dp_report_ref_line refs[MAX_REFS + 3];
    char ref_labels[MAX_REFS][128];
    dp_report_plot_opts po;
    memset(&po, 0, sizeof po);
    json_t *where = json_object();
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_TABLE: table = optarg; break;
        case O_FORMAT: format = optarg; break;
        case O_ROWS: rows_opt = optarg; break;
        case O_COLS: cols = optarg; break;
        case O_METRIC: metric = optarg; break;
        case O_BASE: base = optarg; break;
        case O_WHERE:
            if (add_where(where, optarg) != 0) { json_decref(where); return dp_cli_usage_error("report", "--where: expected PARAM=VALUE, got '%s'", optarg); }
            break;
        case O_OUT: out = optarg; break;
        case O_PLOT: plotk = optarg; break;
        case O_RUN: run_id = optarg; break;
        case O_X: xm = optarg; break;
        case O_Y: ym = optarg; break;
        case O_LIST: list = 1; break;
        case O_TRAJ: traj = optarg; break;
        case O_TITLE: po.title = optarg; break;
        case O_LOG:
            if (strcmp(optarg, "x") != 0 && strcmp(optarg, "y") != 0 && strcmp(optarg, "xy") != 0) {
                json_decref(where);
                return dp_cli_usage_error("report", "--log: x, y or xy, got '%s'", optarg);
            }
            po.log_x = strchr(optarg, 'x') != NULL;
            po.log_y = strchr(optarg, 'y') != NULL;
            break;
        case O_REF: {
            const char *eq = strrchr(optarg, '=');
            double v;
            if (!eq || eq == optarg || dp_cli_parse_double(eq + 1, &v) != 0 || po.n_refs >= MAX_REFS) {
                json_decref(where);
                return dp_cli_usage_error("report", "--reference: expected LABEL=MAKESPAN (at most %d), got '%s'", MAX_REFS, optarg);
            }
            snprintf(ref_labels[po.n_refs], sizeof ref_labels[0], "%.*s", (int)(eq - optarg), optarg);
            refs[po.n_refs] = (dp_report_ref_line){ref_labels[po.n_refs], v};
            po.n_refs++;
            break;
        }
        case O_COMPARE: compare = optarg; break;
        case O_TOL:
            if (dp_cli_parse_double(optarg, &tol) != 0 || !(tol >= 0)) { json_decref(where); return dp_cli_usage_error("report", "--tolerance: expected a non-negative number, got '%s'", optarg); }
            break;
        case O_WINDOW:
            if (dp_cli_parse_int(optarg, 1, 1000000, &window) != 0) { json_decref(where); return dp_cli_usage_error("report", "--window: expected 1..1000000, got '%s'", optarg); }
            break;
        case 'h':
        case O_HELP: json_decref(where); report_usage(stdout); return 0;
        default: json_decref(where); return dp_cli_option_error("report", "h", opts, argv);
        }
    }
    if (optind >= argc && !traj) { json_decref(where); return dp_cli_usage_error("report", "RESULTS.h5 is required"); }
    const char *path = optind < argc ? argv[optind++] : NULL;
    if (optind < argc) { json_decref(where); return dp_cli_usage_error("report", "unexpected argument '%s'", argv[optind]); }
    if (strcmp(format, "md") != 0 && strcmp(format, "csv") != 0 && strcmp(format, "tex") != 0) {
        json_decref(where);
        return dp_cli_usage_error("report", "--format: md, csv or tex, got '%s'", format);
    }
    if (plotk && strcmp(plotk, "bars") != 0 && strcmp(plotk, "gantt") != 0 && strcmp(plotk, "scatter") != 0 &&
        strcmp(plotk, "learning") != 0) {
        json_decref(where);
        return dp_cli_usage_error("report", "--plot: bars, gantt, scatter or learning, got '%s'", plotk);
    }
    if (plotk && strcmp(plotk, "learning") == 0 && !run_id && !traj) {
        json_decref(where);
        return dp_cli_usage_error("report", "--plot learning needs --run KEY|INDEX (a training run) or --trajectory FILE");
    }
    if (plotk && !out) { json_decref(where); return dp_cli_usage_error("report", "--plot needs --out FILE.png or FILE.svg"); }
    /* the plot's file type, before any work (a usage error, exit 2; it exited 1: a review) */
    if (plotk && !dp_report_terminal(out)) {
        json_decref(where);
        return dp_cli_usage_error("report", "--out %s: plots are written as .png or .svg", out);
    }
    if (plotk && strcmp(plotk, "learning") == 0 && traj) {
        json_decref(where);
        dp_error e;
        dp_error_clear(&e);
        po.window = window;
        po.refs = refs;
        return dp_report_plot_learning(traj, &po, out, &e) == DP_OK ? 0 : dp_cli_fail(&e);
    }
    if (!plotk && traj) { json_decref(where); return dp_cli_usage_error("report", "--trajectory goes with --plot learning"); }
    if (po.n_refs && !(plotk && strcmp(plotk, "learning") == 0)) { json_decref(where); return dp_cli_usage_error("report", "--reference goes with --plot learning"); }
    if ((po.log_x || po.log_y) && !(plotk && strcmp(plotk, "scatter") == 0)) { json_decref(where); return dp_cli_usage_error("report", "--log goes with --plot scatter"); }
    if (plotk && strcmp(plotk, "gantt") == 0 && !run_id) { json_decref(where); return dp_cli_usage_error("report", "--plot gantt needs --run KEY|INDEX"); }
    if (!plotk && !table && !list && !compare) { json_decref(where); return dp_cli_usage_error("report", "give --table NAME, --plot KIND or --list-tables"); }

    dp_error err;
    dp_error_clear(&err);
    dp_result *rows = NULL;
    long n = 0;
    char *config = NULL;
    int status = 0;
    dp_report_spec spec;
    dp_report_table t;
    memset(&t, 0, sizeof t);
    if (dp_report_spec_init(&spec) != DP_OK) { json_decref(where); return dp_cli_fail(NULL); }
    if (dp_results_read_h5(path, &rows, &n, &config, &err) != DP_OK) {
        /* a damaged or missing file with its CSV beside it: the sweep's command rebuilds it from
         * that (the refusal did not mention the CSV; a missing file's, a review, neither) */
        dp_result *crows = NULL;
        const long cn = err.code != DP_ENOMEM ? dp_results_read_journal(path, &crows) : -1;
        char *csv = cn > 0 ? dp_results_csv_path(path) : NULL;
        if (csv) {
            char msg[sizeof err.msg];
            memcpy(msg, err.msg, sizeof msg);
            char q[8300];
            dp_error_set(&err, err.code, "%s; %s beside it holds %ld run%s: doppler sweep CONFIG --out %s rebuilds it from that",
                         msg, csv, cn, cn == 1 ? "" : "s", dp_file_shell_word(path, q, sizeof q));
        }
        for (long i = 0; i < cn; i++) dp_result_free(&crows[i]);
        free(crows);
        free(csv);
        status = dp_cli_fail(&err);
        goto done;
    }
    {
        /* the CSV beside it is the journal: more rows there mean a sweep running, or killed
         * before it wrote its last batch to the HDF5 file (dp_results_append) */
        dp_result *crows = NULL;
        const long cn = dp_results_read_journal(path, &crows);
        char *csv = dp_results_csv_path(path);
        if (cn > n)
            fprintf(stderr, "doppler report: warning: %s holds %ld runs and %s %ld: a sweep is running, or was killed "
                            "before it wrote them here; the tables are of the %ld (the sweep's command, run again, "
                            "completes the file)\n", path, n, csv ? csv : "its CSV", cn, n);
        for (long i = 0; i < cn; i++) dp_result_free(&crows[i]);
        free(crows);
        free(csv);
    }
    if (compare) {
        dp_result *ref = NULL;
        long n_ref = 0, nd = 0;
        size_t L = strlen(compare);
        int rc = L > 4 && strcmp(compare + L - 4, ".csv") == 0 ? dp_results_read_csv_whole(compare, &ref, &n_ref, &err)
                                                              : dp_results_read_h5(compare, &ref, &n_ref, NULL, &err);
        if (rc == DP_OK) rc = dp_report_compare(stdout, rows, n, ref, n_ref, tol, &nd, &err);
        for (long i = 0; i < n_ref; i++) dp_result_free(&ref[i]);
        free(ref);
        if (rc != DP_OK) status = dp_cli_fail(&err);
        else if (nd) status = DP_EXIT_ERROR;
        goto done;
    }
    if (list) {
        json_error_t je;
        json_t *cfg = json_loads(config, 0, &je);
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(cfg, "tables"), k, v) {
            json_t *title = json_object_get(v, "title");
            printf("%s\t%s\n", k, json_is_string(title) ? json_string_value(title) : "");
        }
        json_decref(cfg);
        printf("runs\t(built in) every row\nmakespan\t(built in) makespan by graph and method\nseconds\t(built in) seconds by graph and method\n");
        goto done;
    }
    if (table && strcmp(table, "runs") == 0 && !plotk) {
        char tmp[PATH_MAX + 64];
        FILE *f = out ? dp_file_atomic_open(out, tmp, sizeof tmp, &err) : stdout;
        if (!f) { status = dp_cli_fail(&err); goto done; }
        long m = 0;
        for (long i = 0; i < n; i++) if (dp_report_filter_match(&rows[i], where)) rows[m++] = rows[i]; else dp_result_free(&rows[i]);
        n = m;
        if (dp_report_write_runs(f, rows, n, &err) != DP_OK || (out && dp_file_atomic_commit(f, tmp, out, &err) != DP_OK)) status = dp_cli_fail(&err);
        goto done;
    }
    if (table) {
        int found = 0;
        if (dp_report_spec_from_config(&spec, config, table, &found, &err) != DP_OK) {
            dp_error_prefix(&err, "%s", path); /* the stored config's: name the file */
            status = dp_cli_fail(&err);
            goto done;
        }
        if (!found) {
            if (strcmp(table, "seconds") == 0) { free(spec.metric); spec.metric = dp_alloc_strdup("seconds"); }
            else if (strcmp(table, "makespan") != 0) {
                status = dp_cli_usage_error("report", "no table '%s' in %s (see --list-tables)", table, path);
                goto done;
            }
        }
    }
    if ((cols || base) && spec.columns && json_array_size(spec.columns) > 0) {
        /* a table of explicit columns has its own column values and baselines: the options were
         * ignored without a word */
        status = dp_cli_usage_error("report", "table '%s' names its own columns: %s does not apply to it", table,
                                    cols ? "--cols" : "--baselines");
        goto done;
    }
    if (rows_opt) dp_report_spec_set_list(&spec.rows, &spec.n_rows, rows_opt);
    if (cols) { free(spec.cols); spec.cols = dp_alloc_strdup(cols); }
    if (metric) { free(spec.metric); spec.metric = dp_alloc_strdup(metric); }
    if (base) dp_report_spec_set_list(&spec.baselines, &spec.n_baselines, base);
    if (json_object_size(where)) {
        if (!spec.filter) spec.filter = json_object();
        json_object_update(spec.filter, where);
    }
    if (plotk && (strcmp(plotk, "gantt") == 0 || strcmp(plotk, "learning") == 0)) {
        const dp_result *r = find_run(rows, n, run_id);
        if (!r) { status = dp_cli_usage_error("report", "no run '%s' in %s (give a key or an index)", run_id, path); goto done; }
        char dir[PATH_MAX];
        const char *slash = strrchr(path, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
        if (strcmp(plotk, "gantt") == 0) {
            if (dp_report_plot_gantt(r, dir, out, &err) != DP_OK) status = dp_cli_fail(&err);
        } else if (!r->trajectory[0]) {
            status = dp_cli_usage_error("report", "run %s (%s) has no trajectory file: learning curves come from training methods", r->key, r->method);
        } else {
            char tpath[2 * PATH_MAX], title[512];
            if (r->trajectory[0] == '/') snprintf(tpath, sizeof tpath, "%s", r->trajectory);
            else snprintf(tpath, sizeof tpath, "%s/%s", dir, r->trajectory);
            char g[256];
            json_error_t je;
            json_t *pj = json_loads(r->params, 0, &je);
            dp_report_value_label("graph", json_object_get(pj, "graph"), NULL, g, sizeof g);
            json_decref(pj);
            snprintf(title, sizeof title, "Learning curve: %s on %s, %ld devices, seed %ld (run %s)", r->method, g, r->devices, r->seed, r->key);
            if (!po.title) po.title = title;
            po.window = window;
            /* the results' own baselines on the same graph and machine, and the best known */
            po.n_refs += dp_report_run_references(rows, n, r, refs + po.n_refs, MAX_REFS + 3 - po.n_refs);
            po.refs = refs;
            if (dp_report_plot_learning(tpath, &po, out, &err) != DP_OK) status = dp_cli_fail(&err);
        }
        goto done;
    }
    if (plotk && strcmp(plotk, "scatter") == 0) {
        if (dp_report_plot_scatter(rows, n, xm, ym, spec.filter, &po, out, &err) != DP_OK) status = dp_cli_fail(&err);
        goto done;
    }
    if (dp_report_build(rows, n, &spec, &t, &err) != DP_OK) {
        /* name the results file and the table (a config's filter that no run matches is known
         * only here, and the message named neither) */
        if (table) dp_error_prefix(&err, "%s: table %s", path, table);
        else dp_error_prefix(&err, "%s", path);
        status = dp_cli_fail(&err);
        goto done;
    }
    if (t.pooled_machines)
        fprintf(stderr, "doppler report: warning: some cells pool runs on different machines (a machine key such as devices, "
                        "comm_ratio or bandwidth differs and is neither a row nor a column): make it one, or filter with --where\n");
    if (t.pooled_params)
        fprintf(stderr, "doppler report: warning: some cells pool runs that differ in %s (not only in seed and rep): make "
                        "%s a row or column, or filter with --where\n", t.pooled_params,
                strchr(t.pooled_params, ',') ? "each" : "it");
    if (t.refs_left_out)
        fprintf(stderr, "doppler report: warning: some rows' columns are runs on different machines (--cols devices, or "
                        "columns whose where differ in a machine key): those rows have no round-robin, random, single device, "
                        "lower bound or best known value (it would be a mean over the machines); make the machine key a row\n");
    {
        /* baselines named, none left as a column (a --where or filter took them out): the table
         * has no best baseline and no ratios, which it did without a word (a review) */
        int any = 0;
        for (int k = 0; k < t.n_cols; k++) any |= t.is_baseline[k];
        if (spec.n_baselines > 0 && !any && t.n_cols > 0)
            fprintf(stderr, "doppler report: warning: the table's baselines (%s%s) are no column here (--where or the "
                            "table's filter leaves them out): no best baseline and no ratios\n", spec.baselines[0],
                    spec.n_baselines > 1 ? ", ..." : "");
    }
    if (plotk) {
        if (po.title) { free(t.title); t.title = dp_alloc_strdup(po.title); }
        if (dp_report_plot_bars(&t, out, &err) != DP_OK) status = dp_cli_fail(&err);
        goto done;
    }
    {
        char tmp[PATH_MAX + 64];
        FILE *f = out ? dp_file_atomic_open(out, tmp, sizeof tmp, &err) : stdout;
        if (!f) { status = dp_cli_fail(&err); goto done; }
        if (dp_report_write(f, &t, format, &err) != DP_OK) {
            if (out) dp_file_atomic_abort(f, tmp);
            status = dp_cli_fail(&err);
        } else if (out && dp_file_atomic_commit(f, tmp, out, &err) != DP_OK) status = dp_cli_fail(&err);
    }
done:
    dp_report_table_free(&t);
    dp_report_spec_free(&spec);
    for (long i = 0; i < n; i++) dp_result_free(&rows[i]);
    free(rows);
    free(config);
    json_decref(where);
    return status;
}
