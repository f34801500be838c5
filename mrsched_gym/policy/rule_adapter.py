"""An outside rule-based policy as the harness runs it: :class:`RuleAdapter`, the hot path of
every decision an outside ``decide(decision, view)`` makes (see :mod:`mrsched_gym.policy.contract`).

It is compiled with the simulator in the compiled build (``setup.py``'s ``COMPILED``): the
read-only view costs an outside policy about as much per decision as the simulator's own
work is cheap, so the few steps between the simulator and the policy (the decision's
read-only copy, the action's check) run as C there. The pure-Python build runs the same code.
What it costs is measured in ``docs/notes/speed.md`` (``python benchmarks/guard_cost.py``).
"""

from __future__ import annotations

from typing import Any, Final

from mrsched_gym.policy.guard import Guard
from mrsched_gym.policy.policy_actions import check_action
from mrsched_gym.policy.policy_failures import reraise
from mrsched_gym.policy.readonly import DecisionView, GuardedView, guard_of, reset_view
from mrsched_gym.sim.decision import Decision

#: Makes a tuple subclass's instance from a tuple in one C call (a DecisionView).
NEW_TUPLE: Final = tuple.__new__


class RuleAdapter:
    """A rule-based policy (``decide(decision, view)``) as the harness runs it
    (``decide(sim)``): the policy reads the simulator through a
    :class:`~mrsched_gym.policy.readonly.GuardedView` (read-only) and gets the decision as a
    :class:`~mrsched_gym.policy.readonly.DecisionView`; anything its code raises, ``BaseException``
    included, fails the episode naming the policy and the phase
    (:mod:`mrsched_gym.policy.policy_failures`), and its action is checked
    (:func:`~mrsched_gym.policy.policy_actions.check_action`).

    Args:
        policy: The rule-based policy.
        name: Its label.
    """

    policy: Any
    name: str
    view: Any
    #: The view's Guard (its proxies), set with the view.
    guard: Guard

    def __init__(self, policy: Any, name: str) -> None:
        self.policy = policy
        self.name = name
        self.view = None                            # the GuardedView (made on first use)

    def guarded(self, sim: Any) -> GuardedView:
        """The read-only view of ``sim`` (one per adapter, reset at each episode)."""
        if self.view is None:
            self.view = GuardedView(sim)
        self.guard = guard_of(self.view)
        return self.view  # type: ignore[no-any-return]

    def reset(self, sim: Any, seed: int | None = None) -> None:
        """Point the view at ``sim`` (a new episode), then the policy's own
        ``reset(view, seed)``, if it has one."""
        if self.view is None:
            view = self.guarded(sim)                # made for sim, with a fresh Guard
        else:
            view = self.view
            reset_view(view, sim)
            self.guard = guard_of(view)
        if hasattr(self.policy, "reset"):
            try:
                self.policy.reset(view, seed=seed)
            except BaseException as e:              # noqa: BLE001 - reported, named
                reraise(self.name, "reset", e)

    def decide(self, sim: Any) -> int:
        """``policy.decide(view.decision, view)``, checked (:func:`check_action`)."""
        view = self.view
        if view is None:
            view = self.guarded(sim)
        guard = self.guard
        live: Decision = sim.decision
        if live is guard.seen:
            decision = guard.made
        else:                                       # readonly.decision_view, inlined
            candidates: tuple[Any, ...] = live.candidates
            if candidates:
                look = guard.candidate
                candidates = tuple([look(c) for c in candidates])
            job: Any = live.job
            decision = NEW_TUPLE(DecisionView, (
                live.kind, live.time_s, live.node, job if job is None else guard.wrap(job),
                candidates))
            guard.made = decision
            guard.seen = live
        try:
            action = self.policy.decide(decision, view)
        except BaseException as e:                  # noqa: BLE001 - reported, named
            reraise(self.name, "decide", e)
        if type(action) is int and (0 <= action < len(live.candidates) or action == sim.K):
            return action
        return self.check(action, sim)

    def check(self, action: Any, sim: Any) -> int:
        """An action that is not a plain ``int`` of a candidate or skip: what
        :func:`check_action` makes of it."""
        k = len(sim.decision.candidates)
        return check_action(action, lambda a: a == sim.K or 0 <= a < k, self.name,
                            lambda: f"a {sim.decision.kind.name.lower()} decision with {k} "
                            f"candidates (actions 0-{k - 1} and skip {sim.K})" if k else
                            f"a {sim.decision.kind.name.lower()} decision with no candidate "
                            f"(only skip, {sim.K})")


__all__ = ["RuleAdapter"]
