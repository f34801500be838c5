"""How often a policy takes the action a reference rule would take, on the states the policy
reaches (docs/notes/agents.md, "Fine-tuning under the rules").

    python research/tools/rule_agreement.py --id mrsched/Hadoop-v0 --policy agent:general \\
        --rule "edf-affinity:slow_start=1" --seeds 500 501 502 503 504

At every decision where the policy has a choice (at least two legal actions in the mask it
chooses from: the env's, narrowed by the policy's own rules when it has any, as the shipped
agents do) the rule is asked too (it sees the same state and the env's mask; its answer is not
played), and the count of equal actions is printed per seed and in all.
"""

from __future__ import annotations

import argparse


def choice_mask(policy, mask):
    """The mask ``policy`` chooses from: ``mask`` narrowed by each rule it is wrapped in
    (:class:`~mrsched_gym.agents.masking.MaskingDelegate`), outermost first, as they narrow it."""
    from mrsched_gym.agents.masking import MaskingDelegate, narrowed
    while hasattr(policy, "agent"):
        if isinstance(policy, MaskingDelegate):
            mask = narrowed(mask, policy.masked_candidates(policy.sim))
        policy = policy.agent
    return mask


def agreement(env_id: str, policy: str, rule: str, seed: int) -> tuple[int, int, float]:
    """``(decisions where ``policy`` has a choice, those where the rule agrees, headline)`` of
    one episode played by ``policy``."""
    from mrsched_gym.evaluate import make_env, make_policy, scenario_of
    env = make_env(env_id, {})
    base = env.unwrapped
    player, judge = make_policy(policy), make_policy(rule)
    obs, _ = env.reset(seed=seed)
    player.reset(base.sim, seed=seed)
    judge.reset(base.sim, seed=seed)
    n = same = 0
    while True:
        mask = base.action_masks()
        a = player.act(obs, mask)
        if int(choice_mask(player, mask).sum()) >= 2:
            r = judge.act(obs, mask) if hasattr(judge, "act") else judge.decide(base.sim)
            n += 1
            same += int((base.K if r is None else r) == a)
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            return n, same, info["metrics"][scenario_of(env_id).reward.headline]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--id", default="mrsched/Hadoop-v0")
    p.add_argument("--policy", default="agent:general")
    p.add_argument("--rule", default="edf-affinity:slow_start=1")
    p.add_argument("--seeds", type=int, nargs="+", default=[500, 501, 502, 503, 504])
    args = p.parse_args()
    total = agree = 0
    for seed in args.seeds:
        n, same, headline = agreement(args.id, args.policy, args.rule, seed)
        print(f"seed {seed}: {same}/{n} = {same / max(n, 1):.3f} (headline {headline:.4g})")
        total, agree = total + n, agree + same
    print(f"all: {agree}/{total} = {agree / max(total, 1):.3f}")


if __name__ == "__main__":
    main()
