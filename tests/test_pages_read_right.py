"""What a newcomer reads: confidence intervals printed as ``(lo, hi)`` (a negative bound reads
``(-0.80, -0.14)``, not ``(-0.80--0.14)``), every argument of the env on the generated env
pages, a help text for every option of ``demo``, JCT CDF lines told apart, a one-point learning
curve without a CI band, the ids and seeds of iqm.png, a zero bar drawn and labelled in the
reproduce figures, and every env page with its world's rendered frame (committed, redrawn
identically)."""

import importlib.util
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

from mrsched_gym.cli.parser import build_parser
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.evaluate.benchmark import table

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_table_prints_intervals_with_a_comma():
    row = {"policy": "edf", "iqm": -0.5, "iqm_lo": -0.8, "iqm_hi": -0.14, "p_improvement": 0.4,
           "p_improvement_lo": 0.25, "p_improvement_hi": 0.55, "score:mrsched/Hadoop-v0": -0.5}
    text = table([row], ["mrsched/Hadoop-v0"])
    assert "-0.50 (-0.80, -0.14)" in text and "0.40 (0.25, 0.55)" in text
    assert not re.search(r"\d-\d", text.split("\n", 2)[2])


def test_env_pages_list_every_argument_of_the_env():
    pages = load_tool("docs_site").generated_pages()
    keywords = [p.name for p in inspect.signature(MRSchedEnv.__init__).parameters.values()
                if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self"]
    assert "allow_idle" in keywords
    for name, page in pages.items():
        if name.startswith("envs/") and name != "envs/index.md":
            arguments = page.split("## Arguments", 1)[1].split("## Version History")[0]
            for kw in keywords:
                assert f"{kw}=" in arguments, (name, kw)
            assert "`allow_idle=True`" in arguments, name


def test_every_demo_option_has_a_help_text():
    parser = build_parser()
    demo = next(a for a in parser._subparsers._group_actions[0].choices.items()
                if a[0] == "demo")[1]
    for action in demo._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, action.option_strings


def test_jct_cdf_tells_fifteen_policies_apart():
    from matplotlib.colors import to_hex

    from mrsched_gym.evaluate.leaderboard import jct_cdf_figure
    records = [{"policy": f"p{k}", "scenario": "mrsched/Hadoop-v0", "seed": 0,
                "_jct_s": [10.0 + k, 20.0 + k, 40.0 + k]} for k in range(15)]
    fig = jct_cdf_figure(records)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 15
    looks = {(to_hex(line.get_color()), line.get_linestyle()) for line in lines}
    assert len(looks) == 15                      # no two lines look alike
    solid = [to_hex(line.get_color()) for line in lines if line.get_linestyle() == "-"]
    assert len(set(solid)) == len(solid) == 10   # ten hues, none a shade of another's pair


def test_a_one_point_learning_curve_has_no_band_in_its_legend():
    from matplotlib.collections import PolyCollection

    from mrsched_gym.agents.training.learning_curves import learning_curve_figure
    one = [{"step": 2048, "mean": 12.0, "ci95": 1.5}]
    many = [{"step": s, "mean": m, "ci95": 1.0} for s, m in ((2048, 40.0), (4096, 12.0))]
    no_ci = [{"step": s, "mean": m, "ci95": None} for s, m in ((2048, 40.0), (4096, 12.0))]
    fig = learning_curve_figure({"short": one, "long": many, "no-ci": no_ci}, {"edf": 2.0})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == \
        ["short (one evaluation, bar: 95% CI)", "long (band: 95% CI)", "no-ci", "edf (baseline)"]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 1                       # only the run with a curve and a CI has one
    fig = learning_curve_figure({"short": [{"step": 2048, "mean": 12.0, "ci95": None}]}, {})
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == \
        ["short (one evaluation)"]


def test_iqm_figure_says_how_many_ids_and_seeds():
    from mrsched_gym.evaluate.benchmark import SUITE, TEST_SEEDS, iqm_figure
    rows = [{"policy": "edf", "iqm": 1.0, "iqm_lo": 0.8, "iqm_hi": 1.1}]
    label = iqm_figure(rows, ids=SUITE, seeds=TEST_SEEDS).axes[0].get_xlabel()
    assert f"IQM over {len(SUITE)} ids x 10 seeds (100-109)" in label
    label = iqm_figure(rows, ids=SUITE[:1], seeds=[100, 103]).axes[0].get_xlabel()
    assert "IQM over 1 id x 2 seeds (100, 103)" in label
    docs = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    from mrsched_gym.evaluate.benchmark import sample_phrase
    assert f'"{sample_phrase(SUITE, TEST_SEEDS)}"' in docs    # the page's caption of iqm.png


def test_reproduce_figure_shows_and_labels_a_zero_bar():
    from matplotlib.colors import to_hex

    from mrsched_gym.reproduce import load_reproduction, reproduction_figure
    rep = load_reproduction("rds-case-study")            # bars of deadline_misses
    misses = {"fifo": [4, 6], "fair": [3, 5], "edf": [1, 1], "rds": [0, 0]}
    records = [{"case": "table-1", "policy": p, "seed": s, "deadline_misses": v}
               for p, vals in misses.items() for s, v in enumerate(vals)]
    ax = reproduction_figure(rep, records).axes[0]
    rds = next(b for b in ax.containers if b.get_label() == "rds")
    zero_bar = rds.patches[0]
    assert zero_bar.get_height() == 0
    marks = [ln for ln in ax.get_lines() if list(ln.get_ydata()) == [0, 0]
             and to_hex(ln.get_color()) == to_hex(zero_bar.get_facecolor())]
    assert len(marks) == 1 and marks[0].get_linewidth() >= 2        # a visible line
    assert marks[0].get_xdata()[0] == pytest.approx(zero_bar.get_x())
    labels = [t for t in ax.texts if t.get_text() == "0"]
    assert len(labels) == 1
    assert labels[0].xy[0] == pytest.approx(zero_bar.get_x() + zero_bar.get_width() / 2)
    assert len(ax.texts) == 1                            # the tall bars carry no label


def load_tool(name: str):
    """A module of ``tools/`` (not a package), imported from its file."""
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_env_page_shows_its_committed_frame_and_a_frame_redraws_identically():
    from mrsched_gym.registration import ENV_IDS
    frames, site = load_tool("env_frames"), load_tool("docs_site")
    pages = site.generated_pages()
    for env_id in ENV_IDS:
        path = frames.frame_path(env_id)
        link = f"](../{path.relative_to(ROOT / 'docs').as_posix()})"
        assert link in pages[f"envs/{site.env_slug(env_id)}.md"], env_id
        assert path.is_file(), f"{path} missing: run python tools/env_frames.py"
        assert path.stat().st_size < 60_000, path
        image = frames.read_png(path)
        assert image.ndim == 3 and image.shape[2] == 3 and image.std() > 10, path  # not blank
    fresh = frames.frame("mrsched/Hadoop-v0")
    assert np.array_equal(frames.read_png(frames.frame_path("mrsched/Hadoop-v0")), fresh)
    assert frames.png_bytes(fresh) == frames.png_bytes(frames.frame("mrsched/Hadoop-v0"))
