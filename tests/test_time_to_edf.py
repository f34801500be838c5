"""benchmarks/time_to_edf.py, the training guide's first path on a CPU budget, run as a user runs
it: a tiny budget, with and without the warm start."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "time_to_edf.py"


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_a_warm_started_run_writes_the_kept_model_and_says_what_it_used(tmp_path):
    out = run(tmp_path, "--seed", "0", "--out", "m.zip", "--budget-cpu-s", "0",
              "--n-envs", "2", "--every", "1000000", "--warm-start", "edf",
              "--warm-rounds", "1", "--warm-steps", "64")
    assert out.returncode == 0, out.stderr
    assert zipfile.is_zipfile(tmp_path / "m.zip")
    assert "imitate round 0" in out.stdout
    last = out.stdout.strip().splitlines()[-1]
    assert "warm start edf" in last and "CPU-s" in last and "kept the model of step" in last


@pytest.mark.parametrize("args, says", [
    (["--warm-rounds", "0"], "--warm-rounds"),
    (["--out", "m.pt"], "--out must end in .zip"),
])
def test_bad_arguments_are_named_before_any_training(tmp_path, args, says):
    base = ["--seed", "0", "--out", "m.zip", "--warm-start", "edf"]
    out = run(tmp_path, *base, *args)
    assert out.returncode == 2
    assert says in out.stderr
    assert not (tmp_path / "m.zip").exists()


def test_an_unknown_warm_start_policy_is_named(tmp_path):
    out = run(tmp_path, "--seed", "0", "--out", "m.zip", "--warm-start", "no-such-rule",
              "--budget-cpu-s", "0")
    assert out.returncode == 2, out.stderr
    assert "--warm-start" in out.stderr and "no-such-rule" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "m.zip").exists()


@pytest.mark.slow
def test_a_residual_run_keeps_a_model_no_worse_than_the_rule_on_validation(tmp_path):
    """``--prior edf``: the first validation, at step 0, scores EDF itself (the correction
    starts at zero), so the kept model's validation score is at most EDF's on those seeds."""
    import re

    import numpy as np

    from mrsched_gym.agents.best_on_validation import VALIDATION_SEEDS
    from mrsched_gym.evaluate import evaluate
    out = run(tmp_path, "--seed", "0", "--out", "m.zip", "--budget-cpu-s", "0",
              "--n-envs", "2", "--every", "1000000", "--prior", "edf")
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert "prior edf" in last
    kept = float(re.search(r"\(validation ([0-9.]+)\)", last).group(1))
    recs = evaluate(["edf"], ["mrsched/Hadoop-v0"], seeds=VALIDATION_SEEDS, workers=1,
                    progress=False)
    assert kept <= round(float(np.mean([r["deadline_penalty_h"] for r in recs])), 2)
