"""Pre-trained agents shipped inside the package (``mrsched_gym/agents/pretrained/``).

Each agent is ``NAME.zip`` (an SB3 / sb3-contrib checkpoint) with ``NAME.json`` beside it: the
env it was trained for, the training config, the step of the checkpoint, the command that
reproduces it and its validation result; and ``NAME.npz``, the actor's weights for the numpy
forward pass (:mod:`mrsched_gym.agents.numpy_policy`), so the shipped agents run without torch.
``agent:NAME`` names it wherever a policy is expected
(``mrsched-gym compare --policies edf agent:hadoop-v0``), and ``mrsched-gym compare`` adds the
agents trained for the compared env to the leaderboard by default.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path


def _folder() -> Path:
    return Path(str(files("mrsched_gym.agents").joinpath("pretrained")))


def pretrained_agents() -> dict[str, dict]:
    """Every shipped agent: name -> its metadata, with ``path`` (the checkpoint) added."""
    out = {}
    folder = _folder()
    if folder.is_dir():
        for meta in sorted(folder.glob("*.json")):
            zp = meta.with_suffix(".zip")
            if zp.is_file():
                npz = meta.with_suffix(".npz")
                out[meta.stem] = dict(json.loads(meta.read_text()), path=str(zp),
                                      numpy_path=str(npz) if npz.is_file() else None)
    return out


def current_agents() -> dict[str, dict]:
    """The shipped agents that are not superseded: the ones ``compare`` and ``benchmark`` run
    by default. An agent replaced by a newer one names it in its metadata's ``superseded_by``
    (``general`` -> ``general-v2``); it stays loadable as ``agent:NAME`` for anyone who cited
    its numbers."""
    return {n: info for n, info in pretrained_agents().items() if not info.get("superseded_by")}


def pretrained_path(name: str) -> str | None:
    """The checkpoint of the shipped agent ``name``, or None."""
    info = pretrained_agents().get(name)
    return info["path"] if info else None


def pretrained_numpy_path(name: str) -> str | None:
    """The numpy weights of the shipped agent ``name`` (runs without torch), or None."""
    info = pretrained_agents().get(name)
    return info["numpy_path"] if info else None


def agents_for(env: str) -> list[str]:
    """Policy strings (``agent:NAME``) of the shipped agents trained for ``env`` — or for the
    world it varies (an orchestrated variant has its base id's cluster and observation, so the
    base id's agents run there too, beside every baseline of that world). A generalist lists
    the ids it was trained for under ``envs`` in its metadata (``general-v2.json``). A
    superseded agent is left out (:func:`current_agents`)."""
    from mrsched_gym.registration import ENV_IDS, ENV_OVERRIDES
    base = [e for e, name in ENV_IDS.items()
            if env in ENV_OVERRIDES and name == ENV_IDS[env] and e not in ENV_OVERRIDES]
    targets = {env, *base}
    return [f"agent:{n}" for n, info in current_agents().items()
            if info.get("env") in targets and not info.get("envs")
            or targets & set(info.get("envs") or ())]


def rl_available() -> bool:
    """Whether torch, stable-baselines3 and sb3-contrib can be imported (the ``rl`` extra)."""
    try:
        import sb3_contrib  # noqa: F401
        import stable_baselines3  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def params_sha256(path: str | Path) -> str:
    """SHA-256 of a checkpoint's policy weights (names, shapes and bytes, in order): equal for
    two runs that trained the same network, unlike the zip's bytes (which carry timestamps)."""
    import hashlib

    from mrsched_gym.agents.policy import load_sb3
    h = hashlib.sha256()
    for k, v in load_sb3(path).policy.state_dict().items():
        h.update(k.encode())
        h.update(str(tuple(v.shape)).encode())
        h.update(v.detach().cpu().numpy().tobytes())
    return h.hexdigest()
