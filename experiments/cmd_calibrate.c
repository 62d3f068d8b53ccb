/* doppler calibrate: profile the real executor, fit the cost model to the profile. */
#include "cli.h"
#include "dp_alloc.h"
#include "commands.h"
#include "dp_calib.h"
#include "dp_calib_fit.h"
#include "dp_file.h"
#include "dp_exec_backend.h"
#include "dp_json.h"
#include "dp_topology.h"
#include "exec_cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/* progress of a profile (dp_profile_options.progress): a line every 10% with the time elapsed and
 * an estimate of what is left, the sweep in hand rewritten in place on a terminal */
typedef struct profile_progress {
    double t0;
    int last_decile;
    int tty;
} profile_progress;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void on_profile_progress(int done, int total, const char *what, void *ctx)
{
    profile_progress *pp = ctx;
    const double el = now_s() - pp->t0, left = done > 0 ? el * (total - done) / done : 0;
    const int decile = total > 0 ? 10 * done / total : 10;
    if (pp->tty) {
        fprintf(stderr, "\r  profiled %d/%d sweeps (%s), %.0f s, about %.0f s left   ", done, total, what, el, left);
        if (done == total) fputc('\n', stderr);
    } else if (decile != pp->last_decile || done == total) {
        fprintf(stderr, "  profiled %d/%d sweeps (%s), %.0f s, about %.0f s left\n", done, total, what, el, left);
    }
    pp->last_decile = decile;
}

static void calibrate_usage(FILE *f)
{
    fprintf(f, "Usage: doppler calibrate profile [--topology T | --devices N] [--kinds K1,K2,..] [--graph G]...\n"
               "                                 --out PROFILE.json\n"
               "       doppler calibrate fit PROFILE.json --out CALIBRATION.json [--report REPORT.json]\n                             [--keep-failed]\n\n"
               "profile: time each op kind over a sweep of sizes on each device, and copies over a sweep of\n"
               "sizes on each route, on the real executor (exec/dp_exec.h); write the raw samples.\n"
               "fit: fit time = a + b x FLOPs + c x bytes per op kind and device, and latency + bytes /\n"
               "bandwidth per route (GSL least squares on relative error, robust where outliers appear),\n"
               "and each device's interference (copy_in: compute seconds lost per second of a copy into\n"
               "it; peer_busy: slowdown per other busy device; sim/dp_hisim.h); print each fit's\n"
               "coefficients, R^2 and residuals; write the calibration file. A fit fails when its R^2 is\n"
               "NaN or below 0.5, a coefficient is NaN or out of the file's range, or a route's bandwidth\n"
               "is at its cap (1e18 B/s: copy times that do not grow with size), or a device has no\n"
               "sample of copy_in or peer_busy where the profile ran the interference probes (0 would be\n"
               "read as measured); failed fits are listed on stderr and the command exits 1 without\n"
               "writing the calibration (the report is written).\n\n"
               "Options of profile:\n"
               "  --topology T         name the devices as topology T does (a file or a bundled name, e.g.\n"
               "                       cpu-2core): device d of the executor is the topology's device d\n"
               "  --devices N          else N devices named by the backend: cpu0 .. cpuN-1 (default 2)\n"
               "  --backend B          executor backend: cpu (default), cuda when built --with-cuda\n"
               "  --kinds K1,K2,...    op kinds to time, default:\n"
               "                       %s\n"
               "  --graph FILE         also time every op kind found in FILE, and every distinct op of FILE\n"
               "                       as the executor runs it (the calibration keeps their medians as\n"
               "                       \"measured\" ops, used for exactly those ops) (repeatable)\n"
               "  --target-flops F     the graphs run at the scale giving F FLOPs in all, as doppler\n"
               "                       validate runs them (default 2e10, at most 1e18)\n"
               "  --scale S            instead, this dimension scale, (0, 1] (not with --target-flops)\n"
               "  --repeats R          runs per size (default 3)\n"
               "  --passes P           interleaved passes of the --graph ops and the interference probes\n"
               "                       (default 9): pass r probes device 0, 1, ... in turn, so that the\n"
               "                       host's drift in speed falls on every device alike\n"
               "  --max-elems E        largest tensor of elementwise kinds, floats (default 1048576)\n"
               "  --max-gemm M         largest GEMM dimension (default 768)\n"
               "  --no-pin             do not pin workers to cores\n"
               "  --nice N             nice value of the worker threads (negative: root)\n"
               "  --busy               keep the other devices busy (a background sgemm loop on each)\n"
               "                       while one is profiled: op times of a machine whose devices all\n"
               "                       work, for hosts whose cores share execution units or memory\n"
               "  --no-interference    skip the interference probes (copies into a computing device;\n"
               "                       its peers busy): the calibration then has no \"interference\"\n"
               "  --out FILE           the profile (JSON, written atomically)\n"
               "Options of fit:\n"
               "  --out FILE           the calibration (JSON, format doppler-calibration version 1)\n"
               "  --report FILE        the fits' statistics (JSON: n, terms, R^2, residuals, \"failed\": why)\n"
               "  --keep-failed        write the calibration even with failed fits (still listed; exit 0)\n"
               "  -h, --help           this help\n",
            DP_CLI_DEFAULT_KINDS);
}

/* split "a,b,c" into kinds (appending unique names) */
static int add_kinds(char ***kinds, int *n, const char *list)
{
    char *dup = dp_alloc_strdup(list);
    if (!dup) return -1;
    for (char *save = NULL, *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int seen = 0;
        for (int i = 0; i < *n; i++) seen |= strcmp((*kinds)[i], t) == 0;
        if (seen || !*t) continue;
        char **k = dp_alloc_realloc(*kinds, (size_t)(*n + 1) * sizeof(char *));
        if (!k) { free(dup); return -1; }
        *kinds = k;
        (*kinds)[(*n)++] = dp_alloc_strdup(t);
    }
    free(dup);
    return 0;
}

static int calibrate_profile(int argc, char **argv)
{
    const char *cmd = "calibrate profile";
    enum { O_TOPOLOGY = 100, O_DEVICES = 1, O_BACKEND, O_KINDS, O_GRAPH, O_REPEATS, O_MAXE, O_MAXG, O_NOPIN, O_OUT, O_HELP, O_NICE, O_BUSY, O_NOITF, O_TARGET, O_SCALE, O_PASSES };
    static const struct option opts[] = {
        {"topology", required_argument, NULL, O_TOPOLOGY},
        {"devices", required_argument, NULL, O_DEVICES}, {"backend", required_argument, NULL, O_BACKEND},
        {"kinds", required_argument, NULL, O_KINDS}, {"graph", required_argument, NULL, O_GRAPH},
        {"repeats", required_argument, NULL, O_REPEATS}, {"passes", required_argument, NULL, O_PASSES},
        {"max-elems", required_argument, NULL, O_MAXE},
        {"max-gemm", required_argument, NULL, O_MAXG}, {"no-pin", no_argument, NULL, O_NOPIN},
        {"nice", required_argument, NULL, O_NICE}, {"busy", no_argument, NULL, O_BUSY}, {"no-interference", no_argument, NULL, O_NOITF},
        {"target-flops", required_argument, NULL, O_TARGET}, {"scale", required_argument, NULL, O_SCALE},
        {"out", required_argument, NULL, O_OUT}, {"help", no_argument, NULL, O_HELP}, {NULL, 0, NULL, 0}};
    dp_profile_options po;
    dp_profile_options_init(&po);
    int n_devices = 2, n_devices_given = 0, n_kinds = 0, v;
    char **kinds = NULL;
    const char *kind_list = NULL, *out = NULL, *topology = NULL;
    dp_topology *topo = NULL;
    const char *graphs[64];
    int n_graphs = 0, status = DP_EXIT_USAGE;
    double target = 2e10, scale = 0;
    int xsize = 0; /* --scale, --target-flops given (dp_cli_exec_size_option) */
    dp_error err;
    dp_error_clear(&err);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_DEVICES:
            if (dp_cli_parse_int(optarg, 1, DP_EXEC_MAX_DEVICES, &n_devices) != 0) {
                dp_cli_usage_error(cmd, "--devices: expected 1..%d, got '%s'", DP_EXEC_MAX_DEVICES, optarg);
                goto done;
            }
            n_devices_given = 1;
            break;
        case O_BACKEND: po.backend = optarg; break;
        case O_TOPOLOGY: topology = optarg; break;
        case O_KINDS: kind_list = optarg; break;
        case O_GRAPH:
            if (n_graphs == 64) { dp_cli_usage_error(cmd, "at most 64 --graph"); goto done; }
            graphs[n_graphs++] = optarg;
            break;
        case O_REPEATS:
            if (dp_cli_parse_int(optarg, 1, 1000, &po.repeats) != 0) { dp_cli_usage_error(cmd, "--repeats: expected 1..1000, got '%s'", optarg); goto done; }
            break;
        case O_PASSES:
            if (dp_cli_parse_int(optarg, 1, 1000, &po.passes) != 0) { dp_cli_usage_error(cmd, "--passes: expected 1..1000, got '%s'", optarg); goto done; }
            break;
        case O_MAXE:
            if (dp_cli_parse_int(optarg, 256, 1 << 28, &v) != 0) { dp_cli_usage_error(cmd, "--max-elems: expected 256..2^28, got '%s'", optarg); goto done; }
            po.max_elems = v;
            break;
        case O_MAXG:
            if (dp_cli_parse_int(optarg, 16, 8192, &v) != 0) { dp_cli_usage_error(cmd, "--max-gemm: expected 16..8192, got '%s'", optarg); goto done; }
            po.max_gemm = v;
            break;
        case O_NOPIN: po.pin = 0; break;
        case O_BUSY: po.background = 1; break;
        case O_NOITF: po.interference = 0; break;
        case O_TARGET:
            if (dp_cli_exec_size_option(cmd, &xsize, 2) != 0 || dp_cli_parse_target_flops(cmd, optarg, &target) != 0) goto done;
            break;
        case O_SCALE:
            if (dp_cli_exec_size_option(cmd, &xsize, 1) != 0) goto done;
            if (dp_cli_parse_double(optarg, &scale) != 0 || !(scale > 0 && scale <= 1)) { dp_cli_usage_error(cmd, "--scale: expected (0, 1], got '%s'", optarg); goto done; }
            break;
        case O_NICE:
            if (dp_cli_parse_int(optarg, -20, 19, &po.nice) != 0) { dp_cli_usage_error(cmd, "--nice: expected -20..19, got '%s'", optarg); goto done; }
            break;
        case O_OUT: out = optarg; break;
        case 'h': case O_HELP: calibrate_usage(stdout); status = 0; goto done;
        default: dp_cli_option_error(cmd, "h", opts, argv); goto done;
        }
    }
    if (optind < argc) { dp_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]); goto done; }
    if (!out) { dp_cli_usage_error(cmd, "--out FILE is required"); goto done; }
    /* the scale is the --graph ops' (the kinds' sweeps have sizes of their own): without a graph
     * it changed nothing, without a word (a walkthrough) */
    if (xsize && n_graphs == 0) {
        dp_cli_usage_error(cmd, "--scale and --target-flops set the scale of the --graph ops, and no --graph is given");
        goto done;
    }
    {
        /* --out replaces no input (a graph, the topology's file; a bundled name is its file) */
        dp_cli_file ins[65] = {{"--topology", dp_cli_topology_path(topology)}};
        for (int i = 0; i < n_graphs; i++) ins[i + 1] = (dp_cli_file){"--graph", graphs[i]};
        const dp_cli_file outs[] = {{"--out", out}};
        /* and --out can be made before minutes of measurement (a read-only folder or a
         * directory was found after them, and the measurement lost: a review, rev nr21) */
        const int rc = dp_cli_files_distinct(cmd, outs, 1, ins, n_graphs + 1);
        if (rc) { status = rc; goto done; }
    }
    if (add_kinds(&kinds, &n_kinds, kind_list ? kind_list : DP_CLI_DEFAULT_KINDS) != 0) goto nomem;
    /* an empty list profiled no op and wrote a profile the fit refused; a kind of 48 bytes or
     * more was cut to 47, a kind no graph op has (a review) */
    if (n_kinds == 0) { dp_cli_usage_error(cmd, "--kinds: no op kind in '%s'", kind_list ? kind_list : ""); goto done; }
    for (int k = 0; k < n_kinds; k++)
        if (strlen(kinds[k]) >= sizeof ((dp_profile_op *)0)->kind) {
            dp_cli_usage_error(cmd, "--kinds: '%s' is longer than %zu bytes", kinds[k], sizeof ((dp_profile_op *)0)->kind - 1);
            goto done;
        }
    const char *names[DP_EXEC_MAX_DEVICES];
    if (topology) {
        const char *tp = dp_cli_topology_path(topology);
        if (!tp) { dp_cli_usage_error(cmd, "--topology: no file or bundled topology '%s'", topology); goto done; }
        if (!(topo = dp_topology_load(tp, &err))) { status = dp_cli_fail(&err); goto done; }
        /* --devices beside a topology: its count or refused (another count was ignored, the
         * topology's devices profiled: a review), as place and train take it */
        if (n_devices_given && n_devices != topo->n_devices) {
            dp_cli_usage_error(cmd, "--devices %d: topology %s has %d devices", n_devices, topology, topo->n_devices);
            goto done;
        }
        /* the executor runs at most DP_EXEC_MAX_DEVICES devices (a topology of 1100 overran
         * names[] and crashed: a review) */
        if (topo->n_devices > DP_EXEC_MAX_DEVICES) {
            dp_cli_usage_error(cmd, "--topology %s: %d devices, more than the executor runs (%d)", topology, topo->n_devices,
                               DP_EXEC_MAX_DEVICES);
            goto done;
        }
        n_devices = topo->n_devices;
        for (int d = 0; d < n_devices; d++) names[d] = topo->dev[d].name;
        dp_cli_warn_backend_topology(po.backend, topo);
    }
    for (int i = 0; i < n_graphs; i++) {
        dp_graph *g = dp_graph_read(graphs[i], NULL, &err);
        if (!g) { status = dp_cli_fail(&err); goto done; }
        for (int u = 0; u < g->n_ops; u++) {
            const char *kind = g->cost_kind == DP_GRAPH_COST_TIME ? "synthetic" : g->op_kind[u];
            /* as --kinds: a kind of 48 bytes or more was cut to 47 in the sweep and its graph_op
             * samples dropped, without a word (a review) */
            if (strlen(kind) >= sizeof ((dp_profile_op *)0)->kind) {
                dp_error_set(&err, DP_EINVAL, "%s: op %d (\"%s\"): kind '%s' is longer than %zu bytes (the longest a profile "
                             "keeps)", graphs[i], u, g->op_name[u], kind, sizeof ((dp_profile_op *)0)->kind - 1);
                dp_graph_free(g);
                status = dp_cli_fail(&err);
                goto done;
            }
            if (add_kinds(&kinds, &n_kinds, kind) != 0) {
                dp_graph_free(g);
                goto nomem;
            }
        }
        dp_graph_free(g);
    }
    char machine[512];
    dp_cli_machine_name(machine, sizeof machine);
    po.machine = machine;
    profile_progress pp = {now_s(), -1, isatty(2)};
    po.progress = on_profile_progress;
    po.progress_ctx = &pp;
    fprintf(stderr, "doppler calibrate: profiling %d kind%s on %d %s device%s (machine: %s)\n", n_kinds,
            n_kinds == 1 ? "" : "s", n_devices, po.backend, n_devices == 1 ? "" : "s", machine);
    if (strcmp(po.backend, "cpu") == 0) {
        const int allowed = dp_exec_cpu_count();
        if (allowed < n_devices)
            fprintf(stderr, "doppler calibrate: warning: %d devices on %d allowed core%s: the workers are not pinned and "
                            "share cores, so copies and interference are measured between workers on one core, not "
                            "between %d cores\n", n_devices, allowed, allowed > 1 ? "s" : "", n_devices);
    }
    dp_profile *p = NULL;
    if (dp_profile_run(n_devices, topo ? names : NULL, (const char *const *)kinds, n_kinds, &po, &p, &err) != DP_OK) {
        status = dp_cli_fail(&err);
        goto done;
    }
    dp_cli_warn_nice(po.nice, p->nice, p->nice_errno);
    /* the graphs' own ops, as doppler validate runs them */
    for (int i = 0; i < n_graphs; i++) {
        dp_graph *g = dp_graph_read(graphs[i], NULL, &err);
        if (!g) { dp_profile_free(p); status = dp_cli_fail(&err); goto done; }
        if (g->cost_kind == DP_GRAPH_COST_TIME) {   /* synthetic kernels: the sweep covers them */
            fprintf(stderr, "  %s: a graph of durations: its ops run synthetic kernels, which the synthetic sweep covers "
                            "(no measured ops)\n", graphs[i]);
            dp_graph_free(g);
            continue;
        }
        dp_exec_options xo;
        dp_exec_options_init(&xo);
        dp_cli_exec_size(g, scale, target, &xo); /* a graph in FLOPs: its scale */
        dp_graph *xg = dp_exec_plan_graph(g, &xo, &err);
        int before = p->n_ops;
        int rc = xg ? dp_profile_graph_ops(p, xg, &po, &err) : DP_EINVAL;
        if (rc == DP_OK) fprintf(stderr, "  %s: %d samples of its ops at scale %g\n", graphs[i], p->n_ops - before, xo.scale);
        dp_graph_free(xg);
        dp_graph_free(g);
        if (rc != DP_OK) { dp_profile_free(p); status = dp_cli_fail(&err); goto done; }
    }
    if (dp_profile_save(p, out, &err) != DP_OK) {
        dp_profile_free(p);
        status = dp_cli_fail(&err);
        goto done;
    }
    printf("profile: %d op samples, %d copy samples, %d devices -> %s\n", p->n_ops, p->n_copies, p->n_devices, out);
    dp_profile_free(p);
    status = 0;
    goto done;
nomem:
    dp_error_set(&err, DP_ENOMEM, "out of memory");
    status = dp_cli_fail(&err);
done:
    for (int i = 0; i < n_kinds; i++) free(kinds[i]);
    free(kinds);
    dp_topology_free(topo);
    return status;
}

/* a fit's statistics for the report; NaN and inf as null (json_pack dropped the whole entry) and
 * "failed": why when the fit failed */
static json_t *info_json(const dp_calib_fit_info *in, int failed, const char *why)
{
    json_t *j = json_pack("{s:i,s:s,s:b}", "n", in->n, "terms", in->terms, "robust", in->robust);
    if (!j) return NULL;
    json_object_set_new(j, "r2", dp_json_number(in->r2));
    json_object_set_new(j, "rms_rel_residual", dp_json_number(in->rms_rel));
    json_object_set_new(j, "max_rel_residual", dp_json_number(in->max_rel));
    if (failed) json_object_set_new(j, "failed", json_string(why));
    return j;
}

static int calibrate_fit(int argc, char **argv)
{
    const char *cmd = "calibrate fit";
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'}, {"report", required_argument, NULL, 'r'},
        {"keep-failed", no_argument, NULL, 'k'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *out = NULL, *report = NULL;
    int keep_failed = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'r': report = optarg; break;
        case 'k': keep_failed = 1; break;
        case 'h': calibrate_usage(stdout); return 0;
        default: return dp_cli_option_error(cmd, "h", opts, argv);
        }
    }
    if (optind != argc - 1) return dp_cli_usage_error(cmd, "expected one PROFILE.json");
    if (!out) return dp_cli_usage_error(cmd, "--out FILE is required");
    {
        const dp_cli_file outs[] = {{"--out", out}, {"--report", report}}, ins[] = {{"PROFILE", argv[optind]}};
        const int rc = dp_cli_files_distinct(cmd, outs, 2, ins, 1);
        if (rc) return rc;
    }
    dp_error err;
    dp_error_clear(&err);
    dp_profile *p = dp_profile_load(argv[optind], &err);
    if (!p) return dp_cli_fail(&err);
    dp_calib *cal = dp_calib_fit(p, &err);
    dp_profile_free(p);
    if (!cal) {
        /* the fit's errors name the device, not the file (a review of the eighteenth session) */
        dp_error_prefix(&err, "%s", argv[optind]);
        return dp_cli_fail(&err);
    }
    printf("%-6s %-12s %5s %5s %12s %14s %14s %8s %8s %8s %s\n", "device", "kind", "n", "terms", "a_s", "b_s_per_flop",
           "c_s_per_byte", "R^2", "rms_rel", "max_rel", "fit");
    json_t *rep = json_object(), *rdev = json_object(), *rrt = json_array();
    int n_failed = 0;
    char why[256];
    for (int d = 0; d < cal->n_devices; d++) {
        const dp_calib_device *dv = &cal->dev[d];
        json_t *jk = json_object();
        for (int k = 0; k <= dv->n_ops; k++) {
            const dp_calib_affine *co = k < dv->n_ops ? &dv->op[k] : &dv->def;
            const dp_calib_fit_info *in = k < dv->n_ops ? &dv->op_info[k] : &dv->def_info;
            const char *name = k < dv->n_ops ? dv->op_kind[k] : "default";
            printf("%-6s %-12s %5d %5s %12.4e %14.4e %14.4e %8.4f %8.4f %8.4f %s\n", dv->name, name, in->n, in->terms,
                   co->a_s, co->b_s_per_flop, co->c_s_per_byte, in->r2, in->rms_rel, in->max_rel,
                   in->robust ? "robust" : "ols");
            const int failed = dp_calib_op_fit_failed(co, in, why, sizeof why);
            if (failed) {
                fprintf(stderr, "doppler calibrate fit: %s: failed fit: device %s, kind %s: %s\n", argv[optind], dv->name,
                        name, why);
                n_failed++;
            }
            json_object_set_new(jk, name, info_json(in, failed, why));
        }
        json_object_set_new(rdev, dv->name, jk);
    }
    printf("\n%-6s %-6s %5s %12s %14s %8s %8s %8s %s\n", "src", "dst", "n", "latency_s", "bandwidth_Bps", "R^2",
           "rms_rel", "max_rel", "fit");
    for (int r = 0; r < cal->n_routes; r++) {
        const dp_calib_route *rt = &cal->route[r];
        printf("%-6s %-6s %5d %12.4e %14.4e %8.4f %8.4f %8.4f %s\n", rt->src, rt->dst, rt->info.n, rt->latency_s,
               rt->bandwidth_Bps, rt->info.r2, rt->info.rms_rel, rt->info.max_rel, rt->info.robust ? "robust" : "ols");
        const int failed = dp_calib_route_fit_failed(rt, why, sizeof why);
        if (failed) {
            fprintf(stderr, "doppler calibrate fit: %s: failed fit: route %s -> %s: %s\n", argv[optind], rt->src, rt->dst,
                    why);
            n_failed++;
        }
        json_t *j = info_json(&rt->info, failed, why);
        json_object_set_new(j, "src", json_string(rt->src));
        json_object_set_new(j, "dst", json_string(rt->dst));
        json_array_append_new(rrt, j);
    }
    printf("\n%-6s %10s %6s %10s %6s\n", "device", "copy_in", "n", "peer_busy", "n");
    for (int d = 0; d < cal->n_devices; d++) {
        const dp_calib_device *dv = &cal->dev[d];
        printf("%-6s %10.4f %6d %10.4f %6d\n", dv->name, dv->copy_in, dv->n_copy_in, dv->peer_busy, dv->n_peer_busy);
        const int failed = dp_calib_interference_fit_failed(cal, d, why, sizeof why);
        if (failed) {
            fprintf(stderr, "doppler calibrate fit: %s: failed fit: device %s, interference: %s\n", argv[optind], dv->name,
                    why);
            n_failed++;
        }
        json_t *jd = json_object_get(rdev, dv->name);
        json_t *ji = json_pack("{s:f,s:i,s:f,s:i}", "copy_in", dv->copy_in, "n_copy_in", dv->n_copy_in, "peer_busy",
                               dv->peer_busy, "n_peer_busy", dv->n_peer_busy);
        if (ji && failed) json_object_set_new(ji, "failed", json_string(why));
        if (jd) json_object_set_new(jd, "interference", ji);
        else json_decref(ji);
    }
    int any_measured = 0;
    for (int d = 0; d < cal->n_devices; d++) any_measured |= cal->dev[d].n_measured > 0;
    if (any_measured) {
        printf("\n%-6s %-12s %14s %14s %12s %12s\n", "device", "measured op", "flops", "bytes", "seconds", "fit/measured");
        for (int d = 0; d < cal->n_devices; d++) {
            const dp_calib_device *dv = &cal->dev[d];
            for (int k = 0; k < dv->n_measured; k++) {
                const dp_calib_measured *m = &dv->measured[k];
                /* what the sweep's fit alone would say for this op */
                const dp_calib_affine *co = &dv->def;
                for (int j = 0; j < dv->n_ops; j++)
                    if (strcmp(dv->op_kind[j], m->kind) == 0) co = &dv->op[j];
                double fit = co->a_s + co->b_s_per_flop * m->flops + co->c_s_per_byte * m->bytes;
                printf("%-6s %-12s %14.6g %14.6g %12.4e %12.3f\n", dv->name, m->kind, m->flops, m->bytes, m->seconds,
                       m->seconds > 0 ? fit / m->seconds : 0.0);
            }
        }
    }
    json_object_set_new(rep, "devices", rdev);
    json_object_set_new(rep, "routes", rrt);
    json_object_set_new(rep, "failed_fits", json_integer(n_failed));
    int status = 0;
    if (report && dp_json_dump_atomic(rep, report, JSON_INDENT(2) | JSON_REAL_PRECISION(6), &err) != DP_OK)
        status = dp_cli_fail(&err);
    else if (n_failed && !keep_failed) {
        fprintf(stderr, "doppler calibrate fit: %s: %d failed fit%s: %s not written (profile more sizes or repeats, or "
                        "--keep-failed to write it anyway)\n", argv[optind], n_failed, n_failed > 1 ? "s" : "", out);
        status = 1;
    } else if (dp_calib_save(cal, out, &err) != DP_OK)
        status = dp_cli_fail(&err);
    else if (n_failed)
        fprintf(stderr, "doppler calibrate fit: %s written with %d failed fit%s (--keep-failed)\n", out, n_failed,
                n_failed > 1 ? "s" : "");
    json_decref(rep);
    dp_calib_free(cal);
    return status;
}

int cmd_calibrate(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        calibrate_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? DP_EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "profile") == 0) return calibrate_profile(argc - 1, argv + 1);
    if (strcmp(argv[1], "fit") == 0) return calibrate_fit(argc - 1, argv + 1);
    return dp_cli_usage_error("calibrate", "unknown subcommand '%s' (profile or fit)", argv[1]);
}
