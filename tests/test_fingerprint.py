"""The simulator's behaviour is pinned: episodes and observations hash to golden values.

The golden hashes (``tests/data/fingerprints.json``) were made by ``tools/make_fingerprints.py``
before the engine refactor (issue 13); a refactor that moves code must keep every one of them.
A deliberate behaviour change regenerates the file (``python tools/make_fingerprints.py``) and
says so in its commit.
"""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("make_fingerprints",
                                               ROOT / "tools" / "make_fingerprints.py")
fp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fp)

GOLDEN = json.loads(fp.GOLDEN.read_text())
CASES = fp.cases()


def test_the_golden_file_covers_every_case():
    assert sorted(GOLDEN) == sorted(CASES)
    assert len(CASES) > 100


@pytest.mark.parametrize("label", sorted(CASES))
def test_fingerprint(label):
    fn, args = CASES[label]
    assert fn(*args) == GOLDEN[label], f"{label}: behaviour changed"
