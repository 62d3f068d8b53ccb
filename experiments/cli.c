#include "cli.h"
#include "dp_file.h"
#include "dp_json.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dp_cli_fail(const dp_error *err)
{
    fprintf(stderr, "doppler: %s\n", err && err->msg[0] ? err->msg : "error");
    return DP_EXIT_ERROR;
}

int dp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "doppler %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'doppler %s --help'.\n", cmd);
    return DP_EXIT_USAGE;
}

int dp_cli_option_error(const char *cmd, const char *optstring, char *const *argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    int missing = 0;
    if (optopt != 0) {
        if (strncmp(arg, "--", 2) == 0) missing = 1;   /* glibc: optopt 0 for an unknown long option */
        else {
            const char *o = strchr(optstring, optopt);
            missing = o && o[1] == ':';
        }
    }
    if (missing) return dp_cli_usage_error(cmd, "option '%s' needs a value", arg);
    return dp_cli_usage_error(cmd, "unknown option '%s'", arg);
}

int dp_cli_parse_int(const char *s, long lo, long hi, int *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

int dp_cli_parse_double(const char *s, double *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int dp_cli_parse_u64(const char *s, unsigned long long *out)
{
    if (!s || !*s || *s == '-') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

const char *dp_cli_fmt(double x, char *buf, size_t cap)
{
    for (int p = 6; p <= 10; p++) {
        snprintf(buf, cap, "%.*g", p, x);
        if (strtod(buf, NULL) == x) break;
    }
    return buf;
}

int dp_cli_read_assignment(const char *path, int n_ops, int n_devices, int *out, dp_error *err)
{
    size_t size;
    char *text = dp_read_file(path, &size, err);
    if (!text) return err ? err->code : DP_EIO;
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    int rc = DP_OK;
    if (*p == '{') {
        json_error_t je;
        json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
        if (!root) { rc = dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", path, je.line, je.column, je.text); goto done; }
        json_t *a = json_object_get(root, "devices");
        if (!json_is_array(a)) { rc = dp_error_set(err, DP_EINVAL, "%s: field \"devices\" must be an array of device ids", path); json_decref(root); goto done; }
        if ((int)json_array_size(a) != n_ops) {
            rc = dp_error_set(err, DP_EINVAL, "%s: \"devices\" has %zu entries, the graph has %d ops", path, json_array_size(a), n_ops);
            json_decref(root); goto done;
        }
        for (int i = 0; i < n_ops; i++) {
            json_t *x = json_array_get(a, i);
            if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= n_devices) {
                rc = dp_error_set(err, DP_EINVAL, "%s: devices[%d]: must be a device id in 0..%d", path, i, n_devices - 1);
                json_decref(root); goto done;
            }
            out[i] = (int)json_integer_value(x);
        }
        json_decref(root);
    } else {
        int k = 0;
        const char *q = p;
        while (*q) {
            while (*q == ' ' || *q == '\t' || *q == ',' || *q == '\n' || *q == '\r') q++;
            if (!*q) break;
            char *end;
            errno = 0;
            long v = strtol(q, &end, 10);
            if (end == q || errno) { rc = dp_error_set(err, DP_EINVAL, "%s: entry %d: not a device id", path, k); goto done; }
            if (k >= n_ops) { rc = dp_error_set(err, DP_EINVAL, "%s: more than %d device ids (the graph's op count)", path, n_ops); goto done; }
            if (v < 0 || v >= n_devices) { rc = dp_error_set(err, DP_EINVAL, "%s: entry %d: device %ld outside 0..%d", path, k, v, n_devices - 1); goto done; }
            out[k++] = (int)v;
            q = end;
            if (*q && *q != ',' && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
                rc = dp_error_set(err, DP_EINVAL, "%s: entry %d: unexpected '%c'", path, k - 1, *q);
                goto done;
            }
        }
        if (k != n_ops) rc = dp_error_set(err, DP_EINVAL, "%s: %d device ids, the graph has %d ops", path, k, n_ops);
    }
done:
    free(text);
    return rc;
}

int dp_cli_write_assignment(const char *path, const dp_graph *g, const char *method, int n_devices,
                            const int *assignment, double makespan_printed, dp_error *err)
{
    json_t *root = json_object();
    json_object_set_new(root, "graph", json_string(g->name));
    json_object_set_new(root, "method", json_string(method));
    json_object_set_new(root, "n_devices", json_integer(n_devices));
    json_object_set_new(root, "makespan", json_real(makespan_printed));
    json_object_set_new(root, "units", json_string(g->time_unit));
    json_t *a = json_array();
    for (int i = 0; i < g->n_ops; i++) json_array_append_new(a, json_integer(assignment[i]));
    json_object_set_new(root, "devices", a);
    int rc = dp_json_dump_atomic(root, path, JSON_COMPACT, err);
    json_decref(root);
    return rc;
}

const char *dp_cli_data_path(const char *rel)
{
    static char buf[PATH_MAX];
    if (access(rel, R_OK) == 0) return rel;
    const char *env = getenv("DOPPLER_DATA");
    const char *sub = strncmp(rel, "data/", 5) == 0 ? rel + 5 : rel;
    if (env) {
        snprintf(buf, sizeof buf, "%s/%s", env, sub);
        if (access(buf, R_OK) == 0) return buf;
    }
    snprintf(buf, sizeof buf, "%s/%s", DP_DATADIR, sub);
    if (access(buf, R_OK) == 0) return buf;
    return rel;
}

void dp_cli_machine_init(dp_cli_machine *m)
{
    memset(m, 0, sizeof *m);
    m->n_devices = 4;
    m->peak_flops = 1e13;
    m->bandwidth_Bps = 1.2e10;
    m->latency_s = 1e-5;
    dp_hisim_options_init(&m->sim);
}

void dp_cli_machine_free(dp_cli_machine *m)
{
    dp_topology_free(m->topo);
    dp_calib_free(m->calib);
    m->topo = NULL;
    m->calib = NULL;
}

int dp_cli_machine_option(dp_cli_machine *m, int opt, const char *arg, const char *cmd)
{
    double x;
    int k;
    switch (opt) {
    case DP_OPT_DEVICES:
        if (dp_cli_parse_int(arg, 1, 4096, &m->n_devices) != 0) {
            dp_cli_usage_error(cmd, "--devices: expected an integer 1..4096, got '%s'", arg);
            return -1;
        }
        m->devices_given = 1;
        return 1;
    case DP_OPT_PEAK_FLOPS:
    case DP_OPT_BANDWIDTH:
    case DP_OPT_LATENCY:
        if (dp_cli_parse_double(arg, &x) != 0 || !(x >= 0) || x > 1e30 ||
            (opt != DP_OPT_LATENCY && x == 0)) {
            dp_cli_usage_error(cmd, "expected a positive number, got '%s'", arg);
            return -1;
        }
        if (opt == DP_OPT_PEAK_FLOPS) m->peak_flops = x;
        else if (opt == DP_OPT_BANDWIDTH) m->bandwidth_Bps = x;
        else m->latency_s = x;
        return 1;
    case DP_OPT_TOPOLOGY: m->topology = arg; return 1;
    case DP_OPT_CALIBRATION: m->calibration = arg; return 1;
    case DP_OPT_TRANSFER_MODEL:
        if ((k = dp_xfer_kind_parse(arg)) < 0) {
            dp_cli_usage_error(cmd, "--transfer-model: fixed, fifo or maxmin, got '%s'", arg);
            return -1;
        }
        m->sim.transfer_model = (dp_xfer_kind)k;
        return 1;
    case DP_OPT_CHUNKS:
        if (dp_cli_parse_int(arg, 1, 1024, &m->sim.chunks) != 0) {
            dp_cli_usage_error(cmd, "--chunks: expected an integer 1..1024, got '%s'", arg);
            return -1;
        }
        return 1;
    case DP_OPT_MODE:
        if (strcmp(arg, "async") == 0) m->sim.mode = DP_MODE_ASYNC;
        else if (strcmp(arg, "bsp") == 0) m->sim.mode = DP_MODE_BSP;
        else { dp_cli_usage_error(cmd, "--mode: async or bsp, got '%s'", arg); return -1; }
        return 1;
    case DP_OPT_STREAMS:
        if (dp_cli_parse_int(arg, 1, 1024, &m->sim.streams) != 0) {
            dp_cli_usage_error(cmd, "--streams: expected an integer 1..1024, got '%s'", arg);
            return -1;
        }
        return 1;
    case DP_OPT_QUEUE:
        if (strcmp(arg, "fifo") == 0) m->sim.queue = DP_QUEUE_FIFO;
        else if (strcmp(arg, "priority") == 0) m->sim.queue = DP_QUEUE_PRIORITY;
        else { dp_cli_usage_error(cmd, "--queue: fifo or priority, got '%s'", arg); return -1; }
        return 1;
    case DP_OPT_MEMORY_LIMIT:
        if (strcmp(arg, "topology") == 0) { m->sim.memory_limit = DP_HISIM_MEMORY_TOPOLOGY; return 1; }
        if (dp_cli_parse_double(arg, &x) != 0 || !(x > 0) || x > 1e30) {
            dp_cli_usage_error(cmd, "--memory-limit: bytes (a positive number) or 'topology', got '%s'", arg);
            return -1;
        }
        m->sim.memory_limit = x;
        return 1;
    case DP_OPT_MEMORY_POLICY:
        if (strcmp(arg, "error") == 0) m->sim.memory_policy = DP_MEMORY_ERROR;
        else if (strcmp(arg, "penalty") == 0) m->sim.memory_policy = DP_MEMORY_PENALTY;
        else { dp_cli_usage_error(cmd, "--memory-policy: error or penalty, got '%s'", arg); return -1; }
        return 1;
    case DP_OPT_MEMORY_PENALTY:
        if (dp_cli_parse_double(arg, &x) != 0 || !(x >= 0) || x > 1e30) {
            dp_cli_usage_error(cmd, "--memory-penalty: a non-negative number, got '%s'", arg);
            return -1;
        }
        m->sim.memory_penalty = x;
        return 1;
    case DP_OPT_COPY_ENGINES:
        if (strcmp(arg, "on") == 0) m->sim.copy_engines = 1;
        else if (strcmp(arg, "off") == 0) m->sim.copy_engines = 0;
        else { dp_cli_usage_error(cmd, "--copy-engines: on or off, got '%s'", arg); return -1; }
        return 1;
    }
    return 0;
}

const char *dp_cli_topology_path(const char *name)
{
    static char buf[PATH_MAX];
    if (access(name, R_OK) == 0) return name;
    if (strchr(name, '/')) return NULL;
    size_t len = strlen(name);
    snprintf(buf, sizeof buf, "data/topologies/%s%s", name, len > 5 && strcmp(name + len - 5, ".json") == 0 ? "" : ".json");
    const char *p = dp_cli_data_path(buf);
    return access(p, R_OK) == 0 ? p : NULL;
}

int dp_cli_machine_load(dp_cli_machine *m, dp_error *err)
{
    if (m->calibration && !m->topology)
        return dp_error_set(err, DP_EINVAL, "--calibration needs --topology (a calibration names the topology's devices)");
    if (m->topology && !m->topo) {
        const char *p = dp_cli_topology_path(m->topology);
        if (!p) {
            const char *env = getenv("DOPPLER_DATA");
            return dp_error_set(err, DP_EIO, "%s: no such topology file, and no bundled topology of that name (looked in "
                                "data/topologies, %s%s%sthe installed %s/topologies; doppler topology list)", m->topology,
                                env ? "$DOPPLER_DATA/topologies = " : "", env ? env : "", env ? "/topologies, " : "", DP_DATADIR);
        }
        m->topo = dp_topology_load(p, err);
        if (!m->topo) return err ? err->code : DP_EINVAL;
        if (m->devices_given && m->n_devices != m->topo->n_devices)
            return dp_error_set(err, DP_EINVAL, "--devices %d: topology %s has %d devices", m->n_devices, m->topo->name,
                                m->topo->n_devices);
        m->n_devices = m->topo->n_devices;
    }
    if (m->calibration && !m->calib) {
        m->calib = dp_calib_load(m->calibration, err);
        if (!m->calib) return err ? err->code : DP_EINVAL;
    }
    m->sim.calibration = m->calib;  /* the contention models time calibrated routes too */
    return DP_OK;
}

dp_costs *dp_cli_machine_costs(dp_cli_machine *m, const dp_graph *g, dp_error *err)
{
    if (dp_cli_machine_load(m, err) != DP_OK) return NULL;
    if (m->topo) return dp_costmodel_costs(g, m->topo, m->calib, err);
    return dp_costs_uniform(g, m->n_devices, m->peak_flops, m->bandwidth_Bps, m->latency_s, err);
}

int dp_cli_machine_needs_hisim(const dp_cli_machine *m)
{
    return m->topology != NULL || !dp_hisim_options_default(&m->sim);
}
