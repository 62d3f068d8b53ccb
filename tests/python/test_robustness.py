"""Issue 33: what a breaker did to the package. Each reproducer runs in a fresh interpreter (a C-level
fault kills the process, not pytest) and must end in a clean Python exception, never a signal."""

import copy
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import doppler
from conftest import bundled

G = bundled("chainmm-small")


def run_py(code):
    """Run code in a fresh interpreter with the package; returns (exit status, stderr's last line)."""
    p = subprocess.run([sys.executable, "-c", "import doppler, copy, pickle, gc\nG = %r\n" % G + textwrap.dedent(code)],
                       capture_output=True, text=True, env=dict(os.environ), timeout=120)
    lines = p.stderr.strip().splitlines()
    return p.returncode, (lines[-1] if lines else "")


def raises_cleanly(code, exc):
    rc, last = run_py(code)
    assert rc >= 0, "killed by signal %d (%s)" % (-rc, last)
    assert rc == 1 and last.startswith(exc), "exit %d, last line %r; expected %s" % (rc, last, exc)
    return last


def runs_cleanly(code):
    rc, last = run_py(code)
    assert rc == 0, "exit %d: %s" % (rc, last)


# ---- 1. place(graph, None): NULL reached dp_place as the method name (SIGSEGV) ----

def test_place_none_method():
    raises_cleanly("doppler.place(doppler.Graph.read(G), None)", "TypeError: place: method")
    raises_cleanly("doppler.Engine(doppler.Graph.read(G)).place(3)", "TypeError: place: method")
    raises_cleanly("doppler.Engine(doppler.Graph.read(G)).place('cp\\0x')", "ValueError: place: method")


# ---- 2. copy.copy / deepcopy / pickle shared the C pointer (use after free) ----

COPIES = {
    "Graph": "x = doppler.Graph.read(G)",
    "Engine": "x = doppler.Engine(doppler.Graph.read(G))",
    "Env": "x = doppler.Env(doppler.Graph.read(G))",
}


@pytest.mark.parametrize("kind", sorted(COPIES))
@pytest.mark.parametrize("how", ["copy.copy(x)", "copy.deepcopy(x)", "pickle.dumps(x)"])
def test_owning_objects_refuse_copies(kind, how):
    raises_cleanly(COPIES[kind] + "\n" + how, "doppler._errors.CopyError")


def test_graph_copy_after_close_reproducer():
    # the reproducer: the copy read n_ops = 154545708 from freed memory
    raises_cleanly("g = doppler.Graph.read(G); c = copy.copy(g); g.close(); c.n_ops", "doppler._errors.CopyError")


def test_copy_error_in_process():
    g = doppler.Graph.read(G)
    with pytest.raises(doppler.CopyError, match="owns library memory"):
        copy.copy(g)
    with pytest.raises(TypeError):  # CopyError is a TypeError, as Python's own "cannot pickle"
        pickle.dumps(g)
    assert g.n_ops == 24  # the refused copy changed nothing


def test_machine_copies_and_pickles():
    # a Machine is settings: copies are new machines (the C description was shared, then freed twice)
    m = doppler.Machine(devices=2, transfer="maxmin", peak_flops=2e13)
    for c in (copy.copy(m), copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert c is not m and c._m is not m._m
        assert c.to_dict() == m.to_dict()
    runs_cleanly("""
        m = doppler.Machine(devices=2, streams=2)
        cs = [copy.copy(m), copy.deepcopy(m), pickle.loads(pickle.dumps(m))]
        del m; gc.collect()
        g = doppler.Graph.read(G)
        assert len({doppler.place(g, "cp", c).makespan for c in cs}) == 1
    """)


def test_machine_nul_refused():
    with pytest.raises(ValueError, match="NUL"):
        doppler.Machine(topology="dgx1\0-v100")


# ---- 3. est_start of an op not in the ready set read past a heap buffer ----

@pytest.mark.parametrize("state", ["append", "engine"])
def test_est_start_not_ready(state):
    raises_cleanly("e = doppler.Env(doppler.Graph.read(G), state=%r); e.reset(); print(e.est_start(2, 0))" % state,
                   "doppler._errors.InvalidInputError: est_start: op 2 is not in the ready set")


def test_est_start_checks_in_process():
    env = doppler.Env(doppler.Graph.read(G))
    obs, _ = env.reset()
    v = int(obs["ready"][0])
    assert env.est_start(v, 1) >= 0
    with pytest.raises(doppler.InvalidInputError, match="device 9"):
        env.est_start(v, 9)
    with pytest.raises(doppler.InvalidInputError, match="op -1"):
        env.est_start(-1, 0)
    with pytest.raises(TypeError):
        env.est_start(1.5, 0)


# ---- 4. step after env.engine.close() changed the episode, then raised ----

@pytest.mark.parametrize("state", ["append", "engine"])
def test_step_after_engine_close(state):
    raises_cleanly("""
        e = doppler.Env(doppler.Graph.read(G), state=%r)
        obs, _ = e.reset()
        e.engine.close()
        e.step((int(obs["ready"][0]), 0))
    """ % state, "doppler._errors.ClosedError")


def test_step_after_engine_close_leaves_state():
    env = doppler.Env(doppler.Graph.read(G))
    obs, _ = env.reset()
    env.engine.close()
    with pytest.raises(doppler.ClosedError):
        env.step((int(obs["ready"][0]), 0))
    for call in (lambda: env.est_start(int(obs["ready"][0]), 0), env.cp_action, env.reset):
        with pytest.raises(doppler.ClosedError):
            call()
    from doppler import _lib
    assert _lib.env["step"](env._ptr) == 0  # the failed action changed nothing (dp_env_get_step)


def test_failed_last_step_leaves_state():
    # the last step's simulation runs before the state changes: a memory limit refused there
    # leaves the episode one op short, not finished with a stale reward
    g = doppler.Graph.read(G)
    env = doppler.Env(g, doppler.Machine(memory_limit=1, memory_policy="error"))
    env.reset()
    for _ in range(g.n_ops - 1):
        env.step(env.cp_action())
    with pytest.raises(doppler.CapacityError):
        env.step(env.cp_action())
    assert env.step_count == g.n_ops - 1
    assert env.assignment.min() == -1


# ---- 5. a machine whose makespans are inf or overflow placed with a result of inf ----

@pytest.mark.parametrize("key", ["peak_flops", "bandwidth"])
def test_machine_out_of_range_raises(key):
    g = doppler.Graph.read(G)
    m = doppler.Machine(**{key: 1e-300})
    with pytest.raises(doppler.CapacityError, match="machine key.*%s" % key):
        doppler.place(g, "cp", m)
    with pytest.raises(doppler.CapacityError, match=key):
        doppler.Env(g, m)
    with pytest.raises(doppler.CapacityError, match=key):
        g.costs(m)


# ---- minor: NUL in a path, unused place options ----

def test_nul_in_path(tmp_path):
    g = doppler.Graph.read(G)
    e = doppler.Engine(g)
    a = e.place("cp").assignment
    with pytest.raises(ValueError, match="NUL"):
        e.simulate(a, trace=str(tmp_path / "a\0b"))
    assert not os.path.exists(tmp_path / "a")
    with pytest.raises(ValueError, match="NUL"):
        doppler.Graph.read(G + "\0x")
    with pytest.raises(TypeError, match="str or a path"):
        doppler.Graph.read(42)


@pytest.mark.parametrize("options, match", [
    ({"refine_budget": 5}, "refine_budget"),
    ({"checkpoint": "x.h5"}, "checkpoint"),
    ({"config": {"t0": 1}}, "config"),
    ({"samples": 5}, "samples"),
    ({"proposals": "x.h5"}, "proposals"),
])
def test_place_refuses_unused_options(options, match):
    e = doppler.Engine(doppler.Graph.read(G))
    with pytest.raises(ValueError, match=match):
        e.place("cp", **options)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_priority_not_finite(bad):
    g = doppler.Graph.read(G)
    e = doppler.Engine(g, doppler.Machine(queue="priority"))
    prio = np.arange(g.n_ops, dtype=float)
    prio[5] = bad
    a = np.zeros(g.n_ops, dtype=np.int64)
    # the message says the value and why; an infinity was said to be a NaN breaking the order
    said = r"element 5 is %r: priorities are finite numbers \(a NaN or an infinity breaks" % float(bad)
    with pytest.raises(ValueError, match=said):
        e.simulate(a, priority=prio)
    with pytest.raises(ValueError, match=said):
        e.simulate_batch(a[None, :], priority=prio)


def test_read_sweep_torn_csv(tmp_path):
    # a results CSV cut mid-row: the package's error naming the file and the row, not pandas'
    header = ("key,index,graph,method,devices,topology,transfer,mode,seed,rep,status,makespan,units,seconds,episodes,"
              "params,metrics,assignment,trajectory,checkpoint,error,finished")
    p = tmp_path / "r.csv"
    p.write_text(header + "\n" + "k1,0,g,cp,4,,fixed,async,1,0,ok,1.5,s,0.1,0,{},{},,,,,x\n" + "k2,1,g,cp,4\n")
    with pytest.raises(doppler.InvalidInputError, match="r.csv: row 2 has 5 fields"):
        doppler.read_sweep(str(p))


def test_call_sequence_fuzzer():
    """Random call sequences on Graph, Machine, Engine and Env (tests/python/fuzz_api.py, a fixed
    seed here; `fuzz_api.py --sequences 100000 --seed 1` is the issue's run): no call crashes the
    interpreter, and no makespan or estimate is anything but a finite non-negative number. Its
    first run found Graph.read(None) reaching the library as a NULL path (a segfault)."""
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([sys.executable, os.path.join(here, "fuzz_api.py"), "--sequences", "300", "--seed", "7"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, "exit %d (a negative one is a signal)\n%s%s" % (p.returncode, p.stdout, p.stderr)
    assert "0 failures" in p.stdout, p.stdout


# ---- a new researcher's wrong calls (2026-12-06): each named what was wrong ----

def test_machine_argument_is_a_machine():
    g = doppler.Graph.read(G)
    # an int for a device count gave AttributeError: 'int' object has no attribute 'copy'
    with pytest.raises(TypeError, match=r"Engine: machine is a doppler.Machine \(e.g. doppler.Machine\(devices=4\)\), got int 4"):
        doppler.Engine(g, 4)
    with pytest.raises(TypeError, match="Graph.costs: machine is a doppler.Machine"):
        g.blevels(3)
    assert doppler.Engine(g, doppler.Machine(devices=2)).machine.n_devices == 2


def test_write_to_a_directory_and_an_unknown_ending(tmp_path):
    g = doppler.Graph.read(G)
    with pytest.raises(doppler.FileError, match="is a directory"):
        g.write(str(tmp_path))
    # the library's words, not the command's option ("give --to")
    with pytest.raises(doppler.InvalidInputError, match=r"name the format \(graph convert --to, Graph.write\(path, format\)\)"):
        g.write(str(tmp_path / "g.xyz"))


def test_step_before_reset():
    g = doppler.Graph.read(G)
    env = doppler.Env(g, doppler.Machine(devices=4))
    # said "the episode is over (all N ops placed)" before any episode
    with pytest.raises(doppler.Error, match=r"no episode has started; call reset\(\) first"):
        env.step(0)


# A review of the twentieth session: each of these held the wrong outcome before its fix.

def test_env_steps_beside_another_threads_engine_calls():
    # Env.step and est_start simulated on the engine's workspace without its lock: a thread's
    # simulate_batch during them failed an assertion of the simulator and aborted the interpreter
    rc, last = run_py("""
        import threading, numpy as np
        g = doppler.Graph.read(G)
        env = doppler.Env(g, doppler.Machine(devices=4), state="engine")
        A = np.random.default_rng(0).integers(0, env.n_devices, size=(20, g.n_ops))
        def eps():
            for _ in range(20):
                env.reset(); d = False
                while not d:
                    v = int(env.ready[0]); env.est_start(v, 1)
                    d = env.step(env.cp_action())[2]
        def bat():
            for _ in range(200): env.engine.simulate_batch(A)
        t = [threading.Thread(target=eps), threading.Thread(target=bat)]
        [x.start() for x in t]; [x.join() for x in t]
        print("ok")
    """)
    assert rc == 0, last


def test_closed_graph_freed_when_its_engine_is_collected():
    # the engine's finalizer ran while the WeakSet still counted its dead reference: a closed
    # graph stayed allocated until the Graph object itself died
    g = doppler.Graph.read(G)
    e = doppler.Engine(g)
    g.close()
    assert g._ptr is not None  # the engine still uses it
    del e
    import gc
    gc.collect()
    assert g._ptr is None
    g2 = doppler.Graph.read(G)
    env = doppler.Env(g2, doppler.Machine(devices=4))
    g2.close()
    del env
    gc.collect()
    assert g2._ptr is None


def test_observation_space_holds_dev_idle_below_zero():
    # the engine feature dev_idle is negative on a machine of several streams a device; the
    # space said 0 to +inf for every column
    g = doppler.Graph.read(bundled("ffnn"))
    env = doppler.Env(g, doppler.Machine(devices=4, streams=2), state="engine", features="engine")
    obs, _ = env.reset()
    seen_negative = False
    done = False
    while not done:
        obs, _, done, _, _ = env.step(env.cp_action())
        if not done:
            seen_negative |= bool(obs["device_features"].min() < 0)
            assert env.observation_space.contains(obs)
    assert seen_negative  # the case this test is about happened


def test_place_config_with_numpy_scalars(tmp_path, monkeypatch):
    # json.dump refused the NumPy scalars the config check accepts, after the temporary file was
    # made, and left that file behind
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    e = doppler.Engine(doppler.Graph.read(G))
    p = e.place("anneal", config={"budget": np.int64(30)}, seed=1)
    assert p.simulations == 30
    assert list(tmp_path.iterdir()) == []


def test_machine_takes_numpy_scalars():
    # a NumPy bool was written "True" and refused ("bool or on/off", the docs say)
    m = doppler.Machine(devices=np.int64(4), copy_engines=np.bool_(True), bandwidth=np.float64(2e10))
    assert repr(m) == "<doppler.Machine devices=4, copy_engines=on, bandwidth=20000000000.0>"


def test_graph_arrays_are_the_graphs():
    """Every array and list a Graph hands out is read-only or a copy: edges, op_kinds and the
    degree arrays were writable cached arrays, and a write changed later environments' features
    (a review)."""
    g = doppler.Graph.read(G)
    before = doppler.Env(g).reset(seed=0)[0]["op_features"].copy()
    for name in ("work", "out_size", "op_kinds", "edge_src", "edge_dst", "edges", "edge_size", "topological_order",
                 "sources", "sinks", "n_predecessors", "n_successors"):
        a = getattr(g, name)
        assert not a.flags.writeable, name
        with pytest.raises(ValueError):
            a[...] = 0
    names, shapes = g.op_names, g.op_shapes
    names[0] = "changed"
    shapes[0] = (1, 2)
    assert g.op_names[0] != "changed" and g.op_shapes[0] != (1, 2)
    after = doppler.Env(g).reset(seed=0)[0]["op_features"]
    assert np.array_equal(before, after)


def test_closed_objects_answer_nothing():
    """After close(), an engine's sizes and an environment's records raise ClosedError, as the
    docs say of every later call (n_devices, trajectory() and episodes() still answered)."""
    g = doppler.Graph.read(G)
    e = doppler.Engine(g, doppler.Machine(devices=4))
    e.close()
    for name in ("n_ops", "n_edges", "n_devices"):
        with pytest.raises(doppler.ClosedError):
            getattr(e, name)
    repr(e)
    env = doppler.Env(g)
    env.reset(seed=0)
    env.close()
    for call in (env.trajectory, env.episodes):
        with pytest.raises(doppler.ClosedError):
            call()


# ---- a review (2027): wrong arguments that reached C ----

@pytest.mark.parametrize("code", ['doppler.Graph(G)', 'doppler.Graph(12345)', 'doppler.Graph(None)',
                                  'doppler.Graph(doppler.Graph.read(G)._ptr, 12345)',
                                  'doppler.Costs(doppler.Graph.read(G), 12345, True)',
                                  'doppler.Costs(G, doppler.Graph.read(G).costs(), True)'])
def test_constructors_take_only_library_handles(code):
    # Graph(path) gave C the str's buffer as a dp_graph * and __del__ freed it (a segfault)
    raises_cleanly(code, "TypeError: doppler.")


@pytest.mark.parametrize("code, what", [
    ("doppler.Graph.generate(None)", "Graph.generate: model"),
    ("doppler.Graph.read(G).write(None)", "Graph.write: path"),
    # a value None: a TypeError before the library, as a Machine's (it was str(None), "None")
    ("doppler.Graph.generate('ffnn', batch=None)", "Graph.generate: batch: None is no value"),
])
def test_none_where_a_string_is_required(code, what):
    # dp_gen_by_name(NULL) and dp_graph_write(g, NULL) segfaulted
    if what.endswith("no value"):
        raises_cleanly(code, "TypeError: %s" % what)
    else:
        raises_cleanly(code, "TypeError: %s: expected a str or a path, got None" % what)


def test_nul_refused_everywhere(tmp_path):
    # each was cut at the NUL: batch 3, the parameter "batch", the file /tmp/x.h5 (a review)
    with pytest.raises(ValueError, match="Graph.generate: batch: .* NUL"):
        doppler.Graph.generate("ffnn", batch="3\0junk")
    with pytest.raises(ValueError, match="parameter name: .* NUL"):
        doppler.Graph.generate("ffnn", **{"batch\0": 2})
    with pytest.raises(ValueError, match="Graph.generate: model: .* NUL"):
        doppler.Graph.generate("ffnn\0x")
    g = doppler.Graph.read(G)
    with pytest.raises(ValueError, match="Graph.write: path: .* NUL"):
        g.write(str(tmp_path / "a.json\0b"))
    assert not os.path.exists(tmp_path / "a.json")
    with pytest.raises(ValueError, match="Graph.write: format: .* NUL"):
        g.write(str(tmp_path / "b.json"), format="json\0x")
    with pytest.raises(ValueError, match="read_trajectory: path: .* NUL"):
        doppler.read_trajectory(str(tmp_path / "x.h5") + "\0junk")
    with pytest.raises(ValueError, match="config_keys: method: .* NUL"):
        doppler.config_keys("anneal\0x")
    with pytest.raises(ValueError, match="NUL"):
        doppler.Machine(**{"transfer\0x": "maxmin"})
    with pytest.raises(ValueError, match='place: config: "schedule": .* NUL'):
        doppler.place(g, "anneal", config={"schedule": "linear\0x"}, budget=10)


def closed_during_calls(setup, make, calls, close, trials, pause, spread):
    """Run a script in a fresh interpreter: after setup, for each of trials, obj = make(), a thread
    repeats calls (obj) until ClosedError while this one sleeps pause * (1 + trial % spread)
    seconds and runs close (obj); any other exception in the thread, or a crash, fails."""
    rc, last = run_py(setup + """
        import threading, time, warnings
        warnings.simplefilter("ignore")
        for trial in range(%d):
            obj = %s
            errs = []
            def calls():
                try:
                    while True:
%s
                except doppler.ClosedError:
                    pass
                except Exception as e:
                    errs.append(repr(e))
            t = threading.Thread(target=calls)
            t.start()
            time.sleep(%r * (1 + trial %% %d))
            %s
            t.join()
            assert not errs, (trial, errs)
        print("ok")
    """ % (trials, make, textwrap.indent(textwrap.dedent(calls).strip(), " " * 24), pause, spread, close))
    assert rc == 0, "exit %d: %s" % (rc, last)


def test_env_closed_by_another_thread_during_steps():
    # Env.close freed the environment without the engine's lock that a step holds: a close from
    # another thread (a watchdog, a `with` block left while a worker steps) freed the state a step
    # was writing, a segmentation fault (a review); now the step ends first and the next call
    # raises ClosedError
    closed_during_calls("""
        g = doppler.Graph.read(%r)
        m = doppler.Machine(topology="dgx1-v100", transfer="maxmin")
    """ % bundled("llama-layer"), 'doppler.Env(g, m, state="engine", features="engine"); obj.reset()', """
        if obj.step(obj.cp_action())[2]:
            obj.reset()
        obj.ready, obj.assignment, obj.makespan, obj.step_count, repr(obj)
    """, "obj.close()", 12, 0.01, 4)


def test_graph_closed_by_another_thread_during_calls():
    # Graph.close freed the C graph at once when no engine was on it, while another thread was in
    # a call reading it without an engine (write, costs, an Engine being made, its arrays): a
    # write named the graph with freed bytes ("out of memory building the JSON text of graph
    # SZ\x8f&"), or a crash (a review); now the call ends first, and the next raises ClosedError
    closed_during_calls("""
        import os, tempfile
        out = os.path.join(tempfile.mkdtemp(), "g.json")
        m = doppler.Machine(topology="dgx1-v100")
    """, "doppler.Graph.read(%r)" % bundled("llama-layer"), """
        obj.costs(m); obj.write(out); obj.work; obj.topological_order; obj.op_names
        doppler.Engine(obj, m).close()
    """, "obj.close()", 60, 0.003, 5)


def test_engine_closed_by_another_thread_during_costs():
    # Engine.costs, general and simulations read the engine without its lock: a close from
    # another thread freed the cost tables while Costs copied them, giving other op times (a
    # silent wrong answer in most trials) or a segmentation fault (a review)
    closed_during_calls("""
        g = doppler.Graph.read(%r)
        ref = doppler.Engine(g, doppler.Machine(topology="dgx1-v100")).costs
    """ % bundled("llama-layer"), 'doppler.Engine(g, doppler.Machine(topology="dgx1-v100"))', """
        c = obj.costs
        if not (c.op_time == ref.op_time).all() or c.critical_path != ref.critical_path:
            errs.append("other costs")
        obj.general, obj.simulations
    """, "obj.close()", 20, 0.002, 5)


def test_warning_handler_calls_the_package_during_costs():
    # Machine.costs said the machine's warnings under the graph's lock: a warning handler that
    # called the package (repr of an environment, as a logging hook would) waited for the
    # engine's lock while another thread held it in Env.__repr__, waiting for the graph's: a
    # deadlock (a review). The warnings are said after the lock
    rc, last = run_py("""
        import faulthandler, threading, warnings
        faulthandler.dump_traceback_later(15, exit=True)
        g = doppler.Graph.generate("random")
        m = doppler.Machine(devices=4, peak_flops=2e13)  # changes nothing on a graph of times
        env = doppler.Env(g, doppler.Machine(devices=4), state="engine")
        env.reset()
        said = []
        def handler(message, category, filename, lineno, file=None, line=None):
            said.append(str(message))
            repr(env)
        warnings.showwarning = handler
        warnings.simplefilter("always")
        stop = []
        def reprs():
            while not stop:
                repr(env)
        t = threading.Thread(target=reprs)
        t.start()
        for i in range(300):
            m.costs(g)
        stop.append(1)
        t.join()
        assert len(said) == 300 and "peak_flops 2e+13 changes nothing" in said[0], said[:1]
        print("ok")
    """)
    assert rc == 0, "exit %d: %s" % (rc, last)


@pytest.mark.parametrize("option,value,said", [
    ("samples", 10 ** 12, "samples: expected an integer from 1 to 1000000, got 1000000000000"),
    ("samples", 0, "samples: expected an integer from 1 to 1000000, got 0"),
    ("budget", 10 ** 18, "budget: expected an integer from 1 to 1e15, got 1000000000000000000"),
    ("refine_budget", 10 ** 16, "refine_budget: expected an integer from 1 to 1e15, got 10000000000000000")])
def test_place_integer_option_bounds_said(option, value, said):
    # a positive value above the bound was refused as "expected a positive integer" (a review);
    # the bounds are the command's (doppler place --samples, --budget, --refine-budget)
    g = doppler.Graph.read(G)
    method, extra = ("random", {}) if option == "samples" else ("anneal", {}) if option == "budget" \
        else ("cp", {"refine": "local"})
    with pytest.raises(ValueError, match="place: " + said):
        doppler.place(g, method, **extra, **{option: value})


def test_generate_values_as_the_machines():
    # Graph.generate passed str(value): layers=None was read as "None" and [2] as "[2]" (refused
    # as text), b"fp16" as "b'fp16'", np.True_ as "True" (refused where True is "yes"): a review.
    # Its values follow the Machine's rule (None and containers a TypeError)
    with pytest.raises(TypeError, match="Graph.generate: layers: None is no value"):
        doppler.Graph.generate("ffnn", layers=None)
    with pytest.raises(TypeError, match="Graph.generate: layers: a value is a str, int, float or bool, got list"):
        doppler.Graph.generate("ffnn", layers=[2])
    want = doppler.Graph.generate("ffnn", dtype="fp16", training=True)
    got = doppler.Graph.generate("ffnn", dtype=b"fp16", training=np.True_)
    assert (got.n_ops, got.work.tolist()) == (want.n_ops, want.work.tolist())


def test_threaded_call_fuzzer():
    # three threads on one Graph, Engine and Env, any of which may close them (fuzz_threads.py):
    # no signal, no exception other than the package's
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([sys.executable, os.path.join(here, "fuzz_threads.py"), "--rounds", "12", "--seed", "3"],
                       capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert p.returncode == 0, "exit %d: %s %s" % (p.returncode, p.stdout[-500:], p.stderr[-500:])
    assert " 0 unexpected" in p.stdout


def test_repr_of_objects_on_a_closed_graph():
    # repr of an Engine or Env whose graph was closed raised ClosedError (a debugger or a log line
    # printing it failed); it says so instead
    g = doppler.Graph.read(G)
    e, env = doppler.Engine(g), doppler.Env(g)
    g.close()
    assert repr(e) == "<doppler.Engine (its graph is closed)>"
    assert repr(env) == "<doppler.Env (its graph is closed)>"
    # an Env whose __init__ refused its arguments before making its engine (a traceback's locals,
    # a debugger): repr took the engine's lock and raised AttributeError (a review)
    try:
        doppler.Env(doppler.Graph.read(G), state="bad")
    except ValueError as x:
        tb = x.__traceback__
        while tb.tb_next:
            tb = tb.tb_next
        assert repr(tb.tb_frame.f_locals["self"]) == "<doppler.Env (closed)>"
    with pytest.raises(doppler.ClosedError):
        e.simulate(np.zeros(e._n_ops, dtype=np.int64))
