"""Loading libdoppler and declaring the C interface the package uses (ctypes, no compiler).

The package holds the library's objects as opaque handles and reaches them through the library's
own functions: accessors (dp_graph_get_*, dp_cost_get_*, dp_env_get_*, dp_engine_schedule_get_*,
...) and key/value setters (dp_machine_set, dp_place_options_set), declared in the public headers
(models/dp_graph.h, machine/dp_cost.h, sim/dp_machine.h, sim/dp_engine.h, policy/dp_place.h,
policy/dp_env.h, models/dp_schema.h, models/dp_gen.h). No C struct is laid out here but dp_error
(a code and a message buffer, part of every call's contract), so a field added to a library
struct needs no change here (tests/python/test_api.py checks that no other
mirror comes back).

Where the library is found, in order: $DOPPLER_LIB (a path to libdoppler.so), the folder
`make install` recorded in _paths.py, the build tree this package sits in (../../.libs, or
$top_builddir/.libs), then the system's linker path (ctypes.util.find_library).

Bundled data (topologies by name): $DOPPLER_DATA when set, else the data folder that goes with the
library found (the installed one `make install` recorded, or the checkout's data/; for $DOPPLER_LIB
the data/ of the build tree it sits in, else of this package's checkout), handed to the
library (dp_machine_data_dir_set), else the library's own installed folder. Importing the package
changes no environment variable (it once set $DOPPLER_DATA, which every child process inherited).
"""

import ctypes
import ctypes.util
import os

from ctypes import POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int64, c_long, c_size_t, c_void_p

_here = os.path.dirname(os.path.abspath(__file__))
_tree = os.path.dirname(os.path.dirname(_here))  # the source tree when run from a checkout


def _candidates():
    """(library path, its bundled data folder or None) in the order tried."""
    env = os.environ.get("DOPPLER_LIB")
    if env:
        # the data of the build tree the library sits in (DOPPLER_LIB=<tree>/.libs/libdoppler.so),
        # else of the checkout this package sits in; None: the library's installed folder
        tops = (os.path.dirname(os.path.dirname(os.path.abspath(env))), _tree)
        yield env, next((os.path.join(t, "data") for t in tops if os.path.isdir(os.path.join(t, "data", "topologies"))),
                        None)
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


# ---- prototypes ----
# Every library object is an opaque handle (c_void_p: an int, or None for NULL); the package reads
# them through the library's accessors (dp_<module>_get_<field>) and fills them through its
# setters (dp_machine_set, dp_place_options_set), so a field added to a C struct changes nothing
# here. dp_error (above) is the one structure laid out in Python.

E = POINTER(dp_error)
H = c_void_p  # a handle: dp_graph, dp_cost, dp_machine, dp_engine, dp_env, dp_place_options, ...


class GraphHandle(c_void_p):
    """A dp_graph * the library made (dp_graph_read, dp_gen_by_name, dp_hetero_read). A subclass of
    c_void_p comes back from ctypes as itself, not as an int, so Graph accepts only what the
    library returned (Graph("x.json") gave C the str's buffer as a graph, and freed it: a review)."""


class CostHandle(c_void_p):
    """A dp_cost * the library made (dp_machine_costs, dp_problem_costs, dp_hetero_read): what
    Costs and a heterogeneous Graph accept, for the reason GraphHandle says."""


PD = POINTER(c_double)
PI = POINTER(c_int)
PCD = POINTER(c_double)  # const double * returned by an accessor (read with numpy.ctypeslib.as_array)


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


def _getters(prefix, fields, handle=H):
    """{field: accessor} for dp_<prefix>_get_<field>, fields given as {field: restype}."""
    return {f: _fn("%s_get_%s" % (prefix, f), rt, handle) for f, rt in fields.items()}


# ---- the graph (models/dp_graph.h) ----

DP_GRAPH_MAX_DIMS = 8
DP_GRAPH_COST_TIME = 1

dp_graph_read = _fn("dp_graph_read", GraphHandle, c_char_p, c_char_p, E)
dp_graph_write = _fn("dp_graph_write", c_int, H, c_char_p, c_char_p, E)
dp_graph_free = _fn("dp_graph_free", None, H)
dp_graph_set_source = _fn("dp_graph_set_source", c_int, H, c_char_p)
graph = _getters("dp_graph", {
    "n_ops": c_int, "n_edges": c_int, "cost_kind": c_int, "time_scale": c_double, "devices": c_int,
    "time_unit": c_char_p, "name": c_char_p, "source": c_char_p, "work": PCD, "out_size": PCD, "edge_src": PI,
    "edge_dst": PI, "edge_size": PCD, "succ_ptr": PI, "pred_ptr": PI, "topo": PI})
dp_graph_get_sources = _fn("dp_graph_get_sources", PI, H, PI)
dp_graph_get_sinks = _fn("dp_graph_get_sinks", PI, H, PI)
dp_graph_get_op_name = _fn("dp_graph_get_op_name", c_char_p, H, c_int)
dp_graph_get_op_kind = _fn("dp_graph_get_op_kind", c_char_p, H, c_int)
dp_graph_get_op_shape = _fn("dp_graph_get_op_shape", c_int, H, c_int, POINTER(POINTER(c_int64)))

# ---- workload generators (models/dp_gen.h) ----

dp_gen_by_name = _fn("dp_gen_by_name", GraphHandle, c_char_p, c_int, POINTER(c_char_p), POINTER(c_char_p), E)
dp_gen_model_at = _fn("dp_gen_model_at", H, c_int)
dp_gen_model_get_name = _fn("dp_gen_model_get_name", c_char_p, H)
dp_gen_model_get_description = _fn("dp_gen_model_get_description", c_char_p, H)
dp_gen_model_get_param = _fn("dp_gen_model_get_param", H, H, c_int)
dp_gen_param_get_name = _fn("dp_gen_param_get_name", c_char_p, H)
dp_gen_param_get_help = _fn("dp_gen_param_get_help", c_char_p, H)
dp_gen_param_default = _fn("dp_gen_param_default", None, H, H, c_char_p, c_size_t)
dp_hetero_format = _fn("dp_hetero_format", c_int, c_char_p, c_char_p)
dp_hetero_read_format = _fn("dp_hetero_read_format", c_int, c_char_p, c_char_p, POINTER(GraphHandle),
                            POINTER(CostHandle), E)

# ---- cost tables (machine/dp_cost.h) ----

dp_cost_free = _fn("dp_cost_free", None, H)
dp_cost_levels = _fn("dp_cost_levels", None, H, H, PD, PD)
dp_cost_critical_path = _fn("dp_cost_critical_path", c_double, H, H)
dp_cost_lower_bound = _fn("dp_cost_lower_bound", c_double, H, H)
cost = _getters("dp_cost", {
    "n_ops": c_int, "n_edges": c_int, "n_devices": c_int, "op_time": PCD, "edge_data": PCD, "latency": PCD,
    "inv_bw": PCD, "homogeneous": c_int, "time_scale": c_double})

# ---- the machine (sim/dp_machine.h) ----

dp_machine_sections = _fn("dp_machine_sections", H)
dp_schema_option_text = _fn("dp_schema_option_text", c_char_p, H, c_char_p, c_size_t)
dp_machine_key_index = _fn("dp_machine_key_index", c_int, c_char_p)
dp_machine_alloc = _fn("dp_machine_alloc", H, E)
dp_machine_destroy = _fn("dp_machine_destroy", None, H)
dp_machine_set = _fn("dp_machine_set", c_int, H, c_char_p, c_char_p, E)
dp_machine_load = _fn("dp_machine_load", c_int, H, E)
dp_machine_get_n_devices = _fn("dp_machine_get_n_devices", c_int, H)
dp_machine_get_device_name = _fn("dp_machine_get_device_name", c_char_p, H, c_int)
dp_machine_set_trace = _fn("dp_machine_set_trace", None, H, c_int)
dp_machine_data_dir_set = _fn("dp_machine_data_dir_set", c_int, c_char_p, E)
dp_machine_data_dir = _fn("dp_machine_data_dir", c_char_p)
if _data and os.path.isdir(os.path.join(_data, "topologies")):
    # searched after $DOPPLER_DATA, before the library's installed folder (machine/dp_machine.h)
    dp_machine_data_dir_set(os.fsencode(_data), None)
dp_machine_costs = _fn("dp_machine_costs", CostHandle, H, H, E)
dp_machine_general = _fn("dp_machine_general", c_int, H)
dp_machine_devices_differ = _fn("dp_machine_devices_differ", c_int, H, H)
dp_machine_warnings = _fn("dp_machine_warnings", c_size_t, H, H, c_char_p, c_size_t)
dp_machine_to_json = _fn("dp_machine_to_json", c_void_p, H)
# Jansson (a dependency of libdoppler, reached through its handle): a fresh object from
# dp_machine_to_json has one reference, so json_delete is what json_decref (an inline) would call.
json_dumps = _fn("json_dumps", c_void_p, c_void_p, c_size_t)
json_delete = _fn("json_delete", None, c_void_p)
libc_free = _fn("free", None, c_void_p)

# ---- the problem and its engine (sim/dp_problem.h, sim/dp_engine.h) ----

dp_problem_alloc = _fn("dp_problem_alloc", H, H, H, E)
dp_problem_alloc_with_costs = _fn("dp_problem_alloc_with_costs", H, H, H, H, E)
dp_problem_free = _fn("dp_problem_free", None, H)
dp_problem_costs = _fn("dp_problem_costs", CostHandle, H)
dp_problem_engine = _fn("dp_problem_engine", H, H)
dp_engine_run = _fn("dp_engine_run", c_int, H, PI, PD, c_void_p, E)
dp_engine_run_batch = _fn("dp_engine_run_batch", c_int, H, c_long, PI, PD, PD, PD, PD, E)
dp_engine_transfers = _fn("dp_engine_transfers", None, H, PI, c_void_p, PD, PD)
dp_engine_is_general = _fn("dp_engine_is_general", c_int, H)
dp_engine_simulations = _fn("dp_engine_simulations", c_long, H)
dp_engine_prefix_simulations = _fn("dp_engine_prefix_simulations", c_long, H)
dp_engine_write_trace = _fn("dp_engine_write_trace", c_int, H, PI, c_char_p, E)
dp_engine_schedule_size = _fn("dp_engine_schedule_size", c_size_t)()
schedule = _getters("dp_engine_schedule", {
    "makespan": c_double, "cost": c_double, "mem_excess": c_double, "n_transfers": c_long,
    "transfer_volume": c_double, "n_events": c_long, "busy": PCD, "op_start": PCD, "op_end": PCD, "op_ready": PCD,
    "mem_peak": PCD}, c_void_p)


def schedule_buffer():
    """Room for one dp_engine_schedule (dp_engine_schedule_size bytes, aligned for a double), for
    dp_engine_run to fill and the schedule accessors to read."""
    return (c_double * ((dp_engine_schedule_size + 7) // 8))()


# ---- placement (policy/dp_place.h; config tables: models/dp_schema.h) ----

dp_place_options_alloc = _fn("dp_place_options_alloc", H, E)
dp_place_options_free = _fn("dp_place_options_free", None, H)
dp_place_options_set = _fn("dp_place_options_set", c_int, H, c_char_p, c_char_p, E)
dp_place_options_set_engine = _fn("dp_place_options_set_engine", None, H, H)
dp_place_options_set_machine = _fn("dp_place_options_set_machine", None, H, H)
dp_place_check_options = _fn("dp_place_check_options", c_int, c_char_p, H, E)
dp_place = _fn("dp_place", c_int, c_char_p, H, H, H, PI, PD, PI, E)
dp_place_find = _fn("dp_place_find", H, c_char_p)
dp_place_method_at = _fn("dp_place_method_at", H, c_int)
dp_place_method_get_name = _fn("dp_place_method_get_name", c_char_p, H)
dp_place_method_get_description = _fn("dp_place_method_get_description", c_char_p, H)
dp_place_method_get_simulates = _fn("dp_place_method_get_simulates", c_int, H)
dp_place_method_get_config = _fn("dp_place_method_get_config", H, H)
dp_schema_section_at = _fn("dp_schema_section_at", H, H, c_int)
dp_schema_section_get_name = _fn("dp_schema_section_get_name", c_char_p, H)
dp_schema_section_get_key = _fn("dp_schema_section_get_key", H, H, c_int)
dp_schema_section_get_other = _fn("dp_schema_section_get_other", c_char_p, H, c_int)
schema_key = _getters("dp_schema_key", {"key": c_char_p, "type": c_int, "choices": c_char_p, "default": c_char_p,
                                        "help": c_char_p})
dp_schema_set = _fn("dp_schema_set", c_int, H, c_void_p, c_char_p, c_char_p, c_char_p, c_char_p, E)

# ---- the assignment environment (policy/dp_env.h) ----

DP_ENV_STATE_APPEND, DP_ENV_STATE_ENGINE = 0, 1
DP_ENV_FEATURES_DOPPLER, DP_ENV_FEATURES_ENGINE = 0, 1

dp_env_alloc = _fn("dp_env_alloc", H, H, H, E)
dp_env_free = _fn("dp_env_free", None, H)
dp_env_reset = _fn("dp_env_reset", None, H)
dp_env_step = _fn("dp_env_step", c_int, H, c_int, c_int, E)
dp_env_ready_index = _fn("dp_env_ready_index", c_int, H, c_int)
dp_env_est_start_checked = _fn("dp_env_est_start_checked", c_int, H, c_int, c_int, PD, E)
dp_env_set_state = _fn("dp_env_set_state", c_int, H, c_int, H, E)
dp_env_makespan = _fn("dp_env_makespan", c_double, H)
dp_env_n_features = _fn("dp_env_n_features", c_int, c_int)
dp_env_state_exact = _fn("dp_env_state_exact", c_int, H)
# the feature function taking the output as an address (no pointer object per call: Env's hot loop)
dp_env_device_features_of_at = ctypes.CFUNCTYPE(None, H, c_int, c_int, c_void_p)(("dp_env_device_features_of", lib))
dp_env_cp_select = _fn("dp_env_cp_select", c_int, H)
dp_env_cp_place = _fn("dp_env_cp_place", c_int, H, c_int)
env = _getters("dp_env", {
    "n_ops": c_int, "n_devices": c_int, "step": c_int, "n_ready": c_int, "n_resim": c_long, "assignment": PI,
    "ready": PI, "est_start": PCD, "est_end": PCD, "est_ready": PCD, "dev_avail": PCD, "dev_work": PCD})

# ---- trajectory files (policy/dp_h5io.h: the one reader of the layout) ----

dp_h5io_traj_check = _fn("dp_h5io_traj_check", c_int, c_char_p, E)


dp_h5io_traj_open = _fn("dp_h5io_traj_open", H, c_char_p, E)
dp_h5io_traj_close = _fn("dp_h5io_traj_close", None, H)
dp_h5io_traj_get_int = _fn("dp_h5io_traj_get_int", c_int, H, c_char_p)
dp_h5io_traj_get_text = _fn("dp_h5io_traj_get_text", c_char_p, H, c_char_p)
dp_h5io_traj_get_n_rows = _fn("dp_h5io_traj_get_n_rows", c_long, H, c_char_p)
dp_h5io_traj_column_name = _fn("dp_h5io_traj_column_name", c_char_p, c_char_p, c_int)
dp_h5io_traj_column_type = _fn("dp_h5io_traj_column_type", c_char, c_char_p, c_int)
dp_h5io_traj_get_column = _fn("dp_h5io_traj_get_column", c_int, H, c_char_p, c_char_p, c_void_p, E)


def text(b):
    """A C string (bytes or None) as str (None stays None)."""
    return None if b is None else b.decode("utf-8", "replace")


def encode(s, what="argument", optional=False):
    """A str, bytes or path as the C string the library reads: the one way a string reaches C.
    None is a TypeError unless optional (then it stays None, C's NULL: the library's default);
    anything else that is not text a TypeError, and a NUL inside a ValueError: C would read the
    text cut at it (trace="a\\0b" wrote ./a)."""
    if s is None:
        if optional:
            return None
        raise TypeError("%s: expected a str or a path, got None" % what)
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
