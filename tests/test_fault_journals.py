"""Issue 46, items 5 and 6: journals are validated like fresh records (tampered metrics and
duplicated lines, generated), counts in messages are unique valid episodes, the full-disk message
says what survived; results folders holding a user's files are never replaced (generated
folders), and ``reproduce`` checks its output paths before anything runs."""

from __future__ import annotations

import errno
import json
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mrsched_gym.evaluate as ev
from mrsched_gym import __version__
from mrsched_gym.cli import main
from mrsched_gym.env.metrics import METRIC_NAMES
from mrsched_gym.errors import InputError, OutputError
from mrsched_gym.evaluate import running
from mrsched_gym.results import (
    COUNT_METRICS,
    MARKER,
    RunFolder,
    check_ours,
    check_record,
    metric_range,
    sealed_line,
    write_manifest,
)

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
HEAD = {"k": 1, "mrsched_gym": __version__}


@pytest.fixture(scope="module")
def fresh():
    """Real records of finished episodes (what a journal holds), as JSON-safe dicts."""
    recs = ev.evaluate(["fifo"], ["dedicated"], range(4), workers=1, progress=False)
    from mrsched_gym.results import json_safe
    return [json.loads(json.dumps(json_safe(r))) for r in recs]


def write_journal(tmp_path, lines: list[str]) -> RunFolder:
    body = [json.dumps({"run": HEAD}), *lines]
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / ".run.journal.jsonl").write_text("".join(x + "\n" for x in body))
    return RunFolder(tmp_path, "run", HEAD)


def test_fresh_records_pass_the_checks(fresh):
    assert all(check_record(r) is None for r in fresh)


#: Ways to tamper with one metric: (what to write, which metrics it can apply to).
TAMPER = {
    "negative": lambda m, v: -1.0 - abs(v or 0.0),
    "too large": lambda m, v: metric_range(m)[1] * 2 + 1,
    "text": lambda m, v: "12",
    "bool": lambda m, v: True,
    "list": lambda m, v: [v],
    "fraction of a count": lambda m, v: (v or 0) + 0.5,
    "missing": lambda m, v: ...,
}


def applies(how: str, metric: str) -> bool:
    lo, hi = metric_range(metric)
    return {"negative": lo == 0, "too large": math.isfinite(hi),
            "fraction of a count": metric in COUNT_METRICS,
            "missing": metric in ("return", "steps", "objective", *METRIC_NAMES)}.get(how, True)


@SETTINGS
@given(metric=st.sampled_from(("return", "steps", "objective", *METRIC_NAMES)),
       how=st.sampled_from(sorted(TAMPER)), which=st.integers(0, 3))
def test_a_tampered_metric_is_named_and_its_episode_runs_again(tmp_path, fresh, metric, how,
                                                               which):
    if not applies(how, metric):
        return
    recs = [dict(r) for r in fresh]
    value = TAMPER[how](metric, recs[which][metric])
    if value is ...:
        del recs[which][metric]
    else:
        recs[which][metric] = value
    d = tmp_path / f"{metric}-{how.replace(' ', '_')}-{which}"
    with write_journal(d, [sealed_line(r) for r in recs]) as folder:
        kept = folder.resumable()
    assert sorted(r["seed"] for r in kept) == [s for s in range(4) if s != which]
    assert len(folder.notes) == 1
    note = folder.notes[0]
    assert f"line {which + 2} skipped: metric {metric}" in note and "runs again" in note


@pytest.mark.parametrize("edit", ["in-range value", "swapped labels", "no checksum",
                                  "checksum edited"])
def test_a_line_not_as_the_tool_wrote_it_is_skipped_and_its_episode_runs_again(tmp_path, fresh,
                                                                              edit):
    """Edits that pass every range check (a smaller penalty, two lines' policies swapped, a
    line without its checksum or with another): each edited line is named and skipped, the
    others kept."""
    lines = [sealed_line(r) for r in fresh]
    edited = [1]
    if edit == "in-range value":
        rec = json.loads(lines[1])
        rec["makespan_s"] = rec["makespan_s"] / 2
        lines[1] = json.dumps(rec)
    elif edit == "swapped labels":
        a, b = json.loads(lines[1]), json.loads(lines[2])
        a["seed"], b["seed"] = b["seed"], a["seed"]
        lines[1], lines[2] = json.dumps(a), json.dumps(b)
        edited = [1, 2]
    elif edit == "no checksum":
        lines[1] = json.dumps(fresh[1])
    else:
        rec = json.loads(lines[1])
        rec["_sha256"] = "0" * 16
        lines[1] = json.dumps(rec)
    with write_journal(tmp_path / "j", lines) as folder:
        kept = folder.resumable()
        on_disk = folder.unfinished_episodes()
    assert sorted(r["seed"] for r in kept) == [s for s in range(4) if s not in edited]
    assert on_disk == 4 - len(edited)
    assert all("_sha256" not in r for r in kept)
    why = "no checksum" if edit == "no checksum" else "edited since it was written"
    assert [n.split(": ")[1].split(" ")[1] for n in folder.notes] == [str(i + 2) for i in edited]
    assert all(why in n and "runs again" in n for n in folder.notes), folder.notes


def test_a_record_read_back_with_its_checksum_is_sealed_afresh(fresh):
    """Resumed records are written again (``open_journal(keep=...)``): one that still holds
    its checksum gets a line that passes its own check."""
    from mrsched_gym.results import unseal
    once = json.loads(sealed_line(fresh[0]))
    again = json.loads(sealed_line(once))
    assert unseal(again) is None and again == fresh[0]


def test_a_job_count_above_n_jobs_is_refused(fresh):
    rec = dict(fresh[0], jobs_finished=fresh[0]["n_jobs"] + 1)
    assert "more than n_jobs" in check_record(rec)


@SETTINGS
@given(copies=st.lists(st.integers(1, 4), min_size=4, max_size=4),
       differ=st.lists(st.booleans(), min_size=4, max_size=4), data=st.randoms())
def test_duplicated_lines_count_once_and_conflicts_run_again(tmp_path, fresh, copies, differ,
                                                            data):
    lines = []
    for seed, (n, diff) in enumerate(zip(copies, differ, strict=True)):
        for c in range(n):
            rec = dict(fresh[seed])
            if diff and c == n - 1 and n > 1:
                rec["makespan_s"] = rec["makespan_s"] + 1.0
            lines.append(sealed_line(rec))
    data.shuffle(lines)
    d = tmp_path / "j"
    d.mkdir(exist_ok=True)
    with write_journal(d, lines) as folder:
        kept = folder.resumable()
        on_disk = folder.unfinished_episodes()
    conflicted = {s for s in range(4) if differ[s] and copies[s] > 1}
    assert sorted(r["seed"] for r in kept) == [s for s in range(4) if s not in conflicted]
    assert on_disk == 4                     # lines on disk: each valid episode once
    assert sum("neither is kept" in n for n in folder.notes) == len(conflicted)


def test_compare_resume_counts_unique_episodes(tmp_path, capsys, monkeypatch):
    """The issue's case: duplicated journal lines were "16 finished episodes" for 8 unique."""
    out = tmp_path / "out"
    args = ["compare", "--env", "dedicated", "--policies", "fifo", "--seeds", "3",
            "--workers", "1", "--quiet", "--no-plots", "--out", str(out)]
    real = running.run_episode

    def last_fails(*a, **k):
        if a[2] == 2:
            raise RuntimeError("injected")
        return real(*a, **k)
    monkeypatch.setattr(running, "run_episode", last_fails)
    assert main(args) == 1
    journal = out / ".dedicated.journal.jsonl"
    lines = journal.read_text().splitlines()
    good = [x for x in lines[1:] if '"error"' not in x]
    assert len(good) == 2
    journal.write_text("\n".join([lines[0], *good, *good, *good]) + "\n")
    monkeypatch.setattr(running, "run_episode", real)
    capsys.readouterr()
    assert main(args + ["--resume"]) == 0
    out_text, err = capsys.readouterr()
    assert "resuming: 2 finished episodes" in out_text
    assert err.count("counted once") == 4


def test_the_full_disk_message_says_what_survived(tmp_path, fresh, monkeypatch):
    """It said the journal "holds the 3 episodes finished before" when 2 survived (failed
    episodes and duplicates were counted)."""
    with RunFolder(tmp_path, "run", HEAD) as folder:
        folder.open_journal()
        folder.append(fresh[0])
        folder.append({"policy": "fifo", "scenario": "dedicated", "seed": 1, "error": "x"})
        folder.append(fresh[0])
        folder.append(fresh[2])
        real = os.write

        def full(fd, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        monkeypatch.setattr(os, "write", full)
        with pytest.raises(OutputError) as e:
            folder.append(fresh[3])
        monkeypatch.setattr(os, "write", real)
    assert "it holds 2 finished episodes (--resume keeps them)" in str(e.value)


# ---- results folders holding a user's files --------------------------------------------

NAMES = st.sampled_from(["notes.txt", "records.json", "summary.csv", "my.png", ".hidden",
                         "sub/notes.md", "failures.json", "jobs.csv"])


@SETTINGS
@given(ours=st.lists(NAMES, max_size=4, unique=True),
       users=st.lists(NAMES, min_size=1, max_size=3, unique=True))
def test_a_folder_is_replaced_only_when_everything_in_it_is_listed(tmp_path, ours, users):
    d = tmp_path / "f"
    if d.exists():
        import shutil
        shutil.rmtree(d)
    d.mkdir()
    for name in ours:
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text("ours")
    write_manifest(d)
    check_ours(d)                                           # everything listed: ours
    added = [u for u in users if u not in ours]
    for name in added:
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text("the user's")
    if not added:
        check_ours(d)
        return
    with pytest.raises(InputError) as e:
        check_ours(d)
    assert "nothing is replaced" in str(e.value)
    assert any(str(d / a.split("/")[0]) in str(e.value) for a in added)


@pytest.mark.parametrize("extra", ["notes.txt", "sub/n.md", "records.json-only"])
def test_compare_keeps_a_users_file_in_an_earlier_results_folder(tmp_path, capsys, extra):
    """The issue's cases: a notes file added to an earlier results folder was deleted; a user's
    folder that holds a ``records.json`` (and no manifest) was taken for ours."""
    out = tmp_path / "out"
    args = ["compare", "--env", "dedicated", "--policies", "fifo", "--seeds", "1",
            "--workers", "1", "--quiet", "--no-plots", "--out", str(out)]
    if extra == "records.json-only":
        (out / "dedicated").mkdir(parents=True)
        (out / "dedicated" / "records.json").write_text("my data")
        (out / "dedicated" / "thesis.tex").write_text("mine")
        target = out / "dedicated" / "records.json"
    else:
        assert main(args) == 0
        assert (out / "dedicated" / MARKER).is_file()
        target = out / "dedicated" / extra
        target.parent.mkdir(exist_ok=True)
        target.write_text("my notes")
    before = {p: p.read_bytes() for p in (out / "dedicated").rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert "nothing is replaced" in err and str(out / "dedicated") in err
    after = {p: p.read_bytes() for p in (out / "dedicated").rglob("*") if p.is_file()}
    assert after == before and target.is_file()


def test_reproduce_checks_its_output_path_before_running(tmp_path, capsys, monkeypatch):
    """``reproduce NAME --out afile/r`` ran 75 s, then failed writing."""
    ran = []
    monkeypatch.setattr(running, "run_episode", lambda *a, **k: ran.append(a))
    (tmp_path / "afile").write_text("x")
    for out in (tmp_path / "afile" / "r", tmp_path / "afile"):
        assert main(["reproduce", "late-speculation", "--out", str(out), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"{tmp_path / 'afile'}: a file is where the results folder" in err
    (tmp_path / "o" / "late-speculation").mkdir(parents=True)
    (tmp_path / "o" / "late-speculation" / "report.md").write_text("mine")
    assert main(["reproduce", "late-speculation", "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "report.md: not a file this tool wrote" in capsys.readouterr().err
    assert main(["reproduce", "late-speculation", "--out", str(tmp_path / "p"), "--quiet",
                 "--json", str(tmp_path / "afile" / "s.json")]) == 2
    assert ran == [] and not (tmp_path / "p").exists()


# ---- one version of every scenario and trace file per run -------------------------------

@pytest.mark.parametrize("edit", ["trace", "scenario"])
def test_a_file_edited_during_a_run_never_mixes_versions(tmp_path, capsys, monkeypatch, edit):
    """Episodes that ran after the edit are failures naming the change (re-run by --resume),
    never records of a second version."""
    (tmp_path / "cap.csv").write_text("time_s,value\n0,1.0\n1800,0.6\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: pinned\navailability: {generator: trace, mode: capacity, "
                        "trace: cap.csv}\n")
    real = running.run_episode
    ran = []

    def then_edit(*a, **k):
        out = real(*a, **k)
        ran.append(a[2])
        if len(ran) == 1:
            if edit == "trace":
                (tmp_path / "cap.csv").write_text("time_s,value\n0,1.0\n1800,0.3\n")
            else:
                scenario.write_text(scenario.read_text() + "time_limit_s: 90000\n")
        return out
    monkeypatch.setattr(running, "run_episode", then_edit)
    rc = main(["compare", "--env", str(scenario), "--policies", "fifo", "--seeds", "3",
               "--workers", "1", "--quiet", "--no-plots", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 1 and ran == [0, 1, 2]
    assert err.count("changed during the run") == 2
    records = json.loads((tmp_path / "o" / "pinned" / "records.json").read_text())
    assert [r["seed"] for r in records] == [0]


IDENTITY_EDITS = {
    "seed": [-1, 99, "1", True, 1.5, None],
    "policy": ["ghost", "", 7, None, "edf"],
    "scenario": ["mrsched/Hadoop-v0", "", 3],
}


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(sorted(IDENTITY_EDITS)), pick=st.integers(0, 5),
       which=st.integers(0, 3), drop=st.booleans())
def test_a_journal_line_naming_another_episode_is_not_taken_for_one_of_the_run(
        tmp_path_factory, monkeypatch, fresh, field, pick, which, drop):
    """A line whose seed, policy or scenario was edited (to a value that is no episode of the
    run, or not of its type) is never reused as an episode of the run: the episode it was runs
    again, the others are reused, and the records equal a fresh run's."""
    recs = [dict(r) for r in fresh]
    values = IDENTITY_EDITS[field]
    if drop:
        del recs[which][field]
    else:
        recs[which][field] = values[pick % len(values)]
    with write_journal(tmp_path_factory.mktemp("j"), [sealed_line(r) for r in recs]) as folder:
        kept = folder.resumable()
    ran = []
    real = running.run_episode
    monkeypatch.setattr(running, "run_episode",
                        lambda sc, pol, seed, *a, **k: ran.append(seed) or real(sc, pol, seed,
                                                                                *a, **k))
    out = ev.evaluate(["fifo"], ["dedicated"], range(4), workers=1, progress=False, done=kept)
    assert ran == [which]
    assert [(r["policy"], r["seed"], r["makespan_s"]) for r in out] == [
        (r["policy"], r["seed"], r["makespan_s"]) for r in fresh]
