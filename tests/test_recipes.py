"""The documented install recipes say one thing and work as written: torch's CPU build is
selected one way on every page, the PyPI-only outcome is stated, and the env works at both
gymnasium versions the project claims (the floor, 1.2.2, which the `ray` extra pins, and the
newest)."""

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import gymnasium
import pytest

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = "export PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu"
#: Where the CPU-torch recipe is given (README, the pages of the site, the constraints file).
RECIPE_PAGES = ["README.md", "docs/getting-started.md", "docs/faq.md", "docs/guide/train.md",
                "constraints.txt"]


def user_texts():
    pages = [ROOT / "README.md", ROOT / "constraints.txt", ROOT / "mrsched_gym" / "errors.py"]
    pages += [p for p in sorted((ROOT / "docs").rglob("*.md")) if "notes" not in p.parts]
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in pages}


def test_torch_cpu_build_is_selected_one_way_everywhere():
    for name, text in user_texts().items():
        assert "--index-url" not in text, f"{name}: use {CPU_INDEX!r}, not --index-url"
        for line in text.splitlines():
            if "download.pytorch.org" in line:
                assert ("PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu" in line
                        or "global.extra-index-url https://download.pytorch.org/whl/cpu"
                        in line), f"{name}: {line.strip()}"


@pytest.mark.parametrize("name", RECIPE_PAGES)
def test_every_recipe_page_gives_the_line_and_the_pypi_only_outcome(name):
    text = " ".join((ROOT / name).read_text(encoding="utf-8").split())
    if name == "README.md":                          # the README links the FAQ for the detail
        assert "`" + CPU_INDEX + "`" in text
    else:
        assert CPU_INDEX in text
    assert re.search(r"reaches only PyPI", text), name
    assert re.search(r"527 MB", text) and re.search(r"15 `?nvidia-\*`? packages", text), name


def test_the_ray_extra_states_its_gymnasium_pin_where_extras_are_listed():
    for name in ["README.md", "docs/getting-started.md", "docs/ray.md", "pyproject.toml"]:
        text = " ".join((ROOT / name).read_text(encoding="utf-8").split())
        assert re.search(r"pins gymnasium to 1\.2\.x", text), name


def gymnasium_floor() -> str:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'"gymnasium>=([\d.]+)"', pyproject).group(1)


def version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


#: Run in a python whose gymnasium is the one under test: the env passes Gymnasium's checker,
#: an episode plays through gym.make, and its records are the golden file's (Hadoop-v0, EDF).
CHECK = """if True:
    import sys
    import warnings
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env
    import mrsched_gym
    # newer gymnasium warns when two steps' observations or infos share an array
    warnings.filterwarnings("error", message=".*share an object.*")
    for env_id in ("mrsched/Hadoop-v0", "mrsched/Admission-v1", "mrsched/Shared-v1",
                   "mrsched/Hadoop-flat-v0"):
        env = gym.make(env_id)
        check_env(env.unwrapped, skip_render_check=True)
        env.reset(seed=0)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            _, _, term, trunc, info = env.step(int(mask.nonzero()[0][0]))
            done = term or trunc
        assert info["metrics"]["n_jobs"] > 0
    print(gym.__version__)
"""


def test_the_env_works_at_the_installed_gymnasium():
    assert version_tuple(gymnasium.__version__) >= version_tuple(gymnasium_floor())
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == gymnasium.__version__


@pytest.mark.slow
def test_the_env_works_at_the_other_claimed_gymnasium(tmp_path):
    """A throwaway venv that sees this one's packages (a ``.pth`` file) but holds its own
    gymnasium: the newest if this one runs the floor (as the ``ray`` extra makes it), else the
    floor; there the checker, an episode per id and the Hadoop-v0 fingerprints pass."""
    floor = gymnasium_floor()
    at_floor = version_tuple(gymnasium.__version__) == version_tuple(floor)
    want = "gymnasium" if at_floor else f"gymnasium=={floor}"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # addsitedir: this venv's packages after the throwaway's own, with their .pth files (the
    # editable install of mrsched_gym)
    Path(purelib, "outer.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    env = {k: v for k, v in os.environ.items() if k != "PIP_CONSTRAINT"}
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-U",
                              want], capture_output=True, text=True, env=env, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    out = subprocess.run([str(python), "-c", CHECK], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    other = out.stdout.strip()
    assert other != gymnasium.__version__
    assert version_tuple(other) > version_tuple(floor) if at_floor else other == floor
    tests = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "-p", "no:xdist", str(ROOT / "tests" / "test_fingerprint.py"),
                            "-k", "Hadoop-v0"], capture_output=True, text=True, cwd=tmp_path)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
