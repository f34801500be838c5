"""Every subcommand in its plain form, as a user runs it (issue 31 item 5): through
``python -m mrsched_gym`` (the real entry point, a fresh process) on small inputs made small only
with the flags the CLI offers (one seed, one worker, a short id); help texts without RST markup;
``list`` as a table and as JSON; a pipe closed early ends quietly."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from mrsched_gym.agents.pretrained import rl_available
from mrsched_gym.cli import main

SUBCOMMANDS = ("compare", "benchmark", "train", "demo", "reproduce", "show-scenario", "list")


def run(*args: str, cwd=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m mrsched_gym ARGS`` in a fresh process; its output as text."""
    env = dict(os.environ, PYTHONUNBUFFERED="0")
    return subprocess.run([sys.executable, "-m", "mrsched_gym", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, env=env)


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_the_parser_has_exactly_the_subcommands_tested_here():
    """A new subcommand must be added to this file's plain-form tests."""
    import argparse

    from mrsched_gym.cli import build_parser
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subs.choices) == set(SUBCOMMANDS)


def test_python_dash_m_runs_the_command():
    out = ok(run("--version"))
    assert out.startswith("mrsched-gym ")


def test_demo_plain_form_runs_every_applicable_policy_once():
    """``mrsched-gym demo`` with no flag at all (it used to fail on 'random given more than
    once')."""
    out = ok(run("demo"))
    rows = [line.split()[0] for line in out.splitlines()[2:]]
    assert rows[0] == "random" and "edf" in rows and len(rows) == len(set(rows))


@pytest.mark.parametrize("env", ["mrsched/Preemption-v0", "mrsched/Admission-v1"])
def test_demo_without_policies_on_ids_with_extra_baselines(env):
    assert main(["demo", "--env", env]) == 0


def test_compare_plain_form(tmp_path):
    out = ok(run("compare", "--seeds", "1", "--workers", "1", "--quiet", "--out",
                 str(tmp_path)))
    assert "| 1 |" in out and "agent:hadoop-v0" in out
    for f in ("records.csv", "summary.csv", "metrics.png", "jct_cdf.png", "gantt.png"):
        assert (tmp_path / "hadoop" / f).stat().st_size > 0, f


def test_benchmark_plain_form(tmp_path):
    out = ok(run("benchmark", "--ids", "mrsched/Dedicated-v0", "--seeds", "1", "--workers", "1",
                 "--quiet", "--out", str(tmp_path)))
    assert "IQM (95% CI)" in out
    assert (tmp_path / "benchmark" / "iqm.png").stat().st_size > 0


def test_train_plain_form(tmp_path):
    """``train --list`` always works; ``train`` itself trains with the rl extra and otherwise
    says in one line how to install it (exit 2, no traceback)."""
    assert "hadoop_set" in ok(run("train", "--list")).split()
    if rl_available():
        pytest.skip("the rl extra is installed: test_train_plain_form_trains (slow) trains")
    proc = run("train", "--steps", "64", "--out", str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and "rl" in proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(not rl_available(), reason="needs the rl extra")
def test_train_plain_form_trains(tmp_path):
    out = ok(run("train", "--steps", "256", "--n-envs", "1", "--quiet", "--out", str(tmp_path),
                 timeout=600))
    assert "best validation mean" in out
    assert (tmp_path / "hadoop_set" / "learning_curve.png").stat().st_size > 0


def test_reproduce_plain_form(tmp_path):
    out = ok(run("reproduce"))                         # no name: the list
    assert "rds-case-study" in out
    out = ok(run("reproduce", "rds-case-study", "--quick", "--seeds", "1", "--workers", "1",
                 "--quiet", "--out", str(tmp_path)))
    assert "Paper vs ours" in out


def test_show_scenario_plain_form():
    import yaml
    data = yaml.safe_load(ok(run("show-scenario", "hadoop")))
    assert data["name"] == "hadoop"


@pytest.mark.parametrize("command", ["demo", "show-scenario"])
def test_a_bad_trace_is_an_error_naming_its_field_file_and_line(tmp_path, command):
    """A scenario file whose trace is malformed: one error naming the field, file and line,
    exit 2; ``demo`` prints nothing before it (it printed its table's header first),
    ``show-scenario`` the definition (which names the file it expects), then the error (it did
    not check the traces)."""
    (tmp_path / "web.csv").write_text("time_s,rps\n0,10\n600,oops\n")
    (tmp_path / "mine.yaml").write_text(
        "name: mine\ncluster: {nodes: [{count: 2, kind: shared}]}\n"
        "interference: {load: trace, trace: web.csv}\n"
        "workload: {duration_s: 600, load: 0.3}\n")
    args = [command, str(tmp_path / "mine.yaml")] if command == "show-scenario" else [
        command, "--env", str(tmp_path / "mine.yaml"), "--policies", "fifo"]
    proc = run(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    if command == "demo":
        assert proc.stdout == ""
    else:
        assert "trace: web.csv" in proc.stdout or "web.csv" in proc.stdout
    assert "interference.trace" in proc.stderr and "web.csv:3" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_list_prints_a_table_with_headlines_baselines_and_agents():
    out = ok(run("list"))
    assert not out.lstrip().startswith("{")
    header = out.splitlines()[0].split()
    assert header[:3] == ["id", "scenario", "headline"]
    row = next(line for line in out.splitlines() if line.startswith("mrsched/Hadoop-v0 "))
    assert "hadoop" in row and "deadline_penalty_h" in row and "hadoop-v0" in row
    pre = next(line for line in out.splitlines() if line.startswith("mrsched/Preemption-v0 "))
    assert "preempt-kill" in pre
    assert "shipped agents" in out and "general" in out


def test_list_json_keeps_its_shape_and_adds_the_agents():
    data = json.loads(ok(run("list", "--json")))
    assert {"env_ids", "scenarios", "baselines", "agents"} <= set(data)
    assert data["env_ids"]["mrsched/Hadoop-v0"] == "hadoop"
    assert data["flat_ids"]["mrsched/Hadoop-flat-v0"] == "mrsched/Hadoop-v0"
    assert len(data["flat_ids"]) == len(data["env_ids"])
    assert data["earlier_ids"] == {"mrsched/Shared-v0": "shared", "mrsched/Admission-v0":
                                   "admission"}
    table = ok(run("list"))
    assert "mrsched/Admission-flat-v1" in table and "mrsched/Shared-v0" in table
    assert "edf" in data["baselines"] and "hadoop" in data["scenarios"]
    assert data["agents"]["hadoop-v0"]["envs"] == ["mrsched/Hadoop-v0"]


RST = re.compile(r"``|`[^`]+`|:(func|mod|class|meth|data|attr|ref):")


@pytest.mark.parametrize("cmd", [None, *SUBCOMMANDS])
def test_help_has_no_rst_markup(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        main(([cmd] if cmd else []) + ["--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert "usage: mrsched-gym" in text
    assert not RST.search(text), RST.search(text).group(0)


@pytest.mark.parametrize("args", [["show-scenario", "hadoop"], ["list"], ["list", "--json"]])
def test_a_pipe_closed_early_ends_quietly(args):
    """``mrsched-gym show-scenario hadoop | head``: the reader closes the pipe before the command
    writes; no BrokenPipeError traceback on stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "mrsched_gym", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()                       # before the child has imported anything
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    assert proc.returncode in (0, 1)


def test_no_subcommand_prints_the_whole_help(capsys):
    """`mrsched-gym` alone shows every subcommand (exit 2), not only 'arguments are required'."""
    from mrsched_gym.cli import main
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "usage: mrsched-gym" in out and all(c in out for c in ("compare", "benchmark", "train"))
