"""Ids are versioned as Gymnasium means it: an id whose dynamics, observation or reward change
gets a new version (the old one stays registered), or the change is named in the changelog.

``tests/data/id_fingerprints.json`` holds one fingerprint per registered id (a seeded random
walk's observations, rewards and flags). When an id's fingerprint changes, this test fails
unless docs/changelog.md's Unreleased section names the id. Regenerate on purpose with
``python tests/test_versions.py --write`` (and say why in the commit).
"""

import hashlib
import json
import re
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import mrsched_gym  # noqa: F401
from mrsched_gym.config.env_ids import EARLIER_IDS, ENV_IDS, VERSION_HISTORY
from mrsched_gym.env.flat import base_id
from mrsched_gym.registration import FLAT_IDS

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "id_fingerprints.json"
CHANGELOG = ROOT / "docs" / "changelog.md"
IDS = sorted([*ENV_IDS, *EARLIER_IDS, *FLAT_IDS])
SMALL = {"mrsched/ThesisScale-v0": {"workload__duration_s": 3600.0, "time_limit_s": 7200.0}}
STEPS = 150


def id_fingerprint(env_id: str) -> str:
    """SHA-256 of a seeded random walk on ``env_id``: each observation's bytes, reward and
    flags, and the last step's metrics when the walk ends the episode."""
    env = gym.make(env_id, **SMALL.get(base_id(env_id), {}))
    h = hashlib.sha256()
    rng = np.random.default_rng(11)

    def feed(obs) -> None:
        for k in sorted(obs) if isinstance(obs, dict) else [None]:
            h.update(np.ascontiguousarray(obs[k] if k else obs).tobytes())

    obs, _ = env.reset(seed=5)
    feed(obs)
    for _ in range(STEPS):
        if isinstance(env.observation_space, gym.spaces.Dict):
            a = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
        else:
            a = int(rng.integers(env.action_space.n))
        obs, r, te, tr, info = env.step(a)
        feed(obs)
        h.update(np.float64(r).tobytes() + bytes([te, tr]))
        if te or tr:
            h.update(json.dumps(info["metrics"], sort_keys=True, default=str).encode())
            break
    env.close()
    return h.hexdigest()


def unreleased_text() -> str:
    text = CHANGELOG.read_text()
    m = re.search(r"^## \[Unreleased\]$(.*?)^## \[", text, re.M | re.S)
    return m.group(1) if m else ""


def unexplained_changes(current: dict, golden: dict, unreleased: str) -> list[str]:
    """The ids whose fingerprint differs from the golden one and that the Unreleased section
    of the changelog does not name (a new id, absent from the golden file, is not a change)."""
    return sorted(i for i, fp in current.items()
                  if i in golden and golden[i] != fp and f"`{i}`" not in unreleased)


def test_the_golden_file_covers_every_registered_id():
    assert sorted(json.loads(GOLDEN.read_text())) == IDS


@pytest.mark.parametrize("env_id", IDS)
def test_an_id_changes_only_with_a_new_version_or_a_changelog_line(env_id):
    golden = json.loads(GOLDEN.read_text())
    bad = unexplained_changes({env_id: id_fingerprint(env_id)}, golden, unreleased_text())
    assert not bad, (f"{env_id}: its dynamics, observation or reward changed. Register the "
                     f"next version (mrsched_gym/config/env_ids.py: keep the old one in "
                     f"EARLIER_IDS, say what changed in VERSION_HISTORY), or name `{env_id}` "
                     f"in docs/changelog.md's Unreleased section; then run "
                     f"python tests/test_versions.py --write")


def test_the_check_catches_an_unexplained_change():
    golden = {"mrsched/A-v0": "x", "mrsched/B-v0": "y", "mrsched/C-v0": "z"}
    current = {"mrsched/A-v0": "x", "mrsched/B-v0": "changed", "mrsched/C-v0": "changed",
               "mrsched/New-v0": "new"}
    assert unexplained_changes(current, golden, "- `mrsched/C-v0`: reward fixed") == [
        "mrsched/B-v0"]


def test_earlier_versions_keep_their_world_and_differ_in_reward():
    """Shared-v0 / Admission-v0 are v1's worlds with the 0.4.0 reward weights."""
    for old, (_, overrides) in EARLIER_IDS.items():
        head, _, version = old.rpartition("-v")
        newer = [i for i in ENV_IDS if i.rpartition("-v")[0] == head]
        assert newer and all(int(i.rpartition("-v")[2]) > int(version) for i in newer)
        a, b = gym.make(old), gym.make(newer[0])
        oa, _ = a.reset(seed=0)
        ob, _ = b.reset(seed=0)
        assert all(np.array_equal(oa[k], ob[k]) for k in oa)
        assert dict(a.unwrapped.scenario.reward.weights) == overrides["reward.weights"]
        assert dict(b.unwrapped.scenario.reward.weights) == {"deadline": 1.0}


def test_version_history_names_each_version():
    for env_id, lines in VERSION_HISTORY.items():
        assert env_id in ENV_IDS
        version = int(env_id.rpartition("-v")[2])
        assert [ln.split(" ", 1)[0] for ln in lines] == [f"v{v}" for v in
                                                         range(version, -1, -1)]


if __name__ == "__main__" and "--write" in sys.argv:
    GOLDEN.write_text(json.dumps({i: id_fingerprint(i) for i in IDS}, indent=1) + "\n")
    print(f"wrote {GOLDEN}")
