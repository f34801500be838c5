"""The flat variants' cost per step against their base ids, side by side in one process
(``python benchmarks/bench.py --flat``).

For each id the same episodes run through both: the variant plays action 0 (the most urgent
choice) and records the base action it played; the base id replays those actions. Rounds
alternate base / variant; each round times the whole loop (``env.step`` of what
``gym.make`` gives, with its wrappers) in CPU seconds, and the figure is the median per-step
time and the median of the rounds' ratios variant / base.
"""

from __future__ import annotations

import statistics
import time

import gymnasium as gym

import mrsched_gym  # noqa: F401
from mrsched_gym.env.flat import flat_id

IDS = ("mrsched/Hadoop-v0", "mrsched/Admission-v1", "mrsched/Preemption-v0",
       "mrsched/Stragglers-v0")


def played_actions(env_id: str, seeds) -> list[list[int]]:
    env = gym.make(flat_id(env_id))
    out = []
    for s in seeds:
        env.reset(seed=s)
        acts, done = [], False
        while not done:
            _, _, te, tr, info = env.step(0)
            acts.append(info["played_action"])
            done = te or tr
        out.append(acts)
    return out


def timed_loop(env, seeds, actions) -> tuple[float, int]:
    steps = 0
    t = time.process_time()
    for s, acts in zip(seeds, actions, strict=True):
        env.reset(seed=s)
        for a in acts:
            env.step(a)
        steps += len(acts)
    return time.process_time() - t, steps


def bench_flat(ids=IDS, rounds: int = 5, seeds=(0, 1)) -> list[dict]:
    rows = []
    for env_id in ids:
        acts = played_actions(env_id, seeds)
        zeros = [[0] * len(a) for a in acts]
        base, flat = gym.make(env_id), gym.make(flat_id(env_id))
        b_us, f_us, ratios = [], [], []
        for _ in range(rounds):
            tb, n = timed_loop(base, seeds, acts)
            tf, _ = timed_loop(flat, seeds, zeros)
            b_us.append(1e6 * tb / n)
            f_us.append(1e6 * tf / n)
            ratios.append(tf / tb)
        rows.append({"env": env_id, "steps": n, "base_us_per_step": statistics.median(b_us),
                     "flat_us_per_step": statistics.median(f_us),
                     "ratio": statistics.median(ratios), "ratio_min": min(ratios),
                     "ratio_max": max(ratios), "rounds": rounds})
    return rows


def print_rows(rows: list[dict]) -> None:
    print(f"flat variant vs base id, same episodes, {rows[0]['rounds']} alternating rounds "
          f"(CPU time, medians; ratio min-max over the rounds)")
    print(f"{'id':24s} {'steps':>6s} {'base us/step':>12s} {'flat us/step':>12s} "
          f"{'flat / base':>11s} {'(min-max)':>11s}")
    for r in rows:
        print(f"{r['env']:24s} {r['steps']:6d} {r['base_us_per_step']:12.1f} "
              f"{r['flat_us_per_step']:12.1f} {r['ratio']:10.3f}x "
              f"({r['ratio_min']:.3f}-{r['ratio_max']:.3f})")


# ----------------------------------------------------------------- instructions (callgrind)
#: One run under callgrind: make and reset both envs, then play nothing ("none"), the base id's
#: episode with the actions the variant played ("base"), or the variant's with action 0
#: ("flat"), through ``env.step`` of what ``gym.make`` gives. Per step = (side - none) / steps.
_CALLGRIND_SCRIPT = """
import json, sys
import gymnasium as gym
import mrsched_gym
from mrsched_gym.env.flat import flat_id
env_id, seed, side, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
acts = json.load(open(path))
base, flat = gym.make(env_id), gym.make(flat_id(env_id))
base.reset(seed=seed)
flat.reset(seed=seed)
if side == "base":
    for a in acts:
        base.step(a)
elif side == "flat":
    for _ in acts:
        flat.step(0)
print(json.dumps({"steps": len(acts),
                  "acceleration": getattr(mrsched_gym, "acceleration", lambda: "python")()}))
"""


def callgrind_instructions(script_args: list[str]) -> tuple[int, dict]:
    """``(instructions, the script's JSON line)`` of :data:`_CALLGRIND_SCRIPT` run under
    ``valgrind --tool=callgrind`` in a fresh interpreter (this interpreter's ``sys.path``)."""
    import json
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        out_file = str(Path(tmp) / "callgrind.out")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
               "OMP_NUM_THREADS": "1"}
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
                              sys.executable, "-c", _CALLGRIND_SCRIPT, *script_args],
                             capture_output=True, text=True, env=env)
        if run.returncode:
            raise RuntimeError(f"callgrind run {script_args} failed:\n{run.stderr[-3000:]}")
        for line in Path(out_file).read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1]), json.loads(run.stdout.strip().splitlines()[-1])
    raise RuntimeError(f"no instruction count in callgrind's output for {script_args}")


def callgrind_flat(env_id: str = "mrsched/Hadoop-v0", seed: int = 0) -> dict:
    """Instructions per step of the variant and of its base id over the same episode
    (seed ``seed``), each minus a run that plays no step. Deterministic up to Python's hash
    randomisation (about 0.5% of the totals)."""
    import json
    import tempfile
    from pathlib import Path
    acts = played_actions(env_id, [seed])[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "actions.json")
        Path(path).write_text(json.dumps(acts))
        counts = {}
        for side in ("none", "base", "flat"):
            counts[side], info = callgrind_instructions([env_id, str(seed), side, path])
    n = len(acts)
    base = (counts["base"] - counts["none"]) / n
    flat = (counts["flat"] - counts["none"]) / n
    return {"env": env_id, "seed": seed, "steps": n, "acceleration": info["acceleration"],
            "none": counts["none"], "base_per_step": base, "flat_per_step": flat,
            "ratio": flat / base}


def print_callgrind(row: dict) -> None:
    print(f"{row['env']} seed {row['seed']}, {row['steps']} steps, {row['acceleration']} build "
          f"(valgrind --tool=callgrind, instructions)")
    print(f"  no step (import, make, reset): {row['none'] / 1e6:,.1f} M")
    print(f"  base id per step:  {row['base_per_step'] / 1e3:,.1f}k")
    print(f"  flat variant per step: {row['flat_per_step'] / 1e3:,.1f}k")
    print(f"  flat / base: {row['ratio']:.3f}x")
