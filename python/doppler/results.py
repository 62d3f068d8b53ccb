"""Results as tables: environment trajectories, `doppler train` trajectory files and `doppler sweep`
results, as pandas DataFrames when pandas is installed (dicts of NumPy arrays otherwise)."""

import ctypes
import json
import os

import numpy as np

from ._errors import FileError, InvalidInputError, UnsupportedError

# the results file this version reads (experiments/results.c: RESULTS_FORMAT and its columns[],
# with their types: DP_COL_STR, DP_COL_INT, DP_COL_DBL)
_SWEEP_FORMAT = "doppler-results 2"
_SWEEP_TYPES = {"key": str, "index": int, "graph": str, "method": str, "devices": int, "topology": str,
                "transfer": str, "mode": str, "seed": int, "rep": int, "status": str, "makespan": float,
                "units": str, "seconds": float, "episodes": int, "params": str, "metrics": str, "assignment": str,
                "trajectory": str, "checkpoint": str, "error": str, "finished": str}
_SWEEP_COLUMNS = tuple(_SWEEP_TYPES)
# each type's column as the HDF5 file's reader gives it: str objects, int64, float64 (NaN where the
# writer left a double empty: a failed run's makespan)
_SWEEP_DTYPES = {str: object, int: np.int64, float: np.float64}


def _sweep_columns_check(path, names, where):
    """InvalidInputError naming the file and the columns it lacks (or has beyond this version's)."""
    missing = [c for c in _SWEEP_COLUMNS if c not in names]
    extra = [c for c in names if c not in _SWEEP_COLUMNS]
    if missing or extra:
        raise InvalidInputError("%s: not a doppler sweep results file of this version: %s %s%s%s" % (
            path, where, "lacks the columns " + ", ".join(missing) if missing else "",
            "; " if missing and extra else "", "has unknown columns " + ", ".join(extra) if extra else ""))


def _pandas():
    try:
        import pandas
        return pandas
    except ImportError:
        return None


def _frame(columns, rows):
    """rows (tuples in column order) as a DataFrame, or a dict of arrays without pandas."""
    cols = {c: np.array([r[i] for r in rows]) for i, c in enumerate(columns)}
    pd = _pandas()
    return pd.DataFrame(cols, columns=list(columns)) if pd else cols


def _csv_column(path, name, texts):
    """A column of the results CSV (its fields as text) as the HDF5 file's reader gives it
    (without pandas: every column came back as strings, a review)."""
    kind = _SWEEP_TYPES[name]
    if kind is str:
        return np.array(texts, dtype=object)
    out = np.empty(len(texts), dtype=_SWEEP_DTYPES[kind])
    for i, t in enumerate(texts):
        try:
            out[i] = np.nan if kind is float and t == "" else kind(t)
        except ValueError:
            raise InvalidInputError("%s: row %d: %s: not %s: \"%s\"" % (
                path, i + 1, name, "an integer" if kind is int else "a number", t)) from None
    return out


def _h5py():
    try:
        import h5py
        return h5py
    except ImportError:
        raise ImportError("doppler: reading HDF5 files needs h5py (Debian: python3-h5py)") from None


def _lib_status(name):
    from . import _lib
    return getattr(_lib, name)


def _text(x):
    return x.decode("utf-8") if isinstance(x, bytes) else x


def _file_check(path, what):
    """FileError naming path when it is missing or a folder (what: what it should be)."""
    if not os.path.exists(path):
        raise FileError("%s: no such file" % path, _lib_status("DP_EIO"))
    if os.path.isdir(path):
        raise FileError("%s: a folder, not %s" % (path, what), _lib_status("DP_EIO"))


def _h5_open(path, what):
    """h5py.File(path, "r"), its failures as the package's errors naming the file (h5py's own
    OSError said "Unable to open file (file signature not found)" without the name)."""
    h5py = _h5py()
    _file_check(path, what)
    try:
        return h5py.File(path, "r")
    except OSError as e:
        if not os.access(path, os.R_OK):
            raise FileError("%s: cannot read it: %s" % (path, e), _lib_status("DP_EIO")) from None
        raise InvalidInputError("%s: not %s (not an HDF5 file: %s)" % (path, what, e)) from None



_COLUMN_TYPES = {b"i": np.int32, b"l": np.int64, b"u": np.uint64, b"f": np.float32, b"d": np.float64}


def _columns(lib, t, table):
    """A table of the trajectory t (a dp_h5io_traj handle) as a dict of NumPy columns, in the
    file's column order, each of the column's own type (dp_h5io_traj_column_type; copied: the
    library frees its rows)."""
    from ._errors import check
    btable = table.encode()
    n = lib.dp_h5io_traj_get_n_rows(t, btable)
    out = {}
    i = 0
    while True:
        name = lib.dp_h5io_traj_column_name(btable, i)
        if name is None:
            return out
        col = np.empty(n, dtype=_COLUMN_TYPES[lib.dp_h5io_traj_column_type(btable, i)])
        err = lib.dp_error()
        check(lib.dp_h5io_traj_get_column(t, btable, name, col.ctypes.data, ctypes.byref(err)), err)
        out[name.decode()] = col
        i += 1


def read_trajectory(path):
    """A `doppler train` trajectory file (policy/dp_h5io.h) as {"episodes": table, "steps": table,
    "evaluations": table, "attrs": dict}, read by the library's own reader (dp_h5io_traj_read, the
    one reader of the layout; no h5py needed): one row per episode (stage, episode, seed, makespan,
    reward, wall_s, lr, epsilon, sel_agree, plc_agree, step_offset, n_steps), one per step
    (episode_row, sel_op, sel_logp, ready, plc_device, plc_logp) and one per model-selection
    evaluation (stage, episode, makespan, best, simulations, unix_s); attrs: format, version,
    graph, n_ops, n_devices, oracle, time_unit, config (decoded from JSON) and run_id. Tables are
    DataFrames with pandas, dicts of arrays without. A file of another format or version is
    refused with the message `doppler train --resume` gives."""
    pd = _pandas()
    from . import _lib
    from ._errors import check
    err = _lib.dp_error()
    # through the one encoder: "x.h5\0junk" read x.h5 (a review)
    t = _lib.dp_h5io_traj_open(_lib.encode(path, "read_trajectory: path"), ctypes.byref(err))
    if not t:
        check(err.code or _lib.DP_EINVAL, err)
    try:
        attrs = {"format": "doppler-trajectory", "version": _lib.dp_h5io_traj_get_int(t, b"version")}
        for k in ("graph", "n_ops", "n_devices", "oracle", "time_unit", "config", "run_id"):
            attrs[k] = (_lib.dp_h5io_traj_get_int(t, k.encode()) if k in ("n_ops", "n_devices")
                        else _text(_lib.dp_h5io_traj_get_text(t, k.encode())))
        ep = _columns(_lib, t, "episodes")
        st = _columns(_lib, t, "steps")
        ev = _columns(_lib, t, "evaluations")
    finally:
        _lib.dp_h5io_traj_close(t)
    try:
        attrs["config"] = json.loads(attrs["config"])
    except ValueError:
        pass
    # which episode (row of the episodes table) each step belongs to
    n_steps = ep["n_steps"].astype(np.int64)
    owner = np.repeat(np.arange(len(n_steps)), n_steps)
    if len(owner) == len(st["sel_op"]):
        st = dict(episode_row=owner, **st)
    if pd:
        ep, st, ev = pd.DataFrame(ep), pd.DataFrame(st), pd.DataFrame(ev)
    return {"episodes": ep, "steps": st, "evaluations": ev, "attrs": attrs}


def read_sweep(path):
    """The rows of a `doppler sweep` results file (experiments/results.h): RESULTS.h5 (with h5py) or
    the RESULTS.csv beside it (with pandas, or the csv module). One row per run: key, index,
    graph, method, devices, topology, transfer, mode, seed, rep, status, makespan, units, seconds,
    episodes, params and metrics (JSON text, decoded to dicts), assignment, trajectory,
    checkpoint, error, finished. A DataFrame with pandas, else a dict of NumPy arrays; from either
    file each column has the HDF5 file's type (str objects, int64, float64 with NaN for a double a
    run has not)."""
    pd = _pandas()
    # a path as every reader takes it (bytes failed in endswith, a missing or folder .csv was
    # Python's FileNotFoundError or IsADirectoryError, an .h5 one a FileError: a review)
    from . import _lib
    path = os.fsdecode(_lib.encode(path, "read_sweep: path"))
    what = "a doppler sweep results file (.h5, or the .csv beside it)"
    if path.endswith(".csv"):
        import csv
        _file_check(path, what)
        with open(path, newline="") as f:
            header = next(csv.reader(f), None)
        if not header:
            raise InvalidInputError("%s: not a doppler sweep results file: empty, no header line" % path)
        _sweep_columns_check(path, header, "its header")
        # a torn file (a run killed while writing, a truncated copy) is the package's error,
        # naming the file and the row, not pandas' ParserError or a KeyError
        with open(path, newline="") as f:
            for i, r in enumerate(csv.reader(f)):
                if i and len(r) != len(header):
                    raise InvalidInputError("%s: row %d has %d fields, the header %d: a torn or truncated results file"
                                            % (path, i, len(r), len(header)))
        if pd:
            # round_trip: the CSV holds each double's shortest exact text; pandas' default parser
            # changed its last bits (every makespan of a sweep differed from the HDF5 file's: a
            # review)
            # dtype: each column's type as the HDF5 file holds it (a key of 16 hex digits that
            # are all decimal ones became an int64 and lost its leading zeros: a review)
            try:
                df = pd.read_csv(path, keep_default_na=False, na_values={c: ["nan", "NaN", ""] for c, t in
                                                                         _SWEEP_TYPES.items() if t is float},
                                 dtype={c: _SWEEP_DTYPES[t] if t is not str else str for c, t in _SWEEP_TYPES.items()},
                                 float_precision="round_trip")
            except ValueError as e:
                raise InvalidInputError("%s: not a doppler sweep results file: %s" % (path, e)) from None
            cols = {c: df[c].to_numpy() for c in df.columns}
        else:
            with open(path, newline="") as f:
                rows = list(csv.reader(f))[1:]
            cols = {c: _csv_column(path, c, [r[i] for r in rows]) for i, c in enumerate(header)}
    else:
        h5py = _h5py()
        with _h5_open(path, what) as f:
            # as the command reads it (dp_results_read_h5): its format, then /runs and its columns
            if "format" not in f.attrs:
                raise InvalidInputError("%s: not a doppler sweep results file: no attribute format (expected \"%s\")"
                                        % (path, _SWEEP_FORMAT))
            fmt = f.attrs["format"]
            if isinstance(fmt, str):  # a variable-length string: results format 1, as the command refuses it
                raise UnsupportedError("%s: attribute \"format\" is a variable-length string (a results file of an "
                                       "earlier version): make it again with this version (doppler sweep)" % path,
                                       _lib_status("DP_EUNSUPPORTED"))
            if _text(fmt) != _SWEEP_FORMAT:
                raise InvalidInputError("%s: not a doppler sweep results file (attribute format is \"%s\", expected \"%s\")"
                                        % (path, _text(fmt), _SWEEP_FORMAT))
            if "runs" not in f or not isinstance(f["runs"], h5py.Dataset):
                raise InvalidInputError("%s: not a doppler sweep results file: no dataset /runs" % path)
            names = f["runs"].dtype.names
            if names is None:
                raise InvalidInputError("%s: not a doppler sweep results file: /runs is not a table of columns" % path)
            _sweep_columns_check(path, names, "/runs")
            runs = f["runs"][:]
        cols = {}
        for name in runs.dtype.names:
            col = runs[name]
            if col.dtype.kind in "OS":
                col = np.array([_text(x) for x in col], dtype=object)
            cols[name] = col
    for name in ("params", "metrics"):
        if name in cols:
            cols[name] = np.array([json.loads(x) if isinstance(x, str) and x else {} for x in cols[name]],
                                  dtype=object)
    if pd:
        return pd.DataFrame(cols)
    return cols
