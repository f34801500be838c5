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


@pytest.mark.parametrize("draws", [4096, 7])
def test_our_random_side_plays_a_uniform_candidate_from_draws_made_before_each_episode(
        monkeypatch, draws):
    """The small setting's ``random`` policy: at each decision with ``n`` candidates, candidate
    ``int(u * n)`` of the episode's next uniform ``u``; the uniforms are drawn before the
    episode starts (one call for an episode shorter than ``DRAWS``) and refilled ``DRAWS`` at
    a time when an episode uses them up; every action is legal."""
    import gymnasium as gym
    import numpy as np

    import mrsched_gym  # noqa: F401  (registers the ids)
    peer = _peer_module()
    monkeypatch.setattr(peer, "DRAWS", draws)
    steps: list[tuple[int, int, bool]] = []            # (candidates, action, invalid)
    calls: list[tuple[int, int, list[float]]] = []    # (resets and steps before, uniforms)
    starts: list[int] = []

    class Recorded(gym.Wrapper):
        def reset(self, **kwargs):
            starts.append(len(steps))
            return self.env.reset(**kwargs)

        def step(self, action):
            n = len(self.env.unwrapped.sim.candidates)
            out = self.env.step(action)
            steps.append((n, action, out[-1]["invalid_action"]))
            return out

    real_rng = np.random.default_rng

    class CountedDraws:
        def __init__(self, seed):
            self.rng = real_rng(seed)

        def random(self, size):
            values = self.rng.random(size)
            calls.append((len(starts), len(steps), values.tolist()))
            return values

    real_make = gym.make
    monkeypatch.setattr(gym, "make", lambda *a, **k: Recorded(real_make(*a, **k)))
    monkeypatch.setattr(peer.np.random, "default_rng", CountedDraws)
    _, _, decisions = peer.run_ours("mrsched/Hadoop-v0", {}, "random", 2, 3)
    assert len(steps) == decisions > 200 and len(starts) == 2
    ends = starts[1:] + [len(steps)]
    for episode, (start, end) in enumerate(zip(starts, ends, strict=True)):
        before = [values for resets, at, values in calls if resets == episode and at == start]
        refills = [values for resets, at, values in calls if resets == episode + 1 and at < end]
        assert len(before) == 1                                     # before its reset
        mine = before + refills
        played = [(n, a) for n, a, _ in steps[start:end] if n]      # decisions with candidates
        assert len(mine) == max(1, -(-len(played) // draws))        # before it, then refills
        uniforms = [u for values in mine for u in values][:len(played)]
        assert [a for _, a in played] == [int(u * n) for u, (n, _) in zip(uniforms, played,
                                                                           strict=True)]
    assert not any(invalid for _, _, invalid in steps)


def test_through_the_simulator_plays_the_same_episodes_without_observing(monkeypatch):
    """``--through simulator`` times ours' simulator alone: the same decisions and tasks as
    through ``env.step`` (the same draws, so the same actions), and no observation after the
    reset's."""
    from mrsched_gym.env.encoding import ObservationEncoder
    peer = _peer_module()
    _, tasks, decisions = peer.run_ours("mrsched/Hadoop-v0", {}, "random", 2, 5)
    observed = []
    real = ObservationEncoder.observe_bytes

    def counted(self):
        observed.append(self.sim.now)
        return real(self)

    monkeypatch.setattr(ObservationEncoder, "observe_bytes", counted)
    _, alone_tasks, alone_decisions = peer.run_ours("mrsched/Hadoop-v0", {}, "random", 2, 5,
                                                    through="simulator")
    assert (alone_tasks, alone_decisions) == (tasks, decisions) and decisions > 200
    assert len(observed) == 2                         # each reset's, none per decision
