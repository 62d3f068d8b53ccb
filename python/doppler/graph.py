"""Dataflow graphs: read any supported format, generate any workload, read the arrays as NumPy."""

import ctypes
import os
import threading
import weakref

import numpy as np

from . import _lib
from ._errors import ClosedError, _NoCopy, check, from_status


def _array(ptr, n, dtype):
    """A read-only NumPy copy of n C elements at ptr (an empty array when n is 0)."""
    if n == 0 or not ptr:
        a = np.empty(0, dtype=dtype)
    else:
        a = np.ctypeslib.as_array(ptr, shape=(n,)).astype(dtype, copy=True)
    a.flags.writeable = False
    return a


def _frozen(a):
    """a, read-only: a cached array handed out is the graph's, not the caller's to change (edges,
    op_kinds and the degree arrays were writable, and a write changed later environments'
    features: a review)."""
    a.flags.writeable = False
    return a


def _strings(get, g, n):
    """[get(g, 0), ..., get(g, n - 1)] as str (an op's name or kind)."""
    return [_lib.text(get(g, i)) for i in range(n)]


def _counted(get, g):
    """The int64 copy of an array that an accessor returns with its count (sources, sinks)."""
    n = ctypes.c_int()
    ptr = get(g, ctypes.byref(n))
    return _array(ptr, n.value, np.int64)


class Graph(_NoCopy):
    """A dataflow graph (libdoppler's dp_graph: immutable once built).

    Make one with Graph.read(path) or Graph.generate(model, **params). Arrays are NumPy copies,
    read-only: `work` and `out_size` per op, `edge_src`, `edge_dst` and `edge_size` per edge, in the
    library's edge order (grouped by source). What the numbers mean depends on `cost_kind`:
    "physical" (work in FLOPs, sizes in bytes: generated graphs, native JSON) or "time" (work is a
    duration and an edge's size its transfer duration, in the file's own unit: DOPPLER files, STG,
    DOT task graphs). Times the package reports (makespans, schedules, b-levels, costs) are in the
    graph's printed unit `time_unit`: simulated time / `time_scale` (seconds for physical graphs;
    DOPPLER units, time / 1e10, for DOPPLER files), as the command prints them.

    A graph read from a heterogeneous example (HEFT's `.in` files, `*_task_exe_time.csv`) fixes
    its machine: `fixed_devices` is its processor count and an Engine on it takes no machine.

    close() frees the graph once nothing built on it (engines, environments) still uses it; any
    later use raises ClosedError. Graphs are also freed when garbage collected. A Graph owns library
    memory: copy.copy, copy.deepcopy and pickle raise CopyError (read or generate it again).
    """

    def __init__(self, _ptr, _fixed_costs=None):
        # only a handle the library returned (a GraphHandle, _lib.py): anything else given here (a
        # path, an int) reached C as a dp_graph * and was freed by __del__, a segfault (a review)
        if not isinstance(_ptr, _lib.GraphHandle) or not _ptr or not (
                _fixed_costs is None or isinstance(_fixed_costs, _lib.CostHandle) and _fixed_costs):
            self._ptr = None  # for __del__
            raise TypeError("doppler.Graph is made by Graph.read(path) or Graph.generate(model), not Graph(%s)"
                            % type(_ptr).__name__)
        self._ptr = _ptr
        self._fixed_costs = _fixed_costs  # POINTER(dp_cost) of a heterogeneous example, owned
        # held by every call that reads the C graph without an engine or environment on it (which
        # keep it allocated) and by the free: a close from another thread freed the graph under a
        # write or a cost table's making (a name of freed bytes, or a crash: a review)
        self._lock = threading.RLock()
        self._users = weakref.WeakSet()
        self._closed = False
        self._cache = {}
        self.torch = None  # the doppler.importers.TorchImport of a graph made by Graph.from_torch

    # ---- making graphs ----

    @classmethod
    def read(cls, path, format=None):
        """Read a graph file. format: "doppler", "json", "native", "wfcommons", "msr", "stg", "dot",
        or None to choose by extension (.txt DOPPLER, .json native / WfCommons / MSR by content,
        .stg, .dot/.gv), as `doppler graph` does; a heterogeneous example (*.in,
        PREFIX_task_exe_time.csv, or any name with format "heft-in" or "heft-csv", as `doppler
        place --format`) is read with its own machine. Raises
        doppler.Error (FileError, InvalidInputError, CycleError) with the library's message."""
        err = _lib.dp_error()
        if path is None:
            raise TypeError("Graph.read: path: a file name (str or a path), got None")
        bpath = _lib.encode(path, "Graph.read: path")
        bformat = _lib.encode(format, "Graph.read: format", optional=True)
        if _lib.dp_hetero_format(bpath, bformat):
            # by name, or by format "heft-in" / "heft-csv" as the command's --format (which Python
            # refused, "as a graph alone it has no format here": a review)
            g = _lib.GraphHandle()
            c = _lib.CostHandle()
            check(_lib.dp_hetero_read_format(bpath, bformat, ctypes.byref(g), ctypes.byref(c), ctypes.byref(err)), err)
            return cls(g, c)
        g = _lib.dp_graph_read(bpath, bformat, ctypes.byref(err))
        if not g:
            raise from_status(err.code, err)
        return cls(g)

    @classmethod
    def generate(cls, model, **params):
        """Generate a workload by name (`doppler graph gen MODEL`): "chainmm", "ffnn",
        "llama-block", "llama-layer", "cnn", "rnn", "transformer", "moe" (FLOPs and bytes) or the
        task graphs "random" (DAGGEN's layered DAGs), "stg", "layered", "forkjoin",
        "seriesparallel", "workflow" (doc/graph-format.md).
        params override the defaults, e.g. Graph.generate("llama-layer", tp=8,
        hidden_blocks=2); names are the command's options with '_' for '-' (Graph.models() lists
        them); values are numbers or choice names ("3d", "fp16"), passed to the library as text
        (None or a container is a TypeError), or True/False for a yes/no option:
        Graph.generate("llama-layer", training=True) is one training step (forward, backward and
        updates; doc/graph-format.md)."""
        from .machine import _value_text
        bmodel = _lib.encode(model, "Graph.generate: model")
        keys, vals = [], []
        for k, v in params.items():
            # the machine's rule for values (None and containers a TypeError; a bool yes or no,
            # which the library rejects where no flag is)
            v = _value_text(v, "Graph.generate: %s" % k, "yes", "no")
            # through the one encoder: batch="3\0junk" was read as batch 3 (a review)
            keys.append(_lib.encode(k.replace("_", "-"), "Graph.generate: parameter name"))
            vals.append(_lib.encode(v, "Graph.generate: %s" % k))
        n = len(keys)
        ka = (ctypes.c_char_p * max(n, 1))(*keys)
        va = (ctypes.c_char_p * max(n, 1))(*vals)
        err = _lib.dp_error()
        g = _lib.dp_gen_by_name(bmodel, n, ka, va, ctypes.byref(err))
        if not g:
            raise from_status(err.code, err)
        return cls(g)

    @classmethod
    def from_torch(cls, module, example_inputs, training=False, **options):
        """Import a torch.nn.Module traced by torch.fx on example_inputs (a tensor or a tuple):
        the forward pass (training=False), or one training step with its backward pass and
        parameter update (training=True; options loss_fn, optimizer "sgd" or "adam", lr, name).
        FLOPs per op by the rules of doppler.importers (doc/python.md), bytes from the traced
        shapes. The graph's attribute `torch` is the doppler.importers.TorchImport: its
        graph_module, op -> node map, and apply_placement(assignment, devices), which runs each
        node on its op's device. Needs python3-torch (ImportError naming it otherwise)."""
        from .importers import trace_torch, warn_unclassified
        imp = trace_torch(module, example_inputs, training=training, **options)
        g = imp.graph()
        g.torch = imp
        warn_unclassified(imp.doc)
        return g

    @classmethod
    def from_onnx(cls, path, dims=None, name=None):
        """Import an ONNX model file (doppler.importers.onnx_to_doc; `doppler graph import`).
        dims: sizes of symbolic dimensions by name. Needs python3-onnx. Op types without a FLOP
        rule (counted as element-wise) are named in a UserWarning, and in the graph's attribute
        `unclassified` (op type -> count)."""
        from .importers import _doc_graph, onnx_to_doc, warn_unclassified
        doc = onnx_to_doc(path, dims=dims, name=name)
        g = _doc_graph(doc)
        g.unclassified = dict(doc.get("unclassified") or {})
        warn_unclassified(doc)
        return g

    @staticmethod
    def models():
        """The generators: {model name: {"description": str, "params": {name: (default, help)}}}."""
        out = {}
        buf = ctypes.create_string_buffer(256)
        i = 0
        while True:
            m = _lib.dp_gen_model_at(i)
            if not m:
                break
            params = {}
            j = 0
            while True:
                p = _lib.dp_gen_model_get_param(m, j)
                if not p:
                    break
                _lib.dp_gen_param_default(m, p, buf, len(buf))
                params[_lib.text(_lib.dp_gen_param_get_name(p))] = (_lib.text(buf.value),
                                                                   _lib.text(_lib.dp_gen_param_get_help(p)))
                j += 1
            out[_lib.text(_lib.dp_gen_model_get_name(m))] = {
                "description": _lib.text(_lib.dp_gen_model_get_description(m)), "params": params}
            i += 1
        return out

    def write(self, path, format=None):
        """Write the graph: format "json" (native, doc/graph-format.md) or "dot", or by extension.
        Atomic: the file is complete or absent. An imported graph (from_torch, from_onnx) written
        as JSON keeps the importer's fields (param_bytes, phase, memory, unclassified, source), as
        `doppler graph import` writes them."""
        # both paths through the one encoder first: an imported graph's write of a pathlib.Path
        # was an AttributeError ('PosixPath' object has no attribute 'startswith'), of bytes a
        # TypeError and of a NUL Python's "embedded null byte" (a review)
        bpath = _lib.encode(path, "Graph.write: path")
        bformat = _lib.encode(format, "Graph.write: format", optional=True)
        doc = getattr(self, "_import_doc", None)
        if doc is not None and (format in ("json", "native") or (format is None and bpath.endswith(b".json"))):
            self._g()
            from .importers import _write_json
            _write_json(doc, os.fsdecode(bpath))
            return
        err = _lib.dp_error()
        with self._lock:
            check(_lib.dp_graph_write(self._g(), bpath, bformat, ctypes.byref(err)), err)

    # ---- life ----

    def _g(self):
        if self._closed:
            raise ClosedError("graph %s is closed" % self._cache.get("name", ""), _lib.DP_EINVAL)
        return self._ptr

    def _attach(self, user):
        """Register an object whose C side points into this graph (freed only after it)."""
        self._g()
        self._users.add(user)

    def _release(self):
        # live users only: an engine collected by garbage collection calls this from its
        # finalizer while the WeakSet still counts its dead reference (len() was 1, and a closed
        # graph stayed allocated until the Graph itself died: a review)
        with self._lock:
            if self._ptr and self._closed and not any(True for _ in self._users):
                _lib.dp_graph_free(self._ptr)
                if self._fixed_costs:
                    _lib.dp_cost_free(self._fixed_costs)
                self._ptr = None
                self._fixed_costs = None

    def close(self):
        """Free the graph (at once, or when the last engine or environment on it is closed)."""
        with self._lock:
            if not self._closed:
                self._cache.setdefault("name", self.name if self._ptr else "")
                self._closed = True
            self._release()

    def __del__(self):
        try:
            self._closed = True
            self._users = ()
            self._release()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self):
        return self._closed

    # ---- attributes ----

    def _get(self, field):
        """Field of the graph through its accessor (dp_graph_get_<field>)."""
        with self._lock:
            return _lib.graph[field](self._g())

    @property
    def n_ops(self):
        return self._get("n_ops")

    @property
    def n_edges(self):
        return self._get("n_edges")

    def __len__(self):
        return self.n_ops

    @property
    def name(self):
        return _lib.text(self._get("name"))

    @property
    def source(self):
        """The file the graph was read from; for an imported graph (from_torch, from_onnx) what
        it was imported from ("torch.fx.symbolic_trace of ResNet, forward", the ONNX file), as
        the library's messages name it."""
        return _lib.text(self._get("source"))

    @property
    def cost_kind(self):
        """"physical" (FLOPs and bytes) or "time" (durations in the file's unit)."""
        return "time" if self._get("cost_kind") == _lib.DP_GRAPH_COST_TIME else "physical"

    @property
    def time_scale(self):
        """Printed time = simulated time / time_scale (1, or 1e10 for DOPPLER files)."""
        return self._get("time_scale")

    @property
    def time_unit(self):
        return _lib.text(self._get("time_unit"))

    @property
    def devices(self):
        """The device count the graph was made for when it says (a generated Llama graph's
        tensor-parallel degree, DOPPLER's 8gpu_ files, a JSON file's "devices"), else None. A
        machine without "devices" or a topology takes it, as the command does."""
        d = self._get("devices")
        return d if d > 0 else None

    @property
    def fixed_devices(self):
        """Processor count of a heterogeneous example (which fixes its machine), else None."""
        with self._lock:
            self._g()
            return _lib.cost["n_devices"](self._fixed_costs) if self._fixed_costs else None

    def _cached(self, key, make):
        with self._lock:
            g = self._g()
            if key not in self._cache:
                self._cache[key] = make(g)
            return self._cache[key]

    def _field(self, g, field, n, dtype):
        """A read-only NumPy copy of the graph's array field (n elements)."""
        return _array(_lib.graph[field](g), n, dtype)

    @property
    def work(self):
        """(n_ops,) float64: FLOPs (physical) or duration (time) of each op."""
        return self._cached("work", lambda g: self._field(g, "work", self.n_ops, np.float64))

    @property
    def out_size(self):
        """(n_ops,) float64: output bytes (physical) or the transfer duration of the output (time)."""
        return self._cached("out_size", lambda g: self._field(g, "out_size", self.n_ops, np.float64))

    @property
    def op_names(self):
        """list of n_ops str: unique op names (a new list each call: the cached one stays the graph's)."""
        return list(self._cached("op_names", lambda g: _strings(_lib.dp_graph_get_op_name, g, self.n_ops)))

    @property
    def op_kinds(self):
        """(n_ops,) str array: op kinds ("matmul", "add", "op", ...)."""
        return self._cached("op_kinds", lambda g: _frozen(np.array(_strings(_lib.dp_graph_get_op_kind, g, self.n_ops),
                                                                    dtype=object)))

    @property
    def op_shapes(self):
        """list of n_ops tuples: each op's output shape (empty when unknown; a new list each call)."""
        def make(g):
            dims = ctypes.POINTER(ctypes.c_int64)()
            out = []
            for i in range(self.n_ops):
                nd = _lib.dp_graph_get_op_shape(g, i, ctypes.byref(dims))
                out.append(tuple(int(dims[k]) for k in range(nd)))
            return out
        return list(self._cached("op_shapes", make))

    @property
    def edge_src(self):
        """(n_edges,) int64: source op of each edge (edges grouped by source, the library's order)."""
        return self._cached("edge_src", lambda g: self._field(g, "edge_src", self.n_edges, np.int64))

    @property
    def edge_dst(self):
        """(n_edges,) int64: destination op of each edge."""
        return self._cached("edge_dst", lambda g: self._field(g, "edge_dst", self.n_edges, np.int64))

    @property
    def edges(self):
        """(n_edges, 2) int64: (source, destination) of each edge."""
        return self._cached("edges", lambda g: _frozen(np.stack([self.edge_src, self.edge_dst], axis=1)))

    @property
    def edge_size(self):
        """(n_edges,) float64: bytes (physical) or transfer duration (time) of each edge."""
        return self._cached("edge_size", lambda g: self._field(g, "edge_size", self.n_edges, np.float64))

    @property
    def topological_order(self):
        """(n_ops,) int64: a topological order (Kahn's, lowest id first among the ready)."""
        return self._cached("topo", lambda g: self._field(g, "topo", self.n_ops, np.int64))

    @property
    def sources(self):
        return self._cached("sources", lambda g: _counted(_lib.dp_graph_get_sources, g))

    @property
    def sinks(self):
        return self._cached("sinks", lambda g: _counted(_lib.dp_graph_get_sinks, g))

    @property
    def n_predecessors(self):
        """(n_ops,) int64: in-edges of each op."""
        return self._cached("npred", lambda g: _frozen(np.diff(self._field(g, "pred_ptr", self.n_ops + 1, np.int64))))

    @property
    def n_successors(self):
        """(n_ops,) int64: out-edges of each op."""
        return self._cached("nsucc", lambda g: _frozen(np.diff(self._field(g, "succ_ptr", self.n_ops + 1, np.int64))))

    def costs(self, machine=None):
        """The cost tables of this graph on a machine (doppler.Machine; None: the default machine, or
        a heterogeneous example's own): op times, transfer costs, b-levels. See doppler.Costs."""
        from .machine import Machine, _machine_arg
        if _machine_arg(machine, "Graph.costs") is None:
            machine = Machine()
        return machine.costs(self)

    def blevels(self, machine=None):
        """(n_ops,) float64: b-levels with mean costs on the machine (Kwok and Ahmad 1999), in the
        printed unit; the critical-path heuristic's priority."""
        return self.costs(machine).blevel

    def __repr__(self):
        if self._closed:
            return "<doppler.Graph (closed)>"
        return "<doppler.Graph %s: %d ops, %d edges, %s>" % (self.name, self.n_ops, self.n_edges, self.cost_kind)


class Costs:
    """Cost tables of a graph on a machine (libdoppler's dp_cost, machine/dp_cost.h), as NumPy copies in
    the graph's printed unit:

      op_time (n_ops, n_devices)          op time on each device
      latency, inv_bw (n_devices, n_devices)   a transfer of edge e from a to b != a takes
                                          latency[a, b] + edge_data[e] * inv_bw[a, b]
      edge_data (n_edges,)                bytes (physical graphs) or the file's transfer duration
      blevel, tlevel (n_ops,)             b- and t-levels with mean costs
      critical_path, lower_bound          max b-level; the bound with zero communication
    """

    def __init__(self, graph, cptr, owned):
        # made by Graph.costs, Machine.costs and Engine.costs: a handle the library returned
        # (CostHandle, _lib.py), as Graph's
        if not isinstance(graph, Graph) or not isinstance(cptr, _lib.CostHandle) or not cptr:
            raise TypeError("doppler.Costs is made by Graph.costs, Machine.costs or Engine.costs, not Costs(%s, %s)"
                            % (type(graph).__name__, type(cptr).__name__))
        g = graph._g()
        c = {f: get(cptr) for f, get in _lib.cost.items()}
        # the graph's printed unit, as graph info and Engine print (the cost table's scale is 1 for
        # a graph in FLOPs and bytes: a graph of time_scale 1e-3, "ms", gave seconds: a review)
        sc = _lib.graph["time_scale"](g)
        n, m, D = c["n_ops"], c["n_edges"], c["n_devices"]
        self.n_devices = D
        self.homogeneous = bool(c["homogeneous"])
        self.op_time = np.ctypeslib.as_array(c["op_time"], shape=(n * D,)).reshape(n, D) / sc
        self.edge_data = _array(c["edge_data"], m, np.float64).copy()
        self.latency = np.ctypeslib.as_array(c["latency"], shape=(D * D,)).reshape(D, D) / sc
        self.inv_bw = np.ctypeslib.as_array(c["inv_bw"], shape=(D * D,)).reshape(D, D) / sc
        bl = np.empty(n)
        tl = np.empty(n)
        _lib.dp_cost_levels(g, cptr, bl.ctypes.data_as(_lib.PD), tl.ctypes.data_as(_lib.PD))
        self.blevel = bl / sc
        self.tlevel = tl / sc
        self.critical_path = _lib.dp_cost_critical_path(g, cptr) / sc
        self.lower_bound = _lib.dp_cost_lower_bound(g, cptr) / sc
        for a in (self.op_time, self.edge_data, self.latency, self.inv_bw, self.blevel, self.tlevel):
            a.flags.writeable = False
        if owned:
            _lib.dp_cost_free(cptr)

    def __repr__(self):
        return "<doppler.Costs %d ops on %d devices, critical path %.6g>" % (
            self.op_time.shape[0], self.n_devices, self.critical_path)


__all__ = ["Graph", "Costs"]
