"""Simulation and placement through libdoppler's one engine (sim/dp_engine.h, policy/dp_place.h)."""

import ctypes
import json
import os
import tempfile
import threading
import weakref

import numpy as np

from . import _lib
from ._errors import ClosedError, Error, InvalidInputError, _NoCopy, check, from_status
from .graph import Costs, Graph
from .machine import Machine, _machine_arg, _new_machine, machine_warnings, warn_machine

_INT32 = np.iinfo(np.int32)


def methods():
    """The placement methods of `doppler place`: {name: {"description": str, "simulates": bool}}.
    Methods that simulate (searches, learned methods) spend simulations of the engine that places."""
    out = {}
    i = 0
    while True:
        m = _lib.dp_place_method_at(i)
        if not m:
            break
        out[_lib.text(_lib.dp_place_method_get_name(m))] = {
            "description": _lib.text(_lib.dp_place_method_get_description(m)),
            "simulates": bool(_lib.dp_place_method_get_simulates(m))}
        i += 1
    return out


def _sections(method):
    """The tables of a method's --config (dp_place_method_get_config): a list of (object name,
    [_Key], [other keys]); [] for a method without a config."""
    bmethod = _lib.encode(method, "config_keys: method")
    m = _lib.dp_place_find(bmethod)
    if not m:
        # the library's refusal of the name, listing the methods (dp_place checks the name before
        # its other arguments); an unknown name gave {} as if it had no config, where `doppler
        # config NAME` refuses it (a review)
        err = _lib.dp_error()
        check(_lib.dp_place(bmethod, None, None, None, None, None, None, ctypes.byref(err)), err)
    sections = _lib.dp_place_method_get_config(m)
    if not sections:
        return []
    out = []
    j = 0
    while True:
        sec = _lib.dp_schema_section_at(sections, j)
        if not sec:
            break
        keys, others = [], []
        k = 0
        while True:
            key = _lib.dp_schema_section_get_key(sec, k)
            if not key:
                break
            keys.append(_Key(key))
            k += 1
        k = 0
        while _lib.dp_schema_section_get_other(sec, k) is not None:
            others.append(_lib.text(_lib.dp_schema_section_get_other(sec, k)))
            k += 1
        out.append((_lib.text(_lib.dp_schema_section_get_name(sec)), keys, others))
        j += 1
    return out


class _Key:
    """One entry of a config table (dp_schema_key, read through its accessors): handle (for
    dp_schema_set), key, type, choices, default, help."""

    __slots__ = ("handle", "key", "type", "choices", "default", "help")

    def __init__(self, handle):
        self.handle = handle
        for f, get in _lib.schema_key.items():
            setattr(self, f, get(handle))


def config_keys(method):
    """The keys of a placement method's config (place(method, config={...})), from the table the
    library reads it with: {"budget": {"kind": "int", "default": "20000", "help": str}, "adam.eps":
    ...}, kinds int, number, bool, string and "one of a, b"; an object's keys are named with it ("stages.S.lr": each stage S
    of il, sim, real). {} for a method without a config (cp; `doppler config cp` says it has none),
    InvalidInputError for a name that is no method. `doppler config METHOD` prints the same."""
    out = {}
    for name, keys, _ in _sections(method):
        for k in keys:
            kinds = ("int", "int", "number", "number", "bool", "choice", "string")  # as _KEY_TYPES
            kind = kinds[k.type] if 0 <= k.type < len(kinds) else "?"
            if kind == "choice":
                kind = "one of " + _lib.text(k.choices).replace("|", ", ")
            out[(name + "." if name else "") + _lib.text(k.key)] = {
                "kind": kind, "default": _lib.text(k.default), "help": _lib.text(k.help)}
    return out


def _key_text(v):
    """A config value as the text dp_schema_set parses (None: a kind no key takes)."""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, str):
        return v
    return None


# a value's Python types by the kind of its key (dp_schema_type: int, long, double, float, bool,
# enum, string), as the JSON file the dict becomes holds them: the library reads a JSON string
# for a number as a refusal, where dp_schema_set reads text ("0.5" passed the check as t0)
_INTEGRAL = (int, np.integer)
_KEY_TYPES = ((_INTEGRAL, "an integer"), (_INTEGRAL, "an integer"), (_INTEGRAL + (float, np.floating), "a number"),
              (_INTEGRAL + (float, np.floating), "a number"), ((bool, np.bool_), "true or false"), ((str,), "a str"),
              ((str,), "a str"))
_BOOL, _CHOICE = 4, 5


def _key_type_error(full, k, v):
    """The refusal of value v of key k (a _Key) at path full when the JSON file would hold a value of
    another type than its kind's, else None."""
    if not 0 <= k.type < len(_KEY_TYPES):
        return None
    types, what = _KEY_TYPES[k.type]
    # (a bool is an int to Python, not to JSON)
    if isinstance(v, types) and isinstance(v, (bool, np.bool_)) == (k.type == _BOOL):
        return None
    if k.type == _CHOICE:  # named as the library names them
        names = ['"%s"' % n for n in _lib.text(k.choices).split("|")]
        what = " or ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]
    return 'place: config: "%s" must be %s, got %s %r' % (full, what, type(v).__name__, v)


def _json_scalar(x):
    """json.dumps's default for the NumPy scalars a config may hold (_key_text accepts them)."""
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    raise TypeError("Object of type %s is not JSON serializable" % type(x).__name__)


def _check_config(method, config):
    """Refuse a config dict the method's tables refuse (unknown keys, kinds, ranges, names) with
    InvalidInputError, before it is written for the library: the library's own checks, through its
    tables, so the message names the key as the command's does, after a check of each value's type
    against its key's kind (the JSON file holds the value's type, where dp_schema_set reads text).
    Keys outside the tables (read by the library by hand) and rules across keys are left to the
    library, whose refusal place() words as naming the config, not the temporary file."""
    sections = _sections(method)
    if not sections:
        return
    scratch = ctypes.create_string_buffer(1 << 16)  # the largest config struct is a few kB
    names = {n for n, _, _ in sections}

    def check(name, shown, obj):
        """obj, an object of section name, written at path shown ("stages.il" of "stages.S")"""
        entries = {_lib.text(k.key): k for n, keys, _ in sections if n == name for k in keys}
        others = [o for n, _, os_ in sections if n == name for o in os_]
        for key, v in obj.items():
            if not isinstance(key, str):
                raise TypeError("place: config: keys are str, got %r" % (key,))
            child = (name + "." if name else "") + key
            full = (shown + "." if shown else "") + key
            if key in entries:
                bad = _key_type_error(full, entries[key], v)
                if bad:
                    raise InvalidInputError(bad)
                t = _key_text(v)
                err = _lib.dp_error()
                if t is None:
                    raise InvalidInputError('place: config: "%s": %r is no value of a key' % (full, v))
                if _lib.dp_schema_set(entries[key].handle, scratch, entries[key].key,
                                      _lib.encode(t, 'place: config: "%s"' % full), b"place: config",
                                      _lib.encode(shown + "." if shown else "", "place: config"),
                                      ctypes.byref(err)) != 0:
                    raise InvalidInputError(_lib.text(err.msg))
            elif isinstance(v, dict) and child in names:
                check(child, full, v)
            elif isinstance(v, dict) and child + ".S" in names:  # "stages": {"il": {...}, ...}
                for m, w in v.items():
                    if isinstance(w, dict):
                        check(child + ".S", full + "." + str(m), w)
            elif key not in others:
                raise InvalidInputError('place: config: unknown key "%s" (known: %s)' % (full, ", ".join(list(entries) + others)))

    check("", "", config)


def _without_file(x, tmp):
    """The library's error x on the temporary file tmp that a config dict was written to, naming
    the config instead ("place: config: ..."): the file is deleted when the exception is seen, and
    the checks before it cannot be the library's every rule (a cross-key rule: t0 >= t_end)."""
    msg = str(x).replace(tmp + ": config: ", tmp + ": ").replace(tmp, "place: config")
    return type(x)(msg, x.code)


def _int_array(a, shape, what):
    """a as a C-contiguous int32 array of the given shape (None: any length); TypeError for a
    non-integer dtype, ValueError for a wrong shape or values beyond int32."""
    arr = np.asarray(a)
    if not np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        if arr.size == 0 and arr.ndim == len(shape):
            arr = arr.astype(np.int32)  # an empty batch, whatever its dtype
        else:
            raise TypeError("%s: expected integer device ids, got an array of %s" % (what, arr.dtype))
    if arr.ndim != len(shape) or any(w is not None and w != h for w, h in zip(shape, arr.shape)):
        want = "(%s)" % ", ".join("B" if w is None else str(w) for w in shape) if len(shape) > 1 else "(%s,)" % shape[0]
        raise ValueError("%s: expected shape %s, got %s" % (what, want, arr.shape))
    if arr.dtype != np.int32:
        if arr.size and (arr.min() < _INT32.min or arr.max() > _INT32.max):
            bad = int(np.argmax(((arr < _INT32.min) | (arr > _INT32.max)).ravel()))
            raise ValueError("%s: device id %d (at flat index %d) is out of range" % (what, int(arr.flat[bad]), bad))
        arr = arr.astype(np.int32)
    return np.ascontiguousarray(arr)


def _float_vector(a, n, what):
    arr = np.asarray(a)
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError("%s: expected numbers, got an array of %s" % (what, arr.dtype))
    if arr.shape != (n,):
        raise ValueError("%s: expected shape (%d,), got %s" % (what, n, arr.shape))
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        # (an infinity was said to be "a NaN" that breaks the order: a review)
        raise ValueError("%s: element %d is %r: priorities are finite numbers (a NaN or an infinity breaks the "
                         "queue's order)" % (what, i, float(arr[i])))
    return arr


def _ro(a):
    a.flags.writeable = False
    return a


class Schedule:
    """A simulated schedule (dp_engine_schedule), every time in the graph's printed unit.

    makespan: last op end; cost: what the oracle returns (the penalised makespan under the memory
    penalty policy, else the makespan); busy (n_devices,): compute time per device; utilisation
    (n_devices,): busy / makespan, of the simulated times as the command divides them (bit for bit
    its --json "utilisation", also where time_scale is not 1); start, end (n_ops,): each op's start
    and end; ready (n_ops,): when each op joined its device's queue (its inputs all there); transfer_start,
    transfer_end (n_edges,): start and arrival of every edge that moved data between devices,
    -1 for the others; memory_peak (n_devices,) bytes, or None on the fast path; memory_excess;
    n_transfers; transfer_volume (bytes; seconds under the machine's comm_ratio; file units for time graphs); n_events; assignment."""

    __slots__ = ("makespan", "cost", "busy", "start", "end", "ready", "transfer_start", "transfer_end", "memory_peak",
                 "memory_excess", "n_transfers", "transfer_volume", "n_events", "assignment", "time_unit",
                 "_utilisation")

    @property
    def utilisation(self):
        return self._utilisation

    def to_dict(self):
        return {k: getattr(self, k) for k in self.__slots__ if not k.startswith("_")}

    def __repr__(self):
        return "<doppler.Schedule makespan %.17g %s, %d transfers>" % (self.makespan, self.time_unit, self.n_transfers)


class Placement:
    """A method's placement: assignment (n_ops,) int64; priority (n_ops,) or None (a method's queue
    priorities, higher first); makespan and schedule (the engine's simulation of it, with the
    method's priorities, else the b-levels, as `doppler place` does); simulations the method spent
    (its searches, training, samples and refinement; not the final simulation), as `doppler place`
    prints them; method and options."""

    __slots__ = ("method", "options", "assignment", "priority", "makespan", "schedule", "simulations")

    def __repr__(self):
        return "<doppler.Placement %s: makespan %.17g, %d simulations>" % (self.method, self.makespan, self.simulations)


_PLACE_OPTIONS = ("seed", "device", "checkpoint", "samples", "budget", "config", "refine", "refine_budget",
                  "proposals", "append_only", "ties", "parameters")


def _check_place_options(bmethod, o):
    """Refuse options the method would not read, as `doppler place` does (nobody should believe
    they were used): the library's one statement of each method's options (the method table,
    dp_place_check_options), its message in the keyword spelling. Only for known methods: an
    unknown one gets dp_place's message."""
    if bmethod.decode() not in methods():
        return
    err = _lib.dp_error()
    if _lib.dp_place_check_options(bmethod, o, ctypes.byref(err)) != 0:
        msg = _lib.text(err.msg)
        for cli, kw in (("--refine-budget", "refine_budget"), ("--append-only/--ties", "append_only/ties"),
                        ("--method ", "method "), ("--refine ", "refine="), ("--proposals FILE", "proposals=FILE")):
            msg = msg.replace(cli, kw)
        raise ValueError("place: " + msg.replace("--", ""))


class Engine(_NoCopy):
    """The one simulation entry point on one graph and one machine (dp_engine): the exact
    DOPPLER-compatible engine when the machine allows it, the general engine otherwise.

        e = doppler.Engine(graph, doppler.Machine(topology="dgx1-v100", transfer="maxmin"))
        s = e.simulate(assignment)                 # one assignment -> Schedule
        ms = e.simulate_batch(A)                   # (B, n_ops) ints -> (B,) makespans
        ms, busy = e.simulate_batch(A, busy=True)  # and (B, n_devices) busy times
        p = e.place("anneal", budget=2000, seed=3) # any method of `doppler place`

    machine None: the default machine (DOPPLER-compatible; as many devices as the graph was made
    for when it says, else 4), or a heterogeneous example's own. A machine with another device
    count than the graph says it was made for gives a warning, as the command does, once per
    engine, and so does each of the command's other warnings about the machine on the graph (a
    key that changes nothing on it, a calibration lacking devices: dp_machine_warnings). An
    engine is a workspace: calls on one engine are serialised by a lock; use one engine per thread
    to simulate in parallel. close() frees it (later calls raise ClosedError). copy.copy,
    copy.deepcopy and pickle raise CopyError (make another Engine)."""

    def __init__(self, graph, machine=None, _trace=False):
        if not isinstance(graph, Graph):
            raise TypeError("Engine: expected a doppler.Graph, got %s" % type(graph).__name__)
        self._ptr = None
        self._problem = None
        self._costs = None
        self._mach = None
        # reentrant: an environment on this engine holds it through a step, whose last simulation
        # is the engine's own call (env.py)
        self._lock = threading.RLock()
        # under the graph's lock until the engine is attached to it (which keeps it allocated): a
        # close from another thread freed it under dp_problem_alloc (a review)
        with graph._lock:
            g = graph._g()
            self.graph = graph
            # the engine's own copy: changing the caller's machine later changes nothing here
            self.machine = _machine_arg(machine, "Engine").copy() if machine is not None else Machine()
            fixed = graph._fixed_costs
            if fixed is not None and machine is not None:
                raise ValueError("%s: a heterogeneous example fixes the machine; use no machine" % graph.source)
            if fixed is not None:
                # the example's own processors: engine.machine says their count (it said the default
                # machine's 4 beside n_devices 3: a review)
                self.machine = Machine(devices=_lib.cost["n_devices"](fixed))
            try:
                if fixed is not None:
                    self._mach = _new_machine()
                    err = _lib.dp_error()
                    check(_lib.dp_machine_set(self._mach, b"devices", b"%d" % _lib.cost["n_devices"](fixed),
                                              ctypes.byref(err)), err)
                else:
                    self._mach = self.machine._instance()
            except BaseException:
                self._free_machine()
                raise
            _lib.dp_machine_set_trace(self._mach, 1 if _trace else 0)
            # the problem of the graph on the machine (sim/dp_problem.h): its cost tables and engine,
            # assembled as the commands and sweeps assemble theirs
            err = _lib.dp_error()
            if fixed is not None:
                p = _lib.dp_problem_alloc_with_costs(g, fixed, self._mach, ctypes.byref(err))
            else:
                p = _lib.dp_problem_alloc(g, self._mach, ctypes.byref(err))
            if not p:
                self._free_machine()
                raise from_status(err.code, err)
            # from here the problem and the machine copy are the engine's, freed by its finalizer,
            # registered before anything can raise: the device-count warning, an exception under
            # warnings-as-errors, left both behind (about 100 kB an engine: a review)
            self._problem = p
            self._cptr = _lib.dp_problem_costs(p)
            self._ptr = _lib.dp_problem_engine(p)
            self._traced = None
            self._n_ops = _lib.graph["n_ops"](g)
            self._n_edges = _lib.graph["n_edges"](g)
            self._n_devices = _lib.cost["n_devices"](self._cptr)
            self._scale = _lib.graph["time_scale"](g)
            self._unit = graph.time_unit
            self._finalizer = weakref.finalize(self, Engine._free_all, self._problem, self._mach, graph)
            graph._attach(self)
        if fixed is None and not _trace:
            # (a tracing engine is the twin of one that warned already)
            try:
                warn_machine(machine_warnings(self._mach, graph, self._n_devices))
            except BaseException:
                self.close()
                raise

    @staticmethod
    def _free_all(problem, mach, graph):
        _lib.dp_problem_free(problem)
        _lib.dp_machine_destroy(mach)
        graph._release()

    def _free_machine(self):
        if self._mach is not None:
            _lib.dp_machine_destroy(self._mach)
        self._mach = None

    def close(self):
        """Free the engine (and its cost tables and machine copy)."""
        with self._lock:
            if self._ptr:
                self._ptr = None
                self.graph._users.discard(self)
                self._finalizer()
            if self._traced is not None:
                self._traced.close()
                self._traced = None

    @property
    def closed(self):
        return self._ptr is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _e(self):
        if not self._ptr:
            raise ClosedError("engine is closed", _lib.DP_EINVAL)
        self.graph._g()
        return self._ptr

    # the sizes, as properties: a closed engine answers nothing (n_devices answered after close(),
    # where the docs say later calls raise; a review)
    @property
    def n_ops(self):
        """Ops of the engine's graph."""
        self._e()
        return self._n_ops

    @property
    def n_edges(self):
        """Edges of the engine's graph."""
        self._e()
        return self._n_edges

    @property
    def n_devices(self):
        """Devices of the engine's machine."""
        self._e()
        return self._n_devices

    # ---- facts ----

    @property
    def general(self):
        """True when this engine runs the general engine, False on the exact fast path."""
        with self._lock:  # a close from another thread frees the engine under its lock
            return bool(_lib.dp_engine_is_general(self._e()))

    @property
    def simulations(self):
        """Simulations run so far by this engine (its own calls and the methods it placed with)."""
        with self._lock:
            return int(_lib.dp_engine_simulations(self._e()))

    @property
    def costs(self):
        """The cost tables the engine simulates with (doppler.Costs)."""
        with self._lock:  # copied from the engine's tables, which a close frees
            self._e()
            return Costs(self.graph, self._cptr, owned=False)

    # ---- simulation ----

    def _assignment(self, assignment):
        a = _int_array(assignment, (self.n_ops,), "assignment")
        return a

    def _priority(self, priority):
        return None if priority is None else _float_vector(priority, self.n_ops, "priority")

    def _run(self, e, a, prio):
        """Run one assignment on engine pointer e; returns the dp_engine_schedule (a buffer the
        schedule accessors read; engine-owned arrays)."""
        s = _lib.schedule_buffer()
        err = _lib.dp_error()
        check(_lib.dp_engine_run(e, a.ctypes.data_as(_lib.PI), None if prio is None else prio.ctypes.data_as(_lib.PD),
                                 s, ctypes.byref(err)), err)
        return s

    def _schedule(self, e, a, s):
        sc = self._scale
        n, m, D = self.n_ops, self.n_edges, self.n_devices
        get = _lib.schedule
        out = Schedule()
        makespan = get["makespan"](s)
        busy = np.ctypeslib.as_array(get["busy"](s), shape=(D,))
        out.makespan = makespan / sc
        out.cost = get["cost"](s) / sc
        out.busy = _ro(busy / sc)
        # the simulated times divided, as the command's util() (experiments/cmd_place.c): the
        # printed ones, each rounded by its division by time_scale, gave other last bits (a review)
        out._utilisation = _ro(busy / makespan if makespan > 0 else np.zeros(D))
        out.start = _ro(np.ctypeslib.as_array(get["op_start"](s), shape=(n,)) / sc)
        out.end = _ro(np.ctypeslib.as_array(get["op_end"](s), shape=(n,)) / sc)
        out.ready = _ro(np.ctypeslib.as_array(get["op_ready"](s), shape=(n,)) / sc)
        xs = np.empty(m)
        xe = np.empty(m)
        if m:
            _lib.dp_engine_transfers(e, a.ctypes.data_as(_lib.PI), s, xs.ctypes.data_as(_lib.PD),
                                     xe.ctypes.data_as(_lib.PD))
        moved = xs >= 0
        xs[moved] /= sc
        xe[moved] /= sc
        out.transfer_start = _ro(xs)
        out.transfer_end = _ro(xe)
        mem_peak = get["mem_peak"](s)
        out.memory_peak = _ro(np.ctypeslib.as_array(mem_peak, shape=(D,)).copy()) if mem_peak else None
        out.memory_excess = get["mem_excess"](s)
        out.n_transfers = int(get["n_transfers"](s))
        out.transfer_volume = get["transfer_volume"](s)
        out.n_events = int(get["n_events"](s))
        out.assignment = _ro(a.astype(np.int64))
        out.time_unit = self._unit
        return out

    def simulate(self, assignment, priority=None, trace=None):
        """Simulate one assignment ((n_ops,) device ids) and return its Schedule. priority
        ((n_ops,), higher first) orders a priority queue (None: the b-levels, as the command);
        FIFO queues ignore it. trace: a path to write the schedule as Chrome trace JSON (Perfetto;
        on the general engine with rate and channel counters). Raises InvalidInputError for a
        device out of range (naming the op), CapacityError when a memory limit is exceeded under
        the error policy."""
        a = self._assignment(assignment)
        prio = self._priority(priority)
        with self._lock:
            e = self._e()
            s = self._run(e, a, prio)
            out = self._schedule(e, a, s)
            if trace is not None:
                if self.general:
                    # the general engine keeps rate and channel logs only when asked at allocation
                    if self._traced is None:
                        self._traced = Engine(self.graph, self.machine if self.graph._fixed_costs is None else None,
                                              _trace=True)
                    te = self._traced._e()
                    self._traced._run(te, a, prio)
                else:
                    te = e
                err = _lib.dp_error()
                check(_lib.dp_engine_write_trace(te, a.ctypes.data_as(_lib.PI), _lib.encode(trace, "simulate: trace"),
                                                 ctypes.byref(err)),
                      err)
        return out

    def makespan(self, assignment, priority=None):
        """The makespan of one assignment (a float, printed unit)."""
        return self.simulate(assignment, priority).makespan

    def simulate_batch(self, assignments, priority=None, busy=False, cost=False):
        """Simulate a batch: assignments (B, n_ops) integers -> makespans (B,) float64, in one call
        into the library (dp_engine_run_batch; no Python loop per assignment). busy=True also
        returns (B, n_devices) compute time per device, cost=True the (B,) oracle costs; the result
        is then a tuple (makespans[, busy][, cost]). priority: one (n_ops,) array for every row.
        Errors name the row ("assignment B: ...") and the op."""
        A = _int_array(assignments, (None, self.n_ops), "assignments")
        B = A.shape[0]
        prio = self._priority(priority)
        ms = np.empty(B)
        bz = np.empty((B, self.n_devices)) if busy else None
        cs = np.empty(B) if cost else None
        err = _lib.dp_error()
        with self._lock:
            e = self._e()
            if B:
                check(_lib.dp_engine_run_batch(e, B, A.ctypes.data_as(_lib.PI),
                                               None if prio is None else prio.ctypes.data_as(_lib.PD),
                                               ms.ctypes.data_as(_lib.PD),
                                               None if cs is None else cs.ctypes.data_as(_lib.PD),
                                               None if bz is None else bz.ctypes.data_as(_lib.PD), ctypes.byref(err)),
                      err)
        if self._scale != 1.0:
            ms /= self._scale
            if bz is not None:
                bz /= self._scale
            if cs is not None:
                cs /= self._scale
        if not busy and not cost:
            return ms
        return (ms,) + ((bz,) if busy else ()) + ((cs,) if cost else ())

    # ---- placement ----

    def place(self, method, **options):
        """Place the graph with a method of `doppler place` (doppler.methods() lists them) and
        simulate the placement; returns a Placement. Options, as the command's:

          seed (int, default 1), device (for "single"), checkpoint (a trained policy file, for
          doppler, placeto, gdp), samples (learned methods: the best of the greedy placement and
          K sampled ones; random: random search, the best of K),
          budget (simulations for anneal, local and improve, nodes for exact, training episodes for
          placeto and gdp without a checkpoint), config (the method's JSON config: a path, or a
          dict written to a temporary file), refine ("anneal" or "local": search at inference,
          started from the method's placement on this engine, never worse than it; a learned
          method's policy proposes the moves; or "improve": the improvement search of the
          `proposals` checkpoint's policy from that placement), refine_budget (its simulations, default 2000),
          proposals (anneal, local and refine: an improvement checkpoint, `doppler train --method
          improve`, whose policy proposes half the moves),
          append_only (heft, cpop, peft: append after each device's last op, no insertion),
          ties ("id" or "heap": the order of ready ops of equal priority in those schedulers) and
          parameters ("selected", the default: a checkpoint's model-selected parameters; "final":
          those its training ended with, `train`'s "final" figure)

        Methods that simulate ask this engine (its oracle), so they optimise the model that scores
        them; Placement.simulations counts what they spent. The result is bit for bit the
        command's: `doppler place --method M` with the same graph, machine and options."""
        if not isinstance(method, str):
            raise TypeError("place: method: a method name (str, one of doppler.methods()), got %s %r"
                            % (type(method).__name__, method))
        bmethod = _lib.encode(method, "place: method")
        bad = [k for k in options if k not in _PLACE_OPTIONS]
        if bad:
            raise TypeError("place: unknown option %s (known: %s)" % (", ".join(bad), ", ".join(_PLACE_OPTIONS)))
        # the options as text, set through the library's key/value setter (dp_place_options_set),
        # after the checks that give this interface's messages
        text = {}
        seed = options.get("seed")
        if seed is not None:
            if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= seed < 2 ** 64:
                raise ValueError("place: seed: expected a non-negative integer, got %r" % (seed,))
            text["seed"] = str(int(seed))
        dev = options.get("device")
        if dev is not None:
            if not isinstance(dev, (int, np.integer)) or isinstance(dev, bool) or not 0 <= dev < self.n_devices:
                raise ValueError("place: device %r: only %d devices" % (dev, self.n_devices))
            text["device"] = str(int(dev))
        def count(name, hi, said):
            """a count option from 1 to hi, its bounds said as the command says them (a positive
            10**12 samples was refused as "expected a positive integer": a review)"""
            x = options.get(name)
            if x is not None:
                if not isinstance(x, (int, np.integer)) or isinstance(x, bool) or not 1 <= x <= hi:
                    raise ValueError("place: %s: expected an integer from 1 to %s, got %r" % (name, said, x))
                text[name] = str(int(x))
        count("samples", 1000000, "1000000")
        count("budget", 10 ** 15, "1e15")
        refine = options.get("refine")
        if refine is not None:
            if refine not in ("anneal", "local", "improve"):
                raise ValueError("place: refine: anneal, local or improve, got %r" % (refine,))
            text["refine"] = refine
        count("refine_budget", 10 ** 15, "1e15")
        if options.get("append_only") is not None:
            if not isinstance(options["append_only"], bool):
                raise ValueError("place: append_only: expected True or False, got %r" % (options["append_only"],))
            text["append_only"] = "1" if options["append_only"] else "0"
        ties = options.get("ties")
        if ties is not None:
            if ties not in ("id", "heap"):
                raise ValueError("place: ties: id or heap, got %r" % (ties,))
            text["ties"] = ties
        parameters = options.get("parameters")
        if parameters is not None:
            if parameters not in ("selected", "final"):
                raise ValueError("place: parameters: selected or final, got %r" % (parameters,))
            text["parameters"] = parameters
        btext = {k: _lib.encode(v, "place: " + k) for k, v in text.items()}
        btext["checkpoint"] = _lib.encode(options.get("checkpoint"), "place: checkpoint", optional=True)
        btext["proposals"] = _lib.encode(options.get("proposals"), "place: proposals", optional=True)
        config = options.get("config")
        tmp = None
        if config is not None and not isinstance(config, dict):
            config = _lib.encode(config, "place: config")
        if isinstance(config, dict):
            _check_config(method, config)
            # the text first (NumPy scalars, which the check accepts, as Python numbers: json.dump
            # raised TypeError on them after the file was made, and left it behind: a review)
            cfg_text = json.dumps(config, default=_json_scalar)
            fd, tmp = tempfile.mkstemp(prefix="doppler-config-", suffix=".json")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(cfg_text)
            except BaseException:
                os.unlink(tmp)
                raise
            config = tmp
        btext["config"] = _lib.encode(config, "place: config", optional=True)
        err = _lib.dp_error()
        o = _lib.dp_place_options_alloc(ctypes.byref(err))
        try:
            if not o:
                raise from_status(err.code or _lib.DP_ENOMEM, err)
            for k, v in btext.items():
                if v is not None:
                    check(_lib.dp_place_options_set(o, _lib.encode(k), v, ctypes.byref(err)), err)
            _check_place_options(bmethod, o)
            assign = np.empty(self.n_ops, dtype=np.int32)
            prio = np.empty(self.n_ops, dtype=np.float64)
            has_prio = ctypes.c_int(0)
            with self._lock:
                e = self._e()
                _lib.dp_place_options_set_engine(o, e)
                _lib.dp_place_options_set_machine(o, self._mach)
                before = _lib.dp_engine_simulations(e)
                check(_lib.dp_place(bmethod, self.graph._g(), self._cptr, o,
                                    assign.ctypes.data_as(_lib.PI), prio.ctypes.data_as(_lib.PD), ctypes.byref(has_prio),
                                    ctypes.byref(err)), err)
                spent = _lib.dp_engine_simulations(e) - before
                if not has_prio.value:
                    # a priority queue without the method's priorities orders by b-level, as the command
                    _lib.dp_cost_levels(self.graph._g(), self._cptr, prio.ctypes.data_as(_lib.PD), None)
                s = self._run(e, assign, prio)
                sched = self._schedule(e, assign, s)
        except Error as x:
            if tmp and tmp in str(x):
                raise _without_file(x, tmp) from None
            raise
        finally:
            _lib.dp_place_options_free(o)
            if tmp:
                os.unlink(tmp)
        p = Placement()
        p.method = method
        p.options = dict(options)
        p.assignment = _ro(assign.astype(np.int64))
        p.priority = _ro(prio) if has_prio.value else None
        p.makespan = sched.makespan
        p.schedule = sched
        p.simulations = int(spent)
        return p

    def __repr__(self):
        if not self._ptr:
            return "<doppler.Engine (closed)>"
        if self.graph.closed:  # (repr raised ClosedError: a review)
            return "<doppler.Engine (its graph is closed)>"
        return "<doppler.Engine %s on %d devices, %s>" % (self.graph.name, self._n_devices,
                                                        "general engine" if self.general else "exact fast path")


def simulate(graph, assignment, machine=None, priority=None, trace=None):
    """Simulate one assignment of graph on machine (a one-off Engine); returns its Schedule."""
    with Engine(graph, machine) as e:
        return e.simulate(assignment, priority, trace)


def simulate_batch(graph, assignments, machine=None, **kw):
    """Simulate a (B, n_ops) batch of assignments; see Engine.simulate_batch."""
    with Engine(graph, machine) as e:
        return e.simulate_batch(assignments, **kw)


def place(graph, method, machine=None, **options):
    """Place graph with a method of `doppler place` on machine; see Engine.place."""
    with Engine(graph, machine) as e:
        return e.place(method, **options)
