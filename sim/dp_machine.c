/* dp_machine.c: the machine description, filled by key (see dp_machine.h). */
#include "dp_machine.h"
#include "dp_alloc.h"

#include <assert.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp_costmodel.h"
#include "dp_hetero.h"
#include "dp_json.h"
#include "dp_transfer.h"

#ifndef DP_DATADIR
#define DP_DATADIR "/usr/local/share/doppler"
#endif

/* the uniform machine's keys apply without a topology (dp_machine_to_json leaves them out with one) */
static int uniform(const void *obj)
{
    return ((const dp_machine *)obj)->topology == NULL;
}

#define M(f) offsetof(dp_machine, f)
#define S(f) (offsetof(dp_machine, sim) + offsetof(dp_hisim_options, f))

/* The machine's keys (dp_machine.h): parsing, writing, help texts and the man page come from here.
 * Order: the command's getopt ids (experiments/cli.h DP_CLI_MACHINE_OPTIONS) and the order of
 * dp_machine_to_json's keys. memory_limit's word is DP_HISIM_MEMORY_TOPOLOGY's value (checked by
 * tests/test_machine_keys.c); the numbers' bounds are the ones dp_machine_set always had. */
static const dp_schema_key keys[] = {
    {"devices", DP_SCHEMA_INT, M(n_devices), 1, DP_GRAPH_MAX_DEVICES, NULL, 0, "4",
     "number of identical devices; not given: the count the graph was made for (8 for DOPPLER's 8gpu_ files and "
     "graph gen --tp 8), else 4; with a topology it must equal the topology's device count",
     NULL, NULL, DP_SCHEMA_ALWAYS, NULL},
    {"peak_flops", DP_SCHEMA_DOUBLE, M(peak_flops), 1e-300, 1e30, NULL, 0, "1e13",
     "uniform machine, graphs in FLOPs and bytes (a graph of times keeps its own, with a warning): FLOP/s per "
     "device; not with a topology", NULL, NULL, 0, uniform},
    {"bandwidth", DP_SCHEMA_DOUBLE, M(bandwidth_Bps), 1e-300, 1e30, NULL, 0, "1.2e10",
     "uniform machine, such graphs, comm_ratio 0 (else unused, with a warning): bytes per second per link; "
     "not with a topology", NULL, NULL, 0, uniform},
    {"latency", DP_SCHEMA_DOUBLE, M(latency_s), 0, 1e30, NULL, 0, "1e-5",
     "uniform machine, such graphs, comm_ratio 0 (else unused, with a warning): seconds per transfer; not "
     "with a topology", NULL, NULL, 0, uniform},
    {"comm_ratio", DP_SCHEMA_DOUBLE, M(comm_ratio), 0, 1e30, NULL, 0, "0",
     "uniform machine: R > 0 makes a transfer of an op's output take R times the op's time, latency 0, "
     "whatever its bytes (DOPPLER's rule, R = 4 in all six of their graph files); 0: latency + bytes / "
     "bandwidth. For graphs in FLOPs and bytes and task graphs without transfer costs of their own (Kasahara "
     "STG, DOT without sizes, any file whose every transfer time is 0); a graph whose transfers have times "
     "of their own (a DOPPLER .txt file, a HEFT example) keeps them, with a warning. Not with a topology",
     NULL, NULL, 0, uniform},
    {"topology", DP_SCHEMA_NAME, M(topology), 0, 0, "FILE|NAME", 0, NULL,
     "a machine description (doc/topology-format.md) or the name of a bundled one (doppler topology list): op "
     "times from its devices' roofline or a calibration, transfers along its routes; not given: the uniform, "
     "DOPPLER-compatible machine",
     NULL, NULL, 0, NULL},
    {"calibration", DP_SCHEMA_NAME, M(calibration), 0, 0, "FILE", 0, NULL,
     "measured per-device, per-op-kind affine op times and per-route latency and bandwidth for the topology "
     "(doppler-calibration JSON); a calibrated route is timed by its measured numbers in every transfer model; "
     "not given: the roofline",
     NULL, NULL, 0, NULL},
    {"transfer", DP_SCHEMA_ENUM, S(transfer_model), 0, 0, "fixed|fifo|maxmin", 0, "fixed",
     "transfer model: fixed (latency + bytes / bandwidth, no contention), fifo (per-link FIFO, store and "
     "forward), maxmin (max-min fair sharing of link bandwidth, rates recomputed when a transfer starts or "
     "ends); fifo and maxmin need a topology",
     NULL, "transfer-model", 0, NULL},
    {"chunks", DP_SCHEMA_INT, S(chunks), 1, 1024, NULL, 0, "1", "fifo: cut each transfer into K chunks", NULL, NULL,
     0, NULL},
    {"mode", DP_SCHEMA_ENUM, S(mode), 0, 0, "async|bsp", 0, "async",
     "async: work-conserving; bsp: bulk-synchronous, level L+1 starts when every op of level L and its "
     "outgoing transfers have finished",
     NULL, NULL, 0, NULL},
    {"streams", DP_SCHEMA_INT, S(streams), 1, 1024, NULL, 0, "0",
     "compute streams per device; not given: the topology's, else 1", NULL, NULL, DP_SCHEMA_UNSET, NULL},
    {"queue", DP_SCHEMA_ENUM, S(queue), 0, 0, "fifo|priority", 0, "fifo",
     "device queue discipline; priority uses the method's priority (else the b-level), chosen among every op "
     "ready at that instant (so HEFT's assignment with its ranks runs HEFT's own schedule wherever that "
     "schedule never leaves a device idle while a lower-priority op is ready for it)",
     NULL, NULL, 0, NULL},
    {"memory_limit", DP_SCHEMA_DOUBLE, S(memory_limit), 0, 1e30, "topology=-1", 0, "0",
     "memory capacity per device in bytes (a graph of times: in its file's comm units, an op's output "
     "counting as its outgoing transfer's, the largest where they differ), or topology: each device's memory_bytes; an over-capacity run "
     "fails (memory_policy error) or reports a penalised makespan (penalty); not given: no limit",
     NULL, NULL, DP_SCHEMA_UNSET | DP_SCHEMA_LO_OPEN, NULL},
    {"memory_policy", DP_SCHEMA_ENUM, S(memory_policy), 0, 0, "error|penalty", 0, "error",
     "error: an over-capacity run fails; penalty: it reports makespan x (1 + memory_penalty x excess)", NULL,
     NULL, 0, NULL},
    {"memory_penalty", DP_SCHEMA_DOUBLE, S(memory_penalty), 0, 1e30, NULL, 0, "1",
     "the penalty policy's weight W: penalised makespan = makespan x (1 + W x excess)", NULL, NULL, 0, NULL},
    {"copy_engines", DP_SCHEMA_ENUM, S(copy_engines), 0, 0, "off|on", 0, "on",
     "on: limit concurrent transfers per device and direction by the topology's copy engines", NULL, NULL, 0,
     NULL},
    {0},
};
/* dp_machine.keys_given holds a bit a key (the table ends with an empty entry) */
_Static_assert(sizeof keys / sizeof *keys - 1 <= 32, "more machine keys than bits of keys_given");

const dp_schema_key *dp_machine_keys(void)
{
    return keys;
}

static const dp_schema_section sections[] = {
    {"", keys, "a machine: as command-line options (--KEY, '-' for '_'; transfer is --transfer-model), sweep "
     "parameters (fixed, grid) and Python keywords (doppler.Machine(KEY=...))", NULL},
    {NULL, NULL, NULL, NULL},
};

const dp_schema_section *dp_machine_sections(void)
{
    return sections;
}

int dp_machine_key_index(const char *key)
{
    const dp_schema_key *k = dp_schema_find(keys, key);
    return k ? (int)(k - keys) : -1;
}

void dp_machine_init(dp_machine *m)
{
    memset(m, 0, sizeof *m);
    dp_hisim_options_init(&m->sim); /* the options the table does not hold (trace, calibration) */
    dp_schema_defaults(keys, m);
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
    dp_schema_release(keys, m);
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

int dp_machine_set(dp_machine *m, const char *key, const char *value, dp_error *err)
{
    const dp_schema_key *k = dp_schema_find(keys, key);
    if (!k) {
        char known[512];
        dp_schema_keys_text(keys, known, sizeof known);
        return dp_error_set(err, DP_EINVAL, "unknown machine key \"%s\" (known: %s)", key ? key : "(null)", known);
    }
    /* messages name the key as the caller spelled it */
    int rc = dp_schema_set_entry(k, m, key, value, err);
    if (rc != DP_OK) return rc;
    if (k->offset == M(n_devices)) m->devices_given = 1;
    m->keys_given |= 1u << (k - keys);
    if (k->type == DP_SCHEMA_NAME) drop_loaded(m); /* a new topology or calibration is read again */
    return DP_OK;
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

/* snprintf into buf, 1 when the whole text fits (a cut path could name another, existing file:
 * a buffer of 16 bytes gave "data/topologies", a folder, for dgx1-v100: a review) */
static int path_fits(char *buf, size_t cap, const char *a, const char *b)
{
    const int n = b ? snprintf(buf, cap, "%s/%s", a, b) : snprintf(buf, cap, "%s", a);
    return n >= 0 && (size_t)n < cap;
}

const char *dp_machine_data_file(const char *rel, char *buf, size_t cap)
{
    if (!buf || cap == 0) return NULL;
    if (access(rel, R_OK) == 0) return path_fits(buf, cap, rel, NULL) ? buf : NULL;
    const char *env = getenv("DOPPLER_DATA");
    const char *sub = strncmp(rel, "data/", 5) == 0 ? rel + 5 : rel;
    if (env && *env && path_fits(buf, cap, env, sub) && access(buf, R_OK) == 0) return buf;
    if (data_dir[0] && path_fits(buf, cap, data_dir, sub) && access(buf, R_OK) == 0) return buf;
    if (path_fits(buf, cap, DP_DATADIR, sub) && access(buf, R_OK) == 0) return buf;
    return NULL;
}

int dp_machine_topology_missing(const char *name, dp_error *err)
{
    const char *env = getenv("DOPPLER_DATA");
    return dp_error_set(err, DP_EIO, "%s: no such topology file, and no bundled topology of that name (looked in "
                        "data/topologies, %s%s%s%s%sthe installed %s/topologies%s; doppler topology list)", name,
                        env && *env ? "$DOPPLER_DATA/topologies = " : "", env && *env ? env : "",
                        env && *env ? "/topologies, " : "", data_dir, data_dir[0] ? "/topologies, " : "", DP_DATADIR,
                        env && *env ? "" : "; outside the checkout, set DOPPLER_DATA to its data folder");
}

const char *dp_machine_topology_path(const char *name, char *buf, size_t cap)
{
    if (!name) return NULL;
    if (access(name, R_OK) == 0) return buf && cap > 0 && path_fits(buf, cap, name, NULL) ? buf : NULL;
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
        if (!p) return dp_machine_topology_missing(m->topology, err);
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

/* the compute streams device d runs: the streams option, else the topology's device's, else 1
 * (as the general engine takes them) */
static int device_streams(const dp_machine *m, int d)
{
    if (m->sim.streams > 0) return m->sim.streams;
    return m->topo && m->topo->dev[d].streams > 1 ? m->topo->dev[d].streams : 1;
}

/* key (dp_machine_keys' name) was set on m */
static int given(const dp_machine *m, const char *key)
{
    const int i = dp_machine_key_index(key);
    assert(i >= 0 && i < 32);
    return (m->keys_given >> i) & 1u;
}

int dp_machine_check_keys(const dp_machine *m, const char *topology, dp_error *err)
{
    dp_machine d;
    dp_machine_init(&d);
    const dp_hisim_options *o = &m->sim, *od = &d.sim;
    /* the uniform machine's keys with a topology: refused when given or not at their defaults
     * (peak_flops, bandwidth and latency were ignored without a word, comm_ratio refused: a
     * review; given at their default values they still were: another, as every value of them
     * describes a uniform machine); the topology's devices and links give what they describe.
     * comm_ratio 0 and the simulator keys below at their defaults are the "off" of what they
     * do, and pass (a sweep's grid may give them to every machine) */
#define SET(key, differs) (given(m, key) || (differs))
    const char *k = !topology                                               ? NULL
                    : m->comm_ratio > 0                                     ? "comm_ratio"
                    : SET("peak_flops", m->peak_flops != d.peak_flops)       ? "peak_flops"
                    : SET("bandwidth", m->bandwidth_Bps != d.bandwidth_Bps) ? "bandwidth"
                    : SET("latency", m->latency_s != d.latency_s)           ? "latency"
                                                                            : NULL;
#undef SET
    /* a simulator key off its default where it cannot apply (each was ignored without a word: a
     * review of the general engine) */
    const char *why = NULL;
    if (k) {
        dp_error_set(err, DP_EINVAL, "%s describes a uniform machine: not with a topology (%s), whose devices and links "
                     "give it", k, topology);
        dp_machine_free(&d);
        return DP_EINVAL;
    }
    if (o->transfer_model != DP_TRANSFER_FIXED && !topology) {
        k = "transfer";
        why = "fifo and maxmin share a topology's links: give --topology (or transfer fixed)";
    } else if (o->chunks != od->chunks && o->transfer_model != DP_TRANSFER_FIFO) {
        k = "chunks";
        why = "cuts each transfer of the fifo transfer model into pieces: give transfer fifo (--transfer-model fifo)";
    } else if (o->memory_policy != od->memory_policy && o->memory_limit == 0) {
        k = "memory_policy";
        why = "is what happens over a memory limit: give memory_limit";
    } else if (o->memory_penalty != od->memory_penalty &&
               (o->memory_limit == 0 || o->memory_policy != DP_HISIM_MEMORY_PENALTY)) {
        k = "memory_penalty";
        why = "weighs the penalty policy's excess: give memory_limit and memory_policy penalty";
    } else if (o->copy_engines != od->copy_engines && !topology) {
        k = "copy_engines";
        why = "turns off a topology's copy-engine limits: without a topology transfers wait for none";
    } else if (m->calibration && !topology) {
        /* found when the machine was loaded, exit 1, and in a sweep by every run after the results
         * files were made (a review of the machine's checks) */
        k = "calibration";
        why = "times the devices of a topology (it names them): give --topology, the one it was profiled on";
    } else if (o->memory_limit == DP_HISIM_MEMORY_TOPOLOGY && !topology) {
        k = "memory_limit";
        why = "topology takes each device's memory_bytes from a topology: give --topology, or a number of bytes";
    }
    dp_machine_free(&d);
    if (k) return dp_error_set(err, DP_EINVAL, "%s %s", k, why);
    return DP_OK;
}

int dp_machine_hetero_read(dp_machine *m, const char *path, const char *format, dp_graph **g, dp_cost **c,
                           dp_error *err)
{
    *g = NULL;
    *c = NULL;
    const char *k = m->devices_given         ? "devices"
                    : m->topology            ? "topology"
                    : m->comm_ratio > 0      ? "comm_ratio"
                    : given(m, "peak_flops") ? "peak_flops"
                    : given(m, "bandwidth")  ? "bandwidth"
                    : given(m, "latency")    ? "latency"
                                             : NULL;
    if (k)
        return dp_error_set(err, DP_EINVAL, "%s: a heterogeneous example fixes the machine (its processors, op times and "
                            "links): %s does not apply", path, k);
    int rc = dp_hetero_read_format(path, format, g, c, err);
    if (rc != DP_OK) return rc;
    m->n_devices = (*c)->n_devices;
    dp_machine_cost_streams(m, *c);
    return DP_OK;
}

void dp_machine_cost_streams(const dp_machine *m, dp_cost *c)
{
    /* the compute streams the engine runs (the lower bound's work term is over them) */
    c->streams_total = 0;
    for (int d = 0; d < c->n_devices; d++) c->streams_total += device_streams(m, d);
}

dp_cost *dp_machine_costs(dp_machine *m, const dp_graph *g, dp_error *err)
{
    if (dp_machine_load(m, err) != DP_OK) return NULL;
    /* a graph made for a device count places on it unless told otherwise: DOPPLER's 8-GPU
     * graphs on the default 4 devices gave the makespans of another experiment */
    if (g->devices > 0 && !m->topo && !m->devices_given) m->n_devices = g->devices;
    if (dp_machine_check_keys(m, m->topology, err) != DP_OK) return NULL;
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
    dp_machine_cost_streams(m, c);
    /* interchangeable devices (the trainer renames placements on them) are alike by costs and
     * by what the engine reads beyond them (copy engines, memory, streams, interference) */
    for (int d = 1; d < c->n_devices && c->homogeneous; d++)
        if (!dp_machine_devices_alike(m, 0, d)) c->homogeneous = 0;
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

/* append one printf-formatted line and its '\n' to the text of length *len, of which buf holds
 * what fits in size bytes (always terminated when size > 0); *len counts the whole text, as
 * snprintf does (a graph named in 3,000 characters cut the warnings at 4 kB: a review) */
__attribute__((format(printf, 4, 5))) static void warning_line(char *buf, size_t size, size_t *len,
                                                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*len < size ? buf + *len : NULL, *len < size ? size - *len : 0, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    *len += (size_t)w;
    if (*len + 1 < size) {
        buf[*len] = '\n';
        buf[*len + 1] = '\0';
    }
    (*len)++;
}

size_t dp_machine_warnings(const dp_machine *m, const dp_graph *g, char *buf, size_t size)
{
    size_t len = 0;
    if (size) buf[0] = '\0';
    /* the uniform machine's keys that change nothing on g, each with why (each was ignored
     * without a word: a review). With a topology they are refused before (dp_machine_check_keys). */
    const int times = g->cost_kind != DP_GRAPH_COST_PHYSICAL;
    const int ratio = m->comm_ratio > 0 && dp_machine_comm_ratio_applies(g);
    const char *own = "its costs are times, as its file gives them, not the FLOPs and bytes that peak_flops, "
                      "bandwidth and latency turn into times";
    char by_ratio[160];
    snprintf(by_ratio, sizeof by_ratio, "under comm_ratio %g a transfer takes %g times its producer op's time, "
             "whatever its bytes", m->comm_ratio, m->comm_ratio);
    const struct { const char *key; double value; const char *why; } unused[] = {
        {"comm_ratio", m->comm_ratio, m->comm_ratio > 0 && !ratio ? "its transfers have times of their own (the "
                                      "file's are kept); it applies to graphs in FLOPs and bytes and to task graphs "
                                      "without transfer costs" : NULL},
        {"peak_flops", m->peak_flops, times && given(m, "peak_flops") ? own : NULL},
        {"bandwidth", m->bandwidth_Bps, !given(m, "bandwidth") ? NULL : times ? own : ratio ? by_ratio : NULL},
        {"latency", m->latency_s, !given(m, "latency") ? NULL : times ? own : ratio ? by_ratio : NULL},
    };
    for (size_t k = 0; k < sizeof unused / sizeof unused[0]; k++)
        if (unused[k].why && !m->topo)
            warning_line(buf, size, &len, "%s %g changes nothing on graph %s: %s", unused[k].key, unused[k].value, g->name,
                         unused[k].why);
    if (m->calib && m->topo && dp_costmodel_check_names(m->topo, m->calib, NULL) == DP_OK) {
        /* a device the calibration does not name is timed by its roofline, beside calibrated
         * ones: said (it was silent; a review). Not for a calibration of other devices, which
         * the costs refuse (it was said first, as if the roofline would then be used: a review) */
        char names[512] = "";
        size_t nlen = 0;
        int k = 0;
        for (int d = 0; d < m->topo->n_devices; d++) {
            /* a device with an interference entry alone is timed by the roofline too (it was not
             * said: a review) */
            const dp_calib_device *cd = dp_calib_find_device(m->calib, m->topo->dev[d].name);
            if (!cd || (cd->n_ops == 0 && !cd->has_default && cd->n_measured == 0)) {
                int w = snprintf(names + nlen, sizeof names - nlen, "%s%s", k ? ", " : "", m->topo->dev[d].name);
                if (w > 0 && (size_t)w < sizeof names - nlen) nlen += (size_t)w;
                k++;
            }
        }
        if (k)
            warning_line(buf, size, &len, "calibration %s has no op times (ops, default or measured) for %d of the "
                         "topology's %d devices (%s): their op times are the topology's roofline, not measured",
                         m->calibration, k, m->topo->n_devices, names);
        /* measured ops of which none is an op of g as simulated: the calibration was profiled on
         * other graphs or at another scale, and every op is timed by its kind's fit (MAPE 31.9%
         * against 16.5% profiled in place on the Llama block, doc/validation/README.md; it was
         * silent: a review). One op of g with a measured time on some device is enough */
        int n_measured = 0;
        for (int d = 0; d < m->calib->n_devices; d++) n_measured += m->calib->dev[d].n_measured;
        int found = n_measured == 0 || g->cost_kind != DP_GRAPH_COST_PHYSICAL;
        for (int v = 0; v < g->n_ops && !found; v++) {
            const double bytes = dp_costmodel_op_bytes(g, v);
            for (int d = 0; d < m->topo->n_devices && !found; d++)
                found = dp_calib_find_measured(m->calib, m->topo->dev[d].name, g->op_kind[v], g->work[v], bytes) >= 0;
        }
        if (!found)
            warning_line(buf, size, &len, "none of the %d measured ops of calibration %s is an op of graph %s as "
                         "simulated (they were profiled on other graphs or at another --scale or --target-flops): its "
                         "ops are timed by their kinds' fits; profile this graph (calibrate profile --graph) for "
                         "measured times", n_measured, m->calibration, g->name);
    }
    return len;
}

int dp_machine_general(const dp_machine *m)
{
    return m->topology != NULL || !dp_hisim_options_default(&m->sim);
}

int dp_machine_max_streams(const dp_machine *m)
{
    int k = 1;
    for (int d = 0; d < (m->topo ? m->topo->n_devices : 1); d++)
        if (device_streams(m, d) > k) k = device_streams(m, d);
    return k;
}

int dp_machine_devices_alike(const dp_machine *m, int a, int b)
{
    if (a == b || !dp_machine_general(m)) return 1;
    if (device_streams(m, a) != device_streams(m, b)) return 0;
    if (!m->topo) return 1; /* the uniform machine: every option applies to every device alike */
    if (m->sim.transfer_model != DP_TRANSFER_FIXED) return 0;
    const dp_topology_device *x = &m->topo->dev[a], *y = &m->topo->dev[b];
    if (m->sim.copy_engines && x->copy_engines != y->copy_engines) return 0;
    if (m->sim.memory_limit == DP_HISIM_MEMORY_TOPOLOGY && x->memory_bytes != y->memory_bytes) return 0;
    const dp_calib_device *cx = dp_calib_find_device(m->calib, x->name), *cy = dp_calib_find_device(m->calib, y->name);
    const double xi = cx ? cx->copy_in : 0, yi = cy ? cy->copy_in : 0;
    const double xp = cx ? cx->peer_busy : 0, yp = cy ? cy->peer_busy : 0;
    return xi == yi && xp == yp;
}

json_t *dp_machine_to_json(const dp_machine *m)
{
    json_t *o = json_object();
    if (o && dp_schema_to_json(keys, m, o, 0) != DP_OK) {
        json_decref(o);
        return NULL;
    }
    return o;
}
