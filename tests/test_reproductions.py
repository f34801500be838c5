"""Every seed reproduction runs (CI size) and its claims come out as its file says.

A claim marked ``expect: fail`` is one we do not reproduce (docs/validation.md gives the numbers);
the test fails the day it starts to hold, so the file and the note get updated.
"""

import json

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

SPEC_EXPERIMENTS = {"thesis-ch3-adaptive", "thesis-ch4-ras", "thesis-ch5-reverse",
                    "rds-case-study", "rds-evaluation", "mimp-interference", "mimp-scheduling",
                    "pastorelli-preemption", "mrorchestrator"}


def test_every_spec_experiment_has_a_reproduction():
    assert set(bundled_reproductions()) == SPEC_EXPERIMENTS


@pytest.mark.parametrize("name", sorted(SPEC_EXPERIMENTS))
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
    with pytest.raises(ConfigError, match="no such reproduction"):
        load_reproduction("nope")
