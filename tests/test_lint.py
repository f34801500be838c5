"""The code habits gate: ruff (pyflakes, pycodestyle, bugbear, pyupgrade, import order) is clean
and the simulator type-checks under mypy --strict.

The rules live in pyproject.toml (``[tool.ruff]``, ``[tool.mypy]``); both tools come with the test
extra.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff") or pytest.fail("ruff is part of the test extra: pip install "
                                               "'mrsched-gym[test]'")
    out = subprocess.run([ruff, "check", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_simulator_type_checks_strictly():
    mypy = shutil.which("mypy") or pytest.fail("mypy is part of the test extra")
    out = subprocess.run([mypy, "mrsched_gym/sim/"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_no_private_names_imported_across_modules_in_new_code():
    """The results, claims, benchmark and numpy-policy modules use only public names of others."""
    for rel in ("mrsched_gym/results.py", "mrsched_gym/claims.py", "mrsched_gym/benchmark.py",
                "agents/numpy_policy.py", "mrsched_gym/evaluate.py", "mrsched_gym/cli.py"):
        text = (ROOT / rel).read_text()
        for line in text.splitlines():
            s = line.strip()
            if s.startswith(("from mrsched_gym", "import mrsched_gym")) and " import " in s:
                names = s.split(" import ", 1)[1].replace("(", "").replace(")", "")
                private = [n.strip() for n in names.split(",")
                           if n.strip().startswith("_") and not n.strip().startswith("__")]
                assert not private, (rel, s)
    assert sys.version_info >= (3, 10)
