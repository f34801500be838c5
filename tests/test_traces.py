"""Bundled real traces load, drive episodes, and bad traces fail with file and line."""

import gzip

import numpy as np
import pytest

from mrsched_gym.baselines import make_baseline
from mrsched_gym.config import ConfigError, load_scenario, with_overrides
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.evaluate import run_episode
from mrsched_gym.models.traces import (
    BUNDLED_TRACES,
    TraceError,
    read_job_trace,
    read_series,
    resolve_trace,
)
from mrsched_gym.workloads.trace import aloja_durations, aloja_speed_factors

SERIES = ["nasa-http-1995", "google-2019-cpu", "pvwatts-golden", "rds-table1-capacity"]


@pytest.mark.parametrize("name", SERIES)
def test_bundled_series_load(name):
    t, v = read_series(name)
    assert len(t) >= 5 and np.all(np.diff(t) > 0) and np.all(np.isfinite(v))


def test_bundled_traces_match_their_sources():
    """Facts from the data READMEs survive the compaction."""
    fb0 = read_job_trace("swim-fb2009-day0")
    assert len(fb0) == 5894 and abs(np.mean(fb0[:, 2] == 0) - 0.755) < 0.005   # map-only share
    assert len(read_job_trace("swim-fb2009-day1")) == 6638
    _, cpu = read_series("google-2019-cpu")
    assert len(cpu) == 8064 and abs(cpu.mean() - 0.473) < 0.001
    _, pv = read_series("pvwatts-golden")
    assert len(pv) == 8760 and abs(pv.max() - 1.0) < 0.001 and abs(np.mean(pv == 0) - 0.515) < 0.01
    maps, reds = aloja_durations()
    assert abs(np.median(maps) - 37) <= 1 and abs(np.median(reds) - 411) <= 5
    assert aloja_speed_factors()["pagerank:IB+SSD"] == pytest.approx(2146 / 1883)
    for name in BUNDLED_TRACES:
        assert resolve_trace(name).is_file()


def test_trace_scenario_uses_the_aloja_speed_factor():
    sc = load_scenario("hadoop_trace")
    fast = [g.cpu_speed for g in sc.cluster.nodes if g.kind == "shared"]
    assert fast == [round(aloja_speed_factors()["pagerank:IB+SSD"], 2)]


@pytest.mark.parametrize("env_id", ["mrsched/HadoopTrace-v0", "mrsched/GreenTrace-v0"])
def test_trace_envs_run_an_episode(env_id):
    res = run_episode(env_id, make_baseline("edf"), 0, {"workload.duration_s": 900.0})
    m = res["metrics"]
    assert m["jobs_finished"] > 5 and m["invalid_actions"] == 0


def test_trace_replay_maps_bytes_to_tasks():
    """Map-only jobs stay map-only; tasks follow the block size; the window picks the jobs."""
    sc = with_overrides(load_scenario("hadoop_trace"),
                        {"workload.trace_random_window": False, "workload.duration_s": 600.0,
                         "workload.task_model": "profile", "workload.bytes_scale": 1.0})
    env = MRSchedEnv(sc)
    env.reset(seed=0)
    rows = read_job_trace("swim-fb2009-day0")
    win = rows[rows[:, 0] < 600.0]
    jobs = env.sim.jobs
    assert len(jobs) == len(win)
    for j, r in zip(jobs, win, strict=False):
        assert j.arrival_s == r[0]
        assert (j.n_reduces == 0) == (r[2] == 0)
        assert j.n_maps == min(400, max(1, int(np.ceil(r[1] / 2**20 / 128.0))))


def test_random_windows_differ_by_seed_and_repeat_for_a_seed():
    sc = with_overrides(load_scenario("hadoop_trace"), {"workload.duration_s": 600.0})
    env = MRSchedEnv(sc)
    firsts = []
    for seed in (0, 1, 0):
        env.reset(seed=seed)
        firsts.append([j.n_maps for j in env.sim.jobs][:20])
    assert firsts[0] == firsts[2] and firsts[0] != firsts[1]


def _gz(path, text):
    with gzip.open(path, "wt") as fh:
        fh.write(text)


HEADER = "submit_s,map_input_bytes,shuffle_bytes,output_bytes\n"
BAD_JOB_TRACES = [
    (HEADER + "0,1,2,3\n5,1,x,3\n", r"jobs.csv:3: not a number"),
    (HEADER + "10,1,2,3\n5,1,2,3\n", r"jobs.csv:3: submit time 5.0 is before 10.0"),
    ("submit_s,map_input_bytes\n0,1\n", r"jobs.csv:1: header must be"),
    ("job0\t1\t1\t100\t0\t5\njob1\t2\t1\t100\t-4\t5\n", r"jobs.csv:2: negative value"),
    ("job0\t1\t1\t100\n", r"jobs.csv:1: expected 6 tab-separated"),
]


@pytest.mark.parametrize("text,message", BAD_JOB_TRACES)
def test_malformed_job_traces_name_file_and_line(tmp_path, text, message):
    p = tmp_path / "jobs.csv"
    p.write_text(text)
    with pytest.raises(TraceError, match=message):
        read_job_trace(p)


def test_malformed_series_name_file_and_line(tmp_path):
    g = tmp_path / "load.csv.gz"
    _gz(g, "time_s,u\n0,0.5\n60,0.4\n60,0.3\n")
    with pytest.raises(TraceError, match=r"load.csv.gz:4: time 60.0 is not after 60.0"):
        read_series(g)
    with pytest.raises(TraceError, match="trace file not found"):
        read_series(tmp_path / "missing.csv")


def test_users_bring_their_own_traces(tmp_path):
    """A SWIM TSV and a load series by path drive an episode; a bad one fails at construction."""
    jobs = tmp_path / "mine.tsv"
    jobs.write_text("".join(f"job{i}\t{i * 30}\t30\t{(i % 4 + 1) * 200_000_000}\t"
                            f"{(i % 2) * 50_000_000}\t1000\n" for i in range(20)))
    load = tmp_path / "web.csv"
    load.write_text("time_s,rps\n0,10\n600,40\n1200,20\n")
    sc = with_overrides(load_scenario("hadoop_trace"), {
        "workload.trace": str(jobs), "workload.trace_random_window": False,
        "workload.duration_s": 900.0, "interference.trace": str(load),
        "interference.trace_offset_s": 0.0})
    res = run_episode(sc, make_baseline("fifo"), 0)
    assert res["metrics"]["jobs_finished"] == 20
    load.write_text("time_s,rps\n0,10\n600,oops\n")
    with pytest.raises(TraceError, match=r"web.csv:3"):
        MRSchedEnv(sc)
    load.write_text("time_s,rps\n0,10\n")
    with pytest.raises(ConfigError, match="trace_offset_s: no job"):
        MRSchedEnv(with_overrides(sc, {"workload.trace_offset_s": 1e6}))


def test_a_job_trace_is_read_again_when_it_changes_or_another_file_has_its_name(tmp_path,
                                                                               monkeypatch):
    """Job traces are cached per file version (resolved path, size, modification time): an
    edited file, or the same relative name in another working directory, plays its own jobs
    in a new env and a broken edit fails it, in one process; an env made before keeps the
    trace it read when it was made."""
    def trace(n):
        return HEADER + "".join(f"{i * 30},200000000,0,1000\n" for i in range(n))

    for folder, n in (("a", 20), ("b", 3)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "jobs.csv").write_text(trace(n))
    monkeypatch.chdir(tmp_path / "a")
    sc = with_overrides(load_scenario("hadoop_trace"), {
        "workload.trace": "jobs.csv", "workload.trace_random_window": False,
        "workload.duration_s": 900.0})

    def jobs_played() -> int:
        env = MRSchedEnv(sc)
        env.reset(seed=0)
        return len(env.sim.jobs)

    assert jobs_played() == 20
    monkeypatch.chdir(tmp_path / "b")
    assert jobs_played() == 3
    kept = MRSchedEnv(sc)
    (tmp_path / "b" / "jobs.csv").write_text(trace(7))
    assert jobs_played() == 7
    (tmp_path / "b" / "jobs.csv").write_text("garbage\n")
    with pytest.raises(TraceError, match=r"jobs.csv:1: header must be"):
        MRSchedEnv(sc)
    monkeypatch.chdir(tmp_path / "a")
    for seed in (0, 1):                       # made before the edits, in b: b's first version
        kept.reset(seed=seed)
        assert len(kept.sim.jobs) == 3


@pytest.mark.parametrize("rows", [3, 2000])              # one line under and over 4 KB
@pytest.mark.parametrize("kind", ["jobs", "series"])
def test_old_mac_line_ends_are_named_in_every_trace_at_any_length(tmp_path, kind, rows):
    if kind == "jobs":
        head, reader = HEADER.strip(), read_job_trace
        body = [f"{10 * i},100000000,0,1000" for i in range(rows)]
    else:
        head, reader = "time_s,value", read_series
        body = [f"{60 * i},0.5" for i in range(rows)]
    p = tmp_path / "old.csv"
    p.write_bytes("\r".join([head, *body]).encode() + b"\r")
    with pytest.raises(TraceError, match=r"old.csv:1: a carriage return inside the line: .*old "
                                         r"Mac text"):
        reader(p)


@pytest.mark.parametrize("number", ["1_000", "\uff16\uff10", "\u0661\u0662"])   # 60 full-width, 12
@pytest.mark.parametrize("kind", ["jobs", "series"])
def test_python_only_number_syntax_is_not_a_number_in_a_trace(tmp_path, kind, number):
    p = tmp_path / "t.csv"
    p.write_text(HEADER + f"0,{number},0,5\n" if kind == "jobs"
                 else f"time_s,value\n0,0.5\n{number},1\n", encoding="utf-8")
    with pytest.raises(TraceError, match=r"t.csv:[23]: not a number"):
        read_job_trace(p) if kind == "jobs" else read_series(p)


def test_a_web_load_trace_of_zeros_is_refused_not_played_as_no_load(tmp_path):
    """A load trace is scaled to ``interference.mean``: one of zeros cannot be, and was
    silently no load; a trace with one busy row still plays."""
    p = tmp_path / "web.csv"
    p.write_text("time_s,rps\n0,0\n600,0\n")
    sc = with_overrides(load_scenario("shared"), {"interference.load": "trace",
                                                  "interference.trace": str(p)})
    with pytest.raises(TraceError, match=r"interference.trace: .*web.csv: every value is 0"):
        MRSchedEnv(sc)
    p.write_text("time_s,rps\n0,0\n600,5\n")
    env = MRSchedEnv(sc)
    env.reset(seed=0)
    assert env.sim.load_u.max() > 0


@pytest.mark.parametrize("rows, overrides", [
    ("0,5\n600,0\n", {"interference.trace_offset_s": 600.0}),     # zeros from the offset on
    ("0,0\n10,5\n20,0\n", {"interference.step_s": 60.0}),          # the busy row between steps
])
def test_a_web_load_trace_replayed_as_zeros_is_refused(tmp_path, rows, overrides):
    """The file holds load, but the part the episode replays (from ``trace_offset_s``, every
    ``step_s``) is all zeros: refused at construction, not played as no load."""
    p = tmp_path / "web.csv"
    p.write_text("time_s,rps\n" + rows)
    sc = with_overrides(load_scenario("shared"), {"interference.load": "trace",
                                                  "interference.trace": str(p), **overrides})
    with pytest.raises(TraceError, match=r"interference.trace: .*web.csv: every value the "
                                         r"episode replays .* is 0"):
        MRSchedEnv(sc)


def test_a_missing_relative_trace_names_the_directory_it_was_looked_for_in(tmp_path,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TraceError, match=rf"traces/web.csv: trace file not found, relative to "
                                         rf"the working directory {tmp_path}"):
        read_series("traces/web.csv")
