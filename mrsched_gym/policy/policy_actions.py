"""What an outside policy returns, checked: :func:`check_action` and :class:`PolicyActionError`
(used by the adapters of :mod:`mrsched_gym.policy.contract`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mrsched_gym.policy.policy_failures import reraise


class PolicyActionError(ValueError):
    """An outside policy returned an action that is not a candidate of the decision nor skip.
    The episode fails (recorded with this message in ``failures.json``): for a rule or
    observation policy such an action is a bug, never silently played as skip."""


def check_action(action: Any, legal: Callable[[int], bool], label: str,
                 where: Callable[[], str]) -> int:
    """``action`` as an ``int`` if it is an integer that ``legal`` accepts.

    The env plays an out-of-range or empty-slot action as skip (``info["invalid_action"]``):
    right for an RL model that ignores the mask, silent for a hand-written policy. Outside
    rule and observation policies are held to the contract instead; SB3 models are not
    (their invalid actions are counted in the ``invalid_actions`` metric).

    ``where`` describes the decision; it is called only to build the error message (nothing
    is formatted on the hot path of a legal action).

    Reading the action may run the policy's code (an ``int`` subclass's ``__int__``, a
    ``__class__`` property, a ``__repr__``): what that raises fails the decision, named.

    Raises:
        PolicyActionError: ``action`` is not an integer, or not a legal action (the message
            names the policy, the action and the legal actions at that decision).
    """
    try:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            if not (isinstance(action, np.ndarray) and action.ndim == 0
                    and np.issubdtype(action.dtype, np.integer)):
                raise PolicyActionError(f"policy {label}: returned {repr(action)[:80]} "
                                        f"({type(action).__name__}); an action is an integer")
        a = int(action)
    except PolicyActionError:
        raise
    except BaseException as e:                      # noqa: BLE001 - reported, named
        reraise(label, "decide", e)
    if not legal(a):
        shown = str(a) if a.bit_length() < 64 else f"of {a.bit_length()} bits"
        raise PolicyActionError(f"policy {label}: returned action {shown} at {where()}: return "
                                f"a candidate's index or skip")
    return a


__all__ = ["PolicyActionError", "check_action"]
