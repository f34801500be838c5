"""What a training step costs as the cluster grows: MaskablePPO with the set network (the
shipped specialist's config ``hadoop_set``, one thread, ``numerics: fast``) learning on
Hadoop-v0 and on the thesis-scale world at several node counts, the rows interleaved round by
round in one process, so that the ratios hold on a loaded machine (docs/notes/agents.md, "What
the targets would need").

    python research/tools/train_cost.py --sizes 12 24 48 100 --steps 4096 --rounds 2

The thesis-scale world (``thesis_scale``: load 1.0, so the arrival rate grows with the nodes)
runs with ``--duration`` seconds of arrivals (default one day), so that the steps measured come
from a loaded cluster rather than from a week's empty first hours. Prints, per row, the median
env steps per CPU-second (rollouts and PPO updates, no evaluations) and its ratio to Hadoop-v0's.
"""

from __future__ import annotations

import argparse
import statistics
import time

from mrsched_gym.config import to_dict
from mrsched_gym.evaluate import scenario_of


def world(size: int, duration: float) -> dict:
    """The thesis-scale world's overrides at ``size`` nodes and ``duration`` s of arrivals."""
    sc = scenario_of("thesis_scale")
    nodes = to_dict(sc)["cluster"]["nodes"]
    nodes[0]["count"] = size
    return {"cluster.nodes": nodes, "workload.duration_s": duration,
            "time_limit_s": duration + (sc.time_limit_s - sc.workload.duration_s)}


def steps_per_cpu_s(env: str, env_kwargs: dict, steps: int) -> float:
    """Env steps per CPU-second of ``model.learn(steps)`` (the model built outside the clock)."""
    import torch

    from mrsched_gym.agents.training.train import build_model, load_config, make_vec_env
    torch.set_num_threads(1)
    cfg = load_config("hadoop_set", env=env, env_kwargs=env_kwargs, total_timesteps=steps,
                      tensorboard=False, numerics="fast")
    model = build_model(cfg, make_vec_env(cfg))
    c0 = time.process_time()
    model.learn(steps)
    return model.num_timesteps / (time.process_time() - c0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[12, 24, 48, 100])
    ap.add_argument("--steps", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--duration", type=float, default=86400.0)
    args = ap.parse_args()
    rows = {"mrsched/Hadoop-v0": ("mrsched/Hadoop-v0", {})}
    for n in args.sizes:
        rows[f"thesis_scale, {n} nodes"] = ("thesis_scale", world(n, args.duration))
    got: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(args.rounds):
        for label, (env, kw) in rows.items():
            got[label].append(steps_per_cpu_s(env, kw, args.steps))
    base = statistics.median(got["mrsched/Hadoop-v0"])
    print("| world | env steps per CPU-second (median) | x Hadoop-v0 |\n|---|---:|---:|")
    for label, vals in got.items():
        m = statistics.median(vals)
        print(f"| {label} | {m:,.0f} | {m / base:.2f} |")


if __name__ == "__main__":
    main()
