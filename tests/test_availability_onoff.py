"""The ``onoff`` availability generator (every node alternates exponential up and down periods):
its ``min_fraction`` floor keeps that many nodes up without favouring any node."""

import dataclasses

import numpy as np
import pytest

from mrsched_gym.config import AvailabilityConfig
from mrsched_gym.models.availability import availability_fraction


def onoff(min_fraction: float, seed: int, n_nodes: int = 20, days: float = 7.0):
    cfg = dataclasses.replace(AvailabilityConfig(), generator="onoff", mode="nodes",
                              step_s=60.0, mean_on_s=600.0, mean_off_s=1800.0,
                              min_fraction=min_fraction)
    return availability_fraction(cfg, days * 86400.0, np.random.default_rng(seed), n_nodes)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("min_fraction", [0.5, 0.8])
def test_the_floor_keeps_enough_nodes_up_and_picks_them_at_random(seed, min_fraction):
    """Alone, a node is up 600 / (600 + 1800) = 25% of the time, so the floor binds at almost
    every step: which nodes it keeps up decides each node's uptime. Every node's uptime is
    then close to the mean (about 10,000 steps each), whatever its index."""
    f, up = onoff(min_fraction, seed)
    n_nodes = up.shape[0]
    assert (up.sum(axis=0) >= np.ceil(min_fraction * n_nodes)).all()
    np.testing.assert_array_equal(f, up.mean(axis=0))
    uptime = up.mean(axis=1)
    assert uptime.mean() >= min_fraction
    assert np.abs(uptime - uptime.mean()).max() < 0.05, uptime.round(2)


def test_the_floor_draws_from_the_episode_generator():
    """The same seed, the same node states; another seed, others."""
    a, b, c = onoff(0.5, 3)[1], onoff(0.5, 3)[1], onoff(0.5, 4)[1]
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()
