"""Issue 46, item 8: attacks on the harness beyond the issue's examples, each a class of cases.

* what a policy returns runs code (an ``int`` subclass whose ``__int__`` raises or exits, a
  ``__class__`` property, huge integers): the decision fails named, never a raw error;
* a policy keeping state in its class or module between episodes: each episode runs the file
  afresh, so records do not depend on ``--workers`` or the episode order;
* ``os._exit`` in the harness's own process (``--workers 1``) fails the episode, named;
* a thread or a process a policy leaves running does not keep the command from ending;
* ``gc`` reaches the live simulator from a proxy: the documented limit of the read-only view.
"""

import gc
import json
import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrsched_gym.evaluate import evaluate, run_episode
from mrsched_gym.policy.contract import PolicyActionError
from mrsched_gym.policy.policy_failures import PolicyCodeError
from mrsched_gym.results import EpisodeFailures

ENV = "mrsched/Hadoop-v0"
SHORT = {"workload.duration_s": 400.0}


def first(decision, view):
    return 0 if decision.candidates else view.K


def raising(exc):
    def method(self, *a):
        raise exc
    return method


def returning(make):
    class Returns:
        name = "returns"

        def decide(self, decision, view):
            return make(first(decision, view))
    return Returns()


KINDS = {
    "int __int__ exits": lambda x: type("E", (int,), {"__int__": raising(SystemExit(0)),
                                                      "__index__": raising(SystemExit(0))})(x),
    "int __int__ raises": lambda x: type("E", (int,), {"__int__": raising(KeyError("k"))})(x),
    "__class__ raises": lambda x: type("C", (), {"__class__": property(raising(SystemExit(3))),
                                                 "__repr__": raising(SystemExit(4))})(),
    "repr raises": lambda x: type("R", (), {"__repr__": raising(GeneratorExit())})(),
    "huge int": lambda x: x + 10 ** 5000,
    "negative huge": lambda x: -(10 ** 300),
    "bool": lambda x: True,
    "nan": lambda x: float("nan"),
    "str": lambda x: str(x),
}


@settings(max_examples=18, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(sorted(KINDS)))
def test_an_action_whose_reading_runs_hostile_code_fails_the_decision_named(kind):
    with pytest.raises((PolicyActionError, PolicyCodeError, KeyError)) as e:
        run_episode(ENV, returning(KINDS[kind]), 0, SHORT)
    text = str(e.value) + " ".join(getattr(e.value, "__notes__", ()))
    assert "policy returns" in text, text
    assert len(text) < 1000, text                     # a huge number is not printed in full


#: Decides by a count kept in its class: the same per seed only if each episode starts from
#: the file as written.
COUNTING = textwrap.dedent('''
    class Counting:
        calls = 0

        def decide(self, decision, view):
            type(self).calls += 1
            return 0 if (decision.candidates and type(self).calls % 7) else view.K
''')


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0)])
def test_state_kept_in_a_policy_files_class_does_not_carry_between_episodes(tmp_path,
                                                                          monkeypatch, order):
    (tmp_path / "counting.py").write_text(COUNTING)
    monkeypatch.chdir(tmp_path)
    alone = {s: evaluate(["counting.py:Counting"], [ENV], [s], workers=1, progress=False,
                         env_kwargs=SHORT)[0]["objective"] for s in order}
    together = evaluate(["counting.py:Counting"], [ENV], list(order), workers=1,
                        progress=False, env_kwargs=SHORT)
    assert {r["seed"]: r["objective"] for r in together} == alone


class ExitsInProcess:
    name = "exits"

    def decide(self, decision, view):
        if view.now > 30:
            os._exit(0)
        return first(decision, view)


def test_os_exit_in_the_harness_process_fails_the_episode_named():
    with pytest.raises(EpisodeFailures) as e:
        evaluate([ExitsInProcess(), "fifo"], [ENV], [0], workers=1, progress=False,
                 env_kwargs=SHORT)
    [failure] = e.value.failures
    assert "policy exits: its decide raised os._exit(0)" in failure["error"]
    assert [r["policy"] for r in e.value.records] == ["fifo"]
    assert os._exit.__module__ == "posix" and os._exit.__name__ == "_exit"    # restored


def compare_beside_fifo(tmp_path, file_name, source, class_name):
    """``compare`` of ``fifo`` and the policy ``source`` (written to ``file_name``), one short
    seed, in a process of its own."""
    (tmp_path / file_name).write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mrsched_gym", "compare", "--policies", "fifo",
         f"{file_name}:{class_name}", "--seeds", "1", "--workers", "1", "--quiet",
         "--no-plots", "--out", "out", "--set", "workload.duration_s=300"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)


THREAD = textwrap.dedent('''
    import threading, time

    class Lingers:
        def decide(self, decision, view):
            threading.Thread(target=time.sleep, args=(10 ** 6,)).start()
            return 0 if decision.candidates else view.K
''')


def test_a_thread_a_policy_leaves_running_does_not_keep_the_command_alive(tmp_path):
    """The thread lives in the policy's own process, which ends with its episode."""
    out = compare_beside_fifo(tmp_path, "lingers.py", THREAD, "Lingers")
    assert out.returncode == 0, out.stderr
    assert "running" not in out.stderr, out.stderr
    [folder] = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    assert {r["policy"] for r in json.loads((folder / "records.json").read_text())} == {
        "fifo", "Lingers"}


def test_gc_reaches_the_live_simulator_as_the_docs_say():
    """The read-only view is no sandbox (docs/guide/your-policy.md): ``gc.get_referents`` of a
    proxy holds the live job. If this ever stops holding, the docs can say more."""
    import gymnasium as gym

    from mrsched_gym.policy.readonly import GuardedView
    from mrsched_gym.sim.state import Job

    env = gym.make(ENV)
    env.reset(seed=0)
    job = GuardedView(env.unwrapped.sim).jobs[0]
    assert any(type(o) is Job for o in gc.get_referents(job))
    env.close()


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.text(min_size=1, max_size=30).filter(lambda s: not s.isprintable() and s.strip())
       | st.integers(101, 3000).map(lambda n: "x" * n))
def test_a_name_that_cannot_label_a_row_is_refused_in_one_line(name):
    from mrsched_gym.errors import InputError

    class Named:
        def decide(self, decision, view):
            return first(decision, view)
    policy = Named()
    policy.name = name
    with pytest.raises(InputError) as e:
        evaluate([policy], [ENV], [0], workers=1, progress=False, env_kwargs=SHORT)
    assert "printable characters" in str(e.value) and "\n" not in str(e.value)
    assert len(str(e.value)) < 400


NAME_RAISES = textwrap.dedent('''
    import sys

    class Named:
        @property
        def name(self):
            sys.exit(0)

        def decide(self, decision, view):
            return 0 if decision.candidates else view.K
''')


def test_a_name_that_runs_hostile_code_is_that_policys_failure(tmp_path, monkeypatch):
    (tmp_path / "named.py").write_text(NAME_RAISES)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(EpisodeFailures) as e:
        evaluate(["named.py:Named", "fifo"], [ENV], [0], workers=1, progress=False,
                 env_kwargs=SHORT)
    [failure] = e.value.failures
    assert failure["phase"] == "construction" and "reading its name" in failure["error"]
    assert [r["policy"] for r in e.value.records] == ["fifo"]


SPAWNS = textwrap.dedent('''
    import multiprocessing as mp, time

    class Spawns:
        def decide(self, decision, view):
            if view.now > 30 and not getattr(type(self), "done", False):
                type(self).done = True
                child = mp.get_context("fork").Process(target=time.sleep, args=(10 ** 6,))
                child.start()
                with open("pids.txt", "a") as f:
                    f.write(f"{child.pid}\\n")
            return 0 if decision.candidates else view.K
''')


def test_a_process_a_policy_leaves_running_is_ended_with_its_episode(tmp_path):
    """A process the policy starts is in its policy process's group, ended with its episode:
    none is left when the command ends, and the harness has nothing to warn about."""
    out = compare_beside_fifo(tmp_path, "spawns.py", SPAWNS, "Spawns")
    assert out.returncode == 0, out.stderr
    assert "running" not in out.stderr, out.stderr
    pids = [int(x) for x in (tmp_path / "pids.txt").read_text().split()]
    assert pids
    assert not [pid for pid in pids if still_runs(pid)]


def still_runs(pid, wait_s=10.0):
    """Whether ``pid`` still runs after ``wait_s`` (a zombie that awaits its reaping is
    ended; SIGKILL's delivery and the reaping by pid 1 take a moment)."""
    import time
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rpartition(")")[2].split()[0] == "Z":
                    return False
        except FileNotFoundError:
            return False
        time.sleep(0.05)
    return True


def test_only_the_episodes_thread_has_os_exit_refused(monkeypatch):
    """The harness's own threads (a worker's parent watch) still end the process with
    ``os._exit``: only the thread running the episode has it refused."""
    import threading

    from mrsched_gym.policy.policy_failures import ProcessExitCalled, no_process_exit

    ended = []
    monkeypatch.setattr(os, "_exit", ended.append)
    with no_process_exit():
        with pytest.raises(ProcessExitCalled):
            os._exit(3)
        other = threading.Thread(target=os._exit, args=(7,))
        other.start()
        other.join()
    assert ended == [7] and os._exit == ended.append
