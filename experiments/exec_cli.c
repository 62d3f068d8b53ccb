/* exec_cli.c: helpers of the commands that run the real executor. */
#include "exec_cli.h"
#include "dp_alloc.h"
#include "dp_exec_backend.h"
#include "dp_place.h"

#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int dp_cli_parse_target_flops(const char *cmd, const char *arg, double *out)
{
    double v;
    if (dp_cli_parse_double(arg, &v) != 0 || !(v > 0 && v <= DP_EXEC_MAX_FLOPS))
        return dp_cli_usage_error(cmd, "--target-flops: expected a number of FLOPs in (0, %g], got '%s'", DP_EXEC_MAX_FLOPS, arg);
    *out = v;
    return 0;
}

int dp_cli_exec_size_option(const char *cmd, int *given, int which)
{
    *given |= which;
    if (*given == 3)
        return dp_cli_usage_error(cmd, "--scale and --target-flops both size the graph as executed: give one (--scale "
                                  "S scales every dimension, --target-flops F picks the scale giving F FLOPs)");
    return 0;
}

void dp_cli_machine_name(char *buf, size_t cap)
{
    char host[128] = "unknown host", model[256] = "unknown CPU";
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown host");
    host[sizeof host - 1] = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) != 0) continue;
            char *c = strchr(line, ':');
            if (!c) continue;
            c++;
            while (*c == ' ' || *c == '\t') c++;
            c[strcspn(c, "\n")] = 0;
            snprintf(model, sizeof model, "%s", c);
            break;
        }
        fclose(f);
    }
    /* the cores this process may run on (taskset, cpusets): under taskset -c 0 a 2-core host
     * said "2 cores" while the workers shared one (a review of the eighteenth session) */
    const int allowed = dp_exec_cpu_count();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > allowed) snprintf(buf, cap, "%s: %s, %d of %ld cores allowed", host, model, allowed, online);
    else snprintf(buf, cap, "%s: %s, %d cores", host, model, allowed);
}

void dp_cli_warn_backend_topology(const char *backend, const dp_topology *t)
{
    if (!t || strcmp(backend ? backend : "cpu", "cpu") != 0) return;
    for (int d = 0; d < t->n_devices; d++)
        if (t->dev[d].kind == DP_TOPOLOGY_NODE_GPU) {
            fprintf(stderr, "doppler: warning: topology %s has GPU devices (%s) but the executor's backend is the CPU: "
                    "measured times are CPU cores', while the topology (and what is simulated on it) is GPUs' (on CPU "
                    "cores, --topology cpu-2core or a topology of CPU devices)\n", t->name, t->dev[d].name);
            return;
        }
    /* the CPU executor runs one op at a time on each device and copies into it one transfer at a
     * time (one compute and one copy worker a device): a topology with other counts simulates
     * another machine than the one measured, unsaid (a walkthrough) */
    for (int d = 0; d < t->n_devices; d++)
        if (t->dev[d].streams != 1 || t->dev[d].copy_engines != 1) {
            char ce[32];
            if (t->dev[d].copy_engines > 0) snprintf(ce, sizeof ce, "%d", t->dev[d].copy_engines);
            else snprintf(ce, sizeof ce, "unlimited");
            fprintf(stderr, "doppler: warning: topology %s gives device %s streams %d and copy_engines %s, but the CPU "
                    "executor runs one op and copies in one transfer at a time on each device: what is measured and what "
                    "is simulated differ (\"streams\": 1 and \"copy_engines\": 1, as data/topologies/cpu-2core.json)\n",
                    t->name, t->dev[d].name, t->dev[d].streams, ce);
            return;
        }
}

void dp_cli_warn_nice(int requested, int applied, int set_errno)
{
    if (!set_errno) return;
    fprintf(stderr, "doppler: warning: --nice %d: not applied (%s); the workers run at nice %d\n", requested,
            strerror(set_errno), applied);
}

int dp_cli_real_scale_check(const dp_graph *g, const char *path, double scale, dp_error *err)
{
    if (g->cost_kind != DP_GRAPH_COST_TIME || !(scale > 0)) return DP_OK;
    return dp_error_set(err, DP_EINVAL, "%s: the graph gives durations, not FLOPs: --scale (a fraction of a graph's FLOPs) "
                        "does not apply; --target-flops sets the FLOPs its kernels run in all", path);
}

void dp_cli_exec_size(const dp_graph *g, double scale, double target_flops, dp_exec_options *o)
{
    if (!(target_flops > 0)) target_flops = 2e10;
    if (g->cost_kind == DP_GRAPH_COST_TIME) o->flops_per_unit = dp_exec_auto_scale(g, target_flops);
    else o->scale = scale > 0 ? scale : dp_exec_auto_scale(g, target_flops);
}

dp_graph *dp_cli_exec_graph(const dp_graph *g, const char *path, double scale, double target_flops, dp_error *err)
{
    if (dp_cli_real_scale_check(g, path, scale, err) != DP_OK) return NULL;
    dp_exec_options xo;
    dp_exec_options_init(&xo);
    dp_cli_exec_size(g, scale, target_flops, &xo);
    return dp_exec_plan_graph(g, &xo, err);
}

int dp_cli_real_open(dp_cli_real *r, const dp_graph *g, dp_machine *m, const dp_exec_options *xo, double scale,
                     double target_flops, int repeats, dp_error *err)
{
    memset(r, 0, sizeof *r);
    if (!m->topology && dp_machine_set(m, "topology", "cpu-2core", err) != DP_OK) return DP_EINVAL;
    int rc = dp_machine_load(m, err);
    if (rc != DP_OK) return rc;
    dp_exec_options o = *xo;
    if ((rc = dp_cli_real_scale_check(g, g->source ? g->source : g->name, scale, err)) != DP_OK) return rc;
    dp_cli_exec_size(g, scale, target_flops, &o);
    r->xo = o;
    r->x = dp_exec_alloc(g, m->topo->n_devices, &o, err);
    if (!r->x) return err ? err->code : DP_EINVAL;
    r->xg = dp_exec_graph(r->x);
    int nice_errno = 0;
    const int nice_now = dp_exec_nice(r->x, &nice_errno);
    dp_cli_warn_nice(o.nice, nice_now, nice_errno);
    dp_cli_warn_backend_topology(dp_exec_backend_name(r->x), m->topo);
    r->costs = dp_machine_costs(m, r->xg, err);
    if (!r->costs) {
        dp_cli_real_close(r);
        return err ? err->code : DP_EINVAL;
    }
    r->ctx.x = r->x;
    r->ctx.warmup = 1;
    r->ctx.repeats = repeats > 0 ? repeats : 3;
    r->oracle.name = "real";
    r->oracle.cost = dp_exec_oracle_cost;
    r->oracle.ctx = &r->ctx;
    return DP_OK;
}

int dp_cli_real_reference(dp_cli_real *r, const dp_graph *g, const char *method, dp_error *err)
{
    if (!dp_place_find(method)) return dp_error_set(err, DP_EINVAL, "reference placement: unknown method '%s'", method);
    const dp_exec_options o = r->xo;   /* the same kernels as r->x */
    int *a = dp_alloc_malloc((size_t)(r->xg->n_ops > 0 ? r->xg->n_ops : 1) * sizeof(int));
    if (!a) return dp_error_set(err, DP_ENOMEM, "out of memory");
    dp_place_options po;
    dp_place_options_init(&po);
    int rc = dp_place(method, r->xg, r->costs, &po, a, NULL, NULL, err);
    if (rc == DP_OK && !(r->ref_x = dp_exec_alloc(g, dp_exec_n_devices(r->x), &o, err))) rc = err ? err->code : DP_ENOMEM;
    if (rc == DP_OK) rc = dp_exec_prepare(r->ref_x, a, err);
    dp_exec_result res;
    if (rc == DP_OK) rc = dp_exec_run(r->ref_x, &res, err);   /* warm-up: first touch */
    free(a);
    if (rc != DP_OK) {
        dp_exec_free(r->ref_x);
        r->ref_x = NULL;
        return rc;
    }
    r->ctx.ref_x = r->ref_x;
    r->ctx.ref_level = 0;
    return DP_OK;
}

void dp_cli_real_close(dp_cli_real *r)
{
    dp_exec_free(r->ref_x);
    dp_cost_free(r->costs);
    dp_exec_free(r->x);
    memset(r, 0, sizeof *r);
}
