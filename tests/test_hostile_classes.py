"""Issue 62, item 4: the classes of hostile input an outside battery found, each closed as a
class (one reading of numbers, special files, the command line's bounds, output streams).
The training config's classes are in test_fault_train_config.py and test_train_run.py; every
env pickling is test_env_api.py's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mrsched_gym.cli.parser import main
from mrsched_gym.config import ConfigError, load_scenario, parse_yaml, with_overrides
from mrsched_gym.errors import InputError
from mrsched_gym.evaluate import check_policy, scenario_of

ROOT = Path(__file__).resolve().parents[1]
HADOOP = (ROOT / "configs" / "scenarios" / "hadoop.yaml").read_text(encoding="utf-8")


# ------------------------------------------------------------------ one reading of numbers
@pytest.mark.parametrize("text, value", [
    ("7e-1", 0.7), ("70E-2", 0.7), ("+7e-1", 0.7), (".7", 0.7), ("7.", 7.0), ("017", 17),
    ("0x11", 17), ("0o21", 17), ("-3", -3), ("1e3", 1000.0)])
def test_every_config_file_reads_numbers_as_yaml_1_2(text, value):
    """Scenarios, --set values and training configs share one reader: YAML 1.2's numbers
    (PyYAML's YAML 1.1 reads 7e-1 as text and 017 as fifteen)."""
    got = parse_yaml(f"x: {text}\n", "test.yaml")["x"]
    assert got == value and type(got) is type(value)


def test_a_scenario_with_an_exponent_is_the_same_world(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(HADOOP.replace("  load: 0.7\n", "  load: 7e-1\n"), encoding="utf-8")
    assert "load: 7e-1" in path.read_text(encoding="utf-8")
    assert load_scenario(path).workload.load == 0.7
    assert load_scenario(path) == scenario_of("mrsched/Hadoop-v0")
    set_value = parse_yaml("7e-1", "--set")
    assert with_overrides(scenario_of("mrsched/Hadoop-v0"), {"workload.load": set_value}) \
        == scenario_of("mrsched/Hadoop-v0")


@pytest.mark.parametrize("text", ["3_600", "1:00:00"])
def test_yaml_1_1_only_numbers_are_refused_by_scenario_and_training_config_alike(tmp_path, text):
    """A YAML 1.1 number that YAML 1.2 reads as text: refused, naming the field, by both."""
    path = tmp_path / "s.yaml"
    path.write_text(HADOOP.replace("  duration_s: 3600\n", f"  duration_s: {text}\n"),
                    encoding="utf-8")
    with pytest.raises(ConfigError, match="duration_s"):
        load_scenario(path)
    pytest.importorskip("torch")
    from mrsched_gym.agents.training.train import load_config
    cfg = tmp_path / "t.yaml"
    cfg.write_text(f"total_timesteps: {text}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="total_timesteps"):
        load_config(cfg)


# ------------------------------------------------------------------------- special files
def special_file(tmp_path: Path, kind: str) -> tuple[str, str]:
    """A path of ``kind`` and the words its error must use."""
    if kind == "fifo":
        path = tmp_path / "agent.zip"
        os.mkfifo(path)
        return str(path), "named pipe"
    if kind == "device":
        return "/dev/null", "a device"
    a, b = tmp_path / "a.zip", tmp_path / "b.zip"
    os.symlink(b, a)
    os.symlink(a, b)
    return str(a), "symbolic link loop"


@pytest.mark.parametrize("kind", ["fifo", "device", "loop"])
def test_an_agent_path_that_is_not_a_file_is_named_as_what_it_is(tmp_path, kind):
    path, words = special_file(tmp_path, kind)
    for spec in (f"agent:{path}", path if path.endswith(".zip") else f"agent:{path}"):
        with pytest.raises(InputError, match=words):
            check_policy(spec)


@pytest.mark.parametrize("kind", ["fifo", "device", "loop"])
def test_a_checkpoint_to_start_or_resume_from_that_is_not_a_file_is_named(tmp_path, kind):
    pytest.importorskip("sb3_contrib")
    from mrsched_gym.agents.training.train import load_config
    from mrsched_gym.agents.training.train_files import load_resume
    path, words = special_file(tmp_path, kind)
    with pytest.raises(ConfigError, match=f"init_from.*{words}"):
        load_config("hadoop_set", init_from=path)
    with pytest.raises(InputError, match=f"--resume.*{words}"):
        load_resume(path, None, "exact")


# ------------------------------------------------------------------ the command's bounds
@pytest.mark.parametrize("argv, words", [
    (["compare", "--seeds", "100001"], "--seeds: must be from 1 to 100,000"),
    (["compare", "--workers", "1025"], "--workers: must be from 1 to 1,024"),
    (["compare", "--seed-start", str(2**32)], "--seed-start: must be from 0 to"),
    (["benchmark", "--seeds", "10" * 10], "--seeds: must be from 1"),
    (["benchmark", "--workers", "99999"], "--workers: must be from 1"),
    (["train", "--steps", str(10**10 + 1)], "--steps: must be from 1"),
    (["train", "--seed", str(2**32)], "--seed: must be from 0"),
    (["train", "--seed", "-1"], "--seed: must be from 0"),
    (["demo", "--seed", str(2**64)], "--seed: must be from 0"),
    (["reproduce", "--seeds", "1000000"], "--seeds: must be from 1"),
    (["reproduce", "--workers", "0"], "--workers: must be from 1"),
    (["compare", "--out", "x" * 256], "path too long for the file system"),
    (["benchmark", "--out", "/".join(["y" * 200] * 21)], "path too long for the file system"),
    (["train", "--out", "z" * 300], "path too long for the file system"),
    (["reproduce", "--json", "j" * 300 + ".json"], "path too long for the file system"),
])
def test_every_count_and_path_is_bounded_before_any_work(argv, words, capsys, tmp_path,
                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert words in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_seeds_past_the_last_seed_are_refused_before_any_work(capsys, tmp_path):
    code = main(["compare", "--seed-start", str(2**32 - 1), "--seeds", "2", "--policies",
                 "fifo", "--out", str(tmp_path / "out")])
    assert code == 2 and "past the last seed" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_run_name_too_long_is_named(capsys, tmp_path):
    pytest.importorskip("sb3_contrib")
    code = main(["train", "--name", "n" * 300, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "name" in err and "at most 100 characters" in err
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------------ output streams
def compare(out: Path, **kw) -> subprocess.CompletedProcess:
    """``mrsched-gym compare`` of one short fifo episode into ``out``, as a user runs it."""
    env = dict(os.environ, **kw.pop("env", {}))
    return subprocess.run(
        [sys.executable, "-m", "mrsched_gym", "compare", "--policies", "fifo", "--seeds", "1",
         "--workers", "1", "--quiet", "--no-plots", "--set", "workload.duration_s=300",
         "--out", str(out)], stderr=subprocess.PIPE, text=True, env=env, timeout=300, **kw)


def records_of(out: Path) -> list:
    [path] = out.glob("**/records.json")
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_closed_stdout_costs_nothing(tmp_path):
    out = tmp_path / "out"
    r = compare(out, stdout=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert [rec["policy"] for rec in records_of(out)] == ["fifo"]


def test_an_ascii_only_stdout_gets_escapes_not_a_traceback(tmp_path):
    out = tmp_path / "résultats ±"
    r = compare(out, stdout=subprocess.PIPE, env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "\\xe9" in r.stdout
    assert [rec["policy"] for rec in records_of(out)] == ["fifo"]


def test_a_full_stdout_is_one_line_and_the_records_are_written(tmp_path):
    out = tmp_path / "out"
    with open("/dev/full", "w") as full:
        r = compare(out, stdout=full)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: standard output could not be "
                                                   "written (No space left on device)"), r.stderr
    assert [rec["policy"] for rec in records_of(out)] == ["fifo"]


# ----------------------------------------------------------------- one verdict per model
def test_an_unmasked_model_plays_illegal_actions_as_skip_by_every_path(tmp_path, capsys):
    """A plain PPO model (it ignores the mask) is judged once: the env plays its illegal
    actions as skip, as in training, and the records count them, whether the model object is
    handed to evaluate() or its checkpoint is named agent:PATH (in Python or on the command
    line)."""
    pytest.importorskip("stable_baselines3")
    import gymnasium as gym
    from stable_baselines3 import PPO

    from mrsched_gym.evaluate import evaluate
    model = PPO("MultiInputPolicy", gym.make("mrsched/Hadoop-v0"), seed=0, n_steps=64,
                batch_size=32, device="cpu")
    path = tmp_path / "plain.zip"
    model.save(path)
    kw = dict(workers=1, progress=False, env_kwargs={"workload.duration_s": 300.0})
    by_object = evaluate([model], ["mrsched/Hadoop-v0"], [0], **kw)
    by_path = evaluate([f"agent:{path}"], ["mrsched/Hadoop-v0"], [0], **kw)
    code = main(["compare", "--policies", f"agent:{path}", "--seeds", "1", "--workers", "1",
                 "--quiet", "--no-plots", "--set", "workload.duration_s=300",
                 "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    by_command = records_of(tmp_path / "out")
    counts = [r[0]["invalid_actions"] for r in (by_object, by_path, by_command)]
    assert counts[0] > 0 and counts == [counts[0]] * 3
    headlines = [r[0]["deadline_penalty_h"] for r in (by_object, by_path, by_command)]
    assert headlines == [headlines[0]] * 3


# ------------------------------------------------------------- special files written to
@pytest.mark.parametrize("kind", ["fifo", "loop"])
@pytest.mark.parametrize("option", [["compare", "--out"], ["benchmark", "--out"],
                                    ["train", "--out"], ["reproduce", "rds-case-study", "--json"],
                                    ["reproduce", "rds-case-study", "--doc"]])
def test_a_path_to_write_that_is_a_special_file_is_named_before_any_work(tmp_path, kind, option,
                                                                         capsys):
    path, words = special_file(tmp_path, kind)
    with pytest.raises(SystemExit) as e:
        main([*option, path])
    assert e.value.code == 2 and words in capsys.readouterr().err
    assert os.path.islink(path) or os.path.exists(path) and not os.path.isfile(path)


def test_a_file_is_never_written_over_a_special_file(tmp_path):
    """The durable write renames a temporary file over its target: over a device or a FIFO that
    would replace the special file itself (as root, /dev/full became a regular file)."""
    import stat

    from mrsched_gym.errors import OutputError
    from mrsched_gym.results.files import durable_write
    for kind in ("fifo", "loop"):
        folder = tmp_path / kind
        folder.mkdir()
        path, words = special_file(folder, kind)
        before = sorted(p.name for p in folder.iterdir())
        with pytest.raises(OutputError, match=words):
            durable_write(path, "records")
        if kind == "fifo":
            assert stat.S_ISFIFO(os.stat(path).st_mode)
        assert sorted(p.name for p in folder.iterdir()) == before      # no temporary left


@pytest.mark.parametrize("what", ["fifo", "loop"])
def test_an_out_folder_that_is_not_a_folder_is_named(tmp_path, what):
    """From Python (no argparse): the run folder's parent is named as what it is."""
    from mrsched_gym.results.files import safe_child
    path, words = special_file(tmp_path, what)
    with pytest.raises(InputError, match=words):
        safe_child(path, "run", "run name")
