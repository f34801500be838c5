"""The generalist's network under the affinity mask at several ratios, on its validation seeds.

    python research/tools/affinity_ratios.py --ratios none 0.2 0.5 0.55 0.6 --workers 2

The numbers behind docs/notes/agents.md's choice of ``min_ratio`` (``"affinity"`` in
``agents/pretrained/general.json``): the shipped network (numpy forward pass, its speculation
rule left out: the pool has no speculation world) wrapped in
:class:`~mrsched_gym.agents.affinity.AffinityDelegate` at each ratio (``none``: the bare network),
on every id of its pool and the validation seeds 500-509, each id's mean headline divided by the
best of EDF, FIFO, Fair and Capacity there (the baselines' means stored in ``general.json`` by
the training run), and the mean over ids.
"""

from __future__ import annotations

import argparse
import functools

import numpy as np

from mrsched_gym.agents.affinity import AffinityDelegate
from mrsched_gym.agents.numpy_policy import NumpySetPolicy
from mrsched_gym.agents.pretrained import pretrained_agents
from mrsched_gym.evaluate import run_episode, run_parallel, scenario_of

SEEDS = range(500, 510)


@functools.cache
def network() -> NumpySetPolicy:
    """The shipped generalist's network, loaded once per process (stateless between episodes:
    its ``reset`` only reads the world's objective)."""
    return NumpySetPolicy.load(pretrained_agents()["general"]["numpy_path"], name="agent:general")


def episode(task: tuple[str, str, int]) -> float:
    """The headline of one episode: ``(id, ratio or "none", seed)``."""
    env_id, ratio, seed = task
    agent = network()
    policy = agent if ratio == "none" else AffinityDelegate(agent, float(ratio))
    h = scenario_of(env_id).reward.headline
    return float(run_episode(env_id, policy, seed)["metrics"][h])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ratios", nargs="+", default=["none", "0.55"])
    ap.add_argument("--workers", type=int, default=None)
    a = ap.parse_args()
    for r in a.ratios:
        if r != "none":
            float(r)                                  # fail before the first episode
    base = pretrained_agents()["general"]["validation"]["baselines"]
    tasks = [(e, r, s) for r in a.ratios for e in base for s in SEEDS]
    got = iter(run_parallel(episode, tasks, workers=a.workers))
    print("| min_ratio | " + " | ".join(e.split("/")[1] for e in base) + " | mean |")
    print("|---" * (len(base) + 2) + "|")
    for r in a.ratios:
        ratios = [np.mean([next(got) for _ in SEEDS]) / min(base[e].values()) for e in base]
        print(f"| {r} | " + " | ".join(f"{x:.3f}" for x in ratios)
              + f" | {np.mean(ratios):.3f} |")


if __name__ == "__main__":
    main()
