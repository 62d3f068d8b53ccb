"""Results as tables: environment trajectories, `doppler train` trajectory files and `doppler sweep`
results, as pandas DataFrames when pandas is installed (dicts of NumPy arrays otherwise)."""

import json
import os

import numpy as np


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


def _h5py():
    try:
        import h5py
        return h5py
    except ImportError:
        raise ImportError("doppler: reading HDF5 files needs h5py (Debian: python3-h5py)") from None


def _text(x):
    return x.decode("utf-8") if isinstance(x, bytes) else x


def read_trajectory(path):
    """A `doppler train` trajectory file (policy/dp_h5io.h) as {"episodes": table, "steps": table,
    "attrs": dict}: one row per episode (stage, episode, seed, makespan, reward, wall_s, lr, epsilon,
    sel_agree, plc_agree, step_offset, n_steps) and one per step (episode_row, sel_op, sel_logp,
    ready, plc_device, plc_logp). Tables are DataFrames with pandas, dicts of arrays without."""
    h5py = _h5py()
    pd = _pandas()
    with h5py.File(path, "r") as f:
        attrs = {k: _text(v) if not isinstance(v, np.ndarray) else v for k, v in f.attrs.items()}
        if "config" in attrs and isinstance(attrs["config"], str):
            try:
                attrs["config"] = json.loads(attrs["config"])
            except ValueError:
                pass
        ep = {k: f["episodes"][k][:] for k in f["episodes"]} if "episodes" in f else {}
        st = {k: f["steps"][k][:] for k in f["steps"]} if "steps" in f else {}
    if ep and st and "n_steps" in ep:
        # which episode (row of the episodes table) each step belongs to
        n_steps = ep["n_steps"].astype(np.int64)
        first = st[next(iter(st))]
        owner = np.repeat(np.arange(len(n_steps)), n_steps)
        if len(owner) == len(first):
            st = dict(episode_row=owner, **st)
    if pd:
        ep = pd.DataFrame(ep)
        st = pd.DataFrame(st)
    return {"episodes": ep, "steps": st, "attrs": attrs}


def read_sweep(path):
    """The rows of a `doppler sweep` results file (experiments/results.h): RESULTS.h5 (with h5py) or
    the RESULTS.csv beside it (with pandas, or the csv module). One row per run: key, index,
    graph, method, devices, topology, transfer, mode, seed, rep, status, makespan, units, seconds,
    episodes, params and metrics (JSON text, decoded to dicts), assignment, trajectory,
    checkpoint, error, finished. A DataFrame with pandas, else a dict of NumPy arrays."""
    pd = _pandas()
    path = os.fspath(path)
    if path.endswith(".csv"):
        if pd:
            df = pd.read_csv(path, keep_default_na=False, na_values={"makespan": ["nan", "NaN", ""]})
            cols = {c: df[c].to_numpy() for c in df.columns}
        else:
            import csv
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            cols = {c: np.array([r[c] for r in rows]) for c in (rows[0].keys() if rows else [])}
    else:
        h5py = _h5py()
        with h5py.File(path, "r") as f:
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
