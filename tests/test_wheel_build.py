"""The wheels `pip install .` builds: compiled when it can be, pure when it cannot (setup.py,
buildsys/mrsched_gym_build.py).

The slow tests build from a copy of this checkout, install the wheel into a fresh venv (its
dependencies come from this interpreter's site-packages, added by a ``.pth`` file, so nothing is
downloaded but the build's own requirements) and run it there: the compiled wheel must run the
mypyc build and pass the fingerprint tests; with the C compiler hidden (``CC=/bin/false``) the
build must print its one line, make the pure wheel, and that wheel must install and run.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What a clean clone does not hold: build outputs, venvs and caches (the top-level ones only at
#: the top: mrsched_gym/results is a package).
TOP_LEVEL_SKIP = {".venv", ".git", "build", "dist", "results", "runs", "site"}
EVERYWHERE_SKIP = shutil.ignore_patterns("*.so", "*.pyd", "*.egg-info", "__pycache__",
                                         ".pytest_cache", ".hypothesis", "compiled_sources.json")


def skip(folder: str, names: list[str]) -> set[str]:
    top = TOP_LEVEL_SKIP.intersection(names) if Path(folder) == ROOT else set()
    return top | set(EVERYWHERE_SKIP(folder, names))


def backend():
    spec = importlib.util.spec_from_file_location("mrsched_gym_build",
                                                  ROOT / "buildsys" / "mrsched_gym_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mode, wheel, editable", [(None, True, False), ("0", False, False),
                                                    ("1", True, True)])
def test_the_backend_asks_for_mypy_only_to_compile(monkeypatch, mode, wheel, editable):
    monkeypatch.chdir(ROOT)
    if mode is None:
        monkeypatch.delenv("MRSCHED_GYM_COMPILE", raising=False)
    else:
        monkeypatch.setenv("MRSCHED_GYM_COMPILE", mode)
    module = backend()
    asks = [r for r in module.get_requires_for_build_wheel() if r.startswith("mypy")]
    asks_editable = [r for r in module.get_requires_for_build_editable()
                     if r.startswith("mypy")]
    assert asks == ([module.MYPY] if wheel else [])
    assert asks_editable == ([module.MYPY] if editable else [])


def copy_checkout(tmp_path: Path) -> Path:
    """A copy of this checkout as a clean clone holds it."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=skip)
    return src


def build_wheel(tmp_path: Path, env: dict[str, str]) -> tuple[Path, str]:
    """Build a wheel from a copy of the checkout; return it and the build's output."""
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w",
                          str(tmp_path / "dist"), str(copy_checkout(tmp_path))],
                         capture_output=True, text=True, env={**os.environ, **env}, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    return wheel, out.stdout + out.stderr


def fresh_venv(tmp_path: Path, target: Path) -> Path:
    """A new venv into which ``pip install --no-deps target`` (a wheel or a source tree) went,
    with its own pip; the dependencies come from this interpreter's site-packages through a
    ``.pth`` file. Return its python."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    out = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", str(target)],
                         capture_output=True, text=True, timeout=900,
                         env={k: v for k, v in os.environ.items()
                              if k != "MRSCHED_GYM_COMPILE"})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return python


def acceleration(python: Path, cwd: Path) -> tuple[str, str]:
    out = subprocess.run([str(python), "-c", "import mrsched_gym; "
                          "print(mrsched_gym.acceleration(), mrsched_gym.__file__)"],
                         capture_output=True, text=True, check=True, cwd=cwd)
    kind, where = out.stdout.split()
    return kind, where


@pytest.mark.slow
def test_pip_install_dot_compiles_and_plays_the_same_episodes(tmp_path):
    """The README's ``pip install .``, in a fresh venv: the compiled build, same fingerprints."""
    python = fresh_venv(tmp_path, copy_checkout(tmp_path))
    kind, where = acceleration(python, tmp_path)
    assert kind == "mypyc"
    assert Path(where).is_relative_to(tmp_path / "venv")
    tests = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "-p", "no:xdist", str(ROOT / "tests" / "test_fingerprint.py")],
                           capture_output=True, text=True, cwd=tmp_path)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.skipif(os.name == "nt", reason="hides the compiler with CC, as Unix builds read it")
def test_without_a_compiler_the_install_falls_back_to_pure_python(tmp_path):
    wheel, log = build_wheel(tmp_path, {"CC": "/bin/false"})
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    lines = [ln for ln in log.splitlines() if "mrsched-gym: building the pure-Python" in ln]
    assert len(lines) == 1 and "no working C compiler" in lines[0], lines
    python = fresh_venv(tmp_path, wheel)
    assert acceleration(python, tmp_path)[0] == "python"
    tests = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "-p", "no:xdist", str(ROOT / "tests" / "test_fingerprint.py"),
                            "-k", "Hadoop-v0"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert " passed" in tests.stdout


def test_the_readme_builds_a_checkout_in_place_as_ci_does():
    """The README's in-place recipe (its commands, in order) is the one `.ci/run` runs, and the
    release page gives the same line."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = ('pip install "setuptools>=77" "mypy>=2.0" && '
            "MRSCHED_GYM_COMPILE=1 python setup.py build_ext --inplace")
    assert line in readme
    assert line in (ROOT / "docs" / "release.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.index('pip install -q "setuptools>=77" "mypy>=2.0"') < ci.index(
        "MRSCHED_GYM_COMPILE=1 python setup.py -q build_ext --inplace")


def test_the_release_configuration_builds_compiled_wheels_for_every_supported_python():
    try:
        import tomllib
    except ModuleNotFoundError:                      # Python 3.10: mypy brings tomli
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    cibw = config["tool"]["cibuildwheel"]
    assert cibw["environment"] == {"MRSCHED_GYM_COMPILE": "1"}
    assert "acceleration() == 'mypyc'" in cibw["test-command"]
    assert "tests/test_fingerprint.py" in cibw["test-command"]
    claimed = {c.rsplit(" ", 1)[1] for c in config["project"]["classifiers"]
               if c.startswith("Programming Language :: Python :: 3.")}
    built = {b.split("-")[0] for b in cibw["build"]}
    assert {"cp" + v.replace(".", "") for v in claimed} <= built
    assert set(cibw) >= {"linux", "macos", "windows"}
