"""How far a clairvoyant rollout over a policy gets: the headroom behind a rollout teacher.

    python research/tools/rollout_ceiling.py --base agent:hadoop-v0 --seeds 500 501 502 503 \
        --workers 2

    python research/tools/rollout_ceiling.py --base agent:hadoop-v0 --myopic --workers 2

    python research/tools/rollout_ceiling.py --base agent:hadoop-v0 --samples 4 --horizon 3600

    python research/tools/rollout_ceiling.py --base agent:hadoop-v0 --myopic --estimates \
        --margin 0.1

Plays whole episodes with the rollout policy over ``--base``
(:class:`~mrsched_gym.agents.research.rollout.RolloutTeacher`: at every schedule decision with a
choice, each candidate is played out to the episode's end by the base, and the cheapest is
taken) and prints, per seed, its headline beside the base's and the reference baselines'
(``--against``, EDF by default) on the same world. The rollout knows the world's future
(arrivals, task lengths), so its numbers indicate the room that one step of policy improvement
finds, not what a scheduler that does not know the future can reach; except with ``--estimates``
(below), they are no policy's result. With ``--myopic`` the play-outs leave out the jobs that
have not arrived yet (the myopic rollout, ``myopic-rollout:BASE``), which removes the knowledge
of what will arrive. With ``--samples M`` they hold ``M`` draws of the arrivals to come from the
workload instead (the sampled rollout, which knows the workload's law, not its draw).
``--estimates`` replaces in the copies what no scheduler observes (the present jobs' task
lengths to come, the load and availability to come) by estimates made from what it does (with
``--myopic``: the fair myopic rollout, a policy a scheduler could run), and ``--margin F`` keeps
the base's action unless a candidate's play-out is cheaper by the fraction ``F``. Episodes run
with one BLAS/OpenMP thread, as the harness runs them. Slow: ~5 min per Hadoop-v0 episode over
``agent:hadoop-v0``, one core each (``--workers``). """

from __future__ import annotations

import argparse
import math

import numpy as np

from mrsched_gym.agents.research.rollout import RolloutTeacher, check_margin
from mrsched_gym.evaluate import (
    evaluate,
    make_env,
    make_policy,
    parse_policy,
    run_parallel,
    scenario_of,
)


def rollout_headline(task: tuple[str, str, int, bool, int, float, bool, float]) -> float:
    """The headline of one episode played by the rollout policy over ``base``; ``task`` is
    ``(env id, base, seed, whether the copies keep the arrivals to come, samples of the
    arrivals to come, their horizon in seconds, whether the copies hold estimates of what is
    not observed, the departure margin)``."""
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):
        return _play(*task)


def _play(env_id: str, base: str, seed: int, arrivals: bool, samples: int,
          horizon_s: float, estimates: bool, margin: float) -> float:
    env = make_env(env_id).unwrapped
    obs, _ = env.reset(seed=seed)
    teacher = RolloutTeacher(make_policy(base), arrivals=arrivals, samples=samples,
                             horizon_s=horizon_s, estimates=estimates, margin=margin)
    teacher.reset(env.sim, seed=seed)
    while True:
        obs, _, term, trunc, info = env.step(teacher.plan(env, obs))
        if term or trunc:
            return float(info["metrics"][scenario_of(env_id).reward.headline])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--id", default="mrsched/Hadoop-v0")
    ap.add_argument("--base", default="agent:hadoop-v0")
    ap.add_argument("--against", nargs="+", default=["edf"])
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(500, 510)))
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--myopic", action="store_true",
                    help="play out the jobs in the system only (no future arrivals)")
    ap.add_argument("--samples", type=int, default=0,
                    help="play out each candidate in this many copies whose arrivals to come "
                         "are drawn from the workload (the sampled rollout)")
    ap.add_argument("--horizon", type=float, default=math.inf,
                    help="with --samples: the drawn jobs arrive at most this many seconds "
                         "after the decision")
    ap.add_argument("--estimates", action="store_true",
                    help="with --myopic or --samples: the copies hold estimates of the present "
                         "jobs' task lengths and of the load and availability to come, not the "
                         "world's draw (with --myopic: the fair myopic rollout)")
    ap.add_argument("--margin", type=float, default=0.0,
                    help="depart from the base only for a candidate whose play-out costs less "
                         "than the base action's by more than this fraction of its magnitude")
    a = ap.parse_args()
    try:
        check_margin(a.margin)
    except ValueError as e:
        ap.error(f"--margin: {e}")
    if a.estimates and not (a.myopic or a.samples):
        ap.error("--estimates needs --myopic or --samples")
    if a.samples and a.myopic:
        ap.error("--samples and --myopic exclude each other")
    if a.horizon < math.inf and not a.samples:
        ap.error("--horizon needs --samples")
    arrivals = not (a.myopic or a.samples)
    h = scenario_of(a.id).reward.headline
    rolled = run_parallel(rollout_headline,
                          [(a.id, a.base, s, arrivals, a.samples, a.horizon, a.estimates,
                           a.margin) for s in a.seeds],
                          workers=a.workers, progress=False)
    recs = evaluate([a.base, *a.against], [a.id], a.seeds, workers=a.workers, progress=False)
    per = {(r["policy"], r["seed"]): float(r[h]) for r in recs}
    base, against = parse_policy(a.base).label, [parse_policy(p).label for p in a.against]
    kind = ("fair-" if a.estimates else "") + ("myopic-" if a.myopic else "")
    if a.samples:
        kind += f"sampled{a.samples}-" + (f"h{a.horizon:g}-" if a.horizon < math.inf else "")
    if a.margin:
        kind = f"margin{a.margin:g}-{kind}"
    cols = [f"{kind}rollout({base})", base, *against]
    print(f"{a.id}, {h} per seed")
    print("| seed | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    rows = [[x, per[(base, s)], *(per[(b, s)] for b in against)]
            for s, x in zip(a.seeds, rolled, strict=True)]
    for s, row in zip(a.seeds, rows, strict=True):
        print(f"| {s} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    means = np.mean(rows, axis=0)
    print("| mean | " + " | ".join(f"{v:.3f}" for v in means) + " |")
    best = min(means[2:])
    print("| / best of --against | " + " | ".join(f"{v / best:.2f}" for v in means) + " |")


if __name__ == "__main__":
    main()
