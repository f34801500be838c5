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



def _peer_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("peer_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_our_random_side_plays_legal_actions_from_draws_made_before_the_clock(monkeypatch):
    """The small setting's ``random`` policy: a legal action at each decision (no invalid
    action in the episode), from uniforms drawn before the episode; an episode that uses up its
    draws takes more and plays the same actions."""
    import gymnasium as gym

    import mrsched_gym  # noqa: F401  (registers the ids)
    peer = _peer_module()
    played: list[list[tuple[int, bool]]] = []

    class Recorded(gym.Wrapper):
        def reset(self, **kwargs):
            played.append([])
            return self.env.reset(**kwargs)

        def step(self, action):
            out = self.env.step(action)
            played[-1].append((action, out[-1]["invalid_action"]))
            return out

    real_make = gym.make
    monkeypatch.setattr(gym, "make", lambda *a, **k: Recorded(real_make(*a, **k)))
    whole = peer.run_ours("mrsched/Hadoop-v0", {}, "random", 1, 3)
    monkeypatch.setattr(peer, "DRAWS", 7)
    refilled = peer.run_ours("mrsched/Hadoop-v0", {}, "random", 1, 3)
    assert whole[1:] == refilled[1:] and whole[2] > 100
    assert played[0] == played[1] and len(played[0]) == whole[2]
    assert not any(invalid for _, invalid in played[0])
    assert len({a for a, _ in played[0]}) > 2       # not always the same candidate
