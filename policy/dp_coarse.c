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

/* Merges within the critical path (the packed rule, dp_coarse.h), on the group graph of
 * group_of (numbered topologically). State: union-find over its nodes (a root stands for a
 * merged group and keeps its number), member lists, mean work w, and the levels without
 * communication: tl (longest work path before the group) and bl (from its start to the end). */
typedef struct slack_state {
    const dp_graph *gg;
    int *parent, *first, *next, *last, *size;
    double *w, *tl, *bl;
    int *stack;              /* groups whose neighbours' levels are to be recomputed */
    unsigned char *stacked;  /* per group: on the stack (each at most once: ng entries) */
} slack_state;

static int slack_find(int *parent, int x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* the latest finish (tl + w) of the groups that feed group x, except groups skip1 and skip2 */
static double slack_ready(slack_state *s, int x, int skip1, int skip2)
{
    double t = 0;
    for (int m = s->first[x]; m >= 0; m = s->next[m])
        for (int q = s->gg->pred_ptr[m]; q < s->gg->pred_ptr[m + 1]; q++) {
            const int r = slack_find(s->parent, s->gg->edge_src[s->gg->pred_edge[q]]);
            if (r != x && r != skip1 && r != skip2 && s->tl[r] + s->w[r] > t) t = s->tl[r] + s->w[r];
        }
    return t;
}

/* the longest bl of the groups that group x feeds, except skip1 and skip2 */
static double slack_tail(slack_state *s, int x, int skip1, int skip2)
{
    double b = 0;
    for (int m = s->first[x]; m >= 0; m = s->next[m])
        for (int e = s->gg->succ_ptr[m]; e < s->gg->succ_ptr[m + 1]; e++) {
            const int r = slack_find(s->parent, s->gg->edge_dst[e]);
            if (r != x && r != skip1 && r != skip2 && s->bl[r] > b) b = s->bl[r];
        }
    return b;
}

/* after x's levels changed: the levels of its descendants (fwd) or ancestors (!fwd) again, as
 * far as they change */
static void slack_propagate(slack_state *s, int x, int fwd)
{
    int top = 0;
    s->stack[top++] = x;
    s->stacked[x] = 1;
    while (top > 0) {
        const int y = s->stack[--top];
        s->stacked[y] = 0;
        for (int m = s->first[y]; m >= 0; m = s->next[m]) {
            const int b = fwd ? s->gg->succ_ptr[m] : s->gg->pred_ptr[m], e_ = fwd ? s->gg->succ_ptr[m + 1] : s->gg->pred_ptr[m + 1];
            for (int i = b; i < e_; i++) {
                const int z = slack_find(s->parent, fwd ? s->gg->edge_dst[i] : s->gg->edge_src[s->gg->pred_edge[i]]);
                if (z == y) continue;
                int changed = 0;
                if (fwd) {
                    const double t = slack_ready(s, z, -1, -1);
                    changed = t != s->tl[z];
                    s->tl[z] = t;
                } else {
                    const double bz = s->w[z] + slack_tail(s, z, -1, -1);
                    changed = bz != s->bl[z];
                    s->bl[z] = bz;
                }
                if (changed && !s->stacked[z]) {
                    s->stack[top++] = z;
                    s->stacked[z] = 1;
                }
            }
        }
    }
}

static int slack_merges(const dp_graph *g, const dp_cost *c, int max_group, int *group_of, int *n_groups, dp_error *err)
{
    const int n = g->n_ops, ng = *n_groups;
    dp_graph *gg = NULL;
    dp_cost *gc = NULL;
    int rc = dp_coarse_graph(g, c, group_of, ng, &gg, &gc, err);
    if (rc != DP_OK) return rc;
    slack_state s = {.gg = gg};
    s.parent = dp_alloc_malloc_n((size_t)ng, sizeof(int));
    s.first = dp_alloc_malloc_n((size_t)ng, sizeof(int));
    s.next = dp_alloc_malloc_n((size_t)ng, sizeof(int));
    s.last = dp_alloc_malloc_n((size_t)ng, sizeof(int));
    s.size = dp_alloc_calloc_n((size_t)ng, sizeof(int));
    s.stack = dp_alloc_malloc_n((size_t)ng, sizeof(int));
    s.stacked = dp_alloc_calloc_n((size_t)ng, 1);
    s.w = dp_alloc_malloc_n((size_t)ng, sizeof(double));
    s.tl = dp_alloc_malloc_n((size_t)ng, sizeof(double));
    s.bl = dp_alloc_malloc_n((size_t)ng, sizeof(double));
    int *renum = dp_alloc_malloc_n((size_t)ng, sizeof(int));
    dp_heap_evq heap = {.a = dp_alloc_malloc_n(2 * (size_t)ng + 1, sizeof(dp_heap_ev)), .n = 0, .cap = 2 * ng + 1};
    if (!s.parent || !s.first || !s.next || !s.last || !s.size || !s.stack || !s.stacked || !s.w || !s.tl || !s.bl || !renum || !heap.a) {
        rc = dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d groups", ng);
        goto out;
    }
    for (int v = 0; v < n; v++) s.size[group_of[v]]++;
    double cp = 0;
    for (int k = 0; k < ng; k++) {
        s.parent[k] = s.first[k] = s.last[k] = k;
        s.next[k] = -1;
        s.w[k] = dp_cost_mean_op(gc, k);
    }
    for (int k = 0; k < ng; k++) s.tl[k] = slack_ready(&s, k, -1, -1); /* numbered topologically */
    for (int k = ng - 1; k >= 0; k--) {
        s.bl[k] = s.w[k] + slack_tail(&s, k, -1, -1);
        if (s.tl[k] + s.bl[k] > cp) cp = s.tl[k] + s.bl[k];
    }
    const double bound = cp * (1 + 1e-12);
    for (int k = 0; k < ng; k++) dp_heap_evq_push_seq(&heap, s.size[k], (uint64_t)k, (uint32_t)k);
    while (heap.n > 0) {
        const dp_heap_ev ev = dp_heap_evq_pop(&heap);
        const int L = (int)ev.ev;
        if (s.parent[L] != L || (double)s.size[L] != ev.t) continue; /* merged, or grown since */
        /* candidates: the latest group feeding L, the earliest group L feeds */
        int into[2] = {-1, -1};
        for (int m = s.first[L]; m >= 0; m = s.next[m]) {
            for (int q = gg->pred_ptr[m]; q < gg->pred_ptr[m + 1]; q++) {
                const int r = slack_find(s.parent, gg->edge_src[gg->pred_edge[q]]);
                if (r != L && r > into[0]) into[0] = r;
            }
            for (int e = gg->succ_ptr[m]; e < gg->succ_ptr[m + 1]; e++) {
                const int r = slack_find(s.parent, gg->edge_dst[e]);
                if (r != L && (into[1] < 0 || r < into[1])) into[1] = r;
            }
        }
        for (int i = 0; i < 2; i++) {
            const int t = into[i];
            if (t < 0 || s.size[t] + s.size[L] > max_group) continue;
            const double r0 = fmax(slack_ready(&s, t, L, -1), slack_ready(&s, L, t, -1));
            const double b0 = fmax(slack_tail(&s, t, L, -1), slack_tail(&s, L, t, -1));
            if (r0 + s.w[t] + s.w[L] + b0 > bound) continue;
            /* merge L into t: t keeps its number, which stays a topological one (dp_coarse.h) */
            s.parent[L] = t;
            s.next[s.last[t]] = s.first[L];
            s.last[t] = s.last[L];
            s.size[t] += s.size[L];
            s.w[t] += s.w[L];
            s.tl[t] = r0;
            s.bl[t] = s.w[t] + b0;
            slack_propagate(&s, t, 1);
            slack_propagate(&s, t, 0);
            dp_heap_evq_push_seq(&heap, s.size[t], (uint64_t)t, (uint32_t)t);
            break;
        }
    }
    int k = 0;
    for (int x = 0; x < ng; x++) renum[x] = s.parent[x] == x ? k++ : -1;
    for (int v = 0; v < n; v++) group_of[v] = renum[slack_find(s.parent, group_of[v])];
    *n_groups = k;
    rc = DP_OK;
out:
    free(s.parent); free(s.first); free(s.next); free(s.last); free(s.size); free(s.stack); free(s.stacked);
    free(s.w); free(s.tl); free(s.bl); free(renum); free(heap.a);
    dp_graph_free(gg);
    dp_cost_free(gc);
    return rc;
}

/* Sink packing (the packed rule, dp_coarse.h): the groups with no edge to another group (sinks)
 * that share their latest input group (the highest-numbered group with an edge into them) are
 * packed next fit, in their order, into groups of at most max_group ops, numbered after every
 * other group; the others keep their order. A sink joins the open pack only when the pack still
 * ends within the group graph's critical path by work (mean op times, no transfers, as the
 * merges'): a pack starts when the last input of any of its members is there and runs their work
 * in one piece, so it ends at max(tl) + sum(w) over its members; otherwise it opens a new pack.
 * A sink with no input group (an independent component: it shares no input with any group)
 * stays a group of its own: packing those together would run independent components one after
 * another. group_of is renumbered in place; its numbering is topological on entry. */
static int pack_sinks(const dp_graph *g, const dp_cost *c, int max_group, int *group_of, int *n_groups, dp_error *err)
{
    const int n = g->n_ops, ng = *n_groups;
    int *size = dp_alloc_calloc_n((size_t)ng, sizeof(int));
    int *renum = dp_alloc_malloc_n((size_t)ng, sizeof(int));
    int *latest = dp_alloc_malloc_n((size_t)ng, sizeof(int)); /* per group: its latest input group */
    int *next = dp_alloc_malloc_n((size_t)ng + 1, sizeof(int)); /* sinks by latest input: a linked list per key */
    int *head = dp_alloc_malloc_n((size_t)ng + 1, sizeof(int));
    unsigned char *feeds = dp_alloc_calloc_n((size_t)ng, 1); /* has an edge to another group */
    double *w = dp_alloc_calloc_n((size_t)ng, sizeof(double));  /* work: mean op times summed */
    double *tl = dp_alloc_calloc_n((size_t)ng, sizeof(double)); /* longest work path before it */
    int *in_ptr = dp_alloc_calloc_n((size_t)ng + 1, sizeof(int)); /* cross-group edges by destination */
    int *in_src = dp_alloc_malloc_n((size_t)g->n_edges + 1, sizeof(int));
    int rc = DP_OK;
    if (!size || !renum || !latest || !next || !head || !feeds || !w || !tl || !in_ptr || !in_src) {
        rc = dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d groups", ng);
        goto out;
    }
    for (int G = 0; G < ng; G++) latest[G] = -1;
    for (int v = 0; v < n; v++) {
        size[group_of[v]]++;
        w[group_of[v]] += dp_cost_mean_op(c, v);
    }
    for (int e = 0; e < g->n_edges; e++) {
        const int a = group_of[g->edge_src[e]], b = group_of[g->edge_dst[e]];
        if (a == b) continue;
        feeds[a] = 1;
        if (a > latest[b]) latest[b] = a;
        in_ptr[b + 1]++;
    }
    for (int G = 0; G < ng; G++) in_ptr[G + 1] += in_ptr[G];
    for (int e = 0; e < g->n_edges; e++) { /* in_ptr[b] is b's cursor, then b + 1's start */
        const int a = group_of[g->edge_src[e]], b = group_of[g->edge_dst[e]];
        if (a != b) in_src[in_ptr[b]++] = a;
    }
    for (int G = ng; G > 0; G--) in_ptr[G] = in_ptr[G - 1];
    in_ptr[0] = 0;
    double cp = 0;
    for (int G = 0; G < ng; G++) { /* numbered topologically: every input group is below G */
        for (int q = in_ptr[G]; q < in_ptr[G + 1]; q++)
            if (tl[in_src[q]] + w[in_src[q]] > tl[G]) tl[G] = tl[in_src[q]] + w[in_src[q]];
        if (tl[G] + w[G] > cp) cp = tl[G] + w[G];
    }
    const double bound = cp * (1 + 1e-12);
    int k = 0;
    for (int G = 0; G < ng; G++)
        if (feeds[G]) renum[G] = k++;
    /* key latest + 1 in 0..ng; each list in group order (built backwards) */
    for (int key = 0; key <= ng; key++) head[key] = -1;
    for (int G = ng - 1; G >= 0; G--)
        if (!feeds[G]) {
            next[G] = head[latest[G] + 1];
            head[latest[G] + 1] = G;
        }
    for (int key = 0; key <= ng; key++) {
        int pack = 0, room = 0;
        double ptl = 0, pw = 0; /* the open pack's start (latest input) and work */
        for (int G = head[key]; G >= 0; G = next[G]) {
            /* next fit: a new pack when G does not fit, or would end the pack past the critical
             * path; no input group: alone */
            if (size[G] > room || key == 0 || fmax(ptl, tl[G]) + pw + w[G] > bound) {
                pack = k++;
                room = max_group;
                ptl = pw = 0;
            }
            renum[G] = pack;
            room -= size[G];
            ptl = fmax(ptl, tl[G]);
            pw += w[G];
        }
    }
    for (int v = 0; v < n; v++) group_of[v] = renum[group_of[v]];
    *n_groups = k;
out:
    free(size); free(renum); free(latest); free(next); free(head); free(feeds);
    free(w); free(tl); free(in_ptr); free(in_src);
    return rc;
}

int dp_coarse_groups(const dp_graph *g, const dp_cost *c, dp_coarse_rule rule, int max_group, int *group_of,
                     int *n_groups, dp_error *err)
{
    if (max_group < 1) return dp_error_set(err, DP_EINVAL, "coarsen: the largest group must be at least 1 op, got %d", max_group);
    if (c->n_ops != g->n_ops || c->n_edges != g->n_edges)
        return dp_error_set(err, DP_EINVAL, "coarsen: %s: cost tables do not match the graph", g->source);
    switch (rule) {
    case DP_COARSE_PACKED: {
        int rc = groups_chains(g, c, max_group, group_of, n_groups, err);
        if (rc == DP_OK && max_group > 1) rc = slack_merges(g, c, max_group, group_of, n_groups, err);
        return rc != DP_OK ? rc : pack_sinks(g, c, max_group, group_of, n_groups, err);
    }
    case DP_COARSE_CHAINS: return groups_chains(g, c, max_group, group_of, n_groups, err);
    }
    return dp_error_set(err, DP_EINVAL, "coarsen: unknown grouping rule %d", (int)rule);
}

int dp_coarse_rule_parse(const char *name, dp_coarse_rule *rule)
{
    if (!name) return DP_EINVAL;
    if (strcmp(name, "packed") == 0) *rule = DP_COARSE_PACKED;
    else if (strcmp(name, "chains") == 0) *rule = DP_COARSE_CHAINS;
    else return DP_EINVAL;
    return DP_OK;
}

const char *dp_coarse_rule_name(dp_coarse_rule rule) { return rule == DP_COARSE_CHAINS ? "chains" : "packed"; }

const char *dp_coarse_options_text(int max_group, dp_coarse_rule rule, char *buf, size_t cap)
{
    if (max_group > 0) snprintf(buf, cap, "--coarsen %d%s", max_group, rule == DP_COARSE_CHAINS ? " --coarsen-rule chains" : "");
    else snprintf(buf, cap, "no --coarsen");
    return buf;
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

int dp_coarse_problem_init(dp_coarse_problem *cp, const dp_graph *g, const dp_cost *c, dp_coarse_rule rule,
                           int max_group, dp_error *err)
{
    memset(cp, 0, sizeof *cp);
    dp_machine_init(&cp->machine);
    if (!g || !c) return dp_error_set(err, DP_EINVAL, "coarsen: graph and costs are required");
    const int n = g->n_ops;
    int rc;
    cp->n_ops = n;
    if (!(cp->group_of = dp_alloc_malloc_n((size_t)n, sizeof(int)))) {
        rc = dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d ops", n);
        goto fail;
    }
    if ((rc = dp_coarse_groups(g, c, rule, max_group, cp->group_of, &cp->n_groups, err)) != DP_OK) goto fail;
    if ((rc = dp_coarse_graph(g, c, cp->group_of, cp->n_groups, &cp->graph, &cp->costs, err)) != DP_OK) goto fail;
    char dev[16];
    snprintf(dev, sizeof dev, "%d", c->n_devices);
    if ((rc = dp_machine_set(&cp->machine, "devices", dev, err)) != DP_OK || (rc = dp_machine_load(&cp->machine, err)) != DP_OK)
        goto fail;
    if (!(cp->problem = dp_problem_alloc_with_costs(cp->graph, cp->costs, &cp->machine, err))) {
        rc = err && err->code ? err->code : DP_ENOMEM;
        goto fail;
    }
    return DP_OK;
fail:
    dp_coarse_problem_free(cp);
    return rc;
}

/* one call of the expanded oracle: the group assignment expanded into the scratch, counted */
static const int *expand_call(dp_coarse_problem *cp, const int *assignment)
{
    cp->expanded_calls++;
    dp_coarse_expand(cp->n_ops, cp->group_of, assignment, cp->scratch);
    return cp->scratch;
}

static int expanded_cost(void *ctx, const int *assignment, double *cost, dp_error *err)
{
    dp_coarse_problem *cp = ctx;
    return dp_oracle_cost(&cp->inner, expand_call(cp, assignment), cost, err);
}

static int expanded_cost_bounded(void *ctx, const int *assignment, double bound, double *cost, dp_error *err)
{
    dp_coarse_problem *cp = ctx;
    return dp_oracle_cost_bounded(&cp->inner, expand_call(cp, assignment), bound, cost, err);
}

int dp_coarse_problem_expand_oracle(dp_coarse_problem *cp, const dp_oracle *inner, dp_error *err)
{
    if (!inner || !inner->cost) return dp_error_set(err, DP_EINVAL, "coarsen: the expanded oracle needs the graph's oracle");
    if (!cp->scratch && !(cp->scratch = dp_alloc_malloc_n((size_t)cp->n_ops, sizeof(int))))
        return dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d ops", cp->n_ops);
    cp->inner = *inner;
    memset(&cp->expanded, 0, sizeof cp->expanded);
    cp->expanded.name = inner->name;
    cp->expanded.cost = expanded_cost;
    cp->expanded.cost_bounded = inner->cost_bounded ? expanded_cost_bounded : NULL;
    cp->expanded.ctx = cp;
    cp->expanded.engine = NULL; /* its costs are not the group engine's: searches use cost */
    cp->expanded.state_engine = cp->problem->engine;
    cp->expanded.simulator = inner->simulator; /* the whole graph's: what its costs come from */
    return DP_OK;
}

void dp_coarse_problem_free(dp_coarse_problem *cp)
{
    if (!cp) return;
    free(cp->scratch);
    dp_problem_free(cp->problem);
    dp_cost_free(cp->costs);
    dp_graph_free(cp->graph);
    dp_machine_free(&cp->machine);
    free(cp->group_of);
    memset(cp, 0, sizeof *cp);
    dp_machine_init(&cp->machine);
}

int dp_coarse_place(const char *method, const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                    dp_coarse_rule rule, int max_group, int *assignment, dp_coarse_report *rep, dp_error *err)
{
    dp_coarse_report r = {0};
    if (!g || !c || !assignment || !o) return dp_error_set(err, DP_EINVAL, "coarsen: graph, costs, options and assignment are required");
    if (!dp_place_find(method))
        return dp_place(method, g, c, o, assignment, NULL, NULL, err); /* its message lists the methods */
    if (o->refine && !o->oracle) return dp_error_set(err, DP_EINVAL, "refine: it simulates: it needs the machine's cost oracle");
    const int n = g->n_ops;
    double t0 = cpu_now();
    int *start = dp_alloc_malloc_n((size_t)n, sizeof(int));
    int *gassign = NULL;
    dp_coarse_problem cp;
    int rc = dp_coarse_problem_init(&cp, g, c, rule, max_group, err);
    if (rc != DP_OK) {
        free(start);
        return rc;
    }
    const int ng = cp.n_groups;
    if (!start || !(gassign = dp_alloc_malloc_n((size_t)ng, sizeof(int)))) {
        rc = dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d groups", ng);
        goto out;
    }
    r.n_groups = ng;
    r.n_group_edges = cp.graph->n_edges;
    {
        int *cnt = dp_alloc_calloc_n((size_t)ng, sizeof(int));
        if (!cnt) {
            rc = dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d groups", ng);
            goto out;
        }
        for (int v = 0; v < n; v++)
            if (++cnt[cp.group_of[v]] > r.largest_group) r.largest_group = cnt[cp.group_of[v]];
        free(cnt);
    }
    /* graph info's bound and its terms, each op at its least time (mean times over the devices
     * gave a "bound" above the makespan on heterogeneous machines and with streams: a review) */
    double work;
    if (dp_cost_bound_terms(g, c, &r.cp_work, &work) != DP_OK ||
        dp_cost_bound_terms(cp.graph, cp.costs, &r.group_cp_work, NULL) != DP_OK) {
        rc = dp_error_set(err, DP_ENOMEM, "coarsen: out of memory for %d ops", g->n_ops);
        goto out;
    }
    r.work_bound = fmax(r.cp_work, work);
    double t1 = cpu_now();
    r.cpu_group_s = t1 - t0;
    /* the method's oracle: with the caller's, the expanded one (a group placement scored by its
     * expansion on the caller's machine: what the result is judged by, and what train --coarsen
     * rewards), so best-of-K sampling and searches rank placements as the result is measured;
     * the improvement search's state is an engine's schedule, so it searches the group graph's
     * own engine (a proxy), as every method does without a caller's oracle; so do annealing and
     * local search with an improvement policy's proposals, which read the schedule too (they
     * failed: "the cost oracle must be the machine's engine"; a review) */
    const int expand = o->oracle && strcmp(method, "improve") != 0 && !o->proposals;
    if (expand && (rc = dp_coarse_problem_expand_oracle(&cp, o->oracle, err)) != DP_OK) goto out;
    dp_place_options inner = *o;
    inner.oracle = expand ? &cp.expanded : &cp.problem->oracle;
    inner.machine = &cp.machine;
    inner.refine = NULL;
    inner.refine_budget = 0;
    inner.proposal = NULL;
    inner.best_seen = 0;
    inner.list_schedule_out = NULL; /* the group graph's schedule: not the caller's graph's */
    if ((rc = dp_place(method, cp.graph, cp.costs, &inner, gassign, NULL, NULL, err)) != DP_OK) {
        /* the method saw the group graph, which keeps the graph's source: its message counts
         * groups, not the file's ops ("27 ops" for 182; a review) */
        dp_error_prefix(err, "placing the %d groups of at most %d ops (--coarsen; each one op of the group graph)", ng,
                        max_group);
        goto out;
    }
    r.expanded_simulations = cp.expanded_calls;
    r.group_simulations = dp_engine_simulations(cp.problem->engine) + cp.expanded_calls;
    if ((rc = cp.problem->oracle.cost(cp.problem->oracle.ctx, gassign, &r.group_makespan, err)) != DP_OK) goto out;
    double t2 = cpu_now();
    r.cpu_place_s = t2 - t1;
    if (o->refine) {
        dp_coarse_expand(n, cp.group_of, gassign, start);
        if ((rc = dp_place_refine(g, c, o, start, NULL, assignment, err)) != DP_OK) goto out;
        r.cpu_refine_s = cpu_now() - t2;
    } else {
        dp_coarse_expand(n, cp.group_of, gassign, assignment);
    }
    if (rep) *rep = r;
    rc = DP_OK;
out:
    dp_coarse_problem_free(&cp);
    free(start);
    free(gassign);
    return rc;
}
