"""bench_python: the Python interface's cost against the C engine's.

1. Batch simulation: Engine.simulate_batch of B copies of the critical-path assignment of GRAPH
   (default machine, the exact fast path), time per simulation, against bench/bench_sim (the C
   engine alone on the same graph, machine and assignment). Also B random assignments (more
   transfers, more events) and a Python loop of one Engine.simulate call per assignment.
2. The environment: step() time per decision over whole critical-path episodes, with and without
   the per-op device features, against the library's dp_env_step alone (called through ctypes).

Usage: python3 bench/bench_python.py [--bench-sim PATH] [--batch B] GRAPH   (make bench-python)
Medians over repeated timings, and for the batch against the C engine also minima (the figure a
busy host disturbs least); a quiet machine gives stable figures (check `uptime`).
"""
import argparse
import ctypes
import statistics
import subprocess
import time

import numpy as np

import doppler
from doppler import _lib


def times(fn, repeats, inner=1):
    """Seconds per call of fn over `repeats` timings of `inner` calls each."""
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        out.append((time.perf_counter() - t0) / inner)
    return out


def median_time(fn, repeats, inner=1):
    return statistics.median(times(fn, repeats, inner))


def c_engine_us(bench_sim, graph):
    """bench_sim's median and minimum microseconds per simulation of graph (cp assignment, 4
    devices), and its events."""
    out = subprocess.run([bench_sim, "--min-seconds", "1", graph], capture_output=True, text=True, check=True).stdout
    row = out.strip().splitlines()[-1].split()
    return float(row[4]), float(row[5]), int(row[6])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("--bench-sim", default=None, help="path of bench/bench_sim (the C reference)")
    ap.add_argument("--batch", type=int, default=2000)
    a = ap.parse_args()
    g = doppler.Graph.read(a.graph)
    e = doppler.Engine(g)
    cp = e.place("cp").assignment
    B = a.batch
    print("graph %s: %d ops, %d edges, %d devices (%s)" % (g.name, g.n_ops, g.n_edges, e.n_devices,
                                                          "general engine" if e.general else "exact fast path"))
    A_cp = np.tile(cp.astype(np.int32), (B, 1))
    A_rand = np.random.default_rng(1).integers(0, e.n_devices, size=(B, g.n_ops)).astype(np.int32)
    e.simulate_batch(A_cp)  # warm up
    # The C reference and the Python batches sampled alike (slices of about 10 ms for about a
    # second each, C / Python / C / Python), so that both see the same host load
    def py_slices(seconds=1.0, b=256):
        Ab = A_cp[:b]
        out, t0 = [], time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            t = time.perf_counter()
            e.simulate_batch(Ab)
            out.append((time.perf_counter() - t) / b * 1e6)
        return out
    c, py = [], []
    for _ in range(2):
        if a.bench_sim:
            c.append(c_engine_us(a.bench_sim, a.graph))
        py += py_slices()
    py_big = [t / B * 1e6 for t in times(lambda: e.simulate_batch(A_cp), 7)]
    t_cp64 = median_time(lambda: e.simulate_batch(A_cp.astype(np.int64)), 7) / B * 1e6
    t_rand = median_time(lambda: e.simulate_batch(A_rand), 7) / B * 1e6
    t_busy = median_time(lambda: e.simulate_batch(A_rand, busy=True), 7) / B * 1e6
    loop_n = 300
    t_loop = median_time(lambda: [e.makespan(A_rand[i]) for i in range(loop_n)], 5) / loop_n * 1e6
    print("\nbatch simulation, microseconds per simulation (median and minimum)")
    print("  %-52s %10.2f %10.2f" % ("Python simulate_batch, B = 256, cp assignment", statistics.median(py), min(py)))
    print("  %-52s %10.2f %10.2f" % ("Python simulate_batch, B = %d, cp assignment" % B, statistics.median(py_big),
                                     min(py_big)))
    print("  %-52s %10.2f" % ("Python simulate_batch, B = %d, int64 input" % B, t_cp64))
    if c:
        c_med = statistics.median(x[0] for x in c)
        c_min = min(x[1] for x in c)
        print("  %-52s %10.2f %10.2f   (%d events)" % ("C engine alone (bench_sim), cp assignment", c_med, c_min,
                                                       c[0][2]))
        print("  %-52s %10.2f %10.2f   (target <= 1.5)" % ("ratio Python batch (B = 256) / C engine",
                                                          statistics.median(py) / c_med, min(py) / c_min))
    print("  %-52s %10.2f" % ("Python simulate_batch, B = %d, random assignments" % B, t_rand))
    print("  %-52s %10.2f" % ("Python simulate_batch, B = %d, random, with busy" % B, t_busy))
    print("  %-52s %10.2f" % ("Python loop, one Engine.simulate per assignment", t_loop))

    print("\nenvironment, microseconds per decision (whole cp episodes, median of 5)")
    for state, feats, fset in (("append", True, "doppler"), ("append", False, "doppler"), ("engine", False, "doppler"),
                               ("engine", True, "engine")):
        env = doppler.Env(g, device_features=feats, state=state, features=fset)

        def episode():
            env.reset()
            done = False
            while not done:
                done = env.step(env.cp_action())[2]
        episode()
        t = median_time(episode, 5) / g.n_ops * 1e6
        print("  %-52s %10.2f" % ("step(cp_action()), %s state, %s" % (state, ("%s features" % fset) if feats
                                                                          else "no device features"), t))
    env = doppler.Env(g, device_features=False)
    p = env._ptr
    err = _lib.dp_error()

    def raw_episode():
        _lib.dp_env_reset(p)
        for _ in range(g.n_ops):
            v = _lib.dp_env_cp_select(p)
            _lib.dp_env_step(p, v, _lib.dp_env_cp_place(p, v), ctypes.byref(err))
    raw_episode()
    t_raw = median_time(raw_episode, 5) / g.n_ops * 1e6
    print("  %-52s %10.2f" % ("library alone: dp_env_cp_select/place + dp_env_step", t_raw))
    env.reset()
    t_obs = median_time(lambda: env._observation(), 50, 20) * 1e6
    print("  %-52s %10.2f" % ("building one observation (features off)", t_obs))


if __name__ == "__main__":
    main()
