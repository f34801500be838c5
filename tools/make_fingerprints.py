"""Golden fingerprints of the simulator's behaviour, for refactors that must change nothing.

    python tools/make_fingerprints.py            # write tests/data/fingerprints.json
    python tools/make_fingerprints.py --check    # compare with it, print the cases that differ

Each *episode case* ``(env id, policy, seed)`` runs one episode through
:func:`mrsched_gym.evaluate.run_episode` and hashes (SHA-256) the JSON of its records: metrics,
return, steps, job completion times and the whole episode log (per-job arrays, counters, web
response samples, task log); wall-clock time and the world's definition fingerprint are left
out. Each *observation case* ``(env id,
seed)`` runs a seeded uniformly-random loop over the actions of the ``allow_idle=True`` mask
for :data:`OBS_STEPS` steps and hashes
every observation array's bytes with the reward, flags and info fields of each step.
``tests/test_fingerprint.py`` recomputes them all (about half a minute) and compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "fingerprints.json"
OBS_STEPS = 200

HADOOP = "mrsched/Hadoop-v0"
THESIS = "mrsched/ThesisScale-v0"
#: ThesisScale-v0 takes minutes; a short window of it keeps its mechanisms in the test.
SHORT = {THESIS: {"workload.duration_s": 7200, "time_limit_s": 14400}}
#: Every baseline runs on these (seed 0): the default benchmark, the preemption and admission
#: decision kinds, the orchestrated rate model, dynamic availability and speculation.
ALL_BASELINES_ON = (HADOOP, "mrsched/Preemption-v0", "mrsched/Admission-v1",
                    "mrsched/HadoopOrchestrated-v0", "mrsched/Dynamic-v0",
                    "mrsched/Stragglers-v0")
#: These run on every registered id, seeds 0 and 1.
EVERYWHERE = ("edf", "fifo", "random")
#: The shipped agent: its numpy forward pass, and the SB3 checkpoint it came from (torch).
AGENT = "agent:" + str(ROOT / "agents" / "pretrained" / "hadoop-v0.npz")
AGENT_SB3 = "agent:" + str(ROOT / "agents" / "pretrained" / "hadoop-v0.zip")
OBS_IDS = (HADOOP, "mrsched/Preemption-v0", "mrsched/Admission-v1", "mrsched/Dynamic-v0",
           "mrsched/HadoopOrchestrated-v0", "mrsched/Stragglers-v0",
           "mrsched/HadoopTrace-v0", "mrsched/ThesisScale-v0")   # jobs' own expected work


def episode_cases() -> list[tuple[str, str, int]]:
    """Every ``(env id, policy, seed)`` episode case."""
    from mrsched_gym.baselines import BASELINES
    from mrsched_gym.registration import ENV_IDS
    cases = [(env_id, name, 0) for env_id in ALL_BASELINES_ON for name in BASELINES]
    cases += [(env_id, name, seed) for env_id in ENV_IDS for name in EVERYWHERE
              for seed in (0, 1) if (env_id, name, seed) not in cases]
    cases += [(HADOOP, AGENT, 0), (HADOOP, AGENT, 1), (HADOOP, AGENT_SB3, 0)]
    # The generalist through its metadata (affinity mask, slow-start rule, speculation rule)
    # and the rules where they act most.
    cases += [(HADOOP, "agent:general", 0), ("mrsched/Heterogeneous-v0", "agent:general", 0),
              ("mrsched/Heterogeneous-v0", "edf-affinity", 0),
              ("mrsched/Admission-v1", "agent:general", 0),
              ("mrsched/Heterogeneous-v0", "edf-affinity:slow_start=1", 0)]
    # The second generalist: K = 16 on the thesis world, and where the forecast is observed.
    cases += [(HADOOP, "agent:general-v2", 0), (THESIS, "agent:general-v2", 0),
              ("mrsched/Dynamic-v0", "agent:general-v2", 0)]
    return cases


def _plain(x: Any) -> Any:
    """JSON-ready: numpy arrays and scalars as Python values (NaN and inf as JSON's NaN and
    Infinity)."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _sha(obj: Any) -> str:
    text = json.dumps(_plain(obj), sort_keys=True, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def episode_fingerprint(env_id: str, policy: str, seed: int) -> str:
    """SHA-256 of one episode's records (see the module docstring)."""
    from mrsched_gym.evaluate import make_policy, run_episode
    out = run_episode(env_id, make_policy(policy), seed, env_kwargs=SHORT.get(env_id),
                      keep_log=True)
    log = out.pop("log")
    out.pop("wall_s")
    out.pop("world_fp", None)      # the world's definition (files, hashes), not its behaviour
    out["log"] = vars(log)
    return _sha(out)


def observation_fingerprint(env_id: str, seed: int, steps: int = OBS_STEPS) -> str:
    """SHA-256 of the first ``steps`` observations of a seeded random legal-action run."""
    from mrsched_gym.evaluate import make_env
    # allow_idle: the walk keeps skip among its choices at every decision (the encoder's idle
    # paths), as before the default mask became work-conserving
    env = make_env(env_id, {**SHORT.get(env_id, {}), "allow_idle": True})
    rng = np.random.default_rng(seed)
    h = hashlib.sha256()

    def feed(obs: dict[str, np.ndarray], info: dict[str, Any]) -> None:
        for key in sorted(obs):
            a = np.ascontiguousarray(obs[key])
            h.update(f"{key}{a.dtype}{a.shape}".encode())
            h.update(a.tobytes())
        h.update(json.dumps(_plain({k: v for k, v in info.items()
                                    if k not in ("metrics", "episode_log")}),
                            sort_keys=True).encode())

    obs, info = env.reset(seed=seed)
    feed(obs, info)
    for _ in range(steps):
        legal = np.flatnonzero(env.unwrapped.action_masks())
        obs, r, term, trunc, info = env.step(int(rng.choice(legal)))
        h.update(f"{r!r}{term}{trunc}".encode())
        feed(obs, info)
        if term or trunc:
            break
    env.close()
    return h.hexdigest()


def cases() -> dict[str, tuple[Callable[..., str], tuple[Any, ...]]]:
    """Every case: label -> (fingerprint function, its arguments)."""
    out: dict[str, tuple[Callable[..., str], tuple[Any, ...]]] = {}
    for env_id, policy, seed in episode_cases():
        label = policy.rpartition("/")[2] if policy.startswith("agent:") else policy
        out[f"episode {env_id} {label} {seed}"] = (episode_fingerprint, (env_id, policy, seed))
    for env_id in OBS_IDS:
        out[f"observations {env_id} 0"] = (observation_fingerprint, (env_id, 0))
    return out


def compute() -> dict[str, str]:
    """Every fingerprint, by case label."""
    return {label: fn(*args) for label, (fn, args) in cases().items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the golden file")
    args = ap.parse_args()
    got = compute()
    if args.check:
        want = json.loads(GOLDEN.read_text())
        bad = [k for k in sorted(set(want) | set(got)) if want.get(k) != got.get(k)]
        print("\n".join(bad) if bad else f"all {len(got)} fingerprints match")
        raise SystemExit(1 if bad else 0)
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(got)} fingerprints to {GOLDEN.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
