"""A shipped agent's decision rules in one place: :func:`with_rules` wraps an agent in them as the
harness deploys it, and :class:`TrainUnderRules` gives PPO the same narrowed action mask while it
trains, so that a policy can be fine-tuned under the rules it will be evaluated under.

The rules (each documented in its baseline module): the affinity mask
(:mod:`mrsched_gym.baselines.affinity`, ``affinity`` = its ``min_ratio``), the reduce slow-start
rule (:mod:`mrsched_gym.baselines.slow_start`, ``slow_start`` = its ``fraction``) and a
speculation rule (:class:`~mrsched_gym.agents.policy.SpeculationDelegate`, deployment only: the
trainer's worlds have no speculation decisions). Deployed, the agent is wrapped as
``SpeculationDelegate(SlowStartDelegate(AffinityDelegate(agent)))``, so at a schedule decision
the slow-start rule narrows the env's mask first and the affinity mask then narrows what is
left; :meth:`TrainUnderRules.action_masks` applies them in that order, with the same functions,
so a policy trained under the rules meets the same masks when it is evaluated
(``tests/test_train_rules.py`` checks this decision by decision).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np

from mrsched_gym.agents.masking import narrowed
from mrsched_gym.baselines.affinity import SpeedTable, check_min_ratio, slow_candidates
from mrsched_gym.baselines.slow_start import check_fraction, held_reduces

#: The rules a checkpoint or a shipped agent may carry, by parameter name.
RULE_KEYS = ("affinity", "slow_start", "speculation")
#: The ones a training run can play under (the trainer's worlds pose no speculation decision).
TRAINED_RULES = ("affinity", "slow_start")


def with_rules(agent, affinity: float | None = None, slow_start: float | None = None,
               speculation: str | None = None):
    """``agent`` wrapped in the rules that are given (module docstring; None = not applied).

    Raises:
        ValueError: A rule's parameter is invalid (the message names it).
    """
    if affinity is not None:
        from mrsched_gym.agents.affinity import AffinityDelegate
        agent = AffinityDelegate(agent, affinity)
    if slow_start is not None:
        from mrsched_gym.agents.slow_start import SlowStartDelegate
        agent = SlowStartDelegate(agent, slow_start)
    if speculation is not None:
        from mrsched_gym.agents.policy import SpeculationDelegate
        agent = SpeculationDelegate(agent, speculation)
    return agent


def checkpoint_rules(path: str | Path) -> dict[str, float]:
    """The rules a trainer's checkpoint was trained under (``affinity``, ``slow_start``): from
    the model's ``mrsched_rules`` in an SB3 ``.zip`` (its ``data`` entry is JSON: no torch and
    no unpickling needed) or from the metadata of the numpy export (``.npz``); ``{}`` when it
    names none or cannot be read (loading it then reports the problem)."""
    path = Path(path)
    try:
        if path.suffix == ".npz":
            from mrsched_gym.agents.numpy_policy import META_KEY
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z[META_KEY])) if META_KEY in z.files else {}
            rules = meta.get("rules")
        else:
            with zipfile.ZipFile(path) as z:
                rules = json.loads(z.read("data")).get("mrsched_rules")
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return {}
    if not isinstance(rules, dict):
        return {}
    return {k: v for k, v in rules.items() if k in TRAINED_RULES}


class TrainUnderRules(gym.Wrapper):
    """``action_masks()`` narrowed by the slow-start rule and then the affinity mask, as
    :func:`with_rules` narrows the mask the deployed agent sees (module docstring). For
    MaskablePPO's training envs (a single env or a pool of worlds).

    Args:
        env: The training env, whose ``action_masks()`` is the mask before the rules.
        affinity: The affinity mask's ``min_ratio`` in (0, 1], or None.
        slow_start: The slow-start rule's ``fraction`` in (0, 1], or None.
    """

    def __init__(self, env, affinity: float | None = None,
                 slow_start: float | None = None) -> None:
        super().__init__(env)
        self.affinity = None if affinity is None else check_min_ratio(affinity)
        self.slow_start = None if slow_start is None else check_fraction(slow_start)
        self.table: SpeedTable | None = None        # the world's, built at its first decision

    def reset(self, **kwargs):
        """Reset the env; the next mask builds the new world's speed table."""
        self.table = None
        return self.env.reset(**kwargs)

    def action_masks(self) -> np.ndarray:
        """The wrapped env's mask with the held reduces, then the slow candidates, removed
        (skip made legal when no candidate is left, as the deployed delegates do)."""
        sim = self.env.unwrapped.sim
        mask = self.env.action_masks()
        if self.slow_start is not None:
            mask = narrowed(mask, held_reduces(sim, self.slow_start))
        if self.affinity is not None:
            if self.table is None:
                self.table = SpeedTable(sim)
            mask = narrowed(mask, slow_candidates(sim, self.table, self.affinity))
        return mask


__all__ = ["RULE_KEYS", "TRAINED_RULES", "TrainUnderRules", "checkpoint_rules", "with_rules"]
