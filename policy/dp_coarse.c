/* dp_coarse.c: coarsened placement (see dp_coarse.h for the grouping rules and why the group
 * graph is acyclic). */
#include "dp_coarse.h"
#include "dp_alloc.h"
#include "dp_engine.h"
#include "dp_heap.h"
#include "dp_machine.h"
#include "dp_problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One pass of the grouping rule (dp_coarse.h) over g: forward (an op joins the group of its
 * predecessors, ops visited highest b-level first) or backward (an op joins the group of its
 * successors: the same rule on the reversed graph, highest t-level first). weight (NULL: 1 per
 * op) is each op's size in ops of the original graph. Groups are numbered in a topological
 * order of g's group graph (a backward pass's creation order reversed). */
static int group_pass(const dp_graph *g, const dp_cost *c, const int *weight, int max_group, int backward,
                      int *group_of, int *n_groups, dp_error *err)
{
    const int n = g->n_ops;
    double *level = dp_alloc_malloc_n((size_t)n, sizeof(double));
    double *other = dp_alloc_malloc_n((size_t)n, sizeof(double));
    int *waiting = dp_alloc_malloc_n((size_t)n, sizeof(int));     /* in-neighbours not yet visited */
    int *size = dp_alloc_malloc_n((size_t)n, sizeof(int));        /* per group: its ops (weights) */
    dp_heap_evq heap = {.a = dp_alloc_malloc_n((size_t)n + 1, sizeof(dp_heap_ev)), .n = 0, .cap = n + 1};
    if (!level || !other || !waiting || !size || !heap.a) {
        free(level); free(other); free(waiting); free(size); free(heap.a);
        return dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d ops", n);
    }
    if (backward) dp_cost_levels(g, c, other, level);
    else dp_cost_levels(g, c, level, other);
    /* in-neighbours of v: its predecessors (forward) or successors (backward) */
#define IN_BEGIN(v) (backward ? g->succ_ptr[v] : g->pred_ptr[v])
#define IN_END(v) (backward ? g->succ_ptr[(v) + 1] : g->pred_ptr[(v) + 1])
#define IN_OP(i) (backward ? g->edge_dst[i] : g->edge_src[g->pred_edge[i]])
#define OUT_BEGIN(v) (backward ? g->pred_ptr[v] : g->succ_ptr[v])
#define OUT_END(v) (backward ? g->pred_ptr[(v) + 1] : g->succ_ptr[(v) + 1])
#define OUT_OP(i) (backward ? g->edge_src[g->pred_edge[i]] : g->edge_dst[i])
    /* Kahn's algorithm, highest level first (ties: lowest id): a min-heap on (-level, id) */
    for (int v = 0; v < n; v++) {
        waiting[v] = IN_END(v) - IN_BEGIN(v);
        if (waiting[v] == 0) dp_heap_evq_push_seq(&heap, -level[v], (uint64_t)v, (uint32_t)v);
    }
    int ng = 0;
    while (heap.n > 0) {
        const int v = (int)dp_heap_evq_pop(&heap).ev, wv = weight ? weight[v] : 1;
        int G = -1, joins = IN_BEGIN(v) < IN_END(v);
        for (int i = IN_BEGIN(v); i < IN_END(v) && joins; i++) {
            const int u = IN_OP(i);
            if (G < 0) G = group_of[u];
            if (group_of[u] != G) joins = 0;  /* (a) every in-neighbour in G */
        }
        if (joins && size[G] + wv <= max_group) { /* (b) room */
            group_of[v] = G;
            size[G] += wv;
        } else {
            group_of[v] = ng;
            size[ng++] = wv;
        }
        for (int i = OUT_BEGIN(v); i < OUT_END(v); i++) {
            const int w = OUT_OP(i);
            if (--waiting[w] == 0) dp_heap_evq_push_seq(&heap, -level[w], (uint64_t)w, (uint32_t)w);
        }
    }
#undef IN_BEGIN
#undef IN_END
#undef IN_OP
#undef OUT_BEGIN
#undef OUT_END
#undef OUT_OP
    if (backward)
        for (int v = 0; v < n; v++) group_of[v] = ng - 1 - group_of[v];
    *n_groups = ng;
    free(level); free(other); free(waiting); free(size); free(heap.a);
    return DP_OK;
}

/* The chains rule (dp_coarse.h): forward pass, then passes on the group graph in turn. */
static int groups_chains(const dp_graph *g, const dp_cost *c, int max_group, int *group_of, int *n_groups, dp_error *err)
{
    const int n = g->n_ops;
    int ng = 0, rc = group_pass(g, c, NULL, max_group, 0, group_of, &ng, err);
    if (rc != DP_OK) return rc;
    /* levels: the same rule on the group graph, backward and forward in turn, while a pass
     * still merges (at most DP_COARSE_MAX_PASSES passes in all) */
    int *sub = dp_alloc_malloc_n((size_t)n, sizeof(int)), *weight = dp_alloc_calloc_n((size_t)n, sizeof(int));
    if (!sub || !weight) {
        free(sub); free(weight);
        return dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d ops", n);
    }
    for (int pass = 1, still = 1; pass < DP_COARSE_MAX_PASSES && still && max_group > 1; pass++) {
        dp_graph *gg = NULL;
        dp_cost *gc = NULL;
        if ((rc = dp_coarse_graph(g, c, group_of, ng, &gg, &gc, err)) != DP_OK) break;
        memset(weight, 0, (size_t)ng * sizeof(int));
        for (int v = 0; v < n; v++) weight[group_of[v]]++;
        int nsub = 0;
        rc = group_pass(gg, gc, weight, max_group, pass % 2, sub, &nsub, err);
        dp_graph_free(gg);
        dp_cost_free(gc);
        if (rc != DP_OK) break;
        /* two passes in a row that merge nothing: no pass will */
        if (nsub == ng && pass > 1 && still == 2) still = 0;
        else still = nsub == ng ? 2 : 1;
        for (int v = 0; v < n; v++) group_of[v] = sub[group_of[v]];
        ng = nsub;
    }
    free(sub);
    free(weight);
    if (rc != DP_OK) return rc;
    *n_groups = ng;
    return DP_OK;
}

/* Union-find root of x, halving the path. */
static int uf_find(int *parent, int x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* The intervals rule (dp_coarse.h). order: a depth-first topological order (each op emitted
 * right after the unemitted ops it needs: post-order over predecessors from the sinks, in id
 * order); interval cuts where a component would exceed max_group; the components of each
 * interval packed in order of their first op while the pack has room. */
static int groups_intervals(const dp_graph *g, int max_group, int *group_of, int *n_groups, dp_error *err)
{
    const int n = g->n_ops;
    int *order = dp_alloc_malloc_n((size_t)n, sizeof(int));
    int *stack = dp_alloc_malloc_n((size_t)n, sizeof(int));  /* DFS: ops on the path */
    int *next = dp_alloc_malloc_n((size_t)n, sizeof(int));   /* DFS: next predecessor to try; later: union-find parent */
    int *size = dp_alloc_malloc_n((size_t)n, sizeof(int));   /* per component root: its ops */
    int *interval = dp_alloc_malloc_n((size_t)n, sizeof(int));
    int *stamp = dp_alloc_malloc_n((size_t)n, sizeof(int));  /* per root: the last op that counted it; later: its pack */
    if (!order || !stack || !next || !size || !interval || !stamp) {
        free(order); free(stack); free(next); free(size); free(interval); free(stamp);
        return dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d ops", n);
    }
    /* 1. the order: iterative post-order DFS over predecessors; every op reaches a sink */
    int no = 0;
    for (int v = 0; v < n; v++) next[v] = -1; /* -1: not visited */
    for (int r = 0; r < n; r++) {
        if (g->succ_ptr[r + 1] > g->succ_ptr[r] || next[r] >= 0) continue;
        int top = 0;
        stack[top++] = r;
        next[r] = g->pred_ptr[r];
        while (top > 0) {
            const int v = stack[top - 1];
            if (next[v] < g->pred_ptr[v + 1]) {
                const int u = g->edge_src[g->pred_edge[next[v]++]];
                if (next[u] < 0) {
                    next[u] = g->pred_ptr[u];
                    stack[top++] = u;
                }
            } else {
                order[no++] = v;
                top--;
            }
        }
    }
    if (no != n) { /* a cycle: dp_graph refuses those, so this is a caller's corrupt graph */
        free(order); free(stack); free(next); free(size); free(interval); free(stamp);
        return dp_error_set(err, DP_EINVAL, "coarsen: %s: %d of %d ops reach no sink", g->source, n - no, n);
    }
    /* 2. intervals and their components (union-find; next[] is the parent now) */
    int *parent = next, cur = 0;
    for (int v = 0; v < n; v++) stamp[v] = -1;
    for (int i = 0; i < n; i++) {
        const int v = order[i];
        int total = 1;
        for (int k = g->pred_ptr[v]; k < g->pred_ptr[v + 1]; k++) {
            const int u = g->edge_src[g->pred_edge[k]];
            if (interval[u] != cur) continue;
            const int ru = uf_find(parent, u);
            if (stamp[ru] != v) { /* each component once (repeated edges, several inputs in one) */
                stamp[ru] = v;
                total += size[ru];
            }
        }
        if (total > max_group) { /* v would make a component too large: a new interval */
            cur++;
            total = 1;
        }
        interval[v] = cur;
        parent[v] = v;
        size[v] = total;
        if (total > 1)
            for (int k = g->pred_ptr[v]; k < g->pred_ptr[v + 1]; k++) {
                const int u = g->edge_src[g->pred_edge[k]];
                if (interval[u] == cur) parent[uf_find(parent, u)] = v;
            }
    }
    /* 3. packs: an interval's components in order of their first op, next fit */
    for (int v = 0; v < n; v++) stamp[v] = -1;
    int ng = 0, pack_size = 0, pack_interval = -1;
    for (int i = 0; i < n; i++) {
        const int v = order[i], r = uf_find(parent, v);
        if (stamp[r] < 0) {
            if (interval[v] == pack_interval && pack_size + size[r] <= max_group) {
                pack_size += size[r];
            } else {
                ng++;
                pack_size = size[r];
                pack_interval = interval[v];
            }
            stamp[r] = ng - 1;
        }
        group_of[v] = stamp[r];
    }
    *n_groups = ng;
    free(order); free(stack); free(next); free(size); free(interval); free(stamp);
    return DP_OK;
}

int dp_coarse_groups(const dp_graph *g, const dp_cost *c, dp_coarse_rule rule, int max_group, int *group_of,
                     int *n_groups, dp_error *err)
{
    if (max_group < 1) return dp_error_set(err, DP_EINVAL, "coarsen: the largest group must be at least 1 op, got %d", max_group);
    if (c->n_ops != g->n_ops || c->n_edges != g->n_edges)
        return dp_error_set(err, DP_EINVAL, "coarsen: %s: cost tables do not match the graph", g->source);
    switch (rule) {
    case DP_COARSE_INTERVALS: return groups_intervals(g, max_group, group_of, n_groups, err);
    case DP_COARSE_CHAINS: return groups_chains(g, c, max_group, group_of, n_groups, err);
    }
    return dp_error_set(err, DP_EINVAL, "coarsen: unknown grouping rule %d", (int)rule);
}

int dp_coarse_rule_parse(const char *name, dp_coarse_rule *rule)
{
    if (!name) return DP_EINVAL;
    if (strcmp(name, "intervals") == 0) *rule = DP_COARSE_INTERVALS;
    else if (strcmp(name, "chains") == 0) *rule = DP_COARSE_CHAINS;
    else return DP_EINVAL;
    return DP_OK;
}

void dp_coarse_expand(int n_ops, const int *group_of, const int *group_assignment, int *assignment)
{
    for (int v = 0; v < n_ops; v++) assignment[v] = group_assignment[group_of[v]];
}

int dp_coarse_graph(const dp_graph *g, const dp_cost *c, const int *group_of, int n_groups, dp_graph **gg,
                    dp_cost **gc, dp_error *err)
{
    const int n = g->n_ops, D = c->n_devices;
    *gg = NULL;
    *gc = NULL;
    if (n_groups < 1 || n_groups > n) return dp_error_set(err, DP_EINVAL, "coarsen: %d groups for %d ops", n_groups, n);
    for (int v = 0; v < n; v++)
        if (group_of[v] < 0 || group_of[v] >= n_groups)
            return dp_error_set(err, DP_EINVAL, "coarsen: op %d (\"%s\") in group %d, outside 0..%d", v, g->op_name[v],
                                group_of[v], n_groups - 1);
    for (int e = 0; e < g->n_edges; e++)
        if (group_of[g->edge_src[e]] > group_of[g->edge_dst[e]])
            return dp_error_set(err, DP_EINVAL, "coarsen: edge %d (\"%s\" -> \"%s\") goes from group %d back to group %d: "
                                "the groups are not numbered in a topological order", e, g->op_name[g->edge_src[e]],
                                g->op_name[g->edge_dst[e]], group_of[g->edge_src[e]], group_of[g->edge_dst[e]]);
    /* members of each group in op order (a counting sort), their first op, the groups' times */
    int *ptr = dp_alloc_calloc_n((size_t)n_groups + 1, sizeof(int));
    int *mem = dp_alloc_malloc_n((size_t)n, sizeof(int));
    double *acc = dp_alloc_calloc_n((size_t)n_groups, sizeof(double)); /* per destination group: data */
    int *seen = dp_alloc_malloc_n((size_t)n_groups, sizeof(int));      /* per destination group: last source */
    int *touched = dp_alloc_malloc_n((size_t)n_groups, sizeof(int));
    int *last_dst = dp_alloc_malloc_n((size_t)n, sizeof(int));          /* per op: last destination op seen */
    double *gtime = dp_alloc_calloc_n((size_t)n_groups * D, sizeof(double));
    dp_graph_builder *b = NULL;
    int rc = DP_ENOMEM;
    if (!ptr || !mem || !acc || !seen || !touched || !last_dst || !gtime) goto nomem;
    for (int v = 0; v < n; v++) ptr[group_of[v] + 1]++;
    for (int k = 0; k < n_groups; k++) {
        if (ptr[k + 1] == 0) {
            rc = dp_error_set(err, DP_EINVAL, "coarsen: group %d has no op", k);
            goto out;
        }
        ptr[k + 1] += ptr[k];
    }
    for (int v = 0; v < n; v++) mem[ptr[group_of[v]]++] = v;
    for (int k = n_groups; k > 0; k--) ptr[k] = ptr[k - 1];
    ptr[0] = 0;
    for (int v = 0; v < n; v++)
        for (int d = 0; d < D; d++) gtime[(size_t)group_of[v] * D + d] += dp_cost_op(c, v, d);
    b = dp_graph_builder_alloc(g->name, g->source, DP_GRAPH_COST_TIME);
    if (!b || dp_graph_builder_set_time_unit(b, g->time_scale, g->time_unit) != DP_OK) goto nomem;
    if (g->devices > 0) dp_graph_builder_set_devices(b, g->devices);
    for (int k = 0; k < n_groups; k++) {
        const int first = mem[ptr[k]], more = ptr[k + 1] - ptr[k] - 1;
        char name[64];
        if (more > 0) snprintf(name, sizeof name, "%.40s+%d", g->op_name[first], more);
        else snprintf(name, sizeof name, "%.40s", g->op_name[first]);
        /* a truncated name may repeat another's: the group number keeps it unique */
        if (strlen(g->op_name[first]) > 40) snprintf(name, sizeof name, "group%d", k);
        double mean = 0;
        for (int d = 0; d < D; d++) mean += gtime[(size_t)k * D + d];
        if (dp_graph_builder_add_op(b, name, "group", mean / D, 0) != k) goto nomem;
    }
    /* edges: per source group, the data of the distinct (u, v) pairs into each other group */
    for (int k = 0; k < n_groups; k++) seen[k] = -1;
    for (int v = 0; v < n; v++) last_dst[v] = -1;
    for (int k = 0; k < n_groups; k++) {
        int nt = 0;
        for (int i = ptr[k]; i < ptr[k + 1]; i++) {
            const int u = mem[i];
            for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++) {
                const int w = g->edge_dst[e], h = group_of[w];
                if (h == k || last_dst[u] == w) continue; /* inside, or a repeated (u, w) edge */
                last_dst[u] = w;
                if (seen[h] != k) {
                    seen[h] = k;
                    acc[h] = 0;
                    touched[nt++] = h;
                }
                acc[h] += c->edge_data[e];
            }
        }
        for (int i = 0; i < nt; i++)
            if (dp_graph_builder_add_edge(b, k, touched[i], acc[touched[i]]) < 0) goto nomem;
    }
    dp_graph *G = dp_graph_builder_finish(b, err);
    if (!G) {
        rc = err ? err->code : DP_EINVAL;
        goto out;
    }
    dp_cost *C = dp_cost_alloc(G, D);
    if (!C) {
        dp_graph_free(G);
        goto nomem;
    }
    memcpy(C->op_time, gtime, (size_t)n_groups * D * sizeof(double));
    for (int e = 0; e < G->n_edges; e++) C->edge_data[e] = G->edge_size[e];
    memcpy(C->latency, c->latency, (size_t)D * D * sizeof(double));
    memcpy(C->inv_bw, c->inv_bw, (size_t)D * D * sizeof(double));
    C->time_scale = c->time_scale;
    dp_cost_update_homogeneous(C);
    *gg = G;
    *gc = C;
    rc = DP_OK;
    goto out;
nomem:
    rc = dp_error_set(err, DP_ENOMEM, "coarsen: %s: out of memory for the group graph (%d groups)", g->source, n_groups);
out:
    dp_graph_builder_free(b);
    free(ptr); free(mem); free(acc); free(seen); free(touched); free(last_dst); free(gtime);
    return rc;
}

static double cpu_now(void) { return (double)clock() / CLOCKS_PER_SEC; }

int dp_coarse_place(const char *method, const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                    dp_coarse_rule rule, int max_group, int *assignment, dp_coarse_report *rep, dp_error *err)
{
    dp_coarse_report r = {0};
    if (!g || !c || !assignment || !o) return dp_error_set(err, DP_EINVAL, "coarsen: graph, costs, options and assignment are required");
    if (!dp_place_find(method))
        return dp_place(method, g, c, o, assignment, NULL, NULL, err); /* its message lists the methods */
    if (o->refine && !o->oracle) return dp_error_set(err, DP_EINVAL, "refine: it simulates: it needs the machine's cost oracle");
    const int n = g->n_ops, D = c->n_devices;
    double t0 = cpu_now();
    int *group_of = dp_alloc_malloc_n((size_t)n, sizeof(int)), ng = 0;
    int *start = dp_alloc_malloc_n((size_t)n, sizeof(int));
    int *gassign = NULL;
    dp_graph *gg = NULL;
    dp_cost *gc = NULL;
    dp_problem *gp = NULL;
    dp_machine m;
    dp_machine_init(&m);
    int rc;
    if (!group_of || !start) {
        rc = dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d ops", n);
        goto out;
    }
    if ((rc = dp_coarse_groups(g, c, rule, max_group, group_of, &ng, err)) != DP_OK) goto out;
    if ((rc = dp_coarse_graph(g, c, group_of, ng, &gg, &gc, err)) != DP_OK) goto out;
    char dev[16];
    snprintf(dev, sizeof dev, "%d", D);
    if ((rc = dp_machine_set(&m, "devices", dev, err)) != DP_OK || (rc = dp_machine_load(&m, err)) != DP_OK) goto out;
    if (!(gp = dp_problem_alloc_with_costs(gg, gc, &m, err))) {
        rc = err ? err->code : DP_ENOMEM;
        goto out;
    }
    if (!(gassign = dp_alloc_malloc_n((size_t)ng, sizeof(int)))) {
        rc = dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d groups", ng);
        goto out;
    }
    r.n_groups = ng;
    r.n_group_edges = gg->n_edges;
    {
        int *cnt = dp_alloc_calloc_n((size_t)ng, sizeof(int));
        if (!cnt) {
            rc = dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d groups", ng);
            goto out;
        }
        for (int v = 0; v < n; v++)
            if (++cnt[group_of[v]] > r.largest_group) r.largest_group = cnt[group_of[v]];
        free(cnt);
    }
    double t1 = cpu_now();
    r.cpu_group_s = t1 - t0;
    dp_place_options inner = *o;
    inner.oracle = &gp->oracle;
    inner.machine = &m;
    inner.refine = NULL;
    inner.refine_budget = 0;
    inner.proposal = NULL;
    inner.best_seen = 0;
    if ((rc = dp_place(method, gg, gc, &inner, gassign, NULL, NULL, err)) != DP_OK) goto out;
    r.group_simulations = dp_engine_simulations(gp->engine);
    double t2 = cpu_now();
    r.cpu_place_s = t2 - t1;
    if (o->refine) {
        dp_coarse_expand(n, group_of, gassign, start);
        if ((rc = dp_place_refine(g, c, o, start, NULL, assignment, err)) != DP_OK) goto out;
        r.cpu_refine_s = cpu_now() - t2;
    } else {
        dp_coarse_expand(n, group_of, gassign, assignment);
    }
    if (rep) *rep = r;
    rc = DP_OK;
out:
    dp_problem_free(gp);
    dp_cost_free(gc);
    dp_graph_free(gg);
    dp_machine_free(&m);
    free(group_of);
    free(start);
    free(gassign);
    return rc;
}
