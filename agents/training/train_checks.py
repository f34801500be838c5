"""Checks of training-config values that need more than a type: the PPO hyper-parameters'
ranges (:func:`check_ppo_value`), the network's widths (:func:`check_widths`), and the
checkpoints a run starts from (``init_from``, ``--resume``): that they are checkpoints
(:func:`check_init_from`) of the network the config builds (:func:`checkpoint_network`,
:func:`config_network`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Stable-Baselines3's PPO defaults of ``n_steps`` and ``batch_size`` (a rollout must hold a
#: minibatch).
SB3_N_STEPS = 2048
SB3_BATCH_SIZE = 64
#: The widest layer a network may have, and the most hidden layers of an MLP.
MAX_WIDTH = 4_096
MAX_LAYERS = 16
#: The most env steps one PPO rollout may hold (``ppo.n_steps x n_envs``; each holds an
#: observation, about 1-40 KB in the bundled worlds).
MAX_ROLLOUT = 2**20
#: What each PPO hyper-parameter may be: (kind, low, low included, high, high included).
#: ``n_steps`` and ``batch_size`` start at 2: PPO normalises each minibatch's advantages by
#: their standard deviation, which one sample does not have (SB3 asserts on it mid-run).
PPO_RANGES: dict[str, tuple[str, float, bool, float, bool]] = {
    "learning_rate": ("number", 0.0, False, 1.0, True),
    "n_steps": ("integer", 2, True, 2**20, True),
    "batch_size": ("integer", 2, True, 2**20, True),
    "n_epochs": ("integer", 1, True, 1000, True),
    "gamma": ("number", 0.0, False, 1.0, True),
    "gae_lambda": ("number", 0.0, True, 1.0, True),
    "clip_range": ("number", 0.0, False, 1e9, True),
    "ent_coef": ("number", 0.0, True, 1e9, True),
    "vf_coef": ("number", 0.0, True, 1e9, True),
    "max_grad_norm": ("number", 0.0, False, 1e9, True),
    "target_kl": ("number", 0.0, False, 1e9, True),
}


def check_ppo_value(key: str, value: Any) -> Any:
    """``value`` of PPO hyper-parameter ``key`` checked against :data:`PPO_RANGES` (a number
    written as text, e.g. ``3e-4``, which YAML reads as text, is read as the number).

    Raises:
        ValueError: A value of the wrong type or out of its range, saying which range.
    """
    if key == "normalize_advantage":
        if not isinstance(value, bool):
            raise ValueError(f"must be true or false; got {value!r}")
        return value
    if key == "target_kl" and value is None:
        return None
    kind, lo, lo_in, hi, hi_in = PPO_RANGES[key]
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"must be a {kind}; got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"must be a {kind}; got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"must be a finite {kind}; got {value!r}")
    if kind == "integer":
        if value != int(value):
            raise ValueError(f"must be an integer; got {value!r}")
        value = int(value)
    if not (lo < value or lo_in and value == lo) \
            or not (value < hi or hi_in and value == hi):
        raise ValueError(f"must be in {'[' if lo_in else '('}{lo:g}, {hi:g}"
                         f"{']' if hi_in else ')'}; got {value!r}")
    return value


def check_widths(value: Any, empty: bool = True) -> list[int]:
    """``value`` as a list of layer widths (``net_arch``, ``value_arch``): integers from 1 to
    :data:`MAX_WIDTH`, at most :data:`MAX_LAYERS` of them (none only if ``empty``).

    Raises:
        ValueError: Saying which width or what is wrong.
    """
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"a list of layer widths, e.g. [64, 64]; got {value!r}")
    if len(value) > MAX_LAYERS or not (value or empty):
        raise ValueError(f"{'1' if not empty else '0'} to {MAX_LAYERS} layers; got "
                         f"{len(value)}")
    for i, width in enumerate(value):
        if isinstance(width, bool) or not isinstance(width, int) \
                or not 1 <= width <= MAX_WIDTH:
            raise ValueError(f"layer {i}: a width is an integer from 1 to {MAX_WIDTH:,}; got "
                             f"{width!r}")
    return list(value)


def config_network(policy: str, hidden: int, net_arch: list[int],
                   value_arch: list[int]) -> dict[str, Any]:
    """The network a config builds, as :func:`checkpoint_network` describes a checkpoint's."""
    if policy == "set":
        return {"policy": "set", "hidden": hidden, "value_arch": list(value_arch)}
    return {"policy": "flat", "net_arch": list(net_arch)}


def checkpoint_network(path: str | Path) -> dict[str, Any] | None:
    """The network of the SB3 checkpoint at ``path``, from its ``data`` (no code is run): the
    set network's ``hidden`` and ``value_arch``, or the flat MLP's ``net_arch``; None where the
    file does not say (not a zip, another kind of network)."""
    import json
    import zipfile
    try:
        with zipfile.ZipFile(path) as z:
            data = json.loads(z.read("data"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None
    kwargs = data.get("policy_kwargs") if isinstance(data, dict) else None
    if not isinstance(kwargs, dict):
        return None
    features = kwargs.get("features_extractor_kwargs")
    arch = kwargs.get("net_arch")
    if isinstance(features, dict) and "hidden" in features:
        value = arch.get("vf") if isinstance(arch, dict) else None
        return {"policy": "set", "hidden": features["hidden"], "value_arch": value}
    if isinstance(arch, dict):
        return {"policy": "flat", "net_arch": arch.get("pi")}
    if isinstance(arch, list):
        return {"policy": "flat", "net_arch": arch}
    return None


def network_text(network: dict[str, Any]) -> str:
    """A network of :func:`config_network` in words."""
    if network["policy"] == "set":
        return f"set network, hidden {network['hidden']}, value_arch {network['value_arch']}"
    return f"flat MLP, net_arch {network['net_arch']}"


def check_same_network(path: str | Path, own: dict[str, Any], what: str) -> None:
    """Refuse a checkpoint whose network is not ``own`` (what the config builds).

    Raises:
        ValueError: Naming both networks.
    """
    theirs = checkpoint_network(path)
    if theirs is not None and theirs != own:
        raise ValueError(f"{what} holds a {network_text(theirs)}; this config builds a "
                         f"{network_text(own)}")


def check_init_from(source: str, network: dict[str, Any] | None = None) -> None:
    """Check that ``init_from`` names a checkpoint: a shipped agent (``agent:NAME``) or an
    existing Stable-Baselines3 zip (its ``data`` and ``policy.pth``), of ``network`` (what
    the config builds, :func:`config_network`) where given.

    Raises:
        ValueError: A missing file, a folder, or a file that is not an agent's zip.
    """
    import zipfile

    from mrsched_gym.agents.pretrained import pretrained_path
    if not isinstance(source, str):
        raise ValueError(f"a checkpoint path or agent:NAME; got {source!r}")
    name = source[len("agent:"):] if source.startswith("agent:") else source
    shipped = pretrained_path(name)
    path = Path(shipped or name)
    if not path.is_file():
        from mrsched_gym.errors import not_a_file
        raise ValueError(f"{source}: {not_a_file(path, 'checkpoint (an agent .zip)')}")
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
    except (OSError, zipfile.BadZipFile):
        raise ValueError(f"{source}: not a zip archive; a checkpoint is the .zip a training "
                         "run writes (best_model.zip, final_model.zip)") from None
    if not {"data", "policy.pth"} <= names:
        raise ValueError(f"{source}: a zip archive but not an agent's checkpoint (no data and "
                         "policy.pth in it)")
    if network is not None:
        check_same_network(path, network, source)



def check_rule_fields(cfg, bad: Callable[[str, str], None]) -> None:
    """Check a training config's decision rules (``affinity``, ``slow_start``: normalised in
    place) and residual prior (``prior``, ``prior_weight``); ``bad(field, message)`` raises."""
    if cfg.rules():
        if cfg.algo != "maskable_ppo":
            bad(next(iter(cfg.rules())), "the rules narrow the action mask: they need algo "
                                         "maskable_ppo")
        if cfg.imitate is not None:
            bad(next(iter(cfg.rules())), "imitation under the rules is not supported: "
                                         "imitate first, then fine-tune under the rules "
                                         "with init_from")
    from mrsched_gym.agents.rule_prior import check_prior, check_prior_weight
    from mrsched_gym.baselines.affinity import check_min_ratio
    from mrsched_gym.baselines.slow_start import check_fraction
    for f, check in (("affinity", check_min_ratio), ("slow_start", check_fraction),
                     ("prior", check_prior), ("prior_weight", check_prior_weight)):
        v = getattr(cfg, f)
        if v is None:
            continue
        try:
            setattr(cfg, f, check(v))
        except ValueError as ex:
            bad(f, str(ex))
    if cfg.prior is not None and cfg.policy != "set":
        bad("prior", "a residual policy needs the set policy (policy: set)")

__all__ = ["MAX_LAYERS", "MAX_ROLLOUT", "MAX_WIDTH", "PPO_RANGES", "SB3_BATCH_SIZE", "SB3_N_STEPS",
           "check_init_from", "check_ppo_value", "check_rule_fields", "check_same_network",
           "check_widths", "checkpoint_network", "config_network", "network_text"]
