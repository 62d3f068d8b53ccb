"""Your own policy beside the project's methods, in the same report (doc/sweep-format.md "Your own
placements"). A greedy earliest-finish policy written here on the environment (the ready op of
highest b-level, on the device where it would end first under the engine's exact state) places
each graph; its placements are written as files, then a sweep runs cp, HEFT and round-robin on the
same graphs and machine beside them, and `doppler report` prints the table (makespans, the lower
bound, the best baseline and each column's ratio to it).
Usage: python3 examples/own_policy_sweep.py OUTDIR [DEVICES] GRAPH...   (doppler on the PATH, or
$DOPPLER: the command). Graphs are placed on DEVICES (default 4) identical devices; a
heterogeneous example (HEFT's .in, which brings its own processors) is not for this script. Each
run starts a new results file: a sweep run again keeps a finished run's result even when the
file of its placement has changed (doc/sweep-format.md)."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

import doppler


def earliest_finish(graph, devices):
    """One episode of the policy; returns its assignment (n_ops,) and the engine's makespan."""
    env = doppler.Env(graph, doppler.Machine(devices=devices), state="engine", device_features=False)
    blevel = env.engine.costs.blevel
    op_time = env.engine.costs.op_time                      # (n_ops, devices), printed unit
    env.reset()
    done = False
    while not done:
        ready = env.ready
        v = int(ready[np.argmax(blevel[ready])])           # ties: the lowest id (argmax's first)
        ends = [env.est_start(v, d) + op_time[v, d] for d in range(devices)]
        _, _, done, _, info = env.step((v, int(np.argmin(ends))))
    return info["assignment"], info["makespan"]


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out, graphs = os.path.abspath(argv[1]), argv[2:]
    devices = 4
    if graphs[0].isdigit():
        devices, graphs = int(graphs[0]), graphs[1:]
    if not graphs:
        sys.exit(__doc__)
    os.makedirs(os.path.join(out, "placements"), exist_ok=True)
    names = {}
    for path in graphs:
        g = doppler.Graph.read(path)
        if g.name in names:  # {graph} would name one file for both ({graph_file} tells them apart)
            sys.exit("own_policy_sweep.py: %s and %s are both graph %r: give graphs of distinct names"
                     % (names[g.name], path, g.name))
        names[g.name] = path
        assignment, makespan = earliest_finish(g, devices)
        # the file the sweep reads: {graph} is the graph's name, {devices} the device count
        with open(os.path.join(out, "placements", "%s-d%d.json" % (g.name, devices)), "w") as f:
            json.dump({"graph": g.name, "devices": [int(d) for d in assignment]}, f)
        print("%s: earliest-finish %.6g %s" % (g.name, makespan, g.time_unit))
    graphs = [os.path.abspath(p) for p in graphs]
    config = {
        "name": "own-policy",
        "fixed": {"devices": devices},
        "grid": [{"graph": graphs, "method": ["cp", "heft", "round-robin"]},
                 {"graph": graphs, "method": ["assignment:earliest-finish"],
                  "assignment": ["placements/{graph}-d{devices}.json"]}],
        "tables": {"main": {"rows": "graph", "cols": "method", "baselines": ["cp"]}},
    }
    with open(os.path.join(out, "own-policy.json"), "w") as f:
        json.dump(config, f, indent=1)
    # $DOPPLER, else the build tree's (this script's folder's parent), else the installed one: run
    # from the build tree, where `doppler` is not on PATH, it died with a traceback (a review)
    built = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "doppler")
    doppler_cmd = os.environ.get("DOPPLER") or (built if os.access(built, os.X_OK) else shutil.which("doppler"))
    if not doppler_cmd:
        sys.exit("own_policy_sweep.py: no doppler command: set DOPPLER=/path/to/doppler (the build tree's "
                 "./doppler), or install it (make install)")
    for old in ("own-policy.h5", "own-policy.csv"):  # a new results file: these placements are new
        if os.path.exists(os.path.join(out, old)):
            os.remove(os.path.join(out, old))
    subprocess.run([doppler_cmd, "sweep", "own-policy.json", "--quiet"], cwd=out, check=True)
    subprocess.run([doppler_cmd, "report", "own-policy.h5", "--table", "main"], cwd=out, check=True)


if __name__ == "__main__":
    main(sys.argv)
