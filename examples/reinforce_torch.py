"""REINFORCE with PyTorch on doppler's assignment environment, written against the Gymnasium
interface only (reset, step, observation dict): the same agent runs on any Gymnasium
environment with this observation layout.

Two small policies as in DOPPLER (Yao et al. 2026): SEL scores the ready ops from their features
(observation["op_features"]) and PLC scores the devices for the selected op from its device
features (observation["device_features"][op]). The return is -makespan (only the last step is
rewarded); the baseline is the running mean return. The features in time units are divided by the
critical path so that graphs of any time unit train alike (the counts and flags, and the engine
features' bpath_load, a fraction, are not: they were, and a graph in another unit trained
otherwise: a review).

Usage: python3 examples/reinforce_torch.py [GRAPH] [EPISODES] [--devices N] [--seed S]
Prints one line per 10 episodes and the best makespan found beside the critical-path placement's.
"""
import argparse
import time

import numpy as np
import torch

import doppler


class Policy(torch.nn.Module):
    def __init__(self, n_op_features, n_device_features, hidden=32):
        super().__init__()
        self.sel = torch.nn.Sequential(torch.nn.Linear(n_op_features, hidden), torch.nn.Tanh(),
                                       torch.nn.Linear(hidden, 1))
        self.plc = torch.nn.Sequential(torch.nn.Linear(n_device_features, hidden), torch.nn.Tanh(),
                                       torch.nn.Linear(hidden, 1))

    def act(self, obs, scale):
        """Sample (op, device); returns the action and its log-probability. scale: (op features'
        divisors, device features' divisors), time_scales()'s."""
        ready = torch.from_numpy(obs["ready"][obs["ready"] >= 0])
        feats = torch.from_numpy(obs["op_features"][ready.numpy()] / scale[0]).float()
        sel = torch.distributions.Categorical(logits=self.sel(feats).squeeze(-1))
        i = sel.sample()
        op = int(ready[i])
        dfeats = torch.from_numpy(obs["device_features"][op] / scale[1]).float()
        plc = torch.distributions.Categorical(logits=self.plc(dfeats).squeeze(-1))
        d = plc.sample()
        return (op, int(d)), sel.log_prob(i) + plc.log_prob(d)


UNITLESS = {"n_predecessors", "n_successors", "assigned", "ready", "bpath_load"}


def time_scales(env, cp):
    """The divisors of the op and device feature columns: cp for those in time units, 1 for the
    counts, flags and fractions (doppler.OP_FEATURES, doppler.DEVICE_FEATURES or
    doppler.ENGINE_DEVICE_FEATURES, by the environment's feature set)."""
    dev = doppler.ENGINE_DEVICE_FEATURES if env.features == "engine" else doppler.DEVICE_FEATURES
    return (np.array([1.0 if f in UNITLESS else cp for f in doppler.OP_FEATURES]),
            np.array([1.0 if f in UNITLESS else cp for f in dev]))


def train(env, episodes, seed=0, lr=3e-3, log=print):
    """REINFORCE on env for the given number of episodes; returns (best makespan, its assignment,
    the list of episode makespans)."""
    torch.manual_seed(seed)
    obs, _ = env.reset(seed=seed)
    cp = float(env.engine.costs.critical_path) or 1.0
    scale = time_scales(env, cp)
    feats = [c for c in ("op_features", "device_features")]
    policy = Policy(obs[feats[0]].shape[1], obs[feats[1]].shape[2])
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    baseline, best, best_a, history = None, np.inf, None, []
    for ep in range(episodes):
        obs, _ = env.reset()
        logps, total, done = [], 0.0, False
        while not done:
            action, logp = policy.act(obs, scale)
            obs, reward, done, truncated, info = env.step(action)
            logps.append(logp)
            total += reward
        ms = info["makespan"]
        history.append(ms)
        if ms < best:
            best, best_a = ms, info["assignment"]
        baseline = total if baseline is None else 0.9 * baseline + 0.1 * total
        advantage = (total - baseline) / cp
        loss = -advantage * torch.stack(logps).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if log and (ep + 1) % 10 == 0:
            log("episode %4d  makespan %.6g  best %.6g" % (ep + 1, ms, best))
    return best, best_a, history


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph", nargs="?", default="data/graphs/chainmm.json")
    ap.add_argument("episodes", nargs="?", type=int, default=100)
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.episodes < 1:  # "best makespan inf s after 0 episodes" (a review)
        ap.error("EPISODES is a positive count, got %d" % a.episodes)
    g = doppler.Graph.read(a.graph)
    env = doppler.Env(g, doppler.Machine(devices=a.devices))
    t0 = time.perf_counter()
    best, _, _ = train(env, a.episodes, a.seed)
    cp = env.engine.place("cp").makespan
    print("REINFORCE: best makespan %.6g %s after %d episodes (%.1f s); cp %.6g" % (
        best, g.time_unit, a.episodes, time.perf_counter() - t0, cp))


if __name__ == "__main__":
    main()
