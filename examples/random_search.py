"""Random search with NumPy: sample assignments in batches, simulate each batch in one call, keep
the best. Usage: python3 examples/random_search.py [GRAPH] [SIMULATIONS]"""
import sys

import numpy as np

import doppler

g = doppler.Graph.read(sys.argv[1] if len(sys.argv) > 1 else "data/graphs/llama-layer.json")
engine, rng = doppler.Engine(g), np.random.default_rng(0)
budget, batch, best, best_ms = int(sys.argv[2]) if len(sys.argv) > 2 else 10000, 1000, None, np.inf
if budget < 1:  # "best of 0: inf s" (a review)
    sys.exit("random_search.py: SIMULATIONS is a positive count, got %d" % budget)
for start in range(0, budget, batch):                                 # the last batch may be smaller
    A = rng.integers(0, engine.n_devices, size=(min(batch, budget - start), g.n_ops))  # device ids
    ms = engine.simulate_batch(A)                                    # (batch,) makespans
    if ms.min() < best_ms:
        best, best_ms = A[ms.argmin()], ms.min()
print("random search: best of %d: %.6g %s; cp: %.6g" % (budget, best_ms, g.time_unit, engine.place("cp").makespan))
