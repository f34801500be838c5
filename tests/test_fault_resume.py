"""Issue 32, resume fingerprints and journals (findings 6, 7, 11, 19, 20): the journal header
holds the resolved worlds and the SHA-256 of every trace a run reads, for compare, benchmark and
reproduce --reuse; a mismatch is refused naming what changed; an unreadable journal is described
exactly; valid lines are never dropped; records that are not records are skipped by line."""

from __future__ import annotations

import json

import pytest

import mrsched_gym.evaluate as ev
from mrsched_gym import __version__
from mrsched_gym.cli import main, reusable_reproduction
from mrsched_gym.env.metrics import METRIC_NAMES
from mrsched_gym.errors import InputError
from mrsched_gym.evaluate import running
from mrsched_gym.results import RunFolder, sealed_line

HEAD = {"k": 1, "mrsched_gym": __version__}
#: What a finished episode's record holds (every metric; the journal checks them all).
METRICS = {"return": -1.0, "steps": 3, "objective": 1.0,
           **{m: 0.0 for m in METRIC_NAMES}, "n_jobs": 2.0}
GOOD = [sealed_line({"policy": "fifo", "scenario": "s", "seed": s, **METRICS}) for s in (0, 1)]


def _journal(tmp_path, raw: bytes) -> RunFolder:
    (tmp_path / ".run.journal.jsonl").write_bytes(raw)
    return RunFolder(tmp_path, "run", HEAD)


def _line(obj) -> bytes:
    return (json.dumps(obj) + "\n").encode()


@pytest.mark.parametrize("raw, says", [
    (b"", "is empty (no header)"),
    (b"\n\n", "is empty (no header)"),
    (b'{"run": {"k"', "its header line is cut"),
    (b'{"run": {"k": 1, "mrsch\n' + GOOD[0].encode() + b"\n", "its header line is unreadable"),
    (_line([1]), "line 1 is not a journal header"),
    (_line({"run": {**HEAD, "mrsched_gym": "0.0.1"}}), "was written by mrsched_gym 0.0.1, this is"),
    (_line({"run": {**HEAD, "k": 2}}), "belongs to a different run: k changed (2 -> 1)"),
    (_line({"run": {"mrsched_gym": __version__}}), "belongs to a different run: k added"),
])
def test_an_unreadable_or_other_journal_is_described_exactly(tmp_path, raw, says):
    """Finding 20: a cut, empty or other-version header was "a different run (other scenario
    or overrides)"."""
    with _journal(tmp_path, raw) as folder, pytest.raises(InputError) as e:
        folder.resumable()
    assert says in str(e.value)
    assert "run without --resume" in str(e.value)


@pytest.mark.parametrize("bad, says", [
    (b"{}", "policy is missing"),
    (b"[1, 2]", "not a record but list"),
    (b"7", "not a record but int"),
    (b'{"policy": "fifo", "scenario": "s", "seed": "a"}', "seed is 'a'"),
    (b'{"policy": "fifo", "scenario": "s", "seed": 1.5}', "seed is 1.5"),
    (b'{"policy": "fifo", "scenario": "s", "seed": true}', "seed is True"),
    (b'{"policy": "fifo", "scenario": "s", "seed": -1}', "seed is -1"),
    (b'{"policy": 3, "scenario": "s", "seed": 1}', "policy is 3"),
    (b'{"policy": "fifo", "scenario": "s", "se', "not JSON"),
    (b"\xff\xfe\x00junk", "not UTF-8 text (byte 0xff)"),
])
def test_a_bad_middle_line_is_named_and_every_valid_line_kept(tmp_path, bad, says):
    """Findings 11 and 19: a corrupt middle line dropped every record after it; ``{}``,
    ``[1,2]``, a non-numeric seed and non-UTF-8 bytes were tracebacks; ``seed: 1.5`` was
    accepted."""
    raw = _line({"run": HEAD}) + GOOD[0].encode() + b"\n" + bad + b"\n" + GOOD[1].encode() + b"\n"
    with _journal(tmp_path, raw) as folder:
        recs = folder.resumable()
    assert [r["seed"] for r in recs] == [0, 1]
    assert len(folder.notes) == 1 and "line 3 skipped" in folder.notes[0]
    assert says in folder.notes[0]


def test_a_last_line_cut_by_an_interruption_is_dropped_quietly(tmp_path):
    raw = _line({"run": HEAD}) + GOOD[0].encode() + b"\n" + GOOD[1].encode()[:-5]
    with _journal(tmp_path, raw) as folder:
        assert [r["seed"] for r in folder.resumable()] == [0]
    assert "line 3 was cut by an interruption" in folder.notes[0]


def _fail_all(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("injected")
    monkeypatch.setattr(running, "run_episode", boom)


def test_compare_resume_refuses_a_trace_whose_content_changed(tmp_path, capsys, monkeypatch):
    """Finding 7: the header had the trace's path, not its content."""
    trace = tmp_path / "cap.csv"
    trace.write_text("time_s,value\n0,1.0\n1800,0.6\n")
    args = ["compare", "--policies", "fifo", "--seeds", "1", "--workers", "1", "--quiet",
            "--no-plots", "--out", str(tmp_path / "out"), "--set", "availability.generator=trace",
            f"availability.trace={trace}"]
    _fail_all(monkeypatch)
    assert main(args) == 1                          # the failed episode keeps the journal
    capsys.readouterr()
    trace.write_text("time_s,value\n0,1.0\n1800,0.3\n")
    assert main(args + ["--resume"]) == 2
    err = capsys.readouterr().err
    assert "belongs to a different run: files_sha256" in err and str(trace) in err


def test_compare_resume_names_a_skipped_journal_line(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    args = ["compare", "--policies", "fifo", "--seeds", "3", "--workers", "1", "--quiet",
            "--no-plots", "--out", str(out)]
    real = ev.run_episode

    def third_fails(*a, **k):
        if a[2] == 2:
            raise RuntimeError("injected")
        return real(*a, **k)
    monkeypatch.setattr(running, "run_episode", third_fails)
    assert main(args) == 1
    journal = out / ".hadoop.journal.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join([lines[0], lines[1], '{"seed": 1.5}', *lines[2:]]) + "\n")
    monkeypatch.setattr(running, "run_episode", real)
    runs = []
    monkeypatch.setattr(running, "run_episode", lambda *a, **k: runs.append(a[2]) or real(*a, **k))
    capsys.readouterr()
    assert main(args + ["--resume"]) == 0
    err = capsys.readouterr().err
    assert "line 3 skipped: policy is missing" in err
    assert runs == [2]                  # seeds 0 and 1 resumed: the line after the bad one kept


def test_benchmark_resume_refuses_an_edited_world(tmp_path, capsys, monkeypatch):
    """Finding 6: the benchmark header held ids, seeds and version only."""
    from mrsched_gym.config import with_overrides
    args = ["benchmark", "--ids", "mrsched/Hadoop-v0", "--seeds", "1", "--agents",
            "--workers", "1", "--quiet", "--no-plots", "--out", str(tmp_path)]
    _fail_all(monkeypatch)
    assert main(args) == 2                          # every episode failed: journal kept
    assert (tmp_path / ".benchmark.journal.jsonl").is_file()
    capsys.readouterr()
    real = ev.scenario_of
    monkeypatch.setattr(ev, "scenario_of",
                        lambda s: with_overrides(real(s), {"workload.load": 0.9}))
    assert main(args + ["--resume"]) == 2
    err = capsys.readouterr().err
    assert "belongs to a different run: worlds.mrsched/Hadoop-v0.workload.load changed" in err


def test_reproduce_fingerprint_holds_the_traces_content():
    from mrsched_gym.reproduce import load_reproduction, run_fingerprint
    fp = run_fingerprint(load_reproduction("rds-case-study", quick=True))
    assert len(fp["files_sha256"]["rds-table1-capacity"]) == 64


@pytest.mark.parametrize("records, run, says", [
    ('[{"policy": "fifo", "scen', None, "unreadable or cut (line 1)"),
    ("", None, "unreadable or cut"),
    ("[1]", None, "records.json entry 0 is not an episode record"),
    ('[{"case": "a", "policy": "fifo", "seed": 1.5}]', None, "entry 0 is not an episode"),
    ('[{"policy": "fifo", "scenario": "s", "seed": 0}]', {"version": "0"},
     "version changed"),
    ('[{"policy": "fifo", "scenario": "s", "seed": 0}]', "{cut", "unreadable or cut"),
])
def test_reproduce_reuse_over_a_cut_or_stale_folder_runs_again(tmp_path, capsys, records, run,
                                                                says):
    """Finding 19: ``reproduce --reuse`` over a truncated records.json was a traceback."""
    fp = {"reproduction": "r", "version": "1"}
    (tmp_path / "records.json").write_text(records)
    (tmp_path / "run.json").write_text(run if isinstance(run, str) else
                                       json.dumps({**fp, **(run or {})}))
    assert reusable_reproduction(tmp_path, fp) is None
    assert says in capsys.readouterr().err


def test_reproduce_reuse_takes_matching_records(tmp_path):
    fp = {"reproduction": "r", "version": "1", "files_sha256": {"t": "ab"}}
    (tmp_path / "records.json").write_text(json.dumps([{"case": "a", "policy": "fifo",
                                                         "seed": 0, **METRICS, "x": None}]))
    (tmp_path / "run.json").write_text(json.dumps(fp))
    recs = reusable_reproduction(tmp_path, fp)
    assert recs[0]["seed"] == 0 and recs[0]["x"] != recs[0]["x"]      # null read as NaN


def test_an_agent_whose_checkpoint_changed_is_named_and_re_run(tmp_path, capsys):
    """Resumed episodes of an agent run again when its file's hash changed, and the command
    says which agent and how many episodes."""
    import zipfile

    from mrsched_gym.cli import say_notes
    from mrsched_gym.evaluate import parse_policy, policy_fingerprint

    def write_checkpoint(weights: bytes) -> None:       # an SB3 archive's members (checked)
        import io
        pth = io.BytesIO()
        with zipfile.ZipFile(pth, "w") as torch_file:    # stored records, as torch writes
            torch_file.writestr("archive/data.pkl", weights)
        with zipfile.ZipFile(ckpt, "w") as z:
            z.writestr("data", "{}")
            z.writestr("policy.pth", pth.getvalue())
    ckpt = tmp_path / "model.zip"
    write_checkpoint(b"weights v1")
    spec = parse_policy(f"agent:{ckpt}")
    old_fp = policy_fingerprint(spec)
    done = [{"policy": spec.label, "scenario": "s", "seed": s, "_policy_fp": old_fp}
            for s in (0, 1)]
    with RunFolder(tmp_path, "run", HEAD) as folder:
        say_notes(folder, done, [f"agent:{ckpt}"], "s")
        assert capsys.readouterr().err == ""
        write_checkpoint(b"weights v2, retrained")
        say_notes(folder, done, [f"agent:{ckpt}"], "s")
    err = capsys.readouterr().err
    assert "agent:model: its file changed since the journal" in err
    assert "its 2 resumed episodes run again" in err


def test_resuming_with_fewer_policies_or_seeds_says_what_it_does_not_keep(tmp_path, capsys):
    """A journal of 3 policies x 3 seeds resumed for 2 policies x 2 seeds: 4 episodes reused,
    and a note that its other 5 (of those policies and seeds) are not kept; the same run of
    the journal's own policies and seeds, or another scenario's records, says nothing."""
    from mrsched_gym.cli import say_notes
    from mrsched_gym.evaluate import parse_policy, policy_fingerprint
    done = [{"policy": p, "scenario": "s", "seed": s,
             "_policy_fp": policy_fingerprint(parse_policy(p))}
            for p in ("edf", "fair", "fifo") for s in (0, 1, 2)]
    done.append({"policy": "srpt", "scenario": "other", "seed": 0, "_policy_fp": "x"})
    with RunFolder(tmp_path, "run", HEAD) as folder:
        assert say_notes(folder, done, ["edf", "fair", "fifo"], "s", [0, 1, 2]) == 9
        assert capsys.readouterr().err == ""
        assert say_notes(folder, done, ["edf", "fair"], "s", [0, 1]) == 4
    err = capsys.readouterr().err
    assert "the journal holds 5 finished episodes of policies or seeds this run does not ask " \
           "for (edf, fair, fifo)" in err and "they are not in its results" in err
