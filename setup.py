"""Optional compiled build of the simulator (the metadata is in pyproject.toml).

The default install is pure Python. With ``MRSCHED_GYM_COMPILE=1`` in the environment (and mypy,
which brings mypyc, and a C compiler installed), the modules of :data:`COMPILED` are compiled
from the same source files with mypyc into C extensions that Python imports in place of the
``.py`` files; nothing else changes (the same floats, records and observations:
``tests/test_fingerprint.py``). ``mrsched_gym.acceleration()`` says which is running.

    pip install mypy
    MRSCHED_GYM_COMPILE=1 pip install --no-build-isolation -e .     # or without -e
    # a checkout, in place:  MRSCHED_GYM_COMPILE=1 python setup.py build_ext --inplace
"""

import os
from pathlib import Path

from setuptools import setup

#: The modules compiled: the simulator and the per-step observation and reward code.
COMPILED = sorted(str(p) for p in Path("mrsched_gym/sim").glob("*.py") if p.name != "__init__.py") + [
    "mrsched_gym/encoding.py", "mrsched_gym/rewards.py"]

ext_modules = []
if os.environ.get("MRSCHED_GYM_COMPILE") == "1":
    from mypyc.build import mypycify

    ext_modules = mypycify(COMPILED, opt_level="3", group_name="mrsched_gym._compiled")

setup(ext_modules=ext_modules)
