"""The import paths of modules that moved in 0.4.0 keep working (mrsched_gym/old_names.py), and
every import path the README, the docs site and the changelog show resolves."""

import importlib
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mrsched_gym
from mrsched_gym.old_names import MOVED

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_name_imports_the_moved_module_itself(old):
    new = MOVED[old]
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == new and module.__spec__.name == new   # its own spec, kept


def test_every_old_name_is_gone_from_its_old_place_and_moved_to_a_real_module():
    for old, new in MOVED.items():
        parent, _, leaf = old.rpartition(".")
        folder = Path(importlib.import_module(parent).__file__).parent
        assert not (folder / f"{leaf}.py").exists() and not (folder / leaf).is_dir(), old
        assert importlib.util.find_spec(new).origin is not None, new


def test_from_imports_and_attribute_access_of_old_names():
    from mrsched_gym import policies
    from mrsched_gym.agents import train_config
    assert policies.RulePolicy is mrsched_gym.RulePolicy
    assert train_config.__name__ == "mrsched_gym.agents.training.train_config"


def test_a_pickle_that_names_an_old_module_loads():
    from mrsched_gym.policy.policy_actions import PolicyActionError
    data = pickle.dumps(PolicyActionError, protocol=0)     # names as text lines
    old = data.replace(b"mrsched_gym.policy.policy_actions", b"mrsched_gym.policy_actions")
    assert old != data
    assert pickle.loads(old) is PolicyActionError


def test_python_dash_m_runs_an_old_name():
    out = subprocess.run([sys.executable, "-m", "mrsched_gym.agents.plain_ppo", "--help"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "usage:" in out.stdout


def test_an_unknown_name_still_fails_to_import():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("mrsched_gym.no_such_module")


def _resolves(path: str) -> bool:
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return False
        return True
    return False


#: Dotted names in the docs that are not import paths: the entry point group of agent kinds.
NOT_PATHS = {"mrsched_gym.agent_kinds"}


def test_every_import_path_in_the_readme_the_docs_and_the_changelog_resolves():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert ROOT / "docs" / "changelog.md" in files
    found = {}
    for f in files:
        text = f.read_text()
        for m in re.finditer(r"(?<![\w/.-])mrsched_gym(?:\.[A-Za-z_]\w*)+", text):
            found[m.group(0)] = f.name
        for m in re.finditer(r"^\s*from (mrsched_gym[\w.]*) import (?:\(([^)]*)\)|(.*)$)",
                             text, re.M):
            names = (m.group(2) or m.group(3)).split("#")[0]
            for item in names.split(","):
                if item.split():
                    found[f"{m.group(1)}.{item.split()[0]}"] = f.name
    assert len(found) > 60
    bad = {p: f for p, f in found.items() if p not in NOT_PATHS and not _resolves(p)}
    assert bad == {}
    assert not _resolves("mrsched_gym.policies.NoSuchName")       # the check can fail
