"""Issue 32, durable writes (findings 2, 5, 17, 19): one durable-write helper; the journal is
append-only and its compaction writes a new file and renames it, so a kill at any instant leaves
the old or the new journal, never a cut one; a full disk at the journal append, the staging
folder or the rewrite is one ``error:`` line; a --out deleted during a run is recreated."""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

import mrsched_gym.evaluate as ev
import mrsched_gym.results.files as result_files
import mrsched_gym.results.run_folder as run_folder
from mrsched_gym.cli import main
from mrsched_gym.env.metrics import METRIC_NAMES
from mrsched_gym.errors import OutputError
from mrsched_gym.evaluate import running
from mrsched_gym.results import RunFolder, durable_write

#: What a finished episode's record holds (every metric; the journal checks them all).
METRICS = {"return": -1.0, "steps": 3, "objective": 1.0, **dict.fromkeys(METRIC_NAMES, 0.0)}
RUN = ["--policies", "fifo", "--workers", "1", "--quiet", "--no-plots"]
ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

COMPACTOR = r"""
import sys
import time
import mrsched_gym.results.files as result_files
from mrsched_gym.env.metrics import METRIC_NAMES
from mrsched_gym.results import RunFolder
# widen the window between the temporary file's write and its rename, so that many kills land
# in it (without this, rewrites are so fast that kills mostly land between them); wide against
# the write itself, which on a loaded machine took long enough that 30 kills missed a 10 ms
# window
result_files._before_rename = lambda tmp, path: time.sleep(0.1)
folder = RunFolder(sys.argv[1], "run", {"k": 1})
metrics = {"return": -1.0, "steps": 3, "objective": 1.0, **dict.fromkeys(METRIC_NAMES, 0.0)}
recs = {n: [{"policy": "fifo", "scenario": "s", "seed": i, **metrics} for i in range(n)]
        for n in (700, 1500)}
with folder:
    folder.open_journal(keep=recs[700])
    print("ready", flush=True)
    i = 0
    while True:                      # compaction after compaction, alternating the two sizes
        folder.open_journal(keep=recs[1500 if i % 2 == 0 else 700])
        i += 1
"""


def test_a_kill_at_a_random_point_of_compaction_leaves_a_whole_journal(tmp_path):
    """Finding 2: --resume opened the journal with mode "w" before rewriting it; a kill there
    left 0 or 7 of 44 episodes and the next --resume called it "a different run"."""
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    in_the_window = 0
    for trial in range(30):             # 10 kills, more until one lands in the rename's window
        if trial >= 10 and in_the_window:
            break
        d = tmp_path / f"t{trial}"
        p = subprocess.Popen([sys.executable, "-c", COMPACTOR, str(d)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        time.sleep(rng.uniform(0.0, 0.5))
        p.send_signal(signal.SIGKILL)
        p.wait()
        lines = (d / ".run.journal.jsonl").read_text().splitlines()
        assert json.loads(lines[0]) == {"run": {"k": 1}}
        n = len(lines) - 1
        assert n in (700, 1500), f"trial {trial}: a cut journal of {n} records"
        in_the_window += bool(list(d.glob("*.tmp")))   # killed between write and rename
        folder = RunFolder(d, "run", {"k": 1})
        with folder:                              # the next --resume reads all of it
            assert len(folder.resumable()) == n and not folder.notes
        assert not list(d.glob("*.tmp"))          # a cut temporary file is removed by it
        p.stdout.close()
        p.stderr.close()
    assert in_the_window, "no kill landed between a write and its rename"


def test_a_crash_between_write_and_rename_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "records.json"
    durable_write(target, "old")

    def crash(tmp, path):
        raise ENOSPC
    monkeypatch.setattr(result_files, "_before_rename", crash)
    with pytest.raises(OutputError, match="records.json: cannot write it: No space left"):
        durable_write(target, "new" * 1000)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["records.json"]   # no temporary left


def test_durable_write_replaces_a_link_without_following_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("secret")
    link = tmp_path / "out.json"
    link.symlink_to(victim)
    durable_write(link, "new")
    assert victim.read_text() == "secret" and not link.is_symlink()
    assert link.read_text() == "new"


def test_the_journal_is_append_only_between_compactions(tmp_path):
    with RunFolder(tmp_path, "run", {"k": 1}) as folder:
        folder.open_journal()
        ino = folder.journal_path.stat().st_ino
        for seed in range(3):
            folder.append({"policy": "fifo", "scenario": "s", "seed": seed, **METRICS})
        assert folder.journal_path.stat().st_ino == ino           # appended, not rewritten
        assert len(folder.resumable()) == 3


class _FullDisk:
    """``os`` for the run folder's module, whose ``write`` fails as a full disk does."""

    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def write(fd, data):
        raise ENOSPC


def _inject(monkeypatch, where):
    if where == "append":
        monkeypatch.setattr(run_folder, "os", _FullDisk())
        return

    def full(tmp, path):
        if (where == "staging") == (".staging." in str(tmp)):
            raise ENOSPC
    monkeypatch.setattr(result_files, "_before_rename", full)


@pytest.mark.parametrize("where, says", [
    ("append", "cannot append to the journal"),
    ("staging", "cannot write the results"),
    ("rewrite", "the run's journal"),
])
def test_a_full_disk_is_one_error_line(tmp_path, capsys, monkeypatch, where, says):
    """Finding 19: disk full at the journal append, staging and rewrite gave tracebacks."""
    _inject(monkeypatch, where)
    rc = main(["compare", "--seeds", "2", "--out", str(tmp_path), *RUN])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "No space left on device" in err and says in err
    assert not list(tmp_path.glob(".hadoop.staging.*"))
    if where == "staging":                     # every finished episode is in the journal
        lines = (tmp_path / ".hadoop.journal.jsonl").read_text().splitlines()
        assert len(lines) == 3


def test_out_deleted_during_a_run_is_recreated_and_nothing_is_lost(tmp_path, capsys,
                                                                   monkeypatch):
    """Finding 5: deleting --out during a run discarded every result held in memory."""
    out = tmp_path / "out"
    real = ev.run_episode
    calls = []

    def deleting(*a, **k):
        calls.append(a[2])
        if len(calls) == 2:
            shutil.rmtree(out)
        return real(*a, **k)
    monkeypatch.setattr(running, "run_episode", deleting)
    rc = main(["compare", "--seeds", "3", "--out", str(out), *RUN])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "was removed during the run" in err
    assert len(json.loads((out / "hadoop" / "records.json").read_text())) == 3
    assert sorted(p.name for p in out.iterdir()) == ["hadoop"]


def test_a_finished_run_leaves_no_lock_staging_or_journal(tmp_path, capsys):
    """Finding 17 (lock files stayed after finished runs)."""
    assert main(["compare", "--seeds", "1", "--out", str(tmp_path), *RUN]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hadoop"]
