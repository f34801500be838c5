"""The benchmark protocol: normalised scores, IQM, probability of improvement, the command."""

import json

import numpy as np
import pytest

from mrsched_gym.cli import main
from mrsched_gym.evaluate.benchmark import (
    SUITE,
    TEST_SEEDS,
    aggregate,
    best_baseline,
    iqm,
    normalised_scores,
    prob_improvement,
)


def records(values):
    """Hand-made records: {policy: [headline by seed]} on Hadoop-v0 (deadline_penalty_h)."""
    return [{"scenario": "mrsched/Hadoop-v0", "policy": p, "seed": s,
             "deadline_penalty_h": float(v)}
            for p, vs in values.items() for s, v in enumerate(vs)]


def test_normalised_score_is_zero_for_random_and_one_for_the_best_baseline():
    sc = normalised_scores(records({"random": [10, 12, 8], "edf": [2, 4, 0], "fifo": [6, 6, 6],
                                    "agent:x": [1, 1, 1]}))["mrsched/Hadoop-v0"]
    assert np.mean(sc["random"]) == pytest.approx(0.0)
    assert np.mean(sc["edf"]) == pytest.approx(1.0)        # the best baseline (agents excluded)
    assert sc["fifo"] == pytest.approx([0.5, 0.5, 0.5])
    assert sc["agent:x"] == pytest.approx([1.125] * 3)      # better than every baseline


def test_a_reference_rule_is_scored_but_never_the_anchor():
    """A reference rule (srpt) better than every baseline keeps the best baseline at 1 (it is
    not ``B``) and gets a probability of improvement like an agent."""
    vals = {"random": [10, 12, 8], "edf": [2, 4, 0], "fifo": [6, 6, 6], "srpt": [1, 1, 1],
            "agent:x": [3, 3, 3]}
    sc = normalised_scores(records(vals))["mrsched/Hadoop-v0"]
    assert np.mean(sc["edf"]) == pytest.approx(1.0)
    assert sc["srpt"] == pytest.approx([1.125] * 3)
    assert best_baseline(sc) == "edf"
    rows = {r["policy"]: r for r in aggregate({"mrsched/Hadoop-v0": sc}, samples=50)}
    # P(X > Y) over the pairs of per-seed scores: 1.125 beats edf's 1 and 0.75 but not its
    # 1.25; the agent's 0.875 beats only 0.75
    assert rows["srpt"]["p_improvement"] == pytest.approx(2 / 3)
    assert rows["agent:x"]["p_improvement"] == pytest.approx(1 / 3)
    assert "p_improvement" not in rows["edf"]


def test_iqm_and_probability_of_improvement():
    assert iqm([0, 1, 2, 3, 100, -100, 2, 1]) == pytest.approx(1.5)
    assert prob_improvement([2, 2], [1, 1]) == 1.0
    assert prob_improvement([1, 1], [1, 1]) == 0.5
    assert prob_improvement([0, 3], [1, 2]) == 0.5


def test_aggregate_gives_reproducible_bootstrap_intervals_around_the_iqm():
    rng = np.random.default_rng(1)
    vals = {"random": rng.uniform(8, 12, 10), "edf": rng.uniform(1, 3, 10),
            "agent:x": rng.uniform(0, 2, 10)}
    sc = normalised_scores(records(vals))
    a, b = aggregate(sc, samples=300), aggregate(sc, samples=300)
    assert a == b
    top = a[0]
    assert top["policy"] == "agent:x" and top["iqm_lo"] <= top["iqm"] <= top["iqm_hi"]
    assert 0.5 < top["p_improvement"] <= 1.0
    assert top["p_improvement_lo"] <= top["p_improvement"] <= top["p_improvement_hi"]


def test_the_suite_and_its_seeds():
    assert "mrsched/ThesisScale-v0" not in SUITE and "mrsched/Hadoop-v0" in SUITE
    assert "mrsched/Stragglers-v0" not in SUITE               # random is near-best there
    assert len(SUITE) == 12                                   # the README's table
    assert not set(TEST_SEEDS) & set(range(20))              # leaderboard seeds
    assert not set(TEST_SEEDS) & set(range(500, 520))        # agents' validation seeds


def test_benchmark_command_writes_scores_with_the_suite_version(tmp_path, capsys):
    assert main(["benchmark", "--ids", "mrsched/Dedicated-v0", "--seeds", "2", "--workers",
                 "1", "--quiet", "--no-plots", "--out", str(tmp_path)]) == 0
    assert "IQM (95% CI)" in capsys.readouterr().out
    data = json.loads((tmp_path / "benchmark" / "benchmark.json").read_text())
    assert data["suite"]["ids"] == ["mrsched/Dedicated-v0"] and data["suite"]["seeds"] == [100, 101]
    assert {"random", "edf", "agent:hadoop-v0"} <= {r["policy"] for r in data["aggregate"]}
    assert (tmp_path / "benchmark" / "scores.csv").stat().st_size > 0
    from mrsched_gym.agents.pretrained import pretrained_agents
    shipped = pretrained_agents()
    agents = data["suite"]["agents"]
    assert agents["agent:hadoop-v0"]["params_sha256"] == shipped["hadoop-v0"]["params_sha256"]
    assert agents["agent:general-v2"]["affinity"] == shipped["general-v2"]["affinity"]
    assert len(agents["agent:general-v2"]["file_sha256_16"]) == 16
    assert "agent:general" not in agents                      # superseded by general-v2


def test_benchmark_ranks_the_references_it_is_given(tmp_path, capsys):
    assert main(["benchmark", "--ids", "mrsched/Dedicated-v0", "--seeds", "2", "--workers",
                 "1", "--quiet", "--no-plots", "--out", str(tmp_path), "--agents",
                 "--references", "srpt-slowstart"]) == 0
    assert "| srpt-slowstart (reference) |" in capsys.readouterr().out
    data = json.loads((tmp_path / "benchmark" / "benchmark.json").read_text())
    assert data["suite"]["references"] == ["srpt-slowstart"]
    rows = {r["policy"]: r for r in data["aggregate"]}
    assert "p_improvement" in rows["srpt-slowstart"] and "p_improvement" not in rows["edf"]


@pytest.mark.parametrize("option, value, names", [
    ("--references", "edf", "the classical baselines are in the suite"),   # a spec baseline
    ("--references", "agent:general", "agents go in --agents"),
    ("--references", "nope", "unknown baseline 'nope'"),
    ("--agents", "srpt", "'srpt': not an agent"),          # would be scored as a baseline
    ("--agents", "edf", "'edf': not an agent"),
])
def test_benchmark_refuses_a_policy_in_the_wrong_option(tmp_path, capsys, option, value, names):
    assert main(["benchmark", "--ids", "mrsched/Dedicated-v0", "--seeds", "1", "--quiet",
                 "--out", str(tmp_path), option, value]) == 2
    assert names in capsys.readouterr().err
    assert not (tmp_path / "benchmark").exists()                    # nothing ran


def test_a_local_file_named_like_a_shipped_agent_is_not_given_its_hash(tmp_path, monkeypatch):
    """``agent:general`` names a local file ``general`` first (parse_policy): the benchmark's
    suite must not record the shipped agent's params_sha256 for it."""
    from mrsched_gym.cli import agent_versions
    monkeypatch.chdir(tmp_path)
    import io
    import zipfile
    pth = io.BytesIO()
    with zipfile.ZipFile(pth, "w") as torch_file:        # stored records, as torch writes
        torch_file.writestr("archive/data.pkl", b"not the shipped weights")
    with zipfile.ZipFile(tmp_path / "general", "w") as z:  # an SB3 archive's members
        z.writestr("data", "{}")
        z.writestr("policy.pth", pth.getvalue())
    entry = agent_versions(["agent:general"])["agent:general"]
    assert entry["file"] == "general" and "params_sha256" not in entry
    monkeypatch.chdir(tmp_path.parent)
    assert "params_sha256" in agent_versions(["agent:general"])["agent:general"]


def test_paired_rows_pair_each_agent_with_the_best_rule_and_the_best_baseline():
    """Hand-checked: the best rule (srpt, mean 2) and the best baseline (edf, mean 3) are the
    lowest means of their kinds; the difference is per seed (paired), its CI Student's t."""
    from mrsched_gym.evaluate.benchmark import paired_rows, paired_table
    rows = paired_rows(records({"random": [9, 9, 9], "edf": [3, 2, 4], "fifo": [5, 5, 5],
                                "srpt": [1, 2, 3], "edf-slowstart": [4, 4, 4],
                                "agent:x": [0, 1, 5]}))
    (row,) = rows
    assert (row["policy"], row["best_rule"], row["best_baseline"]) == ("agent:x", "srpt", "edf")
    assert row["diff_vs_rule"] == pytest.approx(0.0)              # (-1, -1, +2) / 3
    assert row["lower_vs_rule"] == 2 and row["n"] == 3
    assert row["diff_vs_baseline"] == pytest.approx((-3 - 1 + 1) / 3)
    assert row["ci_vs_rule"] == pytest.approx(4.302653 * np.std([-1, -1, 2], ddof=1) / 3 ** 0.5,
                                              rel=1e-5)
    assert "srpt 2 | +0 [" in paired_table(rows)
    no_rule = paired_rows(records({"random": [9, 9], "edf": [3, 2], "agent:x": [1, 1]}))
    assert "best_rule" not in no_rule[0] and "| - | - |" in paired_table(no_rule)
    one_seed = paired_table(paired_rows(records({"edf": [3], "srpt": [2], "agent:x": [1]})))
    assert "-1 (no CI from 1 seed), lower on 1/1" in one_seed and "nan" not in one_seed
