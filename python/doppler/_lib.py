"""Loading libdoppler and declaring the C interface the package uses (ctypes, no compiler).

The structures below mirror the public C headers field by field (models/dp_graph.h,
machine/dp_cost.h, sim/dp_machine.h, sim/dp_hisim.h, sim/dp_engine.h, sim/dp_oracle.h,
policy/dp_place.h, policy/dp_env.h); tests/python/test_layout.py checks the mirrors against what
the library itself writes, so a header change that is not carried here fails `make check`.

Where the library is found, in order: $DOPPLER_LIB (a path to libdoppler.so), the folder
`make install` recorded in _paths.py, the build tree this package sits in (../../.libs, or
$top_builddir/.libs), then the system's linker path (ctypes.util.find_library).

Bundled data (topologies by name): $DOPPLER_DATA when set, else the data folder that goes with the
library found (the installed one `make install` recorded, or the checkout's data/), handed to the
library (dp_machine_data_dir_set), else the library's own installed folder. Importing the package
changes no environment variable (it once set $DOPPLER_DATA, which every child process inherited).
"""

import ctypes
import ctypes.util
import os

from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int64, c_long, c_size_t,
                    c_uint64, c_void_p)

_here = os.path.dirname(os.path.abspath(__file__))
_tree = os.path.dirname(os.path.dirname(_here))  # the source tree when run from a checkout


def _candidates():
    """(library path, its bundled data folder or None) in the order tried."""
    env = os.environ.get("DOPPLER_LIB")
    if env:
        yield env, None
        return
    try:
        from . import _paths  # written by `make install`
        # the installed data, also when make install was given another prefix than configure
        yield os.path.join(_paths.LIBDIR, "libdoppler.so.1"), _paths.DATADIR
        yield os.path.join(_paths.LIBDIR, "libdoppler.so"), _paths.DATADIR
    except ImportError:
        pass
    tree_data = os.path.join(_tree, "data")  # bundled topologies by name, as the command run from the tree finds them
    builddir = os.environ.get("top_builddir")
    if builddir:
        yield os.path.join(builddir, ".libs", "libdoppler.so"), tree_data
    yield os.path.join(_tree, ".libs", "libdoppler.so"), tree_data
    found = ctypes.util.find_library("doppler")
    if found:
        yield found, None


def _load():
    tried = []
    for path, data in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        return lib, path, data
    raise ImportError("doppler: libdoppler not found (tried: %s); build it (make) or set DOPPLER_LIB to the "
                      "path of libdoppler.so" % (", ".join(tried) or "nothing"))


lib, path, _data = _load()

# ---- errors (models/dp_error.h) ----

DP_OK, DP_EINVAL, DP_EIO, DP_ENOMEM, DP_ECYCLE, DP_ERANGE, DP_EUNSUPPORTED = 0, -1, -2, -3, -4, -5, -6
DP_ERROR_MSG_MAX = 1024


class dp_error(Structure):
    _fields_ = [("code", c_int), ("msg", c_char * DP_ERROR_MSG_MAX)]


# ---- the graph (models/dp_graph.h) ----

DP_GRAPH_MAX_DIMS = 8


class dp_graph(Structure):
    _fields_ = [
        ("n_ops", c_int), ("n_edges", c_int), ("cost_kind", c_int), ("time_scale", c_double),
        ("time_unit", c_char_p), ("name", c_char_p), ("source", c_char_p), ("devices", c_int),
        ("op_name", POINTER(c_char_p)), ("op_kind", POINTER(c_char_p)), ("op_type", POINTER(c_char_p)),
        ("op_einsum", POINTER(c_char_p)), ("op_ndim", POINTER(c_int)), ("op_shape", POINTER(c_int64)),
        ("work", POINTER(c_double)), ("out_size", POINTER(c_double)),
        ("edge_src", POINTER(c_int)), ("edge_dst", POINTER(c_int)), ("edge_size", POINTER(c_double)),
        ("succ_ptr", POINTER(c_int)), ("pred_ptr", POINTER(c_int)), ("pred_edge", POINTER(c_int)),
        ("n_unique_pred", POINTER(c_int)), ("n_repeated_edges", c_int),
        ("topo", POINTER(c_int)), ("sources", POINTER(c_int)), ("n_sources", c_int),
        ("sinks", POINTER(c_int)), ("n_sinks", c_int),
    ]


# ---- cost tables (machine/dp_cost.h) ----

class dp_cost(Structure):
    _fields_ = [
        ("n_ops", c_int), ("n_edges", c_int), ("n_devices", c_int),
        ("op_time", POINTER(c_double)), ("edge_data", POINTER(c_double)),
        ("latency", POINTER(c_double)), ("inv_bw", POINTER(c_double)),
        ("homogeneous", c_int), ("time_scale", c_double),
    ]


# ---- the machine (sim/dp_hisim.h options, sim/dp_machine.h) ----

class dp_hisim_options(Structure):
    _fields_ = [
        ("transfer_model", c_int), ("chunks", c_int), ("mode", c_int), ("streams", c_int), ("queue", c_int),
        ("memory_limit", c_double), ("memory_policy", c_int), ("memory_penalty", c_double),
        ("copy_engines", c_int), ("trace", c_int), ("calibration", c_void_p),
    ]


class dp_topology_device(Structure):
    _fields_ = [
        ("name", c_char_p), ("kind", c_int), ("peak_flops", c_double), ("mem_bandwidth_Bps", c_double),
        ("memory_bytes", c_double), ("efficiency", c_double), ("launch_overhead_s", c_double),
        ("copy_engines", c_int), ("streams", c_int),
    ]


class dp_topology_head(Structure):
    """The leading fields of dp_topology (machine/dp_topology.h): names, counts and devices."""
    _fields_ = [
        ("name", c_char_p), ("source", c_char_p), ("description", c_char_p), ("path", c_char_p),
        ("n_devices", c_int), ("n_nodes", c_int), ("n_links", c_int), ("n_channels", c_int),
        ("dev", POINTER(dp_topology_device)),
    ]


class dp_machine(Structure):
    _fields_ = [
        ("n_devices", c_int), ("devices_given", c_int), ("peak_flops", c_double), ("bandwidth_Bps", c_double),
        ("latency_s", c_double), ("comm_ratio", c_double), ("topology", c_char_p), ("calibration", c_char_p), ("sim", dp_hisim_options),
        ("topo", POINTER(dp_topology_head)), ("calib", c_void_p),
    ]


# ---- the engine (sim/dp_oracle.h, sim/dp_engine.h) ----

class dp_oracle(Structure):
    _fields_ = [("name", c_char_p), ("cost", c_void_p), ("ctx", c_void_p), ("cost_bounded", c_void_p),
                ("engine", c_void_p)]


class dp_engine_schedule(Structure):
    _fields_ = [
        ("makespan", c_double), ("cost", c_double), ("n_devices", c_int),
        ("busy", POINTER(c_double)), ("op_start", POINTER(c_double)), ("op_end", POINTER(c_double)),
        ("op_ready", POINTER(c_double)), ("xfer_start", POINTER(c_double)), ("xfer_end", POINTER(c_double)), ("mem_peak", POINTER(c_double)),
        ("mem_excess", c_double), ("n_transfers", c_long), ("transfer_volume", c_double), ("n_events", c_long),
    ]


# ---- placement (policy/dp_place.h) ----

class dp_place_options(Structure):
    _fields_ = [
        ("seed", c_uint64), ("device", c_int), ("checkpoint", c_char_p), ("samples", c_int), ("budget", c_long),
        ("config", c_char_p), ("oracle", POINTER(dp_oracle)), ("machine", POINTER(dp_machine)),
        ("refine", c_char_p), ("refine_budget", c_long), ("proposals", c_char_p), ("best_seen", c_int), ("proposal", POINTER(c_float)),
        ("list_append_only", c_int), ("list_ties", c_int),
        ("progress", c_void_p), ("progress_ctx", c_void_p),
        ("prefix_simulations", POINTER(c_long)),
    ]


class dp_schema_key(Structure):
    """A key of a config table (models/dp_schema.h)."""
    _fields_ = [("key", c_char_p), ("type", c_int), ("offset", ctypes.c_size_t), ("lo", c_double), ("hi", c_double),
                ("choices", c_char_p), ("size", ctypes.c_size_t), ("default", c_char_p), ("help", c_char_p),
                ("check", c_void_p), ("option", c_char_p), ("flags", ctypes.c_uint), ("when", c_void_p)]


class dp_schema_section(Structure):
    """One JSON object of a config: its name ("" for the top level, "adam", "stages.S"), its table
    and the keys it has outside the table (NULL-ended)."""
    _fields_ = [("name", c_char_p), ("keys", POINTER(dp_schema_key)), ("help", c_char_p),
                ("others", POINTER(c_char_p))]


class dp_place_method(Structure):
    _fields_ = [("name", c_char_p), ("description", c_char_p), ("fn", c_void_p), ("simulates", c_int),
                ("bytes_op", c_double), ("bytes_edge", c_double), ("bytes_op_device", c_double),
                ("options", ctypes.c_uint), ("list_schedule", c_void_p), ("sweep_run", c_int),
                ("sweep_params", POINTER(c_char_p)), ("config", c_void_p)]


# ---- workload generators (models/dp_gen.h) ----

DP_GEN_INT, DP_GEN_INT64, DP_GEN_DOUBLE, DP_GEN_ULONG, DP_GEN_CHOICE, DP_GEN_FLAG = range(6)


class dp_gen_param(Structure):
    _fields_ = [
        ("name", c_char_p), ("type", c_int), ("offset", c_size_t), ("lo", c_double), ("hi", c_double),
        ("choices", c_char_p), ("help", c_char_p),
    ]


class dp_gen_model(Structure):
    _fields_ = [
        ("name", c_char_p), ("description", c_char_p), ("opts_size", c_size_t), ("defaults", c_void_p),
        ("generate", c_void_p), ("params", POINTER(dp_gen_param)),
    ]


# ---- the assignment environment (policy/dp_env.h) ----

DP_ENV_N_DEVICE_FEATURES = 5
DP_ENV_STATE_APPEND, DP_ENV_STATE_ENGINE = 0, 1
DP_ENV_FEATURES_DOPPLER, DP_ENV_FEATURES_ENGINE = 0, 1


class dp_env(Structure):
    _fields_ = [
        ("g", POINTER(dp_graph)), ("c", POINTER(dp_cost)), ("n_ops", c_int), ("n_devices", c_int),
        ("step", c_int), ("assignment", POINTER(c_int)), ("order", POINTER(c_int)), ("ready", POINTER(c_int)),
        ("n_ready", c_int), ("ready_order", c_int), ("ready_pos", POINTER(c_int)),
        ("unassigned_preds", POINTER(c_int)), ("est_start", POINTER(c_double)), ("est_end", POINTER(c_double)),
        ("dev_avail", POINTER(c_double)), ("dev_work", POINTER(c_double)), ("blevel", POINTER(c_double)),
        ("tlevel", POINTER(c_double)), ("est_ready", POINTER(c_double)),
        ("state", c_int), ("engine", c_void_p), ("general", c_int), ("first_copy", POINTER(ctypes.c_ubyte)),
        ("dev_first", POINTER(c_int)), ("dev_lastop", POINTER(c_int)), ("op_next", POINTER(c_int)),
        ("cand_v", c_int), ("cand_step", c_int), ("cand_state", POINTER(ctypes.c_ubyte)),
        ("cand_append", POINTER(ctypes.c_ubyte)), ("cand_start", POINTER(c_double)),
        ("cand_ready", POINTER(c_double)), ("cand_sched", POINTER(c_double)), ("n_resim", c_long),
        ("prefix", c_void_p), ("by_rank", c_void_p), ("general_exact_max", c_int), ("surrogate", c_void_p),
    ]


# ---- prototypes ----

E = POINTER(dp_error)
G = POINTER(dp_graph)
C = POINTER(dp_cost)
M = POINTER(dp_machine)
PD = POINTER(c_double)
PI = POINTER(c_int)


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


dp_graph_read = _fn("dp_graph_read", G, c_char_p, c_char_p, E)
dp_graph_write = _fn("dp_graph_write", c_int, G, c_char_p, c_char_p, E)
dp_graph_free = _fn("dp_graph_free", None, G)
dp_gen_models = _fn("dp_gen_models", POINTER(dp_gen_model))
dp_gen_by_name = _fn("dp_gen_by_name", G, c_char_p, c_int, POINTER(c_char_p), POINTER(c_char_p), E)
dp_gen_param_default = _fn("dp_gen_param_default", None, POINTER(dp_gen_model), POINTER(dp_gen_param), c_char_p,
                           c_size_t)
dp_hetero_is_hetero_path = _fn("dp_hetero_is_hetero_path", c_int, c_char_p)
dp_hetero_read = _fn("dp_hetero_read", c_int, c_char_p, POINTER(G), POINTER(C), E)

dp_cost_free = _fn("dp_cost_free", None, C)
dp_cost_levels = _fn("dp_cost_levels", None, G, C, PD, PD)
dp_cost_critical_path = _fn("dp_cost_critical_path", c_double, G, C)
dp_cost_lower_bound = _fn("dp_cost_lower_bound", c_double, G, C)

dp_machine_keys = _fn("dp_machine_keys", POINTER(dp_schema_key))
dp_schema_option_text = _fn("dp_schema_option_text", c_char_p, POINTER(dp_schema_key), c_char_p, ctypes.c_size_t)
dp_machine_key_index = _fn("dp_machine_key_index", c_int, c_char_p)
dp_machine_init = _fn("dp_machine_init", None, M)
dp_machine_free = _fn("dp_machine_free", None, M)
dp_machine_set = _fn("dp_machine_set", c_int, M, c_char_p, c_char_p, E)
dp_machine_load = _fn("dp_machine_load", c_int, M, E)
dp_machine_data_dir_set = _fn("dp_machine_data_dir_set", c_int, c_char_p, E)
dp_machine_data_dir = _fn("dp_machine_data_dir", c_char_p)
if _data and os.path.isdir(os.path.join(_data, "topologies")):
    # searched after $DOPPLER_DATA, before the library's installed folder (machine/dp_machine.h)
    dp_machine_data_dir_set(os.fsencode(_data), None)
dp_h5io_traj_check = _fn("dp_h5io_traj_check", c_int, c_char_p, E)


# ---- trajectory files (policy/dp_h5io.h: the one reader of the layout) ----

class dp_h5io_traj_episode(Structure):
    _fields_ = [("stage", ctypes.c_int32), ("episode", c_int64), ("seed", c_uint64), ("makespan", c_double),
                ("reward", c_double), ("wall_s", c_double), ("lr", c_double), ("epsilon", c_double),
                ("sel_agree", c_double), ("plc_agree", c_double), ("step_offset", c_int64), ("n_steps", ctypes.c_int32)]


class dp_h5io_traj_step(Structure):
    _fields_ = [("sel_op", ctypes.c_int32), ("sel_logp", c_float), ("ready", ctypes.c_int32),
                ("plc_device", ctypes.c_int32), ("plc_logp", c_float)]


class dp_h5io_traj_eval(Structure):
    _fields_ = [("stage", ctypes.c_int32), ("episode", c_int64), ("makespan", c_double), ("best", c_double),
                ("simulations", c_int64), ("unix_s", c_double)]


class dp_h5io_traj(Structure):
    _fields_ = [("version", c_int), ("n_ops", c_int), ("n_devices", c_int),
                ("graph", c_char_p), ("oracle", c_char_p), ("time_unit", c_char_p), ("config_json", c_char_p),
                ("run_id", c_char_p), ("n_episodes", c_long), ("n_steps", c_long), ("n_evaluations", c_long),
                ("episodes", POINTER(dp_h5io_traj_episode)), ("steps", POINTER(dp_h5io_traj_step)),
                ("evaluations", POINTER(dp_h5io_traj_eval))]


dp_h5io_traj_read = _fn("dp_h5io_traj_read", c_int, c_char_p, POINTER(dp_h5io_traj), E)
dp_h5io_traj_free = _fn("dp_h5io_traj_free", None, POINTER(dp_h5io_traj))
dp_machine_costs = _fn("dp_machine_costs", C, M, G, E)
dp_machine_general = _fn("dp_machine_general", c_int, M)
dp_machine_devices_differ = _fn("dp_machine_devices_differ", c_int, M, G)
dp_machine_to_json = _fn("dp_machine_to_json", c_void_p, M)
# Jansson (a dependency of libdoppler, reached through its handle): a fresh object from
# dp_machine_to_json has one reference, so json_delete is what json_decref (an inline) would call.
json_dumps = _fn("json_dumps", c_void_p, c_void_p, c_size_t)
json_delete = _fn("json_delete", None, c_void_p)
libc_free = _fn("free", None, c_void_p)

# the problem (sim/dp_problem.h): an opaque handle, read through its accessors
dp_problem_alloc = _fn("dp_problem_alloc", c_void_p, G, M, E)
dp_problem_alloc_with_costs = _fn("dp_problem_alloc_with_costs", c_void_p, G, C, M, E)
dp_problem_free = _fn("dp_problem_free", None, c_void_p)
dp_problem_costs = _fn("dp_problem_costs", C, c_void_p)
dp_problem_engine = _fn("dp_problem_engine", c_void_p, c_void_p)
dp_engine_run = _fn("dp_engine_run", c_int, c_void_p, PI, PD, POINTER(dp_engine_schedule), E)
dp_engine_run_batch = _fn("dp_engine_run_batch", c_int, c_void_p, c_long, PI, PD, PD, PD, PD, E)
dp_engine_transfers = _fn("dp_engine_transfers", None, c_void_p, PI, POINTER(dp_engine_schedule), PD, PD)
dp_engine_oracle = _fn("dp_engine_oracle", dp_oracle, c_void_p)
dp_engine_is_general = _fn("dp_engine_is_general", c_int, c_void_p)
dp_engine_simulations = _fn("dp_engine_simulations", c_long, c_void_p)
dp_engine_prefix_simulations = _fn("dp_engine_prefix_simulations", c_long, c_void_p)
dp_engine_write_trace = _fn("dp_engine_write_trace", c_int, c_void_p, PI, c_char_p, E)

dp_place_options_init = _fn("dp_place_options_init", None, POINTER(dp_place_options))
dp_place_methods = _fn("dp_place_methods", POINTER(dp_place_method))
dp_place_check_options = _fn("dp_place_check_options", c_int, c_char_p, POINTER(dp_place_options), E)
dp_place_method_size = _fn("dp_place_method_size", ctypes.c_size_t)
dp_schema_set = _fn("dp_schema_set", c_int, POINTER(dp_schema_key), c_void_p, c_char_p, c_char_p, c_char_p, c_char_p, E)
SCHEMA_SECTIONS_FN = ctypes.CFUNCTYPE(POINTER(dp_schema_section))
dp_place = _fn("dp_place", c_int, c_char_p, G, C, POINTER(dp_place_options), PI, PD, PI, E)

ENV = POINTER(dp_env)
dp_env_alloc = _fn("dp_env_alloc", ENV, G, C, E)
dp_env_free = _fn("dp_env_free", None, ENV)
dp_env_reset = _fn("dp_env_reset", None, ENV)
dp_env_step = _fn("dp_env_step", c_int, ENV, c_int, c_int, E)
dp_env_ready_index = _fn("dp_env_ready_index", c_int, ENV, c_int)
dp_env_est_start_checked = _fn("dp_env_est_start_checked", c_int, ENV, c_int, c_int, PD, E)
dp_env_device_features = _fn("dp_env_device_features", None, ENV, c_int, PD)
dp_env_set_state = _fn("dp_env_set_state", c_int, ENV, c_int, c_void_p, E)
dp_env_makespan = _fn("dp_env_makespan", c_double, ENV)
dp_env_n_features = _fn("dp_env_n_features", c_int, c_int)
# the feature function taking the output as an address (no pointer object per call: Env's hot loop)
dp_env_device_features_of_at = ctypes.CFUNCTYPE(None, ENV, c_int, c_int, c_void_p)(("dp_env_device_features_of", lib))
dp_env_cp_select = _fn("dp_env_cp_select", c_int, ENV)
dp_env_cp_place = _fn("dp_env_cp_place", c_int, ENV, c_int)


def _check_size(struct, init):
    """The structures this package allocates and the library fills (dp_machine, dp_place_options)
    must be at least as large as the library's: init them in a buffer with a guard zone after the
    mirror and check that the library wrote nothing there (a field added in the header and not
    here would be written past the end of the mirror)."""
    n = ctypes.sizeof(struct)
    guard = 256
    buf = (ctypes.c_ubyte * (n + guard))(*([0xA5] * (n + guard)))
    init(ctypes.cast(buf, POINTER(struct)))
    if any(b != 0xA5 for b in buf[n:]):
        raise ImportError("doppler: the ctypes mirror of %s in %s is smaller than the library's (%s): the C "
                          "header changed; update the mirror" % (struct.__name__, __file__, path))
    return buf


_check_size(dp_place_options, dp_place_options_init)
# the structures the library returns by value or fills (dp_engine_oracle, dp_engine_run): the same
# size as the library's, or the return writes past the mirror (a member added to dp_oracle crashed
# every place() until this check)
for _struct, _size_fn in ((dp_oracle, "dp_engine_oracle_size"), (dp_engine_schedule, "dp_engine_schedule_size"),
                          (dp_place_method, "dp_place_method_size"), (dp_schema_key, "dp_schema_key_size"),
                          (dp_schema_section, "dp_schema_section_size")):
    if ctypes.sizeof(_struct) != _fn(_size_fn, ctypes.c_size_t)():
        raise ImportError("doppler: the ctypes mirror of %s in %s has %d bytes, the library's (%s) %d: the C header "
                          "changed; update the mirror" % (_struct.__name__, __file__, ctypes.sizeof(_struct), path,
                                                          _fn(_size_fn, ctypes.c_size_t)()))
dp_machine_free(ctypes.cast(_check_size(dp_machine, dp_machine_init), M))


def text(b):
    """A C string (bytes or None) as str (None stays None)."""
    return None if b is None else b.decode("utf-8", "replace")


def encode(s, what="argument"):
    """A str, bytes or path as the C string the library reads (None stays None). Anything else is
    a TypeError, and a NUL inside a ValueError: C would read the text cut at it (trace="a\\0b"
    wrote ./a)."""
    if s is None:
        return None
    if isinstance(s, os.PathLike):
        b = os.fsencode(s)
    elif isinstance(s, str):
        b = s.encode("utf-8")
    elif isinstance(s, bytes):
        b = s
    else:
        raise TypeError("%s: expected a str or a path, got %s %r" % (what, type(s).__name__, s))
    if b"\0" in b:
        raise ValueError("%s: %r contains a NUL character (C would read only what precedes it)" % (what, s))
    return b
