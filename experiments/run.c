/* run.c: the single dispatch point of experiment runs (see run.h). */
#include "run.h"
#include "cli.h"
#include "dp_file.h"
#include "dp_gen.h"
#include "dp_hetero.h"
#include "dp_place.h"
#include "dp_json.h"
#include "dp_list.h"
#include "dp_oracle.h"
#include "dp_sim.h"
#include "dp_train.h"
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

/* 0 when p is a regular file this process can read, else why not: stat's or access's errno,
 * EISDIR for a folder, EINVAL for another kind of file (a device, a FIFO). */
static int why_unreadable(const char *p)
{
    struct stat st;
    if (stat(p, &st) != 0) return errno ? errno : ENOENT;
    if (S_ISDIR(st.st_mode)) return EISDIR;
    if (!S_ISREG(st.st_mode)) return EINVAL;
    return access(p, R_OK) == 0 ? 0 : errno ? errno : EACCES;
}

static int readable(const char *p)
{
    return why_unreadable(p) == 0;
}

/* The error for a path that is there but cannot be read as a file (why: why_unreadable's); a
 * folder said "No such file or directory" (errno was stat's success, not the cause: a review) */
static const char *unreadable_error(const char *path, int why, dp_error *err)
{
    if (why == EISDIR) dp_error_set(err, DP_EINVAL, "%s: is a directory, not a file", path);
    else if (why == EINVAL) dp_error_set(err, DP_EINVAL, "%s: not a regular file", path);
    else dp_error_set(err, why == ENOENT ? DP_EIO : DP_EINVAL, "%s: %s", path, strerror(why));
    return NULL;
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
    const int why_here = why_unreadable(buf);
    if (why_here == 0) return buf;
    if (spec[0] == '/') return unreadable_error(spec, why_here, err);
    snprintf(buf, cap, "%s/%s", cd, spec);
    const int why_there = why_unreadable(buf);
    if (why_there == 0) return buf;
    /* there but not a readable file: say why rather than "not found" */
    if (why_here != ENOENT) return unreadable_error(spec, why_here, err);
    if (why_there != ENOENT) return unreadable_error(buf, why_there, err);
    dp_error_set(err, DP_EIO, "%s: not found in the working folder nor in %s", spec, cd);
    return NULL;
}

int dp_run_mkdir(const char *path, dp_error *err)
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
    return dp_gen_spec(spec, err);
}

int dp_run_is_machine_param(const char *name)
{
    if (strcmp(name, "graph") == 0 || strcmp(name, "format") == 0 || strcmp(name, "rep") == 0) return 1;
    /* the machine's keys by their JSON names (not the command-line spellings) */
    int k = dp_machine_key_index(name);
    return k >= 0 && strcmp(dp_machine_keys()[k].key, name) == 0;
}

/* k is in list (NULL-ended); an entry ending in '*' admits every k with that prefix */
static int in_list(const char *k, const char *const *list)
{
    for (int i = 0; list && list[i]; i++) {
        size_t n = strlen(list[i]);
        if (n && list[i][n - 1] == '*' ? strncmp(k, list[i], n - 1) == 0 : strcmp(k, list[i]) == 0) return 1;
    }
    return 0;
}

/* A placement's parameters (dp_place_options, checked against the method's row by
 * check_place_params); a training run's are its row's sweep_params (policy/dp_place.c) */
static const char *const place_params[] = {"method", "seed", "timing_repeats", "device", "budget", "samples", "config",
                                           "refine", "refine_budget", "append_only", "ties", "checkpoint", "proposals", NULL};
/* parameters that are integers wherever they are taken */
static const char *const integer_params[] = {"seed", "timing_repeats", "device", "budget", "samples", "refine_budget",
                                             "append_only", "episodes_il", "episodes_sim", "episodes", "bench_reps", NULL};

int dp_run_check_params(const json_t *params, const char *method, const char *const *own, dp_error *err)
{
    const char *k;
    json_t *v;
    const int cfg_keys = in_list("cfg__", own);
    json_object_foreach((json_t *)params, k, v) {
        if (!dp_run_is_machine_param(k) && !in_list(k, own))
            return dp_error_set(err, DP_EINVAL, "parameter \"%s\" is not used by method %s%s", k, method,
                                cfg_keys ? " (training config keys are cfg__KEY__SUBKEY)" : "");
    }
    return DP_OK;
}

/* A placement run's parameters against the method table (dp_place_check_options): an option the
 * method would not read is an error naming the parameter, as doppler place refuses it */
static int check_place_params(const json_t *params, const char *method, dp_error *err)
{
    dp_place_options o;
    dp_place_options_init(&o);
    long x;
    const char *str = NULL;
    if (dp_sweep_param_int(params, "device", 0, &x, err) != DP_OK) return DP_EINVAL;
    o.device = (int)x;
    if (dp_sweep_param_int(params, "budget", 0, &x, err) != DP_OK) return DP_EINVAL;
    o.budget = x;
    if (dp_sweep_param_int(params, "samples", 0, &x, err) != DP_OK) return DP_EINVAL;
    o.samples = (int)x;
    if (dp_sweep_param_int(params, "append_only", 0, &x, err) != DP_OK) return DP_EINVAL;
    o.list_append_only = (int)x;
    if (dp_sweep_param_str(params, "ties", NULL, &str, err) != DP_OK) return DP_EINVAL;
    o.list_ties = str && strcmp(str, "id") != 0;
    if (dp_sweep_param_int(params, "refine_budget", 0, &x, err) != DP_OK) return DP_EINVAL;
    o.refine_budget = x;
    if (dp_sweep_param_str(params, "refine", NULL, &o.refine, err) != DP_OK ||
        dp_sweep_param_str(params, "config", NULL, &o.config, err) != DP_OK ||
        dp_sweep_param_str(params, "checkpoint", NULL, &o.checkpoint, err) != DP_OK ||
        dp_sweep_param_str(params, "proposals", NULL, &o.proposals, err) != DP_OK)
        return DP_EINVAL;
    if (dp_place_check_options(method, &o, err) == DP_OK) return DP_OK;
    /* the message in the sweep's spelling: parameters, not options */
    char msg[sizeof err->msg];
    size_t k = 0;
    for (const char *p = err->msg; *p && k + 1 < sizeof msg; p++) {
        if (strncmp(p, "--refine-budget", 15) == 0 && k + 13 < sizeof msg) { memcpy(msg + k, "refine_budget", 13); k += 13; p += 14; continue; }
        if (strncmp(p, "--append-only/--ties", 20) == 0 && k + 16 < sizeof msg) { memcpy(msg + k, "append_only/ties", 16); k += 16; p += 19; continue; }
        if (p[0] == '-' && p[1] == '-') { p++; continue; }
        msg[k++] = *p;
    }
    msg[k] = '\0';
    return dp_error_set(err, DP_EINVAL, "parameter %s", msg);
}

/* The sweep parameters of method m, from its row of the method table */
static const char *const *method_params(const dp_place_method *m)
{
    return m->sweep_run == DP_PLACE_SWEEP_PLACE ? place_params : m->sweep_params;
}

/* A placement read from a file (a user's own policy's, written by it; doc/sweep-format.md "Your
 * own placements"): method "assignment" or "assignment:NAME" (NAME labels the column in the
 * reports), parameter "assignment" its file, in which {graph}, {graph_file}, {devices} and {seed}
 * stand for the graph's name, its parameter made a file name, the device count and the run's
 * seed. */
static int is_file_method(const char *method)
{
    return strcmp(method, "assignment") == 0 || (strncmp(method, "assignment:", 11) == 0 && method[11] != '\0');
}
static const char *const file_params[] = {"method", "assignment", "seed", NULL};

int dp_run_check(const json_t *params, dp_error *err)
{
    const char *method = NULL;
    if (dp_sweep_param_str(params, "method", NULL, &method, err) != DP_OK) return DP_EINVAL;
    if (!method) return dp_error_set(err, DP_EINVAL, "parameter \"method\" is required");
    const int from_file = is_file_method(method);
    const dp_place_method *pm = from_file ? NULL : dp_place_find(method);
    const char *const *own = pm ? method_params(pm) : from_file ? file_params : NULL;
    if (from_file) {
        const char *file = NULL;
        if (dp_sweep_param_str(params, "assignment", NULL, &file, err) != DP_OK) return DP_EINVAL;
        if (!file || !*file)
            return dp_error_set(err, DP_EINVAL, "method %s: parameter \"assignment\" (the placement's file) is required", method);
        for (const char *q = strchr(file, '{'); q; q = strchr(q + 1, '{'))
            if (strncmp(q, "{graph}", 7) != 0 && strncmp(q, "{graph_file}", 12) != 0 && strncmp(q, "{devices}", 9) != 0 &&
                strncmp(q, "{seed}", 6) != 0)
                return dp_error_set(err, DP_EINVAL, "parameter \"assignment\" \"%s\": only {graph}, {graph_file}, {devices} "
                                    "and {seed} are replaced", file);
    } else if (!pm) {
        /* the registry's own message: "unknown method "x" (known: ...)" */
        int dummy = 0;
        int rc = dp_place(method, NULL, NULL, NULL, &dummy, NULL, NULL, err);
        return rc == DP_OK ? dp_error_set(err, DP_EINVAL, "unknown method \"%s\"", method) : rc;
    }
    if (dp_run_check_params(params, method, own, err) != DP_OK) return DP_EINVAL;
    if (!from_file && json_object_get(params, "assignment"))
        return dp_error_set(err, DP_EINVAL, "parameter \"assignment\" is not used by method %s (a placement read from a file "
                            "is method \"assignment\" or \"assignment:NAME\")", method);
    /* every integer parameter is a count, an index or a seed: a negative one failed only when its
     * run ran, with a message that did not say which */
    for (int i = 0; integer_params[i]; i++) {
        json_t *v = json_object_get(params, integer_params[i]);
        if (json_is_integer(v) && json_integer_value(v) < 0)
            return dp_error_set(err, DP_EINVAL, "parameter \"%s\" = %lld: must be a non-negative integer", integer_params[i],
                                (long long)json_integer_value(v));
    }
    if (own == place_params && check_place_params(params, method, err) != DP_OK) return DP_EINVAL;
    const char *graph = NULL;
    if (dp_sweep_param_str(params, "graph", NULL, &graph, err) != DP_OK) return DP_EINVAL;
    if (!graph) return dp_error_set(err, DP_EINVAL, "parameter \"graph\" is required");
    /* a gen: graph's model, parameter names and values, read as the run will read them but not
     * generated: a misspelt one failed every run naming it, after the results files were made */
    if (strncmp(graph, "gen:", 4) == 0 && dp_gen_spec_check(graph, err) != DP_OK) {
        dp_error_prefix(err, "parameter \"graph\"");
        return DP_EINVAL;
    }
    for (int i = 0; integer_params[i]; i++) {
        long x;
        if (dp_sweep_param_int(params, integer_params[i], 0, &x, err) != DP_OK) return DP_EINVAL;
    }
    /* the machine's values (files are looked for before the runs, dp_sweep_check_inputs) */
    dp_machine m;
    dp_machine_init(&m);
    int rc = DP_OK;
    for (const dp_schema_key *mk = dp_machine_keys(); mk->key && rc == DP_OK; mk++) {
        json_t *val = json_object_get(params, mk->key);
        if (!val) continue;
        /* topology, calibration: their names only (the files are read by dp_sweep_check_inputs),
         * so that a calibration without a topology is refused here */
        if ((rc = dp_machine_set_json(&m, mk->key, val, err)) != DP_OK) dp_error_prefix(err, "parameter");
    }
    /* a uniform machine's key beside a topology, a simulator key where it cannot apply: refused
     * here, before the runs, not when the run comes (reviews) */
    const json_t *jt = json_object_get(params, "topology");
    if (rc == DP_OK)
        rc = dp_machine_check_keys(&m, json_is_string(jt) && json_string_length(jt) > 0 ? json_string_value(jt) : NULL, err);
    dp_machine_free(&m);
    return rc;
}

void dp_run_machine_free(dp_run_machine *rm)
{
    if (!rm) return;
    dp_problem_free(rm->p);
    dp_cost_free(rm->own_costs);
    dp_graph_free(rm->g);
    dp_machine_free(&rm->m);
    memset(rm, 0, sizeof *rm);
}

int dp_run_machine_load(const json_t *params, const dp_run_context *ctx, dp_run_machine *rm, dp_error *err)
{
    memset(rm, 0, sizeof *rm);
    dp_machine_init(&rm->m);
    const char *spec, *format;
    const char *cd = ctx ? ctx->config_dir : NULL;
    if (dp_sweep_param_str(params, "graph", NULL, &spec, err) != DP_OK) return DP_EINVAL;
    if (!spec) return dp_error_set(err, DP_EINVAL, "parameter \"graph\" is required");
    if (dp_sweep_param_str(params, "format", NULL, &format, err) != DP_OK) return DP_EINVAL;
    for (const dp_schema_key *k = dp_machine_keys(); k->key; k++) {
        json_t *v = json_object_get(params, k->key);
        if (!v) continue;
        int rc;
        const int is_file = k->type == DP_SCHEMA_NAME; /* topology, calibration */
        const char *text = json_string_value(v);
        if (is_file && text && (strchr(text, '/') || strchr(text, ':') || strstr(text, ".json"))) {
            /* a file, resolved like graphs (a topology without '/' or ".json" is a bundled name) */
            char path[PATH_MAX];
            if (!dp_run_resolve_path(text, cd, path, sizeof path, err)) { dp_run_machine_free(rm); return DP_EIO; }
            rc = dp_machine_set(&rm->m, k->key, path, err);
        } else {
            rc = dp_machine_set_json(&rm->m, k->key, v, err);
        }
        if (rc != DP_OK) {
            dp_error_prefix(err, "parameter");
            dp_run_machine_free(rm);
            return DP_EINVAL;
        }
    }
    char path[PATH_MAX];
    if (strncmp(spec, "gen:", 4) == 0) rm->g = generate(spec, err);
    else {
        if (!dp_run_resolve_path(spec, cd, path, sizeof path, err)) { dp_run_machine_free(rm); return DP_EIO; }
        if (dp_run_file_hash(path, &rm->graph_hash, err) != DP_OK) { dp_run_machine_free(rm); return DP_EIO; }
        if (dp_hetero_format(path, format)) {
            /* a heterogeneous example (HEFT's .in, the CSV triple): its own processors, as place
             * reads it (every run of a sweep failed on it: a review) */
            if (dp_machine_hetero_read(&rm->m, path, format, &rm->g, &rm->own_costs, err) != DP_OK) {
                dp_run_machine_free(rm);
                return err && err->code ? err->code : DP_EINVAL;
            }
        } else {
            rm->g = dp_graph_read(path, format, err);
        }
    }
    if (!rm->g) { dp_run_machine_free(rm); return err && err->code ? err->code : DP_EINVAL; }
    rm->p = rm->own_costs ? dp_problem_alloc_with_costs(rm->g, rm->own_costs, &rm->m, err) : dp_problem_alloc(rm->g, &rm->m, err);
    if (rm->p && !rm->own_costs) {
        dp_cli_warn_machine(&rm->m, rm->g);
    }
    if (!rm->p) {
        int rc = err && err->code ? err->code : DP_EINVAL;
        dp_run_machine_free(rm);
        return rc;
    }
    return DP_OK;
}

int dp_run_machine_simulate(dp_run_machine *rm, const int *assignment, const double *priority,
                            dp_run_schedule *out, dp_error *err)
{
    return dp_engine_run(rm->p->engine, assignment, priority, out, err);
}

static void fmt_time_utc(char *buf, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int dp_run_file_hash(const char *path, uint64_t *h, dp_error *err)
{
    size_t len = 0;
    char *text = dp_file_read(path, &len, err);
    if (!text) return err && err->code ? err->code : DP_EIO;
    *h = dp_graph_hash_bytes(14695981039346656037ULL, text, len);
    free(text);
    return DP_OK;
}

int dp_run_put_metrics(dp_result *out, const dp_run_machine *rm, const dp_run_schedule *res, json_t *extra)
{
    const double sc = rm->g->time_scale;
    json_t *m = extra ? extra : json_object();
    json_object_set_new(m, "lower_bound", dp_json_number(dp_cost_lower_bound(rm->g, rm->p->costs) / sc));
    json_object_set_new(m, "transfers", json_integer(res->n_transfers));
    json_object_set_new(m, "transfer_volume", dp_json_number(res->transfer_volume));
    json_object_set_new(m, "transfer_volume_units", json_string(dp_cli_volume_unit(rm->g, &rm->m, "file units (comm)")));
    double util = 0, peak = 0;
    for (int d = 0; d < res->n_devices; d++) {
        util += res->makespan > 0 ? res->busy[d] / res->makespan : 0;
        if (res->mem_peak && res->mem_peak[d] > peak) peak = res->mem_peak[d];
    }
    json_object_set_new(m, "utilisation", dp_json_number(res->n_devices ? util / res->n_devices : 0));
    if (res->mem_peak) {
        json_object_set_new(m, "peak_memory", dp_json_number(peak));
        /* what a method minimises under memory_policy penalty, and the excess it comes from: a
         * row held the plain makespan alone, which ranked etf first where the penalised figure
         * ranks cpop first (a review) */
        json_object_set_new(m, "memory_excess", dp_json_number(res->mem_excess));
        json_object_set_new(m, "penalised_makespan", dp_json_number(res->cost / sc));
    }
    json_object_set_new(m, "ops", json_integer(rm->g->n_ops));
    if (rm->graph_hash) {
        char h[24];
        snprintf(h, sizeof h, "%016llx", (unsigned long long)rm->graph_hash);
        json_object_set_new(m, "graph_hash", json_string(h));
    }
    char *mt = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(m);
    out->devices = rm->p->costs->n_devices;
    int rc = dp_result_set(&out->metrics, mt ? mt : "{}");
    free(mt);
    return rc;
}

int dp_run_write_assignment(const dp_run_context *ctx, const dp_run_machine *rm, const char *method,
                            const int *assign, const double *priority, double makespan_printed, dp_result *out,
                            dp_error *err)
{
    if (!ctx || !ctx->run_dir) return DP_OK;
    char path[PATH_MAX + 32], rel[PATH_MAX + 32];
    int rc = dp_run_mkdir(ctx->run_dir, err);
    if (rc != DP_OK) return rc;
    snprintf(path, sizeof path, "%s/assignment.json", ctx->run_dir);
    snprintf(rel, sizeof rel, "%s/assignment.json", ctx->run_dir_rel ? ctx->run_dir_rel : ctx->run_dir);
    if ((rc = dp_cli_write_assignment(path, rm->g, method, rm->p->costs->n_devices, assign, priority, makespan_printed, err)) != DP_OK)
        return rc;
    return dp_result_set(&out->assignment, rel);
}

/* A placement run's result from its schedule (res, of assign with the priorities prio or NULL):
 * makespan, seconds, the metrics every simulated run reports with the method's simulations (and
 * the file read, file: a placement from a file), and the placement written with the priorities
 * it was simulated with where they decide it (a priority queue) */
static int placed_result(const dp_run_context *ctx, dp_run_machine *rm, const char *method, const int *assign,
                         const double *prio, const dp_run_schedule *res, double seconds, long sims, const char *file,
                         dp_result *out, dp_error *err)
{
    out->seconds = seconds;
    out->makespan = res->makespan / rm->g->time_scale;
    out->episodes = 0;
    dp_result_set(&out->units, rm->g->time_unit);
    json_t *extra = json_object();
    json_object_set_new(extra, "simulations", json_integer(sims)); /* spent by the method */
    if (file) json_object_set_new(extra, "assignment_file", json_string(file)); /* the file read, resolved (a review) */
    dp_run_put_metrics(out, rm, res, extra);
    return dp_run_write_assignment(ctx, rm, method, assign, prio && dp_engine_priority_queue(rm->p->engine) ? prio : NULL,
                                   out->makespan, out, err);
}

/* A method of the placement registry: place, simulate, time it. */
static int run_place(const json_t *params, const dp_run_context *ctx, const char *method, dp_result *out, dp_error *err)
{
    if (dp_run_check_params(params, method, place_params, err) != DP_OK) return DP_EINVAL;
    if (check_place_params(params, method, err) != DP_OK) return DP_EINVAL;
    dp_place_options o;
    dp_place_options_init(&o);
    long seed, reps, device, budget, samples, append_only;
    if (dp_sweep_param_int(params, "seed", DP_RESULT_SEED_DEFAULT, &seed, err) != DP_OK ||
        dp_sweep_param_int(params, "timing_repeats", 1, &reps, err) != DP_OK ||
        dp_sweep_param_int(params, "device", 0, &device, err) != DP_OK ||
        dp_sweep_param_int(params, "budget", 0, &budget, err) != DP_OK ||
        dp_sweep_param_int(params, "samples", 0, &samples, err) != DP_OK ||
        dp_sweep_param_int(params, "append_only", 0, &append_only, err) != DP_OK)
        return DP_EINVAL;
    if (append_only != 0 && append_only != 1) return dp_error_set(err, DP_EINVAL, "parameter \"append_only\" must be 0 or 1");
    const char *ties = NULL;
    if (dp_sweep_param_str(params, "ties", "id", &ties, err) != DP_OK) return DP_EINVAL;
    if (strcmp(ties, "id") == 0) o.list_ties = DP_LIST_TIES_ID;
    else if (strcmp(ties, "heap") == 0) o.list_ties = DP_LIST_TIES_HEAP;
    else return dp_error_set(err, DP_EINVAL, "parameter \"ties\" must be \"id\" or \"heap\", got \"%s\"", ties);
    o.list_append_only = (int)append_only;
    if (seed < 0) return dp_error_set(err, DP_EINVAL, "parameter \"seed\" must be non-negative");
    if (reps < 1 || reps > 100000000) return dp_error_set(err, DP_EINVAL, "parameter \"timing_repeats\" must be 1..1e8");
    /* budget given as 0 ran the default 20,000 simulations (place refuses --budget 0; a review) */
    if (budget == 0 && json_object_get(params, "budget"))
        return dp_error_set(err, DP_EINVAL, "parameter \"budget\" = 0: must be >= 1 (absent: the method's default)");
    /* samples: absent (0) the method's own (greedy, or one random placement); given, at least 1 */
    if (device < 0 || budget < 0 || samples < 0 || (samples == 0 && json_object_get(params, "samples")))
        return dp_error_set(err, DP_EINVAL, "parameter \"%s\" = %ld: must be %s", device < 0 ? "device" : budget < 0 ? "budget" : "samples",
                            device < 0 ? device : budget < 0 ? budget : samples, samples < 1 && device >= 0 && budget >= 0 ? ">= 1" : ">= 0");
    const char *config = NULL;
    char config_path[PATH_MAX];
    if (dp_sweep_param_str(params, "config", NULL, &config, err) != DP_OK) return DP_EINVAL;
    long refine_budget;
    if (dp_sweep_param_str(params, "refine", NULL, &o.refine, err) != DP_OK ||
        dp_sweep_param_int(params, "refine_budget", 0, &refine_budget, err) != DP_OK)
        return DP_EINVAL;
    if (o.refine && strcmp(o.refine, "anneal") != 0 && strcmp(o.refine, "local") != 0 && strcmp(o.refine, "improve") != 0)
        return dp_error_set(err, DP_EINVAL, "parameter \"refine\": anneal, local or improve, got \"%s\"", o.refine);
    if (refine_budget < 0) return dp_error_set(err, DP_EINVAL, "parameter \"refine_budget\" must be >= 0");
    o.refine_budget = refine_budget;
    if (config) {
        if (!dp_run_resolve_path(config, ctx ? ctx->config_dir : NULL, config_path, sizeof config_path, err)) return DP_EIO;
        o.config = config_path;
    }
    /* improve's checkpoint and annealing's learned proposals (policy/dp_improve.h), relative to
     * the config's folder like "config" */
    const char *ckpt = NULL, *props = NULL;
    char ckpt_path[PATH_MAX], props_path[PATH_MAX];
    if (dp_sweep_param_str(params, "checkpoint", NULL, &ckpt, err) != DP_OK ||
        dp_sweep_param_str(params, "proposals", NULL, &props, err) != DP_OK)
        return DP_EINVAL;
    if (ckpt) {
        if (!dp_run_resolve_path(ckpt, ctx ? ctx->config_dir : NULL, ckpt_path, sizeof ckpt_path, err)) return DP_EIO;
        o.checkpoint = ckpt_path;
    }
    if (props) {
        if (!dp_run_resolve_path(props, ctx ? ctx->config_dir : NULL, props_path, sizeof props_path, err)) return DP_EIO;
        o.proposals = props_path;
    }
    o.seed = (uint64_t)seed;
    o.device = (int)device;
    o.budget = budget;
    o.samples = (int)samples;

    dp_run_machine rm;
    int *assign = NULL;
    double *prio = NULL;
    int rc = dp_run_machine_load(params, ctx, &rm, err);
    if (rc != DP_OK) return rc;
    o.oracle = &rm.p->oracle;
    o.machine = &rm.m;
    if (o.device >= rm.p->costs->n_devices) { rc = dp_error_set(err, DP_EINVAL, "parameter \"device\": %d, but only %d devices", o.device, rm.p->costs->n_devices); goto done; }
    assign = dp_alloc_malloc_n((size_t)rm.g->n_ops, sizeof(int));
    prio = dp_alloc_malloc_n((size_t)rm.g->n_ops, sizeof(double));
    if (!assign || !prio) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); goto done; }
    dp_run_schedule res;
    double first = NAN;
    double t0 = now_s();
    long msims = 0;
    int has_prio = 0;
    for (long r = 0; r < reps; r++) {
        has_prio = 0;
        const long s0 = dp_engine_simulations(rm.p->engine);
        rc = dp_place(method, rm.g, rm.p->costs, &o, assign, prio, &has_prio, err);
        if (r == 0) msims = dp_engine_simulations(rm.p->engine) - s0;
        if (rc == DP_OK) rc = dp_run_machine_simulate(&rm, assign, has_prio ? prio : NULL, &res, err);
        if (rc != DP_OK) goto done;
        if (r == 0) first = res.makespan;
        else if (res.makespan != first) {
            rc = dp_error_set(err, DP_EINVAL, "method %s gave makespan %.17g on repeat %ld but %.17g on the first: timing repeats need a deterministic method", method, res.makespan, r, first);
            goto done;
        }
    }
    rc = placed_result(ctx, &rm, method, assign, has_prio ? prio : NULL, &res, (now_s() - t0) / (double)reps, msims, NULL,
                       out, err);
done:
    free(assign);
    free(prio);
    dp_run_machine_free(&rm);
    return rc;
}

/* ---- DOPPLER (policy/dp_train.h): Stage I imitation, then Stage II RL against the run's
 * simulator; makespans of the greedy policy after each stage ---- */

/* "cfg__a__b": key path a.b of the training config JSON (policy/dp_train.h), e.g.
 * cfg__stages__sim__lr or cfg__network__hidden; builds {"a": {"b": value}} into root. */
static int put_cfg_path(json_t *root, const char *name, json_t *value)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", name + 5);
    json_t *o = root;
    char *p = buf;
    for (;;) {
        char *sep = strstr(p, "__");
        if (!sep) return json_object_set(o, p, value);
        *sep = '\0';
        json_t *child = json_object_get(o, p);
        if (!json_is_object(child)) {
            child = json_object();
            json_object_set_new(o, p, child);
        }
        o = child;
        p = sep + 2;
    }
}

/* What Stage I left, kept in the run folder so that a resumed run still reports it. */
static int save_stage1(const char *run_dir, double makespan, double seconds, long episodes, const double agree[2],
                       double last, double best_sample, long sims)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/stage1.json", run_dir);
    /* (the last three were lost when a killed run resumed in Stage II: a review) */
    json_t *o = json_pack("{s:f,s:f,s:I,s:f,s:f,s:f,s:f,s:I}", "makespan", makespan, "seconds", seconds, "episodes",
                          (json_int_t)episodes, "sel_agree", agree[0], "plc_agree", agree[1], "makespan_last", last,
                          "best_sample", best_sample, "simulations", (json_int_t)sims);
    int rc = dp_json_dump_atomic(o, path, JSON_COMPACT | JSON_REAL_PRECISION(17), NULL);
    json_decref(o);
    return rc;
}

/* A training run's files in its run folder (trajectory.h5, checkpoint.h5: traj and ckpt, PATH_MAX
 * + 32 each, left empty without a run folder) set in io; a run killed with its sweep continues
 * from its last checkpoint (*resumed_stage its stage, else -1). The one place both training
 * runners (DOPPLER's and the learned baselines') set this up. */
static int train_files(const dp_run_context *ctx, dp_train *tr, dp_train_io *io, char *traj, char *ckpt,
                       int *resumed_stage, dp_error *err)
{
    memset(io, 0, sizeof *io);
    *resumed_stage = -1;
    if (!ctx || !ctx->run_dir) return DP_OK;
    int rc = dp_run_mkdir(ctx->run_dir, err);
    if (rc != DP_OK) return rc;
    snprintf(traj, PATH_MAX + 32, "%s/trajectory.h5", ctx->run_dir);
    snprintf(ckpt, PATH_MAX + 32, "%s/checkpoint.h5", ctx->run_dir);
    io->trajectory = traj;
    io->checkpoint = ckpt;
    if (access(ckpt, R_OK) == 0 && access(traj, R_OK) == 0) {
        if ((rc = dp_train_resume(tr, ckpt, traj, err)) != DP_OK) {
            /* the run fails so at every retry until its folder goes: say so (a review) */
            if (err) {
                const size_t L = strlen(err->msg);
                snprintf(err->msg + L, sizeof err->msg - L, " (resuming the run from its folder %.*s: delete the folder to "
                         "run it afresh)", (int)(sizeof err->msg > L + 100 ? sizeof err->msg - L - 100 : 0), ctx->run_dir);
            }
            return rc;
        }
        *resumed_stage = dp_train_current_stage(tr);
    }
    return DP_OK;
}

/* The result row's trajectory and checkpoint columns (relative to the results file) of a run
 * whose train_files gave traj. */
static void train_files_result(const dp_run_context *ctx, const char *traj, dp_result *out)
{
    if (!traj[0]) return;
    char rel[PATH_MAX + 32];
    snprintf(rel, sizeof rel, "%s/trajectory.h5", ctx->run_dir_rel ? ctx->run_dir_rel : ctx->run_dir);
    dp_result_set(&out->trajectory, rel);
    snprintf(rel, sizeof rel, "%s/checkpoint.h5", ctx->run_dir_rel ? ctx->run_dir_rel : ctx->run_dir);
    dp_result_set(&out->checkpoint, rel);
}

/* A training run's result: its placement assign simulated on the run's machine (sched), bench > 0
 * timings of inference and training (metrics inference_s and training_s, seconds per episode),
 * and out's makespan (printed unit), episodes, seconds since t_start and unit. */
static int trained_result(dp_train *tr, dp_run_machine *rm, const int *assign, long bench, long episodes, double t_start,
                          json_t *metrics, dp_run_schedule *sched, dp_result *out, dp_error *err)
{
    int rc = dp_run_machine_simulate(rm, assign, NULL, sched, err);
    if (rc != DP_OK) return rc;
    if (bench > 0) {
        double inf_s, train_s;
        if ((rc = dp_train_bench(tr, (int)bench, &inf_s, &train_s, err)) != DP_OK) return rc;
        json_object_set_new(metrics, "inference_s", dp_json_number(inf_s));
        json_object_set_new(metrics, "training_s", dp_json_number(train_s));
    }
    out->makespan = sched->makespan / rm->g->time_scale;
    out->episodes = episodes;
    out->seconds = now_s() - t_start;
    dp_result_set(&out->units, rm->g->time_unit);
    return DP_OK;
}

/* The config of a training runner for agent (dp_agent.h): the one doppler train uses, from the
 * run's train_config (tcfg, resolved beside the sweep's config; NULL: none) as
 * dp_train_config_resolve reads it. DP_EIO when the file is not found, DP_EINVAL when it is bad. */
static int trained_config(const dp_run_context *ctx, const char *tcfg, int agent, dp_train_config *cfg, dp_error *err)
{
    char path[PATH_MAX];
    if (tcfg && !dp_run_resolve_path(tcfg, ctx ? ctx->config_dir : NULL, path, sizeof path, err)) return DP_EIO;
    if (dp_train_config_resolve(cfg, agent, tcfg ? path : NULL, err) != DP_OK) return DP_EINVAL;
    return DP_OK;
}

/* The cfg__ parameters of params over cfg (only: that one alone; NULL: every one), as one JSON
 * object (put_cfg_path) read by dp_train_config_from_json_text. */
static int put_cfg_params(const json_t *params, const char *only, dp_train_config *cfg, dp_error *err)
{
    const char *k;
    json_t *v;
    json_t *over = json_object();
    if (!over) return dp_error_set(err, DP_ENOMEM, "out of memory");
    json_object_foreach((json_t *)params, k, v)
        if (strncmp(k, "cfg__", 5) == 0 && (!only || strcmp(k, only) == 0)) put_cfg_path(over, k, v);
    int rc = DP_OK;
    if (json_object_size(over)) {
        char *t = json_dumps(over, JSON_COMPACT | JSON_REAL_PRECISION(17));
        rc = t ? dp_train_config_from_json_text(cfg, t, err) : dp_error_set(err, DP_ENOMEM, "out of memory");
        free(t);
    }
    json_decref(over);
    return rc;
}

/* A run's parameter train_config (into *tcfg when not NULL) read as doppler train reads it for
 * agent (trained_config); errors name the parameter. What doppler_config and agent_config share. */
static int param_trained_config(const json_t *params, const dp_run_context *ctx, int agent, dp_train_config *cfg,
                                const char **tcfg, dp_error *err)
{
    const char *t = NULL;
    if (dp_sweep_param_str(params, "train_config", NULL, &t, err) != DP_OK) return DP_EINVAL;
    if (tcfg) *tcfg = t;
    const int rc = trained_config(ctx, t, agent, cfg, err);
    if (rc != DP_OK) dp_error_prefix(err, "parameter \"train_config\"");
    return rc;
}

/* DOPPLER's training config of a run: its train_config as doppler train reads it
 * (trained_config), then its cfg__ parameters over it. The one construction of it, for the run
 * (run_doppler) and for its check before a sweep runs anything (dp_run_check_config). Errors name
 * the parameter: "train_config", or the cfg__ parameter whose key or value is refused (the
 * config's message names the key, "stages.sim.lrr", not the parameter: the first refused alone
 * over the train_config is named, or all of them where only their combination is refused). */
static int doppler_config(const json_t *params, const dp_run_context *ctx, dp_train_config *cfg, dp_error *err)
{
    int rc = param_trained_config(params, ctx, DP_AGENT_DOPPLER, cfg, NULL, err);
    if (rc != DP_OK) return rc;
    const dp_train_config base = *cfg;
    if ((rc = put_cfg_params(params, NULL, cfg, err)) == DP_OK || rc == DP_ENOMEM) return rc;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)params, k, v) {
        if (strncmp(k, "cfg__", 5) != 0) continue;
        dp_train_config one = base;
        dp_error e;
        dp_error_clear(&e);
        if (put_cfg_params(params, k, &one, &e) == DP_OK) continue;
        if (err) *err = e;
        dp_error_prefix(err, "parameter \"%s\"", k);
        return DP_EINVAL;
    }
    dp_error_prefix(err, "the cfg__ parameters together");
    return DP_EINVAL;
}

/* A learned baseline's training config (agent: dp_agent.h): its train_config as doppler train
 * reads it (trained_config), refusing what a run that trains Stage II alone for parameter episodes
 * from parameter seed cannot honour (dp_train_config_stage2_ignored; a review: it was read and
 * ignored), as place refuses it. The one construction of it, for the run (run_baseline) and for
 * its check before a sweep runs anything (dp_run_check_config). */
static int agent_config(const json_t *params, const dp_run_context *ctx, const char *method, int agent, dp_train_config *cfg,
                        dp_error *err)
{
    const char *tcfg = NULL;
    int rc = param_trained_config(params, ctx, agent, cfg, &tcfg, err);
    if (rc != DP_OK) return rc;
    const char *ignored = dp_train_config_stage2_ignored(cfg);
    if (ignored)
        return dp_error_set(err, DP_EINVAL, "parameter \"train_config\" %s: the key %s does not apply to a %s run (%s)", tcfg,
                            ignored, method,
                            strcmp(ignored, "seed") == 0                  ? "give parameter seed"
                            : strcmp(ignored, "stages.sim.episodes") == 0 ? "give parameter episodes"
                                                                          : "it trains Stage II alone on the whole graph");
    return DP_OK;
}

/* What both training runners (DOPPLER's and the learned baselines') hold: the run's machine and
 * problem, the trainer on it, the placement, the metrics, the run's files and when it began. */
typedef struct trained_run {
    dp_run_machine rm;
    dp_train *tr;
    int *assign;        /* (n_ops) the placement */
    json_t *metrics;
    char traj[PATH_MAX + 32], ckpt[PATH_MAX + 32];
    dp_train_io io;
    int resumed_stage;  /* train_files */
    double t_start;
} trained_run;

/* The run's machine and problem (dp_run_machine_load), a trainer of cfg on it, room for the
 * placement, and the run's files (train_files; a killed run resumed). trained_run_free frees t
 * whatever this returns. */
static int trained_run_open(trained_run *t, const json_t *params, const dp_run_context *ctx, const dp_train_config *cfg,
                            dp_error *err)
{
    memset(t, 0, sizeof *t);
    t->resumed_stage = -1;
    int rc = dp_run_machine_load(params, ctx, &t->rm, err);
    if (rc != DP_OK) return rc;
    t->assign = dp_alloc_malloc_n((size_t)t->rm.g->n_ops, sizeof(int));
    t->metrics = json_object();
    t->t_start = now_s();
    if (!t->assign) return dp_error_set(err, DP_ENOMEM, "out of memory");
    t->tr = dp_train_alloc(t->rm.g, t->rm.p->costs, cfg, &t->rm.p->oracle, err);
    if (!t->tr) return err->code ? err->code : DP_ENOMEM;
    rc = train_files(ctx, t->tr, &t->io, t->traj, t->ckpt, &t->resumed_stage, err);
    /* a resumed run's seconds count its earlier processes' training too, up to the checkpoint
     * (they counted from the restart: about half an uninterrupted run's; a review) */
    if (rc == DP_OK && t->resumed_stage >= 0) t->t_start -= dp_train_seconds(t->tr);
    return rc;
}

/* The run's result after trained_result: its metrics into out, with files the trajectory and
 * checkpoint columns (train_files_result), and the placement written (dp_run_write_assignment). */
static int trained_run_close(trained_run *t, const dp_run_context *ctx, const char *method, const dp_run_schedule *sched,
                             int files, dp_result *out, dp_error *err)
{
    dp_run_put_metrics(out, &t->rm, sched, t->metrics);
    t->metrics = NULL;
    if (files) train_files_result(ctx, t->traj, out);
    return dp_run_write_assignment(ctx, &t->rm, method, t->assign, NULL, out->makespan, out, err);
}

static void trained_run_free(trained_run *t)
{
    json_decref(t->metrics);
    dp_train_free(t->tr);
    free(t->assign);
    dp_run_machine_free(&t->rm);
}

static int run_doppler(const json_t *params, const dp_run_context *ctx, const char *method, dp_result *out, dp_error *err)
{
    if (dp_run_check_params(params, method, method_params(dp_place_find(method)), err) != DP_OK) return DP_EINVAL;
    long seed, ep_il, ep_sim, samples, bench;
    dp_train_config cfg;
    if (dp_sweep_param_int(params, "seed", DP_RESULT_SEED_DEFAULT, &seed, err) != DP_OK ||
        dp_sweep_param_int(params, "samples", 0, &samples, err) != DP_OK ||
        dp_sweep_param_int(params, "bench_reps", 0, &bench, err) != DP_OK)
        return DP_EINVAL;
    /* the config doppler train would use (this project's DOPPLER unless "defaults": "authors"),
     * with the run's cfg__ keys */
    int rc0 = doppler_config(params, ctx, &cfg, err);
    if (rc0 != DP_OK) return rc0;
    if (dp_sweep_param_int(params, "episodes_il", cfg.stage[DP_TRAIN_STAGE_IL].episodes, &ep_il, err) != DP_OK ||
        dp_sweep_param_int(params, "episodes_sim", cfg.stage[DP_TRAIN_STAGE_SIM].episodes, &ep_sim, err) != DP_OK)
        return DP_EINVAL;
    /* model selection (dp_train_use_best): place with the parameters whose greedy placement
     * was best at the evaluations of the stage, not only the last ones */
    json_t *jsel = json_object_get(params, "model_selection");
    if (jsel && !json_is_boolean(jsel)) return dp_error_set(err, DP_EINVAL, "parameter \"model_selection\": true or false");
    int select = !jsel || json_is_true(jsel);
    /* ablations (paper table 4): what the trainer can express today */
    const char *variant = NULL;
    if (dp_sweep_param_str(params, "variant", "dual", &variant, err) != DP_OK) return DP_EINVAL;
    if (strcmp(variant, "no_stage1") == 0) ep_il = 0;
    else if (strcmp(variant, "no_stage2") == 0) ep_sim = 0;
    else if (strcmp(variant, "plc_only") == 0) cfg.sel_topological = 1; /* single policy, fixed order */
    else if (strcmp(variant, "no_cp_embeddings") == 0) cfg.arch.cp_embeddings = 0;
    else if (strcmp(variant, "dual") != 0)
        return dp_error_set(err, DP_EINVAL, "variant \"%s\": dual, no_stage1, no_stage2, plc_only or no_cp_embeddings", variant);
    if (seed < 0 || ep_il < 0 || ep_sim < 0 || samples < 0 || bench < 0)
        return dp_error_set(err, DP_EINVAL, "parameters seed, episodes_il, episodes_sim, samples, bench_reps must be non-negative");
    cfg.seed = (uint64_t)seed;
    cfg.stage[DP_TRAIN_STAGE_IL].episodes = ep_il;
    cfg.stage[DP_TRAIN_STAGE_SIM].episodes = ep_sim;

    trained_run t;
    int rc = trained_run_open(&t, params, ctx, &cfg, err);
    if (rc != DP_OK) goto done;
    const double sc = t.rm.g->time_scale;
    const int resumed_stage = t.resumed_stage;
    double agree[2] = {NAN, NAN}, ms = NAN;
    double s1_ms = NAN, s1_sec = 0;
    dp_run_schedule sched;
    dp_train_pipeline_result pr;
    const int il = DP_TRAIN_STAGE_IL, sim = DP_TRAIN_STAGE_SIM;
    if (resumed_stage == DP_TRAIN_STAGE_SIM && ctx && ctx->run_dir) {
        /* Stage I finished before the kill: its figures are in the run folder */
        char p1[PATH_MAX + 32];
        snprintf(p1, sizeof p1, "%s/stage1.json", ctx->run_dir);
        json_t *s1 = dp_json_load(p1, NULL);
        s1_ms = json_number_value(json_object_get(s1, "makespan"));
        s1_sec = json_number_value(json_object_get(s1, "seconds"));
        agree[0] = json_number_value(json_object_get(s1, "sel_agree"));
        agree[1] = json_number_value(json_object_get(s1, "plc_agree"));
        if (json_is_number(json_object_get(s1, "makespan_last"))) {
            json_object_set_new(t.metrics, "makespan_stage1_last", dp_json_number(json_number_value(json_object_get(s1, "makespan_last"))));
            json_object_set_new(t.metrics, "best_sample_stage1", dp_json_number(json_number_value(json_object_get(s1, "best_sample"))));
            json_object_set_new(t.metrics, "simulations_stage1", json_integer(json_integer_value(json_object_get(s1, "simulations"))));
        }
        json_decref(s1);
    } else if (ep_il > 0) {
        /* the one pipeline (dp_train_pipeline), a stage at a time so that a killed run keeps
         * Stage I's figures: the same calls as both stages in one go */
        if ((rc = dp_train_pipeline(t.tr, &il, &ep_il, 1, select, (int)samples, (uint64_t)seed, &t.io, &pr, t.assign, err)) != DP_OK)
            goto done;
        const dp_train_pipeline_stage *r = &pr.stage[0];
        s1_ms = r->selected_greedy / sc;
        s1_sec = r->seconds;
        agree[0] = r->agree[0];
        agree[1] = r->agree[1];
        json_object_set_new(t.metrics, "makespan_stage1_last", dp_json_number(r->final_greedy / sc));
        json_object_set_new(t.metrics, "best_sample_stage1", dp_json_number(r->best_sample / sc));
        json_object_set_new(t.metrics, "simulations_stage1", json_integer(r->sims));
        if (ctx && ctx->run_dir)
            save_stage1(ctx->run_dir, s1_ms, s1_sec, ep_il, agree, r->final_greedy / sc, r->best_sample / sc, r->sims);
    }
    double s2_ms = NAN, s2_sec = 0;
    if (ep_sim > 0) {
        if ((rc = dp_train_pipeline(t.tr, &sim, &ep_sim, 1, select, (int)samples, (uint64_t)seed, &t.io, &pr, t.assign, err)) != DP_OK)
            goto done;
        const dp_train_pipeline_stage *r = &pr.stage[0];
        s2_ms = r->selected_greedy / sc;
        s2_sec = r->seconds;
        json_object_set_new(t.metrics, "makespan_stage2_last", dp_json_number(r->final_greedy / sc));
        json_object_set_new(t.metrics, "best_sample_stage2", dp_json_number(r->best_sample / sc));
        json_object_set_new(t.metrics, "simulations_stage2", json_integer(r->sims));
        if (ep_il <= 0 && resumed_stage < 0) {
            agree[0] = r->agree[0];
            agree[1] = r->agree[1];
        }
    } else if (ep_il <= 0 && resumed_stage < 0) {
        if ((rc = dp_train_place(t.tr, (int)samples, (uint64_t)seed, t.assign, &ms, agree, err)) != DP_OK) goto done;
    }
    /* the final placement (the last stage's, with the selected parameters under model
     * selection), simulated for the run's metrics */
    json_object_set_new(t.metrics, "simulations", json_integer(dp_train_simulations(t.tr)));
    if ((rc = trained_result(t.tr, &t.rm, t.assign, bench, ep_il + ep_sim, t.t_start, t.metrics, &sched, out, err)) != DP_OK) goto done;
    if (!isnan(s1_ms)) json_object_set_new(t.metrics, "makespan_stage1", dp_json_number(s1_ms));
    if (!isnan(s2_ms)) json_object_set_new(t.metrics, "makespan_stage2", dp_json_number(s2_ms));
    json_object_set_new(t.metrics, "seconds_stage1", dp_json_number(s1_sec));
    json_object_set_new(t.metrics, "seconds_stage2", dp_json_number(s2_sec));
    json_object_set_new(t.metrics, "episodes_stage1", json_integer(ep_il));
    json_object_set_new(t.metrics, "episodes_stage2", json_integer(ep_sim));
    if (!isnan(agree[0])) json_object_set_new(t.metrics, "sel_agree", dp_json_number(agree[0]));
    if (!isnan(agree[1])) json_object_set_new(t.metrics, "plc_agree", dp_json_number(agree[1]));
    if (resumed_stage >= 0) json_object_set_new(t.metrics, "resumed_in_stage", json_integer(resumed_stage));
    rc = trained_run_close(&t, ctx, method, &sched, 1, out, err);
done:
    trained_run_free(&t);
    return rc;
}

/* ---- Placeto and GDP (policy/dp_agent.h, trained by the one trainer of dp_train.h): REINFORCE against the run's simulator for
 * `episodes` episodes (the table's DOPPLER budget, Stage I + Stage II), model selection as
 * DOPPLER's, then the greedy (or best of `samples`) placement ---- */
static int run_baseline(const json_t *params, const dp_run_context *ctx, const char *method, dp_result *out, dp_error *err)
{
    if (dp_run_check_params(params, method, method_params(dp_place_find(method)), err) != DP_OK) return DP_EINVAL;
    int m;
    if (dp_agent_parse(method, &m) != DP_OK || m == DP_AGENT_DOPPLER)
        return dp_error_set(err, DP_EINVAL, "method %s: not placeto or gdp", method);
    long seed, episodes, samples, bench;
    dp_train_config cfg;
    if (dp_sweep_param_int(params, "seed", DP_RESULT_SEED_DEFAULT, &seed, err) != DP_OK ||
        dp_sweep_param_int(params, "episodes", 200, &episodes, err) != DP_OK ||
        dp_sweep_param_int(params, "samples", 0, &samples, err) != DP_OK ||
        dp_sweep_param_int(params, "bench_reps", 0, &bench, err) != DP_OK)
        return DP_EINVAL;
    if (seed < 0 || episodes < 0 || samples < 0 || bench < 0)
        return dp_error_set(err, DP_EINVAL, "parameters seed, episodes, samples, bench_reps must be non-negative");
    if (samples == 0 && json_object_get(params, "samples")) /* as a placement run's (run_place) */
        return dp_error_set(err, DP_EINVAL, "parameter \"samples\" = 0: must be >= 1 (absent: the greedy placement)");
    /* this run trains Stage II alone, for parameter episodes from parameter seed */
    int rc0 = agent_config(params, ctx, method, m, &cfg, err);
    if (rc0 != DP_OK) return rc0;
    cfg.seed = (uint64_t)seed;
    /* the episodes it trains, in the config its checkpoint and trajectory record (they said the
     * default 2000, and a resume of that checkpoint trained on to 2000: a review) */
    cfg.stage[DP_TRAIN_STAGE_SIM].episodes = episodes;

    trained_run t;
    int rc = trained_run_open(&t, params, ctx, &cfg, err);
    if (rc != DP_OK) goto done;
    const double sc = t.rm.g->time_scale;
    double ms, train_sec = 0;
    dp_run_schedule sched;
    if (episodes > 0) {
        /* Stage II through the one pipeline, with model selection */
        const int sim = DP_TRAIN_STAGE_SIM;
        dp_train_pipeline_result pr;
        if ((rc = dp_train_pipeline(t.tr, &sim, &episodes, 1, 1, (int)samples, (uint64_t)seed, &t.io, &pr, t.assign, err)) != DP_OK)
            goto done;
        train_sec = pr.stage[0].seconds;
        json_object_set_new(t.metrics, "makespan_last", dp_json_number(pr.stage[0].final_greedy / sc));
        json_object_set_new(t.metrics, "best_sample", dp_json_number(pr.stage[0].best_sample / sc));
        json_object_set_new(t.metrics, "simulations", json_integer(pr.stage[0].sims));
    } else if ((rc = dp_train_place(t.tr, (int)samples, (uint64_t)seed, t.assign, &ms, NULL, err)) != DP_OK) {
        goto done;
    }
    if ((rc = trained_result(t.tr, &t.rm, t.assign, bench, episodes, t.t_start, t.metrics, &sched, out, err)) != DP_OK) goto done;
    json_object_set_new(t.metrics, "seconds_training", dp_json_number(train_sec));
    rc = trained_run_close(&t, ctx, method, &sched, episodes > 0, out, err);
done:
    trained_run_free(&t);
    return rc;
}

/* file's name with {graph}, {graph_file}, {devices} and {seed} replaced ({graph_file}: the graph
 * parameter as written, every character but letters, digits, '.', '-' and '_' made '_': one name
 * per graph file where graphs share a name, as STG's 50/rand0000 and 100/rand0000); DP_EINVAL for
 * another {...} or a name too long */
static int expand_assignment_path(const char *file, const json_t *params, const dp_run_machine *rm, long seed,
                                  char *buf, size_t cap, dp_error *err)
{
    size_t k = 0;
    char gfile[PATH_MAX];
    const char *gp = json_string_value(json_object_get(params, "graph"));
    snprintf(gfile, sizeof gfile, "%s", gp ? gp : "");
    for (char *q = gfile; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '.' || *q == '-' ||
              *q == '_'))
            *q = '_';
    for (const char *p = file; *p;) {
        char val[64];
        const char *sub = NULL;
        size_t skip = 1;
        if (*p == '{') {
            if (strncmp(p, "{graph}", 7) == 0) { sub = rm->g->name; skip = 7; }
            else if (strncmp(p, "{graph_file}", 12) == 0) { sub = gfile; skip = 12; }
            else if (strncmp(p, "{devices}", 9) == 0) { snprintf(val, sizeof val, "%d", rm->p->costs->n_devices); sub = val; skip = 9; }
            else if (strncmp(p, "{seed}", 6) == 0) { snprintf(val, sizeof val, "%ld", seed); sub = val; skip = 6; }
            else return dp_error_set(err, DP_EINVAL, "parameter \"assignment\" \"%s\": only {graph}, {graph_file}, {devices} "
                                     "and {seed} are replaced", file);
        }
        const size_t len = sub ? strlen(sub) : 1;
        if (k + len >= cap) return dp_error_set(err, DP_EINVAL, "parameter \"assignment\" \"%s\": the path is too long", file);
        memcpy(buf + k, sub ? sub : p, len);
        k += len;
        p += skip;
    }
    buf[k] = '\0';
    return DP_OK;
}

/* A placement read from a file (is_file_method): simulated on the run's machine as `doppler
 * simulate --assignment` does, with the same metrics as any method's (simulations 0: what the
 * policy spent to make it is its own). */
static int run_file(const json_t *params, const dp_run_context *ctx, const char *method, dp_result *out, dp_error *err)
{
    if (dp_run_check_params(params, method, file_params, err) != DP_OK) return DP_EINVAL;
    const char *file = NULL;
    long seed;
    if (dp_sweep_param_str(params, "assignment", NULL, &file, err) != DP_OK ||
        dp_sweep_param_int(params, "seed", DP_RESULT_SEED_DEFAULT, &seed, err) != DP_OK)
        return DP_EINVAL;
    if (!file) return dp_error_set(err, DP_EINVAL, "method %s: parameter \"assignment\" is required", method);
    dp_run_machine rm;
    int rc = dp_run_machine_load(params, ctx, &rm, err);
    if (rc != DP_OK) return rc;
    int *assign = NULL, has_prio = 0;
    double *prio = NULL;
    char name[PATH_MAX], path[PATH_MAX];
    if ((rc = expand_assignment_path(file, params, &rm, seed, name, sizeof name, err)) != DP_OK) goto done;
    if (!dp_run_resolve_path(name, ctx ? ctx->config_dir : NULL, path, sizeof path, err)) { rc = DP_EIO; goto done; }
    if (!(assign = dp_alloc_malloc_n((size_t)rm.g->n_ops, sizeof(int))) ||
        !(prio = dp_alloc_malloc_n((size_t)rm.g->n_ops, sizeof(double)))) {
        rc = dp_error_set(err, DP_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = dp_cli_read_assignment(path, rm.g->name, rm.g->n_ops, rm.p->costs->n_devices, assign, prio, &has_prio, err)) != DP_OK)
        goto done;
    const double t0 = now_s();
    dp_run_schedule res;
    if ((rc = dp_run_machine_simulate(&rm, assign, has_prio ? prio : NULL, &res, err)) != DP_OK) goto done;
    rc = placed_result(ctx, &rm, method, assign, has_prio ? prio : NULL, &res, now_s() - t0, 0, path, out, err);
done:
    free(assign);
    free(prio);
    dp_run_machine_free(&rm);
    return rc;
}

/* the parameters dp_run_check_config reads: runs that agree on them build one config */
static const char *const config_params[] = {"method", "config", "train_config", "budget", "cfg__*", NULL};

int dp_run_is_config_param(const char *name)
{
    return in_list(name, config_params);
}

/* A placement run's method config (parameter config, resolved beside the sweep's config; parameter
 * budget over the file's, as run_place gives them to dp_place) read and checked by the method's
 * own reading of it (dp_place_check_config). DP_EIO when the file is not found. */
static int place_config(const json_t *params, const dp_run_context *ctx, const char *method, dp_error *err)
{
    const char *config = NULL;
    long budget;
    if (dp_sweep_param_str(params, "config", NULL, &config, err) != DP_OK ||
        dp_sweep_param_int(params, "budget", 0, &budget, err) != DP_OK)
        return DP_EINVAL;
    if (!config) return DP_OK;
    char path[PATH_MAX];
    if (!dp_run_resolve_path(config, ctx->config_dir, path, sizeof path, err)) return DP_EIO;
    dp_place_options o;
    dp_place_options_init(&o);
    o.config = path;
    o.budget = budget;
    if (dp_place_check_config(method, &o, err) == DP_OK) return DP_OK;
    dp_error_prefix(err, "parameter \"config\"");
    return DP_EINVAL;
}

int dp_run_check_config(const json_t *params, const char *config_dir, dp_error *err)
{
    const dp_run_context ctx = {config_dir && *config_dir ? config_dir : ".", NULL, NULL};
    const char *method = NULL;
    if (dp_sweep_param_str(params, "method", NULL, &method, err) != DP_OK) return DP_EINVAL;
    const dp_place_method *m = method && !is_file_method(method) ? dp_place_find(method) : NULL;
    if (!m) return DP_OK; /* a placement from a file reads no config; an unknown method is dp_run_check's */
    /* a config file that is not there (or not a file) is dp_sweep_check_inputs' to name, with the
     * runs that name it */
    static const char *const files[] = {"config", "train_config", NULL};
    for (int i = 0; files[i]; i++) {
        const char *f = json_string_value(json_object_get(params, files[i]));
        char path[PATH_MAX];
        dp_error e;
        if (f && !dp_run_resolve_path(f, ctx.config_dir, path, sizeof path, &e)) return DP_OK;
    }
    dp_train_config cfg;
    int agent;
    if (m->sweep_run == DP_PLACE_SWEEP_STAGES) return doppler_config(params, &ctx, &cfg, err);
    if (m->sweep_run == DP_PLACE_SWEEP_AGENT) {
        if (dp_agent_parse(method, &agent) != DP_OK) return dp_error_set(err, DP_EINVAL, "method %s: not an agent", method);
        return agent_config(params, &ctx, method, agent, &cfg, err);
    }
    return place_config(params, &ctx, method, err);
}

int dp_run_execute(const json_t *params, const dp_run_context *ctx, dp_result *out, dp_error *err)
{
    dp_error local;
    if (!err) err = &local;
    dp_error_clear(err);
    const char *method = NULL;
    int rc = dp_sweep_param_str(params, "method", NULL, &method, err);
    if (rc == DP_OK && !method) rc = dp_error_set(err, DP_EINVAL, "parameter \"method\" is required");
    if (rc == DP_OK) {
        /* how to run it is the method's row's (policy/dp_place.c: sweep_run) */
        const dp_place_method *m = dp_place_find(method);
        if (is_file_method(method)) rc = run_file(params, ctx, method, out, err);
        else if (m && m->sweep_run == DP_PLACE_SWEEP_STAGES) rc = run_doppler(params, ctx, method, out, err);
        else if (m && m->sweep_run == DP_PLACE_SWEEP_AGENT) rc = run_baseline(params, ctx, method, out, err);
        else if (m) rc = run_place(params, ctx, method, out, err);
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
