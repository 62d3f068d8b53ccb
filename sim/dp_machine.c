/* dp_machine.c: the machine description, filled by key (see dp_machine.h). */
#include "dp_machine.h"
#include "dp_alloc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp_costmodel.h"
#include "dp_json.h"
#include "dp_transfer.h"

#ifndef DP_DATADIR
#define DP_DATADIR "/usr/local/share/doppler"
#endif

enum {
    K_DEVICES, K_PEAK_FLOPS, K_BANDWIDTH, K_LATENCY, K_TOPOLOGY, K_CALIBRATION, K_TRANSFER, K_CHUNKS, K_MODE,
    K_STREAMS, K_QUEUE, K_MEMORY_LIMIT, K_MEMORY_POLICY, K_MEMORY_PENALTY, K_COPY_ENGINES, K_COMM_RATIO
};

static const dp_machine_key keys[] = {
    [K_DEVICES] = {"devices", "devices"},
    [K_PEAK_FLOPS] = {"peak_flops", "peak-flops"},
    [K_BANDWIDTH] = {"bandwidth", "bandwidth"},
    [K_LATENCY] = {"latency", "latency"},
    [K_TOPOLOGY] = {"topology", "topology"},
    [K_CALIBRATION] = {"calibration", "calibration"},
    [K_TRANSFER] = {"transfer", "transfer-model"},
    [K_CHUNKS] = {"chunks", "chunks"},
    [K_MODE] = {"mode", "mode"},
    [K_STREAMS] = {"streams", "streams"},
    [K_QUEUE] = {"queue", "queue"},
    [K_MEMORY_LIMIT] = {"memory_limit", "memory-limit"},
    [K_MEMORY_POLICY] = {"memory_policy", "memory-policy"},
    [K_MEMORY_PENALTY] = {"memory_penalty", "memory-penalty"},
    [K_COPY_ENGINES] = {"copy_engines", "copy-engines"},
    [K_COMM_RATIO] = {"comm_ratio", "comm-ratio"},
    {NULL, NULL},
};

const dp_machine_key *dp_machine_keys(void)
{
    return keys;
}

/* keys' entries before the NULL one */
static int n_keys(void)
{
    int n = 0;
    while (keys[n].name) n++;
    return n;
}

const char *dp_machine_key_name(int i)
{
    return i >= 0 && i < n_keys() ? keys[i].name : NULL;
}

const char *dp_machine_key_option(int i)
{
    return i >= 0 && i < n_keys() ? keys[i].option : NULL;
}

int dp_machine_key_index(const char *key)
{
    if (!key) return -1;
    if (strncmp(key, "--", 2) == 0) key += 2;
    for (int i = 0; keys[i].name; i++)
        if (strcmp(key, keys[i].name) == 0 || strcmp(key, keys[i].option) == 0) return i;
    return -1;
}

void dp_machine_init(dp_machine *m)
{
    memset(m, 0, sizeof *m);
    m->n_devices = 4;
    m->peak_flops = 1e13;
    m->bandwidth_Bps = 1.2e10;
    m->latency_s = 1e-5;
    dp_hisim_options_init(&m->sim);
}

static void drop_loaded(dp_machine *m)
{
    dp_topology_free(m->topo);
    dp_calib_free(m->calib);
    m->topo = NULL;
    m->calib = NULL;
    m->sim.calibration = NULL;
}

void dp_machine_free(dp_machine *m)
{
    if (!m) return;
    drop_loaded(m);
    free(m->topology);
    free(m->calibration);
    dp_machine_init(m);
}

dp_machine *dp_machine_alloc(dp_error *err)
{
    dp_machine *m = dp_alloc_malloc(sizeof *m);
    if (!m) {
        dp_error_set(err, DP_ENOMEM, "machine: out of memory");
        return NULL;
    }
    dp_machine_init(m);
    return m;
}

void dp_machine_destroy(dp_machine *m)
{
    if (!m) return;
    dp_machine_free(m);
    free(m);
}

int dp_machine_get_n_devices(const dp_machine *m)
{
    return m->n_devices;
}

const char *dp_machine_get_device_name(const dp_machine *m, int d)
{
    if (!m->topo || d < 0 || d >= m->topo->n_devices) return NULL;
    return m->topo->dev[d].name;
}

void dp_machine_set_trace(dp_machine *m, int on)
{
    m->sim.trace = on != 0;
}

/* Whole-string parses; 0 on success. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int set_name(char **slot, const char *value, dp_error *err)
{
    char *copy = dp_alloc_strdup(value);
    if (!copy) return dp_error_set(err, DP_ENOMEM, "out of memory");
    free(*slot);
    *slot = copy;
    return DP_OK;
}

int dp_machine_set(dp_machine *m, const char *key, const char *value, dp_error *err)
{
    int k = dp_machine_key_index(key);
    if (k < 0) return dp_error_set(err, DP_EINVAL, "unknown machine key \"%s\"", key ? key : "(null)");
    if (!value) return dp_error_set(err, DP_EINVAL, "%s: a value is needed", keys[k].name);
    const char *name = key; /* messages name the key as the caller spelled it */
    double x;
    switch (k) {
    case K_DEVICES:
        if (parse_int(value, 1, 4096, &m->n_devices) != 0)
            return dp_error_set(err, DP_EINVAL, "%s: expected an integer 1..4096, got '%s'", name, value);
        m->devices_given = 1;
        return DP_OK;
    case K_PEAK_FLOPS:
    case K_BANDWIDTH:
    case K_LATENCY:
        if (parse_double(value, &x) != 0 || !(x >= 0) || x > 1e30 || (k != K_LATENCY && !(x >= 1e-300)))
            return dp_error_set(err, DP_EINVAL, "%s: expected a %s number, got '%s'", name,
                                k == K_LATENCY ? "non-negative" : "positive", value);
        if (k == K_PEAK_FLOPS) m->peak_flops = x;
        else if (k == K_BANDWIDTH) m->bandwidth_Bps = x;
        else m->latency_s = x;
        return DP_OK;
    case K_TOPOLOGY:
    case K_CALIBRATION:
        if (!*value) return dp_error_set(err, DP_EINVAL, "%s: empty name", name);
        drop_loaded(m);
        return set_name(k == K_TOPOLOGY ? &m->topology : &m->calibration, value, err);
    case K_TRANSFER: {
        int t = dp_transfer_kind_parse(value);
        if (t < 0) return dp_error_set(err, DP_EINVAL, "%s: fixed, fifo or maxmin, got '%s'", name, value);
        m->sim.transfer_model = (dp_transfer_kind)t;
        return DP_OK;
    }
    case K_CHUNKS:
    case K_STREAMS:
        if (parse_int(value, 1, 1024, k == K_CHUNKS ? &m->sim.chunks : &m->sim.streams) != 0)
            return dp_error_set(err, DP_EINVAL, "%s: expected an integer 1..1024, got '%s'", name, value);
        return DP_OK;
    case K_MODE:
        if (strcmp(value, "async") == 0) m->sim.mode = DP_HISIM_MODE_ASYNC;
        else if (strcmp(value, "bsp") == 0) m->sim.mode = DP_HISIM_MODE_BSP;
        else return dp_error_set(err, DP_EINVAL, "%s: async or bsp, got '%s'", name, value);
        return DP_OK;
    case K_QUEUE:
        if (strcmp(value, "fifo") == 0) m->sim.queue = DP_HISIM_QUEUE_FIFO;
        else if (strcmp(value, "priority") == 0) m->sim.queue = DP_HISIM_QUEUE_PRIORITY;
        else return dp_error_set(err, DP_EINVAL, "%s: fifo or priority, got '%s'", name, value);
        return DP_OK;
    case K_MEMORY_LIMIT:
        if (strcmp(value, "topology") == 0) {
            m->sim.memory_limit = DP_HISIM_MEMORY_TOPOLOGY;
            return DP_OK;
        }
        if (parse_double(value, &x) != 0 || !(x > 0) || x > 1e30)
            return dp_error_set(err, DP_EINVAL, "%s: bytes (a positive number) or 'topology', got '%s'", name, value);
        m->sim.memory_limit = x;
        return DP_OK;
    case K_MEMORY_POLICY:
        if (strcmp(value, "error") == 0) m->sim.memory_policy = DP_HISIM_MEMORY_ERROR;
        else if (strcmp(value, "penalty") == 0) m->sim.memory_policy = DP_HISIM_MEMORY_PENALTY;
        else return dp_error_set(err, DP_EINVAL, "%s: error or penalty, got '%s'", name, value);
        return DP_OK;
    case K_MEMORY_PENALTY:
    case K_COMM_RATIO:
        if (parse_double(value, &x) != 0 || !(x >= 0) || x > 1e30)
            return dp_error_set(err, DP_EINVAL, "%s: a non-negative number, got '%s'", name, value);
        if (k == K_MEMORY_PENALTY) m->sim.memory_penalty = x;
        else m->comm_ratio = x;
        return DP_OK;
    case K_COPY_ENGINES:
        if (strcmp(value, "on") == 0) m->sim.copy_engines = 1;
        else if (strcmp(value, "off") == 0) m->sim.copy_engines = 0;
        else return dp_error_set(err, DP_EINVAL, "%s: on or off, got '%s'", name, value);
        return DP_OK;
    }
    return dp_error_set(err, DP_EINVAL, "unknown machine key \"%s\"", key);
}

int dp_machine_set_json(dp_machine *m, const char *key, const json_t *v, dp_error *err)
{
    char text[PATH_MAX];
    if (json_is_string(v)) {
        if (snprintf(text, sizeof text, "%s", json_string_value(v)) >= (int)sizeof text)
            return dp_error_set(err, DP_EINVAL, "\"%s\": value too long", key);
    } else if (json_is_integer(v)) {
        snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(text, sizeof text, "%.17g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        snprintf(text, sizeof text, "%s", json_is_true(v) ? "on" : "off");
    } else {
        return dp_error_set(err, DP_EINVAL, "\"%s\": expected a string or a number", key);
    }
    return dp_machine_set(m, key, text, err);
}

/* the embedding program's data folder (dp_machine_data_dir_set); "" when none */
static char data_dir[PATH_MAX];

int dp_machine_data_dir_set(const char *dir, dp_error *err)
{
    if (dir && strlen(dir) >= sizeof data_dir)
        return dp_error_set(err, DP_EINVAL, "data folder: a path of %zu bytes (at most %zu)", strlen(dir), sizeof data_dir - 1);
    snprintf(data_dir, sizeof data_dir, "%s", dir ? dir : "");
    return DP_OK;
}

const char *dp_machine_data_dir(void)
{
    return data_dir;
}

const char *dp_machine_data_file(const char *rel, char *buf, size_t cap)
{
    if (access(rel, R_OK) == 0) {
        snprintf(buf, cap, "%s", rel);
        return buf;
    }
    const char *env = getenv("DOPPLER_DATA");
    const char *sub = strncmp(rel, "data/", 5) == 0 ? rel + 5 : rel;
    if (env && *env) {
        snprintf(buf, cap, "%s/%s", env, sub);
        if (access(buf, R_OK) == 0) return buf;
    }
    if (data_dir[0]) {
        snprintf(buf, cap, "%s/%s", data_dir, sub);
        if (access(buf, R_OK) == 0) return buf;
    }
    snprintf(buf, cap, "%s/%s", DP_DATADIR, sub);
    if (access(buf, R_OK) == 0) return buf;
    return NULL;
}

const char *dp_machine_topology_path(const char *name, char *buf, size_t cap)
{
    if (!name) return NULL;
    if (access(name, R_OK) == 0) {
        snprintf(buf, cap, "%s", name);
        return buf;
    }
    if (strchr(name, '/')) return NULL;
    char rel[PATH_MAX];
    size_t len = strlen(name);
    snprintf(rel, sizeof rel, "data/topologies/%s%s", name, len > 5 && strcmp(name + len - 5, ".json") == 0 ? "" : ".json");
    return dp_machine_data_file(rel, buf, cap);
}

int dp_machine_load(dp_machine *m, dp_error *err)
{
    if (m->calibration && !m->topology)
        return dp_error_set(err, DP_EINVAL, "--calibration needs --topology (a calibration names the topology's devices)");
    if (m->topology && !m->topo) {
        char buf[PATH_MAX];
        const char *p = dp_machine_topology_path(m->topology, buf, sizeof buf);
        if (!p) {
            const char *env = getenv("DOPPLER_DATA");
            return dp_error_set(err, DP_EIO, "%s: no such topology file, and no bundled topology of that name (looked in "
                                "data/topologies, %s%s%s%s%sthe installed %s/topologies; doppler topology list)", m->topology,
                                env ? "$DOPPLER_DATA/topologies = " : "", env ? env : "", env ? "/topologies, " : "",
                                data_dir, data_dir[0] ? "/topologies, " : "", DP_DATADIR);
        }
        m->topo = dp_topology_load(p, err);
        if (!m->topo) return err && err->code ? err->code : DP_EINVAL;
        if (m->devices_given && m->n_devices != m->topo->n_devices)
            return dp_error_set(err, DP_EINVAL, "--devices %d: topology %s has %d devices", m->n_devices, m->topo->name,
                                m->topo->n_devices);
        m->n_devices = m->topo->n_devices;
    }
    if (m->calibration && !m->calib) {
        m->calib = dp_calib_load(m->calibration, err);
        if (!m->calib) return err && err->code ? err->code : DP_EINVAL;
    }
    m->sim.calibration = m->calib; /* the contention models time calibrated routes too */
    return DP_OK;
}

/* add to err's message the machine keys behind the out-of-range part of the costs (dp_cost_check),
 * with their values, so that the user knows what to change */
static void machine_keys_of_costs(const dp_machine *m, const dp_graph *g, dp_cost_part part, dp_error *err)
{
    if (!err) return;
    char msg[DP_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    int code = err->code;
    const int time = g->cost_kind == DP_GRAPH_COST_TIME;
    if (m->topo)
        dp_error_set(err, code, "%s; the %s of machine keys topology (%s)%s%s%s are out of range for this graph", msg,
                     part == DP_COST_PART_OP ? "op times (device rates, calibration op coefficients)"
                                             : "transfers (links, calibration routes)",
                     m->topology, m->calibration ? " and calibration (" : "", m->calibration ? m->calibration : "",
                     m->calibration ? ")" : "");
    else if (time && !(m->comm_ratio > 0))
        dp_error_set(err, code, "%s; the graph's own costs are out of range", msg);
    else if (part == DP_COST_PART_OP)
        dp_error_set(err, code, "%s; machine key peak_flops (%g FLOP/s) is out of range for this graph", msg, m->peak_flops);
    else if (m->comm_ratio > 0)
        dp_error_set(err, code, "%s; machine key comm_ratio (%g) with peak_flops (%g FLOP/s) is out of range for this graph",
                     msg, m->comm_ratio, m->peak_flops);
    else
        dp_error_set(err, code, "%s; machine keys bandwidth (%g B/s) and latency (%g s) are out of range for this graph",
                     msg, m->bandwidth_Bps, m->latency_s);
}

dp_cost *dp_machine_costs(dp_machine *m, const dp_graph *g, dp_error *err)
{
    if (dp_machine_load(m, err) != DP_OK) return NULL;
    /* a graph made for a device count places on it unless told otherwise: DOPPLER's 8-GPU
     * graphs on the default 4 devices gave the makespans of another experiment */
    if (g->devices > 0 && !m->topo && !m->devices_given) m->n_devices = g->devices;
    if (m->topo && m->comm_ratio > 0) {
        dp_error_set(err, DP_EINVAL, "comm_ratio describes a uniform machine: not with a topology (%s)", m->topology);
        return NULL;
    }
    dp_cost *c;
    if (m->topo) c = dp_costmodel_costs(g, m->topo, m->calib, err);
    else {
        c = dp_cost_uniform(g, m->n_devices, m->peak_flops, m->bandwidth_Bps, m->latency_s, err);
        if (c && m->comm_ratio > 0 && dp_machine_comm_ratio_applies(g) && dp_cost_set_comm_ratio(c, g, m->comm_ratio, err) != DP_OK) {
            dp_cost_free(c);
            return NULL;
        }
    }
    if (!c) return NULL;
    dp_cost_part part;
    if (dp_cost_check(g, c, &part, err) != DP_OK) {
        machine_keys_of_costs(m, g, part, err);
        dp_cost_free(c);
        return NULL;
    }
    return c;
}

int dp_machine_comm_ratio_applies(const dp_graph *g)
{
    if (g->cost_kind == DP_GRAPH_COST_PHYSICAL) return 1;
    for (int e = 0; e < g->n_edges; e++)
        if (g->edge_size[e] != 0) return 0;
    return 1;
}

int dp_machine_devices_differ(const dp_machine *m, const dp_graph *g)
{
    int have = m->topo ? m->topo->n_devices : m->n_devices;
    return g->devices > 0 && have != g->devices ? g->devices : 0;
}

int dp_machine_general(const dp_machine *m)
{
    return m->topology != NULL || !dp_hisim_options_default(&m->sim);
}

int dp_machine_max_streams(const dp_machine *m)
{
    if (m->sim.streams > 0) return m->sim.streams;
    int k = 1;
    if (m->topo)
        for (int d = 0; d < m->topo->n_devices; d++)
            if (m->topo->dev[d].streams > k) k = m->topo->dev[d].streams;
    return k;
}

json_t *dp_machine_to_json(const dp_machine *m)
{
    dp_machine d;
    dp_machine_init(&d);
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "devices", json_integer(m->n_devices));
    if (m->topology) json_object_set_new(o, "topology", json_string(m->topology));
    else {
        if (m->peak_flops != d.peak_flops) json_object_set_new(o, "peak_flops", dp_json_number(m->peak_flops));
        if (m->bandwidth_Bps != d.bandwidth_Bps) json_object_set_new(o, "bandwidth", dp_json_number(m->bandwidth_Bps));
        if (m->latency_s != d.latency_s) json_object_set_new(o, "latency", dp_json_number(m->latency_s));
        if (m->comm_ratio != d.comm_ratio) json_object_set_new(o, "comm_ratio", dp_json_number(m->comm_ratio));
    }
    if (m->calibration) json_object_set_new(o, "calibration", json_string(m->calibration));
    const dp_hisim_options *s = &m->sim, *z = &d.sim;
    if (s->transfer_model != z->transfer_model)
        json_object_set_new(o, "transfer", json_string(dp_transfer_kind_name(s->transfer_model)));
    if (s->chunks != z->chunks) json_object_set_new(o, "chunks", json_integer(s->chunks));
    if (s->mode != z->mode) json_object_set_new(o, "mode", json_string(s->mode == DP_HISIM_MODE_BSP ? "bsp" : "async"));
    if (s->streams != z->streams) json_object_set_new(o, "streams", json_integer(s->streams));
    if (s->queue != z->queue) json_object_set_new(o, "queue", json_string(s->queue == DP_HISIM_QUEUE_PRIORITY ? "priority" : "fifo"));
    if (s->memory_limit == DP_HISIM_MEMORY_TOPOLOGY) json_object_set_new(o, "memory_limit", json_string("topology"));
    else if (s->memory_limit != z->memory_limit) json_object_set_new(o, "memory_limit", dp_json_number(s->memory_limit));
    if (s->memory_policy != z->memory_policy)
        json_object_set_new(o, "memory_policy", json_string(s->memory_policy == DP_HISIM_MEMORY_PENALTY ? "penalty" : "error"));
    if (s->memory_penalty != z->memory_penalty) json_object_set_new(o, "memory_penalty", dp_json_number(s->memory_penalty));
    if (s->copy_engines != z->copy_engines) json_object_set_new(o, "copy_engines", json_string(s->copy_engines ? "on" : "off"));
    return o;
}
