"""A rollout teacher: one step of policy improvement over a base policy, by simulation.

At a schedule decision with two or more candidates the teacher copies the world once per
candidate, applies that candidate, lets the *base* policy play the copy to the end of the
episode, and picks the candidate whose copy ends with the lowest cost (the scenario's reward
weights over the episode's totals, i.e. minus the return); the base policy's own action is
always among those weighed (its skip too), and it wins ties (costs within
:data:`TIE_TOLERANCE`, relative, of the cheapest). Every other decision is the base
policy's. This is the rollout algorithm of Bertsekas, Tsitsiklis and Wu ("Rollout
Algorithms for Combinatorial Optimization", J. Heuristics 1997; Bertsekas, *Dynamic Programming
and Optimal Control*, vol. I, section 6.4): the rollout policy is never worse than its base on
the state it is asked about, given the same future: in a deterministic world (the copy's) and
with a base that decides from the state alone, the rollout policy's episode costs at most the
base's (the cost improvement property; tested).

**It is clairvoyant, hence a teacher only.** The copy carries the world drawn at reset: the
future arrivals, task lengths, interference and availability. The teacher therefore chooses
with knowledge no scheduler has; it is used to label states for imitation
(``imitate.teachers``: ``rollout:POLICY``, e.g. ``rollout:agent:hadoop-v0``), never ranked, and
:func:`~mrsched_gym.evaluate.parse_policy` does not know it. The student learns the teacher's
choice given what it observes, i.e. as much of the improvement as the observation supports.

**The myopic variant** (``myopic-rollout:POLICY``, ``arrivals=False``) removes the jobs that
have not arrived yet from every copy (:func:`drop_future_arrivals`): each candidate is judged
by how the jobs already in the system fare, played out to their end. It does not know when,
or which, jobs will come; it still knows the present jobs' task lengths and the capacity and
interference timelines, which no scheduler knows either, so it is a teacher only as well.
Its play-outs are short: a copy ends when the present jobs close.

**The sampled variant** (``samples=M``, ``arrivals=False``; ``research/tools/rollout_ceiling.py
--samples``) plays each candidate out in ``M`` copies whose jobs to come are drawn afresh from
the workload (:func:`sample_future_arrivals`; the same draws for every candidate, from a
generator derived from the episode's seed on a stream apart from the world's) and takes the
lowest mean cost. It knows the workload's law, not its draw: the non-clairvoyant rollout of
Bertsekas's stochastic setting, estimated by sampling. It still knows the present jobs' task
lengths and the timelines, and its choice carries the samples' noise (docs/notes/agents.md: on
Hadoop-v0 it is worse than its base).

**The fair myopic variant** (``estimates=True``, ``arrivals=False``;
``research/tools/rollout_ceiling.py --myopic --estimates``) also replaces, in every copy, what
no scheduler observes by an estimate made from what it knows (:func:`estimate_the_unknown`: the
present jobs' pending tasks at the mean their work was drawn around, the load held, the
availability as forecast): every play-out is then a function of what a scheduler knows (with one
stated assumption: a running task's remaining work), and the rollout is a policy a scheduler
could run. ``margin`` keeps the base's action unless a candidate's play-out is cheaper by that
fraction. On Hadoop-v0 it loses the myopic rollout's edge and is not detectably better than its
base, with or without a margin (docs/notes/agents.md, "A fair myopic rollout").

Cost: one full episode of the base policy per candidate per decision, times ``samples`` for
the sampled rollout. A Hadoop-v0 episode with ``agent:hadoop-v0`` as the base: ~0.2 s per
decision on one core, ~5 min per episode; myopic, fair or not: ~20-260 s per episode (a
whole validation run of ten seeds on two cores: ~10 min); sampled, ``M = 8``
with a 900 s horizon: ~47 min per episode. ``pool`` spreads the candidates over processes.
"""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

import numpy as np

from mrsched_gym.agents.research.futures import (
    drop_future_arrivals,
    estimate_the_unknown,
    sample_future_arrivals,
)
from mrsched_gym.agents.training.teachers import TeacherKind, register_teacher_kind
from mrsched_gym.env.rewards import component_totals
from mrsched_gym.sim.decision import SCHEDULE

#: The prefix that names a rollout teacher in ``imitate.teachers``.
PREFIX = "rollout:"
#: The prefix that names a myopic rollout teacher (future arrivals dropped from the copies).
MYOPIC_PREFIX = "myopic-rollout:"
#: Entropy that sets the sampled rollout's futures apart from the world's own random streams.
_SAMPLED_STREAM = 0x5A3D
#: Relative cost difference below which play-outs tie (and the base's action wins).
TIE_TOLERANCE = 1e-9


def is_rollout_spec(spec: str) -> bool:
    """Whether ``spec`` names a rollout teacher (``rollout:BASE`` or ``myopic-rollout:BASE``)."""
    return isinstance(spec, str) and spec.startswith((PREFIX, MYOPIC_PREFIX))


def base_spec(spec: str) -> str:
    """The base policy's spec of a ``rollout:BASE`` or ``myopic-rollout:BASE`` teacher."""
    return spec.split(":", 1)[1]


def make_rollout_teacher(spec: str, make_policy, pool=None) -> RolloutTeacher:
    """The teacher a rollout spec names, its base made by ``make_policy(base spec)``."""
    return RolloutTeacher(make_policy(base_spec(spec)), pool=pool,
                          arrivals=not spec.startswith(MYOPIC_PREFIX))


class RolloutTeacher:
    """The rollout policy over ``base`` (a baseline or an agent, as :func:`make_policy` makes
    them). Call :meth:`reset` after every env reset and :meth:`plan` at every decision.

    Args:
        base: The base policy.
        pool: A process pool (``multiprocessing``) over which the candidates are played out,
            or None to play them here one after another. The choice is the same either way:
            each play-out is a deterministic function of the world copy, computed with one
            BLAS/OpenMP thread in a worker.
        arrivals: Whether the copies keep the jobs still to arrive (False: the myopic
            rollout, :func:`drop_future_arrivals`).
        samples: With ``samples`` > 0 (and ``arrivals`` False) the sampled rollout: each
            candidate is played out in ``samples`` copies whose jobs to come are drawn from
            the workload (:func:`sample_future_arrivals`), the same draws for every
            candidate (common random numbers), and judged by its mean cost.
        horizon_s: The sampled jobs arrive at most ``horizon_s`` after the decision.
        estimates: Whether the copies hold estimates in place of what no scheduler observes
            (the present jobs' task lengths to come, the load and availability to come:
            :func:`estimate_the_unknown`); needs ``arrivals`` False. With ``samples`` 0 this
            is the *fair myopic rollout*: every play-out is a function of what a scheduler
            knows.
        margin: Depart from the base's action only for a candidate whose (mean) play-out
            cost is below the base action's by more than ``margin`` times its magnitude
            (:func:`cheapest`); 0: whenever it is cheaper. A guard against departures on a
            model's error: the estimated copies are not the world.
    """

    def __init__(self, base: Any, pool=None, arrivals: bool = True, samples: int = 0,
                 horizon_s: float = math.inf, estimates: bool = False,
                 margin: float = 0.0) -> None:
        if samples < 0 or (samples and arrivals):
            raise ValueError(f"samples={samples}: a sampled rollout needs samples > 0 and "
                             "arrivals=False (the copies' own arrivals are replaced)")
        if not horizon_s > 0:
            raise ValueError(f"horizon_s={horizon_s} must be > 0")
        check_margin(margin)
        if estimates and arrivals:
            raise ValueError("estimates=True needs arrivals=False: the world's own jobs to "
                             "come would carry their true task lengths into the copies")
        self.base = base
        self.reads_obs = hasattr(base, "act")
        self.pool = pool
        self.arrivals = arrivals
        self.samples = samples
        self.horizon_s = horizon_s
        self.estimates = estimates
        self.margin = margin
        self._futures = np.random.SeedSequence([0, _SAMPLED_STREAM])

    def reset(self, sim, seed: int | None = None) -> None:
        """Reset the base policy (as the harness does at every episode) and, for the sampled
        rollout, the generator of the futures it samples: derived from ``seed`` (required),
        on a stream apart from the world's (a draw from the world's own stream would be its
        true future)."""
        if self.samples and seed is None:
            raise ValueError("a sampled rollout needs the episode's seed (reset(sim, seed=...)):"
                             " its futures are drawn from a generator derived from it")
        self.base.reset(sim, seed=seed)
        if seed is not None:
            self._futures = np.random.SeedSequence([seed, _SAMPLED_STREAM])

    def base_action(self, env, obs) -> int:
        """The base policy's action in ``env`` (whose observation is ``obs``)."""
        return (int(self.base.act(obs, env.action_masks())) if self.reads_obs
                else int(self.base.decide(env.sim)))

    def plan(self, env, obs) -> int:
        """The rollout action in ``env`` (an unwrapped :class:`~mrsched_gym.env.MRSchedEnv`,
        left untouched) whose current observation is ``obs``."""
        a = self.base_action(env, obs)
        d = env.sim.decision
        if d.kind != SCHEDULE or len(d.candidates) < 2:
            return a
        return cheapest(self.play_outs(env, a), a, self.margin)

    def play_outs(self, env, base_action: int) -> dict[int, list[float]]:
        """The episode cost of every candidate of the current schedule decision in ``env``
        (and of ``base_action``, the base's skip included), one per copy it is played out in
        (one, or ``samples``, the same copies for every candidate); ``env`` is left
        untouched. A sampled rollout draws new futures at every call (its generator moves on).

        With a time-in-system cost, each sampled copy divides by its own number of jobs, the
        same for every candidate of that copy: the mean over copies then weighs copies with
        fewer jobs more, alike for every candidate."""
        weights = env.rewards.weights              # the scenario's reward weights
        # a base that reads observations plays the env; a baseline plays the bare simulator
        world = env if self.reads_obs else env.sim
        branches = list(range(len(env.sim.decision.candidates)))
        if base_action not in branches:            # the base skips: weigh that too
            branches.append(base_action)
        blobs = self._copies(world)
        tasks = [(blob, b, weights) for b in branches for blob in blobs]
        if self.pool is None:
            flat = [_play_out_copy(*task) for task in tasks]
        else:
            flat = self.pool.starmap(_play_out_copy, tasks, chunksize=1)
        m = len(blobs)
        return {b: flat[i * m:(i + 1) * m] for i, b in enumerate(branches)}

    def _copies(self, world) -> list[bytes]:
        """The pickled ``(world, base)`` pairs every candidate is played out in: the world as
        it is, without its arrivals to come, or with ``samples`` draws of them."""
        pair = (world, self.base)
        if self.arrivals:
            return [pickle.dumps(pair, protocol=pickle.HIGHEST_PROTOCOL)]
        draws = self._futures.spawn(1)[0].spawn(self.samples) if self.samples else [None]
        blobs = []
        for draw in draws:          # copied together: a base that holds the simulator keeps it
            copied = copy.deepcopy(pair)
            sim = copied[0].sim if self.reads_obs else copied[0]
            if draw is None:
                drop_future_arrivals(sim)
            else:
                sample_future_arrivals(sim, np.random.default_rng(draw), self.horizon_s)
            if self.estimates:
                estimate_the_unknown(sim)
            blobs.append(pickle.dumps(copied, protocol=pickle.HIGHEST_PROTOCOL))
        return blobs


def cheapest(costs: dict[int, list[float]], base_action: int, margin: float = 0.0) -> int:
    """The action with the lowest mean cost over its copies (``costs[action]``, as
    :meth:`RolloutTeacher.play_outs` returns them, ``base_action`` among them); ``base_action``
    wins ties (means within :data:`TIE_TOLERANCE`, relative). With ``margin`` in (0, 1) the
    base's action is kept unless the cheapest costs less than the base's cost minus ``margin``
    times its magnitude (the required gain is relative: small where the base's cost is)."""
    check_margin(margin)
    if base_action not in costs:
        raise KeyError(f"base_action {base_action} has no costs (actions: {sorted(costs)})")
    means = {b: math.fsum(per_copy) / len(per_copy) for b, per_copy in costs.items()}
    best, best_cost = base_action, None
    for b, cost in means.items():
        if best_cost is None or _cheaper(cost, best_cost) or (
                b == base_action and not _cheaper(best_cost, cost)):
            best, best_cost = b, cost
    if margin > 0 and best != base_action:
        base_cost = means[base_action]
        if not best_cost < base_cost - margin * abs(base_cost):
            return base_action
    return best


def check_margin(margin: float) -> None:
    """Raise ``ValueError`` unless ``margin`` (a departure margin, :func:`cheapest`) is in
    [0, 1)."""
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"margin={margin} must be in [0, 1)")


def _cheaper(x: float, y: float) -> bool:
    """``x`` is below ``y`` by more than float rounding (costs are sums of many small steps:
    two play-outs that cost the same can differ in the last digits, and such a difference must
    not make a departure from the base)."""
    return x < y - TIE_TOLERANCE * max(1.0, abs(y))


def _play_out_copy(blob: bytes, first: int, weights: tuple[float, ...]) -> float:
    """:func:`_play_out` on the pickled ``(world, base)`` ``blob``, with one BLAS/OpenMP
    thread (in a pool worker or here)."""
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):
        return _play_out(*pickle.loads(blob), first, weights)


def _play_out(world, base, first: int, weights: tuple[float, ...]) -> float:
    """Apply ``first`` in ``world`` (an env copy, or a simulator copy for a baseline), let
    ``base`` play to the end; the episode's cost."""
    if hasattr(base, "act"):
        world.lean_info = True                     # the copy's info is never read
        obs, _, term, trunc, _ = world.step(first)
        while not (term or trunc):
            obs, _, term, trunc, _ = world.step(base.act(obs, world.action_masks()))
        sim = world.sim
    else:
        sim = world
        sim.act(first)
        while not sim.done:
            sim.act(base.decide(sim))
    return sum(w * t for w, t in zip(weights, component_totals(sim), strict=True))


__all__ = ["MYOPIC_PREFIX", "PREFIX", "TIE_TOLERANCE", "RolloutTeacher", "base_spec",
           "check_margin", "cheapest", "drop_future_arrivals", "estimate_the_unknown",
           "is_rollout_spec", "make_rollout_teacher", "register", "sample_future_arrivals"]


def register() -> None:
    """Register ``rollout:`` and ``myopic-rollout:`` as teacher kinds of the imitation
    (:func:`~mrsched_gym.agents.training.teachers.register_teacher_kind`); done on importing
    :mod:`mrsched_gym.agents.research`."""
    for prefix in (PREFIX, MYOPIC_PREFIX):
        register_teacher_kind(TeacherKind(prefix, make_rollout_teacher, parallel=True))
