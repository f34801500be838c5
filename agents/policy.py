"""Trained agents as policies of the evaluation harness (``agent:PATH.zip``)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np

from mrsched_gym.agents.agent_files import check_finite_state, check_sb3_zip, load_error
from mrsched_gym.agents.observations import (
    fit_decision,
    objective_of,
    work_conserving_mask,
    world_objective,
)
from mrsched_gym.env.encoding import decision_kind_slot
from mrsched_gym.errors import InputError, MissingExtraError, install_hint
from mrsched_gym.sim.decision import SCHEDULE, SPECULATE

_SCHEDULE = decision_kind_slot(SCHEDULE)       # the schedule entry of obs["decision"]


def policy_logits(policy, obs: dict) -> np.ndarray:
    """An SB3 actor-critic policy's action logits for one observation (no gradient, no
    distribution object: building SB3's distributions costs a third of a decision, profiled)."""
    import torch as th
    t = {k: th.as_tensor(v).unsqueeze(0) for k, v in obs.items()}
    with th.no_grad():
        feats = policy.extract_features(t)
        if isinstance(feats, tuple):                             # separate actor / critic
            feats = feats[0]
        return policy.action_net(policy.mlp_extractor.forward_actor(feats))[0].numpy()


def speculation_rule(rule: str):
    """A fresh instance of the baseline ``rule``, which must have a speculation rule.

    Raises:
        ValueError: ``rule`` is no baseline with a ``speculate`` method (the message lists them).
    """
    from mrsched_gym.baselines import BASELINES, make_baseline
    sched = make_baseline(rule) if rule in BASELINES else None
    if not hasattr(sched, "speculate"):
        with_rule = [n for n in BASELINES if hasattr(make_baseline(n), "speculate")]
        raise ValueError(f"speculation: {rule!r} is not a baseline with a speculation rule "
                         f"({', '.join(with_rule)})")
    return sched


class SpeculationDelegate:
    """An agent whose speculation decisions are made by a baseline's rule.

    The set-network agents are trained on worlds without speculation decisions, so on their own
    they skip them (:func:`fit_decision`). Wrapped, every ``SPECULATE`` decision goes to the
    ``speculate`` method of the baseline ``rule`` (``hadoop-speculative``: Hadoop's native
    speculation, or ``late``) and every other decision to the agent, as in Hadoop, where
    speculative execution belongs to the JobTracker, beside whichever job scheduler runs. A
    shipped agent gets it from its metadata (``"speculation"`` in ``NAME.json``; the harness
    wraps it when the agent is named ``agent:NAME``, :func:`mrsched_gym.evaluate.make_policy`);
    any other agent can be wrapped in Python.

    Raises:
        ValueError: ``rule`` is no baseline with a speculation rule.
    """

    def __init__(self, agent, rule: str) -> None:
        self.rule = speculation_rule(rule)
        self.agent = agent
        self.name = agent.name
        self.illegal_actions = getattr(agent, "illegal_actions", None)   # the agent's verdict
        self._sim = None

    def reset(self, sim, seed: int | None = None) -> None:
        """Reset both; keep the world, whose decision the rule reads."""
        self.agent.reset(sim, seed=seed)
        self.rule.reset(sim, seed=seed)
        self._sim = sim

    def act(self, obs: dict, mask: np.ndarray) -> int:
        """The rule's copy (or none) at a speculation decision, else the agent's action (or a
        wrapped baseline's ``decide``)."""
        if self._sim is None:
            raise ValueError(f"{self.name}: call reset(sim) before act (the speculation rule "
                             f"reads the world)")
        if self._sim.decision.kind == SPECULATE:
            return self.rule.speculate(self._sim)
        if hasattr(self.agent, "act"):
            return self.agent.act(obs, mask)
        return self.agent.decide(self._sim)            # a baseline


def idle_mask(mask: np.ndarray) -> np.ndarray:
    """``mask`` with skip (the last action) legal: the mask of an env made with
    ``allow_idle=True`` (skip is legal in the simulator at every decision)."""
    if mask[-1]:
        return mask
    mask = mask.copy()
    mask[-1] = True
    return mask


class WorkConserving(gym.Wrapper):
    """``action_masks()`` without skip while a candidate can use the free slot (schedule
    decisions only; admission and preemption keep skip = reject / wait). For MaskablePPO.

    The env's default mask is work-conserving already; this wrapper keeps it so over an env
    made with ``allow_idle=True`` (and over a pool of worlds, whatever their masks)."""

    def action_masks(self) -> np.ndarray:
        """The env's action mask, without skip at a schedule decision with a legal candidate
        (:func:`work_conserving_mask`; read from the decision, whose candidates are the legal
        actions before skip, rather than by scanning the mask)."""
        base = self.env.unwrapped
        mask = base.action_masks()                   # a fresh array: ours to change
        decision = base.sim.decision
        if decision.kind == SCHEDULE and decision.candidates:
            mask[-1] = False
        return mask


class AllowIdle(gym.Wrapper):
    """``action_masks()`` with skip at every decision, as the env made with
    ``allow_idle=True`` gives it, over any env (a pool of worlds too): for agents that may
    leave a slot idle while a task waits (delay scheduling)."""

    def action_masks(self) -> np.ndarray:
        """The env's action mask with skip legal (:func:`idle_mask`)."""
        return idle_mask(self.env.unwrapped.action_masks())


class AgentPolicy:
    """A stable-baselines3 / sb3-contrib model acting on the env's observation and mask.

    Deterministic actions; MaskablePPO gets the action mask as the env gives it (work-conserving
    by default), made work-conserving when the model was trained so
    (``model.mrsched_work_conserving`` True) and with skip at every decision when the model was
    trained with idling allowed (``mrsched_work_conserving`` False, what ``mrsched-gym train``
    saves with ``work_conserving: false``), so a checkpoint acts under the mask it was trained
    on whatever the env's ``allow_idle``; other algorithms' illegal choices are mapped to skip by
    the env (counted in ``invalid_actions``).

    Args:
        model: The loaded model.
        name: The policy's label (``agent:NAME``).
    """

    #: Its illegal actions are played as skip by the env and counted, as a model object's are
    #: in ``evaluate`` (:data:`mrsched_gym.policy.contract.ILLEGAL_AS_SKIP`).
    illegal_actions = "skip"

    def __init__(self, model, name: str) -> None:
        self.model = model
        self.name = name
        # MaskablePPO or a subclass (the trainer's fast-numerics NumpyRolloutPPO)
        self.masked = any(c.__name__ == "MaskablePPO" for c in type(model).__mro__)
        wc = getattr(model, "mrsched_work_conserving", None)
        self.work_conserving = bool(wc)
        #: Trained with skip legal at every decision: act so under any env mask.
        self.allow_idle = wc is not None and not wc
        self.policy = model.policy
        self.policy.set_training_mode(False)
        space = self.policy.observation_space
        if not isinstance(space, gym.spaces.Dict):
            raise InputError(
                f"{name}: the model was trained on a {type(space).__name__} observation "
                f"{getattr(space, 'shape', '')}; an AgentPolicy acts on the env's Dict "
                f"observation (load_agent gives a Box model a FlatAgentPolicy)")
        self._shapes = {k: sp.shape for k, sp in space.spaces.items()}
        self._objective: np.ndarray | None = None

    def check_fits(self, space: gym.spaces.Dict, where: str) -> None:
        """Raise :class:`InputError` if the agent cannot act on observations of ``space`` (the
        observation space of the world ``where``): a flat network needs the shapes it was
        trained on, except the forecast (cut or padded), a longer decision array (the extra
        decision kinds are skipped, :func:`fit_decision`) and the objective (read from the
        world). A set network adapts to any cluster size and candidate count (:meth:`_adapt`).
        The harness calls this before a sweep runs, so a mismatch fails up front."""
        from mrsched_gym.agents.networks import SetExtractor
        missing = sorted(set(self._shapes) - set(space.spaces) - {"objective"})
        if missing:
            raise InputError(f"{where} has no observation {missing} that the "
                             f"agent was trained with")
        if isinstance(self.policy.features_extractor, SetExtractor):
            return
        bad = {k: (s, space[k].shape) for k, s in self._shapes.items()
               if k not in ("forecast", "objective") and space[k].shape != s
               and not (k == "decision" and space[k].shape[0] > s[0])}
        if bad:
            detail = ", ".join(f"{k}: trained on {a}, {where} gives {b}"
                               for k, (a, b) in bad.items())
            raise InputError(f"a flat-network agent only runs on the observation shapes it "
                             f"was trained on ({detail}); the set network adapts to "
                             f"other cluster sizes and candidate counts")

    def reset(self, sim, seed: int | None = None) -> None:
        """An agent that observes the objective reads it from the world (what the env's
        ``observe_objective=True`` puts in the observation); otherwise stateless."""
        if "objective" in self._shapes:
            self._objective = world_objective(sim)

    def act(self, obs: dict, mask: np.ndarray) -> int:
        """The model's most likely action for ``obs``, within ``mask`` for MaskablePPO (skip on a
        decision kind it was not trained on, :func:`fit_decision`)."""
        if "objective" in self._shapes and "objective" not in obs:
            obs = dict(obs, objective=objective_of(obs, self._objective, self.name))
        fitted = fit_decision(obs, self._shapes["decision"][0])
        if fitted is None:
            return len(mask) - 1
        obs = fitted
        if any(obs[k].shape != s for k, s in self._shapes.items()):
            obs = self._adapt(obs)
        logits = policy_logits(self.policy, obs)     # the mode = argmax of the masked logits
        if self.masked:
            if self.work_conserving:
                mask = work_conserving_mask(mask, bool(obs["decision"][_SCHEDULE] > 0.5))
            elif self.allow_idle:
                mask = idle_mask(mask)
            logits = np.where(mask, logits, -np.inf)
        return int(np.argmax(logits))

    def _adapt(self, obs: dict) -> dict:
        """Run a set-network agent on another cluster size or candidate count (generalisation).

        The set network's weights do not depend on N (nodes are mean-pooled) nor on K (one
        shared score per candidate), so the policy is rebuilt for the new shapes and the weights
        are copied (the value head, sized by K, is not needed for acting). The forecast keeps
        the trained length W: cut, or padded with its last value. A flat network cannot be
        adapted: its input size is fixed.
        """
        from mrsched_gym.agents.networks import SetExtractor
        W = self._shapes["forecast"][0]
        fc = obs["forecast"]
        obs = dict(obs, forecast=fc[:W] if len(fc) >= W else np.concatenate(
            [fc, np.full(W - len(fc), fc[-1] if len(fc) else 1.0, np.float32)]))
        if all(obs[k].shape == s for k, s in self._shapes.items()):
            return obs
        old = self.policy
        if not isinstance(old.features_extractor, SetExtractor):
            raise ValueError(f"{self.name}: a flat-network agent only runs on the observation "
                             f"shapes it was trained on {self._shapes}; got "
                             f"{ {k: v.shape for k, v in obs.items()} } (the set network adapts)")
        space = gym.spaces.Dict({k: gym.spaces.Box(sp.low.flat[0], sp.high.flat[0],
                                                   obs[k].shape, np.float32)
                                 for k, sp in old.observation_space.spaces.items()})
        K = obs["candidates"].shape[0]
        new = type(old)(observation_space=space, action_space=gym.spaces.Discrete(K + 1),
                        lr_schedule=lambda _: 0.0, **self.model.policy_kwargs)
        own = new.state_dict()
        copied = {k: v for k, v in old.state_dict().items() if own[k].shape == v.shape}
        if any(k not in copied for k in own if not k.startswith(("value_net", "mlp_extractor"))):
            raise ValueError(f"{self.name}: cannot adapt the network to {self._shapes}")
        new.load_state_dict(copied, strict=False)
        new.set_training_mode(False)
        self.policy = new
        self._shapes = {k: sp.shape for k, sp in space.spaces.items()}
        return obs


def load_agent(path: str | Path, one_thread: bool = True):
    """Load a checkpoint saved by SB3 (``model.save``): MaskablePPO first, then PPO, then A2C
    (torch set to one thread, as episodes run, unless ``one_thread`` is False). A model with a
    ``Dict`` observation acts as an :class:`AgentPolicy`; one with a single ``Box`` (trained on
    a ``-flat`` variant or through ``FlattenObservation``) as a
    :class:`~mrsched_gym.agents.flat_agent.FlatAgentPolicy`."""
    path = Path(path)
    model = load_sb3(path, one_thread=one_thread)
    if isinstance(model.policy.observation_space, gym.spaces.Box):
        from mrsched_gym.agents.flat_agent import FlatAgentPolicy
        return FlatAgentPolicy(model, name=f"agent:{path.stem}")
    return AgentPolicy(model, name=f"agent:{path.stem}")


def load_sb3(path: str | Path, env=None, one_thread: bool = True):
    """The SB3 model in a checkpoint (MaskablePPO, else PPO), attached to ``env`` if given;
    ``one_thread``: set torch to one thread (small policies act fastest so)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"agent checkpoint {str(path)!r} not found")
    check_sb3_zip(path)                  # sizes, members, torch files: before any unpickling
    try:
        import torch
        if one_thread:
            torch.set_num_threads(1)
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import A2C, PPO
    except ImportError as e:
        raise MissingExtraError(f"loading an SB3 agent checkpoint needs the rl extra: "
                                f"{install_hint('rl')} (the shipped agents run without it)"
                                ) from e
    errors: dict[str, list[str]] = {}
    for cls in (MaskablePPO, PPO, A2C):
        try:
            model = cls.load(str(path), env=env, device="cpu")
        except Exception as e:  # noqa: BLE001 - try the next algorithm, report all below
            errors.setdefault(load_error(e), []).append(cls.__name__)
            continue
        check_finite_state(model.policy.state_dict().items(), f"agent file {path}")
        return model
    why = "; ".join(f"{'/'.join(names)}: {err}" for err, names in errors.items())
    raise InputError(f"agent file {path}: not a MaskablePPO, PPO or A2C checkpoint ({why})")

