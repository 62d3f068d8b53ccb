"""Results as tables: a sweep's results file and a training run's trajectory file read into
DataFrames (pandas and h5py; skipped where they are missing) hold the numbers Python computes."""

import json

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
            if path.endswith(".h5"):
                assert p.makespan == row["makespan"], (path, row["method"], row["devices"])
            else:  # the CSV prints 15 significant digits
                assert p.makespan == pytest.approx(row["makespan"], rel=1e-14), (path, row["method"])
            assert row["params"]["method"] == row["method"]


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
