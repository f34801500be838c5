"""Optional compiled build of the simulator (the package's metadata is in pyproject.toml).

The default install is pure Python and needs no compiler. With ``MRSCHED_GYM_COMPILE=1`` in the
environment (and mypy, which brings mypyc, and a C compiler), the modules of :data:`COMPILED`
are compiled with mypyc from the same source files into C extensions, which Python imports in
place of the ``.py`` files; the floats, records and observations are the same
(``tests/test_fingerprint.py`` passes either way). ``mrsched_gym.acceleration()`` says which
one runs; the build also writes ``mrsched_gym/compiled_sources.json`` (each compiled source's
SHA-256), and importing the package refuses a compiled module whose source has changed since
(``mrsched_gym/compiled.py``). The compiled modules import librt (mypyc's run-time library,
which mypy brings) when they load. Commands::

    pip install "mypy>=2.0"
    MRSCHED_GYM_COMPILE=1 pip install --no-build-isolation .        # an install
    MRSCHED_GYM_COMPILE=1 python setup.py build_ext --inplace        # a checkout, in place
"""

import hashlib
import json
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

#: The modules compiled: the simulator (mypy-strict), the observation encoder, its layout, its
#: cached candidate rows and the rewards (``sim/__init__.py``, a docstring, stays Python: mypyc
#: sets a compiled package's path wrongly in this layout).
COMPILED = sorted(str(p) for p in Path("mrsched_gym/sim").glob("*.py")
                  if p.name not in ("__init__.py", "log.py")) + ["mrsched_gym/encoding.py",
                                                 "mrsched_gym/env_step.py",
                                                 "mrsched_gym/rewards.py",
                                                 "mrsched_gym/obs_layout.py",
                                                 "mrsched_gym/node_rows.py",
                                                 "mrsched_gym/job_row.py"]
MANIFEST = "mrsched_gym/compiled_sources.json"


class BuildWithManifest(build_ext):
    """``build_ext`` that also writes :data:`MANIFEST` next to the built extensions."""

    def run(self) -> None:
        """Build the extensions, then write the manifest (in place too with ``--inplace``)."""
        super().run()
        text = json.dumps({m: hashlib.sha256(Path(m).read_bytes()).hexdigest()
                           for m in COMPILED}, indent=1, sort_keys=True) + "\n"
        targets = [Path(self.build_lib) / MANIFEST] + ([Path(MANIFEST)] if self.inplace else [])
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


ext_modules = []
#: The oldest mypy the build needs: mypy 1.x allows librt < 0.10, whose ``librt.strings`` is empty
#: at run time, so the compiled observation writes (``float_writer.py``'s ``BytesWriter`` and
#: ``write_f32_le``, compiled to stores) could not import; 2.0 requires librt >= 0.10. Built and
#: tested with 2.0.0 and 2.4.1 (tests/test_fingerprint.py passes). Since 1.19 mypyc also routes a
#: native class's ``__setattr__`` / ``__delattr__`` through the type's slot (python/mypy#19937,
#: #19997), on which ``Decision`` relies to stay immutable.
MIN_MYPY = (2, 0)

if os.environ.get("MRSCHED_GYM_COMPILE") == "1":
    import re

    from mypy.version import __version__ as mypy_version
    from mypyc.build import mypycify

    if tuple(int(x) for x in re.findall(r"\d+", mypy_version)[:2]) < MIN_MYPY:
        raise SystemExit(f"the compiled build needs mypy >= {'.'.join(map(str, MIN_MYPY))} "
                         f"(this is {mypy_version}): pip install -U mypy")

    ext_modules = mypycify(COMPILED, opt_level="3", group_name="mrsched_gym._compiled")
    if os.name != "nt":      # no fused multiply-adds: the same floats as the interpreter's
        for ext in ext_modules:
            ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]

setup(ext_modules=ext_modules,
      cmdclass={"build_ext": BuildWithManifest} if ext_modules else {})
