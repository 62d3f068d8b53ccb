"""The Python interface gives the command's numbers to the last bit: `doppler place` for every
method and `doppler simulate` for an assignment, on the bundled graphs, on DOPPLER's graphs (shared
data; skipped without it) and on machines that run the general engine."""

import json
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import doppler
from conftest import BUNDLED, SHARED, SRC, bundled, doppler_graphs, run_cli

# machines as command-line options; Python builds the same machine from the same spellings
MACHINES = [
    [],
    ["--topology", "dgx1-v100", "--transfer-model", "maxmin"],
    ["--topology", "pcie-gen3-4gpu", "--streams", "2"],
    ["--devices", "4", "--queue", "priority"],
    ["--topology", "pcie-gen3-4gpu", "--mode", "bsp"],
    ["--topology", "dgx1-v100", "--transfer-model", "fifo", "--chunks", "4", "--memory-limit", "topology",
     "--memory-policy", "penalty"],
    ["--devices", "3", "--peak-flops", "2e13", "--bandwidth", "5e9", "--latency", "2e-5"],
    ["--topology", "cpu-2core", "--calibration", os.path.join(SRC, "data", "calibrations", "cpu-2core.json"),
     "--transfer-model", "maxmin"],
]


def machine_of(opts):
    m = doppler.Machine()
    for k, v in zip(opts[::2], opts[1::2]):
        m.set(k, v)  # the command's option spelling, as dp_machine_set reads it
    return m


def cases(n_ops, tiny, ckpt):
    """(method, command-line options, Python options) for every method of `doppler place`."""
    out = [("cp", [], {}), ("random", ["--seed", "7"], {"seed": 7}), ("round-robin", [], {}),
           ("single", ["--device", "1"], {"device": 1}), ("heft", [], {}), ("cpop", [], {}), ("peft", [], {}),
           ("etf", [], {}), ("anneal", ["--budget", "60", "--seed", "3"], {"budget": 60, "seed": 3}),
           ("local", ["--budget", "60", "--seed", "3"], {"budget": 60, "seed": 3}),
           ("exact", ["--budget", "3000"], {"budget": 3000}),
           ("placeto", ["--budget", "2", "--seed", "2", "--config", tiny["placeto"]],
            {"budget": 2, "seed": 2, "config": tiny["placeto"]}),
           ("gdp", ["--budget", "2", "--seed", "2", "--config", tiny["gdp"]],
            {"budget": 2, "seed": 2, "config": tiny["gdp"]})]
    if ckpt:
        out.append(("doppler", ["--checkpoint", ckpt, "--samples", "2", "--seed", "5"],
                    {"checkpoint": ckpt, "samples": 2, "seed": 5}))
        # search at inference from the policy's placement, its probabilities proposing the moves
        out.append(("doppler", ["--checkpoint", ckpt, "--refine", "anneal", "--refine-budget", "40"],
                    {"checkpoint": ckpt, "refine": "anneal", "refine_budget": 40}))
    out.append(("cp", ["--refine", "local", "--refine-budget", "40", "--seed", "4"],
                {"refine": "local", "refine_budget": 40, "seed": 4}))
    return out


def cli_place(graph, mopts, method, opts, out):
    rc, so, se = run_cli("place", "--graph", graph, "--method", method, *mopts, *opts, "--out", out, "--json",
                         check=False)
    if rc != 0:
        return None, se.strip()
    with open(out) as f:
        return json.loads(so), json.load(f)["devices"]


def check_place(graph_path, mopts, tmp, tiny, ckpt, methods=None):
    g = doppler.Graph.read(graph_path)
    todo = [c for c in cases(g.n_ops, tiny, ckpt) if methods is None or c[0] in methods]
    with ThreadPoolExecutor(2) as pool:
        futs = [pool.submit(cli_place, graph_path, mopts, m, o, os.path.join(tmp, "%d-%s.json" % (i, m)))
                for i, (m, o, _) in enumerate(todo)]
        cli = [f.result() for f in futs]
    e = doppler.Engine(g, machine_of(mopts))
    checked = 0
    for (method, _, popts), (res, assign) in zip(todo, cli):
        where = "%s %s %s" % (os.path.basename(graph_path), " ".join(mopts), method)
        if res is None:
            # the command refused (exact on a large graph): Python raises the same message
            with pytest.raises(doppler.Error) as ei:
                e.place(method, **popts)
            assert "doppler: " + str(ei.value) == assign.splitlines()[-1], where  # after any warning
            continue
        p = e.place(method, **popts)
        where += " " + " ".join("%s=%s" % kv for kv in popts.items())
        assert p.assignment.tolist() == assign, where
        assert p.simulations == res["simulations"], where
        assert p.makespan == res["makespan"], where
        assert p.schedule.busy.tolist() == res["busy"], where
        assert p.schedule.utilisation.tolist() == res["utilisation"], where
        assert p.schedule.n_transfers == res["transfers"], where
        if "penalised_makespan" in res:
            assert p.schedule.cost == res["penalised_makespan"], where
            assert p.schedule.memory_peak.tolist() == res["memory_peak"], where
        checked += 1
    e.close()
    return checked


def check_simulate(graph_path, mopts, tmp, seed=0):
    g = doppler.Graph.read(graph_path)
    m = machine_of(mopts)
    D = doppler.Engine(g, m).n_devices  # without "devices", the count the graph was made for
    a = np.random.default_rng(seed).integers(0, D, size=g.n_ops)
    path = os.path.join(tmp, "assignment.json")
    with open(path, "w") as f:
        json.dump({"devices": a.tolist()}, f)
    trace = os.path.join(tmp, "cli-trace.json")
    res = json.loads(run_cli("simulate", "--graph", graph_path, "--assignment", path, *mopts, "--trace", trace,
                             "--json")[1])
    ptrace = os.path.join(tmp, "py-trace.json")
    s = doppler.simulate(g, a, m, trace=ptrace)
    where = "%s %s" % (os.path.basename(graph_path), " ".join(mopts))
    assert s.makespan == res["makespan"], where
    assert s.busy.tolist() == res["busy"], where
    assert s.utilisation.tolist() == res["utilisation"], where
    assert s.n_transfers == res["transfers"] and s.transfer_volume == res["transfer_volume"], where
    with open(trace) as f1, open(ptrace) as f2:
        assert json.load(f1) == json.load(f2), where
    # the batch gives the same numbers as one at a time
    A = np.stack([a, (a + 1) % D, np.zeros_like(a)])
    ms, busy = doppler.simulate_batch(g, A, m, busy=True)
    assert ms[0] == s.makespan and busy[0].tolist() == s.busy.tolist(), where
    with doppler.Engine(g, m) as e:
        for b in range(3):
            one = e.simulate(A[b])
            assert one.makespan == ms[b] and one.busy.tolist() == busy[b].tolist(), where


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory, train_config):
    """A tiny DOPPLER checkpoint per (graph, devices), trained by the command."""
    d = tmp_path_factory.mktemp("ckpt")
    made = {}

    def get(graph_path, devices):
        key = (graph_path, devices)
        if key not in made:
            out = str(d / ("%d-%d.h5" % (len(made), devices)))
            run_cli("train", "--graph", graph_path, "--devices", devices, "--pipeline", "--episodes", "2",
                    "--config", train_config, "--checkpoint", out, "--quiet")
            made[key] = out
        return made[key]
    return get


@pytest.mark.parametrize("name", BUNDLED)
def test_place_bundled_every_method(name, tmp_path, tiny_config, checkpoints):
    path = bundled(name)
    devices = doppler.Graph.read(path).devices or 4  # what the command places it on by default
    n = check_place(path, [], str(tmp_path), tiny_config, checkpoints(path, devices))
    assert n >= 15


@pytest.mark.parametrize("k", range(1, len(MACHINES)))
def test_place_general_engine(k, tmp_path, tiny_config):
    for name in ("chainmm-small", "llama-layer"):
        n = check_place(bundled(name), MACHINES[k], str(tmp_path), tiny_config, None,
                        methods=("cp", "random", "heft", "anneal", "exact", "placeto"))
        assert n >= 4


@pytest.mark.parametrize("k", range(len(MACHINES)))
def test_simulate_bundled(k, tmp_path):
    for name in ("chainmm-small", "llama-layer", "ffnn"):
        check_simulate(bundled(name), MACHINES[k], str(tmp_path), seed=k)


DOPPLER_GRAPHS = doppler_graphs()


@pytest.mark.skipif(not DOPPLER_GRAPHS, reason="no shared data (DOPPLER_SHARED_DATA/doppler-graphs)")
@pytest.mark.parametrize("path,devices", DOPPLER_GRAPHS, ids=[os.path.basename(p) for p, _ in DOPPLER_GRAPHS])
def test_doppler_graphs_every_method(path, devices, tmp_path, tiny_config, checkpoints):
    mopts = ["--devices", str(devices)]
    n = check_place(path, mopts, str(tmp_path), tiny_config, checkpoints(path, devices))
    assert n >= 15
    check_simulate(path, mopts, str(tmp_path))
    g = doppler.Graph.read(path)
    assert g.time_unit.startswith("DOPPLER units") and g.time_scale == 1e10


FFNN_192 = os.path.join(SHARED, "doppler-graphs", "ffnn_192nodes.txt")


@pytest.mark.skipif(not os.path.exists(FFNN_192), reason="no shared data (DOPPLER_SHARED_DATA/doppler-graphs)")
def test_utilisation_of_a_scaled_graph(tmp_path):
    """A DOPPLER .txt graph (time_scale 1e10): utilisation divided the printed busy times by the
    printed makespan, each already rounded by its division by the scale, and differed from the
    command's (which divides the simulated ones) in the last bits (a review)."""
    g = doppler.Graph.read(FFNN_192)
    assert g.time_scale != 1
    with doppler.Engine(g, doppler.Machine(devices=4)) as e:
        for seed in range(4):
            a = np.random.default_rng(seed).integers(0, 4, size=g.n_ops)
            path = str(tmp_path / ("a%d.json" % seed))
            with open(path, "w") as f:
                json.dump({"devices": a.tolist()}, f)
            res = json.loads(run_cli("simulate", "--graph", FFNN_192, "--assignment", path, "--devices", "4",
                                     "--json")[1])
            assert e.simulate(a).utilisation.tolist() == res["utilisation"], seed
        res = json.loads(run_cli("place", "--graph", FFNN_192, "--method", "heft", "--devices", "4", "--json")[1])
        assert e.place("heft").schedule.utilisation.tolist() == res["utilisation"]


def _cli_warnings(stderr):
    return [l[len("doppler: warning: "):] for l in stderr.splitlines() if l.startswith("doppler: warning: ")]


def test_machine_warnings_as_the_command(tmp_path):
    """Python warns what the command warns about the machine: a key that changes nothing on the
    graph (peak_flops, bandwidth, latency on a graph of times; comm_ratio on a graph whose
    transfers have times of their own; latency under a comm_ratio), a calibration that names
    only some of the topology's devices and one whose measured ops include none of the graph's
    (the library's dp_machine_warnings, since the command alone said that one: a review). Python
    said only the device count: an Engine of
    Machine(devices=3, peak_flops=2e13) on a DOPPLER .txt graph placed it in silence, where
    `doppler place` warned that peak_flops changes nothing (a review)."""
    times = str(tmp_path / "tasks.dot")  # a task graph of times, its edges with their own times
    with open(times, "w") as f:
        f.write("digraph tasks { a [Weight=4]; b [Weight=3]; c [Weight=2]; a -> b [Weight=5]; a -> c [Weight=1]; }\n")
    with open(os.path.join(SRC, "data", "calibrations", "cpu-2core.json")) as f:
        cal = json.load(f)
    first = sorted(cal["devices"])[0]
    cal["devices"] = {first: cal["devices"][first]}  # one of the topology's two devices
    half = str(tmp_path / "half.json")
    with open(half, "w") as f:
        json.dump(cal, f)
    # a graph named in 3,000 characters: 4 kB of warnings cut the first line and dropped the others
    # (a review)
    long_named = str(tmp_path / "long.json")
    doppler.Graph.read(times).write(long_named)
    with open(long_named) as f:
        doc = json.load(f)
    doc["name"] = "N" * 3000
    with open(long_named, "w") as f:
        json.dump(doc, f)
    cases = [(times, ["--devices", "3", "--peak-flops", "2e13", "--bandwidth", "5e9", "--latency", "1e-5"], 3),
             (long_named, ["--devices", "3", "--peak-flops", "2e13", "--bandwidth", "5e9", "--latency", "1e-5"], 3),
             (times, ["--devices", "2", "--comm-ratio", "2"], 1),
             (bundled("ffnn"), ["--devices", "3", "--latency", "1e-5", "--bandwidth", "1e9", "--comm-ratio", "2"], 2),
             # the device the calibration lacks; its measured ops, none of them ffnn's at its scale
             (bundled("ffnn"), ["--topology", "cpu-2core", "--calibration", half], 2),
             (bundled("llama-layer-tp8"), ["--devices", "4"], 1),  # the device count, said before
             (bundled("ffnn"), ["--devices", "3", "--peak-flops", "2e13"], 0)]  # nothing to say

    def same(lines):  # the command names the device count's source, "(--devices)": the rest word for word
        return [s.split(" (")[0] if s.startswith("graph ") else s for s in lines]
    for graph, mopts, n in cases:
        _, _, se = run_cli("place", "--graph", graph, "--method", "cp", *mopts)
        want = _cli_warnings(se)
        assert len(want) == n, (graph, mopts, want)
        g = doppler.Graph.read(graph)
        for make in (lambda: doppler.Engine(g, machine_of(mopts)).close(), lambda: g.costs(machine_of(mopts))):
            # an Engine (place, simulate, Env) as the command's place; the cost tables as graph info
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                make()
            said = [str(w.message) for w in rec]
            assert same(said) == same(want), (graph, mopts, said, want)
            assert all(w.filename == __file__ for w in rec), [w.filename for w in rec]  # the user's line


HEFT_IN = os.path.join(SHARED, "heft-topcuoglu2002", "paper-example.in")


@pytest.mark.skipif(not os.path.exists(HEFT_IN), reason="no shared data (DOPPLER_SHARED_DATA/heft-topcuoglu2002)")
def test_heterogeneous_example_by_format(tmp_path):
    """Graph.read(path, format="heft-in") of a HEFT example under another name refused it ("as a
    graph alone it has no format here") where `doppler place --format heft-in` places it (a
    review): both read it with its own processors now, to the same makespan (HEFT's 80)."""
    renamed = str(tmp_path / "example.txt")
    with open(HEFT_IN) as f, open(renamed, "w") as out:
        out.write(f.read())
    res = json.loads(run_cli("place", "--graph", renamed, "--format", "heft-in", "--method", "heft", "--json")[1])
    g = doppler.Graph.read(renamed, format="heft-in")
    assert g.fixed_devices == 3
    p = doppler.place(g, "heft")
    assert p.makespan == res["makespan"] == 80
    assert p.schedule.busy.tolist() == res["busy"]
