"""This package's kinds of trained agent, which the entry point ``mrsched_gym.agent_kinds``
registers with the harness (:mod:`mrsched_gym.evaluate.agent_kinds`).

- ``agent``: a shipped agent by name (``agent:hadoop-v0``: its numpy weights and metadata), an
  SB3 checkpoint (``agent:PATH.zip`` or ``PATH.zip``) or a numpy export (``agent:PATH.npz``),
  each file checked before anything runs and every episode loading the bytes the run started
  with (:mod:`~mrsched_gym.agents.agent_snapshot`);
- ``rllib``: an RLlib checkpoint folder (``rllib:FOLDER``, the ray extra).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mrsched_gym.errors import InputError, MissingExtraError, install_hint, not_a_file
from mrsched_gym.evaluate.agent_kinds import AgentKind, register_agent_kind
from mrsched_gym.evaluate.policy_specs import PolicySpec, file_digest


# ----------------------------------------------------------------------------- agent:
def claims_agent(spec: str) -> bool:
    """``agent:...`` or a path ending in ``.zip``."""
    return spec.startswith("agent:") or spec.endswith(".zip")


def parse_agent(spec: str) -> PolicySpec:
    """The spec of a shipped agent's name or of a checkpoint file (checked in full)."""
    path = spec[len("agent:"):] if spec.startswith("agent:") else spec
    if Path(path).is_dir():
        raise InputError(f"policy {spec!r}: {path!r} is a folder, not a checkpoint file (an "
                         f"SB3 model.save .zip or an exported .npz; an RLlib checkpoint "
                         f"folder is rllib:FOLDER)")
    from mrsched_gym.agents.rules import RULE_KEYS, checkpoint_rules
    if not Path(path).is_file():
        from mrsched_gym.agents.pretrained import pretrained_agents
        agents = pretrained_agents()               # the metadata, read once
        info = agents.get(path)
        if info is None:
            why = not_a_file(path, "checkpoint file")
            raise InputError(
                f"policy {spec!r}: checkpoint file {path!r} "
                f"{'not found' if why.startswith('checkpoint file not found') else why}"
                f" (shipped agents: {', '.join(agents) or 'none'})")
        params = tuple((k, info[k]) for k in RULE_KEYS if info.get(k))
        target = info["numpy_path"] or info["path"]
        return PolicySpec(label=f"agent:{path}", kind="agent", target=target,
                          params=params, digest=file_digest(target))
    check_agent_file(path)
    params = tuple(checkpoint_rules(path).items())     # a checkpoint's rules travel with it
    return PolicySpec(label=f"agent:{Path(path).stem}", kind="agent", target=path,
                      params=params, digest=file_digest(path))


def check_agent_file(path: str) -> None:
    """Check an agent file before anything runs: an ``.npz`` is read and checked in full
    (:func:`~mrsched_gym.agents.agent_files.read_npz`), any other file (an SB3 checkpoint,
    whatever its name ends with) must be a readable zip of an SB3 model of a bounded size
    (:func:`~mrsched_gym.agents.agent_files.check_sb3_zip`).

    Raises:
        InputError: One line naming the file (and the key).
    """
    from mrsched_gym.agents.agent_files import check_sb3_zip, read_npz
    if path.endswith(".npz"):
        read_npz(path)
    else:
        check_sb3_zip(path)


def make_agent(spec: PolicySpec) -> Any:
    """The agent of ``spec``, loaded from the file's bytes as the run started, under the
    decision rules of its metadata (a shipped agent) or of its training (a checkpoint)."""
    from mrsched_gym.agents.agent_snapshot import load_as_started
    from mrsched_gym.agents.rules import with_rules
    if spec.target.endswith(".npz"):           # a shipped agent: numpy, no torch needed
        from mrsched_gym.agents.numpy_policy import NumpySetPolicy
        agent = load_as_started(spec.target, spec.digest, spec.label,
                                lambda path: NumpySetPolicy.load(path, name=spec.label))
    else:
        from mrsched_gym.agents.policy import load_agent
        agent = load_as_started(spec.target, spec.digest, spec.label, load_agent)
    try:
        return with_rules(agent, **dict(spec.params))
    except (TypeError, ValueError) as e:
        raise InputError(f"policy {spec.label!r}: {e}") from None


def agent_fingerprint(spec: PolicySpec) -> str:
    """Its file and the file's hash (a retrained checkpoint differs), and its rules."""
    extra = "".join(f",{k}={v}" for k, v in spec.params)       # e.g. its speculation rule
    return f"{spec.target}:{spec.digest or file_digest(spec.target)}{extra}"


def check_agent_fits(spec: PolicySpec, scenarios: Sequence[str],
                     env_kwargs: dict[str, Any] | None) -> None:
    """Refuse an agent that cannot act in one of ``scenarios``: numpy weights (``.npz``) by
    their input widths against each scenario's observations, an SB3 checkpoint by its
    algorithm and, for a flat network, its input shapes."""
    from mrsched_gym.evaluate.running import make_env
    from mrsched_gym.evaluate.sweeping import check_fits_in
    if spec.target.endswith(".npz"):
        from mrsched_gym.agents.agent_files import check_npz_fits
        for sc in scenarios:
            env = make_env(sc, env_kwargs)
            try:
                check_npz_fits(spec.target, env.observation_space, f"scenario {sc!r}")
            finally:
                env.close()
        return
    try:
        agent = agent_for_checks("agent", spec.target, agent_fingerprint(spec))
    except (FileNotFoundError, ValueError) as e:
        raise InputError(f"policy {spec.label!r}: {e}") from None
    check_fits_in(agent, spec.label, scenarios, env_kwargs)


@functools.lru_cache(maxsize=8)
def agent_for_checks(kind: str, target: str, fingerprint: str) -> Any:
    """The agent of a checkpoint, loaded once per version (``fingerprint``, which holds the
    files' hashes) for the checks before a sweep (the command line checks a sweep before it
    runs it), without changing the caller's torch thread count (an episode's loading sets
    one)."""
    if kind == "rllib":
        return make_rllib(PolicySpec(label=f"rllib:{Path(target).name}", kind=kind,
                                     target=target))
    from mrsched_gym.agents.policy import load_agent
    return load_agent(target, one_thread=False)


# ----------------------------------------------------------------------------- rllib:
def parse_rllib(spec: str) -> PolicySpec:
    """The spec of an RLlib checkpoint folder (made absolute: RLlib reads a checkpoint by URI,
    and a relative path is none)."""
    path = spec[len("rllib:"):]
    if not Path(path).is_dir():
        raise InputError(f"policy {spec!r}: RLlib checkpoint folder {path!r} not found (the "
                         f"folder algo.save_to_path wrote, or its module folder)")
    folder = Path(path).resolve()
    return PolicySpec(label=f"rllib:{folder.name}", kind="rllib", target=str(folder))


def make_rllib(spec: PolicySpec) -> Any:
    """The RLlib module of ``spec`` as a policy (the ray extra)."""
    try:
        from mrsched_gym.agents.rllib_module import load_rllib_policy
    except ImportError as e:
        raise MissingExtraError(f"policy {spec.label!r}: loading an RLlib checkpoint "
                                f"needs the ray extra ({install_hint('ray')}): {e}") from None
    return load_rllib_policy(spec.target, name=spec.label)


def rllib_fingerprint(spec: PolicySpec) -> str:
    """Every file's hash of the checkpoint folder."""
    digests = []
    for p in sorted(p for p in Path(spec.target).rglob("*") if p.is_file()):
        digests.append(f"{p.relative_to(spec.target)}={file_digest(str(p))}")
    return f"{spec.target}:{hashlib.sha256(';'.join(digests).encode()).hexdigest()[:16]}"


def check_rllib_fits(spec: PolicySpec, scenarios: Sequence[str],
                     env_kwargs: dict[str, Any] | None) -> None:
    """Load the module once (the set module runs on any cluster)."""
    try:
        agent_for_checks("rllib", spec.target, rllib_fingerprint(spec))
    except (FileNotFoundError, ValueError) as e:
        raise InputError(f"policy {spec.label!r}: {e}") from None


#: The kinds this package registers.
AGENT = AgentKind("agent", claims_agent, parse_agent, make_agent, agent_fingerprint,
                  check_agent_fits)
RLLIB = AgentKind("rllib", lambda spec: spec.startswith("rllib:"), parse_rllib, make_rllib,
                  rllib_fingerprint, check_rllib_fits)


def register() -> None:
    """Register :data:`AGENT` and :data:`RLLIB` (the entry point's function)."""
    register_agent_kind(AGENT)
    register_agent_kind(RLLIB)


__all__ = ["AGENT", "RLLIB", "agent_for_checks", "check_agent_file", "register"]
