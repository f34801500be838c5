"""The plain-PPO reference (:mod:`mrsched_gym.agents.training.plain_ppo`) and the benchmark's per-id
agents (``{id}`` in an ``--agents`` entry)."""

import json

import pytest

from mrsched_gym.agents.training.plain_ppo import MANIFEST, train_all
from mrsched_gym.agents.training.plain_ppo import main as plain_ppo_main
from mrsched_gym.cli import main
from mrsched_gym.errors import InputError
from mrsched_gym.evaluate.benchmark import agent_in_world, id_name

pytest.importorskip("sb3_contrib")

ID = "mrsched/Dedicated-v0"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One tiny plain-PPO checkpoint (one rollout of MaskablePPO's default 2,048 steps)."""
    out = tmp_path_factory.mktemp("plain-ppo")
    lines: list[str] = []
    manifest = train_all([ID], 64, 0, out, log=lines.append)
    return out, manifest, lines


def test_id_name_and_a_plain_entry_are_left_alone():
    assert id_name("mrsched/Hadoop-v0") == "Hadoop-v0"
    assert agent_in_world("agent:general", ID) == "agent:general"


def test_a_per_id_entry_names_each_ids_checkpoint_under_one_label(trained):
    out, _, _ = trained
    spec = agent_in_world(f"agent:{out}/{{id}}.zip", ID)
    assert spec.kind == "agent" and spec.target == f"{out}/Dedicated-v0.zip"
    assert spec.label == f"agent:{out}/{{id}}"                # the row's name, every id alike
    with pytest.raises(InputError, match="Hadoop-v0.zip"):    # no checkpoint for that id
        agent_in_world(f"agent:{out}/{{id}}.zip", "mrsched/Hadoop-v0")


def test_the_manifest_records_the_recipe_and_a_second_run_trains_nothing(trained):
    out, manifest, lines = trained
    entry = manifest["ids"][ID]
    assert (entry["steps"], entry["seed"], entry["file"]) == (64, 0, "Dedicated-v0.zip")
    assert "MaskablePPO('MultiInputPolicy'" in manifest["recipe"]
    assert json.loads((out / MANIFEST).read_text()) == manifest
    again: list[str] = []
    train_all([ID], 64, 0, out, log=again.append)
    assert again == [f"{ID}: trained already ({out / 'Dedicated-v0.zip'})"]
    assert any("training 64 steps" in line for line in lines)


def test_other_steps_train_again(tmp_path):
    lines: list[str] = []
    train_all([ID], 64, 0, tmp_path, log=lines.append)
    before = (tmp_path / "Dedicated-v0.zip").read_bytes()
    train_all([ID], 65, 0, tmp_path, log=lines.append)           # another budget: retrained
    assert sum("training" in line for line in lines) == 2
    assert json.loads((tmp_path / MANIFEST).read_text())["ids"][ID]["steps"] == 65
    assert (tmp_path / "Dedicated-v0.zip").is_file() and before


def test_the_benchmark_ranks_a_per_id_agent_as_one_row(trained, tmp_path, capsys):
    out, _, _ = trained
    entry = f"agent:{out}/{{id}}.zip"
    assert main(["benchmark", "--ids", ID, "--seeds", "1", "--workers", "1", "--quiet",
                 "--no-plots", "--agents", entry, "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "benchmark" / "benchmark.json").read_text())
    label = f"agent:{out}/{{id}}"
    assert data["suite"]["agents"][label]["Dedicated-v0"]["file"] == "Dedicated-v0.zip"
    assert label in {row["policy"] for row in data["aggregate"]}


def test_a_missing_checkpoint_of_one_id_fails_before_any_episode(trained, tmp_path, capsys):
    out, _, _ = trained
    assert main(["benchmark", "--ids", ID, "mrsched/Hadoop-v0", "--seeds", "1", "--quiet",
                 "--agents", f"agent:{out}/{{id}}.zip", "--out", str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert "for mrsched/Hadoop-v0" in err and "Hadoop-v0.zip" in err
    assert not (tmp_path / "benchmark").exists()


def test_bad_command_line_values_are_refused(tmp_path, capsys):
    assert plain_ppo_main(["--steps", "0", "--out", str(tmp_path)]) == 2
    assert "--steps" in capsys.readouterr().err
    assert plain_ppo_main(["--ids", "mrsched/Nope-v0", "--out", str(tmp_path)]) == 2
    assert "unknown id" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
