"""Issue 32, plausible inputs (findings 8, 9, 12, 14, 15, 18): relative paths in a scenario file
resolve against its folder; per-field bounds on trace values with file:line; an all-zero
availability trace refused; short escaped excerpts in errors; trace errors of an --env YAML
before the first episode; the size guard bounds nodes x decisions; --metric undefined for
every policy is an error; loading an SB3 zip by path says it is a pickle."""

from __future__ import annotations

import json
import os

import pytest

from mrsched_gym.cli import main
from mrsched_gym.config import ConfigError, load_scenario, with_overrides
from mrsched_gym.evaluate import make_env, running
from mrsched_gym.models.traces import TraceError, read_job_trace, read_series

JOB_HEAD = "submit_s,map_input_bytes,shuffle_bytes,output_bytes\n"


def test_a_relative_trace_path_resolves_against_the_scenario_files_folder(tmp_path,
                                                                         monkeypatch):
    """Finding 8: it resolved against the working directory; a same-named file there was used
    without a word."""
    (tmp_path / "a").mkdir()
    (tmp_path / "cwd").mkdir()
    (tmp_path / "a" / "s.yaml").write_text(
        "name: rel\navailability: {generator: trace, mode: capacity, trace: cap.csv}\n")
    (tmp_path / "cwd" / "cap.csv").write_text("time_s,value\n0,0.2\n")
    monkeypatch.chdir(tmp_path / "cwd")
    sc = load_scenario("../a/s.yaml")
    assert sc.availability.trace == os.path.abspath(tmp_path / "a" / "cap.csv")
    with pytest.raises(TraceError, match=f"availability.trace: {tmp_path / 'a' / 'cap.csv'}: "
                                         "trace file not found"):
        make_env("../a/s.yaml")
    (tmp_path / "a" / "cap.csv").write_text("time_s,value\n0,0.9\n")
    make_env("../a/s.yaml").close()
    # bundled names and absolute paths are kept as written
    (tmp_path / "a" / "b.yaml").write_text(
        "name: b\ninterference: {load: trace, trace: nasa-http-1995}\n"
        f"availability: {{generator: trace, trace: {tmp_path / 'a' / 'cap.csv'}}}\n")
    sc = load_scenario(tmp_path / "a" / "b.yaml")
    assert sc.interference.trace == "nasa-http-1995"
    assert sc.availability.trace == str(tmp_path / "a" / "cap.csv")


@pytest.mark.parametrize("row, says", [
    ("0,1e300,0,0", "map_input_bytes 1e+300 is implausible"),
    ("0,0,2e15,0", "shuffle_bytes 2e+15 is implausible"),
    ("0,0,0,1e16", "output_bytes 1e+16 is implausible"),
    ("1e12,0,0,0", "submit_s 1e+12 is implausible"),
    ("0,-1,0,0", "negative value -1 of map_input_bytes"),
])
def test_job_trace_values_have_per_field_bounds(tmp_path, row, says):
    """Finding 9: 1e300 bytes gave tasks of ~1e290 s."""
    p = tmp_path / "jobs.csv"
    p.write_text(JOB_HEAD + "0,1000,0,0\n" + row + "\n")
    with pytest.raises(TraceError) as e:
        read_job_trace(p)
    assert str(e.value).startswith(f"{p}:3: ") and says in str(e.value)


def test_plausible_job_trace_values_pass(tmp_path):
    p = tmp_path / "jobs.csv"
    p.write_text(JOB_HEAD + "0,8.8e12,1e14,1e9\n86400,0,0,0\n")
    assert read_job_trace(p).shape == (2, 4)


@pytest.mark.parametrize("row, says", [
    ("60,1e300", "value 1e+300 is implausible"),
    ("1e11,0.5", "time_s 1e+11 is implausible"),
])
def test_series_values_have_bounds(tmp_path, row, says):
    p = tmp_path / "s.csv"
    p.write_text("time_s,value\n0,0.5\n" + row + "\n")
    with pytest.raises(TraceError) as e:
        read_series(p)
    assert str(e.value).startswith(f"{p}:3: {says}")


@pytest.mark.parametrize("values, invert", [("0\n3600,0\n", False), ("1\n3600,1.0\n", True)])
def test_an_availability_trace_with_no_capacity_ever_is_refused(tmp_path, values, invert):
    """Finding 9: an all-zero availability trace silently became the min_fraction floor."""
    p = tmp_path / "zero.csv"
    p.write_text("time_s,value\n0," + values)
    with pytest.raises(TraceError, match="no capacity is ever available"):
        make_env("hadoop", {"availability.generator": "trace", "availability.trace": str(p),
                            "availability.trace_invert": invert})


def test_errors_show_a_short_escaped_excerpt(tmp_path):
    """Finding 15: up to 80 characters of any file given as a trace were echoed."""
    p = tmp_path / "secret.csv"
    p.write_text("time_s,value\n\x1b[2J" + "s3cr3t" * 50 + ",1\n")
    with pytest.raises(TraceError) as e:
        read_series(p)
    msg = str(e.value)
    assert "\\x1b[2J" in msg and "\x1b" not in msg
    assert msg.count("s3cr3t") <= 7 and msg.endswith("...")
    p.write_text("not_time," + "h" * 200 + "\n0,1\n")
    with pytest.raises(TraceError) as e:
        read_series(p)
    assert str(e.value).count("h") < 45


def test_trace_errors_of_an_env_yaml_come_before_the_first_episode(tmp_path, capsys,
                                                                  monkeypatch):
    """Finding 15: trace errors in an --env YAML surfaced per episode."""
    (tmp_path / "cap.csv").write_text("time_s,value\n0,1\n60,oops\n")
    (tmp_path / "s.yaml").write_text(
        "name: bad\navailability: {generator: trace, mode: capacity, trace: cap.csv}\n")
    runs = []
    monkeypatch.setattr(running, "run_episode", lambda *a, **k: runs.append(a))
    rc = main(["compare", "--env", str(tmp_path / "s.yaml"), "--policies", "fifo", "--seeds",
               "2", "--workers", "1", "--quiet", "--no-plots", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and runs == []
    assert f"{tmp_path / 'cap.csv'}:3: not a number: '60,oops'" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("nodes, duration, ok", [(10_000, 600.0, False), (10_000, 300.0, True),
                                                 (1000, 3600.0, True)])
def test_the_size_guard_bounds_nodes_times_decisions(nodes, duration, ok):
    """Finding 18: 10,000 nodes with 10 minutes of arrivals did not finish in 180 s."""
    over = {"cluster.nodes": [{"count": nodes, "cpu_cores": 8, "mem_gb": 16, "map_slots": 3,
                               "reduce_slots": 1}], "workload.duration_s": duration}
    if ok:
        with_overrides(load_scenario("hadoop"), over)
        return
    with pytest.raises(ConfigError) as e:
        with_overrides(load_scenario("hadoop"), over)
    msg = str(e.value)
    assert "cluster.nodes: 10,000 nodes x about 159,006 decisions" in msg
    assert "node-decisions, more than the limit" in msg and "minutes per policy" in msg


def test_a_metric_undefined_for_every_policy_is_an_error(tmp_path, capsys):
    """Finding 12: --metric ranked policies 1..N on a metric undefined for all ("-")."""
    rc = main(["compare", "--env", "dedicated", "--policies", "fifo", "edf", "--seeds", "1",
               "--workers", "1", "--quiet", "--no-plots", "--out", str(tmp_path),
               "--metric", "web_response_mean_ms"])
    out, err = capsys.readouterr()
    assert rc == 2
    assert "--metric web_response_mean_ms: undefined for every policy" in err
    assert "| 1 |" not in out                               # nothing ranked
    assert len(json.loads((tmp_path / "dedicated" / "records.json").read_text())) == 2


def test_loading_a_zip_by_path_says_it_is_a_pickle_once(tmp_path, capsys):
    """Finding 14 (harness part): a crafted zip ran code during the pre-run check; nothing
    said to load trusted files only."""
    from mrsched_gym.cli import common
    common.noticed.clear()
    for name in ("a.zip", "b.zip"):
        (tmp_path / name).write_bytes(b"PK\x03\x04 not a checkpoint")
    for _ in range(2):
        main(["compare", "--policies", f"agent:{tmp_path / 'a.zip'}", str(tmp_path / "b.zip"),
              "--seeds", "1", "--quiet", "--no-plots", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert err.count("are Python pickles") == 1
    assert "load trusted files only" in err
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    assert "pickle" in capsys.readouterr().out
