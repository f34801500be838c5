"""Training of learned schedulers: ``mrsched-gym train CONFIG``.

CleanRL-shaped: one config, one function (:func:`train`, with its building blocks beside it,
below) that reads top to bottom — seed everything, build the vectorised envs, build the model
(or load it to resume), learn with three callbacks (progress bar, evaluation against the
baselines, checkpoints), save. The algorithms are sb3-contrib's MaskablePPO (the env's
``action_masks()``) and SB3's PPO (masking inside
:class:`~mrsched_gym.agents.networks.SetPolicyPPO`'s head, or the env's invalid = skip rule for
the flat network).

Configs live in ``configs/agents/*.yaml``; every field is documented in :class:`TrainConfig` and
in the bundled files. An output folder holds::

    config.yaml          the resolved config (what was run)
    baselines.json       the baselines' headline metric on the validation seeds
    evaluations.csv      the learning curve: step, wall time, agent mean +- CI on those seeds
    learning_curve.png   the same, with the baselines as horizontal lines
    best_model.zip       the checkpoint with the lowest validation mean so far (an SB3 zip:
                         a pickle, so load trusted files only)
    best_model.npz       the same policy's actor as numpy weights and JSON (set networks;
                         no pickle, no torch): ``agent:OUT/NAME/best_model.npz``
    last_model.zip       the newest checkpoint (written at each evaluation), to resume from
    final_model.zip      the model after the last step
    imitate.json         with an ``imitate`` section: one row per DAgger round
    tb/                  TensorBoard logs (``tensorboard --logdir OUT/tb``): every evaluation

A run locks its folder while it runs; a folder that holds a run is refused unless the run is
resumed (``--resume``) or replaced (``--overwrite``, which removes only the files above); the
checkpoints and state files are replaced durably (temporary file, fsync, rename), so a kill
leaves the previous version whole. The run name (``name:``) is a slug, the folder's name
inside ``--out``.

Seeds: the training envs reset with seeds ``TRAIN_SEED_BASE + 1000 * seed + i`` (env ``i``) and
continue their own streams after that, so they never replay the validation seeds
(``eval.seed_start``...), the leaderboard's (0-19) nor the held-out test seeds (100-119): no
seed below 1,000,000; the imitation envs of an ``imitate`` section reset from
``TRAIN_SEED_BASE + 1000 * seed + 500 + i``. A fixed seed
with ``torch_threads: 1`` and ``vec_env: dummy`` reproduces a run exactly (tested).

The parts: :mod:`~mrsched_gym.agents.training.train_config` (the config),
:mod:`~mrsched_gym.agents.training.train_model` (envs, model, evaluation),
:mod:`~mrsched_gym.agents.training.train_callbacks` (progress, evaluation, warm-up),
:mod:`~mrsched_gym.agents.training.train_files` (checkpoints, state, resume) and
:mod:`~mrsched_gym.agents.training.learning_curves` (figures); their public names are importable
from here.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from mrsched_gym.agents.rules import TRAINED_RULES
from mrsched_gym.agents.training.learning_curves import (
    curve_metric,
    learning_curve_figure,
    plot_learning_curves,
)
from mrsched_gym.agents.training.train_callbacks import is_value_parameter, make_callbacks
from mrsched_gym.agents.training.train_checks import check_same_network, config_network
from mrsched_gym.agents.training.train_config import (
    ALGOS,
    MAX_RUN_NAME,
    PPO_KEYS,
    RUN_FILES,
    RUN_MARKERS,
    RUN_NAME,
    TRAIN_SEED_BASE,
    EvalConfig,
    TrainConfig,
    bundled_configs,
    config_dict,
    load_config,
    resolved_numerics,
)
from mrsched_gym.agents.training.train_files import (
    baseline_means,
    clear_run,
    durable_text,
    durable_write,
    load_resume,
    read_state,
    save_checkpoint,
)
from mrsched_gym.agents.training.train_model import (
    LinearSchedule,
    build_model,
    evaluate_model,
    init_weights,
    make_vec_env,
    set_numerics,
)
from mrsched_gym.config import ConfigError
from mrsched_gym.config.bounded_yaml import BoundedLoader
from mrsched_gym.errors import InputError, MissingExtraError, install_hint
from mrsched_gym.results import excerpt

#: Fields of a training config that ``--resume`` lets change: the length of the run.
RESUME_MAY_CHANGE = ("total_timesteps",)


def check_unchanged(before: dict[str, Any], now: dict[str, Any], saved: Path) -> None:
    """Refuse to resume a run whose saved config (``before``) differs from ``now`` in a field
    other than :data:`RESUME_MAY_CHANGE` (numbers compared as numbers: ``3e-4`` == 0.0003).

    Raises:
        ConfigError: Naming every changed field with both values (at most four shown).
    """
    from mrsched_gym.results import header_diff
    old = {k: v for k, v in as_numbers(before).items() if k not in RESUME_MAY_CHANGE}
    new = {k: v for k, v in as_numbers(now).items() if k not in RESUME_MAY_CHANGE}
    changes = header_diff(old, new)
    if changes:
        shown = "; ".join(changes[:4]) + (f" (and {len(changes) - 4} more)"
                                          if len(changes) > 4 else "")
        raise ConfigError(f"--resume: this config changes the run {saved} records: {shown}; "
                          "resume with the run's own config (that file), or pass "
                          "--allow-changes to continue with the new settings")


def read_run_config(saved: Path) -> dict[str, Any] | None:
    """A run's saved ``config.yaml`` as plain data (None: empty).

    Raises:
        InputError: It cannot be read or is not a mapping.
    """
    try:
        before = yaml.load(saved.read_text(encoding="utf-8"),  # noqa: S506 (safe, bounded)
                           Loader=BoundedLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise InputError(f"{saved}: not a readable config ({' '.join(str(e).split())[:200]}); "
                         f"resume into another folder or start again with --overwrite") from None
    if not isinstance(before, (dict, type(None))):
        raise InputError(f"{saved}: not a training config (a mapping of fields); resume into "
                         f"another folder or start again with --overwrite")
    return before


def check_resume_source(cfg: TrainConfig, resume: Path, out: Path, allow_changes: bool) -> None:
    """Refuse to resume from a checkpoint of another network than ``cfg`` builds, or from
    another run's checkpoint (another folder) whose saved config differs from ``cfg`` (any
    field but the name and :data:`RESUME_MAY_CHANGE`; ``allow_changes`` lets that pass, never
    another network). Both refusals name both runs.

    Raises:
        ConfigError: The checkpoint is another network's, or another run's of other settings.
    """
    origin = resume.resolve().parent
    here = out.resolve()
    theirs = f"the run in {origin}" if origin != here else "this run"
    try:
        check_same_network(resume, config_network(cfg.policy, cfg.hidden, cfg.net_arch,
                                                  cfg.value_arch), "its checkpoint")
    except ValueError as e:
        raise ConfigError(f"--resume {resume}: {theirs} trained another network: {e} (this run: "
                          f"{here}); resume with that run's config, or start from its weights "
                          "with init_from") from None
    other = origin / "config.yaml"
    if origin == here or allow_changes or not other.is_file():
        return
    before = {k: v for k, v in (read_run_config(other) or {}).items() if k != "name"}
    now = {k: v for k, v in config_dict(cfg).items() if k != "name"}
    try:
        check_unchanged(before, now, other)
    except ConfigError as e:
        raise ConfigError(f"{e} (the checkpoint is the run in {origin}'s; this run is {here})"
                          ) from None


def as_numbers(x: Any) -> Any:
    """``x`` with text that reads as a number (YAML reads ``3e-4`` as text) as that number,
    recursively, so that equal settings compare equal (``1 == 1.0`` already)."""
    if isinstance(x, dict):
        return {k: as_numbers(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [as_numbers(v) for v in x]
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return x
    return x


# ---------------------------------------------------------------------- the run
def train(cfg: TrainConfig, out_dir: str | Path = "runs", resume: str | Path | None = None,
          progress: bool = True, overwrite: bool = False, allow_changes: bool = False
          ) -> dict[str, Any]:
    """Train (or resume) one run; returns a summary (paths, best validation mean, history).

    The run's folder ``out_dir/cfg.name`` is locked while it runs (a second run into it is
    refused); a folder that holds a run already is refused unless ``resume`` (continue it) or
    ``overwrite`` (replace what a run writes there, :data:`RUN_FILES` and ``tb/``, nothing
    else). Checkpoints and state files are written durably (:func:`durable_write`).

    Args:
        cfg: The run's config (:func:`load_config`).
        out_dir: Parent folder; the run writes to ``out_dir/cfg.name``.
        resume: A checkpoint to continue from (usually ``OUT/last_model.zip``): its weights,
            optimiser state and step count are restored and training continues to
            ``total_timesteps``. The envs restart from fresh episodes, so a resumed run is not
            bit-identical to an uninterrupted one.
        progress: Show the progress bar.
        overwrite: Replace the run the folder holds.
        allow_changes: With ``resume``: continue although ``cfg`` changes settings of the run
            its saved ``config.yaml`` records (any field but :data:`RESUME_MAY_CHANGE`);
            without it such a change is refused, before anything is written.

    Raises:
        InputError: The folder holds a run (without ``resume`` / ``overwrite``), is busy, is
            a link or a file, or the checkpoint or state to resume from is missing or
            unreadable (one line naming the file).
        ConfigError: The config (its ``name`` included), or the folder's saved config, is
            invalid.
    """
    try:
        import torch  # noqa: F401
        from sb3_contrib import MaskablePPO  # noqa: F401
    except ImportError as e:
        raise MissingExtraError(f"training needs the rl extra: {install_hint('rl')}") from e
    if not isinstance(cfg.name, str) or not RUN_NAME.fullmatch(cfg.name) \
            or cfg.name in (".", "..") or len(cfg.name) > MAX_RUN_NAME:
        raise ConfigError(f"name: the run's folder inside --out: letters, digits, '.', '_' and "
                          f"'-' only, at most {MAX_RUN_NAME} characters, not '.' or '..'; got "
                          f"{excerpt(cfg.name, 60)}")
    if resume is not None and overwrite:
        raise InputError("--resume continues the run in the folder, --overwrite replaces it: "
                         "give one")
    parent = Path(out_dir)
    out = parent / cfg.name
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise InputError(f"{out}: the run's folder is a {'link' if out.is_symlink() else 'file'}"
                         f"; remove it or use another --out or name")
    if resume is not None and not Path(resume).is_file():
        raise InputError(f"--resume {resume}: no such checkpoint (a run writes "
                         f"OUT/NAME/last_model.zip)")
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as e:
        raise InputError(f"{out}: cannot write the run's folder ({e.strerror})") from None
    import fcntl
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise InputError(f"{out}: another training run is writing to this folder; wait for it "
                         f"or use another --out or name") from None
    try:                                        # the lock is the folder's own: no lock file
        held = [f for f in RUN_MARKERS if (out / f).exists()]
        if held and resume is None and not overwrite:
            raise InputError(f"{out} holds a run ({', '.join(held)}): --resume "
                             f"{out / 'last_model.zip'} continues it, --overwrite replaces it, "
                             f"or choose another --out or name")
        for f in RUN_FILES:                     # what a killed save left (ours: we hold the lock)
            for stale in out.glob(f".{f}.*.tmp"):
                stale.unlink()
        if overwrite:
            clear_run(out)
        return _train(cfg, out, resume, progress, allow_changes)
    except BaseException:
        if created:                             # refused before writing: leave no empty folder
            with contextlib.suppress(OSError):  # (rmdir removes only an empty one)
                out.rmdir()
        raise
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _train(cfg: TrainConfig, out: Path, resume: str | Path | None, progress: bool,
           allow_changes: bool = False) -> dict[str, Any]:
    """:func:`train` in its locked folder ``out``."""
    import torch
    from stable_baselines3.common.utils import set_random_seed

    torch.set_num_threads(cfg.torch_threads)
    set_random_seed(cfg.seed)
    numerics = resolved_numerics(cfg)
    saved = out / "config.yaml"
    prev = out / "state.json"
    if resume is not None and prev.is_file() and not saved.is_file() and not allow_changes:
        raise InputError(f"{saved} is missing: the settings the run in {out} trained under "
                         "cannot be checked against this config; put it back, or resume with "
                         "--allow-changes")
    if resume is not None and saved.is_file() and not prev.is_file() \
            and (out / "evaluations.csv").is_file():
        raise InputError(f"{prev} is missing: the run's evaluations and best would start again; "
                         "put it back, resume into another folder, or start again with "
                         "--overwrite")
    old_state = read_state(prev) if resume is not None and prev.is_file() else None
    if resume is not None and saved.is_file():
        before = read_run_config(saved)
        rules_before = {k: (before or {}).get(k) for k in TRAINED_RULES}
        rules_before = {k: v for k, v in rules_before.items() if v is not None}
        if rules_before != cfg.rules():
            raise ConfigError(f"affinity / slow_start: the run in {out} trained under "
                              f"{rules_before or 'no rules'}, this config says "
                              f"{cfg.rules() or 'no rules'}: set the same to resume it")
        old_numerics = (before or {}).get("numerics")
        if old_numerics in ("exact", "fast") and old_numerics != numerics:
            raise ConfigError(f"numerics: the run in {out} trained with {old_numerics}, this "
                              f"config says {numerics}: set numerics: {old_numerics} to resume "
                              "it")
        if not allow_changes:
            check_unchanged(before or {}, config_dict(cfg), saved)
    if resume is not None:
        check_resume_source(cfg, Path(resume), out, allow_changes)
    if resume is not None and cfg.imitate is not None and cfg.imitate.ppo_batches:
        raise ConfigError("imitate.ppo_batches: a resumed run has no labelled decisions (they "
                          "are not saved in checkpoints); train from the start")
    venv = make_vec_env(cfg)
    tb = str(out / "tb") if cfg.tensorboard else None
    state = {"history": [], "best": math.inf, "best_step": None, "wall0": 0.0}
    model = None
    try:
        if resume is not None:                  # checked before anything is written
            model = load_resume(resume, venv, numerics)
        durable_text(saved, yaml.safe_dump(config_dict(cfg), sort_keys=False))
        baselines = baseline_means(cfg, out)
    except BaseException:
        venv.close()
        raise
    if model is not None:
        model.tensorboard_log = tb
        set_numerics(model, cfg)
        model.mrsched_rules = cfg.rules()       # the rules its envs train under (checked above)
        if old_state is not None:
            old = old_state
            step = int(model.num_timesteps)         # evaluations after the checkpoint run again
            hist = [h for h in old.get("history") or [] if h["step"] <= step]
            later = len(old.get("history") or []) - len(hist)
            if later:
                best_step = old.get("best_step")
                kept = "" if best_step is None or best_step <= step else (
                    f"; best_model.zip (step {best_step:,}) stays the best until an evaluation "
                    "beats it")
                print(f"note: --resume {resume}: the checkpoint is at step {step:,}; the run's "
                      f"{later} evaluation{'s' if later > 1 else ''} after it are dropped from "
                      f"its history and run again{kept}", file=sys.stderr)
            state.update(history=hist, best_step=old.get("best_step"),
                         wall0=hist[-1]["wall_s"] if hist else 0.0,
                         best=math.inf if old.get("best") is None else old["best"])
    else:
        model = build_model(cfg, venv, tb)
    if tb is None:          # SB3's default logger makes a folder in $TMPDIR: none outside out
        from stable_baselines3.common.logger import Logger
        model.set_logger(Logger(folder=None, output_formats=[]))
    state["t0"] = time.perf_counter()
    labelled: dict = {}                         # the imitation's decisions (ppo_batches)
    callbacks, run_eval = make_callbacks(cfg, out, baselines, state, progress, labelled)
    if resume is None and cfg.imitate is not None:
        from mrsched_gym.agents.training.imitate import imitate
        rows = imitate(model, cfg, TRAIN_SEED_BASE + 1000 * cfg.seed + 500, progress,
                       labelled=labelled)
        durable_text(out / "imitate.json", json.dumps(rows, indent=1))
    if resume is None and (cfg.imitate is not None or cfg.init_from or cfg.prior is not None):
        run_eval(model, None)                   # the fitted or loaded policy, or the rule, at
                                                # step 0: the best checkpoint is never worse
                                                # than the start
    torch.set_num_threads(cfg.torch_threads)    # loading a checkpoint (init_from, teachers)
                                                # sets one thread
    remaining = cfg.total_timesteps - model.num_timesteps
    if remaining > 0:
        model.learn(remaining, callback=callbacks, tb_log_name=cfg.name,
                    reset_num_timesteps=resume is None)
    if not state["history"] or state["history"][-1]["step"] != model.num_timesteps:
        run_eval(model, None)                   # nothing was learned (resumed at the total)
    save_checkpoint(model, out / "final_model.zip")
    venv.close()
    pool = cfg.worlds is not None
    plot_learning_curves({cfg.name: state["history"]},
                         {"best baseline": 1.0} if pool else baselines,
                         out / "learning_curve.png",
                         title=f"{cfg.name} on {'a pool of worlds' if pool else cfg.env}",
                         metric="mean over ids of agent / best baseline" if pool
                         else curve_metric(cfg.env))
    return {"out": str(out), "best": state["best"], "best_step": state["best_step"],
            "baselines": baselines, "history": state["history"],
            "best_model": str(out / "best_model.zip"), "final_model": str(out / "final_model.zip"),
            "best_numpy": str(out / "best_model.npz") if (out / "best_model.npz").exists()
            else None}


__all__ = ["ALGOS", "PPO_KEYS", "RESUME_MAY_CHANGE", "RUN_FILES", "RUN_MARKERS",
           "TRAIN_SEED_BASE", "EvalConfig", "check_unchanged",
           "LinearSchedule", "TrainConfig", "build_model", "bundled_configs", "config_dict",
           "curve_metric", "durable_text", "durable_write", "evaluate_model", "init_weights",
           "is_value_parameter", "learning_curve_figure", "load_config", "make_vec_env",
           "plot_learning_curves", "resolved_numerics", "save_checkpoint", "set_numerics", "train"]
