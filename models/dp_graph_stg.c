/* dp_graph_stg.c: the Kasahara Standard Task Graph reader (see dp_graph_formats.h). */
#include "dp_graph_format.h"
#include "dp_file.h"
#include "dp_graph_formats.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct tok_stream {
    const char *path;
    const char *p, *end;
    int line;
    int tok_line;
} tok_stream;

/* Next whitespace-separated token ('#' comments skipped); returns its length (0 at the end). */
static size_t next_token(tok_stream *s, const char **start)
{
    for (;;) {
        while (s->p < s->end && isspace((unsigned char)*s->p)) {
            if (*s->p == '\n') s->line++;
            s->p++;
        }
        if (s->p < s->end && *s->p == '#') {
            while (s->p < s->end && *s->p != '\n') s->p++;
            continue;
        }
        break;
    }
    *start = s->p;
    s->tok_line = s->line;
    while (s->p < s->end && !isspace((unsigned char)*s->p) && *s->p != '#') s->p++;
    return (size_t)(s->p - *start);
}

/* Read an integer token in [lo, hi]; what names the field in the error. */
static int stg_int(tok_stream *s, long long lo, long long hi, const char *what, long long *out, dp_error *err)
{
    const char *t;
    int last = s->tok_line;
    size_t n = next_token(s, &t);
    if (n == 0)  /* named at the last line with a token */
        return dp_error_set(err, DP_EINVAL, "%s:%d: truncated file: expected %s, found the end", s->path, last, what);
    char buf[64];
    if (n >= sizeof buf)
        return dp_error_set(err, DP_EINVAL, "%s:%d: expected %s, found a %zu-character token", s->path, s->tok_line, what, n);
    memcpy(buf, t, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end || errno)
        return dp_error_set(err, DP_EINVAL, "%s:%d: expected %s (an integer), found '%s'", s->path, s->tok_line, what, buf);
    if (v < lo || v > hi)
        return dp_error_set(err, DP_EINVAL, "%s:%d: %s: %lld is out of range %lld..%lld", s->path, s->tok_line, what, v, lo, hi);
    *out = v;
    return DP_OK;
}

dp_graph *dp_graph_read_stg(const char *path, dp_error *err)
{
    size_t size;
    char *text = dp_file_read_text(path, &size, err);
    if (!text) return NULL;
    dp_graph *g = NULL;
    dp_graph_builder *b = NULL;
    tok_stream s = {path, text, text + size, 1, 1};
    long long n;
    char what[96];
    if (stg_int(&s, 0, DP_GRAPH_MAX_ELEMS - 2, "the task count", &n, err) != DP_OK) goto done;
    if (n == 0) { dp_error_set(err, DP_EINVAL, "%s:%d: the task count is 0", path, s.tok_line); goto done; }
    char stem[256];
    dp_graph_file_stem(stem, sizeof stem, path);
    b = dp_graph_builder_alloc(stem, path, DP_GRAPH_COST_TIME);
    if (!b) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); goto done; }
    for (long long i = 0; i <= n + 1; i++) {
        long long id, np, t;
        snprintf(what, sizeof what, "task id %lld", i);
        if (stg_int(&s, 0, n + 1, what, &id, err) != DP_OK) goto done;
        if (id != i) {
            dp_error_set(err, DP_EINVAL, "%s:%d: task %lld expected here (tasks are listed in order 0..%lld), found %lld",
                         path, s.tok_line, i, n + 1, id);
            goto done;
        }
        snprintf(what, sizeof what, "the processing time of task %lld", i);
        if (stg_int(&s, 0, (long long)1 << 52, what, &t, err) != DP_OK) goto done;
        int tl = s.tok_line;
        if ((i == 0 || i == n + 1) && t != 0) {
            dp_error_set(err, DP_EINVAL, "%s:%d: task %lld is the dummy %s task and must have processing time 0, found %lld",
                         path, tl, i, i == 0 ? "entry" : "exit", t);
            goto done;
        }
        snprintf(what, sizeof what, "the predecessor count of task %lld", i);
        if (stg_int(&s, 0, n + 1, what, &np, err) != DP_OK) goto done;
        if (i == 0 && np != 0) {
            dp_error_set(err, DP_EINVAL, "%s:%d: task 0 is the dummy entry task and must have no predecessors", path, s.tok_line);
            goto done;
        }
        if (i >= 1 && i <= n) {
            /* real task i is op i - 1 (predecessors may name later tasks: finish() checks) */
            char nm[24];
            snprintf(nm, sizeof nm, "%lld", i);
            if (dp_graph_builder_add_op(b, nm, "task", (double)t, 0) < 0) {
                dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
                goto done;
            }
        }
        for (long long k = 0; k < np; k++) {
            long long p;
            snprintf(what, sizeof what, "predecessor %lld of task %lld", k + 1, i);
            if (stg_int(&s, 0, n, what, &p, err) != DP_OK) goto done;
            if (p == i) { dp_error_set(err, DP_EINVAL, "%s:%d: task %lld lists itself as a predecessor", path, s.tok_line, i); goto done; }
            if (p == 0 || i == n + 1) continue; /* edges of the dummy tasks */
            if (dp_graph_builder_add_edge(b, (int)(p - 1), (int)(i - 1), 0) < 0) {
                dp_error_set(err, DP_ENOMEM, "%s: out of memory", path);
                goto done;
            }
        }
    }
    {
        const char *t;
        if (next_token(&s, &t) != 0) {
            dp_error_set(err, DP_EINVAL, "%s:%d: unexpected text after the %lld task records (comments start with '#')",
                         path, s.tok_line, n + 2);
            goto done;
        }
    }
    g = dp_graph_builder_finish(b, err);
done:
    dp_graph_builder_free(b);
    free(text);
    return g;
}

const dp_graph_format dp_graph_format_stg = {
    .name = "stg",
    .ext = {".stg"},
    .read = dp_graph_read_stg,
};
