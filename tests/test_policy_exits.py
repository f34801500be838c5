"""Every way a policy's code can end is reported (issue 46, item 2).

A policy file raises anything (``BaseException`` included: ``sys.exit(0)``, a
``KeyboardInterrupt`` no signal sent, ``GeneratorExit``) at import, construction, reset or
decide, or ends its worker process (``os._exit``, a signal, a segfault): ``compare`` (run as a
subprocess, under a timeout) never exits 0, prints one error line naming the policy and the
phase, keeps the other policy's records and writes the traceback to failures.json."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from mrsched_gym.evaluate import evaluate, run_parallel
from mrsched_gym.processes.workers import WorkerDied
from mrsched_gym.results import EpisodeFailures

POLICY = textwrap.dedent('''
    import os, sys
    WHAT, WHERE = os.environ["WHAT"], os.environ["WHERE"]

    def boom():
        if WHAT == "exit0":
            sys.exit(0)
        if WHAT == "exit3":
            sys.exit(3)
        if WHAT == "kbd":
            raise KeyboardInterrupt
        if WHAT == "genexit":
            raise GeneratorExit
        if WHAT == "base":
            raise BaseException("base")
        if WHAT == "runtime":
            raise RuntimeError("boom")
        if WHAT == "os_exit":
            os._exit(0)
        if WHAT == "c_exit":
            import ctypes
            ctypes.CDLL(None)._exit(0)
        if WHAT == "kill":
            os.kill(os.getpid(), 9)
        if WHAT == "segv":
            import ctypes
            ctypes.string_at(0)

    if WHERE == "import":
        boom()

    class Hostile:
        name = "hostile"

        def __init__(self):
            if WHERE == "construction":
                boom()
            self.seed = None

        def reset(self, view, seed=None):
            self.seed = seed
            if WHERE == "reset" and seed == 1:
                boom()

        def decide(self, decision, view):
            if WHERE == "decide" and self.seed == 1 and view.now > 60:
                boom()
            return 0 if decision.candidates else view.K
''')

TIMEOUT_S = 120


def run_compare(tmp_path, where, what, workers):
    (tmp_path / "hostile.py").write_text(POLICY)
    env = {**os.environ, "WHERE": where, "WHAT": what}
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "mrsched_gym", "compare", "--policies", "fifo",
         "hostile.py:Hostile", "--seeds", "3", "--workers", str(workers), "--quiet",
         "--no-plots", "--out", "out", "--set", "workload.duration_s=600"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    return out, time.monotonic() - t0


@pytest.mark.parametrize("where, what, workers", [
    ("import", "exit0", 1), ("import", "kbd", 2), ("import", "genexit", 1),
    ("import", "base", 2), ("import", "runtime", 1), ("construction", "exit0", 2),
    ("construction", "kbd", 1), ("construction", "genexit", 2), ("construction", "base", 1),
    ("construction", "runtime", 2)])
def test_a_policy_that_ends_at_load_fails_named_and_the_others_are_kept(tmp_path, where, what,
                                                                        workers):
    """Its own code raising at import or construction is the policy's failure: one error line
    naming it and the phase, exit 1, fifo's records written, the traceback in failures.json."""
    out, _ = run_compare(tmp_path, where, what, workers)
    assert out.returncode == 1, out.stderr
    errors = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1, out.stderr
    assert errors[0].startswith(f"error: policy hostile.py:Hostile failed at {where}: "), errors
    assert ("failed to load" if where == "import" else "its construction") in errors[0]
    assert "hostile.py line" in errors[0] and "Traceback" not in out.stderr
    [folder] = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    records = json.loads((folder / "records.json").read_text())
    assert sorted((r["policy"], r["seed"]) for r in records) == [
        ("fifo", 0), ("fifo", 1), ("fifo", 2)]
    failures = json.loads((folder / "failures.json").read_text())
    assert {(f["policy"], f["phase"]) for f in failures} == {("hostile.py:Hostile", where)}
    assert sorted(f["seed"] for f in failures) == [0, 1, 2]
    assert all("Traceback" in f["traceback"] and "hostile.py" in f["traceback"]
               for f in failures)


@pytest.mark.parametrize("spec, says", [
    ("missing.py:Hostile", "not found"), ("hostile.txt:Hostile", "cannot be imported"),
    ("hostile.py:Nothing", "has no 'Nothing'"), ("hostile.py:Hostile:x", "not key=value")])
def test_a_policy_spec_that_is_not_valid_is_refused_before_anything_runs(tmp_path, spec, says):
    """Not the policy's code but its spec: refused with one line, exit 2, nothing written."""
    (tmp_path / "hostile.py").write_text(POLICY)
    (tmp_path / "hostile.txt").write_text(POLICY)
    env = {**os.environ, "WHERE": "nowhere", "WHAT": "none"}
    out = subprocess.run(
        [sys.executable, "-m", "mrsched_gym", "compare", "--policies", "fifo", spec,
         "--seeds", "2", "--quiet", "--no-plots", "--out", "out"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0], out.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("where, what, workers", [
    ("reset", "exit0", 1), ("reset", "kbd", 2), ("reset", "base", 1),
    ("decide", "exit0", 1), ("decide", "exit3", 2), ("decide", "kbd", 1),
    ("decide", "genexit", 2), ("decide", "base", 1), ("decide", "runtime", 2)])
def test_a_policy_that_raises_in_an_episode_fails_that_episode_named(tmp_path, where, what,
                                                                     workers):
    out, _ = run_compare(tmp_path, where, what, workers)
    assert out.returncode == 1, out.stderr
    errors = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1, out.stderr
    assert "hostile on mrsched/Hadoop-v0 seed 1" in errors[0]
    assert f"policy hostile: its {where} raised" in errors[0], errors[0]
    assert "hostile.py line" in errors[0], errors[0]
    assert "Traceback" not in out.stderr
    [folder] = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    records = json.loads((folder / "records.json").read_text())
    assert sorted((r["policy"], r["seed"]) for r in records) == [
        ("fifo", 0), ("fifo", 1), ("fifo", 2), ("hostile", 0), ("hostile", 2)]
    [failure] = json.loads((folder / "failures.json").read_text())
    assert failure["policy"] == "hostile" and failure["seed"] == 1
    assert "Traceback" in failure["traceback"] and "hostile.py" in failure["traceback"]


@pytest.mark.parametrize("what, how", [("c_exit", "exited with code 0"),
                                       ("os_exit", "exited with code"),
                                       ("kill", "was killed by signal SIGKILL"),
                                       ("segv", "was killed by signal SIGSEGV")])
def test_a_worker_that_dies_is_named_within_seconds_and_the_others_go_on(tmp_path, what, how):
    """The policy's own process dies (the worker playing its episodes lives on): named, with
    the decision, and the others go on."""
    out, took = run_compare(tmp_path, "decide", what, 2)
    assert out.returncode == 1, out.stderr
    errors = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "hostile on mrsched/Hadoop-v0 seed 1" in errors[0], out.stderr
    assert "PolicyProcessEnded: policy 'hostile': its process" in errors[0], errors[0]
    assert how in errors[0] and "during decision" in errors[0], errors[0]
    [folder] = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    records = json.loads((folder / "records.json").read_text())
    assert sorted((r["policy"], r["seed"]) for r in records) == [
        ("fifo", 0), ("fifo", 1), ("fifo", 2), ("hostile", 0), ("hostile", 2)]
    [failure] = json.loads((folder / "failures.json").read_text())
    assert failure["phase"] == "decide" and how in failure["error"]
    assert took < 60


class ExitsInDecide:
    name = "exits"

    def decide(self, decision, view):
        raise SystemExit(0)


def test_evaluate_records_a_sys_exit_as_a_failure_not_an_exit():
    with pytest.raises(EpisodeFailures) as e:
        evaluate(["fifo", ExitsInDecide()], ["mrsched/Hadoop-v0"], [0], workers=1,
                 progress=False, env_kwargs={"workload.duration_s": 300.0})
    assert [r["policy"] for r in e.value.records] == ["fifo"]
    [failure] = e.value.failures
    assert "policy exits: its decide raised SystemExit(0)" in failure["error"]


def _dies(n):
    if n == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return n * 10


def test_run_parallel_without_a_rule_for_deaths_ends_the_run_naming_the_task():
    t0 = time.monotonic()
    with pytest.raises(WorkerDied, match="was killed by signal SIGKILL while it ran task 3 of 4"):
        run_parallel(_dies, [0, 1, 2, 3], workers=2, progress=False)
    assert time.monotonic() - t0 < 30
    assert run_parallel(_dies, [0, 1, 3], workers=2, progress=False) == [0, 10, 30]
    got = run_parallel(_dies, [0, 1, 2, 3], workers=2, progress=False,
                       on_death=lambda t, how: f"{t}: {how}")
    assert got == [0, 10, "2: was killed by signal SIGKILL", 30]
