"""Policies by name: :class:`PolicySpec` and :func:`parse_policy` (the policy strings of the
harness), :func:`make_policy`, :func:`policy_role`, :func:`check_policy`, :func:`unique_labels`
and the resume fingerprints (:func:`policy_fingerprint`, :func:`file_digest`)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mrsched_gym.errors import InputError
from mrsched_gym.evaluate.agent_kinds import agent_kinds, kind_claiming
from mrsched_gym.models.traces import file_version
from mrsched_gym.policy.contract import as_policy
from mrsched_gym.policy.decision_budget import DEFAULT_BUDGET_S


@dataclass(frozen=True)
class PolicySpec:
    """A policy by name: ``kind`` is ``"baseline"``, the name of a registered agent kind
    (:mod:`~mrsched_gym.evaluate.agent_kinds`: ``"agent"``, an SB3 checkpoint or a shipped
    agent; ``"rllib"``, an RLlib checkpoint folder), ``"code"`` (a policy in a file or module,
    ``target`` ``"file.py:Class"`` or ``"package.module:Class"``) or ``"object"`` (a policy
    object given in Python: ``target`` is its key and resume fingerprint, ``payload`` its pickle,
    :func:`mrsched_gym.policy.policy_files.object_parts`; for a code policy in a file, ``payload``
    is the file's bytes as read when the run started, what every episode executes). ``digest``: an
    agent file's SHA-256 prefix when the run started; every episode reads the file once, checks its
    bytes still have it and loads those bytes
    (:func:`~mrsched_gym.agents.agent_snapshot.load_as_started`). ``failure``: for a code policy
    whose own code raised at import or construction, ``(phase, error, traceback)`` (``kind``
    ``"failed"``): a sweep records it as the policy's failure and runs the others. ``params``: a
    baseline's or a code policy's parameters, or a shipped agent's decision rules from its metadata:
    the affinity mask (:class:`~mrsched_gym.agents.affinity.AffinityDelegate`), the slow-start rule
    (:class:`~mrsched_gym.agents.slow_start.SlowStartDelegate`) and the speculation rule
    (:class:`~mrsched_gym.agents.policy.SpeculationDelegate`)."""

    label: str
    kind: str
    target: str
    params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    payload: bytes | None = field(default=None, repr=False)
    digest: str | None = None
    failure: tuple[str, str, str] | None = field(default=None, repr=False)
    #: A code policy's interface, as its policy process found it (``"rule"``, ``"scheduler"``,
    #: ``"observation"``, ``"model"``), and its file's absolute path when the run started.
    interface: str = ""
    entry: str | None = None


def parse_code_spec(spec: str) -> PolicySpec:
    """The :class:`PolicySpec` of a code spec (``FILE.py:Class:key=value``,
    ``package.module:Class``): its file read once, its policy loaded once in a policy process
    of its own (:mod:`mrsched_gym.policy.process`) to find its label and interface, so a bad
    spec fails here. A policy whose own code fails to load is a ``"failed"`` spec.

    Raises:
        InputError: A bad spec, parameter or file, or an object that is no policy.
    """
    from mrsched_gym.policy.policy_failures import PolicyLoadError
    from mrsched_gym.policy.policy_files import code_params, read_source, split_code_spec
    from mrsched_gym.policy.process import load_code_spec
    loc, attr, text = split_code_spec(spec)
    params = code_params(spec, text, _parse_value)
    try:
        source = read_source(loc)
    except OSError as e:
        raise InputError(f"policy {spec!r}: policy file {loc!r} cannot be read "
                         f"({e.strerror or e})") from None
    entry = str(Path(loc).resolve()) if loc.endswith(".py") else None
    try:
        name, interface = load_code_spec(spec, spec, params, source, entry)
    except PolicyLoadError as e:                # its own code raised: a policy failure
        return PolicySpec(label=spec, kind="failed", target=spec,
                          failure=(e.phase, str(e), e.trace))
    label = name + (":" + ",".join(f"{k}={v}" for k, v in params) if params else "")
    return PolicySpec(label=label, kind="code", target=f"{loc}:{attr}", params=params,
                      payload=source, interface=interface, entry=entry)


def _parse_value(v: str) -> Any:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def parse_policy(spec: str) -> PolicySpec:
    """Parse ``"fifo"``, ``"fair:delay=0,pools=type"``, ``"agent:model.zip"``, ``"x.zip"``,
    ``"rllib:FOLDER"`` (what ``algo.save_to_path`` wrote, or its module folder),
    ``"my_policy.py:MyPolicy"`` or ``"package.module:Class"`` (with ``:key=value,...``
    parameters for the class; the file is loaded and the policy built once, so a bad one fails
    here, :mod:`mrsched_gym.policy.policy_files`).

    Raises:
        InputError: A bad spec (the message names it and what is wrong).
    """
    from mrsched_gym.baselines import BASELINES
    from mrsched_gym.policy.policy_files import is_code_spec

    kind = kind_claiming(spec)                  # agent:, rllib:, a registered kind
    if kind is not None:
        parsed = kind.parse(spec)
        if not isinstance(parsed, PolicySpec) or parsed.kind != kind.name:
            raise TypeError(f"agent kind {kind.name!r} parsed {spec!r} as {parsed!r}, not a "
                            f"PolicySpec of its kind")
        return parsed
    name, _, rest = spec.partition(":")
    if name not in BASELINES and is_code_spec(spec):
        return parse_code_spec(spec)
    if name not in BASELINES:
        raise InputError(f"policy {spec!r}: unknown baseline {name!r}; known: "
                         f"{', '.join(BASELINES)} (or agent:PATH.zip, rllib:FOLDER, "
                         f"FILE.py:Class, package.module:Class)")
    pairs: list[tuple[str, Any]] = []
    for item in filter(None, rest.split(",")):
        k, eq, v = item.partition("=")
        if not eq or not k:
            raise InputError(f"policy {spec!r}: parameter {item!r} is not key=value")
        if k.strip() in dict(pairs):
            raise InputError(f"policy {spec!r}: parameter {k.strip()!r} given more than once")
        pairs.append((k.strip(), _parse_value(v.strip())))
    return PolicySpec(label=spec, kind="baseline", target=name, params=tuple(pairs))


#: What a policy label names (:func:`policy_role`).
AGENT, REFERENCE, BASELINE = "agent", "reference", "baseline"


def policy_role(label: str) -> str:
    """What the policy of a record's ``label`` is: :data:`AGENT` (``agent:...``, ``rllib:...``,
    and any outside policy: a policy file or object, whose label is no baseline's name),
    :data:`REFERENCE` (a reference rule: a textbook rule outside the classical baselines, ranked
    only when named, e.g. ``srpt`` or ``edf-affinity:slow_start=1``) or :data:`BASELINE` (one of
    the classical baselines). Only a baseline is ever "the best baseline" that leaderboards pair
    agents with and that anchors the benchmark's score."""
    from mrsched_gym.baselines import BASELINES, is_reference_rule

    if label.startswith(("agent:", "rllib:")) or label.partition(":")[0] not in BASELINES:
        return AGENT
    return REFERENCE if is_reference_rule(label.partition(":")[0]) else BASELINE


def make_policy(spec: PolicySpec | str,
                decision_budget_s: float | None = DEFAULT_BUDGET_S) -> Any:
    """Instantiate a policy (a baseline :class:`Scheduler`, an agent adapter, or an outside
    policy: a code policy as a :class:`~mrsched_gym.policy.process.ProcessPolicy`, which runs
    each episode in a policy process of its own, ``decision_budget_s`` its budget per
    decision; a policy object as a fresh copy through
    :func:`~mrsched_gym.policy.contract.as_policy`,
    :func:`~mrsched_gym.policy.policy_files.object_copy`)."""
    spec = parse_policy(spec) if isinstance(spec, str) else spec
    if spec.failure is not None:
        from mrsched_gym.policy.policy_failures import PolicyLoadError
        phase, error, trace = spec.failure
        raise PolicyLoadError(error, spec.label, phase, trace)
    if spec.kind == "code":
        from mrsched_gym.policy.process import process_policy
        return process_policy(spec.label, spec.interface, spec.target, spec.params,
                              spec.payload, spec.entry, decision_budget_s)
    if spec.kind == "object":
        from mrsched_gym.policy.policy_files import object_copy
        return as_policy(object_copy(spec.target, spec.payload), spec.label)
    kinds = agent_kinds()
    if spec.kind in kinds:                      # agent:, rllib:, a registered kind
        return kinds[spec.kind].make(spec)
    from mrsched_gym.baselines import make_baseline
    try:
        return make_baseline(spec.target, **dict(spec.params))
    except (TypeError, ValueError) as e:
        raise InputError(f"policy {spec.label!r}: {e}") from None


def policy_fingerprint(spec: PolicySpec) -> str:
    """What makes a policy's episodes reusable on resume: its label for a baseline (parameters
    included), its file and the file's hash for an agent (a retrained checkpoint differs), every
    file's hash for an RLlib checkpoint folder, the source file's hash for a code policy, the
    hashes of its pickle and class source for a policy object."""
    if spec.kind == "code":
        from mrsched_gym.policy.policy_files import code_fingerprint
        return code_fingerprint(spec.target, spec.params, spec.payload)
    if spec.kind == "object":
        return spec.target
    kinds = agent_kinds()
    if spec.kind in kinds:
        return kinds[spec.kind].fingerprint(spec)
    return spec.label


def file_digest(path: str) -> str:
    """The first 16 hex digits of a file's SHA-256, read once per process per
    :func:`~mrsched_gym.models.traces.file_version` (a run's episodes check the bytes they load
    in any case: :func:`~mrsched_gym.agents.agent_snapshot.load_as_started`)."""
    return _digest_of_version(path, file_version(path))


@functools.lru_cache(maxsize=64)
def _digest_of_version(path: str, version: tuple[str, int, int, int, int]) -> str:
    """:func:`file_digest` of one version of ``path``."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def unique_labels(specs: Sequence[PolicySpec]) -> list[PolicySpec]:
    """Agents whose labels collide (``runs/a/best_model.zip`` and ``runs/b/best_model.zip``) are
    labelled by their paths; a policy given twice is an error."""
    from collections import Counter
    from dataclasses import replace
    count = Counter(sp.label for sp in specs)
    out = [replace(sp, label=f"{sp.kind}:{Path(sp.target).with_suffix('')}")
           if count[sp.label] > 1 and sp.kind in agent_kinds() else sp for sp in specs]
    dup = [k for k, n in Counter(sp.label for sp in out).items() if n > 1]
    if dup:
        outside = any(sp.kind in ("code", "object") for sp in out if sp.label in dup)
        raise InputError(f"policies: {', '.join(dup)} given more than once" + (
            " (a policy object or file is labelled by its name attribute, else its class "
            "name: give each one a name of its own)" if outside else ""))
    return out


def check_policy(spec: Any) -> PolicySpec:
    """Parse a policy and build it once if it is a baseline, so bad parameters fail early; a
    policy object becomes an ``"object"`` spec
    (:func:`~mrsched_gym.policy.policy_files.object_parts`).

    Raises:
        InputError: A bad policy string, or an object that is no policy (the message names what
            is missing).
    """
    if not isinstance(spec, (str, PolicySpec)):
        from mrsched_gym.policy.policy_files import object_parts
        label, key, payload = object_parts(spec)
        return PolicySpec(label=label, kind="object", target=key, payload=payload)
    sp = parse_policy(spec) if isinstance(spec, str) else spec
    if sp.kind == "baseline":
        make_policy(sp)
    return sp
