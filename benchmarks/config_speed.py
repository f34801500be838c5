"""Config speed (not a test): import, ``gym.make``, scenario loading and building, overrides and
pickling of a scenario.

Usage::

    python benchmarks/config_speed.py                   # this working tree, one process
    python benchmarks/config_speed.py --compare REF     # this tree vs git REF, alternating
    python benchmarks/config_speed.py --compare REF --reps 6

With ``--compare`` both trees are exported to a temporary folder (``git archive``) and each
round runs one fresh process per tree, alternating, so both see the same machine load; the
table gives each measure's median and range over the rounds. Times: ``import_s`` (``import
mrsched_gym`` and the config), ``first_make_s`` (the first ``gym.make`` of a process),
``make_ms`` and ``make_override_ms`` (later ones, without and with an override),
``load_scenario_ms`` (a bundled scenario from its YAML), ``from_dict_ms`` and
``with_overrides_ms`` (thesis_scale from plain data, one override), ``pickle_*`` (thesis_scale).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure() -> dict[str, float]:
    t0 = time.perf_counter()
    import gymnasium as gym

    import mrsched_gym  # noqa: F401  (registers the ids)
    from mrsched_gym.config import load_scenario, scenario_from_dict, to_dict, with_overrides
    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    gym.make("mrsched/Hadoop-v0").close()
    t_first = time.perf_counter() - t0

    def per(f, n: int) -> float:
        t = time.perf_counter()
        for _ in range(n):
            f()
        return (time.perf_counter() - t) / n

    sc = load_scenario("thesis_scale")
    data = to_dict(sc)
    blob = pickle.dumps(sc)
    return {
        "import_s": t_import, "first_make_s": t_first,
        "make_ms": 1e3 * per(lambda: gym.make("mrsched/Hadoop-v0").close(), 20),
        "make_override_ms": 1e3 * per(
            lambda: gym.make("mrsched/Hadoop-v0", workload__load=0.8).close(), 20),
        "load_scenario_ms": 1e3 * per(lambda: load_scenario("hadoop"), 50),
        "from_dict_ms": 1e3 * per(lambda: scenario_from_dict(data), 200),
        "with_overrides_ms": 1e3 * per(lambda: with_overrides(sc, {"workload.load": 0.8}), 200),
        "pickle_dumps_us": 1e6 * per(lambda: pickle.dumps(sc), 2000),
        "pickle_loads_us": 1e6 * per(lambda: pickle.loads(blob), 2000),
        "pickle_bytes": len(blob),
    }


def export(ref: str, folder: Path) -> Path:
    """The tree of ``ref`` in ``folder``, importable as ``mrsched_gym`` from there (the folders
    the package maps in, linked where they install)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    for sub in ("baselines", "agents", "configs"):
        (folder / "mrsched_gym" / sub).symlink_to(folder / sub)
    return folder


def compare(ref: str, reps: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trees = {ref: export(ref, Path(tmp) / "ref"), "HEAD": export("HEAD", Path(tmp) / "head")}
        rows: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for _ in range(reps):
            for name, tree in trees.items():
                out = subprocess.run([sys.executable, __file__, "--json"], cwd=tmp, check=True,
                                     capture_output=True, text=True,
                                     env={**os.environ, "PYTHONPATH": str(tree)})
                rows[name].append(json.loads(out.stdout))
    print(f"{'measure':18s} {ref:>26s} {'HEAD':>26s}  HEAD/{ref}")
    for key in rows[ref][0]:
        cells = []
        for name in trees:
            vals = [r[key] for r in rows[name]]
            cells.append(f"{statistics.median(vals):8.4g} [{min(vals):.3g}-{max(vals):.3g}]")
        ratio = (statistics.median(r[key] for r in rows["HEAD"])
                 / statistics.median(r[key] for r in rows[ref]))
        print(f"{key:18s} {cells[0]:>26s} {cells[1]:>26s}  {ratio:5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", metavar="REF", help="git ref to compare this tree's HEAD with")
    ap.add_argument("--reps", type=int, default=5, help="rounds with --compare (default 5)")
    ap.add_argument("--json", action="store_true", help="one process's measures as JSON")
    args = ap.parse_args()
    if args.compare:
        compare(args.compare, args.reps)
    elif args.json:
        print(json.dumps(measure()))
    else:
        for key, value in measure().items():
            print(f"{key:18s} {value:10.4g}")


if __name__ == "__main__":
    main()
