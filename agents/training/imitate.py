"""Behaviour cloning before PPO: a training run's first policy learned from teachers (DAgger).

A run with an ``imitate`` section (:class:`ImitateConfig`) first fits its policy to the actions
of *teachers*: one policy per world (a baseline such as ``srpt``, or a shipped agent such as
``agent:general``), chosen by the id of the world being played (``default`` for the others).
This is DAgger (Ross, Gordon and Bagnell, "A Reduction of Imitation Learning and Structured
Prediction to No-Regret Online Learning", AISTATS 2011, Algorithm 3.1): round 0 plays the
teachers' own actions; every later round plays the policy fitted so far (its most likely legal
action) and asks the teacher what it would have done in each state reached; the labelled states
of every round are pooled, and the policy is fitted again on all of them (cross-entropy of the
teacher's action under the masked policy, Adam; with ``soft_targets``, of the starting policy's
distribution wherever the teacher agrees with it). PPO then continues from the fitted policy
(kickstarting), and validation chooses between them: the run's first evaluation is of the
fitted policy, at step 0.

Teachers act as the harness runs them: a baseline decides from the world's simulator, an agent
from the world's own (unpadded) observation and mask, after ``reset(sim, seed)`` at each
episode; a teacher of a registered kind (:mod:`~mrsched_gym.agents.training.teachers`, e.g. the
research package's rollout teachers ``rollout:POLICY``, which play copies of the world's env from
the current state over ``teacher_workers`` processes) plans from the world's env and observation.
With a pool of worlds (``worlds``), the world's skip is the pool's skip.

Every draw is seeded: env ``i``'s episodes from ``first_seed + i`` (the training run passes
``TRAIN_SEED_BASE + 1000 * seed + 500``, apart from PPO's envs), the minibatch order from the
run's ``seed``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from mrsched_gym.agents.training.imitate_config import MAX_ENVS, ImitateConfig
from mrsched_gym.agents.training.teachers import teacher_kind

#: The keys of a labelled decision that are not the observation's.
LABEL_KEYS = ("mask", "action", "target")


def make_teacher(spec: str, pool=None):
    """The teacher a ``teachers`` entry names: a policy, or a teacher of a registered kind over
    one (:mod:`~mrsched_gym.agents.training.teachers`; a parallel kind works over ``pool``, a
    process
    pool, if given)."""
    from mrsched_gym.evaluate import make_policy
    kind = teacher_kind(spec)
    if kind is not None:
        return kind.make(spec, make_policy, pool)
    return make_policy(spec)


def _teacher_pool(ic: ImitateConfig):
    """The process pool of the parallel teachers' work (the rollout teachers' play-outs), or
    None (one worker, or no teacher of a parallel kind)."""
    kinds = [teacher_kind(s) for s in ic.teachers.values()]
    if ic.teacher_workers < 2 or not any(k is not None and k.parallel for k in kinds):
        return None
    import multiprocessing as mp
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    from mrsched_gym.processes.lifecycle import (
        default_termination,
        forking_with_default_termination,
    )
    with forking_with_default_termination():
        return ctx.Pool(ic.teacher_workers, initializer=default_termination)


class _Player:
    """One env of the phase: its world, the teacher of that world, and its episodes."""

    def __init__(self, cfg, seed: int, teachers: dict[str, Any]) -> None:
        #: the worlds whose teacher is of a registered kind: it plans from the env
        self.planners = {k for k, v in cfg.imitate.teachers.items() if teacher_kind(v)}
        from mrsched_gym.agents.training.worlds import WorldPool
        from mrsched_gym.evaluate import make_env
        self.pool = WorldPool(cfg.worlds) if cfg.worlds is not None else None
        self.env = self.pool if self.pool is not None \
            else make_env(cfg.env, cfg.env_kwargs).unwrapped
        self.home = cfg.env
        self.teachers = teachers
        self.work_conserving = cfg.work_conserving
        self.rng = np.random.default_rng(seed)         # the teachers' episode seeds
        self.obs = self._reset(seed)

    def world(self):
        """``(world id, the world's env)``."""
        if self.pool is not None:
            return self.pool.world[0], self.pool.env
        return self.home, self.env

    def _reset(self, seed: int | None):
        obs, _ = self.env.reset(seed=seed)
        world_id, world = self.world()
        key = world_id if world_id in self.teachers else "default"
        self.teacher = self.teachers[key]
        self.plans = key in self.planners
        self.teacher.reset(world.sim, seed=int(self.rng.integers(2 ** 31)))
        return obs

    def mask(self) -> np.ndarray:
        """The legal actions (skip removed at a schedule decision with a candidate when the
        run is work-conserving, as in PPO's envs)."""
        from mrsched_gym.agents.policy import idle_mask, work_conserving_mask
        from mrsched_gym.sim.decision import SCHEDULE
        _, world = self.world()
        mask = self.env.action_masks()
        if self.work_conserving:
            return work_conserving_mask(mask, world.sim.decision.kind == SCHEDULE)
        return idle_mask(mask)                      # the env's allow_idle=True mask

    def teacher_action(self) -> int:
        """The teacher's action in the current state, in this env's action space."""
        _, world = self.world()
        raw = self.pool.world_obs if self.pool is not None else self.obs
        if self.plans:                               # a registered kind's teacher
            a = self.teacher.plan(world, raw)
        elif hasattr(self.teacher, "act"):
            a = int(self.teacher.act(raw, world.action_masks()))
        else:
            a = int(self.teacher.decide(world.sim))
        return self.env.action_space.n - 1 if a == world.K else a

    def step(self, action: int) -> None:
        obs, _, term, trunc, _ = self.env.step(action)
        self.obs = self._reset(None) if term or trunc else obs


def imitate(model, cfg, first_seed: int, progress: bool = True,
            labelled: dict | None = None) -> list[dict]:
    """Fit ``model``'s policy to the teachers of ``cfg.imitate`` (in place).

    Args:
        model: The run's MaskablePPO model (set policy).
        cfg: The run's :class:`~mrsched_gym.agents.training.train.TrainConfig`.
        first_seed: Env ``i`` plays episodes seeded from ``first_seed + i``.
        progress: Print one line per round.
        labelled: If given, filled with the labelled decisions (observation keys, ``mask``,
            ``action``, and ``target`` with ``soft_targets``: stacked arrays), for
            :class:`ImitationLoss` during PPO.

    Returns:
        One row per round: labelled decisions so far, the round's dropped decisions, the share
        of its labelled ones on which the policy (before the round's fit) agreed with the
        teacher, with ``soft_targets`` the round's labelled decisions on which the teacher
        departed from the starting policy, the fit's final loss, and wall seconds.
    """
    pool = _teacher_pool(cfg.imitate)
    try:
        return _imitate(model, cfg, first_seed, progress, labelled, pool)
    finally:
        if pool is not None:
            pool.terminate()


def _imitate(model, cfg, first_seed: int, progress: bool, labelled: dict | None,
             pool) -> list[dict]:
    import torch as th

    ic = cfg.imitate
    policy = model.policy
    players = []
    for i in range(ic.n_envs):
        teachers = {k: make_teacher(v, pool) for k, v in ic.teachers.items()}
        players.append(_Player(cfg, first_seed + i, teachers))
    optimizer = th.optim.Adam(policy.parameters(), lr=ic.learning_rate)
    rng = np.random.default_rng(cfg.seed)
    obs_keys = list(players[0].obs)
    keys = [*obs_keys, "mask", "action", *(["target"] if ic.soft_targets else [])]
    data: dict[str, list] = {k: [] for k in keys}
    start = _frozen_actor(policy) if ic.soft_targets else None
    rows = []
    t0 = time.perf_counter()
    for rnd in range(ic.rounds):
        agree = n = dropped = departures = 0
        actor = policy.numpy_actor()
        while n < ic.steps_per_round:
            for p in players:
                if n >= ic.steps_per_round:
                    break
                mask = p.mask()
                label = p.teacher_action()
                obs = {k: v[None] for k, v in p.obs.items()}
                log_p, _ = actor(obs, mask[None])
                own = int(np.argmax(log_p[0]))
                n += 1
                if mask[label]:
                    agree += own == label
                    for k in obs_keys:
                        data[k].append(p.obs[k])
                    data["mask"].append(mask)
                    data["action"].append(label)
                    if start is not None:
                        start_log_p = start(obs, mask[None])[0][0]
                        departures += int(np.argmax(start_log_p)) != label
                        data["target"].append(soft_target(start_log_p, label))
                else:                           # the teacher idles a slot: played, not learned
                    dropped += 1
                p.step(label if rnd == 0 else own)
        loss = _fit(policy, optimizer, data, obs_keys, ic, rng) if data["action"] else math.nan
        rows.append({"round": rnd, "decisions": len(data["action"]), "dropped": dropped,
                     "agreement": round(float(agree) / max(n - dropped, 1), 4),
                     **({"departures": departures} if start is not None else {}),
                     "loss": round(loss, 4),
                     "wall_s": round(time.perf_counter() - t0, 1)})
        if progress:
            print(f"imitate round {rnd}: {rows[-1]}", flush=True)
    if labelled is not None and data["action"]:
        labelled.update(_stacked(data))
    return rows


def _frozen_actor(policy):
    """A numpy forward pass of ``policy``'s current weights that never follows later updates.
    Made without consuming torch's random stream (its constructor seeds a generator from it),
    so a run with ``soft_targets`` differs from one without in its targets only."""
    import torch as th

    from mrsched_gym.agents.numpy_rollout import NumpyActorCritic
    state = th.random.get_rng_state()
    actor = NumpyActorCritic(policy)
    th.random.set_rng_state(state)
    return actor


def soft_target(start_log_p: np.ndarray, label: int) -> np.ndarray:
    """The target distribution of ``soft_targets`` (float32 ``[A]``): the starting policy's
    distribution (``start_log_p``, its masked log-probabilities) if ``label`` is its most
    likely action, else ``label`` alone."""
    if int(np.argmax(start_log_p)) == label:
        return np.exp(start_log_p).astype(np.float32)
    target = np.zeros(len(start_log_p), dtype=np.float32)
    target[label] = 1.0
    return target


def _stacked(data: dict[str, list]) -> dict[str, np.ndarray]:
    return {k: np.stack(v) for k, v in data.items()}


class ImitationLoss:
    """Minibatch steps of the imitation loss on a fixed set of labelled decisions.

    Args:
        arrays: Observation keys, ``mask``, ``action`` and, for soft targets, ``target`` (as
            :func:`imitate` fills ``labelled``).
        batch_size: Decisions per minibatch.
        seed: Seeds the minibatch draws.
    """

    def __init__(self, arrays: dict[str, np.ndarray], batch_size: int, seed: int) -> None:
        self.arrays = arrays
        self.obs_keys = [k for k in arrays if k not in LABEL_KEYS]
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)

    def steps(self, policy, optimizer, n_batches: int) -> float:
        """``n_batches`` minibatches (drawn with replacement across batches, without within
        one), each a gradient step of ``optimizer``; the mean loss."""
        n = len(self.arrays["action"])
        losses = []
        for _ in range(n_batches):
            idx = self.rng.choice(n, size=min(self.batch_size, n), replace=False)
            losses.append(_step(policy, optimizer, self.arrays, self.obs_keys, idx))
        return float(np.mean(losses)) if losses else math.nan


def _step(policy, optimizer, arrays: dict, obs_keys: list[str], idx: np.ndarray) -> float:
    """One gradient step of the masked cross-entropy on the decisions ``idx`` (of the
    ``target`` distributions if there are any, else of the ``action`` labels; gradients clipped
    to norm 0.5, as PPO's); the loss."""
    import torch as th
    obs = {k: th.as_tensor(arrays[k][idx]) for k in obs_keys}
    masks = th.as_tensor(arrays["mask"][idx])
    if "target" in arrays:
        log_p = policy.action_log_probs(obs, masks)    # masked actions: target 0
        loss = -(th.as_tensor(arrays["target"][idx]) * log_p).sum(-1).mean()
    else:
        _, log_prob, _ = policy.evaluate_actions(obs, th.as_tensor(arrays["action"][idx]),
                                                 action_masks=masks)
        loss = -log_prob.mean()
    optimizer.zero_grad()
    loss.backward()
    th.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
    optimizer.step()
    return loss.item()


def _fit(policy, optimizer, data: dict, obs_keys: list[str], ic: ImitateConfig,
         rng: np.random.Generator) -> float:
    """``ic.epochs`` passes of minibatch cross-entropy (:func:`_step`) over every labelled
    decision (gradients clipped to norm 0.5, as PPO's); the mean loss of the last pass. The
    value head is not fitted: PPO's first updates fit it."""
    arrays = _stacked(data)
    n = len(arrays["action"])
    last = []
    for _ in range(ic.epochs):
        order = rng.permutation(n)
        last = [_step(policy, optimizer, arrays, obs_keys, order[s:s + ic.batch_size])
                for s in range(0, n, ic.batch_size)]
    return float(np.mean(last))


__all__ = ["ImitateConfig", "ImitationLoss", "LABEL_KEYS", "MAX_ENVS", "imitate",
           "make_teacher", "soft_target"]
