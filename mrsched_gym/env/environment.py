"""The Gymnasium environment: a thin adapter over :class:`~mrsched_gym.sim.engine.Simulator`."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mrsched_gym.config import Scenario
from mrsched_gym.env.encoding import ObservationEncoder, decision_features, objective_vector
from mrsched_gym.env.env_setup import (
    ENV_ARGUMENTS,
    action_index,
    check_flags,
    check_trace_inputs,
    describe,
    mask_tables,
    observation_space,
    resolve_scenario,
    tell_torch_threads,
)
from mrsched_gym.env.env_step import Stepper, decision_info
from mrsched_gym.env.metrics import episode_metrics
from mrsched_gym.env.rewards import RewardTracker
from mrsched_gym.errors import EpisodeStateError, InputError
from mrsched_gym.sim.engine import Simulator
from mrsched_gym.sim.log import build_log

# Episode phases of the env (``step`` and ``action_masks`` need a reset first).
_NEW, _RUNNING, _ENDED, _CLOSED = "new", "running", "ended", "closed"


class MRSchedEnv(gym.Env):
    """Schedule MapReduce jobs on a simulated Hadoop cluster.

    ## Description

    A discrete-event simulation of a Hadoop/MapReduce cluster (heterogeneous nodes with optional
    accelerators, interactive services co-located on shared nodes, data locality, capacity that
    changes over time, map -> shuffle -> reduce jobs with deadlines and priorities). The agent is
    the job scheduler: whenever a node has free capacity (a Hadoop heartbeat, made event-driven)
    it picks which job gets it, or skips. Scenarios that enable them add admission decisions
    (accept or reject an arriving job, MIMP) and preemption decisions (kill or suspend a running
    lower-priority task, Pastorelli et al.). The scenario (``configs/scenarios/*.yaml``) defines
    the world; see ``mrsched_gym.sim`` (its parts are listed in ``mrsched_gym.sim.engine``) for
    the models and the seeds they come from.

    ## Action Space

    ``Discrete(K + 1)``: action ``i < K`` picks candidate ``i`` of the current decision, action
    ``K`` is **skip** (schedule: leave the node idle until the next event; admit: reject;
    preempt: wait). ``env.action_masks()`` (the sb3-contrib convention) and
    ``info["action_mask"]`` give the mask: the first ``len(candidates)`` actions, and skip
    except at a *schedule* decision that has a candidate. The default mask is
    **work-conserving**: it never offers to leave a free slot idle while a task could use it
    (an agent that learns from the mask, e.g. sb3-contrib's MaskablePPO with default settings,
    learned to idle when skip was offered at every decision). Admission (reject) and
    preemption (wait) decisions keep skip, and skip is in the mask whenever there is no
    candidate. ``allow_idle=True`` gives the mask with skip at every decision: the explicit
    choice for agents that may wait for a better placement (delay scheduling idles a node
    while a local task may come).

    ``step()`` accepts skip at every decision under either mask (it is what the simulator
    does when a policy leaves the node idle, and the rule-based baselines, which decide from
    the simulator, skip where their rule says so): the mask says what an agent is offered,
    not what the simulator allows. ``strict_actions=True`` refuses what the simulator cannot
    do (an empty candidate slot, an integer out of range), not a skip.
    An invalid action (an integer out of range or an empty candidate slot) is treated as skip and
    flagged with ``info["invalid_action"] = True`` (``strict_actions=True`` raises
    :class:`~mrsched_gym.errors.InputError`, a ``ValueError``, instead); it never corrupts the
    simulation.

    An action must be an integer: a Python ``int``, a numpy integer (``np.int64``, what
    ``action_space.sample()`` returns) or a 0-d integer array (what SB3's ``predict`` returns).
    Anything else raises :class:`~mrsched_gym.errors.InputTypeError` (a ``TypeError``) naming the
    action and its type: floats (``2.7``, ``np.float32(1.9)``, NaN; no silent truncation),
    strings, ``None``, arrays with a shape, and bools (``True`` is an ``int`` to Python but is
    refused: a bool action is almost always a mask entry passed by mistake).

    ## Observation Space

    A ``Dict`` of float32 ``Box`` arrays with fixed shapes (N nodes, K candidates, W forecast
    steps); every feature is documented in :mod:`mrsched_gym.env.encoding`:

    | key          | shape    | content                                                        |
    |--------------|----------|----------------------------------------------------------------|
    | `decision`   | (10,)    | decision kind, time, f(t), queue sizes, the node's free space  |
    |              |          | ((11,) when the scenario enables speculation)                  |
    | `candidates` | (K, 22)  | per candidate: phase, locality, progress, remaining work,      |
    |              |          | task length, time to deadline, required slots, node speed, ... |
    | `nodes`      | (N, 10)  | per node: up, capacity, speed, shared, accelerator, free       |
    |              |          | slots, residual CPU, suspended tasks, is the decision node     |
    | `forecast`   | (W,)     | forecast of the availability f(t) over the next W steps        |
    | `objective`  | (6,)     | only with ``observe_objective=True``: the reward weights, what |
    |              |          | the episode is scored on (constant over an episode)            |

    The decision kind is part of the contract: ``obs["decision"][DECISION_KIND_SLICE]``
    (:data:`mrsched_gym.env.encoding.DECISION_KIND_SLICE`, entries 0-2) is its one-hot over
    :class:`~mrsched_gym.sim.decision.DecisionKind` (schedule, admit, preempt; all zero on the
    last step), with a fourth entry (speculate) in worlds with ``decisions.speculation``
    (:func:`mrsched_gym.env.encoding.kind_slice`); :func:`mrsched_gym.env.encoding.observed_kind`
    reads it back, and ``info["decision"]`` names it. It works with ``FlattenObservation`` and SB3's
    ``MultiInputPolicy``.

    ## Rewards

    Minus the weighted increments of named components since the previous decision
    (:mod:`mrsched_gym.env.rewards`): ``jct`` (time in system), ``deadline`` (weighted time beyond
    deadline, RDS Eq. 1), ``slo`` (web SLO violation), ``wasted`` (killed work), ``idle`` (idle
    capacity), ``rejection``. The weights come from the scenario; the episode return equals
    ``-info["metrics"]["objective"]``: minus the headline metric on every registered id (tested).
    ``info["reward_components"]`` holds the unweighted increments by name.

    ## Starting State

    ``reset(seed=...)`` draws the whole world from the env's ``np_random``: the jobs (arrivals,
    sizes, deadlines, per-task work and demand), block replicas, the interactive load and the
    availability timelines and forecast. ``step`` is deterministic, so every policy sees the same
    world for a seed (common random numbers). The first observation is the first decision.
    Seeds follow Gymnasium: ``None`` or a Python ``int`` >= 0 (anything else raises
    ``gymnasium.error.Error``). ``reset`` takes no ``options`` (a non-empty mapping raises
    :class:`~mrsched_gym.errors.InputError`). ``step()`` and ``action_masks()`` before the
    first ``reset()`` raise :class:`~mrsched_gym.errors.EpisodeStateError`.

    ## Episode End

    Terminated when every job has finished or been rejected. Truncated when the next event
    lies beyond the scenario's ``time_limit_s``. The last step's ``info["metrics"]`` holds every
    metric of :mod:`mrsched_gym.env.metrics` and ``info["episode_log"]`` the episode log.
    ``info["episode_over"]`` says whether the world has reached its end (true on the last step).
    ``step()`` after the last step, or after ``close()``, raises
    :class:`~mrsched_gym.errors.EpisodeStateError` until the next ``reset()``.
    ``advance(action)`` is ``step`` without building the observation (for callers that decide
    from ``env.unwrapped.sim``, as the harness runs the baselines), under the same rules.

    A world can end before it poses any decision (e.g. a ``time_limit_s`` shorter than the first
    arrival). Then ``reset()`` returns an observation without candidates (only skip is legal)
    and ``info["episode_over"] = True``; the next ``step()`` (any action; skip is the legal one)
    ends the episode, terminated or truncated as the simulation says, with reward 0 and the
    usual ``info["metrics"]`` and ``info["episode_log"]``.

    ## Arguments

    ``gymnasium.make("mrsched/Hadoop-v0", scenario=None, render_mode=None,
    strict_actions=False, observe_objective=False, lean_info=False, allow_idle=False,
    **overrides)``:
    ``scenario`` is a path, a
    bundled name or a :class:`~mrsched_gym.config.Scenario`; ``observe_objective=True`` adds
    the ``objective`` key (:func:`mrsched_gym.env.encoding.objective_vector`: which reward
    components are scored, for one agent across worlds that score different things; off by
    default, so agents trained without it keep their observation space); ``overrides``
    change fields by path, e.g. ``workload__load=0.9`` (numpy scalars work too) or
    ``**{"cluster.racks": 2}``. ``render_mode`` is ``"ansi"`` (text) or ``"rgb_array"``
    (running tasks per job over time, thesis Fig. 3.4 style). ``lean_info=True`` makes
    ``step()``'s info hold only ``invalid_action`` and ``episode_over`` (no mask, decision,
    node, time, reward components, and at the end no ``metrics`` nor ``episode_log``): for
    training loops that read none of them (the MaskablePPO training envs of
    :mod:`mrsched_gym.agents.training.train`); observations, rewards and episodes are the same, and
    ``reset()``'s info is the usual one. ``allow_idle=True`` puts skip in the action mask at
    every decision (see "Action Space"; the default mask is work-conserving).
    ``strict_actions``, ``observe_objective``, ``lean_info`` and ``allow_idle`` must be
    bools. A bad scenario (file, field, trace, or an episode too
    large to simulate, :data:`~mrsched_gym.config.MAX_TASKS` and its siblings) raises
    :class:`~mrsched_gym.config.ConfigError` or :class:`~mrsched_gym.models.traces.TraceError`
    naming the field, file and line; a bad argument :class:`~mrsched_gym.errors.InputError` or
    :class:`~mrsched_gym.errors.InputTypeError`.

    ## Version History

    * v0: initial release. The default action mask became work-conserving (no skip at a
      schedule decision with a candidate) with ``allow_idle=True`` giving the former mask;
      worlds, observations, rewards and ``step()`` are unchanged.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    #: The class of :attr:`stepper` (the flat variants' ``flat_step.FlatStepper``).
    stepper_class: type[Stepper] = Stepper

    def __init__(self, scenario: str | Path | Scenario | None = None,
                 render_mode: str | None = None, strict_actions: bool = False,
                 observe_objective: bool = False, lean_info: bool = False,
                 allow_idle: bool = False, **overrides: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise InputError(f"render_mode must be None or one of "
                             f"{self.metadata['render_modes']}, got {render_mode!r}")
        check_flags(strict_actions=strict_actions, observe_objective=observe_objective,
                    lean_info=lean_info, allow_idle=allow_idle)
        self.scenario: Scenario = resolve_scenario(scenario, overrides)
        self.render_mode = render_mode
        check_trace_inputs(self.scenario)
        self.sim = Simulator(self.scenario)
        self.encoder = ObservationEncoder(self.sim)
        self.rewards = RewardTracker(self.scenario.reward.weights)
        K = self.scenario.decisions.max_candidates
        N = self.sim.n_nodes
        W = self.scenario.availability.forecast_steps
        self.K = K
        self.action_space = spaces.Discrete(K + 1)
        self.observation_space = observation_space(K, N, W, decision_features(self.scenario),
                                                   bool(observe_objective))
        self._objective = (objective_vector(self.scenario.reward.weights)
                           if observe_objective else None)
        self._phase = _NEW
        self._masks, self._work_masks = mask_tables(K)
        #: Reads, checks and plays actions and builds observations (compiled with the simulator).
        self._stepper = self.stepper_class(self.sim, self.encoder, self.rewards, self._masks,
                                           self._work_masks, self._objective)
        self.strict_actions = bool(strict_actions)
        self.lean_info = bool(lean_info)
        self.allow_idle = bool(allow_idle)

    @property
    def stepper(self) -> Stepper:
        """Plays the actions, builds the observations (``step``/``advance`` call it)."""
        return self._stepper

    # ------------------------------------------------------------------ flags
    @property
    def strict_actions(self) -> bool:
        """Whether an illegal action raises :class:`~mrsched_gym.errors.InputError` (else: skip)."""
        return self._stepper.strict_actions

    @strict_actions.setter
    def strict_actions(self, value: bool) -> None:
        self._stepper.strict_actions = bool(value)

    @property
    def lean_info(self) -> bool:
        """Whether ``step()``'s info holds only ``invalid_action`` and ``episode_over``."""
        return self._stepper.lean_info

    @lean_info.setter
    def lean_info(self, value: bool) -> None:
        self._stepper.lean_info = bool(value)

    @property
    def allow_idle(self) -> bool:
        """Whether skip is in the action mask at every decision (see "Action Space")."""
        return self._stepper.allow_idle

    @allow_idle.setter
    def allow_idle(self, value: bool) -> None:
        self._stepper.allow_idle = bool(value)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Draw a new world from ``seed``, run it to its first decision ("Starting State").

        Returns:
            ``(observation, info)`` of the first decision.

        Raises:
            InputError: ``options`` is given (the env takes none).
        """
        if options is not None and not (isinstance(options, Mapping) and not options):
            raise InputError(f"reset(options=...): this environment takes no options, got "
                             f"{describe(options)}")
        self._claim("reset")
        try:
            tell_torch_threads()
            super().reset(seed=seed)
            self.sim.reset(self.np_random)
            self.encoder.reset()
            self.rewards.reset(self.sim)
            self._phase = _RUNNING
            return self._observe(), self._info(invalid=False)
        finally:
            self.__dict__.pop("_busy", None)

    def _claim(self, method: str) -> None:
        """Refuse a call while another thread is inside ``reset``/``step``/``advance`` of this
        env (not thread-safe; threads one after the other are fine). One attribute's check."""
        me = threading.get_ident()
        owner = self.__dict__.setdefault("_busy", me)         # atomic under the GIL
        if owner != me:
            raise EpisodeStateError(
                f"{method}() called from thread {me} while thread {owner} is inside a call of "
                "the same env: an env is not thread-safe; give each thread its own env "
                "(gymnasium's AsyncVectorEnv runs envs in processes)")

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        """Apply ``action`` to the current decision and run the world to the next one.

        Returns:
            ``(observation, reward, terminated, truncated, info)``; see "Rewards" and "Episode
            End".

        Raises:
            EpisodeStateError: Before the first ``reset()``, after the episode ended or after
                :meth:`close`.
            InputTypeError: ``action`` is not an integer (:meth:`action_index`).
            InputError: An illegal action with ``strict_actions=True``.
        """
        return self._play("step", self._stepper.step, action)

    def advance(self, action: Any) -> tuple[float, bool, bool, dict]:
        """:meth:`step` without building the observation, for a caller that decides from the
        simulator (``env.unwrapped.sim``), as the harness runs the baselines (faster: the
        README's "Speed"): the same world, reward, info, phase and ``lean_info`` rules. The next
        :meth:`step`'s observation is as if every decision had been observed.

        Returns:
            ``(reward, terminated, truncated, info)``, as :meth:`step` returns them.

        Raises:
            EpisodeStateError: Before the first ``reset()`` or after the episode ended.
            InputTypeError: ``action`` is not an integer (:meth:`action_index`).
            InputError: An illegal action with ``strict_actions=True``.
        """
        return self._play("advance", self._stepper.advance, action)

    def _play(self, method: str, play: Any, action: Any) -> tuple:
        """``play(action)`` (the stepper's ``step`` or ``advance``, whose result ends with the
        info) for the public ``method``: refused before ``reset()`` and after the episode
        ended; after the last decision the info gets the episode's metrics and log (unless
        ``lean_info``) and the episode ends."""
        self._claim(method)
        try:
            if self._phase != _RUNNING:
                raise EpisodeStateError(
                    f"{method}() called before reset()" if self._phase == _NEW else
                    f"{method}() called after close(); make a new env, or reset() this one"
                    if self._phase == _CLOSED else
                    f"{method}() called after the episode ended (terminated or truncated); "
                    f"call reset()")
            out = play(action)
            if self.sim.done:
                if not self.lean_info:
                    log = build_log(self.sim)
                    out[-1]["metrics"] = episode_metrics(log, self.scenario.reward.weights)
                    out[-1]["episode_log"] = log
                self._phase = _ENDED
            return out
        finally:
            self.__dict__.pop("_busy", None)

    def close(self) -> None:
        """Close: a later ``step()`` raises ``EpisodeStateError`` (``reset()`` starts afresh)."""
        if self._phase != _NEW:
            self._phase = _CLOSED
        super().close()

    def action_masks(self) -> np.ndarray:
        """The actions an agent is offered now (``bool[K+1]``, skip last): the candidates, and
        skip unless this is a schedule decision with a candidate (work-conserving; with
        ``allow_idle=True`` skip at every decision). ``step()`` accepts skip always (see
        "Action Space").

        Raises:
            EpisodeStateError: Before the first ``reset()``.
        """
        if self._phase == _NEW:
            raise EpisodeStateError("action_masks() called before reset()")
        return self._stepper.mask()

    def action_index(self, action: Any) -> int:
        """``action`` as a Python ``int``, if it is an integer (see "Action Space").

        Raises:
            InputTypeError: A bool, float, string, ``None``, an array with a shape or a
                non-integer array, naming the action and its type.
        """
        return action_index(action, self.K)

    def _observe(self) -> dict[str, np.ndarray]:
        return self._stepper.observe()

    def _info(self, invalid: bool) -> dict[str, Any]:
        return decision_info(self.sim, self.action_masks(), invalid)

    def render(self) -> str | np.ndarray | None:
        """The current state as text (``"ansi"``) or an RGB image (``"rgb_array"``); ``None``,
        with a warning, when the env was made without a ``render_mode``."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode= to make()")
            return None
        from mrsched_gym.env import render as _render
        if self.render_mode == "ansi":
            return _render.render_ansi(self.sim)
        renderer = self.__dict__.get("_rgb_renderer")   # one per env: frames paint what changed
        if renderer is None:
            renderer = self._rgb_renderer = _render.RgbRenderer(self.sim)
        return renderer.frame_now()

    # ------------------------------------------------------------------ conveniences
    @property
    def headline_metric(self) -> str:
        """Name of the scenario's headline metric."""
        return self.scenario.reward.headline


#: ``observation_space`` and ``ENV_ARGUMENTS`` stay importable from here.
__all__ = ["ENV_ARGUMENTS", "MRSchedEnv", "observation_space"]
