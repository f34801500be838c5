import os

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import mrsched_gym  # noqa: E402,F401  (registers the ids)


class MaskRecorder:
    """An agent that records the masks it is given and takes the first legal action (for the
    tests of the delegates that narrow an agent's mask)."""

    name = "agent:recorder"

    def reset(self, sim, seed=None):
        self.masks = []

    def act(self, obs, mask):
        self.masks.append(mask.copy())
        return int(np.flatnonzero(mask)[0])


@pytest.fixture
def recorder():
    """A fresh :class:`MaskRecorder` (set ``masked = False`` on it for an agent that ignores
    masks)."""
    return MaskRecorder()
