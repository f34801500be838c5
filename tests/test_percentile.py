"""``metrics.percentile`` is ``np.percentile`` (default ``"linear"`` method) bit for bit, and the
first episode's metrics import no lazy numpy module (``np.percentile`` imports ``numpy.ma``)."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrsched_gym.env.metrics import percentile

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
# values with many ties (integers) and values of every magnitude
samples = st.one_of(st.lists(floats, min_size=1, max_size=60),
                    st.lists(st.integers(-5, 5).map(float), min_size=1, max_size=60),
                    st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=200))
quantiles = st.one_of(st.sampled_from([0, 5, 25, 50, 75, 95, 99, 100]),
                      st.floats(0.0, 100.0))


def same_float(a: float, b: float) -> bool:
    return np.float64(a).tobytes() == np.float64(b).tobytes()


@settings(max_examples=2000, deadline=None)
@given(samples, quantiles)
def test_equals_numpy_bit_for_bit(values, q):
    x = np.array(values, dtype=np.float64)
    kept = x.copy()
    with np.errstate(invalid="ignore"):            # numpy warns on inf - inf; we do not
        expected = float(np.percentile(x, q))
    got = percentile(x, q)
    assert same_float(got, expected), (values, q, got, expected)
    assert np.array_equal(x, kept, equal_nan=True)  # the input is not reordered


def test_empty_and_out_of_range():
    assert np.isnan(percentile(np.array([]), 95))
    with pytest.raises(ValueError, match="outside"):
        percentile(np.array([1.0]), 101)


def test_first_episode_metrics_import_no_lazy_numpy_module():
    code = """if True:
        import sys
        import gymnasium as gym
        import mrsched_gym
        env = gym.make("mrsched/Hadoop-v0")
        env.reset(seed=0)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            _, _, term, trunc, info = env.step(int(mask.nonzero()[0][0]))
            done = term or trunc
        assert info["metrics"]["p95_jct_s"] > 0, info["metrics"]
        print("numpy.ma" in sys.modules)
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stdout + out.stderr
