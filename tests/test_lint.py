"""The code habits gate: ruff (pyflakes, pycodestyle, bugbear, pyupgrade, import order, and
Google-style docstrings on the public API) is clean, the simulator, the config, the harness
(evaluate/) and the step's helpers type-check under mypy --strict (the modules pyproject.toml's
overrides make strict), and no module uses another module's private names.

The rules live in pyproject.toml (``[tool.ruff]``, ``[tool.mypy]``); both tools come with the test
extra.
"""

import ast
import importlib.util
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The folders that install as the package and its subpackages (pyproject [tool.setuptools]).
PACKAGE_DIRS = {"mrsched_gym": "mrsched_gym", "baselines": "mrsched_gym.baselines",
                "agents": "mrsched_gym.agents", "configs": "mrsched_gym.configs"}


def _tool(name: str) -> str:
    """The tool installed next to this interpreter (an unactivated venv), else the one on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    return found or pytest.fail(f"{name} is part of the test extra: pip install "
                                "'mrsched-gym[test]'")


def test_ruff_finds_nothing():
    out = subprocess.run([_tool("ruff"), "check", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def strict_paths() -> list[str]:
    """The files and folders of every module pyproject.toml's mypy overrides make strict."""
    try:
        import tomllib
    except ModuleNotFoundError:                        # Python 3.10: mypy brings tomli
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    paths = []
    for override in config["tool"]["mypy"]["overrides"]:
        if override.get("strict"):
            modules = override["module"]
            for module in [modules] if isinstance(modules, str) else modules:
                stem = module.removesuffix(".*").replace(".", "/")
                path = stem + "/" if module.endswith(".*") else stem + ".py"
                assert (ROOT / path).exists(), f"strict module {module} has no {path}"
                paths.append(path)
    return paths


def test_the_strict_modules_type_check_strictly():
    """The simulator, the config, the harness and the step's compiled helpers (the overrides
    with ``strict = true``) type-check under mypy --strict."""
    paths = strict_paths()
    assert {"mrsched_gym/sim/", "mrsched_gym/config/", "mrsched_gym/evaluate/",
            "mrsched_gym/env/job_row.py", "mrsched_gym/env/float_writer.py"} <= set(paths)
    out = subprocess.run([_tool("mypy"), *paths], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _first_party(module: str) -> bool:
    return module == "mrsched_gym" or module.startswith("mrsched_gym.")


def private_names_used_across_modules(source: str, module: str,
                                      is_package: bool = False) -> list[str]:
    """The private names of other first-party modules that ``source`` (module ``module``) uses.

    Caught: ``from m import _x`` (also parenthesised over several lines, and relative), and
    ``m._x`` where ``m`` is a name an ``import`` bound to a first-party module or name
    (``import mrsched_gym.evaluate.leaderboard as lb; lb._figure``, ``from ...workloads import
    synthetic; synthetic._make``). Dunder names (``__version__``) are public; third-party names are
    not checked.

    Returns:
        One ``"line: what"`` entry per use.
    """
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    bound: set[str] = set()          # names bound by first-party imports
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _first_party(alias.name):
                    bound.add(alias.asname or alias.name.partition(".")[0])
        elif isinstance(node, ast.ImportFrom):
            name = "." * node.level + (node.module or "")
            source_module = importlib.util.resolve_name(name, package) if node.level else name
            if not _first_party(source_module) or source_module == module:
                continue
            for alias in node.names:
                bound.add(alias.asname or alias.name)
                if _is_private(alias.name):
                    hits.append(f"{node.lineno}: from {name} import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in bound:
                hits.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(hits, key=lambda h: int(h.partition(":")[0]))


def package_modules() -> list[tuple[Path, str]]:
    """``(path, dotted module name)`` of every source file the package installs."""
    out = []
    for folder, package in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            out.append((path, ".".join((package, *parts)).removesuffix(".__init__")))
    return out


def test_no_private_names_used_across_modules():
    """Every module of mrsched_gym, baselines/ and agents/ uses only public names of the others."""
    modules = package_modules()
    assert len(modules) > 40
    bad = [f"{path.relative_to(ROOT)}:{hit}" for path, module in modules
           for hit in private_names_used_across_modules(path.read_text(encoding="utf-8"), module,
                                                        path.name == "__init__.py")]
    assert not bad, "private names used across modules:\n" + "\n".join(bad)


def test_the_private_name_check_catches_cross_module_uses():
    source = textwrap.dedent("""\
        import numpy as np
        import mrsched_gym.evaluate.leaderboard as lb
        from mrsched_gym import __version__
        from mrsched_gym.workloads import trace
        from mrsched_gym.workloads.synthetic import (
            JobDraw,
            _make,
        )
        from .synthetic import _lognormal
        from mrsched_gym.workloads.profiles import _not_called_here as fine_for_itself

        lb._figure(7, 4)
        trace._job_trace("x").shape
        np._private_but_not_ours
        self._own = _make
        import mrsched_gym.env.render
        mrsched_gym.env.render._hidden
    """)
    hits = private_names_used_across_modules(source, "mrsched_gym.workloads.profiles")
    assert [h.split(":")[0] for h in hits] == ["5", "9", "12", "13", "17"], hits
    assert "from mrsched_gym.workloads.synthetic import _make" in hits[0]
    assert "from .synthetic import _lognormal" in hits[1]
