"""Fixtures of the Python interface's tests: the built command, the source tree, the shared data."""

import json
import os
import subprocess

import pytest

SRC = os.environ.get("top_srcdir") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("top_builddir") or SRC
DOPPLER = os.path.join(BUILD, "doppler")
SHARED = os.environ.get("DOPPLER_SHARED_DATA") or os.path.join(SRC, "..", "shared", "data")

BUNDLED = ["chainmm-small", "chainmm", "ffnn", "llama-block", "llama-layer", "llama-block-tp8", "llama-layer-tp8"]


def bundled(name):
    return os.path.join(SRC, "data", "graphs", name + ".json")


def doppler_graphs():
    """DOPPLER's graph files in the shared data, with the device count they are meant for."""
    d = os.path.join(SHARED, "doppler-graphs")
    if not os.path.isdir(d):
        return []
    return [(os.path.join(d, f), 8 if f.startswith("8gpu") else 4) for f in sorted(os.listdir(d)) if f.endswith(".txt")]


def run_cli(*args, check=True):
    """Run the doppler command; returns (exit status, stdout, stderr)."""
    env = dict(os.environ)
    env.setdefault("DOPPLER_DATA", os.path.join(SRC, "data"))
    p = subprocess.run([DOPPLER] + [str(a) for a in args], capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise AssertionError("doppler %s: exit %d: %s" % (" ".join(map(str, args)), p.returncode, p.stderr))
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    """doppler ... --json as a dict (floats printed with 17 digits: exact doubles)."""
    return json.loads(run_cli(*args, "--json")[1])


@pytest.fixture(scope="session")
def tiny_config(tmp_path_factory):
    """Small networks for placeto and gdp (fast to train and place): {method: config path}."""
    d = tmp_path_factory.mktemp("cfg")
    out = {}
    for method, net in (("placeto", {"hidden": 8}), ("gdp", {"hidden": 8, "heads": 2, "layers": 1})):
        p = d / (method + ".json")
        p.write_text(json.dumps({method: net}))
        out[method] = str(p)
    return out


@pytest.fixture(scope="session")
def train_config(tmp_path_factory):
    p = tmp_path_factory.mktemp("cfg") / "train.json"
    p.write_text(json.dumps({"network": {"hidden": 4, "mlp_hidden": 4, "edge_hidden": 4, "steps": 1}}))
    return str(p)
