"""What :class:`~mrsched_gym.env.MRSchedEnv` builds when it is made: its arguments checked, its
scenario (a path, bundled name or :class:`~mrsched_gym.config.Scenario`, with overrides), its
observation space and its action-mask tables; and its checks of an action and of the torch
thread count."""

from __future__ import annotations

import difflib
import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from mrsched_gym.config import ConfigError, Scenario, load_scenario, with_overrides
from mrsched_gym.env.encoding import CANDIDATE_FEATURES, DECISION_FEATURES, NODE_FEATURES
from mrsched_gym.env.features import (
    CANDIDATE_COLUMNS,
    DECISION_TAIL_FEATURES,
    FORECAST_FEATURE,
    KIND_FEATURE,
    NODE_COLUMNS,
    OBJECTIVE_FEATURES,
    box_bounds,
)
from mrsched_gym.errors import InputTypeError
from mrsched_gym.models import availability, interference
from mrsched_gym.workloads.trace import check_trace_size

#: The env's own keyword arguments (every other keyword is a scenario override).
ENV_ARGUMENTS = ("scenario", "render_mode", "strict_actions", "observe_objective", "lean_info",
                 "allow_idle")


def observation_space(K: int, N: int, W: int, decision_len: int = DECISION_FEATURES,
                      objective: bool = False) -> spaces.Dict:
    """The observation space for K candidates, N nodes, W forecast steps and a ``decision``
    array of ``decision_len`` (:func:`~mrsched_gym.env.encoding.decision_features`), with the
    ``objective`` key if asked; each Box spans its features' bounds in the feature table
    (:mod:`mrsched_gym.env.features`)."""
    keys = {
        "decision": spaces.Box(*box_bounds((KIND_FEATURE, *DECISION_TAIL_FEATURES)),
                               (decision_len,), np.float32),
        "candidates": spaces.Box(*box_bounds(CANDIDATE_COLUMNS), (K, CANDIDATE_FEATURES),
                                 np.float32),
        "nodes": spaces.Box(*box_bounds(NODE_COLUMNS), (N, NODE_FEATURES), np.float32),
        "forecast": spaces.Box(*box_bounds((FORECAST_FEATURE,)), (W,), np.float32),
    }
    if objective:
        keys["objective"] = spaces.Box(*box_bounds(OBJECTIVE_FEATURES),
                                       (len(OBJECTIVE_FEATURES),), np.float32)
    return spaces.Dict(keys)


def check_flags(**flags: Any) -> None:
    """Each keyword must be a bool (numpy's too); else an error naming it and its value."""
    for name, value in flags.items():
        if not isinstance(value, (bool, np.bool_)):
            raise InputTypeError(f"{name} must be True or False, got {describe(value)}")


def resolve_scenario(scenario: str | Path | Scenario | None,
                     overrides: Mapping[str, Any]) -> Scenario:
    """The env's scenario: ``scenario`` (``None``: ``"hadoop"``) with ``overrides`` applied; an
    unknown top-level override key that looks like a misspelt env argument says so."""
    if scenario is None:
        scenario = "hadoop"
    if not isinstance(scenario, (str, os.PathLike, Scenario)):
        raise InputTypeError(f"scenario must be a YAML path, a bundled scenario name or a "
                             f"Scenario, got {describe(scenario)}")
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    try:
        return with_overrides(sc, overrides)
    except ConfigError as e:
        unknown = [k for k in overrides if "." not in k and "__" not in k
                   and str(e).startswith(f"override {k!r}: unknown key")]
        if not unknown:            # not an unknown top-level key: no env argument meant
            raise
        close = difflib.get_close_matches(unknown[0], ENV_ARGUMENTS, n=1)   # misspelt?
        raise ConfigError(f"{e}; the env's own arguments: {', '.join(ENV_ARGUMENTS)}"
                          + (f" (did you mean {close[0]!r}?)" if close else "")) from None


def mask_tables(K: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``(masks, work_masks)``: ``masks[k]`` is the action mask when there are ``k`` candidates
    (the first ``k`` actions and skip); ``work_masks[k]`` the same without skip (a schedule
    decision with ``k > 0`` candidates)."""
    masks = [np.array([i < k or i == K for i in range(K + 1)]) for k in range(K + 1)]
    work = [np.array([i < k or (i == K and k == 0) for i in range(K + 1)]) for k in range(K + 1)]
    return masks, work


def action_index(action: Any, K: int) -> int:
    """``action`` as a Python ``int`` if it is an integer (a Python or numpy integer, or a 0-d
    integer array); else :class:`~mrsched_gym.errors.InputTypeError` naming the action and its
    type (bools are refused: a bool is almost always a mask entry passed by mistake)."""
    if type(action) is int:                     # the usual case, checked first (every step)
        return action
    if isinstance(action, np.ndarray):
        if action.shape == () and np.issubdtype(action.dtype, np.integer):
            return int(action)
        raise InputTypeError(f"action must be an integer in [0, {K}] or a 0-d integer "
                             f"array, got an array of shape {action.shape} and dtype "
                             f"{action.dtype}")
    if isinstance(action, (bool, np.bool_)):
        raise InputTypeError(f"action must be an integer in [0, {K}], got bool "
                             f"{bool(action)} (bools are refused: pass an action index, not "
                             "a mask entry)")
    if isinstance(action, (int, np.integer)):
        return int(action)
    raise InputTypeError(f"action must be an integer in [0, {K}], got {describe(action)}")


def describe(value: Any) -> str:
    """``"<type> <value>"`` for error messages (numpy scalars print as plain numbers)."""
    shown = " ".join((str(value) if isinstance(value, np.generic) else repr(value)).split())
    return f"{type(value).__name__} {shown[:60]}"


def check_trace_inputs(sc: Scenario) -> None:
    """Read the scenario's trace files with their fields' rules before the simulator does, so a
    bad trace fails at construction naming the field, file and line (and a trace replay too
    large to simulate is refused; :func:`~mrsched_gym.workloads.trace.check_trace_size`)."""
    interference.check_trace(sc.interference)
    availability.check_trace(sc.availability)
    check_trace_size(sc.workload, sc.cluster)


_told_threads = False
#: Where a learning loop resets its envs: (module prefix, function) pairs on the call stack.
LEARN_FRAMES = (("stable_baselines3", "learn"), ("sb3_contrib", "learn"),
                ("stable_baselines3", "_setup_learn"))


def in_learning_call() -> bool:
    """Whether the caller runs inside an SB3 or sb3-contrib ``learn`` (walks the stack)."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        name = frame.f_code.co_name
        if any(module.startswith(m) and name == f for m, f in LEARN_FRAMES):
            return True
        frame = frame.f_back
    return False


def tell_torch_threads() -> None:
    """Warn once per process when an SB3 / sb3-contrib ``learn`` resets the env while torch runs
    more than one intra-op thread: the small policies trained on this env gain little from more
    threads and slow down many times when the cores are shared (docs/guide/train.md,
    "Threads"). Nowhere else (evaluation, ``check_env``, a user's own loop): a plain
    ``UserWarning``, short, without colour codes. The env never imports torch nor changes its
    settings."""
    global _told_threads
    torch = sys.modules.get("torch")
    if _told_threads or torch is None or not hasattr(torch, "get_num_threads"):
        return
    n = torch.get_num_threads()
    if n > 1 and in_learning_call():
        _told_threads = True
        warnings.warn(f"mrsched_gym: torch trains with {n} threads; torch.set_num_threads(1) "
                      f"is faster for these small networks (docs/guide/train.md, Threads)",
                      UserWarning, stacklevel=3)
