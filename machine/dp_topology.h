/* dp_topology.h: the machine: devices, switches and host memories joined by links, and the route
 * every transfer between two devices takes (the JSON format is doc/topology-format.md).
 *
 * Nodes 0 .. n_devices-1 are the devices, in the order of the file's "devices" array: an
 * assignment's device id d is node d. Switches and host memories follow. A link joins two nodes;
 * a full-duplex link is two channels (one per direction, each of bandwidth_Bps), a half-duplex
 * link one channel shared by both directions. Channels are what the contention models share.
 *
 * Routes are computed once, when the topology is loaded: from device a to device b, the path of
 * least total latency (ties: fewest links, then the most bottleneck bandwidth, the least bandwidth
 * of its links, then the lowest node ids met first), whose inner nodes
 * are switches or host memories (a device never forwards). When a and b are two GPUs without
 * peer-to-peer access (the "peer_to_peer" matrix), the transfer is staged through host memory:
 * the route is a -> host -> b through the host memory node h that minimises (latency, links),
 * in two segments; the data is stored at h and forwarded (cudaMemcpyPeer without P2P does a
 * device-to-host then a host-to-device copy). A route is a sequence of segments; a segment is a
 * sequence of hops (directed channels) that data crosses cut-through. The file's "routes" array
 * may replace any computed route. Between two nodes joined by several link entries, a computed
 * route and an override both cross the one of least latency, then most bandwidth, then the first
 * in the file.
 *
 * Loading takes O(D^2 + (D + H) (N + L) log N) time for D devices, H host memories, N nodes and
 * L links (a shortest-path tree per device and per host memory; the D x D route table), and
 * O(D^2 + H N + L) memory.
 *
 * Every route segment gets a class: segments that cross exactly the same channels share a class,
 * so the max-min model can give all transfers of one class one rate.
 */
#ifndef DP_TOPOLOGY_H
#define DP_TOPOLOGY_H

#include "dp_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DP_TOPOLOGY_NODE_GPU = 0, DP_TOPOLOGY_NODE_CPU, DP_TOPOLOGY_NODE_SWITCH, DP_TOPOLOGY_NODE_HOST } dp_topology_node_kind;
typedef enum { DP_TOPOLOGY_LINK_NVLINK = 0, DP_TOPOLOGY_LINK_PCIE, DP_TOPOLOGY_LINK_NVSWITCH, DP_TOPOLOGY_LINK_HOST } dp_topology_link_kind;

typedef struct dp_topology_device {
    char *name;
    dp_topology_node_kind kind;         /* DP_TOPOLOGY_NODE_GPU or DP_TOPOLOGY_NODE_CPU */
    double peak_flops;         /* FLOP/s */
    double mem_bandwidth_Bps;  /* device memory bandwidth, bytes/s */
    double memory_bytes;       /* device memory capacity, bytes */
    double efficiency;         /* fraction of peak_flops a kernel reaches (roofline), (0, 1]; default 1 */
    double launch_overhead_s;  /* added to every op's roofline time; default 0 */
    int copy_engines;          /* concurrent transfers per direction; 0 = unlimited (default) */
    int streams;               /* compute streams (ops run at once); default 1 */
} dp_topology_device;

typedef struct dp_topology_link {
    int a, b;                  /* node ids */
    dp_topology_link_kind kind;
    double bandwidth_Bps;      /* per direction (count x the file's bandwidth_Bps) */
    double latency_s;
    int half_duplex;           /* 1: one channel shared by both directions */
    int chan_ab, chan_ba;      /* channel ids for a->b and b->a (equal when half duplex) */
} dp_topology_link;

typedef struct dp_topology_segment {
    int hop_begin, hop_end;    /* hops [hop_begin, hop_end) of dp_topology.hop_chan */
    double latency_s;          /* sum of its links' latencies */
    double bottleneck_Bps;     /* min bandwidth of its channels */
    int klass;                 /* segment class (same channel set, same class) */
} dp_topology_segment;

typedef struct dp_topology_route_info {
    int seg_begin, seg_end;    /* segments [seg_begin, seg_end) of dp_topology.seg */
    int n_hops;
    int staged;                /* 1 when stored and forwarded through host memory */
    int overridden;            /* 1 when given by the file's "routes" */
    double latency_s;          /* sum over all links */
    double inv_bw;             /* s/byte when alone: sum over segments of 1 / bottleneck */
    double bottleneck_Bps;     /* min over all links */
} dp_topology_route_info;

typedef struct dp_topology {
    char *name, *source, *description, *path;
    int n_devices, n_nodes, n_links, n_channels;
    dp_topology_device *dev;       /* (n_devices) */
    char **node_name;          /* (n_nodes) */
    dp_topology_node_kind *node_kind;   /* (n_nodes) */
    dp_topology_link *link;        /* (n_links) */
    double *chan_bw;           /* (n_channels) bytes/s */
    double *chan_latency;      /* (n_channels) s */
    int *chan_link;            /* (n_channels) the link a channel belongs to */
    int *chan_from, *chan_to;  /* (n_channels) node ids (for half duplex: the link's a and b, whichever
                                * way it is crossed: use hop_from / hop_to for a route's direction) */
    unsigned char *p2p;        /* (n_devices, n_devices) 1 when peer-to-peer is possible */
    dp_topology_route_info *route;      /* (n_devices, n_devices); diagonal empty */
    int n_hops_total, n_segs_total, n_classes;
    int *hop_chan;             /* (n_hops_total) channel of each hop */
    int *hop_from, *hop_to;    /* (n_hops_total) the node each hop leaves and the node it reaches */
    dp_topology_segment *seg;      /* (n_segs_total) */
    int *class_ptr, *class_chan; /* CSR: channels of class k are class_chan[class_ptr[k] ..] */
    double *class_latency;     /* (n_classes) */
    int *class_from, *class_to; /* (n_classes) first and last node of the class's first segment */
    int *name_slot;            /* (internal) open-addressing index of node ids by name, -1 empty */
    unsigned name_slots;       /* its size (a power of two), 0 until built */
} dp_topology;

/* Read a topology JSON file (doc/topology-format.md). Errors (DP_EIO, DP_EINVAL naming the file
 * and the field, e.g. "t.json: links[3].bandwidth_Bps: must be a positive number"; no route
 * between two devices; a route override whose consecutive nodes share no link). */
dp_topology *dp_topology_load(const char *path, dp_error *err);
/* The same from JSON text; `origin` names it in messages. */
dp_topology *dp_topology_parse(const char *text, const char *origin, dp_error *err);
/* Free t and everything it holds (names, links, route tables: dp_topology_route's pointers are
 * invalid after it); what reads t (a transfer model, a simulator, an engine) must be freed first.
 * A machine's loaded topology is the machine's: dp_machine_free frees it. NULL is a no-op. */
void dp_topology_free(dp_topology *t);

/* Device id of a device name, or -1. O(1) expected once the topology is loaded. */
int dp_topology_find_device(const dp_topology *t, const char *name);
/* Node id of a node name (device, switch or host), or -1. */
int dp_topology_find_node(const dp_topology *t, const char *name);

/* The route from device a to device b (both device ids, 0 <= a, b < t->n_devices; unchecked: out
 * of range reads past the table), a pointer into t valid until dp_topology_free. The diagonal
 * (a == b) is an empty route: no segments or hops, every number 0 (a transfer on one device costs
 * nothing; the file cannot give one). */
static inline const dp_topology_route_info *dp_topology_route(const dp_topology *t, int a, int b)
{
    return &t->route[a * t->n_devices + b];
}

/* The file's name of a node kind ("gpu", "cpu", "switch", "host") and of a link kind ("nvlink",
 * "pcie", "nvswitch", "host"): static strings; "?" for a value outside the enumeration. */
const char *dp_topology_node_kind_name(dp_topology_node_kind k);
const char *dp_topology_link_kind_name(dp_topology_link_kind k);

#ifdef __cplusplus
}
#endif
#endif
