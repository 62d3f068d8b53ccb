#!/bin/sh
# doc/file-formats.md's Python example, run as written on a sweep of its own (a short DOPPLER
# training run, cp and round-robin), then checks of what it read: strings fixed-length UTF-8, the columns and
# datasets the page lists. SKIP (77) without Debian's python3-h5py and python3-pandas.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DOPPLER=$(cd "$top_builddir" && pwd)/doppler
fail() { echo "FAIL: $*" >&2; exit 1; }
PY=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    [ -n "$p" ] && command -v "$p" > /dev/null 2>&1 && "$p" -c 'import h5py, pandas' 2> /dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "SKIP: no python3 with h5py and pandas (Debian: python3-h5py python3-pandas)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dp-formats-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
G=$(cd "$top_srcdir" && pwd)/tests/data/sweep-fork.json
cat > "$work/s.json" <<JSON
{"name": "formats", "fixed": {"graph": "$G", "devices": 2},
 "grid": [{"method": ["doppler"], "episodes_il": [10], "episodes_sim": [10], "seed": [1],
           "cfg__network__hidden": [8], "cfg__network__mlp_hidden": [8], "cfg__network__edge_hidden": [4], "cfg__network__steps": [2]},
          {"method": ["cp", "round-robin"]}]}
JSON
cd "$work"
"$DOPPLER" sweep s.json --out r.h5 --quiet || fail "the sweep failed"
# the page's example, as written
sed -n '/^```python$/,/^```$/p' "$top_srcdir/doc/file-formats.md" | sed '1d;$d' > example.py
[ -s example.py ] || fail "no python example in doc/file-formats.md"
cat example.py - > check.py <<'PY'

# ---- checks of what the example read ----
import h5py
assert isinstance(sweep_name, str) and sweep_name == "formats", sweep_name
assert list(runs["method"]) == ["doppler", "cp", "round-robin"], list(runs["method"])
assert all(isinstance(x, str) for x in runs["status"]) and set(runs["status"]) == {"ok"}
assert list(same["key"]) == list(runs["key"]) and list(same["method"]) == list(runs["method"])
assert all(lb > 0 for lb in lower_bounds)
for col in ["key", "index", "graph", "method", "devices", "topology", "transfer", "mode", "seed", "rep", "status",
            "makespan", "units", "seconds", "episodes", "params", "metrics", "assignment", "trajectory",
            "checkpoint", "error", "finished"]:
    assert col in runs.columns, col
assert isinstance(unit, str) and unit == "time units", unit
assert len(episodes) == 20 and set(episodes["stage"]) == {0, 1}, episodes["stage"].tolist()
for col in ["stage", "episode", "seed", "makespan", "reward", "wall_s", "lr", "epsilon", "sel_agree", "plc_agree",
            "step_offset", "n_steps"]:
    assert col in episodes.columns, col
assert len(first_steps) == 10 and set(steps.columns) == {"sel_op", "sel_logp", "ready", "plc_device", "plc_logp"}
assert config["network"]["hidden"] == 8
# evaluations: at each stage's start and end (10 episodes, checkpoint_every 100), simulations rising
assert list(evaluations.columns.sort_values()) == ["best", "episode", "makespan", "simulations", "stage", "unix_s"]
assert evaluations["stage"].tolist() == [0, 0, 1, 1] and evaluations["episode"].tolist() == [0, 10, 0, 10], evaluations
assert evaluations["simulations"].is_monotonic_increasing and evaluations["simulations"].iloc[-1] >= 20
assert (evaluations["best"] <= evaluations["makespan"] + 1e-12).all() and len(minutes) == 4
assert curve.get_group(1)["best"].iloc[-1] == min(curve.get_group(1)["makespan"])
with h5py.File(run["checkpoint"], "r") as f:
    assert f.attrs["time_unit"].decode() == unit and f.attrs["time_scale"] > 0
    assert abs(best_makespan - f.attrs["best_makespan"] / f.attrs["time_scale"]) <= 1e-12 * abs(best_makespan)
    assert f.attrs["traj_evaluations"] == 4 and f.attrs["simulations"] >= evaluations["simulations"].iloc[-1]
assert len(best_assignment) == 10 and sel_params
for path in [run["trajectory"], run["checkpoint"]]:
    with h5py.File(path, "r") as f:
        for k, v in f.attrs.items():
            # strings are fixed-length UTF-8 (never HDF5's global heap): bytes that decode
            if f.attrs.get_id(k).get_type().get_class() == h5py.h5t.STRING:
                assert not f.attrs.get_id(k).get_type().is_variable_str(), (path, k)
                assert isinstance(v, bytes), (path, k)
                v.decode("utf-8")
print("example ok")
PY
"$PY" check.py > py.log 2>&1 || { cat py.log >&2; fail "the example or its checks failed"; }
grep -q 'example ok' py.log || fail "the checks did not run"
echo "test_file_formats.sh: ok"
