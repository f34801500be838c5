"""The documentation: the site builds with warnings as errors, every code block of the README and
of the site (the research notes aside) runs, the README stays a README, the generated pages are
the code's.

Code-block conventions (an HTML comment on the line just before a block):

* ``<!-- docs-test: replace "A" "B" -->`` runs the block with A replaced by B (to run a
  tutorial at a small scale); several may precede one block;
* ``<!-- docs-test: skip (reason) -->`` skips the block; only for install commands, and the
  reason is required.

The blocks of one page run in order, in one namespace (Python) and one fresh working directory
(Python and shell alike). In ``bash`` blocks only the lines that start with ``mrsched-gym`` or
``python`` (also after environment assignments, ``OMP_NUM_THREADS=1 python ...``) run; install
lines (``pip install``, ``python3 -m venv``) are left to CI, which runs them.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# The site build and the code blocks run commands and Ray: keep them off the other heavy tests'
# worker (the ray-using pages run in the Ray tests' group).
pytestmark = pytest.mark.xdist_group("docs")

README_MAX_WORDS = 3000
DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)\s*([\w+-]*)")
INSTALL = re.compile(r"^(pip3?\s+install|python3?\s+-m\s+(venv|pip)\b)")


@dataclasses.dataclass
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    lang: str
    code: str
    directives: list[str]


def code_blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, each with the docs-test directives just before it."""
    lines = path.read_text(encoding="utf-8").split("\n")
    page = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    blocks, pending, i = [], [], 0
    while i < len(lines):
        m = DIRECTIVE.match(lines[i])
        f = FENCE.match(lines[i])
        if m:
            pending.append(m.group(1))
        elif f:
            indent, fence, lang = f.groups()
            body, start = [], i + 1
            i += 1
            while i < len(lines) and lines[i].strip() != fence:
                line = lines[i]
                body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
                i += 1
            blocks.append(Block(page, start, lang.lower(),
                                "\n".join(body) + "\n", pending))
            pending = []
        elif lines[i].strip():
            pending = []          # a directive belongs to the block right after it
        i += 1
    return blocks


def prepared(block: Block) -> str | None:
    """The block's code with its replacements applied, or None when it is skipped."""
    code = block.code
    for d in block.directives:
        where = f"{block.page}:{block.line}"
        if d.startswith("skip"):
            m = re.fullmatch(r"skip\s*\((.+)\)", d)
            assert m and m.group(1).strip(), f"{where}: a skip needs a reason: skip (reason)"
            assert all(not ln.strip() or ln.lstrip().startswith("#") or INSTALL.match(ln.strip())
                       for ln in code.splitlines()), (
                f"{where}: only install commands may be skipped")
            return None
        if d.startswith("replace"):
            parts = shlex.split(d)
            assert len(parts) == 3, f"{where}: expected replace \"A\" \"B\", got {d!r}"
            assert parts[1] in code, f"{where}: {parts[1]!r} is not in the block"
            code = code.replace(parts[1], parts[2])
            continue
        raise AssertionError(f"{where}: unknown docs-test directive {d!r}")
    return code


def shell_commands(code: str) -> list[str]:
    """The lines of a bash block that run: ``mrsched-gym ...`` and ``python ...`` commands,
    also after environment assignments (``OMP_NUM_THREADS=1 python ...``; continuation lines
    joined, install lines left out)."""
    joined = re.sub(r"\s*\\\n\s*", " ", code)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if INSTALL.match(line) or not re.match(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
                                               r"(mrsched-gym|python3?)\b", line):
            continue
        out.append(line)
    return out


def user_pages() -> list[Path]:
    """README and every page of the site outside the research notes."""
    pages = [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))
    return [p for p in pages if "notes" not in p.relative_to(ROOT).parts]


def needs_ray(path: Path) -> bool:
    return any("ray" in b.code and b.lang == "python" and "import" in b.code
               and "ray_backend" in b.code for b in code_blocks(path))


PAGES = [p for p in user_pages() if any(b.lang in ("python", "bash") for b in code_blocks(p))]


def run_page(path: Path, workdir: Path) -> None:
    env = dict(os.environ, MPLBACKEND="Agg",
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    namespace: dict = {"__name__": "__docs__"}
    old = Path.cwd()
    os.chdir(workdir)
    try:
        for block in code_blocks(path):
            if block.lang not in ("python", "bash"):
                continue
            code = prepared(block)
            if code is None:
                continue
            where = f"{block.page}:{block.line}"
            if block.lang == "python":
                exec(compile(code, where, "exec"), namespace)   # noqa: S102 - the docs' own code
                continue
            for cmd in shell_commands(code):
                done = subprocess.run(cmd, shell=True, cwd=workdir, env=env, text=True,
                                      capture_output=True, timeout=300)
                assert done.returncode == 0, (f"{where}: `{cmd}` exited {done.returncode}\n"
                                              f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    finally:
        os.chdir(old)


@pytest.mark.parametrize("path", [p for p in PAGES if not needs_ray(p)],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_code_blocks_run(path, tmp_path):
    run_page(path, tmp_path)


@pytest.mark.xdist_group("ray")
@pytest.mark.parametrize("path", [p for p in PAGES if needs_ray(p)],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_ray_code_blocks_run(path, tmp_path):
    pytest.importorskip("ray.rllib")
    pytest.importorskip("torch")
    run_page(path, tmp_path)


def test_every_directive_is_well_formed():
    """A skip without a reason, a skip of anything but an install, a replace whose text is not
    in its block, an unknown directive: each fails here, even on a page without runnable code."""
    for path in user_pages():
        for block in code_blocks(path):
            prepared(block)


def test_the_conventions_parse(tmp_path):
    page = tmp_path / "page.md"
    page.write_text('<!-- docs-test: replace "big" "small" -->\n```python\nx = "big"\n```\n\n'
                    "<!-- docs-test: skip (CI installs) -->\n```bash\npip install -e .\n```\n"
                    "text\n```bash\npython3 -m venv .venv && pip install x\n"
                    "mrsched-gym list \\\n  --help\n```\n", encoding="utf-8")
    blocks = code_blocks(page)
    assert prepared(blocks[0]) == 'x = "small"\n'
    assert prepared(blocks[1]) is None
    assert shell_commands(prepared(blocks[2])) == ["mrsched-gym list --help"]
    assert shell_commands("OMP_NUM_THREADS=1 python -m x \\\n  -n 5\nFOO=1 ls") == [
        "OMP_NUM_THREADS=1 python -m x -n 5"]
    bad = dataclasses.replace(blocks[1], directives=["skip"])
    with pytest.raises(AssertionError, match="needs a reason"):
        prepared(bad)
    with pytest.raises(AssertionError, match="only install commands"):
        prepared(dataclasses.replace(blocks[0], directives=["skip (too slow)"]))


def test_readme_is_at_most_3000_words():
    words = len((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert words <= README_MAX_WORDS, f"README.md has {words} words (at most {README_MAX_WORDS})"


def test_readme_has_the_two_commands_as_ci_runs_them():
    """The README's test command is the one `.ci/run` runs (install and pytest lines)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = re.search(r"^pip install .*$", ci, re.M).group(0).replace(" -q", "")
    pytest_line = re.search(r"^python -m pytest .*$", ci, re.M).group(0)
    assert f"{install} && {pytest_line}" in readme
    assert "pip install -e . && mrsched-gym compare" in readme


def test_readme_and_docs_name_papers_and_no_missing_documents():
    """Papers by their short names, never by the numbers of the project's internal files; no
    reference to a specification the repository does not contain."""
    bad = re.compile(r"seeds? 00[0-4]|\bSPEC\s+\d|SPEC section")
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not bad.search(line), f"{path.relative_to(ROOT)}:{n}: {line.strip()}"


def _site_module():
    spec = importlib.util.spec_from_file_location("docs_site", ROOT / "tools" / "docs_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_pages_follow_the_code():
    """The generated pages are built from the code at every build (nothing of them is
    committed); here they hold every registered id, every config field, every baseline and
    every subcommand."""
    import dataclasses as dc

    from mrsched_gym import ENV_IDS
    from mrsched_gym.baselines import BASELINES

    site = _site_module()
    pages = site.generated_pages()
    for env_id in ENV_IDS:
        page = pages[f"envs/{site.env_slug(env_id)}.md"]
        for section in ("## Description", "## Action Space", "## Observation Space",
                        "## Rewards", "## Episode End", "## Arguments", "## Version History"):
            assert section in page, (env_id, section)
        assert not any(p.name == f"{site.env_slug(env_id)}.md" for p in DOCS.rglob("*.md"))
    reference = pages["reference/scenario-file.md"]
    for _, cls in site.docs_config_reference.SECTIONS:
        for f in dc.fields(cls):
            assert f"| `{f.name}` |" in reference, (cls.__name__, f.name)
    assert all(f"`{name}`" in pages["baselines.md"] for name in BASELINES)
    for sub in ("compare", "benchmark", "train", "demo", "reproduce", "show-scenario", "list"):
        assert f"## `{sub}`" in pages["reference/cli.md"]
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert all(f"envs/{site.env_slug(e)}.md" in nav for e in ENV_IDS)


def test_validation_page_matches_its_data():
    """docs/validation.md and docs/reproductions.json come from the same run (``reproduce all
    --json ... --doc ...``): every claim of the JSON is on the page."""
    import json
    summary = json.loads((DOCS / "reproductions.json").read_text(encoding="utf-8"))
    page = (DOCS / "validation.md").read_text(encoding="utf-8")
    for claim in summary["claims"]:
        assert claim["claim"] in page, claim["claim"]


def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pytest.importorskip("mkdocstrings_handlers.python")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "envs" / "hadoop-v0" / "index.html").is_file()
    assert (tmp_path / "site" / "reference" / "api" / "index.html").is_file()


def test_readme_leaderboard_rows_are_what_compare_prints(tmp_path):
    """The README's leaderboard is the first command's output: a few of its rows re-run (every
    cell but the rank, which depends on the other rows) must be printed as the README has them."""
    policies = ["agent:general-v2", "edf", "fifo"]
    done = subprocess.run(
        [sys.executable, "-m", "mrsched_gym.cli", "compare", "--policies", *policies,
         "--seeds", "10", "--workers", "1", "--quiet", "--no-plots", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env=dict(os.environ, MPLBACKEND="Agg"))
    assert done.returncode == 0, done.stderr[-3000:]

    def rows(text):
        out = {}
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) > 2 and cells[0].isdigit():
                out[cells[1]] = cells[2:]
        return out

    printed = rows(done.stdout)
    readme = rows((ROOT / "README.md").read_text(encoding="utf-8"))
    header = next(ln for ln in done.stdout.splitlines() if ln.startswith("| # | policy"))
    assert header in (ROOT / "README.md").read_text(encoding="utf-8")
    for p in policies:
        assert printed[p] == readme[p], p
