/* doppler graph: inspect dataflow graphs. */
#include "cli.h"
#include "dp_alloc.h"
#include "commands.h"
#include "dp_cost.h"
#include "dp_file.h"
#include "dp_gen.h"
#include "dp_graph_formats.h"
#include "dp_hetero.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void graph_usage(FILE *f)
{
    fprintf(f, "Usage: doppler graph info FILE [--format F] [--devices N]\n"
               "       doppler graph gen MODEL [--PARAM VALUE ...] --out FILE\n"
               "       doppler graph convert IN OUT [--format F] [--to F] [--wf-bandwidth B]\n"
               "                             [--assignment FILE [--devices N]]\n"
               "                             [--comm-ratio R] [--time-scale S]   (OUT or --out OUT)\n"
               "       doppler graph import MODEL --out FILE [--name N] [--dim NAME=SIZE ...]\n"
               "                            [--input-shape AxBx... --training --optimizer sgd|adam]\n\n"
               "info: print a graph's size and bounds: ops, edges, repeated edges, sources, sinks, total\n"
               "work, critical path length (b-level with mean costs on the machine) and the lower\n"
               "bound max(critical path without communication, total work / compute streams: one a\n"
               "device unless the machine gives more), both with each op's least time over the devices\n"
               "(on different devices less than the mean the total work line shows).\n"
               "gen: generate a workload (doppler graph gen --help lists models and parameters).\n"
               "convert: read any format, write native JSON (.json), Graphviz DOT (.dot) or DOPPLER's\n"
               "text (.txt, a graph of times).\n"
               "import: an ONNX model (MODEL.onnx) or a torchvision model (torchvision:resnet50) as native\n"
               "JSON with FLOPs and bytes per op, by the Python package's importers (doppler graph import\n"
               "--help; needs python3-onnx, or python3-torch and python3-torchvision).\n\n"
               "Options:\n"
               "  --format F           input format: doppler (DOPPLER .txt), json (native, WfCommons or\n"
               "                       MSR, by content), native, wfcommons, msr, stg, dot; default by\n"
               "                       extension (.txt, .json, .stg, .dot/.gv); info also reads the\n"
               "                       heterogeneous examples place reads, with their own processors:\n"
               "                       heft-in (.in) and heft-csv (PREFIX_task_exe_time.csv)\n"
               );
    dp_cli_print_machine_help(f);
    fprintf(f, "  -h, --help           this help\n");
}

static int graph_info(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        DP_CLI_MACHINE_OPTIONS, {NULL, 0, NULL, 0}};
    dp_machine mach;
    dp_machine_init(&mach);
    const char *format = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
        int r = dp_cli_machine_option(&mach, c, optarg, "graph info");
        if (r < 0) return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
        if (r > 0) continue;
        switch (c) {
        case 'f': format = optarg; break;
        case 'h': graph_usage(stdout); return dp_cli_machine_done(&mach, 0);
        default: return dp_cli_machine_done(&mach, dp_cli_option_error("graph info", "f:h", opts, argv));
        }
    }
    if (optind != argc - 1) return dp_cli_machine_done(&mach, dp_cli_usage_error("graph info", "expected one graph FILE"));
    if (dp_cli_check_format("graph info", format) || dp_cli_check_machine("graph info", &mach))
        return dp_cli_machine_done(&mach, DP_EXIT_USAGE);
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = NULL;
    dp_cost *cost = NULL;
    if (dp_hetero_format(argv[optind], format)) {
        /* a heterogeneous example: its own processors, as place reads it */
        if (dp_machine_hetero_read(&mach, argv[optind], format, &g, &cost, &err) != DP_OK)
            return dp_cli_machine_done(&mach, dp_cli_fail(&err));
    } else {
        g = dp_graph_read(argv[optind], format, &err);
        if (!g) return dp_cli_machine_done(&mach, dp_cli_fail(&err));
        cost = dp_machine_costs(&mach, g, &err);
        if (!cost) { dp_graph_free(g); dp_machine_free(&mach); return dp_cli_fail(&err); }
        /* as place warns: a --comm-ratio the graph's own transfer times leave unused, a device
         * count other than the one it was made for (info said nothing: a review) */
        dp_cli_warn_machine(&mach, g);
    }
    const double sc = g->time_scale;
    char b1[40], b2[40], b3[40], b4[40];
    double total = dp_graph_total_work(g);
    double cp = dp_cost_critical_path(g, cost);
    double lb = dp_cost_lower_bound(g, cost);
    printf("graph:           %s (%s)\n", g->name, g->source);
    printf("costs:           %s\n", g->cost_kind == DP_GRAPH_COST_PHYSICAL ? "FLOPs and bytes" : "times (as given in the file)");
    printf("ops:             %d\n", g->n_ops);
    printf("edges:           %d\n", g->n_edges);
    printf("repeated edges:  %d\n", g->n_repeated_edges);
    printf("sources:         %d\n", g->n_sources);
    printf("sinks:           %d\n", g->n_sinks);
    printf("total work:      %s %s\n", dp_cli_fmt(total, b1, sizeof b1), g->cost_kind == DP_GRAPH_COST_PHYSICAL ? "FLOPs" : "(file units)");
    printf("devices:         %d\n", mach.n_devices);
    printf("critical path:   %s %s (b-level, mean costs, communication included)\n", dp_cli_fmt(cp / sc, b2, sizeof b2), g->time_unit);
    printf("lower bound:     %s %s (max of critical path without communication, work / compute streams)\n",
           dp_cli_fmt(lb / sc, b3, sizeof b3), g->time_unit);
    /* every op on device 0, simulated by the machine's engine: the sum of op times was the
     * makespan of one stream only (298 for place --method single's 117 with --streams 3: a
     * review); a memory limit it exceeds is said so */
    int *zero = dp_alloc_calloc_n((size_t)g->n_ops, sizeof(int));
    dp_engine *eng = NULL;
    dp_engine_schedule one;
    int rc1 = DP_OK, over_memory = 0;
    if (!zero) rc1 = dp_error_set(&err, DP_ENOMEM, "out of memory");
    else if (!(eng = dp_engine_alloc(g, cost, &mach, &err))) rc1 = err.code; /* DP_ERANGE: costs out of range */
    else {
        rc1 = dp_engine_run(eng, zero, NULL, &one, &err);
        over_memory = rc1 == DP_ERANGE; /* a run's DP_ERANGE is a memory capacity exceeded (dp_engine.h), no other */
    }
    if (rc1 == DP_OK) printf("single device:   %s %s (every op on device 0, simulated)\n", dp_cli_fmt(one.makespan / sc, b4, sizeof b4), g->time_unit);
    else if (over_memory) printf("single device:   over the memory limit (every op on device 0)\n");
    dp_engine_free(eng);
    free(zero);
    if (rc1 != DP_OK && !over_memory) {
        dp_cost_free(cost);
        dp_graph_free(g);
        return dp_cli_machine_done(&mach, dp_cli_fail(&err));
    }
    printf("content hash:    %016llx (structure and costs; the same for a renamed, copied or converted graph)\n",
           (unsigned long long)dp_graph_content_hash(g));
    dp_cost_free(cost);
    dp_graph_free(g);
    dp_machine_free(&mach);
    return 0;
}

static void gen_usage(FILE *f, const dp_gen_model *only)
{
    if (!only)
        fprintf(f, "Usage: doppler graph gen MODEL [--PARAM VALUE ...] --out FILE\n\n"
                   "Generate a workload graph and write it (.json native, .dot Graphviz, .txt DOPPLER's text\n"
                   "for task graphs; '-' for stdout). ML and DNN models (chainmm, ffnn, llama-*, cnn, rnn,\n"
                   "transformer, moe) give FLOPs and bytes (multiply-add = 2 FLOPs); the task-graph models\n"
                   "(random, stg, layered, forkjoin, seriesparallel, workflow) give times, an edge costing\n"
                   "ccr x its producer's work (ranges and sources: models/dp_gen.h, doc/graph-format.md).\n"
                   "Options: --out FILE (required), --to json|dot|doppler (default: by extension), --name NAME\n"
                   "(graph name; default: the model and its main parameters), then the model's own\n"
                   "(a yes/no option alone means yes: --training):\n\n");
    char buf[64];
    for (const dp_gen_model *m = dp_gen_models(); m->name; m++) {
        if (only && m != only) continue;
        fprintf(f, "%s: %s\n", m->name, m->description);
        for (const dp_gen_param *p = m->params; p->name; p++) {
            dp_gen_param_default(m, p, buf, sizeof buf);
            char lead[64], text[1024];
            snprintf(lead, sizeof lead, "  --%-16s ", p->name);
            snprintf(text, sizeof text, "%s (default %s)", p->help, buf);
            dp_cli_help_option(f, lead, text);
        }
        if (!only) fprintf(f, "\n");
    }
}

static int graph_gen(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        gen_usage(argc < 2 ? stderr : stdout, NULL);
        return argc < 2 ? DP_EXIT_USAGE : 0;
    }
    const char *model = argv[1];
    const dp_gen_model *m = dp_gen_find(model);
    if (!m) return dp_cli_usage_error("graph gen", "unknown model '%s' (doppler graph gen --help lists them)", model);
    const char *out = NULL, *to = NULL, *gname = NULL;
    const char **keys = dp_alloc_calloc((size_t)argc, sizeof *keys), **vals = dp_alloc_calloc((size_t)argc, sizeof *vals);
    char **owned = dp_alloc_calloc((size_t)argc, sizeof *owned);
    int np = 0, status = DP_EXIT_USAGE;
    if (!keys || !vals || !owned) { fprintf(stderr, "doppler: out of memory\n"); status = DP_EXIT_ERROR; goto done; }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { gen_usage(stdout, m); status = 0; goto done; }
        if (strncmp(a, "--", 2) != 0) { dp_cli_usage_error("graph gen", "unexpected argument '%s'", a); goto done; }
        const char *key = a + 2, *val;
        const char *eq = strchr(key, '=');
        char *k = NULL;
        if (eq) {
            k = dp_alloc_strndup(key, (size_t)(eq - key));
            if (!k) { status = DP_EXIT_ERROR; goto done; }
            owned[i] = k;
            key = k;
            val = eq + 1;
        } else {
            const dp_gen_param *p = m->params;
            while (p->name && strcmp(p->name, key) != 0) p++;
            if (p->name && p->type == DP_GEN_FLAG) {
                val = "yes"; /* --training alone */
            } else if (!p->name && strcmp(key, "out") != 0 && strcmp(key, "to") != 0 && strcmp(key, "name") != 0 &&
                       (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)) {
                /* not a parameter of this model, and no value after it: it takes no option as
                 * its value (--training on a model without it took "--out" as its value, and the
                 * error named the file; a review); dp_gen_by_name names it with the known ones */
                val = "";
            } else {
                if (i + 1 >= argc) { dp_cli_usage_error("graph gen", "option %s needs a value", a); goto done; }
                val = argv[++i];
            }
        }
        if (strcmp(key, "out") == 0) out = val;
        else if (strcmp(key, "to") == 0) to = val;
        else if (strcmp(key, "name") == 0) gname = val;
        else { keys[np] = key; vals[np] = val; np++; }
    }
    if (!out) { dp_cli_usage_error("graph gen", "--out FILE is required"); goto done; }
    if (dp_cli_check_write_format("graph gen", to, out)) goto done;
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = dp_gen_by_name(model, np, keys, vals, &err);
    if (!g) {
        /* parameter faults are usage errors; the rest (memory) runtime errors */
        fprintf(stderr, "doppler graph gen: %s\n", err.msg);
        status = err.code == DP_EINVAL ? DP_EXIT_USAGE : DP_EXIT_ERROR;
        goto done;
    }
    if (gname) {
        /* the graph is ours until written: rename it in place */
        char *nm = dp_alloc_strdup(gname);
        if (!nm) { fprintf(stderr, "doppler: out of memory\n"); dp_graph_free(g); status = DP_EXIT_ERROR; goto done; }
        free(g->name);
        g->name = nm;
    }
    if (dp_graph_write(g, out, to, &err) != DP_OK) {
        status = dp_cli_fail(&err);
    } else {
        char b1[40];
        if (strcmp(out, "-") != 0)
            printf("%s: %s, %d ops, %d edges, total work %s %s\n", out, g->name, g->n_ops, g->n_edges,
                   dp_cli_fmt(dp_graph_total_work(g), b1, sizeof b1), g->cost_kind == DP_GRAPH_COST_PHYSICAL ? "FLOPs" : g->time_unit);
        status = 0;
    }
    dp_graph_free(g);
done:
    if (owned) for (int i = 0; i < argc; i++) free(owned[i]);
    free(owned);
    free(keys);
    free(vals);
    return status;
}

static int graph_convert(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'}, {"to", required_argument, NULL, 't'},
        {"wf-bandwidth", required_argument, NULL, 'w'}, {"assignment", required_argument, NULL, 'a'},
        {"devices", required_argument, NULL, 'd'}, {"out", required_argument, NULL, 'o'},
        {"comm-ratio", required_argument, NULL, 'r'}, {"time-scale", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *format = NULL, *to = NULL, *assign_path = NULL, *out_opt = NULL;
    double bw = 0, ratio = 0, tscale = 0;
    int devices = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:t:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 't': to = optarg; break;
        case 'a': assign_path = optarg; break;
        case 'w':
            if (dp_cli_parse_double(optarg, &bw) != 0 || !(bw > 0))
                return dp_cli_usage_error("graph convert", "--wf-bandwidth: expected a positive number of bytes/s, got '%s'", optarg);
            break;
        case 'd':
            if (dp_cli_parse_int(optarg, 1, 4096, &devices) != 0)
                return dp_cli_usage_error("graph convert", "--devices: expected an integer 1..4096, got '%s'", optarg);
            break;
        case 'o': out_opt = optarg; break;
        case 'r':
            if (dp_cli_parse_double(optarg, &ratio) != 0 || !(ratio > 0) || ratio > 1e12)
                return dp_cli_usage_error("graph convert", "--comm-ratio: expected a number in (0, 1e12], got '%s'", optarg);
            break;
        case 's':
            if (dp_cli_parse_double(optarg, &tscale) != 0 || !(tscale > 0) || tscale > 1e15)
                return dp_cli_usage_error("graph convert", "--time-scale: expected a number in (0, 1e15], got '%s'", optarg);
            break;
        case 'h':
            graph_usage(stdout);
            printf("\nconvert options:\n"
                   "  --out OUT            the output file (instead of the second file name)\n"
                   "  --to F               output format: json (native), dot, doppler (DOPPLER's .txt;\n"
                   "                       default: by extension)\n"
                   "  --comm-ratio R       DOPPLER output of a graph whose edges carry no transfer time (STG,\n"
                   "                       DOT without sizes): every op's comm = R x its time, DOPPLER's rule,\n"
                   "                       as place --comm-ratio R costs it\n"
                   "  --time-scale S       DOPPLER output: multiply every time by S (DOPPLER's format holds\n"
                   "                       whole numbers; default 1). Read back, DOPPLER's times print / 1e10\n"
                   "  --wf-bandwidth B     WfCommons input: bytes/s turning file sizes into transfer\n"
                   "                       times (default %g, 1 Gbit/s)\n"
                   "  --assignment FILE    DOT output: group ops by device (an assignment file)\n"
                   "  --devices N          devices of the assignment (default: largest id + 1)\n",
                   DP_GRAPH_WFCOMMONS_BANDWIDTH_BPS);
            return 0;
        default: return dp_cli_option_error("graph convert", "f:t:h", opts, argv);
        }
    }
    if (out_opt ? optind != argc - 1 : optind != argc - 2)
        return dp_cli_usage_error("graph convert", "expected IN and OUT files (OUT as the second name or --out OUT, not both)");
    const char *in = argv[optind], *out = out_opt ? out_opt : argv[optind + 1];
    if (dp_cli_check_write_format("graph convert", to, out) || dp_cli_check_format("graph convert", format)) return DP_EXIT_USAGE;
    const char *ext = strrchr(dp_file_path_stem(out), '.');
    const int doppler_out = to ? strcmp(to, "doppler") == 0 : ext && strcmp(ext, ".txt") == 0;
    if ((ratio > 0 || tscale > 0) && !doppler_out)
        return dp_cli_usage_error("graph convert", "--comm-ratio and --time-scale write DOPPLER's text: give OUT.txt or --to doppler");
    if (doppler_out && assign_path)
        return dp_cli_usage_error("graph convert", "--assignment needs DOT output (.dot or --to dot)");
    /* --devices is the assignment's device count, nothing else (accepted and ignored without one:
     * a review) */
    if (devices && !assign_path)
        return dp_cli_usage_error("graph convert", "--devices N is the device count of --assignment FILE: give the assignment");
    dp_error err;
    dp_error_clear(&err);
    /* --wf-bandwidth reads WfCommons JSON only: another --format was read as WfCommons all the
     * same, and an STG file failed "'[' or '{' expected" without a word of why (a review) */
    if (bw > 0 && format && strcmp(format, "wfcommons") != 0)
        return dp_cli_usage_error("graph convert", "--wf-bandwidth reads a WfCommons workflow, not --format %s", format);
    dp_graph *g = bw > 0 ? dp_graph_read_wfcommons(in, bw, &err) : dp_graph_read(in, format, &err);
    if (!g && bw > 0) dp_error_prefix(&err, "--wf-bandwidth reads a WfCommons workflow (JSON)");
    if (!g) return dp_cli_fail(&err);
    int status = 0;
    int *assign = NULL;
    if (assign_path) {
        assign = dp_alloc_malloc_n((size_t)g->n_ops, sizeof *assign);
        if (!assign) { dp_error_set(&err, DP_ENOMEM, "out of memory"); status = dp_cli_fail(&err); goto done; }
        if (dp_cli_read_assignment(assign_path, g->name, g->n_ops, devices ? devices : 4096, assign, NULL, NULL, &err) != DP_OK) {
            status = dp_cli_fail(&err);
            goto done;
        }
        if (!devices)
            for (int v = 0; v < g->n_ops; v++) if (assign[v] + 1 > devices) devices = assign[v] + 1;
        const char *dot = strrchr(dp_file_path_stem(out), '.');
        if (to ? strcmp(to, "dot") != 0 : !(dot && (strcmp(dot, ".dot") == 0 || strcmp(dot, ".gv") == 0))) {
            status = dp_cli_usage_error("graph convert", "--assignment needs DOT output (.dot or --to dot)");
            goto done;
        }
        if (dp_graph_write_dot(g, out, assign, devices, &err) != DP_OK) status = dp_cli_fail(&err);
    } else if (doppler_out) {
        if (dp_graph_write_doppler_ratio(g, out, ratio, tscale > 0 ? tscale : 1, &err) != DP_OK) status = dp_cli_fail(&err);
        /* the .txt format has no device count: its reader takes 8 from an 8gpu_ name, else none
         * (4 by default); an 8-device graph silently placed on 4 (a review of the eighteenth
         * session) */
        const int file_devices = strncmp(dp_file_path_stem(out), "8gpu_", 5) == 0 ? 8 : 0;
        if (status == 0 && g->devices > 0 && g->devices != file_devices)
            fprintf(stderr, "doppler graph convert: note: %s was made for %d devices; a DOPPLER .txt file cannot say so "
                            "(its reader takes 8 from a name starting 8gpu_): place it with --devices %d\n",
                    g->name, g->devices, g->devices);
    } else if (dp_graph_write(g, out, to, &err) != DP_OK) {
        status = dp_cli_fail(&err);
    }
done:
    free(assign);
    dp_graph_free(g);
    return status;
}

/* doppler graph import: the Python package's importers (python/doppler/importers.py) do the
 * work; this runs `PYTHON -c BOOTSTRAP ARGS...` in place of the command, so their exit status and
 * messages are the command's. The bootstrap imports the installed package, else the source tree's
 * (DP_PYTHON_TREE), so the command works from a build tree and after make install alike. */
static int graph_import(int argc, char **argv)
{
    static const char bootstrap[] =
        "import sys\n"
        "try:\n"
        "    import doppler.importers as m\n"
        "except ModuleNotFoundError as e:\n"
        "    if e.name != 'doppler': raise\n"
        "    sys.path.append(sys.argv.pop(1))\n"
        "    import doppler.importers as m\n"
        "else:\n"
        "    sys.argv.pop(1)\n"
        "sys.exit(m.main(sys.argv[1:]))\n";
    const char *py = getenv("DOPPLER_PYTHON");
    if (!py || !*py) py = DP_PYTHON;
    char **args = dp_alloc_calloc((size_t)argc + 4, sizeof *args);
    if (!args) { fprintf(stderr, "doppler graph import: out of memory\n"); return DP_EXIT_ERROR; }
    int k = 0;
    args[k++] = (char *)py;
    args[k++] = (char *)"-c";
    args[k++] = (char *)bootstrap;
    args[k++] = (char *)DP_PYTHON_TREE;
    for (int i = 1; i < argc; i++) args[k++] = argv[i];
    args[k] = NULL;
    fflush(NULL);
    execvp(py, args);
    fprintf(stderr, "doppler graph import: cannot run %s: %s (install python3, or set DOPPLER_PYTHON)\n", py,
            strerror(errno));
    free(args);
    return DP_EXIT_ERROR;
}

int cmd_graph(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        graph_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? DP_EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "info") == 0) return graph_info(argc - 1, argv + 1);
    if (strcmp(argv[1], "gen") == 0) return graph_gen(argc - 1, argv + 1);
    if (strcmp(argv[1], "convert") == 0) return graph_convert(argc - 1, argv + 1);
    if (strcmp(argv[1], "import") == 0) return graph_import(argc - 1, argv + 1);
    return dp_cli_usage_error("graph", "unknown subcommand '%s'", argv[1]);
}
