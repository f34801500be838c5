"""Ray as the scale-out engine (optional extra: ``pip install -c constraints.txt -e '.[ray]'``).

* **RLlib**: :func:`register_rllib_envs` registers every ``mrsched/*`` id (and any scenario
  name or path passed later) with Ray Tune's registry, so the env creator travels to every
  EnvRunner process; the creator imports :mod:`mrsched_gym` inside the worker (which registers
  the Gymnasium ids there too) and wraps the env for RLlib. Two observation formats
  (``env_config["observation"]``):

  - ``"masked"`` — :class:`RLlibMaskedObservation`: ``{"action_mask", "observations"}`` (RLlib's
    action-masking convention, the env's ``Dict`` kept whole) for the set network
    :class:`~mrsched_gym.agents.rllib_module.SetRLModule`, which never samples an illegal action.
    :func:`rllib_ppo_config` uses it by default (``module="set"``).
  - ``"flat"`` (the creator's default, for RLlib's own modules) — :class:`RLlibObservation`
    flattens the ``Dict`` into one ``Box``; RLlib's default PPO module (``module="mlp"``) reads no
    mask, so an illegal action is the env's documented skip.

  :func:`rllib_ppo_config` builds a PPO config; :func:`train_rllib` runs it for some iterations.
  The same config scales from one machine to a Ray cluster (``num_env_runners``; recipe in
  ``docs/ray.md``).
* **Evaluation sweeps**: :func:`evaluate_ray` runs policies x scenarios x seeds as Ray tasks
  (one task per episode, the same ``run_task`` as the local harness), so results are identical
  to :func:`mrsched_gym.evaluate.evaluate` and the sweep scales to a Ray cluster
  (``ray.init(address="auto")``). ``mrsched-gym compare --backend ray`` uses it.

Ray (and torch, for the set module) is imported lazily; without the extra these functions raise
``ImportError`` with the install command.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from mrsched_gym.errors import MissingExtraError, install_hint

RLLIB_PREFIX = "rllib:"


def _ray():
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the install
        raise MissingExtraError(f"the Ray backend needs the ray extra: {install_hint('ray')}"
                                ) from e
    return ray


def init_ray(address: str | None = None, num_cpus: int | None = None,
             runtime_env: dict | None = None) -> None:
    """Start (or connect to) Ray once; quiet, no dashboard.

    Args:
        address: ``"auto"`` (or ``"HEAD:6379"``) joins a running cluster; ``None`` starts a
            local Ray.
        num_cpus: CPUs of the local Ray (ignored when joining a cluster).
        runtime_env: Ray's job-level runtime environment, e.g.
            ``{"env_vars": {"OMP_NUM_THREADS": "1"}}`` to pin BLAS threads in every worker.
    """
    ray = _ray()
    if not ray.is_initialized():
        kw: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False,
                                  ignore_reinit_error=True)
        if address:
            kw["address"] = address
        elif num_cpus:
            kw["num_cpus"] = num_cpus
        if runtime_env:
            kw["runtime_env"] = runtime_env
        ray.init(**kw)


# ---------------------------------------------------------------------- RLlib
class RLlibObservation(gym.ObservationWrapper):
    """Flattens the env's ``Dict`` observation into one float32 ``Box`` (sorted key order,
    as :func:`gymnasium.spaces.flatten`), for RLlib's default encoders.

    Args:
        env: The env to wrap.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = gym.spaces.flatten_space(env.observation_space)

    def observation(self, obs: dict) -> np.ndarray:
        """``obs`` flattened into the wrapper's ``Box``."""
        return gym.spaces.flatten(self.env.observation_space, obs)


class RLlibMaskedObservation(gym.ObservationWrapper):
    """RLlib's action-masking observation: ``{"action_mask": float32[K+1], "observations":
    <the env's Dict>}``, the mask being ``env.action_masks()`` (skip last; see the env's
    ``allow_idle`` argument), for
    :class:`~mrsched_gym.agents.rllib_module.SetRLModule`.

    Args:
        env: The env to wrap (an ``MRSchedEnv``, possibly wrapped).
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        n = int(env.action_space.n)
        self.observation_space = gym.spaces.Dict({
            "action_mask": gym.spaces.Box(0.0, 1.0, (n,), np.float32),
            "observations": env.observation_space})

    def observation(self, obs: dict) -> dict:
        """``obs`` with the current action mask."""
        return {"action_mask": self.env.unwrapped.action_masks().astype(np.float32),
                "observations": obs}


OBSERVATIONS = {"flat": RLlibObservation, "masked": RLlibMaskedObservation}


def make_rllib_env(env_config: dict | None = None) -> gym.Env:
    """The env creator Ray ships to its workers: ``env_config`` = ``{"scenario": id/name/path,
    "observation": "flat" | "masked", **overrides}``; default ``mrsched/Hadoop-v0``, flat.

    Raises:
        ValueError: An unknown ``observation``.
    """
    import mrsched_gym  # noqa: F401  (registers the Gymnasium ids inside the worker)
    from mrsched_gym.evaluate import DEFAULT_ENV, make_env
    cfg = dict(env_config or {})
    scenario = cfg.pop("scenario", DEFAULT_ENV)
    kind = cfg.pop("observation", "flat")
    if kind not in OBSERVATIONS:
        raise ValueError(f"env_config observation must be one of {sorted(OBSERVATIONS)}, "
                         f"got {kind!r}")
    return OBSERVATIONS[kind](make_env(scenario, cfg))


def register_rllib_envs(extra: Iterable[str] = ()) -> list[str]:
    """Register ``rllib:<id>`` for every ``mrsched/*`` id (plus ``extra`` scenario names/paths)
    with Ray Tune's registry; returns the registered names."""
    _ray()
    from ray.tune.registry import register_env

    from mrsched_gym.registration import ENV_IDS
    names = []
    for scenario in list(ENV_IDS) + list(extra):
        name = RLLIB_PREFIX + scenario
        register_env(name, lambda cfg, _s=scenario: make_rllib_env({"scenario": _s, **cfg}))
        names.append(name)
    return names


def rllib_ppo_config(scenario: str = "mrsched/Hadoop-v0", env_overrides: dict | None = None,
                     num_env_runners: int = 1, train_batch_size: int = 4000,
                     minibatch_size: int = 256, num_epochs: int = 5, lr: float = 1e-4,
                     gamma: float = 0.995, seed: int = 0, hidden: Sequence[int] = (128, 128),
                     module: str = "set", set_hidden: int = 64,
                     vf_hiddens: Sequence[int] = (64, 64), work_conserving: bool = True,
                     lambda_: float = 0.95, entropy_coeff: float = 0.01,
                     grad_clip: float | None = 0.5, num_envs_per_env_runner: int = 1):
    """An RLlib ``PPOConfig`` (new API stack) for an mrsched env.

    Args:
        scenario: Env id, bundled scenario name or scenario YAML path.
        env_overrides: Scenario overrides, e.g. ``{"workload.duration_s": 900}``.
        num_env_runners: EnvRunner actors collecting episodes (one CPU each; 0 samples in the
            driver). On a cluster: its CPUs minus the driver's.
        train_batch_size: Env steps per training iteration (``train_batch_size_per_learner``).
        minibatch_size: SGD minibatch size.
        num_epochs: Passes over each batch.
        lr: Adam step size.
        gamma: Discount per decision.
        seed: Seed of the algorithm (and its envs).
        hidden: The MLP's layers with ``module="mlp"``.
        module: ``"set"`` (:class:`~mrsched_gym.agents.rllib_module.SetRLModule` on the masked
            observation, the default) or ``"mlp"`` (RLlib's default PPO module on the flattened
            observation; no mask).
        set_hidden: Width of the set module's embeddings.
        vf_hiddens: The set module's value MLP.
        work_conserving: The set module masks skip at a schedule decision with a candidate.
        lambda_: GAE lambda.
        entropy_coeff: Entropy bonus.
        grad_clip: Gradient norm clip (``None``: none).
        num_envs_per_env_runner: Envs stepped per EnvRunner (vectorised in-process).

    Raises:
        ValueError: An unknown ``module``.
        MRSchedError: A bad ``scenario`` or ``env_overrides`` (the env is built once here, so
            that they fail in the driver, not later inside Ray's remote env runners).
    """
    _ray()
    from ray.rllib.algorithms.ppo import PPOConfig
    if module not in ("set", "mlp"):
        raise ValueError(f"module must be 'set' or 'mlp', got {module!r}")
    env_config = {**dict(env_overrides or {}),
                  "observation": "masked" if module == "set" else "flat"}
    make_rllib_env({"scenario": scenario, **env_config}).close()
    register_rllib_envs([scenario])
    config = (PPOConfig()
              .environment(RLLIB_PREFIX + scenario, env_config=env_config)
              .framework("torch")
              .env_runners(num_env_runners=num_env_runners,
                           num_envs_per_env_runner=num_envs_per_env_runner)
              .learners(num_learners=0)
              .training(train_batch_size_per_learner=train_batch_size,
                        minibatch_size=minibatch_size, num_epochs=num_epochs, lr=lr,
                        gamma=gamma, lambda_=lambda_, entropy_coeff=entropy_coeff,
                        grad_clip=grad_clip)
              .debugging(seed=seed))
    if module == "set":
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec

        from mrsched_gym.agents.rllib_module import SetRLModule
        return config.rl_module(rl_module_spec=RLModuleSpec(
            module_class=SetRLModule,
            model_config={"hidden": set_hidden, "vf_hiddens": list(vf_hiddens),
                          "work_conserving": work_conserving}))
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    return config.rl_module(model_config=DefaultModelConfig(fcnet_hiddens=list(hidden)))


def train_rllib(config, iterations: int = 1) -> list[dict]:
    """Build the algorithm, run ``iterations`` training iterations, return their result dicts
    (with ``env_runners/episode_return_mean`` etc.) and stop it."""
    init_ray()
    algo = config.build_algo()
    try:
        return [algo.train() for _ in range(iterations)]
    finally:
        algo.stop()


# ---------------------------------------------------------------------- evaluation sweeps
def evaluate_ray(policies: Sequence[Any], scenarios: Sequence[str], seeds: Iterable[int],
                 env_kwargs: dict | None = None, address: str | None = None,
                 progress: bool = True, done: Sequence[dict] = (),
                 on_result=None, per_job: bool = False) -> list[dict[str, Any]]:
    """:func:`mrsched_gym.evaluate.evaluate` with one Ray task per episode (same records, same
    order; failed episodes raise :class:`~mrsched_gym.results.EpisodeFailures` after the others
    finished). Policies, scenarios and seeds are checked before anything is submitted; episodes
    in ``done`` (same policy fingerprint) are not run again, and ``on_result`` gets each record
    as soon as Ray returns it (the journal of ``mrsched-gym compare``)."""
    from mrsched_gym.errors import InputError
    from mrsched_gym.evaluate import (
        collect_records,
        in_process_only,
        pinned_reusable,
        run_task,
        sweep_tasks,
    )
    from mrsched_gym.results import task_key
    ray = _ray()
    tasks = sweep_tasks(policies, scenarios, seeds, env_kwargs)
    local = sorted({t[0].label for t in tasks if in_process_only(t[0])})
    if local:
        raise InputError(f"policies: {', '.join(local)} do not pickle, so they cannot run as "
                         f"Ray tasks (use evaluate, which runs them in this process)")
    pins, finished = pinned_reusable(tasks, done, per_job, env_kwargs)
    todo = [t for t in tasks if (t[0].label, t[1], t[2]) not in finished]
    init_ray(address)
    remote = ray.remote(num_cpus=1)(run_task)
    refs = [remote.remote(t, per_job) for t in todo]
    from tqdm.auto import tqdm
    with tqdm(total=len(refs), desc="episodes (ray)", disable=not progress, unit="ep") as bar:
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=min(len(pending), 8), timeout=1.0)
            for r in ray.get(ready):
                r = pins.check(r)
                finished[task_key(r)] = r
                if on_result is not None:
                    on_result(r)
            bar.update(len(ready))
    return collect_records(tasks, finished)


__all__ = ["RLlibObservation", "RLlibMaskedObservation", "make_rllib_env", "register_rllib_envs",
           "rllib_ppo_config", "train_rllib", "evaluate_ray", "init_ray"]
