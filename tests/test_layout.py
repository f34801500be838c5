"""The package's shape, read from the source with ``ast`` (nothing is imported): no module over
400 lines and no import cycle, except the lists below of what is so today, which may only shrink;
and the product apart from the research.

* **Module size.** No module of the package (``mrsched_gym/``, ``baselines/``, ``agents/``,
  ``configs/``) has more than :data:`MAX_LINES` lines, except those of :data:`OVERSIZE`, each
  with its line count of the day it was listed as its ceiling: a listed module may not grow, a new
  one may not cross the limit, and a listed one that has come under the limit must leave the list.
* **Import cycles.** The import graph holds every import that runs: at top level and inside
  functions (a deferred import hides a cycle from Python, not from the design), not those under
  ``if TYPE_CHECKING:`` (they never run). An edge goes to the module an import names (``from a
  import b`` to ``a.b`` when that is a module), as :func:`test_layers.imports_of` reads them. Every
  strongly connected component of more than one module is a cycle; each must be one of
  :data:`KNOWN_CYCLES`, and each known cycle must still be there as it is listed (one broken or
  shrunk leaves or changes the list).
* **The product apart from the research.** :data:`RESEARCH` (rollout teachers and what their
  copies of the world know) serves the studies of docs/notes/; no other module of the package
  imports it, in any form (top level, deferred or ``if TYPE_CHECKING:``). The trainer reaches
  research teachers only through the plugin point of ``agents/training/teachers.py`` (a module a
  run's config names in ``imitate.plugins``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from test_layers import IMPORTS, imports_of, package_sources

MAX_LINES = 400
#: The research subpackage the product never imports.
RESEARCH = "mrsched_gym.agents.research"

# Today's modules over MAX_LINES, with their line counts as ceilings (split them; never raise one).
OVERSIZE: dict[str, int] = {}

# Today's import cycles (held apart at run time only by imports deferred into functions). The
# agents' networks <-> numpy_policy <-> numpy_rollout <-> policy cycle was broken by moving what
# both sides read into agents/observations.py and the numpy export into
# agents/training/numpy_export.py; the config's (config <-> registration, config <-> workloads) by
# moving the env-id table and the workload sizing into the config package and the job builder into
# workloads/jobs.py.
KNOWN_CYCLES: dict[str, frozenset[str]] = {}


def line_counts() -> dict[str, int]:
    """Module name -> its number of lines, for every module of the package."""
    return {name: len(path.read_text(encoding="utf-8").splitlines())
            for name, (path, _) in package_sources().items()}


def run_time_graph(imports: Mapping[str, Iterable]) -> dict[str, set[str]]:
    """Module -> the first-party modules its imports load when they run (top level or deferred;
    not ``if TYPE_CHECKING:``): the module an import names and every package above it that is
    not one of the importer's own (importing ``a.b.c`` runs ``a.b``'s ``__init__`` first; the
    importer's own packages are already running). Without those edges a cycle through a
    package's ``__init__`` (``evaluate.policy_specs`` importing ``agents.pretrained``, which
    runs ``agents/__init__.py``) passed unseen."""
    graph: dict[str, set[str]] = {}
    for m, imps in imports.items():
        own = {m.rsplit(".", k)[0] for k in range(m.count(".") + 1)}
        edges = set()
        for i in imps:
            if i.type_only or i.module not in imports:
                continue
            parts = i.module.split(".")
            edges |= {p for p in (".".join(parts[:k]) for k in range(1, len(parts) + 1))
                      if p in imports and p not in own}
        graph[m] = edges
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """The strongly connected components of ``graph`` with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


CYCLES = cycles(run_time_graph(IMPORTS))


def test_no_module_is_over_the_limit_or_its_ceiling():
    over = {m: n for m, n in line_counts().items() if n > OVERSIZE.get(m, MAX_LINES)}
    assert not over, (f"over {MAX_LINES} lines (or over their listed ceiling): {over}; split "
                      "them along their seams")


def test_the_oversize_list_holds_only_oversize_modules():
    counts = line_counts()
    gone = sorted(set(OVERSIZE) - set(counts))
    shrunk = {m: counts[m] for m in OVERSIZE if m in counts and counts[m] <= MAX_LINES}
    assert not gone, f"listed in OVERSIZE but no longer modules: {gone}; remove them"
    assert not shrunk, (f"now within {MAX_LINES} lines: {shrunk}; remove them from OVERSIZE so "
                        "that they stay there")


def test_no_new_import_cycle():
    known = set(KNOWN_CYCLES.values())
    new = [sorted(c) for c in CYCLES if c not in known]
    assert not new, (f"import cycles (deferred imports included) not in KNOWN_CYCLES: {new}; "
                     "move the shared piece into the lower module")


def test_every_known_cycle_is_still_there_as_listed():
    stale = {name: sorted(c) for name, c in KNOWN_CYCLES.items() if c not in CYCLES}
    assert not stale, (f"known cycles no longer found as listed: {stale}; now: "
                       f"{[sorted(c) for c in CYCLES]}; shrink KNOWN_CYCLES")


def test_cycles_are_strongly_connected_components():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(map(sorted, cycles(graph))) == [["a", "b", "c"], ["d", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_deferred_imports_and_submodules_not_type_checking():
    source = ("from typing import TYPE_CHECKING\n"
              "from p import sub\n"
              "if TYPE_CHECKING:\n"
              "    from p.c import C\n"
              "def f():\n"
              "    from p.b import g\n")
    known = {"p", "p.a", "p.b", "p.c", "p.sub"}
    imports = {m: [] for m in known}
    imports["p.a"] = imports_of(source, "p.a", False, known)
    assert run_time_graph(imports)["p.a"] == {"p.sub", "p.b"}


def test_the_graph_sees_a_cycle_through_a_package_init():
    """``x`` imports ``x.m``, which imports ``y.n``, which runs ``y/__init__.py`` first; that
    package's init imports ``y.k``, which imports ``x``: a cycle, whatever defers which import
    (issue 63: the agents <-> evaluate cycle passed through ``agents/__init__.py`` unseen)."""
    files = {"x": ("from x.m import f\n", True),
             "x.m": ("def f():\n    from y.n import g\n", False),
             "y": ("def __getattr__(name):\n    from y.k import K\n", True),
             "y.n": ("", False), "y.k": ("import x\n", False)}
    imports = {m: imports_of(src, m, pkg, files) for m, (src, pkg) in files.items()}
    graph = run_time_graph(imports)
    assert "y" in graph["x.m"] and "x" not in graph["x.m"]       # its own package: running
    assert cycles(graph) == [frozenset({"x", "x.m", "y", "y.k"})]


def research_imports(imports: Mapping[str, Iterable]) -> list[str]:
    """``module line N: research module`` for every import of :data:`RESEARCH` (or a module in
    it) by a module outside it, whatever its kind."""
    def inside(m: str) -> bool:
        return m == RESEARCH or m.startswith(RESEARCH + ".")
    return sorted(f"{m} line {i.line}: {i.module}" for m, imps in imports.items()
                  if not inside(m) for i in imps if inside(i.module))


def test_the_product_never_imports_the_research_package():
    assert RESEARCH in IMPORTS and f"{RESEARCH}.rollout" in IMPORTS, "the research package moved"
    bad = research_imports(IMPORTS)
    assert not bad, (f"product modules import the research package: {bad}; reach it through a "
                     "plugin point (agents/training/teachers.py) or move the code into it")


def test_the_research_check_sees_every_kind_of_import():
    known = {"p", RESEARCH, f"{RESEARCH}.rollout", "mrsched_gym.agents.training.imitate"}
    for source in (f"from {RESEARCH}.rollout import x\n",
                   f"def f():\n    from {RESEARCH} import rollout\n",
                   f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import {RESEARCH}\n"):
        imports = {m: [] for m in known}
        imitate = "mrsched_gym.agents.training.imitate"
        imports[imitate] = imports_of(source, imitate, False, known)
        assert research_imports(imports), source
    inside = {m: [] for m in known}
    inside[f"{RESEARCH}.rollout"] = imports_of("from mrsched_gym.agents import imitate\n",
                                               f"{RESEARCH}.rollout", False, known)
    assert research_imports(inside) == []
