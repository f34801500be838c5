"""The training config: :class:`TrainConfig` (every field of ``configs/agents/*.yaml``), its
checks, and :func:`load_config` (a YAML path or a bundled name, with overrides).

Seeds: the training envs reset with seeds ``TRAIN_SEED_BASE + 1000 * seed + i`` (env ``i``), so
they never replay the validation, leaderboard or held-out test seeds (all below
:data:`TRAIN_SEED_BASE`); see :mod:`mrsched_gym.agents.training.train`.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from mrsched_gym.agents.training.imitate_config import MAX_ENVS, ImitateConfig
from mrsched_gym.agents.training.input_driven import InputDrivenConfig
from mrsched_gym.agents.training.train_checks import (
    MAX_ROLLOUT,
    MAX_WIDTH,
    SB3_BATCH_SIZE,
    SB3_N_STEPS,
    check_init_from,
    check_ppo_value,
    check_rule_fields,
    check_widths,
    config_network,
)
from mrsched_gym.agents.training.worlds import WorldsConfig
from mrsched_gym.config import (
    ConfigError,
    bundled_names,
    config_source,
    from_yaml_data,
    located,
    parse_yaml,
)
from mrsched_gym.config.limits import MAX_SEED, MAX_TRAIN_STEPS

TRAIN_SEED_BASE = 1_000_000
#: The benchmark's test seeds as far as ``--seeds 20`` reaches (100-119): never validation
#: seeds (:meth:`TrainConfig.validate` refuses them).
TEST_SEEDS_RESERVED = (100, 119)
#: A run name: the name of its folder inside ``--out``.
RUN_NAME = re.compile(r"[A-Za-z0-9._-]+")
#: What a run writes into its folder: the files ``--overwrite`` replaces (nothing else there is
#: touched), and the ones whose presence means the folder holds a run.
RUN_FILES = ("config.yaml", "baselines.json", "evaluations.csv", "learning_curve.png",
             "best_model.zip", "best_model.npz", "last_model.zip", "final_model.zip", "state.json",
             "imitate.json")
RUN_MARKERS = ("state.json", "evaluations.csv", "best_model.zip", "last_model.zip",
               "final_model.zip")
#: The longest run name (a folder name; TensorBoard adds a suffix to it).
MAX_RUN_NAME = 100
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
        env_seeds: Where the training envs' first episodes come from. ``trainer`` (the
            default): env ``i`` from ``1,000,000 + 1000 * seed + i``, apart from every
            validation and leaderboard seed. ``model``: from ``seed + i``, as in 0.4.0, where
            SB3's ``seed=`` re-seeded the envs when the model was built (so a run's first
            episodes could be worlds of the leaderboard's seeds); the bundled configs keep it,
            so that they reproduce the shipped agents and the notes' runs weight for weight.
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
            (:class:`~mrsched_gym.agents.training.worlds.WorldsConfig`, the generalist):
            observations padded to the pool's maxima, nodes pooled with a mask. Validation then runs
            ``eval.n_seeds`` seeds on every id of the pool and reports the mean over ids of the
            agent's mean headline / the best evaluation baseline's (1 = on par).
        init_from: Start from the weights of this checkpoint (a path or ``agent:NAME`` of a
            shipped agent; same network shapes) instead of a fresh network; "" = fresh.
            Validation then starts with the loaded policy at step 0, so the best checkpoint
            is never one the validation finds worse than the start.
        imitate: Fit the first policy to teachers' actions before PPO (behaviour cloning,
            DAgger; :class:`~mrsched_gym.agents.training.imitate.ImitateConfig`; MaskablePPO with
            the set policy). Validation then starts with the fitted policy at step 0.
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
        input_driven: Variance reduction for input-driven environments
            (:class:`~mrsched_gym.agents.training.input_driven.InputDrivenConfig`; Mao et al., ICLR
            2019, and Decima, SIGCOMM 2019): the training envs in groups that share each input
            sequence, the advantage as the return minus the group's mean return-to-go at the
            same simulated time, optionally the differential reward and a curriculum on episode
            length. A single env only (no ``worlds``). None = off.
        affinity: Train under the affinity mask with this ``min_ratio`` in (0, 1]
            (:mod:`mrsched_gym.baselines.affinity`): PPO's action mask is narrowed as the
            deployed agent's is (:class:`~mrsched_gym.agents.rules.TrainUnderRules`), validation
            plays under it, and the checkpoints carry it, so ``agent:PATH.zip`` acts under it
            wherever it is evaluated. For fine-tuning a policy that is shipped with the rule
            (``init_from``). None = off.
        slow_start: The same for the reduce slow-start rule's ``fraction`` in (0, 1]
            (:mod:`mrsched_gym.baselines.slow_start`). None = off.
        prior: A residual policy over this rule (``edf``; the set policy only;
            :mod:`~mrsched_gym.agents.rule_prior`): the untrained policy acts as the rule, and
            validation starts with it at step 0. None = a plain network.
        prior_weight: The weight of the rule's preference in the logits, in (0, 1e6).
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
    env_seeds: Literal["trainer", "model"] = "trainer"
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
    input_driven: InputDrivenConfig | None = None
    affinity: float | None = None
    slow_start: float | None = None
    prior: str | None = None
    prior_weight: float = 2.0

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
            raise ConfigError(f"{where}: {fld}: {msg}", tuple(fld.split(".")))
        if not isinstance(self.name, str) or not RUN_NAME.fullmatch(self.name) \
                or self.name in (".", "..") or len(self.name) > MAX_RUN_NAME:
            shown = self.name if not isinstance(self.name, str) or len(self.name) <= 60 \
                else self.name[:60] + f"... ({len(self.name)} characters)"
            bad("name", f"the run's folder inside --out: letters, digits, '.', '_' and '-' "
                        f"only, at most {MAX_RUN_NAME} characters, not '.' or '..'; got "
                        f"{shown!r}")
        if self.algo not in ALGOS:
            bad("algo", f"must be one of {', '.join(ALGOS)}; got {self.algo!r}")
        if self.policy not in POLICIES:
            bad("policy", f"must be one of {', '.join(POLICIES)}; got {self.policy!r}")
        if self.lr_schedule not in ("constant", "linear"):
            bad("lr_schedule", f"must be constant or linear; got {self.lr_schedule!r}")
        if self.vec_env not in ("dummy", "subproc"):
            bad("vec_env", f"must be dummy or subproc; got {self.vec_env!r}")
        if self.env_seeds not in ("trainer", "model"):
            bad("env_seeds", f"must be trainer or model; got {self.env_seeds!r}")
        if self.numerics not in ("auto", "exact", "fast"):
            bad("numerics", f"must be auto, exact or fast; got {self.numerics!r}")
        self.numerics = resolved_numerics(self)  # so a run's config.yaml says which
        if self.numerics == "fast" and (self.algo, self.policy) != ("maskable_ppo", "set"):
            bad("numerics", "fast numerics need algo maskable_ppo and policy set")
        for f in ("total_timesteps", "n_envs", "torch_threads", "hidden"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                bad(f, f"must be a positive integer; got {v!r}")
        for f, hi in (("total_timesteps", MAX_TRAIN_STEPS), ("hidden", MAX_WIDTH),
                      ("torch_threads", 1_024)):
            if getattr(self, f) > hi:
                bad(f, f"at most {hi:,}; got {getattr(self, f):,}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) \
                or not 0 <= self.seed <= MAX_SEED:
            bad("seed", f"an integer from 0 to 2**32 - 1 (numpy's and torch's seeds); got "
                        f"{self.seed!r}")
        for f in ("net_arch", "value_arch"):
            try:
                setattr(self, f, check_widths(getattr(self, f)))
            except ValueError as ex:
                bad(f, str(ex))
        v = self.value_warmup_steps
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            bad("value_warmup_steps", f"must be an integer >= 0; got {v!r}")
        if self.n_envs > MAX_ENVS:
            bad("n_envs", f"at most {MAX_ENVS} (the training envs' seeds must stay apart from "
                          f"the imitation envs'); got {self.n_envs}")
        if self.work_conserving and self.algo == "ppo" and self.policy == "flat":
            bad("work_conserving", "plain PPO has no masks: use maskable_ppo or the set policy")
        if not isinstance(self.ppo, dict):
            bad("ppo", f"a mapping of hyper-parameters; got {type(self.ppo).__name__}")
        for k in self.ppo:
            if k not in PPO_KEYS:
                bad(f"ppo.{k}", f"unknown hyper-parameter; known: {', '.join(PPO_KEYS)}")
        for k, v in list(self.ppo.items()):
            try:
                self.ppo[k] = check_ppo_value(k, v)
            except ValueError as ex:
                bad(f"ppo.{k}", str(ex))
        rollout = self.ppo.get("n_steps", SB3_N_STEPS) * self.n_envs
        if rollout > MAX_ROLLOUT:
            bad("ppo.n_steps", f"a rollout of ppo.n_steps x n_envs = {rollout:,} steps is more "
                               f"than {MAX_ROLLOUT:,} (each holds an observation in memory)")
        if self.ppo.get("batch_size", SB3_BATCH_SIZE) > rollout:
            bad("ppo.batch_size", f"{self.ppo.get('batch_size', SB3_BATCH_SIZE)} is more than "
                                  f"a rollout holds (ppo.n_steps x n_envs = {rollout})")
        if self.init_from:
            try:
                check_init_from(self.init_from, config_network(
                    self.policy, self.hidden, self.net_arch, self.value_arch))
            except ValueError as ex:
                bad("init_from", str(ex))
        e = self.eval
        for f in ("every_steps", "seed_start", "n_seeds"):
            v = getattr(e, f)
            if not isinstance(v, int) or isinstance(v, bool):
                bad(f"eval.{f}", f"must be an integer; got {v!r}")
        if e.every_steps < 0 or e.n_seeds < 1 or e.seed_start < 0:
            bad("eval", "every_steps and seed_start must be >= 0 and n_seeds >= 1")
        if e.seed_start + e.n_seeds > TRAIN_SEED_BASE:
            bad("eval.seed_start", f"validation seeds must stay below {TRAIN_SEED_BASE}")
        test = range(TEST_SEEDS_RESERVED[0], TEST_SEEDS_RESERVED[1] + 1)
        overlap = range(max(e.seed_start, test.start),
                        min(e.seed_start + e.n_seeds, test.stop))
        if overlap:
            bad("eval.seed_start", f"validation seeds {e.seed_start}-"
                                   f"{e.seed_start + e.n_seeds - 1} include the benchmark's "
                                   f"test seeds {overlap.start}-{overlap.stop - 1} (the test "
                                   f"seeds are {test.start}-{test.stop - 1}: a checkpoint "
                                   "chosen on them would be scored on the worlds it was "
                                   "chosen on); start them elsewhere, e.g. 500")
        if self.worlds is not None:
            try:
                self.worlds.validate()
            except ValueError as ex:
                bad("worlds", str(ex))
            if self.policy != "set":
                bad("worlds", "a pool of worlds needs the set policy (sizes differ)")
        if self.input_driven is not None:
            if self.worlds is not None:
                bad("input_driven", "a single env only, not a pool of worlds (yet)")
            try:
                self.input_driven.validate(self.n_envs)
            except ValueError as ex:
                raise ConfigError(f"{where}: {ex}") from None
        if self.imitate is not None:
            if (self.algo, self.policy) != ("maskable_ppo", "set"):
                bad("imitate", "imitation needs algo maskable_ppo and policy set")
            try:
                self.imitate.validate(list(self.worlds.ids) if self.worlds else [self.env])
            except ValueError as ex:
                raise ConfigError(f"{where}: {ex}") from None
        check_rule_fields(self, bad)
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

    def rules(self) -> dict[str, float]:
        """The decision rules the run trains under (``affinity``, ``slow_start``), by name."""
        from mrsched_gym.agents.rules import TRAINED_RULES
        return {k: v for k in TRAINED_RULES
                if (v := getattr(self, k)) is not None}


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
    cfg = from_yaml_data(TrainConfig, data, text, str(p))
    try:
        return cfg.validate(p)
    except ConfigError as e:
        raise located(e, text, str(p)) from None


def config_dict(cfg: TrainConfig) -> dict:
    """``cfg`` as plain data (what ``config.yaml`` holds)."""
    return dataclasses.asdict(cfg)
