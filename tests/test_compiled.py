"""The optional compiled build's guard (mrsched_gym/compiled.py): a compiled module whose source
changed since the build, or compiled modules without the build's manifest, refuse to import;
a tree without compiled modules passes. The build itself (setup.py, mypyc) and the fingerprints
under it run in .ci/run."""

from __future__ import annotations

import hashlib
import importlib.machinery
import json

import pytest

from mrsched_gym.compiled import acceleration, check_compiled


def _tree(tmp_path, compiled: bool, manifest: bool = True):
    pkg = tmp_path / "mrsched_gym"
    (pkg / "sim").mkdir(parents=True)
    source = pkg / "sim" / "engine.py"
    source.write_text("X = 1\n")
    if compiled:
        (pkg / "sim" / f"engine{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
        if manifest:
            digest = hashlib.sha256(source.read_bytes()).hexdigest()
            (pkg / "compiled_sources.json").write_text(
                json.dumps({"mrsched_gym/sim/engine.py": digest}))
    return pkg, source


def test_a_pure_tree_passes(tmp_path):
    pkg, _ = _tree(tmp_path, compiled=False)
    assert acceleration(pkg) == "python"
    check_compiled(pkg)


def test_a_fresh_build_passes_and_an_edited_source_fails(tmp_path):
    pkg, source = _tree(tmp_path, compiled=True)
    assert acceleration(pkg) == "mypyc"
    check_compiled(pkg)
    source.write_text("X = 2\n")
    with pytest.raises(ImportError, match=r"mrsched_gym/sim/engine.py is stale.*rebuild"):
        check_compiled(pkg)


def test_compiled_modules_without_the_manifest_fail(tmp_path):
    pkg, _ = _tree(tmp_path, compiled=True, manifest=False)
    with pytest.raises(ImportError, match="without compiled_sources.json"):
        check_compiled(pkg)


def test_this_install_reports_its_build():
    assert acceleration() in ("python", "mypyc")


def test_a_mapped_folders_compiled_module_is_checked_at_its_own_file(tmp_path):
    """In a checkout the baselines live in ``baselines/`` beside the package (pyproject's
    package-dir), and a compiled baseline's extension lands there: the manifest names it by its
    package path, and the guard reads the file where it is."""
    pkg, _ = _tree(tmp_path, compiled=True)
    folder = tmp_path / "baselines"
    folder.mkdir()
    source = folder / "ras.py"
    source.write_text("Y = 1\n")
    (folder / f"ras{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    built = json.loads((pkg / "compiled_sources.json").read_text())
    built["mrsched_gym/baselines/ras.py"] = hashlib.sha256(source.read_bytes()).hexdigest()
    (pkg / "compiled_sources.json").write_text(json.dumps(built))
    check_compiled(pkg)
    source.write_text("Y = 2\n")
    with pytest.raises(ImportError, match=r"mrsched_gym/baselines/ras.py is stale"):
        check_compiled(pkg)


def test_the_mapped_folders_are_pyprojects():
    """setup.py (which makes the folder reachable for mypyc and hashes its files) and the
    guard know the same mapped folders as pyproject's ``[tool.setuptools.package-dir]``, and
    every compiled module is a file of the checkout."""
    import ast
    from pathlib import Path
    try:
        import tomllib
    except ModuleNotFoundError:                        # Python 3.10: mypy brings tomli
        import tomli as tomllib

    from mrsched_gym import compiled
    root = Path(__file__).resolve().parents[1]
    dirs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"]
    tree = ast.parse((root / "setup.py").read_text())
    consts = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign)
              for t in n.targets if isinstance(t, ast.Name)}
    setup_mapped = ast.literal_eval(consts["MAPPED_FOLDERS"])
    assert setup_mapped == compiled.MAPPED_FOLDERS
    for package, folder in setup_mapped.items():
        assert dirs[package.rstrip("/").replace("/", ".")] == folder.rstrip("/")
    for module in ast.literal_eval(consts["BASELINES_COMPILED"]):
        package = next(p for p in setup_mapped if module.startswith(p))
        assert (root / setup_mapped[package] / module[len(package):]).is_file(), module
