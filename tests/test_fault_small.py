"""Issue 46, item 7: ``step()`` after ``close()`` raises; a policy parameter given twice is an
error (generated specs); the interrupt message says what the command that ran kept; a statistics
window is explained under the leaderboard, the empty window included."""

from __future__ import annotations

import signal

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mrsched_gym  # noqa: F401  (registers the ids)
from mrsched_gym.cli import main
from mrsched_gym.cli import parser as cli_parser
from mrsched_gym.errors import EpisodeStateError, InputError
from mrsched_gym.evaluate import check_policy


@pytest.mark.parametrize("env_id", ["mrsched/Hadoop-v0", "mrsched/Dedicated-v0"])
@pytest.mark.parametrize("method", ["step", "advance"])
def test_step_after_close_raises_and_reset_starts_afresh(env_id, method):
    env = gym.make(env_id)
    env.reset(seed=0)
    env.unwrapped.step(0)
    env.close()
    with pytest.raises(EpisodeStateError, match=rf"{method}\(\) called after close\(\)"):
        getattr(env.unwrapped, method)(0)
    env.reset(seed=0)                          # a new episode: the env works again
    env.unwrapped.step(0)
    env.close()


def test_close_before_reset_keeps_the_before_reset_error():
    env = gym.make("mrsched/Hadoop-v0")
    env.close()
    with pytest.raises(EpisodeStateError, match="before reset"):
        env.unwrapped.step(0)


@settings(max_examples=40, deadline=None)
@given(base=st.sampled_from(["fifo", "edf", "fair", "edf-affinity"]),
       key=st.sampled_from(["slack", "min_ratio", "slow_start", "x"]),
       values=st.lists(st.sampled_from(["1", "2", "0.5", "true"]), min_size=2, max_size=3),
       others=st.lists(st.sampled_from(["a=1", "b=2"]), max_size=2, unique=True))
def test_a_parameter_given_twice_is_an_error(base, key, values, others):
    items = [f"{key}={v}" for v in values] + others
    with pytest.raises(InputError, match=f"parameter '{key}' given more than once"):
        check_policy(f"{base}:{','.join(items)}")


@pytest.mark.parametrize("cmd, argv, says, not_says", [
    ("demo", ["demo"], "nothing was written", "journal"),
    ("show-scenario", ["show-scenario", "hadoop"], "nothing was written", "journal"),
    ("list", ["list"], "nothing was written", "journal"),
    ("train", ["train"], "last_model.zip", "journal"),
    ("reproduce", ["reproduce", "late-speculation"], "--reuse", "journal"),
    ("compare", ["compare"], "run's journal (--resume continues)", "nothing was written"),
    ("benchmark", ["benchmark"], "run's journal (--resume continues)", "nothing was written"),
])
def test_the_interrupt_message_says_what_the_command_kept(monkeypatch, capsys, cmd, argv, says,
                                                          not_says):
    """Ctrl-C during demo, train or show-scenario spoke of a journal that does not exist."""
    real = cli_parser.build_parser

    def interrupted(*a, **k):
        raise KeyboardInterrupt(signal.SIGINT)

    def build():
        p = real()
        for action in p._subparsers._group_actions:           # noqa: SLF001 (argparse's own)
            action.choices[cmd].set_defaults(fn=interrupted)
        return p
    monkeypatch.setattr(cli_parser, "build_parser", build)
    assert main(argv) == 128 + signal.SIGINT
    err = capsys.readouterr().err.strip()
    assert err.startswith("interrupted (SIGINT): ") and says in err and not_says not in err
    assert set(cli_parser.KEPT_ON_INTERRUPT) >= {cmd}


def test_every_command_has_an_interrupt_message():
    p = cli_parser.build_parser()
    commands = set(p._subparsers._group_actions[0].choices)      # noqa: SLF001
    assert commands == set(cli_parser.KEPT_ON_INTERRUPT)


@pytest.mark.parametrize("window, empty", [("[0, 1e-9]", True), ("[0, 3600]", False)])
def test_a_statistics_window_is_explained_under_the_leaderboard(tmp_path, capsys, window,
                                                                empty):
    rc = main(["compare", "--env", "dedicated", "--set", f"stats_window_s={window}",
               "--policies", "fifo", "--seeds", "1", "--workers", "1", "--quiet", "--no-plots",
               "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "count only the jobs submitted or completed in it" in out
    assert "covers the whole episode (a reward component)" in out
    assert ("no episode had a job in the window" in out) == empty


@pytest.mark.parametrize("window", [[0.0, 1e-9], [0.0, 600.0], [300.0, 900.0]])
def test_a_statistics_window_narrows_the_job_statistics_not_the_reward_components(window):
    """Which is meant (issue 46): the job statistics (n_jobs, deadline and JCT metrics) count the
    jobs in the window; the reward components (deadline_penalty_h ...) and so a headline that is
    one cover the whole episode, with or without a window."""
    from mrsched_gym.config import COMPONENT_METRICS
    from mrsched_gym.evaluate import run_episode
    kw = {"workload.duration_s": 900.0}
    whole = run_episode("mrsched/Hadoop-v0", "edf", 0, kw)["metrics"]
    part = run_episode("mrsched/Hadoop-v0", "edf", 0, {**kw, "stats_window_s": window})["metrics"]
    for name in COMPONENT_METRICS.values():
        assert part[name] == whole[name], name
    assert part["n_jobs"] <= whole["n_jobs"]
    if window[1] < 1:
        assert part["n_jobs"] == 0 and whole["deadline_penalty_h"] > 0
