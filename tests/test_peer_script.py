"""benchmarks/peer.py without its peer: one line naming what is missing, exit 0, nothing run
(spark-sched-sim is never a dependency of the package or of these tests)."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "peer.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("setup, reason", [
    (None, "no --peer-path given"),
    ("empty", "holds no spark-sched-sim checkout"),
    ("no-data", "data/tpch is missing"),
])
def test_without_the_peer_the_script_skips_with_one_line(tmp_path, setup, reason):
    args = []
    if setup is not None:
        if setup == "no-data":
            (tmp_path / "spark_sched_sim").mkdir()
            (tmp_path / "spark_sched_sim" / "spark_sched_sim.py").write_text("")
        args = ["--peer-path", str(tmp_path)]
    done = run(*args)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("peer.py: skipped: ") and reason in lines[0]
    assert done.stderr == ""
