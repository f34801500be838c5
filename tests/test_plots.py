"""The figures read correctly (issue 31 item 6): each test reads the plotted artists back
(data, colours, legend entries, axis limits), never only that a file was written."""

from __future__ import annotations

import io
import math
import time

import numpy as np
import pytest

from mrsched_gym.evaluate import make_policy, run_episode
from mrsched_gym.evaluate.benchmark import iqm_figure
from mrsched_gym.evaluate.leaderboard import bars_figure, gantt_figure, jct_cdf_figure, metric_range

SMALL = {"workload.duration_s": 900}              # a 15-minute Hadoop-v0: ~20 jobs


def records(policies, seeds=(0, 1, 2), jct=True):
    """Records of a fake sweep: a non-negative headline whose t-interval would dip below 0."""
    rng = np.random.default_rng(0)
    out = []
    for k, p in enumerate(policies):
        for s in seeds:
            heavy = 20.0 if s == seeds[-1] else 0.0          # one bad seed: a huge CI
            out.append({"policy": p, "scenario": "mrsched/Hadoop-v0", "seed": s,
                        "deadline_penalty_h": heavy + 0.1 * k, "deadline_miss_pct": 95.0 + s,
                        "mean_jct_s": 100.0 * (k + 1), "utilisation": 0.97 + 0.01 * s,
                        "_jct_s": list(rng.exponential(300, 30)) if jct else []})
    return out


def errorbar_x(ax) -> np.ndarray:
    """The x ends of every error bar drawn on ``ax``."""
    ends = [seg[:, 0] for bars in ax.containers if getattr(bars, "errorbar", None)
            for seg in bars.errorbar.lines[2][0].get_segments()]
    return np.concatenate(ends)


# ---------------------------------------------------------------------- metrics.png
def test_metric_ranges():
    assert metric_range("deadline_penalty_h") == (0.0, math.inf)
    assert metric_range("deadline_miss_pct") == (0.0, 100.0)
    assert metric_range("utilisation") == (0.0, 1.0)
    assert metric_range("return") == (-math.inf, math.inf)


def test_metrics_intervals_stay_within_the_metric_range():
    recs = records(["edf", "fifo", "fair"])
    fig = bars_figure(recs, "deadline_penalty_h")
    axes = fig.axes
    titles = [ax.get_title().split("\n")[0] for ax in axes]
    assert titles == ["deadline_penalty_h", "deadline_miss_pct", "mean_jct_s", "utilisation"]
    for ax, m in zip(axes, titles, strict=True):
        lo, hi = metric_range(m)
        x = errorbar_x(ax)
        assert len(x) == 2 * 3                      # one interval per policy
        assert x.min() >= lo - 1e-9 and x.max() <= hi + 1e-9, (m, x)
        if lo == 0:
            assert ax.get_xlim()[0] == 0
    # the unclipped t-interval of the headline went below 0: the plot really clipped it
    assert errorbar_x(axes[0]).min() == 0.0
    assert "clipped to the metric's range" in fig._suptitle.get_text()


# ---------------------------------------------------------------------- jct_cdf.png
def test_jct_cdf_shows_every_policy():
    names = [f"p{k}" for k in range(15)]
    fig = jct_cdf_figure(records(names), "deadline_penalty_h")
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 15
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(labels) == 15 and all(any(n == lab.split(". ", 1)[1] for lab in labels)
                                     for n in names)
    styles = {(tuple(np.round(line.get_color() if not isinstance(line.get_color(), str)
                              else (0, 0, 0), 3)), line.get_linestyle())
              for line in ax.get_lines()}
    assert len(styles) == 15                         # each policy its own colour/style
    assert "all 15 policies" in ax.get_title()


def test_jct_cdf_names_the_policies_it_leaves_out():
    recs = records(["edf", "fifo"]) + records(["stuck"], jct=False)
    ax = jct_cdf_figure(recs, "deadline_penalty_h").axes[0]
    assert len(ax.get_lines()) == 2
    assert "2 of 3 policies" in ax.get_title() and "stuck" in ax.get_title()


# ---------------------------------------------------------------------- gantt.png
@pytest.fixture(scope="module")
def episode_log():
    return run_episode("mrsched/Hadoop-v0", make_policy("edf"), 0, SMALL, keep_log=True)["log"]


def test_gantt_shows_every_job_in_distinct_colours_up_to_the_episode_end(episode_log):
    log = episode_log
    fig, drawn = gantt_figure(log, "test")
    arrived = int(log.arrived.sum())
    assert drawn["shown"] == list(np.flatnonzero(log.arrived))
    assert f"all {arrived} jobs" in fig._suptitle.get_text()
    colours = np.round(drawn["colours"], 4)
    assert len({tuple(c) for c in colours}) == arrived             # no colour repeats
    ax = drawn["jobs"]
    bars = ax.collections
    mapped = {tuple(np.round(b.get_facecolor()[0][:3], 4)) for b in bars
              if b.__class__.__name__ == "BrokenBarHCollection" or hasattr(b, "get_paths")}
    assert {tuple(c) for c in colours} <= mapped                    # each job drawn in its own
    assert ax.get_xlim() == (0, log.end_s)
    assert drawn["tasks"].get_xlim() == (0, log.end_s)
    labels = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"arrival", "deadline met", "deadline missed"} <= labels
    assert any("map" in lab for lab in labels) and any("reduce" in lab for lab in labels)
    # every job's row: its arrival tick at its arrival time
    ticks = next(c for c in ax.collections if c.get_offsets().shape[0] == arrived)
    np.testing.assert_allclose(ticks.get_offsets()[:, 0], log.arrival_s[log.arrived])


def test_gantt_states_its_rule_when_it_draws_the_top_n(episode_log):
    fig, drawn = gantt_figure(episode_log, "test", max_jobs=5)
    assert len(drawn["shown"]) == 5
    text = fig._suptitle.get_text()
    assert "the 5 of" in text and "most task time" in text
    others = int(episode_log.arrived.sum()) - 5       # their tasks: one grey layer of the stack
    assert [t.get_text() for t in drawn["tasks"].get_legend().get_texts()] == \
        [f"the {others} other jobs"]


def test_gantt_marks_rejected_jobs():
    log = run_episode("mrsched/Admission-v1", make_policy("mp+ac"), 0, SMALL,
                      keep_log=True)["log"]
    assert log.rejected.any()
    _, drawn = gantt_figure(log, "test")
    ax = drawn["jobs"]
    assert "rejected at admission" in {t.get_text() for t in ax.get_legend().get_texts()}
    crosses = [c for c in ax.collections
               if c.get_offsets().shape[0] == int(log.rejected.sum())]
    assert any(np.allclose(c.get_offsets()[:, 0], log.arrival_s[log.rejected])
               for c in crosses)
    # a rejected job spends no time in the system: no grey line on its row
    rows = {int(round(line.get_ydata()[0])) for line in ax.get_lines()}
    assert not rows & set(np.flatnonzero(log.rejected[log.arrived]).tolist())


# ---------------------------------------------------------------------- iqm.png
def test_iqm_has_a_legend_of_the_roles_and_its_whole_xlabel():
    rows = [{"policy": p, "iqm": v, "iqm_lo": v - 0.3, "iqm_hi": v + 0.2}
            for p, v in (("agent:general", 1.2), ("srpt", 1.0), ("edf", 1.0), ("fifo", 0.1))]
    fig = iqm_figure(rows, ids=["mrsched/Hadoop-v0", "mrsched/Dedicated-v0"],
                     seeds=range(100, 110))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == \
        ["agent", "reference rule", "baseline"]
    fig.canvas.draw()
    box = ax.xaxis.label.get_window_extent()
    assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1, box
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.tell() > 0


# ---------------------------------------------------------------------- learning_curve.png
def test_learning_curve_is_linear_and_names_the_metric():
    from mrsched_gym.agents.training.train import curve_metric, learning_curve_figure
    hist = [{"step": s, "mean": m, "ci95": 1.0} for s, m in ((2048, 40.0), (4096, 12.0),
                                                           (8192, 6.0))]
    fig = learning_curve_figure({"run": hist}, {"edf": 2.0, "fifo": 6.0}, "t",
                                curve_metric("mrsched/Hadoop-v0"))
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear" and ax.get_xscale() == "linear"
    assert "deadline_penalty_h" in ax.get_ylabel() and "lower is better" in ax.get_ylabel()
    assert ax.get_ylim()[0] == 0
    assert len(ax.get_yticks()) >= 4


# ---------------------------------------------------------------------- rgb_array
def play(env, steps, rng):
    for _ in range(steps):
        mask = env.unwrapped.action_masks()
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            return True
    return False


def now_column(frame) -> float:
    """The mean column of the current-time line's pixels (pure red, full plot height)."""
    from mrsched_gym.env.render import NOW_RGB
    hit = np.all(frame == NOW_RGB, axis=2)
    cols = np.flatnonzero(hit.sum(axis=0) > 0.5 * frame.shape[0])
    return float(cols.mean()) if len(cols) else math.nan


def test_rgb_array_has_a_moving_current_time_marker_and_draws_incrementally(monkeypatch):
    import gymnasium as gym

    from mrsched_gym.env import render
    layouts = []
    real = render.RgbRenderer._layout
    monkeypatch.setattr(render.RgbRenderer, "_layout",
                        lambda self: (layouts.append(1), real(self))[1])
    env = gym.make("mrsched/Hadoop-v0", render_mode="rgb_array", **SMALL)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    play(env, 50, rng)
    a = env.render()
    play(env, 150, rng)
    b = env.render()
    frames = [b]
    for _ in range(5):
        play(env, 20, rng)
        frames.append(env.render())
    assert a.shape == (500, 900, 3) and a.dtype == np.uint8
    assert not math.isnan(now_column(a)) and now_column(b) > now_column(a)   # time moves right
    assert len(layouts) <= 3                                  # static parts not redrawn per frame
    # jobs drawn in several distinct colours
    body = b.reshape(-1, 3)
    assert len(np.unique(body, axis=0)) > 20


def test_rgb_array_static_frame_is_drawn_once_per_axis():
    """A second episode of the same world reuses the static frame (no matplotlib draw)."""
    import gymnasium as gym

    from mrsched_gym.env import render
    assert [render.round_up(x) for x in (0.9, 4140, 4000, 7001)] == [1.0, 5000, 4000, 8000]
    env = gym.make("mrsched/Hadoop-v0", render_mode="rgb_array", **SMALL)
    env.reset(seed=0)
    env.render()
    drawn = dict(render._STATIC)
    env.reset(seed=0)                                        # a new simulator, the same world
    first = env.render()
    assert render._STATIC.keys() == drawn.keys()
    assert all(render._STATIC[k] is drawn[k] for k in drawn)
    assert now_column(first) < 0.2 * first.shape[1]           # time 0: the line at the left


@pytest.mark.slow
def test_rgb_array_frame_time():
    """A generous bound (the measured time is about 1-6 ms a frame; the bound is 0.1 s)."""
    import gymnasium as gym
    env = gym.make("mrsched/Hadoop-v0", render_mode="rgb_array")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    env.render()                                          # imports and the first layout
    times, done = [], False
    while not done:
        done = play(env, 40, rng)
        t0 = time.perf_counter()
        env.render()
        times.append(time.perf_counter() - t0)
    assert np.median(times) < 0.1, times
