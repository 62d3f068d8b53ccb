/* doppler graph: inspect dataflow graphs. */
#include "cli.h"
#include "commands.h"
#include "dp_cost.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void graph_usage(FILE *f)
{
    fprintf(f, "Usage: doppler graph info FILE [--format F] [--devices N]\n\n"
               "Print a graph's size and bounds: ops, edges, repeated edges, sources, sinks, total\n"
               "work, critical path length (b-level with mean costs on the machine) and the lower\n"
               "bound max(critical path without communication, total work / devices).\n\n"
               "Options:\n"
               "  --format F           graph format: doppler (DOPPLER .txt), json (native)\n"
               DP_CLI_MACHINE_HELP
               "  -h, --help           this help\n");
}

static int graph_info(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        DP_CLI_MACHINE_OPTIONS, {NULL, 0, NULL, 0}};
    dp_cli_machine mach;
    dp_cli_machine_init(&mach);
    const char *format = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
        int r = dp_cli_machine_option(&mach, c, optarg, "graph info");
        if (r < 0) return DP_EXIT_USAGE;
        if (r > 0) continue;
        switch (c) {
        case 'f': format = optarg; break;
        case 'h': graph_usage(stdout); return 0;
        default: return dp_cli_usage_error("graph info", "unknown option");
        }
    }
    if (optind != argc - 1) return dp_cli_usage_error("graph info", "expected one graph FILE");
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = dp_graph_read(argv[optind], format, &err);
    if (!g) return dp_cli_fail(&err);
    dp_costs *cost = dp_cli_machine_costs(&mach, g, &err);
    if (!cost) { dp_graph_free(g); dp_cli_machine_free(&mach); return dp_cli_fail(&err); }
    const double sc = g->time_scale;
    char b1[40], b2[40], b3[40], b4[40];
    double total = dp_graph_total_work(g);
    double cp = dp_costs_critical_path(g, cost);
    double lb = dp_costs_lower_bound(g, cost);
    printf("graph:           %s (%s)\n", g->name, g->source);
    printf("costs:           %s\n", g->cost_kind == DP_COST_PHYSICAL ? "FLOPs and bytes" : "times (as given in the file)");
    printf("ops:             %d\n", g->n_ops);
    printf("edges:           %d\n", g->n_edges);
    printf("repeated edges:  %d\n", g->n_repeated_edges);
    printf("sources:         %d\n", g->n_sources);
    printf("sinks:           %d\n", g->n_sinks);
    printf("total work:      %s %s\n", dp_cli_fmt(total, b1, sizeof b1), g->cost_kind == DP_COST_PHYSICAL ? "FLOPs" : "(file units)");
    printf("devices:         %d\n", mach.n_devices);
    printf("critical path:   %s %s (b-level, mean costs, communication included)\n", dp_cli_fmt(cp / sc, b2, sizeof b2), g->time_unit);
    printf("lower bound:     %s %s (max of critical path without communication, work / devices)\n",
           dp_cli_fmt(lb / sc, b3, sizeof b3), g->time_unit);
    double single = 0;
    for (int v = 0; v < g->n_ops; v++) single += dp_costs_op(cost, v, 0);
    printf("single device:   %s %s\n", dp_cli_fmt(single / sc, b4, sizeof b4), g->time_unit);
    dp_costs_free(cost);
    dp_graph_free(g);
    dp_cli_machine_free(&mach);
    return 0;
}

int cmd_graph(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        graph_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? DP_EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "info") == 0) return graph_info(argc - 1, argv + 1);
    return dp_cli_usage_error("graph", "unknown subcommand '%s'", argv[1]);
}
