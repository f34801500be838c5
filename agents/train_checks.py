"""Checks of training-config values that need more than a type: the PPO hyper-parameters'
ranges (:func:`check_ppo_value`) and the checkpoint ``init_from`` names
(:func:`check_init_from`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

#: Stable-Baselines3's PPO defaults of ``n_steps`` and ``batch_size`` (a rollout must hold a
#: minibatch).
SB3_N_STEPS = 2048
SB3_BATCH_SIZE = 64
#: What each PPO hyper-parameter may be: (kind, low, low included, high, high included).
PPO_RANGES: dict[str, tuple[str, float, bool, float, bool]] = {
    "learning_rate": ("number", 0.0, False, 1.0, True),
    "n_steps": ("integer", 1, True, 1e7, True),
    "batch_size": ("integer", 1, True, 1e7, True),
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


def check_init_from(source: str) -> None:
    """Check that ``init_from`` names a checkpoint: a shipped agent (``agent:NAME``) or an
    existing Stable-Baselines3 zip (its ``data`` and ``policy.pth``).

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


__all__ = ["PPO_RANGES", "SB3_BATCH_SIZE", "SB3_N_STEPS", "check_init_from", "check_ppo_value"]
