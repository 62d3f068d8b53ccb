/* report_plot.c: gnuplot plots of sweep results and training runs (see report.h): bars of a
 * table, a run's Gantt chart, scatter plots of two metrics, a trajectory's learning curve. */
#include "report.h"
#include "dp_alloc.h"
#include "report_impl.h"
#include "cli.h"
#include "dp_file.h"
#include "dp_h5io.h"
#include "dp_sim.h"
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ gnuplot ---- */

static const char *gnuplot_bin(void)
{
    const char *g = getenv("GNUPLOT");
    return g && *g ? g : "gnuplot";
}

/* Run gnuplot on a script; on failure, the first line of its stderr goes into err. */
static int gnuplot_run(const char *script, const char *errlog, const char *out, dp_error *err)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return dp_error_set(err, DP_EIO, "fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) { dup2(fd, 2); dup2(fd, 1); close(fd); }
        execlp(gnuplot_bin(), gnuplot_bin(), script, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return DP_OK;
    char *log = dp_file_read(errlog, NULL, NULL);
    char line[512] = "";
    if (log) {
        /* the last non-empty line holds gnuplot's error */
        char *p = log + strlen(log);
        while (p > log && (p[-1] == '\n' || p[-1] == ' ')) *--p = '\0';
        char *q = strrchr(log, '\n');
        snprintf(line, sizeof line, "%s", q ? q + 1 : log);
    }
    free(log);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) return dp_error_set(err, DP_EUNSUPPORTED, "cannot run %s: install gnuplot (Debian: gnuplot-nox) or set $GNUPLOT", gnuplot_bin());
    return dp_error_set(err, DP_EIO, "%s: gnuplot failed: %s", out, line[0] ? line : "(no message)");
}

static int have_terminal(const char *term)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); close(fd); }
        char cmd[128];
        snprintf(cmd, sizeof cmd, "set terminal %s", term);
        execlp(gnuplot_bin(), gnuplot_bin(), "-e", cmd, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

const char *dp_report_terminal(const char *out)
{
    size_t n = strlen(out);
    if (n > 4 && strcmp(out + n - 4, ".svg") == 0) return "svg";
    if (n > 4 && strcmp(out + n - 4, ".png") == 0) {
        static int cairo = -1;
        if (cairo < 0) cairo = have_terminal("pngcairo");
        return cairo ? "pngcairo" : "png";
    }
    return NULL;
}

/* A scratch folder for data and script files, removed by plot_end. */
typedef struct plot {
    char dir[PATH_MAX];
    char tmp_out[PATH_MAX + 64];
    char out_target[PATH_MAX];   /* the file replaced: out, or what its links name */
    const char *out;
    FILE *script;
} plot;

static int plot_begin(plot *p, const char *out, int width, int height, dp_error *err)
{
    memset(p, 0, sizeof *p);
    const char *term = dp_report_terminal(out);
    if (!term) return dp_error_set(err, DP_EINVAL, "%s: plots are written as .png or .svg", out);
    const char *tmpdir = getenv("TMPDIR");
    snprintf(p->dir, sizeof p->dir, "%s/doppler-plot-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(p->dir)) return dp_error_set(err, DP_EIO, "cannot create a scratch folder: %s", strerror(errno));
    if (dp_file_output_target(out, p->out_target, sizeof p->out_target, err) != DP_OK) {
        rmdir(p->dir);
        return err ? err->code : DP_EIO;
    }
    p->out = p->out_target;
    snprintf(p->tmp_out, sizeof p->tmp_out, "%s.tmp.%ld", p->out, (long)getpid());
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/plot.gp", p->dir);
    p->script = fopen(path, "w");
    if (!p->script) return dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
    if (strcmp(term, "svg") == 0)
        fprintf(p->script, "set terminal svg size %d,%d dynamic noenhanced font 'Helvetica,12' background rgb 'white'\n", width, height);
    else if (strcmp(term, "pngcairo") == 0)
        fprintf(p->script, "set terminal pngcairo size %d,%d noenhanced font 'Helvetica,11' background rgb 'white'\n", width, height);
    else
        fprintf(p->script, "set terminal png size %d,%d noenhanced font 'Helvetica,11' background rgb 'white'\n", width, height);
    fprintf(p->script, "set output '%s'\nset encoding utf8\nset datafile missing '?'\n", p->tmp_out);
    return DP_OK;
}

static FILE *plot_data(plot *p, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", p->dir, name);
    return fopen(path, "w");
}

static void plot_cleanup(plot *p)
{
    static const char *files[] = {"plot.gp", "plot.log", "data.dat", "ops.dat", "arrows.dat", "labels.dat", NULL};
    char path[PATH_MAX + 64];
    for (int i = 0; files[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", p->dir, files[i]);
        unlink(path);
    }
    rmdir(p->dir);
}

static int plot_end(plot *p, dp_error *err)
{
    fprintf(p->script, "set output\n");
    int bad = fclose(p->script) != 0;
    p->script = NULL;
    if (bad) { plot_cleanup(p); return dp_error_set(err, DP_EIO, "cannot write the gnuplot script"); }
    char script[PATH_MAX + 32], log[PATH_MAX + 32];
    snprintf(script, sizeof script, "%s/plot.gp", p->dir);
    snprintf(log, sizeof log, "%s/plot.log", p->dir);
    int rc = gnuplot_run(script, log, p->out, err);
    if (rc == DP_OK) rc = dp_report_plot_commit(p->tmp_out, p->out, p->out, err);
    if (rc != DP_OK) unlink(p->tmp_out);
    plot_cleanup(p);
    return rc;
}

int dp_report_plot_commit(const char *tmp, const char *target, const char *path, dp_error *err)
{
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    unsigned char tail[64];
    size_t n = 0;
    int complete = 0;
    FILE *f = fopen(tmp, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0) {
        const long size = ftell(f);
        if (size > 0 && fseek(f, size > (long)sizeof tail ? size - (long)sizeof tail : 0, SEEK_SET) == 0)
            n = fread(tail, 1, sizeof tail, f);
    }
    if (f) fclose(f);
    const char *term = dp_report_terminal(path);
    if (term && strcmp(term, "svg") == 0) {
        while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == ' ' || tail[n - 1] == '\r')) n--;
        complete = n >= 6 && memcmp(tail + n - 6, "</svg>", 6) == 0;
    } else {
        complete = n >= sizeof iend && memcmp(tail + n - sizeof iend, iend, sizeof iend) == 0;
    }
    if (!complete) {
        unlink(tmp);
        return dp_error_set(err, DP_EIO, "%s: the plot gnuplot wrote is incomplete (a full disk?); not written", path);
    }
    if (rename(tmp, target) != 0) {
        const int e = errno;
        unlink(tmp);
        return dp_error_set(err, DP_EIO, "%s: cannot rename the plot into place: %s", path, strerror(e));
    }
    return DP_OK;
}

static void plot_abort(plot *p)
{
    if (p->script) fclose(p->script);
    unlink(p->tmp_out);
    plot_cleanup(p);
}

/* gnuplot string literal: single quotes doubled */
static void gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* a data-file string field: double quotes, with " dropped */
static void dat_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s != '"') fputc(*s, f);
    fputc('"', f);
}

/* The column a table without baselines is drawn relative to, or -1: when its rows are in
 * different units, or its drawn means span more than DP_REPORT_BARS_SPAN (then the small rows'
 * bars are a sliver beside the large ones': table 3's makespans run from 84 to 4800), each row is
 * divided by its own mean of the first drawn column that has a positive mean in every row (table
 * 3: work-conserving), so bars compare within a graph on one scale. -1 also when no column has a
 * positive mean in every row. */
/* the column the rows are drawn relative to (-1: absolute bars), or -2 when they must be relative
 * (mixed units, or means over DP_REPORT_BARS_SPAN apart) and no column has a value in every row */
static int bars_norm_col(const dp_report_table *t)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < (size_t)t->n_rows * (size_t)t->n_cols; i++) {
        if (t->is_reference[i % (size_t)t->n_cols] || !(t->mean[i] > 0)) continue;
        if (t->mean[i] < lo) lo = t->mean[i];
        if (t->mean[i] > hi) hi = t->mean[i];
    }
    if (!t->mixed_units && !(hi > DP_REPORT_BARS_SPAN * lo)) return -1;
    for (int c = 0; c < t->n_cols; c++) {
        if (t->is_reference[c]) continue;
        int r = 0;
        while (r < t->n_rows && t->mean[(size_t)r * t->n_cols + c] > 0) r++;
        if (r == t->n_rows) return c;
    }
    return -2;
}

int dp_report_plot_bars(const dp_report_table *t, const char *out, dp_error *err)
{
    if (t->n_rows == 0 || t->n_cols == 0) return dp_error_set(err, DP_EINVAL, "no successful run to plot");
    plot p;
    int w = 240 + 40 * t->n_rows * (t->n_cols + 1);
    if (w < 800) w = 800;
    if (w > 2400) w = 2400;
    int rc = plot_begin(&p, out, w, 480, err);
    if (rc != DP_OK) { if (p.dir[0]) plot_cleanup(&p); return rc; }
    int ratios = dp_report_has_ratios(t);
    int rel = ratios ? -1 : bars_norm_col(t);
    if (rel == -2) {
        /* absolute bars on an axis of several units hid the small ones (a review) */
        plot_abort(&p);
        return dp_error_set(err, DP_EINVAL, "the rows are in different units (or their means over %gx apart) and no "
                            "column has a value in every row to draw them relative to: plot a table whose columns all "
                            "have every row (--where, --cols), or one unit (--where graph=...)",
                            (double)DP_REPORT_BARS_SPAN);
    }
    /* a cell of failed runs draws the successful ones' mean, or no bar: said (a review) */
    long cells_failed = 0, cells_empty = 0;
    for (size_t i = 0; i < (size_t)t->n_rows * (size_t)t->n_cols; i++) {
        if (t->is_reference[i % (size_t)t->n_cols] || !t->n_failed[i]) continue;
        if (isnan(t->mean[i])) cells_empty++;
        else cells_failed++;
    }
    if (cells_failed || cells_empty)
        fprintf(stderr, "doppler report: warning: the bars leave out failed runs: %ld cells draw the mean of their "
                "successful runs only, %ld cells of failed runs alone have no bar (the table shows them)\n", cells_failed,
                cells_empty);
    FILE *d = plot_data(&p, "data.dat");
    if (!d) { plot_abort(&p); return dp_error_set(err, DP_EIO, "cannot write plot data"); }
    for (int r = 0; r < t->n_rows; r++) {
        char lab[1024] = "";
        for (int k = 0; k < t->n_keys; k++) {
            if (k) strncat(lab, " / ", sizeof lab - strlen(lab) - 1);
            strncat(lab, t->row_keys[(size_t)r * t->n_keys + k], sizeof lab - strlen(lab) - 1);
        }
        dat_str(d, lab);
        double norm = ratios && t->best[r] >= 0 ? t->mean[(size_t)r * t->n_cols + t->best[r]]
                      : rel >= 0                    ? t->mean[(size_t)r * t->n_cols + rel]
                                                    : 1.0;
        for (int c = 0; c < t->n_cols; c++) {
            /* published figures are in their own units: they are not drawn */
            if (t->is_reference[c]) continue;
            size_t i = (size_t)r * t->n_cols + c;
            double m = dp_report_ratio(t->mean[i], norm), s = isnan(t->sd[i]) ? 0.0 : dp_report_ratio(t->sd[i], norm);
            if (isnan(m)) fprintf(d, " ? ?");
            else fprintf(d, " %.10g %.10g", m, s);
        }
        fputc('\n', d);
    }
    fclose(d);
    FILE *f = p.script;
    char title[1024];
    if (t->title[0]) snprintf(title, sizeof title, "%s", t->title);
    else {
        /* no title in the table's spec: say what the bars are */
        char keys[256] = "";
        for (int k = 0; k < t->n_keys; k++) {
            if (k) strncat(keys, ", ", sizeof keys - strlen(keys) - 1);
            strncat(keys, t->key_names[k], sizeof keys - strlen(keys) - 1);
        }
        char relto[600] = "";
        if (ratios) snprintf(relto, sizeof relto, ", relative to the best baseline");
        else if (rel >= 0) snprintf(relto, sizeof relto, ", relative to %s", t->col_labels[rel]);
        snprintf(title, sizeof title, "%s by %s and %s%s, mean over seeds%s", t->metric, keys, t->per_column_metric || !t->col_name ? "column" : t->col_name,
                 relto, ratios ? "" : " (+- sd)");
    }
    fprintf(f, "set title ");
    gp_str(f, title);
    fputc('\n', f);
    fprintf(f, "set style data histogram\nset style histogram errorbars gap 1 lw 1\n"
               "set style fill solid 0.85 border rgb '#333333'\nset boxwidth 0.9\n"
               "set key below horizontal\nset grid ytics lc rgb '#dddddd'\nset yrange [0:*]\n"
               "set xtics nomirror rotate by -25 scale 0\nset ytics nomirror\nset border 3\n");
    char yl[512];
    if (ratios) snprintf(yl, sizeof yl, "%s / best baseline (lower is better)", t->metric);
    else if (rel >= 0) snprintf(yl, sizeof yl, "%s / %s of the same %s", t->metric, t->col_labels[rel], t->n_keys == 1 ? t->key_names[0] : "row");
    else snprintf(yl, sizeof yl, "%s%s%s%s", t->metric, t->units && *t->units ? " (" : "", t->units ? t->units : "", t->units && *t->units ? ")" : "");
    fprintf(f, "set ylabel ");
    gp_str(f, yl);
    fputc('\n', f);
    fprintf(f, "set xrange [-0.6:%g]\n", t->n_rows - 0.4);
    if (ratios || rel >= 0) fprintf(f, "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#aa0000' front\n");
    static const char *colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    fprintf(f, "plot ");
    for (int c = 0, k = 0; c < t->n_cols; c++) {
        if (t->is_reference[c]) continue;
        char name[600];
        snprintf(name, sizeof name, "%s%s", t->col_labels[c], ratios && t->is_baseline[c] ? " (baseline)" : "");
        fprintf(f, "%s'%s/data.dat' using %d:%d%s title ", k ? ", \\\n     " : "", p.dir, 2 + 2 * k, 3 + 2 * k, k ? "" : ":xtic(1)");
        gp_str(f, name);
        fprintf(f, " lc rgb '%s'", colours[k % 10]);
        k++;
    }
    fputc('\n', f);
    return plot_end(&p, err);
}

int dp_report_plot_gantt(const dp_result *run, const char *results_dir, const char *out, dp_error *err)
{
    if (strcmp(run->status, "ok") != 0) return dp_error_set(err, DP_EINVAL, "run %s failed: nothing to draw", run->key);
    if (!run->assignment[0]) return dp_error_set(err, DP_EINVAL, "run %s has no assignment file", run->key);
    json_error_t je;
    json_t *params = json_loads(run->params, 0, &je);
    if (!params) return dp_error_set(err, DP_EINVAL, "run %s: params do not parse", run->key);
    dp_run_context ctx = {results_dir, NULL, NULL};
    dp_run_machine rm;
    int *assign = NULL;
    int rc = dp_run_machine_load(params, &ctx, &rm, err);
    json_decref(params);
    if (rc != DP_OK) return rc;
    const dp_graph *g = rm.g;
    const dp_cost *c = rm.p->costs;
    char apath[2 * PATH_MAX];
    if (run->assignment[0] == '/') snprintf(apath, sizeof apath, "%s", run->assignment);
    else snprintf(apath, sizeof apath, "%s/%s", results_dir, run->assignment);
    assign = dp_alloc_malloc_n((size_t)g->n_ops, sizeof(int));
    if (!assign) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
    if ((rc = dp_cli_read_assignment(apath, g->name, g->n_ops, c->n_devices, assign, NULL, NULL, err)) != DP_OK) goto done;
    dp_run_schedule res;
    /* the method's queue priorities are not kept: a priority queue replays with b-levels */
    if ((rc = dp_run_machine_simulate(&rm, assign, NULL, &res, err)) != DP_OK) goto done;
    const double sc = g->time_scale;
    plot p;
    int D = c->n_devices;
    if ((rc = plot_begin(&p, out, 1400, 160 + 70 * D, err)) != DP_OK) { if (p.dir[0]) plot_cleanup(&p); goto done; }
    FILE *ops = plot_data(&p, "ops.dat"), *arr = plot_data(&p, "arrows.dat"), *lab = plot_data(&p, "labels.dat");
    if (!ops || !arr || !lab) {
        if (ops) fclose(ops);
        if (arr) fclose(arr);
        if (lab) fclose(lab);
        plot_abort(&p);
        rc = dp_error_set(err, DP_EIO, "cannot write plot data");
        goto done;
    }
    /* colour by op kind when the graph has several, else alternate so neighbours differ */
    int n_kinds = 0;
    const char *kinds[16];
    for (int v = 0; v < g->n_ops; v++) {
        int k;
        for (k = 0; k < n_kinds; k++) if (strcmp(kinds[k], g->op_kind[v]) == 0) break;
        if (k == n_kinds && n_kinds < 16) kinds[n_kinds++] = g->op_kind[v];
    }
    for (int v = 0; v < g->n_ops; v++) {
        int col = v % 6;
        if (n_kinds > 1) {
            for (int k = 0; k < n_kinds; k++) if (strcmp(kinds[k], g->op_kind[v]) == 0) col = k % 6;
        }
        fprintf(ops, "%.10g %.10g %d %d\n", res.op_start[v] / sc, res.op_end[v] / sc, assign[v], col);
        if (g->n_ops <= 80) {
            fprintf(lab, "%.10g %d ", 0.5 * (res.op_start[v] + res.op_end[v]) / sc, assign[v]);
            dat_str(lab, g->op_name[v]);
            fputc('\n', lab);
        }
    }
    long n_arrows = 0;
    for (int e = 0; e < g->n_edges; e++) {
        int u = g->edge_src[e], v = g->edge_dst[e];
        if (assign[u] == assign[v]) continue;
        /* the general engine knows when each transfer ran; the fixed-delay one starts it at the
         * producer's end */
        double t0 = res.xfer_start ? res.xfer_start[e] : res.op_end[u];
        double t1 = res.xfer_end ? res.xfer_end[e] : t0 + dp_cost_comm(c, e, assign[u], assign[v]);
        double y0 = assign[u] + (assign[v] > assign[u] ? 0.4 : -0.4), y1 = assign[v] + (assign[v] > assign[u] ? -0.4 : 0.4);
        fprintf(arr, "%.10g %.10g %.10g %.10g\n", t0 / sc, y0, (t1 - t0) / sc, y1 - y0);
        n_arrows++;
    }
    fprintf(lab, "\n");
    fclose(ops);
    fclose(arr);
    fclose(lab);
    FILE *f = p.script;
    char title[1024];
    snprintf(title, sizeof title, "%s, %s, %d devices: makespan %.6g %s", g->name, run->method, D, res.makespan / sc, g->time_unit);
    fprintf(f, "set title ");
    gp_str(f, title);
    fprintf(f, "\nset xlabel ");
    char xl[256];
    snprintf(xl, sizeof xl, "time (%s)", g->time_unit);
    gp_str(f, xl);
    fprintf(f, "\nset yrange [%g:%g]\nset ytics (", -0.7, D - 0.3);
    for (int d = 0; d < D; d++) fprintf(f, "%s'device %d' %d", d ? ", " : "", d, d);
    fprintf(f, ")\nset xrange [0:%.10g]\nset grid xtics lc rgb '#dddddd'\nset key off\nset border 3\nset xtics nomirror\nset ytics nomirror scale 0\n",
            res.makespan / sc * 1.01);
    fprintf(f, "set palette maxcolors 6\nset palette defined (0 '#4e79a7', 1 '#f28e2b', 2 '#59a14f', 3 '#e15759', 4 '#76b7b2', 5 '#edc948')\nset cbrange [-0.5:5.5]\nunset colorbox\n");
    fprintf(f, "set style fill solid 0.85 border rgb '#222222'\n");
    fprintf(f, "plot '%s/ops.dat' using (($1+$2)/2):3:1:2:($3-0.35):($3+0.35):4 with boxxyerror palette", p.dir);
    if (n_arrows)
        fprintf(f, ", \\\n     '%s/arrows.dat' using 1:2:3:4 with vectors head size screen 0.006,20 filled lw 0.6 lc rgb '#55000000'", p.dir);
    if (g->n_ops <= 80) fprintf(f, ", \\\n     '%s/labels.dat' using 1:2:3 with labels font ',7'", p.dir);
    fputc('\n', f);
    rc = plot_end(&p, err);
done:
    free(assign);
    dp_run_machine_free(&rm);
    return rc;
}

/* The unit of a metric for run r, for axis labels ("" when it has none worth naming). */
void dp_report_metric_unit(const dp_result *r, const char *metric, char *buf, size_t cap)
{
    const char *m = strncmp(metric, "metrics.", 8) == 0 ? metric + 8 : metric;
    const size_t L = strlen(m);
    if (strstr(m, "makespan") || strcmp(m, "lower_bound") == 0 || strcmp(m, "best_known") == 0)
        snprintf(buf, cap, "%s", r->units);
    else if (strcmp(m, "seconds_per_episode") == 0) snprintf(buf, cap, "s per episode, wall clock");
    else if (strstr(m, "seconds") || (L > 2 && strcmp(m + L - 2, "_s") == 0)) snprintf(buf, cap, "s, wall clock");
    else if (strcmp(m, "transfer_volume") == 0) {
        /* as the run recorded it (bytes, s of transfer under comm_ratio, file units); results
         * made before it was recorded: guessed from the makespan's unit */
        json_error_t je;
        json_t *mt = json_loads(r->metrics, 0, &je);
        const char *u = json_string_value(json_object_get(mt, "transfer_volume_units"));
        snprintf(buf, cap, "%s", u ? u : strstr(r->units, "DOPPLER") ? "the file's cost unit" : "bytes");
        json_decref(mt);
    }
    else if (strcmp(m, "utilisation") == 0 || strstr(m, "agree")) snprintf(buf, cap, "fraction");
    else if (strcmp(m, "simulations") == 0 || strcmp(m, "episodes") == 0 || strncmp(m, "episodes_", 9) == 0 || strcmp(m, "transfers") == 0 || strcmp(m, "ops") == 0)
        snprintf(buf, cap, "count");
    else buf[0] = '\0';
}

/* "METRIC (UNIT)" over the points plotted: their distinct units joined, or the metric alone */
static void axis_label(char **units, int nu, const char *metric, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", metric);
    int first = 1;
    for (int i = 0; i < nu; i++) {
        if (!units[i][0]) continue;
        size_t L = strlen(buf);
        snprintf(buf + L, cap - L, "%s%s", first ? " (" : "; ", units[i]);
        first = 0;
    }
    if (!first) strncat(buf, ")", cap - strlen(buf) - 1);
}

static int add_label(char ***list, int *n, const char *s)
{
    if (dp_report_list_find(*list, *n, s) >= 0) return DP_OK;
    char **a = dp_alloc_realloc(*list, (size_t)(*n + 1) * sizeof(char *));
    if (!a) return DP_ENOMEM;
    *list = a;
    if (!(a[*n] = dp_report_strdup(s))) return DP_ENOMEM;
    (*n)++;
    return DP_OK;
}

static const char *const plot_colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
                                           "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1b9e77", "#7570b3"};
#define N_PLOT_COLOURS ((int)(sizeof plot_colours / sizeof plot_colours[0]))

/* Tics of a log axis over the points' range [lo, hi] that spans less than two decades: gnuplot
 * labels a log axis at powers of 10 only, so a range inside one decade (seconds from 2.8e-5 to
 * 1e-4) had no number on it (a review); 1, 2 and 5 times the powers of 10 in the range, or every
 * digit's when those are fewer than three. Wider ranges keep gnuplot's own. */
static void log_tics(FILE *f, char axis, double lo, double hi)
{
    if (!(lo > 0) || !(hi >= lo) || !isfinite(hi) || hi / lo >= 100) return;
    static const int sets[2][9] = {{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
    static const int nset[2] = {3, 9};
    for (int s = 0; s < 2; s++) {
        double t[64];
        int k = 0;
        for (double p = pow(10, floor(log10(lo))); p <= hi * 1.0000001 && k < 60; p *= 10)
            for (int j = 0; j < nset[s] && k < 60; j++) {
                const double v = sets[s][j] * p;
                if (v >= lo / 1.0000001 && v <= hi * 1.0000001) t[k++] = v;
            }
        if (k < 3 && s == 0) continue;
        fprintf(f, "set %ctics (", axis);
        for (int j = 0; j < k; j++) fprintf(f, "%s%.3g", j ? ", " : "", t[j]);
        if (k == 0) fprintf(f, "%.3g, %.3g", lo, hi); /* inside one digit's step: the ends */
        fprintf(f, ")\n");
        return;
    }
}

int dp_report_plot_scatter(const dp_result *rows, long n, const char *xmetric, const char *ymetric,
                           const json_t *filter, const dp_report_plot_opts *o, const char *out, dp_error *err)
{
    int kx, ky;
    dp_result probe;
    memset(&probe, 0, sizeof probe);
    probe.metrics = (char *)"{}";
    dp_report_metric(&probe, xmetric, &kx);
    dp_report_metric(&probe, ymetric, &ky);
    if (!kx || !ky) return dp_error_set(err, DP_EINVAL, "unknown metric \"%s\"", !kx ? xmetric : ymetric);
    const int log_x = o && o->log_x, log_y = o && o->log_y;
    /* graphs (colours) and methods (point types) in order of appearance; the units of each axis */
    char **graphs = NULL, **methods = NULL, **ux = NULL, **uy = NULL;
    int ng = 0, nm = 0, nux = 0, nuy = 0, rc = DP_OK;
    double lo = INFINITY, hi = -INFINITY;
    long points = 0, dropped = 0;
    char glab[512], u[256];
    /* graphs of one file name in different folders apart, as the tables have them (a review) */
    json_t *plabels = dp_report_path_labels(rows, n);
    for (long i = 0; i < n && rc == DP_OK; i++) {
        if (strcmp(rows[i].status, "ok") != 0 || !dp_report_filter_match(&rows[i], filter)) continue;
        double x = dp_report_metric(&rows[i], xmetric, &kx), y = dp_report_metric(&rows[i], ymetric, &ky);
        if (isnan(x) || isnan(y)) continue;
        if ((log_x && !(x > 0)) || (log_y && !(y > 0))) { dropped++; continue; }
        points++;
        lo = fmin(lo, fmin(x, y));
        hi = fmax(hi, fmax(x, y));
        json_t *gv = json_string(rows[i].graph);
        dp_report_value_label_in("graph", gv, NULL, plabels, glab, sizeof glab);
        json_decref(gv);
        if (add_label(&graphs, &ng, glab) || add_label(&methods, &nm, rows[i].method)) rc = DP_ENOMEM;
        dp_report_metric_unit(&rows[i], xmetric, u, sizeof u);
        if (add_label(&ux, &nux, u)) rc = DP_ENOMEM;
        dp_report_metric_unit(&rows[i], ymetric, u, sizeof u);
        if (add_label(&uy, &nuy, u)) rc = DP_ENOMEM;
    }
    char xl[1024], yl[1024], title[1024];
    plot p;
    FILE *d = NULL;
    if (rc != DP_OK) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto out; }
    if (points == 0) {
        rc = dp_error_set(err, DP_EINVAL, "no successful run has both %s and %s%s", xmetric, ymetric,
                          dropped ? " (positive, for a log axis)" : "");
        goto out;
    }
    if ((rc = plot_begin(&p, out, 1000, 720, err)) != DP_OK) { if (p.dir[0]) plot_cleanup(&p); goto out; }
    if (!(d = plot_data(&p, "data.dat"))) { plot_abort(&p); rc = dp_error_set(err, DP_EIO, "cannot write plot data"); goto out; }
    /* one data block per graph and method that has points, drawn in the graph's colour and the
     * method's symbol; a pair without points writes no block (an empty block's blank lines ran
     * into the separator before it, gnuplot counted one block less, and every later block was
     * drawn in another pair's colour and symbol: a review) */
    double xr[2] = {INFINITY, -INFINITY}, yr[2] = {INFINITY, -INFINITY}; /* the points' ranges */
    char *has = dp_alloc_calloc_n((size_t)ng * (size_t)nm, 1);
    if (!has) { fclose(d); plot_abort(&p); rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto out; }
    for (int gi = 0; gi < ng; gi++)
        for (int m = 0; m < nm; m++) {
            long written = 0;
            for (long i = 0; i < n; i++) {
                if (strcmp(rows[i].status, "ok") != 0 || strcmp(rows[i].method, methods[m]) != 0 || !dp_report_filter_match(&rows[i], filter)) continue;
                json_t *gv = json_string(rows[i].graph);
                dp_report_value_label_in("graph", gv, NULL, plabels, glab, sizeof glab);
                json_decref(gv);
                if (strcmp(glab, graphs[gi]) != 0) continue;
                double x = dp_report_metric(&rows[i], xmetric, &kx), y = dp_report_metric(&rows[i], ymetric, &ky);
                if (isnan(x) || isnan(y) || (log_x && !(x > 0)) || (log_y && !(y > 0))) continue;
                fprintf(d, "%.10g %.10g\n", x, y);
                if (x < xr[0]) xr[0] = x;
                if (x > xr[1]) xr[1] = x;
                if (y < yr[0]) yr[0] = y;
                if (y > yr[1]) yr[1] = y;
                written++;
            }
            if (written) {
                fprintf(d, "\n\n");
                has[(size_t)gi * nm + m] = 1;
            }
        }
    fclose(d);
    FILE *f = p.script;
    axis_label(ux, nux, xmetric, xl, sizeof xl);
    axis_label(uy, nuy, ymetric, yl, sizeof yl);
    /* y = x means something only when both axes are in one and the same unit */
    const int same_unit = nux == 1 && nuy == 1 && ux[0][0] && strcmp(ux[0], uy[0]) == 0 && log_x == log_y;
    if (o && o->title && *o->title) snprintf(title, sizeof title, "%s", o->title);
    else snprintf(title, sizeof title, "%s against %s: %ld runs, %d graph%s, %d method%s%s", ymetric, xmetric, points, ng,
                  ng == 1 ? "" : "s", nm, nm == 1 ? "" : "s", same_unit ? " (dashed: y = x)" : "");
    fprintf(f, "set title ");
    gp_str(f, title);
    fprintf(f, "\nset xlabel ");
    gp_str(f, xl);
    fprintf(f, "\nset ylabel ");
    gp_str(f, yl);
    fprintf(f, "\nset grid lc rgb '#dddddd'\nset key outside right top spacing 1.1\nset border 3\nset xtics nomirror\nset ytics nomirror\n");
    if (log_x) fprintf(f, "set logscale x\nset format x '%%g'\n");
    if (log_y) fprintf(f, "set logscale y\nset format y '%%g'\n");
    if (log_x) log_tics(f, 'x', xr[0], xr[1]);
    if (log_y) log_tics(f, 'y', yr[0], yr[1]);
    if (same_unit) {
        double a = log_x ? lo / 1.15 : lo - ((hi - lo) * 0.05 + (hi == lo ? fabs(hi) * 0.05 + 1e-12 : 0));
        double b = log_x ? hi * 1.15 : hi + ((hi - lo) * 0.05 + (hi == lo ? fabs(hi) * 0.05 + 1e-12 : 0));
        fprintf(f, "set xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\nset size ratio -1\n", a, b, a, b);
        fprintf(f, "set arrow from %.10g,%.10g to %.10g,%.10g nohead dt 2 lc rgb '#888888'\n", a, a, b, b);
    } else {
        /* each axis its own range, a margin around the points */
        fprintf(f, "set autoscale xfix\nset autoscale yfix\nset offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n");
    }
    fprintf(f, "plot ");
    int k = 0;
    for (int gi = 0; gi < ng; gi++)
        for (int m = 0; m < nm; m++) {
            if (!has[(size_t)gi * nm + m]) continue;
            fprintf(f, "%s'%s/data.dat' index %d using 1:2 with points pt %d ps 1.3 lc rgb '%s' notitle", k ? ", \\\n     " : "", p.dir,
                    k, 5 + 2 * (m % 4) + (m >= 4), plot_colours[gi % N_PLOT_COLOURS]);
            k++;
        }
    free(has);
    /* the legend: a colour per graph, a symbol per method */
    fprintf(f, ", \\\n     NaN with points ps 0 lc rgb 'white' title 'graphs (colour):'");
    for (int gi = 0; gi < ng; gi++) {
        fprintf(f, ", \\\n     NaN with points pt 5 ps 1.3 lc rgb '%s' title ", plot_colours[gi % N_PLOT_COLOURS]);
        gp_str(f, graphs[gi]);
    }
    fprintf(f, ", \\\n     NaN with points ps 0 lc rgb 'white' title 'methods (symbol):'");
    for (int m = 0; m < nm; m++) {
        fprintf(f, ", \\\n     NaN with points pt %d ps 1.3 lc rgb '#333333' title ", 5 + 2 * (m % 4) + (m >= 4));
        gp_str(f, methods[m]);
    }
    fputc('\n', f);
    rc = plot_end(&p, err);
out:
    json_decref(plabels);
    dp_report_list_free(graphs, ng);
    dp_report_list_free(methods, nm);
    dp_report_list_free(ux, nux);
    dp_report_list_free(uy, nuy);
    return rc;
}

int dp_report_plot_learning(const char *trajectory, const dp_report_plot_opts *o, const char *out, dp_error *err)
{
    /* the one reader of the trajectory layout (dp_h5io.h) */
    dp_h5io_traj t;
    int rc = dp_h5io_traj_read(trajectory, &t, err);
    if (rc != DP_OK) return rc;
    long n = t.n_episodes, nv = t.n_evaluations;
    const char *unit = t.time_unit, *gname = t.graph;
    plot p;
    FILE *d = NULL;
    p.dir[0] = '\0';
    if (n == 0) { rc = dp_error_set(err, DP_EINVAL, "%s: no episode yet", trajectory); goto out; }
    int window = o ? o->window : 0;
    if (window < 1) window = n >= 200 ? (int)(n / 50) : 1;
    if ((rc = plot_begin(&p, out, 1100, 760, err)) != DP_OK) { if (p.dir[0]) plot_cleanup(&p); goto out; }
    if (!(d = plot_data(&p, "data.dat"))) { plot_abort(&p); rc = dp_error_set(err, DP_EIO, "cannot write plot data"); goto out; }
    /* one block per stage (in order of appearance): episode (global), makespan, moving mean */
    static const char *names[] = {"Stage I (imitation)", "Stage II (simulator RL)", "Stage III (real RL)"};
    /* the improvement method's trajectory (its config's "method"): one stage of REINFORCE on
     * moves, its evaluations search scores, not greedy placements (the legend said "Stage II" and
     * "greedy placement" of them: a walkthrough) */
    int improve = 0;
    {
        json_t *cj = t.config_json ? json_loads(t.config_json, 0, NULL) : NULL;
        const char *mth = json_string_value(json_object_get(cj, "method"));
        improve = mth && strcmp(mth, "improve") == 0;
        json_decref(cj);
    }
    int stages[8], n_st = 0;
    long first_row[8];
    for (long i = 0; i < n; i++) {
        int s = t.episodes[i].stage, k;
        for (k = 0; k < n_st; k++) if (stages[k] == s) break;
        if (k == n_st && n_st < 8) { first_row[n_st] = i; stages[n_st++] = s; }
    }
    double *prefix = dp_alloc_malloc_n((size_t)n + 1, sizeof(double));
    if (!prefix) { fclose(d); plot_abort(&p); rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto out; }
    for (int k = 0; k < n_st; k++) {
        /* trailing mean over the stage's last `window` episodes, from a prefix sum */
        long m = 0;
        prefix[0] = 0;
        for (long i = 0; i < n; i++) {
            if (t.episodes[i].stage != stages[k]) continue;
            double ms = t.episodes[i].makespan;
            prefix[m + 1] = prefix[m] + ms;
            m++;
            long lo = m > window ? m - window : 0;
            fprintf(d, "%ld %.10g %.10g\n", i, ms, (prefix[m] - prefix[lo]) / (double)(m - lo));
        }
        fprintf(d, "\n\n");
    }
    free(prefix);
    /* the evaluations, at the episode (counted over all stages) where each ran: one block */
    long n_ev = 0;
    for (long j = 0; j < nv; j++) {
        int k;
        const dp_h5io_traj_eval *ev = &t.evaluations[j];
        for (k = 0; k < n_st; k++) if (stages[k] == ev->stage) break;
        long x = k < n_st ? first_row[k] + (long)ev->episode : (long)ev->episode;
        fprintf(d, "%ld %.10g\n", x, ev->makespan);
        n_ev++;
    }
    fprintf(d, "\n\n");
    fclose(d);
    FILE *g = p.script;
    char title[1024];
    if (o && o->title && *o->title) snprintf(title, sizeof title, "%s", o->title);
    else snprintf(title, sizeof title, "Learning curve%s%s (%s)", gname[0] ? " on " : "", gname, trajectory);
    fprintf(g, "set title ");
    gp_str(g, title);
    char yl[300];
    snprintf(yl, sizeof yl, "makespan%s%s%s, lower is better", unit[0] ? " (" : "", unit, unit[0] ? ")" : "");
    fprintf(g, "\nset xlabel '%s'\nset ylabel ", improve ? "training episode" : "training episode (all stages in order)");
    gp_str(g, yl);
    fprintf(g, "\nset grid lc rgb '#dddddd'\nset key below horizontal maxcols 3 spacing 1.1 height 1\nset border 3\nset xtics nomirror\nset ytics nomirror\n");
    fprintf(g, "set xrange [0:%ld]\nset offsets 0, 0, graph 0.04, graph 0.04\n", n);
    static const char *colours[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b"};
    fprintf(g, "plot ");
    for (int k = 0; k < n_st; k++) {
        const char *nm = improve ? "improvement policy (REINFORCE on moves)"
                         : stages[k] >= 0 && stages[k] < 3 ? names[stages[k]] : "stage";
        char t1[160], t2[160];
        if (window > 1) {
            snprintf(t1, sizeof t1, "%s: each episode", nm);
            snprintf(t2, sizeof t2, "%s: mean of the last %d episodes", nm, window);
            fprintf(g, "%s'%s/data.dat' index %d using 1:2 with points pt 7 ps 0.3 lc rgb '%s' title ", k ? ", \\\n     " : "", p.dir,
                    k, colours[k % 4]);
            gp_str(g, t1);
            fprintf(g, ", \\\n     '%s/data.dat' index %d using 1:3 with lines lw 2 lc rgb '%s' title ", p.dir, k, colours[k % 4]);
            gp_str(g, t2);
        } else {
            /* a mean of one episode is the episode: one series, said as such ("mean of 1") */
            snprintf(t1, sizeof t1, "%s: each episode", nm);
            fprintf(g, "%s'%s/data.dat' index %d using 1:2 with linespoints pt 7 ps 0.5 lw 1 lc rgb '%s' title ", k ? ", \\\n     " : "",
                    p.dir, k, colours[k % 4]);
            gp_str(g, t1);
        }
    }
    if (n_ev) {
        /* a few evaluations far apart joined by a line drew a trend nobody measured (three of
         * them: a straight descent over 100 episodes): markers alone then */
        char t3[160];
        const char *what = improve ? "search score (validation mean)" : "greedy placement";
        if (n_ev == 1) snprintf(t3, sizeof t3, "%s at the one model-selection evaluation", what);
        else snprintf(t3, sizeof t3, "%s at %s %ld model-selection evaluations", what,
                      n_ev >= DP_REPORT_LEARNING_JOIN ? "each of the" : "the", n_ev);
        fprintf(g, ", \\\n     '%s/data.dat' index %d using 1:2 with %s pt 6 ps 1.5 lw 1.5 lc rgb '#000000' title ", p.dir, n_st,
                n_ev >= DP_REPORT_LEARNING_JOIN ? "linespoints" : "points");
        gp_str(g, t3);
    }
    /* reference lines, in the trajectory's unit */
    /* dark colours and dashes apart from each other and from the stages' colours: the pale
     * dotted round-robin line was hard to find */
    static const char *ref_colours[] = {"#8c510a", "#762a83", "#01665e", "#b8860b", "#555555"};
    static const int ref_dash[] = {2, 4, 5, 3, 2};
    for (int r = 0; o && r < o->n_refs; r++) {
        if (!isfinite(o->refs[r].value)) continue;
        char lab[600], v[40], w[40];
        dp_report_fmt_g(o->refs[r].value, 4, v, sizeof v);
        /* references that print the same (cp and round-robin at 84.18 on FFNN) are one line under
         * one label naming them all: two dashed lines on top of each other read as one, and
         * the legend had a line that could not be found */
        int drawn = 0;
        for (int q = 0; q < r && !drawn; q++) {
            dp_report_fmt_g(o->refs[q].value, 4, w, sizeof w);
            drawn = isfinite(o->refs[q].value) && strcmp(v, w) == 0;
        }
        if (drawn) continue;
        snprintf(lab, sizeof lab, "%s", o->refs[r].label);
        for (int q = r + 1; q < o->n_refs; q++) {
            dp_report_fmt_g(o->refs[q].value, 4, w, sizeof w);
            if (isfinite(o->refs[q].value) && strcmp(v, w) == 0)
                snprintf(lab + strlen(lab), sizeof lab - strlen(lab), " and %s", o->refs[q].label);
        }
        snprintf(lab + strlen(lab), sizeof lab - strlen(lab), " (%s)", v);
        fprintf(g, ", \\\n     %.10g with lines dt %d lw 2 lc rgb '%s' title ", o->refs[r].value, ref_dash[r % 5], ref_colours[r % 5]);
        gp_str(g, lab);
    }
    fputc('\n', g);
    rc = plot_end(&p, err);
out:
    dp_h5io_traj_free(&t);
    return rc;
}
