"""One run, one version of every policy file and agent file (issue 46, item 5): a policy file
is read once when the run starts (every episode executes those bytes); an agent file is hashed
at the start and checked before each episode (a changed one fails its episodes, named)."""

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

V1 = textwrap.dedent('''
    from pathlib import Path
    HERE = Path(__file__)
    VERSION = 1

    class Versioned:
        name = "versioned"

        def reset(self, view, seed=None):
            if VERSION == 1 and seed == 0:       # the file is edited during the run
                HERE.write_text(HERE.read_text().replace("VERSION = 1", "VERSION = 2"))

        def decide(self, decision, view):
            if not decision.candidates:
                return view.K
            return 0 if VERSION == 1 else len(decision.candidates) - 1
''')


def compare(tmp_path, *policies, workers=1, seeds=4):
    return subprocess.run(
        [sys.executable, "-m", "mrsched_gym", "compare", "--policies", *policies, "--seeds",
         str(seeds), "--workers", str(workers), "--quiet", "--no-plots", "--out", "out",
         "--set", "workload.duration_s=600"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)


def records(tmp_path):
    [folder] = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    return json.loads((folder / "records.json").read_text()), folder


@pytest.mark.parametrize("workers", [1, 2])
def test_a_policy_file_edited_during_a_run_runs_as_it_was_at_the_start(tmp_path, workers):
    (tmp_path / "versioned.py").write_text(V1)
    out = compare(tmp_path, "fifo", "versioned.py:Versioned", workers=workers)
    assert out.returncode == 0, out.stderr
    assert "VERSION = 2" in (tmp_path / "versioned.py").read_text()     # it was edited
    got, _ = records(tmp_path)
    ours = [r for r in got if r["policy"] == "versioned"]
    fifo = [r for r in got if r["policy"] == "fifo"]
    assert len(ours) == 4
    # version 1 (first candidate) is fifo's rule: every episode matches fifo's
    for a, b in zip(ours, fifo, strict=True):
        assert a["mean_jct_s"] == b["mean_jct_s"] and a["steps"] == b["steps"], a["seed"]


EDITOR = textwrap.dedent('''
    import shutil
    from pathlib import Path

    class Editor:
        name = "editor"

        def reset(self, view, seed=None):
            if seed == 0:
                shutil.copyfile("other.npz", "agent.npz")

        def decide(self, decision, view):
            return 0 if decision.candidates else view.K
''')


def test_an_agent_file_changed_during_a_run_fails_its_episodes_with_a_clear_error(tmp_path):
    pretrained = Path(__file__).resolve().parents[1] / "agents" / "pretrained"
    shutil.copyfile(pretrained / "hadoop-v0.npz", tmp_path / "agent.npz")
    shutil.copyfile(pretrained / "general.npz", tmp_path / "other.npz")
    (tmp_path / "editor.py").write_text(EDITOR)
    out = compare(tmp_path, "editor.py:Editor", "agent:agent.npz", seeds=2)
    assert out.returncode == 1, out.stderr
    errors = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 2, out.stderr
    assert all("agent file agent.npz changed during the run" in e for e in errors), errors
    got, folder = records(tmp_path)
    assert {r["policy"] for r in got} == {"editor"}
    failures = json.loads((folder / "failures.json").read_text())
    assert sorted(f["seed"] for f in failures) == [0, 1]


def test_a_file_rewritten_to_its_size_with_its_old_modification_time_is_read_again(tmp_path):
    """``file_digest`` (the agent and RLlib files' versions a run checks) is cached per file
    version: a rewrite to the same size with the old modification time put back (``cp -p``,
    ``rsync -t``) is a new version all the same (its status-change time moved)."""
    import os
    import time

    from mrsched_gym.evaluate import file_digest
    p = tmp_path / "agent.npz"
    p.write_bytes(b"a" * 64)
    before = p.stat()
    first = file_digest(str(p))
    for _ in range(300):                     # a kernel's status-change clock may tick coarsely
        p.write_bytes(b"b" * 64)
        os.utime(p, ns=(before.st_atime_ns, before.st_mtime_ns))
        if p.stat().st_ctime_ns != before.st_ctime_ns:
            break
        time.sleep(0.01)
    assert p.stat().st_size == before.st_size and p.stat().st_mtime_ns == before.st_mtime_ns
    assert file_digest(str(p)) != first


def test_an_agent_file_swapped_while_it_is_loaded_is_played_as_the_run_started(tmp_path,
                                                                               monkeypatch):
    """The file is replaced right after it was checked and put back before the next check (a
    trainer writing it with ``os.replace``): the episode still plays the version the run
    started with, since it loads the bytes it checked."""
    import numpy as np

    from mrsched_gym.agents.agent_files import read_npz
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    from mrsched_gym.evaluate import make_policy, parse_policy
    pretrained = Path(__file__).resolve().parents[1] / "agents" / "pretrained"
    started, other = pretrained / "hadoop-v0.npz", pretrained / "general.npz"
    path = tmp_path / "agent.npz"
    shutil.copyfile(started, path)
    spec = parse_policy(f"agent:{path}")
    real = NumpySetPolicy.load.__func__
    loaded = []

    def swapped_meanwhile(cls, file, name=None):
        shutil.copyfile(other, path)
        policy = real(cls, file, name)
        loaded.append(read_npz(file)[0])
        shutil.copyfile(started, path)
        return policy

    monkeypatch.setattr(NumpySetPolicy, "load", classmethod(swapped_meanwhile))
    make_policy(spec)
    want = read_npz(started)[0]
    assert len(loaded) == 1 and loaded[0].keys() == want.keys()
    assert all(np.array_equal(loaded[0][k], want[k]) for k in want)


@pytest.mark.parametrize("name", ["agent.npz", "model.zip"])
def test_a_bad_agent_file_loaded_in_an_episode_is_named_by_its_own_path(tmp_path, name):
    """An episode loads a private copy of the agent file's bytes: an error names the file the
    user gave, never the copy, and the copy is gone."""
    import tempfile

    from mrsched_gym.errors import InputError
    from mrsched_gym.evaluate import PolicySpec, make_policy
    p = tmp_path / name
    p.write_bytes(b"not an agent")
    before = set(Path(tempfile.gettempdir()).glob("mrsched-agent-*"))
    with pytest.raises((InputError, ImportError)) as e:
        make_policy(PolicySpec(label="agent:x", kind="agent", target=str(p)))
    assert str(p) in str(e.value) and "mrsched-agent-" not in str(e.value), str(e.value)
    assert set(Path(tempfile.gettempdir()).glob("mrsched-agent-*")) == before
