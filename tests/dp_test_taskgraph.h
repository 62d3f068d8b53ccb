/* dp_test_taskgraph.h: minimal readers for the STG and Sinnen DOT task graphs, for tests and
 * benchmarks only, until the library's own readers (workloads issue) reach main. They build a
 * DP_COST_TIME graph with the classic model's numbers (node weight = op time, edge weight =
 * transfer time between distinct devices; STG: 0) and do little validation: the files are known.
 *
 * STG (Tobita and Kasahara 2002): a stream of integers: n, then n + 2 task records
 * "id time k pred_1 .. pred_k"; tasks 0 and n + 1 are zero-time dummies and are dropped (real
 * task i becomes op i - 1), '#' starts a comment to the end of the line.
 * DOT (Sinnen's generator): statements "ID [Weight=w, ...];" and "A -> B [Weight=c];", graph
 * attributes "Number of processors"=P and "Total schedule length"=L (when present). Ops are
 * numbered by increasing numeric id. */
#ifndef DP_TEST_TASKGRAPH_H
#define DP_TEST_TASKGRAPH_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_file.h"
#include "dp_graph.h"

static dp_graph *dp_test_read_stg(const char *path)
{
    size_t size;
    dp_error err;
    char *text = dp_read_file(path, &size, &err);
    if (!text) return NULL;
    /* blank out comments */
    for (char *p = text; *p; p++)
        if (*p == '#')
            while (*p && *p != '\n') *p++ = ' ';
    char *s = text, *end;
    long n = strtol(s, &end, 10);
    s = end;
    if (n < 1) { free(text); return NULL; }
    dp_graph_builder *b = dp_graph_builder_alloc(dp_path_stem(path), path, DP_COST_TIME);
    for (long i = 0; i < n + 2; i++) {
        long id = strtol(s, &end, 10); s = end;
        long t = strtol(s, &end, 10); s = end;
        long k = strtol(s, &end, 10); s = end;
        if (id != i) { dp_graph_builder_free(b); free(text); return NULL; }
        if (i >= 1 && i <= n) {
            char nm[24];
            snprintf(nm, sizeof nm, "%ld", i);
            dp_graph_builder_add_op(b, nm, NULL, (double)t, 0);
        }
        for (long q = 0; q < k; q++) {
            long p = strtol(s, &end, 10); s = end;
            if (i >= 1 && i <= n && p >= 1) dp_graph_builder_add_edge(b, (int)p - 1, (int)i - 1, 0);
        }
    }
    free(text);
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    return g;
}

/* numeric value after `key=` inside attribute text a (NAN if absent) */
static double dp_test_dot_attr(const char *a, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = strstr(a, key); p; p = strstr(p + 1, key)) {
        int starts = p == a || p[-1] == '[' || p[-1] == ',' || isspace((unsigned char)p[-1]) || p[-1] == '"';
        const char *q = p + kl;
        if (*q == '"') q++;
        if (starts && *q == '=') return strtod(q + 1, NULL);
    }
    return 0.0 / 0.0;
}

/* Read a DOT task graph; *procs and *length get the graph attributes (0 / NAN when absent). */
static dp_graph *dp_test_read_dot(const char *path, int *procs, double *length)
{
    size_t size;
    dp_error err;
    char *text = dp_read_file(path, &size, &err);
    if (!text) return NULL;
    *procs = 0;
    *length = 0.0 / 0.0;
    char *body = strchr(text, '{');
    if (!body) { free(text); return NULL; }
    body++;
    /* split into statements at ';' outside quotes and brackets */
    int cap = 1024, n_st = 0;
    char **st = malloc(cap * sizeof *st);
    int depth = 0, quote = 0;
    char *begin = body;
    for (char *p = body; *p; p++) {
        if (*p == '"' && p[-1] != '\\') quote = !quote;
        else if (!quote && *p == '[') depth++;
        else if (!quote && *p == ']') depth--;
        else if (!quote && depth == 0 && (*p == ';' || *p == '}')) {
            *p = 0;
            if (n_st == cap) { cap *= 2; st = realloc(st, cap * sizeof *st); }
            st[n_st++] = begin;
            begin = p + 1;
        }
    }
    /* nodes: numeric ids, sorted */
    long *ids = malloc(n_st * sizeof *ids);
    double *w = malloc(n_st * sizeof *w);
    int n = 0;
    for (int i = 0; i < n_st; i++) {
        char *s = st[i];
        while (isspace((unsigned char)*s)) s++;
        if (strncmp(s, "graph", 5) == 0) {
            double p = dp_test_dot_attr(s, "Number of processors");
            if (p == p) *procs = (int)p;
            *length = dp_test_dot_attr(s, "Total schedule length");
            continue;
        }
        if (!isdigit((unsigned char)*s) || strstr(s, "->")) continue;
        ids[n] = strtol(s, NULL, 10);
        w[n] = dp_test_dot_attr(s, "Weight");
        n++;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            long t = ids[j]; ids[j] = ids[j - 1]; ids[j - 1] = t;
            double x = w[j]; w[j] = w[j - 1]; w[j - 1] = x;
        }
    char name[256];
    snprintf(name, sizeof name, "%s", dp_path_stem(path));
    dp_graph_builder *b = dp_graph_builder_alloc(name, path, DP_COST_TIME);
    for (int i = 0; i < n; i++) {
        char nm[24];
        snprintf(nm, sizeof nm, "%ld", ids[i]);
        dp_graph_builder_add_op(b, nm, NULL, w[i], 0);
    }
    for (int i = 0; i < n_st; i++) {
        char *s = st[i], *arrow = strstr(s, "->");
        if (!arrow) continue;
        long a = strtol(s, NULL, 10), c = strtol(arrow + 2, NULL, 10);
        int ia = -1, ic = -1;
        for (int k = 0; k < n; k++) {
            if (ids[k] == a) ia = k;
            if (ids[k] == c) ic = k;
        }
        dp_graph_builder_add_edge(b, ia, ic, dp_test_dot_attr(s, "Weight"));
    }
    dp_graph *g = dp_graph_builder_finish(b, &err);
    dp_graph_builder_free(b);
    free(ids);
    free(w);
    free(st);
    free(text);
    return g;
}

#endif
