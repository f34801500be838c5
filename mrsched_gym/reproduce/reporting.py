"""A reproduction's results for people: the Markdown report of one run, the validation page
``docs/validation.md`` of all, and the figure."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from mrsched_gym.reproduce.cases import Reproduction
from mrsched_gym.reproduce.claims import MAX_SEEDS
from mrsched_gym.reproduce.comparisons import (
    check_claims,
    paper_comparisons,
    paper_counterpart,
    value_of,
)


def claim_line(c: Mapping) -> str:
    """One claim as a Markdown bullet: status, text, and the per-case outcome."""
    status = "reproduced" if c["holds"] else "NOT reproduced"
    if c["expect"] == "fail":
        status += " (known)" if not c["holds"] else " (now holds: update the file)"
    if c["kind"] == "calibration":
        status = "calibration check, " + status
    cases = "; ".join(
        f"{p['case']}: {_fmt(p['better'])} vs {', '.join(_fmt(w) for w in p['worse'])}"
        f"{_outcome(p)}" for p in c["per_case"])
    where = "" if c["cases_total"] == 1 else (
        f", holds at {c['cases_held']} of {c['cases_total']} cases; the paper: at "
        f"{', '.join(c['holds_where'])}")
    return f"- {status}: {c['text']} ({c['metric']}{where}; {cases})"


def _outcome(p: Mapping) -> str:
    """A case's outcome after its means: nothing where the claim holds, "(no)" where the mean
    difference lies on the other side, and the seeds a paired interval would need where it
    lies on the claim's side without being separated (no verdict)."""
    if p["holds"]:
        return ""
    sides = zip(p.get("holds_vs") or [], p.get("seeds_needed") or [], strict=True)
    need = [n for held, n in sides if not held]
    if not need or None in need:
        return " (no)"
    return (f" (not separated at {p.get('n', '?')} seeds: about {max(need)} needed)"
            if max(need) < MAX_SEEDS else f" (not separated: over {MAX_SEEDS} seeds needed)")


def _fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def report(rep: Reproduction, records: list[dict]) -> str:
    """Markdown: results per case, the paper's numbers beside ours, and the claims."""
    lines = [f"## {rep.title}", f"Source: {rep.source}. Seeds: {rep.seeds}.", ""]
    cols = rep.metrics
    lines.append("| case | policy | " + " | ".join(cols) + " |")
    lines.append("|---|---|" + "---|" * len(cols))
    for c in rep.cases:
        for p in c.policies:
            cells = []
            for m in cols:
                mu, ci = value_of(records, c.name, p, m)
                cells.append(_fmt(mu) + ("" if math.isnan(ci) else f" ± {_fmt(ci)}"))
            lines.append(f"| {c.name} | {p} | " + " | ".join(cells) + " |")
    if rep.job_metrics:
        labels = sorted({lab for r in records for lab in r.get("jobs", {})},
                        key=lambda s: (len(s), s))
        for m in rep.job_metrics:
            lines += ["", f"Per job: {m}", "",
                      "| case | policy | " + " | ".join(labels) + " |",
                      "|---|---|" + "---|" * len(labels)]
            for c in rep.cases:
                for p in c.policies:
                    cells = [_fmt(value_of(records, c.name, p, m, lab)[0]) for lab in labels]
                    lines.append(f"| {c.name} | {p} | " + " | ".join(cells) + " |")
    if rep.paper:
        lines += ["", "Paper vs ours:", "",
                  "| ref | case | policy | metric | paper | ours | deviation |",
                  "|---|---|---|---|---|---|---|"]
        for e in rep.paper:
            ours = paper_counterpart(records, e)
            pv = float(e["value"])
            dev = ours - pv
            rel = f" ({100 * dev / pv:+.0f}%)" if pv else ""
            what = e["metric"] + (f" [{e['job']}]" if e.get("job") else "")
            if e.get("change_vs"):
                what += f" change vs {e['change_vs']}"
            lines.append(f"| {e.get('ref', '')} | {e['case']} | {e['policy']} | {what} | "
                         f"{_fmt(pv)} | {_fmt(ours)} | {_fmt(dev)}{rel} |")
    claims = check_claims(rep, records)
    if claims:
        lines += ["", "Claims (quick run: on the means, too few seeds for a paired test):" if
                  rep.quick else "Claims (paired over seeds: a difference counts when its 95% CI "
                  "excludes zero):", ""]
        lines += [claim_line(c) for c in claims]
    return "\n".join(lines)


def _count_held(claims: Sequence[Mapping]) -> str:
    return f"{sum(c['holds'] for c in claims)} of {len(claims)}" if claims else "-"


def validation_page(results: Sequence[tuple[Reproduction, list[dict]]]) -> str:
    """``docs/validation.md``: per reproduction its description, paper vs ours, the claims case
    by case and the notes — generated from the runs, never edited by hand."""
    lines = ["# Validation: the source papers' experiments, theirs vs ours", "",
             "Generated by `mrsched-gym reproduce all --json docs/reproductions.json --doc "
             "docs/validation.md` from the runs themselves (do not edit by hand). Each experiment "
             "is a file in `configs/reproductions/`; claims are checked at every case of the "
             "experiment with a paired test over seeds (common random numbers) and reported as "
             "\"holds at k of n cases\"; a claim is reproduced where the paper says it holds.",
             "", "| reproduction | source | claims reproduced | calibration checks passed | "
             "paper numbers compared |", "|---|---|---|---|---|"]
    claims_of = {rep.name: check_claims(rep, records) for rep, records in results}
    for rep, _ in results:
        claims = [c for c in claims_of[rep.name] if c["kind"] != "calibration"]
        checks = [c for c in claims_of[rep.name] if c["kind"] == "calibration"]
        lines.append(f"| [`{rep.name}`](#{rep.name}) | {rep.source} | "
                     f"{_count_held(claims)} | {_count_held(checks)} | {len(rep.paper)} |")
    for rep, records in results:
        lines += ["", f"## {rep.name}", "", f"**{rep.title}** ({rep.source}; {rep.seeds} seeds)",
                  "", rep.description]
        comparisons = paper_comparisons(rep, records)
        if comparisons:
            lines += ["", "| figure | item | source | policy | metric | paper | ours | unit |",
                      "|---|---|---|---|---|---|---|---|"]
            for e in comparisons:
                what = e["metric"] + (f" vs {e['change_vs']}" if e["change_vs"] else "")
                lines.append(f"| {e['figure']} | {e['item']} | {e['source']} | {e['policy']} | "
                             f"{what} | {_fmt(e['paper'])} | {_fmt(e['ours'])} | {e['unit']} |")
        claims = claims_of[rep.name]
        if claims:
            lines += ["", "Claims:", ""] + [claim_line(c) for c in claims]
        if rep.notes:
            lines += ["", "Why ours differs: " + rep.notes]
    return "\n".join(lines) + "\n"


#: A bar lower than this fraction of the tallest bar of its figure is hard to see (or, at 0,
#: invisible): it is drawn as a thin line at its value and labelled with the value.
LOW_BAR_FRACTION = 0.02


def reproduction_figure(rep: Reproduction, records: list[dict]):
    """The reproduction's figure (bars per case and policy, or lines over the cases) as a
    headless ``Figure``, or None when the file asks for none. A bar of value 0 (or one lower
    than :data:`LOW_BAR_FRACTION` of the tallest) is a thin line in its colour with its value
    written above, so that a zero is not read as a missing bar."""
    if not rep.plot:
        return None
    from mrsched_gym.evaluate.leaderboard import clipped_interval, new_figure
    m = rep.plot["metric"]
    policies = list(dict.fromkeys(p for c in rep.cases for p in c.policies))
    fig = new_figure(7, 3.6)
    ax = fig.add_subplot(111)
    names = [c.name for c in rep.cases]
    bars = []
    for k, p in enumerate(policies):
        xs, ys, hw = [], [], []
        for i, c in enumerate(rep.cases):
            if p in c.policies:
                mu, ci = value_of(records, c.name, p, m)
                xs.append(i)
                ys.append(mu)
                hw.append(ci)
        lo, hi = clipped_interval(np.asarray(ys), np.asarray(hw), m)
        es = np.maximum(0.0, np.nan_to_num([np.asarray(ys) - lo, hi - np.asarray(ys)]))
        if rep.plot.get("kind") == "line":
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=p)
        else:
            w = 0.8 / len(policies)
            at = np.asarray(xs) + (k - (len(policies) - 1) / 2) * w
            drawn = ax.bar(at, ys, w, yerr=es, capsize=2, label=p)
            colour = drawn.patches[0].get_facecolor()
            bars += [(x, y, w, colour) for x, y in zip(at, ys, strict=True)]
    mark_low_bars(ax, bars)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"{m}\n(mean, 95% CI clipped to its range)", fontsize=9)
    ax.set_title(rep.title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def mark_low_bars(ax, bars: list[tuple[float, float, float, tuple]]) -> None:
    """Draw each ``(x, height, width, colour)`` bar lower than :data:`LOW_BAR_FRACTION` of the
    tallest as a thin line at its height, labelled with its value (``0`` for a zero)."""
    heights = [abs(y) for _, y, _, _ in bars if np.isfinite(y)]
    tallest = max(heights, default=0.0)
    for x, y, w, colour in bars:
        if not np.isfinite(y) or (tallest > 0 and abs(y) > LOW_BAR_FRACTION * tallest):
            continue                              # missing (NaN), or tall enough to see
        ax.plot([x - w / 2, x + w / 2], [y, y], color=colour, lw=2.5, solid_capstyle="butt")
        ax.annotate("0" if y == 0 else f"{y:.2g}", (x, y), xytext=(0, 2),
                    textcoords="offset points", ha="center", va="bottom", fontsize=7)


def plot(rep: Reproduction, records: list[dict], path: Path) -> Path | None:
    """Write :func:`reproduction_figure` to ``path`` (None when the file asks for no figure)."""
    fig = reproduction_figure(rep, records)
    if fig is None:
        return None
    from mrsched_gym.results import save_figure
    save_figure(fig, path, dpi=110)
    return path
