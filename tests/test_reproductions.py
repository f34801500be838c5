"""Every seed reproduction runs (CI size) and its claims come out as its file says.

A claim marked ``expect: fail`` is one we do not reproduce (docs/validation.md gives the numbers);
the test fails the day it starts to hold, so the file and the note get updated.
"""

import json
from pathlib import Path

import pytest

from mrsched_gym.cli import main
from mrsched_gym.config import ConfigError
from mrsched_gym.reproduce import (
    bundled_reproductions,
    check_claims,
    load_reproduction,
    report,
    run_reproduction,
)
from mrsched_gym.results import add_to_manifest

ROOT = Path(__file__).resolve().parents[1]
SPEC_EXPERIMENTS = {"thesis-ch3-adaptive", "thesis-ch4-ras", "thesis-ch5-reverse",
                    "late-speculation",
                    "rds-case-study", "rds-evaluation", "mimp-interference", "mimp-scheduling",
                    "pastorelli-preemption", "mrorchestrator"}


def test_every_spec_experiment_has_a_reproduction():
    assert set(bundled_reproductions()) == SPEC_EXPERIMENTS


#: Reproductions whose full run takes tens of minutes (the thesis ch. 5 week, 10 workloads):
#: CI runs their quick size, and checks the committed full run's outcomes against the file.
LONG = {"thesis-ch5-reverse"}


@pytest.mark.parametrize("name", sorted(SPEC_EXPERIMENTS - LONG))
def test_reproduction_runs_and_claims_match_expectations(name):
    """The full run (its seeds, paired tests): what docs/validation.md reports."""
    rep = load_reproduction(name)
    records = run_reproduction(rep, workers=2, progress=False)
    assert len(records) == rep.seeds * sum(len(c.policies) for c in rep.cases)
    assert all(r["invalid_actions"] == 0 for r in records)
    text = report(rep, records)
    for e in rep.paper:                       # the paper's numbers are printed beside ours
        assert f"| {e['case']} | {e['policy']} |" in text
    for c in check_claims(rep, records):
        assert c["holds"] == (c["expect"] != "fail"), c


@pytest.mark.parametrize("name", sorted(LONG))
def test_long_reproduction_runs_quick(name):
    rep = load_reproduction(name, quick=True)
    records = run_reproduction(rep, workers=2, progress=False)
    assert len(records) == sum(len(c.policies) for c in rep.cases)
    assert all(r["invalid_actions"] == 0 and r["n_jobs"] > 0 for r in records)
    assert len(check_claims(rep, records)) == len(rep.claims)


@pytest.mark.parametrize("name", sorted(LONG))
def test_committed_full_run_of_a_long_reproduction_matches_its_file(name):
    """docs/reproductions.json (written by the full run, ``reproduce all --json``) holds every
    claim of the file with the outcome the file expects, counted over every case."""
    summary = json.loads((ROOT / "docs" / "reproductions.json").read_text())
    got = {c["claim"]: c for c in summary["claims"] if c["reproduction"] == name}
    rep = load_reproduction(name)
    assert set(got) == {c["text"] for c in rep.claims}
    for claim in rep.claims:
        c = got[claim["text"]]
        assert c["holds"] == (claim.get("expect", "hold") != "fail"), c
        n_cases = len(rep.cases) if claim.get("cases") == "all" else len(claim.get("cases", [1]))
        assert c["cases_total"] == n_cases, c


def test_quick_runs_compare_means_and_say_so():
    rep = load_reproduction("rds-case-study", quick=True)
    records = run_reproduction(rep, workers=1, progress=False)
    assert "quick run: on the means" in report(rep, records)
    assert all(c["cases_total"] == 1 for c in check_claims(rep, records))


def test_reproduce_command_lists_and_writes(tmp_path, capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for name in SPEC_EXPERIMENTS:
        assert name in out
    assert main(["reproduce", "rds-case-study", "--quick", "--quiet", "--workers", "1",
                 "--out", str(tmp_path), "--strict"]) == 0
    out = capsys.readouterr().out
    assert "Paper vs ours" in out and "Fig. 2(b)" in out
    recs = json.loads((tmp_path / "rds-case-study" / "records.json").read_text())
    assert {r["policy"] for r in recs} == {"fifo", "fair", "edf", "rds"}
    assert (tmp_path / "rds-case-study" / "figure.png").stat().st_size > 1000


def test_reuse_takes_records_only_from_an_identical_run(tmp_path, capsys):
    args = ["reproduce", "rds-case-study", "--quick", "--quiet", "--workers", "1", "--no-plots",
            "--out", str(tmp_path)]
    assert main(args) == 0
    rec_path = tmp_path / "rds-case-study" / "records.json"
    records = json.loads(rec_path.read_text())

    def write(records):             # an edit taken as ours (else the folder refuses to replace it)
        rec_path.write_text(json.dumps(records))
        add_to_manifest(rec_path.parent, ["records.json"])
    records[0]["note"] = "marked"     # marks the file (a valid record): reuse returns it as is
    write(records)
    capsys.readouterr()
    assert main([*args, "--reuse"]) == 0
    assert "reusing the records" in capsys.readouterr().out
    assert json.loads(rec_path.read_text())[0]["note"] == "marked"
    records[0]["deadline_misses"] = 42.0           # more misses than jobs: not reused
    write(records)
    capsys.readouterr()
    assert main([*args, "--reuse"]) == 0
    assert "entry 0 is not an episode record" in capsys.readouterr().err
    assert main([*args, "--reuse", "--seeds", "2"]) == 0       # another size: run again
    assert "reusing" not in capsys.readouterr().out
    assert all("note" not in r for r in json.loads(rec_path.read_text()))


def test_bad_reproduction_files_name_the_field(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("title: x\nbase: hadoop\ncases: [{name: a}]\npolicies: [nosuch]\n")
    with pytest.raises(ConfigError, match=r"cases\[0\].*nosuch"):
        load_reproduction(str(p))
    p.write_text("title: x\nbase: hadoop\npolicies: [fifo]\ncases: [{name: a}]\n"
                 "claims: [{text: t, metric: m, better: [b, fifo], worse: [[a, fifo]]}]\n")
    with pytest.raises(ConfigError, match=r"claims\[0\].*unknown case 'b'"):
        load_reproduction(str(p))
    p.write_text("title: x\nbase: hadoop\npolicies: [fifo]\ncases: [{name: a}]\nfoo: 1\n")
    with pytest.raises(ConfigError, match="foo: unknown key"):
        load_reproduction(str(p))
    p.write_text("title: x\nbase: hadoop\npolicies: [fifo]\ncases: [{name: a}]\nseeds: two\n")
    with pytest.raises(ConfigError, match="seeds: expected an integer"):
        load_reproduction(str(p))
    p.write_text("base: hadoop\npolicies: [fifo]\ncases: [{name: a}]\n")
    with pytest.raises(ConfigError, match="title: required"):
        load_reproduction(str(p))
    p.write_text("title: x\nbase: hadoop\npolicies: [fifo]\ncases: [{name: a, polices: [b]}]\n")
    with pytest.raises(ConfigError, match=r"cases\[0\]\.polices: unknown key"):
        load_reproduction(str(p))
    with pytest.raises(ConfigError, match="no such reproduction file or bundled reproduction"):
        load_reproduction("nope")


def test_a_field_added_later_changes_the_fingerprint_only_when_set():
    """``reproduce --reuse``: records made before ``decisions.speculation`` existed stay reusable
    (the field is left out at its default), and a run that turns it on is a different run."""
    import dataclasses

    from mrsched_gym.config import with_overrides
    from mrsched_gym.reproduce import run_fingerprint
    rep = load_reproduction("mimp-scheduling")
    on = dataclasses.replace(rep, cases=[
        dataclasses.replace(c, scenario=with_overrides(
            c.scenario, {"decisions.speculation.enabled": True})) for c in rep.cases])
    assert run_fingerprint(on)["cases_sha256"] != run_fingerprint(rep)["cases_sha256"]
    again = dataclasses.replace(rep, cases=[
        dataclasses.replace(c, scenario=with_overrides(
            c.scenario, {"decisions.speculation.enabled": False})) for c in rep.cases])
    assert run_fingerprint(again) == run_fingerprint(rep)
