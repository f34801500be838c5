"""The trainer's building blocks: the training envs (:func:`make_vec_env`), the model
(:func:`build_model`: MaskablePPO / PPO with the set or flat network, its numerics, weights from
another checkpoint) and its evaluation on validation seeds (:func:`evaluate_model`)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from mrsched_gym.agents.training.train_config import TRAIN_SEED_BASE, TrainConfig, resolved_numerics
from mrsched_gym.config import ConfigError


def make_vec_env(cfg: TrainConfig, n_envs: int | None = None, seed_offset: int = 0):
    """The training envs: ``n_envs`` copies, env ``i`` seeded
    ``TRAIN_SEED_BASE + 1000*seed + i``, made with ``lean_info=True`` (a pool of worlds passes
    it to its worlds): nothing in training reads the rest of the step's info, and the episodes
    are the same."""
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from mrsched_gym.agents.policy import AllowIdle, WorkConserving
    from mrsched_gym.agents.training.vec_envs import InProcessVecEnv, RewardNormalize
    from mrsched_gym.evaluate import make_env
    env, kw = cfg.env, {**cfg.env_kwargs, "lean_info": True}
    # MaskablePPO learns from the mask: work-conserving (the env's default, kept over a pool of
    # worlds) or, with work_conserving: false, skip offered at every decision (allow_idle)
    wrap = None if cfg.algo != "maskable_ppo" else \
        WorkConserving if cfg.work_conserving else AllowIdle
    if wrap is not None and cfg.rules():             # the deployed rules narrow the mask
        from mrsched_gym.agents.rules import TrainUnderRules
        mask_wrap, rules = wrap, cfg.rules()

        def wrap(env):
            return TrainUnderRules(mask_wrap(env), **rules)
    if cfg.worlds is not None:
        from mrsched_gym.agents.training.worlds import WorldPool
        worlds = cfg.worlds

        def factory():
            return WorldPool(worlds, lean_info=True)
    elif cfg.input_driven is not None:            # groups of envs that share their inputs
        from mrsched_gym.agents.training.input_driven import SameInput
        base, inputs = TRAIN_SEED_BASE + 1000 * cfg.seed + seed_offset, cfg.input_driven

        def factory():
            return SameInput(make_env(env, kw), base, inputs)
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
        """The learning rate at ``progress_remaining`` (1 at the start, 0 at the end)."""
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
        if cfg.prior is not None:               # a residual policy over the rule
            pkw.update(prior=cfg.prior, prior_weight=float(cfg.prior_weight))
    else:
        policy = "MultiInputPolicy"
        pkw = dict(features_extractor_class=FlatExtractor,
                   net_arch=dict(pi=list(cfg.net_arch), vf=list(cfg.net_arch)))
    algo = PPO if cfg.algo == "ppo" else NumpyRolloutPPO \
        if resolved_numerics(cfg) == "fast" else MaskablePPO
    ppo = dict(cfg.ppo)
    if cfg.lr_schedule == "linear":
        ppo["learning_rate"] = LinearSchedule(float(ppo.get("learning_rate", 3e-4)))
    first = venv.unwrapped._seeds[0] if venv.unwrapped._seeds else None
    model = algo(policy, venv, policy_kwargs=pkw, seed=cfg.seed, device="cpu", verbose=0,
                 tensorboard_log=tb_dir, **ppo)
    if first is not None and cfg.env_seeds == "trainer":
        venv.seed(first)     # SB3's seed= re-seeded the envs from cfg.seed: make_vec_env's again
    model.mrsched_work_conserving = cfg.work_conserving     # saved with the checkpoint
    model.mrsched_rules = cfg.rules()           # idem: agent:PATH.zip acts under them
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
    key = "mlp_extractor.value_net.0.weight"
    K_src = src_policy.observation_space["candidates"].shape[0]
    K_own = model.policy.observation_space["candidates"].shape[0]
    if key in src and key in own and K_own > K_src:
        src[key] = widen_value_input(src[key], own[key], K_src, K_own, h)
    wrong = [k for k in own if k not in src or src[k].shape != own[k].shape]
    if wrong:
        raise ConfigError(f"init_from {source!r}: the network differs ({', '.join(wrong[:3])})")
    model.policy.load_state_dict(src)


def widen_value_input(v, own, K_src: int, K_own: int, hidden: int):
    """The value MLP's first weight of a ``K_src``-candidate network, widened to ``K_own``
    candidates: its input is ``[K x hidden embeddings | 2 x hidden context | K valid flags |
    schedule]`` (:meth:`~mrsched_gym.agents.networks.SetExtractor.flat_features_of`); the new
    candidates' columns start at zero, so the value reads the first ``K_src`` candidates as
    the source did. The actor does not depend on K."""
    if v.shape != (own.shape[0], K_src * hidden + 2 * hidden + K_src + 1):
        return v                                    # not the layout above: refused below
    new = own.new_zeros(own.shape)
    e_src, e_own = K_src * hidden, K_own * hidden
    new[:, :e_src] = v[:, :e_src]
    new[:, e_own:e_own + 2 * hidden] = v[:, e_src:e_src + 2 * hidden]
    new[:, e_own + 2 * hidden:e_own + 2 * hidden + K_src] = v[:, e_src + 2 * hidden:-1]
    new[:, -1] = v[:, -1]
    return new


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
    from mrsched_gym.agents.rules import with_rules
    from mrsched_gym.evaluate import run_episode, scenario_of
    if cfg.worlds is None:
        headline = scenario_of(cfg.env).reward.headline
        pol = with_rules(AgentPolicy(model, cfg.name), **cfg.rules())
        return [run_episode(cfg.env, pol, s, cfg.env_kwargs)["metrics"][headline]
                for s in seeds]
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    from mrsched_gym.agents.training.numpy_export import export_numpy
    with tempfile.TemporaryDirectory() as d:             # the numpy actor: same actions, faster
        pol = with_rules(NumpySetPolicy.load(export_numpy(model, Path(d) / "actor.npz"),
                                             cfg.name), **cfg.rules())
    out = []
    for env_id in cfg.worlds.ids:
        headline = scenario_of(env_id).reward.headline
        ov = cfg.worlds.overrides.get(env_id)
        vals = [run_episode(env_id, pol, s, ov)["metrics"][headline] for s in seeds]
        ref = min(baselines[env_id].values()) if baselines else 1.0
        out.append(float(np.mean(vals)) / max(ref, 1e-9))
    return out
