"""How much the input-dependent baseline reduces the noise of PPO's policy gradient.

    python research/tools/input_baseline_variance.py --rollouts 6 --steps 512

For one fixed policy (``--init``, default the shipped ``agent:hadoop-v0``, with its value
function), collects ``--rollouts`` independent rollouts (training seeds 0, 1, ...: different
inputs) of ``--envs`` envs in groups of ``--k`` sharing their inputs (the trainer's
``input_driven`` option with ``baseline: false``, so the buffer holds GAE's advantages), and on
each computes the policy-gradient estimate ``g = grad mean(A_norm * log pi(a|s))`` three times
from the same samples: with GAE's advantages, and with the input-dependent ones (return minus
the group's mean return-to-go at the same simulated time, where two or more envs cover it), and
a third time with GAE's advantage minus the group's mean GAE advantage at the same time (the
value function's error that the input explains, removed). All are normalised as PPO does. It
prints each rollout's two advantage variances before normalisation, and, for each estimator, the
relative variance across rollouts (``sum Var(g) / |mean g|^2``) and the mean cosine similarity
between the rollouts' estimates (higher: the estimates agree more, i.e. less noise).
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np


def gradient(policy, samples, adv) -> np.ndarray:
    """The flattened gradient of ``-mean(adv * log pi)`` over the policy's parameters."""
    import torch as th
    policy.optimizer.zero_grad()
    _, log_prob, _ = policy.evaluate_actions(samples.observations, samples.actions.long()
                                             .flatten(), action_masks=samples.action_masks)
    a = th.as_tensor(adv, dtype=log_prob.dtype)
    a = (a - a.mean()) / (a.std() + 1e-8)
    (-(a * log_prob).mean()).backward()
    return np.concatenate([p.grad.detach().numpy().ravel() for p in policy.parameters()
                           if p.grad is not None])


def one_rollout(seed: int, args) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, tuple]:
    """The three gradient estimates of one rollout (GAE, input-dependent, GAE minus the group's
    mean GAE advantage at the same time), the share of steps the baseline covers, and
    the two advantages' variances (before normalisation) on those steps."""
    import torch as th
    from stable_baselines3.common.callbacks import BaseCallback

    from mrsched_gym.agents.training.input_driven import input_baseline_callback, input_baselines
    from mrsched_gym.agents.training.train import build_model, load_config, make_vec_env
    cfg = load_config("hadoop_set", name="variance", seed=seed, n_envs=args.envs,
                      tensorboard=False, numerics="fast", init_from=args.init,
                      input_driven={"rollouts_per_input": args.k, "baseline": False},
                      **{"ppo.n_steps": args.steps, "ppo.batch_size": args.steps})
    th.manual_seed(seed)
    model = build_model(cfg, make_vec_env(cfg))
    record = input_baseline_callback(cfg.input_driven)
    out = {}

    class Measure(BaseCallback):
        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            buf = self.model.rollout_buffer
            base, cover = input_baselines(buf.returns, np.array(record.times),
                                          np.array(record.episodes), np.array(record.ends),
                                          args.k)
            use = cover >= 2
            inp = np.where(use, buf.returns - base, buf.advantages)
            gae = buf.advantages.copy()
            # GAE's advantage minus the group's mean GAE advantage at the same time: the part of
            # the value function's error that the input explains, removed
            mean_adv, _ = input_baselines(gae, np.array(record.times),
                                          np.array(record.episodes), np.array(record.ends),
                                          args.k)
            both = np.where(use, gae - mean_adv, gae)
            samples = next(buf.get(batch_size=None))
            order = lambda a: a.swapaxes(0, 1).reshape(-1)      # noqa: E731 - buffer's order
            out["gae"] = gradient(self.model.policy, samples, order(gae))
            out["input"] = gradient(self.model.policy, samples, order(inp))
            out["both"] = gradient(self.model.policy, samples, order(both))
            out["covered"] = float(use.mean())
            out["var"] = (float(gae[use].var()), float(inp[use].var()))

    model.learn(args.envs * args.steps, callback=[record, Measure()])
    return out["gae"], out["input"], out["both"], out["covered"], out["var"]


def summary(gs: list[np.ndarray]) -> tuple[float, float]:
    """(relative variance across rollouts, mean pairwise cosine similarity)."""
    g = np.stack(gs)
    rel = float(g.var(axis=0, ddof=1).sum() / max(np.sum(g.mean(axis=0) ** 2), 1e-30))
    cos = [float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
           for a, b in itertools.combinations(g, 2)]
    return rel, float(np.mean(cos))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rollouts", type=int, default=6)
    p.add_argument("--steps", type=int, default=512, help="steps per env per rollout")
    p.add_argument("--envs", type=int, default=4)
    p.add_argument("--k", type=int, default=2, help="envs per input")
    p.add_argument("--init", default="agent:hadoop-v0")
    args = p.parse_args()
    import torch as th
    th.set_num_threads(1)
    gae, inp, both, cov = [], [], [], []
    for seed in range(args.rollouts):
        a, b, ab, c, (va, vb) = one_rollout(seed, args)
        gae.append(a)
        inp.append(b)
        both.append(ab)
        cov.append(c)
        print(f"rollout {seed}: covered {c:.3f}, advantage variance GAE {va:.4g}, "
              f"input-dependent {vb:.4g}", flush=True)
    for name, gs in (("GAE", gae), ("input-dependent", inp), ("GAE - group mean", both)):
        rel, cos = summary(gs)
        print(f"{name:16s} relative variance {rel:8.3f}   mean cosine {cos:6.3f}")
    print(f"steps covered by the baseline: {np.mean(cov):.3f}")


if __name__ == "__main__":
    main()
