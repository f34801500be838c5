"""A time budget per decision for outside policies (mrsched_gym/policy/decision_budget.py): a policy
stuck in one decision, or in its reset, fails that episode, named, and the sweep goes on."""

import time

import pytest

from mrsched_gym.errors import InputError
from mrsched_gym.evaluate import evaluate
from mrsched_gym.policy.decision_budget import check_budget
from mrsched_gym.results import EpisodeFailures

ENV = "mrsched/Hadoop-v0"
SHORT = {"workload.duration_s": 400.0}


class StuckAt:
    """Loops forever at decision ``at`` (0: in reset); ``catch``: swallows what interrupts it
    once, then returns (a policy that catches everything still loses its decision's time)."""

    def __init__(self, at: int, name: str = "stuck") -> None:
        self.at, self.n, self.name = at, 0, name

    def reset(self, view, seed=None):
        self.n = 0
        if self.at == 0:
            while True:
                pass

    def decide(self, decision, view):
        self.n += 1
        if self.n == self.at:
            while True:
                pass
        return 0 if decision.candidates else view.K


class SlowBelowBudget:
    name = "slow"

    def __init__(self) -> None:
        self.n = 0

    def decide(self, decision, view):
        self.n += 1
        if self.n <= 3:
            time.sleep(0.3)                      # 0.3 s per decision, the budget is 1.5 s
        return 0 if decision.candidates else view.K


class Fast(SlowBelowBudget):
    name = "fast"

    def decide(self, decision, view):
        return 0 if decision.candidates else view.K


@pytest.mark.parametrize("at, where", [(3, "decision 3"), (0, "reset")])
def test_a_policy_stuck_in_one_decision_fails_named_and_the_others_are_kept(at, where):
    t = time.monotonic()
    with pytest.raises(EpisodeFailures) as e:
        evaluate([StuckAt(at), "fifo"], [ENV], [0, 1], workers=1, progress=False,
                 env_kwargs=SHORT, decision_budget_s=1.0)
    assert time.monotonic() - t < 60
    assert [r["policy"] for r in e.value.records] == ["fifo", "fifo"]
    assert len(e.value.failures) == 2
    for f in e.value.failures:
        assert f["policy"] == "stuck"
        assert f"policy 'stuck' spent more than 1 s on {where}" in f["error"]


def test_a_code_file_stuck_in_a_worker_process_fails_named(tmp_path):
    path = tmp_path / "loops.py"
    path.write_text("class Loops:\n"
                    "    def decide(self, decision, view):\n"
                    "        while True:\n"
                    "            pass\n")
    with pytest.raises(EpisodeFailures) as e:
        evaluate([f"{path}:Loops", "fifo"], [ENV], [0, 1], workers=2, progress=False,
                 env_kwargs=SHORT, decision_budget_s=1.0)
    assert [r["policy"] for r in e.value.records] == ["fifo", "fifo"]
    assert all("spent more than 1 s on decision 1" in f["error"] for f in e.value.failures)


@pytest.mark.parametrize("swallow", ["Exception", "BaseException"])
def test_a_policy_that_swallows_the_interruption_in_a_worker_ends_that_worker(tmp_path, swallow):
    """It loops on whatever it catches: its policy process is killed by the harness at its
    budget (SIGKILL, which no code catches), named; the rest plays on."""
    path = tmp_path / "swallows.py"
    path.write_text("class Swallows:\n"
                    "    def decide(self, decision, view):\n"
                    "        while True:\n"
                    "            try:\n"
                    "                while True:\n"
                    "                    pass\n"
                    f"            except {swallow}:\n"
                    "                pass\n")
    t = time.monotonic()
    with pytest.raises(EpisodeFailures) as e:
        evaluate([f"{path}:Swallows", "fifo"], [ENV], [0, 1], workers=2, progress=False,
                 env_kwargs=SHORT, decision_budget_s=0.5)
    assert time.monotonic() - t < 60
    assert [r["policy"] for r in e.value.records] == ["fifo", "fifo"]
    assert len(e.value.failures) == 2
    for f in e.value.failures:
        assert f["policy"] == "Swallows"
        assert "spent more than 0.5 s on decision 1" in f["error"], f["error"]
        assert "its process was ended (SIGKILL)" in f["error"] and f["phase"] == "decide"


@pytest.mark.parametrize("phase, body", [
    ("import", "while True:\n    pass\nclass Never:\n    pass\n"),
    ("construction", "class Never:\n    def __init__(self):\n        while True:\n"
                     "            pass\n"),
])
def test_a_policy_file_that_never_finishes_loading_fails_named(tmp_path, monkeypatch, phase,
                                                               body):
    monkeypatch.setattr("mrsched_gym.policy.decision_budget.LOAD_BUDGET_S", 0.5)
    path = tmp_path / "never.py"
    path.write_text(body)
    t = time.monotonic()
    with pytest.raises(EpisodeFailures) as e:
        evaluate([f"{path}:Never", "fifo"], [ENV], [0], workers=1, progress=False,
                 env_kwargs=SHORT)
    assert time.monotonic() - t < 60
    assert [r["policy"] for r in e.value.records] == ["fifo"]
    (f,) = e.value.failures
    assert f["phase"] == phase
    assert f"spent more than 0.5 s on {phase}" in f["error"], f["error"]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_policy_stuck_in_its_construction_for_an_episode_fails_named(tmp_path, monkeypatch,
                                                                        workers):
    """Built once when the file is loaded (quickly), then afresh for each episode (stuck):
    every construction has the load budget, and each episode fails named."""
    monkeypatch.setattr("mrsched_gym.policy.decision_budget.LOAD_BUDGET_S", 0.5)
    flag = tmp_path / "built-once"
    path = tmp_path / "second.py"
    path.write_text("from pathlib import Path\n"
                    "class Second:\n"
                    "    def __init__(self):\n"
                    f"        if Path({str(flag)!r}).exists():\n"
                    "            while True:\n"
                    "                pass\n"
                    f"        Path({str(flag)!r}).touch()\n"
                    "    def decide(self, decision, view):\n"
                    "        return 0 if decision.candidates else view.K\n")
    t = time.monotonic()
    with pytest.raises(EpisodeFailures) as e:
        evaluate([f"{path}:Second", "fifo"], [ENV], [0, 1], workers=workers, progress=False,
                 env_kwargs=SHORT)
    assert time.monotonic() - t < 60
    assert [r["policy"] for r in e.value.records] == ["fifo", "fifo"]
    assert [(f["phase"], f["seed"]) for f in e.value.failures] == [("construction", 0),
                                                                   ("construction", 1)]
    assert all("spent more than 0.5 s on construction" in f["error"]
               for f in e.value.failures)


def test_a_slow_policy_within_its_budget_plays_as_without_one():
    slow = evaluate([SlowBelowBudget()], [ENV], [0], workers=1, progress=False,
                    env_kwargs=SHORT, decision_budget_s=1.5)
    fast = evaluate([Fast()], [ENV], [0], workers=1, progress=False, env_kwargs=SHORT,
                    decision_budget_s=None)
    drop = {"policy", "wall_s"}
    assert {k: v for k, v in slow[0].items() if k not in drop and not k.startswith("_")} == \
        {k: v for k, v in fast[0].items() if k not in drop and not k.startswith("_")}


@pytest.mark.parametrize("bad", [0, -1.0, "60", True, float("nan")])
def test_a_bad_budget_is_refused_naming_it(bad):
    with pytest.raises(InputError, match="decision_budget_s must be a number of seconds > 0"):
        check_budget(bad)
    with pytest.raises(InputError, match="decision_budget_s"):
        evaluate(["fifo"], [ENV], [0], workers=1, progress=False, decision_budget_s=bad)


def test_compare_with_a_policy_file_that_never_returns_ends_with_the_others_written(tmp_path):
    import json
    import subprocess
    import sys
    (tmp_path / "loops.py").write_text("class Loops:\n"
                                      "    def decide(self, decision, view):\n"
                                      "        while True:\n"
                                      "            pass\n")
    run = subprocess.run(
        [sys.executable, "-m", "mrsched_gym", "compare", "--policies", "fifo", "loops.py:Loops",
         "--seeds", "1", "--workers", "1", "--quiet", "--no-plots", "--out", "out",
         "--set", "workload.duration_s=300", "--decision-budget", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    [folder] = (tmp_path / "out").glob("hadoop-*")
    [failure] = json.loads((folder / "failures.json").read_text())
    assert "spent more than 1 s on decision 1" in failure["error"]
    records = json.loads((folder / "records.json").read_text())
    assert [r["policy"] for r in records] == ["fifo"]


@pytest.mark.parametrize("bad", ["0", "-2", "soon", "inf"])
def test_a_bad_decision_budget_flag_is_one_line(bad, capsys):
    from mrsched_gym.cli.parser import build_parser
    with pytest.raises(SystemExit):
        build_parser().parse_args(["compare", "--decision-budget", bad])
    assert "--decision-budget" in capsys.readouterr().err
