/* dp_hetero.c: readers for the heterogeneous HEFT examples (see dp_hetero.h). */
#include "dp_hetero.h"
#include "dp_alloc.h"
#include "dp_file.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for a label or token in a message, shown with its control bytes escaped (dp_error_visible:
 * a label holding ESC [ 3 1 m or a carriage return was echoed raw, into the user's terminal). */
#define SHOWN 160

/* Largest processor count accepted (as dp_cost_graph). */
#define HETERO_MAX_PROCS 4096

/* ---------------- shared: build the graph and the cost tables ---------------- */

/* The parsed problem before it becomes a dp_graph: n tasks with names, P processors,
 * w (n x P), edges (src, dst, data), rate (P x P; <= 0 on the diagonal), startup (P). */
typedef struct problem {
    int n, P, m;
    char **name;
    double *w;
    int *esrc, *edst;
    double *edata;
    double *rate;
    double *startup;
} problem;

static void problem_free(problem *p)
{
    if (p->name)
        for (int i = 0; i < p->n; i++) free(p->name[i]);
    free(p->name); free(p->w); free(p->esrc); free(p->edst); free(p->edata);
    free(p->rate); free(p->startup);
    memset(p, 0, sizeof *p);
}

static int problem_alloc(problem *p, int n, int P, int max_edges)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->P = P;
    p->name = dp_alloc_calloc_n(n, sizeof(char *));
    p->w = dp_alloc_malloc_n((size_t)n * P, sizeof(double));
    p->esrc = dp_alloc_malloc_n(max_edges > 0 ? max_edges : 1, sizeof(int));
    p->edst = dp_alloc_malloc_n(max_edges > 0 ? max_edges : 1, sizeof(int));
    p->edata = dp_alloc_malloc_n(max_edges > 0 ? max_edges : 1, sizeof(double));
    p->rate = dp_alloc_malloc_n((size_t)P * P, sizeof(double));
    p->startup = dp_alloc_calloc_n(P, sizeof(double));
    if (!p->name || !p->w || !p->esrc || !p->edst || !p->edata || !p->rate || !p->startup) {
        problem_free(p);
        return DP_ENOMEM;
    }
    for (size_t k = 0; k < (size_t)P * P; k++) p->rate[k] = 0;
    return DP_OK;
}

/* The graph and cost tables of p, read from path (the graph's source). The tables are checked
 * as every machine's are (dp_cost_check, as dp_machine_costs does): an example whose makespans
 * could be inf or overflow (a transfer rate of 1e-300) is refused here, where graph info printed
 * "critical path: 5e+300" and place refused it. transfers names the files that give the
 * transfers (data volumes and rates), for the message. */
static int problem_build(problem *p, const char *path, const char *transfers, dp_graph **gout, dp_cost **cout,
                         dp_error *err)
{
    const char *stem = dp_file_path_stem(path);
    char name[256];
    snprintf(name, sizeof name, "%s", stem);
    char *dot = strrchr(name, '.');
    if (dot) *dot = '\0';
    dp_graph_builder *b = dp_graph_builder_alloc(name, path, DP_GRAPH_COST_TIME);
    if (!b) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    dp_graph_builder_set_time_unit(b, 1.0, "time units of the example");
    /* each task's output size: its largest outgoing data volume (one pass over the edges; a scan
     * per task made reading O(V E)) */
    double *out = dp_alloc_calloc_n((size_t)p->n + 1, sizeof(double));
    if (!out) {
        dp_graph_builder_free(b);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
    }
    for (int e = 0; e < p->m; e++)
        if (p->edata[e] > out[p->esrc[e]]) out[p->esrc[e]] = p->edata[e];
    for (int v = 0; v < p->n; v++) {
        double s = 0;
        for (int q = 0; q < p->P; q++) s += p->w[(size_t)v * p->P + q];
        if (dp_graph_builder_add_op(b, p->name[v], "task", s / p->P, out[v]) < 0) {
            free(out);
            dp_graph_builder_free(b);
            return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
        }
    }
    free(out);
    for (int e = 0; e < p->m; e++)
        if (dp_graph_builder_add_edge(b, p->esrc[e], p->edst[e], p->edata[e]) < 0) {
            dp_graph_builder_free(b);
            return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
        }
    dp_graph *g = dp_graph_builder_finish(b, err);
    dp_graph_builder_free(b);
    if (!g) return err ? err->code : DP_EINVAL;
    dp_cost *c = dp_cost_alloc(g, p->P);
    if (!c) {
        dp_graph_free(g);
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory for the cost tables", path);
    }
    /* op times: the graph keeps op ids in insertion order */
    memcpy(c->op_time, p->w, (size_t)p->n * p->P * sizeof(double));
    /* edge ids are renumbered into CSR order: take each edge's data from the graph */
    memcpy(c->edge_data, g->edge_size, (size_t)g->n_edges * sizeof(double));
    for (int a = 0; a < p->P; a++)
        for (int q = 0; q < p->P; q++) {
            size_t k = (size_t)a * p->P + q;
            if (a == q) { c->latency[k] = 0; c->inv_bw[k] = 1; continue; }
            c->inv_bw[k] = 1.0 / p->rate[k];
            c->latency[k] = p->startup[a];
        }
    dp_cost_update_homogeneous(c);
    dp_cost_part part;
    int rc = dp_cost_check(g, c, &part, err);
    if (rc != DP_OK) {
        if (err && part != DP_COST_PART_NONE) {
            char msg[DP_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            const char *from = part == DP_COST_PART_OP ? path : transfers;
            int other = strcmp(from, path) != 0; /* the file is named already */
            dp_error_set(err, rc, "%s; the example's %s%s%s are out of range", msg,
                         part == DP_COST_PART_OP ? "computation costs" : "transfers (data volumes and rates)",
                         other ? " in " : "", other ? from : "");
        }
        dp_cost_free(c);
        dp_graph_free(g);
        return rc;
    }
    *gout = g;
    *cout = c;
    return DP_OK;
}

/* 1 when s is a decimal number: [+-] digits [. digits] [(e|E) [+-] digits], a digit on at least
 * one side of the point. strtod reads more (hexadecimal "0x2" and "0x1p3", "inf", "nan"), which
 * the other text readers (DOPPLER, STG) and JSON do not. */
static int decimal_syntax(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    int digits = 0;
    if (*p == '+' || *p == '-') p++;
    for (; isdigit(*p); p++) digits++;
    if (*p == '.')
        for (p++; isdigit(*p); p++) digits++;
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit(*p)) return 0;
        while (isdigit(*p)) p++;
    }
    return *p == '\0';
}

/* A decimal number (decimal_syntax) that a double holds: one beyond DBL_MAX is refused; one
 * below the normal range is read as the subnormal (or 0) strtod gives, with its ERANGE ("1e-308"
 * was refused as not a number). */
static int parse_number(const char *s, double *out)
{
    if (!decimal_syntax(s)) return -1;
    char *end;
    double x = strtod(s, &end);
    if (*end != '\0' || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

/* ---------------- the .in format ---------------- */

typedef struct tokens {
    const char *path;
    char *text;
    size_t pos, size;
    int line;       /* line of the last token read */
    char tok[128];
} tokens;

/* Next white-space separated token into t->tok; 0 at end of file, -1 when too long. */
static int next_token(tokens *t)
{
    while (t->pos < t->size && isspace((unsigned char)t->text[t->pos])) {
        if (t->text[t->pos] == '\n') t->line++;
        t->pos++;
    }
    if (t->pos >= t->size) return 0;
    size_t k = 0;
    while (t->pos < t->size && !isspace((unsigned char)t->text[t->pos])) {
        if (k + 1 >= sizeof t->tok) return -1;
        t->tok[k++] = t->text[t->pos++];
    }
    t->tok[k] = '\0';
    return 1;
}

static int read_num(tokens *t, const char *what, double *out, dp_error *err)
{
    int r = next_token(t);
    if (r == 0) return dp_error_set(err, DP_EINVAL, "%s:%d: unexpected end of file: expected %s", t->path, t->line, what);
    if (r < 0) return dp_error_set(err, DP_EINVAL, "%s:%d: token too long where %s was expected", t->path, t->line, what);
    char shown[SHOWN];
    if (parse_number(t->tok, out) != 0)
        return dp_error_set(err, DP_EINVAL, "%s:%d: expected %s, found '%s'", t->path, t->line, what,
                            dp_error_visible(t->tok, shown, sizeof shown));
    return DP_OK;
}

static int read_count(tokens *t, const char *what, long lo, long hi, int *out, dp_error *err)
{
    double x;
    int rc = read_num(t, what, &x, err);
    if (rc != DP_OK) return rc;
    if (x != floor(x) || x < lo || x > hi)
        return dp_error_set(err, DP_EINVAL, "%s:%d: %s must be an integer in %ld..%ld, found '%s'",
                            t->path, t->line, what, lo, hi, t->tok);
    *out = (int)x;
    return DP_OK;
}

int dp_hetero_read_in(const char *path, dp_graph **gout, dp_cost **cout, dp_error *err)
{
    *gout = NULL;
    *cout = NULL;
    tokens t = {path, NULL, 0, 0, 1, ""};
    t.text = dp_file_read_text(path, &t.size, err);
    if (!t.text) return err ? err->code : DP_EIO;
    problem p;
    memset(&p, 0, sizeof p);
    int V, E, P, rc;
    if ((rc = read_count(&t, "the task count V", 1, DP_GRAPH_MAX_ELEMS, &V, err)) != DP_OK) goto done;
    if ((rc = read_count(&t, "the edge count E", 0, DP_GRAPH_MAX_ELEMS, &E, err)) != DP_OK) goto done;
    if ((rc = read_count(&t, "the processor count P", 1, HETERO_MAX_PROCS, &P, err)) != DP_OK) goto done;
    if ((size_t)V * (size_t)P > DP_GRAPH_MAX_ELEMS) {
        rc = dp_error_set(err, DP_ENOMEM, "%s: %d tasks x %d processors is too large", path, V, P);
        goto done;
    }
    {
        /* The counts come first and allocation follows them: a 26-byte file claiming 2e8 tasks
         * made the reader allocate gigabytes (found by fuzz_hetero_in). Every edge triple, cost and
         * rate triple is a number of at least one digit and a separator in the file. (Small
         * counts go on: the read then names the line where the file ends.) */
        double numbers = 3.0 * E + (double)V * P + 1.5 * (double)P * (P - 1);
        if (numbers > 65536 && 2 * numbers - 1 > (double)t.size) {
            rc = dp_error_set(err, DP_EINVAL, "%s: %d tasks, %d edges and %d processors need %.0f more numbers, "
                              "more than the rest of this %zu-byte file holds (truncated, or wrong counts)",
                              path, V, E, P, numbers, t.size);
            goto done;
        }
        if ((rc = dp_file_mem_check(path, "the task graph", (double)V * (16.0 * P + 400.0) + 100.0 * E, err)) != DP_OK) goto done;
    }
    if (problem_alloc(&p, V, P, E) != DP_OK) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    for (int v = 0; v < V; v++) {
        char nm[24];
        snprintf(nm, sizeof nm, "%d", v + 1);
        p.name[v] = dp_alloc_strdup(nm);
        if (!p.name[v]) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    }
    for (int e = 0; e < E; e++) {
        int a, b;
        double data;
        char what[64];
        snprintf(what, sizeof what, "the source task of edge %d", e + 1);
        if ((rc = read_count(&t, what, 1, V, &a, err)) != DP_OK) goto done;
        snprintf(what, sizeof what, "the target task of edge %d", e + 1);
        if ((rc = read_count(&t, what, 1, V, &b, err)) != DP_OK) goto done;
        snprintf(what, sizeof what, "the data volume of edge %d", e + 1);
        if ((rc = read_num(&t, what, &data, err)) != DP_OK) goto done;
        if (data < 0) { rc = dp_error_set(err, DP_EINVAL, "%s:%d: edge %d -> %d: negative data volume", path, t.line, a, b); goto done; }
        p.esrc[e] = a - 1;
        p.edst[e] = b - 1;
        p.edata[e] = data;
    }
    p.m = E;
    for (int v = 0; v < V; v++)
        for (int q = 0; q < P; q++) {
            char what[80];
            snprintf(what, sizeof what, "the cost of task %d on processor %d", v + 1, q + 1);
            double x;
            if ((rc = read_num(&t, what, &x, err)) != DP_OK) goto done;
            if (x < 0) { rc = dp_error_set(err, DP_EINVAL, "%s:%d: %s is negative", path, t.line, what); goto done; }
            p.w[(size_t)v * P + q] = x;
        }
    for (int k = 0; k < P * (P - 1) / 2; k++) {
        int a, b;
        double r;
        if ((rc = read_count(&t, "a processor id", 1, P, &a, err)) != DP_OK) goto done;
        if ((rc = read_count(&t, "a processor id", 1, P, &b, err)) != DP_OK) goto done;
        if ((rc = read_num(&t, "a transfer rate", &r, err)) != DP_OK) goto done;
        if (a == b) { rc = dp_error_set(err, DP_EINVAL, "%s:%d: rate line names processor %d twice", path, t.line, a); goto done; }
        if (!(r > 0)) { rc = dp_error_set(err, DP_EINVAL, "%s:%d: rate between processors %d and %d must be positive", path, t.line, a, b); goto done; }
        size_t ab = (size_t)(a - 1) * P + (b - 1), ba = (size_t)(b - 1) * P + (a - 1);
        if (p.rate[ab] > 0) { rc = dp_error_set(err, DP_EINVAL, "%s:%d: rate between processors %d and %d given twice", path, t.line, a, b); goto done; }
        p.rate[ab] = p.rate[ba] = r;
    }
    {
        int r = next_token(&t);
        if (r != 0) {
            char shown[SHOWN];
            rc = dp_error_set(err, DP_EINVAL, "%s:%d: extra text after the %d rate lines: '%s'", path, t.line,
                              P * (P - 1) / 2, r > 0 ? dp_error_visible(t.tok, shown, sizeof shown) : "...");
            goto done;
        }
    }
    rc = problem_build(&p, path, path, gout, cout, err);
done:
    problem_free(&p);
    free(t.text);
    return rc;
}

/* ---------------- CSV ---------------- */

typedef struct csv {
    char *text;
    int n_rows;
    int *n_fields;   /* per row */
    char ***field;   /* per row, trimmed fields pointing into text */
    int *line;       /* file line of each row */
} csv;

static void csv_free(csv *t)
{
    if (t->field)
        for (int r = 0; r < t->n_rows; r++) free(t->field[r]);
    free(t->field); free(t->n_fields); free(t->line); free(t->text);
    memset(t, 0, sizeof *t);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    size_t k = strlen(s);
    while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t' || s[k - 1] == '\r')) s[--k] = '\0';
    return s;
}

/* Split a file into non-blank rows of comma-separated, trimmed fields. */
static int csv_read(const char *path, csv *t, dp_error *err)
{
    memset(t, 0, sizeof *t);
    size_t size;
    t->text = dp_file_read_text(path, &size, err);
    if (!t->text) return err ? err->code : DP_EIO;
    size_t nl = 1;
    for (size_t i = 0; i < size; i++) if (t->text[i] == '\n') nl++;
    t->n_fields = dp_alloc_malloc_n(nl, sizeof(int));
    t->field = dp_alloc_calloc_n(nl, sizeof(char **));
    t->line = dp_alloc_malloc_n(nl, sizeof(int));
    if (!t->n_fields || !t->field || !t->line) { csv_free(t); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); }
    char *s = t->text;
    int lineno = 0;
    while (s) {
        lineno++;
        char *eol = strchr(s, '\n');
        if (eol) *eol = '\0';
        char *row = trim(s);
        if (*row) {
            int nf = 1;
            for (char *q = row; *q; q++) if (*q == ',') nf++;
            char **f = dp_alloc_malloc_n(nf, sizeof(char *));
            if (!f) { csv_free(t); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); }
            int k = 0;
            char *q = row;
            for (;;) {
                char *comma = strchr(q, ',');
                if (comma) *comma = '\0';
                f[k++] = trim(q);
                if (!comma) break;
                q = comma + 1;
            }
            t->field[t->n_rows] = f;
            t->n_fields[t->n_rows] = nf;
            t->line[t->n_rows] = lineno;
            t->n_rows++;
        }
        s = eol ? eol + 1 : NULL;
    }
    return DP_OK;
}

/* A numeric cell, or an error naming file, line and column. */
static int csv_cell(const csv *t, const char *path, int r, int col, double *out, dp_error *err)
{
    if (col >= t->n_fields[r])
        return dp_error_set(err, DP_EINVAL, "%s:%d: row has %d fields, expected at least %d", path, t->line[r],
                            t->n_fields[r], col + 1);
    char shown[SHOWN];
    if (parse_number(t->field[r][col], out) != 0)
        return dp_error_set(err, DP_EINVAL, "%s:%d: field %d: expected a number, found '%s'", path, t->line[r], col + 1,
                            dp_error_visible(t->field[r][col], shown, sizeof shown));
    if (*out < 0)
        return dp_error_set(err, DP_EINVAL, "%s:%d: field %d: negative value %s", path, t->line[r], col + 1, t->field[r][col]);
    return DP_OK;
}

/* 1 when two labels name the same task or processor: equal once their underscores and double
 * quotes are dropped. The published files spell one task both ways (canonicalgraph_task_exe_time.csv
 * "T_0", canonicalgraph_task_connectivity.csv "T0"); a file written with its labels quoted (R's
 * write.csv) beside one without is the same machine (the reader keeps a field's quotes: "\"T0\""
 * was refused against T_0, a review). */
static int same_label(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_' || *a == '"') a++;
        while (*b == '_' || *b == '"') b++;
        if (*a != *b) return 0;
        if (!*a) return 1;
        a++;
        b++;
    }
}

/* The header row's labels (from column 1) and the first column's (rows 1..n) of matrix t (path)
 * against want[0..n-1] (from the execution-time file, what): a matrix is read by position, so a
 * label in another order or of another name is an error naming the file, line and label. */
static int check_labels(const csv *t, const char *path, char *const *want, int n, const char *what,
                        const char *want_path, dp_error *err)
{
    char got[SHOWN], exp[SHOWN];
    for (int i = 0; i < n; i++) {
        if (!same_label(t->field[0][i + 1], want[i]))
            return dp_error_set(err, DP_EINVAL, "%s:%d: column %d is labelled \"%s\", expected %s %d's label \"%s\" "
                                "(as in %s)", path, t->line[0], i + 2, dp_error_visible(t->field[0][i + 1], got, sizeof got),
                                what, i, dp_error_visible(want[i], exp, sizeof exp), want_path);
        if (!same_label(t->field[i + 1][0], want[i]))
            return dp_error_set(err, DP_EINVAL, "%s:%d: row labelled \"%s\", expected %s %d's label \"%s\" (as in %s)", path,
                                t->line[i + 1], dp_error_visible(t->field[i + 1][0], got, sizeof got), what, i,
                                dp_error_visible(want[i], exp, sizeof exp), want_path);
    }
    return DP_OK;
}

int dp_hetero_read_csv(const char *exe_path, const char *conn_path, const char *bw_path,
                       dp_graph **gout, dp_cost **cout, dp_error *err)
{
    *gout = NULL;
    *cout = NULL;
    csv ex, cn, bw;
    memset(&bw, 0, sizeof bw);
    memset(&cn, 0, sizeof cn);
    problem p;
    memset(&p, 0, sizeof p);
    int rc = csv_read(exe_path, &ex, err);
    if (rc != DP_OK) return rc;
    if ((rc = csv_read(conn_path, &cn, err)) != DP_OK) goto done;
    if (bw_path && (rc = csv_read(bw_path, &bw, err)) != DP_OK) goto done;

    if (ex.n_rows < 2) { rc = dp_error_set(err, DP_EINVAL, "%s: expected a header row and at least one task row", exe_path); goto done; }
    int P = ex.n_fields[0] - 1, n = ex.n_rows - 1;
    if (P < 1 || P > HETERO_MAX_PROCS) {
        rc = dp_error_set(err, DP_EINVAL, "%s:%d: the header must name 1..%d processors after the first column", exe_path,
                          ex.line[0], HETERO_MAX_PROCS);
        goto done;
    }
    if (cn.n_rows != n + 1) {
        rc = dp_error_set(err, DP_EINVAL, "%s: %d matrix rows for %d tasks in %s", conn_path, cn.n_rows - 1, n, exe_path);
        goto done;
    }
    if ((size_t)n * n > DP_GRAPH_MAX_ELEMS) { rc = dp_error_set(err, DP_ENOMEM, "%s: too many tasks", exe_path); goto done; }
    int max_edges = n * n;
    if (problem_alloc(&p, n, P, max_edges) != DP_OK) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", exe_path); goto done; }
    for (int v = 0; v < n; v++) {
        int r = v + 1;
        if (ex.n_fields[r] != P + 1) {
            rc = dp_error_set(err, DP_EINVAL, "%s:%d: %d fields, expected %d (label and %d processor costs)", exe_path,
                              ex.line[r], ex.n_fields[r], P + 1, P);
            goto done;
        }
        if (!*ex.field[r][0]) { rc = dp_error_set(err, DP_EINVAL, "%s:%d: empty task label", exe_path, ex.line[r]); goto done; }
        p.name[v] = dp_alloc_strdup(ex.field[r][0]);
        if (!p.name[v]) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", exe_path); goto done; }
        for (int q = 0; q < P; q++)
            if ((rc = csv_cell(&ex, exe_path, r, q + 1, &p.w[(size_t)v * P + q], err)) != DP_OK) goto done;
    }
    if (cn.n_fields[0] != n + 1) {
        rc = dp_error_set(err, DP_EINVAL, "%s:%d: header has %d fields, expected %d (corner and %d tasks)", conn_path,
                          cn.line[0], cn.n_fields[0], n + 1, n);
        goto done;
    }
    if ((rc = check_labels(&cn, conn_path, p.name, n, "task", exe_path, err)) != DP_OK) goto done;
    for (int i = 0; i < n; i++) {
        int r = i + 1;
        if (cn.n_fields[r] != n + 1) {
            rc = dp_error_set(err, DP_EINVAL, "%s:%d: %d fields, expected %d", conn_path, cn.line[r], cn.n_fields[r], n + 1);
            goto done;
        }
        for (int j = 0; j < n; j++) {
            double x;
            if ((rc = csv_cell(&cn, conn_path, r, j + 1, &x, err)) != DP_OK) goto done;
            if (x > 0) {
                if (i == j) {
                    char shown[SHOWN];
                    rc = dp_error_set(err, DP_EINVAL, "%s:%d: task %s has an edge to itself", conn_path, cn.line[r],
                                      dp_error_visible(p.name[i], shown, sizeof shown));
                    goto done;
                }
                p.esrc[p.m] = i;
                p.edst[p.m] = j;
                p.edata[p.m] = x;
                p.m++;
            }
        }
    }
    for (int a = 0; a < P; a++)
        for (int q = 0; q < P; q++) p.rate[(size_t)a * P + q] = a == q ? 0 : 1;
    if (bw_path) {
        if (bw.n_rows < P + 1 || bw.n_rows > P + 2) {
            rc = dp_error_set(err, DP_EINVAL, "%s: %d rows after the header; expected %d (one per processor) and an "
                              "optional Startup row", bw_path, bw.n_rows - 1, P);
            goto done;
        }
        if (bw.n_fields[0] != P + 1) {
            rc = dp_error_set(err, DP_EINVAL, "%s:%d: header has %d fields, expected %d (corner and %d processors)", bw_path,
                              bw.line[0], bw.n_fields[0], P + 1, P);
            goto done;
        }
        if ((rc = check_labels(&bw, bw_path, ex.field[0] + 1, P, "processor", exe_path, err)) != DP_OK) goto done;
        for (int a = 0; a < P; a++) {
            int r = a + 1;
            if (bw.n_fields[r] != P + 1) {
                rc = dp_error_set(err, DP_EINVAL, "%s:%d: %d fields, expected %d", bw_path, bw.line[r], bw.n_fields[r], P + 1);
                goto done;
            }
            for (int q = 0; q < P; q++) {
                double x;
                if ((rc = csv_cell(&bw, bw_path, r, q + 1, &x, err)) != DP_OK) goto done;
                if (a != q && !(x > 0)) {
                    rc = dp_error_set(err, DP_EINVAL, "%s:%d: rate from processor %d to %d must be positive", bw_path,
                                      bw.line[r], a, q);
                    goto done;
                }
                p.rate[(size_t)a * P + q] = a == q ? 0 : x;
            }
        }
        if (bw.n_rows == P + 2) {
            int r = P + 1;
            if (strcmp(bw.field[r][0], "Startup") != 0 || bw.n_fields[r] != P + 1) {
                rc = dp_error_set(err, DP_EINVAL, "%s:%d: expected \"Startup\" and %d start-up costs", bw_path, bw.line[r], P);
                goto done;
            }
            for (int q = 0; q < P; q++)
                if ((rc = csv_cell(&bw, bw_path, r, q + 1, &p.startup[q], err)) != DP_OK) goto done;
        }
    }
    char transfers[2 * DP_ERROR_MSG_MAX];
    snprintf(transfers, sizeof transfers, "%s%s%s", conn_path, bw_path ? " and " : "", bw_path ? bw_path : "");
    rc = problem_build(&p, exe_path, transfers, gout, cout, err);
done:
    problem_free(&p);
    csv_free(&ex);
    csv_free(&cn);
    csv_free(&bw);
    return rc;
}

/* ---------------- dispatch ---------------- */

static const char CSV_EXE_SUFFIX[] = "_task_exe_time.csv";

int dp_hetero_is_hetero_path(const char *path)
{
    return dp_graph_hetero_format(path, NULL) != NULL;
}

int dp_hetero_read(const char *path, dp_graph **g, dp_cost **c, dp_error *err)
{
    *g = NULL;
    *c = NULL;
    const char *h = dp_graph_hetero_format(path, NULL);
    if (h && strcmp(h, "heft-in") == 0) return dp_hetero_read_in(path, g, c, err);
    if (!h)
        return dp_error_set(err, DP_EINVAL, "%s: not a heterogeneous example (expected FILE.in or PREFIX%s)", path,
                            CSV_EXE_SUFFIX);
    size_t pre = strlen(path) - strlen(CSV_EXE_SUFFIX);
    size_t cap = pre + 64;
    char *conn = dp_alloc_malloc(cap), *bw = dp_alloc_malloc(cap);
    if (!conn || !bw) { free(conn); free(bw); return dp_error_set(err, DP_ENOMEM, "out of memory"); }
    snprintf(conn, cap, "%.*s_task_connectivity.csv", (int)pre, path);
    snprintf(bw, cap, "%.*s_resource_BW.csv", (int)pre, path);
    FILE *f = fopen(bw, "r");
    if (f) fclose(f);
    int rc = dp_hetero_read_csv(path, conn, f ? bw : NULL, g, c, err);
    free(conn);
    free(bw);
    return rc;
}

int dp_hetero_format(const char *path, const char *format)
{
    return dp_graph_hetero_format(path, format) != NULL;
}

int dp_hetero_read_format(const char *path, const char *format, dp_graph **g, dp_cost **c, dp_error *err)
{
    *g = NULL;
    *c = NULL;
    if (format && strcmp(format, "heft-in") == 0) return dp_hetero_read_in(path, g, c, err);
    if (format && strcmp(format, "heft-csv") != 0)
        return dp_error_set(err, DP_EINVAL, "%s: \"%s\" is not a heterogeneous example format (heft-in, heft-csv)", path, format);
    return dp_hetero_read(path, g, c, err);
}
