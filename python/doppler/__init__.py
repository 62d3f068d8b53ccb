"""doppler: device assignment of dataflow graphs, from Python.

A thin interface over libdoppler (ctypes; NumPy arrays in and out). Every makespan comes from the
library's one engine, so the numbers are bit for bit those of the `doppler` command.

    import doppler
    g = doppler.Graph.read("data/graphs/llama-layer.json")     # or Graph.generate("llama-layer")
    m = doppler.Machine(topology="dgx1-v100", transfer="maxmin")
    e = doppler.Engine(g, m)
    p = e.place("cp")                          # any method of `doppler place`
    s = e.simulate(p.assignment)               # Schedule: start/end per op, transfers, busy
    ms = e.simulate_batch(A)                   # (B, n_ops) assignments -> (B,) makespans
    env = doppler.Env(g, m)                    # reset() / step((op, device)), Gymnasium style

See doc/python.md. Errors from the library raise doppler.Error (subclasses InvalidInputError,
FileError, CycleError, CapacityError, ...) carrying the library's message.
"""

try:
    import numpy  # noqa: F401  (the package's one dependency: say where to get it)
except ImportError as _e:
    import sys as _sys
    raise ImportError("doppler needs NumPy, which this Python (%s) cannot import (%s): install it into this "
                      "environment (%s -m pip install numpy), or on Debian use /usr/bin/python3 with python3-numpy, "
                      "or a virtual environment made with --system-site-packages (doc/python.md)"
                      % (_sys.executable, _e, _sys.executable)) from None

from ._errors import (CapacityError, ClosedError, CopyError, CycleError, Error, FileError, InvalidInputError,
                      LibraryMemoryError, UnsupportedError)
from ._lib import path as library_path
from .engine import Engine, Placement, Schedule, config_keys, methods, place, simulate, simulate_batch
from .env import DEVICE_FEATURES, ENGINE_DEVICE_FEATURES, OP_FEATURES, Env
from .graph import Costs, Graph
from .machine import Machine
from .results import read_sweep, read_trajectory

__version__ = "0.1.0"  # python/pyproject.toml, configure.ac

__all__ = [
    "Graph", "Costs", "Machine", "Engine", "Schedule", "Placement", "Env", "methods", "config_keys", "place", "simulate",
    "simulate_batch", "read_sweep", "read_trajectory", "OP_FEATURES", "DEVICE_FEATURES", "ENGINE_DEVICE_FEATURES", "Error",
    "InvalidInputError", "CycleError", "FileError", "CapacityError", "UnsupportedError", "LibraryMemoryError",
    "ClosedError", "CopyError", "library_path",
]
