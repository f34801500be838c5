"""Training of learned schedulers: ``mrsched-gym train CONFIG``.

CleanRL-shaped: one file, one config, one function (:func:`train`) that reads top to bottom —
seed everything, build the vectorised envs, build the model (or load it to resume), learn with
three callbacks (progress bar, evaluation against the baselines, checkpoints), save. The
algorithms are sb3-contrib's MaskablePPO (the env's ``action_masks()``) and SB3's PPO (masking
inside :class:`~mrsched_gym.agents.networks.SetPolicyPPO`'s head, or the env's invalid = skip
rule for the flat network).

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
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
import yaml

from mrsched_gym.agents.imitate import MAX_ENVS, ImitateConfig
from mrsched_gym.agents.worlds import WorldsConfig
from mrsched_gym.config import ConfigError, bundled_names, config_source, from_dict, parse_yaml
from mrsched_gym.errors import InputError, MissingExtraError, install_hint

TRAIN_SEED_BASE = 1_000_000
#: A run name: the name of its folder inside ``--out``.
RUN_NAME = re.compile(r"[A-Za-z0-9._-]+")
#: What a run writes into its folder: the files ``--overwrite`` replaces (nothing else there is
#: touched), and the ones whose presence means the folder holds a run.
RUN_FILES = ("config.yaml", "baselines.json", "evaluations.csv", "learning_curve.png",
             "best_model.zip", "best_model.npz", "last_model.zip", "final_model.zip", "state.json",
             "imitate.json")
RUN_MARKERS = ("state.json", "evaluations.csv", "best_model.zip", "last_model.zip",
               "final_model.zip")
Algo = Literal["maskable_ppo", "ppo"]
PolicyKind = Literal["set", "flat"]
ALGOS: tuple[str, ...] = get_args(Algo)
POLICIES: tuple[str, ...] = get_args(PolicyKind)
#: PPO hyper-parameters a config may set (passed to the algorithm's constructor unchanged).
PPO_KEYS = ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda",
            "clip_range", "ent_coef", "vf_coef", "max_grad_norm", "target_kl",
            "normalize_advantage")


@dataclass
class EvalConfig:
    """Periodic evaluation on validation seeds through the evaluation harness.

    Attributes:
        every_steps: Evaluate (and write ``last_model.zip``) every this many env steps; 0 = only
            at the end.
        seed_start: First validation seed.
        n_seeds: Number of validation seeds (the same worlds at every evaluation).
        baselines: Baselines evaluated once on the same seeds, logged beside the agent.
    """

    every_steps: int = 100_000
    seed_start: int = 500
    n_seeds: int = 10
    baselines: list[str] = field(default_factory=lambda: ["edf", "fifo", "fair"])


@dataclass
class TrainConfig:
    """One training run. Every field can be set in the YAML file.

    Attributes:
        name: Run name (output sub-folder and TensorBoard run name).
        env: Env id, bundled scenario name or scenario YAML path.
        env_kwargs: Scenario overrides (``{"workload.load": 0.8}``) for training and evaluation.
        algo: ``maskable_ppo`` (sb3-contrib, uses the env's masks) or ``ppo`` (SB3).
        policy: ``set`` (permutation-aware, :mod:`~mrsched_gym.agents.networks`) or ``flat``
            (every key flattened into an MLP).
        hidden: Width of the set network's layers.
        net_arch: Flat policy only: hidden layers of its policy and value MLPs.
        value_arch: Set policy only: hidden layers of the value MLP over the set features.
        seed: Seeds the model (torch, numpy, random) and the training envs.
        total_timesteps: Env steps (scheduling decisions) to train for, summed over envs.
        n_envs: Parallel environments (one rollout = ``n_envs * ppo.n_steps`` steps).
        vec_env: ``dummy`` (in-process, deterministic) or ``subproc`` (one process per env).
        torch_threads: ``torch.set_num_threads``; 1 is fastest for these small networks on CPU.
        work_conserving: Never skip at a schedule decision that has a candidate (skip stays
            legal at admission / preemption decisions). MaskablePPO: through the mask
            (:class:`~mrsched_gym.agents.policy.WorkConserving`, the env's default mask);
            the set policy also in its head. ``false``: skip offered at every decision (the
            env's ``allow_idle=True`` mask, :class:`~mrsched_gym.agents.policy.AllowIdle`), for
            agents that may wait (delay scheduling). Stored in the checkpoint and applied again
            at evaluation, whatever the evaluation env's mask.
        normalize_reward: Scale rewards by a running estimate of the return's standard
            deviation (SB3 ``VecNormalize(norm_obs=False)``; training only, the policy never
            sees it). The per-decision rewards are small (job-hours), which otherwise starves
            the value loss.
        tensorboard: Write TensorBoard logs to ``OUT/tb``.
        lr_schedule: ``constant`` or ``linear`` (``ppo.learning_rate`` decayed linearly to 0
            at ``total_timesteps``).
        ppo: PPO hyper-parameters (:data:`PPO_KEYS`, SB3 names and meanings).
        eval: Periodic evaluation (:class:`EvalConfig`).
        worlds: Train on a pool of randomised worlds instead of ``env`` alone
            (:class:`~mrsched_gym.agents.worlds.WorldsConfig`, the generalist): observations
            padded to the pool's maxima, nodes pooled with a mask. Validation then runs
            ``eval.n_seeds`` seeds on every id of the pool and reports the mean over ids of the
            agent's mean headline / the best evaluation baseline's (1 = on par).
        init_from: Start from the weights of this checkpoint (a path or ``agent:NAME`` of a
            shipped agent; same network shapes) instead of a fresh network; "" = fresh.
        imitate: Fit the first policy to teachers' actions before PPO (behaviour cloning,
            DAgger; :class:`~mrsched_gym.agents.imitate.ImitateConfig`; MaskablePPO with the set
            policy). Validation then starts with the fitted policy at step 0.
        value_warmup_steps: For the first this many PPO env steps only the value function
            learns (the value MLP and its output layer; the shared set features and the policy
            head stay fixed), so that PPO starting from a fitted or loaded policy first fits
            its critic to the new worlds and reward scales before moving the policy. Decided per
            rollout: the updates after the rollouts that end within it are value-only. 0 = none.
        numerics: ``exact`` runs the float operations of the runs that trained the shipped
            agents, so a re-run reproduces their weights bit for bit. ``fast`` (MaskablePPO with
            the set policy only) computes the same functions faster per core: the rollouts
            in numpy, from the observation to the rollout buffer
            (:mod:`~mrsched_gym.agents.numpy_rollout`), and in the
            updates only the candidate rows encoded, the context multiplied once per observation
            (:func:`~mrsched_gym.agents.set_layers.split_affine`) and each distinct node row
            encoded once (``SetEncoding.fast_numerics``). Its floats
            differ in the last bits, so a ``fast`` run differs from an ``exact`` run with the
            same seed; it is as reproducible. Not saved in checkpoints (inference is the same).
            ``auto`` (the default) is ``fast`` where it applies and ``exact`` elsewhere
            (:meth:`validate` resolves it); the configs of the shipped agents name theirs, so a
            change of the default cannot change a re-run, and ``--resume`` refuses a run whose
            saved config used other numerics.
    """

    name: str = "agent"
    env: str = "mrsched/Hadoop-v0"
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    algo: Algo = "maskable_ppo"
    policy: PolicyKind = "set"
    hidden: int = 64
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    value_arch: list[int] = field(default_factory=lambda: [64, 64])
    seed: int = 0
    total_timesteps: int = 1_000_000
    n_envs: int = 4
    vec_env: Literal["dummy", "subproc"] = "dummy"
    torch_threads: int = 1
    work_conserving: bool = True
    normalize_reward: bool = True
    tensorboard: bool = True
    lr_schedule: Literal["constant", "linear"] = "constant"
    ppo: dict[str, Any] = field(default_factory=dict)
    eval: EvalConfig = field(default_factory=EvalConfig)
    worlds: WorldsConfig | None = None
    init_from: str = ""
    numerics: Literal["auto", "exact", "fast"] = "auto"
    imitate: ImitateConfig | None = None
    value_warmup_steps: int = 0

    def validate(self, where: str = "config") -> TrainConfig:
        """Check every field (and that the env and the evaluation baselines exist).

        Args:
            where: Where the config comes from, for error messages.

        Returns:
            ``self``, with ``numerics: auto`` resolved to ``fast`` or ``exact``.

        Raises:
            ConfigError: A field is invalid; the message names it.
        """
        def bad(fld: str, msg: str) -> None:
            raise ConfigError(f"{where}: {fld}: {msg}")
        if not isinstance(self.name, str) or not RUN_NAME.fullmatch(self.name) \
                or self.name in (".", ".."):
            bad("name", f"the run's folder inside --out: letters, digits, '.', '_' and '-' "
                        f"only, not '.' or '..'; got {self.name!r}")
        if self.algo not in ALGOS:
            bad("algo", f"must be one of {', '.join(ALGOS)}; got {self.algo!r}")
        if self.policy not in POLICIES:
            bad("policy", f"must be one of {', '.join(POLICIES)}; got {self.policy!r}")
        if self.lr_schedule not in ("constant", "linear"):
            bad("lr_schedule", f"must be constant or linear; got {self.lr_schedule!r}")
        if self.vec_env not in ("dummy", "subproc"):
            bad("vec_env", f"must be dummy or subproc; got {self.vec_env!r}")
        if self.numerics not in ("auto", "exact", "fast"):
            bad("numerics", f"must be auto, exact or fast; got {self.numerics!r}")
        self.numerics = resolved_numerics(self)  # so a run's config.yaml says which
        if self.numerics == "fast" and (self.algo, self.policy) != ("maskable_ppo", "set"):
            bad("numerics", "fast numerics need algo maskable_ppo and policy set")
        for f in ("total_timesteps", "n_envs", "torch_threads", "hidden"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                bad(f, f"must be a positive integer; got {v!r}")
        v = self.value_warmup_steps
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            bad("value_warmup_steps", f"must be an integer >= 0; got {v!r}")
        if self.n_envs > MAX_ENVS:
            bad("n_envs", f"at most {MAX_ENVS} (the training envs' seeds must stay apart from "
                          f"the imitation envs'); got {self.n_envs}")
        if self.work_conserving and self.algo == "ppo" and self.policy == "flat":
            bad("work_conserving", "plain PPO has no masks: use maskable_ppo or the set policy")
        for k in self.ppo:
            if k not in PPO_KEYS:
                bad(f"ppo.{k}", f"unknown hyper-parameter; known: {', '.join(PPO_KEYS)}")
        e = self.eval
        if e.every_steps < 0 or e.n_seeds < 1:
            bad("eval", "every_steps must be >= 0 and n_seeds >= 1")
        if e.seed_start + e.n_seeds > TRAIN_SEED_BASE:
            bad("eval.seed_start", f"validation seeds must stay below {TRAIN_SEED_BASE}")
        if self.worlds is not None:
            try:
                self.worlds.validate()
            except ValueError as ex:
                bad("worlds", str(ex))
            if self.policy != "set":
                bad("worlds", "a pool of worlds needs the set policy (sizes differ)")
        if self.imitate is not None:
            if (self.algo, self.policy) != ("maskable_ppo", "set"):
                bad("imitate", "imitation needs algo maskable_ppo and policy set")
            try:
                self.imitate.validate(list(self.worlds.ids) if self.worlds else [self.env])
            except ValueError as ex:
                raise ConfigError(f"{where}: {ex}") from None
        from mrsched_gym.evaluate import check_policy, scenario_of
        try:
            scenario_of(self.env)
        except Exception as ex:  # noqa: BLE001 - re-raised with the field's name
            bad("env", str(ex))
        for b in e.baselines:
            try:
                check_policy(b)
            except Exception as ex:  # noqa: BLE001
                bad("eval.baselines", str(ex))
        return self


def resolved_numerics(cfg: TrainConfig) -> str:
    """``cfg.numerics`` with ``auto`` resolved: ``fast`` for MaskablePPO with the set policy,
    ``exact`` otherwise."""
    if cfg.numerics != "auto":
        return cfg.numerics
    return "fast" if (cfg.algo, cfg.policy) == ("maskable_ppo", "set") else "exact"


def bundled_configs() -> list[str]:
    """Names of the bundled training configs (``configs/agents/*.yaml``)."""
    return bundled_names("agents")


def load_config(path_or_name: str | Path, **overrides: Any) -> TrainConfig:
    """Read a training config (a YAML path or a bundled name), apply overrides, validate."""
    p, text = config_source(path_or_name, "agents")
    data = parse_yaml(text, p) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: a training config is a mapping of fields")
    for k, v in overrides.items():
        if v is None:
            continue
        if "." in k:
            a, b = k.split(".", 1)
            data.setdefault(a, {})[b] = v
        else:
            data[k] = v
    return from_dict(TrainConfig, data, p).validate(p)


def config_dict(cfg: TrainConfig) -> dict:
    return dataclasses.asdict(cfg)


# ---------------------------------------------------------------------- building blocks
def make_vec_env(cfg: TrainConfig, n_envs: int | None = None, seed_offset: int = 0):
    """The training envs: ``n_envs`` copies, env ``i`` seeded
    ``TRAIN_SEED_BASE + 1000*seed + i``, made with ``lean_info=True`` (a pool of worlds passes
    it to its worlds): nothing in training reads the rest of the step's info, and the episodes
    are the same."""
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from mrsched_gym.agents.networks import InProcessVecEnv, RewardNormalize
    from mrsched_gym.agents.policy import AllowIdle, WorkConserving
    from mrsched_gym.evaluate import make_env
    env, kw = cfg.env, {**cfg.env_kwargs, "lean_info": True}
    # MaskablePPO learns from the mask: work-conserving (the env's default, kept over a pool of
    # worlds) or, with work_conserving: false, skip offered at every decision (allow_idle)
    wrap = None if cfg.algo != "maskable_ppo" else \
        WorkConserving if cfg.work_conserving else AllowIdle
    if cfg.worlds is not None:
        from mrsched_gym.agents.worlds import WorldPool
        worlds = cfg.worlds

        def factory():
            return WorldPool(worlds, lean_info=True)
    else:
        def factory():
            return make_env(env, kw)
    venv = sb3_make_vec_env(factory, n_envs=n_envs or cfg.n_envs,
                            wrapper_class=wrap,
                            seed=TRAIN_SEED_BASE + 1000 * cfg.seed + seed_offset,
                            vec_env_cls=SubprocVecEnv if cfg.vec_env == "subproc"
                            else InProcessVecEnv)
    if cfg.normalize_reward:
        venv = RewardNormalize(venv, norm_obs=False, norm_reward=True,
                               gamma=float(cfg.ppo.get("gamma", 0.99)))
    return venv


class LinearSchedule:
    """``lr * progress_remaining`` (SB3 passes 1 at the start, 0 at the end); picklable.

    Args:
        lr: The initial learning rate.
    """

    def __init__(self, lr: float) -> None:
        self.lr = lr

    def __call__(self, progress_remaining: float) -> float:
        return self.lr * progress_remaining


def build_model(cfg: TrainConfig, venv, tb_dir: str | None = None):
    """A fresh MaskablePPO / PPO model with the configured policy network."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    from mrsched_gym.agents.networks import (
        FlatExtractor,
        NumpyRolloutPPO,
        SetPolicy,
        SetPolicyPPO,
    )
    if cfg.policy == "set":
        policy = SetPolicy if cfg.algo == "maskable_ppo" else SetPolicyPPO
        fkw: dict[str, Any] = dict(hidden=cfg.hidden)
        if cfg.worlds is not None:
            fkw["node_mask"] = True
        pkw = dict(features_extractor_kwargs=fkw,
                   work_conserving=cfg.work_conserving,
                   net_arch=dict(pi=[], vf=list(cfg.value_arch)))
    else:
        policy = "MultiInputPolicy"
        pkw = dict(features_extractor_class=FlatExtractor,
                   net_arch=dict(pi=list(cfg.net_arch), vf=list(cfg.net_arch)))
    algo = PPO if cfg.algo == "ppo" else NumpyRolloutPPO \
        if resolved_numerics(cfg) == "fast" else MaskablePPO
    ppo = dict(cfg.ppo)
    if cfg.lr_schedule == "linear":
        ppo["learning_rate"] = LinearSchedule(float(ppo.get("learning_rate", 3e-4)))
    model = algo(policy, venv, policy_kwargs=pkw, seed=cfg.seed, device="cpu", verbose=0,
                 tensorboard_log=tb_dir, **ppo)
    model.mrsched_work_conserving = cfg.work_conserving     # saved with the checkpoint
    if cfg.init_from:
        init_weights(model, cfg.init_from)
    set_numerics(model, cfg)
    return model


def set_numerics(model, cfg: TrainConfig) -> None:
    """Make ``model`` train with ``cfg.numerics`` (see :class:`TrainConfig`; with ``fast``
    the rollouts are numpy's only end to end when ``model`` is a
    :class:`~mrsched_gym.agents.networks.NumpyRolloutPPO`, as :func:`build_model` makes it
    and :func:`train` loads it to resume)."""
    fast = resolved_numerics(cfg) == "fast"
    model.policy.numpy_rollouts = fast
    model.policy.features_extractor.fast_numerics = fast


def init_weights(model, source: str) -> None:
    """Copy the policy weights of checkpoint ``source`` (a path or ``agent:NAME``) into
    ``model`` (same shapes required, except the context's inputs: forecast steps or an
    ``objective`` key the source did not read start at zero weight, so the new network acts as
    the source did; a longer source forecast is cut, as the agent adapters cut it)."""
    from mrsched_gym.agents.policy import load_sb3
    from mrsched_gym.agents.pretrained import pretrained_path
    path = source[len("agent:"):] if source.startswith("agent:") else source
    path = pretrained_path(path) or path
    src_policy = load_sb3(path).policy
    src = src_policy.state_dict()
    own = model.policy.state_dict()
    h = model.policy.features_extractor.hidden
    blocks_src = _context_blocks(src_policy.observation_space, h)
    blocks_own = _context_blocks(model.policy.observation_space, h)
    for k, v in list(src.items()):
        if k.endswith("global_enc.0.weight") and k in own and v.shape != own[k].shape:
            new = own[k].new_zeros(own[k].shape)
            a = b = 0
            for n_src, n_own in zip(blocks_src, blocks_own, strict=True):
                n = min(n_src, n_own)
                new[:, b:b + n] = v[:, a:a + n]
                a, b = a + n_src, b + n_own
            src[k] = new
    wrong = [k for k in own if k not in src or src[k].shape != own[k].shape]
    if wrong:
        raise ConfigError(f"init_from {source!r}: the network differs ({', '.join(wrong[:3])})")
    model.policy.load_state_dict(src)


def _context_blocks(space, hidden: int) -> tuple[int, ...]:
    """The input blocks of the set network's context layer for an observation ``space``:
    decision, forecast, the decision node's row, the node pool (``hidden``) and the
    objective."""
    return (space["decision"].shape[0], space["forecast"].shape[0], space["nodes"].shape[1],
            hidden, space["objective"].shape[0] if "objective" in space.spaces else 0)


def evaluate_model(model, cfg: TrainConfig, seeds, baselines: dict | None = None
                   ) -> list[float]:
    """The model's headline metric on ``seeds`` through the harness (deterministic actions).

    With a pool of worlds: one value per id of the pool, the agent's mean headline over
    ``seeds`` divided by the best of ``baselines[id]`` (the baselines' means on the same seeds).
    """
    from mrsched_gym.agents.policy import AgentPolicy
    from mrsched_gym.evaluate import run_episode, scenario_of
    if cfg.worlds is None:
        headline = scenario_of(cfg.env).reward.headline
        pol = AgentPolicy(model, cfg.name)
        return [run_episode(cfg.env, pol, s, cfg.env_kwargs)["metrics"][headline]
                for s in seeds]
    from mrsched_gym.agents.numpy_export import export_numpy
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    with tempfile.TemporaryDirectory() as d:             # the numpy actor: same actions, faster
        pol = NumpySetPolicy.load(export_numpy(model, Path(d) / "actor.npz"), cfg.name)
    out = []
    for env_id in cfg.worlds.ids:
        headline = scenario_of(env_id).reward.headline
        vals = [run_episode(env_id, pol, s)["metrics"][headline] for s in seeds]
        ref = min(baselines[env_id].values()) if baselines else 1.0
        out.append(float(np.mean(vals)) / max(ref, 1e-9))
    return out


def _callbacks(cfg: TrainConfig, out: Path, baselines: dict, state: dict, progress: bool,
               labelled: dict):
    from stable_baselines3.common.callbacks import BaseCallback

    from mrsched_gym.evaluate import mean_ci95

    seeds = list(range(cfg.eval.seed_start, cfg.eval.seed_start + cfg.eval.n_seeds))

    class Progress(BaseCallback):
        """A tqdm bar over env steps, with the latest validation result and the best so far
        (shown the moment an evaluation ends, the last one included)."""

        def _on_training_start(self) -> None:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=cfg.total_timesteps, initial=self.model.num_timesteps,
                            disable=not progress, unit="step", desc=cfg.name, smoothing=0.05)
            self.last = self.model.num_timesteps
            self.shown = 0                          # evaluations shown so far
            self._show()

        def _show(self) -> None:
            if len(state["history"]) != self.shown:
                self.shown = len(state["history"])
                h = state["history"][-1]
                self.bar.set_postfix(val=f"{h['mean']:.2f}", best=f"{state['best']:.2f}")

        def _on_step(self) -> bool:
            n = self.model.num_timesteps
            self.bar.update(n - self.last)
            self.last = n
            self._show()
            return True

        def _on_training_end(self) -> None:
            self.bar.update(self.model.num_timesteps - self.last)
            self._show()
            self.bar.close()

    class EvalVsBaselines(BaseCallback):
        """Evaluate on the validation seeds, log beside the baselines, keep the best checkpoint;
        the last evaluation at the end of training (logged to TensorBoard like the others)."""

        def _on_training_start(self) -> None:
            self.next = (self.model.num_timesteps // cfg.eval.every_steps + 1) \
                * cfg.eval.every_steps if cfg.eval.every_steps else math.inf

        def _on_step(self) -> bool:
            if self.model.num_timesteps >= self.next:
                self.next += cfg.eval.every_steps
                run_eval(self.model, self.logger)
            return True

        def _on_training_end(self) -> None:
            if not state["history"] or state["history"][-1]["step"] != self.model.num_timesteps:
                run_eval(self.model, self.logger)

    def run_eval(model, logger=None) -> None:
        t0 = time.perf_counter()
        vals = evaluate_model(model, cfg, seeds, baselines if cfg.worlds is not None else None)
        mean, ci = mean_ci95(vals)
        step = int(model.num_timesteps)
        row = {"step": step, "wall_s": round(time.perf_counter() - state["t0"] + state["wall0"], 1),
               "mean": mean, "ci95": ci, "eval_s": round(time.perf_counter() - t0, 2)}
        state["history"].append(row)
        if cfg.worlds is not None:
            row.update({f"ratio_{i.split('/')[-1]}": round(v, 4)
                        for i, v in zip(cfg.worlds.ids, vals, strict=True)})
        better = mean < state["best"]
        if better:
            state["best"], state["best_step"] = mean, step
        if logger is not None:
            logger.record("eval/headline_mean", mean)
            logger.record("eval/best", state["best"])
            for b, v in baselines.items():
                if not isinstance(v, dict):
                    logger.record(f"eval/baseline_{b}", v)
            logger.dump(step)
        save_checkpoint(model, out / "last_model.zip")
        if better:
            save_checkpoint(model, out / "best_model.zip")
            from mrsched_gym.agents.numpy_export import export_numpy, has_numpy_actor
            if has_numpy_actor(model):          # the same policy, loadable without pickle
                export_numpy(model, out / "best_model.npz")
        _write_state(out, state)

    class ValueWarmup(BaseCallback):
        """Before each PPO update: freeze every parameter but the value function's while the
        steps so far are within ``cfg.value_warmup_steps`` (frozen parameters get no gradient,
        so Adam leaves them as they are), unfreeze them after."""

        def _on_rollout_end(self) -> None:
            warm = self.model.num_timesteps <= cfg.value_warmup_steps
            for name, p in self.model.policy.named_parameters():
                if not is_value_parameter(name):
                    p.requires_grad_(not warm)

        def _on_step(self) -> bool:
            return True

    class KeepImitating(BaseCallback):
        """After each PPO update (at the next rollout's end, before the next update), steps of
        the imitation loss on the imitation's labelled decisions (``imitate.ppo_batches``)."""

        def _on_training_start(self) -> None:
            from mrsched_gym.agents.imitate import ImitationLoss
            self.loss = ImitationLoss(labelled, cfg.imitate.batch_size, cfg.seed)
            self.first = self.model.num_timesteps

        def _on_rollout_end(self) -> None:
            n = self.model.num_timesteps
            rollout = cfg.n_envs * int(self.model.n_steps)
            if n - rollout > max(self.first, cfg.value_warmup_steps):   # an update happened
                self.logger.record("imitate/loss", self.loss.steps(
                    self.model.policy, self.model.policy.optimizer, cfg.imitate.ppo_batches))

        def _on_step(self) -> bool:
            return True

    extra = [ValueWarmup()] if cfg.value_warmup_steps else []
    if cfg.imitate is not None and cfg.imitate.ppo_batches:
        extra.append(KeepImitating())
    # the evaluation first: at each step and at the end, the bar then shows what it found
    return [EvalVsBaselines(), Progress(), *extra], run_eval


def is_value_parameter(name: str) -> bool:
    """Whether the policy parameter ``name`` belongs to the value function alone (SB3's
    ``mlp_extractor.value_net`` and ``value_net``)."""
    return name.startswith(("mlp_extractor.value_net.", "value_net."))


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


def _write_state(out: Path, state: dict) -> None:
    from mrsched_gym.results import csv_text, json_safe
    durable_text(out / "evaluations.csv", csv_text(state["history"]))
    durable_text(out / "state.json", json.dumps(json_safe(
        {k: v for k, v in state.items() if k != "t0"}), indent=1))


def _read_state(path: Path) -> dict:
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


def _load_resume(path: str | Path, venv, numerics: str):
    """The checkpoint to resume from, attached to the training envs.

    Raises:
        InputError: It is missing, not a checkpoint, or trained on another observation or
            action space (one line naming the file).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"--resume {path}: no such checkpoint (a run writes "
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


def _clear_run(out: Path) -> None:
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


def _baselines(cfg: TrainConfig, out: Path) -> dict[str, float]:
    path = out / "baselines.json"
    key = {"env": cfg.env, "env_kwargs": cfg.env_kwargs, "seed_start": cfg.eval.seed_start,
           "n_seeds": cfg.eval.n_seeds, "baselines": list(cfg.eval.baselines)}
    if cfg.worlds is not None:
        key = dict(key, env=list(cfg.worlds.ids), env_kwargs={})
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
            recs = evaluate(cfg.eval.baselines, [env_id], seeds, workers=1, progress=False)
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


def curve_metric(env: str) -> str:
    """The y-axis label of a learning curve on ``env``: its headline metric, what is averaged
    and which way is better."""
    from mrsched_gym.evaluate import scenario_of
    from mrsched_gym.leaderboard import better_sign
    headline = scenario_of(env).reward.headline
    better = "higher" if better_sign(headline) < 0 else "lower"
    return f"{headline}, mean over validation seeds\n({better} is better)"


def plot_learning_curves(histories: dict[str, list[dict]], baselines: dict[str, float],
                         path: Path, title: str = "", metric: str = "validation mean") -> Path:
    """Write :func:`learning_curve_figure` to ``path``."""
    fig = learning_curve_figure(histories, baselines, title, metric)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def learning_curve_figure(histories: dict[str, list[dict]], baselines: dict[str, float],
                          title: str = "", metric: str = "validation mean"):
    """Validation mean (band: 95% CI) against env steps for each run, baselines as lines, on
    linear axes; ``metric`` names the y axis (the headline metric and what is averaged)."""
    from mrsched_gym.leaderboard import new_figure
    fig = new_figure(8, 4.5)
    ax = fig.add_subplot(111)
    for name, hist in histories.items():
        if not hist:
            continue
        x = np.array([h["step"] for h in hist], float)
        m = np.array([h["mean"] for h in hist], float)
        c = np.nan_to_num(np.array([h["ci95"] if h["ci95"] is not None else np.nan
                                    for h in hist], float))
        ax.plot(x, m, marker=".", label=f"{name} (band: 95% CI)")
        ax.fill_between(x, m - c, m + c, alpha=0.15)
    for i, (b, v) in enumerate(sorted(baselines.items(), key=lambda kv: kv[1])):
        ax.axhline(v, ls="--", lw=1, color=f"C{i + len(histories)}",
                   label=b if "baseline" in b else f"{b} (baseline)")
    ax.set_xlabel("env steps (decisions)")
    ax.set_ylabel(metric)
    values = [h["mean"] for hist in histories.values() for h in hist] + list(baselines.values())
    if values and min(values) >= 0:
        ax.set_ylim(bottom=0)                     # a non-negative metric: from 0
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------- the run
def train(cfg: TrainConfig, out_dir: str | Path = "runs", resume: str | Path | None = None,
          progress: bool = True, overwrite: bool = False) -> dict[str, Any]:
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
            or cfg.name in (".", ".."):
        raise ConfigError(f"name: the run's folder inside --out: letters, digits, '.', '_' and "
                          f"'-' only, not '.' or '..'; got {cfg.name!r}")
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
            _clear_run(out)
        return _train(cfg, out, resume, progress)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _train(cfg: TrainConfig, out: Path, resume: str | Path | None, progress: bool
           ) -> dict[str, Any]:
    """:func:`train` in its locked folder ``out``."""
    import torch
    from stable_baselines3.common.utils import set_random_seed

    torch.set_num_threads(cfg.torch_threads)
    set_random_seed(cfg.seed)
    numerics = resolved_numerics(cfg)
    saved = out / "config.yaml"
    prev = out / "state.json"
    old_state = _read_state(prev) if resume is not None and prev.is_file() else None
    if resume is not None and saved.is_file():
        try:
            before = yaml.safe_load(saved.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            raise InputError(f"{saved}: not a readable config ({' '.join(str(e).split())[:200]}"
                             f"); resume into another folder or start again with --overwrite"
                             ) from None
        if not isinstance(before, (dict, type(None))):
            raise InputError(f"{saved}: not a training config (a mapping of fields); resume "
                             f"into another folder or start again with --overwrite")
        before = (before or {}).get("numerics")
        if before in ("exact", "fast") and before != numerics:
            raise ConfigError(f"numerics: the run in {out} trained with {before}, this config "
                              f"says {numerics}: set numerics: {before} to resume it")
    if resume is not None and cfg.imitate is not None and cfg.imitate.ppo_batches:
        raise ConfigError("imitate.ppo_batches: a resumed run has no labelled decisions (they "
                          "are not saved in checkpoints); train from the start")
    durable_text(saved, yaml.safe_dump(config_dict(cfg), sort_keys=False))
    baselines = _baselines(cfg, out)
    venv = make_vec_env(cfg)
    tb = str(out / "tb") if cfg.tensorboard else None
    state = {"history": [], "best": math.inf, "best_step": None, "wall0": 0.0}
    if resume is not None:
        try:
            model = _load_resume(resume, venv, numerics)
        except BaseException:
            venv.close()
            raise
        model.tensorboard_log = tb
        set_numerics(model, cfg)
        if old_state is not None:
            old = old_state
            hist = old.get("history") or []
            state.update(history=hist, best_step=old.get("best_step"),
                         wall0=hist[-1]["wall_s"] if hist else 0.0,
                         best=math.inf if old.get("best") is None else old["best"])
    else:
        model = build_model(cfg, venv, tb)
    state["t0"] = time.perf_counter()
    labelled: dict = {}                         # the imitation's decisions (ppo_batches)
    callbacks, run_eval = _callbacks(cfg, out, baselines, state, progress, labelled)
    if resume is None and cfg.imitate is not None:
        from mrsched_gym.agents.imitate import imitate
        rows = imitate(model, cfg, TRAIN_SEED_BASE + 1000 * cfg.seed + 500, progress,
                       labelled=labelled)
        durable_text(out / "imitate.json", json.dumps(rows, indent=1))
        run_eval(model, None)                   # the fitted policy, at step 0
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


__all__ = ["TrainConfig", "EvalConfig", "load_config", "bundled_configs", "train",
           "is_value_parameter",
           "build_model", "make_vec_env", "evaluate_model", "TRAIN_SEED_BASE"]
