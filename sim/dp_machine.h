/* dp_machine.h: the machine an assignment runs on, as every command, sweep, method, trainer and
 * the Python interface describe it: a uniform machine (n identical devices, one peak rate, one
 * link bandwidth and latency) or a topology (dp_topology.h) with an optional calibration
 * (dp_calib.h), plus every option of the general engine (dp_hisim_options).
 *
 * A machine is filled key by key from text (the command line, Python keywords) or JSON (sweep
 * configs, Python): both go through dp_machine_set, so a key means one thing wherever it is
 * written. The keys are one table (dp_schema.h; dp_machine_keys): devices, peak_flops, bandwidth,
 * latency, comm_ratio (the uniform machine), topology, calibration, and the general engine's
 * options transfer, chunks, mode, streams, queue, memory_limit, memory_policy, memory_penalty,
 * copy_engines. Each entry gives the key's kind and range, its default and its help; `doppler
 * config machine` prints them, the commands' --help and the man page (CONFIG KEYS, machine) are
 * made from them, and dp_machine_to_json writes from them. Each key also has its command-line
 * spelling (`--transfer-model`, `--peak-flops`, ...: dp_schema_option_text).
 *
 * dp_machine_costs materialises the cost tables of a graph on the machine; dp_engine.h simulates
 * on it.
 */
#ifndef DP_MACHINE_H
#define DP_MACHINE_H

#include <jansson.h>

#include "dp_calib.h"
#include "dp_cost.h"
#include "dp_error.h"
#include "dp_graph.h"
#include "dp_hisim.h"
#include "dp_schema.h"
#include "dp_topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_machine {
    int n_devices;          /* devices (default 4); with a topology: its count after dp_machine_load */
    int devices_given;      /* 1 when "devices" was set explicitly */
    unsigned keys_given;    /* bit i: key i of dp_machine_keys() was set (dp_machine_set): a uniform
                               machine's key (peak_flops, bandwidth, latency) with a topology is
                               refused when given, even at its default (dp_machine_check_keys) */
    double peak_flops;      /* uniform machine: FLOP/s per device */
    double bandwidth_Bps;   /* uniform machine: bytes per second per link */
    double latency_s;       /* uniform machine: seconds per transfer */
    double comm_ratio;      /* uniform machine: 0, or a transfer = comm_ratio x its producer's time */
    char *topology;         /* owned: file or bundled name; NULL: the uniform / DOPPLER-compatible machine */
    char *calibration;      /* owned: calibration file; NULL: none (roofline) */
    dp_hisim_options sim;   /* the general engine's options */
    dp_topology *topo;      /* loaded by dp_machine_load (owned) */
    dp_calib *calib;        /* loaded by dp_machine_load (owned) */
} dp_machine;

/* The keys, a dp_schema table ended by an entry with key NULL, in the order of the list above
 * (the command's getopt ids are DP_OPT_MACHINE + this index, experiments/cli.h). Kinds: devices,
 * chunks, streams integers (1..4096, 1..1024, 1..1024; streams not given: the topology's, else 1);
 * peak_flops and bandwidth numbers in [1e-300, 1e30], latency, comm_ratio, memory_penalty in
 * [0, 1e30]; memory_limit bytes in (0, 1e30] or "topology" (DP_HISIM_MEMORY_TOPOLOGY); topology
 * and calibration names; transfer fixed|fifo|maxmin, mode async|bsp, queue fifo|priority,
 * memory_policy error|penalty, copy_engines off|on. */
const dp_schema_key *dp_machine_keys(void);

/* The keys as a config's sections (one, the top level), for doppler config machine and the man
 * page. */
const dp_schema_section *dp_machine_sections(void);

/* Index of key (its name, or its option spelling with or without "--", '-' or '_') in
 * dp_machine_keys(), or -1. */
int dp_machine_key_index(const char *key);

/* Defaults: 4 devices; uniform machine 1e13 FLOP/s, 1.2e10 B/s, 1e-5 s (a PCIe Gen3 x16 class
 * GPU box); no topology; dp_hisim_options_init's simulator options. */
void dp_machine_init(dp_machine *m);

/* Free what the machine owns (names, loaded topology and calibration) and re-initialise it (a
 * second free is harmless); the struct itself is the caller's. NULL is a no-op. */
void dp_machine_free(dp_machine *m);

/* A machine on the heap, for bindings that should not lay out dp_machine (Python's Machine and
 * Engine): dp_machine_alloc gives dp_machine_init's defaults, NULL with DP_ENOMEM;
 * dp_machine_destroy frees what it owns and the machine itself (NULL is a no-op). Fill it with
 * dp_machine_set and dp_machine_load as any machine. */
dp_machine *dp_machine_alloc(dp_error *err);
void dp_machine_destroy(dp_machine *m);

/* Reading a machine without laying out dp_machine. m non-NULL (unchecked).
 *   dp_machine_get_n_devices: the device count (the topology's once loaded).
 *   dp_machine_get_device_name: device d's name in the loaded topology; NULL without a loaded
 *     topology or for d out of range (a uniform machine's devices have numbers, no names).
 * dp_machine_set_trace: on 1 makes engines allocated on m keep the general engine's rate and
 * channel logs for dp_engine_write_trace (dp_hisim_options.trace), 0 not (the default). */
int dp_machine_get_n_devices(const dp_machine *m);
const char *dp_machine_get_device_name(const dp_machine *m, int d);
void dp_machine_set_trace(dp_machine *m, int on);

/* Set one key (a name or an option spelling, see dp_machine_key_index) from its text. Errors
 * (DP_EINVAL): unknown key, bad value; the message names the key as spelled, the accepted
 * values and the value given. Setting
 * "topology" or "calibration" after dp_machine_load drops the loaded one. */
int dp_machine_set(dp_machine *m, const char *key, const char *value, dp_error *err);

/* Set one key from a JSON value: a string, an integer, a real or a boolean (copy_engines),
 * converted to the text dp_machine_set reads. */
int dp_machine_set_json(dp_machine *m, const char *key, const json_t *value, dp_error *err);

/* A bundled data file "data/REL" (or "REL"): as given when readable from the working folder,
 * else under $DOPPLER_DATA, else under the folder given to dp_machine_data_dir_set, else under
 * the installed data folder (DP_DATADIR); written into buf (cap bytes) and returned, NULL when
 * none is readable or a path does not fit in cap bytes (PATH_MAX is always enough; a path cut
 * short is never tried or returned). */
const char *dp_machine_data_file(const char *rel, char *buf, size_t cap);

/* The bundled data folder of a program that embeds the library and knows it better than
 * DP_DATADIR (the Python package: the folder `make install` recorded, or the checkout's data/),
 * searched after $DOPPLER_DATA and before DP_DATADIR, for this process; NULL or "" forgets it.
 * The package once wrote $DOPPLER_DATA into its process's environment instead, which every child
 * process and later getenv then saw (issue 28). Not thread-safe against concurrent look-ups: set
 * it once, at start. Errors: a path of PATH_MAX bytes or more (DP_EINVAL; the folder is then
 * unchanged). */
int dp_machine_data_dir_set(const char *dir, dp_error *err);

/* The folder dp_machine_data_dir_set gave, "" when none. */
const char *dp_machine_data_dir(void);

/* The file of a topology given as a FILE or a bundled NAME ("dgx1-v100" or "dgx1-v100.json",
 * found as dp_machine_data_file finds "data/topologies/NAME.json"); NULL when neither exists or
 * the path does not fit in cap bytes. Writes into buf (cap bytes) and returns it. */
const char *dp_machine_topology_path(const char *name_or_file, char *buf, size_t cap);

/* DP_EIO with the message of a topology name found nowhere: "NAME: no such topology file, and no
 * bundled topology of that name (looked in FOLDERS ...; outside the checkout, set DOPPLER_DATA to
 * its data folder, when unset; doppler topology list)"; every command says it so (a sweep said
 * "no bundled topology of that name" alone, where the data folder was not found). */
int dp_machine_topology_missing(const char *name, dp_error *err);

/* Load the topology and calibration named by m (if any, and not loaded yet); n_devices becomes
 * the topology's. Errors name the file, or list the folders searched for a bundled name. */
int dp_machine_load(dp_machine *m, dp_error *err);

/* DP_OK, or DP_EINVAL naming the key when a key is given where it cannot apply, with topology
 * the machine's topology option (or a sweep run's; NULL: none). With a topology, whose devices
 * and links give what they describe: peak_flops, bandwidth and latency when given (keys_given)
 * or off their defaults, even given at their default values; comm_ratio when above 0. Refused
 * when off their defaults only (a value at the default is the "off" of what it does, which a
 * sweep's grid may give every machine): transfer fifo or maxmin without a topology; chunks
 * without transfer fifo; memory_policy without memory_limit; memory_penalty without
 * memory_limit and memory_policy penalty; copy_engines without a topology. Refused whenever
 * given: calibration without a topology, memory_limit topology without a topology.
 * dp_machine_costs checks it; a sweep checks it for every run before any runs (dp_run_check). */
int dp_machine_check_keys(const dp_machine *m, const char *topology, dp_error *err);

/* The cost tables of g on the machine (loading it first): with a topology, its cost model
 * (roofline or calibration, dp_costmodel.h); else the graph's own costs for time graphs
 * (DOPPLER-compatible) and the uniform machine for physical graphs. Without a topology and
 * without "devices" set, n_devices becomes the count the graph was made for (dp_graph.devices)
 * when it says. Caller frees. NULL with DP_ERANGE when a makespan of g on this machine could be
 * inf, NaN or overflowing (dp_cost_check), the message naming the op or edge and the machine keys
 * behind it (peak_flops; bandwidth and latency; comm_ratio; the topology and calibration). */
dp_cost *dp_machine_costs(dp_machine *m, const dp_graph *g, dp_error *err);
/* The compute streams the engine runs on m (each device's: streams, else the topology's, else
 * 1), summed into c->streams_total, the lower bound's work term's divisor (dp_cost_lower_bound).
 * dp_machine_costs sets it; costs made elsewhere (a heterogeneous example's own processors,
 * dp_hetero.h) take it from here: their bound divided by the device count alone, so with
 * --streams 2 it was 20 beside a makespan of 10 (a review). */
void dp_machine_cost_streams(const dp_machine *m, dp_cost *c);

/* A heterogeneous scheduling example (dp_hetero_read_format: HEFT's .in, the CSV triple) read as
 * every command reads it: its own processors, op times and links, so m's keys that describe a
 * machine are refused (DP_EINVAL naming the key: devices given, topology, comm_ratio above 0,
 * peak_flops, bandwidth or latency given: comm_ratio was ignored without a word, a review), then
 * m->n_devices is the example's and (*c)->streams_total m's streams (dp_machine_cost_streams).
 * *g and *c are the caller's to free; on error both NULL. Errors: those, dp_hetero_read_format's. */
int dp_machine_hetero_read(dp_machine *m, const char *path, const char *format, dp_graph **g, dp_cost **c,
                           dp_error *err);

/* 1 when a comm_ratio costs g's transfers: a graph in FLOPs and bytes, or a graph of times none
 * of whose edges carries a transfer time of its own (Kasahara STG files, DOT task graphs without
 * sizes: costed so, DOPPLER's rule applies to any task graph; told by content, so a DOPPLER file
 * whose every transfer time is 0 is one too); 0 for a graph of times with its own transfer times
 * (DOPPLER's files, HEFT examples), which keeps them. */
int dp_machine_comm_ratio_applies(const dp_graph *g);

/* The device count g was made for when the machine has another (a "devices" given, or a
 * topology's), for a warning; 0 when they agree or the graph does not say. */
int dp_machine_devices_differ(const dp_machine *m, const dp_graph *g);

/* The warnings about m on g besides the device count (dp_machine_devices_differ, whose words
 * are the caller's), one line each, ended by '\n', in buf (size bytes: as much of the text as
 * fits, always terminated when size > 0; buf may be NULL when size is 0): each uniform machine key that changes nothing on g ("KEY VALUE
 * changes nothing on graph G: why"): comm_ratio above 0 when g's transfers have times of their
 * own (dp_machine_comm_ratio_applies); peak_flops, bandwidth and latency, when given
 * (keys_given), on a graph of times (they cost FLOPs and bytes), and bandwidth and latency under
 * a comm_ratio that applies (a transfer then takes comm_ratio times its producer's time, whatever
 * its bytes); and a calibration that names only some of the topology's devices (the others are
 * timed by their roofline), or whose measured ops include none of g's ops as g is (the
 * calibration was profiled on other graphs or at another scale: every op is timed by its kind's
 * fit; g must be the graph as simulated, scaled as it runs). Call it after dp_machine_costs (the
 * topology and calibration loaded). Returns the length of the whole text, as snprintf does: when
 * it is size or more the text was cut, and a buffer of that length + 1 holds it (a graph's name
 * has no bound). The command prints them on stderr (dp_cli_warn_machine) and the Python package
 * raises each as a UserWarning, so both say the same. */
size_t dp_machine_warnings(const dp_machine *m, const dp_graph *g, char *buf, size_t size);

/* 1 when only the general engine (dp_hisim) simulates this machine: a topology, or a simulator
 * option other than the DOPPLER-compatible defaults. */
int dp_machine_general(const dp_machine *m);

/* The most compute streams any device runs at once: the streams option, else the topology's
 * (loaded) devices' streams, else 1. */
int dp_machine_max_streams(const dp_machine *m);

/* 1 when the engine treats devices a and b (0..n_devices-1) alike beyond their cost tables
 * (which may still differ: compare those too), so that swapping them in every assignment
 * changes no makespan: on the DOPPLER-compatible engine always; on the general engine when both
 * run as many streams, have as many copy engines (when the topology's limits apply), as much
 * memory (under --memory-limit topology) and the same calibrated interference, and transfers
 * are of fixed delays: under fifo and maxmin the links a device's transfers share depend on
 * where it sits in the topology, which this does not compare (0 for a != b). For the exact
 * search's device symmetry (dp_search.h). The topology must be loaded (dp_machine_load). */
int dp_machine_devices_alike(const dp_machine *m, int a, int b);

/* The machine as a JSON object of its keys, from the table (dp_schema_to_json): "devices",
 * then those that differ from the defaults, in the table's order; the uniform machine's
 * (peak_flops, bandwidth, latency, comm_ratio) only without a topology. For records and
 * trajectories. Caller decrefs; NULL when out of memory. */
json_t *dp_machine_to_json(const dp_machine *m);

#ifdef __cplusplus
}
#endif
#endif
