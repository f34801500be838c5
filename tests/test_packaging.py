"""Packaging: one version, the licence, the typing marker, the data files, and product wording."""

import importlib.metadata as md
import re
from importlib.resources import files
from pathlib import Path

import pytest

import mrsched_gym
from mrsched_gym.cli import main

DIST = "mrsched-gym"
ROOT = Path(__file__).resolve().parents[1]          # the checkout (or the unpacked sdist)
# A reference to an internal work item (the word "issue" or "issues", then a number, "#" optional)
# rather than to the product.
WORK_ITEM = re.compile(r"\bissues?\s+#?\d", re.IGNORECASE)
# The installed packages: mrsched_gym itself and the folders mapped into it (pyproject package-dir).
PACKAGES = ("mrsched_gym", "mrsched_gym.baselines", "mrsched_gym.agents", "mrsched_gym.configs")


def test_installed_version_is_the_package_version():
    assert md.version(DIST) == mrsched_gym.__version__


def test_pyproject_reads_the_version_from_the_package():
    tomllib = pytest.importorskip("tomllib")
    if not (ROOT / "pyproject.toml").exists():
        pytest.skip("not a source checkout")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in cfg["project"]
    assert "version" in cfg["project"]["dynamic"]
    assert cfg["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "mrsched_gym.__version__"}


def test_every_subpackage_is_listed_for_the_wheel():
    """The wheel takes the packages pyproject lists (no discovery): a new subpackage missing
    there would be left out of every install but an editable one."""
    tomllib = pytest.importorskip("tomllib")
    if not (ROOT / "pyproject.toml").exists():
        pytest.skip("not a source checkout")
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
                 ["tool"]["setuptools"]["packages"])
    found = {".".join(("mrsched_gym", *p.parent.relative_to(ROOT / "mrsched_gym").parts))
             for p in (ROOT / "mrsched_gym").rglob("__init__.py")}
    assert found <= listed, f"not in [tool.setuptools] packages: {sorted(found - listed)}"


def test_cli_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"mrsched-gym {mrsched_gym.__version__}"


@pytest.mark.parametrize("package", ["mrsched_gym", "mrsched_gym.baselines", "mrsched_gym.agents"])
def test_py_typed_marker(package):
    assert files(package).joinpath("py.typed").is_file()


def test_package_data_is_installed():
    configs = files("mrsched_gym.configs")
    for sub in ("scenarios", "reproductions", "agents"):
        assert any(p.name.endswith(".yaml") for p in configs.joinpath(sub).iterdir()), sub
    traces = files("mrsched_gym.data").joinpath("traces")
    assert traces.joinpath("ATTRIBUTION.md").is_file()
    assert any(p.name.endswith(".csv.gz") for p in traces.iterdir())
    pretrained = {p.name for p in files("mrsched_gym.agents").joinpath("pretrained").iterdir()}
    assert {"hadoop-v0.zip", "hadoop-v0.json"} <= pretrained


def test_licence():
    meta = md.metadata(DIST)
    assert meta["License-Expression"] == "Apache-2.0"
    assert "LICENSE" in (meta.get_all("License-File") or [])
    candidates = [ROOT / "LICENSE"] + [Path(md.distribution(DIST).locate_file(f))
                                       for f in md.files(DIST) or () if f.name == "LICENSE"]
    texts = [p.read_text(encoding="utf-8") for p in candidates if p.is_file()]
    assert texts, "no LICENSE file in the checkout or the installed distribution"
    assert all("Apache License" in t and "Version 2.0, January 2004" in t for t in texts)


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 0
    return capsys.readouterr().out


def test_cli_help_speaks_of_the_product(capsys):
    top = _help(["--help"], capsys)
    commands = re.search(r"\{([\w,-]+)\}", top)
    assert commands, top
    texts = {"mrsched-gym --help": top}
    for cmd in commands.group(1).split(","):
        texts[f"mrsched-gym {cmd} --help"] = _help([cmd, "--help"], capsys)
    bad = {name: WORK_ITEM.findall(t) for name, t in texts.items() if WORK_ITEM.search(t)}
    assert not bad, f"work-item references in help texts: {bad}"


def test_package_sources_speak_of_the_product():
    bad = []
    for package in PACKAGES:
        root = Path(str(files(package)))
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".py", ".yaml", ".md") or "__pycache__" in path.parts:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if WORK_ITEM.search(line):
                    bad.append(f"{path}:{n}: {line.strip()}")
    assert not bad, "work-item references in the package:\n" + "\n".join(bad)


def test_docs_hold_no_error_output():
    """A table pasted from a command that failed (a traceback where the table should be) is
    caught here rather than by a reader."""
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    bad = [f"{p.name}:{n}" for p in docs if p.is_file()
           for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if line.startswith("Traceback (most recent call last)")]
    assert not bad, f"error output pasted into the docs: {bad}"


def test_every_subpackage_is_in_the_pyproject_package_list():
    """A folder with an ``__init__.py`` under the package's folders is listed in pyproject's
    ``[tool.setuptools] packages`` (else a wheel leaves it out while an editable install still
    finds it)."""
    tomllib = pytest.importorskip("tomllib")
    if not (ROOT / "pyproject.toml").exists():
        pytest.skip("not a source checkout")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    listed = set(cfg["setuptools"]["packages"])
    folders = {"mrsched_gym": "mrsched_gym", **{v: k for k, v in
                                                cfg["setuptools"]["package-dir"].items()}}
    found = set()
    for folder, package in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *parts)))
    assert found - listed == set(), f"subpackages missing from pyproject: {found - listed}"
    assert "mrsched_gym.agents.research" in found


def test_no_source_of_the_package_is_ignored_by_git():
    """A source folder matched by a ``.gitignore`` pattern (``results/`` once hid the
    ``mrsched_gym/results`` package) is never committed: a clean clone would miss it. The
    compiled build's manifest (``mrsched_gym/compiled.py``'s ``MANIFEST``, written by
    ``setup.py`` in a checkout built in place) is a build output, ignored on purpose."""
    import shutil
    import subprocess

    from mrsched_gym.compiled import MANIFEST
    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    sources = [str(p.relative_to(root)) for folder in ("mrsched_gym", "baselines", "agents",
                                                       "configs", "tests", "docs")
               for p in (root / folder).rglob("*")
               if p.is_file() and p.suffix in (".py", ".yaml", ".json", ".md", ".gz", ".csv")
               and "__pycache__" not in p.parts and p.resolve() != MANIFEST.resolve()]
    out = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=root,
                         input="\n".join(sources), capture_output=True, text=True)
    assert out.stdout.split() == []
