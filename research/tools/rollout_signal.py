"""How much of a rollout's gain over its base the present predicts: play-outs in the world's
own future against play-outs in sampled futures, at the same decisions.

    python research/tools/rollout_signal.py --base agent:hadoop-v0 --seed 500 --decisions 40 \
        --samples 16

Along the base policy's trajectory of one episode, at its first ``--decisions`` schedule
decisions with a choice, every candidate (and the base's own action) is played out to the
episode's end by the base (:meth:`~mrsched_gym.agents.research.rollout.RolloutTeacher.play_outs`):

- once in the world's own future (the clairvoyant rollout's copy), and
- in ``--samples`` copies whose jobs to come are drawn from the workload (the sampled
  rollout's copies: the same draws for every candidate).

Per decision it prints, in cost units (the scenario's reward weights over the episode's
totals, i.e. minus the return):

- ``clairvoyant``: the best candidate's gain over the base's action in the world's future;
- ``choice``: the candidate with the lowest mean cost over the first half of the samples (the
  base's action on a tie), and ``expected``: its gain over the base's action averaged over the
  *other* half (held out, so that the luck which made it look best does not count), with the
  standard error of that mean;
- ``realised``: the same choice's gain in the world's own future.

The sum of ``expected`` over the decisions estimates what one-step look-ahead finds from the
present (the present jobs' task lengths and the capacity and load timelines are still the
world's own: the copies replace only the jobs to come); the sum of ``clairvoyant`` what it
finds knowing the future. Play-outs run over ``--workers`` processes with one BLAS/OpenMP
thread.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp

import numpy as np

from mrsched_gym.agents.research.rollout import RolloutTeacher, cheapest
from mrsched_gym.evaluate import make_env, make_policy
from mrsched_gym.sim.decision import SCHEDULE


def decision_signal(clairvoyant: dict[int, list[float]], sampled: dict[int, list[float]],
                    base_action: int) -> dict[str, float]:
    """The per-decision figures (module docstring) from the play-out costs of one decision:
    ``clairvoyant[b]`` (one cost) and ``sampled[b]`` (one per sampled future) per action."""
    true = {b: c[0] for b, c in clairvoyant.items()}
    m = len(sampled[base_action])
    half = m // 2
    if half < 1:
        raise ValueError(f"{m} samples: at least 2 are needed (half choose, half judge)")
    choice = cheapest({b: c[:half] for b, c in sampled.items()}, base_action)
    held = np.subtract(sampled[base_action][half:], sampled[choice][half:])
    se = float(held.std(ddof=1) / math.sqrt(len(held))) if len(held) > 1 else math.nan
    return {"clairvoyant": true[base_action] - min(true.values()), "choice": choice,
            "departs": float(choice != base_action), "expected": float(held.mean()),
            "se": se, "realised": true[base_action] - true[choice]}


def signal(env_id: str, base: str, seed: int, decisions: int, samples: int, pool):
    """The figures of the first ``decisions`` schedule decisions with a choice along the base
    policy's trajectory of the episode ``seed`` (a generator of dicts, one per decision)."""
    env = make_env(env_id).unwrapped
    obs, _ = env.reset(seed=seed)
    policy = make_policy(base)              # one base: it follows the trajectory for both
    clairvoyant = RolloutTeacher(policy, pool=pool)
    sampled = RolloutTeacher(policy, pool=pool, arrivals=False, samples=samples)
    sampled.reset(env.sim, seed=seed)       # resets the shared base too
    seen = 0
    while seen < decisions:
        a = clairvoyant.base_action(env, obs)
        d = env.sim.decision
        if d.kind == SCHEDULE and len(d.candidates) >= 2:
            seen += 1
            row = decision_signal(clairvoyant.play_outs(env, a), sampled.play_outs(env, a), a)
            yield {"t": env.sim.now, "n": len(d.candidates), **row}
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            return


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--id", default="mrsched/Hadoop-v0")
    ap.add_argument("--base", default="agent:hadoop-v0")
    ap.add_argument("--seed", type=int, default=500)
    ap.add_argument("--decisions", type=int, default=40)
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    rows = []
    print("| decision | time_s | candidates | clairvoyant | choice departs | expected ± se | "
          "realised |")
    print("|---|---|---|---|---|---|---|")
    with ctx.Pool(a.workers) as pool:
        for i, r in enumerate(signal(a.id, a.base, a.seed, a.decisions, a.samples, pool)):
            rows.append(r)
            print(f"| {i} | {r['t']:.0f} | {r['n']} | {r['clairvoyant']:.4f} | "
                  f"{'yes' if r['departs'] else 'no'} | {r['expected']:+.4f} ± {r['se']:.4f} "
                  f"| {r['realised']:+.4f} |", flush=True)
    dep = [r for r in rows if r["departs"]]
    total = sum(r["clairvoyant"] for r in rows)
    gains = [r["clairvoyant"] for r in rows if r["clairvoyant"] > 0]
    median = float(np.median(gains)) if gains else 0.0
    print(f"\n{len(rows)} decisions; sum of clairvoyant gains {total:.4f}; a candidate beats "
          f"{a.base} in the world's future on {len(gains)} (median gain {median:.4f})")
    print(f"the sampled choice departs from {a.base} on {len(dep)}: expected gain (held-out half) "
          f"{sum(r['expected'] for r in dep):+.4f} ± "
          f"{math.sqrt(sum(r['se'] ** 2 for r in dep)):.4f} (1 se), realised "
          f"{sum(r['realised'] for r in dep):+.4f}; held-out gain above 2 se on "
          f"{sum(r['expected'] > 2 * r['se'] for r in dep)}, below -2 se on "
          f"{sum(r['expected'] < -2 * r['se'] for r in dep)}")


if __name__ == "__main__":
    main()
