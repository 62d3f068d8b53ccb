"""A threaded call fuzzer for the Python package: three threads call random methods of one shared
Graph, Engine and Env (simulate, place, costs, steps, resets, records, writes, new engines) while
any of them may close the Env, the Engine or the Graph. A call may raise the package's errors,
TypeError or ValueError (a closed object raises ClosedError); what it may not do is crash the
interpreter (a signal: the runner in test_robustness.py requires exit 0) or raise anything else.
It found three crashes: Env.close, Graph.close and Engine.close from another thread freed what a
call under way was reading (each has its own test in test_robustness.py).

    PYTHONPATH=python DOPPLER_LIB=.libs/libdoppler.so python3 tests/python/fuzz_threads.py \\
        --rounds 60 --seed 1        # at 596f323 every seed of 1..3 crashed within 40 rounds

Prints "seed S, R rounds, N calls, 0 unexpected" and exits 0, or names the first unexpected
exception and exits 1."""

import argparse
import os
import random
import sys
import tempfile
import threading
import time
import warnings

import numpy as np

import doppler

DATA = os.environ.get("DOPPLER_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "data"))
GRAPHS = [os.path.join(DATA, "graphs", name) for name in ("chainmm-small.json", "llama-block.json")]
MACHINES = [dict(devices=4), dict(topology="dgx1-v100", transfer="maxmin"), dict(topology="pcie-gen3-4gpu", streams=2)]
EXPECTED = (doppler.Error, TypeError, ValueError)


def one_round(rnd, seed, seconds, out, counts, bad):
    r0 = random.Random(seed * 100003 + rnd)
    g = doppler.Graph.read(r0.choice(GRAPHS))
    m = doppler.Machine(**r0.choice(MACHINES))
    e = doppler.Engine(g, m)
    env = doppler.Env(g, m, state=r0.choice(["append", "engine"]), features=r0.choice(["doppler", "engine"]))
    A = np.random.default_rng(rnd).integers(0, e.n_devices, size=(8, g.n_ops))
    stop = time.time() + seconds

    def worker(k):
        r = random.Random(seed * 1000003 + rnd * 10 + k)
        n = 0
        while time.time() < stop:
            n += 1
            try:
                c = r.randrange(14)
                if c == 0:
                    e.simulate_batch(A)
                elif c == 1:
                    e.simulate(A[0])
                elif c == 2:
                    e.costs.op_time.sum()
                elif c == 3:
                    e.place(r.choice(["cp", "heft", "random"]))
                elif c == 4:
                    env.reset()
                elif c == 5:
                    ready = env.ready
                    if len(ready):
                        env.step((int(ready[0]), r.randrange(env.n_devices)))
                elif c == 6:
                    env.cp_action()
                elif c == 7:
                    env.trajectory(), env.episodes(), env.makespan, env.assignment, repr(env)
                elif c == 8:
                    g.work, g.op_names, g.edges, g.costs(m)
                elif c == 9 and r.random() < 0.05:
                    env.close()
                elif c == 10 and r.random() < 0.05:
                    e.close()
                elif c == 11 and r.random() < 0.05:
                    g.close()
                elif c == 12:
                    g.write(os.path.join(out, "g%d.json" % k))
                elif c == 13:
                    doppler.Engine(g, m).close()
            except EXPECTED:
                pass
            except Exception as x:  # noqa: BLE001 (what the fuzzer looks for)
                bad.append("round %d thread %d: %r" % (rnd, k, x))
                break
        counts.append(n)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=0.15, help="each round's length")
    a = ap.parse_args()
    warnings.simplefilter("ignore")  # the machines' warnings on the graphs
    counts, bad = [], []
    with tempfile.TemporaryDirectory() as out:
        for rnd in range(a.rounds):
            one_round(rnd, a.seed, a.seconds, out, counts, bad)
            if bad:
                break
    print("seed %d, %d rounds, %d calls, %d unexpected%s" % (a.seed, a.rounds, sum(counts), len(bad),
                                                             ": " + bad[0] if bad else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
