/* fuzz_common.h: what the libFuzzer harnesses share.
 *
 * The readers take paths, so a harness hands its input to them through an in-memory file
 * (memfd, named /proc/self/fd/N): no disk traffic and nothing left behind. A graph that a reader
 * accepts is then checked against the graph's invariants and pushed through the rest of the
 * pipeline (cost tables, b-levels, critical-path placement, simulation, JSON round trip), so a
 * reader that lets through something the rest cannot digest is found too. Any broken invariant
 * aborts, which libFuzzer reports as a crash with the input saved.
 */
#ifndef DP_FUZZ_COMMON_H
#define DP_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp_cost.h"
#include "dp_env.h"
#include "dp_graph.h"
#include "dp_json.h"
#include "dp_place.h"
#include "dp_sim.h"

#define FUZZ_CHECK(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort(); \
        } \
    } while (0)

/* The input as file number `slot` (0..7, for readers that take several files): returns its
 * path (valid until the next call for that slot). */
static inline const char *fuzz_file_slot(int slot, const uint8_t *data, size_t size)
{
    static int fds[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    static char paths[8][64];
    int fd = fds[slot];
    const char *path = paths[slot];
    if (fd < 0) {
        fd = fds[slot] = memfd_create("fuzz-input", 0);
        FUZZ_CHECK(fd >= 0);
        snprintf(paths[slot], sizeof paths[slot], "/proc/self/fd/%d", fd);
    }
    FUZZ_CHECK(ftruncate(fd, 0) == 0);
    size_t off = 0;
    while (off < size) {
        ssize_t w = pwrite(fd, data + off, size - off, (off_t)off);
        FUZZ_CHECK(w > 0);
        off += (size_t)w;
    }
    return path;
}

/* The input as a real file (for libraries that cannot open /proc/self/fd paths: HDF5 locks and
 * reopens by name), in /dev/shm when it exists; removed at exit. */
static char fuzz_real_path[64];
static void fuzz_real_cleanup(void) { if (fuzz_real_path[0]) unlink(fuzz_real_path); }
static inline const char *fuzz_real_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0) {
        snprintf(fuzz_real_path, sizeof fuzz_real_path, "%s/dp-fuzz-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        fd = mkstemp(fuzz_real_path);
        FUZZ_CHECK(fd >= 0);
        atexit(fuzz_real_cleanup);
    }
    FUZZ_CHECK(ftruncate(fd, 0) == 0);
    size_t off = 0;
    while (off < size) {
        ssize_t w = pwrite(fd, data + off, size - off, (off_t)off);
        FUZZ_CHECK(w > 0);
        off += (size_t)w;
    }
    return fuzz_real_path;
}

/* The input as a file: returns its path (valid until the next call). */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    return fuzz_file_slot(0, data, size);
}

/* A failed read must leave a message that names the file. */
static inline void fuzz_check_error(const dp_error *err, const char *path)
{
    FUZZ_CHECK(err->code != DP_OK);
    FUZZ_CHECK(err->msg[0] != '\0');
    FUZZ_CHECK(strstr(err->msg, path) != NULL);
}

/* The structural invariants dp_graph.h promises. */
static inline void fuzz_check_graph(const dp_graph *g)
{
    const int n = g->n_ops, m = g->n_edges;
    FUZZ_CHECK(n > 0 && m >= 0);
    FUZZ_CHECK(g->succ_ptr[0] == 0 && g->succ_ptr[n] == m);
    FUZZ_CHECK(g->pred_ptr[0] == 0 && g->pred_ptr[n] == m);
    for (int v = 0; v < n; v++) {
        FUZZ_CHECK(g->op_name[v] && g->op_kind[v]);
        FUZZ_CHECK(isfinite(g->work[v]) && g->work[v] >= 0);
        FUZZ_CHECK(isfinite(g->out_size[v]) && g->out_size[v] >= 0);
        FUZZ_CHECK(g->op_ndim[v] >= 0 && g->op_ndim[v] <= DP_GRAPH_MAX_DIMS);
        FUZZ_CHECK(g->succ_ptr[v] <= g->succ_ptr[v + 1] && g->pred_ptr[v] <= g->pred_ptr[v + 1]);
        for (int e = g->succ_ptr[v]; e < g->succ_ptr[v + 1]; e++) FUZZ_CHECK(g->edge_src[e] == v);
        for (int k = g->pred_ptr[v]; k < g->pred_ptr[v + 1]; k++) {
            int e = g->pred_edge[k];
            FUZZ_CHECK(e >= 0 && e < m && g->edge_dst[e] == v);
        }
    }
    for (int e = 0; e < m; e++) {
        FUZZ_CHECK(g->edge_src[e] >= 0 && g->edge_src[e] < n);
        FUZZ_CHECK(g->edge_dst[e] >= 0 && g->edge_dst[e] < n);
        FUZZ_CHECK(g->edge_src[e] != g->edge_dst[e]);
        FUZZ_CHECK(isfinite(g->edge_size[e]) && g->edge_size[e] >= 0);
    }
    /* topo is a permutation in which every edge goes forward */
    int *pos = malloc((size_t)n * sizeof *pos);
    FUZZ_CHECK(pos != NULL);
    for (int v = 0; v < n; v++) pos[v] = -1;
    for (int k = 0; k < n; k++) {
        FUZZ_CHECK(g->topo[k] >= 0 && g->topo[k] < n && pos[g->topo[k]] < 0);
        pos[g->topo[k]] = k;
    }
    for (int e = 0; e < m; e++) FUZZ_CHECK(pos[g->edge_src[e]] < pos[g->edge_dst[e]]);
    free(pos);
    int ns = 0, nk = 0;
    for (int v = 0; v < n; v++) {
        if (g->pred_ptr[v] == g->pred_ptr[v + 1]) FUZZ_CHECK(g->sources[ns++] == v);
        if (g->succ_ptr[v] == g->succ_ptr[v + 1]) FUZZ_CHECK(g->sinks[nk++] == v);
    }
    FUZZ_CHECK(ns == g->n_sources && nk == g->n_sinks);
}

/* Critical-path placement and simulation under given cost tables, and the bound every makespan
 * must respect (transfers only add delay). */
static inline void fuzz_check_costs_pipeline(const dp_graph *g, const dp_cost *c)
{
    dp_error err;
    FUZZ_CHECK(c->n_ops == g->n_ops && c->n_edges == g->n_edges && c->n_devices > 0);
    for (size_t k = 0; k < (size_t)g->n_ops * c->n_devices; k++) FUZZ_CHECK(isfinite(c->op_time[k]) && c->op_time[k] >= 0);
    int *a = malloc((size_t)g->n_ops * sizeof *a);
    FUZZ_CHECK(a != NULL);
    FUZZ_CHECK(dp_place("cp", g, c, NULL, a, NULL, NULL, &err) == DP_OK);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    FUZZ_CHECK(s != NULL);
    dp_sim_result r;
    FUZZ_CHECK(dp_sim_run(s, a, &r, &err) == DP_OK);
    double lb = dp_cost_lower_bound(g, c);
    FUZZ_CHECK(!(r.makespan < lb * (1 - 1e-9)));
    for (int v = 0; v < g->n_ops; v++) FUZZ_CHECK(r.op_end[v] >= r.op_start[v]);
    dp_sim_free(s);
    free(a);
}

/* Cost tables on 3 devices, then the above. Physical graphs go on the uniform machine. */
static inline void fuzz_check_pipeline(const dp_graph *g)
{
    dp_error err;
    dp_cost *c = dp_cost_uniform(g, 3, 1e12, 1e10, 1e-6, &err);
    FUZZ_CHECK(c != NULL);
    fuzz_check_costs_pipeline(g, c);
    dp_cost_free(c);
}

/* Writing the graph as native JSON and reading it back gives the same graph. */
static inline void fuzz_check_json_round_trip(const dp_graph *g)
{
    json_t *j = dp_json_from_graph(g);
    FUZZ_CHECK(j != NULL);
    dp_error err;
    dp_graph *h = dp_json_to_graph(j, "round-trip", &err);
    if (!h) fprintf(stderr, "round trip failed: %s\n", err.msg);
    FUZZ_CHECK(h != NULL);
    FUZZ_CHECK(h->n_ops == g->n_ops && h->n_edges == g->n_edges && h->cost_kind == g->cost_kind);
    for (int v = 0; v < g->n_ops; v++) {
        FUZZ_CHECK(strcmp(h->op_name[v], g->op_name[v]) == 0);
        FUZZ_CHECK(h->work[v] == g->work[v] && h->out_size[v] == g->out_size[v]);
    }
    for (int e = 0; e < g->n_edges; e++)
        FUZZ_CHECK(h->edge_src[e] == g->edge_src[e] && h->edge_dst[e] == g->edge_dst[e] &&
                   h->edge_size[e] == g->edge_size[e]);
    dp_graph_free(h);
    json_decref(j);
}

/* Everything above, for a graph a reader accepted. */
static inline void fuzz_check_accepted_graph(const dp_graph *g)
{
    fuzz_check_graph(g);
    fuzz_check_pipeline(g);
    fuzz_check_json_round_trip(g);
}

#endif
