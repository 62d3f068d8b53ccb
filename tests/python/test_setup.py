"""Setting the package up (issue 32, issue 28): importing it changes no environment variable and
still finds the bundled data; the README's Python example runs without a warning; a Python without
NumPy is told how to get it; a virtual environment with NumPy from Debian (--system-site-packages)
installs the package with pip (python/pyproject.toml) and finds the build's library and data with no
environment variable. Each runs a fresh interpreter from a folder outside the checkout, without
DOPPLER_LIB, DOPPLER_DATA or PYTHONPATH."""

import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD, SRC, bundled

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# imports the package, builds an engine on a bundled topology given by name, and checks that the
# process's environment is what it was before the import
CHECK = r"""
import os, sys
before = dict(os.environ)
import doppler
g = doppler.Graph.read(sys.argv[1])
e = doppler.Engine(g, doppler.Machine(topology="dgx1-v100"))
assert e.n_devices == 8
e.place("cp")
changed = sorted(k for k in set(os.environ) | set(before) if os.environ.get(k) != before.get(k))
assert not changed, "import doppler changed the environment: %s" % changed
print("ok", doppler.__file__)
"""


def clean_env(**extra):
    """os.environ without what points the package at the checkout (the build's library is found
    by its place in the tree; top_builddir only for a build outside the source tree)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DOPPLER_LIB", "DOPPLER_DATA", "PYTHONPATH", "top_builddir", "top_srcdir")}
    if os.path.realpath(BUILD) != os.path.realpath(SRC):
        env["top_builddir"] = BUILD
    env.update(extra)
    return env


def run(args, cwd, env):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_import_sets_no_environment_variable(tmp_path):
    """The package wrote $DOPPLER_DATA into its process's environment (seen by every child
    process); the data folder now goes to the library (dp_machine_data_dir_set)."""
    p = run([sys.executable, "-c", CHECK, bundled("chainmm-small")], tmp_path,
            clean_env(PYTHONPATH=os.path.join(SRC, "python")))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok ")


def readme_python_example():
    text = open(os.path.join(SRC, "README.md"), encoding="utf-8").read()
    section = text[text.index("### From Python"):]
    m = re.search(r"\n((?:    [^\n]*\n)+)", section)
    block = "\n".join(line[4:] for line in m.group(1).splitlines())
    assert block.startswith("import doppler")
    return block


def test_readme_python_example_runs_without_warnings(tmp_path):
    """The README's example placed a 4-device graph on the 8 devices of dgx1-v100 and warned
    ("graph llama-layer was made for 4 devices; placing it on 8"); it now prints nothing."""
    os.symlink(os.path.join(SRC, "data"), tmp_path / "data")  # its relative paths, and its trace written here
    p = run([sys.executable, "-W", "always", "-c", readme_python_example()], tmp_path,
            clean_env(PYTHONPATH=os.path.join(SRC, "python")))
    assert p.returncode == 0, p.stderr
    assert p.stderr == "" and p.stdout == ""
    assert (tmp_path / "t.json").exists()


def test_a_python_without_numpy_is_told_how_to_get_it(tmp_path):
    """Under a Python without NumPy (pyenv, conda, a plain venv) the import failed with "No module
    named 'numpy'" and no word on what to do."""
    venv = tmp_path / "plain"
    p = run([PY, "-m", "venv", "--without-pip", str(venv)], tmp_path, clean_env())
    if p.returncode != 0:
        pytest.skip("python3 -m venv is not available here: %s" % p.stderr.strip())
    py = str(venv / "bin" / "python")
    if run([py, "-c", "import numpy"], tmp_path, clean_env()).returncode == 0:
        pytest.skip("this venv sees a NumPy")
    p = run([py, "-c", "import doppler"], tmp_path, clean_env(PYTHONPATH=os.path.join(SRC, "python")))
    assert p.returncode != 0
    assert "doppler needs NumPy" in p.stderr and "-m pip install numpy" in p.stderr, p.stderr
    assert "--system-site-packages" in p.stderr


def test_venv_pip_install_finds_the_build_without_variables(tmp_path):
    """pip install -e python (python/pyproject.toml) in a venv whose NumPy is Debian's: no
    DOPPLER_LIB, DOPPLER_DATA or PYTHONPATH, the build's library and data/ are found; the
    installed metadata lists NumPy. Offline (--no-index): the dependency is already there."""
    missing = [m for m in ("pip", "setuptools") if run([PY, "-c", "import " + m], tmp_path, clean_env()).returncode]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail("no %s for %s (scripts/install-deps.sh installs python3-pip python3-setuptools)"
                        % (" and ".join(missing), PY))
        pytest.skip("no %s for %s (sh scripts/install-deps.sh)" % (" and ".join(missing), PY))
    venv = tmp_path / "v"
    p = run([PY, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], tmp_path, clean_env())
    assert p.returncode == 0, p.stderr
    py = str(venv / "bin" / "python")
    # pip (Debian's, seen through the system site packages) installs into the venv
    p = run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-cache-dir", "--quiet", "-e",
             os.path.join(SRC, "python")], tmp_path, clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert p.returncode == 0, p.stdout + p.stderr
    p = run([py, "-c", CHECK, bundled("chainmm-small")], tmp_path, clean_env())
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok " + os.path.join(SRC, "python", "doppler"))
    p = run([py, "-c", "import importlib.metadata as m; print(m.requires('doppler'))"], tmp_path, clean_env())
    assert p.returncode == 0 and "numpy" in p.stdout, p.stdout + p.stderr


def test_doppler_lib_finds_the_data_of_its_build(tmp_path):
    """With $DOPPLER_LIB set (the way the tests and the docs run the package from a checkout) and
    no $DOPPLER_DATA, a topology by name was looked for in ./data/topologies only: run from any
    other folder, Machine(topology="dgx1-v100") failed (a review). The data now goes with the
    library's build tree (DOPPLER_LIB's ../data), else with the package's checkout: here a copy
    of the package outside the checkout, so only the library's place can find it."""
    import shutil
    shutil.copytree(os.path.join(SRC, "python", "doppler"), tmp_path / "pkg" / "doppler",
                    ignore=shutil.ignore_patterns("_paths.py", "__pycache__"))
    lib = os.path.join(BUILD, ".libs", "libdoppler.so")
    data_of_build = os.path.join(BUILD, "data", "topologies")
    if not os.path.isdir(data_of_build):
        pytest.skip("a build outside the source tree has no data/ beside its library")
    p = run([sys.executable, "-c", CHECK, bundled("chainmm-small")], tmp_path,
            clean_env(PYTHONPATH=str(tmp_path / "pkg"), DOPPLER_LIB=lib))
    assert p.returncode == 0, p.stderr
