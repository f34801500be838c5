"""How often an agent picks what ``srpt-slowstart`` picks, on the states ``srpt-slowstart``
visits, by cluster size (docs/notes/agents.md, "Where the fitted generalist departs from its
teacher").

    python research/tools/agreement_by_size.py agent:general --sizes 12 100 --hours 48

The world is ThesisScale-v0's at each size with ``--hours`` of arrivals (as
``scale_sweep.py``). The rule plays the episode; at every decision with more than one legal
action the agent is asked too. Prints one JSON line per size: the agreement over those
decisions, the skips of each, and the disagreement on the rule's non-skip choices split by the
number of legal candidates (at most 8, the training pools' K, or more).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scale_sweep import overrides_for

from mrsched_gym.env import MRSchedEnv
from mrsched_gym.evaluate.policy_specs import make_policy


def probe(agent_spec: str, size: int, seed: int, hours: float) -> dict:
    """One episode of ``srpt-slowstart`` at ``size`` nodes, the agent asked at each choice."""
    env = MRSchedEnv("thesis_scale", **overrides_for("mrsched/ThesisScale-v0", size, hours * 3600))
    obs, _ = env.reset(seed=seed)
    rule = make_policy("srpt-slowstart")
    rule.reset(env.sim, seed=seed)
    agent = make_policy(agent_spec)
    if hasattr(agent, "reset"):
        agent.reset(env.sim, seed=seed)
    K = env.K
    n = agree = multi = skip_a = skip_r = 0
    legal_counts: list[int] = []
    by: dict[str, list[int]] = {}
    t = time.process_time()
    done = False
    while not done:
        mask = env.action_masks()
        r = rule.decide(env.sim)
        r = K if r == env.sim.K else r
        a = agent.act(obs, mask)
        if mask.sum() > 1:
            multi += 1
            agree += a == r
            skip_a += a == K
            skip_r += r == K
            legal = int(mask[:K].sum())
            legal_counts.append(legal)
            if r != K:
                tot_ok = by.setdefault("le8" if legal <= 8 else "gt8", [0, 0])
                tot_ok[0] += 1
                tot_ok[1] += a == r
        n += 1
        obs, _, term, trunc, _ = env.step(r)
        done = term or trunc
    return {"agent": agent_spec, "size": size, "seed": seed, "hours": hours, "decisions": n,
            "with_choice": multi, "agreement": round(agree / max(multi, 1), 4),
            "agent_skips": skip_a, "rule_skips": skip_r,
            "mean_legal_candidates": round(float(np.mean(legal_counts)), 2) if legal_counts else 0,
            "non_skip_disagreement_by_legal": {k: [v[0], round(1 - v[1] / v[0], 4)]
                                               for k, v in sorted(by.items())},
            "cpu_s": round(time.process_time() - t, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("agent", help="the policy asked, e.g. agent:general or agent:PATH.npz")
    ap.add_argument("--sizes", type=int, nargs="+", default=[12, 48, 100])
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--hours", type=float, default=48.0)
    a = ap.parse_args()
    for size in a.sizes:
        print(json.dumps(probe(a.agent, size, a.seed, a.hours)), flush=True)


if __name__ == "__main__":
    main()
