"""``mrsched-gym train`` as a user runs it: every evaluation reaches TensorBoard (the last one
included), the progress bar shows the current best, the install extras."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from mrsched_gym.agents.train import load_config, train  # noqa: E402

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


@pytest.mark.parametrize("every", [0, 512, 700])
def test_tensorboard_gets_every_evaluation_including_the_last(tmp_path, every):
    """No periodic evaluation (every_steps 0, or larger than the run: `--steps 8192` with the
    default 100,000), evaluations that land on the end, or not: TensorBoard holds each
    evaluation of evaluations.csv, the last one at the final step, and the best so far."""
    pytest.importorskip("tensorboard")
    res = train(tiny(f"tb{every}", tensorboard=True, **{"eval.every_steps": every}), tmp_path,
                progress=False)
    steps = [h["step"] for h in res["history"]]
    assert steps[-1] == 1024 and len(steps) == len(set(steps))
    logged = _scalars(Path(res["out"]), "eval/headline_mean")
    assert [s for s, _ in logged] == steps
    for (_, v), h in zip(logged, res["history"], strict=True):
        assert v == pytest.approx(h["mean"], rel=1e-6)
    best = _scalars(Path(res["out"]), "eval/best")
    assert best[-1][1] == pytest.approx(res["best"], rel=1e-6)
    assert _scalars(Path(res["out"]), "eval/baseline_edf")


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
