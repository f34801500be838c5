import importlib.util
import os
from pathlib import Path

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


@pytest.fixture(scope="module")
def cal(request):
    """The calibration script ``tools/<CALIBRATION>.py`` that the test module names in its
    ``CALIBRATION``, loaded as a module (the code path the calibration fits with)."""
    name = getattr(request.module, "CALIBRATION", None)
    if name is None:
        pytest.fail(f"{request.module.__name__} uses the calibration fixtures but names no "
                    "CALIBRATION script")
    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).resolve().parents[1] / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def scenario(cal):
    """The base scenario of the calibration script's reproduction (its cluster and jobs)."""
    return cal.base_scenario(cal.REPRODUCTION)


@pytest.fixture(scope="module")
def jobs(scenario):
    """The jobs of the calibration script's reproduction, by label."""
    return {s.label: s for s in scenario.workload.jobs}
