/* run.c: the single dispatch point of experiment runs (see run.h). */
#include "run.h"
#include "cli.h"
#include "dp_gen.h"
#include "dp_place.h"
#include "dp_sim.h"
#include "sweep.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int readable(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, R_OK) == 0;
}

/* Try base/ups.../rel for 0..4 levels of "..": the shared/ and data/ folders sit at fixed places
 * relative to the source tree, and configs live two levels down in it. */
static int try_up(const char *base, const char *rel, char *buf, size_t cap)
{
    char ups[32] = "";
    for (int up = 0; up <= 4; up++) {
        snprintf(buf, cap, "%s/%s%s", base, ups, rel);
        if (readable(buf)) return 1;
        strcat(ups, "../");
    }
    return 0;
}

const char *dp_run_resolve_path(const char *spec, const char *config_dir, char *buf, size_t cap, dp_error *err)
{
    const char *cd = config_dir && *config_dir ? config_dir : ".";
    if (strncmp(spec, "shared:", 7) == 0) {
        const char *rel = spec + 7;
        const char *env = getenv("DOPPLER_SHARED_DATA");
        if (env && *env) {
            snprintf(buf, cap, "%s/%s", env, rel);
            if (readable(buf)) return buf;
        }
        char sub[PATH_MAX];
        snprintf(sub, sizeof sub, "shared/data/%s", rel);
        if (try_up(".", sub, buf, cap) || try_up(cd, sub, buf, cap)) return buf;
        dp_error_set(err, DP_EIO, "%s: not found under $DOPPLER_SHARED_DATA (%s) nor in a shared/data folder above the working folder or %s",
                     spec, env && *env ? env : "unset", cd);
        return NULL;
    }
    if (strncmp(spec, "data:", 5) == 0) {
        char sub[PATH_MAX];
        snprintf(sub, sizeof sub, "data/%s", spec + 5);
        const char *p = dp_cli_data_path(sub);
        if (readable(p)) { snprintf(buf, cap, "%s", p); return buf; }
        if (try_up(".", sub, buf, cap) || try_up(cd, sub, buf, cap)) return buf;
        dp_error_set(err, DP_EIO, "%s: not found in the bundled data ($DOPPLER_DATA, %s, ./data)", spec, DP_DATADIR);
        return NULL;
    }
    snprintf(buf, cap, "%s", spec);
    if (spec[0] == '/' || readable(buf)) {
        if (readable(buf)) return buf;
        dp_error_set(err, DP_EIO, "%s: %s", spec, strerror(errno ? errno : ENOENT));
        return NULL;
    }
    snprintf(buf, cap, "%s/%s", cd, spec);
    if (readable(buf)) return buf;
    dp_error_set(err, DP_EIO, "%s: not found in the working folder nor in %s", spec, cd);
    return NULL;
}

static int mkdir_p(const char *path, dp_error *err)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return dp_error_set(err, DP_EINVAL, "%s: path too long", path);
    for (char *p = tmp + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return dp_error_set(err, DP_EIO, "%s: %s", tmp, strerror(errno));
            *p = c;
            if (!c) break;
        }
    }
    return DP_OK;
}

/* "gen:MODEL?k=v&k=v": a graph from the workload generators (models/dp_gen.h). */
static dp_graph *generate(const char *spec, dp_error *err)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", spec + 4) >= (int)sizeof buf) {
        dp_error_set(err, DP_EINVAL, "%s: too long", spec);
        return NULL;
    }
    const char *keys[32], *vals[32];
    int n = 0;
    char *q = strchr(buf, '?');
    if (q) {
        *q++ = '\0';
        while (q && *q) {
            char *amp = strchr(q, '&');
            if (amp) *amp = '\0';
            char *eq = strchr(q, '=');
            if (!eq || eq == q || n == 32) {
                dp_error_set(err, DP_EINVAL, "%s: generator parameters are NAME=VALUE joined by &", spec);
                return NULL;
            }
            *eq = '\0';
            keys[n] = q;
            vals[n] = eq + 1;
            n++;
            q = amp ? amp + 1 : NULL;
        }
    }
    dp_graph *g = dp_gen_by_name(buf, n, keys, vals, err);
    if (!g) dp_error_prefix(err, "%s", spec);
    return g;
}

/* The machine and graph parameters every method shares. */
static const char *const machine_params[] = {"graph", "format", "devices", "peak_flops", "bandwidth", "latency", "rep", NULL};

static int in_list(const char *k, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(k, list[i]) == 0) return 1;
    return 0;
}

int dp_run_load(const json_t *params, const dp_run_context *ctx, dp_graph **g_out, dp_costs **c_out, dp_error *err)
{
    const char *spec, *format;
    long devices;
    dp_cli_machine m;
    dp_cli_machine_init(&m);
    if (dp_sweep_param_str(params, "graph", NULL, &spec, err) != DP_OK) return DP_EINVAL;
    if (!spec) return dp_error_set(err, DP_EINVAL, "parameter \"graph\" is required");
    if (dp_sweep_param_str(params, "format", NULL, &format, err) != DP_OK ||
        dp_sweep_param_int(params, "devices", m.n_devices, &devices, err) != DP_OK ||
        dp_sweep_param_num(params, "peak_flops", m.peak_flops, &m.peak_flops, err) != DP_OK ||
        dp_sweep_param_num(params, "bandwidth", m.bandwidth_Bps, &m.bandwidth_Bps, err) != DP_OK ||
        dp_sweep_param_num(params, "latency", m.latency_s, &m.latency_s, err) != DP_OK)
        return DP_EINVAL;
    if (devices < 1 || devices > 4096) return dp_error_set(err, DP_EINVAL, "parameter \"devices\": %ld outside 1..4096", devices);
    if (!(m.peak_flops > 0) || !(m.bandwidth_Bps > 0) || !(m.latency_s >= 0))
        return dp_error_set(err, DP_EINVAL, "parameters peak_flops and bandwidth must be positive, latency non-negative");
    m.n_devices = (int)devices;
    char path[PATH_MAX];
    dp_graph *g;
    if (strncmp(spec, "gen:", 4) == 0) g = generate(spec, err);
    else {
        if (!dp_run_resolve_path(spec, ctx ? ctx->config_dir : NULL, path, sizeof path, err)) return DP_EIO;
        g = dp_graph_read(path, format, err);
    }
    if (!g) return err ? err->code : DP_EINVAL;
    dp_costs *c = dp_cli_machine_costs(&m, g, err);
    if (!c) { dp_graph_free(g); return err ? err->code : DP_EINVAL; }
    *g_out = g;
    *c_out = c;
    return DP_OK;
}

static void fmt_time_utc(char *buf, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A method of the placement registry: place, simulate, time it. */
static int run_place(const json_t *params, const dp_run_context *ctx, const char *method, dp_result *out, dp_error *err)
{
    static const char *const own[] = {"method", "seed", "timing_repeats", "device", "budget", "samples", "config", NULL};
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)params, k, v) {
        if (!in_list(k, machine_params) && !in_list(k, own))
            return dp_error_set(err, DP_EINVAL, "parameter \"%s\" is not used by method %s", k, method);
    }
    dp_place_options o;
    dp_place_options_init(&o);
    long seed, reps, device, budget, samples;
    if (dp_sweep_param_int(params, "seed", 1, &seed, err) != DP_OK ||
        dp_sweep_param_int(params, "timing_repeats", 1, &reps, err) != DP_OK ||
        dp_sweep_param_int(params, "device", 0, &device, err) != DP_OK ||
        dp_sweep_param_int(params, "budget", 0, &budget, err) != DP_OK ||
        dp_sweep_param_int(params, "samples", 1, &samples, err) != DP_OK)
        return DP_EINVAL;
    if (seed < 0) return dp_error_set(err, DP_EINVAL, "parameter \"seed\" must be non-negative");
    if (reps < 1 || reps > 100000000) return dp_error_set(err, DP_EINVAL, "parameter \"timing_repeats\" must be 1..1e8");
    if (device < 0 || budget < 0 || samples < 1) return dp_error_set(err, DP_EINVAL, "parameters device, budget must be >= 0 and samples >= 1");
    const char *config = NULL;
    char config_path[PATH_MAX];
    if (dp_sweep_param_str(params, "config", NULL, &config, err) != DP_OK) return DP_EINVAL;
    if (config) {
        if (!dp_run_resolve_path(config, ctx ? ctx->config_dir : NULL, config_path, sizeof config_path, err)) return DP_EIO;
        o.config = config_path;
    }
    o.seed = (uint64_t)seed;
    o.device = (int)device;
    o.budget = budget;
    o.samples = (int)samples;

    dp_graph *g = NULL;
    dp_costs *c = NULL;
    dp_sim *sim = NULL;
    int *assign = NULL;
    int rc = dp_run_load(params, ctx, &g, &c, err);
    if (rc != DP_OK) return rc;
    if (o.device >= c->n_devices) { rc = dp_error_set(err, DP_EINVAL, "parameter \"device\": %d, but only %d devices", o.device, c->n_devices); goto done; }
    assign = dp_malloc_n((size_t)g->n_ops, sizeof(int));
    sim = dp_sim_alloc(g, c, err);
    if (!assign || !sim) { rc = assign ? (err ? err->code : DP_ENOMEM) : dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
    dp_sim_result res;
    double first = NAN;
    double t0 = now_s();
    for (long r = 0; r < reps; r++) {
        rc = dp_place(method, g, c, &o, assign, NULL, NULL, err);
        if (rc == DP_OK) rc = dp_sim_run(sim, assign, &res, err);
        if (rc != DP_OK) goto done;
        if (r == 0) first = res.makespan;
        else if (res.makespan != first) {
            rc = dp_error_set(err, DP_EINVAL, "method %s gave makespan %.17g on repeat %ld but %.17g on the first: timing repeats need a deterministic method", method, res.makespan, r, first);
            goto done;
        }
    }
    double secs = (now_s() - t0) / (double)reps;
    const double sc = g->time_scale;
    out->makespan = first / sc;
    out->seconds = secs;
    out->episodes = 0;
    dp_result_set(&out->units, g->time_unit);
    json_t *m = json_object();
    json_object_set_new(m, "lower_bound", json_real(dp_costs_lower_bound(g, c) / sc));
    json_object_set_new(m, "transfers", json_integer(res.n_transfers));
    json_object_set_new(m, "transfer_volume", json_real(res.transfer_volume));
    double util = 0;
    for (int d = 0; d < res.n_devices; d++) util += dp_sim_utilisation(&res, d);
    json_object_set_new(m, "utilisation", json_real(res.n_devices ? util / res.n_devices : 0));
    json_object_set_new(m, "ops", json_integer(g->n_ops));
    char *mt = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(m);
    dp_result_set(&out->metrics, mt ? mt : "{}");
    free(mt);
    if (ctx && ctx->run_dir) {
        char path[PATH_MAX], rel[PATH_MAX];
        if ((rc = mkdir_p(ctx->run_dir, err)) != DP_OK) goto done;
        snprintf(path, sizeof path, "%s/assignment.json", ctx->run_dir);
        snprintf(rel, sizeof rel, "%s/assignment.json", ctx->run_dir_rel ? ctx->run_dir_rel : ctx->run_dir);
        if ((rc = dp_cli_write_assignment(path, g, method, c->n_devices, assign, out->makespan, err)) != DP_OK) goto done;
        dp_result_set(&out->assignment, rel);
    }
done:
    dp_sim_free(sim);
    free(assign);
    dp_costs_free(c);
    dp_graph_free(g);
    return rc;
}

/* Methods that are not plain placements (they train, or measure on a real executor) register
 * here; everything else goes to the placement registry (policy/dp_place.c). */
typedef int (*run_fn)(const json_t *params, const dp_run_context *ctx, const char *method, dp_result *out,
                      dp_error *err);
static const struct {
    const char *name;
    run_fn fn;
} runners[] = {
    {NULL, NULL},
};

int dp_run_execute(const json_t *params, const dp_run_context *ctx, dp_result *out, dp_error *err)
{
    dp_error local;
    if (!err) err = &local;
    dp_error_clear(err);
    const char *method = NULL;
    int rc = dp_sweep_param_str(params, "method", NULL, &method, err);
    if (rc == DP_OK && !method) rc = dp_error_set(err, DP_EINVAL, "parameter \"method\" is required");
    if (rc == DP_OK) {
        run_fn fn = NULL;
        for (int i = 0; runners[i].name; i++)
            if (strcmp(runners[i].name, method) == 0) fn = runners[i].fn;
        if (fn) rc = fn(params, ctx, method, out, err);
        else if (dp_place_find(method)) rc = run_place(params, ctx, method, out, err);
        else {
            int dummy = 0;
            rc = dp_place(method, NULL, NULL, NULL, &dummy, NULL, NULL, err);
            if (rc == DP_OK) rc = DP_EINVAL;
        }
    }
    char when[32];
    fmt_time_utc(when, sizeof when);
    dp_result_set(&out->finished, when);
    if (rc == DP_OK) {
        dp_result_set(&out->status, "ok");
        dp_result_set(&out->error, "");
    } else {
        dp_result_set(&out->status, "failed");
        dp_result_set(&out->error, err->msg);
        out->makespan = NAN;
    }
    return rc;
}
