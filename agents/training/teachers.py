"""Teacher kinds for imitation: the plugin point through which ``imitate.teachers`` reaches
teachers that are not policies.

A teacher in ``imitate.teachers`` is any policy spec (``srpt``, ``agent:general``...) or, with a
registered *prefix*, a teacher of another kind built over a policy: ``PREFIX + POLICY``. A kind
is registered by :func:`register_teacher_kind`, in a module that a run names in
``imitate.plugins``: the trainer imports those modules before it checks the teachers, and
imports nothing else of theirs. The product registers no kind itself; the research package
:mod:`mrsched_gym.agents.research` registers the rollout teachers (``rollout:POLICY`` and
``myopic-rollout:POLICY``) when it is imported, so a run that uses them names it::

    imitate:
      plugins: [mrsched_gym.agents.research]
      teachers: {default: "rollout:srpt"}

A teacher of a registered kind has ``reset(sim, seed=...)`` (at each episode, as a policy) and
``plan(env, obs) -> action`` (the env of the world being played and its unpadded observation;
the action in that env's space).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TeacherKind:
    """A kind of teacher named ``prefix + POLICY`` in ``imitate.teachers``.

    Attributes:
        prefix: What starts its specs (e.g. ``"rollout:"``); the rest is the policy it is built
            on, checked as any policy spec.
        make: ``make(spec, make_policy, pool)`` -> the teacher; ``make_policy`` builds a policy
            from a spec, ``pool`` is a process pool (or None) when ``parallel``.
        parallel: Whether it can spread its work over ``imitate.teacher_workers`` processes
            (the run then makes the pool).
    """

    prefix: str
    make: Callable[[str, Callable[[str], Any], Any], Any]
    parallel: bool = False


_KINDS: dict[str, TeacherKind] = {}


def register_teacher_kind(kind: TeacherKind) -> None:
    """Make specs that start with ``kind.prefix`` name teachers of ``kind`` (registering a
    prefix again replaces its kind).

    Raises:
        ValueError: The prefix does not end with ``:``.
    """
    if not kind.prefix.endswith(":") or len(kind.prefix) < 2:
        raise ValueError(f"a teacher kind's prefix ends with ':'; got {kind.prefix!r}")
    _KINDS[kind.prefix] = kind


def teacher_kind(spec: str) -> TeacherKind | None:
    """The registered kind ``spec`` names, or None (a plain policy spec)."""
    if not isinstance(spec, str):
        return None
    for prefix, kind in _KINDS.items():
        if spec.startswith(prefix):
            return kind
    return None


def base_policy(spec: str) -> str:
    """The policy spec a teacher spec is built on (``spec`` itself for a plain policy)."""
    kind = teacher_kind(spec)
    return spec[len(kind.prefix):] if kind is not None else spec


def load_plugins(modules: list[str]) -> None:
    """Import the modules of ``imitate.plugins`` (each registers its teacher kinds).

    Raises:
        ValueError: A name is not an importable module (naming it).
    """
    for name in modules:
        if not isinstance(name, str) or not name:
            raise ValueError(f"imitate.plugins: a module name; got {name!r}")
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise ValueError(f"imitate.plugins: cannot import {name!r} ({e})") from None


__all__ = ["TeacherKind", "base_policy", "load_plugins", "register_teacher_kind",
           "teacher_kind"]
