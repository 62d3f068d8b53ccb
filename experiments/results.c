/* results.c: sweep results in HDF5 and CSV, appended at once and recovered after a kill
 * (see results.h). */
#include "results.h"
#include "dp_json.h"
#include "dp_alloc.h"
#include "dp_file.h"
#include "dp_h5file.h"
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Format 2: strings fixed-length UTF-8 (dp_h5file.h); format 1 held variable-length strings,
 * refused unread. */
#define RESULTS_FORMAT "doppler-results 2"

/* The HDF5 file may lack up to 1/H5_LAG_FRACTION of the rows during a sweep (dp_results_append). */
#define H5_LAG_FRACTION 16

#define COL(n, t, f) {n, t, offsetof(dp_result, f)}

static const dp_result_column columns[] = {
    COL("key", DP_COL_STR, key),
    COL("index", DP_COL_INT, index),
    COL("graph", DP_COL_STR, graph),
    COL("method", DP_COL_STR, method),
    COL("devices", DP_COL_INT, devices),
    COL("topology", DP_COL_STR, topology),
    COL("transfer", DP_COL_STR, transfer),
    COL("mode", DP_COL_STR, mode),
    COL("seed", DP_COL_INT, seed),
    COL("rep", DP_COL_INT, rep),
    COL("status", DP_COL_STR, status),
    COL("makespan", DP_COL_DBL, makespan),
    COL("units", DP_COL_STR, units),
    COL("seconds", DP_COL_DBL, seconds),
    COL("episodes", DP_COL_INT, episodes),
    COL("params", DP_COL_STR, params),
    COL("metrics", DP_COL_STR, metrics),
    COL("assignment", DP_COL_STR, assignment),
    COL("trajectory", DP_COL_STR, trajectory),
    COL("checkpoint", DP_COL_STR, checkpoint),
    COL("error", DP_COL_STR, error),
    COL("finished", DP_COL_STR, finished),
};
#define NCOLS ((int)(sizeof columns / sizeof columns[0]))

const dp_result_column *dp_result_columns(int *n)
{
    if (n) *n = NCOLS;
    return columns;
}

static char **str_field(dp_result *r, int c) { return (char **)((char *)r + columns[c].offset); }
static long *int_field(dp_result *r, int c) { return (long *)((char *)r + columns[c].offset); }
static double *dbl_field(dp_result *r, int c) { return (double *)((char *)r + columns[c].offset); }
static const char *cstr_field(const dp_result *r, int c) { return *(char *const *)((const char *)r + columns[c].offset); }
static long cint_field(const dp_result *r, int c) { return *(const long *)((const char *)r + columns[c].offset); }
static double cdbl_field(const dp_result *r, int c) { return *(const double *)((const char *)r + columns[c].offset); }

static char *xstrdup(const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *d = dp_alloc_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int dp_result_set(char **field, const char *value)
{
    char *d = xstrdup(value);
    if (!d) return DP_ENOMEM;
    free(*field);
    *field = d;
    return DP_OK;
}

int dp_result_init(dp_result *r)
{
    memset(r, 0, sizeof *r);
    for (int c = 0; c < NCOLS; c++)
        if (columns[c].type == DP_COL_STR && !(*str_field(r, c) = xstrdup(""))) { dp_result_free(r); return DP_ENOMEM; }
    r->makespan = NAN;
    return DP_OK;
}

void dp_result_free(dp_result *r)
{
    if (!r) return;
    for (int c = 0; c < NCOLS; c++)
        if (columns[c].type == DP_COL_STR) { free(*str_field(r, c)); *str_field(r, c) = NULL; }
}

int dp_result_copy(dp_result *dst, const dp_result *src)
{
    memcpy(dst, src, sizeof *dst);
    for (int c = 0; c < NCOLS; c++) {
        if (columns[c].type != DP_COL_STR) continue;
        if (!(*str_field(dst, c) = xstrdup(cstr_field(src, c)))) {
            for (int k = 0; k < c; k++) if (columns[k].type == DP_COL_STR) free(*str_field(dst, k));
            return DP_ENOMEM;
        }
    }
    return DP_OK;
}

static const char *param_text(const json_t *params, const char *name, char *buf, size_t cap)
{
    json_t *v = json_object_get(params, name);
    if (!v) return "";
    if (json_is_string(v)) return json_string_value(v);
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    snprintf(buf, cap, "%s", t ? t : "");
    free(t);
    return buf;
}

int dp_result_set_params(dp_result *r, const char *key, long index, const json_t *params)
{
    char *text = dp_sweep_canonical(params);
    if (!text) return DP_ENOMEM;
    free(r->params);
    r->params = text;
    r->index = index;
    char b[64];
    int rc = dp_result_set(&r->key, key);
    rc |= dp_result_set(&r->graph, param_text(params, "graph", b, sizeof b));
    rc |= dp_result_set(&r->method, param_text(params, "method", b, sizeof b));
    rc |= dp_result_set(&r->topology, param_text(params, "topology", b, sizeof b));
    rc |= dp_result_set(&r->transfer, param_text(params, "transfer", b, sizeof b));
    rc |= dp_result_set(&r->mode, param_text(params, "mode", b, sizeof b));
    json_t *v;
    r->devices = json_is_integer(v = json_object_get(params, "devices")) ? (long)json_integer_value(v) : 0;
    r->seed = json_is_integer(v = json_object_get(params, "seed")) ? (long)json_integer_value(v) : DP_RESULT_SEED_DEFAULT;
    r->rep = json_is_integer(v = json_object_get(params, "rep")) ? (long)json_integer_value(v) : 0;
    return rc ? DP_ENOMEM : DP_OK;
}

json_t *dp_result_to_json(const dp_result *r)
{
    json_t *o = json_object();
    if (!o) return NULL;
    for (int c = 0; c < NCOLS; c++) {
        json_t *v;
        if (columns[c].type == DP_COL_STR) v = json_string(cstr_field(r, c));
        else if (columns[c].type == DP_COL_INT) v = json_integer(cint_field(r, c));
        else v = isfinite(cdbl_field(r, c)) ? json_real(cdbl_field(r, c)) : json_null();
        if (!v || json_object_set_new(o, columns[c].name, v) != 0) { json_decref(o); return NULL; }
    }
    return o;
}

int dp_result_from_json(dp_result *r, const json_t *o, dp_error *err)
{
    if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "result: not a JSON object");
    for (int c = 0; c < NCOLS; c++) {
        json_t *v = json_object_get(o, columns[c].name);
        if (!v) return dp_error_set(err, DP_EINVAL, "result: field \"%s\" missing", columns[c].name);
        if (columns[c].type == DP_COL_STR) {
            if (!json_is_string(v)) return dp_error_set(err, DP_EINVAL, "result: field \"%s\" must be a string", columns[c].name);
            if (dp_result_set(str_field(r, c), json_string_value(v)) != DP_OK) return dp_error_set(err, DP_ENOMEM, "out of memory");
        } else if (columns[c].type == DP_COL_INT) {
            if (!json_is_integer(v)) return dp_error_set(err, DP_EINVAL, "result: field \"%s\" must be an integer", columns[c].name);
            *int_field(r, c) = (long)json_integer_value(v);
        } else {
            if (json_is_null(v)) *dbl_field(r, c) = NAN;
            else if (json_is_number(v)) *dbl_field(r, c) = json_number_value(v);
            else return dp_error_set(err, DP_EINVAL, "result: field \"%s\" must be a number", columns[c].name);
        }
    }
    return DP_OK;
}

char *dp_results_csv_path(const char *h5_path)
{
    size_t n = strlen(h5_path);
    char *p = dp_alloc_malloc(n + 5);
    if (!p) return NULL;
    memcpy(p, h5_path, n + 1);
    if (n > 3 && strcmp(h5_path + n - 3, ".h5") == 0) strcpy(p + n - 3, ".csv");
    else strcat(p, ".csv");
    return p;
}

/* ---------------------------------------------------------------- CSV ---- */

/* Shortest text that reads back to the same double. */
static void fmt_double(double x, char *buf, size_t cap)
{
    if (!isfinite(x)) { buf[0] = '\0'; return; }
    dp_json_fmt_exact(x, buf, cap);
}

typedef struct sbuf { char *s; size_t n, cap; int oom; } sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *ns = dp_alloc_realloc(b->s, cap);
        if (!ns) { b->oom = 1; return; }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_csv_field(sbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) { sb_put(b, s, strlen(s)); return; }
    sb_put(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '"') sb_put(b, "\"\"", 2);
        else sb_put(b, p, 1);
    }
    sb_put(b, "\"", 1);
}

static void csv_header(sbuf *b)
{
    for (int c = 0; c < NCOLS; c++) {
        if (c) sb_put(b, ",", 1);
        sb_put(b, columns[c].name, strlen(columns[c].name));
    }
    sb_put(b, "\n", 1);
}

static void csv_line(sbuf *b, const dp_result *r)
{
    char num[40];
    for (int c = 0; c < NCOLS; c++) {
        if (c) sb_put(b, ",", 1);
        if (columns[c].type == DP_COL_STR) sb_csv_field(b, cstr_field(r, c));
        else if (columns[c].type == DP_COL_INT) {
            snprintf(num, sizeof num, "%ld", cint_field(r, c));
            sb_put(b, num, strlen(num));
        } else {
            fmt_double(cdbl_field(r, c), num, sizeof num);
            sb_put(b, num, strlen(num));
        }
    }
    sb_put(b, "\n", 1);
}

int dp_results_write_csv(const char *path, const dp_result *rows, long n, dp_error *err)
{
    sbuf b = {0};
    csv_header(&b);
    for (long i = 0; i < n; i++) csv_line(&b, &rows[i]);
    if (b.oom) { free(b.s); return dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); }
    int rc = dp_file_write_atomic(path, b.s, b.n, err);
    free(b.s);
    return rc;
}

/* What csv_record found. */
enum {
    CSV_OOM = -1,       /* out of memory */
    CSV_END = 0,        /* the end of the text: no record */
    CSV_RECORD = 1,     /* a complete record, ended by a newline */
    CSV_CUT_OFF = 2,    /* the text ends inside the record (no newline after it) */
    CSV_MALFORMED = 3,  /* a character other than a comma or a line end after a quoted field */
};

/* Parse one CSV record starting at text[*pos]: fields into a growing array of malloc'd strings.
 * Returns a CSV_ value; *pos moves past a complete record only; for CSV_MALFORMED *bad is the
 * offset of the character at fault. */
static int csv_record(const char *text, size_t len, size_t *pos, char ***fields, int *nf, int *capf, size_t *bad)
{
    size_t p = *pos;
    *nf = 0;
    if (p >= len) return CSV_END;
    sbuf f = {0};
    for (;;) {
        f.n = 0;
        sb_put(&f, "", 0);
        if (p < len && text[p] == '"') {
            p++;
            for (;;) {
                if (p >= len) { free(f.s); return CSV_CUT_OFF; }
                if (text[p] == '"') {
                    if (p + 1 < len && text[p + 1] == '"') { sb_put(&f, "\"", 1); p += 2; continue; }
                    p++;
                    break;
                }
                sb_put(&f, text + p, 1);
                p++;
            }
        } else {
            size_t q = p;
            while (q < len && text[q] != ',' && text[q] != '\n' && text[q] != '\r') q++;
            sb_put(&f, text + p, q - p);
            p = q;
        }
        if (f.oom) { free(f.s); return CSV_OOM; }
        if (*nf == *capf) {
            int nc = *capf ? *capf * 2 : 32;
            char **nfs = dp_alloc_realloc(*fields, (size_t)nc * sizeof(char *));
            if (!nfs) { free(f.s); return CSV_OOM; }
            *fields = nfs;
            *capf = nc;
        }
        (*fields)[(*nf)++] = xstrdup(f.s ? f.s : "");
        if (p >= len) { free(f.s); return CSV_CUT_OFF; }
        if (text[p] == ',') { p++; continue; }
        if (text[p] == '\r' && p + 1 >= len) { free(f.s); return CSV_CUT_OFF; }
        if (text[p] == '\r' && text[p + 1] == '\n') p++;
        if (text[p] == '\n') {
            p++;
            *pos = p;
            free(f.s);
            return CSV_RECORD;
        }
        free(f.s);
        *bad = p;
        return CSV_MALFORMED;
    }
}

/* The line and column (1-based) of text[off]. */
static void csv_line_col(const char *text, size_t off, long *line, long *col)
{
    *line = 1;
    size_t start = 0;
    for (size_t i = 0; i < off; i++)
        if (text[i] == '\n') { (*line)++; start = i + 1; }
    *col = (long)(off - start) + 1;
}

/* The error for a record csv_record did not return whole (r: CSV_CUT_OFF or CSV_MALFORMED) at
 * text[start]; DP_OK for a torn last line. Only a last line without a final newline is torn (a
 * line the writer's one write() did not finish, when a kill stopped it): the journal's reader
 * drops it. A record cut off in a text that ends with a newline (a quote never closed) or a
 * stray character after a quoted field is an error naming the line: it was taken for a cut-off
 * line, and a resumed sweep cut its journal back there and ran every later run again (a review:
 * one space after a closing quote on line 2 of a sweep of 4). */
static int csv_bad_record(const char *path, const char *text, size_t len, size_t start, int r, size_t bad, dp_error *err)
{
    long line, col;
    if (r == CSV_MALFORMED) {
        csv_line_col(text, bad, &line, &col);
        const unsigned char c = (unsigned char)text[bad];
        char what[16];
        snprintf(what, sizeof what, isprint(c) ? "'%c'" : "byte 0x%02x", c);
        return dp_error_set(err, DP_EINVAL, "%s:%ld:%ld: %s where a comma or the end of the line belongs (after a quoted "
                            "field, a quote is doubled): not a line a sweep writes (correct or remove it)", path, line,
                            col, what);
    }
    if (len > 0 && text[len - 1] != '\n') return DP_OK; /* torn */
    csv_line_col(text, start, &line, &col);
    return dp_error_set(err, DP_EINVAL, "%s:%ld: a quoted field that is never closed runs to the end of the file: not "
                        "a line a sweep writes (correct or remove it)", path, line);
}

static void free_fields(char **f, int n)
{
    for (int i = 0; i < n; i++) free(f[i]);
}

/* What a row read from a file must be, in CSV and HDF5 alike (where: "FILE:LINE" or "FILE: row
 * I (run KEY)"): no infinite number (a makespan of inf made a cell's mean inf and moved the best
 * baseline); a makespan in a finished run (status ok; NaN, the HDF5 file's missing value, was
 * dropped from its cell without a word). The HDF5 reader made neither check: a review edited
 * both into copies of a results file. */
static int check_row(const dp_result *r, const char *where, dp_error *err)
{
    for (int c = 0; c < NCOLS; c++)
        if (columns[c].type == DP_COL_DBL && isinf(cdbl_field(r, c)))
            return dp_error_set(err, DP_EINVAL, "%s: %s: not a finite number (%g)", where, columns[c].name, cdbl_field(r, c));
    if (strcmp(r->status, "ok") == 0 && isnan(r->makespan))
        return dp_error_set(err, DP_EINVAL, "%s: makespan: missing in a finished run (status ok)", where);
    return DP_OK;
}

int dp_results_read_csv(const char *path, dp_result **rows_out, long *n_out, long *good_len, dp_error *err)
{
    size_t len;
    if (good_len) *good_len = 0; /* also for an empty file (found by fuzz_results_csv) */
    /* the file's bytes as they are (good_len is an offset into the file, which a resumed sweep
     * truncates to), and a NUL in a complete line refused, as every text input refuses it (a
     * field was cut at it: "ok<NUL>" read as the status ok). After the last line end it is a
     * line torn by a crash (a file system may leave zeros there), cut off as any torn line. */
    char *text = dp_file_read(path, &len, err);
    if (!text) return err ? err->code : DP_EIO;
    size_t whole = len;
    while (whole > 0 && text[whole - 1] != '\n') whole--;
    if (dp_file_text_check(path, text, whole, err) != DP_OK) { free(text); return err ? err->code : DP_EINVAL; }
    char **f = NULL;
    int nf = 0, capf = 0;
    size_t pos = 0;
    dp_result *rows = NULL;
    long n = 0, cap = 0;
    int rc = DP_OK;
    size_t bad = 0;
    int r = csv_record(text, len, &pos, &f, &nf, &capf, &bad);
    if (r < 0) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    if (r == CSV_MALFORMED) { rc = csv_bad_record(path, text, len, pos, r, bad, err); goto done; }
    if (r != CSV_RECORD) {
        if (len > 0) { rc = dp_error_set(err, DP_EINVAL, "%s: no complete header line", path); goto done; }
        goto done; /* empty file: no rows */
    }
    if (nf != NCOLS) { rc = dp_error_set(err, DP_EINVAL, "%s:1: %d columns, this version writes %d: not a doppler results CSV (or another version)", path, nf, NCOLS); goto done; }
    for (int c = 0; c < NCOLS; c++)
        if (strcmp(f[c], columns[c].name) != 0) { rc = dp_error_set(err, DP_EINVAL, "%s:1: column %d is \"%s\", expected \"%s\"", path, c + 1, f[c], columns[c].name); goto done; }
    free_fields(f, nf);
    nf = 0;
    size_t good = pos;
    long line = 1, next_line = 2; /* the line the record starts on (a quoted field may hold line ends) */
    for (;;) {
        size_t start = pos;
        r = csv_record(text, len, &pos, &f, &nf, &capf, &bad);
        if (r < 0) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
        if (r == CSV_END) break;
        if (r != CSV_RECORD) {
            if ((rc = csv_bad_record(path, text, len, start, r, bad, err)) != DP_OK) goto done;
            break; /* a torn last line */
        }
        line = next_line;
        for (size_t i = start; i < pos; i++) next_line += text[i] == '\n';
        if (nf != NCOLS) { rc = dp_error_set(err, DP_EINVAL, "%s:%ld: %d fields, expected %d", path, line, nf, NCOLS); goto done; }
        if (n == cap) {
            long nc = cap ? cap * 2 : 64;
            dp_result *nr = dp_alloc_realloc(rows, (size_t)nc * sizeof *nr);
            if (!nr) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
            rows = nr;
            cap = nc;
        }
        dp_result *row = &rows[n];
        if (dp_result_init(row) != DP_OK) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
        n++;
        for (int c = 0; c < NCOLS; c++) {
            char *end;
            if (columns[c].type == DP_COL_STR) {
                free(*str_field(row, c));
                *str_field(row, c) = f[c];
                f[c] = NULL;
            } else if (columns[c].type == DP_COL_INT) {
                errno = 0;
                long v = strtol(f[c], &end, 10);
                if (!*f[c] || *end || errno) { rc = dp_error_set(err, DP_EINVAL, "%s:%ld: %s: not an integer: \"%s\"", path, line, columns[c].name, f[c]); goto done; }
                *int_field(row, c) = v;
            } else {
                if (!*f[c]) *dbl_field(row, c) = NAN;
                else {
                    double v = strtod(f[c], &end);
                    if (*end) { rc = dp_error_set(err, DP_EINVAL, "%s:%ld: %s: not a number: \"%s\"", path, line, columns[c].name, f[c]); goto done; }
                    /* the writer leaves a value it does not have empty (fmt_double): "nan" is
                     * no run's (an edited nan makespan of an ok run was dropped from its cell: a
                     * review); "inf" is check_row's */
                    if (isnan(v)) { rc = dp_error_set(err, DP_EINVAL, "%s:%ld: %s: not a finite number: \"%s\"", path, line, columns[c].name, f[c]); goto done; }
                    *dbl_field(row, c) = v;
                }
            }
        }
        char where[PATH_MAX + 32];
        snprintf(where, sizeof where, "%s:%ld", path, line);
        if ((rc = check_row(row, where, err)) != DP_OK) goto done;
        free_fields(f, nf);
        nf = 0;
        good = pos;
    }
    if (good_len) *good_len = (long)good;
done:
    free_fields(f, nf);
    free(f);
    free(text);
    if (rc != DP_OK) {
        for (long i = 0; i < n; i++) dp_result_free(&rows[i]);
        free(rows);
        return rc;
    }
    *rows_out = rows;
    *n_out = n;
    return DP_OK;
}

int dp_results_read_csv_whole(const char *path, dp_result **rows_out, long *n_out, dp_error *err)
{
    long good = 0;
    int rc = dp_results_read_csv(path, rows_out, n_out, &good, err);
    if (rc != DP_OK) return rc;
    size_t len = 0;
    char *text = dp_file_read(path, &len, err);
    if (!text) rc = err ? err->code : DP_EIO;
    else if (len == 0) rc = dp_error_set(err, DP_EINVAL, "%s: empty: no header line (not a doppler results CSV)", path);
    else if ((size_t)good < len) {
        long line = 1;
        for (long i = 0; i < good; i++) line += text[i] == '\n';
        rc = dp_error_set(err, DP_EINVAL, "%s:%ld: the line is cut off (no final newline): the file is not whole", path, line);
    }
    free(text);
    if (rc != DP_OK) {
        for (long i = 0; i < *n_out; i++) dp_result_free(&(*rows_out)[i]);
        free(*rows_out);
        *rows_out = NULL;
        *n_out = 0;
    }
    return rc;
}

long dp_results_read_journal(const char *h5_path, dp_result **rows)
{
    *rows = NULL;
    char *csv = dp_results_csv_path(h5_path);
    long n = -1;
    dp_error err;
    if (csv && access(csv, R_OK) == 0 && dp_results_read_csv(csv, rows, &n, NULL, &err) != DP_OK) n = -1;
    free(csv);
    return n;
}

/* --------------------------------------------------------------- HDF5 ---- */

/* The rows as stored: one compound member per column, in column order, packed: strings
 * fixed-length UTF-8 (dp_h5file.h: never the global heap) of width[c] bytes each (the longest
 * value of the column plus its NUL), integers int64, reals double. With native=1 the type of
 * the same layout in memory (native int64 and double); with native=0 little-endian. *size gets
 * the bytes of a row. Returns -1 on an HDF5 error. */
static hid_t row_type(const size_t *width, int native, size_t *size)
{
    size_t total = 0;
    for (int c = 0; c < NCOLS; c++) total += columns[c].type == DP_COL_STR ? width[c] : 8;
    hid_t t = H5Tcreate(H5T_COMPOUND, total);
    int bad = t < 0;
    size_t off = 0;
    for (int c = 0; c < NCOLS && !bad; c++) {
        hid_t mt = columns[c].type == DP_COL_STR ? dp_h5file_str_type(width[c] - 1)
                   : columns[c].type == DP_COL_INT ? (native ? H5T_NATIVE_INT64 : H5T_STD_I64LE)
                   : (native ? H5T_NATIVE_DOUBLE : H5T_IEEE_F64LE);
        bad = mt < 0 || H5Tinsert(t, columns[c].name, off, mt) < 0;
        if (columns[c].type == DP_COL_STR && mt >= 0) H5Tclose(mt);
        off += columns[c].type == DP_COL_STR ? width[c] : 8;
    }
    if (bad && t >= 0) {
        H5Tclose(t);
        t = -1;
    }
    *size = total;
    return t;
}

/* Rows packed into the layout of row_type (a buffer of n * size bytes). */
static void rows_pack(const dp_result *rows, long n, const size_t *width, size_t size, unsigned char *buf)
{
    memset(buf, 0, (size_t)n * size);
    for (long i = 0; i < n; i++) {
        unsigned char *p = buf + (size_t)i * size;
        for (int c = 0; c < NCOLS; c++) {
            if (columns[c].type == DP_COL_STR) {
                const char *v = cstr_field(&rows[i], c);
                if (v) memcpy(p, v, strlen(v));
                p += width[c];
            } else if (columns[c].type == DP_COL_INT) {
                int64_t v = cint_field(&rows[i], c);
                memcpy(p, &v, 8);
                p += 8;
            } else {
                double v = cdbl_field(&rows[i], c);
                memcpy(p, &v, 8);
                p += 8;
            }
        }
    }
}

static void h5_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* H5Fopen, tried again for about a second: HDF5 locks a file while it is open (flock), so a
 * report reading the file while the sweep appends a row (or the other way round) must wait a
 * few milliseconds rather than fail. */
static hid_t h5_open_retry(const char *path, unsigned flags)
{
    hid_t f = -1;
    for (int i = 0; i < 50; i++) {
        f = H5Fopen(path, flags, H5P_DEFAULT);
        if (f >= 0 || access(path, F_OK) != 0) break;
        usleep(20000);
    }
    return f;
}

int dp_results_write_h5(const char *path, const dp_result *rows, long n, const char *sweep_name,
                        const char *config_text, dp_error *err)
{
    h5_quiet();
    size_t width[NCOLS], size = 0;
    for (int c = 0; c < NCOLS; c++) {
        width[c] = 1;
        for (long i = 0; columns[c].type == DP_COL_STR && i < n; i++) {
            const char *v = cstr_field(&rows[i], c);
            size_t L = v ? strlen(v) + 1 : 1;
            if (L > width[c]) width[c] = L;
        }
    }
    for (int c = 0; c < NCOLS; c++) size += columns[c].type == DP_COL_STR ? width[c] : 8;
    /* the packed rows, beside the in-memory file that holds them once more */
    int rc = dp_file_mem_check(path, "the results file's rows", 2.0 * (double)size * (double)n, err);
    if (rc != DP_OK) return rc;
    unsigned char *buf = dp_alloc_malloc(n > 0 ? (size_t)n * size : 1);
    if (!buf) return dp_error_set(err, DP_ENOMEM, "%s: out of memory for %ld rows of %zu bytes", path, n, size);
    rows_pack(rows, n, width, size, buf);
    /* built in memory and written whole through the checked atomic writer (dp_h5file.h): a full
     * disk leaves the previous file and says so */
    hid_t f = dp_h5file_create(path, err);
    if (f < 0) {
        free(buf);
        return DP_EIO;
    }
    size_t s1, s2;
    hid_t mt = row_type(width, 1, &s1), ft = row_type(width, 0, &s2);
    hsize_t dims[1] = {(hsize_t)n}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {64};
    hid_t sp = H5Screate_simple(1, dims, maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    /* fixed-length strings are padded with NULs to the column's longest: deflate takes the
     * padding back on disk */
    int bad = mt < 0 || ft < 0 || sp < 0 || dcpl < 0 || H5Pset_chunk(dcpl, 1, chunk) < 0 ||
              (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 && H5Pset_deflate(dcpl, 4) < 0) || H5Pset_fletcher32(dcpl) < 0;
    hid_t d = bad ? -1 : H5Dcreate2(f, "runs", ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0) bad = 1;
    else if (n > 0 && H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) bad = 1;
    free(buf);
    if (d >= 0 && H5Dclose(d) < 0) bad = 1;
    if (dcpl >= 0 && H5Pclose(dcpl) < 0) bad = 1;
    if (sp >= 0 && H5Sclose(sp) < 0) bad = 1;
    if (mt >= 0 && H5Tclose(mt) < 0) bad = 1;
    if (ft >= 0 && H5Tclose(ft) < 0) bad = 1;
    bad |= dp_h5file_attr_write_str(f, "format", RESULTS_FORMAT) != 0;
    bad |= dp_h5file_attr_write_str(f, "sweep", sweep_name ? sweep_name : "") != 0;
    bad |= dp_h5file_attr_write_str(f, "config", config_text ? config_text : "") != 0;
    if (bad) {
        dp_h5file_discard(f);
        return dp_error_set(err, DP_EIO, "%s: cannot build the results file (HDF5 error)", path);
    }
    return dp_h5file_commit(f, path, "the results file", err);
}

int dp_results_read_h5(const char *path, dp_result **rows_out, long *n_out, char **config_text, dp_error *err)
{
    h5_quiet();
    if (access(path, R_OK) != 0) return dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
    hid_t f = h5_open_retry(path, H5F_ACC_RDONLY);
    if (f < 0) return dp_error_set(err, DP_EINVAL, "%s: not a readable HDF5 file", path);
    int rc = DP_OK;
    dp_result *rows = NULL;
    unsigned char *buf = NULL;
    hsize_t n = 0;
    hid_t d = -1, mt = -1, ft = -1, sp = -1;
    size_t width[NCOLS], msize = 0;
    dp_error e;
    dp_error_clear(&e);
    char *fmt = dp_h5file_attr_read_str(f, path, "format", &e);
    if (!fmt && e.code == DP_EUNSUPPORTED) {
        rc = dp_error_set(err, e.code, "%s", e.msg); /* a file of results format 1 */
        goto done;
    }
    if (!fmt || strcmp(fmt, RESULTS_FORMAT) != 0) {
        rc = dp_error_set(err, DP_EINVAL, "%s: not a doppler results file (attribute format is \"%s\", expected \"%s\")", path, fmt ? fmt : "", RESULTS_FORMAT);
        goto done;
    }
    d = H5Dopen2(f, "runs", H5P_DEFAULT);
    if (d < 0) { rc = dp_error_set(err, DP_EINVAL, "%s: no dataset /runs", path); goto done; }
    ft = H5Dget_type(d);
    if (H5Tget_class(ft) != H5T_COMPOUND || H5Tget_nmembers(ft) != NCOLS) {
        rc = dp_error_set(err, DP_EINVAL, "%s: /runs does not have this version's %d columns", path, NCOLS);
        goto done;
    }
    for (int c = 0; c < NCOLS; c++) {
        char *nm = H5Tget_member_name(ft, (unsigned)c);
        int same = nm && strcmp(nm, columns[c].name) == 0;
        H5free_memory(nm);
        if (!same) { rc = dp_error_set(err, DP_EINVAL, "%s: /runs column %d is not \"%s\"", path, c, columns[c].name); goto done; }
        hid_t m = H5Tget_member_type(ft, (unsigned)c);
        H5T_class_t cl = m < 0 ? H5T_NO_CLASS : H5Tget_class(m);
        int ok = columns[c].type == DP_COL_STR ? cl == H5T_STRING && H5Tis_variable_str(m) == 0
                 : columns[c].type == DP_COL_INT ? cl == H5T_INTEGER : cl == H5T_FLOAT;
        size_t w = ok && columns[c].type == DP_COL_STR ? H5Tget_size(m) : 8;
        if (m >= 0) H5Tclose(m);
        if (!ok || w == 0 || w > ((size_t)1 << 30)) {
            rc = dp_error_set(err, DP_EINVAL, "%s: /runs column \"%s\" is not a %s", path, columns[c].name,
                              columns[c].type == DP_COL_STR ? "fixed-length string" : columns[c].type == DP_COL_INT ? "integer" : "real");
            goto done;
        }
        /* in memory one byte more: the NUL of a value that fills the column */
        width[c] = columns[c].type == DP_COL_STR ? w + 1 : 8;
        msize += width[c];
    }
    sp = H5Dget_space(d);
    if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1 || H5Sget_simple_extent_dims(sp, &n, NULL) != 1) {
        rc = dp_error_set(err, DP_EINVAL, "%s: /runs is not a list of rows", path);
        goto done;
    }
    /* the packed rows and the strings copied out of them */
    if ((rc = dp_file_mem_check(path, "the results file's rows", 2.0 * (double)msize * (double)n + (double)n * sizeof *rows, err)) != DP_OK)
        goto done;
    rows = dp_alloc_calloc_n(n ? (size_t)n : 1, sizeof *rows);
    buf = dp_alloc_malloc_n(n ? (size_t)n : 1, msize);
    if (!rows || !buf) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    mt = row_type(width, 1, &msize);
    if (mt < 0 || (n > 0 && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)) {
        rc = dp_error_set(err, DP_EINVAL, "%s: cannot read /runs (a damaged file?)", path);
        goto done;
    }
    for (hsize_t i = 0; i < n; i++) {
        const unsigned char *p = buf + (size_t)i * msize;
        dp_result *r = &rows[i];
        for (int c = 0; c < NCOLS; c++) {
            if (columns[c].type == DP_COL_STR) {
                char *v = dp_alloc_malloc(width[c]);
                if (!v) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
                memcpy(v, p, width[c] - 1);
                v[width[c] - 1] = '\0';
                *str_field(r, c) = v;
            } else if (columns[c].type == DP_COL_INT) {
                int64_t v;
                memcpy(&v, p, 8);
                *int_field(r, c) = (long)v;
            } else {
                memcpy(dbl_field(r, c), p, 8);
            }
            p += width[c];
        }
        char where[PATH_MAX + 64];
        snprintf(where, sizeof where, "%s: row %llu (run %s)", path, (unsigned long long)i + 1, r->key ? r->key : "");
        if ((rc = check_row(r, where, err)) != DP_OK) goto done;
    }
    if (config_text) {
        *config_text = dp_h5file_attr_read_str(f, path, "config", &e);
        if (!*config_text) *config_text = xstrdup("");
    }
done:
    free(fmt);
    free(buf);
    if (sp >= 0) H5Sclose(sp);
    if (mt >= 0) H5Tclose(mt);
    if (ft >= 0) H5Tclose(ft);
    if (d >= 0) H5Dclose(d);
    H5Fclose(f);
    if (rc != DP_OK) {
        if (rows) {
            for (long i = 0; i < (long)n; i++) dp_result_free(&rows[i]);
            free(rows);
        }
        return rc;
    }
    *rows_out = rows;
    *n_out = (long)n;
    return DP_OK;
}

/* ------------------------------------------------ the open results file ---- */

struct dp_results {
    char *h5_path, *csv_path, *lock_path;
    char *sweep_name, *config_text;
    char *stored_config; /* the HDF5 file's config when it was opened (NULL: none) */
    int lock_fd, csv_fd;
    dp_result *rows;
    long n, cap;
    long *map;      /* open addressing: row index + 1, 0 empty */
    size_t map_cap;
    long h5_rows;   /* rows the HDF5 file on disk holds (the first h5_rows of rows) */
    int recovered;  /* the rows came from the CSV alone: 1 the HDF5 file was unreadable, 2 absent */
};

static size_t key_slot(const char *key, size_t cap)
{
    return (size_t)(dp_sweep_hash(key) & (cap - 1));
}

static int map_rebuild(dp_results *r)
{
    size_t cap = 64;
    while (cap < (size_t)r->n * 2 + 2) cap *= 2;
    long *m = dp_alloc_calloc(cap, sizeof *m);
    if (!m) return DP_ENOMEM;
    free(r->map);
    r->map = m;
    r->map_cap = cap;
    for (long i = 0; i < r->n; i++) {
        size_t s = key_slot(r->rows[i].key, cap);
        while (m[s]) s = (s + 1) & (cap - 1);
        m[s] = i + 1;
    }
    return DP_OK;
}

static long map_find(const dp_results *r, const char *key)
{
    size_t s = key_slot(key, r->map_cap);
    while (r->map[s]) {
        long i = r->map[s] - 1;
        if (strcmp(r->rows[i].key, key) == 0) return i;
        s = (s + 1) & (r->map_cap - 1);
    }
    return -1;
}

static void free_rows(dp_result *rows, long n)
{
    for (long i = 0; i < n; i++) dp_result_free(&rows[i]);
    free(rows);
}

static int reopen_csv(dp_results *r, dp_error *err)
{
    if (r->csv_fd >= 0) close(r->csv_fd);
    r->csv_fd = open(r->csv_path, O_WRONLY | O_APPEND);
    if (r->csv_fd < 0) return dp_error_set(err, DP_EIO, "%s: %s", r->csv_path, strerror(errno));
    return DP_OK;
}

static int rewrite_both(dp_results *r, dp_error *err)
{
    int rc = dp_results_write_csv(r->csv_path, r->rows, r->n, err);
    if (rc == DP_OK) rc = dp_results_write_h5(r->h5_path, r->rows, r->n, r->sweep_name, r->config_text, err);
    if (rc == DP_OK) r->h5_rows = r->n;
    if (rc == DP_OK) rc = reopen_csv(r, err);
    return rc;
}

int dp_results_write_pending(dp_results *r, dp_error *err)
{
    if (!r || r->h5_rows == r->n) return DP_OK;
    int rc = dp_results_write_h5(r->h5_path, r->rows, r->n, r->sweep_name, r->config_text, err);
    if (rc == DP_OK) r->h5_rows = r->n;
    return rc;
}

void dp_results_close(dp_results *r)
{
    if (!r) return;
    if (r->csv_fd >= 0) close(r->csv_fd);
    if (r->lock_fd >= 0) {
        /* unlinked while still held: a sweep that opened this file before and locks it after
         * the close finds it unlinked (take_lock) and tries again with the path's new file */
        unlink(r->lock_path);
        close(r->lock_fd);
    }
    free_rows(r->rows, r->n);
    free(r->map);
    free(r->h5_path);
    free(r->csv_path);
    free(r->lock_path);
    free(r->sweep_name);
    free(r->stored_config);
    free(r->config_text);
    free(r);
}

/* Keep the first row of each key (a duplicate can only come from a hand-edited CSV or a sweep of
 * an older version). A hash set of the keys: opening a 50,000-row file stays well under a second. */
static long dedup_rows(dp_result *rows, long n, dp_error *err)
{
    size_t cap = 64;
    while (cap < (size_t)n * 2 + 2) cap *= 2;
    long *seen = dp_alloc_calloc(cap, sizeof *seen);
    if (!seen) {
        dp_error_set(err, DP_ENOMEM, "out of memory");
        return -1;
    }
    long m = 0;
    for (long i = 0; i < n; i++) {
        size_t h = key_slot(rows[i].key, cap);
        int dup = 0;
        while (seen[h] && !dup) {
            dup = strcmp(rows[seen[h] - 1].key, rows[i].key) == 0;
            h = (h + 1) & (cap - 1);
        }
        if (dup) {
            dp_result_free(&rows[i]);
        } else {
            rows[m] = rows[i];
            seen[h] = m + 1;
            m++;
        }
    }
    free(seen);
    return m;
}

/* Take the lock file's exclusive flock. The holder unlinks the lock file before it releases it
 * (dp_results_close), so a lock taken on a file that is no longer the one at lock_path guards
 * nothing (another sweep may hold the path's new file): check that the locked file is still the
 * one at the path (same device and inode) and start again when it is not. Returns the locked
 * descriptor, or -1 with err. */
static int take_lock(const char *lock_path, const char *h5_path, dp_error *err)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            dp_error_set(err, DP_EIO, "%s: cannot create the lock file: %s", lock_path, strerror(errno));
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd); /* not ours: never unlink it */
            if (e == EWOULDBLOCK)
                dp_error_set(err, DP_EIO, "%s: another sweep is writing this results file (lock %s)", h5_path, lock_path);
            else
                dp_error_set(err, DP_EIO, "%s: cannot lock: %s", lock_path, strerror(e));
            return -1;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(lock_path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) return fd;
        close(fd); /* unlinked by its last holder meanwhile: the path has (or will have) a new file */
    }
    dp_error_set(err, DP_EIO, "%s: cannot take the lock %s: it keeps being replaced", h5_path, lock_path);
    return -1;
}

/* The results file r->h5_path is there but not readable, and its CSV (r->csv_path) is not: say
 * which CSV was looked for, and when the path is not NAME.h5 but a NAME.csv is beside it (--out
 * s1.json beside s1.csv: "no CSV beside it" was said of a folder holding one), that --out names
 * the results HDF5 file and that CSV was left alone */
static void unreadable_h5(const dp_results *r, const char *h5_msg, dp_error *err)
{
    const char *h5 = r->h5_path, *base = strrchr(h5, '/');
    base = base ? base + 1 : h5;
    const char *dot = strrchr(base, '.');
    const size_t n = strlen(h5);
    char other[PATH_MAX] = "";
    if (!(n > 3 && strcmp(h5 + n - 3, ".h5") == 0) && dot && dot != base &&
        snprintf(other, sizeof other, "%.*s.csv", (int)(dot - h5), h5) < (int)sizeof other && access(other, F_OK) == 0) {
        dp_error_set(err, DP_EINVAL, "%s, and there is no %s to rebuild it from: --out names the results HDF5 file "
                     "(%.*s.h5 for %s, which was left alone)", h5_msg, r->csv_path, (int)(dot - h5), h5, other);
        return;
    }
    dp_error_set(err, DP_EINVAL, "%s, and there is no %s to rebuild it from", h5_msg, r->csv_path);
}

dp_results *dp_results_open(const char *h5_path, const char *sweep_name, const char *config_text, dp_error *err)
{
    dp_results *r = dp_alloc_calloc(1, sizeof *r);
    if (!r) { dp_error_set(err, DP_ENOMEM, "out of memory"); return NULL; }
    r->lock_fd = r->csv_fd = -1;
    r->h5_path = xstrdup(h5_path);
    r->csv_path = dp_results_csv_path(h5_path);
    r->sweep_name = xstrdup(sweep_name);
    r->config_text = xstrdup(config_text);
    size_t ln = strlen(h5_path) + 6;
    r->lock_path = dp_alloc_malloc(ln);
    if (!r->h5_path || !r->csv_path || !r->sweep_name || !r->config_text || !r->lock_path) {
        dp_error_set(err, DP_ENOMEM, "out of memory");
        goto fail;
    }
    /* the lock is of the CSV's and run folder's stem, which "--out R" and "--out R.h5" share (their
     * locks R.lock and R.h5.lock let two sweeps write one CSV and one run folder: a review) */
    const size_t hn = strlen(h5_path);
    const int stem = hn > 3 && strcmp(h5_path + hn - 3, ".h5") == 0 ? (int)(hn - 3) : (int)hn;
    snprintf(r->lock_path, ln, "%.*s.lock", stem, h5_path);
    if ((r->lock_fd = take_lock(r->lock_path, h5_path, err)) < 0) goto fail;
    int have_csv = access(r->csv_path, F_OK) == 0, have_h5 = access(h5_path, F_OK) == 0;
    dp_result *csv_rows = NULL, *h5_rows = NULL;
    long n_csv = 0, n_h5 = 0, good = 0;
    int csv_ok = 0, h5_ok = 0;
    if (have_csv) {
        if (dp_results_read_csv(r->csv_path, &csv_rows, &n_csv, &good, err) != DP_OK) goto fail;
        csv_ok = 1;
        struct stat st;
        /* a line cut off by a kill: cut the file back to its complete part */
        if (stat(r->csv_path, &st) == 0 && st.st_size > good && truncate(r->csv_path, good) != 0) {
            free_rows(csv_rows, n_csv);
            dp_error_set(err, DP_EIO, "%s: cannot truncate a cut-off line: %s", r->csv_path, strerror(errno));
            goto fail;
        }
    }
    if (have_h5) {
        dp_error e2;
        h5_ok = dp_results_read_h5(h5_path, &h5_rows, &n_h5, &r->stored_config, &e2) == DP_OK;
        if (!h5_ok && !csv_ok) {
            unreadable_h5(r, e2.msg, err);
            goto fail;
        }
    }
    int rewrite = 0;
    if (csv_ok && n_csv > 0 && !h5_ok) r->recovered = have_h5 ? 1 : 2;
    if (csv_ok) {
        r->rows = csv_rows;
        r->n = n_csv;
        long m = dedup_rows(r->rows, r->n, err);
        if (m < 0) { if (h5_rows) free_rows(h5_rows, n_h5); goto fail; }
        if (m != r->n) { r->n = m; rewrite = 1; }
        if (good == 0) rewrite = 1; /* empty or header cut off */
        int same = h5_ok && n_h5 == r->n;
        for (long i = 0; same && i < r->n; i++) same = strcmp(h5_rows[i].key, r->rows[i].key) == 0;
        if (!same) rewrite = 1;
        if (h5_rows) free_rows(h5_rows, n_h5);
    } else if (h5_ok) {
        r->rows = h5_rows;
        r->n = n_h5;
        long m = dedup_rows(r->rows, r->n, err);
        if (m < 0) goto fail;
        r->n = m;
        rewrite = 1;
    } else {
        rewrite = 1;
    }
    r->cap = r->n;
    if (map_rebuild(r) != DP_OK) { dp_error_set(err, DP_ENOMEM, "out of memory"); goto fail; }
    if (rewrite) {
        if (rewrite_both(r, err) != DP_OK) goto fail;
    } else {
        if (reopen_csv(r, err) != DP_OK) goto fail;
        r->h5_rows = r->n;
    }
    return r;
fail:
    dp_results_close(r);
    return NULL;
}

long dp_results_count(const dp_results *r) { return r->n; }
const char *dp_results_stored_config(const dp_results *r) { return r->stored_config; }
int dp_results_recovered(const dp_results *r) { return r->recovered; }
const char *dp_results_csv_of(const dp_results *r) { return r->csv_path; }
const dp_result *dp_results_row(const dp_results *r, long i) { return &r->rows[i]; }

const dp_result *dp_results_find(const dp_results *r, const char *key)
{
    long i = map_find(r, key);
    return i < 0 ? NULL : &r->rows[i];
}

int dp_results_append(dp_results *r, const dp_result *row, dp_error *err)
{
    if (map_find(r, row->key) >= 0) return dp_error_set(err, DP_EINVAL, "%s: run %s is already in the file", r->h5_path, row->key);
    sbuf b = {0};
    csv_line(&b, row);
    if (b.oom) { free(b.s); return dp_error_set(err, DP_ENOMEM, "out of memory"); }
    /* one write() of the whole line, then fsync: the CSV is the journal. A failed write (a full
     * disk) cuts the file back to its length before, so it keeps its complete lines only. */
    off_t before = lseek(r->csv_fd, 0, SEEK_END);
    size_t off = 0;
    int e = 0;
    while (off < b.n) {
        ssize_t w = write(r->csv_fd, b.s + off, b.n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { e = w < 0 ? errno : EIO; break; }
        off += (size_t)w;
    }
    free(b.s);
    if (!e && fsync(r->csv_fd) != 0) e = errno;
    if (e) {
        if (before >= 0 && ftruncate(r->csv_fd, before) == 0) (void)fsync(r->csv_fd);
        return dp_error_set(err, DP_EIO, "%s: cannot append a result: %s", r->csv_path, strerror(e));
    }
    if (r->n == r->cap) {
        long nc = r->cap ? r->cap * 2 : 64;
        dp_result *nr = dp_alloc_realloc(r->rows, (size_t)nc * sizeof *nr);
        if (!nr) return dp_error_set(err, DP_ENOMEM, "out of memory");
        r->rows = nr;
        r->cap = nc;
    }
    if (dp_result_copy(&r->rows[r->n], row) != DP_OK) return dp_error_set(err, DP_ENOMEM, "out of memory");
    r->n++;
    if ((size_t)r->n * 2 + 2 > r->map_cap) {
        if (map_rebuild(r) != DP_OK) return dp_error_set(err, DP_ENOMEM, "out of memory");
    } else {
        size_t s = key_slot(row->key, r->map_cap);
        while (r->map[s]) s = (s + 1) & (r->map_cap - 1);
        r->map[s] = r->n;
    }
    /* The HDF5 file is written whole (dp_results_write_h5): after every row while the file is
     * small, then whenever the rows it lacks reach 1/16 of the total, so that a long sweep writes
     * O(n) rows in all rather than O(n^2). The CSV holds every row at once; dp_results_open
     * rebuilds the HDF5 file from it when they differ, and dp_results_finalize writes both. */
    if ((r->n - r->h5_rows) * H5_LAG_FRACTION < r->n) return DP_OK;
    int rc = dp_results_write_h5(r->h5_path, r->rows, r->n, r->sweep_name, r->config_text, err);
    if (rc == DP_OK) r->h5_rows = r->n;
    return rc;
}

static int keep_ok(const dp_result *row, void *ctx)
{
    (void)ctx;
    return strcmp(row->status, "ok") == 0;
}

int dp_results_drop_failed(dp_results *r, long *dropped, dp_error *err)
{
    return dp_results_filter(r, keep_ok, NULL, dropped, err);
}

int dp_results_filter(dp_results *r, int (*keep)(const dp_result *row, void *ctx), void *ctx, long *dropped,
                      dp_error *err)
{
    long m = 0;
    for (long i = 0; i < r->n; i++) {
        if (keep(&r->rows[i], ctx)) r->rows[m++] = r->rows[i];
        else dp_result_free(&r->rows[i]);
    }
    long d = r->n - m;
    r->n = m;
    if (dropped) *dropped = d;
    if (map_rebuild(r) != DP_OK) return dp_error_set(err, DP_ENOMEM, "out of memory");
    return d ? rewrite_both(r, err) : DP_OK;
}

void dp_results_set_index(dp_results *r, const char *key, long index)
{
    long i = map_find(r, key);
    if (i >= 0) r->rows[i].index = index;
}

static int row_cmp(const void *a, const void *b)
{
    const dp_result *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return strcmp(x->key, y->key);
}

int dp_results_finalize(dp_results *r, dp_error *err)
{
    /* no row (a shard with no run): rows may be NULL, which qsort may not be given (UBSan) */
    if (r->n > 1) qsort(r->rows, (size_t)r->n, sizeof *r->rows, row_cmp);
    if (map_rebuild(r) != DP_OK) return dp_error_set(err, DP_ENOMEM, "out of memory");
    return rewrite_both(r, err);
}
