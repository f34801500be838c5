"""The generalist's training attempts since ``agent:general`` as curves: the imitation rounds'
agreement with the teachers, and the validation score of the PPO fine-tune aimed at the forecast
world (docs/notes/agents.md, "Fourth training attempt: PPO on the forecast world").

    python research/tools/attempt_curves.py --logs research/general-logs \
        --out docs/figures/general_attempts.png

``--logs`` holds one folder per run with the files a training run writes (``imitate.json``,
``evaluations.csv``); ``research/general-logs`` has the three runs of the notes:
``general_scale16`` (shipped as ``agent:general-v2``), ``general_traces`` (the trace regimes)
and ``general_dynamic_ft`` (PPO on a pool drawing Dynamic-v0 more).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

#: Each run's label in the figure.
LABELS = {
    "general_scale16": "general_scale16 (agent:general-v2)",
    "general_traces": "general_traces (trace regimes)",
    "general_dynamic_ft": "general_dynamic_ft (PPO, Dynamic-v0 x5)",
}


def imitation_rounds(run: Path) -> list[dict]:
    """The run's imitation rounds (``imitate.json``), or none."""
    path = run / "imitate.json"
    return json.loads(path.read_text()) if path.is_file() else []


def validations(run: Path) -> list[dict[str, float]]:
    """The run's validation rows (``evaluations.csv``), numbers as floats."""
    with (run / "evaluations.csv").open() as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=Path, default=Path("research/general-logs"))
    ap.add_argument("--out", type=Path, default=Path("docs/figures/general_attempts.png"))
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [args.logs / name for name in LABELS if (args.logs / name).is_dir()]
    fig, (ax_im, ax_ppo) = plt.subplots(1, 2, figsize=(11, 4))
    for run in runs:
        rounds = imitation_rounds(run)
        if rounds:
            ax_im.plot([r["decisions"] / 1e3 for r in rounds], [r["agreement"] for r in rounds],
                       marker="o", label=LABELS[run.name])
            for r in rounds:
                print(f"{run.name} imitation round {r['round']}: {r['decisions']} labels, "
                      f"agreement {r['agreement']:.4f}")
    ax_im.set_xlabel("labelled decisions after the round (thousands)")
    ax_im.set_ylabel("agreement with the teachers (the round's states)")
    ax_im.set_title("Imitation (DAgger) rounds")
    ax_im.legend(fontsize=8)
    tuned = args.logs / "general_dynamic_ft"
    if tuned.is_dir():
        rows = validations(tuned)
        steps = [r["step"] / 1e3 for r in rows]
        ax_ppo.plot(steps, [r["mean"] for r in rows], marker="o",
                    label="pool mean (13 ids, seeds 500-504)")
        ax_ppo.plot(steps, [r["ratio_Dynamic-v0"] for r in rows], marker="s",
                    label="Dynamic-v0 (seeds 500-504)")
        ax_ppo.plot(steps, [r["ratio_GreenTrace-v0"] for r in rows], marker="^",
                    label="GreenTrace-v0 (seeds 500-504)")
        for r in rows:
            print(f"general_dynamic_ft step {int(r['step'])}: mean {r['mean']:.4f}, Dynamic-v0 "
                  f"{r['ratio_Dynamic-v0']:.4f}, GreenTrace-v0 {r['ratio_GreenTrace-v0']:.4f}")
    ax_ppo.set_xlabel("PPO steps (thousands)")
    ax_ppo.set_ylabel("validation: agent / capacity (lower is better)")
    ax_ppo.set_title("PPO fine-tune, Dynamic-v0 drawn x5")
    ax_ppo.legend(fontsize=8)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
