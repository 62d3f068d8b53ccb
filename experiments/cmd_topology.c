/* doppler topology: inspect machine descriptions (doc/topology-format.md). */
#include "cli.h"
#include "dp_alloc.h"
#include "commands.h"
#include "dp_topology.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static void topology_usage(FILE *f)
{
    fprintf(f, "Usage: doppler topology show NAME|FILE\n"
               "       doppler topology list\n\n"
               "show: print a topology's devices, links and route matrix (bottleneck bandwidth, latency,\n"
               "hops; staged routes marked). NAME is a bundled topology (data/topologies/NAME.json).\n"
               "list: the bundled topologies.\n");
}

static const char *gb(double bps, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.4g", bps / 1e9);
    return buf;
}

static int topology_show(const char *name)
{
    dp_error err;
    dp_error_clear(&err);
    const char *p = dp_cli_topology_path(name);
    if (!p) {
        dp_machine_topology_missing(name, &err);
        return dp_cli_fail(&err);
    }
    dp_topology *t = dp_topology_load(p, &err);
    if (!t) return dp_cli_fail(&err);
    char b1[40], b2[40], b3[64];
    printf("topology %s (%s)\n", t->name, p);
    if (t->description) printf("%s\n", t->description);
    if (t->source) printf("source: %s\n", t->source);
    printf("\ndevices (%d):\n", t->n_devices);
    printf("  %-3s %-10s %-4s %12s %14s %14s %8s %7s %10s %9s\n", "id", "name", "kind", "peak TFLOP/s", "mem GB/s",
           "memory GB", "copy eng", "streams", "efficiency", "launch us");
    for (int d = 0; d < t->n_devices; d++) {
        const dp_topology_device *v = &t->dev[d];
        char ce[16];
        if (v->copy_engines) snprintf(ce, sizeof ce, "%d", v->copy_engines);
        else snprintf(ce, sizeof ce, "unlim.");
        printf("  %-3d %-10s %-4s %12.4g %14s %14s %8s %7d %10.3g %9.3g\n", d, v->name, dp_topology_node_kind_name(v->kind),
               v->peak_flops / 1e12, gb(v->mem_bandwidth_Bps, b1, sizeof b1), gb(v->memory_bytes, b2, sizeof b2), ce,
               v->streams, v->efficiency, v->launch_overhead_s * 1e6);
    }
    if (t->n_nodes > t->n_devices) {
        printf("\nnodes:");
        for (int i = t->n_devices; i < t->n_nodes; i++)
            printf(" %s (%s)", t->node_name[i], dp_topology_node_kind_name(t->node_kind[i]));
        printf("\n");
    }
    printf("\nlinks (%d), bandwidth per direction:\n", t->n_links);
    for (int i = 0; i < t->n_links; i++) {
        const dp_topology_link *l = &t->link[i];
        printf("  %-10s - %-10s %-9s %10s GB/s %8.3g us %s\n", t->node_name[l->a], t->node_name[l->b],
               dp_topology_link_kind_name(l->kind), gb(l->bandwidth_Bps, b1, sizeof b1), l->latency_s * 1e6,
               l->half_duplex ? "half duplex" : "full duplex");
    }
    const int D = t->n_devices;
    printf("\nroutes: bandwidth alone on the route in GB/s (bytes / (bytes x inv_bw)); * = staged through host memory\n");
    printf("  %-10s", "src\\dst");
    for (int b = 0; b < D; b++) printf(" %9s", t->dev[b].name);
    printf("\n");
    for (int a = 0; a < D; a++) {
        printf("  %-10s", t->dev[a].name);
        for (int b = 0; b < D; b++) {
            if (a == b) { printf(" %9s", "-"); continue; }
            const dp_topology_route_info *r = dp_topology_route(t, a, b);
            snprintf(b3, sizeof b3, "%s%s", gb(1.0 / r->inv_bw, b1, sizeof b1), r->staged ? "*" : "");
            printf(" %9s", b3);
        }
        printf("\n");
    }
    printf("\nroutes: latency in us / links crossed\n");
    printf("  %-10s", "src\\dst");
    for (int b = 0; b < D; b++) printf(" %9s", t->dev[b].name);
    printf("\n");
    for (int a = 0; a < D; a++) {
        printf("  %-10s", t->dev[a].name);
        for (int b = 0; b < D; b++) {
            if (a == b) { printf(" %9s", "-"); continue; }
            const dp_topology_route_info *r = dp_topology_route(t, a, b);
            snprintf(b3, sizeof b3, "%.3g/%d", r->latency_s * 1e6, r->n_hops);
            printf(" %9s", b3);
        }
        printf("\n");
    }
    printf("\nroute paths:\n");
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b) continue;
            const dp_topology_route_info *r = dp_topology_route(t, a, b);
            printf("  %s", t->dev[a].name);
            for (int sg = r->seg_begin; sg < r->seg_end; sg++) {
                if (sg > r->seg_begin) printf(" [staged]");
                for (int h = t->seg[sg].hop_begin; h < t->seg[sg].hop_end; h++)
                    printf(" -> %s", t->node_name[t->hop_to[h]]);
            }
            printf("%s\n", r->overridden ? "  (given in the file)" : "");
        }
    dp_topology_free(t);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int topology_list(void)
{
    const char *dir = dp_cli_data_path("data/topologies");
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "doppler: %s: cannot open the bundled topologies (set DOPPLER_DATA)\n", dir);
        return DP_EXIT_ERROR;
    }
    char *names[512];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 512) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) names[n++] = dp_alloc_strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    char path[4096];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        dp_error err;
        dp_topology *t = dp_topology_load(path, &err);
        names[i][strlen(names[i]) - 5] = 0;
        if (t) printf("%-22s %d devices: %s\n", names[i], t->n_devices, t->description ? t->description : "");
        else printf("%-22s (unreadable: %s)\n", names[i], err.msg);
        dp_topology_free(t);
        free(names[i]);
    }
    return 0;
}

int cmd_topology(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        topology_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? DP_EXIT_USAGE : 0;
    }
    if (argc >= 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        topology_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "show") == 0) {
        if (argc != 3) return dp_cli_usage_error("topology", "show takes one NAME or FILE");
        return topology_show(argv[2]);
    }
    if (strcmp(argv[1], "list") == 0) {
        if (argc != 2) return dp_cli_usage_error("topology", "list takes no argument");
        return topology_list();
    }
    return dp_cli_usage_error("topology", "unknown subcommand '%s'", argv[1]);
}
