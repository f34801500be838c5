"""What a training run reads and writes in its folder: durable checkpoints and state files, the
state and checkpoint a run resumes from, the files ``--overwrite`` clears, and the baselines'
means on the validation seeds (computed once, kept in ``baselines.json``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from mrsched_gym.agents.training.train_config import RUN_FILES, TrainConfig
from mrsched_gym.errors import InputError, MissingExtraError


def durable_write(path: Path, write: Callable[[str], None]) -> Path:
    """Write ``path`` so that a kill at any instant leaves the old file or the new one, never a
    cut one (:func:`mrsched_gym.results.durable_write`, the package's one durable writer):
    ``write(tmp)`` writes a temporary file in the same folder, which is synced and renamed."""
    from mrsched_gym.results import durable_write as write_durably
    return write_durably(path, write)


def durable_text(path: Path, text: str) -> Path:
    """:func:`durable_write` of a text file (UTF-8)."""
    return durable_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def save_checkpoint(model, path: Path) -> Path:
    """``model.save`` through :func:`durable_write`: a kill during a save leaves the previous
    checkpoint whole."""
    return durable_write(path, lambda tmp: model.save(tmp))


def write_state(out: Path, state: dict) -> None:
    """Write the learning curve (``evaluations.csv``) and the state a resumed run continues from
    (``state.json``), durably."""
    from mrsched_gym.results import csv_text, json_safe
    durable_text(out / "evaluations.csv", csv_text(state["history"]))
    durable_text(out / "state.json", json.dumps(json_safe(
        {k: v for k, v in state.items() if k != "t0"}), indent=1))


def read_state(path: Path) -> dict:
    """A run's ``state.json`` (history, best, best step), checked.

    Raises:
        InputError: The file is cut, not JSON, or not a run's state (naming it).
    """
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InputError(f"{path}: not a readable training state ({e}); resume from a "
                         f"checkpoint in another folder or start again with --overwrite"
                         ) from None
    hist = old.get("history") if isinstance(old, dict) else None
    best = old.get("best") if isinstance(old, dict) else None
    if not isinstance(hist, list) or not all(
            isinstance(h, dict) and isinstance(h.get("step"), int)
            and isinstance(h.get("wall_s"), (int, float)) for h in hist) \
            or not (best is None or isinstance(best, (int, float))):
        raise InputError(f"{path}: not a training state (history of evaluations, best); "
                         f"resume from a checkpoint in another folder or start again with "
                         f"--overwrite")
    return old


def load_resume(path: str | Path, venv, numerics: str):
    """The checkpoint to resume from, attached to the training envs.

    Raises:
        InputError: It is missing, not a checkpoint, or trained on another observation or
            action space (one line naming the file).
    """
    path = Path(path)
    if not path.is_file():
        from mrsched_gym.errors import not_a_file
        raise InputError(f"--resume {path}: {not_a_file(path, 'checkpoint')} (a run writes "
                         f"OUT/NAME/last_model.zip)")
    from mrsched_gym.agents.policy import load_sb3
    try:
        if numerics == "fast":
            from mrsched_gym.agents.networks import NumpyRolloutPPO
            return NumpyRolloutPPO.load(str(path), env=venv, device="cpu")
        return load_sb3(path, venv)
    except MissingExtraError:
        raise
    except Exception as e:  # noqa: BLE001 - SB3 raises many kinds on a bad zip: one line
        msg = " ".join(str(e).split())[:300]
        raise InputError(f"--resume {path}: cannot resume from it ({type(e).__name__}: {msg}); "
                         f"it must be a MaskablePPO / PPO checkpoint of this config's env and "
                         f"network") from None


def clear_run(out: Path) -> None:
    """Remove what a run wrote into ``out`` (:data:`RUN_FILES` and ``tb/``), nothing else."""
    import shutil
    for f in RUN_FILES:
        p = out / f
        if p.is_file() or p.is_symlink():
            p.unlink()
    tb = out / "tb"
    if tb.is_symlink():
        tb.unlink()
    elif tb.is_dir():
        shutil.rmtree(tb)


def baseline_means(cfg: TrainConfig, out: Path) -> dict[str, float]:
    """The evaluation baselines' mean headline on the validation seeds (with a pool of worlds:
    id -> baseline -> mean), computed once and kept in ``baselines.json`` under a key of what
    they depend on."""
    path = out / "baselines.json"
    key = {"env": cfg.env, "env_kwargs": cfg.env_kwargs, "seed_start": cfg.eval.seed_start,
           "n_seeds": cfg.eval.n_seeds, "baselines": list(cfg.eval.baselines)}
    if cfg.worlds is not None:
        key = dict(key, env=list(cfg.worlds.ids), env_kwargs={})
        if cfg.worlds.overrides:
            key["overrides"] = cfg.worlds.overrides
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            data = None                         # cut or corrupt: computed again below
        if isinstance(data, dict) and data.get("key") == key and "means" in data:
            return data["means"]
    from mrsched_gym.evaluate import evaluate, scenario_of
    from mrsched_gym.results import summarize
    seeds = range(cfg.eval.seed_start, cfg.eval.seed_start + cfg.eval.n_seeds)
    if cfg.worlds is not None:                 # id -> baseline -> mean headline
        means: dict = {}
        for env_id in cfg.worlds.ids:
            hl = scenario_of(env_id).reward.headline
            recs = evaluate(cfg.eval.baselines, [env_id], seeds, workers=1, progress=False,
                            env_kwargs=cfg.worlds.overrides.get(env_id))
            means[env_id] = {r["policy"]: r[f"{hl}_mean"] for r in summarize(recs)}
        durable_text(path, json.dumps({"key": key, "headline": "per id", "means": means},
                                      indent=1))
        return means
    headline = scenario_of(cfg.env).reward.headline
    recs = evaluate(cfg.eval.baselines, [cfg.env], seeds, workers=1, progress=False,
                    env_kwargs=cfg.env_kwargs) if cfg.eval.baselines else []
    means = {r["policy"]: r[f"{headline}_mean"] for r in summarize(recs)}
    durable_text(path, json.dumps({"key": key, "headline": headline, "means": means}, indent=1))
    return means
