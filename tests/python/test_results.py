"""Results as tables: a sweep's results file and a training run's trajectory file read into
DataFrames (pandas and h5py; skipped where they are missing) hold the numbers Python computes."""

import json
import os

import numpy as np
import pytest

import doppler
from conftest import bundled, run_cli

pd = pytest.importorskip("pandas")


def test_read_sweep_h5_and_csv(tmp_path):
    pytest.importorskip("h5py")
    g = bundled("chainmm-small")
    cfg = tmp_path / "s.json"
    cfg.write_text(json.dumps({"name": "py", "grid": [{"graph": [g], "devices": [2, 4], "method": ["cp", "random"],
                                                      "seed": [3]}]}))
    out = tmp_path / "s.h5"
    run_cli("sweep", str(cfg), "--jobs", "1", "--quiet", "--out", str(out))
    for path in (str(out), str(tmp_path / "s.csv")):
        df = doppler.read_sweep(path)
        assert isinstance(df, pd.DataFrame) and len(df) == 4
        assert set(df["method"]) == {"cp", "random"} and (df["status"] == "ok").all()
        graph = doppler.Graph.read(g)
        for _, row in df.iterrows():
            p = doppler.place(graph, row["method"], doppler.Machine(devices=int(row["devices"])), seed=int(row["seed"]))
            # both files give the exact doubles: the CSV holds the shortest exact text, and
            # pandas' default parser changed its last bits (this test allowed 1e-14: a review)
            assert p.makespan == row["makespan"], (path, row["method"], row["devices"])
            assert row["params"]["method"] == row["method"]


def test_read_sweep_agrees_with_the_command(tmp_path):
    """The two readers of a sweep's results file, Python's read_sweep (h5py, the layout of
    doc/doppler-results.md) and the command's (dp_results_read_h5: `doppler report --table runs`,
    every double in 17 digits), give the same rows, column by column."""
    pytest.importorskip("h5py")
    import csv
    import io
    import math
    g = bundled("chainmm-small")
    cfg = tmp_path / "s.json"
    cfg.write_text(json.dumps({"name": "agree", "grid": [{"graph": [g], "devices": [2, 3], "method": ["cp", "random", "heft"],
                                                          "seed": [3, 4]}]}))
    out = tmp_path / "s.h5"
    run_cli("sweep", str(cfg), "--jobs", "1", "--quiet", "--out", str(out))
    py = doppler.read_sweep(str(out))
    _, text, _ = run_cli("report", str(out), "--table", "runs")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(py) == 12
    assert list(rows[0].keys()) == list(py.columns)
    for i, r in enumerate(rows):
        p = py.iloc[i]
        for k, v in r.items():
            if k in ("params", "metrics"):
                assert (json.loads(v) if v else {}) == p[k], (i, k)
            elif k == "makespan":
                assert (math.isnan(p[k]) and v == "") or float(v) == p[k], (i, k, v, p[k])
            elif isinstance(p[k], str):
                assert v == p[k], (i, k)
            else:
                assert float(v) == float(p[k]), (i, k, v, p[k])


def test_read_trajectory(tmp_path):
    pytest.importorskip("h5py")
    cfg = tmp_path / "t.json"
    cfg.write_text(json.dumps({"network": {"hidden": 4, "mlp_hidden": 4, "edge_hidden": 4, "steps": 1}}))
    traj = tmp_path / "t.traj.h5"
    g = bundled("chainmm-small")
    run_cli("train", "--graph", g, "--stage", "il", "--episodes", "3", "--config", str(cfg),
            "--checkpoint", str(tmp_path / "t.h5"), "--trajectory", str(traj), "--quiet")
    t = doppler.read_trajectory(str(traj))
    ep, st = t["episodes"], t["steps"]
    assert len(ep) == 3 and (ep["stage"] == 0).all()
    assert len(st) == ep["n_steps"].sum() == 3 * doppler.Graph.read(g).n_ops
    assert (st.groupby("episode_row").size().to_numpy() == ep["n_steps"].to_numpy()).all()
    assert t["attrs"]["format"] == "doppler-trajectory" and t["attrs"]["n_ops"] == 24


def test_read_trajectory_agrees_with_the_layout(tmp_path):
    """The library's reader (dp_h5io_traj_read through ctypes: read_trajectory) and the documented
    layout read by h5py (doc/file-formats.md) give the same rows, bit for bit, and the same
    attributes, for a run with evaluations (two stages, a validation graph)."""
    h5py = pytest.importorskip("h5py")
    import numpy as np
    cfg = tmp_path / "t.json"
    cfg.write_text(json.dumps({"network": {"hidden": 4, "mlp_hidden": 4, "edge_hidden": 4, "steps": 1},
                               "checkpoint_every": 2}))
    traj = tmp_path / "t.traj.h5"
    g = bundled("chainmm-small")
    run_cli("train", "--graph", g, "--stage", "il", "--episodes", "4", "--config", str(cfg),
            "--checkpoint", str(tmp_path / "t.h5"), "--trajectory", str(traj), "--quiet")
    t = doppler.read_trajectory(str(traj))
    with h5py.File(traj, "r") as f:
        for group in ("episodes", "steps", "evaluations"):
            ours = t[group]
            assert set(f[group]) == set(ours.columns) - {"episode_row"}, group
            for k in f[group]:
                col = f[group][k][:]
                assert ours[k].dtype == col.dtype, (group, k)
                assert np.array_equal(ours[k].to_numpy(), col, equal_nan=col.dtype.kind == "f"), (group, k)
        for k in ("graph", "oracle", "time_unit", "run_id"):
            assert t["attrs"][k] == f.attrs[k].decode(), k
        for k in ("version", "n_ops", "n_devices"):
            assert t["attrs"][k] == int(f.attrs[k]), k
        assert t["attrs"]["config"] == json.loads(f.attrs["config"].decode())
    assert len(t["episodes"]) == 4 and len(t["evaluations"]) >= 1
    assert (t["episodes"]["stage"] == 0).all()


def test_env_records_are_dataframes():
    g = doppler.Graph.read(bundled("chainmm-small"))
    env = doppler.Env(g)
    env.reset()
    done = False
    while not done:
        _, r, done, _, info = env.step(env.cp_action())
    tr = env.trajectory()
    assert isinstance(tr, pd.DataFrame) and len(tr) == g.n_ops
    assert tr["reward"].iloc[-1] == -info["makespan"] and (tr["reward"].iloc[:-1] == 0).all()
    assert (tr["device"].to_numpy() == info["assignment"][tr["op"].to_numpy()]).all()
    ep = env.episodes()
    assert list(ep.columns) == ["episode", "makespan", "return", "steps", "simulations", "seconds"]
    assert ep["makespan"].iloc[0] == info["makespan"]


def _trajectory(tmp_path):
    """A run's checkpoint and trajectory (Stage I, 3 episodes on chainmm-small)."""
    cfg = tmp_path / "t.json"
    cfg.write_text(json.dumps({"network": {"hidden": 4, "mlp_hidden": 4, "edge_hidden": 4, "steps": 1}}))
    traj, ckpt = tmp_path / "t.traj.h5", tmp_path / "t.h5"
    args = ["train", "--graph", bundled("chainmm-small"), "--stage", "il", "--episodes", "3", "--config", str(cfg),
            "--checkpoint", str(ckpt), "--trajectory", str(traj), "--quiet"]
    run_cli(*args)
    return args, traj


def test_read_trajectory_refuses_old_versions_as_the_library(tmp_path):
    """A trajectory of an earlier format version (variable-length strings, versions 1 and 2) or of
    another version is refused by read_trajectory with the refusal `doppler train --resume` gives
    (read_trajectory read both before)."""
    h5py = pytest.importorskip("h5py")
    import numpy as np
    args, traj = _trajectory(tmp_path)
    cases = [("old.h5", lambda f: f.attrs.__setitem__("format", "doppler-trajectory"), doppler.UnsupportedError,
              "variable-length string"),
             ("v4.h5", lambda f: f.attrs.__setitem__("version", np.int32(4)), doppler.InvalidInputError,
              "trajectory format version 4, this build reads version 3 only"),
             ("other.h5", lambda f: f.attrs.__setitem__("format", np.bytes_(b"doppler-checkpoint")),
              doppler.InvalidInputError, "not a doppler trajectory file")]
    for name, change, cls, msg in cases:
        bad = tmp_path / name
        bad.write_bytes(traj.read_bytes())
        with h5py.File(bad, "r+") as f:
            if name == "old.h5":
                del f.attrs["format"]  # h5py writes a str attribute as a variable-length string
            change(f)
        with pytest.raises(cls, match=msg) as e:
            doppler.read_trajectory(str(bad))
        assert str(bad) in str(e.value)
        # the command's refusal of the same file, word for word
        resumed = [a if a != str(traj) else str(bad) for a in args] + ["--resume"]
        rc, _, err = run_cli(*resumed, check=False)
        assert rc != 0 and str(e.value) in err, (name, err)


def test_read_sweep_names_what_is_missing(tmp_path):
    """A malformed results file raises an error naming the file and what is missing, not a bare
    KeyError."""
    h5py = pytest.importorskip("h5py")
    import numpy as np
    g = bundled("chainmm-small")
    cfg = tmp_path / "s.json"
    cfg.write_text(json.dumps({"name": "py", "grid": [{"graph": [g], "devices": [2], "method": ["cp"]}]}))
    out = tmp_path / "s.h5"
    run_cli("sweep", str(cfg), "--jobs", "1", "--quiet", "--out", str(out))
    # an HDF5 file without /runs
    norun = tmp_path / "norun.h5"
    norun.write_bytes(out.read_bytes())
    with h5py.File(norun, "r+") as f:
        del f["runs"]
    with pytest.raises(doppler.InvalidInputError, match="norun.h5: not a doppler sweep results file: no dataset /runs"):
        doppler.read_sweep(str(norun))
    # /runs without two of its columns
    cols = tmp_path / "cols.h5"
    cols.write_bytes(out.read_bytes())
    with h5py.File(cols, "r+") as f:
        runs = f["runs"][:]
        keep = [n for n in runs.dtype.names if n not in ("status", "makespan")]
        del f["runs"]
        f["runs"] = np.array(runs[keep].tolist(), dtype=[(n, runs.dtype[n]) for n in keep])
    with pytest.raises(doppler.InvalidInputError, match="cols.h5: .*/runs lacks the columns status, makespan"):
        doppler.read_sweep(str(cols))
    # no format attribute: not a results file
    nofmt = tmp_path / "nofmt.h5"
    with h5py.File(nofmt, "w") as f:
        f["x"] = 1
    with pytest.raises(doppler.InvalidInputError, match="nofmt.h5: .*no attribute format"):
        doppler.read_sweep(str(nofmt))
    # a CSV without a column, and an empty one
    csv = (tmp_path / "s.csv").read_text().splitlines()
    header = csv[0].split(",")
    i = header.index("status")
    short = tmp_path / "short.csv"
    short.write_text("\n".join(",".join(x for k, x in enumerate(line.split(",")) if k != i) for line in csv) + "\n")
    with pytest.raises(doppler.InvalidInputError, match="short.csv: .*its header lacks the columns status"):
        doppler.read_sweep(str(short))
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(doppler.InvalidInputError, match="empty.csv: .*empty"):
        doppler.read_sweep(str(empty))


def test_read_sweep_not_a_sweep_file_names_it(tmp_path):
    """Issue 28: read_sweep on a file that is no sweep results file raised h5py's OSError ("Unable
    to open file (file signature not found)", no file named) or FileNotFoundError; now the
    package's errors, naming the file."""
    g = os.path.join(os.environ.get("DOPPLER_DATA", "data"), "graphs", "chainmm-small.json")
    with pytest.raises(doppler.InvalidInputError, match="chainmm-small.json: not a doppler sweep results file"):
        doppler.read_sweep(g)
    with pytest.raises(doppler.FileError, match="nope.h5: no such file"):
        doppler.read_sweep(str(tmp_path / "nope.h5"))
    with pytest.raises(doppler.FileError, match="a folder"):
        doppler.read_sweep(str(tmp_path))


def _failing_sweep(tmp_path):
    """A sweep of two ok and two failed runs (a failed run's makespan is empty: NaN)."""
    cfg = tmp_path / "s.json"
    cfg.write_text(json.dumps({"name": "dt", "grid": [{"graph": [bundled("chainmm-small")], "devices": [2],
                                                       "method": ["cp", "random"], "seed": [3],
                                                       "memory_limit": [1, 1e15], "memory_policy": ["error"]}]}))
    out = tmp_path / "s.h5"
    rc, _, _ = run_cli("sweep", str(cfg), "--jobs", "1", "--quiet", "--out", str(out), check=False)
    assert rc == 1  # the failed runs
    return str(out), str(tmp_path / "s.csv")


def _same_table(a, b):
    assert list(a) == list(b)
    for c in a:
        x, y = np.asarray(a[c]), np.asarray(b[c])
        assert x.dtype == y.dtype, (c, x.dtype, y.dtype)
        if x.dtype == np.float64:
            assert np.array_equal(x, y, equal_nan=True), c
        else:
            assert x.tolist() == y.tolist(), c


def test_read_sweep_csv_dtypes_without_pandas(tmp_path, monkeypatch):
    """Without pandas (the csv module) every column came back as strings; the HDF5 file gives
    int64, float64 with NaN for a failed run's makespan, and str objects (a review)."""
    pytest.importorskip("h5py")
    import doppler.results
    h5, csv_path = _failing_sweep(tmp_path)
    monkeypatch.setattr(doppler.results, "_pandas", lambda: None)
    a, b = doppler.read_sweep(h5), doppler.read_sweep(csv_path)
    assert isinstance(b, dict)
    assert b["index"].dtype == np.int64 and b["makespan"].dtype == np.float64 and b["key"].dtype == object
    assert np.isnan(b["makespan"]).sum() == 2 and list(b["status"]).count("failed") == 2
    _same_table(a, b)
    bad = tmp_path / "bad.csv"
    lines = open(csv_path).read().splitlines()
    bad.write_text("\n".join([lines[0], lines[1].replace(",cp,2,", ",cp,two,", 1)] + lines[2:]) + "\n")
    with pytest.raises(doppler.InvalidInputError, match='bad.csv: row 1: devices: not an integer: "two"'):
        doppler.read_sweep(str(bad))


def test_read_sweep_csv_dtypes_with_pandas(tmp_path):
    """pandas read a key of 16 hex digits that are all decimal ones as an int64 (its leading
    zeros lost); every column now has the HDF5 file's type (a review)."""
    pytest.importorskip("h5py")
    h5, csv_path = _failing_sweep(tmp_path)
    _same_table({c: v.to_numpy() for c, v in doppler.read_sweep(h5).items()},
                {c: v.to_numpy() for c, v in doppler.read_sweep(csv_path).items()})
    lines = open(csv_path).read().splitlines()
    digits = tmp_path / "digits.csv"
    rows = [lines[0]] + ["%016d" % i + line[16:] for i, line in enumerate(lines[1:])]
    digits.write_text("\n".join(rows) + "\n")
    df = doppler.read_sweep(str(digits))
    assert df["key"].tolist() == ["%016d" % i for i in range(4)]
    assert df["key"].dtype == object and df["index"].dtype == np.int64


def test_read_sweep_paths_as_every_reader(tmp_path):
    """read_sweep took its path by os.fspath alone: bytes failed inside ("endswith first arg must
    be bytes"), a missing or folder .csv was Python's FileNotFoundError or IsADirectoryError where
    an .h5 one is a FileError naming it, and a NUL or None got Python's messages (a review)."""
    g = bundled("chainmm-small")
    cfg = tmp_path / "s.json"
    cfg.write_text(json.dumps({"name": "py", "grid": [{"graph": [g], "devices": [2], "method": ["cp"]}]}))
    run_cli("sweep", str(cfg), "--jobs", "1", "--quiet", "--out", str(tmp_path / "s.h5"))
    csv = str(tmp_path / "s.csv")
    assert list(doppler.read_sweep(os.fsencode(csv))["method"]) == ["cp"]
    with pytest.raises(doppler.FileError, match="none.csv: no such file"):
        doppler.read_sweep(str(tmp_path / "none.csv"))
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(doppler.FileError, match="d.csv: a folder, not a doppler sweep results file"):
        doppler.read_sweep(str(tmp_path / "d.csv"))
    with pytest.raises(TypeError, match="read_sweep: path: expected a str or a path, got None"):
        doppler.read_sweep(None)
    with pytest.raises(ValueError, match="read_sweep: path: .* contains a NUL character"):
        doppler.read_sweep(csv + "\0x")
