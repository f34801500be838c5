"""The map of docs/architecture.md ("## Layout") matches the folders: every module and folder of
the package's top levels is in it, and everything in it exists.

The map lists, for each installed folder (``mrsched_gym/``, ``baselines/``, ``agents/``,
``configs/``), its modules and its sub-folders, and the sub-folders' own sub-folders; each line
is a name at an indent of two spaces per level, then a description.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROOTS = ("mrsched_gym", "baselines", "agents", "configs")
SKIP = {"__pycache__"}


def map_block(text: str) -> str:
    layout = text.split("\n## Layout\n", 1)[1]
    return layout.split("```", 2)[1]


def map_paths(block: str) -> set[str]:
    """Every path the map names, built from the names' indents."""
    paths: set[str] = set()
    stack: list[str] = []
    for line in block.splitlines():
        m = re.match(r"^( *)(\S+?(?:/|\.py))(?:\s{2,}\S.*)?$", line)
        if not m:
            continue
        depth = len(m.group(1)) // 2
        assert len(m.group(1)) % 2 == 0, f"odd indent in the map: {line!r}"
        stack[depth:] = [m.group(2)]
        paths.add("".join(stack))
    return paths


def folder_paths() -> set[str]:
    """The top levels of the installed folders: their modules and sub-folders, and the
    sub-folders' sub-folders."""
    out: set[str] = set()
    for root in ROOTS:
        out.add(root + "/")
        for child in sorted((ROOT / root).iterdir()):
            if child.name in SKIP or child.name.endswith(".egg-info"):
                continue
            if child.is_dir():
                out.add(f"{root}/{child.name}/")
                out.update(f"{root}/{child.name}/{grand.name}/"
                           for grand in child.iterdir() if grand.is_dir()
                           and grand.name not in SKIP)
            elif child.suffix == ".py":
                out.add(f"{root}/{child.name}")
    return out


def test_the_map_matches_the_folders():
    drawn = map_paths(map_block((ROOT / "docs" / "architecture.md").read_text()))
    there = folder_paths()
    assert sorted(there - drawn) == [], "in the folders, not on docs/architecture.md's map"
    assert sorted(drawn - there) == [], "on docs/architecture.md's map, not in the folders"


def test_the_top_level_stays_small():
    """At most a dozen modules beside the sub-packages (the layout issue)."""
    modules = [p for p in (ROOT / "mrsched_gym").glob("*.py")]
    assert len(modules) <= 12, sorted(p.name for p in modules)


def test_the_map_reader_sees_nesting_and_misses():
    block = ("a/          the package\n  b.py        a module\n  c/          a folder\n"
             "    d/        its folder\nother/      x\n")
    assert map_paths(block) == {"a/", "a/b.py", "a/c/", "a/c/d/", "other/"}
