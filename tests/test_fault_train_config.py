"""Issue 46, item 5: training configs are validated like scenario files (generated values out of
each PPO hyper-parameter's range, the rollout holding a minibatch, ``init_from`` naming a real
agent checkpoint, the run name's length), each one line naming the field; ``--resume`` refuses
any setting that changes the run unless ``--allow-changes``, and never rewrites ``config.yaml``
before its checks pass."""

from __future__ import annotations

import math
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrsched_gym.agents.training.train_checks import PPO_RANGES
from mrsched_gym.agents.training.train_config import load_config
from mrsched_gym.config import ConfigError

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def refused(field: str, **overrides) -> str:
    with pytest.raises(ConfigError) as e:
        load_config("hadoop_set", **overrides)
    msg = str(e.value)
    assert "\n" not in msg and f" {field}: " in msg, msg
    return msg


def outside(key: str) -> st.SearchStrategy:
    """Values PPO hyper-parameter ``key`` may not take: out of its range, non-finite, of the
    wrong type, or (for integers) fractional."""
    kind, lo, lo_in, hi, hi_in = PPO_RANGES[key]
    below = st.floats(-1e9, lo, exclude_max=lo_in)
    above = st.floats(hi, 1e12, exclude_min=hi_in)
    bad = [below, above, st.sampled_from([math.nan, math.inf, -math.inf, "fast", True, [1]])]
    if kind == "integer":
        bad.append(st.floats(lo + 0.01, min(hi, 1e6) - 0.01).filter(lambda v: v != int(v)))
    return st.one_of(*bad)


@SETTINGS
@given(data=st.data(), key=st.sampled_from(sorted(PPO_RANGES)))
def test_every_ppo_value_out_of_its_range_is_one_line_naming_it(data, key):
    value = data.draw(outside(key))
    if key == "target_kl" and value is None:
        return
    refused(f"ppo.{key}", **{f"ppo.{key}": value})


@SETTINGS
@given(n_steps=st.integers(2, 4096), n_envs=st.integers(1, 16), extra=st.integers(1, 10_000))
def test_a_minibatch_larger_than_the_rollout_is_refused(n_steps, n_envs, extra):
    rollout = n_steps * n_envs
    msg = refused("ppo.batch_size", **{"ppo.n_steps": n_steps, "n_envs": n_envs,
                                       "ppo.batch_size": rollout + extra})
    assert f"n_envs = {rollout})" in msg
    cfg = load_config("hadoop_set", **{"ppo.n_steps": n_steps, "n_envs": n_envs,
                                       "ppo.batch_size": min(rollout, 64)})
    assert cfg.ppo["batch_size"] <= rollout


def test_numbers_written_as_yaml_text_are_numbers():
    """YAML 1.1 reads ``3e-4`` as text: it is the number, checked like one."""
    cfg = load_config("hadoop_set", **{"ppo.learning_rate": "3e-4"})
    assert cfg.ppo["learning_rate"] == 3e-4
    refused("ppo.learning_rate", **{"ppo.learning_rate": "-3e-4"})


@pytest.mark.parametrize("case, says", [
    ("missing", "not found"), ("folder", "is a directory"), ("text", "not a zip archive"),
    ("other zip", "not an agent's checkpoint"), ("agent", "not found"),
])
def test_init_from_must_be_an_agent_checkpoint(tmp_path, case, says):
    path = {"missing": tmp_path / "nope.zip", "folder": tmp_path, "text": tmp_path / "t.zip",
            "other zip": tmp_path / "o.zip", "agent": "agent:no-such-agent"}[case]
    if case == "text":
        path.write_text("not a zip")
    if case == "other zip":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("notes.txt", "x")
    assert says in refused("init_from", init_from=str(path))


def test_a_shipped_agent_is_a_valid_init_from():
    from mrsched_gym.agents.pretrained import pretrained_agents
    name = next(iter(pretrained_agents()))
    assert load_config("hadoop_set", init_from=f"agent:{name}").init_from == f"agent:{name}"


@SETTINGS
@given(n=st.integers(101, 5000))
def test_a_long_run_name_is_one_line_naming_the_field(n):
    msg = refused("name", name="r" * n)
    assert f"({n} characters)" in msg and len(msg) < 400


@pytest.mark.parametrize("field, overrides", [
    ("seed", {"seed": -1}), ("seed", {"seed": 2**32}), ("seed", {"seed": 10**30}),
    ("seed", {"seed": 1.5}),
    ("net_arch", {"policy": "flat", "net_arch": [0]}), ("net_arch", {"net_arch": [64, -3]}),
    ("net_arch", {"net_arch": [10**6]}), ("net_arch", {"net_arch": [64] * 17}),
    ("net_arch", {"net_arch": 64}), ("value_arch", {"value_arch": [0]}),
    ("value_arch", {"value_arch": [64, 5000]}), ("hidden", {"hidden": 10**6}),
    ("hidden", {"hidden": 0}), ("total_timesteps", {"total_timesteps": 10**11}),
    ("ppo.n_steps", {"ppo.n_steps": 1}), ("ppo.batch_size", {"ppo.batch_size": 1}),
    ("ppo.n_steps", {"ppo.n_steps": 2**20, "n_envs": 2}),
    ("eval.seed_start", {"eval.seed_start": 95}), ("eval.seed_start", {"eval.seed_start": 119}),
    ("eval.seed_start", {"eval.seed_start": 100, "eval.n_seeds": 1}),
    ("eval.seed_start", {"eval.seed_start": 0, "eval.n_seeds": 101}),
])
def test_values_that_would_reach_torch_or_numpy_unchecked_are_one_line_naming_them(field,
                                                                                   overrides):
    """Issue 62: negative or huge seeds, layer widths of 0, negative or absurd, a one-sample
    rollout or minibatch and validation seeds among the benchmark's test seeds (100-119) are
    refused by the config, before training starts."""
    refused(field, **overrides)


@pytest.mark.parametrize("overrides", [
    {"seed": 0}, {"seed": 2**32 - 1}, {"eval.seed_start": 80, "eval.n_seeds": 20},
    {"eval.seed_start": 120}, {"value_arch": []}, {"net_arch": [4096] * 16},
    {"ppo.n_steps": 2, "ppo.batch_size": 2}])
def test_the_bounds_themselves_are_accepted(overrides):
    load_config("hadoop_set", **overrides)


def test_init_from_a_checkpoint_of_another_network_is_refused_by_the_config():
    """The shipped hadoop-v0 agent is a set network of hidden 64: a config of another width or
    value MLP, or a flat MLP, is refused naming both networks (not mid-run)."""
    pytest.importorskip("sb3_contrib")
    load_config("hadoop_set", init_from="agent:hadoop-v0", hidden=64)
    for change, words in (({"hidden": 32}, "hidden 32"),
                          ({"value_arch": [32]}, "value_arch [32]"),
                          ({"policy": "flat", "algo": "maskable_ppo"}, "flat MLP")):
        msg = refused("init_from", init_from="agent:hadoop-v0", **change)
        assert "hidden 64, value_arch [64, 64]" in msg and words in msg, msg


# ---- --resume ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished tiny run: (parent folder, summary)."""
    pytest.importorskip("sb3_contrib")
    from mrsched_gym.agents.training.train import train
    parent = tmp_path_factory.mktemp("runs")
    return parent, train(tiny(), parent, progress=False)


def tiny(**kw):
    base = dict(name="r", total_timesteps=256, n_envs=2, env_kwargs={"workload.duration_s": 900},
                tensorboard=False, **{"ppo.n_steps": 128, "ppo.batch_size": 128,
                                      "ppo.n_epochs": 1, "eval.n_seeds": 1,
                                      "eval.every_steps": 0, "eval.baselines": ["edf"]})
    base.update(kw)
    return load_config("hadoop_set", **base)


@pytest.mark.parametrize("change, says", [
    ({"seed": 3}, "seed changed (0 -> 3)"),
    ({"ppo.learning_rate": 1e-3}, "ppo.learning_rate changed"),
    ({"ppo.gae_lambda": 0.9}, "ppo.gae_lambda changed"),
    ({"hidden": 32}, "hidden changed"),
    ({"env": "mrsched/Dedicated-v0"}, "env changed"),
    ({"eval.baselines": ["fifo"]}, "eval.baselines changed"),
    ({"normalize_reward": False}, "normalize_reward changed"),
])
def test_resume_refuses_a_changed_setting_and_keeps_the_saved_config(finished, tmp_path, change,
                                                                     says):
    import shutil

    from mrsched_gym.agents.training.train import train
    parent, res = finished
    shutil.copytree(parent, tmp_path / "p")
    folder = tmp_path / "p" / "r"
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    with pytest.raises(ConfigError) as e:
        train(tiny(total_timesteps=512, **change), tmp_path / "p", progress=False,
              resume=folder / "last_model.zip")
    assert says in str(e.value) and "--allow-changes" in str(e.value)
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


@pytest.mark.parametrize("allow", [False, True])
def test_resume_from_a_checkpoint_of_another_network_is_refused_naming_both_runs(finished,
                                                                               tmp_path, allow):
    """Another network is refused whatever --allow-changes says (SB3 would load the
    checkpoint's own network and train it under this config's name), in the run's own folder
    and from another."""
    import shutil

    from mrsched_gym.agents.training.train import train
    parent, _ = finished
    shutil.copytree(parent, tmp_path / "p")
    checkpoint = tmp_path / "p" / "r" / "last_model.zip"
    for name in ("r", "other"):
        with pytest.raises(ConfigError) as e:
            train(tiny(name=name, hidden=32, total_timesteps=512), tmp_path / "p",
                  progress=False, resume=checkpoint, allow_changes=allow)
        msg = str(e.value)
        if allow or name == "other":
            assert "hidden 64" in msg and "hidden 32" in msg, msg
            assert str((tmp_path / "p" / name).resolve()) in msg, msg
        if name == "other":
            assert str((tmp_path / "p" / "r").resolve()) in msg, msg
    assert not (tmp_path / "p" / "other").exists()      # refused: no empty run folder left


def test_resume_from_another_runs_checkpoint_of_other_settings_is_refused_naming_both(
        finished, tmp_path):
    import shutil

    from mrsched_gym.agents.training.train import train
    parent, _ = finished
    shutil.copytree(parent, tmp_path / "p")
    checkpoint = tmp_path / "p" / "r" / "last_model.zip"
    with pytest.raises(ConfigError) as e:
        train(tiny(name="other", total_timesteps=512, **{"ppo.gae_lambda": 0.9}),
              tmp_path / "p", progress=False, resume=checkpoint)
    msg = str(e.value)
    assert "ppo.gae_lambda changed" in msg, msg
    for name in ("r", "other"):
        assert str((tmp_path / "p" / name).resolve()) in msg, msg
    res = train(tiny(name="other", total_timesteps=512), tmp_path / "p", progress=False,
                resume=checkpoint)
    assert res["history"][-1]["step"] == 512


def test_resume_with_the_same_settings_and_a_longer_run_continues(finished, tmp_path):
    import shutil

    from mrsched_gym.agents.training.train import train
    parent, _ = finished
    shutil.copytree(parent, tmp_path / "p")
    folder = tmp_path / "p" / "r"
    res = train(tiny(total_timesteps=512), tmp_path / "p", progress=False,
                resume=folder / "last_model.zip")
    assert res["history"][-1]["step"] == 512


def test_allow_changes_continues_and_records_the_new_settings(finished, tmp_path):
    import shutil

    import yaml

    from mrsched_gym.agents.training.train import train
    parent, _ = finished
    shutil.copytree(parent, tmp_path / "p")
    folder = tmp_path / "p" / "r"
    train(tiny(total_timesteps=512, seed=5), tmp_path / "p", progress=False,
          resume=folder / "last_model.zip", allow_changes=True)
    assert yaml.safe_load((folder / "config.yaml").read_text())["seed"] == 5


def test_a_resumed_run_loses_no_update_and_keeps_one_history(tmp_path, capsys):
    """Evaluations run between rollouts, after the PPO update, and save the policy they
    evaluate. A run of 512 steps resumed to 1024 makes as many updates as one run of 1024
    (rollouts of 256 steps, one epoch: 4) and evaluates at the same steps, every finished run's
    ``last_model.zip`` holds its last update, and a resume from an earlier checkpoint drops the
    evaluations after it (they run again) instead of keeping two of a step."""
    from mrsched_gym.agents.policy import load_sb3
    from mrsched_gym.agents.training.train import train

    def cfg(steps, name):
        return tiny(name=name, total_timesteps=steps, **{"eval.every_steps": 256})

    def updates(run):
        return load_sb3(tmp_path / run / "last_model.zip")._n_updates

    train(cfg(1024, "whole"), tmp_path, progress=False)
    train(cfg(512, "half"), tmp_path, progress=False)
    assert updates("half") == 2
    resumed = train(cfg(1024, "half"), tmp_path, progress=False,
                    resume=tmp_path / "half" / "last_model.zip")
    assert updates("whole") == updates("half") == 4
    assert [h["step"] for h in resumed["history"]] == [256, 512, 768, 1024]
    best = load_sb3(tmp_path / "half" / "best_model.zip")
    assert best.num_timesteps == resumed["best_step"]              # what it evaluated
    assert best._n_updates == best.num_timesteps // 256
    capsys.readouterr()
    res = train(cfg(1024, "whole"), tmp_path, progress=False,
                resume=tmp_path / "half" / "best_model.zip")
    steps = [h["step"] for h in res["history"]]
    assert steps == sorted(set(steps)) and steps[-1] == 1024, steps
    assert "after it are dropped from its history and run again" in capsys.readouterr().err


@pytest.mark.parametrize("lost", ["config.yaml", "state.json"])
def test_resume_into_a_run_that_lost_its_config_or_state_is_refused(finished, tmp_path, lost):
    """Without config.yaml its settings cannot be checked; without state.json its evaluations
    and best would start again without a word."""
    import shutil

    from mrsched_gym.agents.training.train import train
    from mrsched_gym.errors import InputError
    parent, _ = finished
    shutil.copytree(parent, tmp_path / "p")
    folder = tmp_path / "p" / "r"
    (folder / lost).unlink()
    with pytest.raises(InputError, match=rf"{lost} is missing"):
        train(tiny(total_timesteps=512), tmp_path / "p", progress=False,
              resume=folder / "last_model.zip")
