"""``mrsched-gym train`` as a user runs it: every evaluation reaches TensorBoard (the last one
included), the progress bar shows the current best, the install extras."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from mrsched_gym.agents.training.train import load_config, train  # noqa: E402

#: One pytest-xdist worker runs the module, so that its finished run is built once.
pytestmark = pytest.mark.xdist_group("train_run")

ROOT = Path(__file__).resolve().parents[1]
SHORT = {"workload.duration_s": 900}


def tiny(name="tiny", **kw):
    base = dict(name=name, total_timesteps=1024, n_envs=2, env_kwargs=SHORT,
                tensorboard=False, **{"ppo.n_steps": 256, "ppo.batch_size": 128,
                                      "ppo.n_epochs": 1, "eval.n_seeds": 1,
                                      "eval.every_steps": 0, "eval.baselines": ["edf"]})
    base.update(kw)
    return load_config("hadoop_set", **base)


def _scalars(out: Path, tag: str) -> list[tuple[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    got = []
    for f in sorted(out.glob("tb/**/events.out.tfevents.*")):
        acc = EventAccumulator(str(f.parent))
        acc.Reload()
        if tag in acc.Tags()["scalars"]:
            got += [(e.step, e.value) for e in acc.Scalars(tag)]
    return sorted(set(got))


@pytest.mark.parametrize("every, start", [(0, ""), (512, ""), (700, ""),
                                          (512, "agent:hadoop-v0")])
def test_tensorboard_gets_every_evaluation_including_the_last(tmp_path, every, start):
    """No periodic evaluation (every_steps 0, or larger than the run: `--steps 8192` with the
    default 100,000), evaluations that land on the end, or not, a fine-tune's step-0
    evaluation (run before PPO sets up its logger): TensorBoard holds each evaluation of
    evaluations.csv, the last one at the final step, and the best so far."""
    pytest.importorskip("tensorboard")
    kw = {"init_from": start, "hidden": 64} if start else {}
    res = train(tiny(f"tb{every}", tensorboard=True, **{"eval.every_steps": every}, **kw),
                tmp_path, progress=False)
    steps = [h["step"] for h in res["history"]]
    assert steps[-1] == 1024 and len(steps) == len(set(steps))
    assert (steps[0] == 0) == bool(start)
    logged = _scalars(Path(res["out"]), "eval/headline_mean")
    assert [s for s, _ in logged] == steps
    for (_, v), h in zip(logged, res["history"], strict=True):
        assert v == pytest.approx(h["mean"], rel=1e-6)
    best = _scalars(Path(res["out"]), "eval/best")
    assert best[-1][1] == pytest.approx(res["best"], rel=1e-6)
    assert _scalars(Path(res["out"]), "eval/baseline_edf")


def test_a_run_from_init_from_validates_the_loaded_policy_at_step_0(tmp_path):
    """A fine-tune (``init_from``, no imitation) validates its starting policy before PPO, so
    the curve starts where the run did and the best checkpoint is never one the validation
    finds worse than the start: when the start stays best, ``best_model.zip`` holds its
    weights."""
    import torch as th

    from mrsched_gym.agents.policy import load_sb3
    from mrsched_gym.agents.pretrained import pretrained_path
    res = train(tiny("ft", init_from="agent:hadoop-v0", hidden=64,
                     **{"ppo.learning_rate": 0.01, "eval.every_steps": 512}),
                tmp_path, progress=False)
    steps = [h["step"] for h in res["history"]]
    assert steps == [0, 512, 1024]
    assert res["best"] == min(h["mean"] for h in res["history"])
    best = load_sb3(res["best_model"]).policy.state_dict()
    start = load_sb3(pretrained_path("hadoop-v0")).policy.state_dict()
    final = load_sb3(res["final_model"]).policy.state_dict()
    same = [th.equal(best[k], start[k]) for k in start]
    assert all(same) == (res["best_step"] == 0)
    assert not all(th.equal(final[k], start[k]) for k in start)   # PPO did move the weights


def test_a_run_without_tensorboard_writes_nothing_outside_its_folder(tmp_path, monkeypatch):
    """SB3's default logger makes a folder ``SB3-<time>`` in the temporary directory even when
    it logs nothing; a run without TensorBoard writes only into its own folder."""
    import tempfile
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)          # read TMPDIR again
    train(tiny("quiet"), tmp_path / "out", progress=False)
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("SB3-")]


def test_progress_bar_shows_the_last_evaluation_and_the_best(tmp_path, capsys):
    train(tiny("bar", **{"eval.every_steps": 512}), tmp_path, progress=True)
    err = capsys.readouterr().err
    state = (tmp_path / "bar" / "state.json").read_text()
    import json
    s = json.loads(state)
    last = s["history"][-1]["mean"]
    final = err.replace("\r", "\n").strip().splitlines()[-1]
    assert f"val={last:.2f}" in final and f"best={s['best']:.2f}" in final, final


def test_rl_extra_brings_rich_and_constraints_say_how_to_get_the_cpu_build():
    tomllib = pytest.importorskip("tomllib")            # Python 3.11+
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    rl = meta["project"]["optional-dependencies"]["rl"]
    assert "rich" in rl and "torch" in rl
    text = (ROOT / "constraints.txt").read_text()
    assert "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu" in text
    assert "torch==" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "download.pytorch.org" not in ci         # unreachable there: pip would hang


# ---------------------------------------------------------------------- safe as compare (#32)
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import zipfile  # noqa: E402

from mrsched_gym.config import ConfigError  # noqa: E402
from mrsched_gym.errors import InputError  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A finished tiny run: (parent folder, summary)."""
    parent = tmp_path_factory.mktemp("runs")
    return parent, train(tiny("done"), parent, progress=False)


@pytest.mark.parametrize("name", ["../x", ".", "..", "a/b", "", "/abs", "x y", "./../victim"])
def test_a_run_name_must_be_a_slug(tmp_path, name):
    with pytest.raises(ConfigError, match="name"):
        tiny(name)
    cfg = tiny("ok")
    cfg.name = name                                # set past load_config's check
    with pytest.raises(ConfigError, match="name"):
        train(cfg, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists() and sorted(os.listdir(tmp_path)) == []


def test_a_folder_holding_a_run_is_refused_unless_resume_or_overwrite(run, tmp_path):
    import shutil
    parent, res = run
    before = (parent / "done" / "evaluations.csv").read_bytes()
    with pytest.raises(InputError, match="holds a run.*--resume.*--overwrite"):
        train(tiny("done"), parent, progress=False)
    assert (parent / "done" / "evaluations.csv").read_bytes() == before
    with pytest.raises(InputError, match="give one"):
        train(tiny("done"), parent, resume=res["final_model"], overwrite=True, progress=False)
    copy = tmp_path / "p"
    shutil.copytree(parent, copy)
    (copy / "done" / "notes.txt").write_text("mine")
    (copy / "done" / ".best_model.zip.k1ll3d.tmp").write_bytes(b"PK")    # a killed save's
    again = train(tiny("done", total_timesteps=512), copy, overwrite=True, progress=False)
    assert not list((copy / "done").glob(".*.tmp"))
    assert [h["step"] for h in again["history"]] == [512]
    assert (copy / "done" / "notes.txt").read_text() == "mine"      # only the run's files go


def test_a_second_run_into_a_busy_folder_is_refused(tmp_path):
    import fcntl
    folder = tmp_path / "busy"
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)                  # what a running train holds
    try:
        with pytest.raises(InputError, match="another training run"):
            train(tiny("busy"), tmp_path, progress=False)
    finally:
        os.close(fd)
    assert os.listdir(folder) == []


def test_the_run_folder_may_not_be_a_link_or_a_file(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "out" / "lnk")
    with pytest.raises(InputError, match="is a link"):
        train(tiny("lnk"), tmp_path / "out", progress=False)
    (tmp_path / "out" / "f").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        train(tiny("f"), tmp_path / "out", progress=False)
    assert os.listdir(tmp_path / "elsewhere") == []


def _other_space_checkpoint(path):
    import gymnasium as gym
    from sb3_contrib import MaskablePPO
    MaskablePPO("MultiInputPolicy", gym.make("mrsched/Dedicated-v0"), n_steps=64).save(path)
    return path


@pytest.mark.parametrize("case", ["missing", "corrupt", "empty", "other-space"])
def test_resume_from_a_bad_checkpoint_is_one_clear_error(run, tmp_path, case):
    import shutil
    parent, _ = run
    shutil.copytree(parent, tmp_path / "p")
    ck = tmp_path / "ck.zip"
    if case == "corrupt":
        ck.write_bytes(b"PK\x03\x04 not really a zip")
    elif case == "empty":
        ck.write_bytes(b"")                           # what a kill during a save once left
    elif case == "other-space":
        _other_space_checkpoint(ck)
    with pytest.raises(InputError, match=r"--resume .*ck\.zip"):
        train(tiny("done"), tmp_path / "p", resume=ck, progress=False)


@pytest.mark.parametrize("what, content", [
    ("state.json", '{"history": [{"step": 1024, "wal'),           # cut
    ("state.json", "[1, 2]"),
    ("state.json", '{"history": [{"step": "x"}], "best": 1}'),
    ("config.yaml", "name: [unclosed\n  - :"),
    ("config.yaml", "- a list\n"),
])
def test_resume_over_a_damaged_run_folder_is_one_clear_error(run, tmp_path, what, content):
    import shutil
    parent, res = run
    shutil.copytree(parent, tmp_path / "p")
    (tmp_path / "p" / "done" / what).write_text(content)
    with pytest.raises(InputError, match=what.replace(".", r"\.")):
        train(tiny("done"), tmp_path / "p", resume=tmp_path / "p" / "done" / "last_model.zip",
              progress=False)


@pytest.mark.parametrize("case", ["missing", "corrupt", "state", "config", "held", "name"])
def test_train_cli_prints_one_error_line(run, tmp_path, capsys, case):
    import shutil

    from mrsched_gym.cli import main
    parent, _ = run
    shutil.copytree(parent, tmp_path / "p")
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("name: done\nenv: hadoop\nenv_kwargs: {workload.duration_s: 900}\n"
                   "total_timesteps: 1024\nn_envs: 2\ntensorboard: false\n"
                   "ppo: {n_steps: 256, batch_size: 128, n_epochs: 1}\n"
                   "eval: {every_steps: 0, n_seeds: 1, baselines: [edf]}\n")
    folder = tmp_path / "p" / "done"
    args = ["train", str(cfg), "--out", str(tmp_path / "p"), "--quiet"]
    if case == "missing":
        args += ["--resume", str(tmp_path / "nope.zip")]
    elif case == "corrupt":
        (tmp_path / "bad.zip").write_bytes(b"garbage")
        args += ["--resume", str(tmp_path / "bad.zip")]
    elif case == "state":
        (folder / "state.json").write_text('{"hist')
        args += ["--resume", str(folder / "last_model.zip")]
    elif case == "config":
        (folder / "config.yaml").write_text(": : :\n\t- [")
        args += ["--resume", str(folder / "last_model.zip")]
    elif case == "name":
        args += ["--name", "../escape"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "escape").exists()


def test_a_kill_during_a_checkpoint_save_leaves_the_old_checkpoint_whole(run, tmp_path):
    """SIGKILL at random instants of a loop of checkpoint saves: the checkpoint is always a
    whole zip that loads (the old one or the new one)."""
    import random
    import signal
    import time
    parent, res = run
    target = tmp_path / "best_model.zip"
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from mrsched_gym.agents.policy import load_sb3\n"
        "from mrsched_gym.agents.training.train import save_checkpoint\n"
        f"m = load_sb3({res['final_model']!r})\n"
        "print('ready', flush=True)\n"
        f"while True: save_checkpoint(m, Path({str(target)!r}))\n")
    rng = random.Random(0)
    for _ in range(3):
        p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.6))
        p.send_signal(signal.SIGKILL)
        p.wait()
        if target.exists():
            with zipfile.ZipFile(target) as z:
                assert z.testzip() is None
    from mrsched_gym.agents.policy import load_sb3
    assert load_sb3(target) is not None


def test_checkpoints_and_state_are_written_through_a_temporary_file(run, monkeypatch, tmp_path):
    """A save that fails half-way leaves the previous file and no temporary file behind."""
    from mrsched_gym.agents.training import train as tr
    target = tmp_path / "state.json"
    target.write_text(json.dumps({"old": 1}))

    def half(tmp):
        with open(tmp, "w") as f:
            f.write('{"new": ')
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        tr.durable_write(target, half)
    assert json.loads(target.read_text()) == {"old": 1}
    assert sorted(os.listdir(tmp_path)) == ["state.json"]


def test_the_best_policy_is_also_written_without_pickle(run, monkeypatch):
    """A set-network run writes best_model.npz beside best_model.zip: numpy weights and JSON
    (np.load with allow_pickle=False reads it), the same policy, loadable as agent:PATH.npz
    without torch's unpickling; its records equal the zip's."""
    import numpy as np

    from mrsched_gym.evaluate import evaluate

    _, res = run
    npz = Path(res["best_numpy"])
    assert npz.name == "best_model.npz" and npz.is_file()
    with np.load(npz, allow_pickle=False) as z:          # no object arrays: nothing to unpickle
        assert all(z[k].dtype != object for k in z.files)
    kw = dict(seeds=[3], workers=1, progress=False, env_kwargs=SHORT)
    from_zip = evaluate([f"agent:{res['best_model']}"], ["mrsched/Hadoop-v0"], **kw)
    from_npz = evaluate([f"agent:{npz}"], ["mrsched/Hadoop-v0"], **kw)
    strip = ("policy", "wall_s", "decisions_per_s", "_policy_fp")

    def same(r):                                         # repr: nan equals nan
        return {k: repr(v) for k, v in r.items() if k not in strip}

    assert [same(r) for r in from_npz] == [same(r) for r in from_zip]


def test_a_residual_run_validates_the_rule_at_step_0(tmp_path):
    """``prior: edf``: the step-0 validation plays EDF itself (the correction starts at zero),
    so its mean is the ``edf`` baseline's on the same seeds and worlds; the checkpoints keep the
    prior (the shipped numpy actor too)."""
    import json

    import numpy as np

    from mrsched_gym.agents.numpy_policy import META_KEY
    from mrsched_gym.evaluate import evaluate
    res = train(tiny("residual", prior="edf", **{"eval.every_steps": 512}), tmp_path,
                progress=False)
    steps = [h["step"] for h in res["history"]]
    assert steps == [0, 512, 1024]
    cfg = tiny("residual")
    seeds = list(range(cfg.eval.seed_start, cfg.eval.seed_start + cfg.eval.n_seeds))
    recs = evaluate(["edf"], [cfg.env], seeds=seeds, env_kwargs=SHORT, workers=1,
                    progress=False)
    assert res["history"][0]["mean"] == pytest.approx(
        np.mean([r["deadline_penalty_h"] for r in recs]), rel=1e-12)
    npz = Path(res["out"]) / "best_model.npz"
    with np.load(npz) as z:
        assert json.loads(str(z[META_KEY]))["prior"] == "edf"


@pytest.mark.parametrize("kw, message", [
    ({"prior": "sjf"}, "prior: prior must be one of"),
    ({"prior": "edf", "policy": "flat"}, "prior: a residual policy needs the set policy"),
    ({"prior_weight": -2}, "prior_weight: prior_weight must be a number in"),
])
def test_bad_prior_fields_are_named(kw, message):
    from mrsched_gym.config import ConfigError
    with pytest.raises(ConfigError, match=message):
        tiny("bad", **kw)
