"""Time to beat EDF (not a test): the training guide's first path on a CPU budget.

Usage::

    python benchmarks/time_to_edf.py --seed 0 --out edf0.zip           # ~5 CPU-min, one core
    mrsched-gym compare --env mrsched/Hadoop-v0 --seeds 5 --policies agent:edf0.zip edf

It trains as the guide's first path does (docs/guide/train.md, "Start here"): sb3-contrib's
MaskablePPO with the set network (``SetPolicy``), rewards scaled by ``VecNormalize(norm_obs=
False)``, sb3-contrib's defaults otherwise, ``BestOnValidation`` keeping the best model on the
validation seeds 1000-1009 (never the test seeds 0-4). Its training envs start from the
trainer's seeds (env ``i`` from 1,000,000 + 1000 * seed + i), so no training episode is a test or
validation world. Levers of its own, each a flag:

* ``--n-envs`` worlds per update (default 8; ``n_steps`` = 2048 / n, so an update still holds
  2,048 steps), whose forward passes are batched;
* ``--numerics fast`` (the default): the rollouts' forward pass in numpy (the trainer's
  ``numerics: fast``; the same network and updates, the rollouts' floats equal up to the last
  bits); ``exact`` keeps torch's;
* ``--every`` env steps between validations (default 30,000);
* ``--validate-with numpy`` (the default): each validation scores the model's numpy export
  (``agent:PATH.npz``, the shipped agents' forward pass, several times cheaper per decision
  than the torch model; the same network, its floats different in the last bits, so a near-tie
  can go the other way); ``torch`` scores the saved zip as ``agent:PATH.zip``;
* ``--warm-start POLICY`` (default none): before PPO, the network is fitted to POLICY's actions
  (behaviour cloning, the trainer's ``imitate`` phase: ``--warm-rounds`` DAgger rounds of
  ``--warm-steps`` decisions on four envs seeded apart from PPO's and from the validation and
  test seeds), and the first validation, at step 0, scores the fitted network, so the kept
  model is never worse on validation than the warm start. Its CPU time counts in the budget;
* ``--prior RULE`` (default none): a residual policy (``SetPolicy(prior=RULE)``,
  :mod:`mrsched_gym.agents.rule_prior`): the logits are twice the rule's preference plus the
  network's scores, which start at zero, so the untrained policy acts as RULE (``edf``); PPO
  learns a correction, and the first validation, at step 0, scores the rule itself.

Training stops at the first rollout end after which one more rollout, its update and the
validations still due could pass ``--budget-cpu-s`` CPU seconds (this process and its children,
validation included; one torch and BLAS thread; predicted from the last gap between rollout ends
and the costliest validation so far), so that the run as a whole stays within the budget. It
writes the kept model to ``--out`` and prints the CPU seconds it used, the steps, and the kept
model's step and validation score. Ranking is left to ``mrsched-gym compare``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")


def cpu_s() -> float:
    """CPU seconds of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def warm_start_config(a):
    """The trainer's config of the warm start (its ``imitate`` phase), checked; ValueError names
    a bad field (an unknown policy, say)."""
    from mrsched_gym.agents.training.imitate_config import ImitateConfig
    from mrsched_gym.agents.training.train import TrainConfig

    ic = ImitateConfig(teachers={"default": a.warm_start}, rounds=a.warm_rounds,
                       steps_per_round=a.warm_steps, n_envs=4).validate([a.id])
    return TrainConfig(env=a.id, seed=a.seed, work_conserving=True, imitate=ic)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, required=True, help="PPO's seed (the guide: 0, 1, 2)")
    p.add_argument("--out", required=True, help="where the kept model goes (an SB3 .zip)")
    p.add_argument("--id", default="mrsched/Hadoop-v0")
    p.add_argument("--budget-cpu-s", type=float, default=290.0,
                   help="the CPU seconds the whole run may use: it stops at the first rollout "
                        "end after which another rollout and the validations due could pass it")
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--numerics", choices=("fast", "exact"), default="fast")
    p.add_argument("--every", type=int, default=30_000, help="env steps between validations")
    p.add_argument("--warm-start", default="", metavar="POLICY",
                   help="fit the network to this policy's actions before PPO (a baseline or "
                        "reference rule, e.g. edf-affinity:slow_start=1); none by default")
    p.add_argument("--warm-rounds", type=int, default=2, help="DAgger rounds of the warm start")
    p.add_argument("--warm-steps", type=int, default=4_000,
                   help="decisions labelled per warm-start round")
    p.add_argument("--validate-with", choices=("numpy", "torch"), default="numpy",
                   help="score the candidates as their numpy export (agent:PATH.npz, the "
                        "default) or as the saved zip (agent:PATH.zip)")
    p.add_argument("--prior", default=None, choices=("edf",),
                   help="a residual policy over this rule (its preference plus a learned "
                        "correction that starts at zero); none by default")
    a = p.parse_args()
    if not a.out.endswith(".zip"):
        p.error("--out must end in .zip")
    if a.warm_rounds < 1 or a.warm_steps < 1:
        p.error("--warm-rounds and --warm-steps must be positive")
    try:
        warm = warm_start_config(a) if a.warm_start else None
    except ValueError as e:
        p.error(f"--warm-start: {e}")

    import torch
    torch.set_num_threads(1)
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    import mrsched_gym
    from mrsched_gym.agents import BestOnValidation, SetPolicy
    from mrsched_gym.agents.networks import NumpyRolloutPPO

    class TimedValidation(BestOnValidation):
        """BestOnValidation that counts the CPU seconds of its scorings (``total``) and of its
        costliest one (``cost``), and with ``--validate-with numpy`` scores the numpy export."""

        cost = total = 0.0

        def candidate_file(self, folder: Path) -> Path:
            if a.validate_with == "torch":
                return super().candidate_file(folder)
            from mrsched_gym.agents.training.numpy_export import export_numpy
            return export_numpy(self.model, folder / "candidate.npz")

        def score(self) -> float:
            t = cpu_s()
            value = super().score()
            spent = cpu_s() - t
            self.cost, self.total = max(self.cost, spent), self.total + spent
            return value

    class CpuBudget(BaseCallback):
        """Stops training at the first rollout end after which another rollout, its update and
        the validations still to come (the final one, and a periodic one if the next rollout
        start is due to score, after which the final one scores again) could pass the budget:
        the last gap between rollout ends (validations aside) and the costliest validation so
        far predict them."""

        def __init__(self, start: float, budget: float, best: TimedValidation) -> None:
            super().__init__()
            self.start, self.budget, self.best, self.over = start, budget, best, False
            self.last, self.validated, self.cycle = start, 0.0, 0.0

        def _on_training_start(self) -> None:
            self.last = cpu_s()                 # after the envs, the model and a warm start

        def _on_rollout_end(self) -> None:
            now = cpu_s()
            gap = now - self.last - (self.best.total - self.validated)   # rollout + update
            self.cycle, self.last, self.validated = gap, now, self.best.total
            scorings = 2 if self.model.num_timesteps >= self.best.next_score_step else 1
            ahead = self.cycle + scorings * self.best.cost
            self.over = now - self.start + ahead >= self.budget

        def _on_step(self) -> bool:
            return not self.over

    start, wall0 = cpu_s(), time.perf_counter()
    # the trainer's seeds: env i from 1,000,000 + 1000 * seed + i, apart from the test seeds 0-4
    # and the validation seeds 1000-1009 (the warm start's envs from first + 500)
    from mrsched_gym.agents.training.train_config import TRAIN_SEED_BASE
    first = TRAIN_SEED_BASE + 1000 * a.seed
    env = VecNormalize(make_vec_env(a.id, n_envs=a.n_envs, seed=first), norm_obs=False)
    model = NumpyRolloutPPO(SetPolicy, env, n_steps=max(2048 // a.n_envs, 16), seed=a.seed,
                            device="cpu", policy_kwargs=dict(prior=a.prior))
    env.seed(first)                                  # SB3's seed= re-seeded them from a.seed
    fast = a.numerics == "fast"
    model.policy.numpy_rollouts = fast
    model.policy.features_extractor.fast_numerics = fast
    if warm is not None:       # fit the network to the policy's actions (the trainer's phase)
        from mrsched_gym.agents.training.imitate import imitate
        imitate(model, warm, first + 500)
    best = TimedValidation(a.id, a.out, every=a.every,
                           at_start=warm is not None or a.prior is not None)
    budget = CpuBudget(start, a.budget_cpu_s, best)
    model.learn(10**9, callback=[budget, best])
    used = cpu_s() - start
    print(f"mrsched-gym {mrsched_gym.__version__} ({mrsched_gym.acceleration()}), torch "
          f"{torch.__version__}, Python {sys.version.split()[0]}")
    print(f"seed {a.seed}: {used:.0f} CPU-s ({time.perf_counter() - wall0:.0f} s wall), "
          f"{model.num_timesteps} steps, {a.n_envs} envs, numerics {a.numerics}, warm start "
          f"{a.warm_start or 'none'}, prior {a.prior or 'none'}, validated with "
          f"{a.validate_with}; kept the "
          f"model of step {best.best_step} (validation {best.best_score:.2f}) in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
