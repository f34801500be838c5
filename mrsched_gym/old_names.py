"""The import paths of modules that moved in 0.4.0, kept: one table and one import hook.

Version 0.4.0 grouped the package's top level into sub-packages by what each part is for (the
env in :mod:`mrsched_gym.env`, the policy contract in :mod:`mrsched_gym.policy`, the harness's
tables in :mod:`mrsched_gym.evaluate`, the trainer in :mod:`mrsched_gym.agents.training`;
docs/architecture.md). Every old path still imports, as the same module object:
``import mrsched_gym.policies`` gives :mod:`mrsched_gym.policy.contract` itself (so
``isinstance`` checks, ``monkeypatch`` and pickles made before the move all hold, the shipped
agents' checkpoints included), and ``python -m`` runs an old name as it runs the new one.
Nothing warns: the old paths are not deprecated in 0.x.

:class:`OldNames` is a meta-path finder that answers only for the names of :data:`MOVED`;
:func:`install` puts it on ``sys.meta_path`` once (``mrsched_gym/__init__.py`` does, first).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import CodeType, ModuleType

#: Old dotted name -> where the module lives now.
MOVED: dict[str, str] = {
    "mrsched_gym.agents.imitate": "mrsched_gym.agents.training.imitate",
    "mrsched_gym.agents.imitate_config": "mrsched_gym.agents.training.imitate_config",
    "mrsched_gym.agents.input_driven": "mrsched_gym.agents.training.input_driven",
    "mrsched_gym.agents.learning_curves": "mrsched_gym.agents.training.learning_curves",
    "mrsched_gym.agents.numpy_export": "mrsched_gym.agents.training.numpy_export",
    "mrsched_gym.agents.plain_ppo": "mrsched_gym.agents.training.plain_ppo",
    "mrsched_gym.agents.teachers": "mrsched_gym.agents.training.teachers",
    "mrsched_gym.agents.train": "mrsched_gym.agents.training.train",
    "mrsched_gym.agents.train_callbacks": "mrsched_gym.agents.training.train_callbacks",
    "mrsched_gym.agents.train_checks": "mrsched_gym.agents.training.train_checks",
    "mrsched_gym.agents.train_config": "mrsched_gym.agents.training.train_config",
    "mrsched_gym.agents.train_files": "mrsched_gym.agents.training.train_files",
    "mrsched_gym.agents.train_model": "mrsched_gym.agents.training.train_model",
    "mrsched_gym.agents.worlds": "mrsched_gym.agents.training.worlds",
    "mrsched_gym.benchmark": "mrsched_gym.evaluate.benchmark",
    "mrsched_gym.claims": "mrsched_gym.reproduce.claims",
    "mrsched_gym.decision_budget": "mrsched_gym.policy.decision_budget",
    "mrsched_gym.encoding": "mrsched_gym.env.encoding",
    "mrsched_gym.env_setup": "mrsched_gym.env.env_setup",
    "mrsched_gym.env_step": "mrsched_gym.env.env_step",
    "mrsched_gym.features": "mrsched_gym.env.features",
    "mrsched_gym.flat": "mrsched_gym.env.flat",
    "mrsched_gym.flat_step": "mrsched_gym.env.flat_step",
    "mrsched_gym.float_writer": "mrsched_gym.env.float_writer",
    "mrsched_gym.guard": "mrsched_gym.policy.guard",
    "mrsched_gym.job_row": "mrsched_gym.env.job_row",
    "mrsched_gym.leaderboard": "mrsched_gym.evaluate.leaderboard",
    "mrsched_gym.lifecycle": "mrsched_gym.processes.lifecycle",
    "mrsched_gym.metrics": "mrsched_gym.env.metrics",
    "mrsched_gym.node_rows": "mrsched_gym.env.node_rows",
    "mrsched_gym.obs_layout": "mrsched_gym.env.obs_layout",
    "mrsched_gym.policies": "mrsched_gym.policy.contract",
    "mrsched_gym.policy_actions": "mrsched_gym.policy.policy_actions",
    "mrsched_gym.policy_failures": "mrsched_gym.policy.policy_failures",
    "mrsched_gym.policy_files": "mrsched_gym.policy.policy_files",
    "mrsched_gym.proxies": "mrsched_gym.policy.proxies",
    "mrsched_gym.proxy_base": "mrsched_gym.policy.proxy_base",
    "mrsched_gym.readonly": "mrsched_gym.policy.readonly",
    "mrsched_gym.render": "mrsched_gym.env.render",
    "mrsched_gym.rewards": "mrsched_gym.env.rewards",
    "mrsched_gym.rule_adapter": "mrsched_gym.policy.rule_adapter",
    "mrsched_gym.workers": "mrsched_gym.processes.workers",
}


class OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old name of :data:`MOVED` as the module it names now (the same object)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """A spec for an old name (loaded by :meth:`create_module`), ``None`` for any other."""
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The module at its new name, imported if it is not yet (its own spec kept aside)."""
        module = importlib.import_module(MOVED[spec.name])
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Gives the module back its own spec: the import system has just set the old name's."""
        old_spec = module.__spec__
        if old_spec is not None and old_spec.loader_state is not None:
            module.__spec__ = old_spec.loader_state


    def get_code(self, fullname: str) -> CodeType | None:
        """The code of the module at its new name: ``python -m`` runs an old name too."""
        spec = importlib.util.find_spec(MOVED[fullname])
        loader = spec.loader if spec is not None else None
        get_code = getattr(loader, "get_code", None)
        return get_code(spec.name) if get_code is not None and spec is not None else None


def install() -> None:
    """Puts :class:`OldNames` on ``sys.meta_path`` unless one is there already."""
    if not any(isinstance(finder, OldNames) for finder in sys.meta_path):
        sys.meta_path.append(OldNames())
