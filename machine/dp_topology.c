/* dp_topology.c: topology JSON reader and route computation (see dp_topology.h). */
#include "dp_topology.h"
#include "dp_alloc.h"
#include "dp_file.h"
#include "dp_json.h"

#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *node_kind_names[] = {"gpu", "cpu", "switch", "host"};
static const char *link_kind_names[] = {"nvlink", "pcie", "nvswitch", "host"};

const char *dp_topology_node_kind_name(dp_topology_node_kind k)
{
    return (unsigned)k < 4 ? node_kind_names[k] : "?";
}

const char *dp_topology_link_kind_name(dp_topology_link_kind k)
{
    return (unsigned)k < 4 ? link_kind_names[k] : "?";
}

void dp_topology_free(dp_topology *t)
{
    if (!t) return;
    if (t->dev)
        for (int d = 0; d < t->n_devices; d++) free(t->dev[d].name);
    if (t->node_name)
        for (int i = 0; i < t->n_nodes; i++)
            if (i >= t->n_devices) free(t->node_name[i]);
    free(t->name); free(t->source); free(t->description); free(t->path);
    free(t->dev); free(t->node_name); free(t->node_kind); free(t->link);
    free(t->chan_bw); free(t->chan_latency); free(t->chan_link); free(t->chan_from); free(t->chan_to);
    free(t->p2p); free(t->route); free(t->hop_chan); free(t->hop_from); free(t->hop_to); free(t->seg);
    free(t->class_ptr); free(t->class_chan); free(t->class_latency); free(t->class_from); free(t->class_to);
    free(t->name_slot);
    free(t);
}

static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u;  /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int dp_topology_find_node(const dp_topology *t, const char *name)
{
    if (t->name_slots == 0) {
        for (int i = 0; i < t->n_nodes; i++)
            if (t->node_name[i] && strcmp(t->node_name[i], name) == 0) return i;
        return -1;
    }
    for (unsigned k = name_hash(name) & (t->name_slots - 1);; k = (k + 1) & (t->name_slots - 1)) {
        int i = t->name_slot[k];
        if (i < 0) return -1;
        if (strcmp(t->node_name[i], name) == 0) return i;
    }
}

int dp_topology_find_device(const dp_topology *t, const char *name)
{
    int i = dp_topology_find_node(t, name);
    return i < t->n_devices ? i : -1;
}

/* index every node by name; a name given twice is an error */
static int index_names(dp_topology *t, const char *origin, dp_error *err)
{
    unsigned cap = 16;
    while (cap < 2u * (unsigned)t->n_nodes) cap *= 2;
    t->name_slot = dp_alloc_malloc_n(cap, sizeof(int));
    if (!t->name_slot) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin);
    for (unsigned k = 0; k < cap; k++) t->name_slot[k] = -1;
    for (int i = 0; i < t->n_nodes; i++) {
        unsigned k = name_hash(t->node_name[i]) & (cap - 1);
        for (; t->name_slot[k] >= 0; k = (k + 1) & (cap - 1))
            if (strcmp(t->node_name[t->name_slot[k]], t->node_name[i]) == 0) {
                free(t->name_slot);
                t->name_slot = NULL;
                return dp_error_set(err, DP_EINVAL, "%s: two devices or nodes are named \"%s\"", origin, t->node_name[i]);
            }
        t->name_slot[k] = i;
    }
    t->name_slots = cap;
    return DP_OK;
}


/* ---------------- JSON field helpers: every error names origin and field ---------------- */

static char *dup_or_null(const char *s)
{
    if (!s) return NULL;
    char *p = dp_alloc_strdup(s);
    return p;
}

static int get_string(json_t *o, const char *key, int required, const char **out, const char *origin,
                      const char *where, dp_error *err)
{
    json_t *x = json_object_get(o, key);
    if (!x) {
        if (!required) { *out = NULL; return DP_OK; }
        return dp_error_set(err, DP_EINVAL, "%s: %s.%s: missing (a string is required)", origin, where, key);
    }
    if (!json_is_string(x)) return dp_error_set(err, DP_EINVAL, "%s: %s.%s: must be a string", origin, where, key);
    *out = json_string_value(x);
    return DP_OK;
}

/* positive (or non-negative when allow_zero) finite number; def used when absent and !required */
static int get_number(json_t *o, const char *key, int required, int allow_zero, double def, double *out,
                      const char *origin, const char *where, dp_error *err)
{
    json_t *x = json_object_get(o, key);
    if (!x) {
        if (!required) { *out = def; return DP_OK; }
        return dp_error_set(err, DP_EINVAL, "%s: %s.%s: missing (a number is required)", origin, where, key);
    }
    if (!json_is_number(x)) return dp_error_set(err, DP_EINVAL, "%s: %s.%s: must be a number", origin, where, key);
    double v = json_number_value(x);
    if (!isfinite(v) || v < 0 || (!allow_zero && v == 0))
        return dp_error_set(err, DP_EINVAL, "%s: %s.%s: must be a %s finite number, got %g", origin, where, key,
                            allow_zero ? "non-negative" : "positive", v);
    *out = v;
    return DP_OK;
}

static int get_int(json_t *o, const char *key, int def, int lo, int hi, int *out, const char *origin,
                   const char *where, dp_error *err)
{
    json_t *x = json_object_get(o, key);
    if (!x) { *out = def; return DP_OK; }
    if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi)
        return dp_error_set(err, DP_EINVAL, "%s: %s.%s: must be an integer in %d..%d", origin, where, key, lo, hi);
    *out = (int)json_integer_value(x);
    return DP_OK;
}

static int kind_index(const char *s, const char **names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* ---------------- shortest paths ---------------- */

/* Dijkstra from src by (latency, links) on the node graph, with a binary heap of (latency, links,
 * node id): O((N + L) log N). Of the routes of least latency and then fewest links to a node, the
 * one of most bottleneck bandwidth (the least bandwidth of its links), then the one whose
 * predecessor leaves the heap first (lowest node id). Every predecessor on such a route leaves
 * the heap before the node (a link has latency >= 0, and one more link), so the node's route is
 * settled when it leaves. On DGX A100 and H100 two GPUs of one PCIe switch have two routes of 2 us
 * and two links, over NVSwitch and over PCIe: the NVSwitch one was taken only because its node
 * was listed first (a review of the topologies). Devices other than src are terminals: a device
 * never forwards. pred_link[v] is the link used to reach v (-1 at src or unreachable); of parallel
 * links between v's predecessor and v, the one of least latency, then most bandwidth, then the
 * first. heap has room for L + 1 entries; wide (N) holds the bottleneck bandwidths. */
typedef struct dj_item {
    double dist;
    int hops, node;
} dj_item;

static int dj_less(const dj_item *x, const dj_item *y)
{
    if (x->dist != y->dist) return x->dist < y->dist;
    if (x->hops != y->hops) return x->hops < y->hops;
    return x->node < y->node;
}

static void dj_push(dj_item *h, int *n, dj_item it)
{
    int i = (*n)++;
    while (i > 0 && dj_less(&it, &h[(i - 1) / 2])) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = it;
}

static dj_item dj_pop(dj_item *h, int *n)
{
    dj_item top = h[0], last = h[--*n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && dj_less(&h[c + 1], &h[c])) c++;
        if (!dj_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0) h[i] = last;
    return top;
}

static void dijkstra(const dp_topology *t, const int *adj_ptr, const int *adj_link, int src, double *dist,
                     int *hops, int *pred_link, unsigned char *done, dj_item *heap, double *wide)
{
    const int N = t->n_nodes;
    for (int i = 0; i < N; i++) { dist[i] = INFINITY; hops[i] = 0; pred_link[i] = -1; done[i] = 0; wide[i] = 0; }
    dist[src] = 0;
    wide[src] = INFINITY;
    int nh_heap = 0;
    dj_push(heap, &nh_heap, (dj_item){0, 0, src});
    while (nh_heap > 0) {
        dj_item it = dj_pop(heap, &nh_heap);
        int u = it.node;
        if (done[u] || it.dist != dist[u] || it.hops != hops[u]) continue;  /* stale entry */
        done[u] = 1;
        if (u != src && u < t->n_devices) continue;
        for (int k = adj_ptr[u]; k < adj_ptr[u + 1]; k++) {
            const dp_topology_link *l = &t->link[adj_link[k]];
            int v = l->a == u ? l->b : l->a;
            if (done[v]) continue;
            double nd = dist[u] + l->latency_s;
            int nh = hops[u] + 1;
            const double nw = wide[u] < l->bandwidth_Bps ? wide[u] : l->bandwidth_Bps;
            if (nd < dist[v] || (nd == dist[v] && nh < hops[v])) {
                dist[v] = nd;
                hops[v] = nh;
                wide[v] = nw;
                pred_link[v] = adj_link[k];
                dj_push(heap, &nh_heap, (dj_item){nd, nh, v});
            } else if (nd == dist[v] && nh == hops[v] && pred_link[v] >= 0) {
                /* another route of the same latency and links (a parallel link from the same
                 * predecessor among them): the one of most bottleneck bandwidth, the earlier of
                 * equal ones */
                const dp_topology_link *p = &t->link[pred_link[v]];
                const int same_pred = p->a == u || p->b == u;
                if (nw > wide[v] || (same_pred && nw == wide[v] && l->bandwidth_Bps > p->bandwidth_Bps)) {
                    wide[v] = nw;
                    pred_link[v] = adj_link[k];
                }
            }
        }
    }
}

/* Route building: node paths are appended as hops and segments into growing arrays. */
typedef struct route_buf {
    int *hop, *hop_from, *hop_to, n_hop, cap_hop;
    dp_topology_segment *seg;
    int n_seg, cap_seg;
} route_buf;

static int grow_ints(int **a, int nc)
{
    int *p = dp_alloc_realloc(*a, (size_t)nc * sizeof(int));
    if (!p) return DP_ENOMEM;
    *a = p;
    return DP_OK;
}

/* a hop over channel chan from node `from` to node `to` */
static int push_hop(route_buf *rb, int chan, int from, int to)
{
    if (rb->n_hop == rb->cap_hop) {
        if (rb->cap_hop > INT_MAX / 2) return DP_ENOMEM;
        int nc = rb->cap_hop ? 2 * rb->cap_hop : 64;
        if (grow_ints(&rb->hop, nc) != DP_OK || grow_ints(&rb->hop_from, nc) != DP_OK || grow_ints(&rb->hop_to, nc) != DP_OK)
            return DP_ENOMEM;
        rb->cap_hop = nc;
    }
    rb->hop[rb->n_hop] = chan;
    rb->hop_from[rb->n_hop] = from;
    rb->hop_to[rb->n_hop++] = to;
    return DP_OK;
}

static int push_seg(route_buf *rb, int begin)
{
    if (rb->n_seg == rb->cap_seg) {
        if (rb->cap_seg > INT_MAX / 2) return DP_ENOMEM;
        int nc = rb->cap_seg ? 2 * rb->cap_seg : 64;
        dp_topology_segment *p = dp_alloc_realloc(rb->seg, (size_t)nc * sizeof *p);
        if (!p) return DP_ENOMEM;
        rb->seg = p;
        rb->cap_seg = nc;
    }
    dp_topology_segment *s = &rb->seg[rb->n_seg++];
    memset(s, 0, sizeof *s);
    s->hop_begin = begin;
    s->hop_end = begin;
    return DP_OK;
}

static int chan_of(const dp_topology *t, int li, int from)
{
    const dp_topology_link *l = &t->link[li];
    return l->a == from ? l->chan_ab : l->chan_ba;
}

/* append the path src -> v given by a pred_link tree as one segment's hops; tmp holds the path's
 * nodes (room for n_links + 1) */
static int append_tree_path(const dp_topology *t, route_buf *rb, const int *pred_link, int src, int v, int *tmp)
{
    int n = 0;
    tmp[n++] = v;
    for (int x = v; x != src; ) {
        int li = pred_link[x];
        if (li < 0) return DP_EINVAL;
        const dp_topology_link *l = &t->link[li];
        x = l->a == x ? l->b : l->a;
        if (n > t->n_links) return DP_EINVAL;
        tmp[n++] = x;
    }
    for (int i = n - 1; i > 0; i--) {
        int from = tmp[i], to = tmp[i - 1];
        if (push_hop(rb, chan_of(t, pred_link[to], from), from, to) != DP_OK) return DP_ENOMEM;
    }
    return DP_OK;
}

static void finish_segment(const dp_topology *t, route_buf *rb)
{
    dp_topology_segment *s = &rb->seg[rb->n_seg - 1];
    s->hop_end = rb->n_hop;
    s->latency_s = 0;
    s->bottleneck_Bps = INFINITY;
    for (int h = s->hop_begin; h < s->hop_end; h++) {
        s->latency_s += t->chan_latency[rb->hop[h]];
        if (t->chan_bw[rb->hop[h]] < s->bottleneck_Bps) s->bottleneck_Bps = t->chan_bw[rb->hop[h]];
    }
}

/* best link joining x and y: least latency, then most bandwidth, then lowest id (the rule the
 * shortest-path trees follow too); -1 if none */
static int link_between(const dp_topology *t, const int *adj_ptr, const int *adj_link, int x, int y)
{
    int best = -1;
    for (int k = adj_ptr[x]; k < adj_ptr[x + 1]; k++) {
        int i = adj_link[k];
        const dp_topology_link *l = &t->link[i];
        if (!((l->a == x && l->b == y) || (l->a == y && l->b == x))) continue;
        if (best < 0 || l->latency_s < t->link[best].latency_s ||
            (l->latency_s == t->link[best].latency_s && l->bandwidth_Bps > t->link[best].bandwidth_Bps))
            best = i;
    }
    return best;
}

/* ---------------- the reader ---------------- */

static int parse_devices(dp_topology *t, json_t *arr, const char *origin, dp_error *err)
{
    char where[64];
    for (int d = 0; d < t->n_devices; d++) {
        json_t *o = json_array_get(arr, d);
        snprintf(where, sizeof where, "devices[%d]", d);
        if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "%s: %s: must be an object", origin, where);
        static const char *const dev_keys[] = {"name", "kind", "peak_flops", "mem_bandwidth_Bps", "memory_bytes",
                                               "efficiency", "launch_overhead_s", "copy_engines", "streams", NULL};
        int krc = dp_json_known_keys(o, dev_keys, origin, where, err);
        if (krc != DP_OK) return krc;
        dp_topology_device *dv = &t->dev[d];
        const char *name, *kind;
        int rc;
        if ((rc = get_string(o, "name", 1, &name, origin, where, err)) != DP_OK) return rc;
        /* an empty name was taken: routes printed "  -> mem -> core1", and no calibration or
         * link could name the device legibly (a review) */
        if (!name[0]) return dp_error_set(err, DP_EINVAL, "%s: %s.name: must not be empty", origin, where);
        if ((rc = get_string(o, "kind", 1, &kind, origin, where, err)) != DP_OK) return rc;
        int k = kind_index(kind, node_kind_names, 2);
        if (k < 0) return dp_error_set(err, DP_EINVAL, "%s: %s.kind: \"%s\" is not gpu or cpu", origin, where, kind);
        dv->kind = (dp_topology_node_kind)k;
        dv->name = dp_alloc_strdup(name);
        if (!dv->name) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin);
        if ((rc = get_number(o, "peak_flops", 1, 0, 0, &dv->peak_flops, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_number(o, "mem_bandwidth_Bps", 1, 0, 0, &dv->mem_bandwidth_Bps, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_number(o, "memory_bytes", 1, 0, 0, &dv->memory_bytes, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_number(o, "efficiency", 0, 0, 1.0, &dv->efficiency, origin, where, err)) != DP_OK) return rc;
        if (dv->efficiency > 1)
            return dp_error_set(err, DP_EINVAL, "%s: %s.efficiency: must be in (0, 1], got %g", origin, where, dv->efficiency);
        if ((rc = get_number(o, "launch_overhead_s", 0, 1, 0.0, &dv->launch_overhead_s, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_int(o, "copy_engines", 0, 0, 1024, &dv->copy_engines, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_int(o, "streams", 1, 1, 1024, &dv->streams, origin, where, err)) != DP_OK) return rc;
        t->node_name[d] = dv->name;
        t->node_kind[d] = dv->kind;
    }
    return DP_OK;
}

static int parse_p2p(dp_topology *t, json_t *x, const char *origin, dp_error *err)
{
    const int D = t->n_devices;
    int all = 1;
    if (x && json_is_boolean(x)) all = json_is_true(x);
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) t->p2p[a * D + b] = (unsigned char)(a == b || all);
    if (!x || json_is_boolean(x)) return DP_OK;
    if (!json_is_array(x))
        return dp_error_set(err, DP_EINVAL, "%s: peer_to_peer: must be true, false, a matrix or a list of groups", origin);
    json_t *first = json_array_get(x, 0);
    json_t *first_el = first ? json_array_get(first, 0) : NULL;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) t->p2p[a * D + b] = (unsigned char)(a == b);
    if (first_el && json_is_string(first_el)) {
        /* groups of device names: p2p between any two devices of one group */
        for (size_t i = 0; i < json_array_size(x); i++) {
            json_t *grp = json_array_get(x, i);
            if (!json_is_array(grp))
                return dp_error_set(err, DP_EINVAL, "%s: peer_to_peer[%zu]: must be an array of device names", origin, i);
            int ids[4096], n = 0;
            for (size_t j = 0; j < json_array_size(grp) && n < 4096; j++) {
                json_t *s = json_array_get(grp, j);
                int d = json_is_string(s) ? dp_topology_find_device(t, json_string_value(s)) : -1;
                if (d < 0)
                    return dp_error_set(err, DP_EINVAL, "%s: peer_to_peer[%zu][%zu]: not a device name", origin, i, j);
                ids[n++] = d;
            }
            for (int p = 0; p < n; p++)
                for (int q = 0; q < n; q++) t->p2p[ids[p] * D + ids[q]] = 1;
        }
        return DP_OK;
    }
    if ((int)json_array_size(x) != D)
        return dp_error_set(err, DP_EINVAL, "%s: peer_to_peer: a matrix must have %d rows (one per device)", origin, D);
    for (int a = 0; a < D; a++) {
        json_t *row = json_array_get(x, a);
        if (!json_is_array(row) || (int)json_array_size(row) != D)
            return dp_error_set(err, DP_EINVAL, "%s: peer_to_peer[%d]: must be a row of %d entries", origin, a, D);
        for (int b = 0; b < D; b++) {
            json_t *v = json_array_get(row, b);
            int on;
            if (json_is_boolean(v)) on = json_is_true(v);
            else if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1)) on = (int)json_integer_value(v);
            else return dp_error_set(err, DP_EINVAL, "%s: peer_to_peer[%d][%d]: must be 0, 1, true or false", origin, a, b);
            if (a != b) t->p2p[a * D + b] = (unsigned char)on;
        }
    }
    return DP_OK;
}

static int parse_links(dp_topology *t, json_t *arr, const char *origin, dp_error *err)
{
    char where[64];
    int ch = 0;
    for (int i = 0; i < t->n_links; i++) {
        json_t *o = json_array_get(arr, i);
        snprintf(where, sizeof where, "links[%d]", i);
        if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "%s: %s: must be an object", origin, where);
        static const char *const link_keys[] = {"a", "b", "kind", "duplex", "bandwidth_Bps", "latency_s", "count", NULL};
        int krc = dp_json_known_keys(o, link_keys, origin, where, err);
        if (krc != DP_OK) return krc;
        dp_topology_link *l = &t->link[i];
        const char *a = NULL, *b = NULL, *kind = NULL, *duplex = NULL;
        int rc, count;
        if ((rc = get_string(o, "a", 1, &a, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_string(o, "b", 1, &b, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_string(o, "kind", 1, &kind, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_string(o, "duplex", 0, &duplex, origin, where, err)) != DP_OK) return rc;
        l->a = dp_topology_find_node(t, a);
        l->b = dp_topology_find_node(t, b);
        if (l->a < 0) return dp_error_set(err, DP_EINVAL, "%s: %s.a: no device or node named \"%s\"", origin, where, a);
        if (l->b < 0) return dp_error_set(err, DP_EINVAL, "%s: %s.b: no device or node named \"%s\"", origin, where, b);
        if (l->a == l->b) return dp_error_set(err, DP_EINVAL, "%s: %s: a link must join two different nodes", origin, where);
        int k = kind_index(kind, link_kind_names, 4);
        if (k < 0) return dp_error_set(err, DP_EINVAL, "%s: %s.kind: \"%s\" is not nvlink, pcie, nvswitch or host", origin, where, kind);
        l->kind = (dp_topology_link_kind)k;
        if ((rc = get_number(o, "bandwidth_Bps", 1, 0, 0, &l->bandwidth_Bps, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_number(o, "latency_s", 1, 1, 0, &l->latency_s, origin, where, err)) != DP_OK) return rc;
        if ((rc = get_int(o, "count", 1, 1, 1024, &count, origin, where, err)) != DP_OK) return rc;
        l->bandwidth_Bps *= count;
        if (!duplex || strcmp(duplex, "full") == 0) l->half_duplex = 0;
        else if (strcmp(duplex, "half") == 0) l->half_duplex = 1;
        else return dp_error_set(err, DP_EINVAL, "%s: %s.duplex: \"%s\" is not full or half", origin, where, duplex);
        l->chan_ab = ch++;
        l->chan_ba = l->half_duplex ? l->chan_ab : ch++;
    }
    t->n_channels = ch;
    t->chan_bw = dp_alloc_malloc_n(ch, sizeof(double));
    t->chan_latency = dp_alloc_malloc_n(ch, sizeof(double));
    t->chan_link = dp_alloc_malloc_n(ch, sizeof(int));
    t->chan_from = dp_alloc_malloc_n(ch, sizeof(int));
    t->chan_to = dp_alloc_malloc_n(ch, sizeof(int));
    if (!t->chan_bw || !t->chan_latency || !t->chan_link || !t->chan_from || !t->chan_to)
        return dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin);
    for (int i = 0; i < t->n_links; i++) {
        const dp_topology_link *l = &t->link[i];
        t->chan_bw[l->chan_ab] = t->chan_bw[l->chan_ba] = l->bandwidth_Bps;
        t->chan_latency[l->chan_ab] = t->chan_latency[l->chan_ba] = l->latency_s;
        t->chan_link[l->chan_ab] = t->chan_link[l->chan_ba] = i;
        t->chan_from[l->chan_ab] = l->a; t->chan_to[l->chan_ab] = l->b;
        if (!l->half_duplex) { t->chan_from[l->chan_ba] = l->b; t->chan_to[l->chan_ba] = l->a; }
    }
    return DP_OK;
}

/* a route override: {"src", "dst", "path": [node names], "stage_at": [node names]} */
static int parse_override(dp_topology *t, const int *adj_ptr, const int *adj_link, route_buf *rb, json_t *o, int i,
                          int *src_out, int *dst_out, const char *origin, dp_error *err)
{
    char where[64];
    snprintf(where, sizeof where, "routes[%d]", i);
    if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "%s: %s: must be an object", origin, where);
    static const char *const route_keys[] = {"src", "dst", "path", "stage_at", NULL};
    const char *s, *d;
    int rc = dp_json_known_keys(o, route_keys, origin, where, err);
    if (rc != DP_OK) return rc;
    if ((rc = get_string(o, "src", 1, &s, origin, where, err)) != DP_OK) return rc;
    if ((rc = get_string(o, "dst", 1, &d, origin, where, err)) != DP_OK) return rc;
    int a = dp_topology_find_device(t, s), b = dp_topology_find_device(t, d);
    if (a < 0) return dp_error_set(err, DP_EINVAL, "%s: %s.src: no device named \"%s\"", origin, where, s);
    if (b < 0) return dp_error_set(err, DP_EINVAL, "%s: %s.dst: no device named \"%s\"", origin, where, d);
    if (a == b) return dp_error_set(err, DP_EINVAL, "%s: %s: src and dst are the same device", origin, where);
    json_t *path = json_object_get(o, "path");
    json_t *stage = json_object_get(o, "stage_at");
    if (!json_is_array(path) || json_array_size(path) < 2)
        return dp_error_set(err, DP_EINVAL, "%s: %s.path: must be an array of at least two node names", origin, where);
    if (stage && !json_is_array(stage))
        return dp_error_set(err, DP_EINVAL, "%s: %s.stage_at: must be an array of node names", origin, where);
    size_t n = json_array_size(path);
    /* each stage_at names an interior node of the path, once (an endpoint, a node off the path or
     * a repeat was accepted and ignored: a helper's report) */
    for (size_t j = 0; stage && j < json_array_size(stage); j++) {
        json_t *sx = json_array_get(stage, j);
        if (!json_is_string(sx)) return dp_error_set(err, DP_EINVAL, "%s: %s.stage_at[%zu]: must be a node name", origin, where, j);
        const char *name = json_string_value(sx);
        int inner = 0;
        for (size_t k = 1; k + 1 < n; k++) {
            json_t *x = json_array_get(path, k);
            inner |= json_is_string(x) && strcmp(json_string_value(x), name) == 0;
        }
        if (!inner)
            return dp_error_set(err, DP_EINVAL, "%s: %s.stage_at[%zu]: \"%s\" is not a node inside the path (a copy is staged "
                                "at a node between its first and last)", origin, where, j, name);
        for (size_t q = 0; q < j; q++)
            if (strcmp(json_string_value(json_array_get(stage, q)), name) == 0)
                return dp_error_set(err, DP_EINVAL, "%s: %s.stage_at[%zu]: \"%s\" is named twice", origin, where, j, name);
    }
    int prev = -1;
    if (push_seg(rb, rb->n_hop) != DP_OK) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin);
    for (size_t k = 0; k < n; k++) {
        json_t *x = json_array_get(path, k);
        int v = json_is_string(x) ? dp_topology_find_node(t, json_string_value(x)) : -1;
        if (v < 0) return dp_error_set(err, DP_EINVAL, "%s: %s.path[%zu]: not a node name", origin, where, k);
        if (k == 0 && v != a) return dp_error_set(err, DP_EINVAL, "%s: %s.path: must start at src \"%s\"", origin, where, s);
        if (k == n - 1 && v != b) return dp_error_set(err, DP_EINVAL, "%s: %s.path: must end at dst \"%s\"", origin, where, d);
        /* a device never forwards, and a path visits a node once (both were accepted in a
         * hand-written route: a review of the eighteenth session) */
        if (k > 0 && k + 1 < n && v < t->n_devices)
            return dp_error_set(err, DP_EINVAL, "%s: %s.path[%zu]: \"%s\" is a device, and a device never forwards a copy",
                                origin, where, k, t->node_name[v]);
        for (size_t q = 0; q < k; q++) {
            json_t *y = json_array_get(path, q);
            if (json_is_string(y) && dp_topology_find_node(t, json_string_value(y)) == v)
                return dp_error_set(err, DP_EINVAL, "%s: %s.path[%zu]: \"%s\" is visited twice", origin, where, k,
                                    t->node_name[v]);
        }
        if (prev >= 0) {
            int li = link_between(t, adj_ptr, adj_link, prev, v);
            if (li < 0)
                return dp_error_set(err, DP_EINVAL, "%s: %s.path[%zu]: no link joins \"%s\" and \"%s\"", origin, where, k,
                                    t->node_name[prev], t->node_name[v]);
            if (push_hop(rb, chan_of(t, li, prev), prev, v) != DP_OK)
                return dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin);
        }
        int split = 0;
        for (size_t j = 0; stage && j < json_array_size(stage); j++) {
            json_t *sx = json_array_get(stage, j);
            if (json_is_string(sx) && strcmp(json_string_value(sx), t->node_name[v]) == 0) split = 1;
        }
        if (split && k > 0 && k < n - 1) {
            finish_segment(t, rb);
            if (push_seg(rb, rb->n_hop) != DP_OK) return dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin);
        }
        prev = v;
    }
    finish_segment(t, rb);
    *src_out = a;
    *dst_out = b;
    return DP_OK;
}

static void route_totals(dp_topology *t, dp_topology_route_info *r, const route_buf *rb)
{
    r->latency_s = 0;
    r->inv_bw = 0;
    r->bottleneck_Bps = INFINITY;
    r->n_hops = 0;
    for (int s = r->seg_begin; s < r->seg_end; s++) {
        const dp_topology_segment *sg = &rb->seg[s];
        r->latency_s += sg->latency_s;
        r->inv_bw += 1.0 / sg->bottleneck_Bps;
        if (sg->bottleneck_Bps < r->bottleneck_Bps) r->bottleneck_Bps = sg->bottleneck_Bps;
        r->n_hops += sg->hop_end - sg->hop_begin;
    }
    r->staged = r->seg_end - r->seg_begin > 1;
    (void)t;
}

/* segment classes: segments that cross the same channel list share one (a hash of the lists,
 * O(total hops)) */
static int build_classes(dp_topology *t, route_buf *rb)
{
    t->class_ptr = dp_alloc_malloc_n((size_t)rb->n_seg + 1, sizeof(int));
    t->class_chan = dp_alloc_malloc_n((size_t)rb->n_hop + 1, sizeof(int));
    t->class_latency = dp_alloc_malloc_n((size_t)rb->n_seg + 1, sizeof(double));
    t->class_from = dp_alloc_malloc_n((size_t)rb->n_seg + 1, sizeof(int));
    t->class_to = dp_alloc_malloc_n((size_t)rb->n_seg + 1, sizeof(int));
    size_t cap = 16;
    while (cap < 2 * (size_t)rb->n_seg) cap *= 2;
    int *slot = dp_alloc_malloc_n(cap, sizeof(int));
    if (!t->class_ptr || !t->class_chan || !t->class_latency || !t->class_from || !t->class_to || !slot) {
        free(slot);
        return DP_ENOMEM;
    }
    for (size_t k = 0; k < cap; k++) slot[k] = -1;
    t->class_ptr[0] = 0;
    t->n_classes = 0;
    for (int s = 0; s < rb->n_seg; s++) {
        dp_topology_segment *sg = &rb->seg[s];
        const int *ch = rb->hop + sg->hop_begin;
        int len = sg->hop_end - sg->hop_begin, found = -1;
        uint64_t h = 1469598103934665603ull;
        for (int i = 0; i < len; i++) h = (h ^ (uint64_t)(unsigned)ch[i]) * 1099511628211ull;
        size_t k = (size_t)(h ^ (h >> 29)) & (cap - 1);
        for (; slot[k] >= 0; k = (k + 1) & (cap - 1)) {
            int c = slot[k];
            if (t->class_ptr[c + 1] - t->class_ptr[c] == len &&
                memcmp(t->class_chan + t->class_ptr[c], ch, (size_t)len * sizeof(int)) == 0) {
                found = c;
                break;
            }
        }
        if (found < 0) {
            found = t->n_classes++;
            slot[k] = found;
            memcpy(t->class_chan + t->class_ptr[found], ch, (size_t)len * sizeof(int));
            t->class_ptr[found + 1] = t->class_ptr[found] + len;
            t->class_latency[found] = sg->latency_s;
            t->class_from[found] = len > 0 ? rb->hop_from[sg->hop_begin] : -1;
            t->class_to[found] = len > 0 ? rb->hop_to[sg->hop_end - 1] : -1;
        }
        sg->klass = found;
    }
    free(slot);
    return DP_OK;
}

static int build_routes(dp_topology *t, json_t *overrides, const char *origin, dp_error *err)
{
    const int D = t->n_devices, N = t->n_nodes;
    int rc = DP_OK, n_hosts = 0;
    for (int h = D; h < N; h++) n_hosts += t->node_kind[h] == DP_TOPOLOGY_NODE_HOST;
    int *adj_ptr = dp_alloc_calloc((size_t)N + 1, sizeof(int));
    int *adj_link = dp_alloc_malloc_n(2 * (size_t)t->n_links + 1, sizeof(int));
    /* one tree from the current source device; one from every host memory (staged routes) */
    double *dist = dp_alloc_malloc_n((size_t)N, sizeof(double));
    int *hops = dp_alloc_malloc_n((size_t)N, sizeof(int));
    int *pred = dp_alloc_malloc_n((size_t)N, sizeof(int));
    int *host_id = dp_alloc_malloc_n((size_t)n_hosts + 1, sizeof(int));
    double *hdist = dp_alloc_malloc_n((size_t)n_hosts * N + 1, sizeof(double));
    int *hhops = dp_alloc_malloc_n((size_t)n_hosts * N + 1, sizeof(int));
    int *hpred = dp_alloc_malloc_n((size_t)n_hosts * N + 1, sizeof(int));
    unsigned char *done = dp_alloc_malloc((size_t)N);
    double *wide = dp_alloc_malloc_n((size_t)N + 1, sizeof(double));
    dj_item *heap = dp_alloc_malloc_n(2 * (size_t)t->n_links + 2, sizeof(dj_item));
    int *tmp = dp_alloc_malloc_n((size_t)t->n_links + 2, sizeof(int));
    route_buf rb = {0};
    t->route = dp_alloc_calloc((size_t)D * D, sizeof(dp_topology_route_info));
    if (!adj_ptr || !adj_link || !dist || !hops || !pred || !host_id || !hdist || !hhops || !hpred || !done || !heap ||
        !tmp || !wide || !t->route)
        goto nomem;
    for (int i = 0; i < t->n_links; i++) { adj_ptr[t->link[i].a + 1]++; adj_ptr[t->link[i].b + 1]++; }
    for (int i = 0; i < N; i++) adj_ptr[i + 1] += adj_ptr[i];
    {
        int *fill = dp_alloc_calloc((size_t)N, sizeof(int));
        if (!fill) goto nomem;
        for (int i = 0; i < t->n_links; i++) {
            adj_link[adj_ptr[t->link[i].a] + fill[t->link[i].a]++] = i;
            adj_link[adj_ptr[t->link[i].b] + fill[t->link[i].b]++] = i;
        }
        free(fill);
    }
    n_hosts = 0;
    for (int h = D; h < N; h++)
        if (t->node_kind[h] == DP_TOPOLOGY_NODE_HOST) {
            size_t o = (size_t)n_hosts * N;
            host_id[n_hosts++] = h;
            dijkstra(t, adj_ptr, adj_link, h, hdist + o, hhops + o, hpred + o, done, heap, wide);
        }
    /* overrides first, so computed routes can skip those pairs */
    size_t n_ov = overrides ? json_array_size(overrides) : 0;
    if (overrides && !json_is_array(overrides)) {
        rc = dp_error_set(err, DP_EINVAL, "%s: routes: must be an array", origin);
        goto out;
    }
    for (size_t i = 0; i < n_ov; i++) {
        int a = 0, b = 0, sb = rb.n_seg;
        if ((rc = parse_override(t, adj_ptr, adj_link, &rb, json_array_get(overrides, i), (int)i, &a, &b, origin, err)) != DP_OK)
            goto out;
        dp_topology_route_info *r = &t->route[a * D + b];
        if (r->overridden) {
            rc = dp_error_set(err, DP_EINVAL, "%s: routes[%zu]: a second route from \"%s\" to \"%s\"", origin, i,
                              t->node_name[a], t->node_name[b]);
            goto out;
        }
        r->seg_begin = sb;
        r->seg_end = rb.n_seg;
        r->overridden = 1;
    }
    for (int a = 0; a < D; a++) {
        dijkstra(t, adj_ptr, adj_link, a, dist, hops, pred, done, heap, wide);
        for (int b = 0; b < D; b++) {
            if (a == b || t->route[a * D + b].overridden) continue;
            dp_topology_route_info *r = &t->route[a * D + b];
            int gpu_pair = t->dev[a].kind == DP_TOPOLOGY_NODE_GPU && t->dev[b].kind == DP_TOPOLOGY_NODE_GPU;
            r->seg_begin = rb.n_seg;
            if (!gpu_pair || t->p2p[a * D + b]) {
                if (!isfinite(dist[b])) {
                    rc = dp_error_set(err, DP_EINVAL, "%s: no route from \"%s\" to \"%s\" (devices do not forward)", origin,
                                      t->node_name[a], t->node_name[b]);
                    goto out;
                }
                if (push_seg(&rb, rb.n_hop) != DP_OK || append_tree_path(t, &rb, pred, a, b, tmp) != DP_OK) goto nomem;
                finish_segment(t, &rb);
            } else {
                /* staged: the host memory h minimising (latency a->h->b, links) */
                int best = -1;
                double bl = INFINITY;
                int bh = 0;
                for (int i = 0; i < n_hosts; i++) {
                    int h = host_id[i];
                    const double *dh = hdist + (size_t)i * N;
                    const int *hh = hhops + (size_t)i * N;
                    if (!isfinite(dist[h]) || !isfinite(dh[b])) continue;
                    double l = dist[h] + dh[b];
                    int nh = hops[h] + hh[b];
                    if (best < 0 || l < bl || (l == bl && nh < bh)) { best = i; bl = l; bh = nh; }
                }
                if (best < 0) {
                    rc = dp_error_set(err, DP_EINVAL, "%s: \"%s\" and \"%s\" have no peer-to-peer access and no host memory "
                                      "reachable from both to stage through", origin, t->node_name[a], t->node_name[b]);
                    goto out;
                }
                if (push_seg(&rb, rb.n_hop) != DP_OK || append_tree_path(t, &rb, pred, a, host_id[best], tmp) != DP_OK) goto nomem;
                finish_segment(t, &rb);
                if (push_seg(&rb, rb.n_hop) != DP_OK ||
                    append_tree_path(t, &rb, hpred + (size_t)best * N, host_id[best], b, tmp) != DP_OK) goto nomem;
                finish_segment(t, &rb);
            }
            r->seg_end = rb.n_seg;
        }
    }
    for (int k = 0; k < D * D; k++)
        if (k / D != k % D) route_totals(t, &t->route[k], &rb);
    if (build_classes(t, &rb) != DP_OK) goto nomem;
    t->hop_chan = rb.hop ? rb.hop : dp_alloc_malloc(sizeof(int));
    t->hop_from = rb.hop_from ? rb.hop_from : dp_alloc_malloc(sizeof(int));
    t->hop_to = rb.hop_to ? rb.hop_to : dp_alloc_malloc(sizeof(int));
    t->seg = rb.seg ? rb.seg : dp_alloc_malloc(sizeof(dp_topology_segment));
    t->n_hops_total = rb.n_hop;
    t->n_segs_total = rb.n_seg;
    rb.hop = rb.hop_from = rb.hop_to = NULL;
    rb.seg = NULL;
    if (!t->hop_chan || !t->hop_from || !t->hop_to || !t->seg) goto nomem;
    goto out;
nomem:
    rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory computing routes", origin);
out:
    free(adj_ptr); free(adj_link); free(dist); free(hops); free(pred); free(host_id); free(hdist); free(hhops); free(hpred);
    free(done); free(wide); free(heap); free(tmp);
    free(rb.hop); free(rb.hop_from); free(rb.hop_to); free(rb.seg);
    return rc;
}

dp_topology *dp_topology_parse(const char *text, const char *origin, dp_error *err)
{
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", origin, je.line, je.column, je.text);
        return NULL;
    }
    dp_topology *t = dp_alloc_calloc(1, sizeof *t);
    if (!t) { json_decref(root); dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); return NULL; }
    int rc = DP_OK;
    const char *s = NULL;
    if (!json_is_object(root)) { rc = dp_error_set(err, DP_EINVAL, "%s: a topology must be a JSON object", origin); goto fail; }
    static const char *const root_keys[] = {"format", "version", "name", "description", "source", "notes", "devices",
                                            "nodes", "links", "peer_to_peer", "routes", NULL};
    /* another kind of file first, by its format or a graph's keys (a graph given as --topology
     * said 'unknown key "cost_kind"', a calibration 'unknown key "machine"': a walkthrough) */
    if ((rc = get_string(root, "format", 0, &s, origin, "topology", err)) != DP_OK) goto fail;
    if (s && strcmp(s, "doppler-topology") != 0) {
        rc = dp_error_set(err, DP_EINVAL, "%s: format: \"%s\", expected \"doppler-topology\" (not a topology file)", origin, s);
        goto fail;
    }
    if (!s && (json_object_get(root, "ops") || json_object_get(root, "cost_kind"))) {
        rc = dp_error_set(err, DP_EINVAL, "%s: a graph, not a topology (it has a graph's \"%s\"; a topology has devices, "
                          "nodes and links: doc/topology-format.md)", origin, json_object_get(root, "ops") ? "ops" : "cost_kind");
        goto fail;
    }
    if ((rc = dp_json_known_keys(root, root_keys, origin, "topology", err)) != DP_OK) goto fail;
    json_t *ver = json_object_get(root, "version");
    if (ver && !(json_is_integer(ver) && json_integer_value(ver) == 1)) {
        rc = dp_error_set(err, DP_EINVAL, "%s: version: only version 1 is known", origin);
        goto fail;
    }
    if ((rc = get_string(root, "name", 0, &s, origin, "topology", err)) != DP_OK) goto fail;
    t->name = dp_alloc_strdup(s ? s : dp_file_path_stem(origin));
    if ((rc = get_string(root, "source", 0, &s, origin, "topology", err)) != DP_OK) goto fail;
    t->source = dup_or_null(s);
    if ((rc = get_string(root, "description", 0, &s, origin, "topology", err)) != DP_OK) goto fail;
    t->description = dup_or_null(s);
    t->path = dp_alloc_strdup(origin);
    json_t *devs = json_object_get(root, "devices"), *nodes = json_object_get(root, "nodes");
    json_t *links = json_object_get(root, "links");
    if (!json_is_array(devs) || json_array_size(devs) == 0 || json_array_size(devs) > DP_GRAPH_MAX_DEVICES) {
        rc = dp_error_set(err, DP_EINVAL, "%s: devices: must be an array of 1..%d devices", origin, DP_GRAPH_MAX_DEVICES);
        goto fail;
    }
    if (nodes && !json_is_array(nodes)) { rc = dp_error_set(err, DP_EINVAL, "%s: nodes: must be an array", origin); goto fail; }
    if (!json_is_array(links)) { rc = dp_error_set(err, DP_EINVAL, "%s: links: must be an array", origin); goto fail; }
    t->n_devices = (int)json_array_size(devs);
    t->n_nodes = t->n_devices + (nodes ? (int)json_array_size(nodes) : 0);
    t->n_links = (int)json_array_size(links);
    t->dev = dp_alloc_calloc((size_t)t->n_devices, sizeof *t->dev);
    t->node_name = dp_alloc_calloc((size_t)t->n_nodes, sizeof(char *));
    t->node_kind = dp_alloc_calloc((size_t)t->n_nodes, sizeof(dp_topology_node_kind));
    t->link = dp_alloc_calloc((size_t)t->n_links + 1, sizeof *t->link);
    t->p2p = dp_alloc_malloc((size_t)t->n_devices * t->n_devices);
    if (!t->name || !t->path || !t->dev || !t->node_name || !t->node_kind || !t->link || !t->p2p) {
        rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin);
        goto fail;
    }
    if ((rc = parse_devices(t, devs, origin, err)) != DP_OK) goto fail;
    for (int i = t->n_devices; i < t->n_nodes; i++) {
        char where[64];
        snprintf(where, sizeof where, "nodes[%d]", i - t->n_devices);
        json_t *o = json_array_get(nodes, (size_t)(i - t->n_devices));
        const char *name, *kind;
        if (!json_is_object(o)) { rc = dp_error_set(err, DP_EINVAL, "%s: %s: must be an object", origin, where); goto fail; }
        static const char *const node_keys[] = {"name", "kind", NULL};
        if ((rc = dp_json_known_keys(o, node_keys, origin, where, err)) != DP_OK) goto fail;
        if ((rc = get_string(o, "name", 1, &name, origin, where, err)) != DP_OK) goto fail;
        if (!name[0]) { rc = dp_error_set(err, DP_EINVAL, "%s: %s.name: must not be empty", origin, where); goto fail; }
        if ((rc = get_string(o, "kind", 1, &kind, origin, where, err)) != DP_OK) goto fail;
        int k = kind_index(kind, node_kind_names, 4);
        if (k < DP_TOPOLOGY_NODE_SWITCH) {
            rc = dp_error_set(err, DP_EINVAL, "%s: %s.kind: \"%s\" is not switch or host (devices go in \"devices\")", origin, where, kind);
            goto fail;
        }
        t->node_kind[i] = (dp_topology_node_kind)k;
        t->node_name[i] = dp_alloc_strdup(name);
        if (!t->node_name[i]) { rc = dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
    }
    if ((rc = index_names(t, origin, err)) != DP_OK) goto fail;
    if ((rc = parse_links(t, links, origin, err)) != DP_OK) goto fail;
    if ((rc = parse_p2p(t, json_object_get(root, "peer_to_peer"), origin, err)) != DP_OK) goto fail;
    if ((rc = build_routes(t, json_object_get(root, "routes"), origin, err)) != DP_OK) goto fail;
    json_decref(root);
    return t;
fail:
    (void)rc;
    json_decref(root);
    dp_topology_free(t);
    return NULL;
}

dp_topology *dp_topology_load(const char *path, dp_error *err)
{
    size_t size;
    char *text = dp_json_read_text(path, &size, err);
    if (!text) return NULL;
    dp_topology *t = dp_topology_parse(text, path, err);
    free(text);
    return t;
}
