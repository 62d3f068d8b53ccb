"""A call-sequence fuzzer for the Python package (issue 33): random sequences of calls on Graph,
Machine, Engine and Env with random, often wrong, arguments (wrong types, out-of-range ids,
NaN, huge numbers, closed objects, copies), in the manner of Hypothesis' stateful testing but
with a seeded generator of its own, so a run is reproducible from its seed. A call may raise
(the package's errors, TypeError, ValueError, KeyError, IndexError); what it may not do is
crash the interpreter (a signal: the runner in test_robustness.py runs this in a subprocess and
requires exit 0) or leave an object that later returns garbage (a makespan that is not a finite
non-negative number is reported as a failure).

    PYTHONPATH=python DOPPLER_LIB=.libs/libdoppler.so python3 tests/python/fuzz_api.py \\
        --sequences 100000 --seed 1         # the issue's 10^5 sequences
    ... --sequences 300 --seed 7           # what tests/python/test_robustness.py runs in CI

Prints "N sequences, M calls, E expected errors, 0 failures" and exits 0, or names the first
sequence (seed and index) whose call misbehaved and exits 1."""

import argparse
import copy
import math
import os
import pickle
import random
import sys
import warnings

import numpy as np

import doppler

DATA = os.environ.get("DOPPLER_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "data"))
GRAPHS = [os.path.join(DATA, "graphs", "chainmm-small.json"), os.path.join(DATA, "..", "tests", "data", "tiny-doppler.txt")]
EXPECTED = (doppler.Error, TypeError, ValueError, KeyError, IndexError, OverflowError, AttributeError)


def wild_int(r, n):
    """An op or device id: mostly in range, sometimes at or past the ends, negative or huge."""
    return r.choice([r.randrange(max(n, 1)), -1, n, n + 1, 2 ** 31, -(2 ** 63), r.randrange(-3, n + 3)])


def wild_value(r):
    return r.choice([0, 1, -1, 3, 2 ** 40, 1e-300, 1e300, math.nan, math.inf, -math.inf, "x", None, b"\0", [1, 2],
                     {"a": 1}, 2.5, True])


def machine(r):
    keys = ["devices", "peak_flops", "bandwidth", "latency", "transfer", "mode", "streams", "queue", "comm_ratio",
            "topology", "copy_engines", "memory_limit", "memory_policy", "nope"]
    good = {"devices": [1, 2, 3, 4, 8], "peak_flops": [1e12, 1e13], "bandwidth": [1e9, 1.2e10], "latency": [0, 1e-5],
            "transfer": ["fixed", "fifo", "maxmin"], "mode": ["async", "bsp"], "streams": [1, 2], "queue": ["fifo", "priority"],
            "comm_ratio": [0, 4], "topology": ["pcie-gen3-4gpu", "dgx1-v100", "nope"], "copy_engines": [True, False],
            "memory_limit": [0, 1e9], "memory_policy": ["error", "penalty"], "nope": [1]}
    m = doppler.Machine()
    for _ in range(r.randrange(3)):
        k = r.choice(keys)
        v = r.choice(good[k]) if r.random() < 0.8 else wild_value(r)
        try:
            m.set(k, v)
        except EXPECTED:
            pass
    return m


class Failure(Exception):
    pass


def check_makespan(x, what):
    if not (isinstance(x, float) and math.isfinite(x) and x >= 0):
        raise Failure("%s returned makespan %r" % (what, x))


def sequence(r, stats):
    """One random sequence of calls on fresh objects."""
    objs = {"graph": None, "engine": None, "env": None}
    try:
        g = doppler.Graph.read(r.choice(GRAPHS))
    except EXPECTED:
        return
    objs["graph"] = g
    n = g.n_ops
    for _ in range(r.randrange(4, 16)):
        act = r.randrange(16)
        stats["calls"] += 1
        try:
            if act == 0:
                objs["engine"] = doppler.Engine(g, machine(r) if r.random() < 0.7 else None)
            elif act == 1 and objs["engine"] is not None:
                e = objs["engine"]
                a = np.array([wild_int(r, e.n_devices) if r.random() < 0.1 else r.randrange(e.n_devices)
                              for _ in range(n)])
                check_makespan(e.simulate(a).makespan, "simulate")
            elif act == 2 and objs["engine"] is not None:
                e = objs["engine"]
                B = r.randrange(0, 4)
                A = np.array([[r.randrange(e.n_devices) for _ in range(n)] for _ in range(B)]).reshape(B, n)
                for x in e.simulate_batch(A):
                    check_makespan(float(x), "simulate_batch")
            elif act == 3 and objs["engine"] is not None:
                method = r.choice(doppler.methods() + [None, 3, "nope", ""])
                opts = {}
                for k in r.sample(["seed", "budget", "samples", "device", "refine", "refine_budget", "config"], r.randrange(3)):
                    opts[k] = {"seed": r.choice([1, 2, -1, 2 ** 70]), "budget": r.choice([1, 20, 0, -5]),
                               "samples": r.choice([1, 2, 0]), "device": r.choice([0, 1, 9, -1]),
                               "refine": r.choice(["anneal", "local", "bogus"]), "refine_budget": r.choice([10, 0, -1]),
                               "config": r.choice([{}, {"t0": 0.1}, {"nosuchkey": 1}, 5])}[k]
                if method in ("anneal", "local", "exact", "improve", "placeto", "gdp", "random") and "budget" not in opts:
                    opts["budget"] = 20
                p = objs["engine"].place(method, **opts)
                check_makespan(p.makespan, "place %s" % method)
            elif act == 4:
                objs["env"] = doppler.Env(g, machine(r) if r.random() < 0.5 else None,
                                          state=r.choice(["append", "engine", "bogus"]))
            elif act == 5 and objs["env"] is not None:
                objs["env"].reset(seed=r.choice([None, 1, 5]))
            elif act == 6 and objs["env"] is not None:
                env = objs["env"]
                ready = list(env.ready)
                op = r.choice(ready) if ready and r.random() < 0.8 else wild_int(r, n)
                env.step((op, wild_int(r, env.n_devices) if r.random() < 0.2 else r.randrange(env.n_devices)))
            elif act == 7 and objs["env"] is not None:
                env = objs["env"]
                x = env.est_start(wild_int(r, n), wild_int(r, env.n_devices))
                if not (isinstance(x, float) and math.isfinite(x) and x >= 0):
                    raise Failure("est_start returned %r" % (x,))
            elif act == 8:
                k = r.choice(list(objs))
                if objs[k] is not None:
                    objs[k].close()
            elif act == 9:
                k = r.choice(list(objs))
                if objs[k] is not None:
                    r.choice([copy.copy, copy.deepcopy, pickle.dumps])(objs[k])
            elif act == 10:
                m = machine(r)
                m2 = pickle.loads(pickle.dumps(m)) if r.random() < 0.5 else copy.deepcopy(m)
                if repr(m2) != repr(m):
                    raise Failure("a copied Machine differs: %r against %r" % (m2, m))
            elif act == 11 and objs["engine"] is not None:
                prio = np.array([r.choice([1.0, 2.0, math.nan, math.inf, -1.0]) for _ in range(n)])
                check_makespan(objs["engine"].simulate(np.zeros(n, dtype=np.int64), priority=prio).makespan, "simulate priority")
            elif act == 12:
                _ = (g.n_ops, g.n_edges, g.name, g.work, g.edges, g.topological_order, g.blevels())
            elif act == 13 and objs["env"] is not None:
                env = objs["env"]
                _ = (env.ready, env.assignment, env.step_count, env.makespan)
            elif act == 14 and objs["engine"] is not None:
                objs["engine"].place("cp", **{r.choice(["checkpoint", "proposals", "samples"]): wild_value(r)})
            elif act == 15:
                doppler.Graph.read(r.choice([GRAPHS[0], "nope.json", "", "a\0b", 5, None]))
        except Failure:
            raise
        except EXPECTED:
            stats["errors"] += 1
    for o in objs.values():
        if o is not None:
            try:
                o.close()
            except EXPECTED:
                pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sequences", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    stats = {"calls": 0, "errors": 0}
    for i in range(a.sequences):
        r = random.Random(a.seed * 1000003 + i)
        try:
            sequence(r, stats)
        except Failure as e:
            print("FAIL: sequence %d of seed %d: %s" % (i, a.seed, e))
            return 1
    print("%d sequences, %d calls, %d expected errors, 0 failures" % (a.sequences, stats["calls"], stats["errors"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
