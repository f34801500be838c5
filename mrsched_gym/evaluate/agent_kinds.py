"""The kinds of trained agent the harness can name, as a registry that agent packages fill:
:class:`AgentKind`, :func:`register_agent_kind`, :func:`agent_kinds`.

The harness knows baselines, policy files and policy objects itself; every other policy string
(``agent:NAME``, ``agent:PATH.zip``, ``PATH.npz``, ``rllib:FOLDER``...) is resolved through the
kinds registered here, as Gymnasium resolves env ids through its registry. This package's
agents (:mod:`mrsched_gym.agents.kinds`) register theirs through the entry point group
:data:`ENTRY_POINT_GROUP`, as a third-party package registers its own::

    # the package's pyproject.toml
    [project.entry-points."mrsched_gym.agent_kinds"]
    mykind = "my_package.kinds:register"     # a function that calls register_agent_kind

or by calling :func:`register_agent_kind` before a run (in the process that parses the
policies: a worker process gets the parsed spec and finds the kind by the same entry point).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: The entry point group whose functions register agent kinds (each is called once, with no
#: arguments, the first time the harness looks a kind up).
ENTRY_POINT_GROUP = "mrsched_gym.agent_kinds"


@dataclass(frozen=True)
class AgentKind:
    """A kind of trained agent: how the harness recognises, parses, builds and checks it.

    Attributes:
        name: The kind's name, the ``kind`` of the specs it parses (``"agent"``, ``"rllib"``).
        claims: Whether a policy string names an agent of this kind (``spec.startswith(...)``).
        parse: The policy string's
            :class:`~mrsched_gym.evaluate.policy_specs.PolicySpec` (``kind`` :attr:`name`),
            checked before anything runs (raises
            :class:`~mrsched_gym.errors.InputError` for a bad one).
        make: The policy an episode plays, from its spec (what
            :func:`~mrsched_gym.policy.contract.as_policy` accepts).
        fingerprint: What makes its episodes reusable on resume (its files' hashes).
        check_fits: ``check_fits(spec, scenarios, env_kwargs)``: refuse, before a sweep runs,
            an agent that cannot act in one of the scenarios (None: no check).
    """

    name: str
    claims: Callable[[str], bool]
    parse: Callable[[str], Any]
    make: Callable[[Any], Any]
    fingerprint: Callable[[Any], str]
    check_fits: Callable[[Any, Sequence[str], dict[str, Any] | None], None] | None = None


#: The registered kinds, by name.
KINDS: dict[str, AgentKind] = {}
LOADED: list[bool] = []


def register_agent_kind(kind: AgentKind) -> None:
    """Register ``kind`` (a kind of the same name is replaced).

    Raises:
        ValueError: ``kind`` names one of the harness's own kinds.
    """
    if kind.name in OWN_KINDS:
        raise ValueError(f"agent kind {kind.name!r}: the harness's own kinds "
                         f"({', '.join(OWN_KINDS)}) cannot be replaced")
    KINDS[kind.name] = kind


#: The kinds of policy the harness knows itself.
OWN_KINDS = ("baseline", "code", "object", "failed")


def agent_kinds() -> dict[str, AgentKind]:
    """Every registered kind, by name (the entry points of :data:`ENTRY_POINT_GROUP` are
    loaded on the first call)."""
    if not LOADED:
        LOADED.append(True)
        from importlib.metadata import entry_points
        for point in entry_points(group=ENTRY_POINT_GROUP):
            point.load()()
    return KINDS


def kind_claiming(spec: str) -> AgentKind | None:
    """The registered kind whose :attr:`~AgentKind.claims` accepts ``spec``, or None."""
    for kind in agent_kinds().values():
        if kind.claims(spec):
            return kind
    return None


__all__ = ["ENTRY_POINT_GROUP", "KINDS", "OWN_KINDS", "AgentKind", "agent_kinds",
           "kind_claiming", "register_agent_kind"]
