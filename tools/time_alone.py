"""A reproduction's job run alone on its cluster, and its times alone against the paper's.

What the calibration scripts (``calibrate_thesis_ch3.py``, ``calibrate_thesis_ch4.py``) share:
the reproduction's base scenario, one job of it run alone (submitted at 0, under FIFO, which is
every scheduler when one job runs), a bisection on a quantity that grows with the fitted
parameter, the check table that compares the times alone per seed with the paper's, and the
command line that either fits the jobs (printing them as YAML lines) or takes the file's.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mrsched_gym.baselines import make_baseline
from mrsched_gym.config import JobSpec, Scenario
from mrsched_gym.evaluate import run_episode
from mrsched_gym.reproduce import load_reproduction

#: Every seed's time alone within this fraction of the paper's.
TOLERANCE = 0.10
#: The reproductions' seeds a time alone is measured over.
SEEDS = tuple(range(5))


# ---------------------------------------------------------------------- running a job alone
def base_scenario(reproduction: str) -> Scenario:
    """The reproduction's base scenario (its cluster and its job list)."""
    return load_reproduction(reproduction).cases[0].scenario


def with_jobs(scenario: Scenario, jobs: tuple[JobSpec, ...]) -> Scenario:
    """``scenario`` with the job list ``jobs``."""
    return dataclasses.replace(scenario, workload=dataclasses.replace(scenario.workload,
                                                                      jobs=jobs))


def job_alone(scenario: Scenario, spec: JobSpec, map_slots: int | None = None) -> Scenario:
    """``scenario`` with ``spec`` as its only job, submitted at time 0; with ``map_slots`` map
    slots per node if given."""
    alone = with_jobs(scenario, (dataclasses.replace(spec, arrival_s=0.0,
                                                     arrival_jitter_s=0.0),))
    if map_slots is None:
        return alone
    nodes = tuple(dataclasses.replace(g, map_slots=map_slots) for g in scenario.cluster.nodes)
    return dataclasses.replace(alone, cluster=dataclasses.replace(scenario.cluster, nodes=nodes))


def alone_log(scenario: Scenario, spec: JobSpec, seed: int, map_slots: int | None = None) -> Any:
    """The episode log of ``spec`` run alone (:func:`job_alone`) under FIFO at ``seed``."""
    return run_episode(job_alone(scenario, spec, map_slots), make_baseline("fifo"), seed,
                       keep_log=True)["log"]


def job_time(log: Any, k: int = 0) -> float:
    """Job ``k``'s time from submission to completion in an episode log (s)."""
    return float(log.finish_s[k] - log.arrival_s[k])


def mean(xs: Sequence[float]) -> float:
    """The mean of ``xs``."""
    return sum(xs) / len(xs)


def within(times: Sequence[float], target: float, tol: float = TOLERANCE) -> bool:
    """Every time within ``tol`` of ``target``."""
    return all(abs(t / target - 1.0) <= tol for t in times)


# ---------------------------------------------------------------------- fitting
def bisect(f: Callable[[float], float], target: float, lo: float, hi: float,
           steps: int) -> tuple[float, float]:
    """``(lo, hi)`` after ``steps`` halvings of the interval around ``f(x) = target``, for an
    ``f`` that grows with ``x``."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
    return lo, hi


# ---------------------------------------------------------------------- output
def check_table(columns: Sequence[str],
                rows: Iterable[tuple[Sequence[str], Sequence[float], float]]) -> str:
    """A Markdown table: per row its cells for ``columns``, then its times alone per seed, their
    mean, its deviation from the paper's time ``target`` and whether every seed is within
    :data:`TOLERANCE` of it (rows are ``(cells, times, target)``)."""
    header = [*columns, "ours per seed (s)", "mean", "deviation", "within 10%"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for cells, times, target in rows:
        lines.append("| " + " | ".join([
            *cells, " / ".join(f"{t:.0f}" for t in times), f"{mean(times):.0f}",
            f"{100 * (mean(times) / target - 1):+.1f}%",
            "yes" if within(times, target) else "NO"]) + " |")
    return "\n".join(lines)


def arguments(doc: str, check_help: str) -> argparse.ArgumentParser:
    """A calibration script's command line: described by its docstring's first line, with
    ``--check`` (only run the file's jobs alone)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--check", action="store_true", help=check_help)
    return ap


def jobs_to_check(scenario: Scenario, check: bool,
                  calibrate: Callable[[Scenario], dict[str, JobSpec]],
                  yaml_line: Callable[[JobSpec], str], heading: str) -> list[JobSpec]:
    """The file's jobs with ``check``; else the fitted ones (``calibrate``), printed under
    ``heading`` as lines of the file's job list, in the file's order."""
    if check:
        return list(scenario.workload.jobs)
    fitted = calibrate(scenario)
    specs = [fitted[s.label] for s in scenario.workload.jobs]
    print(heading)
    for spec in specs:
        print("  " + yaml_line(spec))
    return specs
