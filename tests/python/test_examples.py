"""The examples run: NumPy random search, and the PyTorch REINFORCE agent for a few episodes
(skipped where python3-torch is not installed; scripts/install-deps.sh installs it)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import doppler
from conftest import SRC, bundled

EXAMPLES = os.path.join(SRC, "examples")


def test_random_search_example():
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "random_search.py"), bundled("chainmm-small"), "3000"],
                       capture_output=True, text=True, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("random search: best of 3000: ")
    best = float(p.stdout.split()[5])
    # the best of 3000 is no worse than the best of the first 1000 it drew (same seed)
    g = doppler.Graph.read(bundled("chainmm-small"))
    A = np.random.default_rng(0).integers(0, 4, size=(1000, g.n_ops))
    assert best <= doppler.simulate_batch(g, A).min()


def test_reinforce_example_runs_a_few_episodes():
    torch = pytest.importorskip("torch")
    sys.path.insert(0, EXAMPLES)
    try:
        import reinforce_torch
    finally:
        sys.path.remove(EXAMPLES)
    g = doppler.Graph.read(bundled("chainmm-small"))
    env = doppler.Env(g)
    best, assignment, history = reinforce_torch.train(env, 4, seed=1, log=None)
    assert len(history) == 4 and best == min(history)
    # the environment's makespan is the engine's
    assert doppler.simulate(g, assignment).makespan == best
    assert env.engine.simulations == 4
    # the same seed gives the same episodes
    env2 = doppler.Env(g)
    assert reinforce_torch.train(env2, 4, seed=1, log=None)[2] == history
    assert torch.__version__
    # the features it learns from are the same in any time unit: the time columns over the
    # critical path, the counts and flags as they are (the counts were divided too: a review)
    scales = reinforce_torch.time_scales(env, 7.0)
    names = dict(zip(doppler.OP_FEATURES, scales[0]))
    assert names["n_predecessors"] == names["ready"] == 1.0 and names["blevel"] == names["end"] == 7.0
    env3 = doppler.Env(g, features="engine")
    d = dict(zip(doppler.ENGINE_DEVICE_FEATURES, reinforce_torch.time_scales(env3, 7.0)[1]))
    assert d["bpath_load"] == 1.0 and d["est_start"] == 7.0


def test_place_torch_model_example_runs_placed():
    pytest.importorskip("torchvision")  # test_importers.py fails under CI without it
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "place_torch_model.py")], capture_output=True,
                       text=True, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("ResNet: 70 ops, 77 edges") and len(lines) == 3
    assert all(line.endswith("outputs equal: True") for line in lines[1:])


def test_random_search_example_spends_what_it_says():
    # it ran budget // 1000 batches: "best of 500" with no simulation at all (inf), 2000 for 2500
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "random_search.py"), bundled("chainmm-small"), "500"],
                       capture_output=True, text=True, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    best = float(p.stdout.split()[5])
    g = doppler.Graph.read(bundled("chainmm-small"))
    A = np.random.default_rng(0).integers(0, 4, size=(500, g.n_ops))
    assert best == pytest.approx(doppler.simulate_batch(g, A).min(), rel=1e-5)  # printed to 6 digits


def test_own_policy_sweep_example(tmp_path):
    """examples/own_policy_sweep.py: a policy written in Python places each graph, and a sweep puts
    its placements (method "assignment:NAME", doc/sweep-format.md) beside cp, HEFT and round-robin
    in one report; each of its runs is the engine's simulation of the file it wrote."""
    import csv
    from conftest import DOPPLER
    graphs = [bundled("chainmm-small"), bundled("ffnn")]
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "own_policy_sweep.py"), str(tmp_path), "4"] + graphs,
                       capture_output=True, text=True, env=dict(os.environ, DOPPLER=DOPPLER))
    assert p.returncode == 0, p.stderr
    assert "| graph | cp (b) | heft | round-robin (b) | assignment:earliest-finish |" in p.stdout
    rows = [r for r in csv.DictReader(open(tmp_path / "own-policy.csv")) if r["method"] == "assignment:earliest-finish"]
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    for path in graphs:
        g = doppler.Graph.read(path)
        placed = json.load(open(tmp_path / "placements" / ("%s-d4.json" % g.name)))["devices"]
        want = doppler.Engine(g, doppler.Machine(devices=4)).simulate(placed).makespan
        got = [float(r["makespan"]) for r in rows if r["graph"] == os.path.abspath(path)]
        assert got == [want]


def test_random_search_example_refuses_no_simulations():
    # a budget of 0 (or -5) printed "best of 0: inf s", exit 0 (a review)
    for budget in ("0", "-5"):
        p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "random_search.py"), bundled("chainmm-small"), budget],
                           capture_output=True, text=True, env=dict(os.environ))
        assert p.returncode == 1 and "SIMULATIONS is a positive count" in p.stderr and not p.stdout, (budget, p.stdout)


def test_reinforce_example_refuses_no_episodes():
    # 0 episodes printed "best makespan inf s after 0 episodes", exit 0 (a review)
    pytest.importorskip("torch")
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "reinforce_torch.py"), bundled("chainmm-small"), "0"],
                       capture_output=True, text=True, env=dict(os.environ))
    assert p.returncode == 2 and "EPISODES is a positive count, got 0" in p.stderr and not p.stdout
