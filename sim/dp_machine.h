/* dp_machine.h: the machine an assignment runs on, as every command, sweep, method, trainer and
 * the Python interface describe it: a uniform machine (n identical devices, one peak rate, one
 * link bandwidth and latency) or a topology (dp_topology.h) with an optional calibration
 * (dp_calib.h), plus every option of the general engine (dp_hisim_options).
 *
 * A machine is filled key by key from text (the command line) or JSON (sweep configs, Python):
 * both go through dp_machine_set, so a key means one thing wherever it is written. The keys:
 *
 *   devices         number of identical devices (1..4096; default 4); with a topology it must
 *                   equal the topology's device count when given
 *   peak_flops      uniform machine: FLOP/s per device (default 1e13)
 *   bandwidth       uniform machine: bytes/s per link (default 1.2e10)
 *   latency         uniform machine: seconds per transfer (default 1e-5)
 *   topology        a topology JSON file, or the name of a bundled one (data/topologies/NAME.json
 *                   under the working folder, $DOPPLER_DATA, the folder dp_machine_data_dir_set
 *                   named, or the installed data folder)
 *   calibration     a calibration JSON file (needs a topology)
 *   transfer        transfer model: fixed, fifo or maxmin (fifo and maxmin need a topology)
 *   chunks          fifo: chunks per transfer (1..1024)
 *   mode            async (work-conserving) or bsp (bulk-synchronous, level by level)
 *   streams         compute streams per device (1..1024; default: the topology's, else 1)
 *   queue           fifo or priority
 *   memory_limit    bytes per device, or "topology" (each device's memory_bytes)
 *   memory_policy   error or penalty
 *   memory_penalty  penalty policy's weight (>= 0)
 *   copy_engines    on or off (limit concurrent transfers by the topology's copy engines)
 *   comm_ratio      uniform machine, graphs in FLOPs and bytes and graphs of times whose edges
 *                   carry no transfer cost of their own (STG, DOT without sizes): 0 (default: a
 *                   transfer takes latency + bytes / bandwidth, or the file's time), or R > 0: a
 *                   transfer of an op's output takes R times the op's time, latency 0 (DOPPLER's
 *                   rule; R = 4 in all six of their graph files, which keep their own times;
 *                   dp_cost_set_comm_ratio, dp_machine_comm_ratio_applies)
 *
 * Each key also has its command-line spelling (`--transfer-model`, `--peak-flops`, ...:
 * dp_machine_key.option). dp_machine_costs materialises the cost tables of a graph on the
 * machine; dp_engine.h simulates on it.
 */
#ifndef DP_MACHINE_H
#define DP_MACHINE_H

#include <jansson.h>

#include "dp_calib.h"
#include "dp_cost.h"
#include "dp_error.h"
#include "dp_graph.h"
#include "dp_hisim.h"
#include "dp_topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_machine {
    int n_devices;          /* devices (default 4); with a topology: its count after dp_machine_load */
    int devices_given;      /* 1 when "devices" was set explicitly */
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

/* One settable key: its JSON / sweep name and its command-line option name (without "--"). */
typedef struct dp_machine_key {
    const char *name;
    const char *option;
} dp_machine_key;

/* The keys, ended by an entry with name NULL, in the order of the list above (the command's
 * getopt ids are DP_OPT_MACHINE + this index, experiments/cli.h). */
const dp_machine_key *dp_machine_keys(void);

/* Index of key (its name, or its option spelling with or without "--") in dp_machine_keys(),
 * or -1. */
int dp_machine_key_index(const char *key);

/* Key i of dp_machine_keys() (i from 0): its name and its option spelling (without "--"), NULL
 * past the end (bindings read the table through these, not laying out dp_machine_key). */
const char *dp_machine_key_name(int i);
const char *dp_machine_key_option(int i);

/* Defaults: 4 devices; uniform machine 1e13 FLOP/s, 1.2e10 B/s, 1e-5 s (a PCIe Gen3 x16 class
 * GPU box); no topology; dp_hisim_options_init's simulator options. */
void dp_machine_init(dp_machine *m);

/* Free what the machine owns (names, loaded topology and calibration) and re-initialise it. */
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
 * none is readable. */
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

/* The file of a topology given as a FILE or a bundled NAME; NULL when neither exists. Writes
 * into buf (cap bytes) and returns it. */
const char *dp_machine_topology_path(const char *name_or_file, char *buf, size_t cap);

/* Load the topology and calibration named by m (if any, and not loaded yet); n_devices becomes
 * the topology's. Errors name the file, or list the folders searched for a bundled name. */
int dp_machine_load(dp_machine *m, dp_error *err);

/* The cost tables of g on the machine (loading it first): with a topology, its cost model
 * (roofline or calibration, dp_costmodel.h); else the graph's own costs for time graphs
 * (DOPPLER-compatible) and the uniform machine for physical graphs. Without a topology and
 * without "devices" set, n_devices becomes the count the graph was made for (dp_graph.devices)
 * when it says. Caller frees. NULL with DP_ERANGE when a makespan of g on this machine could be
 * inf, NaN or overflowing (dp_cost_check), the message naming the op or edge and the machine keys
 * behind it (peak_flops; bandwidth and latency; comm_ratio; the topology and calibration). */
dp_cost *dp_machine_costs(dp_machine *m, const dp_graph *g, dp_error *err);

/* 1 when a comm_ratio costs g's transfers: a graph in FLOPs and bytes, or a graph of times none
 * of whose edges carries a transfer time of its own (Kasahara STG files, DOT task graphs without
 * sizes: costed so, DOPPLER's rule applies to any task graph); 0 for a graph of times with its
 * own transfer times (DOPPLER's files, HEFT examples), which keeps them. */
int dp_machine_comm_ratio_applies(const dp_graph *g);

/* The device count g was made for when the machine has another (a "devices" given, or a
 * topology's), for a warning; 0 when they agree or the graph does not say. */
int dp_machine_devices_differ(const dp_machine *m, const dp_graph *g);

/* 1 when only the general engine (dp_hisim) simulates this machine: a topology, or a simulator
 * option other than the DOPPLER-compatible defaults. */
int dp_machine_general(const dp_machine *m);

/* The most compute streams any device runs at once: the streams option, else the topology's
 * (loaded) devices' streams, else 1. */
int dp_machine_max_streams(const dp_machine *m);

/* The machine as a JSON object of its keys (only those that differ from the defaults, plus
 * "devices"), for records and trajectories. Caller decrefs. */
json_t *dp_machine_to_json(const dp_machine *m);

#ifdef __cplusplus
}
#endif
#endif
