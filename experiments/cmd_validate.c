/* doppler validate: run assignments on the real executor and in the simulator; report how far
 * apart they are (MAPE, Kendall's tau) and plot simulated against measured. */
#include "cli.h"
#include "dp_alloc.h"
#include "commands.h"
#include "dp_file.h"
#include "report.h"
#include "dp_exec.h"
#include "dp_engine.h"
#include "dp_problem.h"
#include "dp_json.h"
#include "dp_place.h"
#include "dp_validate.h"
#include "exec_cli.h"

#include <errno.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_TARGET_FLOPS 2e10

static void validate_usage(FILE *f)
{
    fprintf(f, "Usage: doppler validate --graph G [--topology T] [--calibration C] [--assignments N]\n"
               "                        [--methods M1,M2]\n\n"
               "Run N random assignments and the methods' assignments of G on the real executor and in the\n"
               "simulator (sim/dp_hisim.h on topology T, default cpu-2core, with op and transfer times from\n"
               "calibration C, else the topology's roofline; on the graph as executed, every dimension\n"
               "scaled); device d of the executor is the topology's device d. Print per assignment the\n"
               "measured (from R interleaved runs, see --statistic) and the\n"
               "simulated makespan, then the mean absolute percentage error and Kendall's tau between the\n"
               "two, and plot simulated against measured (gnuplot PNG or SVG).\n\n"
               "Options:\n"
               "  --graph FILE         the graph (.json native with shapes, or .txt DOPPLER: synthetic kernels)\n"
               "  --format F           graph format when the extension does not tell\n"
               "  --backend B          executor backend: cpu (default), cuda when built --with-cuda\n"
               "  --assignments N      random assignments (default 30)\n"
               "  --methods M1,M2      placement methods also run, each once, none that needs a checkpoint\n"
               "                       (default cp,round-robin,single)\n"
               "  --scale S            dimension scale of the kernels, (0, 1]\n"
               "  --target-flops F     instead, the scale giving F FLOPs in all (default 2e10, at most 1e18;\n"
               "                       not with --scale)\n"
               "  --repeats R          measured runs per assignment, in interleaved passes (default 21: with\n"
               "                       5, nearly equivalent assignments rank by noise; the split-half\n"
               "                       tau printed at the end says how reproducible the ranking is)\n"
               "  --seed S             seed of the random assignments (default 1)\n"
               "  --plot FILE.png      the scatter plot, .png or .svg (default validate.png; 'none' for no plot)\n"
               "  --out FILE.json      per-assignment results and the summary\n"
               "  --no-pin             do not pin workers to cores (pinned: device d on the d-th core\n"
               "                       the process may use, so taskset -c chooses them)\n"
               "  --statistic S        measured makespan of an assignment from its runs: normalised (default:\n"
               "                       the median of each run relative to its pass's median over all\n"
               "                       assignments, times the median pass: a drift of the host's speed\n"
               "                       between passes cancels; median when fewer than 5 assignments),\n"
               "                       median, or min (the least disturbed run)\n"
               "  --resimulate REC.json  run nothing: simulate the assignments of a record written by\n"
               "                       --out (same graph) and compare with its measured runs: a model is\n"
               "                       tried against a measurement without measuring again. The record's\n"
               "                       topology, calibration and statistic apply unless --topology,\n"
               "                       --calibration (FILE or none: the roofline) or --statistic say\n"
               "                       otherwise; simulator options (--transfer-model, --mode, ...) are\n"
               "                       this command's, not recorded; options of the execution (--repeats,\n"
               "                       --assignments, --methods, --scale, ...) are refused\n"
               "  --nice N             nice value of the worker threads (negative: root; on a shared\n"
               "                       machine the measurement then takes the cores while it runs)\n"
               "  -h, --help           this help\n");
    dp_cli_print_machine_help(f);
}

typedef struct row {
    char label[48];
    int *assign;
    int copies;
    double *samples;   /* (repeats) its runs in pass order: a row of the runs matrix */
    double measured, q25, q75, simulated;
} row;

static int write_plot(const char *path, const row *rows, int n, int n_methods, const char *title, dp_error *err)
{
    char target[4096], tmp[4200];
    int trc = dp_file_output_target(path, target, sizeof target, err);
    if (trc != DP_OK) return trc;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", target, (long)getpid());
    /* gnuplot's own output to /dev/null: where `set output` fails it writes the PNG to stdout */
    FILE *gp = popen("gnuplot > /dev/null", "w");
    if (!gp) return dp_error_set(err, DP_EIO, "%s: cannot run gnuplot", path);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++) {
        lo = fmin(lo, fmin(rows[i].measured, rows[i].simulated));
        hi = fmax(hi, fmax(rows[i].measured, rows[i].simulated));
    }
    lo *= 0.9e3;
    hi *= 1.1e3;
    /* the terminal of the file's type (dp_report_terminal: svg, else pngcairo where gnuplot has it) */
    const char *term = dp_report_terminal(path);
    fprintf(gp, "set terminal %s size 800,700 font ',11'%s\nset output '%s'\n", term,
            strcmp(term, "svg") == 0 ? " background rgb 'white'" : "", tmp);
    fprintf(gp, "set title \"%s\" noenhanced\nset xlabel 'measured makespan (ms)'\nset ylabel 'simulated makespan (ms)'\n", title);
    fprintf(gp, "set key top left\nset grid\nset xrange [%g:%g]\nset yrange [%g:%g]\n", lo, hi, lo, hi);
    fprintf(gp, "$R << EOD\n");
    for (int i = n_methods; i < n; i++) fprintf(gp, "%.9g %.9g %.9g %.9g\n", rows[i].measured * 1e3, rows[i].simulated * 1e3, rows[i].q25 * 1e3, rows[i].q75 * 1e3);
    fprintf(gp, "EOD\n$M << EOD\n");
    for (int i = 0; i < n_methods; i++)
        fprintf(gp, "%.9g %.9g %.9g %.9g \"%s\"\n", rows[i].measured * 1e3, rows[i].simulated * 1e3, rows[i].q25 * 1e3, rows[i].q75 * 1e3, rows[i].label);
    fprintf(gp, "EOD\n");
    fprintf(gp, "plot x title 'simulated = measured' lc rgb 'gray' dt 2, x*1.1 notitle lc rgb '#cccccc' dt 3, x*0.9 notitle lc rgb '#cccccc' dt 3, "
                "$R using 1:2:3:4 with xerrorbars title 'random assignments (measured, quartiles of the runs)' pt 7 ps 0.8 lc rgb '#1f77b4'");
    if (n_methods > 0)
        fprintf(gp, ", $M using 1:2:3:4 with xerrorbars title 'methods' pt 5 ps 1.2 lc rgb '#d62728', "
                    "$M using 1:2:5 with labels offset 1,-0.8 left notitle");
    fprintf(gp, "\n");
    int rc = pclose(gp);
    if (rc != 0 || access(tmp, R_OK) != 0) {
        unlink(tmp);
        return dp_error_set(err, DP_EIO, "%s: gnuplot failed (status %d)", path, rc);
    }
    return dp_report_plot_commit(tmp, target, path, err);
}

/* a --statistic name (or a record's "statistic"): 0, or -1 when unknown */
static int parse_statistic(const char *s, dp_validate_statistic *st)
{
    if (strcmp(s, "normalised") == 0 || strcmp(s, "normalized") == 0) *st = DP_VALIDATE_NORMALISED;
    else if (strcmp(s, "median") == 0) *st = DP_VALIDATE_MEDIAN;
    else if (strcmp(s, "min") == 0) *st = DP_VALIDATE_MIN;
    else return -1;
    return 0;
}

/* --resimulate: the shape of a record written by --out: its rows (methods first, then the
 * random assignments "random-S"), all with the same number of runs */
static int record_shape(json_t *rec, const char *path, int *n_methods, int *n_random, int *repeats, dp_error *err)
{
    json_t *rows = json_object_get(rec, "rows");
    if (!json_is_object(rec) || !json_is_array(rows) || json_array_size(rows) < 2 || json_array_size(rows) > 200000)
        return dp_error_set(err, DP_EINVAL, "%s: not a doppler validate record (field \"rows\": an array of 2 or more)", path);
    json_t *sc = json_object_get(rec, "scale");
    if (!json_is_number(sc) || !(json_number_value(sc) > 0) || !isfinite(json_number_value(sc)))
        return dp_error_set(err, DP_EINVAL, "%s: field \"scale\": a positive number expected", path);
    int nm = 0, nr = 0, R = -1;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *r = json_array_get(rows, i);
        const char *lab = json_string_value(json_object_get(r, "assignment"));
        json_t *smp = json_object_get(r, "samples_s");
        if (!lab || !json_is_array(smp) || json_array_size(smp) < 1 || json_array_size(smp) > 1000)
            return dp_error_set(err, DP_EINVAL, "%s: rows[%zu]: needs \"assignment\" and \"samples_s\" (1 to 1000 runs)", path, i);
        if (!json_is_array(json_object_get(r, "devices")))
            return dp_error_set(err, DP_EINVAL, "%s: rows[%zu]: no \"devices\" (a record of a doppler before 2026-11-30 10:00 "
                                "keeps neither the assignments nor the runs in pass order: validate again)", path, i);
        if (R >= 0 && (int)json_array_size(smp) != R)
            return dp_error_set(err, DP_EINVAL, "%s: rows[%zu]: %zu runs, the rows before it %d", path, i, json_array_size(smp), R);
        R = (int)json_array_size(smp);
        int is_random = strncmp(lab, "random-", 7) == 0;
        if (!is_random && nr > 0)
            return dp_error_set(err, DP_EINVAL, "%s: rows[%zu]: method \"%s\" after the random assignments", path, i, lab);
        if (is_random) nr++;
        else nm++;
    }
    *n_methods = nm;
    *n_random = nr;
    *repeats = R;
    return DP_OK;
}

/* --resimulate: row i of the record into r (its assign and samples allocated, n_ops ops) */
static int record_row(json_t *rec, const char *path, int i, int n_ops, int D, int repeats, row *r, dp_error *err)
{
    json_t *o = json_array_get(json_object_get(rec, "rows"), (size_t)i);
    json_t *dev = json_object_get(o, "devices"), *smp = json_object_get(o, "samples_s");
    const char *label = json_string_value(json_object_get(o, "assignment"));
    if (strlen(label) >= sizeof r->label)
        return dp_error_set(err, DP_EINVAL, "%s: rows[%d]: assignment name longer than %zu characters", path, i, sizeof r->label - 1);
    snprintf(r->label, sizeof r->label, "%s", label);
    json_t *cp = json_object_get(o, "copies");
    if (!json_is_integer(cp) || json_integer_value(cp) < 0 || json_integer_value(cp) > INT_MAX)
        return dp_error_set(err, DP_EINVAL, "%s: rows[%d] (%s): \"copies\": a count expected", path, i, label);
    r->copies = (int)json_integer_value(cp);
    if ((int)json_array_size(dev) != n_ops)
        return dp_error_set(err, DP_EINVAL, "%s: rows[%d] (%s): %zu devices for a graph of %d ops (another graph?)", path, i,
                            r->label, json_array_size(dev), n_ops);
    for (int v = 0; v < n_ops; v++) {
        json_t *d = json_array_get(dev, (size_t)v);
        if (!json_is_integer(d) || json_integer_value(d) < 0 || json_integer_value(d) >= D)
            return dp_error_set(err, DP_EINVAL, "%s: rows[%d] (%s): devices[%d]: a device 0..%d expected", path, i, r->label, v, D - 1);
        r->assign[v] = (int)json_integer_value(d);
    }
    for (int k = 0; k < repeats; k++) {
        json_t *t = json_array_get(smp, (size_t)k);
        double sec = json_number_value(t);
        if (!json_is_number(t) || !(sec > 0) || !(sec < 1e9))
            return dp_error_set(err, DP_EINVAL, "%s: rows[%d] (%s): samples_s[%d]: a positive number of seconds (under 1e9) expected", path, i,
                                r->label, k);
        r->samples[k] = sec;
    }
    return DP_OK;
}

/* --resimulate: what the record says where the command line does not: its topology (as given to
 * the run that made it), calibration and statistic */
/* what the output and the record say of no calibration */
#define CALIBRATION_NONE "none (roofline of the topology)"

static int record_defaults(json_t *rec, const char *path, dp_machine *mach, int calib_given, int stat_given,
                           dp_validate_statistic *stat, dp_error *err)
{
    if (!mach->topology) {
        const char *t = json_string_value(json_object_get(rec, "topology_source"));
        if (!t || !*t) t = json_string_value(json_object_get(rec, "topology"));
        if (!t || !*t)
            return dp_error_set(err, DP_EINVAL, "%s: field \"topology\": a topology name or file expected (give --topology)", path);
        if (dp_machine_set(mach, "topology", t, err) != DP_OK) return DP_EINVAL;
    }
    if (!calib_given) {
        const char *c = json_string_value(json_object_get(rec, "calibration"));
        if (!c) return dp_error_set(err, DP_EINVAL, "%s: field \"calibration\": a file, or none, expected (give --calibration)", path);
        /* none, as given or as the record writes it (a path that begins with "none", such as
         * none_v2.json, was taken for it and the roofline used: a review) */
        const int none = strcmp(c, "none") == 0 || strcmp(c, CALIBRATION_NONE) == 0;
        /* a bundled calibration is recorded relative to the checkout (data/calibrations/...):
         * found under DOPPLER_DATA or the installed data too, as a topology's name is (run
         * outside the checkout, doc/validation's records failed: a review) */
        char buf[PATH_MAX];
        const char *found = none || access(c, R_OK) == 0 ? NULL : dp_machine_data_file(c, buf, sizeof buf);
        if (!none && dp_machine_set(mach, "calibration", found ? found : c, err) != DP_OK) return DP_EINVAL;
    }
    if (!stat_given) {
        const char *st = json_string_value(json_object_get(rec, "statistic"));
        if (!st || parse_statistic(st, stat) != 0)
            return dp_error_set(err, DP_EINVAL, "%s: field \"statistic\": normalised, median or min expected, got \"%s\"", path,
                                st ? st : "nothing");
    }
    return DP_OK;
}

/* --resimulate: the record is of graph g (its name, kind of scale and scale) on D devices */
static int record_check_graph(json_t *rec, const char *path, const dp_graph *g, int D, dp_error *err)
{
    const char *name = json_string_value(json_object_get(rec, "graph"));
    if (!name || strcmp(name, g->name) != 0)
        return dp_error_set(err, DP_EINVAL, "%s: field \"graph\": the record is of \"%s\", --graph is \"%s\"", path, name ? name : "?",
                            g->name);
    const char *sk = json_string_value(json_object_get(rec, "scale_kind"));
    const char *want = g->cost_kind == DP_GRAPH_COST_TIME ? "flops_per_unit" : "dimension";
    /* records before 2026-11-30 10:15 have no scale_kind: theirs is a dimension scale */
    if (!sk && g->cost_kind != DP_GRAPH_COST_TIME) sk = "dimension";
    if (!sk || strcmp(sk, want) != 0)
        return dp_error_set(err, DP_EINVAL, "%s: field \"scale_kind\": \"%s\" expected for graph %s", path, want, g->name);
    double sc = json_number_value(json_object_get(rec, "scale"));
    if (g->cost_kind != DP_GRAPH_COST_TIME && !(sc > 0 && sc <= 1))
        return dp_error_set(err, DP_EINVAL, "%s: field \"scale\": a dimension scale in (0, 1] expected, got %g", path, sc);
    json_t *dv = json_object_get(rec, "devices");
    if (!json_is_integer(dv) || json_integer_value(dv) != D)
        return dp_error_set(err, DP_EINVAL, "%s: field \"devices\": the record ran on %lld devices, the topology has %d", path,
                            json_is_integer(dv) ? (long long)json_integer_value(dv) : -1LL, D);
    return DP_OK;
}

/* --resimulate: the graph at the record's scale executes the FLOPs the record says it did (an
 * edited scale, or another graph of the same name and size, does not) */
static int record_check_flops(json_t *rec, const char *path, const dp_graph *xg, dp_error *err)
{
    json_t *f = json_object_get(rec, "executed_flops");
    double have = dp_graph_total_work(xg), want = json_number_value(f);
    if (!json_is_number(f) || !(fabs(have - want) <= 1e-9 * fmax(fabs(want), 1.0)))
        return dp_error_set(err, DP_EINVAL, "%s: field \"executed_flops\": the record executed %.17g FLOPs, the graph at its scale %.17g "
                            "(another graph, or an edited scale)", path, want, have);
    return DP_OK;
}

/* a correlation as printed: `digits` decimals, or "undefined" (NAN: a side with no spread) */
static const char *corr_text(double x, int digits, char buf[32])
{
    if (isfinite(x)) snprintf(buf, 32, "%.*f", digits, x);
    else snprintf(buf, 32, "undefined");
    return buf;
}

int cmd_validate(int argc, char **argv)
{
    const char *cmd = "validate";
    enum { O_GRAPH = 1, O_FORMAT, O_BACKEND, O_ASSIGN, O_METHODS, O_SCALE, O_TARGET, O_REPEATS,
           O_SEED, O_PLOT, O_OUT, O_NOPIN, O_NICE, O_STAT, O_RESIM, O_HELP };
    static const struct option opts[] = {
        {"graph", required_argument, NULL, O_GRAPH}, {"format", required_argument, NULL, O_FORMAT},
        {"backend", required_argument, NULL, O_BACKEND}, {"assignments", required_argument, NULL, O_ASSIGN},
        {"methods", required_argument, NULL, O_METHODS}, {"scale", required_argument, NULL, O_SCALE},
        {"target-flops", required_argument, NULL, O_TARGET}, {"repeats", required_argument, NULL, O_REPEATS},
        {"seed", required_argument, NULL, O_SEED}, {"plot", required_argument, NULL, O_PLOT},
        {"out", required_argument, NULL, O_OUT}, {"no-pin", no_argument, NULL, O_NOPIN},
        {"nice", required_argument, NULL, O_NICE}, {"statistic", required_argument, NULL, O_STAT},
        {"resimulate", required_argument, NULL, O_RESIM},
        {"help", no_argument, NULL, O_HELP}, DP_CLI_MACHINE_OPTIONS, {NULL, 0, NULL, 0}};
    const char *graph = NULL, *format = NULL, *methods = "cp,round-robin,single", *plot = "validate.png",
               *out = NULL, *resim = NULL;
    int D = 0, n_random = 30, repeats = 21;
    dp_validate_statistic stat = DP_VALIDATE_NORMALISED;
    int stat_given = 0;
    const char *exec_opt = NULL;   /* the first option that does not apply with --resimulate */
    static const char *const stat_name[] = {"normalised", "median", "min"};
    dp_machine mach;
    dp_machine_init(&mach);
    unsigned long long seed = 1;
    double scale = 0, target = DEFAULT_TARGET_FLOPS;
    int xsize = 0; /* --scale, --target-flops given (dp_cli_exec_size_option) */
    dp_exec_options xo;
    dp_exec_options_init(&xo);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int r = dp_cli_machine_option(&mach, c, optarg, cmd);
        if (r < 0) return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
        if (r > 0) continue;
        switch (c) {
        case O_GRAPH: graph = optarg; break;
        case O_FORMAT: format = optarg; break;
        case O_BACKEND: xo.backend = optarg; exec_opt = exec_opt ? exec_opt : "--backend"; break;
        case O_ASSIGN:
            exec_opt = exec_opt ? exec_opt : "--assignments";
            if (dp_cli_parse_int(optarg, 0, 100000, &n_random) != 0) return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--assignments: expected 0..100000, got '%s'", optarg));
            break;
        case O_METHODS: methods = optarg; exec_opt = exec_opt ? exec_opt : "--methods"; break;
        case O_SCALE:
            exec_opt = exec_opt ? exec_opt : "--scale";
            if (dp_cli_exec_size_option(cmd, &xsize, 1) != 0) return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
            if (dp_cli_parse_double(optarg, &scale) != 0 || !(scale > 0 && scale <= 1))
                return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--scale: expected a number in (0, 1], got '%s'", optarg));
            break;
        case O_TARGET:
            exec_opt = exec_opt ? exec_opt : "--target-flops";
            if (dp_cli_exec_size_option(cmd, &xsize, 2) != 0) return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
            if (dp_cli_parse_target_flops(cmd, optarg, &target) != 0) return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
            break;
        case O_REPEATS:
            exec_opt = exec_opt ? exec_opt : "--repeats";
            if (dp_cli_parse_int(optarg, 1, 1000, &repeats) != 0) return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--repeats: expected 1..1000, got '%s'", optarg));
            break;
        case O_SEED:
            exec_opt = exec_opt ? exec_opt : "--seed";
            if (dp_cli_parse_u64(optarg, &seed) != 0) return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--seed: expected a non-negative integer, got '%s'", optarg));
            break;
        case O_PLOT: plot = strcmp(optarg, "none") == 0 ? NULL : optarg; break;
        case O_OUT: out = optarg; break;
        case O_RESIM:
            if (resim) return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--resimulate given twice"));
            resim = optarg;
            break;
        case O_NOPIN: xo.pin = 0; exec_opt = exec_opt ? exec_opt : "--no-pin"; break;
        case O_STAT:
            stat_given = 1;
            if (parse_statistic(optarg, &stat) != 0)
                return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--statistic: normalised, median or min, got '%s'", optarg));
            break;
        case O_NICE:
            exec_opt = exec_opt ? exec_opt : "--nice";
            if (dp_cli_parse_int(optarg, -20, 19, &xo.nice) != 0) return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--nice: expected -20..19, got '%s'", optarg));
            break;
        case 'h': case O_HELP: validate_usage(stdout); return dp_cli_machine_done(&mach, 0);
        default: return dp_cli_machine_done(&mach, dp_cli_option_error(cmd, "h", opts, argv));
        }
    }
    if (optind < argc) return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]));
    if (!graph) return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--graph FILE is required"));
    if (dp_cli_check_format(cmd, format)) return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
    {
        /* validate always runs on a topology: the one given, the record's (--resimulate) or
         * cpu-2core; a key that needs one is checked against it (--transfer-model fifo was refused
         * for want of --topology: a review) */
        dp_error e;
        const char *t = mach.topology ? mach.topology : resim ? "the record's" : "cpu-2core";
        if (dp_machine_check_keys(&mach, t, &e) != DP_OK)
            return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "%s", e.msg));
    }
    {
        const dp_cli_file outs[] = {{"--out", out}, {"--plot", plot}};
        const dp_cli_file ins[] = {{"--graph", graph}, {"--resimulate", resim},
                                   {"--topology", dp_cli_topology_path(mach.topology)},
                                   {"--calibration", mach.calibration}};
        int rc = dp_cli_files_distinct(cmd, outs, 2, ins, 4);
        /* the plot is gnuplot's file renamed into place, never written in place: a character
         * device or FIFO, which dp_cli_files_distinct leaves to the write, is refused now, not
         * after the measurement (a review) */
        char plot_target[4096];
        dp_error e;
        if (!rc && plot && dp_file_output_target(plot, plot_target, sizeof plot_target, &e) != DP_OK) rc = dp_cli_fail(&e);
        if (rc) return dp_cli_machine_done(&mach, rc);
    }
    /* the plot's file type, before the measurement: the plot was always a PNG, so --plot x.svg
     * measured, then failed calling its PNG an incomplete SVG ("a full disk?"), and --plot x.pdf
     * wrote a PNG under that name (a review) */
    if (plot && !dp_report_terminal(plot))
        return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--plot %s: plots are written as .png or .svg", plot));
    if (!mach.topology && mach.devices_given)
        return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "--devices: give a --topology whose devices the executor's devices are"));
    if (resim && exec_opt)
        return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "%s does not apply with --resimulate (the record's assignments and runs are used)", exec_opt));
    /* --calibration none: the topology's roofline (with --resimulate: not the record's calibration) */
    const int calib_given = mach.calibration != NULL;
    if (calib_given && strcmp(mach.calibration, "none") == 0) {
        free(mach.calibration);
        mach.calibration = NULL;
    }
    const char *topo_given = mach.topology;
    if (!mach.topology && !resim) dp_machine_set(&mach, "topology", "cpu-2core", NULL);

    /* the methods: validated before any work */
    char *mlist = dp_alloc_strdup(methods);
    char *mnames[32];
    int n_methods = 0;
    for (char *save = NULL, *t = strtok_r(mlist, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!*t) continue;
        if (n_methods == 32) { free(mlist); return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "at most 32 methods")); }
        const dp_place_method *pm = dp_place_find(t);
        /* a method that places from a checkpoint, which validate does not take (it failed after
         * the graph was planned, asking for a --checkpoint validate refuses), and a method given
         * twice (two rows of one assignment, a tie counted in tau and the MAPE: a review) */
        int twice = 0;
        for (int k = 0; k < n_methods; k++) twice |= strcmp(mnames[k], t) == 0;
        int rc = !pm ? dp_cli_usage_error(cmd, "--methods: unknown method '%s'", t) /* t points into mlist */
                 : (pm->options & DP_PLACE_OPT_NEEDS_CHECKPOINT)
                     ? dp_cli_usage_error(cmd, "--methods: %s places from a checkpoint, which validate does not take "
                                          "(the methods here place without one)", t)
                 : twice ? dp_cli_usage_error(cmd, "--methods: %s given twice", t) : 0;
        if (rc) {
            free(mlist);
            return dp_cli_machine_done(&mach, rc);
        }
        mnames[n_methods++] = t;
    }
    if (n_methods + n_random < 2) { free(mlist); return dp_cli_machine_done(&mach, dp_cli_usage_error(cmd, "need at least 2 assignments in all")); }

    dp_error err;
    dp_error_clear(&err);
    int status = DP_EXIT_ERROR;
    json_t *rec = NULL;
    const char *rec_machine = NULL, *rec_workers = NULL;
    double rec_scale = 0, rec_load[2] = {0, 0};
    if (resim) {
        if (!(rec = dp_json_load(resim, &err))) { free(mlist); return dp_cli_machine_done(&mach, dp_cli_fail(&err)); }
        if (record_shape(rec, resim, &n_methods, &n_random, &repeats, &err) != DP_OK) {
            json_decref(rec);
            free(mlist);
            return dp_cli_machine_done(&mach, dp_cli_fail(&err));
        }
        rec_machine = json_string_value(json_object_get(rec, "machine"));
        rec_workers = json_string_value(json_object_get(rec, "workers")); /* records before 2026-12-06 have none */
        rec_scale = json_number_value(json_object_get(rec, "scale"));
        rec_load[0] = json_number_value(json_object_get(rec, "load_before"));
        rec_load[1] = json_number_value(json_object_get(rec, "load_after"));
        xo.nice = (int)json_integer_value(json_object_get(rec, "nice"));
        if (record_defaults(rec, resim, &mach, calib_given, stat_given, &stat, &err) != DP_OK) {
            json_decref(rec);
            free(mlist);
            return dp_cli_machine_done(&mach, dp_cli_fail(&err));
        }
    }
    dp_graph *g = NULL;
    dp_graph *plan = NULL;   /* --resimulate: the executed graph, planned without an executor */
    dp_exec *x = NULL;
    dp_problem *prob = NULL;
    const int n_rows = n_methods + n_random;
    /* relative to its pass's median, an assignment among a few is often that median itself */
    if (stat == DP_VALIDATE_NORMALISED && n_rows < 5) {
        if (!stat_given) stat = DP_VALIDATE_MEDIAN;
        else fprintf(stderr, "doppler validate: warning: --statistic normalised with %d assignments: a pass's median is one "
                             "of them, whose relative time is then 1 whatever it ran (use 5 or more, or median)\n", n_rows);
    }
    row *rows = dp_alloc_calloc((size_t)n_rows, sizeof(row));
    double *meas = dp_alloc_malloc((size_t)n_rows * sizeof(double)), *simv = dp_alloc_malloc((size_t)n_rows * sizeof(double));
    /* the runs, (n_rows, repeats) in pass order; quartiles; the halves of the split-half check */
    double *runs = dp_alloc_malloc((size_t)n_rows * (size_t)repeats * sizeof(double));
    double *q = dp_alloc_malloc((size_t)n_rows * 4 * sizeof(double));
    if (!rows || !meas || !simv || !runs || !q) { dp_error_set(&err, DP_ENOMEM, "out of memory"); goto fail; }
    if (!(g = dp_graph_read(graph, format, &err))) goto fail;
    if (dp_machine_load(&mach, &err) != DP_OK) {
        if (resim && (!topo_given || !calib_given)) {   /* from the record: say so */
            char msg[sizeof err.msg];
            snprintf(msg, sizeof msg, "%s", err.msg);
            dp_error_set(&err, err.code, "%s: the record's topology or calibration: %s (give --topology FILE, --calibration FILE or none)",
                         resim, msg);
        }
        goto fail;
    }
    D = mach.topo->n_devices;
    {
        /* a resimulation's runs: the record's backend measured them (older records say none) */
        const char *be = resim ? json_string_value(json_object_get(rec, "backend")) : xo.backend;
        if (be) dp_cli_warn_backend_topology(be, mach.topo);
    }
    if (!resim && dp_cli_real_scale_check(g, graph, scale, &err) != DP_OK) goto fail;
    if (!resim) dp_cli_exec_size(g, scale, target, &xo);
    else if (g->cost_kind == DP_GRAPH_COST_TIME) xo.flops_per_unit = rec_scale;
    else xo.scale = rec_scale;
    if (resim && record_check_graph(rec, resim, g, D, &err) != DP_OK) goto fail;
    if (resim && !(plan = dp_exec_plan_graph(g, &xo, &err))) goto fail;
    if (!resim && !(x = dp_exec_alloc(g, D, &xo, &err))) goto fail;
    /* the workers' nice: as they run (read back from them: the inherited one, 19 under nice -n
     * 19, without --nice or where --nice could not be set), or the record's; the text and the
     * record say this one (it said --nice's value, set or not: a review) */
    int worker_nice = xo.nice;
    if (x) {
        int nice_errno = 0;
        worker_nice = dp_exec_nice(x, &nice_errno);
        dp_cli_warn_nice(xo.nice, worker_nice, nice_errno);
    }
    const dp_graph *xg = resim ? plan : dp_exec_graph(x);
    if (resim && record_check_flops(rec, resim, xg, &err) != DP_OK) goto fail;
    if (!(prob = dp_problem_alloc(xg, &mach, &err))) goto fail;
    /* a device the calibration lacks, as place and simulate say (it was silent: a review), and
     * measured ops none of which is an op of the graph as executed (xg, whose ops they are) */
    dp_cli_warn_machine(&mach, xg);
    const dp_cost *costs = prob->costs;
    dp_engine *sim = prob->engine;

    for (int i = 0; i < n_rows; i++) {
        row *r = &rows[i];
        r->assign = dp_alloc_malloc((size_t)g->n_ops * sizeof(int));
        r->samples = runs + (size_t)i * repeats;
        if (!r->assign) { dp_error_set(&err, DP_ENOMEM, "out of memory"); goto fail; }
        if (resim) {
            if (record_row(rec, resim, i, g->n_ops, D, repeats, r, &err) != DP_OK) goto fail;
        } else {
            dp_place_options po;
            dp_place_options_init(&po);
            po.seed = seed + (unsigned long long)(i - n_methods);
            po.oracle = &prob->oracle;
            po.machine = &mach;
            const char *m = i < n_methods ? mnames[i] : "random";
            if (i < n_methods) snprintf(r->label, sizeof r->label, "%s", m);
            else snprintf(r->label, sizeof r->label, "random-%llu", (unsigned long long)po.seed);
            if (dp_place(m, xg, costs, &po, r->assign, NULL, NULL, &err) != DP_OK) goto fail;
        }
        dp_engine_schedule sr;
        if (dp_engine_run(sim, r->assign, NULL, &sr, &err) != DP_OK) goto fail;
        r->simulated = sr.makespan;
    }
    double total_flops = dp_graph_total_work(xg);
    double load0[3] = {0, 0, 0}, load1[3] = {0, 0, 0};
    if (resim) {
        load0[0] = rec_load[0];
        load1[0] = rec_load[1];
    } else getloadavg(load0, 3);
    if (!resim) fprintf(stderr, "doppler validate: %s, %d ops, %.3g FLOPs executed (scale %g), %d devices, %d assignments x %d runs\n",
            g->name, g->n_ops, total_flops, g->cost_kind == DP_GRAPH_COST_TIME ? xo.flops_per_unit : xo.scale, D, n_rows, repeats);
    /* interleaved passes: a burst of load on the shared machine spreads over all assignments
     * instead of falling on a few; each prepare is followed by a warm-up run (first touch of
     * the new buffers) */
    for (int p = 0; p < repeats && !resim; p++) {
        for (int i = 0; i < n_rows; i++) {
            dp_exec_result res;
            if (dp_exec_prepare(x, rows[i].assign, &err) != DP_OK) goto fail;
            if (dp_exec_run(x, &res, &err) != DP_OK) goto fail;
            if (dp_exec_run(x, &res, &err) != DP_OK) goto fail;
            rows[i].samples[p] = res.makespan;
            rows[i].copies = res.n_copies;
        }
        fprintf(stderr, "  pass %d/%d done\n", p + 1, repeats);
    }
    if (!resim) getloadavg(load1, 3);
    const char *backend = resim ? json_string_value(json_object_get(rec, "backend")) : dp_exec_backend_name(x);
    if (!backend) backend = "recorded";
    if (dp_validate_measured(runs, n_rows, repeats, 0, 1, stat, meas, q, q + n_rows) != 0) {
        dp_error_set(&err, DP_EINVAL, "%s: a run gave no positive, finite makespan", graph);
        goto fail;
    }
    for (int i = 0; i < n_rows; i++) {
        rows[i].measured = meas[i];
        rows[i].q25 = q[i];
        rows[i].q75 = q[n_rows + i];
        simv[i] = rows[i].simulated;
    }
    /* the measurement's own reproducibility: the statistic of the odd passes against that of
     * the even ones. A simulator cannot be expected to rank the assignments more like the
     * measurement than the measurement ranks them like itself (each half is noisier than the
     * whole, so the whole's reliability is somewhat higher than this) */
    double split = NAN, split_r = NAN;
    if (repeats >= 2 && dp_validate_measured(runs, n_rows, repeats, 0, 2, stat, q, NULL, NULL) == 0 &&
        dp_validate_measured(runs, n_rows, repeats, 1, 2, stat, q + n_rows, NULL, NULL) == 0) {
        split = dp_validate_kendall_tau(q, q + n_rows, n_rows);
        if (n_random >= 2) split_r = dp_validate_kendall_tau(q + n_methods, q + n_rows + n_methods, n_random);
    }
    const char *calib = mach.calibration ? mach.calibration : CALIBRATION_NONE;
    printf("graph %s: %d ops, %d edges; executed %.4g FLOPs (%s %g); %d %s devices; topology %s; calibration %s\n",
           g->name, g->n_ops, g->n_edges, total_flops, g->cost_kind == DP_GRAPH_COST_TIME ? "FLOPs per unit" : "scale",
           g->cost_kind == DP_GRAPH_COST_TIME ? xo.flops_per_unit : xo.scale, D, backend, mach.topo->name, calib);
    if (resim) printf("resimulated: the runs and assignments of %s (measured on %s)\n", resim, rec_machine ? rec_machine : "?");
    /* the workers' nice (worker_nice); and whether they were pinned, each device to its own core
     * (not with fewer cores than devices: taskset -c 0 and two devices, which it did not say).
     * The record keeps what this line says (it kept --nice, 0 under `nice -n 19`, and not the
     * pinning: a review of the eighteenth session); a resimulation says the recorded
     * measurement's (it said its own process's: a review) */
    const char *workers = x ? (dp_exec_pinned(x) ? "pinned, a core each"
                               : xo.pin ? "not pinned (fewer cores than devices)" : "not pinned (--no-pin)")
                            : rec_workers ? rec_workers : "(resimulated)";
    printf("load average (1 min) %.2f before, %.2f after the measurements; worker nice %d; workers %s; measured = %s of %d "
           "runs\n",
           load0[0], load1[0], worker_nice, workers,
           stat == DP_VALIDATE_NORMALISED ? "median relative to the pass (drift between passes removed)" : stat_name[stat],
           repeats);
    printf("%-4s %-16s %7s %12s %18s %12s %8s\n", "#", "assignment", "copies", "measured_ms", "q25..q75_ms", "simulated_ms", "error");
    for (int i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        char spread[40];
        snprintf(spread, sizeof spread, "%.3f..%.3f", r->q25 * 1e3, r->q75 * 1e3);
        printf("%-4d %-16s %7d %12.3f %18s %12.3f %+7.1f%%\n", i, r->label, r->copies, r->measured * 1e3, spread,
               r->simulated * 1e3, 100.0 * (r->simulated - r->measured) / r->measured);
    }
    double mape = dp_validate_mape(meas, simv, n_rows);
    double tau = dp_validate_kendall_tau(meas, simv, n_rows);
    double rho = dp_validate_pearson(meas, simv, n_rows);
    double mape_r = n_random >= 2 ? dp_validate_mape(meas + n_methods, simv + n_methods, n_random) : NAN;
    double tau_r = n_random >= 2 ? dp_validate_kendall_tau(meas + n_methods, simv + n_methods, n_random) : NAN;
    char f_tau[32], f_rho[32], f_tau_r[32];
    printf("MAPE %.2f%%  Kendall tau %s  Pearson r %s  (all %d assignments)\n", 100 * mape, corr_text(tau, 3, f_tau),
           corr_text(rho, 3, f_rho), n_rows);
    if (n_random >= 2)
        printf("MAPE %.2f%%  Kendall tau %s  (the %d random assignments only)\n", 100 * mape_r, corr_text(tau_r, 3, f_tau_r),
               n_random);
    if (!isfinite(tau) || !isfinite(rho) || (n_random >= 2 && !isfinite(tau_r)))
        printf("(undefined: every measured or every simulated makespan is the same, as on one device or with "
               "identical assignments)\n");
    /* the level: how fast the host runs now against when it was profiled, read off the
     * single-device placement (no copies: the sum of its ops' times) */
    int i_single = -1;
    for (int i = 0; i < n_methods; i++)
        if (strcmp(rows[i].label, "single") == 0) i_single = i;
    double level = i_single >= 0 ? meas[i_single] / simv[i_single] : NAN;
    double mape_lc = i_single >= 0 && n_rows > 1 ? dp_validate_mape_scaled(meas, simv, n_rows, level, i_single) : NAN;
    if (isfinite(mape_lc))
        printf("MAPE %.2f%% of the others with every simulated makespan x %.4f, single's measured / simulated (the host's "
               "speed now against %s; the rest is the model of parallel execution)\n", 100 * mape_lc, level,
               mach.calibration ? "the calibration's" : "the topology's nominal speed (no calibration)");
    if (isfinite(split) && isfinite(split_r))
        printf("measurement split-half Kendall tau %.3f (all), %.3f (random): odd against even passes, the "
               "reproducibility of the measured ranking\n", split, split_r);
    else if (isfinite(split))
        printf("measurement split-half Kendall tau %.3f (all): odd against even passes, the reproducibility of the "
               "measured ranking\n", split);
    if (out) {
        json_t *o = json_object(), *arr = json_array();
        char machine[512];
        if (rec_machine) snprintf(machine, sizeof machine, "%s", rec_machine);
        else dp_cli_machine_name(machine, sizeof machine);
        json_object_set_new(o, "graph", json_string(g->name));
        json_object_set_new(o, "machine", json_string(machine));
        json_object_set_new(o, "calibration", json_string(calib));
        if (resim) {
            /* the measurement itself: the first record of a chain of resimulations */
            const char *first = json_string_value(json_object_get(rec, "measured_record"));
            json_object_set_new(o, "resimulated_from", json_string(resim));
            json_object_set_new(o, "measured_record", json_string(first ? first : resim));
        }
        json_object_set_new(o, "backend", json_string(backend));
        json_object_set_new(o, "topology", json_string(mach.topo->name));
        json_object_set_new(o, "topology_source", json_string(mach.topology));
        json_object_set_new(o, "devices", json_integer(D));
        /* the executed graph: the scale of its dimensions, or for graphs of durations the FLOPs
         * per unit of their synthetic kernels (--resimulate reads it back) */
        json_object_set_new(o, "scale", dp_json_number(g->cost_kind == DP_GRAPH_COST_TIME ? xo.flops_per_unit : xo.scale));
        json_object_set_new(o, "scale_kind", json_string(g->cost_kind == DP_GRAPH_COST_TIME ? "flops_per_unit" : "dimension"));
        json_object_set_new(o, "executed_flops", dp_json_number(total_flops));
        json_object_set_new(o, "repeats", json_integer(repeats));
        json_object_set_new(o, "load_before", dp_json_number(load0[0]));
        json_object_set_new(o, "load_after", dp_json_number(load1[0]));
        json_object_set_new(o, "nice", json_integer(worker_nice));
        json_object_set_new(o, "workers", json_string(workers));
        json_object_set_new(o, "statistic", json_string(stat_name[stat]));
        json_object_set_new(o, "mape", dp_json_number(mape));
        json_object_set_new(o, "kendall_tau", dp_json_number(tau));
        json_object_set_new(o, "pearson_r", dp_json_number(rho));
        if (isfinite(mape_r)) json_object_set_new(o, "mape_random", dp_json_number(mape_r));
        if (isfinite(tau_r)) json_object_set_new(o, "kendall_tau_random", dp_json_number(tau_r));
        if (isfinite(mape_lc)) {
            json_object_set_new(o, "level_single", dp_json_number(level));
            json_object_set_new(o, "mape_level_corrected", dp_json_number(mape_lc));
        }
        if (isfinite(split)) json_object_set_new(o, "split_half_tau", dp_json_number(split));
        if (isfinite(split_r)) json_object_set_new(o, "split_half_tau_random", dp_json_number(split_r));
        for (int i = 0; i < n_rows; i++) {
            json_t *s = json_array();
            for (int k = 0; k < repeats; k++) json_array_append_new(s, dp_json_number(rows[i].samples[k]));
            json_t *dev = json_array();
            for (int v = 0; v < g->n_ops; v++) json_array_append_new(dev, json_integer(rows[i].assign[v]));
            json_array_append_new(arr, json_pack("{s:s,s:i,s:f,s:f,s:o,s:o}", "assignment", rows[i].label, "copies", rows[i].copies,
                                                 "measured_s", rows[i].measured, "simulated_s", rows[i].simulated, "samples_s", s,
                                                 "devices", dev));
        }
        json_object_set_new(o, "rows", arr);
        /* 17 digits: the scale must reproduce the kernels exactly (a calibration's measured ops are keyed by them) */
        int rc = dp_json_dump_atomic(o, out, JSON_INDENT(1) | JSON_REAL_PRECISION(17), &err);
        json_decref(o);
        if (rc != DP_OK) goto fail;
    }
    /* after the record: a plot that fails loses no measurement */
    if (plot) {
        char title[256];
        char f_t[32];
        snprintf(title, sizeof title, "%s on %d %s devices: MAPE %.1f%%, Kendall tau %s", g->name, D, backend,
                 100 * mape, corr_text(tau, 2, f_t));
        if (write_plot(plot, rows, n_rows, n_methods, title, &err) != DP_OK) goto fail;
        printf("plot: %s\n", plot);
    }
    status = 0;
    goto done;
fail:
    status = dp_cli_fail(&err);
done:
    for (int i = 0; rows && i < n_rows; i++) free(rows[i].assign);
    free(rows);
    free(meas); free(simv); free(runs); free(q); free(mlist);
    dp_problem_free(prob);
    dp_graph_free(plan);
    json_decref(rec);
    dp_exec_free(x);
    dp_machine_free(&mach);
    dp_graph_free(g);
    return status;
}
