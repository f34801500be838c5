"""The build backend: setuptools' own, asking for mypy only where a wheel may be compiled.

A wheel build (``pip install .``, ``pip wheel .``, ``python -m build``) gets mypy >= 2.0 in its
isolated build environment, on the platforms where mypy and its run-time library librt have
binary wheels (installing them needs no compiler); ``setup.py`` then compiles the simulator if a
C compiler works and builds the pure-Python wheel otherwise. An editable install and the sdist
do not ask for mypy (an editable install stays pure unless ``MRSCHED_GYM_COMPILE=1``), nor does
any build with ``MRSCHED_GYM_COMPILE=0``.
"""

from __future__ import annotations

import os

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (every hook, setuptools' own)

#: CPython on the machines where mypy, librt and ast-serialize publish binary wheels.
WHEEL_PLATFORMS = ("platform_python_implementation == 'CPython' and (platform_machine == "
                   "'x86_64' or platform_machine == 'AMD64' or platform_machine == 'aarch64' or "
                   "platform_machine == 'arm64' or platform_machine == 'ARM64')")
MYPY = f"mypy>=2.0; {WHEEL_PLATFORMS}"


def get_requires_for_build_wheel(config_settings=None):
    """The setuptools requirements, and mypy unless ``MRSCHED_GYM_COMPILE=0``."""
    extra = [] if os.environ.get("MRSCHED_GYM_COMPILE") == "0" else [MYPY]
    return [*_setuptools.get_requires_for_build_wheel(config_settings), *extra]


def get_requires_for_build_editable(config_settings=None):
    """The setuptools requirements, and mypy only with ``MRSCHED_GYM_COMPILE=1``."""
    extra = [MYPY] if os.environ.get("MRSCHED_GYM_COMPILE") == "1" else []
    return [*_setuptools.get_requires_for_build_editable(config_settings), *extra]
