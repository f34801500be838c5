"""The evaluation harness and the leaderboard command."""

import csv
import json
import math

import pytest

from mrsched_gym.cli import main
from mrsched_gym.evaluate import (evaluate, mean_ci95, parse_policy, run_episode, summarize,
                                  write_results)


def test_parallel_and_serial_runs_give_identical_records():
    kw = dict(policies=["fifo", "edf", "fair:delay=0"], scenarios=["mrsched/Hadoop-v0"],
              seeds=[0, 1], progress=False)
    serial = evaluate(workers=1, **kw)
    parallel = evaluate(workers=2, **kw)
    strip = lambda rs: [{k: v for k, v in r.items() if k != "wall_s"} for r in rs]  # noqa
    assert json.dumps(strip(serial)) == json.dumps(strip(parallel))   # nan-safe, exact
    assert [(r["policy"], r["seed"]) for r in serial] == [
        ("fifo", 0), ("fifo", 1), ("edf", 0), ("edf", 1), ("fair:delay=0", 0), ("fair:delay=0", 1)]


def test_common_random_numbers_same_world_for_every_policy():
    a = run_episode("mrsched/Hadoop-v0", parse_and_make("fifo"), 4, keep_log=True)["log"]
    b = run_episode("mrsched/Hadoop-v0", parse_and_make("fair+orch-regression"), 4,
                    keep_log=True)["log"]
    assert (a.arrival_s == b.arrival_s).all() and (a.n_tasks == b.n_tasks).all()
    assert (a.deadline_s == b.deadline_s).all()


def parse_and_make(name):
    from mrsched_gym.evaluate import make_policy
    return make_policy(name)


def test_summary_and_files(tmp_path):
    recs = evaluate(["fifo", "edf"], ["mrsched/Hadoop-v0"], [0, 1, 2], workers=1,
                    progress=False)
    rows = summarize(recs)
    fifo = next(r for r in rows if r["policy"] == "fifo")
    vals = [r["deadline_penalty_h"] for r in recs if r["policy"] == "fifo"]
    m, ci = mean_ci95(vals)
    assert fifo["deadline_penalty_h_mean"] == pytest.approx(sum(vals) / 3)
    assert fifo["deadline_penalty_h_ci95"] == pytest.approx(ci) and ci > 0
    paths = write_results(recs, tmp_path / "out")
    data = json.loads(paths["records.json"].read_text())
    assert len(data) == 6 and "mean_jct_s" in data[0] and "_jct_s" not in data[0]
    with open(paths["records.csv"]) as f:
        rows_csv = list(csv.DictReader(f))
    assert len(rows_csv) == 6 and float(rows_csv[0]["deadline_penalty_h"]) == pytest.approx(
        data[0]["deadline_penalty_h"])
    assert not list((tmp_path / "out").glob(".*tmp"))     # atomic writes leave no temp files


def test_mean_ci95_matches_student_t():
    m, ci = mean_ci95([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5 and ci == pytest.approx(3.182446 * 1.2909944 / 2.0, rel=1e-5)
    assert math.isnan(mean_ci95([1.0])[1])


def test_bad_policy_and_scenario_fail_before_running():
    with pytest.raises(ValueError, match="unknown baseline 'lottery'"):
        evaluate(["lottery"], ["mrsched/Hadoop-v0"], [0], progress=False)
    with pytest.raises(ValueError, match="not key=value"):
        parse_policy("fair:delay")
    with pytest.raises(FileNotFoundError, match="nope.zip"):
        parse_policy("agent:nope.zip")
    with pytest.raises(Exception, match="no_such_scenario"):
        evaluate(["fifo"], ["no_such_scenario"], [0], progress=False)


def test_trained_agent_checkpoint_through_the_harness(tmp_path):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    from sb3_contrib import MaskablePPO

    import gymnasium as gym
    env = gym.make("mrsched/Hadoop-v0")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                        device="cpu", policy_kwargs={"net_arch": [16]})
    model.learn(64)
    path = tmp_path / "tiny.zip"
    model.save(path)
    recs = evaluate([f"agent:{path}", "fifo"], ["mrsched/Hadoop-v0"], [0], workers=1,
                    progress=False)
    assert recs[0]["policy"] == "agent:tiny" and recs[0]["invalid_actions"] == 0
    assert recs[0]["jobs_finished"] > 0


def test_compare_command_writes_table_results_and_plots(tmp_path, capsys):
    rc = main(["compare", "--policies", "fifo", "edf", "--seeds", "2", "--workers", "1",
               "--out", str(tmp_path), "--quiet"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "| 1 | edf |" in out and "deadline_penalty_h (mean ± 95% CI)" in out
    d = tmp_path / "hadoop"
    for f in ("records.json", "records.csv", "summary.json", "summary.csv", "metrics.png",
              "jct_cdf.png", "gantt.png"):
        assert (d / f).stat().st_size > 0, f


def test_paired_difference_against_the_best_baseline():
    """Hand-made records: the agent's per-seed differences to the best baseline (b) are -1, -2, 0."""
    from mrsched_gym.leaderboard import paired_vs_best
    vals = {"a": [5, 5, 5], "b": [2, 3, 1], "agent:x": [1, 1, 1]}
    recs = [{"policy": p, "scenario": "s", "seed": i, "m": float(v)}
            for p, vs in vals.items() for i, v in enumerate(vs)]
    (line,) = paired_vs_best(recs, "m")
    assert line.startswith("agent:x - b (paired over the same 3 seeds): -1.00 ± 2.48")
    assert line.endswith("lower on 2/3 seeds")
    assert paired_vs_best([r for r in recs if r["policy"] != "agent:x"], "m") == []
