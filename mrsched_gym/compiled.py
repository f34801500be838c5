"""Whether the simulator runs compiled, and a guard against a stale compiled build.

A wheel build compiles the simulator and the observation encoder from the same source files
with mypyc where it can (``setup.py``; an editable install stays pure Python); the
C extensions it leaves next to the ``.py`` files are imported in their place. It also writes
:data:`MANIFEST`: the SHA-256 of each source it compiled. :func:`check_compiled` (run when this
module is imported, the package's first import) refuses a compiled module whose source has
changed since, so an edited ``.py`` file is never silently shadowed by an older build.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
from pathlib import Path

#: Written by the compiled build: ``{source path relative to the package's parent: sha256}``.
MANIFEST = Path(__file__).with_name("compiled_sources.json")
_PACKAGE = Path(__file__).resolve().parent
#: Package folders kept outside ``mrsched_gym/`` in a checkout (pyproject's
#: ``[tool.setuptools.package-dir]``; ``setup.py``'s ``MAPPED_FOLDERS``): where a compiled
#: module of the manifest is found when its package path is not there.
MAPPED_FOLDERS = {"mrsched_gym/baselines/": "baselines/"}


def _extension_of(source: Path) -> Path | None:
    """The compiled extension next to ``source`` (``engine.py`` -> ``engine.cpython-...so``)."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        ext = source.with_name(source.stem + suffix)
        if ext.exists():
            return ext
    return None


def _source_of(rel: str, root: Path) -> Path:
    """The source file of the manifest's ``rel`` under ``root`` (the package's parent): at its
    package path in an install, in its mapped folder in a checkout."""
    source = root / rel
    if not source.exists():
        for package, folder in MAPPED_FOLDERS.items():
            if rel.startswith(package):
                return root / (folder + rel[len(package):])
    return source


def acceleration(package: Path = _PACKAGE) -> str:
    """``"mypyc"`` if the simulator's event loop is a compiled extension, else ``"python"``."""
    return "mypyc" if _extension_of(package / "sim" / "engine.py") is not None else "python"


def check_compiled(package: Path = _PACKAGE) -> None:
    """Raise ``ImportError`` if a compiled module's source (in ``package``, this package by
    default) differs from the one it was built from, or if compiled modules are present without
    the build's manifest; a pure-Python install passes at the cost of a few ``stat`` calls."""
    if acceleration(package) == "python":
        return
    how = ("rebuild it (MRSCHED_GYM_COMPILE=1 python setup.py build_ext --inplace in a "
           "checkout, pip install --force-reinstall --no-deps . for an install) or remove the "
           "compiled files (every mrsched_gym/**/*.so and mrsched_gym/compiled_sources.json) to "
           "run the pure-Python simulator")
    manifest = package / MANIFEST.name
    if not manifest.exists():
        raise ImportError(f"compiled simulator modules without {MANIFEST.name}: {how}")
    built = json.loads(manifest.read_text(encoding="utf-8"))
    for rel, digest in built.items():
        source = _source_of(rel, package.parent)
        if source.exists() and _extension_of(source) is not None and \
                hashlib.sha256(source.read_bytes()).hexdigest() != digest:
            raise ImportError(f"the compiled build of {rel} is stale: the source changed "
                              f"since it was compiled; {how}")


check_compiled()
