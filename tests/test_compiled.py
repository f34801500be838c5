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
