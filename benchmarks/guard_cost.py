"""What the read-only view costs an outside policy (not a test): decisions per CPU-second of an
outside rule policy (EDF written from the contract) run by the harness, which hands it the
read-only :class:`~mrsched_gym.policy.readonly.GuardedView`, beside the same policy handed the live
simulator (what every outside policy got before), rounds alternating. The baselines never go
through the view: ``python benchmarks/bench.py --compare REF`` times them.

Usage::

    python benchmarks/guard_cost.py              # Hadoop-v0, 5 seeds, 3 rounds
    python benchmarks/guard_cost.py --rounds 5 --seeds 10
    python benchmarks/guard_cost.py --callgrind  # instructions per decision (valgrind), 3 seeds

``--callgrind`` counts instructions, which do not depend on the machine's load: the same
script runs three times under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``, one BLAS
thread: an idle BLAS thread's spinning is counted too), making the
env and playing no episode, then the same episodes with each side; a side's instructions per
decision are its count minus the first, over the decisions played.
"""

from __future__ import annotations

import argparse
import inspect
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

import gymnasium as gym

import mrsched_gym  # noqa: F401  (registers the ids)
from mrsched_gym.evaluate.policy_specs import make_policy, parse_policy
from mrsched_gym.policy.contract import as_policy
from mrsched_gym.policy.process import ProcessPolicy
from mrsched_gym.sim.decision import DecisionKind


class OutsideEDF:
    """EDF as an outside policy writes it (reads candidates' jobs, the view's K)."""

    name = "outside-edf"

    def decide(self, decision, view):
        if decision.kind == DecisionKind.ADMIT:
            return 0
        if decision.kind != DecisionKind.SCHEDULE or not decision.candidates:
            return view.K
        keys = [(c.job.deadline_s, c.job.jid, c.phase) for c in decision.candidates]
        return keys.index(min(keys))


class Unguarded:
    """The policy handed the live simulator (the harness before the read-only view)."""

    def __init__(self, policy) -> None:
        self.policy = policy

    def reset(self, sim, seed=None) -> None:
        """Nothing to reset."""

    def decide(self, sim) -> int:
        """``policy.decide(sim.decision, sim)``."""
        return self.policy.decide(sim.decision, sim)


def children_cpu() -> float:
    """CPU seconds of this process's ended (and reaped) child processes."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def episode_cpu(env_id: str, runner, seed: int) -> tuple[int, float]:
    """Decisions and CPU seconds of one episode decided by ``runner.decide(sim)``; for a
    policy in its own process, its process's CPU seconds too (its start and load included)."""
    env = gym.make(env_id)
    env.reset(seed=seed)
    base = cast("mrsched_gym.env.MRSchedEnv", env.unwrapped)
    kids = children_cpu()
    runner.reset(base.sim, seed=seed)
    steps, t0 = 0, time.process_time()
    while True:
        _, term, trunc, _ = base.advance(runner.decide(base.sim))
        steps += 1
        if term or trunc:
            break
    cpu = time.process_time() - t0
    if isinstance(runner, ProcessPolicy):
        runner.close()                             # reaped: its CPU is counted
        cpu += children_cpu() - kids
    env.close()
    return steps, cpu


def play(env_id: str, side: str, seeds: int) -> int:
    """Decisions of ``seeds`` episodes played by ``side`` (``guarded``, ``live``, or ``none``:
    the env made and reset, no episode played)."""
    runners = {"guarded": as_policy(OutsideEDF()), "live": Unguarded(OutsideEDF())}
    if side == "none":                             # what both sides import and make
        gym.make(env_id).reset(seed=0)
        return 0
    runner = runners[side]
    return sum(episode_cpu(env_id, runner, seed)[0] for seed in range(seeds))


def instructions(env_id: str, side: str, seeds: int) -> tuple[int, int]:
    """``(instructions, decisions)`` of :func:`play` run under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                              sys.executable, __file__, "--env", env_id, "--seeds", str(seeds),
                              "--play", side], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": "0",
                                  "OPENBLAS_NUM_THREADS": "1"})
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1]), int(run.stdout.split()[-1])
    raise RuntimeError("no instruction count in callgrind's output")


def main() -> None:
    """Print decisions per CPU-second, guarded and unguarded, and their ratio (or, with
    ``--callgrind``, instructions per decision)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="mrsched/Hadoop-v0")
    p.add_argument("--seeds", type=int, default=None)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--callgrind", action="store_true")
    p.add_argument("--play", choices=("guarded", "live", "none"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.play:
        print(play(a.env, a.play, a.seeds))
        return
    if a.callgrind:
        seeds = a.seeds or 3
        base, _ = instructions(a.env, "none", seeds)
        per = {}
        for side in ("live", "guarded"):
            total, n = instructions(a.env, side, seeds)
            per[side] = (total - base) / n
            print(f"{side}: {total:,} instructions ({total - base:,} over {n} decisions, "
                  f"{per[side]:,.0f} per decision)")
        print(f"{a.env}, outside EDF, {seeds} seeds: read-only view costs "
              f"{per['guarded'] / per['live']:.3f}x the instructions per decision "
              f"(+{per['guarded'] - per['live']:,.0f})")
        return
    seeds = a.seeds or 5
    rates: dict[str, list[float]] = {"guarded": [], "live": [], "process": []}
    folder = tempfile.TemporaryDirectory()
    source = Path(folder.name) / "outside_edf.py"
    source.write_text("from mrsched_gym.sim.decision import DecisionKind\n\n\n"
                      + inspect.getsource(OutsideEDF))
    in_process = make_policy(parse_policy(f"{source}:OutsideEDF"))
    for _ in range(a.rounds):
        for label, runner in (("guarded", as_policy(OutsideEDF())),
                              ("live", Unguarded(OutsideEDF())),
                              ("process", in_process)):
            steps = cpu = 0.0
            for seed in range(seeds):
                n, c = episode_cpu(a.env, runner, seed)
                steps, cpu = steps + n, cpu + c
            rates[label].append(steps / cpu)
    g, live = statistics.median(rates["guarded"]), statistics.median(rates["live"])
    proc = statistics.median(rates["process"])
    spread = [round(g2 / p2, 2) for g2, p2 in zip(rates["guarded"], rates["process"],
                                                  strict=True)]
    print(f"{a.env}, outside EDF, {seeds} seeds, median of {a.rounds} rounds: "
          f"read-only view {g:.0f} decisions/CPU-s, live simulator {live:.0f}; "
          f"cost per decision {live / g:.2f}x ({(1 / g - 1 / live) * 1e6:.1f} us)")
    print(f"policy file in its own process (both processes' CPU, its start and load "
          f"included): {proc:.0f} decisions/CPU-s, {g / proc:.2f}x the read-only view's CPU "
          f"per decision (rounds: {spread}; +{(1 / proc - 1 / g) * 1e6:.1f} us)")


if __name__ == "__main__":
    main()
