/* dp_test_taskgraph.h: the reference numbers Sinnen's DOT task graphs carry in their graph
 * attributes ("Number of processors"=P, "Total schedule length"=L), which the library's DOT
 * reader (dp_graph_read_dot) does not keep. For tests and benchmarks only. */
#ifndef DP_TEST_TASKGRAPH_H
#define DP_TEST_TASKGRAPH_H

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dp_file.h"

/* numeric value after `"key"=` in text (NAN if absent) */
static double dp_test_dot_attr(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
        const char *q = p + kl;
        if (p > text && p[-1] == '"' && *q == '"' && q[1] == '=') return strtod(q + 2, NULL);
    }
    return 0.0 / 0.0;
}

/* *procs and *length from the file's graph attributes (0 / NAN when absent); -1 if unreadable. */
static int dp_test_dot_reference(const char *path, int *procs, double *length)
{
    size_t size;
    dp_error err;
    char *text = dp_file_read(path, &size, &err);
    if (!text) return -1;
    double p = dp_test_dot_attr(text, "Number of processors");
    *procs = p == p ? (int)p : 0;
    *length = dp_test_dot_attr(text, "Total schedule length");
    free(text);
    return 0;
}

#endif
