"""The machine an assignment runs on (libdoppler's dp_machine, sim/dp_machine.h)."""

import ctypes
import json
import os
import sys
import warnings

import numpy as np

from . import _lib
from ._errors import check, from_status

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _value_text(value, what="Machine", yes="on", no="off"):
    """A Python value as the text the library's key/value setters read (dp_machine_set, and the
    generators' parameters, Graph.generate): str, int, float, bool (NumPy's too), bytes (UTF-8)
    and os.PathLike (a topology or calibration file). None and containers are a TypeError
    (topology=None looked for a topology named "None", and b"dgx1-v100" for "b'dgx1-v100'": a
    review; Graph.generate read layers=None as "None" and b"fp16" as "b'fp16'", and took
    np.True_ as "True", another). what: the caller, for the message; yes, no: a bool's text."""
    if value is None:
        raise TypeError("%s: None is no value (leave the key out for its default)" % what)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    if isinstance(value, os.PathLike):
        return os.fsdecode(value)
    if not isinstance(value, (str, int, float, bool, np.bool_, np.integer, np.floating)):
        raise TypeError("%s: a value is a str, int, float or bool, got %s" % (what, type(value).__name__))
    if isinstance(value, (bool, np.bool_)):  # NumPy's bool too ("True" was refused: a review)
        return yes if value else no
    if isinstance(value, (float, np.floating)):
        return repr(float(value))  # shortest text that reads back to the same double
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


def _machine_key(i):
    """Entry i of the machine's key table (a dp_schema_key handle), None past its end."""
    return _lib.dp_schema_section_get_key(_lib.dp_schema_section_at(_lib.dp_machine_sections(), 0), i)


def _key_name(key):
    """The library's name of a key given in any accepted spelling (one dp_machine_key_index found)."""
    i = _lib.dp_machine_key_index(_lib.encode(key, "Machine: key"))
    return _lib.text(_lib.schema_key["key"](_machine_key(i))) if i >= 0 else key


def keys():
    """The settable keys, in the library's order (its table, sim/dp_machine.c):
    [(name, command-line option), ...]."""
    out = []
    buf = ctypes.create_string_buffer(64)
    i = 0
    while _machine_key(i):
        k = _machine_key(i)
        out.append((_lib.text(_lib.schema_key["key"](k)), "--" + _lib.text(_lib.dp_schema_option_text(k, buf, 64))))
        i += 1
    return out


def _new_machine():
    """A fresh dp_machine (dp_machine_alloc: the defaults), a handle the caller destroys."""
    err = _lib.dp_error()
    m = _lib.dp_machine_alloc(ctypes.byref(err))
    if not m:
        raise from_status(err.code or _lib.DP_ENOMEM, err)
    return m


class Machine:
    """A machine: a uniform one (n identical devices, one peak rate, one link bandwidth and
    latency) or a topology (a bundled name such as "dgx1-v100", or a topology JSON file) with an
    optional calibration, plus every option of the simulator. Keys are dp_machine_set's, the same
    as a sweep config's and (with '-' and a leading '--') the command's options:

        devices, peak_flops, bandwidth, latency, topology, calibration, transfer (fixed, fifo,
        maxmin), chunks, mode (async, bsp), streams, queue (fifo, priority), memory_limit (bytes or
        "topology"), memory_policy (error, penalty), memory_penalty, copy_engines (on/off, or a bool), comm_ratio (0, or R: a
        transfer takes R x its producer's time, DOPPLER's rule)

    Machine(devices=8), Machine(topology="dgx1-v100", transfer="maxmin"), m.set("streams", 2).
    Every value is checked when set; a bad key or value raises doppler.InvalidInputError with the
    library's message. Without a topology and with the default simulator options the exact
    DOPPLER-compatible engine runs; any other machine runs the general engine (`general`).

    A Machine is a description: each Engine and Environment builds its own copy of it, so a
    machine may be changed or dropped while engines made from it run on. copy.copy,
    copy.deepcopy and pickle give a new Machine with the same settings.
    """

    def __init__(self, **settings):
        self._m = None
        self._m = _new_machine()
        self._settings = []
        for k, v in settings.items():
            self.set(k, v)

    @classmethod
    def uniform(cls, devices=4, peak_flops=1e13, bandwidth=1.2e10, latency=1e-5, **options):
        """n identical devices of peak_flops FLOP/s joined by links of bandwidth B/s and latency s
        (physical graphs; graphs in time units take their own costs)."""
        return cls(devices=devices, peak_flops=peak_flops, bandwidth=bandwidth, latency=latency, **options)

    @classmethod
    def topology(cls, name, calibration=None, **options):
        """A bundled topology by name (`doppler topology list`) or a topology JSON file, with an
        optional calibration file; both are read here (a FileError naming a topology that is
        neither, not a later failure in Engine)."""
        m = cls(topology=name, **options)
        if calibration is not None:
            m.set("calibration", calibration)
        return m

    @classmethod
    def from_dict(cls, d):
        """A machine from a dict of keys (as a sweep config or to_dict writes them)."""
        return cls(**d)

    @staticmethod
    def keys():
        """[(key, command-line option), ...] as the library lists them."""
        return keys()

    def set(self, key, value):
        """Set one key (its name, with '_' or '-', or its option spelling) from a value (str, int,
        float, bool). Returns self. A topology (and a calibration given with one) is read at once:
        a name that is neither a bundled topology nor a file raises here, naming it, and leaves the
        machine as it was."""
        if not isinstance(key, str):
            raise TypeError("Machine.set: the key is a str (one of Machine.keys()' names), got %s %r"
                            % (type(key).__name__, key))
        k = key  # any spelling the table accepts (dp_schema_find: '_' or '-', with or without "--")
        text = _value_text(value)
        bkey = _lib.encode(k, "Machine.set: key")  # a NUL in either is a ValueError
        btext = _lib.encode(text, "Machine.set: %s" % k)
        err = _lib.dp_error()
        check(_lib.dp_machine_set(self._m, bkey, btext, ctypes.byref(err)), err)
        # a key set again replaces its earlier value (repr, to_dict and copies list it once)
        name = _key_name(k)
        before = self._settings
        self._settings = [(s, v) for s, v in before if _key_name(s) != name] + [(k, text)]
        if name == "topology" or (name == "calibration" and any(_key_name(s) == "topology" for s, _ in self._settings)):
            # a topology (and its calibration) is read now, so that a name that is neither a
            # bundled topology nor a file fails here, naming it, not later in an Engine; on a copy
            # of the settings, as every engine loads its own (this description stays unloaded)
            try:
                _lib.dp_machine_destroy(self._instance())
            except Exception:
                self._settings = before
                m = _new_machine()  # the description as it was before this set
                _lib.dp_machine_destroy(self._m)
                self._m = m
                for s, v in self._settings:
                    _lib.dp_machine_set(self._m, _lib.encode(s), _lib.encode(v), ctypes.byref(err))
                raise
        return self

    def _load(self):
        err = _lib.dp_error()
        check(_lib.dp_machine_load(self._m, ctypes.byref(err)), err)

    @property
    def n_devices(self):
        """Device count (the topology's, once loaded: reading this loads it). A machine whose
        devices were not set says 4, the default; an Engine of it on a graph made for another
        count (a DOPPLER 8gpu_ file, llama-layer at tp 8) uses the graph's: Engine.n_devices is
        the count a simulation uses."""
        self._load()
        return _lib.dp_machine_get_n_devices(self._m)

    @property
    def device_names(self):
        """Device names: the topology's, else "0", "1", ..."""
        self._load()
        n = _lib.dp_machine_get_n_devices(self._m)
        if _lib.dp_machine_get_device_name(self._m, 0) is not None:  # a loaded topology's names
            return [_lib.text(_lib.dp_machine_get_device_name(self._m, d)) for d in range(n)]
        return [str(d) for d in range(n)]

    @property
    def general(self):
        """True when only the general engine simulates this machine (a topology, or a simulator
        option other than the DOPPLER-compatible defaults)."""
        return bool(_lib.dp_machine_general(self._m))

    def to_dict(self):
        """The machine as the library records it (dp_machine_to_json: "devices" and the keys that
        differ from the defaults)."""
        self._load()
        j = _lib.dp_machine_to_json(self._m)
        if not j:
            raise MemoryError("dp_machine_to_json")
        try:
            s = _lib.json_dumps(j, 0)
            try:
                return json.loads(ctypes.string_at(s).decode())
            finally:
                _lib.libc_free(s)
        finally:
            _lib.json_delete(j)

    def costs(self, graph):
        """The cost tables of graph on this machine (dp_machine_costs): a doppler.Costs."""
        from .graph import Costs
        # under the graph's lock: a close from another thread does not free it meanwhile
        with graph._lock:
            if graph._fixed_costs is not None:
                graph._g()
                if self._settings:
                    raise ValueError("%s: a heterogeneous example fixes the machine; use no machine" % graph.source)
                return Costs(graph, graph._fixed_costs, owned=False)
            err = _lib.dp_error()
            c = _lib.dp_machine_costs(self._m, graph._g(), ctypes.byref(err))
            if not c:
                raise from_status(err.code, err)
            costs = Costs(graph, c, owned=True)
            # as `doppler graph info` warns (its bounds are these costs'), said after the lock
            said = machine_warnings(self._m, graph, costs.n_devices)
        warn_machine(said)
        return costs

    def copy(self):
        """A new Machine with the same settings."""
        m = Machine()
        for k, v in self._settings:
            m.set(k, v)
        return m

    # a Machine is plain settings: copies and pickles are new machines made from them (never the
    # C description itself, which holds pointers and is freed with its Machine)
    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (_from_settings, (list(self._settings),))

    def _instance(self):
        """A fresh dp_machine with this machine's settings, loaded: a handle the caller destroys
        (dp_machine_destroy)."""
        m = _new_machine()
        err = _lib.dp_error()
        try:
            for k, v in self._settings:
                check(_lib.dp_machine_set(m, _lib.encode(k), _lib.encode(v), ctypes.byref(err)), err)
            check(_lib.dp_machine_load(m, ctypes.byref(err)), err)
        except Exception:
            _lib.dp_machine_destroy(m)
            raise
        return m

    def __del__(self):
        try:
            if self._m:
                _lib.dp_machine_destroy(self._m)
                self._m = None
        except Exception:
            pass

    def __repr__(self):
        return "<doppler.Machine %s>" % ", ".join("%s=%s" % kv for kv in self._settings) if self._settings \
            else "<doppler.Machine default: 4 devices, DOPPLER-compatible>"


def _from_settings(settings):
    """A Machine from (key, text) pairs as Machine._settings holds them (unpickling)."""
    m = Machine()
    for k, v in settings:
        m.set(k, v)
    return m


def machine_warnings(mach, graph, n_devices):
    """The command's warnings about a machine on a graph (dp_cli_warn_machine), as lines: a
    device count other than the graph was made for (dp_machine_devices_differ), then the library's
    lines (dp_machine_warnings: a key that changes nothing on the graph, a calibration lacking
    devices; Python said none of them: a review). mach: a loaded dp_machine handle, graph: a
    doppler.Graph (read here: call it under the graph's lock, or with an engine on it),
    n_devices: the devices the costs have. warn_machine says them."""
    g = graph._g()
    want = _lib.dp_machine_devices_differ(mach, g)
    said = ["graph %s was made for %d devices; placing it on %d" % (graph.name, want, n_devices)] if want else []
    # 4 kB, and the whole length when the text is longer (a graph's name has no bound: 4 kB cut a
    # long one's lines), as the command does: one call in the usual case, not two
    buf = ctypes.create_string_buffer(4096)
    n = _lib.dp_machine_warnings(mach, g, buf, len(buf))
    if n >= len(buf):
        buf = ctypes.create_string_buffer(n + 1)
        _lib.dp_machine_warnings(mach, g, buf, len(buf))
    return said + buf.value.decode("utf-8", "replace").splitlines()


def warn_machine(lines):
    """Each of machine_warnings' lines as a UserWarning naming the user's line, the first caller
    outside this package (Engine() said sys:1, one frame too far). Called with no lock of the
    package held: a warning handler (warnings.showwarning, a logging hook) may call the package,
    and one that did under the graph's lock deadlocked against a thread holding an engine's lock
    and waiting for that graph's (Env.__repr__: a review)."""
    level, f = 2, sys._getframe(1)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _PACKAGE:
        level, f = level + 1, f.f_back
    for line in lines:
        warnings.warn(line, stacklevel=level)


def _machine_arg(machine, where):
    """machine itself when it is a Machine or None; else a TypeError naming where (an int for a
    device count gave "'int' object has no attribute 'copy'")."""
    if machine is None or isinstance(machine, Machine):
        return machine
    raise TypeError("%s: machine is a doppler.Machine (e.g. doppler.Machine(devices=%s)), got %s %r"
                    % (where, machine if isinstance(machine, int) and not isinstance(machine, bool) else 4,
                       type(machine).__name__, machine))
