"""Issue 32, names and paths (findings 1, 10, 13): a name taken from user data is a slug that
resolves inside --out, checked before anything is written; nothing this run did not create is
deleted, moved or followed; a file or link at a target path is an error naming it."""

from __future__ import annotations

import json
import os

import pytest

from mrsched_gym.cli import main
from mrsched_gym.errors import InputError
from mrsched_gym.results import MARKER, RunFolder, safe_child

RUN = ["--policies", "fifo", "--seeds", "1", "--workers", "1", "--quiet", "--no-plots"]


@pytest.mark.parametrize("name, why", [
    ("", "is empty"),
    (".", "path step"),
    ("..", "path step"),
    ("../x", "may hold only"),
    ("./../victimdir", "may hold only"),
    ("/etc", "may hold only"),
    ("a/b", "may hold only"),
    ("a b", "may hold only"),
    ("tab\there", "may hold only"),
    ("x" * 201, "may hold only"),
    (3, "must be text"),
])
def test_unsafe_names_are_refused_naming_the_field(tmp_path, name, why):
    with pytest.raises(InputError) as e:
        safe_child(tmp_path, name, "scenario s.yaml: name")
    assert str(e.value).startswith("scenario s.yaml: name ")
    assert why in str(e.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["hadoop", "hadoop_orch-regression", "a.b-c_1", "x" * 200])
def test_slugs_resolve_inside_out(tmp_path, name):
    assert safe_child(tmp_path, name, "f") == tmp_path / name


def _scenario(path, name):
    path.write_text(f"name: {json.dumps(name)}\nworkload: {{duration_s: 600}}\n")
    return str(path)


@pytest.mark.parametrize("name", ["./../victimdir", "..", "", "../x", "/tmp/abs"])
def test_a_scenario_name_never_reaches_outside_out(tmp_path, capsys, name):
    """Finding 1: ``name: ./../victimdir`` replaced and deleted a folder beside --out."""
    victim = tmp_path / "victimdir"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    out = tmp_path / "out"
    rc = main(["compare", "--env", _scenario(tmp_path / "s.yaml", name), "--out", str(out),
               *RUN])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("error: scenario ") and ": name " in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (victim / "precious.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml", "victimdir"]


def _compare(out, capsys, *extra):
    rc = main(["compare", "--out", str(out), *RUN, *extra])
    return rc, capsys.readouterr().err


def test_a_symlinked_results_folder_is_neither_followed_nor_replaced(tmp_path, capsys):
    """Finding 10: a symlinked results folder was replaced by a real directory."""
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "mine.txt").write_text("x")
    out = tmp_path / "out"
    out.mkdir()
    (out / "hadoop").symlink_to(target)
    rc, err = _compare(out, capsys)
    assert rc == 2 and "symbolic link" in err and str(out / "hadoop") in err
    assert (out / "hadoop").is_symlink() and os.listdir(target) == ["mine.txt"]


def test_a_file_at_the_results_path_is_an_error_not_moved(tmp_path, capsys):
    """Finding 10: a regular file at the results path was moved to a hidden .NAME.old.*."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "hadoop").write_text("a user's file")
    rc, err = _compare(out, capsys)
    assert rc == 2 and "a file is where the results folder goes" in err
    assert (out / "hadoop").read_text() == "a user's file"
    assert sorted(p.name for p in out.iterdir()) == ["hadoop"]


def test_a_foreign_folder_at_the_results_path_is_left_alone(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "hadoop").mkdir(parents=True)
    (out / "hadoop" / "thesis.tex").write_text("x")
    rc, err = _compare(out, capsys)
    assert rc == 2 and "did not write" in err
    assert os.listdir(out / "hadoop") == ["thesis.tex"]


def test_a_folder_this_tool_wrote_is_replaced_and_marked(tmp_path, capsys):
    out = tmp_path / "out"
    assert _compare(out, capsys)[0] == 0
    assert (out / "hadoop" / MARKER).is_file()
    assert _compare(out, capsys)[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["hadoop"]    # no lock, journal, old


@pytest.mark.parametrize("which", ["journal", "lock"])
def test_a_link_planted_at_the_journal_or_lock_is_not_followed(tmp_path, capsys, which):
    """Finding 13: a symlink at the journal's path was followed, its target overwritten and its
    mode widened."""
    victim = tmp_path / "victim"
    victim.write_text("secret")
    victim.chmod(0o600)
    out = tmp_path / "out"
    out.mkdir()
    link = out / (".hadoop.journal.jsonl" if which == "journal" else ".hadoop.lock")
    link.symlink_to(victim)
    rc, err = _compare(out, capsys)
    assert rc == 2 and "symbolic link" in err and str(link) in err
    assert victim.read_text() == "secret" and (victim.stat().st_mode & 0o777) == 0o600
    assert link.is_symlink()


@pytest.mark.parametrize("which", ["journal", "lock"])
def test_a_folder_at_the_journal_or_lock_path_is_one_error_line(tmp_path, capsys, which):
    """Finding 19: a journal or lock path that is a directory gave a raw traceback."""
    out = tmp_path / "out"
    (out / (".hadoop.journal.jsonl" if which == "journal" else ".hadoop.lock")).mkdir(
        parents=True)
    rc, err = _compare(out, capsys)
    assert rc == 2 and err.startswith("error: ") and "not a regular file" in err
    assert "Traceback" not in err


def test_leftovers_are_removed_only_when_this_tool_made_them(tmp_path):
    """Staging/old folders of a killed run carry the marker and go; look-alikes stay."""
    ours = tmp_path / ".hadoop.staging.abc"
    ours.mkdir()
    (ours / MARKER).write_text("")
    (ours / "records.json").write_text("[]")
    foreign = tmp_path / ".hadoop.staging.user"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("x")
    link = tmp_path / ".hadoop.old.lnk"
    link.symlink_to(foreign)
    with RunFolder(tmp_path, "hadoop", {"x": 1}):
        pass
    assert not ours.exists()
    assert (foreign / "notes.txt").is_file() and link.is_symlink()
    assert not (tmp_path / ".hadoop.lock").exists()


def test_the_train_helper_is_importable_for_run_names(tmp_path):
    """One helper for every name from user data (the trainer's run names too)."""
    from mrsched_gym.results import safe_child as helper
    assert helper(tmp_path, "my-run_1", "train config: name") == tmp_path / "my-run_1"
    with pytest.raises(InputError, match="train config: name '../runs'"):
        helper(tmp_path, "../runs", "train config: name")


def test_replacing_an_old_results_folder_never_follows_its_links(tmp_path, capsys):
    """Finding 10: ``rmtree(ignore_errors=True)`` left dangling links behind; removing the old
    folder must remove its links, not what they point at."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "data.txt").write_text("keep")
    out = tmp_path / "out"
    assert _compare(out, capsys)[0] == 0
    (out / "hadoop" / "evil").symlink_to(victim)
    rc, err = _compare(out, capsys)                     # not in the manifest: left alone
    assert rc == 2 and f"{out / 'hadoop' / 'evil'}: not a file this tool wrote" in err
    assert (out / "hadoop" / "evil").is_symlink()
    from mrsched_gym.results import write_manifest
    write_manifest(out / "hadoop")                      # listed: replaced, never followed
    assert _compare(out, capsys)[0] == 0
    assert (victim / "data.txt").read_text() == "keep"
    assert not (out / "hadoop" / "evil").exists() and not (out / "hadoop" / "evil").is_symlink()
    assert sorted(p.name for p in out.iterdir()) == ["hadoop"]


@pytest.mark.parametrize("name, resume", [("records.json", False), ("jobs.csv", True),
                                          ("summary.csv", False)])
def test_a_file_of_ours_the_user_edited_is_theirs_now(tmp_path, capsys, name, resume):
    """A results file this tool wrote and the user edited since (their own records.json over
    ours) is named and kept, never replaced: the manifest records each file's contents."""
    out = tmp_path / "out"
    assert _compare(out, capsys)[0] == 0
    mine = out / "hadoop" / name
    mine.write_text('{"mine": 1}\n')
    rc, err = _compare(out, capsys, *(["--resume"] if resume else []))
    assert rc == 2 and f"{mine}: changed since this tool wrote it" in err, err
    assert mine.read_text() == '{"mine": 1}\n'
