"""The assignment environment (policy/dp_env.h): a gymnasium.Env when Gymnasium is importable, the
same interface without it."""

import ctypes
import operator
import time
import weakref

import numpy as np

from . import _lib
from ._errors import ClosedError, Error, InvalidInputError, _NoCopy, check
from .engine import Engine
from .graph import Graph

OP_FEATURES = ("mean_time", "blevel", "tlevel", "n_predecessors", "n_successors", "assigned", "ready", "start",
               "end")
"""Columns of observation["op_features"]: mean op time over devices, b-level and t-level (mean costs),
in- and out-edges, 1 when assigned, 1 when ready, estimated start and end (0 while unassigned)."""

DEVICE_FEATURES = ("work", "pred_work", "pred_first_start", "pred_last_end", "est_start")
"""Columns of observation["device_features"][v, d] with features="doppler" (DOPPLER's PLC features,
dp_env_device_features_of): op time already on d, op time of v's predecessors on d, their earliest
estimated start and latest estimated end (0 when none), v's estimated earliest start on d."""

ENGINE_DEVICE_FEATURES = DEVICE_FEATURES + ("est_end", "idle_gap", "dev_idle", "overtaken", "bpath_load",
                                            "in_traffic", "out_traffic")
"""Columns with features="engine": DOPPLER's five, then v's estimated end on d, the idle time v
would open on d, d's idle time so far, the op time of placed ops v would overtake on d, d's busy
fraction over the rest of v's b-path, the transfer time of v's inputs from other devices, the mean
transfer time its output will need (policy/dp_env.h documents each)."""

try:
    import gymnasium as _gym
    _gym.spaces.Box, _gym.spaces.Dict, _gym.spaces.MultiDiscrete, _gym.Env  # noqa: B018 (the API used)
except (ImportError, AttributeError):
    _gym = None

_INVALID = ("raise", "ignore")

_STATES = {"append": _lib.DP_ENV_STATE_APPEND, "engine": _lib.DP_ENV_STATE_ENGINE}
_FEATURES = {"doppler": _lib.DP_ENV_FEATURES_DOPPLER, "engine": _lib.DP_ENV_FEATURES_ENGINE}
# the engine features in time units (the printed unit: divided by the graph's time_scale); the
# other, bpath_load, is a fraction
_TIME_COLUMNS_ENGINE = [i for i, f in enumerate(ENGINE_DEVICE_FEATURES) if f != "bpath_load"]


class _Discrete2:
    """A MultiDiscrete([n_ops, n_devices]) action space (Gymnasium's interface: shape, nvec,
    sample(mask), contains, seed), used when Gymnasium is not installed."""

    def __init__(self, n_ops, n_devices, rng):
        self.nvec = np.array([n_ops, n_devices], dtype=np.int64)
        self.shape = (2,)
        self.dtype = np.int64
        self.np_random = rng

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def sample(self, mask=None):
        """A random (op, device); mask: (op_mask (n_ops,), device_mask (n_devices,)) of 0/1,
        e.g. (observation["ready_mask"], np.ones(n_devices, np.int8)) for a valid action (None
        for a component without a mask is accepted here, not by Gymnasium's MultiDiscrete)."""
        out = np.empty(2, dtype=np.int64)
        for i, n in enumerate(self.nvec):
            m = None if mask is None else mask[i]
            if m is None:
                out[i] = self.np_random.integers(n)
            else:
                choices = np.flatnonzero(np.asarray(m))
                if choices.size == 0:
                    raise ValueError("sample: a mask with no allowed value")
                out[i] = choices[self.np_random.integers(choices.size)]
        return out

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == (2,) and np.issubdtype(x.dtype, np.integer) and bool(np.all((x >= 0) & (x < self.nvec)))

    def __repr__(self):
        return "MultiDiscrete(%s)" % self.nvec.tolist()


class _Box:
    """Gymnasium's Box (low <= x <= high elementwise; shape, dtype), used without Gymnasium:
    contains() as Gymnasium's: a value castable to dtype, of the shape, within the bounds."""

    def __init__(self, low, high, shape, dtype):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self.low = np.full(self.shape, low, dtype=self.dtype)
        self.high = np.full(self.shape, high, dtype=self.dtype)

    def contains(self, x):
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x, dtype=self.dtype)
            except (ValueError, TypeError):
                return False
        return bool(np.can_cast(x.dtype, self.dtype) and x.shape == self.shape and np.all(x >= self.low)
                    and np.all(x <= self.high))

    __contains__ = contains

    def __repr__(self):
        return "Box(%s, %s, %s, %s)" % (self.low.min() if self.low.size else "", self.high.max() if self.high.size else "",
                                        self.shape, self.dtype)


class _Dict:
    """Gymnasium's Dict space of named spaces, used without Gymnasium: contains() a dict with
    exactly these keys, each value in its space."""

    def __init__(self, spaces):
        self.spaces = dict(spaces)

    def __getitem__(self, key):
        return self.spaces[key]

    def keys(self):
        return self.spaces.keys()

    def items(self):
        return self.spaces.items()

    def contains(self, x):
        return isinstance(x, dict) and x.keys() == self.spaces.keys() and all(x[k] in s for k, s in self.spaces.items())

    __contains__ = contains

    def __repr__(self):
        return "Dict(%s)" % ", ".join("%r: %r" % kv for kv in self.spaces.items())


class Env(_NoCopy, *((_gym.Env,) if _gym is not None else ())):
    """The assignment environment: ops are placed one at a time, in any order the ready set allows
    (DOPPLER's decision process, policy/dp_env.h), on the library's state and estimates; the final
    assignment is simulated by the machine's engine.

        env = doppler.Env(graph, machine)
        obs, info = env.reset(seed=0)
        while True:
            op = ...  # a ready op: obs["ready_mask"][op] == 1
            obs, reward, terminated, truncated, info = env.step((op, device))
            if terminated: break            # reward == -info["cost"] (the makespan, or penalised)

    state: how the placed prefix's times are estimated (policy/dp_env.h): "append" (the default, the
    authors' list-scheduling estimate: each op appended to its device in placement order) or
    "engine" (the machine's engine on the placed prefix, exact: after the last step the state's
    makespan is the engine's; costs prefix simulations, counted in info; above 20,000 ops on a
    machine of the general engine a surrogate, the DOPPLER-compatible engine of the same costs,
    keeps the state instead, and env.exact is False: doc/python.md). features: the device
    features, "doppler" (DOPPLER's five, DEVICE_FEATURES) or "engine" (twelve,
    ENGINE_DEVICE_FEATURES). The critical-path action follows the state's estimate.

    With Gymnasium importable the class is a gymnasium.Env (gymnasium.utils.env_checker.check_env
    passes with invalid_action="ignore": tests/python/test_gym.py), its spaces gymnasium.spaces;
    without it the same attributes are stand-ins with Gymnasium's contains() and sample().

    Action: (op, device), or one integer op * n_devices + device. action_space:
    MultiDiscrete([n_ops, n_devices]); action_space.sample(mask=(obs["ready_mask"],
    np.ones(n_devices, np.int8))) draws a valid one. observation_space: a Dict of Box spaces, one per key below, with the key's shape,
    dtype and bounds (times: 0 to +inf, the bound of an estimate that is unknown in advance).
    Observation, a dict of NumPy arrays (fresh copies; times in the graph's printed unit):
      ready          (n_ops,) int64: the ready ops (increasing id), padded with -1
      ready_mask     (n_ops,) int8: 1 for ready ops
      op_features    (n_ops, 9) float64: columns OP_FEATURES
      device_features (n_ops, n_devices, 5 or 12) float64: the device features of each ready op
                     (0 elsewhere; only when device_features=True, the default)
      device_state   (n_devices, 2) float64: each device's estimated free time and assigned work
      assignment     (n_ops,) int64: the partial assignment, -1 while unassigned
      start, end, ready_time (n_ops,) float64: the partial schedule under the state: each
                     assigned op's start, end and the time its inputs are all on its device (0
                     while unassigned)
    Reward: 0 until the last op is placed, then -cost: the engine's simulation of the whole
    assignment, its makespan, or under memory_policy="penalty" the penalised makespan, what the
    library's training and searches score (info "makespan" stays the makespan; the reward was
    -makespan under the penalty too until 2026-12-07: a review). info: "step", "simulations" (this step's: 1 at the end, else 0),
    "episode_simulations", "total_simulations" (the engine's since creation),
    "prefix_simulations" (the engine state's simulations of placed prefixes this episode: on the
    exact engine runs resumed at the placed op's READY, policy/dp_env.h), and at
    the end "makespan" and "assignment". Invalid actions raise InvalidInputError with the library's
    message ("op 12 is not in the ready set", a device out of range) and leave the state unchanged;
    with invalid_action="ignore", an action of the action space whose op is not ready leaves the
    state unchanged and returns (the same observation, 0.0, False, False, info with
    "invalid_action": the message): a random action of the space (Gymnasium's check_env, an
    agent without masks) is then a wasted step, not an exception. An op or device out of range,
    outside the space, raises either way.
    cp_action() is the critical-path heuristic's action (DOPPLER's teacher). Closing env.engine
    ends the environment too (its cost tables are the engine's): later calls raise ClosedError.
    copy.copy, copy.deepcopy and pickle raise CopyError (make another Env).
    """

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, graph, machine=None, device_features=True, state="append", features="doppler",
                 invalid_action="raise"):
        if not isinstance(graph, Graph):
            raise TypeError("Env: expected a doppler.Graph, got %s" % type(graph).__name__)
        self._ptr = None
        if invalid_action not in _INVALID:
            raise ValueError("Env: invalid_action: raise or ignore, got %r" % (invalid_action,))
        self.invalid_action = invalid_action
        if state not in _STATES:
            raise ValueError("Env: state: append or engine, got %r" % (state,))
        if features not in _FEATURES:
            raise ValueError("Env: features: doppler or engine, got %r" % (features,))
        self.engine = Engine(graph, machine)
        self.graph = graph
        eng = self.engine
        err = _lib.dp_error()
        p = _lib.dp_env_alloc(graph._g(), eng._cptr, ctypes.byref(err))
        if not p:
            eng.close()
            check(err.code or _lib.DP_ENOMEM, err)
        self._ptr = p
        self._finalizer = weakref.finalize(self, Env._free, p, eng)  # the engine (its costs) outlives it
        self.state = state
        self.features = features
        self._fs = _FEATURES[features]
        self._n_feat = _lib.dp_env_n_features(self._fs)
        if state == "engine":
            err = _lib.dp_error()
            rc = _lib.dp_env_set_state(p, _lib.DP_ENV_STATE_ENGINE, eng._e(), ctypes.byref(err))
            if rc != _lib.DP_OK:
                self.close()
                check(rc, err)
        self.n_ops = n = eng.n_ops
        self.n_devices = D = eng.n_devices
        self.device_features = bool(device_features)
        sc = eng._scale
        self._sc = sc
        # views of the environment's arrays (dp_env_get_*: allocated once by dp_env_alloc, so the
        # views follow every step without a copy)
        get = _lib.env
        self._assign = np.ctypeslib.as_array(get["assignment"](p), shape=(n,))
        self._ready = np.ctypeslib.as_array(get["ready"](p), shape=(n,))
        self._est_start = np.ctypeslib.as_array(get["est_start"](p), shape=(n,))
        self._est_end = np.ctypeslib.as_array(get["est_end"](p), shape=(n,))
        self._est_ready = np.ctypeslib.as_array(get["est_ready"](p), shape=(n,))
        self._dev_avail = np.ctypeslib.as_array(get["dev_avail"](p), shape=(D,))
        self._dev_work = np.ctypeslib.as_array(get["dev_work"](p), shape=(D,))
        self._n_ready = get["n_ready"]
        self._step = get["step"]
        self._n_resim = get["n_resim"]
        costs = eng.costs
        self._static = np.zeros((n, len(OP_FEATURES)))
        self._static[:, 0] = costs.op_time.mean(axis=1)
        self._static[:, 1] = costs.blevel
        self._static[:, 2] = costs.tlevel
        self._static[:, 3] = graph.n_predecessors
        self._static[:, 4] = graph.n_successors
        self.np_random = np.random.default_rng()
        if _gym is not None:
            self.action_space = _gym.spaces.MultiDiscrete([n, D])
        else:
            self.action_space = _Discrete2(n, D, self.np_random)
        self.observation_space = self._observation_space()
        self._episode = -1
        self._steps = []
        self._episodes = []
        self._episode_sims = 0
        self._done = True
        self._t0 = 0.0
        self._resim0 = 0

    # ---- life ----

    @staticmethod
    def _free(p, engine):
        _lib.dp_env_free(p)

    def _e(self):
        if not self._ptr:
            raise ClosedError("environment is closed", _lib.DP_EINVAL)
        if self.engine.closed:
            # the environment's cost tables (and, in the engine state, its simulator) are the
            # engine's: freed with it
            raise ClosedError("environment's engine is closed (env.engine.close()); the environment can no longer be "
                              "used", _lib.DP_EINVAL)
        self.engine._e()  # and its graph
        return self._ptr

    def close(self):
        """Free the environment and its engine. Under the engine's lock, as a step holds it: a
        close from another thread during a step freed the state the step was writing
        (a segmentation fault: a review)."""
        eng = getattr(self, "engine", None)  # None: __init__ refused its arguments first
        if eng is None:
            return
        with eng._lock:
            if self._ptr:
                self._ptr = None
                self._finalizer()
                eng.close()

    @property
    def closed(self):
        """True once the environment or its engine (env.engine.close()) is closed."""
        return self._ptr is None or self.engine.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def unwrapped(self):
        return self

    # ---- state ----

    @property
    def ready(self):
        """(n_ready,) int64: the ready ops, increasing id."""
        with self.engine._lock:  # the arrays are freed by a close (under the lock)
            self._e()
            return self._ready[: self._n_ready(self._ptr)].astype(np.int64)

    @property
    def assignment(self):
        """(n_ops,) int64: the partial assignment, -1 while unassigned."""
        with self.engine._lock:
            self._e()
            return self._assign.astype(np.int64)

    @property
    def exact(self):
        """True when the state follows the machine's engine exactly (the engine state, not above
        20,000 ops on a machine of the general engine, where a surrogate keeps it); False for the
        append state and the surrogate (dp_env_state_exact)."""
        with self.engine._lock:
            return bool(_lib.dp_env_state_exact(self._e()))

    @property
    def makespan(self):
        """The latest estimated end of the assigned ops (dp_env_makespan): in the engine state,
        after the last step, the engine's makespan of the assignment (when exact: the
        surrogate's otherwise)."""
        with self.engine._lock:
            return _lib.dp_env_makespan(self._e()) / self._sc

    @property
    def step_count(self):
        with self.engine._lock:
            return self._step(self._e())

    def est_start(self, op, device):
        """Estimated earliest start of ready op on device under the state (dp_env_est_start),
        printed unit (+inf when the engine state's simulation fails, e.g. a memory limit). An op
        that is not ready, or an op or device out of range, raises InvalidInputError."""
        # the engine's workspace: its lock, as its own calls take it (another thread's
        # simulate_batch during a step aborted the interpreter: a review)
        with self.engine._lock:
            op, device = self._decode((op, device), "est_start")
            self._check_action(op, device, "est_start")
            p = self._e()
            if self._episode < 0:  # answered 0.0 from the state before any episode
                raise Error("est_start: no episode has started; call reset() first")
            self.engine._e()  # the engine state simulates with the engine
            t = ctypes.c_double()
            err = _lib.dp_error()
            check(_lib.dp_env_est_start_checked(p, op, device, ctypes.byref(t), ctypes.byref(err)), err)
            return t.value / self._sc

    def cp_action(self):
        """The critical-path heuristic's action (dp_env_cp_select, dp_env_cp_place): the ready op of
        highest b-level (ties: lowest id) on its device of earliest estimated start under the state
        (ties: lowest device). In the append state, following it for a whole episode gives
        `place("cp")`."""
        # the engine's workspace: its lock, as its own calls take it (another thread's
        # simulate_batch during a step aborted the interpreter: a review)
        with self.engine._lock:
            p = self._e()
            if self._done:
                raise Error("cp_action: no episode running (call reset())")
            v = _lib.dp_env_cp_select(p)
            return (v, _lib.dp_env_cp_place(p, v))

    def _observation_space(self):
        """The Dict space of the observation (_observation): its keys, shapes, dtypes and bounds."""
        n, D = self.n_ops, self.n_devices
        Box, Dict = (_gym.spaces.Box, _gym.spaces.Dict) if _gym is not None else (_Box, _Dict)
        inf = np.inf
        spaces = {"ready": Box(-1, n - 1, (n,), np.int64), "ready_mask": Box(0, 1, (n,), np.int8),
                  "op_features": Box(0, inf, (n, len(OP_FEATURES)), np.float64),
                  "device_state": Box(0, inf, (D, 2), np.float64), "assignment": Box(-1, D - 1, (n,), np.int64),
                  "start": Box(0, inf, (n,), np.float64), "end": Box(0, inf, (n,), np.float64),
                  "ready_time": Box(0, inf, (n,), np.float64)}
        if self.device_features:
            # every column 0 to +inf but the engine set's dev_idle, negative on a machine of
            # several streams a device (policy/dp_env.h; the space held no such observation: a
            # review)
            low = np.zeros((n, D, self._n_feat))
            if self.features == "engine":
                low[:, :, ENGINE_DEVICE_FEATURES.index("dev_idle")] = -inf
            spaces["device_features"] = Box(low, inf, (n, D, self._n_feat), np.float64)
        return Dict(spaces)

    def _observation(self):
        n, D, sc = self.n_ops, self.n_devices, self._sc
        nr = self._n_ready(self._ptr)
        ready_ids = self._ready[:nr]
        ready = np.full(n, -1, dtype=np.int64)
        ready[:nr] = ready_ids
        mask = np.zeros(n, dtype=np.int8)
        mask[ready_ids] = 1
        assign = self._assign.astype(np.int64)
        assigned = assign >= 0
        feats = self._static.copy()
        feats[:, 5] = assigned
        feats[:, 6] = mask
        # estimated start and end of the assigned ops (the library's arrays hold stale values elsewhere)
        np.copyto(feats[:, 7], self._est_start, where=assigned)
        np.copyto(feats[:, 8], self._est_end, where=assigned)
        if sc != 1.0:
            feats[:, 7:9] /= sc
        dstate = np.empty((D, 2))
        dstate[:, 0] = self._dev_avail
        dstate[:, 1] = self._dev_work
        if sc != 1.0:
            dstate /= sc
        ready_time = np.zeros(n)
        np.copyto(ready_time, self._est_ready, where=assigned)
        if sc != 1.0:
            ready_time /= sc
        obs = {"ready": ready, "ready_mask": mask, "op_features": feats, "device_state": dstate,
               "assignment": assign, "start": feats[:, 7].copy(), "end": feats[:, 8].copy(), "ready_time": ready_time}
        if self.device_features:
            nf = self._n_feat
            df = np.zeros((n, D, nf))
            base = df.ctypes.data
            stride = D * nf * 8
            p = self._ptr
            fill = _lib.dp_env_device_features_of_at
            fs = self._fs
            for v in ready_ids.tolist():
                fill(p, fs, v, base + v * stride)
            if sc != 1.0 and nr:
                # the times only: bpath_load is a busy fraction, without unit (it was divided too,
                # about 1e-10 on DOPPLER's files: a review); the ready ops' rows only, the others
                # being 0 (the whole array was divided: n_ops x D x F a step, untouched pages of
                # np.zeros' mapping included)
                rows = df[ready_ids]
                if self._fs == _lib.DP_ENV_FEATURES_ENGINE:
                    rows[:, :, _TIME_COLUMNS_ENGINE] /= sc
                else:
                    rows /= sc
                df[ready_ids] = rows
            obs["device_features"] = df
        return obs

    def _info(self, sims):
        return {"step": self._step(self._ptr), "simulations": sims, "episode_simulations": self._episode_sims,
                "total_simulations": int(_lib.dp_engine_simulations(self.engine._e())),
                "prefix_simulations": int(self._n_resim(self._ptr)) - self._resim0}

    # ---- the Gymnasium interface ----

    def reset(self, seed=None, options=None):
        """Start an episode: nothing assigned, the ready set is the sources. seed seeds
        self.np_random (and the action space's sampling). Returns (observation, info)."""
        # the engine's workspace: its lock, as its own calls take it (another thread's
        # simulate_batch during a step aborted the interpreter: a review)
        with self.engine._lock:
            p = self._e()
            if seed is not None:
                if _gym is not None:
                    super().reset(seed=seed)  # Gymnasium's seeding: the same PCG64 stream as default_rng(seed)
                else:
                    self.np_random = np.random.default_rng(seed)
                if isinstance(self.action_space, _Discrete2):
                    self.action_space.np_random = self.np_random
                else:
                    self.action_space.seed(seed)
            _lib.dp_env_reset(p)
            self._resim0 = int(self._n_resim(p))
            self._episode += 1
            self._steps = []
            self._episode_sims = 0
            self._done = False
            self._t0 = time.perf_counter()
            return self._observation(), self._info(0)

    def _check_action(self, op, device, what="step"):
        if not (0 <= op < self.n_ops):
            raise InvalidInputError("%s: op %d out of range (0..%d)" % (what, op, self.n_ops - 1), _lib.DP_EINVAL)
        if not (0 <= device < self.n_devices):
            raise InvalidInputError("%s: device %d out of range (0..%d)" % (what, device, self.n_devices - 1),
                                    _lib.DP_EINVAL)

    def _decode(self, action, what="step"):
        if type(action) in (tuple, list) and len(action) == 2 and type(action[0]) is int and type(action[1]) is int:
            return action[0], action[1]  # the common case, without NumPy
        if type(action) in (tuple, list) and any(isinstance(x, (bool, np.bool_)) for x in action):
            # (True, 1) became op 1 through NumPy's conversion of the pair (a review)
            raise TypeError("%s: an action is (op, device) or op * n_devices + device, got %r" % (what, action))
        if type(action) is int:
            k = action  # any size (NumPy makes an object array of one beyond int64)
        elif type(action) in (tuple, list) and len(action) == 2:
            # each element by operator.index: NumPy made (np.uint64(0), 1) a pair of floats,
            # refused as "not an action" (a review)
            try:
                return operator.index(action[0]), operator.index(action[1])
            except TypeError:
                raise TypeError("%s: an action is (op, device) or op * n_devices + device, got %r" % (what, action)) from None
        else:
            a = np.asarray(action)
            if a.ndim == 0:
                if not np.issubdtype(a.dtype, np.integer):
                    raise TypeError("%s: an action is (op, device) or op * n_devices + device, got %r" % (what, action))
                k = int(a)
            elif a.shape != (2,) or not np.issubdtype(a.dtype, np.integer):
                raise TypeError("%s: an action is (op, device) or op * n_devices + device, got %r" % (what, action))
            else:
                return int(a[0]), int(a[1])
        if not 0 <= k < self.n_ops * self.n_devices:
            raise InvalidInputError("%s: action %d out of range (0..%d)" % (what, k, self.n_ops * self.n_devices - 1),
                                    _lib.DP_EINVAL)
        return divmod(k, self.n_devices)

    def step(self, action):
        """Place one ready op on a device. Returns (observation, reward, terminated, truncated,
        info); see the class docstring."""
        # the engine's workspace: its lock, as its own calls take it (another thread's
        # simulate_batch during a step aborted the interpreter: a review)
        with self.engine._lock:
            p = self._e()
            if self._done:
                if self._episode < 0:  # said "the episode is over (all N ops placed)" before any reset
                    raise Error("step: no episode has started; call reset() first")
                raise Error("step: the episode is over (all %d ops placed); call reset()" % self.n_ops)
            op, dev = self._decode(action)
            self._check_action(op, dev)
            n_ready = self._n_ready(p)
            # the whole action is checked before the state changes (a failed action leaves it as it
            # was): the op is ready, and the last step's simulation of the whole assignment runs first
            if _lib.dp_env_ready_index(p, op) < 0:
                msg = "step: op %d is not in the ready set" % op
                if self.invalid_action == "ignore":
                    info = self._info(0)
                    info["invalid_action"] = msg
                    return self._observation(), 0.0, False, False, info
                raise InvalidInputError(msg, _lib.DP_EINVAL)
            k = self._step(p)  # the step this action is
            done = k == self.n_ops - 1
            sched = None
            if done:
                full = self._assign.copy()
                full[op] = dev
                sched = self.engine.simulate(full)
            err = _lib.dp_error()
            check(_lib.dp_env_step(p, op, dev, ctypes.byref(err)), err)
            reward = 0.0
            sims = 0
            info_extra = {}
            if done:
                sims = 1
                self._episode_sims += 1
                reward = -sched.cost
                self._done = True
                info_extra = {"makespan": sched.makespan, "cost": sched.cost, "assignment": sched.assignment}
                self._episodes.append({"episode": self._episode, "makespan": sched.makespan, "return": reward,
                                       "steps": self.n_ops, "simulations": self._episode_sims,
                                       "seconds": time.perf_counter() - self._t0})
            self._steps.append((self._episode, k, op, dev, n_ready, self._est_start[op] / self._sc,
                                self._est_end[op] / self._sc, reward))
            obs = self._observation()
            info = self._info(sims)
            info.update(info_extra)
            return obs, reward, done, False, info

    def render(self):
        return None

    # ---- records ----

    def trajectory(self):
        """The current (or last) episode's steps: columns episode, step, op, device, n_ready,
        start, end (the op's estimated start and end), reward. A pandas DataFrame when pandas is
        installed, else a dict of NumPy arrays."""
        from .results import _frame
        self._e()  # a closed environment answers nothing (close(): later calls raise; a review)
        cols = ("episode", "step", "op", "device", "n_ready", "start", "end", "reward")
        return _frame(cols, self._steps)

    def episodes(self):
        """Every finished episode of this environment: episode, makespan, return, steps,
        simulations, seconds (wall time). A DataFrame, or a dict of arrays without pandas."""
        from .results import _frame
        self._e()
        cols = ("episode", "makespan", "return", "steps", "simulations", "seconds")
        return _frame(cols, [tuple(e[k] for k in cols) for e in self._episodes])

    def __repr__(self):
        eng = getattr(self, "engine", None)
        if eng is None:  # __init__ refused its arguments before the engine (an AttributeError: a review)
            return "<doppler.Env (closed)>"
        with eng._lock:
            if not self._ptr:
                return "<doppler.Env (closed)>"
            if self.engine.closed or self.graph.closed:  # (repr raised ClosedError: a review)
                return "<doppler.Env (its %s is closed)>" % ("engine" if self.engine.closed else "graph")
            return "<doppler.Env %s: %d ops, %d devices, step %d>" % (self.graph.name, self.n_ops, self.n_devices,
                                                                      self._step(self._ptr))
