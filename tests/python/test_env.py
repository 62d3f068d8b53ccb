"""The assignment environment: the critical-path episode gives the cp placement; observations,
rewards, invalid actions, records."""

import numpy as np
import pytest

import doppler
from conftest import bundled, doppler_graphs


def cp_episode(env):
    obs, info = env.reset()
    total = 0.0
    steps = 0
    while True:
        obs, reward, terminated, truncated, info = env.step(env.cp_action())
        total += reward
        steps += 1
        assert not truncated
        if terminated:
            return obs, total, steps, info


MACHINES = [None, dict(topology="dgx1-v100", transfer="maxmin"), dict(topology="pcie-gen3-4gpu", streams=2),
            dict(devices=3)]


@pytest.mark.parametrize("name", ["chainmm-small", "llama-layer", "ffnn"])
@pytest.mark.parametrize("k", range(len(MACHINES)))
def test_cp_actions_give_the_cp_placement(name, k):
    g = doppler.Graph.read(bundled(name))
    m = doppler.Machine(**MACHINES[k]) if MACHINES[k] else None
    p = doppler.place(g, "cp", m)
    with doppler.Env(g, m) as env:
        obs, total, steps, info = cp_episode(env)
        assert steps == g.n_ops
        assert info["assignment"].tolist() == p.assignment.tolist()
        assert total == -p.makespan and info["makespan"] == p.makespan
        assert obs["assignment"].tolist() == p.assignment.tolist()
        assert info["simulations"] == 1 and info["episode_simulations"] == 1
        # a second episode: the same, and the engine has simulated twice
        obs, total2, _, info = cp_episode(env)
        assert total2 == total and info["total_simulations"] == 2


@pytest.mark.skipif(not doppler_graphs(), reason="no shared data")
def test_cp_actions_on_doppler_graphs():
    for path, devices in doppler_graphs():
        g = doppler.Graph.read(path)
        m = doppler.Machine(devices=devices)
        p = doppler.place(g, "cp", m)
        with doppler.Env(g, m, device_features=False) as env:
            _, total, _, info = cp_episode(env)
        assert info["assignment"].tolist() == p.assignment.tolist(), path
        assert total == -p.makespan, path


def test_observation():
    g = doppler.Graph.read(bundled("chainmm-small"))
    env = doppler.Env(g)
    n, D = g.n_ops, env.n_devices
    obs, info = env.reset(seed=1)
    assert info["step"] == 0 and info["simulations"] == 0
    assert obs["ready"].shape == (n,) and obs["ready"].dtype == np.int64
    assert obs["ready_mask"].shape == (n,)
    assert obs["op_features"].shape == (n, len(doppler.OP_FEATURES))
    assert obs["device_features"].shape == (n, D, len(doppler.DEVICE_FEATURES))
    assert obs["device_state"].shape == (D, 2)
    ready = env.ready
    assert ready.tolist() == g.sources.tolist()
    assert obs["ready"][: len(ready)].tolist() == ready.tolist() and (obs["ready"][len(ready):] == -1).all()
    assert np.flatnonzero(obs["ready_mask"]).tolist() == ready.tolist()
    assert (obs["assignment"] == -1).all()
    costs = env.engine.costs
    assert np.array_equal(obs["op_features"][:, 1], costs.blevel)
    for t in range(5):
        v, d = env.cp_action()
        # device features of ready ops: column 4 is the estimated start the library computes
        for u in env.ready:
            for dd in range(D):
                assert obs["device_features"][u, dd, 4] == env.est_start(u, dd)
        not_ready = np.flatnonzero(obs["ready_mask"] == 0)
        assert (obs["device_features"][not_ready] == 0).all()
        # the integer encoding of an action
        obs, reward, term, trunc, info = env.step(v * D + d if t % 2 else (v, d))
        assert reward == 0.0 and not term and info["step"] == t + 1
        assert obs["assignment"][v] == d and obs["op_features"][v, 5] == 1
        assert obs["end"][v] > obs["start"][v] or costs.op_time[v, d] == 0
    # observations are copies: an agent may keep them
    kept = obs["assignment"].copy()
    env.step(env.cp_action())
    assert np.array_equal(obs["assignment"], kept)


def test_invalid_actions_keep_the_state():
    g = doppler.Graph.read(bundled("chainmm-small"))
    env = doppler.Env(g)
    obs, _ = env.reset()
    not_ready = int(np.flatnonzero(obs["ready_mask"] == 0)[0])
    with pytest.raises(doppler.InvalidInputError, match="not in the ready set"):
        env.step((not_ready, 0))
    with pytest.raises(doppler.InvalidInputError, match="device 4"):
        env.step((int(env.ready[0]), 4))
    with pytest.raises(doppler.InvalidInputError):
        env.step((-1, 0))
    with pytest.raises(doppler.InvalidInputError):
        env.step(10 ** 12)
    with pytest.raises(TypeError):
        env.step((1.5, 0))
    with pytest.raises(TypeError):
        env.step((1, 2, 3))
    # an integer beyond int64 is out of range as any other (it was "an action is ...": a
    # TypeError), and est_start's errors name est_start (they said "step": a review)
    with pytest.raises(doppler.InvalidInputError, match="out of range"):
        env.step(10 ** 30)
    with pytest.raises(TypeError, match="^est_start:"):
        env.est_start(1.5, 0)
    with pytest.raises(TypeError, match="^est_start:"):
        env.est_start(float("nan"), 0)
    # booleans are not op or device ids (a pair with one was taken as 0 or 1: a review)
    with pytest.raises(TypeError, match="^est_start:"):
        env.est_start(True, 1)
    with pytest.raises(TypeError, match="^step:"):
        env.step((np.False_, 1))
    assert env.step_count == 0 and (env.assignment == -1).all()
    # a whole random episode sampled with the ready mask
    env.reset(seed=3)
    done = False
    while not done:
        a = env.action_space.sample(mask=(obs["ready_mask"], np.ones(env.n_devices, np.int8)))
        obs, r, done, _, info = env.step(a)
    assert r == -env.engine.makespan(info["assignment"])
    with pytest.raises(doppler.Error, match="reset"):
        env.step((0, 0))
    traj = env.trajectory()
    assert len(traj["op"]) == g.n_ops
    assert sorted(np.asarray(traj["op"]).tolist()) == list(range(g.n_ops))
    env.close()
    with pytest.raises(doppler.ClosedError):
        env.reset()
    env.close()  # twice is harmless
    # closing the engine ends the environment, and closed says so (it said False: a review)
    env = doppler.Env(g)
    assert not env.closed
    env.engine.close()
    assert env.closed
    with pytest.raises(doppler.ClosedError):
        env.reset()
    # est_start before any reset is refused as step is (it answered 0.0: a review)
    env = doppler.Env(g)
    with pytest.raises(doppler.Error, match="reset"):
        env.est_start(0, 0)
    env.reset()
    assert env.est_start(int(env.ready[0]), 0) >= 0


def test_episode_records():
    g = doppler.Graph.read(bundled("chainmm-small"))
    env = doppler.Env(g)
    for _ in range(3):
        cp_episode(env)
    ep = env.episodes()
    assert len(ep["makespan"]) == 3
    assert np.asarray(ep["makespan"]).tolist() == [doppler.place(g, "cp").makespan] * 3
    assert np.asarray(ep["simulations"]).tolist() == [1, 1, 1]


ENGINE_MACHINES = [None, dict(topology="dgx1-v100", transfer="maxmin"), dict(devices=4, queue="priority")]


@pytest.mark.parametrize("k", range(len(ENGINE_MACHINES)))
def test_engine_state_ends_with_the_engine_s_makespan(k):
    """In the engine state the environment's schedule of the whole assignment is the engine's, for
    any placement order: random valid actions, then dp_env_makespan == the engine's makespan."""
    g = doppler.Graph.read(bundled("chainmm-small"))
    m = doppler.Machine(**ENGINE_MACHINES[k]) if ENGINE_MACHINES[k] else None
    with doppler.Env(g, m, state="engine", features="engine") as env:
        assert env.state == "engine"
        for seed in range(3):
            obs, info = env.reset(seed=seed)
            assert obs["device_features"].shape == (g.n_ops, env.n_devices, len(doppler.ENGINE_DEVICE_FEATURES))
            done = False
            while not done:
                v = int(env.ready[env.np_random.integers(len(env.ready))])
                d = int(env.np_random.integers(env.n_devices))
                for dd in range(env.n_devices):  # the features' estimated start is the state's
                    assert obs["device_features"][v, dd, 4] == env.est_start(v, dd)
                obs, reward, done, _, info = env.step((v, d))
            assert env.makespan == info["makespan"] == -reward
            s = env.engine.simulate(info["assignment"])
            assert np.array_equal(obs["start"], s.start) and np.array_equal(obs["end"], s.end)
            assert info["prefix_simulations"] >= 0 and info["simulations"] == 1


def test_state_and_features_are_checked():
    g = doppler.Graph.read(bundled("chainmm-small"))
    with pytest.raises(ValueError, match="state"):
        doppler.Env(g, state="exact")
    with pytest.raises(ValueError, match="features"):
        doppler.Env(g, features="all")
    env = doppler.Env(g, features="engine")  # the twelve features read the append state too
    obs, _ = env.reset()
    assert obs["device_features"].shape[2] == 12


def test_reward_is_the_penalised_cost_under_the_penalty_policy():
    """Under memory_policy="penalty" the reward is -cost, the penalised makespan the library's
    training and searches score (it was -makespan: an agent saw no penalty; a review)."""
    g = doppler.Graph.read(bundled("chainmm-small"))
    m = doppler.Machine(devices=4, memory_limit=6e7, memory_policy="penalty", memory_penalty=2)
    env = doppler.Env(g, m)
    env.reset()
    done = False
    while not done:
        _, r, done, _, info = env.step(env.cp_action())
    s = env.engine.simulate(info["assignment"])
    assert s.cost > s.makespan  # over the limit: penalised
    assert r == -s.cost and info["cost"] == s.cost and info["makespan"] == s.makespan


def _scaled_graph(tmp_path, scale):
    import json
    d = {"name": "g", "cost_kind": "time", "time_scale": scale,
         "ops": [{"name": "x", "time": 5}, {"name": "y", "time": 10}, {"name": "a", "time": 1}, {"name": "c", "time": 1}],
         "edges": [{"src": "x", "dst": "y", "comm": 0}, {"src": "a", "dst": "c", "comm": 3}]}
    p = tmp_path / ("g%g.json" % scale)
    p.write_text(json.dumps(d))
    return doppler.Graph.read(str(p))


def test_unitless_features_do_not_scale_and_numpy_actions(tmp_path):
    """bpath_load, a busy fraction, is the same whatever the graph's time unit (it was divided by
    time_scale with the time columns: about 1e-10 on DOPPLER's files); every other engine column
    scales with it. An action of NumPy unsigned integers is accepted (np.uint64 made the pair
    floats, refused as not an action). A review of the environment."""
    col = doppler.ENGINE_DEVICE_FEATURES.index("bpath_load")
    obs = {}
    for scale in (1, 1000):
        env = doppler.Env(_scaled_graph(tmp_path, scale), doppler.Machine(devices=2), state="engine", features="engine")
        env.reset()
        env.step((np.uint64(0), 0))  # x on 0
        obs[scale], *_ = env.step((1, np.uint64(0)))  # y on 0: a's window [6, 10) is covered by y
        assert env.exact
    df1, df2 = obs[1]["device_features"], obs[1000]["device_features"]
    assert list(df1[2, :, col]) == [1.0, 0.0] and list(df2[2, :, col]) == [1.0, 0.0]
    others = [i for i in range(df1.shape[2]) if i != col]
    assert np.allclose(df1[:, :, others], df2[:, :, others] * 1000)
    with pytest.raises(TypeError, match="an action is"):
        env.step((np.float64(0), 1))


def test_engine_state_surrogate_is_not_exact():
    """Above 20,000 ops on a machine of the general engine the state is a surrogate's, which
    env.exact says (the documents promised the engine's makespan: a review)."""
    g = doppler.Graph.generate("random", n=20001)
    assert not doppler.Env(g, doppler.Machine(devices=4, streams=2), state="engine", device_features=False).exact
    assert doppler.Env(g, doppler.Machine(devices=4), state="engine", device_features=False).exact
    assert not doppler.Env(g, doppler.Machine(devices=4), device_features=False).exact  # the append state
