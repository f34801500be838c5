"""Where a rollout teacher departs from its base: along the base's trajectory, and its own.

    python research/tools/rollout_departures.py --base agent:hadoop-v0 --seed 1000500 \
        --decisions 400

Plays the first ``--decisions`` decisions of one episode twice: once taking the base policy's
actions, once taking the rollout teacher's
(:class:`~mrsched_gym.agents.research.rollout.RolloutTeacher`
over ``--base``; ``--myopic`` for the myopic one). At every decision of both it asks both
for their action and counts the decisions on which they differ. DAgger labels the states its
student reaches, which are close to the base's trajectory, so the first count is what a
student taught by the rollout is asked to depart on. The play-outs run over ``--workers``
processes, with one BLAS/OpenMP thread.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp

from mrsched_gym.agents.research.rollout import RolloutTeacher
from mrsched_gym.evaluate import make_env, make_policy


def departures(env_id: str, base: str, seed: int, decisions: int, follow_rollout: bool,
               arrivals: bool, pool) -> tuple[int, int]:
    """``(decisions played, decisions where the rollout's action is not the base's)`` along
    the base's trajectory, or the rollout's (``follow_rollout``)."""
    env = make_env(env_id).unwrapped
    obs, _ = env.reset(seed=seed)
    teacher = RolloutTeacher(make_policy(base), pool=pool, arrivals=arrivals)
    teacher.reset(env.sim, seed=seed)
    n = differ = 0
    while n < decisions:
        own = teacher.base_action(env, obs)
        planned = teacher.plan(env, obs)
        n += 1
        differ += own != planned
        obs, _, term, trunc, _ = env.step(planned if follow_rollout else own)
        if term or trunc:
            break
    return n, differ


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--id", default="mrsched/Hadoop-v0")
    ap.add_argument("--base", default="agent:hadoop-v0")
    ap.add_argument("--seed", type=int, default=1_000_500)
    ap.add_argument("--decisions", type=int, default=400)
    ap.add_argument("--myopic", action="store_true", help="the myopic rollout teacher")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    with ctx.Pool(a.workers) as pool:
        for follow, name in ((False, a.base), (True, "the rollout")):
            n, differ = departures(a.id, a.base, a.seed, a.decisions, follow, not a.myopic,
                                   pool)
            print(f"along {name}'s trajectory: the rollout departs from {a.base} on {differ} "
                  f"of {n} decisions", flush=True)


if __name__ == "__main__":
    main()
