"""Variance reduction for input-driven environments: a trainer option (``input_driven:``).

The env's arrivals, job sizes, capacity and interactive load are *exogenous inputs*: drawn at
reset from the env's seed, the same whatever the policy does (common random numbers). The
spread of returns between input sequences is then noise to the policy gradient: a good action
on a heavy input still earns a poor return. Mao, Venkatakrishnan, Schwarzkopf and Alizadeh
("Variance Reduction for Reinforcement Learning in Input-Driven Environments", ICLR 2019,
section 4) remove it with an *input-dependent baseline* ``b(s_t, z_{t:inf})``, and Decima (Mao
et al., "Learning Scheduling Algorithms for Data Processing Clusters", SIGCOMM 2019, section 5.3)
computes it the simple way: several rollouts on the same input sequence, and at each time the
mean of their returns from that time on. This module does that on SB3/sb3-contrib:

* **Rollouts per input** (:class:`SameInput`): the ``n_envs`` training envs form groups of
  ``rollouts_per_input``; every env of a group resets from its group's seed, so the ``j``-th
  episode of each env of a group has the same input (tested: the same jobs arrive whatever the
  policy does).
* **The input-dependent baseline** (:func:`input_baselines`, applied by
  :func:`input_baseline_callback` after each rollout, before the update): the advantage of the
  step taken at simulated time ``t`` in episode ``j`` of env ``e`` is ``R_e(t) - b(t)``, with
  ``b(t)`` the mean of ``R_e'(t)`` over the envs ``e'`` of the group (``e`` included, as Decima
  does) whose episode ``j`` covers ``t`` in the rollout. ``R_e'(t)`` is the return-to-go of
  ``e'`` from its last decision at or before ``t`` (0 after its episode ended): SB3's lambda
  returns (``ppo.gae_lambda``; 1 gives the Monte-Carlo return, bootstrapped only where the
  rollout cuts the episode). Where fewer than two envs of the group cover ``t`` (the first or
  last steps of a rollout, when the group's episodes drift apart) the advantage stays the
  learned value's (GAE). The value function still learns the returns.
* **Differential reward** (Decima 5.3, for continuing arrivals): each step's reward minus
  ``rate * dt``, ``dt`` the simulated time the step covers and ``rate`` a moving average of the
  reward per simulated second over the past rollouts (``reward_rate_decay``), so that the
  return measures how much better than average the policy does over the time it covers rather
  than growing with the episode's length.
* **Curriculum on episode length** (Decima 5.3): episode ``j`` of a group ends (truncated, the
  value bootstrapped) at a simulated time drawn from an exponential law of mean
  ``curriculum_start_s + j * curriculum_growth_s``, from a generator seeded by the group's seed
  and ``j``: the same horizon for every rollout of an input. ``curriculum_start_s: 0`` = none.

Only with a single env (not a pool of worlds) for now.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

#: Entropy that sets the curriculum's horizons apart from the world's own random streams.
_HORIZON_STREAM = 0x1D4E


@dataclass
class InputDrivenConfig:
    """Variance reduction for input-driven environments (see the module docstring).

    Attributes:
        rollouts_per_input: Envs per group sharing one input sequence (``k`` >= 2); the run's
            ``n_envs`` must be a multiple of it.
        baseline: Replace the advantage by the return minus the input-dependent baseline (the
            group's mean return-to-go at the same simulated time). False = groups only (common
            inputs, GAE advantages).
        differential_reward: Subtract ``rate * dt`` from each step's reward (``rate``: the
            moving average reward per simulated second; ``dt``: the step's simulated time).
        reward_rate_decay: Weight of the old rate in its moving average after each rollout
            (0 = the last rollout's rate alone).
        curriculum_start_s: Mean episode length (simulated seconds) of episode 0 of each env;
            episode ``j`` is truncated at a time drawn from an exponential law of mean
            ``curriculum_start_s + j * curriculum_growth_s``. 0 = no curriculum.
        curriculum_growth_s: Growth of that mean per episode.
    """

    rollouts_per_input: int = 4
    baseline: bool = True
    differential_reward: bool = False
    reward_rate_decay: float = 0.9
    curriculum_start_s: float = 0.0
    curriculum_growth_s: float = 0.0

    def validate(self, n_envs: int) -> InputDrivenConfig:
        """Check the fields against the run's ``n_envs``.

        Raises:
            ValueError: A bad field; the message names it.
        """
        k = self.rollouts_per_input
        if not isinstance(k, int) or isinstance(k, bool) or k < 2:
            raise ValueError(f"input_driven.rollouts_per_input: an integer >= 2; got {k!r}")
        if n_envs % k:
            raise ValueError(f"input_driven.rollouts_per_input: n_envs ({n_envs}) must be a "
                             f"multiple of it ({k})")
        for f in ("baseline", "differential_reward"):
            if not isinstance(getattr(self, f), bool):
                raise ValueError(f"input_driven.{f}: true or false; got {getattr(self, f)!r}")
        d = self.reward_rate_decay
        if isinstance(d, bool) or not isinstance(d, (int, float)) or not 0 <= d < 1:
            raise ValueError(f"input_driven.reward_rate_decay: a number in [0, 1); got {d!r}")
        for f in ("curriculum_start_s", "curriculum_growth_s"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < math.inf:
                raise ValueError(f"input_driven.{f}: a finite number >= 0; got {v!r}")
        return self


class SameInput(gym.Wrapper):
    """A training env of a group: resets from its group's seed, adds the decision's simulated
    time to each step's info (``input_time_s``, ``input_dt_s``), applies the differential reward
    and truncates at the curriculum's horizon.

    Args:
        env: The env (its ``unwrapped.sim`` has the clock ``now``).
        seed_base: The seed SB3 gives env 0 (env ``i`` gets ``seed_base + i``).
        cfg: The run's :class:`InputDrivenConfig`.
    """

    def __init__(self, env: gym.Env, seed_base: int, cfg: InputDrivenConfig) -> None:
        super().__init__(env)
        self.seed_base = seed_base
        self.cfg = cfg
        self.group_seed: int | None = None
        self.episode = -1
        self.horizon = math.inf
        self.rate = 0.0                  # the differential reward's rate (set each rollout)
        self.totals = [0.0, 0.0]         # reward and simulated seconds since last taken

    def group_seed_of(self, seed: int) -> int:
        """The seed of the group of the env SB3 seeded ``seed``: its first env's."""
        k = self.cfg.rollouts_per_input
        return self.seed_base + (seed - self.seed_base) // k * k

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Reset; the first seed SB3 passes becomes the group's (later resets continue the
        env's own stream, the same for every env of the group)."""
        if seed is not None:
            self.group_seed = self.group_seed_of(seed)
            seed = self.group_seed
        self.episode += 1
        self.horizon = self.draw_horizon(self.episode)
        return self.env.reset(seed=seed, options=options)

    def draw_horizon(self, episode: int) -> float:
        """Episode ``episode``'s truncation time: ``inf`` without a curriculum."""
        c = self.cfg
        if not c.curriculum_start_s or self.group_seed is None:
            return math.inf
        mean = c.curriculum_start_s + episode * c.curriculum_growth_s
        rng = np.random.default_rng([self.group_seed, episode, _HORIZON_STREAM])
        return float(rng.exponential(mean))

    def step(self, action: Any):
        """Step; the info gains the decision's time and the step's duration."""
        sim = self.env.unwrapped.sim
        t0 = float(sim.now)
        obs, reward, terminated, truncated, info = self.env.step(action)
        dt = float(sim.now) - t0
        self.totals[0] += float(reward)
        self.totals[1] += dt
        if self.cfg.differential_reward:
            reward = float(reward) - self.rate * dt
        if not (terminated or truncated) and sim.now >= self.horizon:
            truncated = True
        return obs, reward, terminated, truncated, dict(info, input_time_s=t0, input_dt_s=dt)

    def set_rate(self, rate: float) -> None:
        """Set the differential reward's rate."""
        self.rate = float(rate)

    def take_totals(self) -> tuple[float, float]:
        """The reward and simulated seconds since the last call (then zeroed)."""
        out = (self.totals[0], self.totals[1])
        self.totals = [0.0, 0.0]
        return out


def input_baselines(returns: np.ndarray, times: np.ndarray, episodes: np.ndarray,
                    ended: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The input-dependent baseline of every step of a rollout (see the module docstring).

    Args:
        returns: ``[T, n_envs]`` return-to-go estimate from each step.
        times: ``[T, n_envs]`` simulated time of each step's decision.
        episodes: ``[T, n_envs]`` the env's episode index at each step.
        ended: ``[T, n_envs]`` whether the step ended its episode.
        k: Envs per group (env ``e`` is in group ``e // k``).

    Returns:
        ``(baseline, covered)``: ``[T, n_envs]`` the mean over the group's envs covering the
        step's time of their return-to-go at that time, and how many envs that mean is over.
    """
    T, n = returns.shape
    base = np.zeros((T, n))
    cover = np.zeros((T, n), dtype=int)
    for g in range(n // k):
        envs = range(g * k, (g + 1) * k)
        # per env and episode: its (times, returns) and whether the episode ended in the rollout
        spans: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, bool]] = {}
        for e in envs:
            for j in np.unique(episodes[:, e]):
                rows = np.flatnonzero(episodes[:, e] == j)
                spans[(e, int(j))] = (times[rows, e], returns[rows, e], bool(ended[rows[-1], e]))
        for e in envs:
            for t in range(T):
                j, now = int(episodes[t, e]), times[t, e]
                vals = []
                for e2 in envs:
                    span = spans.get((e2, j))
                    if span is None or span[0][0] > now:
                        continue
                    ts, rs, done = span
                    if now > ts[-1] and not done:
                        continue                      # its rollout stops before ``now``
                    i = int(np.searchsorted(ts, now, side="right")) - 1
                    vals.append(0.0 if now > ts[-1] else float(rs[i]))
                cover[t, e] = len(vals)
                base[t, e] = float(np.mean(vals)) if vals else 0.0
    return base, cover


def input_baseline_callback(cfg: InputDrivenConfig):
    """The SB3 callback of the option: records each step's time and episode, rewrites the
    rollout buffer's advantages after each rollout (before the update) and keeps the
    differential reward's rate."""
    from stable_baselines3.common.callbacks import BaseCallback

    class InputBaseline(BaseCallback):
        """See :func:`input_baseline_callback`."""

        def _on_training_start(self) -> None:
            self.episode = np.zeros(self.training_env.num_envs, dtype=int)
            self.rate: float | None = None

        def _on_rollout_start(self) -> None:
            self.times: list[np.ndarray] = []
            self.ends: list[np.ndarray] = []
            self.episodes: list[np.ndarray] = []
            if self.rate is not None:
                self.training_env.env_method("set_rate", self.rate)

        def _on_step(self) -> bool:
            dones = np.asarray(self.locals["dones"], bool)
            self.times.append(np.array([i["input_time_s"] for i in self.locals["infos"]], float))
            self.ends.append(dones)
            self.episodes.append(self.episode.copy())
            self.episode = self.episode + dones          # the next step starts a new episode
            return True

        def _on_rollout_end(self) -> None:
            totals = self.training_env.env_method("take_totals")
            r, dt = (sum(x) for x in zip(*totals, strict=True))
            if dt > 0:
                new = r / dt
                d = cfg.reward_rate_decay
                self.rate = new if self.rate is None else d * self.rate + (1 - d) * new
                self.logger.record("input_driven/reward_rate", self.rate)
            if not cfg.baseline:
                return
            buf = self.model.rollout_buffer
            base, cover = input_baselines(buf.returns, np.array(self.times),
                                          np.array(self.episodes), np.array(self.ends),
                                          cfg.rollouts_per_input)
            use = cover >= 2
            buf.advantages[use] = (buf.returns[use] - base[use]).astype(buf.advantages.dtype)
            self.logger.record("input_driven/covered", float(use.mean()))

    return InputBaseline()


__all__ = ["InputDrivenConfig", "SameInput", "input_baseline_callback", "input_baselines"]
