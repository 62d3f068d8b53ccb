"""The environment's Gymnasium side (issue 28): observation_space matches every observation (keys,
shapes, dtypes, bounds) with or without Gymnasium; invalid_action="ignore"; and, where Gymnasium is
importable, doppler.Env is a gymnasium.Env that passes gymnasium.utils.env_checker.check_env.

Gymnasium is not a Debian 12 package and CI installs through apt (scripts/install-deps.sh), so the
check_env tests SKIP there, naming the missing package; `pip install gymnasium` (or the package's
extra, `pip install ./python[gymnasium]`) runs them."""

import numpy as np
import pytest

import doppler
from conftest import bundled

FLOAT, INT64, INT8 = np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.int8)


def expected_layout(env):
    """The observation's documented layout (Env's docstring), written out independently of the
    space: {key: (shape, dtype)}."""
    n, D = env.n_ops, env.n_devices
    nf = len(doppler.ENGINE_DEVICE_FEATURES if env.features == "engine" else doppler.DEVICE_FEATURES)
    out = {"ready": ((n,), INT64), "ready_mask": ((n,), INT8), "op_features": ((n, len(doppler.OP_FEATURES)), FLOAT),
           "device_state": ((D, 2), FLOAT), "assignment": ((n,), INT64), "start": ((n,), FLOAT), "end": ((n,), FLOAT),
           "ready_time": ((n,), FLOAT)}
    if env.device_features:
        out["device_features"] = ((n, D, nf), FLOAT)
    return out


def episode_observations(env, seed):
    """Every observation of one episode of random valid actions (reset's included)."""
    obs, _ = env.reset(seed=seed)
    seen = [obs]
    while True:
        action = env.action_space.sample(mask=(obs["ready_mask"], np.ones(env.n_devices, np.int8)))
        obs, _, terminated, _, _ = env.step(action)
        seen.append(obs)
        if terminated:
            return seen


KINDS = [dict(), dict(device_features=False), dict(state="engine", features="engine")]
MACHINES = [None, dict(topology="dgx1-v100", transfer="maxmin")]


@pytest.mark.parametrize("k", range(len(KINDS)))
@pytest.mark.parametrize("m", range(len(MACHINES)))
def test_observations_are_in_the_space(k, m):
    g = doppler.Graph.read(bundled("chainmm-small"))
    machine = doppler.Machine(**MACHINES[m]) if MACHINES[m] else None
    with doppler.Env(g, machine, **KINDS[k]) as env:
        space = env.observation_space
        layout = expected_layout(env)
        # the space: the documented keys, shapes and dtypes (an Env had no observation_space)
        assert set(space.keys()) == set(layout)
        for key, (shape, dtype) in layout.items():
            assert space[key].shape == shape and np.dtype(space[key].dtype) == dtype, key
        for seed in (1, 2):
            for obs in episode_observations(env, seed):
                assert set(obs) == set(layout)
                for key, (shape, dtype) in layout.items():
                    assert obs[key].shape == shape and obs[key].dtype == dtype, key
                assert obs in space
                assert space.contains(obs)


def test_the_space_rejects_what_is_not_an_observation():
    """contains() is not a formality: a wrong key set, shape, dtype or a value out of bounds is out."""
    g = doppler.Graph.read(bundled("chainmm-small"))
    with doppler.Env(g) as env:
        obs, _ = env.reset(seed=1)
        space = env.observation_space
        assert obs in space
        bad = dict(obs)
        del bad["ready"]
        assert bad not in space
        bad = dict(obs, assignment=np.full(env.n_ops, env.n_devices, dtype=np.int64))  # device n_devices
        assert bad not in space
        bad = dict(obs, ready_mask=obs["ready_mask"].astype(np.float64))  # float where int8 is due
        assert bad not in space
        bad = dict(obs, start=np.zeros(env.n_ops + 1))
        assert bad not in space
        bad = dict(obs, end=np.full(env.n_ops, -1.0))  # a negative time
        assert bad not in space
        bad = dict(obs, ready=np.full(env.n_ops, env.n_ops, dtype=np.int64))  # an op id out of range
        assert bad not in space


def test_invalid_action_ignore_leaves_the_state():
    g = doppler.Graph.read(bundled("chainmm-small"))
    with doppler.Env(g, invalid_action="ignore") as env:
        obs, _ = env.reset(seed=3)
        not_ready = int(np.flatnonzero(obs["ready_mask"] == 0)[0])
        obs2, reward, terminated, truncated, info = env.step((not_ready, 0))
        assert info["invalid_action"] == "step: op %d is not in the ready set" % not_ready
        assert reward == 0.0 and terminated is False and truncated is False
        assert env.step_count == 0 and info["step"] == 0
        for key in obs:
            assert np.array_equal(obs[key], obs2[key]), key
        # outside the action space: raises either way
        with pytest.raises(doppler.InvalidInputError, match="out of range"):
            env.step((env.n_ops, 0))
        # a valid action still goes through
        _, _, _, _, info = env.step(env.cp_action())
        assert env.step_count == 1 and "invalid_action" not in info
    with doppler.Env(g) as env:
        assert env.invalid_action == "raise"
        env.reset()
        with pytest.raises(doppler.InvalidInputError, match="not in the ready set"):
            env.step((not_ready, 0))
    with pytest.raises(ValueError, match="invalid_action: raise or ignore"):
        doppler.Env(g, invalid_action="skip")


def _gymnasium():
    return pytest.importorskip(
        "gymnasium", reason="gymnasium is not installed (not a Debian 12 package; pip install gymnasium to run "
                            "Gymnasium's check_env on doppler.Env)")


@pytest.mark.parametrize("k", range(len(KINDS)))
def test_check_env(k):
    gymnasium = _gymnasium()
    from gymnasium.utils.env_checker import check_env
    g = doppler.Graph.read(bundled("chainmm-small"))
    with doppler.Env(g, invalid_action="ignore", **KINDS[k]) as env:
        assert isinstance(env, gymnasium.Env)
        assert isinstance(env.observation_space, gymnasium.spaces.Dict)
        assert isinstance(env.action_space, gymnasium.spaces.MultiDiscrete)
        check_env(env, skip_render_check=True)
        # after the checker's episodes, the environment still gives the cp placement
        env.reset()
        while True:
            _, _, terminated, _, info = env.step(env.cp_action())
            if terminated:
                break
        assert info["makespan"] == doppler.place(g, "cp").makespan


def test_seeded_reset_with_gymnasium_is_the_plain_stream():
    """With Gymnasium, reset(seed) seeds through gymnasium.Env.reset: the same PCG64 stream as
    numpy.random.default_rng(seed), as without it."""
    _gymnasium()
    g = doppler.Graph.read(bundled("chainmm-small"))
    with doppler.Env(g) as env:
        env.reset(seed=7)
        assert env.np_random.integers(1 << 30, size=4).tolist() == \
            np.random.default_rng(7).integers(1 << 30, size=4).tolist()
