"""Layering: which parts of the code may import which, read from the source with ``ast`` (nothing
is imported, so a broken layer cannot hide behind an import error).

* The simulator (``mrsched_gym/sim/``) knows nothing of the layers above it (the Gymnasium env,
  the observation encoding, evaluation, leaderboards, reproductions, the benchmark, the CLI, the
  baselines and agents) nor of gymnasium or torch: not even lazily, and not through the modules
  it imports.
* The baselines need no deep-learning stack (torch, stable-baselines3, sb3-contrib, ray).
* torch and the SB3 libraries are imported only by the agents (at top level only by the network
  definitions: ``agents/set_layers.py``, plain torch, ``agents/networks.py``, the SB3 wrappers,
  and ``agents/rllib_module.py``, the RLlib wrapper; ``agents/policy.py``, ``agents/pretrained.py``
  and ``agents/training/train.py`` import them inside functions), ray only by
  ``mrsched_gym/ray_backend.py`` (inside functions) and by ``agents/rllib_module.py`` (its
  class derives from RLlib's, and only the Ray backend imports it, inside a function): importing any
  other module, the leaderboard included, never loads torch.
* The first-party modules' top-level imports have no cycle.

*Top level* means run when the module is imported: the module body, ``if``/``try`` blocks and
class bodies, but not function bodies. Imports inside functions are lazy and allowed (they run
when called, after every module is initialised; e.g. ``workloads.synthetic.draw_jobs`` reaches
``workloads.trace`` that way, while ``trace`` imports ``synthetic`` at top level), and so are
``if TYPE_CHECKING:`` imports, which never run. An import's edge goes to the module it names
(``from a.b import c`` to ``a.b.c`` when that is a module, else to ``a.b``); the implicit import of
parent packages is not an edge (a submodule imported while its package initialises is normal
Python). ``baselines/``, ``agents/`` and ``configs/`` are the packages ``mrsched_gym.baselines``,
``mrsched_gym.agents`` and ``mrsched_gym.configs`` (pyproject ``[tool.setuptools]``).
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
# The folders that install as the package and its subpackages (pyproject [tool.setuptools]).
PACKAGE_DIRS = {"mrsched_gym": "mrsched_gym", "baselines": "mrsched_gym.baselines",
                "agents": "mrsched_gym.agents", "configs": "mrsched_gym.configs"}

ABOVE_THE_SIMULATOR = (
    "mrsched_gym.env", "mrsched_gym.env.env_setup", "mrsched_gym.env.encoding",
    "mrsched_gym.evaluate", "mrsched_gym.env.obs_layout", "mrsched_gym.evaluate.leaderboard",
    "mrsched_gym.reproduce", "mrsched_gym.evaluate.benchmark", "mrsched_gym.cli",
    "mrsched_gym.registration", "mrsched_gym.ray_backend", "mrsched_gym.baselines",
    "mrsched_gym.agents", "mrsched_gym.policy", "mrsched_gym.processes", "gymnasium", "torch",
    "stable_baselines3", "sb3_contrib", "ray",
)
DEEP_LEARNING = ("torch", "stable_baselines3", "sb3_contrib", "ray")
# Who may import the deep-learning stack at all (lazily), and who at top level.
MAY_IMPORT = {"torch": ("mrsched_gym.agents",), "stable_baselines3": ("mrsched_gym.agents",),
              "sb3_contrib": ("mrsched_gym.agents",),
              "ray": ("mrsched_gym.ray_backend", "mrsched_gym.agents.rllib_module")}
# The modules that define a subclass of a deep-learning class (a network, an RLlib module, an
# SB3 callback or vector env wrapper): each is reached only on first use (agents/__init__.py
# imports it lazily, or the user imports it by name).
TOP_LEVEL_DEEP_LEARNING = ("mrsched_gym.agents.set_layers", "mrsched_gym.agents.networks",
                           "mrsched_gym.agents.rllib_module",
                           "mrsched_gym.agents.best_on_validation",
                           "mrsched_gym.agents.vec_masks",
                           "mrsched_gym.agents.training.vec_envs")


class Import(NamedTuple):
    module: str        # the module imported (first-party: the deepest one named)
    line: int
    top_level: bool    # runs when the importing module is imported
    type_only: bool = False   # under ``if TYPE_CHECKING:``: never runs


def _within(module: str, prefixes: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def package_sources() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> ``(path, is_package)`` of every source file the package installs."""
    out = {}
    for folder, package in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            out[name] = (path, path.name == "__init__.py")
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return ast.unparse(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def imports_of(source: str, module: str, is_package: bool, known: Iterable[str]) -> list[Import]:
    """Every import statement of ``source`` (module ``module``), resolved against ``known``."""
    known = set(known)
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, top_level: bool, type_only: bool = False) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(a.name, node.lineno, top_level, type_only) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            name = "." * node.level + (node.module or "")
            base = importlib.util.resolve_name(name, package) if node.level else name
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append(Import(sub if sub in known else base, node.lineno, top_level,
                                    type_only))
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, False, True)
            for child in node.orelse:
                visit(child, top_level, type_only)
        else:
            lazy = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            for child in ast.iter_child_nodes(node):
                visit(child, top_level and not lazy, type_only)

    visit(ast.parse(source), True)
    return found


def package_imports() -> dict[str, list[Import]]:
    """Module name -> its imports, for every module of the package."""
    sources = package_sources()
    return {name: imports_of(path.read_text(encoding="utf-8"), name, is_pkg, sources)
            for name, (path, is_pkg) in sources.items()}


def top_level_graph(imports: Mapping[str, list[Import]]) -> dict[str, set[str]]:
    """Module -> what its top-level imports load: first-party modules by name, the rest by their
    top-level package (``numpy``, ``torch``)."""
    return {m: {i.module if i.module in imports else i.module.partition(".")[0]
                for i in imps if i.top_level} for m, imps in imports.items()}


def reachable(graph: Mapping[str, Iterable[str]], start: Iterable[str]) -> set[str]:
    """Every node reachable from ``start`` (included) along ``graph``'s edges."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or ``None`` if it is acyclic."""
    state: dict[str, int] = {}        # absent: unvisited, 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def forbidden_imports(imports: Mapping[str, list[Import]], scope: str, forbidden: Iterable[str],
                      top_level_only: bool = False) -> list[str]:
    """``module:line: target`` for each import by a module of ``scope`` of anything in
    ``forbidden`` (a module or package: its submodules are forbidden too)."""
    forbidden = tuple(forbidden)
    return [f"{m}:{i.line}: {i.module}" for m, imps in sorted(imports.items())
            if _within(m, (scope,)) for i in imps
            if _within(i.module, forbidden) and (i.top_level or not top_level_only)]


def forbidden_reach(imports: Mapping[str, list[Import]], scope: str,
                    forbidden: Iterable[str]) -> list[str]:
    """``module: target`` for each forbidden module that importing a module of ``scope`` loads
    through a chain of top-level imports."""
    forbidden = tuple(forbidden)
    graph = top_level_graph(imports)
    return [f"{m}: {r}" for m in sorted(imports) if _within(m, (scope,))
            for r in sorted(reachable(graph, [m])) if _within(r, forbidden)]


IMPORTS = package_imports()


def test_the_package_is_all_there():
    assert {"mrsched_gym.sim.engine", "mrsched_gym.baselines.fair",
            "mrsched_gym.agents.training.train",
            "mrsched_gym.workloads.trace", "mrsched_gym.evaluate.leaderboard"} <= set(IMPORTS)
    assert sum(len(v) for v in IMPORTS.values()) > 300


def test_the_simulator_imports_nothing_above_it():
    bad = (forbidden_imports(IMPORTS, "mrsched_gym.sim", ABOVE_THE_SIMULATOR)
           + forbidden_reach(IMPORTS, "mrsched_gym.sim", ABOVE_THE_SIMULATOR))
    assert not bad, bad


def test_the_baselines_need_no_deep_learning():
    bad = (forbidden_imports(IMPORTS, "mrsched_gym.baselines", DEEP_LEARNING)
           + forbidden_reach(IMPORTS, "mrsched_gym.baselines", DEEP_LEARNING))
    assert not bad, bad


def test_only_the_agents_and_the_ray_backend_touch_the_deep_learning_stack():
    bad = [f"{m}:{i.line}: {i.module}" for m, imps in sorted(IMPORTS.items()) for i in imps
           for lib, owners in MAY_IMPORT.items()
           if _within(i.module, (lib,)) and not _within(m, owners)]
    assert not bad, bad


def test_only_the_network_definitions_load_torch_on_import():
    graph = top_level_graph(IMPORTS)
    bad = {m: sorted(r for r in reachable(graph, [m]) if _within(r, DEEP_LEARNING))
           for m in IMPORTS if m not in TOP_LEVEL_DEEP_LEARNING}
    bad = {m: libs for m, libs in bad.items() if libs}
    assert not bad, bad


def test_the_rllib_module_needs_no_sb3():
    """The ``ray`` extra installs torch but not stable-baselines3: the RLlib set module and the
    plain-torch layers it shares with the SB3 policies must not reach SB3, even lazily."""
    sb3 = ("stable_baselines3", "sb3_contrib", "mrsched_gym.agents.networks")
    bad = []
    for m in ("mrsched_gym.agents.set_layers", "mrsched_gym.agents.rllib_module"):
        bad += forbidden_imports(IMPORTS, m, sb3) + forbidden_reach(IMPORTS, m, sb3)
    assert not bad, bad


def test_the_leaderboard_runs_without_torch():
    """The leaderboard module and what its functions import load no deep-learning library."""
    graph = top_level_graph(IMPORTS)
    board = ["mrsched_gym.evaluate.leaderboard"]
    board += [i.module for i in IMPORTS["mrsched_gym.evaluate.leaderboard"]]
    loaded = reachable(graph, board)
    bad = sorted(m for m in loaded if _within(m, DEEP_LEARNING + ("mrsched_gym.agents",)))
    assert not bad, bad


def test_no_import_cycles_at_top_level():
    first_party = {m: {t for t in targets if t in IMPORTS}
                   for m, targets in top_level_graph(IMPORTS).items()}
    cycle = find_cycle(first_party)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# The checks above can fail: fed small made-up inputs, they report what they should.

def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"x": {"x"}}) == ["x", "x"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set(), "d": {"a"}}) is None


def test_the_import_checks_catch_forbidden_imports():
    known = {"mrsched_gym.env", "mrsched_gym.sim.engine", "mrsched_gym.sim.bad",
             "mrsched_gym.config", "mrsched_gym.helper"}
    bad_sim = (
        "from typing import TYPE_CHECKING\n"
        "import numpy as np\n"
        "from mrsched_gym import (\n"
        "    env,\n"
        ")\n"
        "if TYPE_CHECKING:\n"
        "    import gymnasium\n"
        "def f():\n"
        "    import torch\n"
        "class C:\n"
        "    from . import engine\n"
    )
    imports = {
        "mrsched_gym.sim.bad": imports_of(bad_sim, "mrsched_gym.sim.bad", False, known),
        "mrsched_gym.config": imports_of("from mrsched_gym.helper import x\n",
                                         "mrsched_gym.config", False, known),
        "mrsched_gym.helper": imports_of("import gymnasium.spaces\n", "mrsched_gym.helper",
                                         False, known),
        "mrsched_gym.sim.engine": imports_of("import mrsched_gym.config\n",
                                             "mrsched_gym.sim.engine", False, known),
    }
    assert [i.top_level for i in imports["mrsched_gym.sim.bad"]] == [True, True, True, False,
                                                                      False, True]
    assert imports["mrsched_gym.sim.bad"][-1].module == "mrsched_gym.sim.engine"
    assert forbidden_imports(imports, "mrsched_gym.sim", ABOVE_THE_SIMULATOR) == [
        "mrsched_gym.sim.bad:3: mrsched_gym.env", "mrsched_gym.sim.bad:7: gymnasium",
        "mrsched_gym.sim.bad:9: torch"]
    assert forbidden_imports(imports, "mrsched_gym.sim", ABOVE_THE_SIMULATOR,
                             top_level_only=True) == ["mrsched_gym.sim.bad:3: mrsched_gym.env"]
    # engine -> config -> helper -> gymnasium: reached at import, though no sim file names it
    assert forbidden_reach(imports, "mrsched_gym.sim.engine", ["gymnasium"]) == [
        "mrsched_gym.sim.engine: gymnasium"]
    assert find_cycle(top_level_graph(imports)) is None
    imports["mrsched_gym.config"].append(Import("mrsched_gym.sim.engine", 2, True))
    assert find_cycle(top_level_graph(imports)) == [
        "mrsched_gym.config", "mrsched_gym.sim.engine", "mrsched_gym.config"]


#: The foundations every room stands on, one room here: the config reads the job profiles and
#: the contention formulas (module by module below it, checked above), so config/, models/ and
#: workloads/ import each other.
FOUNDATIONS = ("mrsched_gym.config", "mrsched_gym.models", "mrsched_gym.workloads",
               "mrsched_gym.errors", "mrsched_gym.frozen", "mrsched_gym.data")


def room_of(module: str) -> str | None:
    """The room (sub-package, or top-level module) a first-party module is in; the trainer and
    the research code are rooms of their own inside the agents."""
    parts = module.split(".")
    if parts[0] != "mrsched_gym":
        return None
    if len(parts) == 1:
        return module
    if parts[1] == "agents" and len(parts) > 2 and parts[2] in ("training", "research"):
        return ".".join(parts[:3])
    room = ".".join(parts[:2])
    return "foundations" if room in FOUNDATIONS else room


def room_graph(imports: Mapping[str, list[Import]]) -> dict[str, set[str]]:
    """Room -> the rooms its modules import, deferred imports included (not TYPE_CHECKING)."""
    graph: dict[str, set[str]] = {}
    for module, imps in imports.items():
        here = room_of(module)
        assert here is not None
        for imp in imps:
            there = room_of(imp.module)
            if there is not None and there != here and not imp.type_only:
                graph.setdefault(here, set()).add(there)
    return graph


def test_the_rooms_form_layers():
    """No two rooms import each other, even through deferred imports: the env, the policy
    contract, the harness, the trainer... stack as docs/architecture.md draws them."""
    cycle = find_cycle(room_graph(IMPORTS))
    assert cycle is None, f"rooms that import each other: {' -> '.join(cycle)}"


def test_the_room_check_sees_a_cycle_between_rooms():
    imports = {
        "mrsched_gym.env.environment": [Import("mrsched_gym.policy.contract", 3, False)],
        "mrsched_gym.policy.contract": [Import("mrsched_gym.env.rewards", 5, True)],
        "mrsched_gym.env.rewards": [],
    }
    assert find_cycle(room_graph(imports)) is not None
    imports["mrsched_gym.env.environment"] = [Import("mrsched_gym.policy.contract", 3, False,
                                                     type_only=True)]
    assert find_cycle(room_graph(imports)) is None


def test_only_the_trainer_and_the_command_import_the_trainer():
    """What a user loads and runs (agents/ outside training/, the harness, the env) never imports
    the trainer, not even lazily; the command line (``mrsched-gym train``) and the research
    code may."""
    allowed = ("mrsched_gym.agents.training", "mrsched_gym.agents.research", "mrsched_gym.cli")
    found = [f"{m}:{i.line} imports {i.module}" for m, imps in IMPORTS.items()
             if not _within(m, allowed) for i in imps
             if _within(i.module, ("mrsched_gym.agents.training",)) and not i.type_only]
    assert found == []
