"""Policies on the generalist's validation seeds, as ratios to the best of its baselines.

    python research/tools/validation_ratios.py --policies srpt atc atc:k=2 agent:hadoop-v0
    python research/tools/validation_ratios.py --policies srpt agent:general \
        --ids mrsched/Stragglers-v0 \
        --baselines hadoop-speculative late --speculation hadoop-speculative
    python research/tools/validation_ratios.py --policies agent:hadoop-v0 --affinity 0.55 \
        --slow-start 1

The numbers behind docs/notes/agents.md's choices of teachers and of ``atc``'s ``k``: on each
id (the pool of ``configs/agents/general.yaml`` by default) every policy's mean headline over the
validation seeds 500-509 (the training config's ``eval``), divided by the lowest mean among
``--baselines`` (EDF, FIFO, Fair, Capacity: the training's validation score). With
``--speculation RULE`` each policy's speculation decisions are made by that baseline's rule
(:class:`~mrsched_gym.agents.policy.SpeculationDelegate`), as a shipped agent's metadata can ask.
With ``--affinity RATIO`` and ``--slow-start FRACTION`` every agent among ``--policies`` plays
under those decision rules, as a shipped agent whose metadata names them (``agents/affinity.py``,
``agents/slow_start.py``): e.g. the specialist under the generalist's rules, a teacher it could
have had (docs/notes/agents.md); a baseline under them is a reference rule of its own
(``edf-affinity:slow_start=1``, ``srpt-slowstart``).
Records are kept in ``--records`` (a policy already there for an id is not run again, unless
its fingerprint changed: an agent's file or metadata, e.g. its affinity mask).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from mrsched_gym.agents.policy import SpeculationDelegate
from mrsched_gym.evaluate import (
    PolicySpec,
    evaluate,
    make_policy,
    parse_policy,
    policy_fingerprint,
    run_episode,
    scenario_of,
)

CONFIG = "general"
#: The records file's entry of each policy's fingerprint (its file's hash and metadata for an
#: agent), so that a re-trained or re-shipped agent is run again rather than read back.
FINGERPRINTS = "fingerprints"


def with_rules(policy: str, rules: dict) -> PolicySpec:
    """``policy``'s spec, an agent's with ``rules`` (its metadata's decision-rule keys) set and
    named in its label; a baseline's unchanged when ``rules`` is empty."""
    spec = parse_policy(policy)
    if not rules:
        return spec
    if spec.kind != "agent":
        raise SystemExit(f"{policy}: --affinity and --slow-start apply to agents; a baseline "
                         f"under them is a reference rule (edf-affinity:slow_start=1, "
                         f"srpt-slowstart)")
    params = {**dict(spec.params), **rules}
    label = policy + "".join(f"+{k}={v}" for k, v in rules.items())
    return replace(spec, label=label, params=tuple(params.items()))


def headlines(specs: list[PolicySpec], env_id: str, seeds: list[int], speculation: str | None,
              workers: int) -> dict[str, list[float]]:
    """Each policy's headline per seed on ``env_id``, by label."""
    h = scenario_of(env_id).reward.headline
    if speculation is None:
        out: dict[str, list[float]] = {p.label: [] for p in specs}
        for r in sorted(evaluate(specs, [env_id], seeds, workers=workers, progress=False),
                        key=lambda r: r["seed"]):
            out[r["policy"]].append(float(r[h]))
        return out
    return {p.label: [run_episode(env_id, SpeculationDelegate(make_policy(p), speculation),
                                  s)["metrics"][h] for s in seeds] for p in specs}


def main() -> None:
    from mrsched_gym.agents.training.train import load_config
    cfg = load_config(CONFIG)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", nargs="+", required=True)
    ap.add_argument("--ids", nargs="+", default=list(cfg.worlds.ids))
    ap.add_argument("--baselines", nargs="+", default=list(cfg.eval.baselines))
    ap.add_argument("--speculation", default=None,
                    help="a speculating baseline whose rule makes the policies' speculation "
                         "decisions (not the baselines')")
    ap.add_argument("--affinity", type=float, default=None,
                    help="the agents play under the affinity mask with this speed ratio")
    ap.add_argument("--slow-start", type=float, default=None,
                    help="the agents play under the slow-start rule with this fraction")
    ap.add_argument("--records", default="runs/validation_ratios.json")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    seeds = list(range(cfg.eval.seed_start, cfg.eval.seed_start + cfg.eval.n_seeds))
    store = Path(a.records)
    db = json.loads(store.read_text()) if store.is_file() else {}
    suffix = f"+{a.speculation}" if a.speculation else ""
    rules = {k: v for k, v in (("affinity", a.affinity), ("slow_start", a.slow_start))
             if v is not None}
    specs = {p: with_rules(p, rules) for p in a.policies}
    key = {p: specs[p].label + suffix for p in a.policies}     # a policy's records entry
    fingerprints = db.setdefault(FINGERPRINTS, {})
    for name, spec in ([(b, parse_policy(b)) for b in a.baselines]
                       + [(key[p], specs[p]) for p in a.policies]):
        fp = policy_fingerprint(spec)
        if fingerprints.get(name) != fp:           # a new file or metadata: run it again
            for env_id, have in db.items():
                if env_id != FINGERPRINTS:
                    have.pop(name, None)
            fingerprints[name] = fp
    for env_id in a.ids:
        have = db.setdefault(env_id, {})
        todo = [parse_policy(b) for b in a.baselines if b not in have]
        have.update(headlines(todo, env_id, seeds, None, a.workers) if todo else {})
        todo = [specs[p] for p in a.policies if key[p] not in have]
        got = headlines(todo, env_id, seeds, a.speculation, a.workers) if todo else {}
        have.update({label + suffix: v for label, v in got.items()})
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(json.dumps(db, indent=1))
        best = min(float(np.mean(have[b])) for b in a.baselines)
        print(f"{env_id.split('/')[-1]:<28}" + "  ".join(
            f"{key[p]}={np.mean(have[key[p]]) / best:.3f}" for p in a.policies), flush=True)

if __name__ == "__main__":
    main()
