"""The evaluation harness and the leaderboard command."""

import csv
import json
import math

import numpy as np
import pytest

from mrsched_gym.cli import main
from mrsched_gym.errors import InputError
from mrsched_gym.evaluate import (
    evaluate,
    mean_ci95,
    parse_policy,
    run_episode,
    summarize,
    write_results,
)


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
    """Same jobs for every policy, and with the orchestrator on (a cluster setting that draws
    nothing)."""
    a = run_episode("mrsched/Hadoop-v0", parse_and_make("fifo"), 4, keep_log=True)["log"]
    b = run_episode("mrsched/HadoopOrchestrated-v0", parse_and_make("fair"), 4,
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
    with pytest.raises(InputError, match="nope.zip"):
        parse_policy("agent:nope.zip")
    with pytest.raises(Exception, match="no_such_scenario"):
        evaluate(["fifo"], ["no_such_scenario"], [0], progress=False)


def test_trained_agent_checkpoint_through_the_harness(tmp_path):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    import gymnasium as gym
    from sb3_contrib import MaskablePPO
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
    assert "| mean_jct_s | p95_jct_s | jobs_finished_pct |" in out   # JCT with its finished share
    d = tmp_path / "hadoop"
    for f in ("records.json", "records.csv", "summary.json", "summary.csv", "jobs.csv",
              "metrics.png", "jct_cdf.png", "gantt.png"):
        assert (d / f).stat().st_size > 0, f


@pytest.mark.parametrize("env_id, kwargs, policies", [
    ("mrsched/Hadoop-v0", {"time_limit_s": 1800.0}, ["fifo", "edf"]),     # cut: unfinished jobs
    ("mrsched/Admission-v1", {"workload.duration_s": 1800.0}, ["mp+ac"]),  # rejected jobs
    ("mrsched/Hadoop-v0", {"stats_window_s": [1200.0, 2400.0]}, ["fifo"]),  # jobs not counted
])
def test_the_job_table_adds_up_to_the_metrics(tmp_path, env_id, kwargs, policies):
    """``evaluate(per_job=True)``: one row per job, whose columns give the episode's metrics
    back (the unserved jobs charged as the metrics charge them); ``jobs.csv`` holds them all."""
    recs = evaluate(policies, [env_id], [0, 1], workers=1, progress=False, env_kwargs=kwargs,
                    per_job=True)
    unserved = 0
    for r in recs:
        t = {k: np.array(v) for k, v in r["_jobs"].items()}
        counted = t["counted"] & t["arrived"]
        assert t["counted"].sum() == r["n_jobs"]
        assert (t["finished"] & t["counted"]).sum() == r["jobs_finished"]
        assert t["rejected"].sum() == r["rejections"]
        assert np.mean(t["jct_s"][counted].astype(float)) == pytest.approx(r["mean_jct_s"])
        assert t["missed"][t["counted"]].sum() == r["deadline_misses"]
        # every job the table describes, counted or not: a finished job has its completion, a
        # job that arrived late for its deadline missed it
        assert all(v is not None for v in t["completion_s"][t["finished"]])
        late = np.array([v is not None and v > 0 for v in t["late_by_s"]])
        assert t["missed"][late & t["arrived"]].all()
        assert sorted(t["jct_s"][t["finished"]].astype(float)) == pytest.approx(
            sorted(r["_jct_s"]))
        unserved += int((counted & ~t["finished"]).sum())
    if "time_limit_s" in kwargs:
        assert unserved > 0                     # the charged completions were exercised
    if env_id == "mrsched/Admission-v1":
        assert sum(r["rejections"] for r in recs) > 0
    if "stats_window_s" in kwargs:
        assert not all(all(r["_jobs"]["counted"]) for r in recs)
    paths = write_results(recs, tmp_path)
    with open(paths["jobs.csv"]) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == sum(len(r["_jobs"]["job"]) for r in recs)
    assert list(rows[0])[:4] == ["policy", "scenario", "seed", "job"]
    plain = [{k: v for k, v in r.items() if k != "_jobs"} for r in recs]
    assert "jobs.csv" not in write_results(plain, tmp_path / "plain")      # only when asked


def test_compare_set_varies_one_factor_in_a_folder_of_its_own(tmp_path, capsys):
    """``compare --set workload.load=0.5``: the episodes are those of the overridden world
    (as ``evaluate(env_kwargs=...)`` runs them), written beside, not over, the default's."""
    args = ["compare", "--policies", "edf", "--seeds", "2", "--workers", "1", "--quiet",
            "--no-plots", "--out", str(tmp_path)]
    assert main(args) == 0
    assert main([*args, "--set", "workload.load=0.5", "--set", "cluster.racks=2"]) == 0
    assert "== mrsched/Hadoop-v0 (hadoop) with workload.load=0.5, cluster.racks=2:" in \
        capsys.readouterr().out
    edited = [p for p in tmp_path.iterdir() if p.name.startswith("hadoop-")]
    assert (tmp_path / "hadoop").is_dir() and len(edited) == 1
    run = json.loads((edited[0] / "run.json").read_text())
    assert run["overrides"] == {"workload.load": 0.5, "cluster.racks": 2}
    got = json.loads((edited[0] / "records.json").read_text())
    want = evaluate(["edf"], ["mrsched/Hadoop-v0"], [0, 1], workers=1, progress=False,
                    env_kwargs={"workload.load": 0.5, "cluster.racks": 2})
    default = json.loads((tmp_path / "hadoop" / "records.json").read_text())
    assert [r["deadline_penalty_h"] for r in got] == [r["deadline_penalty_h"] for r in want]
    assert [r["n_jobs"] for r in got] != [r["n_jobs"] for r in default]     # another world
    # set back to the default value, the world is Hadoop-v0's, in a folder of its own still
    assert main([*args, "--set", "workload.load=0.7"]) == 0
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("hadoop-")]) == 2
    assert json.loads((tmp_path / "hadoop" / "records.json").read_text()) == default


def test_set_values_are_read_as_yaml_and_numbers():
    from mrsched_gym.cli import parse_settings
    assert parse_settings(["workload.duration_s=9e2", "cluster.racks=2", "a.b=true",
                           "workload.kind=poisson"]) == {
        "workload.duration_s": 900.0, "cluster.racks": 2, "a.b": True,
        "workload.kind": "poisson"}


def test_a_relative_trace_path_set_on_the_command_line_is_made_absolute(tmp_path, monkeypatch):
    """As a scenario file's are made relative to its folder, so records name the file read;
    bundled names, absolute paths and other keys stay as given."""
    from mrsched_gym.cli import parse_settings
    monkeypatch.chdir(tmp_path)
    assert parse_settings(["workload.trace=t/jobs.csv", "interference.trace=nasa-http-1995",
                           "availability.trace=/data/pv.csv", "name=t/jobs.csv",
                           "availability={generator: trace, trace: t/pv.csv}"]) == {
        "workload.trace": str(tmp_path / "t" / "jobs.csv"),
        "interference.trace": "nasa-http-1995", "availability.trace": "/data/pv.csv",
        "name": "t/jobs.csv",
        "availability": {"generator": "trace", "trace": str(tmp_path / "t" / "pv.csv")}}


def test_a_resumed_record_without_its_job_table_runs_again():
    """A journal from before job tables: ``per_job`` sweeps re-run its episodes, so that
    ``jobs.csv`` has every episode."""
    from mrsched_gym.evaluate import reusable_records, run_task, sweep_tasks
    tasks = sweep_tasks(["edf"], ["mrsched/Hadoop-v0"], [0], {"time_limit_s": 600.0})
    rec = run_task(tasks[0], per_job=True)
    old = {k: v for k, v in rec.items() if k != "_jobs"}
    assert len(reusable_records(tasks, [rec], per_job=True)) == 1
    assert len(reusable_records(tasks, [old])) == 1
    assert reusable_records(tasks, [old], per_job=True) == {}


def test_done_records_of_another_world_or_out_of_range_run_again(monkeypatch):
    """``evaluate(done=...)`` reuses a record only of the sweep's world (its world
    fingerprint) and only if it passes the journal's checks: a record from other overrides, one
    with a metric out of range or without its world fingerprint runs again; a good one does
    not."""
    import mrsched_gym.evaluate as ev
    from mrsched_gym.evaluate import running
    kw = {"time_limit_s": 600.0}
    other = ev.evaluate(["edf"], ["mrsched/Hadoop-v0"], [0], workers=1, progress=False,
                        env_kwargs={**kw, "workload.load": 0.9})[0]
    good = ev.evaluate(["edf"], ["mrsched/Hadoop-v0"], [0], workers=1, progress=False,
                       env_kwargs=kw)[0]
    ran = []
    real = running.run_episode
    monkeypatch.setattr(running, "run_episode",
                        lambda *a, **k: ran.append(a[2]) or real(*a, **k))
    no_world = {k: v for k, v in good.items() if k != "_world_fp"}
    for done, runs in (([good], 0), ([other], 1), ([dict(good, deadline_miss_pct=500.0)], 1),
                       ([no_world], 1)):
        ran.clear()
        out = ev.evaluate(["edf"], ["mrsched/Hadoop-v0"], [0], workers=1, progress=False,
                          env_kwargs=kw, done=done)[0]
        assert len(ran) == runs
        assert out["deadline_penalty_h"] == good["deadline_penalty_h"]
        assert out["deadline_miss_pct"] == good["deadline_miss_pct"]


def test_an_edited_copy_of_a_bundled_scenario_gets_a_folder_of_its_own(tmp_path, capsys):
    """``show-scenario hadoop > my.yaml`` with the load edited keeps ``name: hadoop``: its
    leaderboard must not replace the bundled world's ``results/hadoop``."""
    from mrsched_gym.cli import main
    assert main(["show-scenario", "hadoop"]) == 0
    text = capsys.readouterr().out
    head, workload, tail = text.partition("\nworkload:")
    assert "\n  load: " in tail
    mine = tmp_path / "my.yaml"
    mine.write_text(head + workload + tail.replace("\n  load: ", "\n  load: 0.5 #", 1))
    for env in ("mrsched/Hadoop-v0", str(mine)):
        assert main(["compare", "--env", env, "--policies", "edf", "--seeds", "1",
                     "--workers", "1", "--quiet", "--no-plots", "--out", str(tmp_path)]) == 0
    folders = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert folders[0] == "hadoop" and len(folders) == 2
    assert folders[1].startswith("hadoop-") and len(folders[1]) == len("hadoop-") + 8
    ran = json.loads((tmp_path / folders[1] / "run.json").read_text())
    assert ran["scenario"] == str(mine)
    assert json.loads((tmp_path / "hadoop" / "run.json").read_text())["scenario"] == \
        "mrsched/Hadoop-v0"


def test_paired_difference_against_the_best_baseline():
    """Hand-made records: the agent's per-seed differences to the best baseline (edf) are -1,
    -2, 0; a policy that is no baseline (an outside policy's label) is paired like an agent."""
    from mrsched_gym.evaluate.leaderboard import paired_vs_best
    vals = {"fifo": [5, 5, 5], "edf": [2, 3, 1], "agent:x": [1, 1, 1]}
    recs = [{"policy": p, "scenario": "s", "seed": i, "m": float(v)}
            for p, vs in vals.items() for i, v in enumerate(vs)]
    (line,) = paired_vs_best(recs, "m")
    assert line.startswith("agent:x - edf (paired over the same 3 seeds): -1.00 ± 2.48")
    assert line.endswith("lower on 2/3 seeds")
    assert paired_vs_best([r for r in recs if r["policy"] != "agent:x"], "m") == []
    mine = [dict(r, policy="MyPolicy") for r in recs if r["policy"] == "agent:x"]
    (line,) = paired_vs_best([r for r in recs if r["policy"] != "agent:x"] + mine, "m")
    assert line.startswith("MyPolicy - edf (paired over the same 3 seeds): -1.00 ± 2.48")


def test_a_reference_rule_is_paired_with_the_best_baseline_but_never_is_it():
    """``srpt`` (a reference rule) beats every baseline: the pairs are still against the best
    of the spec's baselines (edf), and the agent is also paired with the reference; an RLlib
    agent is an agent."""
    from mrsched_gym.evaluate.leaderboard import paired_vs_best
    vals = {"fifo": [5, 5, 5], "edf": [2, 3, 1], "srpt": [0, 0, 0], "agent:x": [1, 1, 1],
            "rllib:y": [0, 0, 2]}
    recs = [{"policy": p, "scenario": "s", "seed": i, "m": float(v)}
            for p, vs in vals.items() for i, v in enumerate(vs)]
    pairs = [line.split(" (paired")[0] for line in paired_vs_best(recs, "m")]
    assert pairs == ["srpt - edf", "rllib:y - edf", "agent:x - edf", "rllib:y - srpt",
                     "agent:x - srpt"]


# ------------------------------------------------------------------ a harness that loses nothing
def failing_fifo(monkeypatch, seed_to_fail=1, action=None):
    """Make FIFO raise (or return ``action``) in the episode of ``seed_to_fail`` (serial runs)."""
    from mrsched_gym.baselines.simple import FIFOScheduler
    reset, decide = FIFOScheduler.reset, FIFOScheduler.decide

    def reset_(self, sim, seed=None):
        self.doomed = seed == seed_to_fail
        return reset(self, sim, seed)

    def decide_(self, sim):
        if self.doomed and sim.now > 0:
            if action is not None:
                return action
            raise RuntimeError("policy bug")
        return decide(self, sim)
    monkeypatch.setattr(FIFOScheduler, "reset", reset_)
    monkeypatch.setattr(FIFOScheduler, "decide", decide_)


@pytest.mark.parametrize("action", [None, 2.7], ids=["raises", "non-action"])
def test_a_failing_episode_is_recorded_and_the_others_finish(monkeypatch, action):
    from mrsched_gym.results import EpisodeFailures
    failing_fifo(monkeypatch, action=action)
    with pytest.raises(EpisodeFailures) as e:
        evaluate(["fifo", "edf"], ["mrsched/Hadoop-v0"], [0, 1, 2], workers=1, progress=False)
    (f,) = e.value.failures
    assert (f["policy"], f["scenario"], f["seed"]) == ("fifo", "mrsched/Hadoop-v0", 1)
    assert ("policy bug" if action is None else "2.7") in f["error"]
    assert "Traceback" in f["traceback"]
    assert [(r["policy"], r["seed"]) for r in e.value.records] == [
        ("fifo", 0), ("fifo", 2), ("edf", 0), ("edf", 1), ("edf", 2)]
    assert "fifo on mrsched/Hadoop-v0 seed 1" in str(e.value)


def test_compare_writes_what_finished_names_the_failure_and_resumes(monkeypatch, tmp_path,
                                                                    capsys):
    import mrsched_gym.evaluate as ev
    from mrsched_gym.evaluate import running
    failing_fifo(monkeypatch)
    args = ["compare", "--policies", "fifo", "edf", "--seeds", "3", "--workers", "1",
            "--out", str(tmp_path), "--quiet", "--no-plots"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "error: episode failed: fifo on mrsched/Hadoop-v0 seed 1" in err
    d = tmp_path / "hadoop"
    assert len(json.loads((d / "records.json").read_text())) == 5
    assert json.loads((d / "failures.json").read_text())[0]["seed"] == 1
    journal = tmp_path / ".hadoop.journal.jsonl"
    assert journal.is_file()                       # kept: the failed episode can be re-run
    # --resume runs only the failed episode
    monkeypatch.undo()
    runs = []
    real = ev.run_episode
    monkeypatch.setattr(running, "run_episode", lambda *a, **k: runs.append(a[2]) or real(*a, **k))
    assert main(args + ["--resume"]) == 0
    assert runs == [1]
    assert len(json.loads((d / "records.json").read_text())) == 6
    assert not (d / "failures.json").exists() and not journal.exists()


def test_two_runs_cannot_write_into_one_folder(tmp_path, capsys):
    from mrsched_gym.results import RunFolder
    with RunFolder(tmp_path, "hadoop", {"scenario": "mrsched/Hadoop-v0"}):
        rc = main(["compare", "--policies", "edf", "--seeds", "1", "--out", str(tmp_path),
                   "--quiet", "--no-plots"])
    assert rc == 2
    assert "another run is writing" in capsys.readouterr().err


def test_data_and_plots_of_one_run_are_replaced_together(monkeypatch, tmp_path):
    """A second run replaces the folder as a whole; one interrupted while plotting leaves the
    previous run's folder untouched and no staging folder behind."""
    import mrsched_gym.evaluate.leaderboard as lb
    base = ["compare", "--seeds", "1", "--workers", "1", "--out", str(tmp_path), "--quiet"]
    assert main(base + ["--policies", "fifo"]) == 0
    d = tmp_path / "hadoop"
    first = (d / "gantt.png").read_bytes()
    assert main(base + ["--policies", "edf", "--no-plots"]) == 0
    assert {r["policy"] for r in json.loads((d / "records.json").read_text())} == {"edf"}
    assert not (d / "gantt.png").exists()            # no plot of the earlier run left behind
    assert json.loads((d / "run.json").read_text())["policies"] == ["edf"]

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(lb, "plot_gantt", interrupted)
    assert main(base + ["--policies", "fifo"]) == 130     # Ctrl-C: one line, exit 130
    assert {r["policy"] for r in json.loads((d / "records.json").read_text())} == {"edf"}
    assert not [p for p in tmp_path.iterdir() if ".staging." in p.name]
    assert first                                      # the first run had its plots


def test_result_files_are_world_readable(tmp_path):
    import os
    import stat
    old = os.umask(0o022)
    try:
        assert main(["compare", "--policies", "edf", "--seeds", "1", "--out", str(tmp_path),
                     "--quiet", "--no-plots"]) == 0
    finally:
        os.umask(old)
    for p in (tmp_path / "hadoop").iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p
    assert stat.S_IMODE((tmp_path / "hadoop").stat().st_mode) == 0o755


@pytest.mark.parametrize("argv, message", [
    (["--metric", "nosuch"], "unknown metric"),
    (["--metric", "deadline_penalty"], "did you mean 'deadline_penalty_h'?"),
    (["--policies", "lottery"], "unknown baseline"),
    (["--env", "no_such_scenario"], "no_such_scenario"),
    (["--policies", "rllib:no/such/folder"], "RLlib checkpoint folder 'no/such/folder' not found"),
], ids=["metric", "metric-typo", "policy", "scenario", "rllib"])
def test_compare_refuses_bad_arguments_before_any_episode(monkeypatch, tmp_path, capsys, argv,
                                                          message):
    from mrsched_gym.evaluate import running
    monkeypatch.setattr(running, "run_episode", lambda *a, **k: pytest.fail("an episode ran"))
    rc = main(["compare", "--seeds", "1", "--out", str(tmp_path), "--quiet"] + argv)
    assert rc == 2 and message in capsys.readouterr().err


def test_agents_with_the_same_file_name_get_distinct_labels(tmp_path):
    import shutil

    from mrsched_gym.agents.pretrained import pretrained_path
    from mrsched_gym.evaluate import sweep_tasks
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        shutil.copy(pretrained_path("hadoop-v0"), tmp_path / run / "best_model.zip")
    tasks = sweep_tasks([f"agent:{tmp_path}/a/best_model.zip",
                         f"agent:{tmp_path}/b/best_model.zip"],
                        ["mrsched/Hadoop-v0"], [0])
    labels = [t[0].label for t in tasks]
    assert len(set(labels)) == 2 and labels[0].endswith("a/best_model")
    with pytest.raises(InputError, match="given more than once"):
        sweep_tasks(["edf", "edf"], ["mrsched/Hadoop-v0"], [0])


# ------------------------------------------------------------------ one world per leaderboard
def test_orchestrated_world_is_a_scenario_where_every_policy_runs(tmp_path):
    """The orchestrator is part of the world: registered ids turn it on, no policy can, the
    shipped agent of the base world runs there too, and its results get their own folder."""
    import gymnasium as gym

    from mrsched_gym.agents.pretrained import agents_for
    from mrsched_gym.baselines import BASELINES, make_baseline
    from mrsched_gym.evaluate import scenario_of
    for env_id in ("mrsched/HadoopOrchestrated-v0", "mrsched/DedicatedOrchestrated-v0",
                   "mrsched/HadoopTraceOrchestrated-v0"):
        assert scenario_of(env_id).cluster.orchestrator == "regression"
        assert gym.make(env_id).unwrapped.scenario.cluster.orchestrator == "regression"
    assert scenario_of("mrsched/Hadoop-v0").cluster.orchestrator == "none"
    assert not any("orch" in n for n in BASELINES)
    assert not any(hasattr(make_baseline(n), "env_overrides") for n in BASELINES)
    assert agents_for("mrsched/HadoopOrchestrated-v0") == agents_for("mrsched/Hadoop-v0")
    assert main(["compare", "--env", "mrsched/Hadoop-v0", "mrsched/HadoopOrchestrated-v0",
                 "--policies", "edf", "--seeds", "1", "--out", str(tmp_path), "--quiet",
                 "--no-plots"]) == 0
    plain = json.loads((tmp_path / "hadoop" / "records.json").read_text())
    orch = json.loads((tmp_path / "hadoop_orch-regression" / "records.json").read_text())
    assert plain[0]["scenario"] == "mrsched/Hadoop-v0"
    assert orch[0]["scenario"] == "mrsched/HadoopOrchestrated-v0"
    assert plain[0]["mean_jct_s"] != orch[0]["mean_jct_s"]


# ------------------------------------------------------------------ resume identity, directions
def test_resume_refuses_a_changed_world_and_keeps_undefined_metrics(monkeypatch, tmp_path,
                                                                   capsys):
    """A journal is reused only for the same resolved scenario; resumed records keep every
    summary column (undefined metrics come back as NaN, not as missing)."""
    scen = tmp_path / "small.yaml"
    scen.write_text("name: small\nworkload: {duration_s: 900}\n")
    failing_fifo(monkeypatch)
    args = ["compare", "--env", str(scen), "--policies", "fifo", "edf", "--seeds", "2",
            "--workers", "1", "--quiet", "--no-plots", "--out", str(tmp_path / "out")]
    assert main(args) == 1
    monkeypatch.undo()
    assert main(args + ["--resume"]) == 0
    rows = json.loads((tmp_path / "out" / "small" / "summary.json").read_text())
    assert len({frozenset(r) for r in rows}) == 1          # the same columns for every policy
    failing_fifo(monkeypatch)
    assert main(args) == 1                                  # leave a journal again
    monkeypatch.undo()
    scen.write_text("name: small\nworkload: {duration_s: 900, load: 0.2}\n")
    assert main(args + ["--resume"]) == 2
    assert "belongs to a different run" in capsys.readouterr().err


def test_every_episode_failing_still_writes_the_failures(monkeypatch, tmp_path):
    failing_fifo(monkeypatch, seed_to_fail=0)
    assert main(["compare", "--policies", "fifo", "--seeds", "1", "--workers", "1", "--quiet",
                 "--no-plots", "--out", str(tmp_path)]) == 1
    (f,) = json.loads((tmp_path / "hadoop" / "failures.json").read_text())
    assert f["policy"] == "fifo" and "policy bug" in f["error"]


def test_higher_is_better_metrics_rank_descending():
    from mrsched_gym.evaluate.leaderboard import paired_vs_best, ranked, table
    recs = [{"policy": p, "scenario": "s", "seed": i, "utilisation": v}
            for p, vs in {"fifo": [0.5, 0.6], "edf": [0.8, 0.9], "agent:x": [0.9, 0.95]}.items()
            for i, v in enumerate(vs)]
    assert [r["policy"] for r in ranked(recs, "utilisation")] == ["agent:x", "edf", "fifo"]
    assert "higher utilisation is better" in table(recs, "utilisation")
    assert "agent:x higher on 2/2 seeds" in paired_vs_best(recs, "utilisation")[0]
