"""A rule's preference over the candidates, read from the observation: the prior of a residual
set policy (``SetPolicy(prior="edf")``, :mod:`mrsched_gym.agents.networks`).

A residual policy's logits are ``prior_weight * preference + learned score``, the learned score
starting at zero: its deterministic action is then the rule's first choice among the legal
candidates, and training learns a correction to the rule. Kept by validation from step 0 on
(``BestOnValidation``), a trained model is never worse on the validation seeds than the rule it
started from.

The preference of candidate ``i`` is ``-rank_i``: 0 for the rule's first choice among the
candidates of the observation, -1 for its second, and so on, so that under any narrower mask
(the affinity or slow-start rules of ``agents/rules.py``) the argmax is still the rule's first
choice among what is left. Rows without a candidate, and every row at a decision that is not a
schedule decision (admission, preemption: the rule's :func:`default_action` there is accept /
wait, which the prior does not express), get 0.

Rules (:data:`PRIOR_RULES`):

* ``edf`` — :class:`~mrsched_gym.baselines.simple.EDFScheduler`'s order as the observation
  shows it (:func:`~mrsched_gym.baselines.common.edf_key`): the earliest deadline first
  (candidate feature 7, time to deadline, among rows with feature 8 set), jobs without a
  deadline last; then the oldest job (feature 12, waiting time since arrival, largest first);
  then maps before reduces (feature 1). The observation clips the time to deadline to 24 h, so
  two deadlines more than 24 h away tie (broken by age), where the baseline still orders them;
  on the registered worlds the two pick the same actions (``tests/test_rule_prior.py`` plays
  them side by side).
"""

from __future__ import annotations

import numpy as np

#: The rules a residual policy can start from.
PRIOR_RULES = ("edf",)

_VALID, _IS_REDUCE, _TO_DEADLINE, _HAS_DEADLINE, _WAITING = 0, 1, 7, 8, 12
_NO_DEADLINE = np.float64(1e6)          # after every deadline (the feature is clipped to 24 h)
_NO_ROW = np.float64(2e6)               # after every candidate


def check_prior(rule: str | None) -> str | None:
    """``rule`` itself if it names a rule of :data:`PRIOR_RULES` (or is None).

    Raises:
        ValueError: Another value (the message lists the rules).
    """
    if rule is not None and rule not in PRIOR_RULES:
        raise ValueError(f"prior must be one of {list(PRIOR_RULES)} or None, got {rule!r}")
    return rule


def check_prior_weight(weight: float) -> float:
    """``weight`` as a float if it is a number in (0, 1e6) (a residual policy's
    ``prior_weight``).

    Raises:
        ValueError: Another value.
    """
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) \
            or not 0.0 < weight < 1e6:
        raise ValueError(f"prior_weight must be a number in (0, 1e6), got {weight!r}")
    return float(weight)


def preference(rule: str, candidates: np.ndarray, schedule: np.ndarray) -> np.ndarray:
    """The rule's preference ``[B, K]`` (float32; module docstring) of a batch of observations.

    Args:
        rule: A rule of :data:`PRIOR_RULES`.
        candidates: ``obs["candidates"]`` batched, ``[B, K, F]``.
        schedule: ``[B]``: the schedule entry of ``obs["decision"]`` (> 0.5 at a schedule
            decision).
    """
    check_prior(rule)
    c = np.asarray(candidates, dtype=np.float64)
    B, K = c.shape[:2]
    valid = c[..., _VALID] > 0.5
    deadline = np.where(c[..., _HAS_DEADLINE] > 0.5, c[..., _TO_DEADLINE], _NO_DEADLINE)
    first = np.where(valid, deadline, _NO_ROW)
    # one sort of every row of the batch: by observation, deadline, age (oldest first), phase,
    # then row (lexsort is stable; its last key is the most significant)
    order = np.lexsort((c[..., _IS_REDUCE].ravel(), -c[..., _WAITING].ravel(), first.ravel(),
                        np.repeat(np.arange(B), K)))
    rank = np.empty(B * K, np.int64)
    rank[order] = np.tile(np.arange(K), B)
    rank = rank.reshape(B, K)
    on = valid & (np.asarray(schedule).reshape(-1, 1) > 0.5)
    return np.where(on, -rank, 0).astype(np.float32)


__all__ = ["PRIOR_RULES", "check_prior", "check_prior_weight", "preference"]
