"""The simulator's compiled build (the package's metadata is in pyproject.toml).

The modules of :data:`COMPILED` are compiled with mypyc from the same source files into C
extensions, which Python imports in place of the ``.py`` files; the floats, records and
observations are the same (``tests/test_fingerprint.py`` passes either way).
``mrsched_gym.acceleration()`` says which one runs; the build also writes
``mrsched_gym/compiled_sources.json`` (each compiled source's SHA-256), and importing the package
refuses a compiled module whose source has changed since (``mrsched_gym/compiled.py``). The
compiled modules import librt (mypyc's run-time library, which mypy brings) when they load.

``MRSCHED_GYM_COMPILE`` chooses, as ``MYPY_USE_MYPYC`` does for mypy's own build:

* unset (the default): a wheel (``pip install .``, ``pip wheel .``, ``python -m build``) is
  compiled when it can be: mypy >= 2.0 importable in the build environment (the build backend,
  ``buildsys/mrsched_gym_build.py``, asks for it where mypy and librt have binary wheels) and a
  C compiler that works. Otherwise the build prints one line saying why and makes the
  pure-Python wheel; it never fails for want of either. An editable install stays pure.
* ``1``: compiled or the build fails (release wheels, ``build_ext --inplace`` in a checkout).
* ``0``: pure Python (the pure wheel of a release).

Commands::

    pip install .                                                   # compiled where it can be
    MRSCHED_GYM_COMPILE=1 python setup.py build_ext --inplace        # a checkout, in place
"""

import hashlib
import json
import os
import re
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

#: Package folders that live outside ``mrsched_gym/`` in a checkout (pyproject's
#: ``[tool.setuptools.package-dir]``): the package path a module has in the wheel -> its file.
MAPPED_FOLDERS = {"mrsched_gym/baselines/": "baselines/"}
#: The baselines whose own decision code is most of a run's time (the thesis ch. 5
#: reproduction): RAS's utilities and Reverse-Adaptive's per-node fitting.
BASELINES_COMPILED = ["mrsched_gym/baselines/common.py", "mrsched_gym/baselines/ras.py",
                      "mrsched_gym/baselines/reverse_adaptive.py"]
#: The modules compiled: the simulator (mypy-strict), the observation encoder, its layout, its
#: cached candidate rows, the rewards and the steps, the flat variants' included
#: (``sim/__init__.py``, a docstring, stays Python: mypyc sets a compiled package's path wrongly
#: in this layout).
COMPILED = sorted(str(p) for p in Path("mrsched_gym/sim").glob("*.py")
                  if p.name not in ("__init__.py", "log.py")) + ["mrsched_gym/env/encoding.py",
                                                 "mrsched_gym/env/env_step.py",
                                                 "mrsched_gym/env/flat_step.py",
                                                 "mrsched_gym/env/rewards.py",
                                                 "mrsched_gym/env/obs_layout.py",
                                                 "mrsched_gym/env/node_rows.py",
                                                 "mrsched_gym/env/job_row.py",
                                                 "mrsched_gym/policy/rule_adapter.py",
                                                 "mrsched_gym/policy/guard.py",
                                                 *BASELINES_COMPILED]
MANIFEST = "mrsched_gym/compiled_sources.json"
#: The oldest mypy the build needs: mypy 1.x allows librt < 0.10, whose ``librt.strings`` is empty
#: at run time, so the compiled observation writes (``float_writer.py``'s ``BytesWriter`` and
#: ``write_f32_le``, compiled to stores) could not import; 2.0 requires librt >= 0.10. Built and
#: tested with 2.0.0 and 2.4.1 (tests/test_fingerprint.py passes). Since 1.19 mypyc also routes a
#: native class's ``__setattr__`` / ``__delattr__`` through the type's slot (python/mypy#19937,
#: #19997), on which ``Decision`` relies to stay immutable.
MIN_MYPY = (2, 0)
#: The mypy configuration of the build: pyproject's ``[tool.mypy]`` without pydantic's plugin
#: (the build environment need not hold pydantic, nor any run-time dependency: what it lacks is
#: typed ``Any``). The plugin types only the config's sections, which are not compiled.
BUILD_MYPY_CONFIG = "[mypy]\nignore_missing_imports = True\nfollow_imports = silent\n"
#: The commands that build the extensions (the metadata steps, egg_info and dist_info, do not).
BUILD_COMMANDS = {"bdist_wheel", "build", "build_ext", "install", "editable_wheel", "develop"}


def say(line: str) -> None:
    """One line on stderr (pip shows it with ``-v``; ``python -m build`` always)."""
    print(f"mrsched-gym: {line}", file=sys.stderr, flush=True)


def why_not_compiled() -> str | None:
    """Why this build cannot compile (``None`` if it can): mypy missing or too old, or no C
    compiler that builds a trivial extension source against this Python's headers."""
    try:
        from mypy.version import __version__ as mypy_version
    except ImportError:
        return "mypy is not installed in the build environment"
    if tuple(int(x) for x in re.findall(r"\d+", mypy_version)[:2]) < MIN_MYPY:
        return f"mypy {mypy_version} is older than {'.'.join(map(str, MIN_MYPY))}"
    from distutils.ccompiler import new_compiler
    from distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "probe.c")
        source.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
        try:
            compiler.compile([str(source)], output_dir=tmp,
                             include_dirs=[sysconfig.get_paths()["include"]])
        except Exception as exc:          # CompileError, DistutilsExecError, a missing program
            return f"no working C compiler ({type(exc).__name__})"
    return None


def source_file(module_path: str) -> Path:
    """The file of a compiled module given by its package path (:data:`MAPPED_FOLDERS`)."""
    for package, folder in MAPPED_FOLDERS.items():
        if module_path.startswith(package) and not Path(package).is_dir():
            return Path(folder + module_path[len(package):])
    return Path(module_path)


def reach_mapped_folders() -> list[Path]:
    """Make each mapped folder reachable under its package path for mypyc, which names a
    module by its path (``mrsched_gym/baselines/ras.py`` is ``mrsched_gym.baselines.ras``): a
    symbolic link, or a copy where links cannot be made. Returns what it made (to remove)."""
    made = []
    for package, folder in MAPPED_FOLDERS.items():
        path = Path(package.rstrip("/"))
        if path.exists() or path.is_symlink():
            continue
        try:
            path.symlink_to(Path("..", folder.rstrip("/")), target_is_directory=True)
        except OSError:                       # e.g. Windows without the right to make links
            shutil.copytree(folder, path)
        made.append(path)
    return made


def compiled_extensions(mode: str) -> list:
    """The extensions to build: mypyc's for ``mode`` ``"1"``, or ``"auto"`` when it can, or none."""
    if mode == "auto":
        reason = why_not_compiled()
        if reason is not None:
            say(f"building the pure-Python simulator: {reason} (same episodes, slower; "
                "mrsched_gym.acceleration() says which build runs)")
            return []
    elif (reason := why_not_compiled()) is not None and reason.startswith("mypy"):
        raise SystemExit(f"MRSCHED_GYM_COMPILE=1: {reason}: pip install -U 'mypy>={MIN_MYPY[0]}.0'")
    from mypyc.build import mypycify

    with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as config:
        config.write(BUILD_MYPY_CONFIG)
    made = reach_mapped_folders()
    try:
        extensions = mypycify([f"--config-file={config.name}", *COMPILED], opt_level="3",
                              group_name="mrsched_gym._compiled")
    finally:
        os.unlink(config.name)
        for path in made:                     # the C sources are written: the link can go
            if path.is_symlink():
                path.unlink()
            else:
                shutil.rmtree(path)
    if os.name != "nt":      # no fused multiply-adds: the same floats as the interpreter's
        for ext in extensions:
            ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
    return extensions


class BuildWithManifest(build_ext):
    """``build_ext`` that also writes :data:`MANIFEST` next to the built extensions."""

    #: Whether a failed compilation falls back to the pure-Python build (the default mode).
    fall_back = False

    def run(self) -> None:
        """Build the extensions, then write the manifest (in place too with ``--inplace``); in
        the default mode a compilation that fails leaves the pure-Python build, with one line."""
        try:
            super().run()
        except Exception as exc:
            if not self.fall_back:
                raise
            for built in self.get_outputs():
                Path(built).unlink(missing_ok=True)
            self.extensions = []
            self.distribution.ext_modules = []
            say(f"building the pure-Python simulator: the compilation failed "
                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
            return
        text = json.dumps({m: hashlib.sha256(source_file(m).read_bytes()).hexdigest()
                           for m in COMPILED}, indent=1, sort_keys=True) + "\n"
        targets = [Path(self.build_lib) / MANIFEST] + ([Path(MANIFEST)] if self.inplace else [])
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


def build_mode(argv: list[str]) -> str:
    """``"1"``, ``"auto"`` or ``"0"``: what this invocation builds (module docstring)."""
    mode = os.environ.get("MRSCHED_GYM_COMPILE", "")
    if mode not in ("", "0", "1"):
        raise SystemExit(f"MRSCHED_GYM_COMPILE={mode!r}: use 1 (compiled), 0 (pure) or leave it "
                         "unset (compiled when it can be)")
    if mode == "0" or not BUILD_COMMANDS.intersection(argv):
        return "0"
    if mode == "" and {"editable_wheel", "develop"}.intersection(argv):
        return "0"                      # an editable install stays pure unless asked
    return mode or "auto"


mode = build_mode(sys.argv[1:])
ext_modules = compiled_extensions(mode) if mode != "0" else []
BuildWithManifest.fall_back = mode == "auto"
setup(ext_modules=ext_modules,
      cmdclass={"build_ext": BuildWithManifest} if ext_modules else {})
